//! The guard's escalation, budget, delivery, control and state machinery, over fake detectors
//! (tests/common). Test names carry the checklist items of seed-systems.md §5 they cover.

mod common;

use common::{feed, guard, registry};
use loopguard_core::{Config, Event, Origin, OwnedEvent, Stream};
use loopguard_orchestrator::{Action, Delivery, Guard, Verdict, CONTINUE_STEER, STEER_PREFIX};
use serde_json::json;

const PLG: &str = "[guard]\nabort-after-blocks = 3\n[detectors.text]\nenabled = false\n";

const PRG: &str = "[guard]\nabort-after-blocks = 0\nterminate = true\nsteers-per-turn = 2\n\
compactions-per-turn = 1\nsteer-on-block = true\nsteer-wording = \"escalating\"\n\
[detectors.repeat]\nwarn = 0\nblock = 4\n";

fn user(g: &mut Guard, text: &str) -> Verdict {
    g.observe(&Event::User {
        text,
        origin: Origin::Unknown,
    })
}

/// One sequential turn: message, call, result. Returns (call verdict, result verdict).
fn turn(g: &mut Guard, id: &str, tool: &str, path: &str, result: &str) -> (Verdict, Verdict) {
    let args = json!({ "path": path });
    g.observe(&Event::MessageStart);
    g.observe(&Event::MessageEnd);
    let c = g.observe(&Event::tool_call(id, tool, &args));
    let r = g.observe(&Event::tool_result(id, tool, result, false));
    (c, r)
}

fn text(g: &mut Guard, chunks: &[&str]) -> Vec<Verdict> {
    let mut out = vec![g.observe(&Event::MessageStart)];
    for c in chunks {
        out.push(g.observe(&Event::TextDelta {
            stream: Stream::Thinking,
            delta: c,
        }));
    }
    out.push(g.observe(&Event::MessageEnd));
    out
}

fn actions(vs: &[(Verdict, Verdict)]) -> Vec<Action> {
    vs.iter().map(|(c, _)| c.action()).collect()
}

#[test]
fn a5_a6_warn_then_block_then_abort_on_the_third_block() {
    let mut g = guard(PLG);
    user(&mut g, "fix it");
    let vs: Vec<_> = (0..8)
        .map(|i| turn(&mut g, &format!("c{i}"), "read", "a", "X"))
        .collect();
    use Action::*;
    assert_eq!(
        actions(&vs),
        vec![Continue, Continue, Steer, Steer, Block, Block, Abort, Abort]
    );
    let abort = &vs[6].0;
    assert_eq!(abort.code(), Some("loop_aborted:repeat"));
    assert_eq!(vs[4].0.message(), Some("called read 5 times"));
    assert!(
        !vs[4].0.terminate(),
        "pi-loop-guard blocks carry no terminate by default"
    );
    assert!(!vs[4].0.whole_batch());
    assert_eq!(
        vs[4].0.code(),
        Some("tool_loop:repeat"),
        "the denial is tagged"
    );
    // The steer is the detector's own message and reaches the model now.
    assert_eq!(vs[2].0.message(), Some("called read 3 times"));
    assert_eq!(vs[2].0.deliver(), Delivery::Now);
}

/// One sequential turn whose call the host reports twice (when the call starts and when its
/// arguments are complete). Returns (call verdict, second report's verdict, result verdict).
fn turn_reported_twice(g: &mut Guard, id: &str, path: &str) -> (Verdict, Verdict, Verdict) {
    let args = json!({ "path": path });
    g.observe(&Event::MessageStart);
    let c = g.observe(&Event::tool_call(id, "read", &args));
    let again = g.observe(&Event::tool_call(id, "read", &args));
    g.observe(&Event::MessageEnd);
    let r = g.observe(&Event::tool_result(id, "read", "X", false));
    (c, again, r)
}

#[test]
fn a_call_reported_twice_is_judged_once_and_the_second_report_gets_its_verdict() {
    let mut g = guard(PLG);
    user(&mut g, "fix it");
    let vs: Vec<_> = (0..7)
        .map(|i| turn_reported_twice(&mut g, &format!("c{i}"), "a"))
        .collect();
    use Action::*;
    // As when each call is reported once (a5_a6): counted once, blocked twice, then aborted.
    let first: Vec<Action> = vs.iter().map(|v| v.0.action()).collect();
    assert_eq!(
        first,
        vec![Continue, Continue, Steer, Steer, Block, Block, Abort]
    );
    // The second report of a call let through passes; of a refused call, it is refused the
    // same way, and neither is counted.
    let again: Vec<Action> = vs.iter().take(6).map(|v| v.1.action()).collect();
    assert_eq!(
        again,
        vec![Continue, Continue, Continue, Continue, Block, Block]
    );
    assert_eq!(vs[4].1.message(), vs[4].0.message());
    assert_eq!(vs[4].1.code(), Some("tool_loop:repeat"));
    assert!(vs.iter().take(6).all(|v| v.1.findings().is_empty()));

    // The refusal is part of the snapshot: a guard restored between the two reports refuses
    // the second one the same way.
    let mut g = guard(PLG);
    user(&mut g, "fix it");
    for i in 0..4 {
        turn_reported_twice(&mut g, &format!("c{i}"), "a");
    }
    let args = json!({ "path": "a" });
    g.observe(&Event::MessageStart);
    let first = g.observe(&Event::tool_call("c4", "read", &args));
    assert_eq!(first.action(), Block);
    let mut h = guard(PLG);
    h.restore(&g.snapshot().unwrap()).unwrap();
    let again = h.observe(&Event::tool_call("c4", "read", &args));
    assert_eq!((again.action(), again.message()), (Block, first.message()));
}

#[test]
fn a_call_id_used_again_for_a_new_call_is_a_new_call() {
    // A host that numbers calls within each message: `0` again in the next message, after the
    // result, is a new call, and counts.
    let mut g = guard(PLG);
    user(&mut g, "fix it");
    let vs: Vec<_> = (0..5)
        .map(|_| turn(&mut g, "0", "read", "a", "X"))
        .collect();
    use Action::*;
    assert_eq!(actions(&vs), vec![Continue, Continue, Steer, Steer, Block]);
    // A host that sends no results and no messages: only the report right after a call is
    // taken for the same call again; the same id later is a new call.
    let mut g = guard(PLG);
    user(&mut g, "fix it");
    let args = json!({ "path": "a" });
    let mut out = Vec::new();
    for _ in 0..5 {
        out.push(g.observe(&Event::tool_call("0", "read", &args)).action());
        out.push(g.observe(&Event::tool_call("0", "read", &args)).action());
    }
    let counted: Vec<Action> = out.iter().step_by(2).copied().collect();
    assert!(
        counted.contains(&Block) || counted.contains(&Abort),
        "repeated calls with one id still reach a block: {out:?}"
    );
}

#[test]
fn a7_a_real_user_turn_resets_the_block_count_and_the_guards_steer_does_not() {
    let mut g = guard(PLG);
    user(&mut g, "fix it");
    let vs: Vec<_> = (0..6)
        .map(|i| turn(&mut g, &format!("a{i}"), "read", "a", "X"))
        .collect();
    assert_eq!(vs[4].0.action(), Action::Block);
    assert_eq!(vs[5].0.action(), Action::Block);
    // The guard's steer delivered back as a user message is not a new turn: the next
    // block is the third of this turn and aborts.
    let steer = vs[2].0.message().map(str::to_owned).unwrap();
    user(&mut g, &steer);
    let (c, _) = turn(&mut g, "a6", "read", "a", "X");
    assert_eq!(c.action(), Action::Abort);
    // A real user message starts a new turn: blocks count from zero again.
    user(&mut g, "try something else");
    let (c, _) = turn(&mut g, "a7", "read", "a", "X");
    assert_eq!(c.action(), Action::Block);
}

#[test]
fn k71_terminate_flag_follows_the_config() {
    for (cfg, want) in [("", false), ("terminate = true\n", true)] {
        let mut g = guard(&format!(
            "[guard]\n{cfg}[detectors.repeat]\nwarn = 1\nblock = 2\n"
        ));
        let vs: Vec<_> = (0..2)
            .map(|i| turn(&mut g, &format!("c{i}"), "read", "a", "X"))
            .collect();
        assert_eq!(vs[1].0.action(), Action::Block);
        assert_eq!(vs[1].0.terminate(), want);
    }
}

#[test]
fn j61_sticky_veto_the_result_of_a_refused_call_never_reaches_the_detectors() {
    // block = 2: the second identical call is refused; its result (the guard's own error text)
    // is swallowed, so the streak is not reset and the retry is refused again.
    let mut g = guard("[guard]\nabort-after-blocks = 0\n[detectors.repeat]\nwarn = 1\nblock = 2\n");
    turn(&mut g, "c0", "read", "a", "X");
    let seq_before = g.seq();
    let (c, r) = turn(&mut g, "c1", "read", "a", "blocked: loop");
    assert_eq!(c.action(), Action::Block);
    assert!(r.is_continue() && r.findings().is_empty());
    assert_eq!(
        g.seq(),
        seq_before + 4,
        "every event counts in `seq`, the swallowed result too (no detector sees it)"
    );
    let (c, _) = turn(&mut g, "c2", "read", "a", "blocked: loop");
    assert_eq!(c.action(), Action::Block);
    // A different call runs normally.
    let (c, _) = turn(&mut g, "c3", "read", "b", "Y");
    assert_eq!(c.action(), Action::Steer);
}

#[test]
fn abort_findings_end_the_run_with_their_own_code() {
    let mut g = guard("");
    let (_, r) = turn(&mut g, "c0", "read", "a", "PERSIST");
    assert_eq!(r.action(), Action::Abort);
    assert_eq!(r.code(), Some("compaction_loop_persisted"));
    assert_eq!(r.message(), Some("the loop persisted"));
}

#[test]
fn j60_first_critical_blocks_the_whole_batch_second_critical_in_the_run_aborts() {
    let mut g = guard(
        "[guard]\nabort-after-blocks = 0\nabort-after-run-blocks = 2\nwhole-batch = true\n\
         [detectors.repeat]\nwarn = 1\nblock = 2\n",
    );
    g.observe(&Event::RunStart { run_id: Some("r1") });
    let a = json!({"path": "a"});
    let b = json!({"path": "b"});
    g.observe(&Event::MessageStart);
    let v0 = g.observe(&Event::tool_call("s0", "grep", &b));
    let v1 = g.observe(&Event::tool_call("x1", "read", &a));
    let v2 = g.observe(&Event::tool_call("x2", "read", &a));
    let v3 = g.observe(&Event::tool_call("s3", "ls", &b));
    assert_eq!(v0.action(), Action::Steer);
    assert_eq!(v1.action(), Action::Steer);
    assert_eq!(v2.action(), Action::Block);
    assert!(
        v2.whole_batch(),
        "the host must refuse every call of this batch"
    );
    assert_eq!(
        v3.action(),
        Action::Block,
        "later siblings are refused with it"
    );
    assert!(v3.message().unwrap_or("").contains("batch"));
    // Results of the refused batch (siblings included) are swallowed.
    for id in ["s0", "x1", "x2", "s3"] {
        let r = g.observe(&Event::tool_result(id, "read", "err", true));
        assert!(r.is_continue() && r.findings().is_empty(), "{id}");
    }
    // The model recovers once; a second critical in the same run stops it.
    g.observe(&Event::MessageStart);
    let v = g.observe(&Event::tool_call("y1", "read", &b));
    assert_eq!(v.action(), Action::Steer);
    let v = g.observe(&Event::tool_call("y2", "read", &b));
    assert_eq!(v.action(), Action::Abort);
    assert_eq!(v.code(), Some("loop_aborted:repeat"));
    // A new run recovers once again.
    g.observe(&Event::RunEnd);
    g.observe(&Event::RunStart { run_id: Some("r2") });
    g.observe(&Event::MessageStart);
    let v = g.observe(&Event::tool_call("z1", "read", &b));
    assert_eq!(v.action(), Action::Block);
}

#[test]
fn j59_warning_dedup_emits_once_per_ten_count_bucket_per_key() {
    let mut g = guard("[guard]\nabort-after-blocks = 0\nwarning-dedup = \"buckets\"\n[detectors.poll]\nenabled = true\n[detectors.repeat]\nenabled = false\n");
    let mut steered = Vec::new();
    for i in 0..25u32 {
        let (c, _) = turn(&mut g, &format!("p{i}"), "poll", "s", "running");
        if c.action() == Action::Steer {
            steered.push(i + 1);
        }
        if i < 10 {
            assert!(c.findings().is_empty(), "call {}", i + 1);
        }
        if (12..=20).contains(&(i + 1)) {
            assert!(c.is_continue(), "call {} is de-duplicated", i + 1);
            assert!(
                !c.findings().is_empty(),
                "the finding stays visible on the verdict"
            );
        }
        if i + 1 == 21 {
            assert_eq!(c.action(), Action::Block);
        }
    }
    assert_eq!(steered, vec![11], "count 10 emits, 11-19 are suppressed");
}

#[test]
fn j59_counts_below_one_bucket_are_never_emitted_and_keys_are_bounded() {
    // warn = 3 < bucket 10: OpenClaw never emits bucket 0.
    let mut g =
        guard("[guard]\nwarning-dedup = \"buckets\"\n[detectors.repeat]\nwarn = 3\nblock = 100\n");
    let vs: Vec<_> = (0..9)
        .map(|i| turn(&mut g, &format!("c{i}"), "read", "a", "X"))
        .collect();
    assert!(vs.iter().all(|(c, _)| c.is_continue()));
    let (c, _) = turn(&mut g, "c9", "read", "a", "X");
    assert_eq!(c.action(), Action::Steer, "count 10 is bucket 1");
    // 600 distinct keys: the de-dup map stays bounded (checked through the snapshot).
    let mut g =
        guard("[guard]\nwarning-dedup = \"per-key\"\n[detectors.repeat]\nwarn = 1\nblock = 100\n");
    for i in 0..600 {
        turn(&mut g, &format!("k{i}"), "read", &format!("f{i}"), "X");
    }
    let snap = g.snapshot().unwrap();
    let order = snap["guard"]["dedup"]["order"]
        .as_array()
        .map(Vec::len)
        .unwrap_or(usize::MAX);
    assert_eq!(order, 256);
}

#[test]
fn per_key_dedup_steers_once_per_key_per_turn() {
    let mut g =
        guard("[guard]\nwarning-dedup = \"per-key\"\n[detectors.repeat]\nwarn = 2\nblock = 100\n");
    user(&mut g, "go");
    let vs: Vec<_> = (0..5)
        .map(|i| turn(&mut g, &format!("c{i}"), "read", "a", "X"))
        .collect();
    let steers = vs
        .iter()
        .filter(|(c, _)| c.action() == Action::Steer)
        .count();
    assert_eq!(steers, 1);
    user(&mut g, "again please");
    let (c, _) = turn(&mut g, "d0", "read", "a", "X");
    assert_eq!(
        c.action(),
        Action::Steer,
        "a new user turn clears the de-dup"
    );
}

#[test]
fn j54_text_trigger_aborts_once_per_message_and_the_steer_waits_for_the_settle_point() {
    let mut g = guard(PRG);
    user(&mut g, "think");
    g.observe(&Event::RunStart { run_id: None });
    let vs = text(&mut g, &["fine ", "LOOP LOOP", "LOOP LOOP", "LOOP"]);
    assert_eq!(vs[2].action(), Action::Abort);
    assert_eq!(vs[2].code(), Some("loop_aborted:text"));
    assert!(
        vs[3].is_continue() && vs[4].is_continue(),
        "at most one abort per message"
    );
    assert!(
        vs.iter().all(|v| v.action() != Action::Steer),
        "no steer before the settle point"
    );
    let settle = g.observe(&Event::RunEnd);
    assert_eq!(settle.action(), Action::Steer);
    assert_eq!(settle.deliver(), Delivery::AtSettle);
    let msg = settle.message().map(str::to_owned).unwrap();
    assert!(
        msg.starts_with(STEER_PREFIX) && msg.contains("LOOP LOOP"),
        "{msg}"
    );
    // The host delivers it as a user message: not a new turn, so the budget is not reset.
    let v = user(&mut g, &msg);
    assert!(v.is_continue());
    g.observe(&Event::RunStart { run_id: None });
    let vs = text(&mut g, &["LOOP"]);
    assert_eq!(vs[1].action(), Action::Abort);
    let settle = g.observe(&Event::RunEnd);
    let second = settle.message().unwrap();
    assert!(
        second.contains("Second") && !second.contains("LOOP LOOP"),
        "{second}"
    );
    assert!(
        second.contains("blocking you"),
        "the last retry offers the fallback"
    );
}

#[test]
fn j55_text_and_tool_triggers_share_one_budget() {
    let mut g = guard(PRG);
    user(&mut g, "go");
    g.observe(&Event::RunStart { run_id: None });
    text(&mut g, &["LOOP"]);
    let s1 = g.observe(&Event::RunEnd).message().unwrap().to_owned();
    user(&mut g, &s1);
    g.observe(&Event::RunStart { run_id: None });
    let vs: Vec<_> = (0..4)
        .map(|i| turn(&mut g, &format!("c{i}"), "read", "a", "X"))
        .collect();
    assert_eq!(vs[3].0.action(), Action::Block);
    assert!(vs[3].0.terminate());
    let s2 = g.observe(&Event::RunEnd);
    assert_eq!(s2.action(), Action::Steer);
    let s2 = s2.message().unwrap();
    assert!(
        s2.contains("Second tool-call loop") && s2.contains("`read`"),
        "{s2}"
    );
}

#[test]
fn j56_exhausted_budget_compacts_once_then_gives_up() {
    let mut g = guard(PRG);
    user(&mut g, "go");
    let mut settles = Vec::new();
    for round in 0..6 {
        g.observe(&Event::RunStart { run_id: None });
        let vs = text(&mut g, &["LOOP"]);
        assert_eq!(
            vs[1].action(),
            Action::Abort,
            "round {round}: the text path always aborts"
        );
        let s = g.observe(&Event::RunEnd);
        if let Some(m) = &s.message() {
            user(&mut g, m);
        }
        settles.push(s.action());
    }
    use Action::*;
    assert_eq!(settles, vec![Steer, Steer, Compact, Steer, Steer, Continue]);
    // The compaction carries the continue steer; a fresh budget follows it.
    let mut g = guard(PRG);
    user(&mut g, "go");
    for _ in 0..3 {
        g.observe(&Event::RunStart { run_id: None });
        text(&mut g, &["LOOP"]);
        let s = g.observe(&Event::RunEnd);
        if s.action() == Compact {
            assert_eq!(s.message(), Some(CONTINUE_STEER));
            assert_eq!(s.deliver(), Delivery::AtSettle);
        }
        if let Some(m) = &s.message() {
            user(&mut g, m);
        }
    }
    // After giving up, tool loops are still blocked.
    let mut g = guard(PRG);
    user(&mut g, "go");
    for _ in 0..6 {
        g.observe(&Event::RunStart { run_id: None });
        text(&mut g, &["LOOP"]);
        if let Some(m) = g.observe(&Event::RunEnd).message() {
            user(&mut g, m);
        }
    }
    let vs: Vec<_> = (0..6)
        .map(|i| turn(&mut g, &format!("c{i}"), "read", "a", "X"))
        .collect();
    assert_eq!(
        actions(&vs),
        vec![
            Action::Continue,
            Action::Continue,
            Action::Continue,
            Action::Block,
            Action::Block,
            Action::Block
        ]
    );
    assert!(
        g.observe(&Event::RunEnd).is_continue(),
        "no steer after giving up"
    );
}

#[test]
fn j56_warnings_compact_immediately_when_the_budget_is_exhausted() {
    let mut g = guard(
        "[guard]\nsteers-per-turn = 2\ncompactions-per-turn = 1\n[detectors.repeat]\nwarn = 1\nblock = 100\n",
    );
    user(&mut g, "go");
    let vs: Vec<_> = (0..7)
        .map(|i| turn(&mut g, &format!("c{i}"), "read", "a", "X"))
        .collect();
    use Action::*;
    assert_eq!(
        actions(&vs),
        vec![Steer, Steer, Compact, Steer, Steer, Continue, Continue]
    );
    assert_eq!(vs[2].0.message(), Some(CONTINUE_STEER));
    assert_eq!(vs[2].0.deliver(), Delivery::Now);
}

#[test]
fn j57_only_a_real_user_message_resets_budget_and_compactions() {
    let cfg = "[guard]\nsteers-per-turn = 2\ncompactions-per-turn = 1\n[detectors.repeat]\nwarn = 1\nblock = 100\n";
    let mut g = guard(cfg);
    user(&mut g, "go");
    let vs: Vec<_> = (0..2)
        .map(|i| turn(&mut g, &format!("c{i}"), "read", "a", "X"))
        .collect();
    // Both steers come back as user messages: still the same turn.
    for (c, _) in &vs {
        user(&mut g, c.message().unwrap());
    }
    let (c, _) = turn(&mut g, "c2", "read", "a", "X");
    assert_eq!(c.action(), Action::Compact);
    user(&mut g, CONTINUE_STEER);
    for i in 3..5 {
        turn(&mut g, &format!("c{i}"), "read", "a", "X");
    }
    let (c, _) = turn(&mut g, "c5", "read", "a", "X");
    assert!(c.is_continue(), "given up");
    // A real user message: fresh budget and a fresh compaction.
    user(&mut g, "ok, new idea");
    let vs: Vec<_> = (6..9)
        .map(|i| turn(&mut g, &format!("c{i}"), "read", "a", "X"))
        .collect();
    assert_eq!(
        actions(&vs),
        vec![Action::Steer, Action::Steer, Action::Compact]
    );
}

#[test]
fn j58_only_the_user_toggles_the_guard() {
    let mut g = guard(PLG);
    assert!(g.is_enabled());
    // Model output that looks like the command changes nothing.
    text(&mut g, &["/runaway off"]);
    let args = json!({"command": "/runaway off"});
    g.observe(&Event::tool_call("t", "runaway", &args));
    g.observe(&Event::User {
        text: "/runaway off",
        origin: Origin::Unknown,
    });
    assert!(g.is_enabled());
    assert_eq!(g.command("/runaway off"), Some(false));
    let vs: Vec<_> = (0..8)
        .map(|i| turn(&mut g, &format!("c{i}"), "read", "a", "X"))
        .collect();
    assert!(vs
        .iter()
        .all(|(c, r)| c.is_continue() && r.is_continue() && c.findings().is_empty()));
    assert_eq!(g.command("/runaway on"), Some(true));
    assert_eq!(g.command("/runaway"), Some(false));
    assert_eq!(g.command("  /RUNAWAY   toggle "), Some(true));
    assert_eq!(g.command("/runaway maybe"), None);
    assert_eq!(g.command("/other on"), None);
    assert_eq!(g.command(""), None);
    assert!(g.is_enabled());
    // Disabled by configuration; the user can still turn it on.
    let mut g = guard("[guard]\nenabled = false\n");
    assert!(!g.is_enabled());
    assert!(turn(&mut g, "c", "read", "a", "PERSIST").1.is_continue());
    g.command("/runaway on");
    assert_eq!(
        turn(&mut g, "d", "read", "a", "PERSIST").1.action(),
        Action::Abort
    );
}

/// Refused calls wait for their results in the bus, a bounded queue, however many the
/// host never answers.
#[test]
fn refused_calls_stay_bounded() {
    let mut g = guard("[guard]\nabort-after-blocks = 0\n[detectors.repeat]\nwarn = 1\nblock = 2\n");
    let args = json!({"path": "a"});
    let mut blocked = 0;
    for i in 0..500 {
        let id = format!("c{i}");
        g.observe(&Event::MessageStart);
        if g.observe(&Event::tool_call(&id, "read", &args)).action() == Action::Block {
            blocked += 1;
        }
    }
    assert!(blocked > 400, "{blocked}");
    let snap = g.snapshot().unwrap();
    let n = snap["bus"]["bus"]["pending"]
        .as_array()
        .map(Vec::len)
        .unwrap_or(usize::MAX);
    assert!(n <= loopguard_core::MAX_PENDING_CALLS, "{n}");
}

#[test]
fn snapshot_restore_rejects_bad_input_and_keeps_the_toggle() {
    let mut g = guard(PLG);
    g.command("/runaway off");
    let snap = g.snapshot().unwrap();
    let mut h = guard(PLG);
    h.restore(&snap).unwrap();
    assert!(!h.is_enabled());
    let mut bad = snap.clone();
    bad["version"] = json!(99);
    assert!(h
        .restore(&bad)
        .unwrap_err()
        .to_string()
        .contains("version 99"));
    assert!(h.restore(&json!({"version": 1})).is_err());
    assert!(h.restore(&json!("x")).is_err());
    let mut bad = snap.clone();
    bad["bus"]["bus"]["answered_ids"] = json!((0..100).collect::<Vec<u64>>());
    assert!(h
        .restore(&bad)
        .unwrap_err()
        .to_string()
        .contains("exceeds its bounds"));
    // More remembered refusals than the guard keeps.
    let mut bad = snap;
    let refusal =
        json!({"seq": 1, "reason": "r", "code": "c", "terminate": false, "whole_batch": false});
    bad["guard"]["refusals"] = json!(vec![refusal; 17]);
    assert!(h
        .restore(&bad)
        .unwrap_err()
        .to_string()
        .contains("exceeds its bounds"));
}

#[test]
fn builder_merges_agent_overrides_and_reports_errors_with_key_and_file() {
    let c = Config::from_toml_str(
        "[guard]\nabort-after-blocks = 3\n[agents.strict.guard]\nabort-after-blocks = 1\n\
         [agents.strict.detectors.repeat]\nwarn = 1\nblock = 2\n",
        Some("lg.toml"),
    )
    .unwrap();
    let mut strict = Guard::builder()
        .config(c.clone())
        .no_preset()
        .agent("strict")
        .registry(registry())
        .build()
        .unwrap();
    assert_eq!(strict.settings().abort_after_blocks, 1);
    turn(&mut strict, "a", "read", "a", "X");
    assert_eq!(
        turn(&mut strict, "b", "read", "a", "X").0.action(),
        Action::Abort
    );
    let plain = Guard::builder()
        .config(c)
        .no_preset()
        .agent("other")
        .registry(registry())
        .build()
        .unwrap();
    assert_eq!(plain.settings().abort_after_blocks, 3);

    let bad = Config::from_toml_str(
        "[agents.x.detectors.repeat]\nwarn = 5\nblock = 5\n",
        Some("lg.toml"),
    )
    .unwrap();
    let err = Guard::builder()
        .config(bad)
        .no_preset()
        .registry(registry())
        .build()
        .unwrap_err();
    assert_eq!(err.path(), Some("agents.x.detectors.repeat.warn"));
    assert!(err.to_string().starts_with("lg.toml:2: "), "{err}");
    let bad =
        Config::from_toml_str("[guard]\nabort-after-blocks = \"3\"\n", Some("lg.toml")).unwrap();
    let err = Guard::builder()
        .config(bad)
        .no_preset()
        .registry(registry())
        .build()
        .unwrap_err();
    assert_eq!(err.path(), Some("guard.abort-after-blocks"));
    assert!(err.to_string().starts_with("lg.toml:2: "), "{err}");
    let bad = Config::from_toml_str("[detectors.nope]\n", None).unwrap();
    assert!(Guard::builder()
        .config(bad)
        .no_preset()
        .registry(registry())
        .build()
        .is_err());
}

#[test]
fn presets_drop_tables_of_detectors_this_program_does_not_link() {
    // The presets name the real detectors; over the fake registry only the guard table and the
    // fake detectors remain.
    for name in loopguard_orchestrator::PRESETS {
        let g = Guard::builder()
            .preset(name)
            .registry(registry())
            .build()
            .unwrap();
        let want = loopguard_orchestrator::preset(name).unwrap();
        let s = loopguard_orchestrator::Policy::from_table(&want.guard).unwrap();
        assert_eq!(g.settings(), &s, "{name}");
    }
    // A detector the user names must be linked (the program knows the name, e.g. from its
    // facade, but does not link it).
    let c = Config::from_toml_str("[detectors.ping-pong]\nenabled = true\n", None).unwrap();
    let err = Guard::builder()
        .config(c)
        .registry(registry().knowing(&["ping-pong"], "link `{name}`"))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("not linked"), "{err}");
}

#[test]
fn render_resolved_shows_every_guard_key_and_detector() {
    let c = Config::from_toml_str(
        "[guard]\nsteers-per-turn = 2\n[detectors.repeat]\nwarn = 2\n[agents.a.detectors.repeat]\nblock = 9\n",
        Some("lg.toml"),
    )
    .unwrap();
    let text = loopguard_orchestrator::render_resolved(&c, &registry()).unwrap();
    assert!(text.contains("steers-per-turn = 2"), "{text}");
    assert!(text.contains("abort-after-blocks = 3"), "{text}");
    assert!(text.contains("[detectors.repeat] # TST101 on"), "{text}");
    assert!(text.contains("warn = 2"), "{text}");
    assert!(text.contains("# block = 5 (default)"), "{text}");
    assert!(text.contains("[detectors.poll] # TST104 off"), "{text}");
    assert!(
        text.contains("[agents.a.detectors.repeat]\nblock = 9"),
        "{text}"
    );
    // The rendered text is itself a valid configuration.
    let again = Config::from_toml_str(&text, None).unwrap();
    assert_eq!(again.guard["steers-per-turn"].as_integer(), Some(2));
}

#[test]
fn own_steer_from_origin_guard_is_never_a_new_turn() {
    let mut g = guard(PLG);
    user(&mut g, "go");
    let vs: Vec<_> = (0..6)
        .map(|i| turn(&mut g, &format!("c{i}"), "read", "a", "X"))
        .collect();
    assert_eq!(vs[5].0.action(), Action::Block);
    g.observe(&Event::User {
        text: "some reworded steer",
        origin: Origin::Guard,
    });
    assert_eq!(
        turn(&mut g, "c6", "read", "a", "X").0.action(),
        Action::Abort
    );
}

#[test]
fn replay_of_owned_events_matches_borrowed_events() {
    let mut s = loopguard_testkit::Script::new();
    s.user("go");
    s.repeat_call(6, "read", json!({"path": "a"}), "X");
    let events: Vec<OwnedEvent> = s.into_events();
    let mut g = guard(PLG);
    let vs = feed(&mut g, &events);
    let acts: Vec<Action> = vs
        .iter()
        .map(|v| v.action())
        .filter(|a| *a != Action::Continue)
        .collect();
    assert_eq!(
        acts,
        vec![Action::Steer, Action::Steer, Action::Block, Action::Block]
    );
}
