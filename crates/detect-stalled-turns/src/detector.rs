//! The stalled-turns state machine.
//!
//! Two counters, both reset by any tool activity (a call or a result):
//! - **nudges**: user-side messages that repeat the previous one word for word (what a
//!   harness sends when the model answered without a tool call);
//! - **replies**: assistant messages that issued no tool call and are empty, or repeat the
//!   previous such reply (both streams compared, whitespace ignored).
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
    /// The last counted user-side message (fingerprint of its trimmed text, or of its shape
    /// with `mask-numbers`).
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
    /// The reply the reply run repeats (`None` when the run is made of empty replies only).
    last_reply: Option<Reply>,
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
            loopguard_core::shape::text_shape(text.trim())
        } else {
            fp
        };
        let repeat = self.state.last_nudge == Some(nudge_fp);
        let same_as_last_user = self.state.last_user.replace(fp) == Some(fp);
        // The bus starts no turn for an own steer it recognised by its text: skip it too.
        if !cx.is_new_turn() && !same_as_last_user && origin != Origin::Human {
            self.state.last_user = self.state.last_nudge_exact;
            return;
        }
        let s = &mut self.state;
        if origin == Origin::Human {
            // A person spoke: whatever came before is not a harness loop.
            s.end_stall();
            return;
        }
        s.last_nudge_exact = Some(fp);
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
                }
            }
            Event::MessageEnd => {
                if let Some(r) = self.state.current.take() {
                    if !self.state.current_has_call {
                        self.state.pending = Some((r, cx.seq()));
                    }
                }
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
