//! The parallel-batch trap: the same batch forever.

use crate::testutil::*;

#[test]
fn batch_trap_the_same_batch_forever_is_caught() {
    let mut s = Script::new();
    let mut ends = Vec::new();
    for _ in 0..4 {
        same_batch(&mut s);
        ends.push(s.last_index());
    }
    let f = run(default_det(), s.events());
    // Warned when the 3rd identical batch completed.
    assert!(warnings(&f).contains(&ends[2]), "{f:?}");
    assert!(criticals(&f).is_empty());
    // The 5th identical batch: both calls are blocked.
    same_batch(&mut s);
    let n = s.events().len();
    let f = run(default_det(), s.events());
    assert_eq!(criticals(&f), vec![n - 4, n - 3], "{f:?}");
    let crit = &f
        .iter()
        .find(|(_, f)| f.level == Level::Critical)
        .unwrap()
        .1;
    assert!(
        crit.message.contains("batch of 2 tool calls"),
        "{}",
        crit.message
    );
}

#[test]
fn batch_trap_result_order_inside_a_batch_does_not_matter() {
    let mut s = Script::new();
    for i in 0..3 {
        if i % 2 == 0 {
            s.batch(&[
                ("read", json!({"path": "a"}), "A"),
                ("grep", json!({"q": 1}), "G"),
            ]);
        } else {
            s.batch(&[
                ("grep", json!({"q": 1}), "G"),
                ("read", json!({"path": "a"}), "A"),
            ]);
        }
    }
    assert_eq!(
        warnings(&run(default_det(), s.events())),
        vec![s.last_index()]
    );
}

#[test]
fn batch_trap_changing_batches_are_not_a_loop() {
    let mut s = Script::new();
    for i in 0..10 {
        s.batch(&[
            ("read", json!({"path": "a"}), "A"),
            ("bash", json!({"command": "tail log"}), &format!("line {i}")),
        ]);
    }
    let f = run(det("window = { enabled = false }"), s.events());
    assert!(f.is_empty(), "{f:?}");
}

#[test]
fn batch_trap_blocked_batches_stay_blocked() {
    let mut s = Script::new();
    for _ in 0..4 {
        same_batch(&mut s);
    }
    let mut blocked = Vec::new();
    for round in 0..3 {
        s.push(OwnedEvent::MessageStart);
        s.push(OwnedEvent::MessageEnd);
        let a = s.tool_call("read", json!({"path": "a"}));
        blocked.push(s.last_index());
        let b = s.tool_call("grep", json!({"q": "todo"}));
        blocked.push(s.last_index());
        if round == 0 {
            s.tool_result(&a, "read", "Blocked", true);
            s.tool_result(&b, "grep", "Blocked", true);
        }
    }
    let f = run(det("window = { enabled = false }"), s.events());
    assert_eq!(criticals(&f), blocked);
    // A serial different call ends the batch loop.
    s.call("bash", json!({"command": "ls"}), "files");
    same_batch(&mut s);
    let f = run(det("window = { enabled = false }"), s.events());
    assert_eq!(criticals(&f), blocked);
}

#[test]
fn batch_trap_pi_loop_guard_preset_reproduces_the_gap() {
    // pi-loop-guard never counts parallel batches; its preset keeps that flaw.
    let mut s = Script::new();
    for _ in 0..20 {
        same_batch(&mut s);
    }
    assert!(run(plg(), s.events()).is_empty());
    assert!(!criticals(&run(default_det(), s.events())).is_empty());
}
