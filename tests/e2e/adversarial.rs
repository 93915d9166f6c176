//! What must never be flagged with the default preset, through `loopguard scan`: polling that
//! progresses, and waiting that ends — the seeds' own rule ("calls whose results change are
//! not loops") and OpenClaw's poll thresholds.

use crate::support::{loopguard, Run, TempDir};
use serde_json::{json, Value};

/// A call: its tool, its arguments, its result.
type Call = (String, Value, String);

/// `n` calls of `tool` with the same `args`, the `i`th answered with `result(i)`.
fn repeated(n: usize, tool: &str, args: Value, result: impl Fn(usize) -> String) -> Vec<Call> {
    (0..n)
        .map(|i| (tool.to_owned(), args.clone(), result(i)))
        .collect()
}

fn transcript(calls: &[Call]) -> String {
    let mut lines = vec![
        json!({"type": "session", "id": "adv"}),
        json!({"type": "user", "text": "Deploy, then wait for the build to finish."}),
    ];
    for (i, (tool, args, result)) in calls.iter().enumerate() {
        lines.push(json!({"type": "assistant"}));
        lines.push(json!({"type": "tool_call", "id": format!("c{i}"), "tool": tool, "args": args, "batch": i}));
        lines.push(json!({"type": "tool_result", "id": format!("c{i}"), "tool": tool, "content": result, "is_error": false, "images": 0}));
    }
    lines.iter().map(|l| l.to_string() + "\n").collect()
}

/// `loopguard scan --format json` of the transcript `text`.
fn scan_text(name: &str, text: &str) -> Run {
    let dir = TempDir::new(name);
    let path = dir.file("t.jsonl", text);
    loopguard(&["scan", "--format", "json", path.to_str().unwrap()])
}

/// [`scan_text`] of a transcript made of `lines`.
fn scan_lines(name: &str, lines: &[Value]) -> Run {
    scan_text(
        name,
        &lines
            .iter()
            .map(|l| l.to_string() + "\n")
            .collect::<String>(),
    )
}

fn findings(name: &str, calls: &[Call]) -> Vec<Value> {
    let run = scan_text(name, &transcript(calls));
    assert!(run.code <= 1, "{}", run.stderr);
    run.json()["sessions"][0]["findings"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn progressing_polls_are_never_flagged() {
    let log: String = (0..40)
        .map(|j| format!("[{j:03}] compiling crate {j}\n"))
        .collect();
    let cases: Vec<Vec<Call>> = vec![
        repeated(
            25,
            "process",
            json!({"action": "poll", "sessionId": "b"}),
            |i| format!("{log}Progress: {}%", i * 4),
        ),
        repeated(25, "command_status", json!({"id": "job-7"}), |i| {
            json!({"status": "running", "done": i, "total": 30}).to_string()
        }),
        repeated(25, "bash", json!({"command": "tail -20 build.log"}), |i| {
            (i..i + 20)
                .map(|k| format!("line {k}: module {k}\n"))
                .collect()
        }),
        repeated(
            25,
            "bash",
            json!({"command": "sleep 10; kubectl get pods"}),
            |i| {
                (0..30)
                    .map(|k| format!("web-{k} {}\n", if k < i { "Running" } else { "Pending" }))
                    .collect()
            },
        ),
    ];
    for (n, calls) in cases.iter().enumerate() {
        let f = findings(&format!("progress-{n}"), calls);
        assert!(f.is_empty(), "case {n}: {f:?}");
    }
}

#[test]
fn waiting_that_ends_is_not_blocked() {
    for (tool, args) in [
        ("process", json!({"action": "poll", "sessionId": "b"})),
        (
            "bash",
            json!({"command": "sleep 30; gh run view 42 --json status"}),
        ),
        // OpenHands issue 10750: waiting on a running command with an empty one.
        ("execute_bash", json!({"command": "", "is_input": "true"})),
    ] {
        let calls = repeated(9, tool, args, |i| {
            if i < 8 { "running" } else { "completed" }.to_owned()
        });
        let f = findings("wait", &calls);
        assert!(f.is_empty(), "{tool}: {f:?}");
    }
}

#[test]
fn a_poll_that_never_changes_is_still_stopped() {
    let calls = repeated(
        25,
        "bash",
        json!({"command": "sleep 30; gh run view 42 --json status"}),
        |_| "in_progress".to_owned(),
    );
    let f = findings("stuck-poll", &calls);
    let first_block = f.iter().find(|x| x["action"] == "block").expect("a block");
    // Line of the 20th call: 2 header lines, then 3 lines per call.
    assert_eq!(first_block["event"], 2 + 3 * 19 + 1, "{f:?}");
}

/// Gemini CLI issues 5873 and 8234: moving a module means the same one-line import edit in
/// every file that uses it; each edit lands in another file.
#[test]
fn the_same_import_edit_across_many_files_is_not_a_loop() {
    let calls: Vec<Call> = (0..20)
        .map(|i| {
            let path = format!("src/pkg/module_{i:02}.py");
            (
                "str_replace_editor".to_owned(),
                json!({"command": "str_replace", "path": path,
                       "old_str": "from utils import parse",
                       "new_str": "from core.utils import parse"}),
                format!("The file {path} has been edited. Here's the result of running `cat -n` on a snippet of {path}:\n     1\tfrom core.utils import parse\n     2\t\n     3\timport logging\nReview the changes and make sure they are as expected."),
            )
        })
        .collect();
    let f = findings("import-edits", &calls);
    assert!(f.is_empty(), "{f:?}");
}

/// Roo Code issue 9502: a tool the guard does not know as a poll, called with the same
/// arguments to read a process's output chunk by chunk; each chunk is new.
#[test]
fn chunked_reads_with_the_same_arguments_and_new_bytes_are_not_a_loop() {
    let calls = repeated(
        60,
        "mcp__proc__read_output",
        json!({"process_id": "p-1"}),
        |i| {
            (0..8)
                .map(|k| format!("test tests::case_{:03} ... ok\n", i * 8 + k))
                .collect()
        },
    );
    let f = findings("chunked-reads", &calls);
    assert!(f.is_empty(), "{f:?}");
}

/// Gemini CLI issue 10620: code shown with line numbers, whose closing braces and blank
/// lines recur, is an answer, not a chant.
#[test]
fn a_numbered_code_listing_in_an_answer_is_not_a_loop() {
    let mut code = String::new();
    let mut n = 0;
    let mut line = |code: &mut String, text: &str| {
        n += 1;
        code.push_str(&format!("{n:>6}\t{text}\n"));
    };
    for (i, field) in [
        "id",
        "name",
        "email",
        "created_at",
        "updated_at",
        "role",
        "team",
        "quota",
        "locale",
        "avatar",
        "status",
        "last_login",
        "plan",
        "region",
        "score",
    ]
    .iter()
    .enumerate()
    {
        line(&mut code, &format!("    /// The user's `{field}`."));
        line(&mut code, &format!("    pub fn {field}(&self) -> &str {{"));
        line(&mut code, &format!("        &self.fields[{i}]"));
        line(&mut code, "    }");
        line(&mut code, "");
        line(
            &mut code,
            &format!("    pub fn set_{field}(&mut self, v: &str) {{"),
        );
        line(
            &mut code,
            &format!("        self.fields[{i}] = v.to_owned();"),
        );
        line(&mut code, "        self.dirty = true;");
        line(&mut code, "    }");
        line(&mut code, "");
    }
    let text = format!("Here is `src/user.rs` as it stands:\n\n```\n{code}```\n\nEvery accessor has a setter that marks the record dirty.");
    let lines = [
        json!({"type": "session", "id": "listing"}),
        json!({"type": "user", "text": "Show me src/user.rs with line numbers."}),
        json!({"type": "assistant", "text": text}),
    ];
    let run = scan_lines("numbered-listing", &lines);
    assert_eq!(run.code, 0, "{}", run.stdout);
}

/// goose issue 9136: dozens of identical calls in one response are stopped inside that
/// response, not only when the batch comes back.
#[test]
fn dozens_of_identical_calls_in_one_response_are_blocked() {
    let mut lines = vec![
        json!({"type": "session", "id": "one-batch"}),
        json!({"type": "user", "text": "Run the tests."}),
        json!({"type": "assistant"}),
    ];
    for i in 0..30 {
        lines.push(
            json!({"type": "tool_call", "id": format!("c{i}"), "tool": "bash",
                          "args": {"command": "mvn test"}, "batch": 0}),
        );
    }
    for i in 0..30 {
        lines.push(
            json!({"type": "tool_result", "id": format!("c{i}"), "tool": "bash",
                          "content": "[ERROR] BUILD FAILURE\n[ERROR] Tests run: 41, Failures: 2",
                          "is_error": true, "images": 0}),
        );
    }
    let run = scan_lines("one-batch", &lines);
    let f = run.json()["sessions"][0]["findings"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let first_block = f.iter().find(|x| x["action"] == "block").expect("a block");
    // Events: the user line, the assistant line, then the calls from event 2 on.
    let event = first_block["event"].as_u64().unwrap();
    assert!(
        (2..2 + 10).contains(&event),
        "blocked within the first ten siblings: {f:?}"
    );
}

/// A host (or a logger) that stamps each output with the clock time: the same call answered
/// by the same text under a new time each time is the same loop, steered at the 3rd identical
/// answer and blocked at the 5th call as without the stamp.
#[test]
fn the_same_answer_under_a_new_clock_time_is_the_same_loop() {
    let stamped = |i: usize| {
        format!(
            "[{:02}:{:02}:{:02}.{:03}] Wrong flag!",
            10 + i % 12,
            (7 * i) % 60,
            (13 * i) % 60,
            (97 * i) % 1000
        )
    };
    let calls = repeated(
        8,
        "bash",
        json!({"command": "submit flag{People always make the best exploits.}"}),
        stamped,
    );
    steered_on_the_third_blocked_on_the_fifth("clock-stamped", &calls);
}

/// Asserts that the findings of `calls` (one call repeated, each answered) steer on the 3rd
/// result and block on the 5th call. Lines: 2 header lines, then 3 per call (message, call,
/// result).
fn steered_on_the_third_blocked_on_the_fifth(name: &str, calls: &[Call]) {
    let f = findings(name, calls);
    let first = |action: &str| {
        f.iter()
            .find(|x| x["action"] == action)
            .and_then(|x| x["event"].as_u64())
    };
    assert_eq!(first("steer"), Some(2 + 3 * 2 + 2), "{name}: {f:?}");
    assert_eq!(first("block"), Some(2 + 3 * 4 + 1), "{name}: {f:?}");
}

/// A script that prints an object by its address (Python's `<… object at 0x…>`), run again
/// and again unchanged: the address is new on every run, the answer is the same, and so is
/// the loop — steered at the 3rd identical answer, blocked at the 5th call.
#[test]
fn a_script_printing_an_object_is_the_same_loop_at_every_address() {
    let printed = |i: usize| {
        format!(
            "Loaded <app.config.Settings object at 0x7f{:010x}>\nTraceback (most recent call last):\n  File \"/work/app/main.py\", line 14, in <module>\n    run(settings)\n  File \"/work/app/main.py\", line 9, in run\n    port = settings.port + 1\nTypeError: unsupported operand type(s) for +: 'NoneType' and 'int'",
            0x3a2c1b4d90_u64.wrapping_mul(i as u64 + 7) & 0xff_ffff_ffff
        )
    };
    let calls = repeated(8, "bash", json!({"command": "python main.py"}), printed);
    steered_on_the_third_blocked_on_the_fifth("object-addresses", &calls);
}

/// A failing test or program run again and again unchanged, as four toolchains report it:
/// Go's timings, npm's log of each run, Python's temporary folder, the id of the Rust thread
/// that panicked change every time; the answer does not, and the loop is steered at the 3rd
/// run and blocked at the 5th.
#[test]
fn a_failing_test_rerun_is_the_same_loop_whatever_its_timings_and_temporary_names() {
    type Output = fn(usize) -> String;
    let runs: [(&str, Output); 4] = [
        ("go test ./...", |i| {
            format!(
                "--- FAIL: TestParse (0.0{}s)\n    parse_test.go:14: got 3, want 4\nFAIL\nFAIL\texample.com/parse\t0.{}s\nFAIL",
                i % 3,
                100 + 37 * i
            )
        }),
        ("npm test", |i| {
            format!(
                "> demo@1.0.0 test\n> jest\n\nFAIL src/sum.test.js\n  ✕ adds (1{} ms)\n\nnpm ERR! code ELIFECYCLE\nnpm ERR! A complete log of this run can be found in:\nnpm ERR!     /root/.npm/_logs/2026-12-06T21_{:02}_{:02}_{:03}Z-debug-0.log",
                i,
                10 + i,
                (17 * i) % 60,
                (311 * i) % 1000
            )
        }),
        ("python export.py", |i| {
            format!(
                "Traceback (most recent call last):\n  File \"/work/export.py\", line 8, in <module>\n    open(os.path.join(d, 'out.bin'), 'wb')\nPermissionError: [Errno 13] Permission denied: '/tmp/tmp{:08x}/out.bin'",
                0x3a2c_1b4d_u32.wrapping_mul(i as u32 + 3)
            )
        }),
        ("cargo run", |i| {
            format!(
                "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.0{i}s\n     Running `target/debug/demo`\n\nthread 'main' ({}) panicked at src/main.rs:4:5:\nattempt to add with overflow\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
                48121 + 97 * i
            )
        }),
    ];
    for (command, output) in runs {
        let calls = repeated(8, "bash", json!({ "command": command }), output);
        steered_on_the_third_blocked_on_the_fifth(command, &calls);
    }
}

/// More runs that print something new each time: a build and a test run cut by `| tail` (no
/// poll for being cut), a crash the shell reports with the process's pid, a link error naming
/// the compiler's temporary object, a worker that prints the Unix time it started at, a
/// script writing to a file `mktemp` named. Each is the same failing run: steered at the 3rd
/// answer and blocked at the 5th call.
#[test]
fn a_failing_run_is_the_same_loop_whatever_it_prints_anew() {
    type Output = fn(usize) -> String;
    let runs: [(&str, Output); 6] = [
        ("cargo build 2>&1 | tail -20", |_| {
            "error[E0308]: mismatched types\n --> src/main.rs:1:26\n  |\n1 | fn main() { let x: u32 = \"a\"; }\n  |                          ^^^ expected `u32`, found `&str`\n\nerror: could not compile `app` (bin \"app\") due to 1 previous error".to_owned()
        }),
        (
            "cd /repo && python -m pytest -q tests/test_api.py 2>&1 | tail -15",
            |i| {
                format!(
                "F\n=================================== FAILURES ===================================\nE       assert 404 == 200\nFAILED tests/test_api.py::test_get - assert 404 == 200\n1 failed in 0.{}s",
                10 + i
            )
            },
        ),
        (
            "gcc -g -o crash crash.c && ./crash; echo \"exit code $?\"",
            |i| {
                format!(
                    "bash: line 1: {} Segmentation fault      ./crash\nexit code 139",
                    20_117 + 9 * i
                )
            },
        ),
        ("make", |i| {
            let tmp = [
                "ccEa2Dct", "ccBvynEp", "ccq1Wz0R", "cc8HnX2k", "ccT5mPa9", "ccZ0ab12", "ccY7cd34",
                "ccX8ef56",
            ][i % 8];
            format!(
                "gcc -Wall -o app main.c\n/usr/bin/ld: /tmp/{tmp}.o: in function `main':\nmain.c:(.text+0xa): undefined reference to `init_db'\ncollect2: error: ld returned 1 exit status\nmake: *** [Makefile:2: all] Error 1"
            )
        }),
        ("python3 worker.py", |i| {
            format!(
                "started pid {} at {}.{}\nworker crashed: out of memory",
                28_633 + 5 * i,
                1_796_609_921 + i,
                8_235_338 + 977 * i
            )
        }),
        ("f=$(mktemp); python3 export.py --out $f", |i| {
            let name = [
                "yVTV0DqUKo",
                "ZKoz4X05ZE",
                "a1B2c3D4e5",
                "Q9w8E7r6T5",
                "mN0bV9cX8z",
                "L1k2J3h4G5",
                "p0O9i8U7y6",
                "R5t4Y3u2I1",
            ][i % 8];
            format!(
                "writing to /tmp/tmp.{name}\nTraceback (most recent call last):\n  File \"export.py\", line 9, in <module>\nKeyError: 'total'"
            )
        }),
    ];
    for (command, output) in runs {
        let calls = repeated(8, "bash", json!({ "command": command }), output);
        steered_on_the_third_blocked_on_the_fifth(command, &calls);
    }
}

/// More toolchains whose every run stamps its answer anew: a server's `Date` header,
/// BuildKit's step times, a test runner's random seed, valgrind's pid, Java's identity hashes,
/// node's pid, a mock's address, Django's request log, TensorFlow's glog prefix, Spring
/// Boot's log, Vitest's summary, IPython's cell counter. The same failing run is steered at the 3rd answer and
/// blocked at the 5th call.
#[test]
fn a_failing_run_is_the_same_loop_whatever_its_stamps() {
    type Output = fn(usize) -> String;
    let runs: [(&str, Output); 12] = [
        ("python scripts/check_health.py", |i| {
            format!(
                "HTTP/1.1 500 Internal Server Error\nDate: Mon, 07 Dec 2026 00:{:02}:{:02} GMT\nContent-Length: 36\n\n{{\"error\": \"database is not ready\"}}",
                10 + i,
                (13 * i) % 60
            )
        }),
        ("docker build -t api .", |i| {
            format!(
                "#6 [3/6] RUN npm ci\n#6 {}.{:03} npm ERR! code ERESOLVE\n#6 ERROR: process \"/bin/sh -c npm ci\" did not complete successfully: exit code: 1\n#5 DONE {}.{}s",
                i % 4,
                (271 * i) % 1000,
                1 + i % 3,
                i % 10
            )
        }),
        ("pytest -q tests/test_api.py", |i| {
            format!(
                "Using --randomly-seed={}\n....F..\nE       AssertionError: assert 404 == 200\nFAILED tests/test_api.py::test_get - AssertionError: assert 404 == 200\n1 failed, 6 passed in 0.{}s",
                1_234_567 + 7_919 * i,
                10 + i
            )
        }),
        ("valgrind ./a.out", |i| {
            let pid = 4_242 + 131 * i;
            format!(
                "=={pid}== Memcheck, a memory error detector\n=={pid}== Invalid read of size 4\n=={pid}==    at 0x109162: main (main.c:6)\n=={pid}== ERROR SUMMARY: 1 errors from 1 contexts"
            )
        }),
        ("mvn -q test -Dtest=OrderTest", |i| {
            format!(
                "[ERROR]   OrderTest.equalOrders:14 expected: com.shop.Order@{:x} but was: com.shop.Order@{:x}\n[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0",
                0x1b6d_3586_u32.wrapping_add(0x0101_0101 * i as u32),
                0x4554_617c_u32.wrapping_sub(0x0011_2233 * i as u32)
            )
        }),
        ("node server.js", |i| {
            format!(
                "(node:{}) [DEP0040] DeprecationWarning: The `punycode` module is deprecated.\nError: connect ECONNREFUSED 127.0.0.1:5432",
                31_337 + 17 * i
            )
        }),
        ("python -m pytest tests/test_client.py -x -q", |i| {
            format!(
                "E   AssertionError: assert <MagicMock name='session.get().json()' id='{}'> == {{'ok': True}}\n1 failed in 0.{}s",
                140_234_567_890_123_u64 + 4_096 * i as u64,
                20 + i
            )
        }),
        ("python scripts/smoke_test.py --url /api/items", |i| {
            format!(
                "Internal Server Error: /api/items\ndjango.db.utils.OperationalError: no such table: api_item\n[07/Dec/2026 00:{:02}:{:02}] \"GET /api/items HTTP/1.1\" 500 145",
                10 + i,
                (29 * i) % 60
            )
        }),
        ("python train.py --config cfg.yaml", |i| {
            format!(
                "I1207 00:{:02}:{:02}.{:06} {} cpu_feature_guard.cc:182] This TensorFlow binary is optimized.\nValueError: expected axis -1 of input shape to have value 784",
                10 + i,
                (7 * i) % 60,
                123_456 + 1_111 * i,
                140_000_000_000_u64 + 977 * i as u64
            )
        }),
        ("./mvnw spring-boot:run", |i| {
            let pid = 23_456 + 41 * i;
            format!(
                "2026-12-07T00:{:02}:{:02}.{:03}Z  INFO {pid} --- [           main] com.shop.App : Starting App\n2026-12-07T00:{:02}:{:02}.{:03}Z ERROR {pid} --- [           main] o.s.boot.SpringApplication : Application run failed\norg.springframework.beans.factory.BeanCreationException: Error creating bean with name 'dataSource'",
                10 + i,
                (3 * i) % 60,
                (97 * i) % 1000,
                10 + i,
                (3 * i + 2) % 60,
                (61 * i) % 1000
            )
        }),
        ("npx vitest run", |i| {
            format!(
                " FAIL  src/sum.test.ts > adds\nAssertionError: expected 3 to be 4\n\n Test Files  1 failed (1)\n   Start at  00:{:02}:{:02}\n   Duration  {}ms (transform {}ms, setup 0ms, collect {}ms)",
                10 + i,
                (41 * i) % 60,
                400 + 13 * i,
                30 + i,
                70 + 3 * i
            )
        }),
        (
            "python -c 'import pandas as pd; pd.read_csv(\"data.csv\")[\"total\"].sum()'",
            |i| {
                format!(
                "KeyError                                  Traceback (most recent call last)\nCell In[{}], line 1\nFile /tmp/ipykernel_{}/{}.py:1\nKeyError: 'total'",
                3 + i,
                777 + i,
                2_345_678_901_u64 + 99_991 * i as u64
            )
            },
        ),
    ];
    for (command, output) in runs {
        let calls = repeated(8, "bash", json!({ "command": command }), output);
        steered_on_the_third_blocked_on_the_fifth(command, &calls);
    }
}

/// How five hosts answer a shell command, `output` being what it printed: Codex's header,
/// OpenHands' footer, Pi's and SWE-agent's note for a command that printed nothing, Gemini
/// CLI's report (whose process group id changes on every run).
fn host_answers(output: &str) -> [String; 5] {
    let silent = output.is_empty();
    [
        format!("Exit code: 0\nWall time: 0.{} seconds\nOutput:\n{output}", output.len() % 10),
        format!(
            "{output}\n[The command completed with exit code 0.]\n[Current working directory: /workspace/repo]"
        ),
        if silent { "(no output)".to_owned() } else { output.to_owned() },
        if silent {
            "Your command ran successfully and did not produce any output.".to_owned()
        } else {
            output.to_owned()
        },
        format!(
            "Command: (as called)\nDirectory: (root)\nOutput: {}\nError: (none)\nExit Code: {}\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: {}",
            if silent { "(empty)" } else { output },
            u8::from(!silent),
            40_000 + output.len() * 7
        ),
    ]
}

/// The `cd ..` climb of SWE-agent's jib-4144 run (a labelled hard negative: three identical
/// calls, each moving one directory up, with identical empty output), answered the way each
/// host answers a command that printed nothing: still no loop.
#[test]
fn climbing_directories_is_not_a_loop_whatever_the_host_writes_for_no_output() {
    for (h, answer) in host_answers("").iter().enumerate() {
        let calls = repeated(3, "cd", json!({"command": "cd .."}), |_| answer.clone());
        let f = findings(&format!("climb-{h}"), &calls);
        assert!(f.is_empty(), "host {h}: {f:?}");
    }
}

/// The same failing test run under each host's wrapper (Codex's wall time and Gemini CLI's
/// process group id change every run) is the same loop: steered at the 3rd identical
/// answer, blocked at the 5th call.
#[test]
fn a_repeated_failing_run_is_the_same_loop_under_every_hosts_wrapper() {
    let output = "FAILED tests/test_parse.py::test_sum - assert 4 == 3\n1 failed in 0.12s";
    for h in 0..5 {
        let calls = repeated(
            6,
            "bash",
            json!({"command": "pytest -q tests/test_parse.py"}),
            |i| {
                let a = host_answers(output)[h].clone();
                match h {
                    0 => a.replacen("Wall time: 0.", &format!("Wall time: {}.", i + 1), 1),
                    4 => a.replacen("PGID: 4", &format!("PGID: {}", 5 + i), 1),
                    _ => a,
                }
            },
        );
        steered_on_the_third_blocked_on_the_fifth(&format!("rerun-{h}"), &calls);
    }
}

/// A transcript whose results name no tool (a converter that writes only the id) is read as
/// one whose results do: each result is its call's, paired by id, and the report is the same.
#[test]
fn results_that_name_no_tool_give_the_same_report() {
    let calls = repeated(7, "read", json!({"path": "src/lib.rs"}), |_| {
        "pub fn add(a: i32, b: i32) -> i32 { a + b }".to_owned()
    });
    let with_tool = transcript(&calls);
    let without: String = with_tool
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if v["type"] == "tool_result" {
                v.as_object_mut().unwrap().remove("tool");
            }
            v.to_string() + "\n"
        })
        .collect();
    assert_ne!(with_tool, without);
    let a = scan_text("results-with-tool", &with_tool);
    let b = scan_text("results-without-tool", &without);
    assert_eq!(b.code, a.code, "{}", b.stderr);
    assert!(b.stderr.is_empty(), "{}", b.stderr);
    let sessions = |r: &Run| r.json()["sessions"][0]["findings"].clone();
    assert_eq!(sessions(&a), sessions(&b));
    assert!(!sessions(&a).as_array().unwrap().is_empty());
}
