//! The default settings on the evaluation corpus: no finding on sessions labelled
//! `loop = false`, every labelled stalled-turns loop caught, no critical finding on the
//! sessions labelled "unsure"; prints recall and detection latency.
#![allow(clippy::unwrap_used)]

mod common;

use loopguard_core::Level;
use loopguard_detect_stalled_turns::{Settings, StalledTurns};

#[test]
fn corpus_no_false_positives_and_labelled_stalls_caught() {
    let Some(dir) = common::corpus_dir() else {
        return;
    };
    let labels = common::labels(&dir);
    assert!(!labels.is_empty());
    let mut fp = vec![];
    let mut missed = vec![];
    let mut caught = 0;
    let mut loops = 0;
    let mut unsure_critical = vec![];
    let mut unsure_warned = 0;
    let mut unsure = 0;
    let mut other_loops_flagged = 0;
    let mut latencies: Vec<i64> = vec![];
    let mut crit_latencies: Vec<i64> = vec![];
    for l in &labels {
        let events = common::events(&dir, &l.path);
        let f = common::replay(Box::new(StalledTurns::new(Settings::default())), &events);
        match l.loop_.as_str() {
            "false" => {
                if let Some((line, f)) = f.first() {
                    fp.push((l.path.clone(), *line, f.message.clone()));
                }
            }
            "unsure" => {
                unsure += 1;
                if !f.is_empty() {
                    unsure_warned += 1;
                }
                if f.iter().any(|(_, f)| f.level >= Level::Critical) {
                    unsure_critical.push(l.path.clone());
                }
            }
            _ if l.kind.as_deref() == Some("stalled-turns") => {
                loops += 1;
                let first_event = l.first_event.unwrap_or(0);
                let loop_start = l.loop_start.unwrap_or(0);
                // The first finding inside the labelled run (at or after its start).
                match f.iter().find(|(line, _)| *line >= loop_start) {
                    Some((line, _)) => {
                        caught += 1;
                        latencies.push(*line as i64 - first_event as i64);
                    }
                    None => missed.push(l.path.clone()),
                }
                if let Some((line, _)) = f
                    .iter()
                    .find(|(line, f)| *line >= loop_start && f.level >= Level::Critical)
                {
                    crit_latencies.push(*line as i64 - first_event as i64);
                }
            }
            _ => {
                if !f.is_empty() {
                    other_loops_flagged += 1;
                }
            }
        }
    }
    latencies.sort_unstable();
    crit_latencies.sort_unstable();
    eprintln!(
        "stalled-turns (default): recall {caught}/{loops}; latency in lines after first_event \
         (first finding in the labelled run): {latencies:?}; critical reached in {}/{loops} with latency \
         {crit_latencies:?}; unsure sessions warned {unsure_warned}/{unsure}, critical {}; \
         loops of other kinds flagged {other_loops_flagged}; false positives {}",
        crit_latencies.len(),
        unsure_critical.len(),
        fp.len()
    );
    assert!(fp.is_empty(), "findings on loop=false sessions: {fp:?}");
    assert!(
        missed.is_empty(),
        "labelled stalled-turns loops missed: {missed:?}"
    );
    assert!(
        unsure_critical.is_empty(),
        "critical findings on unsure sessions: {unsure_critical:?}"
    );
    assert!(
        latencies.iter().all(|&l| l <= 0),
        "detection later than first_event: {latencies:?}"
    );
}
