//! The stalled-turns state machine.
//!
//! Two counters, both reset by any tool activity (a call or a result):
//! - **nudges**: user-side messages that repeat the previous one word for word (what a
//!   harness sends when the model answered without a tool call);
//! - **replies**: assistant messages that issued no tool call and are empty, or repeat the
//!   previous such reply (both streams compared, whitespace ignored).
//!
//! A repeated user-side message is a new request, not a nudge, when the tool-less reply
//! before it answered the message before it: it brought `fresh-reply-words` words that none of
//! the stall's last four replies used (the model answered something new: "continue" while a
//! story is written), four times as many new words that hold a digit (a table of numbers), or
//! it named what that message asked for where the message differed from the one before it
//! only in its numbers (`cp1251` in the answer to "Show me cp1251.enc" after "… cp1250.enc").
//!
//! An assistant message is judged when the next user message, message or run end arrives,
//! because its tool calls are only known after it ends. Text is hashed as it streams, so
//! each delta costs time proportional to its own length and nothing is buffered.

use crate::{Settings, NAME};
use loopguard_core::{
    truncate_chars, Cx, Detector, Event, Finding, Fingerprint, Level, Origin, MAX_EVIDENCE,
};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

const SAMPLE_CHARS: usize = 120;
/// The words of a reply read (repeats included).
const MAX_REPLY_WORDS: usize = 4096;
/// The bytes of a reply read for its words.
const MAX_REPLY_BYTES: usize = 64 * 1024;
/// The replies a new one is compared with: a model that goes round a few replies (two or
/// three, in the stalls seen) repeats words of these; a long conversation whose vocabulary
/// has long been used up by earlier answers is not held against a new one.
const RECENT_REPLIES: usize = 4;
/// A word hash with this bit set is a word that holds a digit, hashed as written (its digits
/// kept); without it, a word as [`loopguard_core::shape::word_hashes`] reads it.
const NUMBER_WORD: u32 = 1 << 31;
/// A reply of this many bytes of text or more that stops inside a line was cut by an output
/// limit: the same message after it ("continue") asks for the rest.
const CUT_REPLY_BYTES: u64 = 1000;
/// New words that hold a digit count for one new word in this many.
const NUMBER_WORDS_PER_WORD: usize = 4;
/// The longest message whose text is kept to tell what the next one asks anew.
const MAX_ASKED_MESSAGE: usize = 4096;
/// The words kept of what a message asked anew, and their longest.
const MAX_ASKED_WORDS: usize = 4;
const MAX_ASKED_WORD: usize = 64;

/// A whitespace-insensitive running hash of one stream of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct StreamHash {
    hash: u64,
    /// Non-whitespace characters seen.
    chars: u64,
    /// The last character fed was a digit (with masking, a digit run hashes as one `#`).
    #[serde(default)]
    in_digits: bool,
}

impl Default for StreamHash {
    fn default() -> StreamHash {
        StreamHash {
            hash: loopguard_core::FNV1A_START,
            chars: 0,
            in_digits: false,
        }
    }
}

impl StreamHash {
    fn feed(&mut self, text: &str, mask: bool) {
        if text.is_ascii() {
            // One byte a character: the same hash, without decoding.
            for &b in text.as_bytes() {
                if b.is_ascii_whitespace() || b == 0x0b {
                    continue;
                }
                let b = if mask && b.is_ascii_digit() {
                    if self.in_digits {
                        continue;
                    }
                    self.in_digits = true;
                    b'#'
                } else {
                    self.in_digits = false;
                    b
                };
                self.hash = loopguard_core::fnv1a(self.hash, &[b]);
                self.chars += 1;
            }
            return;
        }
        for c in text.chars().filter(|c| !c.is_whitespace()) {
            let c = if mask && c.is_ascii_digit() {
                if self.in_digits {
                    continue;
                }
                self.in_digits = true;
                '#'
            } else {
                self.in_digits = false;
                c
            };
            let mut buf = [0u8; 4];
            self.hash = loopguard_core::fnv1a(self.hash, c.encode_utf8(&mut buf).as_bytes());
            self.chars += 1;
        }
    }
}

/// The start of the reply being streamed, both streams (a line feed where they switch), for
/// its words ([`loopguard_core::shape::word_hashes`]) once it ends.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct ReplyText {
    /// The first [`MAX_REPLY_BYTES`] of the reply.
    text: String,
    /// The last delta was thinking.
    thinking: bool,
    /// Bytes of the reply's text stream, all of it.
    #[serde(default)]
    text_bytes: u64,
    /// The text stream's last character is a line feed (or there is none).
    #[serde(default)]
    text_ends_line: bool,
}

impl ReplyText {
    /// Empties the text, keeping its buffer.
    fn clear(&mut self) {
        self.text.clear();
        self.thinking = false;
        self.text_bytes = 0;
        self.text_ends_line = false;
    }

    /// Whether the reply was cut by an output limit: [`CUT_REPLY_BYTES`] or more of text that
    /// stops inside a line.
    fn was_cut(&self) -> bool {
        self.text_bytes >= CUT_REPLY_BYTES && !self.text_ends_line
    }

    /// Keeps what fits of one delta.
    fn feed(&mut self, thinking: bool, delta: &str) {
        if !thinking && !delta.is_empty() {
            self.text_bytes = self.text_bytes.saturating_add(delta.len() as u64);
            self.text_ends_line = delta.ends_with('\n');
        }
        let room = MAX_REPLY_BYTES.saturating_sub(self.text.len());
        if room == 0 {
            return;
        }
        if thinking != self.thinking && !self.text.is_empty() {
            self.text.push('\n');
        }
        self.thinking = thinking;
        let mut cut = delta.len().min(room);
        while !delta.is_char_boundary(cut) {
            cut -= 1;
        }
        self.text.push_str(delta.get(..cut).unwrap_or(""));
    }

    /// The reply's distinct words, hashed, ascending: its words as
    /// [`loopguard_core::shape::word_hashes`] reads them, and its names that hold a digit
    /// ([`names`]) as written (marked [`NUMBER_WORD`]).
    fn words(&self) -> Vec<u32> {
        let mut words =
            loopguard_core::shape::word_hashes(&self.text, MAX_REPLY_BYTES, MAX_REPLY_WORDS);
        for w in &mut words {
            *w &= !NUMBER_WORD;
        }
        words.extend(
            names(&self.text)
                .filter(|w| w.bytes().any(|b| b.is_ascii_digit()))
                .take(MAX_REPLY_WORDS)
                .map(|w| {
                    let h = loopguard_core::fnv1a(loopguard_core::FNV1A_START, w.as_bytes());
                    (h >> 32) as u32 | NUMBER_WORD
                }),
        );
        words.sort_unstable();
        words.dedup();
        words
    }

    /// Whether the reply names one of `asked` ([`names`]).
    fn names_any(&self, asked: &[String]) -> bool {
        !asked.is_empty() && names(&self.text).any(|w| asked.iter().any(|a| a == w))
    }
}

/// A byte of a name: an ASCII letter, digit, `_` or `-` (`cp1251`, `iso8859-10`,
/// `vld1_u16_x2`).
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// The names of `text`: its runs of [`is_name_byte`] bytes, without a leading or trailing
/// `-`.
fn names(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_ascii() || !is_name_byte(c as u8))
        .map(|w| w.trim_matches('-'))
        .filter(|w| !w.is_empty())
}

/// What `cur` asks anew of a message `prev` that it repeats with its numbers aside (the
/// caller knows: their [`digit_runs_masked`] fingerprints are equal): the names
/// ([`is_name_byte`], without a leading or trailing `-`) around each digit run that differs,
/// that hold a letter (`cp1251` of "Show me cp1251.enc" after "Show me cp1250.enc"). A bare
/// number ("found 5 actions", "Step 12") asks nothing: a harness's counter is not a request.
fn asked_anew(prev: &str, cur: &str) -> Vec<String> {
    let mut asked: Vec<String> = Vec::new();
    if prev.len() > MAX_ASKED_MESSAGE || cur.len() > MAX_ASKED_MESSAGE {
        return asked;
    }
    let runs = |t: &str| -> Vec<(usize, usize)> {
        let b = t.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b[i].is_ascii_digit() {
                let start = i;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                out.push((start, i));
            } else {
                i += 1;
            }
        }
        out
    };
    let (a, b) = (runs(prev), runs(cur));
    if a.len() != b.len() {
        return asked;
    }
    let bytes = cur.as_bytes();
    for (&(ps, pe), &(cs, ce)) in a.iter().zip(&b) {
        if prev.get(ps..pe) == cur.get(cs..ce) {
            continue;
        }
        let mut start = cs;
        while start > 0 && is_name_byte(bytes[start - 1]) {
            start -= 1;
        }
        let mut end = ce;
        while end < bytes.len() && is_name_byte(bytes[end]) {
            end += 1;
        }
        let Some(word) = cur.get(start..end).map(|w| w.trim_matches('-')) else {
            continue;
        };
        if word.len() <= MAX_ASKED_WORD
            && word.bytes().any(|c| c.is_ascii_alphabetic())
            && !asked.iter().any(|w| w == word)
        {
            asked.push(word.to_owned());
            if asked.len() == MAX_ASKED_WORDS {
                break;
            }
        }
    }
    asked
}

/// The fingerprint of `text` with each digit run written `#` and each run of whitespace one
/// space: "found 3 actions" and "found 12 actions" share it; `type.u16x1.html` and
/// `type.i64x32.html` do not (a word is masked only in its digits).
fn digit_runs_masked(text: &str) -> Fingerprint {
    let mut out = String::with_capacity(text.len());
    let (mut digits, mut space) = (false, false);
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !digits {
                out.push('#');
            }
            (digits, space) = (true, false);
        } else if c.is_whitespace() {
            if !space {
                out.push(' ');
            }
            (digits, space) = (false, true);
        } else {
            out.push(c);
            (digits, space) = (false, false);
        }
    }
    Fingerprint::of_bytes(out.as_bytes())
}

/// What a finished assistant message said (both streams).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Reply {
    text: StreamHash,
    thinking: StreamHash,
}

impl Reply {
    fn is_empty(&self) -> bool {
        self.text.chars == 0 && self.thinking.chars == 0
    }
}

/// A run of stalled exchanges of one kind.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Run {
    count: u32,
    evidence: VecDeque<u64>,
    /// Sequence number of the run's first exchange: each run is its own loop (its own key).
    #[serde(default)]
    start: u64,
}

impl Run {
    fn reset(&mut self) {
        self.count = 0;
        self.evidence.clear();
    }

    fn bump(&mut self, seq: u64) {
        if self.count == 0 {
            self.start = seq;
        }
        self.count = self.count.saturating_add(1);
        if self.evidence.len() >= MAX_EVIDENCE {
            self.evidence.pop_front();
        }
        self.evidence.push_back(seq);
    }
}

/// Everything that changes while the detector runs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct State {
    /// The last counted user-side message (fingerprint of its trimmed text, or with
    /// `mask-numbers` of that text with its digit runs masked).
    last_nudge: Option<Fingerprint>,
    /// The exact fingerprint of that message.
    #[serde(default)]
    last_nudge_exact: Option<Fingerprint>,
    /// The last user-side message of any kind, as the bus remembers it (to tell the guard's
    /// own steer, which the bus does not count as a new turn, from a harness repeat).
    last_user: Option<Fingerprint>,
    /// The start of that message, for the finding's sample.
    nudge_sample: String,
    nudges: Run,
    /// The message being streamed.
    current: Option<Reply>,
    /// The current message issued a tool call before it ended.
    current_has_call: bool,
    /// A finished message whose tool calls are not known yet, with its `MessageEnd` seq.
    pending: Option<(Reply, u64)>,
    /// The start of the message being streamed.
    #[serde(default)]
    current_text: ReplyText,
    /// The start of the pending message, read for its words once it is known to have called
    /// no tool (its buffer and `current_text`'s are swapped, not copied).
    #[serde(default)]
    pending_text: ReplyText,
    /// The words of the last [`RECENT_REPLIES`] tool-less replies of the stall.
    #[serde(default)]
    recent_words: VecDeque<Vec<u32>>,
    /// A reply since the last user-side message answered it (new words, or named what it
    /// asked anew).
    #[serde(default)]
    answered: bool,
    /// The text of the last counted user-side message (empty when longer than
    /// [`MAX_ASKED_MESSAGE`]), and what it asked anew of the one before it ([`asked_anew`]).
    #[serde(default)]
    last_nudge_text: String,
    #[serde(default)]
    asked: Vec<String>,
    /// The reply the reply run repeats (`None` when the run is made of empty replies only).
    last_reply: Option<Reply>,
    /// The reply before this one, whatever came between (a cut reply is the rest of a text
    /// only when it is not that reply again).
    #[serde(default)]
    previous_reply: Option<Reply>,
    replies: Run,
    /// A warning was reported for the current stall.
    warned: bool,
}

impl State {
    /// Forgets the stall in progress: the nudge and reply runs and their warning.
    fn end_stall(&mut self) {
        self.last_nudge = None;
        self.last_nudge_exact = None;
        self.nudges.reset();
        self.last_reply = None;
        self.replies.reset();
        self.warned = false;
        self.recent_words.clear();
        self.answered = false;
        self.last_nudge_text.clear();
        self.asked.clear();
    }
}

/// The `stalled-turns` detector (LG009).
#[derive(Debug)]
pub struct StalledTurns {
    settings: Settings,
    state: State,
}

impl StalledTurns {
    /// A detector with these settings.
    pub fn new(settings: Settings) -> StalledTurns {
        StalledTurns {
            settings,
            state: State::default(),
        }
    }

    /// The settings in use.
    pub fn settings(&self) -> Settings {
        self.settings
    }

    fn tool_activity(&mut self) {
        let s = &mut self.state;
        s.pending = None;
        s.pending_text.clear();
        if s.current.is_some() {
            s.current_has_call = true;
        }
        s.end_stall();
    }

    /// Judges the finished message whose tool calls are now known to be none.
    fn settle_reply(&mut self) {
        let Some((reply, seq)) = self.state.pending.take() else {
            return;
        };
        let s = &mut self.state;
        let words = s.pending_text.words();
        let named = s.pending_text.names_any(&s.asked);
        // A reply cut by an output limit that is not the reply before it again: the text goes
        // on, and the next "continue" asks for the rest of it.
        let again = s.previous_reply.replace(reply) == Some(reply);
        let cut = s.pending_text.was_cut() && !again;
        s.pending_text.clear();
        let (mut fresh, mut fresh_numbers) = (0, 0);
        for w in words
            .iter()
            .filter(|w| !s.recent_words.iter().any(|r| r.binary_search(w).is_ok()))
        {
            if w & NUMBER_WORD == 0 {
                fresh += 1;
            } else {
                fresh_numbers += 1;
            }
        }
        let want = self.settings.fresh_reply_words as usize;
        if want > 0
            && (named || cut || fresh >= want || fresh_numbers >= want * NUMBER_WORDS_PER_WORD)
        {
            s.answered = true;
        }
        if s.recent_words.len() >= RECENT_REPLIES {
            s.recent_words.pop_front();
        }
        s.recent_words.push_back(words);
        if !self.settings.count_replies {
            return;
        }
        let s = &mut self.state;
        if reply.is_empty() || s.last_reply == Some(reply) {
            s.replies.bump(seq);
        } else {
            s.replies.reset();
            s.replies.bump(seq);
            s.last_reply = Some(reply);
        }
    }

    fn on_user(&mut self, text: &str, origin: Origin, cx: &Cx<'_>) {
        // The guard's own steer, delivered back by the host, neither counts nor resets, and
        // is not the harness's last text either.
        if origin == Origin::Guard {
            return;
        }
        let fp = Fingerprint::of_bytes(text.trim().as_bytes());
        let nudge_fp = if self.settings.mask_numbers {
            digit_runs_masked(text.trim())
        } else {
            fp
        };
        // A repeat is a new request when the model answered the message before it with a
        // reply of new words.
        let answered = std::mem::take(&mut self.state.answered);
        let same = self.state.last_nudge == Some(nudge_fp);
        let repeat = same && !answered;
        let same_as_last_user = self.state.last_user.replace(fp) == Some(fp);
        // The bus starts no turn for an own steer it recognised by its text: skip it too.
        if !cx.is_new_turn() && !same_as_last_user && origin != Origin::Human {
            self.state.last_user = self.state.last_nudge_exact;
            // Not the harness's message: the answer still stands for the next one.
            self.state.answered = answered;
            return;
        }
        let s = &mut self.state;
        if origin == Origin::Human {
            // A person spoke: whatever came before is not a harness loop.
            s.end_stall();
            return;
        }
        s.last_nudge_exact = Some(fp);
        if self.settings.fresh_reply_words > 0 {
            let text = text.trim();
            // Only a message that repeats the one before it with its numbers aside can ask
            // anew: the masked fingerprints are `last_nudge`'s and this one's.
            s.asked = if same && self.settings.mask_numbers {
                asked_anew(&s.last_nudge_text, text)
            } else {
                Vec::new()
            };
            s.last_nudge_text.clear();
            if text.len() <= MAX_ASKED_MESSAGE {
                s.last_nudge_text.push_str(text);
            }
        }
        if repeat {
            if self.settings.count_nudges {
                s.nudges.bump(cx.seq());
            }
        } else {
            // A different message: a new nudge candidate, and a fresh start for replies.
            s.last_nudge = Some(nudge_fp);
            s.nudge_sample = truncate_chars(text.trim(), SAMPLE_CHARS);
            s.nudges.reset();
            if self.settings.count_nudges {
                s.nudges.bump(cx.seq());
            }
            s.last_reply = None;
            s.replies.reset();
            s.warned = false;
        }
    }

    fn judge(&mut self, cx: &mut Cx<'_>) {
        let s = &self.state;
        let (count, by_nudges) = if s.nudges.count >= s.replies.count {
            (s.nudges.count, true)
        } else {
            (s.replies.count, false)
        };
        if count < self.settings.warning_threshold {
            self.state.warned = false;
            return;
        }
        let critical = count >= self.settings.critical_threshold;
        if !critical && self.state.warned {
            return;
        }
        self.state.warned = true;
        let s = &self.state;
        let (key, what, evidence, sample) = if by_nudges {
            let fp = s.last_nudge.map(|f| f.to_hex()).unwrap_or_default();
            let what = format!(
                "The same message (\"{}\"{}) came {count} times in a row with no tool call in between",
                s.nudge_sample,
                if self.settings.mask_numbers {
                    ", numbers aside"
                } else {
                    ""
                }
            );
            (
                format!("stalled-turns:nudge:{fp}:{}", s.nudges.start),
                what,
                &s.nudges.evidence,
                Some(s.nudge_sample.as_str()),
            )
        } else {
            let what = format!("Your last {count} replies called no tool and added nothing new");
            (
                format!("stalled-turns:reply:{}", s.replies.start),
                what,
                &s.replies.evidence,
                None,
            )
        };
        let evidence: Vec<u64> = evidence.iter().copied().collect();
        let finding = if critical {
            let message = format!(
                "CRITICAL: {what}. The agent is stalled and not making progress. Aborting the run to stop the loop."
            );
            Finding::new(NAME, Level::Fatal, count, key, message).with_evidence(evidence)
        } else {
            let message = format!(
                "WARNING: {what}. Make the tool call the task needs now, or state the blocker and stop."
            );
            Finding::new(NAME, Level::Warning, count, key, message).with_evidence(evidence)
        };
        cx.report(match sample {
            Some(sample) => finding.with_sample(sample),
            None => finding,
        });
    }
}

impl Detector for StalledTurns {
    loopguard_core::detector_basics!(name: NAME, interest: [User, RunEnd, MessageStart, TextDelta, MessageEnd, ToolCall, ToolResult], facts: NONE);

    fn observe(&mut self, event: &Event<'_>, cx: &mut Cx<'_>) {
        match event {
            Event::ToolCall { .. } | Event::ToolResult { .. } => self.tool_activity(),
            Event::MessageStart => {
                let before = self.state.replies.count;
                self.settle_reply();
                self.state.current = Some(Reply::default());
                self.state.current_text.clear();
                self.state.current_has_call = false;
                if self.state.replies.count != before {
                    self.judge(cx);
                }
            }
            Event::TextDelta { stream, delta } => {
                if let Some(r) = self.state.current.as_mut() {
                    match stream {
                        loopguard_core::Stream::Text => {
                            r.text.feed(delta, self.settings.mask_numbers);
                        }
                        loopguard_core::Stream::Thinking => {
                            r.thinking.feed(delta, self.settings.mask_numbers);
                        }
                    }
                    if self.settings.fresh_reply_words > 0 {
                        let thinking = *stream == loopguard_core::Stream::Thinking;
                        self.state.current_text.feed(thinking, delta);
                    }
                }
            }
            Event::MessageEnd => {
                if let Some(r) = self.state.current.take() {
                    if !self.state.current_has_call {
                        self.state.pending = Some((r, cx.seq()));
                        let s = &mut self.state;
                        std::mem::swap(&mut s.pending_text, &mut s.current_text);
                    }
                }
                self.state.current_text.clear();
                self.state.current_has_call = false;
            }
            Event::RunEnd => {
                let before = self.state.replies.count;
                self.settle_reply();
                if self.state.replies.count != before {
                    self.judge(cx);
                }
            }
            Event::User { text, origin } => {
                let before = (self.state.nudges.count, self.state.replies.count);
                self.settle_reply();
                self.on_user(text, *origin, cx);
                if (self.state.nudges.count, self.state.replies.count) != before {
                    self.judge(cx);
                }
            }
            _ => {}
        }
    }

    loopguard_core::snapshot_via_serde!(state);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbers aside means digit runs aside, as documented: a word with a digit keeps its
    /// letters.
    #[test]
    fn nudges_are_compared_with_their_digit_runs_masked() {
        let m = digit_runs_masked;
        assert_eq!(m("found 3 actions"), m("found 12 actions"));
        assert_eq!(m("found 3  actions"), m("found 3 actions"));
        assert_ne!(
            m("Show me type.u16x1.html."),
            m("Show me type.i64x32.html.")
        );
        assert_eq!(
            m("Show me type.u16x1.html."),
            m("Show me type.u32x16.html.")
        );
    }

    /// What a message asks anew: the names around its changed numbers that hold a letter.
    #[test]
    fn a_message_asks_anew_the_names_whose_numbers_changed() {
        let a = |p: &str, c: &str| asked_anew(p, c);
        assert_eq!(a("Show me cp1250.enc.", "Show me cp1251.enc."), ["cp1251"]);
        assert_eq!(
            a("Show me iso8859-1.enc.", "Show me iso8859-10.enc."),
            ["iso8859-10"]
        );
        assert_eq!(
            a("Open fn.vld1_u16_x2.html", "Open fn.vld1_u16_x3.html"),
            ["vld1_u16_x3"]
        );
        // Bare numbers are counters; unchanged numbers ask nothing.
        assert!(a("found 3 actions", "found 5 actions").is_empty());
        assert!(a("Step 4: call a tool.", "Step 5: call a tool.").is_empty());
        assert!(a("Show me v2 of job_7.", "Show me v2 of job_7.").is_empty());
        assert_eq!(a("Show me v2 of job_7.", "Show me v2 of job_8."), ["job_8"]);
        // Messages whose numbers do not pair ask nothing anew (messages that differ in
        // more than their numbers are never compared: the caller's test,
        // `a_message_that_differs_in_its_words_asks_nothing_anew`).
        assert!(a("", "Show me cp1251.enc.").is_empty());
        assert!(a("Show me cp1250.enc.", "Show me cp1250.enc and cp1251.").is_empty());
        // A long message is not compared.
        let long = "x".repeat(MAX_ASKED_MESSAGE);
        assert!(a(&format!("{long}a1"), &format!("{long}a2")).is_empty());
    }

    /// A reply is cut when it is long and stops inside a line, however its deltas fall.
    #[test]
    fn a_long_reply_that_stops_inside_a_line_was_cut() {
        let fed = |pieces: &[&str]| {
            let mut r = ReplyText::default();
            for p in pieces {
                r.feed(false, p);
            }
            r
        };
        let long = "x = 1;\n".repeat(200);
        assert!(fed(&[&long, "y = "]).was_cut());
        assert!(!fed(&[&long]).was_cut());
        assert!(!fed(&[&long, "y = 2;", "\n"]).was_cut());
        assert!(!fed(&["short and cut"]).was_cut());
        // Thinking neither counts nor ends the text.
        let mut r = fed(&[&long, "y = "]);
        r.feed(true, "done.\n");
        assert!(r.was_cut());
        r.clear();
        assert!(!r.was_cut());
    }

    /// A reply names what was asked only as a whole name.
    #[test]
    fn a_reply_names_a_name_only_whole() {
        let reply = |t: &str| ReplyText {
            text: t.to_owned(),
            ..ReplyText::default()
        };
        let asked = vec!["iso8859-10".to_owned()];
        assert!(reply("# Encoding file: iso8859-10, single-byte").names_any(&asked));
        assert!(reply("see -iso8859-10- here").names_any(&asked));
        assert!(!reply("# Encoding file: iso8859-100").names_any(&asked));
        assert!(!reply("# Encoding file: xiso8859-10").names_any(&asked));
        assert!(!reply("iso8859-10").names_any(&[]));
    }

    /// The ASCII path hashes as the character path does: an ASCII text fed alone (the byte
    /// path), then a non-ASCII character, hashes as the two fed at once (the character path
    /// for all of it).
    #[test]
    fn ascii_deltas_hash_as_characters() {
        for mask in [false, true] {
            for text in ["a\tb\u{b}c\r\nd  12 x3y45", "\u{c}\u{1c}z 0 00 000", ""] {
                let mut bytes_then_char = StreamHash::default();
                bytes_then_char.feed(text, mask);
                bytes_then_char.feed("\u{e9}", mask);
                let mut chars = StreamHash::default();
                chars.feed(&format!("{text}\u{e9}"), mask);
                assert_eq!(bytes_then_char, chars, "{text:?}");
            }
        }
    }
}
