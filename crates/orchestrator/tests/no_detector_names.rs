//! Core and the orchestrator know detectors only through their registrations: no detector's
//! name (nor its OpenClaw spelling) appears in their code. Comments, doc comments (examples
//! included) and test modules may name detectors; so may the preset data files.

use loopguard_core::Registry;
use std::path::{Path, PathBuf};

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

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The lines of code of a source file: comment lines dropped, the test module (from the first
/// `#[cfg(test)]` on) cut.
fn code(text: &str) -> Vec<(usize, &str)> {
    text.lines()
        .enumerate()
        .take_while(|(_, l)| l.trim() != "#[cfg(test)]")
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| (i + 1, l))
        .collect()
}

#[test]
fn core_and_orchestrator_code_names_no_detector() {
    let registry = Registry::discover().expect("registry");
    let mut names: Vec<&str> = registry.names();
    names.extend(registry.entries().iter().filter_map(|r| r.openclaw.toggle));
    assert!(names.len() >= 10, "{names:?}");
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    sources(&crates.join("core/src"), &mut files);
    sources(&crates.join("orchestrator/src"), &mut files);
    assert!(files.len() > 10, "{files:?}");
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable source");
        for (line, l) in code(&text) {
            for n in &names {
                if l.contains(n) {
                    found.push(format!("{}:{line}: {n}: {}", f.display(), l.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "detector names in code:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_sees_a_name_in_code_and_not_in_comments_or_tests() {
    let text = "fn a() {\n    // ping-pong in a comment\n    let d = \"ping-pong\";\n}\n#[cfg(test)]\nmod tests { const X: &str = \"ping-pong\"; }\n";
    let lines = code(text);
    let hits: Vec<usize> = lines
        .iter()
        .filter(|(_, l)| l.contains("\"ping-pong\""))
        .map(|(n, _)| *n)
        .collect();
    assert_eq!(hits, [3]);
}
