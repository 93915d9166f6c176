//! Host conformance: one simulated agent loop driven through hosts of every shape — message
//! events or not, batch ids or not, an id per call or one for all, results in order, reversed,
//! missing for refused calls, duplicated, orphaned or numbered the host's own way, parallel
//! batches — against every preset, through the library and the sidecar in lockstep (and a
//! snapshot → restore copy of the library guard).
//!
//! Invariants:
//! - a call that differs from every refused call is never refused once the model has moved on
//!   (a whole step after its last looping call);
//! - a loop that keeps being refused reaches an abort (termination holds), after at most the
//!   preset's number of blocks;
//! - the sidecar's `seq` is the event's position in its session, one answer per line;
//! - the library, the sidecar and a restored copy give the same verdicts for the same events.

use loopguard::orchestrator::{Action, Guard, GuardTemplate, Verdict, PRESETS};
use loopguard::{Event, Origin};
use loopguard_core::OwnedEvent;
use loopguard_sidecar::{Server, ServerOptions};
use proptest::prelude::*;
use serde_json::{json, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Results {
    InOrder,
    Reversed,
    /// The host sends no result for a refused call.
    MissingForRefused,
    Duplicated,
    /// Every step also brings a result for a call that was never made.
    Orphaned,
    /// The host forwards the calls and never a result (a pre-execution hook alone).
    None,
    /// The host numbers its results its own way: no result carries its call's id.
    Mismatched,
}

#[derive(Clone, Copy, Debug)]
struct Shape {
    messages: bool,
    batch_ids: bool,
    /// Every call and its result carry one id (a host whose provider gives calls no ids and
    /// that passes the same placeholder each time).
    one_id: bool,
    results: Results,
    /// Calls per step (the looping call and distinct siblings).
    batch: usize,
}

fn shapes() -> impl Strategy<Value = Shape> {
    (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop_oneof![
            Just(Results::InOrder),
            Just(Results::Reversed),
            Just(Results::MissingForRefused),
            Just(Results::Duplicated),
            Just(Results::Orphaned),
            Just(Results::None),
            Just(Results::Mismatched),
        ],
        1usize..=3,
    )
        .prop_map(|(messages, batch_ids, one_id, results, batch)| Shape {
            messages,
            batch_ids,
            one_id,
            results,
            batch,
        })
}

/// One guard watched three ways: the library, a sidecar session, and (after `restore_at`
/// events) a copy restored from a snapshot.
struct Hosts {
    lib: Guard,
    restored: Option<Guard>,
    template: GuardTemplate,
    server: Server,
    session: String,
    line: u64,
    events: u64,
    restore_at: u64,
}

impl Hosts {
    fn new(preset: &str, restore_at: u64) -> Hosts {
        let template = Guard::builder().preset(preset).template().unwrap();
        let server = Server::new(ServerOptions::preset(preset).unwrap()).unwrap();
        Hosts {
            lib: template.build().unwrap(),
            restored: None,
            template,
            server,
            session: "s".to_owned(),
            line: 0,
            events: 0,
            restore_at,
        }
    }

    /// Sends one event to every host; checks they agree; returns the library's verdict.
    fn send(&mut self, e: OwnedEvent) -> Verdict {
        if self.events == self.restore_at {
            let snap = self.lib.snapshot().unwrap();
            let text = snap.to_string();
            let mut g = self.template.build().unwrap();
            g.restore(&serde_json::from_str::<Value>(&text).unwrap())
                .unwrap();
            self.restored = Some(g);
        }
        let v = self.lib.observe(&e.as_event());
        if let Some(r) = &mut self.restored {
            let w = r.observe(&e.as_event());
            assert_eq!(summary(&w), summary(&v), "restored copy differs at {e:?}");
        }
        let mut line = serde_json::to_value(&e).unwrap();
        line["session"] = json!(self.session);
        self.line += 1;
        let out: Value = serde_json::from_str(
            &self
                .server
                .handle_line(self.line, line.to_string().as_bytes()),
        )
        .unwrap();
        assert_eq!(
            out["seq"],
            json!(self.events),
            "seq is the input order: {out}"
        );
        assert_eq!(
            out["action"],
            json!(v.action().as_str()),
            "sidecar differs at {e:?}"
        );
        assert_eq!(
            out["code"].as_str(),
            v.code(),
            "sidecar code differs at {e:?}"
        );
        assert_eq!(
            out["message"].as_str(),
            v.message(),
            "sidecar message differs"
        );
        self.events += 1;
        v
    }
}

fn summary(v: &Verdict) -> (Action, Option<String>, Option<String>, bool) {
    (
        v.action(),
        v.code().map(str::to_owned),
        v.message().map(str::to_owned),
        v.terminate(),
    )
}

/// The `n`-th distinct file the model reads: its own name and its own text (not a numbered
/// copy of the others).
fn distinct_file(n: usize) -> (String, String) {
    const A: [&str; 8] = [
        "parse", "render", "config", "cache", "index", "query", "token", "stream",
    ];
    const B: [&str; 7] = [
        "reader", "writer", "table", "buffer", "client", "server", "router",
    ];
    let a = A[n % A.len()];
    let b = B[(n / A.len()) % B.len()];
    let c = A[(n / (A.len() * B.len())) % A.len()];
    (
        format!("src/{c}/{a}_{b}.rs"),
        format!(
            "pub struct {a}{b};\nimpl {a}{b} {{ pub fn {c}(&self) -> bool {{ self.{b}_ok() }} }}\n"
        ),
    )
}

/// What one simulated session did.
#[derive(Debug, Default)]
struct Outcome {
    /// Step of the abort, if any.
    aborted: Option<usize>,
    /// Refusals (blocks) of the looping call before the abort.
    loop_blocks: u32,
    /// Blocks that did not carry `terminate`.
    blocks_without_terminate: u32,
    /// Calls refused although they differ from every refused call, in a step after the last
    /// looping one: (step, call).
    wrongly_refused: Vec<(usize, String)>,
}

/// The model repeats `read a.rs` (plus `batch - 1` distinct siblings) for `loop_steps` steps,
/// then reads a distinct file in each step; the host follows `shape`.
fn simulate(
    preset: &str,
    shape: Shape,
    loop_steps: usize,
    steps: usize,
    restore_at: u64,
) -> Outcome {
    let mut h = Hosts::new(preset, restore_at);
    let mut out = Outcome::default();
    h.send(OwnedEvent::User {
        text: "fix the failing test".to_owned(),
        origin: Origin::Human,
    });
    let mut ids = 0u64;
    for step in 0..steps {
        if shape.messages {
            h.send(OwnedEvent::MessageStart);
            h.send(OwnedEvent::MessageEnd);
        }
        let looping = step < loop_steps;
        let mut calls = Vec::new();
        for j in 0..shape.batch {
            ids += 1;
            let (path, content) = if looping && j == 0 {
                ("a.rs".to_owned(), "fn main() {}".to_owned())
            } else {
                distinct_file(step * 3 + j)
            };
            let id = if shape.one_id {
                "call".to_owned()
            } else {
                format!("call-{ids}")
            };
            let v = h.send(OwnedEvent::ToolCall {
                id: id.clone(),
                tool: "read".to_owned(),
                args: json!({ "path": path }),
                batch: shape.batch_ids.then_some(step as u64),
            });
            let refused = matches!(v.action(), Action::Block | Action::Abort);
            if v.action() == Action::Block && !v.terminate() {
                out.blocks_without_terminate += 1;
            }
            if refused && looping && j == 0 && v.action() == Action::Block {
                out.loop_blocks += 1;
            }
            if refused && step > loop_steps {
                out.wrongly_refused.push((step, path.clone()));
            }
            if v.action() == Action::Abort {
                out.aborted = Some(step);
                return out;
            }
            calls.push((id, content, v));
        }
        if shape.results == Results::None {
            continue;
        }
        if shape.results == Results::Reversed {
            calls.reverse();
        }
        for (id, content, v) in &calls {
            let refused = v.action() == Action::Block;
            if refused && shape.results == Results::MissingForRefused {
                continue;
            }
            let content = if refused {
                v.message().unwrap_or_default().to_owned()
            } else {
                content.clone()
            };
            let times = if shape.results == Results::Duplicated {
                2
            } else {
                1
            };
            let id = if shape.results == Results::Mismatched {
                ids += 1;
                format!("result-{ids}")
            } else {
                id.clone()
            };
            for _ in 0..times {
                let v = h.send(OwnedEvent::ToolResult {
                    id: id.clone(),
                    tool: "read".to_owned(),
                    content: content.clone(),
                    is_error: refused,
                    images: 0,
                    details: None,
                });
                if v.action() == Action::Abort {
                    out.aborted = Some(step);
                    return out;
                }
            }
        }
        if shape.results == Results::Orphaned {
            ids += 1;
            h.send(OwnedEvent::ToolResult {
                id: format!("ghost-{ids}"),
                tool: "read".to_owned(),
                content: "late output".to_owned(),
                is_error: false,
                images: 0,
                details: None,
            });
        }
    }
    out
}

/// The preset's block budget before an abort (the smaller non-zero of per turn and per run).
fn block_budget(preset: &str) -> Option<u32> {
    let g = Guard::builder().preset(preset).build().unwrap();
    let s = g.settings();
    [s.abort_after_blocks, s.abort_after_run_blocks]
        .into_iter()
        .filter(|&n| n > 0)
        .min()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn moving_on_is_never_refused(shape in shapes(), preset in 0..PRESETS.len(), loop_steps in 0usize..12, restore_at in 0u64..60) {
        let preset = PRESETS[preset];
        let out = simulate(preset, shape, loop_steps, loop_steps + 6, restore_at);
        prop_assert!(out.wrongly_refused.is_empty(), "{preset} {shape:?}: {:?}", out.wrongly_refused);
    }

    /// Termination holds: once the looping call is refused, the preset's block budget ends
    /// the request; a preset without one (pi-repetition-guard) ends the agent loop through
    /// `terminate` on every block. A call repeated alone in each step is always refused.
    #[test]
    fn a_loop_that_keeps_being_refused_ends(shape in shapes(), preset in 0..PRESETS.len(), restore_at in 0u64..80) {
        let preset = PRESETS[preset];
        let out = simulate(preset, shape, usize::MAX, 60, restore_at);
        // Without results, only the presets that count calls whatever their results see the
        // loop (the seeds pi-loop-guard and OpenClaw compare results).
        let sees = shape.results != Results::None || matches!(preset, "default" | "pi-repetition-guard");
        if shape.batch == 1 && sees {
            prop_assert!(out.loop_blocks > 0 || out.aborted.is_some(), "{preset} {shape:?}: the loop was never refused");
        }
        match block_budget(preset) {
            Some(budget) if out.loop_blocks > 0 => {
                prop_assert!(out.aborted.is_some(), "{preset} {shape:?}: never aborted ({} blocks)", out.loop_blocks);
                prop_assert!(out.loop_blocks < budget, "{preset} {shape:?}: {} blocks before the abort (budget {budget})", out.loop_blocks);
            }
            Some(_) => {}
            None => prop_assert!(out.blocks_without_terminate == 0, "{preset} {shape:?}: a block without `terminate`"),
        }
    }
}

/// The presets without a block budget end the agent loop by `terminate` (pi-repetition-guard,
/// as its seed, refuses only the looping call, so a parallel sibling may still run once).
#[test]
fn presets_without_a_block_budget_terminate_every_block() {
    for p in PRESETS {
        let g = Guard::builder().preset(p).build().unwrap();
        if block_budget(p).is_none() {
            assert!(g.settings().terminate, "{p}");
        }
    }
}

/// A host that forwards tool calls and never their results (a pre-execution hook alone): the
/// rules that compare results see nothing, and the default preset counts the calls instead —
/// the same call five times within the last eight is steered, eight times blocked, and the
/// block budget ends the request; a varied sequence, which comes back to a few files (read,
/// edit, test), is never refused; a host that sends results is never judged that way.
#[test]
fn calls_only_host_a_repeated_call_is_steered_then_blocked_and_varied_work_passes() {
    let call = |h: &mut Hosts, i: usize, tool: &str, path: &str| {
        h.send(OwnedEvent::ToolCall {
            id: format!("c{i}"),
            tool: tool.to_owned(),
            args: json!({ "path": path }),
            batch: None,
        })
        .action()
    };
    let mut h = Hosts::new("default", 5);
    let actions: Vec<Action> = (0..12).map(|i| call(&mut h, i, "read", "a.rs")).collect();
    assert_eq!(&actions[..4], &[Action::Continue; 4], "{actions:?}");
    assert_eq!(actions[4], Action::Steer, "{actions:?}");
    assert_eq!(actions[7], Action::Block, "{actions:?}");
    assert!(actions.contains(&Action::Abort), "{actions:?}");

    // Two calls in turn, no result: the 10th steers, the 20th is blocked.
    let mut h = Hosts::new("default", 11);
    let actions: Vec<Action> = (0..20)
        .map(|i| {
            let (tool, path) = if i % 2 == 0 {
                ("read", "a.rs")
            } else {
                ("grep", "TODO")
            };
            call(&mut h, i, tool, path)
        })
        .collect();
    assert_eq!(actions[9], Action::Steer, "{actions:?}");
    assert_eq!(actions[19], Action::Block, "{actions:?}");

    // Varied work: a test run after every edit, a few files read again and again.
    let mut h = Hosts::new("default", 9);
    let steps = [
        ("read", "src/lib.rs"),
        ("edit", "src/lib.rs"),
        ("bash", "cargo test"),
        ("read", "src/parse.rs"),
        ("edit", "src/parse.rs"),
        ("bash", "cargo test"),
        ("read", "src/lib.rs"),
        ("edit", "src/lib.rs"),
        ("bash", "cargo test"),
    ];
    for (i, (tool, path)) in steps.iter().cycle().take(36).enumerate() {
        let a = call(&mut h, i, tool, path);
        assert_eq!(a, Action::Continue, "call {i} ({tool} {path})");
    }

    // Twelve identical calls, each answered with progress: the result-based rules judge
    // them (a steer at most), and an answered call is never counted as unanswered.
    let mut h = Hosts::new("default", u64::MAX);
    for i in 0..12 {
        let a = call(&mut h, 100 + i, "bash", "make status");
        assert!(
            matches!(a, Action::Continue | Action::Steer),
            "call {i}: {a:?}"
        );
        h.send(OwnedEvent::ToolResult {
            id: format!("c{}", 100 + i),
            tool: "bash".to_owned(),
            content: format!("build {}% done", 5 * i),
            is_error: false,
            images: 0,
            details: None,
        });
    }
}

/// The README's sidecar example through `h`: seven identical reads, then three different
/// files, each call answered at once (its result's id is `result_id` of the call's), a refused
/// call with the guard's reason as an error. The actions of the ten calls.
fn readme_example(h: &mut Hosts, result_id: impl Fn(&str) -> String) -> Vec<Action> {
    identical_reads_then_others(h, 7, result_id)
}

/// `identical` reads of one file, then three different files, each call answered at once
/// (its result's id is `result_id` of the call's), a refused call with the guard's reason as
/// an error. The actions of the calls.
fn identical_reads_then_others(
    h: &mut Hosts,
    identical: usize,
    result_id: impl Fn(&str) -> String,
) -> Vec<Action> {
    let mut actions = Vec::new();
    for i in 0..identical + 3 {
        let path = if i < identical {
            "a.rs".to_owned()
        } else {
            format!("other{i}.rs")
        };
        let id = format!("c{i}");
        let v = h.send(OwnedEvent::ToolCall {
            id: id.clone(),
            tool: "read".to_owned(),
            args: json!({ "path": path }),
            batch: None,
        });
        actions.push(v.action());
        let content = match v.message() {
            Some(m) if v.action() == Action::Block => m.to_owned(),
            _ => format!("contents of {path}"),
        };
        h.send(OwnedEvent::ToolResult {
            id: result_id(&id),
            tool: "read".to_owned(),
            content,
            is_error: v.action() == Action::Block,
            images: 0,
            details: None,
        });
    }
    actions
}

/// A host that numbers its results its own way (no result carries its call's id): each
/// result answers the one call waiting, so the README's example reads the same — the 5th
/// identical read blocked, then three different files pass.
#[test]
fn a_host_whose_result_ids_are_its_own_is_judged_like_any_other() {
    for preset in ["default", "pi-loop-guard"] {
        let mut h = Hosts::new(preset, 6);
        let actions = readme_example(&mut h, |id| format!("exec-{id}"));
        assert_eq!(actions[4], Action::Block, "{preset}: {actions:?}");
        assert_eq!(
            &actions[7..],
            &[Action::Continue; 3],
            "{preset}: {actions:?}"
        );
    }
}

/// A host that numbers its results its own way gets, call for call, the verdicts of a host
/// whose results carry their call's id, under every preset: the result of a call the guard
/// refused is the guard's own reason, never shown to a detector as the call's output, whatever
/// its id (a detector that took it for the output would see the loop change and stop counting).
#[test]
fn own_result_ids_get_the_verdicts_of_call_ids_refusals_included() {
    for preset in PRESETS {
        for identical in [7, 24] {
            let call_ids =
                identical_reads_then_others(&mut Hosts::new(preset, 6), identical, |id| {
                    id.to_owned()
                });
            let own_ids =
                identical_reads_then_others(&mut Hosts::new(preset, 6), identical, |id| {
                    format!("exec-{id}")
                });
            if identical == 24 {
                assert!(call_ids.contains(&Action::Block), "{preset}: {call_ids:?}");
            }
            assert_eq!(own_ids, call_ids, "{preset}, {identical} identical reads");
        }
    }
}

/// pi-loop-guard with whole-batch blocks and no block budget.
fn whole_batch_pi_loop_guard() -> GuardTemplate {
    Guard::builder()
        .config(
            loopguard::Config::from_toml_str(
                "preset = \"pi-loop-guard\"\n[guard]\nwhole-batch = true\nabort-after-blocks = 0\n",
                None,
            )
            .unwrap(),
        )
        .template()
        .unwrap()
}

/// A batch refused whole, answered by a host that numbers its results its own way: the
/// results cannot be told apart, but every call they may answer was refused, so none reaches
/// a detector, and the next messages get the verdicts a host with call ids gets.
#[test]
fn a_batch_refused_whole_is_refused_alike_whatever_the_result_ids() {
    let template = whole_batch_pi_loop_guard();
    let run = |result_id: &dyn Fn(usize) -> String| {
        let mut g = template.build().unwrap();
        let mut actions = Vec::new();
        let mut n = 0;
        for message in 0..12 {
            g.observe(&Event::MessageStart);
            let path = if message < 7 { "a.rs" } else { "b.rs" };
            let args = json!({ "path": path });
            let mut answers = Vec::new();
            for _ in 0..(if message == 4 { 3 } else { 1 }) {
                let id = format!("c{n}");
                n += 1;
                let v = g.observe(&Event::ToolCall {
                    id: &id,
                    tool: "read",
                    args: &args,
                    batch: None,
                });
                actions.push(v.action());
                answers.push((
                    n - 1,
                    v.message().unwrap_or("fn main() {}").to_owned(),
                    v.action() == Action::Block,
                ));
            }
            for (i, content, refused) in answers {
                let id = result_id(i);
                g.observe(&Event::ToolResult {
                    id: &id,
                    tool: "read",
                    content: &content,
                    is_error: refused,
                    images: 0,
                    details: None,
                });
            }
        }
        actions
    };
    let call_ids = run(&|i| format!("c{i}"));
    // The fifth identical read is blocked with its batch (the batch's other calls are refused
    // with it), the next reads of that file too; then five reads of another file: the fifth
    // is blocked, which needs each of their results paired with its call.
    assert_eq!(
        call_ids,
        [
            [Action::Continue; 4].as_slice(),
            &[Action::Block; 5],
            &[Action::Continue; 4],
            &[Action::Block; 1],
        ]
        .concat(),
    );
    assert_eq!(run(&|i| format!("exec-{i}")), call_ids);
}

/// A host that forwards results alone (an after-the-tool hook, no call events): identical
/// successful results of different edits are work, never refused; one error repeated is
/// steered, and never blocked, for there is no call to refuse.
#[test]
fn a_host_that_sends_results_alone_is_steered_on_a_repeated_error_and_never_blocks() {
    let result = |id: String, tool: &str, content: &str, is_error: bool| OwnedEvent::ToolResult {
        id,
        tool: tool.to_owned(),
        content: content.to_owned(),
        is_error,
        images: 0,
        details: None,
    };
    for preset in PRESETS {
        let mut h = Hosts::new(preset, 9);
        for i in 0..30 {
            let tool = if i % 3 == 0 { "write" } else { "edit" };
            let v = h.send(result(
                format!("r{i}"),
                tool,
                "The file has been updated successfully.",
                false,
            ));
            assert_eq!(v.action(), Action::Continue, "{preset}: success {i}");
        }
        let actions: Vec<Action> = (0..8)
            .map(|i| {
                let v = h.send(result(
                    format!("e{i}"),
                    "bash",
                    "cat: notes/todo.txt: No such file or directory",
                    true,
                ));
                v.action()
            })
            .collect();
        assert!(!actions.contains(&Action::Block), "{preset}: {actions:?}");
        if *preset == "default" {
            assert!(actions.contains(&Action::Steer), "{preset}: {actions:?}");
        }
    }
}

/// The shape of the README's sidecar example: tool calls and results, no message events.
/// Seven identical reads, then three different files.
#[test]
fn no_message_events_blocked_call_then_different_files_pass() {
    let shape = Shape {
        messages: false,
        batch_ids: false,
        one_id: false,
        results: Results::InOrder,
        batch: 1,
    };
    for preset in PRESETS {
        let out = simulate(preset, shape, 4, 12, u64::MAX);
        assert!(
            out.wrongly_refused.is_empty(),
            "{preset}: {:?}",
            out.wrongly_refused
        );
    }
    let mut h = Hosts::new("pi-loop-guard", u64::MAX);
    let actions = readme_example(&mut h, str::to_owned);
    assert_eq!(actions[4], Action::Block, "{actions:?}");
    assert_eq!(&actions[7..], &[Action::Continue; 3], "{actions:?}");
    assert_eq!(h.events, 20, "every line counted");
}

/// Two sessions interleaved line by line through one sidecar answer as two separate guards.
#[test]
fn interleaved_sessions_are_independent() {
    let mut server = Server::new(ServerOptions::preset("default").unwrap()).unwrap();
    let mut lib = [
        Guard::builder().preset("default").build().unwrap(),
        Guard::builder().preset("default").build().unwrap(),
    ];
    let mut line = 0;
    for i in 0..12 {
        for (s, guard) in lib.iter_mut().enumerate() {
            let path = if s == 0 {
                "same.rs".to_owned()
            } else {
                format!("f{i}.rs")
            };
            let id = format!("c{i}");
            for e in [
                OwnedEvent::ToolCall {
                    id: id.clone(),
                    tool: "read".into(),
                    args: json!({ "path": path }),
                    batch: None,
                },
                OwnedEvent::ToolResult {
                    id: id.clone(),
                    tool: "read".into(),
                    content: format!("text of {path}"),
                    is_error: false,
                    images: 0,
                    details: None,
                },
            ] {
                let v = guard.observe(&e.as_event());
                let mut j = serde_json::to_value(&e).unwrap();
                j["session"] = json!(format!("s{s}"));
                line += 1;
                let out: Value =
                    serde_json::from_str(&server.handle_line(line, j.to_string().as_bytes()))
                        .unwrap();
                assert_eq!(
                    out["action"],
                    json!(v.action().as_str()),
                    "session s{s} call {i}"
                );
            }
        }
    }
    assert_eq!(lib[1].seq(), 24);
}

/// Disable, enable and reset: a disabled guard passes everything and counts every event;
/// reset forgets the loop.
#[test]
fn disable_enable_and_reset() {
    let mut server = Server::new(ServerOptions::preset("pi-loop-guard").unwrap()).unwrap();
    let mut n = 0;
    let mut send = |server: &mut Server, line: Value| -> Value {
        n += 1;
        serde_json::from_str(&server.handle_line(n, line.to_string().as_bytes())).unwrap()
    };
    let call = |i: u32| json!({"session":"a","type":"tool_call","id":format!("c{i}"),"tool":"read","args":{"path":"x"}});
    let result = |i: u32| json!({"session":"a","type":"tool_result","id":format!("c{i}"),"tool":"read","content":"same"});
    send(
        &mut server,
        json!({"session":"a","type":"control","command":"disable"}),
    );
    for i in 0..8 {
        assert_eq!(send(&mut server, call(i))["action"], "continue");
        assert_eq!(send(&mut server, result(i))["action"], "continue");
    }
    send(
        &mut server,
        json!({"session":"a","type":"control","command":"enable"}),
    );
    let mut actions = Vec::new();
    for i in 8..13 {
        actions.push(send(&mut server, call(i))["action"].clone());
        send(&mut server, result(i));
    }
    assert_eq!(actions[4], "block", "{actions:?}");
    send(
        &mut server,
        json!({"session":"a","type":"control","command":"reset"}),
    );
    let out = send(&mut server, call(99));
    assert_eq!(out["action"], "continue");
    assert_eq!(out["seq"], 0, "a reset session starts again");
}

/// A blocked call's result swallowed by the guard still ends the batch for a host without
/// message events (regression: every later call was refused as `tool_loop:batch`).
#[test]
fn whole_batch_block_does_not_outlive_its_batch_without_message_events() {
    let template = whole_batch_pi_loop_guard();
    let mut g = template.build().unwrap();
    let mut last = Vec::new();
    for i in 0..10 {
        let path = if i < 6 {
            "a.rs".to_owned()
        } else {
            format!("b{i}.rs")
        };
        let id = format!("c{i}");
        let args = json!({ "path": path });
        let v = g.observe(&Event::ToolCall {
            id: &id,
            tool: "read",
            args: &args,
            batch: None,
        });
        last.push(v.code().map(str::to_owned));
        let content = v.message().unwrap_or("contents").to_owned();
        g.observe(&Event::ToolResult {
            id: &id,
            tool: "read",
            content: &content,
            is_error: v.action() == Action::Block,
            images: 0,
            details: None,
        });
    }
    assert!(last[4].is_some(), "{last:?}");
    assert!(last[6..].iter().all(Option::is_none), "{last:?}");
}

/// Hosts built on OpenAI-style APIs pass a call's arguments as a JSON-encoded string (key
/// order as the model wrote it) and answer with a result that carries only the call id: the
/// same loop is caught at the same events as with object arguments and named results.
#[test]
fn encoded_arguments_and_results_without_a_tool_name_are_the_same_loop() {
    for preset in PRESETS {
        let mut plain = Hosts::new(preset, u64::MAX);
        let mut encoded = Hosts::new(preset, 6);
        for i in 0..8 {
            let id = format!("c{i}");
            let args = if i % 2 == 0 {
                r#"{"path": "src/lib.rs", "limit": 200}"#
            } else {
                r#"{"limit":200,"path":"src/lib.rs"}"#
            };
            let a = plain.send(OwnedEvent::ToolCall {
                id: id.clone(),
                tool: "read".into(),
                args: json!({"path": "src/lib.rs", "limit": 200}),
                batch: None,
            });
            let b = encoded.send(OwnedEvent::ToolCall {
                id: id.clone(),
                tool: "read".into(),
                args: Value::String(args.into()),
                batch: None,
            });
            assert_eq!(summary(&a), summary(&b), "{preset}: call {i}");
            let blocked = matches!(a.action(), Action::Block | Action::Abort);
            let content = match a.message() {
                Some(m) if blocked => m.to_owned(),
                _ => "pub fn parse() {}".to_owned(),
            };
            let a = plain.send(OwnedEvent::ToolResult {
                id: id.clone(),
                tool: "read".into(),
                content: content.clone(),
                is_error: blocked,
                images: 0,
                details: None,
            });
            let b = encoded.send(OwnedEvent::ToolResult {
                id,
                tool: String::new(),
                content,
                is_error: blocked,
                images: 0,
                details: None,
            });
            assert_eq!(summary(&a), summary(&b), "{preset}: result {i}");
        }
    }
    // And the loop is caught at all: the default blocks the fifth identical read.
    let mut h = Hosts::new("default", u64::MAX);
    let mut actions = Vec::new();
    for i in 0..5 {
        let id = format!("c{i}");
        let v = h.send(OwnedEvent::ToolCall {
            id: id.clone(),
            tool: "read".into(),
            args: Value::String(r#"{"path":"src/lib.rs"}"#.into()),
            batch: None,
        });
        actions.push(v.action());
        h.send(OwnedEvent::ToolResult {
            id,
            tool: String::new(),
            content: "pub fn parse() {}".into(),
            is_error: false,
            images: 0,
            details: None,
        });
    }
    assert_eq!(actions.last(), Some(&Action::Block), "{actions:?}");
}
