//! Which shell commands are polls.

use crate::testutil::*;

/// Asserts that each command line is a poll (`polls`) or is not.
fn assert_polls(lines: &[&str], polls: bool) {
    for line in lines {
        assert_eq!(
            super::is_polling_command(&json!({ "command": line })),
            polls,
            "{line}"
        );
    }
}

#[test]
fn only_the_first_line_of_a_command_can_make_it_a_poll() {
    use super::is_polling_command;
    assert!(is_polling_command(
        &json!({"command": "sleep 5 && curl -s localhost:8080/health"})
    ));
    assert!(is_polling_command(
        &json!({"command": "cd app; git status"})
    ));
    assert!(is_polling_command(&json!({"cmd": "./status"})));
    // A command reading a pipe filters what the one before it printed: a build or a test run
    // cut to its last lines is no poll; the pipeline's first command still decides.
    assert!(!is_polling_command(
        &json!({"command": "cargo build 2>&1 | tail -20"})
    ));
    assert!(!is_polling_command(
        &json!({"command": "cd /repo && python -m pytest -q tests/test_api.py 2>&1 | tail -15"})
    ));
    assert!(is_polling_command(
        &json!({"command": "ps aux | grep worker"})
    ));
    assert!(is_polling_command(
        &json!({"command": "make test || tail -50 build.log"})
    ));
    assert!(is_polling_command(
        &json!({"command": "npm run build | tee out.txt; sleep 10 && tail -5 out.txt"})
    ));
    // A request that sends something acts: it is no poll; asking for a status still is.
    assert_polls(
        &[
            "curl -s -X POST https://api.example.com/v1/deploy -H 'Content-Type: application/json' -d '{\"ref\": \"main\"}'",
            "curl -sS --request=PUT localhost:8080/items/7 --data-binary @item.json",
            "curl -XDELETE localhost:9200/logs-2026.12",
            "curl -F file=@report.pdf https://upload.example.com/",
            "wget --post-data 'user=ci' https://example.com/login",
            "curl -s --json '{\"q\": 1}' localhost:3000/search",
        ],
        false,
    );
    assert_polls(
        &[
            "curl -s localhost:8080/health",
            "curl -sS -X GET https://api.example.com/v1/jobs/42",
            "sleep 5 && curl -s -o /dev/null -w '%{http_code}' localhost:3000",
            "wget -qO- http://localhost:8080/status",
        ],
        true,
    );
    // A line that acts after it looks is that action; the shell's own words and a
    // redirection's `&` do not change what a line is.
    assert_polls(
        &[
            "cd /tmp/rl2 && git status 2>&1 | head -3; git commit -m wip 2>&1 | tail -3",
            "kubectl get pods -n ci; kubectl delete pod runner-7 -n ci",
            "tail -5 build.log; make test",
            "date && python3 scripts/migrate.py 2>&1",
        ],
        false,
    );
    assert_polls(
        &[
            "ps aux | grep -v grep | grep -c worker; echo \"worker not running\"",
            "until curl -sf localhost:8080/health; do sleep 2; done",
            "for i in 1 2 3; do kubectl get pods -n ci; sleep 5; done",
            "sleep 5 && curl -s localhost:8080/health 2>&1",
            "RUST_LOG=debug tail -n 50 /var/log/app.log",
            "make deploy >/dev/null 2>&1 & sleep 30; curl -s localhost:8080/status",
            "cd /srv && docker logs --tail 20 api |& grep -i error",
            "sleep 30; gh run view 42 --json status",
            "systemctl status api --no-pager; journalctl -u api -n 20 --no-pager",
            "git status --short && git diff --stat",
            "docker ps --filter name=api; cat /tmp/api.pid",
        ],
        true,
    );
    assert!(!is_polling_command(
        &json!({"command": "edit 10:20\n    return node.get(key);\n"})
    ));
    assert!(!is_polling_command(
        &json!({"command": "python replicate_bug.py"})
    ));
    assert!(!is_polling_command(&json!({"path": "status.txt"})));
    // An empty command is judged by its answer (`is_wait_command`), not here.
    assert!(!is_polling_command(
        &json!({"command": "", "is_input": "true"})
    ));
    assert!(super::is_wait_command(&json!({"cmd": " \n"})));
    assert!(!super::is_wait_command(&json!({"command": "ls"})));
}

/// Findings of `events` through a bus whose tools table is the built-in one extended by the
/// `[tools]` table `tools`.
fn run_with_tools(d: Box<dyn Detector>, tools: &str, events: &[OwnedEvent]) -> Vec<Finding> {
    let table: toml::Table = tools.parse().unwrap();
    let tools = loopguard_core::Tools::from_config(&table).unwrap();
    let n = tools.normalizers();
    let mut bus = loopguard_core::Bus::with_tools(vec![d], tools, n);
    events
        .iter()
        .flat_map(|e| bus.observe(&e.as_event()))
        .collect()
}

fn status_checks(n: usize) -> Script {
    let mut s = Script::new();
    s.repeat_call(n, "my_status", json!({"job": 7}), "state: running");
    s
}

const HOST_POLL: &str = "[my_status]\nkind = \"poll\"\n";

#[test]
fn a_host_added_poll_tool_gets_the_polling_thresholds() {
    let s = status_checks(12);
    // an ordinary tool: the streak blocks the fifth identical call
    assert!(!criticals(&run(default_preset(), s.events())).is_empty());
    // a poll in the tools table: warnings from the tenth identical result, no block before 20
    let f = run_with_tools(default_preset(), HOST_POLL, s.events());
    assert!(f.iter().all(|f| f.level == Level::Warning), "{f:?}");
    assert!(f.iter().all(|f| f.count >= 10), "{f:?}");
}

#[test]
fn a_host_added_poll_tool_is_skipped_by_the_openclaw_rule() {
    let s = status_checks(25);
    assert!(!criticals(&run(oc(), s.events())).is_empty());
    assert!(run_with_tools(oc(), HOST_POLL, s.events()).is_empty());
}

#[test]
fn a_built_in_poll_turned_off_by_the_table_counts_like_any_call() {
    let mut s = Script::new();
    s.repeat_call(25, "command_status", json!({"id": 1}), "running");
    assert!(run(oc(), s.events()).is_empty());
    let off = "[command_status]\nkind = \"other\"\n";
    assert!(!run_with_tools(oc(), off, s.events()).is_empty());
}

#[test]
fn a_call_acts_unless_each_of_its_commands_reads_looks_or_waits() {
    let acts = |c: &str| super::acts(&json!({ "command": c }));
    for c in [
        "edit 1:1\nimport os\nend_of_edit",
        "python3 fix.py",
        "sed -i 's/a/b/' src/app.py",
        "cat a.txt | sed --in-place -e s/x/y/ b.txt",
        "curl -X POST http://localhost:8080/jobs",
        "git commit -am wip",
        "cat build.log && make",
    ] {
        assert!(acts(c), "{c}");
    }
    for c in [
        "cat build.log | tail -n 30",
        "sed -n '98,138p' src/app.py",
        "grep -n cache src/*.py | head -n 20",
        "cd /repo && git diff HEAD~1",
        "sleep 5; tail -n 20 /var/log/app.log",
        "RUST_LOG=debug ls -la target",
        "awk '{print $1}' access.log | sort | uniq -c",
        "open /repo/src/app.py 120",
        "goto 240",
        "scroll_down",
        "",
    ] {
        assert!(!acts(c), "{c}");
    }
    assert!(!super::acts(
        &json!({"command": "view", "path": "/repo/src/app.py"})
    ));
    assert!(super::acts(
        &json!({"command": "insert", "path": "/repo/src/app.py", "insert_line": 1, "new_str": "import os"})
    ));
    // A call without a shell command is not known to act.
    assert!(!super::acts(
        &json!({"file_path": "/srv/app.py", "old_string": "a", "new_string": "b"})
    ));
}

#[test]
fn a_call_only_looks_when_its_shell_line_only_reads_or_its_tool_reads_or_searches() {
    let looks = |tool: &str, args: serde_json::Value| {
        let acting = super::acts(&args);
        let polling = super::is_polling_command(&args);
        let waiting = super::is_wait_command(&args);
        super::only_looks(tool, &args, acting, polling, waiting)
    };
    // Tools that read or search by their names, in the harnesses' spellings.
    for tool in [
        "read",
        "Read",
        "read_file",
        "view",
        "open",
        "Grep",
        "Glob",
        "LS",
        "search_dir",
        "search_file_content",
        "find_file",
        "list_directory",
    ] {
        assert!(looks(tool, json!({ "path": "/repo/src/app.py" })), "{tool}");
    }
    for tool in [
        "Edit",
        "Write",
        "TodoWrite",
        "Task",
        "WebFetch",
        "create",
        "submit",
    ] {
        assert!(
            !looks(tool, json!({ "path": "/repo/src/app.py" })),
            "{tool}"
        );
    }
    // A shell line: it reads, or it acts, polls or waits.
    assert!(looks(
        "bash",
        json!({ "command": "grep -rn cache src/ | head -20" })
    ));
    assert!(looks(
        "str_replace_editor",
        json!({ "command": "view", "path": "/repo/a.py" })
    ));
    for c in [
        "python3 fix.py",
        "git status",
        "sleep 10",
        "",
        "sed -i 's/a/b/' a.py",
    ] {
        assert!(!looks("bash", json!({ "command": c })), "{c}");
    }
}
