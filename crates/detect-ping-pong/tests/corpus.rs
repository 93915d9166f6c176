//! Ping-pong on the evaluation corpus: with the default settings, no finding on sessions
//! labelled `loop = false` and every labelled ping-pong loop caught; prints recall, latency
//! and what the `openclaw` settings do.
#![allow(clippy::unwrap_used)]

mod common;

use loopguard_core::Level;
use loopguard_detect_ping_pong::{PingPong, Settings};

struct Figures {
    caught: Vec<(String, i64)>,
    critical: Vec<(String, i64)>,
    missed: Vec<String>,
    fp: Vec<(String, usize, String)>,
    unsure_flagged: Vec<String>,
    other_loops_flagged: Vec<String>,
}

fn evaluate(settings: Settings) -> Figures {
    let mut out = Figures {
        caught: vec![],
        critical: vec![],
        missed: vec![],
        fp: vec![],
        unsure_flagged: vec![],
        other_loops_flagged: vec![],
    };
    let Some(dir) = common::corpus_dir() else {
        return out;
    };
    for l in common::labels(&dir) {
        let events = common::events(&dir, &l.path);
        let f = common::replay(Box::new(PingPong::new(settings)), &events);
        match l.loop_.as_str() {
            "false" => {
                if let Some((line, f)) = f.first() {
                    out.fp.push((l.path.clone(), *line, f.key.clone()));
                }
            }
            "unsure" => {
                if !f.is_empty() {
                    out.unsure_flagged.push(l.path.clone());
                }
            }
            _ if l.kind.as_deref() == Some("ping-pong") => {
                let first_event = l.first_event.unwrap_or(0) as i64;
                let start = l.loop_start.unwrap_or(0);
                match f.iter().find(|(line, _)| *line >= start) {
                    Some((line, _)) => out
                        .caught
                        .push((l.path.clone(), *line as i64 - first_event)),
                    None => out.missed.push(l.path.clone()),
                }
                if let Some((line, _)) = f
                    .iter()
                    .find(|(line, f)| *line >= start && f.level == Level::Critical)
                {
                    out.critical
                        .push((l.path.clone(), *line as i64 - first_event));
                }
            }
            _ => {
                if !f.is_empty() {
                    out.other_loops_flagged
                        .push(format!("{} ({:?})", l.path, l.kind));
                }
            }
        }
    }
    out
}

#[test]
fn corpus_default_no_false_positives_and_ping_pong_loops_caught() {
    if common::corpus_dir().is_none() {
        return;
    }
    let f = evaluate(Settings::default());
    eprintln!(
        "ping-pong (default): recall {}/{} latency (lines after first_event) {:?}; critical {:?}; \
         unsure flagged {:?}; loops of other kinds flagged {:?}; false positives {:?}",
        f.caught.len(),
        f.caught.len() + f.missed.len(),
        f.caught,
        f.critical,
        f.unsure_flagged,
        f.other_loops_flagged,
        f.fp
    );
    assert!(
        f.fp.is_empty(),
        "findings on loop=false sessions: {:?}",
        f.fp
    );
    assert!(
        f.missed.is_empty(),
        "labelled ping-pong loops missed: {:?}",
        f.missed
    );
    assert_eq!(f.caught.len(), 5);
}

#[test]
fn corpus_openclaw_settings_figures() {
    if common::corpus_dir().is_none() {
        return;
    }
    let f = evaluate(Settings::OPENCLAW);
    eprintln!(
        "ping-pong (openclaw): recall {}/{} latency {:?}; critical {:?}; unsure flagged {:?}; \
         other kinds flagged {:?}; false positives {:?}",
        f.caught.len(),
        f.caught.len() + f.missed.len(),
        f.caught,
        f.critical,
        f.unsure_flagged,
        f.other_loops_flagged,
        f.fp
    );
    // OpenClaw's period-2 rule only sees the strict alternations, and late.
    assert!(f.caught.len() < 5);
}
