//! Loops whose copies differ a little, through the `default` preset over the real detectors:
//! an error that echoes the rejected edit, a line number that drops each round, a count in a
//! harness nudge, a failing call with other calls between, sweeps that find nothing, a
//! three-call cycle; and three false alarms that must stay silent. Each loop must be caught at
//! or before its fifth copy. The trajectories are written for these tests in the style of
//! SWE-agent and mini-swe-agent sessions.
#![allow(clippy::unwrap_used)]

use loopguard_core::{Finding, Level, Origin, OwnedEvent};
use loopguard_orchestrator::Guard;
use loopguard_testkit::Script;
use proptest::prelude::*;
use serde_json::json;

use loopguard_detect_circuit_breaker as _;
use loopguard_detect_generic_repeat as _;
use loopguard_detect_known_poll as _;
use loopguard_detect_ping_pong as _;
use loopguard_detect_post_compaction as _;
use loopguard_detect_same_failure as _;
use loopguard_detect_stalled_turns as _;
use loopguard_detect_tail_periodicity as _;
use loopguard_detect_unknown_tool as _;
use loopguard_detect_variation_loop as _;

/// Every finding of preset `preset` over `events`, with the index of its event.
fn findings(preset: &str, events: &[OwnedEvent]) -> Vec<(usize, Finding)> {
    let mut g = Guard::builder().preset(preset).build().unwrap();
    let mut out = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let v = g.observe(&e.as_event());
        for f in v.findings() {
            out.push((i, f.clone()));
        }
    }
    out
}

/// Index of the last event so far (the one just pushed).
fn last(s: &Script) -> usize {
    s.events().len() - 1
}

/// The first finding of `detector` at or before event `by`; panics with every finding.
fn caught_by<'a>(found: &'a [(usize, Finding)], detector: &str, by: usize) -> &'a Finding {
    match found
        .iter()
        .find(|(i, f)| f.detector == detector && f.level >= Level::Warning && *i <= by)
    {
        Some((_, f)) => f,
        None => panic!(
            "no {detector} finding at or before event {by}; findings: {:#?}",
            found
                .iter()
                .map(|(i, f)| (i, f.detector, f.level, f.message.as_str()))
                .collect::<Vec<_>>()
        ),
    }
}

fn silent(found: &[(usize, Finding)], detector: &str) {
    let of: Vec<_> = found
        .iter()
        .filter(|(_, f)| f.detector == detector)
        .map(|(i, f)| (i, f.message.as_str()))
        .collect();
    assert!(of.is_empty(), "unexpected {detector} findings: {of:#?}");
}

fn task(s: &mut Script) {
    s.user_from(
        "<uploaded_files>\n/repo\n</uploaded_files>\nFix the issue described below so that the failing test passes.",
        Origin::Human,
    );
}

// ---- 1. a linter rejects the same edit, echoing it ------------------------------------------

const PY_FILE: &str = "/repo/astropy/io/fits/card.py";

fn py_rejection(new_str: &str, at: usize) -> String {
    let echoed: String = new_str
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{}:{l}\n", at + i))
        .collect();
    format!(
        "Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.\n\n\
         ERRORS:\n- E999 IndentationError: unexpected indent\n\n\
         This is how your edit would have looked if applied\n------------------------------------------------\n\
         [File: {PY_FILE} (1346 lines total)]\n({} more lines above)\n{}:    def _format_float(value):\n{echoed}{}:        return value_str\n({} more lines below)\n\
         ------------------------------------------------\n\n\
         This is the original code before your edit\n------------------------------------------------\n\
         [File: {PY_FILE} (1346 lines total)]\n({} more lines above)\n{}:    def _format_float(value):\n{}:        value_str = f\"{{value:.16G}}\"\n{}:        return value_str\n\
         ------------------------------------------------\n\
         Your changes have NOT been applied. Please fix your edit command and try again.\n\
         DO NOT re-run the same failed edit command. Running it again will lead to the same error.",
        at - 2,
        at - 1,
        at + new_str.lines().count(),
        1346 - at - 3,
        at - 2,
        at - 1,
        at,
        at + 1,
    )
}

/// The edit the model keeps resubmitting, with the small changes it makes between attempts.
fn py_edit(k: usize) -> String {
    let repr = ["str(value)", "repr(value)", "f\"{value}\"", "str(value) "][k % 4];
    let pad = " ".repeat(10 + k % 3);
    format!("{pad}value_str = {repr}\n{pad}if len(value_str) > 20:\n{pad}    value_str = f\"{{value:.16G}}\"")
}

fn linter_loop(copies: usize) -> (Vec<OwnedEvent>, Vec<usize>) {
    let mut s = Script::new();
    task(&mut s);
    let mut at = Vec::new();
    for k in 0..copies {
        s.message("The float formatting should use the shortest representation. Let me edit the function.");
        let new_str = py_edit(k);
        let args = json!({"command": "str_replace", "path": PY_FILE,
            "old_str": "        value_str = f\"{value:.16G}\"", "new_str": new_str});
        let id = s.tool_call("str_replace_editor", args);
        s.tool_result(
            &id,
            "str_replace_editor",
            &py_rejection(&new_str, 1300),
            false,
        );
        at.push(last(&s));
    }
    (s.into_events(), at)
}

#[test]
fn linter_rejections_echoing_the_edit_are_one_failure() {
    let (events, at) = linter_loop(21);
    let found = findings("default", &events);
    let f = caught_by(&found, "same-failure", at[4]);
    assert!(f.message.contains("str_replace_editor"), "{}", f.message);
    assert!(
        f.message.contains("in the last"),
        "the message says what was counted: {}",
        f.message
    );
}

// ---- 2. 46 rejected edits cycling among six variants ------------------------------------------

const JAVA_FILE: &str =
    "src/main/java/com/fasterxml/jackson/databind/deser/std/StdDeserializer.java";

fn java_variant(v: usize) -> String {
    let bodies = [
        "        if (p.hasToken(JsonToken.VALUE_NULL)) {\n            return null;\n        }",
        "        if (p.hasToken(JsonToken.VALUE_NULL))\n            return null;",
        "        if (p.currentToken() == JsonToken.VALUE_NULL) {\n            return null;\n        }",
        "        if (p.hasToken(JsonToken.VALUE_NULL)) {\n            return (T) null;\n        }",
        "        if (p.hasToken(JsonToken.VALUE_NULL)) {\n            return getNullValue(ctxt);\n        }",
        "        if (p.hasToken(JsonToken.VALUE_NULL)) { return null; }",
    ];
    bodies[v % bodies.len()].to_owned()
}

fn java_rejection(start: usize, body: &str) -> String {
    let echoed: String = body
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{}:{l}\n", start + i))
        .collect();
    format!(
        "Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.\n\n\
         ERRORS:\n- E999 SyntaxError: invalid syntax\n\n\
         This is how your edit would have looked if applied\n-------------------------------------------------\n\
         [File: /fasterxml__jackson-databind/{JAVA_FILE} (2187 lines total)]\n({} more lines above)\n{echoed}\
         -------------------------------------------------\n\n\
         This is the original code before your edit\n-------------------------------------------------\n\
         [File: /fasterxml__jackson-databind/{JAVA_FILE} (2187 lines total)]\n({} more lines above)\n{}:        JsonToken t = p.currentToken();\n\
         -------------------------------------------------\n\
         Your changes have NOT been applied. Please fix your edit command and try again.",
        start - 1,
        start - 1,
        start
    )
}

#[test]
fn rejected_edits_cycling_among_variants_are_one_failure() {
    let mut s = Script::new();
    task(&mut s);
    let mut at = Vec::new();
    for k in 0..46 {
        let start = 1410 + (k % 3);
        let body = java_variant(k);
        let cmd = format!("edit {start}:{}\n{body}\nend_of_edit", start + 2);
        let id = s.tool_call("edit", json!({ "command": cmd }));
        s.tool_result(&id, "edit", &java_rejection(start, &body), false);
        at.push(last(&s));
    }
    let found = findings("default", &s.into_events());
    let f = caught_by(&found, "same-failure", at[4]);
    assert!(f.message.contains("`edit`"), "{}", f.message);
}

// ---- 3. delete line N, re-insert at N, N dropping ------------------------------------------

const THOUGHT: &str = "THOUGHT: The duplicate closing brace is still there. I'll delete the line and re-insert the block at the right place.";

fn delete_insert_cycle(rounds: usize, first: usize) -> (Vec<OwnedEvent>, Vec<usize>) {
    let mut s = Script::new();
    task(&mut s);
    let mut round_starts = Vec::new();
    let file = "sympy/printing/latex.py";
    for r in 0..rounds {
        let n = first - r;
        s.message(THOUGHT);
        round_starts.push(s.events().len());
        let id = s.tool_call("bash", json!({"command": format!("sed -i '{n}d' {file}")}));
        s.tool_result(&id, "bash", "", false);
        s.message(THOUGHT);
        let cmd = format!(
            "sed -i '{n}i\\        if expr.is_Mul:\\n            return self._print_Mul(expr)' {file}"
        );
        let id = s.tool_call("bash", json!({ "command": cmd }));
        s.tool_result(&id, "bash", "", false);
    }
    (s.into_events(), round_starts)
}

#[test]
fn delete_and_reinsert_with_a_dropping_line_number_is_a_cycle() {
    let (events, rounds) = delete_insert_cycle(12, 412);
    let found = findings("default", &events);
    // Round 5's first call at the latest (the fifth copy of the cycle).
    let f = caught_by(&found, "ping-pong", rounds[4]);
    assert!(f.message.contains("numbers aside"), "{}", f.message);
}

// ---- 4. harness nudges that differ only in a count ------------------------------------------

fn nudge(n: usize) -> String {
    format!(
        "Please always provide EXACTLY ONE action in triple backticks, found {n} actions.\n\n\
         Please format your action in triple backticks as shown in <response_example>.\n\n\
         If you have completed your assignment, please consult the first message about how to submit your solution."
    )
}

fn nudge_loop(counts: &[usize]) -> (Vec<OwnedEvent>, Vec<usize>) {
    let mut s = Script::new();
    task(&mut s);
    let mut at = Vec::new();
    for (k, n) in counts.iter().enumerate() {
        let blocks: String = (0..*n)
            .map(|i| format!("```bash\ngrep -n \"def _eval_is_{k}_{i}\" sympy/core/mul.py\n```\n"))
            .collect();
        s.message(&format!(
            "THOUGHT: Let me look at several places at once.\n\n{blocks}"
        ));
        s.user_from(&nudge(*n), Origin::Unknown);
        at.push(last(&s));
    }
    (s.into_events(), at)
}

#[test]
fn harness_nudges_differing_in_a_count_are_one_stall() {
    let (events, at) = nudge_loop(&[3, 5, 7, 3, 5, 4, 6, 2]);
    let found = findings("default", &events);
    let f = caught_by(&found, "stalled-turns", at[4]);
    assert!(f.message.contains("numbers aside"), "{}", f.message);
}

// ---- 5. a failing open with ls / cd between ------------------------------------------

const MISSING: &str = "src/main/java/com/fasterxml/jackson/core/json/ReaderBasedJsonParser.java";

fn open_loop(copies: usize, fillers: &[&[(&str, &str)]]) -> (Vec<OwnedEvent>, Vec<usize>) {
    let mut s = Script::new();
    task(&mut s);
    let mut at = Vec::new();
    for k in 0..copies {
        s.call(
            "open",
            json!({ "path": MISSING }),
            &format!("File {MISSING} not found"),
        );
        at.push(last(&s));
        for (cmd, out) in fillers[k % fillers.len()] {
            s.call("bash", json!({ "command": cmd }), out);
        }
    }
    (s.into_events(), at)
}

const LS_OUT: &str = "JsonGenerator.java\nJsonParser.java\nJsonToken.java\njson\nsym\nutil";

#[test]
fn the_same_failing_open_with_other_calls_between_is_caught() {
    let (events, at) = open_loop(
        6,
        &[
            &[("ls src/main/java/com/fasterxml/jackson/core/", LS_OUT)],
            &[
                ("cd /fasterxml__jackson-core", ""),
                ("ls", "pom.xml\nsrc\ntarget"),
            ],
        ],
    );
    let found = findings("default", &events);
    let f = caught_by(&found, "same-failure", at[4]);
    assert!(f.message.contains("`open`"), "{}", f.message);
    assert!(f.message.contains("in the last"), "{}", f.message);
}

// ---- 6. empty find sweeps over sibling directories ------------------------------------------

const DIRS: &[&str] = &[
    "/",
    "/usr",
    "/usr/lib",
    "/usr/local",
    "/usr/share",
    "/usr/src",
    "/opt",
    "/home",
    "/root",
    "/var",
    "/srv",
    "/tmp",
    "/usr/lib/jvm",
    "/usr/local/lib",
    "/usr/share/java",
    "/opt/conda",
    "/home/user",
    "/var/lib",
    "/etc",
    "/mnt",
];

#[test]
fn empty_find_sweeps_over_sibling_directories_are_caught() {
    let mut s = Script::new();
    task(&mut s);
    let mut at = Vec::new();
    for k in 0..40 {
        let dir = DIRS[k % DIRS.len()];
        let cmd =
            format!("find {dir} -name \"ObjectMapper.java\" -path \"*databind*\" 2>/dev/null");
        s.call("bash", json!({ "command": cmd }), "");
        at.push(last(&s));
    }
    let found = findings("default", &s.into_events());
    let f = caught_by(&found, "generic-repeat", at[4]);
    assert!(f.message.contains("returned nothing"), "{}", f.message);
}

// ---- 7. an edit / clean-up / run cycle with the same output ------------------------------------------

const TEST_OUT: &str = "[INFO] Running com.fasterxml.jackson.databind.deser.TestNullHandling\n\
    [ERROR] Tests run: 12, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.412 s <<< FAILURE!\n\
    [ERROR] testNullForPrimitives(com.fasterxml.jackson.databind.deser.TestNullHandling)  Time elapsed: 0.031 s  <<< FAILURE!\n\
    junit.framework.AssertionFailedError: Expected an exception\n\
    \tat com.fasterxml.jackson.databind.deser.TestNullHandling.testNullForPrimitives(TestNullHandling.java:88)\n\
    [INFO] BUILD FAILURE";

fn edit_result(at: usize) -> String {
    format!(
        "[File: /fasterxml__jackson-databind/{JAVA_FILE} (2188 lines total)]\n({} more lines above)\n{at}:        if (p.hasToken(JsonToken.VALUE_NULL)) {{\n{}:            return getNullValue(ctxt);\n{}:        }}\n\
         File updated. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.",
        at - 1,
        at + 1,
        at + 2
    )
}

#[test]
fn an_edit_cleanup_run_cycle_with_the_same_output_is_caught() {
    let mut s = Script::new();
    task(&mut s);
    let mut rounds = Vec::new();
    for r in 0..4 {
        let at = 1411 + r;
        rounds.push(s.events().len());
        let cmd = format!(
            "edit {at}:{}\n        if (p.hasToken(JsonToken.VALUE_NULL)) {{\n            return getNullValue(ctxt);\n        }}\nend_of_edit",
            at + 2
        );
        s.call("edit", json!({ "command": cmd }), &edit_result(at));
        s.call(
            "bash",
            json!({"command": "rm -rf target/surefire-reports target/test-classes"}),
            "",
        );
        s.call(
            "bash",
            json!({"command": "mvn -q test -Dtest=TestNullHandling 2>&1 | tail -20"}),
            &TEST_OUT.replace("0.412", &format!("0.4{}", 10 + r)),
        );
    }
    // The fifth round would start here: it must have been warned by then.
    rounds.push(s.events().len());
    let found = findings("default", &s.into_events());
    let f = caught_by(&found, "ping-pong", rounds[4]);
    assert!(f.message.contains("3 tool calls"), "{}", f.message);
}

// ---- real-world shapes from peers ------------------------------------------

/// hermes-agent: one shell command in three phrasings, cycled, its output drifting back and
/// forth, never two identical consecutive calls.
fn hermes(rounds: usize, drift: impl Fn(usize) -> usize) -> Vec<OwnedEvent> {
    let phrasings = [
        "cd /workspace && python3 scripts/sync_check.py --verify",
        "python3 /workspace/scripts/sync_check.py --verify",
        "cd /workspace; python3 scripts/sync_check.py --verify 2>&1",
    ];
    let mut s = Script::new();
    task(&mut s);
    for k in 0..rounds {
        let n = drift(k);
        let out = format!(
            "checking 47 targets\nCHANGED:{n}/{n}\nsync incomplete: {n} targets differ from the manifest"
        );
        s.call("terminal", json!({ "command": phrasings[k % 3] }), &out);
    }
    s.into_events()
}

#[test]
fn hermes_agent_shape_drifting_output_is_caught() {
    // 47, 45, 46, 47, 45, 46, ...: the output changes every time but goes nowhere.
    let events = hermes(209, |k| [47, 45, 46][k % 3]);
    let found = findings("default", &events);
    let first = found
        .iter()
        .find(|(_, f)| f.level >= Level::Warning)
        .map(|(i, f)| (*i, f.detector));
    let (i, _) = first.expect("the drifting loop is caught");
    // Caught within the first 20 of the 209 calls (each call is 4 events after the task).
    assert!(i < 1 + 4 * 20, "caught late: {first:?}");
}

#[test]
fn hermes_agent_shape_with_steady_progress_is_not_a_loop() {
    // The same command phrasings, but the number of differing targets falls every call.
    let events = hermes(40, |k| 47 - k);
    let found = findings("default", &events);
    for det in ["generic-repeat", "ping-pong", "same-failure"] {
        silent(&found, det);
    }
}

/// dmtools-agents: one throwaway word changed in every call, the same answer every time.
#[test]
fn dmtools_shape_throwaway_word_is_caught() {
    let words = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
        "juliet", "kilo", "lima",
    ];
    let mut s = Script::new();
    task(&mut s);
    let mut at = Vec::new();
    for w in words {
        let q = format!(
            "find the ticket describing the login timeout regression in the auth service {w}"
        );
        s.call(
            "jira_search",
            json!({ "jql": q, "max_results": 20 }),
            "{\"total\": 0, \"issues\": []}",
        );
        at.push(last(&s));
    }
    let found = findings("default", &s.into_events());
    // Results that are not empty warn on the 6th alike call.
    caught_by(&found, "generic-repeat", at[5]);
}

// ---- the three false alarms ------------------------------------------

/// Two jobs polled in parallel, each round, their progress advancing.
fn parallel_polls(rounds: usize) -> Vec<OwnedEvent> {
    let mut s = Script::new();
    task(&mut s);
    for r in 0..rounds {
        let a = format!(
            "job build-linux: running, {}% complete, {} of 212 steps",
            4 * r + 3,
            8 * r + 5
        );
        let b = format!(
            "job build-macos: running, {}% complete, {} of 198 steps",
            3 * r + 2,
            6 * r + 4
        );
        s.batch(&[
            ("job_status", json!({"job": "build-linux"}), a.as_str()),
            ("job_status", json!({"job": "build-macos"}), b.as_str()),
        ]);
    }
    s.into_events()
}

#[test]
fn parallel_polls_whose_results_progress_are_no_ping_pong() {
    let events = parallel_polls(20);
    silent(&findings("default", &events), "ping-pong");
    // The openclaw preset keeps OpenClaw's results-blind warning.
    let oc = findings("openclaw", &events);
    assert!(
        oc.iter()
            .any(|(_, f)| f.detector == "ping-pong" && f.message.contains("alternating")),
        "openclaw keeps its alternation warning"
    );
}

#[test]
fn a_listing_naming_an_exception_class_is_not_a_failure() {
    let mut s = Script::new();
    task(&mut s);
    let listing = "Found 4 matches for \"MismatchedInputException\" in /fasterxml__jackson-databind:\n\
        /fasterxml__jackson-databind/src/main/java/com/fasterxml/jackson/databind/exc/MismatchedInputException.java (3 matches)\n\
        /fasterxml__jackson-databind/src/test/java/com/fasterxml/jackson/databind/exc/TestExceptionHandling.java (1 matches)\n\
        End of matches for \"MismatchedInputException\" in /fasterxml__jackson-databind";
    for k in 0..10 {
        s.call(
            "search_dir",
            json!({"search_term": "MismatchedInputException", "dir": format!("src/{}", ["main", "test"][k % 2])}),
            listing,
        );
        s.call(
            "goto",
            json!({ "line_number": 120 + 40 * k }),
            &format!("[File: MismatchedInputException.java (212 lines total)]\n({} more lines above)\n{}:    public static MismatchedInputException from(JsonParser p, JavaType targetType, String msg) {{", 119 + 40 * k, 120 + 40 * k),
        );
    }
    silent(&findings("default", &s.into_events()), "same-failure");
}

#[test]
fn a_javac_retried_between_path_changes_is_counted_in_the_last_calls() {
    let mut s = Script::new();
    task(&mut s);
    let err = "bash: javac: command not found";
    for path in [
        "/usr/lib/jvm/java-11/bin",
        "/opt/jdk/bin",
        "/usr/local/java/bin",
    ] {
        s.call(
            "bash",
            json!({"command": "javac -d out src/Main.java"}),
            err,
        );
        s.call(
            "bash",
            json!({ "command": format!("export PATH={path}:$PATH") }),
            "",
        );
    }
    let found = findings("default", &s.into_events());
    let f = caught_by(&found, "generic-repeat", usize::MAX);
    assert!(
        f.message.contains("3 times in the last 5 calls"),
        "{}",
        f.message
    );
    assert!(!f.message.contains("in a row"), "{}", f.message);
}

#[test]
fn searches_that_find_nothing_are_no_failures() {
    let mut s = Script::new();
    task(&mut s);
    for pat in [
        "console.error",
        "console\\.",
        "console",
        "Detected truecolor",
    ] {
        s.call_with(
            "bash",
            json!({ "command": format!("grep -n \"{pat}\" packages/coding-agent/src/theme/theme.ts") }),
            "Command exited with code 1",
            true,
        );
    }
    silent(&findings("default", &s.into_events()), "same-failure");
}

#[test]
fn a_tool_that_succeeds_between_its_failures_is_getting_somewhere() {
    let mut s = Script::new();
    task(&mut s);
    let file = "/workspace/ponyc/src/libponyc/expr/match.c";
    let ambiguous = "ERROR:\nNo replacement was performed. Multiple occurrences of old_str `return pattern_type;` in lines [317, 449]. Please ensure it is unique.";
    for k in 0..4 {
        s.call(
            "str_replace_editor",
            json!({"command": "str_replace", "path": file, "old_str": "return pattern_type;",
                   "new_str": format!("if(ast_id(pattern_type) == TK_ISO) {k}\nreturn pattern_type;")}),
            ambiguous,
        );
        s.call(
            "str_replace_editor",
            json!({"command": "insert", "path": file, "insert_line": 317 + k, "new_str": "  // checked"}),
            &format!("The file {file} has been edited. Here's the result of running `cat -n` on a snippet of the edited file:\n   {}\t  // checked", 318 + k),
        );
    }
    silent(&findings("default", &s.into_events()), "same-failure");
}

// ---- properties ------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Shape 1: whichever variants of the edit are resubmitted, the 5th rejection is caught.
    #[test]
    fn prop_echoed_rejections_are_caught(seed in 0usize..1000, at in 40usize..1300) {
        let mut s = Script::new();
        task(&mut s);
        let mut last_at = 0;
        for k in 0..5 {
            let new_str = py_edit(seed + k * 7);
            let args = json!({"command": "str_replace", "path": PY_FILE,
                "old_str": "        value_str = f\"{value:.16G}\"", "new_str": new_str});
            let id = s.tool_call("str_replace_editor", args);
            s.tool_result(&id, "str_replace_editor", &py_rejection(&new_str, at + k % 2), false);
            last_at = last(&s);
        }
        let found = findings("default", &s.into_events());
        prop_assert!(found.iter().any(|(i, f)| f.detector == "same-failure" && *i <= last_at));
    }

    /// Shape 2 (progress): similar calls whose failure count falls steadily never warn (the
    /// count stays positive: at most 11 steps of 4 below a start of at least 45).
    #[test]
    fn prop_falling_counts_are_progress(start in 45usize..200, step in 1usize..5, n in 4usize..12) {
        let mut s = Script::new();
        task(&mut s);
        for k in 0..n {
            let left = start - k * step;
            s.call(
                "bash",
                json!({"command": format!("python -m pytest tests/test_io.py -x -q -k case{k}")}),
                &format!("{left} failed, {} passed in 1.2s", 300 - left),
            );
        }
        let found = findings("default", &s.into_events());
        prop_assert!(!found.iter().any(|(_, f)| f.key.starts_with("similar:")));
    }

    /// Shape 3 (gaps): any other calls between (up to 3, any of them) do not hide the 4th
    /// identical failure.
    #[test]
    fn prop_failures_across_gaps(gaps in proptest::collection::vec(0usize..3, 4)) {
        let mut s = Script::new();
        task(&mut s);
        let mut fourth = 0;
        for (k, g) in gaps.iter().enumerate() {
            s.call("open", json!({ "path": MISSING }), &format!("File {MISSING} not found"));
            if k == 3 {
                fourth = last(&s);
            }
            for j in 0..*g {
                s.call("bash", json!({"command": format!("ls src/main/java/{j}")}), LS_OUT);
            }
        }
        let found = findings("default", &s.into_events());
        prop_assert!(found.iter().any(|(i, f)| f.detector == "same-failure" && *i <= fourth));
    }

    /// Shape 4: whatever line the cycle starts at, it is caught by its fifth round.
    #[test]
    fn prop_drifting_cycles_are_caught(first in 50usize..5000) {
        let (events, rounds) = delete_insert_cycle(6, first);
        let found = findings("default", &events);
        prop_assert!(found.iter().any(|(i, f)| f.detector == "ping-pong" && *i <= rounds[4]));
    }

    /// Shape 5: whatever the counts in the nudge, the stall is caught by the 5th nudge.
    #[test]
    fn prop_nudges_with_any_counts(counts in proptest::collection::vec(2usize..12, 5)) {
        let (events, at) = nudge_loop(&counts);
        let found = findings("default", &events);
        prop_assert!(found.iter().any(|(i, f)| f.detector == "stalled-turns" && *i <= at[4]));
    }

    /// False alarm 1: parallel polls that progress never get a ping-pong finding, for any
    /// number of rounds.
    #[test]
    fn prop_progressing_polls_are_silent(rounds in 2usize..25) {
        let found = findings("default", &parallel_polls(rounds));
        prop_assert!(!found.iter().any(|(_, f)| f.detector == "ping-pong"));
    }

    /// False alarm 2: a search listing whose lines name any exception class is no failure.
    #[test]
    fn prop_listings_are_not_failures(name in "[A-Z][a-z]{3,10}(Exception|Error)", n in 4usize..10) {
        let mut s = Script::new();
        task(&mut s);
        for k in 0..n {
            let out = format!("Found {} matches for \"{name}\" in /repo:\n/repo/src/main/java/{name}.java\n/repo/src/test/java/{name}Test.java", k + 2);
            s.call("search_dir", json!({"search_term": name, "dir": format!("src{k}")}), &out);
            s.call("bash", json!({"command": "git status --short"}), " M pom.xml");
        }
        let found = findings("default", &s.into_events());
        prop_assert!(!found.iter().any(|(_, f)| f.detector == "same-failure"));
    }
}

// ---- false alarm: numbered objects visited one by one ------------------------------------

/// Listing `shard00` … `shard29` one after another, each answering with its own files, is
/// work, not a loop, although the calls and the answers differ only in their numbers.
#[test]
fn visiting_numbered_directories_one_by_one_is_no_loop() {
    let mut s = Script::new();
    task(&mut s);
    for i in 0..30 {
        s.call(
            "bash",
            json!({ "command": format!("ls data/shard{i:02}") }),
            &format!("part-{i:02}-0000.parquet\npart-{i:02}-0001.parquet\n_SUCCESS\n"),
        );
    }
    let found = findings("default", s.events());
    assert!(found.is_empty(), "{found:#?}");
}

// ---- an exact re-run whose answer differs only in process numbers --------------------------

/// The same script run again and again, killed for memory every time: the pid and the memory
/// figures change at each run (they go up and down, never steadily), the rest is the same.
fn oom_reruns(runs: usize) -> (Vec<OwnedEvent>, Vec<usize>) {
    let mut s = Script::new();
    task(&mut s);
    let mut ends = Vec::new();
    let mut x: u64 = 7;
    let mut next = move |m: u64| {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) % m
    };
    for _ in 0..runs {
        let out = format!(
            "Killed process {} (python3) total-vm:{}kB, anon-rss:{}kB, file-rss:{}kB\nOut of memory",
            1000 + next(30_000),
            200_000 + next(400_000),
            1_000 + next(9_000),
            100 + next(900),
        );
        s.call(
            "bash",
            json!({ "command": "./scripts/train.sh --epochs 3" }),
            &out,
        );
        ends.push(last(&s));
    }
    (s.into_events(), ends)
}

#[test]
fn the_same_run_killed_for_memory_each_time_is_caught() {
    let (events, ends) = oom_reruns(10);
    let found = findings("default", &events);
    // A warning by the 7th run: the answers differ only in their numbers, which go nowhere
    // (the first change of a number may still be progress; the 2nd run starts the streak).
    let f = caught_by(&found, "generic-repeat", ends[6]);
    assert_eq!(f.level, Level::Warning);
    assert!(
        f.message.contains("nearly the same arguments"),
        "{}",
        f.message
    );
}

#[test]
fn the_same_run_whose_numbers_move_steadily_is_progress() {
    let mut s = Script::new();
    task(&mut s);
    for k in 0..10 {
        let out = format!(
            "epoch {k}: loss {}\ncheckpoint saved to runs/{}",
            900 - 37 * k,
            100 + k
        );
        s.call(
            "bash",
            json!({ "command": "./scripts/train.sh --resume" }),
            &out,
        );
    }
    let found = findings("default", s.events());
    silent(&found, "generic-repeat");
}

/// `docker build` failing the same way at every run: BuildKit stamps each line with the
/// seconds since its step started, so no two answers are equal byte for byte.
#[test]
fn the_same_failing_docker_build_is_blocked_on_the_fifth_run() {
    let mut s = Script::new();
    task(&mut s);
    let mut ends = Vec::new();
    for k in 0..6u32 {
        let t = |base: u32| format!("{}.{:03}", base + k % 3, (k * 317 + base * 71) % 1000);
        let out = format!(
            "#5 [3/5] RUN pip install -r requirements.txt\n\
             #5 {} Collecting flask==3.0.0\n\
             #5 {} ERROR: Could not find a version that satisfies the requirement torch==2.9.9\n\
             #5 ERROR: process \"/bin/sh -c pip install -r requirements.txt\" did not complete successfully: exit code: 1\n\
             #6 DONE {}s\n\
             ERROR: failed to solve: process \"/bin/sh -c pip install -r requirements.txt\" did not complete successfully: exit code: 1",
            t(0),
            t(2),
            t(1),
        );
        s.call("bash", json!({ "command": "docker build -t app ." }), &out);
        ends.push(last(&s));
    }
    let found = findings("default", s.events());
    let warned = caught_by(&found, "generic-repeat", ends[2]);
    assert_eq!(warned.level, Level::Warning);
    let blocked = found
        .iter()
        .find(|(_, f)| f.detector == "generic-repeat" && f.level == Level::Critical)
        .map(|(i, _)| *i);
    assert!(
        blocked.is_some_and(|i| i <= ends[4]),
        "blocked at {blocked:?}, 5th run ends at {}",
        ends[4]
    );
}

// ---- false alarm: a family of pages read in turn ------------------------------------------

/// Reading the documentation of each variant of an intrinsic in turn: for each lane type, its
/// merging, don't-care and zeroing forms (`svabd_n_s16_m`, `_x`, `_z`). The calls go round
/// the three forms and each answer differs from the last one's of that form only in its
/// numbers (the lane width, which goes 8, 16, 32, 64 and back to 8 for the unsigned types):
/// another page each time, not a cycle.
#[test]
fn reading_a_family_of_numbered_pages_in_turn_is_no_cycle() {
    let mut s = Script::new();
    task(&mut s);
    for sign in ["s", "u"] {
        for bits in [8, 16, 32, 64] {
            for (form, what) in [
                ("m", "inactive lanes take the first operand"),
                ("x", "inactive lanes are left undefined"),
                ("z", "inactive lanes are set to zero"),
            ] {
                let name = format!("svabd_n_{sign}{bits}_{form}");
                let page = format!(
                    "core::arch::aarch64\nFunction {name}\n\npub unsafe fn {name}(pg: svbool_t, op1: sv{sign}int{bits}_t, op2: {sign}{bits}) -> sv{sign}int{bits}_t\n\nAvailable on target feature sve only.\n\nAbsolute difference ({what}).\nArm's documentation\n"
                );
                s.call(
                    "read",
                    json!({ "path": format!("doc/rust/html/core/arch/aarch64/fn.{name}.html") }),
                    &page,
                );
            }
        }
    }
    let found = findings("default", s.events());
    silent(&found, "ping-pong");
}

proptest::proptest! {
    /// Whatever the family (its numbers, each once, rising or falling; two to five forms of
    /// each), reading its pages in turn is no cycle.
    #[test]
    fn prop_sweeps_over_numbered_families_are_silent(
        numbers in proptest::collection::btree_set(1u32..200, 3..12),
        falling in proptest::bool::ANY,
        forms in 2usize..6,
    ) {
        let mut numbers: Vec<u32> = numbers.into_iter().collect();
        if falling {
            numbers.reverse();
        }
        let mut s = Script::new();
        task(&mut s);
        for n in &numbers {
            for f in 0..forms {
                let form = ["a", "b", "c", "d", "e"][f];
                s.call(
                    "read",
                    json!({ "path": format!("docs/api/item_{n}_{form}.md") }),
                    &format!("# item {n} ({form})\n\nReturns the {n}th entry of table {form}; fails past {n}.\n"),
                );
            }
        }
        let found = findings("default", s.events());
        proptest::prop_assert!(!found.iter().any(|(_, f)| f.detector == "ping-pong"), "{:?}", found);
    }
}

// ---- false alarm: one check run over each file in turn ------------------------------------

/// Modules of Python's standard library and how many `def ` lines each holds.
const DEF_COUNTS: [(&str, u32); 18] = [
    ("argparse", 118),
    ("base64", 31),
    ("bisect", 4),
    ("calendar", 62),
    ("csv", 15),
    ("dataclasses", 58),
    ("difflib", 44),
    ("fractions", 57),
    ("gettext", 41),
    ("heapq", 17),
    ("ipaddress", 139),
    ("json/decoder", 12),
    ("locale", 30),
    ("pathlib", 121),
    ("shlex", 16),
    ("statistics", 49),
    ("textwrap", 13),
    ("zipfile", 116),
];

/// Counting the functions of each module of a package, one module after another: the calls
/// differ in the file they name, the answers in their counts. Each call addresses another
/// object and gets its own answer: a sweep, not a loop (a loop repeats a call, as phrasings
/// taken in turn do, or an answer, as a search with a throwaway word changed does).
#[test]
fn a_count_taken_over_each_file_in_turn_is_no_loop() {
    let mut s = Script::new();
    task(&mut s);
    for (m, n) in DEF_COUNTS {
        s.call(
            "bash",
            json!({ "command": format!("grep -c 'def ' /usr/lib/python3.11/{m}.py") }),
            &format!("{n}\n"),
        );
    }
    let found = findings("default", s.events());
    assert!(found.is_empty(), "{found:#?}");
}

/// One check run over each file in turn whose answers agree: `test -f F && echo exists`,
/// `grep -q P F; echo $?`, a reader of each file answering `ok`. Every call names a path no
/// earlier call named and gets an answer that is not a failure: a sweep over objects, not a
/// loop, even though the answers are identical.
#[test]
fn one_check_over_each_file_answered_the_same_is_no_loop() {
    let crates = [
        "anyhow-1.0.98",
        "bitflags-2.9.1",
        "bytes-1.10.1",
        "cfg-if-1.0.1",
        "either-1.15.0",
        "hashbrown-0.15.4",
        "itoa-1.0.15",
        "libc-0.2.174",
        "memchr-2.7.5",
        "once_cell-1.21.3",
        "proc-macro2-1.0.95",
        "quote-1.0.40",
        "ryu-1.0.20",
        "serde-1.0.219",
    ];
    type Check = (&'static str, fn(&str) -> String, &'static str);
    let checks: [Check; 3] = [
        (
            "bash",
            |c| {
                format!(
                    "test -f ~/.cargo/registry/src/index.crates.io/{c}/src/lib.rs && echo exists"
                )
            },
            "exists\n",
        ),
        (
            "bash",
            |c| {
                format!("grep -q 'unsafe' ~/.cargo/registry/src/index.crates.io/{c}/src/lib.rs; echo $?")
            },
            "0\n",
        ),
        (
            "check_manifest",
            |c| format!("vendor/{c}/Cargo.toml"),
            "ok: manifest is valid",
        ),
    ];
    for (tool, call, answer) in checks {
        let mut s = Script::new();
        task(&mut s);
        for c in crates {
            let args = if tool == "bash" {
                json!({ "command": call(c) })
            } else {
                json!({ "path": call(c) })
            };
            s.call(tool, args, answer);
        }
        let found = findings("default", s.events());
        assert!(found.is_empty(), "{tool}: {found:#?}");
    }
}

/// A silent check run over each file in turn (`python3 -m py_compile F`, `rustfmt --check F`
/// answer nothing when the file is fine): each call names a new path and nothing is a
/// success here, so the sweep is no loop. A call that looks for something and finds nothing,
/// path after path (`ls /opt/*/include/ssl.h`, `find D -name X`), is still one.
#[test]
fn a_silent_check_over_each_file_is_no_loop_but_a_silent_probe_is() {
    let mut s = Script::new();
    task(&mut s);
    for (m, _) in DEF_COUNTS {
        s.call(
            "bash",
            json!({ "command": format!("python3 -m py_compile /usr/lib/python3.11/{m}.py") }),
            "",
        );
    }
    let found = findings("default", s.events());
    assert!(found.is_empty(), "{found:#?}");

    let dirs = [
        "/opt/openssl",
        "/opt/ssl",
        "/usr/local/ssl",
        "/usr/local/openssl",
        "/srv/openssl",
        "/home/dev/openssl",
        "/opt/homebrew/openssl",
        "/usr/lib/ssl",
    ];
    let (found, at) = probe_each(
        &dirs,
        |d| format!("ls {d}/include/openssl/ssl.h 2>/dev/null"),
        |_| String::new(),
    );
    caught_by(&found, "generic-repeat", at[3]);
}

/// One `bash` call per directory of `dirs` (`command(dir)`, answered `answer(dir)`) after
/// the task: the default preset's findings, and the index of each call's result.
fn probe_each(
    dirs: &[&str],
    command: impl Fn(&str) -> String,
    answer: impl Fn(&str) -> String,
) -> (Vec<(usize, Finding)>, Vec<usize>) {
    let mut s = Script::new();
    task(&mut s);
    let mut at = Vec::new();
    for d in dirs {
        s.call("bash", json!({ "command": command(d) }), &answer(d));
        at.push(last(&s));
    }
    (findings("default", s.events()), at)
}

/// Probing one path after another for a file that is not there: each call names a new path,
/// but a failure learns nothing, so the probe is still a loop (it was not seen at all while
/// the path the failure quotes made each failure another).
#[test]
fn probing_path_after_path_into_the_same_failure_is_still_a_loop() {
    let dirs = [
        "/usr/include",
        "/usr/local/include",
        "/opt/include",
        "/usr/include/x86_64-linux-gnu",
        "/usr/lib/gcc/x86_64-linux-gnu/12/include",
        "/usr/share/include",
        "/home/dev/include",
        "/srv/include",
        "/var/include",
    ];
    let (found, at) = probe_each(
        &dirs,
        |d| format!("cat {d}/openssl/ssl.h | head -20"),
        |d| format!("cat: {d}/openssl/ssl.h: No such file or directory"),
    );
    // The failure echoes the path each call names: with it cut out, it is one failure,
    // recurring from the fourth.
    caught_by(&found, "same-failure", at[3]);
}

/// The hermes-agent shape with four phrasings and four drifting outputs: no call and no
/// answer repeats within three calls, but both come back within the rule's memory, so the
/// loop is still caught.
#[test]
fn four_phrasings_with_drifting_output_are_still_a_loop() {
    let phrasings = [
        "cd /workspace && python3 scripts/sync_check.py --verify",
        "python3 /workspace/scripts/sync_check.py --verify",
        "cd /workspace; python3 scripts/sync_check.py --verify 2>&1",
        "cd /workspace && ./scripts/sync_check.py --verify",
    ];
    let mut s = Script::new();
    task(&mut s);
    let mut at = Vec::new();
    for k in 0..40 {
        let n = [47, 45, 46, 44][k % 4];
        let out = format!(
            "checking 47 targets\nCHANGED:{n}/{n}\nsync incomplete: {n} targets differ from the manifest"
        );
        s.call("terminal", json!({ "command": phrasings[k % 4] }), &out);
        at.push(last(&s));
    }
    let found = findings("default", s.events());
    caught_by(&found, "generic-repeat", at[12]);
}

/// Searching for one word after another, each answered that nothing matches it: the answers
/// differ only in the word they echo, so the calls are a loop, not a sweep over objects.
#[test]
fn searches_answered_nothing_matches_for_each_word_are_still_a_loop() {
    let words = [
        "retryPolicy",
        "retry_policy",
        "RetryPolicy",
        "retries",
        "maxRetries",
        "max_retries",
        "backoff",
        "retryDelay",
        "retry_delay",
    ];
    let mut s = Script::new();
    task(&mut s);
    let mut at = Vec::new();
    for w in words {
        s.call(
            "search_dir",
            json!({ "search_term": w, "dir": "/repo/src/client/http/retry/policies" }),
            &format!("No matches found for \"{w}\" in /repo/src/client/http/retry/policies"),
        );
        at.push(last(&s));
    }
    let found = findings("default", s.events());
    caught_by(&found, "generic-repeat", at[5]);
}

/// The same deployment request sent again and again, refused the same way each time: a
/// request that sends something is no poll, so the repeat is blocked by its fifth call (a
/// status asked for again keeps the polling thresholds).
#[test]
fn the_same_refused_post_is_blocked_by_the_fifth_call() {
    let run = |command: &str| {
        let mut s = Script::new();
        task(&mut s);
        let mut ends = Vec::new();
        for _ in 0..8 {
            s.call(
                "bash",
                json!({ "command": command }),
                "{\"error\": \"invalid_request\", \"message\": \"field 'ref' must name a branch\"}",
            );
            ends.push(last(&s));
        }
        let found = findings("default", s.events());
        let blocked = found
            .iter()
            .find(|(_, f)| f.level == Level::Critical)
            .map(|(i, _)| *i);
        (blocked, ends)
    };
    let (blocked, ends) = run(
        "curl -s -X POST https://api.example.com/v1/deploy -H 'Content-Type: application/json' -d '{\"ref\": \"v1.2\"}'",
    );
    assert!(blocked.is_some_and(|i| i <= ends[4]), "{blocked:?}");
    let (blocked, _) = run("curl -s https://api.example.com/v1/deploy/status");
    assert_eq!(blocked, None, "a status asked for again is a poll");
}

// ---- a failure printed the same by a command written many ways ----------------------------

/// One traceback, printed word for word the same, by a command written many ways: some name
/// the project's folder or the script's full path, which the traceback prints too, so what
/// is cut from the error as the call's echo differs from call to call. Python prints
/// `/srv/app/./app.py` for `./app.py`: that one is another text, and the run starts after it.
#[test]
fn one_traceback_from_a_command_written_many_ways_is_one_run() {
    let traceback = |script: &str| {
        format!(
            "Traceback (most recent call last):\n  File \"{script}\", line 3, in <module>\n    settings = load_settings(\"settings.toml\")\n               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File \"/srv/app/config.py\", line 5, in load_settings\n    return data[\"server\"][\"port\"]\n           ~~~~~~~~~~~~~~^^^^^^^^\nKeyError: 'port'\n\n[exit code 1]"
        )
    };
    let commands = [
        "python3 ./app.py",
        "cd /srv/app && python3 app.py",
        "python3 -u app.py",
        "bash -c 'python3 app.py'",
        "PYTHONPATH=. python3 app.py",
        "python3 app.py 2>&1",
        "python3 -X dev app.py",
        "env python3 app.py",
        "python3 /srv/app/app.py",
    ];
    let mut s = Script::new();
    task(&mut s);
    let mut at = Vec::new();
    for c in commands {
        let script = if c.contains("./app.py") {
            "/srv/app/./app.py"
        } else {
            "/srv/app/app.py"
        };
        let id = s.tool_call("bash", json!({ "command": c }));
        s.tool_result(&id, "bash", &traceback(script), true);
        at.push(last(&s));
    }
    let found = findings("default", &s.into_events());
    // The eight calls after the first are one run: warned at its eighth failure.
    assert!(
        found.iter().any(|(i, f)| f.detector == "same-failure"
            && *i <= at[8]
            && f.message.contains("8 times in a row")),
        "{found:?}"
    );
}

// ---- the same search said in other words after its warning ------------------------------------------

const GREP_OUT: &str = "<returncode>0</returncode>\n<output>\n\
    143:def _read_u32(file):\n\
    167:    nchannels = _read_u32(file)\n\
    171:        self._framerate = _read_u32(file)\n\
    174:        self._nframes = _read_u32(file)\n\
    </output>";

/// The agent spells one search four ways, `copies` times, and gets the same lines each time.
fn respelled_search(copies: usize) -> (Vec<OwnedEvent>, Vec<usize>) {
    let spellings = [
        "grep -n '_read_u32' sunau.py",
        "grep -n \"_read_u32\" sunau.py",
        "grep -n _read_u32 sunau.py",
        "grep -n -e '_read_u32' sunau.py",
    ];
    let mut s = Script::new();
    task(&mut s);
    let mut at = Vec::new();
    for k in 0..copies {
        s.message("THOUGHT: I need to look at where the frame count is read to find the overflow.");
        s.call(
            "bash",
            json!({ "command": spellings[k % spellings.len()] }),
            GREP_OUT,
        );
        at.push(last(&s));
    }
    (s.into_events(), at)
}

#[test]
fn the_same_search_in_other_words_is_blocked_six_calls_after_its_warning() {
    let (events, at) = respelled_search(14);
    let found = findings("default", &events);
    caught_by(&found, "generic-repeat", at[5]);
    let blocks: Vec<usize> = found
        .iter()
        .filter(|(_, f)| f.detector == "generic-repeat" && f.level == Level::Critical)
        .map(|(i, _)| *i)
        .collect();
    // Each copy is a call and its result: the 12th call is the one before its result.
    let twelfth_call = at[11] - 1;
    assert_eq!(blocks.first(), Some(&twelfth_call), "{found:#?}");
    let f = &found.iter().find(|(i, _)| *i == twelfth_call).unwrap().1;
    assert!(f.key.starts_with("similar:"), "{}", f.key);
    assert!(f.message.contains("after a warning"), "{}", f.message);
}

#[test]
fn a_search_that_finds_nothing_over_one_directory_after_another_is_never_blocked() {
    let mut s = Script::new();
    task(&mut s);
    let mut at = Vec::new();
    for k in 0..30 {
        let cmd = format!("grep -rn 'configureWidgetCache' {}", DIRS[k % DIRS.len()]);
        s.call("bash", json!({ "command": cmd }), "");
        at.push(last(&s));
    }
    let found = findings("default", &s.into_events());
    let f = caught_by(&found, "generic-repeat", at[5]);
    assert!(f.message.contains("returned nothing"), "{}", f.message);
    let similar_blocks: Vec<_> = found
        .iter()
        .filter(|(_, f)| f.key.starts_with("similar:") && f.level >= Level::Critical)
        .collect();
    assert!(similar_blocks.is_empty(), "{similar_blocks:#?}");
}

// ---- a window drifting over one place ------------------------------------------------------

/// Lines `from..=to` (1-based) of `lines`, as `sed -n 'FROM,TOp'` prints them.
fn sed_window(lines: &[String], from: usize, to: usize) -> String {
    lines[from - 1..to]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The agent reads lines S..S+40 of one file again and again, S moving by a line or two
/// around 100: `copies` reads, as mini-swe-agent prints them.
fn drifting_window(copies: usize) -> (Vec<OwnedEvent>, Vec<usize>) {
    let lines = loopguard_testkit::texts::settings_module_lines();
    let starts = [
        99, 101, 98, 102, 100, 99, 101, 98, 100, 102, 101, 99, 98, 100,
    ];
    let mut s = Script::new();
    task(&mut s);
    let mut at = Vec::new();
    for k in 0..copies {
        let from = starts[k % starts.len()];
        let shown = sed_window(&lines, from, from + 40);
        s.message("THOUGHT: The cache section is read around line 100; let me look at it again.");
        s.call(
            "bash",
            json!({ "command": format!("sed -n '{},{}p' src/settings.py", from, from + 40) }),
            &format!("<returncode>0</returncode>\n<output>\n{shown}</output>"),
        );
        at.push(last(&s));
    }
    (s.into_events(), at)
}

#[test]
fn a_window_drifting_over_one_place_is_warned_and_then_blocked() {
    let (events, at) = drifting_window(14);
    let found = findings("default", &events);
    let f = caught_by(&found, "generic-repeat", at[5]);
    assert!(f.message.contains("mostly the lines"), "{}", f.message);
    let blocks: Vec<usize> = found
        .iter()
        .filter(|(_, f)| f.detector == "generic-repeat" && f.level == Level::Critical)
        .map(|(i, _)| *i)
        .collect();
    assert_eq!(blocks.first(), Some(&(at[11] - 1)), "{found:#?}");
}

/// Claude Code's `Read` at offsets moving by a line or two, each answer numbered as `cat -n`
/// numbers it.
#[test]
fn a_read_at_drifting_offsets_is_caught() {
    let lines = loopguard_testkit::texts::settings_module_lines();
    let mut s = Script::new();
    task(&mut s);
    let mut at = Vec::new();
    for (k, offset) in [120, 118, 121, 119, 120, 122, 118, 121]
        .into_iter()
        .enumerate()
    {
        let shown: String = (offset..offset + 30)
            .map(|n| format!("{n:>6}\t{}\n", lines[n - 1]))
            .collect();
        let id = s.tool_call(
            "Read",
            json!({"file_path": "/srv/app/src/settings.py", "offset": offset, "limit": 30}),
        );
        s.tool_result(&id, "Read", &shown, false);
        at.push(last(&s));
        if k == 0 {
            s.message("The queue helpers are further down.");
        }
    }
    let found = findings("default", &s.into_events());
    caught_by(&found, "generic-repeat", at[6]);
}

/// Reading a repetitive file page by page, in order: each page shows other lines.
#[test]
fn pages_of_a_repetitive_file_read_in_order_are_no_loop() {
    let lines = loopguard_testkit::texts::getter_doc_lines();
    let mut s = Script::new();
    task(&mut s);
    let mut from = 1;
    while from + 79 <= lines.len() {
        let shown = sed_window(&lines, from, from + 79);
        s.call(
            "bash",
            json!({ "command": format!("sed -n '{},{}p' src/buf/buf_impl.rs", from, from + 79) }),
            &format!("<returncode>0</returncode>\n<output>\n{shown}</output>"),
        );
        from += 80;
    }
    assert!(from > 320);
    silent(&findings("default", &s.into_events()), "generic-repeat");
}

/// The logs of numbered runs, alike but for their last line (its words, not only its
/// numbers), read in the order `ls` lists them (1, 10, 11, …, 2, 3, …: their numbers do not
/// move one way): each answer shows most of the last one's lines, yet each is another
/// object, its number in its path.
#[test]
fn alike_logs_of_numbered_runs_are_a_sweep() {
    let mut runs: Vec<u32> = (1..=14).collect();
    runs.sort_by_key(u32::to_string);
    let mut s = Script::new();
    task(&mut s);
    for run in runs {
        let end = match run % 3 {
            0 => "WARNING: learning rate scheduler stepped before optimizer".to_owned(),
            1 => format!("INFO: finished run {run}"),
            _ => format!("INFO: finished run {run} with gradient clipping"),
        };
        let log = format!(
            "INFO: loading dataset from data/train.jsonl\nINFO: 12000 examples, 400 batches\n\
             INFO: epoch 1 done\nINFO: epoch 2 done\nINFO: epoch 3 done\nINFO: writing checkpoint\n\
             INFO: evaluation started\nINFO: evaluation done\n{end}\n"
        );
        s.call(
            "bash",
            json!({ "command": format!("cat runs/{run}/train.log") }),
            &format!("<returncode>0</returncode>\n<output>\n{log}</output>"),
        );
    }
    silent(&findings("default", &s.into_events()), "generic-repeat");
}

/// Scrolling through one file a few lines at a time: each window shows most of the last one,
/// and a few lines more.
#[test]
fn scrolling_a_few_lines_at_a_time_is_no_loop() {
    let lines = loopguard_testkit::texts::settings_module_lines();
    let mut s = Script::new();
    task(&mut s);
    for k in 0..24 {
        let from = 20 + 6 * k;
        let shown = sed_window(&lines, from, from + 40);
        s.call(
            "bash",
            json!({ "command": format!("sed -n '{},{}p' src/settings.py", from, from + 40) }),
            &format!("<returncode>0</returncode>\n<output>\n{shown}</output>"),
        );
    }
    silent(&findings("default", &s.into_events()), "generic-repeat");
}

// ---- the same loop in parallel batches -------------------------------------------------------

/// A model that calls tools in parallel spells one search three ways in each turn, turn after
/// turn, and gets the same lines each time: the alike calls of the batches are one streak.
#[test]
fn the_same_search_spelled_three_ways_in_each_parallel_batch_is_caught() {
    let spellings = [
        "grep -n '_read_u32' sunau.py",
        "grep -n \"_read_u32\" sunau.py",
        "grep -n _read_u32 sunau.py",
    ];
    let mut s = Script::new();
    task(&mut s);
    let mut at = Vec::new();
    for _ in 0..4 {
        s.message("I need to look at where the frame count is read to find the overflow.");
        let ids: Vec<String> = spellings
            .iter()
            .map(|c| s.tool_call("bash", json!({ "command": c })))
            .collect();
        for id in &ids {
            s.tool_result(id, "bash", GREP_OUT, false);
        }
        at.push(last(&s));
    }
    let found = findings("default", &s.into_events());
    let f = caught_by(&found, "generic-repeat", at[1]);
    assert!(f.key.starts_with("similar:"), "{}", f.key);
}

/// Parallel reads of sibling modules' index files, three per turn, each the same barrel of
/// re-exports: alike calls answered alike, batch after batch, yet a sweep (each reads
/// another file).
#[test]
fn parallel_reads_of_sibling_modules_are_no_loop() {
    const MODULES: [&str; 12] = [
        "button", "card", "dialog", "drawer", "menu", "popover", "select", "slider", "switch",
        "table", "tabs", "tooltip",
    ];
    let barrel = "     1\texport * from './component';\n     2\texport * from './types';\n     3\texport { default } from './component';\n";
    let mut s = Script::new();
    task(&mut s);
    for batch in MODULES.chunks(3) {
        s.message("Reading the next components to see how each exports itself.");
        let ids: Vec<String> = batch
            .iter()
            .map(|m| {
                let path = format!("/home/dev/webapp/src/components/ui/{m}/index.ts");
                s.tool_call("Read", json!({ "file_path": path }))
            })
            .collect();
        for id in &ids {
            s.tool_result(id, "Read", barrel, false);
        }
    }
    silent(&findings("default", &s.into_events()), "generic-repeat");
}

/// An agent waits for a build by reading the tail of its log again and again: the very same
/// command, answered with the window moved by the lines the build wrote. What it reads moved
/// by itself: never blocked.
#[test]
fn the_tail_of_a_growing_log_read_again_and_again_is_never_blocked() {
    let log: Vec<String> = (1..=400)
        .map(|i| {
            let unit = ["parser", "lexer", "checker", "codegen", "linker"][i % 5];
            format!(
                "   Compiling {unit}-{} v0.{}.0 (/repo/crates/{unit})",
                i / 5,
                i % 7
            )
        })
        .collect();
    let mut s = Script::new();
    task(&mut s);
    for k in 0..20 {
        let end = 60 + 4 * k;
        let shown = sed_window(&log, end - 29, end);
        s.message("THOUGHT: The build is still running; let me look at its log again.");
        s.call(
            "bash",
            json!({ "command": "cat /tmp/build.log | tail -n 30" }),
            &format!("<returncode>0</returncode>\n<output>\n{shown}</output>"),
        );
    }
    let found = findings("default", &s.into_events());
    let blocks: Vec<_> = found
        .iter()
        .filter(|(_, f)| f.detector == "generic-repeat" && f.level >= Level::Critical)
        .collect();
    assert!(blocks.is_empty(), "{blocks:#?}");
}

/// SWE-agent's editor asked to insert one block at the top of a file again and again: each
/// answer shows the file's window with one more copy of it. Once the copies make most of
/// the window (the lines below them are numbered anew each time), the same action done
/// again is blocked after its warning.
#[test]
fn the_same_block_inserted_again_and_again_is_blocked() {
    let block = [
        "import com.fasterxml.jackson.annotation.JsonProperty;",
        "import com.fasterxml.jackson.databind.ObjectMapper;",
        "",
        "class Bean {",
        "    @JsonProperty(\"value\") public int value;",
        "}",
    ];
    let mut file: Vec<String> = vec![
        "public class Repro {".to_owned(),
        "    public static void main(String[] args) throws Exception {".to_owned(),
        "        System.out.println(new ObjectMapper().writeValueAsString(new Bean()));".to_owned(),
        "    }".to_owned(),
        "}".to_owned(),
    ];
    let edit = format!("edit 1:1\n{}\nend_of_edit", block.join("\n"));
    let mut s = Script::new();
    task(&mut s);
    let mut at = Vec::new();
    for _ in 0..24 {
        for (i, l) in block.iter().enumerate() {
            file.insert(i, (*l).to_owned());
        }
        let window: String = file
            .iter()
            .take(100)
            .enumerate()
            .map(|(i, l)| format!("{}:{l}\n", i + 1))
            .collect();
        s.call(
            "edit",
            json!({ "command": edit }),
            &format!(
                "[File: /repo/Repro.java ({} lines total)]\n{window}File updated. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.",
                file.len()
            ),
        );
        at.push(last(&s));
    }
    let found = findings("default", &s.into_events());
    assert!(
        found.iter().any(|(i, f)| f.detector == "generic-repeat"
            && f.level == Level::Critical
            && f.message.contains("mostly the lines")
            && *i <= at[18]),
        "{:#?}",
        found
            .iter()
            .map(|(i, f)| (i, f.level, f.message.as_str()))
            .collect::<Vec<_>>()
    );
}

// ---- one missing name searched for in other words ------------------------------------------

/// SWE-agent's search commands and a shell's, taken in turn, for a name the repository does
/// not have: (tool, arguments, answer).
fn swe_agent_searches(name: &str) -> Vec<(&'static str, serde_json::Value, String)> {
    vec![
        (
            "search_dir",
            json!({ "search_term": name }),
            format!("No matches found for \"{name}\" in /repo"),
        ),
        (
            "find_file",
            json!({ "file_name": format!("{name}.py") }),
            format!("No matches found for \"{name}.py\" in /repo"),
        ),
        (
            "search_dir",
            json!({ "search_term": format!("def {name}") }),
            format!("No matches found for \"def {name}\" in /repo"),
        ),
        (
            "search_file",
            json!({ "search_term": name, "file": "/repo/requests/sessions.py" }),
            format!("No matches found for \"{name}\" in /repo/requests/sessions.py"),
        ),
        (
            "bash",
            json!({ "command": format!("find / -name '*{name}*' 2>/dev/null") }),
            String::new(),
        ),
        (
            "search_dir",
            json!({ "search_term": format!("{name}("), "dir": "/repo/requests" }),
            format!("No matches found for \"{name}(\" in /repo/requests"),
        ),
        (
            "bash",
            json!({ "command": format!("grep -rn {name} /repo --include=*.py") }),
            String::new(),
        ),
        (
            "search_dir",
            json!({ "search_term": format!("class {name}") }),
            format!("No matches found for \"class {name}\" in /repo"),
        ),
    ]
}

#[test]
fn one_missing_name_searched_by_every_tool_in_turn_is_caught() {
    let mut s = Script::new();
    task(&mut s);
    let mut at = Vec::new();
    for (tool, args, answer) in swe_agent_searches("merge_environment_proxies") {
        s.message("DISCUSSION\nThe helper must be defined somewhere; let me search for it again.");
        s.call(tool, args, &answer);
        at.push(last(&s));
    }
    let found = findings("default", s.events());
    let f = caught_by(&found, "generic-repeat", at[5]);
    assert!(f.key.starts_with("fruitless:"), "{f:#?}");
    assert!(f.message.contains("each found nothing"), "{}", f.message);
    // It only warns: a search may still find what it looks for.
    assert!(
        found.iter().all(|(_, f)| f.level < Level::Critical),
        "{found:#?}"
    );
}

#[test]
fn one_missing_name_searched_with_every_command_is_caught() {
    let commands = [
        "grep -rn 'def load_fixture_bundle' src/",
        "grep -rn 'load_fixture_bundle(' src/",
        "grep -rni 'loadfixturebundle' .",
        "find . -name '*load_fixture_bundle*'",
        "git grep -n load_fixture_bundle",
        "rg load_fixture_bundle",
        "grep -rn 'load_fixture_bundle' tests/",
    ];
    let mut s = Script::new();
    task(&mut s);
    let mut at = Vec::new();
    for cmd in commands {
        s.message("THOUGHT: The fixture loader should exist; searching for it another way.");
        s.call("bash", json!({ "command": cmd }), "");
        at.push(last(&s));
    }
    let found = findings("default", s.events());
    let f = caught_by(&found, "generic-repeat", at[5]);
    assert!(f.key.starts_with("fruitless:"), "{f:#?}");
}

#[test]
fn a_name_found_at_the_sixth_search_is_no_loop() {
    let mut s = Script::new();
    task(&mut s);
    for (tool, args, answer) in swe_agent_searches("get_netrc_auth").into_iter().take(5) {
        s.call(tool, args, &answer);
    }
    s.call(
        "search_dir",
        json!({ "search_term": "netrc" }),
        "Found 4 matches for \"netrc\" in /repo:\n/repo/requests/utils.py (4 matches)\nEnd of matches for \"netrc\" in /repo",
    );
    let found = findings("default", s.events());
    silent(&found, "generic-repeat");
}

#[test]
fn checking_that_other_old_names_are_gone_is_no_loop() {
    // After a rename, one search for each old name: each finds nothing, as hoped.
    let old = [
        "get_encodings_from_content",
        "get_unicode_from_response",
        "stream_decode_response_unicode",
        "iter_slices_legacy",
        "to_native_string_compat",
        "unquote_unreserved_legacy",
        "requote_uri_legacy",
        "address_in_network_v4",
    ];
    let mut s = Script::new();
    task(&mut s);
    for name in old {
        s.call(
            "search_dir",
            json!({ "search_term": name }),
            &format!("No matches found for \"{name}\" in /repo"),
        );
    }
    let found = findings("default", s.events());
    silent(&found, "generic-repeat");
}

#[test]
fn appending_one_import_to_each_test_file_is_no_search() {
    // Silent answers of calls that share words but look for nothing.
    let mut s = Script::new();
    task(&mut s);
    for k in 0..9 {
        let cmd = format!(
            "echo 'from conftest_helpers import load_fixture_bundle' >> tests/test_module_{k}.py"
        );
        s.call("bash", json!({ "command": cmd }), "");
    }
    let found = findings("default", s.events());
    silent(&found, "generic-repeat");
}

// ---- one unchanged file looked at again and again -------------------------------------------

/// A module's text as a `read` shows it (written here: a settings loader).
fn loader_text() -> String {
    (0..60)
        .map(|i| match i % 6 {
            0 => format!("def load_section_{i}(config):"),
            1 => format!("    \"\"\"Read section {i} of the settings file.\"\"\""),
            2 => format!("    raw = config.get('section_{i}', {{}})"),
            3 => "    if not raw:".to_owned(),
            4 => "        return None".to_owned(),
            _ => format!("    return Section{i}.from_mapping(raw)\n"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a test does after each round's search ([`reread_rounds`]).
type Between<'a> = Option<&'a dyn Fn(&mut Script, usize)>;

/// `rounds` rounds of: the loader read again (unchanged), then a search that finds
/// something else each time; with `between(k)` after the search when given.
fn reread_rounds(rounds: usize, between: Between<'_>) -> (Vec<OwnedEvent>, Vec<usize>) {
    let text = loader_text();
    let mut s = Script::new();
    task(&mut s);
    let mut at = Vec::new();
    for k in 0..rounds {
        s.message("Let me re-read the loader to be sure how sections are parsed.");
        s.call("read", json!({ "path": "/repo/settings/loader.py" }), &text);
        at.push(last(&s));
        s.call(
            "bash",
            json!({ "command": format!("grep -rn 'section_{k}' /repo/settings | head -5") }),
            &format!(
                "/repo/settings/loader.py:{}:    raw = config.get('section_{k}', {{}})",
                6 * k + 3
            ),
        );
        if let Some(f) = between {
            f(&mut s, k);
        }
    }
    (s.into_events(), at)
}

#[test]
fn one_unchanged_file_read_again_between_searches_is_caught() {
    let (events, at) = reread_rounds(8, None);
    let found = findings("default", &events);
    let f = caught_by(&found, "generic-repeat", at[3]);
    assert!(f.key.starts_with("reread:"), "{f:#?}");
    assert!(
        f.message.contains("4 times in the last 7 calls"),
        "{}",
        f.message
    );
    assert!(
        found.iter().all(|(_, f)| f.level < Level::Critical),
        "{found:#?}"
    );
}

#[test]
fn three_looks_at_one_unchanged_file_are_no_loop() {
    let (events, _) = reread_rounds(3, None);
    silent(&findings("default", &events), "generic-repeat");
}

#[test]
fn a_file_consulted_between_edits_is_no_loop() {
    let edit = |s: &mut Script, k: usize| {
        s.call(
            "str_replace_editor",
            json!({
                "command": "str_replace",
                "path": "/repo/settings/validate.py",
                "old_str": format!("def check_section_{k}(raw):\n    pass"),
                "new_str": format!("def check_section_{k}(raw):\n    return load_section_{k}(raw) is not None"),
            }),
            "The file /repo/settings/validate.py has been edited.",
        );
    };
    let (events, _) = reread_rounds(8, Some(&edit));
    silent(&findings("default", &events), "generic-repeat");
}

#[test]
fn a_file_read_again_while_waiting_for_a_job_is_no_loop() {
    let wait = |s: &mut Script, _: usize| {
        s.call("bash", json!({ "command": "sleep 20" }), "");
    };
    let (events, _) = reread_rounds(8, Some(&wait));
    silent(&findings("default", &events), "generic-repeat");
}

#[test]
fn reading_a_file_again_after_a_compaction_is_remembering() {
    let (first, _) = reread_rounds(3, None);
    let (rest, _) = reread_rounds(3, None);
    // The second script's task message would start a turn: leave it out, keep its calls.
    let rest: Vec<OwnedEvent> = rest.into_iter().skip(1).collect();
    let straight: Vec<OwnedEvent> = first.iter().chain(&rest).cloned().collect();
    let found = findings("default", &straight);
    assert!(
        found.iter().any(|(_, f)| f.key.starts_with("reread:")),
        "without the compaction the fourth read is one too many: {found:#?}"
    );
    let mut compacted = first;
    compacted.push(OwnedEvent::Compaction);
    compacted.extend(rest);
    silent(&findings("default", &compacted), "generic-repeat");
}

/// Claude Code's tools: `Read` of one unchanged file between `Grep`s for other names; with
/// an `Edit` of another file after each search when `edit` is set.
fn claude_code_rereads(rounds: usize, edit: bool) -> Vec<OwnedEvent> {
    let text: String = loader_text()
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{:>6}\u{2192}{l}\n", i + 1))
        .collect();
    let mut s = Script::new();
    task(&mut s);
    for k in 0..rounds {
        s.call(
            "Read",
            json!({ "file_path": "/repo/settings/loader.py" }),
            &text,
        );
        s.call(
            "Grep",
            json!({ "pattern": format!("section_{k}"), "path": "/repo", "output_mode": "files_with_matches" }),
            &format!("Found 2 files\n/repo/settings/loader.py\n/repo/tests/test_section_{k}.py"),
        );
        if edit {
            s.call(
                "Edit",
                json!({
                    "file_path": format!("/repo/tests/test_section_{k}.py"),
                    "old_string": "assert section is None",
                    "new_string": "assert section is not None",
                }),
                &format!("The file /repo/tests/test_section_{k}.py has been updated."),
            );
        }
    }
    s.into_events()
}

#[test]
fn claude_code_reading_one_file_between_searches_is_caught() {
    let found = findings("default", &claude_code_rereads(6, false));
    let f = caught_by(&found, "generic-repeat", usize::MAX);
    assert!(f.key.starts_with("reread:"), "{f:#?}");
    assert!(f.message.contains("`Read`"), "{}", f.message);
}

#[test]
fn claude_code_reading_one_file_between_edits_is_no_loop() {
    silent(
        &findings("default", &claude_code_rereads(6, true)),
        "generic-repeat",
    );
}

#[test]
fn a_failing_look_between_rereads_counts_in_what_the_message_says() {
    // A failure is same-failure's to judge, but it is one of the calls between the reads.
    let mut s = Script::new();
    task(&mut s);
    for _ in 0..4 {
        s.call(
            "read",
            json!({ "path": "/repo/src/lib.rs" }),
            "mod config;\nmod utils;\n\npub use config::load;\n",
        );
        s.call_with(
            "bash",
            json!({ "command": "ls src/utils" }),
            "ls: cannot access 'src/utils': No such file or directory",
            true,
        );
    }
    let found = findings("default", s.events());
    let f = found
        .iter()
        .map(|(_, f)| f)
        .find(|f| f.key.starts_with("reread:"))
        .unwrap_or_else(|| panic!("no re-read warning: {found:#?}"));
    assert!(
        f.message.contains("4 times in the last 7 calls"),
        "{}",
        f.message
    );
}

// ---- silence between runs ------------------------------------------------------------------

const QUICKSTART_OUT: &str = "Running sphinx-quickstart with a new path...\n\
Welcome to the Sphinx 4.1.0 quickstart utility.\n\n\
Please enter values for the following settings (just press Enter to\n\
accept a default value, if one is given in brackets).\n\n\
Selected root path: .\n\n\
Error: an existing conf.py has been found in the selected root path.\n\
sphinx-quickstart will not overwrite existing Sphinx projects.\n\n\
> Please enter a new root path (or just Enter to exit) []: \n";

/// A script re-run after each silent `sed -i` edit of it, answering the same every time (the
/// corpus's sphinx-9320 shape, on a host that hands over a silent command's output as
/// nothing): each edit may have changed the answer, so the runs are no streak.
#[test]
fn a_script_rerun_after_each_silent_edit_is_no_repeat() {
    let mut s = Script::new();
    task(&mut s);
    let edits = [
        "sed -i 's/print(stdout)/print(stdout)\\nprint(stderr)/' check_quickstart.py",
        "sed -i 's/timeout=2/timeout=5/' check_quickstart.py",
        "sed -i 's/env = {}/env = {\"PYTHONUNBUFFERED\": \"1\"}/' check_quickstart.py",
        "sed -i 's/input_str = \"\\\\n\"/input_str = \"\\\\nnew_docs\\\\n\"/' check_quickstart.py",
    ];
    s.call(
        "bash",
        json!({"command": "python3 check_quickstart.py"}),
        QUICKSTART_OUT,
    );
    for edit in edits {
        s.call("bash", json!({ "command": edit }), "");
        s.call(
            "bash",
            json!({"command": "python3 check_quickstart.py"}),
            QUICKSTART_OUT,
        );
    }
    let found = findings("default", &s.into_events());
    silent(&found, "generic-repeat");
}

/// The same run with only silent moves between (`cd`, which changes nothing the run reads
/// back) is the same run again: the streak goes on over them.
#[test]
fn the_same_run_with_silent_moves_between_is_still_a_repeat() {
    let mut s = Script::new();
    task(&mut s);
    let mut runs = Vec::new();
    for _ in 0..3 {
        s.call("bash", json!({"command": "cd /repo"}), "");
        s.call(
            "bash",
            json!({"command": "python3 check_quickstart.py"}),
            QUICKSTART_OUT,
        );
        runs.push(last(&s));
    }
    let found = findings("default", &s.into_events());
    caught_by(&found, "generic-repeat", runs[2]);
}
