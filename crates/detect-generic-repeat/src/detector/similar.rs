//! The similar-calls streak: consecutive calls of one tool with nearly the same arguments
//! whose results keep the same shape without progress.

use super::{push_bounded, push_capped, short_hex, times, GenericRepeat};
use crate::sketch::Sketch;
use crate::NAME;
use loopguard_core::shape::{TokenSet, Trend};
use loopguard_core::{result_fingerprint, Cx, Finding, Fingerprint, Level};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;
use std::hash::{BuildHasher, Hasher};

/// How many issued calls the similar-calls rule remembers until their results arrive.
pub(super) const MAX_PENDING: usize = 32;
/// How many of its newest calls a similar-calls streak compares a new call with.
pub(super) const SIMILAR_MEMORY: usize = 3;
/// How many of the newest similar calls, and their answers, a call must differ from for its
/// answer to count as another object's ([`SimilarStreak::answers`]).
pub(super) const SWEEP_MEMORY: usize = 16;

/// What the similar-calls rule keeps of a call until its result arrives.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct PendingCall {
    pub(super) seq: u64,
    pub(super) tokens: TokenSet,
    pub(super) skeleton: Option<Skeleton>,
    /// The paths the call names ([`call_words`]).
    #[serde(default)]
    pub(super) object: Option<u64>,
    /// The call looks for something: nothing in its answer means nothing found ([`super::polls::probes`]).
    #[serde(default)]
    pub(super) probe: bool,
    /// The call's arguments without their numbers ([`frame`]).
    #[serde(default)]
    pub(super) frame: u64,
    /// The call's first numbers ([`frame`]).
    #[serde(default)]
    pub(super) numbers: CallNumbers,
    /// The call acts ([`super::polls::acts`]).
    #[serde(default)]
    pub(super) acts: bool,
    /// The terms the call searches for ([`super::fruitless::search_terms`]; empty when the
    /// fruitless-search rule is off).
    #[serde(default)]
    pub(super) terms: Vec<u64>,
    /// The call only looks ([`super::polls::only_looks`]; false when the re-read rule is
    /// off).
    #[serde(default)]
    pub(super) looks: bool,
}

/// Most numbers of a call [`CallNumbers`] keeps.
const CALL_NUMBERS: usize = 6;

/// The first [`CALL_NUMBERS`] numbers of a call's arguments, in order ([`frame`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct CallNumbers {
    numbers: [u64; CALL_NUMBERS],
    len: u8,
}

impl CallNumbers {
    fn push(&mut self, n: u64) {
        if let Some(slot) = self.numbers.get_mut(usize::from(self.len)) {
            *slot = n;
            self.len += 1;
        }
    }

    /// The numbers kept.
    pub(super) fn as_slice(&self) -> &[u64] {
        self.numbers
            .get(..usize::from(self.len))
            .unwrap_or(&self.numbers)
    }
}

/// One call of the similar-calls streak.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct SimilarCall {
    pub(super) tokens: TokenSet,
    pub(super) skeleton: Option<Skeleton>,
    /// The call's identity (tool and exact arguments), short.
    #[serde(default)]
    pub(super) call: Option<u64>,
    /// The call's arguments without their numbers ([`frame`]).
    #[serde(default)]
    pub(super) frame: u64,
}

/// A shell command's skeleton ([`call_words`]). It is identified by a fingerprint, the SHA-256
/// of its text, which is what a snapshot holds; while the text is at hand it is kept
/// instead, so that no call pays for the hash: two texts are equal exactly when their
/// fingerprints are (barring a SHA-256 collision), and a fingerprint is computed only to
/// serialise a skeleton or to compare one with a skeleton restored from a snapshot.
#[derive(Clone, Debug)]
pub(super) enum Skeleton {
    /// The skeleton's text (words joined by single spaces).
    Text(String),
    /// The fingerprint of a skeleton whose text is gone (read from a snapshot).
    Hashed(Fingerprint),
}

impl Skeleton {
    /// The skeleton's identity: `combine(["skeleton", text])`.
    pub(super) fn fingerprint(&self) -> Fingerprint {
        match self {
            Skeleton::Text(t) => Fingerprint::combine(&[b"skeleton", t.as_bytes()]),
            Skeleton::Hashed(fp) => *fp,
        }
    }
}

impl PartialEq for Skeleton {
    fn eq(&self, other: &Skeleton) -> bool {
        match (self, other) {
            (Skeleton::Text(a), Skeleton::Text(b)) => a == b,
            _ => self.fingerprint() == other.fingerprint(),
        }
    }
}

impl Eq for Skeleton {}

impl Serialize for Skeleton {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.fingerprint().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Skeleton {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Skeleton, D::Error> {
        Fingerprint::deserialize(d).map(Skeleton::Hashed)
    }
}

/// Longest result text a [`RawResult`] keeps a copy of (a longer one is kept hashed).
const MAX_RAW_TEXT: usize = 64 * 1024;

/// The exact identity of a result: its text and image count, identified by their
/// fingerprint ([`result_fingerprint`], pi-loop-guard's rule), and the sketch of its runs of
/// lines ([`Sketch::of_line_runs`]), which is what a snapshot holds. While the text is at
/// hand (up to [`MAX_RAW_TEXT`] bytes) a copy of it is kept instead, so that no result pays
/// for the hash or the sketch: two results are equal exactly when their fingerprints are
/// (barring a SHA-256 collision), and a fingerprint or a sketch is computed only to
/// serialise, for a long text, or to compare.
#[derive(Clone, Debug)]
pub(super) enum RawResult {
    /// The result's text and image count.
    Text { text: String, images: u32 },
    /// The fingerprint of a result whose text is not kept, and the sketch of its runs of
    /// lines when it had one to compare (not for a text longer than [`MAX_RAW_TEXT`]).
    Hashed {
        fp: Fingerprint,
        lines: Option<Sketch>,
    },
}

impl RawResult {
    /// `result_fingerprint(text, images)`.
    fn fingerprint(&self) -> Fingerprint {
        match self {
            RawResult::Text { text, images } => result_fingerprint(text, *images),
            RawResult::Hashed { fp, .. } => *fp,
        }
    }

    /// The sketch of the result's runs of lines ([`lines_of`]).
    fn lines(&self) -> Option<Sketch> {
        match self {
            RawResult::Text { text, .. } => lines_of(text),
            RawResult::Hashed { lines, .. } => lines.clone(),
        }
    }

    /// Whether this is the result `content` with `images` images.
    fn is(&self, content: &str, images: u32) -> bool {
        match self {
            RawResult::Text { text, images: n } => text == content && *n == images,
            RawResult::Hashed { fp, .. } => *fp == result_fingerprint(content, images),
        }
    }

    /// The identity of `content` with `images` images, written into `reuse`'s buffer when it
    /// kept a text.
    fn of(content: &str, images: u32, reuse: Option<RawResult>) -> RawResult {
        if content.len() > MAX_RAW_TEXT {
            return RawResult::Hashed {
                fp: result_fingerprint(content, images),
                lines: None,
            };
        }
        let mut text = match reuse {
            Some(RawResult::Text { text, .. }) => text,
            _ => String::new(),
        };
        text.clear();
        text.push_str(content);
        RawResult::Text { text, images }
    }
}

/// A [`RawResult`] in a snapshot.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum RawSnapshot {
    /// Its fingerprint and the sketch of its lines.
    Sketched {
        fp: Fingerprint,
        lines: Option<Sketch>,
    },
    /// Its fingerprint alone (a snapshot written before the sketch was kept).
    Bare(Fingerprint),
}

impl Serialize for RawResult {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        RawSnapshot::Sketched {
            fp: self.fingerprint(),
            lines: self.lines(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for RawResult {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RawResult, D::Error> {
        Ok(match RawSnapshot::deserialize(d)? {
            RawSnapshot::Sketched { fp, lines } => RawResult::Hashed { fp, lines },
            RawSnapshot::Bare(fp) => RawResult::Hashed { fp, lines: None },
        })
    }
}

/// The similar-calls streak: consecutive calls of one tool, each like one of the last few
/// before it, whose results have the same shape and do not progress.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct SimilarStreak {
    pub(super) tool: String,
    /// The newest calls of the streak (at most [`SIMILAR_MEMORY`]).
    pub(super) calls: VecDeque<SimilarCall>,
    /// The shape of the streak's results.
    pub(super) shape: Option<Fingerprint>,
    pub(super) empty: bool,
    /// The temp ids of the newest result.
    pub(super) ids: Option<u64>,
    /// The exact identity of the newest result (serialised as its fingerprint).
    #[serde(default)]
    pub(super) last_raw: Option<RawResult>,
    pub(super) trend: Trend,
    pub(super) count: u32,
    pub(super) warned: bool,
    pub(super) start_call: u64,
    pub(super) seqs: VecDeque<u64>,
    /// The identities (call, answer: the result's shape and numbers) of the newest
    /// [`SWEEP_MEMORY`] calls the rule judged, across the streaks they started: a call unlike
    /// all of them, answered unlike all of them, addressed another object.
    #[serde(default)]
    pub(super) answers: VecDeque<(u64, u64)>,
    /// The paths named by the newest [`SWEEP_MEMORY`] calls the rule judged that name one
    /// ([`call_words`]), across the streaks they started.
    #[serde(default)]
    pub(super) objects: VecDeque<u64>,
    /// The streak went on with a near copy ([`GenericRepeat::similar_result`]): a window
    /// drifting over one place, whose other numbers are not another object.
    #[serde(default)]
    pub(super) drifting: bool,
    /// How the numbers of the streak's calls ([`CallNumbers`]) moved
    /// ([`Trend::step_onward`]).
    #[serde(default)]
    pub(super) call_trend: Trend,
}

impl SimilarStreak {
    /// What each call of a streak whose results are not empty got back, for its messages.
    fn what_came_back(&self) -> &'static str {
        if self.drifting {
            "mostly the lines the one before it showed"
        } else {
            "the same result up to its numbers"
        }
    }

    /// The key of the streak's findings, its warning and its blocks alike: its tool and the
    /// shape of its results.
    fn key(&self) -> String {
        format!(
            "similar:{}:{}",
            self.tool,
            self.shape.map(|f| short_hex(&f)).unwrap_or_default()
        )
    }
}

impl GenericRepeat {
    /// Blocks the newest issued call (the back of the pending calls) when it would extend a
    /// warned similar-calls streak whose results are not empty to `critical-threshold` alike
    /// calls: the agent was told at the warning and goes on saying the same thing in other
    /// words. (An empty streak only warns: a sweep of probes that all find nothing looks
    /// the same.) Whether the call goes on alike is read from its arguments alone, as the
    /// near-duplicate rule reads its own; its result would say whether it progressed, but a
    /// blocked call has none, and the streak is judged again from the next call's.
    pub(super) fn check_similar_block(&mut self, tool: &str, cx: &mut Cx<'_>) -> bool {
        let Some(block) = self
            .settings
            .similar_calls
            .as_ref()
            .and_then(|sc| sc.block_threshold.map(|b| (b, sc.similarity_permille)))
        else {
            return false;
        };
        let (threshold, permille) = block;
        let st = &self.state.similar;
        let Some(p) = self.state.pending.back() else {
            return false;
        };
        let next = st.count.saturating_add(1);
        let alike = || {
            st.calls
                .iter()
                .any(|c| c.tokens.similarity_permille(&p.tokens) >= permille)
        };
        if !st.warned || st.empty || st.tool != tool || next < threshold || !alike() {
            return false;
        }
        let span = self.state.calls.saturating_sub(st.start_call);
        let msg = format!(
            "Blocked: you called `{}` {} with nearly the same arguments and each returned {}, after a \
             warning; this call is one more of them and is refused. Step back and change the approach, \
             or give your final answer.",
            st.tool,
            times(st.count, span),
            st.what_came_back()
        );
        let key = st.key();
        let mut evidence: Vec<u64> = st.seqs.iter().copied().collect();
        evidence.push(cx.seq());
        cx.report(
            Finding::new(NAME, Level::Critical, next, key, msg)
                .with_tool(st.tool.clone())
                .with_evidence(evidence),
        );
        true
    }

    /// Extends the similar-calls streak when this call is of the streak's tool, like one of
    /// its newest calls (token similarity, or the same command skeleton when both results are
    /// empty), and its result has the streak's shape without progress; otherwise starts a new
    /// streak at this call. Warns once the streak reaches `warning-threshold` calls.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn similar_result(
        &mut self,
        tool: &str,
        p: PendingCall,
        call_fp: u64,
        content: &str,
        images: u32,
        is_error: bool,
        cx: &mut Cx<'_>,
    ) {
        let Some(sc) = &self.settings.similar_calls else {
            return;
        };
        // The bus's shape of the result, with the echo of the call it answers.
        let rs = &*cx.result_shape_or_plain(true, content);
        let call = SimilarCall {
            tokens: p.tokens,
            skeleton: p.skeleton,
            call: Some(call_fp),
            frame: p.frame,
        };
        let st = &mut self.state.similar;
        // A new id in each result is a new object each time (an agent launched): progress.
        let new_ids = rs.ids.is_some() && st.ids != rs.ids;
        // A call that differs from the previous one only in its numbers (`ls dir7` after
        // `ls dir6`) and gets a different answer addressed another object: progress.
        // (Read only for a like call that did not progress otherwise: the same token set is
        // a similarity of 1000.)
        let renumbered = |st: &SimilarStreak| {
            !rs.empty
                && st
                    .calls
                    .back()
                    .is_some_and(|c| c.call != call.call && c.tokens == call.tokens)
                && st.last_raw.as_ref().is_some_and(|r| !r.is(content, images))
        };
        // A call unlike each of the newest similar calls, answered unlike each of them (not
        // nothing), addressed another object: a sweep (`grep -c 'def ' a.py`, then `b.py`,
        // each with its count). A loop repeats something: a call (phrasings taken in turn) or
        // an answer (a throwaway word changed, the same answer). An answer is its shape and
        // its numbers: what it echoes of the call does not make it another (`No matches
        // found for "X"` for each word X tried).
        let answer = rs.numbers.iter().fold(
            loopguard_core::fnv1a(loopguard_core::FNV1A_START, rs.fp.as_bytes()),
            |h, n| loopguard_core::fnv1a(h, &n.to_le_bytes()),
        );
        let other_object =
            !rs.empty && !st.answers.iter().any(|&(c, a)| c == call_fp || a == answer);
        push_capped(&mut st.answers, (call_fp, answer), SWEEP_MEMORY);
        // A call over paths none of the newest calls named, answered something that is not
        // a failure, looked at another object: a sweep whose answers agree (`test -f X &&
        // echo exists`, `grep -q P X; echo $?` over one file after another; a silent check
        // of each file, `python3 -m py_compile X`). Nothing from a call that looks for
        // something (a search that found nothing, a probe for a file that is not there) and
        // a failure (`No such file or directory`) learn nothing, however many paths they try.
        let new_object = p.object.is_some_and(|o| {
            let new = !st.objects.contains(&o);
            push_capped(&mut st.objects, o, SWEEP_MEMORY);
            new
        });
        let swept =
            || new_object && (!rs.empty || !p.probe) && !is_error && !cx.looks_like_error(content);
        // A call that differs from the streak's newest only in its numbers (`sed -n
        // '98,138p' f`, then `'101,141p' f`; a `Read` at another offset) answered with most
        // of the lines its answer showed, in the same order ([`rereads`]), read the same
        // place again: a window drifting over it. Its other numbers and its other answer are
        // not another object (a sweep over numbered objects names them with words,
        // `seed_1.txt`, `run7`, which keep their digits in the frame; the next page of a
        // file shows other lines, however alike its text). The very same call that only
        // reads, answered otherwise, is not a near copy: what it reads moved by itself (a
        // log that grows under `cat build.log | tail -n 30`), which is the near-duplicate
        // streak's to judge; the same call that acts and shows the same place again has
        // done the same thing again (`edit 1:1` inserting one block once more).
        let newest = st.calls.back();
        let near_copy = st.tool == tool
            && !rs.empty
            && !st.empty
            && st.shape != Some(rs.fp)
            && !new_ids
            && newest.is_some_and(|c| c.frame == call.frame)
            && st.last_raw.as_ref().is_some_and(|last| {
                if newest.is_some_and(|c| c.call == call.call) && !p.acts {
                    last.is(content, images)
                } else {
                    rereads(last, content)
                }
            });
        let like = near_copy
            || (st.tool == tool
                && st.shape == Some(rs.fp)
                && !new_ids
                && st.calls.iter().any(|c| {
                    c.tokens.similarity_permille(&call.tokens) >= sc.similarity_permille
                        || (rs.empty
                            && st.empty
                            && call.skeleton.is_some()
                            && c.skeleton == call.skeleton)
                }));
        // The numbers of a near copy come from other lines of one text: their moves are not
        // a count going down. Once a streak drifts, a call with other numbers answered as
        // one of its earlier calls was (the same shape) has come back to a place it read.
        let drifting = near_copy || (like && st.drifting);
        let stepped = like && st.trend.step(&rs.numbers);
        // A drifting window whose numbers keep moving one way (scrolling by a few lines at a
        // time, an edit at each next line) shows something new each time: from its second
        // move on the call is not counted, and the streak goes on.
        let moved_on = like && st.call_trend.step_onward(p.numbers.as_slice());
        let progress =
            like && ((!drifting && (stepped || renumbered(st) || other_object)) || swept());
        let raw = Some(RawResult::of(content, images, st.last_raw.take()));
        if like && !progress {
            if !(drifting && moved_on) {
                st.count = st.count.saturating_add(1);
            }
            st.last_raw = raw;
            st.drifting = drifting;
        } else {
            // A new streak at this call, in the old one's buffers (most results start one).
            // A like call that progressed keeps the trend; another starts a new one.
            let mut trend = std::mem::take(&mut st.trend);
            let mut call_trend = std::mem::take(&mut st.call_trend);
            if !like {
                trend.restart();
                trend.step(&rs.numbers);
                call_trend.restart();
                call_trend.step(p.numbers.as_slice());
            }
            let mut name = std::mem::take(&mut st.tool);
            name.clear();
            name.push_str(tool);
            let answers = std::mem::take(&mut st.answers);
            let objects = std::mem::take(&mut st.objects);
            let (mut calls, mut seqs) =
                (std::mem::take(&mut st.calls), std::mem::take(&mut st.seqs));
            calls.clear();
            seqs.clear();
            *st = SimilarStreak {
                tool: name,
                calls,
                shape: Some(rs.fp),
                empty: rs.empty,
                ids: rs.ids,
                last_raw: raw,
                trend,
                count: 1,
                start_call: self.state.calls,
                seqs,
                answers,
                objects,
                call_trend,
                ..SimilarStreak::default()
            };
        }
        push_capped(&mut st.calls, call, SIMILAR_MEMORY);
        push_bounded(&mut st.seqs, cx.seq());
        let warn_at = if st.empty {
            sc.empty_warn_threshold
        } else {
            sc.warn_threshold
        };
        if st.count < warn_at || st.warned {
            return;
        }
        st.warned = true;
        // One steer per loop: the exact or near-duplicate streak may already speak for it.
        let exact = self.state.streak.warned && self.state.streak.count >= 2;
        let near = self.state.near.warned;
        if exact || near {
            return;
        }
        let st = &self.state.similar;
        let span = self.state.calls.saturating_sub(st.start_call) + 1;
        let what = if st.empty {
            "each returned nothing".to_owned()
        } else {
            format!("each returned {}, without progress", st.what_came_back())
        };
        let msg = format!(
            "Loop warning: you called `{}` {} with nearly the same arguments and {what}. Small variations \
             of the same call will not change the outcome: step back, rethink the approach, or give your \
             final answer.",
            st.tool,
            times(st.count, span)
        );
        let key = st.key();
        let f = Finding::new(NAME, Level::Warning, st.count, key, msg)
            .with_tool(st.tool.clone())
            .with_evidence(st.seqs.iter().copied().collect());
        cx.report(f);
    }
}

/// A call's command words: its skeleton and the paths it names, read in one pass.
///
/// - The skeleton of a shell command: its words (of its first 2000 bytes, or of all of it
///   when that cut falls inside a character) with path arguments
///   ([`loopguard_core::shape::path_word`]: `/usr/lib`, `./src`, `~/x`, `../y`) left out,
///   joined by single spaces; `find /usr/lib -name X` and `find /opt -name X` share it.
///   `None` when the call has no `command` / `cmd` string.
/// - The paths it names, hashed together: the command's path arguments and its other words
///   that hold a `/` (`tests/test_io.py`, `>>docs/api.md`; kept in the skeleton), else the
///   string values of its arguments whose key names a path or a file (`path`, `file_path`,
///   `filename`). `None` when it names none.
pub(super) fn call_words(args: &Value) -> (Option<Skeleton>, Option<u64>) {
    let mut h = loopguard_core::FNV1A_START;
    let mut any = false;
    let mut add = |s: &str| {
        h = loopguard_core::fnv1a(h, s.as_bytes());
        h = loopguard_core::fnv1a(h, b"\0");
        any = true;
    };
    let skeleton = match loopguard_core::shape::command(args) {
        Some(cmd) => {
            let cmd = cmd.get(..cmd.len().min(2000)).unwrap_or(cmd);
            let mut text = String::with_capacity(cmd.len());
            for w in cmd.split_whitespace() {
                if let Some(path) = loopguard_core::shape::path_word(w) {
                    add(path);
                    continue;
                }
                if w.contains('/') {
                    add(w);
                }
                if !text.is_empty() {
                    text.push(' ');
                }
                text.push_str(w);
            }
            Some(Skeleton::Text(text))
        }
        None => {
            if let Value::Object(m) = args {
                for (k, v) in m {
                    if let (true, Value::String(s)) = (names_a_path(k), v) {
                        add(s);
                    }
                }
            }
            None
        }
    };
    (skeleton, any.then_some(h))
}

/// Fewest lines (not blank) an answer has for [`rereads`] to compare it.
const REREAD_MIN_LINES: usize = 4;

/// The sketch of an answer's runs of lines ([`Sketch::of_line_runs`]), when it has
/// [`REREAD_MIN_LINES`] lines and is no longer than [`MAX_RAW_TEXT`].
fn lines_of(text: &str) -> Option<Sketch> {
    if text.len() > MAX_RAW_TEXT {
        return None;
    }
    Sketch::of_line_runs(text, REREAD_MIN_LINES)
}

/// Whether `now` shows again most of what `before` showed, in the same order: the Jaccard
/// similarity of their sets of runs of three consecutive lines (trimmed, blank lines left
/// out; estimated by their sketches, exactly up to 256 runs) is at least one half, and both
/// have lines to compare ([`lines_of`]). A window moved by a few lines over one text shares
/// most of its runs; the next page of a repetitive text shares lines, not runs of them
/// (pages of the Cargo registry's and the Python standard library's sources read in order
/// share at most about a third).
fn rereads(before: &RawResult, now: &str) -> bool {
    match (before.lines(), lines_of(now)) {
        (Some(a), Some(b)) => a.similar(&b, REREAD_PERMILLE),
        _ => false,
    }
}

/// The share of runs of lines two answers have in common for the second to reread the
/// first ([`rereads`]), in thousandths: one half.
const REREAD_PERMILLE: u32 = 500;

/// Most bytes of a call's string arguments [`frame`] reads.
const FRAME_BYTES: usize = 4096;

/// A call's arguments without their numbers: a hash of its object keys and of the words of
/// its string arguments, where a number (a JSON number; in a string, a run of digits, or of
/// digits and one letter after them: `138p`, `40k`) counts as one mark whatever its value. A
/// number is read in the runs of letters, digits and `_` of a word that is not a path: a
/// word holding a `/` is kept as written, and so is a run that holds digits among letters.
/// The first [`CALL_NUMBERS`] numbers met are kept too, in order (a number of digits and a
/// letter by its digits). Two calls of one frame say the same thing of the same objects with
/// other numbers (`sed -n '98,138p' f` and `sed -n '101,141p' f`; a `Read` at another
/// offset); numbered objects are named by paths and words (`runs/3/log.txt`, `seed_1.txt`,
/// `run7`), which keep their digits.
pub(super) fn frame(args: &Value) -> (u64, CallNumbers) {
    /// Writes `bytes` and a separator (a byte no UTF-8 text holds) into `h`.
    fn mix(h: &mut impl Hasher, bytes: &[u8]) {
        h.write(bytes);
        h.write_u8(0xff);
    }
    fn text(s: &str, h: &mut impl Hasher, numbers: &mut CallNumbers, budget: &mut usize) {
        let b = s.as_bytes();
        let b = b.get(..b.len().min(*budget)).unwrap_or(b);
        *budget = budget.saturating_sub(b.len());
        for word in b.split(u8::is_ascii_whitespace).filter(|w| !w.is_empty()) {
            if word.contains(&b'/') {
                mix(h, word);
                continue;
            }
            // Runs of letters, digits, `_` and any byte of a character beyond ASCII.
            for run in word
                .split(|c| !(c.is_ascii_alphanumeric() || *c == b'_' || *c >= 0x80))
                .filter(|r| !r.is_empty())
            {
                let digits = run.iter().take_while(|c| c.is_ascii_digit()).count();
                let number = digits > 0
                    && (digits == run.len()
                        || (digits + 1 == run.len() && run[digits].is_ascii_alphabetic()));
                if number {
                    let value = run[..digits].iter().fold(0u64, |v, d| {
                        v.saturating_mul(10).saturating_add(u64::from(d - b'0'))
                    });
                    numbers.push(value);
                }
                mix(h, if number { b"#" } else { run });
            }
        }
    }
    fn walk(v: &Value, h: &mut impl Hasher, numbers: &mut CallNumbers, budget: &mut usize) {
        match v {
            Value::Null => mix(h, b"\0null"),
            Value::Bool(b) => mix(h, if *b { b"\0true" } else { b"\0false" }),
            Value::Number(n) => {
                let value = n
                    .as_u64()
                    .or_else(|| n.as_i64().map(i64::unsigned_abs))
                    .unwrap_or_else(|| n.as_f64().map_or(0, |f| f.abs() as u64));
                numbers.push(value);
                mix(h, b"#");
            }
            Value::String(s) => {
                mix(h, b"\0\"");
                text(s, h, numbers, budget);
            }
            Value::Array(a) => {
                mix(h, b"\0[");
                for x in a {
                    walk(x, h, numbers, budget);
                }
                mix(h, b"\0]");
            }
            Value::Object(m) => {
                mix(h, b"\0{");
                for (k, x) in m {
                    mix(h, k.as_bytes());
                    mix(h, b"\0:");
                    walk(x, h, numbers, budget);
                }
                mix(h, b"\0}");
            }
        }
    }
    let mut h = loopguard_core::FixedState.build_hasher();
    let mut numbers = CallNumbers::default();
    let mut budget = FRAME_BYTES;
    walk(args, &mut h, &mut numbers, &mut budget);
    (h.finish(), numbers)
}

/// Whether an argument's key names a path or a file (`path`, `file_path`, `filePath`,
/// `filename`), in any case.
fn names_a_path(key: &str) -> bool {
    let k = key.as_bytes();
    k.len() <= 32
        && k.windows(4)
            .any(|w| w.eq_ignore_ascii_case(b"path") || w.eq_ignore_ascii_case(b"file"))
}

#[cfg(test)]
mod tests;
