//! The text report, for people: sessions ranked by waste, each loop with the lines that form
//! it, what it cost and what the guard would have done, then totals.

use crate::{ranked, Report, SessionReport, Wasted};
use loopguard::core::truncate_chars;
use std::collections::BTreeMap;
use std::io::Write;

/// Most lines listed for one loop before the list is cut.
const MAX_LISTED_RANGES: usize = 12;
/// Most verdict rows shown for one loop.
const MAX_ROWS: usize = 8;

/// Writes the text report: sessions with loops ranked by what the guard would have saved,
/// then totals.
pub fn write_text(out: &mut dyn Write, report: &Report) -> std::io::Result<()> {
    writeln!(
        out,
        "loopguard scan, preset `{}` (lines are 0-based, as in --format json)",
        report.preset
    )?;
    let mut loops = 0usize;
    for s in ranked(report) {
        if s.findings.is_empty() {
            continue;
        }
        writeln!(out)?;
        loops += write_session(out, s)?;
    }
    let clean = report.summary.sessions - report.summary.sessions_with_findings;
    writeln!(out)?;
    writeln!(
        out,
        "{} sessions ({} lines): {} with loops ({} loops), {} clean.",
        report.summary.sessions,
        report.summary.events,
        report.summary.sessions_with_findings,
        loops,
        clean
    )?;
    writeln!(
        out,
        "The guard would have saved {}.",
        saved(&report.summary.wasted)
    )?;
    Ok(())
}

fn saved(w: &Wasted) -> String {
    let usd = w.usd.map(|u| format!(", ${u:.2}")).unwrap_or_default();
    format!(
        "{} lines, {} characters, {} tokens{usd}",
        w.events, w.chars, w.tokens
    )
}

/// Writes one session; returns the number of loops in it.
fn write_session(out: &mut dyn Write, s: &SessionReport) -> std::io::Result<usize> {
    let model = s
        .model
        .as_deref()
        .map(|m| format!(", {m}"))
        .unwrap_or_default();
    writeln!(out, "{}  ({}{model}, {} lines)", s.path, s.format, s.events)?;
    // A loop is one (detector, key); first appearance order.
    let mut order: Vec<(String, String)> = Vec::new();
    let mut groups: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (i, f) in s.findings.iter().enumerate() {
        let key = s.details.get(i).map(|d| d.key.clone()).unwrap_or_default();
        let k = (f.detector.clone(), key);
        let rows = groups.entry(k.clone()).or_default();
        if rows.is_empty() {
            order.push(k);
        }
        rows.push(i);
    }
    for k in &order {
        let Some(rows) = groups.get(k) else { continue };
        let mut lines: Vec<usize> = Vec::new();
        let mut tool = None;
        let mut sample = None;
        for &i in rows {
            if let Some(d) = s.details.get(i) {
                lines.extend(&d.lines);
                tool = tool.or(d.tool.clone());
                sample = sample.or(d.sample.clone());
            }
            if let Some(f) = s.findings.get(i) {
                lines.push(f.event);
            }
        }
        lines.sort_unstable();
        lines.dedup();
        let what = match &tool {
            Some(t) => format!("{}, tool `{t}`", k.0),
            None => k.0.clone(),
        };
        writeln!(out, "  loop: {what}; lines {}", ranges(&lines))?;
        if let Some(l) = s.loops.iter().find(|l| l.detector == k.0 && l.key == k.1) {
            let mut cost = format!("{} tokens of text", l.tokens);
            if let (Some(i), Some(o)) = (l.input_tokens, l.output_tokens) {
                cost.push_str(&format!(
                    ", {i} input and {o} output tokens sent and written"
                ));
            }
            if let Some(u) = l.usd {
                cost.push_str(&format!(", ${u:.2}"));
            }
            writeln!(out, "    cost: {cost}")?;
        }
        if let Some(sample) = sample {
            writeln!(
                out,
                "    repeated: {:?}",
                truncate_chars(&one_line(&sample), 80)
            )?;
        }
        for (n, &i) in rows.iter().enumerate() {
            if n == MAX_ROWS {
                writeln!(out, "    … {} more verdicts", rows.len() - MAX_ROWS)?;
                break;
            }
            let Some(f) = s.findings.get(i) else { continue };
            let at = match f.offset {
                Some(o) => format!("line {} (char {o})", f.event),
                None => format!("line {}", f.event),
            };
            let code = s
                .details
                .get(i)
                .and_then(|d| d.code.clone())
                .map(|c| format!(" [{c}]"))
                .unwrap_or_default();
            writeln!(
                out,
                "    {at}: {} x{} -> {}{code}: {}",
                f.level.as_str(),
                f.count,
                f.action.as_str(),
                truncate_chars(&one_line(&f.message), 100)
            )?;
        }
    }
    writeln!(out, "  would have saved: {}", saved(&s.wasted))?;
    Ok(order.len())
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `[1,2,3,7,9,10]` -> `1-3, 7, 9-10`, cut after [`MAX_LISTED_RANGES`] ranges.
fn ranges(lines: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while let Some(&start) = lines.get(i) {
        let mut end = start;
        while lines.get(i + 1) == Some(&(end + 1)) {
            end += 1;
            i += 1;
        }
        i += 1;
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
    }
    if parts.len() > MAX_LISTED_RANGES {
        let more = parts.len() - MAX_LISTED_RANGES;
        parts.truncate(MAX_LISTED_RANGES);
        parts.push(format!("… ({more} more)"));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::ranges;

    #[test]
    fn ranges_compress_runs() {
        assert_eq!(ranges(&[1, 2, 3, 7, 9, 10]), "1-3, 7, 9-10");
        assert_eq!(ranges(&[]), "");
        let many: Vec<usize> = (0..40).map(|i| i * 2).collect();
        assert!(ranges(&many).ends_with("… (28 more)"));
    }
}
