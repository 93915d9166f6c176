//! The default settings on the evaluation corpus: no finding on sessions labelled
//! `loop = false`; every labelled unknown-tool loop gets a finding (a steer at least; the
//! figures printed say how many reached critical).

mod common;

use loopguard_core::Level;
use loopguard_detect_unknown_tool::UnknownTool;

#[test]
fn corpus_no_false_positives_and_labelled_loops_caught() {
    let Some(dir) = common::corpus_dir() else {
        return;
    };
    let labels = common::labels(&dir);
    assert!(!labels.is_empty());
    let (mut fp, mut missed, mut fired, mut negatives, mut loops, mut caught, mut other_loops) =
        (vec![], vec![], 0, 0, 0, 0, 0);
    let mut critical = 0;
    let mut latencies = Vec::new();
    for l in &labels {
        let events = common::events(&dir, &l.path);
        let f = common::replay(Box::new(UnknownTool::default()), &events);
        if !f.is_empty() {
            fired += 1;
        }
        match l.loop_.as_str() {
            "false" => {
                negatives += 1;
                if !f.is_empty() {
                    fp.push((l.path.clone(), f[0].0, f[0].1.message.clone()));
                }
            }
            "true" if l.kind.as_deref() == Some("unknown-tool") => {
                loops += 1;
                let first = f.first().map(|(line, _)| *line);
                let crit = f
                    .iter()
                    .find(|(_, f)| f.level == Level::Critical)
                    .map(|(line, _)| *line);
                if crit.is_some() {
                    critical += 1;
                }
                match first {
                    Some(first) => {
                        caught += 1;
                        latencies.push((
                            l.path.clone(),
                            first as i64 - l.first_event.unwrap_or(0) as i64,
                        ));
                    }
                    _ => missed.push(l.path.clone()),
                }
            }
            "true" if !f.is_empty() => other_loops += 1,
            _ => {}
        }
    }
    eprintln!(
        "unknown-tool: {} sessions, {} with findings; labelled unknown-tool loops caught {}/{} ({} critical) \
         (first finding minus first_event, in lines: {:?}); other labelled loops with a finding {}; \
         {} loop=false sessions, false positives {}",
        labels.len(),
        fired,
        caught,
        loops,
        critical,
        latencies,
        other_loops,
        negatives,
        fp.len()
    );
    assert!(fp.is_empty(), "findings on loop=false sessions: {fp:?}");
    assert!(
        missed.is_empty(),
        "labelled unknown-tool loops missed: {missed:?}"
    );
}
