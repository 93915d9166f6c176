//! The corpus: every file reads, and the default configuration gives no finding at all on
//! sessions labelled `loop = false`.

use crate::support::corpus_dir;
use loopguard::orchestrator::{preset, resolve};
use loopguard_cli::scan::scan_transcript;
use loopguard_testkit::labels::{read_labels, Label, LoopLabel};
use loopguard_transcript::{read_file, DEFAULT_CHUNK};
use std::collections::BTreeMap;
use std::path::Path;

/// The labels by file name.
fn labels(dir: &Path) -> BTreeMap<String, Label> {
    read_labels(&dir.join("labels.toml"))
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|l| (l.path.clone(), l))
        .collect()
}

fn corpus_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_corpus_file_reads_with_its_labelled_line_count() {
    let Some(dir) = corpus_dir() else { return };
    let labels = labels(&dir);
    let files = corpus_files(&dir);
    assert!(files.len() > 100, "only {} corpus files", files.len());
    for f in &files {
        let t = read_file(f).unwrap_or_else(|e| panic!("{e}"));
        let name = f.file_name().unwrap().to_str().unwrap();
        let label = labels
            .get(name)
            .unwrap_or_else(|| panic!("{name} has no label"));
        assert_eq!(t.lines, label.events, "{name}: line count");
        assert_eq!(
            t.entries.len(),
            t.lines,
            "{name}: no blank lines in the corpus"
        );
    }
}

#[test]
fn default_preset_gives_no_finding_on_sessions_labelled_loop_false() {
    let Some(dir) = corpus_dir() else { return };
    let labels = labels(&dir);
    let config = resolve(&preset("default").unwrap()).unwrap();
    let mut scanned = 0;
    let mut clean_sessions = 0;
    let mut false_positives = Vec::new();
    let mut caught = 0;
    let mut loops = 0;
    for f in corpus_files(&dir) {
        let name = f.file_name().unwrap().to_str().unwrap().to_owned();
        let t = read_file(&f).unwrap_or_else(|e| panic!("{e}"));
        let report = scan_transcript(&t, &config, DEFAULT_CHUNK).unwrap();
        scanned += 1;
        let Some(label) = labels.get(&name) else {
            continue;
        };
        match label.is_loop {
            LoopLabel::Bool(false) => {
                clean_sessions += 1;
                if let Some(f) = report.findings.first() {
                    false_positives.push(format!(
                        "{name}: line {} {} {} -> {}: {}",
                        f.event,
                        f.detector,
                        f.level.as_str(),
                        f.action.as_str(),
                        f.message
                    ));
                }
            }
            LoopLabel::Bool(true) => {
                loops += 1;
                if !report.findings.is_empty() {
                    caught += 1;
                }
            }
            _ => {}
        }
    }
    eprintln!(
        "corpus: {scanned} sessions scanned; {clean_sessions} labelled loop = false, {} with a finding; \
         {caught}/{loops} labelled loops caught",
        false_positives.len()
    );
    assert!(scanned > 100, "only {scanned} sessions scanned");
    assert!(
        clean_sessions > 100,
        "only {clean_sessions} loop = false sessions"
    );
    assert!(
        false_positives.is_empty(),
        "findings on loop = false sessions:\n{}",
        false_positives.join("\n")
    );
}
