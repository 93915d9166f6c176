//! The HTML report of `examples/` rendered in headless Chromium: the page lays out, its
//! script runs, every loop is drawn with its timeline, and the screenshot is a real page.
//!
//! Skipped with a message when Chromium is absent, except under `CI=true` (`.ci/run`
//! installs Debian's `chromium`).
#![allow(clippy::unwrap_used)]

use loopguard::orchestrator::resolve;
use loopguard::Config;
use loopguard_scan::{html::write_html, report, scan_paths, template, ScanOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> Option<PathBuf> {
    for c in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(c).exists() {
            return Some(PathBuf::from(c));
        }
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "chromium is required under CI (see .ci/run)"
    );
    eprintln!("note: chromium not found; skipping the HTML rendering test");
    None
}

fn run_chromium(bin: &Path, profile: &Path, extra: &[&str], page: &Path) -> std::process::Output {
    let url = format!("file://{}", page.display());
    Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            &format!("--user-data-dir={}", profile.display()),
        ])
        .args(extra)
        .arg(url)
        .output()
        .unwrap()
}

#[test]
fn the_html_report_of_the_examples_renders_in_chromium() {
    let Some(bin) = chromium() else { return };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let files = loopguard_scan::collect_files(&[root.join("examples")]).unwrap();
    assert!(files.len() >= 5, "{files:?}");
    let config = resolve(&Config::default()).unwrap();
    let t = template(&config).unwrap();
    let sessions: Vec<_> = scan_paths(&files, &t, &ScanOptions::default(), &|| {})
        .into_iter()
        .map(|o| o.unwrap().session)
        .collect();
    let r = report("default", sessions);
    let loops: usize = r.sessions.iter().map(|s| s.loops.len()).sum();
    let with = r.sessions.iter().filter(|s| !s.findings.is_empty()).count();
    assert!(loops >= 4, "the examples hold loops");

    let dir = std::env::temp_dir().join(format!("loopguard-html-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("report.html");
    let mut html = Vec::new();
    write_html(&mut html, &r).unwrap();
    let text = String::from_utf8(html).unwrap();
    // Self-contained: nothing is fetched.
    for bad in ["http://", "https://", "src=\"", "<link"] {
        assert!(!text.contains(bad), "the page refers outside itself: {bad}");
    }
    std::fs::write(&page, &text).unwrap();

    // The DOM after the page's script ran.
    let out = run_chromium(
        &bin,
        &dir.join("profile-dom"),
        &["--dump-dom", "--virtual-time-budget=2000"],
        &page,
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        dom.contains("data-rendered=\"yes\""),
        "the page's script did not run: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        dom.contains(&format!("{with} sessions with loops, {loops} loops shown")),
        "{dom}"
    );
    assert_eq!(dom.matches("class=\"loop ").count(), loops);
    let marks = dom.matches("class=\"ev ").count();
    let timeline: usize = r
        .sessions
        .iter()
        .flat_map(|s| &s.loops)
        .map(|l| l.timeline.len())
        .sum();
    assert_eq!(marks, timeline);
    assert!(dom.contains("ev verdict block") || dom.contains("ev verdict abort"));

    // The screenshot: a PNG of the requested size, not a blank page.
    let shot = dir.join("report.png");
    let out = run_chromium(
        &bin,
        &dir.join("profile-shot"),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,1600",
            "--hide-scrollbars",
        ],
        &page,
    );
    let png = std::fs::read(&shot).unwrap_or_else(|e| {
        panic!(
            "no screenshot ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    assert_eq!((be(&png[16..20]), be(&png[20..24])), (1200, 1600));
    // A blank page compresses to a few kilobytes; text, tables and strips do not.
    assert!(
        png.len() > 40_000,
        "screenshot too plain: {} bytes",
        png.len()
    );
    if let Ok(keep) = std::env::var("LOOPGUARD_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
