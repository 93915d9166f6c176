//! Every relative link in the repository's Markdown, and every file the command's `--help`
//! names, points at a file in the repository.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().unwrap().is_dir() {
            if !matches!(name.as_str(), "target" | "node_modules" | ".git" | "corpus") {
                markdown_files(&path, out);
            }
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// The targets of `[text](target)` links in `text`.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(end) = rest.find(')') {
            found.push(rest[..end].to_owned());
        }
    }
    found
}

#[test]
fn relative_markdown_links_resolve() {
    let mut files = Vec::new();
    markdown_files(&repo(), &mut files);
    assert!(files.len() > 10, "found only {files:?}");
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        // The design document lives outside the repository: docs point at docs/ instead.
        if text.contains("DESIGN.md") {
            broken.push(format!("{}: names DESIGN.md", file.display()));
        }
        for link in links(&text) {
            let target = link.split('#').next().unwrap_or("");
            let external = ["http://", "https://", "mailto:"]
                .iter()
                .any(|p| link.starts_with(p));
            // Rustdoc's intra-doc links (`crate::core`) in READMEs included as crate docs.
            let intra_doc = target.contains("::");
            if external || intra_doc || target.is_empty() || target.contains(' ') {
                continue;
            }
            if !file.parent().unwrap().join(target).exists() {
                broken.push(format!("{}: {link}", file.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_help_names_only_files_in_the_repository() {
    let mut text = String::new();
    for args in [
        &["--help"][..],
        &["scan", "--help"],
        &["serve", "--help"],
        &["config", "check", "--help"],
        &["detectors", "--help"],
    ] {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let mut all = vec!["loopguard"];
        all.extend_from_slice(args);
        loopguard_cli::run(all, &mut out, &mut err);
        text.push_str(&String::from_utf8(out).unwrap());
    }
    assert!(text.contains("docs/contracts/sidecar.md"), "{text}");
    let mut named = 0;
    for word in text.split(|c: char| c.is_whitespace() || "()[],;".contains(c)) {
        let word = word.trim_end_matches(['.', ':']);
        if word.ends_with(".md") {
            named += 1;
            assert!(
                repo().join(word).exists(),
                "--help names {word}, not in the repository"
            );
        }
    }
    assert!(named >= 2, "{text}");
}
