//! # loopguard-testkit
//!
//! Helpers shared by detector tests, fuzz targets and third-party detector authors:
//! a [`Script`] builder for event sequences, [`run`] to feed a detector through a real
//! [`Bus`], [`decode_events`] turning arbitrary bytes into events (one decoder for proptest
//! and cargo-fuzz), and proptest strategies.
#![warn(missing_docs)]

pub mod corpus;
pub mod labels;
pub mod registration;
pub mod texts;

use loopguard_core::{Bus, Detector, Event, Finding, Level, Origin, OwnedEvent, Stream};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Builds an event sequence the way an agent runtime would emit it.
///
/// ```
/// use loopguard_testkit::Script;
/// let mut s = Script::new();
/// s.user("fix the bug");
/// s.call("read", serde_json::json!({"path": "a.rs"}), "fn main() {}");
/// assert_eq!(s.events().len(), 5); // user, message start/end, call, result
/// ```
#[derive(Clone, Debug, Default)]
pub struct Script {
    events: Vec<OwnedEvent>,
    next_id: u64,
    message: u64,
}

impl Script {
    /// An empty script.
    pub fn new() -> Script {
        Script::default()
    }

    /// The events so far.
    pub fn events(&self) -> &[OwnedEvent] {
        &self.events
    }

    /// Consumes the script.
    pub fn into_events(self) -> Vec<OwnedEvent> {
        self.events
    }

    /// Appends any event.
    pub fn push(&mut self, e: OwnedEvent) -> &mut Script {
        self.events.push(e);
        self
    }

    /// `n` identical user messages of unknown origin (a harness repeating its nudge).
    pub fn repeat_user(&mut self, n: usize, text: &str) -> &mut Script {
        for _ in 0..n {
            self.user(text);
        }
        self
    }

    /// A user message of unknown origin.
    pub fn user(&mut self, text: &str) -> &mut Script {
        self.push(OwnedEvent::User {
            text: text.to_owned(),
            origin: Origin::Unknown,
        })
    }

    /// A user message of the given origin.
    pub fn user_from(&mut self, text: &str, origin: Origin) -> &mut Script {
        self.push(OwnedEvent::User {
            text: text.to_owned(),
            origin,
        })
    }

    /// An agent run starts.
    pub fn run_start(&mut self) -> &mut Script {
        self.push(OwnedEvent::RunStart { run_id: None })
    }

    /// An agent run ends.
    pub fn run_end(&mut self) -> &mut Script {
        self.push(OwnedEvent::RunEnd)
    }

    /// A compaction.
    pub fn compaction(&mut self) -> &mut Script {
        self.push(OwnedEvent::Compaction)
    }

    /// An assistant message streaming `text` on `stream` in `chunk`-character deltas.
    pub fn message_chunked(&mut self, stream: Stream, text: &str, chunk: usize) -> &mut Script {
        self.message_streams(&[(stream, text)], chunk)
    }

    /// An assistant message streaming each `(stream, text)` piece in turn, in
    /// `chunk`-character deltas (a piece's last delta may be shorter).
    pub fn message_streams(&mut self, pieces: &[(Stream, &str)], chunk: usize) -> &mut Script {
        self.events.push(OwnedEvent::MessageStart);
        self.message += 1;
        for (stream, text) in pieces {
            let chars: Vec<char> = text.chars().collect();
            for piece in chars.chunks(chunk.max(1)) {
                self.events.push(OwnedEvent::TextDelta {
                    stream: *stream,
                    delta: piece.iter().collect(),
                });
            }
        }
        self.push(OwnedEvent::MessageEnd)
    }

    /// An assistant message with visible text, streamed in 16-character deltas.
    pub fn message(&mut self, text: &str) -> &mut Script {
        self.message_chunked(Stream::Text, text, 16)
    }

    /// A tool call alone (no message around it); returns its id.
    pub fn tool_call(&mut self, tool: &str, args: Value) -> String {
        self.next_id += 1;
        let id = format!("call-{}", self.next_id);
        self.events.push(OwnedEvent::ToolCall {
            id: id.clone(),
            tool: tool.to_owned(),
            args,
            batch: None,
        });
        id
    }

    /// A tool result for call `id`.
    pub fn tool_result(
        &mut self,
        id: &str,
        tool: &str,
        content: &str,
        is_error: bool,
    ) -> &mut Script {
        self.push(OwnedEvent::ToolResult {
            id: id.to_owned(),
            tool: tool.to_owned(),
            content: content.to_owned(),
            is_error,
            images: 0,
            details: None,
        })
    }

    /// One sequential turn whose result carries structured `details`.
    pub fn call_details(
        &mut self,
        tool: &str,
        args: Value,
        content: &str,
        details: Option<Value>,
    ) -> &mut Script {
        self.call_result(tool, args, content, 0, details)
    }

    /// One sequential turn whose result carries `images` image blocks.
    pub fn call_images(
        &mut self,
        tool: &str,
        args: Value,
        content: &str,
        images: u32,
    ) -> &mut Script {
        self.call_result(tool, args, content, images, None)
    }

    fn call_result(
        &mut self,
        tool: &str,
        args: Value,
        content: &str,
        images: u32,
        details: Option<Value>,
    ) -> &mut Script {
        self.push(OwnedEvent::MessageStart);
        self.push(OwnedEvent::MessageEnd);
        let id = self.tool_call(tool, args);
        self.push(OwnedEvent::ToolResult {
            id,
            tool: tool.to_owned(),
            content: content.to_owned(),
            is_error: false,
            images,
            details,
        })
    }

    /// The index of the last event pushed so far (0 for an empty script).
    pub fn last_index(&self) -> usize {
        self.events.len().saturating_sub(1)
    }

    /// One sequential turn: an assistant message issuing one call, then its result.
    pub fn call(&mut self, tool: &str, args: Value, result: &str) -> &mut Script {
        self.call_with(tool, args, result, false)
    }

    /// `n` identical sequential turns: [`Script::call`] of `tool` with `args` and `result`.
    pub fn repeat_call(&mut self, n: usize, tool: &str, args: Value, result: &str) -> &mut Script {
        for _ in 0..n {
            self.call(tool, args.clone(), result);
        }
        self
    }

    /// `n` identical sequential turns: [`Script::call_with`] of `tool` with `args`, `result`
    /// and the error flag.
    pub fn repeat_call_with(
        &mut self,
        n: usize,
        tool: &str,
        args: Value,
        result: &str,
        is_error: bool,
    ) -> &mut Script {
        for _ in 0..n {
            self.call_with(tool, args.clone(), result, is_error);
        }
        self
    }

    /// `n` sequential turns calling `tool` with `args` every time, the `i`th answered with
    /// `result(i)` (an output that changes, or only seems to).
    pub fn call_results(
        &mut self,
        n: usize,
        tool: &str,
        args: Value,
        result: impl Fn(usize) -> String,
    ) -> &mut Script {
        for i in 0..n {
            self.call(tool, args.clone(), &result(i));
        }
        self
    }

    /// `n` sequential turns calling `tool` with `args(i)` the `i`th time, each answered with
    /// `result` (calls that differ, whatever they return).
    pub fn call_args(
        &mut self,
        n: usize,
        tool: &str,
        args: impl Fn(usize) -> Value,
        result: &str,
    ) -> &mut Script {
        for i in 0..n {
            self.call(tool, args(i), result);
        }
        self
    }

    /// As [`Script::call`], with the error flag.
    pub fn call_with(
        &mut self,
        tool: &str,
        args: Value,
        result: &str,
        is_error: bool,
    ) -> &mut Script {
        self.events.push(OwnedEvent::MessageStart);
        self.message += 1;
        self.events.push(OwnedEvent::MessageEnd);
        let id = self.tool_call(tool, args);
        self.tool_result(&id, tool, result, is_error)
    }

    /// One assistant message issuing several calls in parallel, then their results in order.
    pub fn batch(&mut self, calls: &[(&str, Value, &str)]) -> &mut Script {
        self.events.push(OwnedEvent::MessageStart);
        self.message += 1;
        self.events.push(OwnedEvent::MessageEnd);
        let ids: Vec<String> = calls
            .iter()
            .map(|(t, a, _)| self.tool_call(t, a.clone()))
            .collect();
        for (id, (t, _, r)) in ids.iter().zip(calls) {
            self.tool_result(id, t, r, false);
        }
        self
    }
}

/// The guard's veto, for a run through a bare [`Bus`]: a tool call on which a finding is
/// critical or fatal is refused (the bus is told with [`Bus::note_refused`]), and the result
/// of a refused call, which never ran, is recorded with [`Bus::observe_vetoed`] and shown to
/// no detector. Detectors keep no list of the calls they blocked, and neither does the veto:
/// the bus, which pairs results with calls, knows which calls were refused.
#[derive(Clone, Copy, Debug, Default)]
pub struct Veto;

impl Veto {
    /// Feeds `event` to `bus` under the veto and returns the findings.
    pub fn observe(&mut self, bus: &mut Bus, event: &Event<'_>) -> Vec<Finding> {
        match event {
            Event::ToolResult { id, tool, .. } if bus.answers_refused(id, tool) => {
                bus.observe_vetoed(event);
                Vec::new()
            }
            Event::ToolCall { .. } => {
                let findings = bus.observe(event);
                if findings.iter().any(|f| f.level >= Level::Critical) {
                    bus.note_refused();
                }
                findings
            }
            _ => bus.observe(event),
        }
    }
}

/// Feeds `events` through a bus holding only `detector`, under the guard's [`Veto`], and
/// returns every finding with the index of the event that produced it.
pub fn run(detector: Box<dyn Detector>, events: &[OwnedEvent]) -> Vec<(usize, Finding)> {
    run_indexed(detector, events.iter().enumerate())
}

/// The one finding of `found` (what [`run`] returned); panics, listing them, unless there is
/// exactly one.
#[track_caller]
pub fn only_finding(found: &[(usize, Finding)]) -> &Finding {
    match found {
        [(_, f)] => f,
        _ => panic!(
            "expected exactly one finding, got {}: {found:?}",
            found.len()
        ),
    }
}

/// Feeds `events` through a bus holding only `detector` and returns every finding with the
/// index its event came with.
pub(crate) fn run_indexed<'a>(
    detector: Box<dyn Detector>,
    events: impl IntoIterator<Item = (usize, &'a OwnedEvent)>,
) -> Vec<(usize, Finding)> {
    let mut bus = Bus::new(vec![detector]);
    let mut veto = Veto;
    let mut out = Vec::new();
    for (i, e) in events {
        out.extend(
            veto.observe(&mut bus, &e.as_event())
                .into_iter()
                .map(|f| (i, f)),
        );
    }
    out
}

/// Feeds `events[..cut]` through a bus holding `make()`, snapshots it, restores the snapshot
/// into a fresh bus holding another `make()`, and feeds the rest: the findings (with event
/// indices) must equal those of [`run`] over the whole stream for a detector whose state
/// snapshots completely.
pub fn run_with_snapshot(
    make: &dyn Fn() -> Box<dyn Detector>,
    events: &[OwnedEvent],
    cut: usize,
) -> Result<Vec<(usize, Finding)>, loopguard_core::StateError> {
    let cut = cut.min(events.len());
    let mut bus = Bus::new(vec![make()]);
    let mut veto = Veto;
    let mut out = Vec::new();
    for (i, e) in events[..cut].iter().enumerate() {
        out.extend(
            veto.observe(&mut bus, &e.as_event())
                .into_iter()
                .map(|f| (i, f)),
        );
    }
    let snap = bus.snapshot()?;
    let mut restored = Bus::new(vec![make()]);
    restored.restore(&snap)?;
    for (i, e) in events.iter().enumerate().skip(cut) {
        out.extend(
            veto.observe(&mut restored, &e.as_event())
                .into_iter()
                .map(|f| (i, f)),
        );
    }
    Ok(out)
}

/// Where a fuzz input asks for a snapshot and restore: one input in four (its last byte a
/// multiple of four), at the event that byte picks (anywhere from the first to near the last);
/// `None` for the others. The fuzzer keeps the inputs that reach new code in the restore path,
/// so the check keeps its coverage, and three executions in four cost one run, not two.
pub fn fuzz_cut(data: &[u8], events: usize) -> Option<usize> {
    let b = *data.last()?;
    (b % 4 == 0).then(|| usize::from(b / 4) * events / 64)
}

/// The detector fuzz targets' restore check: where the input asks for one ([`fuzz_cut`]), a
/// run of a fresh detector from `make` with a snapshot and restore at that event must give
/// `findings` (the uninterrupted run's). Panics (the fuzzer's crash) otherwise.
pub fn fuzz_check_restore(
    make: &dyn Fn() -> Box<dyn Detector>,
    events: &[OwnedEvent],
    data: &[u8],
    findings: &[(usize, Finding)],
) {
    let Some(cut) = fuzz_cut(data, events.len()) else {
        return;
    };
    match run_with_snapshot(make, events, cut) {
        Ok(out) => assert_eq!(
            findings,
            out.as_slice(),
            "a restore at event {cut} changed the findings"
        ),
        Err(e) => panic!("snapshot or restore at event {cut} failed: {e}"),
    }
}

/// The proptest configuration of the detectors' invariants: 256 cases, no failure file.
pub fn proptest_config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// The invariant every detector keeps: the same input gives the same findings, and a snapshot
/// taken after `events[..cut]`, restored into a fresh detector from `make`, gives the same
/// findings as an uninterrupted run.
pub fn check_replayable(
    make: &dyn Fn() -> Box<dyn Detector>,
    events: &[OwnedEvent],
    cut: usize,
) -> Result<(), TestCaseError> {
    let a = run(make(), events);
    prop_assert_eq!(&a, &run(make(), events));
    let out = run_with_snapshot(make, events, cut)
        .map_err(|e| TestCaseError::fail(format!("snapshot or restore failed: {e}")))?;
    prop_assert_eq!(a, out);
    Ok(())
}

/// A detector crate's property tests, in one `proptest!` block with [`proptest_config`]: first
/// `deterministic_and_snapshot_restore_equivalent`, the test of [`check_replayable`] over
/// [`arb_events`]`(900)` with a cut in `0..300` (or the given bounds) for every maker in turn,
/// then, with `distinct_calls: (maker, "tool")`, `distinct_calls_never_fire` (calls of the tool
/// whose arguments all differ never fire, see [`distinct_calls_findings`]), then the crate's own
/// tests. `default: Type` declares `fn detector()`, the detector `Type::default()` boxed, as the
/// one maker.
///
/// ```ignore
/// loopguard_testkit::detector_proptests! {
///     makers: [detector, openclaw];
///
///     #[test]
///     fn never_fires_on_reads(events in arb_events(900)) { /* … */ }
/// }
/// ```
#[macro_export]
macro_rules! detector_proptests {
    (default: $ty:ty $(, distinct_calls: $tool:literal)?; $($tests:tt)*) => {
        fn detector() -> ::std::boxed::Box<dyn $crate::__private::Detector> {
            ::std::boxed::Box::new(<$ty>::default())
        }

        $crate::detector_proptests!(makers: [detector] $(, distinct_calls: (detector, $tool))?; $($tests)*);
    };
    (makers: [$($make:expr),+ $(,)?] $(, distinct_calls: ($dmake:expr, $tool:literal))?; $($tests:tt)*) => {
        $crate::detector_proptests!(
            makers: [$($make),+], bytes: 900, cut: 300 $(, distinct_calls: ($dmake, $tool))?; $($tests)*
        );
    };
    (
        makers: [$($make:expr),+ $(,)?], bytes: $bytes:expr, cut: $cut:expr
        $(, distinct_calls: ($dmake:expr, $tool:literal))?; $($tests:tt)*
    ) => {
        $crate::__private::proptest::proptest! {
            #![proptest_config($crate::proptest_config())]

            /// Same input, same findings; a snapshot taken mid-stream and restored into a fresh
            /// detector gives the same findings as an uninterrupted run.
            #[test]
            fn deterministic_and_snapshot_restore_equivalent(
                events in $crate::arb_events($bytes),
                cut in 0usize..$cut,
            ) {
                let makers: &[&dyn Fn() -> Box<dyn $crate::__private::Detector>] = &[$(&$make),+];
                for make in makers {
                    $crate::check_replayable(make, &events, cut)?;
                }
            }

            $(
                /// Calls whose arguments all differ never fire.
                #[test]
                fn distinct_calls_never_fire(n in 1usize..60) {
                    $crate::__private::proptest::prop_assert!(
                        $crate::distinct_calls_findings(&$dmake, $tool, n).is_empty()
                    );
                }
            )?

            $($tests)*
        }
    };
}

#[doc(hidden)]
pub mod __private {
    pub use loopguard_core::Detector;
    pub use proptest;
}

/// The findings of `make()` over `n` calls of `tool`, each with other arguments (`{"id": i}`)
/// and the same result.
pub fn distinct_calls_findings(
    make: &dyn Fn() -> Box<dyn Detector>,
    tool: &str,
    n: usize,
) -> Vec<(usize, Finding)> {
    let mut s = Script::new();
    s.call_args(n, tool, |i| json!({ "id": i }), "same");
    run(make(), s.events())
}

/// The findings of `make()` over the first script of [`key_order_scripts`], checked equal to
/// those over the second (the arguments' key order never matters).
pub fn key_order_findings(
    make: &dyn Fn() -> Box<dyn Detector>,
    (tool, args, n, result): (&str, &Value, usize, &str),
) -> Result<Vec<(usize, Finding)>, TestCaseError> {
    let (a, b) = key_order_scripts(tool, args, n, result);
    let found = run(make(), a.events());
    prop_assert_eq!(&found, &run(make(), b.events()));
    Ok(found)
}

/// Two scripts of `n` calls of `tool` with `result`, then one more call: the first with `args`
/// every time, the second with `args` and its keys reversed in turn (the findings must not
/// differ).
pub fn key_order_scripts(tool: &str, args: &Value, n: usize, result: &str) -> (Script, Script) {
    let mut a = Script::new();
    let mut b = Script::new();
    for i in 0..n {
        let args_i = if i % 2 == 0 {
            args.clone()
        } else {
            reverse_keys(args)
        };
        a.call(tool, args.clone(), result);
        b.call(tool, args_i, result);
    }
    a.tool_call(tool, args.clone());
    b.tool_call(tool, reverse_keys(args));
    (a, b)
}

/// `events` as a host that numbers its results its own way sends them: every result's id is
/// `own-<n>`, never its call's (the bus pairs each with the one call waiting).
pub fn with_own_result_ids(events: &[OwnedEvent]) -> Vec<OwnedEvent> {
    let mut n = 0;
    events
        .iter()
        .map(|e| match e {
            OwnedEvent::ToolResult {
                tool,
                content,
                is_error,
                images,
                details,
                ..
            } => {
                n += 1;
                OwnedEvent::ToolResult {
                    id: format!("own-{n}"),
                    tool: tool.clone(),
                    content: content.clone(),
                    is_error: *is_error,
                    images: *images,
                    details: details.clone(),
                }
            }
            other => other.clone(),
        })
        .collect()
}

/// `v` with the keys of every object in reverse order (to show that key order never matters).
pub fn reverse_keys(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .rev()
                .map(|(k, v)| (k.clone(), reverse_keys(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(reverse_keys).collect()),
        other => other.clone(),
    }
}

/// Turns arbitrary bytes into a plausible event stream: a few tools, a few argument and
/// result shapes, text deltas (multi-byte included), compactions and turns. The same decoder
/// serves proptest (`vec(any::<u8>(), ..)`) and cargo-fuzz.
pub fn decode_events(bytes: &[u8]) -> Vec<OwnedEvent> {
    const TOOLS: [&str; 6] = ["read", "bash", "process", "command_status", "grep", "exec"];
    const TEXTS: [&str; 6] = [
        "Let me read the file again. ",
        "x",
        "héllo wörld — ",
        "\n\n",
        "The answer is 42.\n",
        "Let me check the end of the file.\n",
    ];
    let mut out = Vec::new();
    let it = bytes.chunks(3);
    let mut id = 0u64;
    let mut open: Vec<(String, String)> = Vec::new();
    for c in it {
        let op = c[0] % 12;
        let a = c.get(1).copied().unwrap_or(0);
        let b = c.get(2).copied().unwrap_or(0);
        match op {
            0 => out.push(OwnedEvent::User {
                text: format!("please continue {}", a % 3),
                origin: if b % 2 == 0 {
                    Origin::Unknown
                } else {
                    Origin::Human
                },
            }),
            1 => out.push(OwnedEvent::MessageStart),
            2 | 3 => out.push(OwnedEvent::TextDelta {
                stream: if a % 2 == 0 {
                    Stream::Text
                } else {
                    Stream::Thinking
                },
                delta: TEXTS[usize::from(b) % TEXTS.len()].repeat(usize::from(a % 4) + 1),
            }),
            4 => out.push(OwnedEvent::MessageEnd),
            5..=7 => {
                id += 1;
                let tool = TOOLS[usize::from(a) % TOOLS.len()].to_owned();
                let args = match b % 4 {
                    0 => json!({"path": format!("f{}", b % 3)}),
                    1 => {
                        json!({"action": if b % 8 < 4 { "poll" } else { "log" }, "sessionId": "s"})
                    }
                    2 => json!({"command": "ls", "n": b % 2}),
                    _ => Value::Null,
                };
                let cid = format!("c{id}");
                out.push(OwnedEvent::ToolCall {
                    id: cid.clone(),
                    tool: tool.clone(),
                    args,
                    batch: None,
                });
                open.push((cid, tool));
            }
            8 | 9 => {
                if let Some((cid, tool)) = open.pop() {
                    let content = match a % 4 {
                        0 => "same output".to_owned(),
                        1 => format!("output {b}"),
                        2 => format!("Tool {tool} not found"),
                        _ => String::new(),
                    };
                    out.push(OwnedEvent::ToolResult {
                        id: cid,
                        tool,
                        content,
                        is_error: b % 5 == 0,
                        images: u32::from(b % 3 == 0),
                        details: None,
                    });
                }
            }
            10 => out.push(OwnedEvent::Compaction),
            _ => out.push(if a % 2 == 0 {
                OwnedEvent::RunStart { run_id: None }
            } else {
                OwnedEvent::RunEnd
            }),
        }
    }
    out
}

/// A proptest strategy of decoded event streams.
pub fn arb_events(max_bytes: usize) -> impl Strategy<Value = Vec<OwnedEvent>> {
    prop::collection::vec(any::<u8>(), 0..max_bytes).prop_map(|b| decode_events(&b))
}

/// A proptest strategy of JSON argument objects.
pub fn arb_args() -> impl Strategy<Value = Value> {
    prop::collection::btree_map(
        "[a-z]{1,4}",
        prop_oneof![
            any::<i32>().prop_map(|n| json!(n)),
            "[a-z]{0,5}".prop_map(|s| json!(s))
        ],
        0..4,
    )
    .prop_map(|m| Value::Object(m.into_iter().collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuzz_cut_asks_one_input_in_four_for_a_cut_inside_the_stream() {
        assert_eq!(fuzz_cut(&[], 0), None);
        let asked = (0..=255u8).filter_map(|b| fuzz_cut(&[7, b], 100)).count();
        assert_eq!(asked, 64);
        for b in 0..=255u8 {
            if let Some(cut) = fuzz_cut(&[b], 100) {
                assert!(cut < 100, "cut {cut} for byte {b}");
            }
        }
        assert_eq!(fuzz_cut(&[0], 100), Some(0));
        assert_eq!(fuzz_cut(&[252], 100), Some(98));
    }

    #[test]
    fn decode_never_panics_and_pairs_results_with_calls() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(3000).collect();
        let events = decode_events(&bytes);
        assert!(!events.is_empty());
        let mut seen_calls = std::collections::HashSet::new();
        for e in &events {
            match e {
                OwnedEvent::ToolCall { id, .. } => {
                    seen_calls.insert(id.clone());
                }
                OwnedEvent::ToolResult { id, .. } => assert!(seen_calls.contains(id)),
                _ => {}
            }
        }
    }

    #[test]
    fn script_chunks_text() {
        let mut s = Script::new();
        s.message_chunked(Stream::Text, "abcdef", 4);
        assert_eq!(s.events().len(), 4);
    }

    /// Blocks every call of `rm`; reports each result it sees as a warning keyed by its tool.
    struct BlocksRm;

    impl Detector for BlocksRm {
        fn name(&self) -> &'static str {
            "blocks-rm"
        }
        fn observe(&mut self, event: &Event<'_>, cx: &mut loopguard_core::Cx<'_>) {
            match event {
                Event::ToolCall { tool: "rm", .. } => {
                    cx.report(Finding::new("blocks-rm", Level::Critical, 1, "rm", "no"));
                }
                Event::ToolResult { tool, .. } => {
                    cx.report(Finding::new("blocks-rm", Level::Warning, 1, *tool, "seen"));
                }
                _ => {}
            }
        }
    }

    #[test]
    fn the_veto_keeps_a_refused_calls_result_from_every_detector() {
        let mut s = Script::new();
        s.call("rm", json!({"path": "a"}), "refused by the guard");
        s.call("ls", json!({}), "b");
        s.call("rm", json!({"path": "a"}), "refused again");
        let keys: Vec<(usize, String)> = run(Box::new(BlocksRm), s.events())
            .into_iter()
            .map(|(i, f)| (i, f.key))
            .collect();
        // Calls at 2, 6 and 10, results at 3, 7 and 11: only the `ls` result is shown.
        assert_eq!(
            keys,
            vec![(2, "rm".into()), (7, "ls".into()), (10, "rm".into())]
        );
    }
}
