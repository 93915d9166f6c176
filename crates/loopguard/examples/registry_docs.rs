//! Writes (or, with `--check`, checks) the documentation generated from the registry: each
//! detector README's option table, the detector tables of README.md and docs/detectors/README.md,
//! and the feature table of the facade's README. It also checks that every registration
//! documents exactly the keys its options accept. `cargo xtask docs [--check]` runs it.
//!
//! Usage: `registry_docs ROOT [--check]`.

use acme_loopguard_detector as _;
use loopguard::{Registration, Registry};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.iter().any(|a| a == "--check");
    let Some(root) = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map(PathBuf::from)
    else {
        eprintln!("usage: registry_docs ROOT [--check]");
        return ExitCode::from(2);
    };
    match run(&root, check) {
        Ok(()) => ExitCode::SUCCESS,
        Err(problems) => {
            for p in problems {
                eprintln!("docs: {p}");
            }
            if !check {
                return ExitCode::FAILURE;
            }
            eprintln!("docs: run `cargo xtask docs` to regenerate");
            ExitCode::FAILURE
        }
    }
}

fn run(root: &Path, check: bool) -> Result<(), Vec<String>> {
    let registry = Registry::discover().map_err(|e| vec![e.to_string()])?;
    let mut problems = Vec::new();
    for reg in registry.entries() {
        problems.extend(undocumented(reg));
    }
    let mut builtin: Vec<&Registration> = loopguard::builtin().to_vec();
    builtin.sort_by_key(|r| r.code);
    let mut fragments: Vec<(PathBuf, &str, String)> = vec![
        (root.join("README.md"), "detectors", readme_table(&builtin)),
        (
            root.join("docs/detectors/README.md"),
            "detectors",
            docs_table(&builtin),
        ),
        (
            root.join("crates/loopguard/README.md"),
            "features",
            feature_table(&builtin),
        ),
    ];
    for reg in registry.entries() {
        match crate_dir(root, reg.package) {
            Some(dir) => fragments.push((dir.join("README.md"), "options", option_table(reg))),
            None => problems.push(format!(
                "{}: no crate directory for package `{}`",
                reg.name, reg.package
            )),
        }
    }
    for (file, name, body) in fragments {
        let shown = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) => {
                problems.push(format!("{shown}: {e}"));
                continue;
            }
        };
        let Some(new) = replace(&text, name, &body) else {
            problems.push(format!(
                "{shown}: no `<!-- generated: {name} ... -->` / `<!-- end generated: {name} -->` markers"
            ));
            continue;
        };
        if new == text {
            continue;
        }
        if check {
            problems.push(format!("{shown}: the `{name}` table is out of date"));
        } else if let Err(e) = std::fs::write(&file, new) {
            problems.push(format!("{shown}: {e}"));
        } else {
            eprintln!("docs: wrote the `{name}` table of {shown}");
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// The text with the lines between the markers of fragment `name` replaced by `body`.
fn replace(text: &str, name: &str, body: &str) -> Option<String> {
    let begin = format!("<!-- generated: {name} ");
    let end = format!("<!-- end generated: {name} -->");
    let b = text.find(&begin)?;
    let after_begin = b + text[b..].find('\n')? + 1;
    let e = after_begin + text[after_begin..].find(&end)?;
    Some(format!("{}{body}{}", &text[..after_begin], &text[e..]))
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn option_table(reg: &Registration) -> String {
    let mut out = String::from("| key | type | default | meaning |\n|---|---|---|---|\n");
    let _ = writeln!(
        out,
        "| `enabled` | bool | `{}` | Whether the detector runs (common to every detector). |",
        reg.default_enabled
    );
    for o in reg.options {
        let _ = writeln!(
            out,
            "| `{}` | {} | `{}` | {} |",
            o.name,
            cell(o.ty),
            cell(o.default),
            cell(o.doc)
        );
    }
    out
}

fn readme_table(regs: &[&Registration]) -> String {
    let mut out = String::from("| name | code | catches |\n|---|---|---|\n");
    for r in regs {
        let _ = writeln!(out, "| {} | {} | {} |", r.name, r.code, cell(r.summary));
    }
    out
}

/// `loopguard-detect-known-poll` → `detect-known-poll`.
fn short(package: &str) -> &str {
    package.strip_prefix("loopguard-").unwrap_or(package)
}

fn docs_table(regs: &[&Registration]) -> String {
    let mut out = String::from("| name | code | crate |\n|---|---|---|\n");
    for r in regs {
        let dir = short(r.package);
        let _ = writeln!(
            out,
            "| {} | {} | [crates/{dir}](../../crates/{dir}/README.md) |",
            r.name, r.code
        );
    }
    out
}

fn feature_table(regs: &[&Registration]) -> String {
    let mut out = String::from("| feature | detector crate | module |\n|---|---|---|\n");
    for r in regs {
        let module = short(r.package)
            .strip_prefix("detect-")
            .unwrap_or(short(r.package))
            .replace('-', "_");
        let _ = writeln!(out, "| `{}` | `{}` | `{module}` |", r.name, r.package);
    }
    out
}

/// The directory of the workspace member whose package is `package`.
fn crate_dir(root: &Path, package: &str) -> Option<PathBuf> {
    let wanted = format!("name = \"{package}\"");
    for parent in ["crates", "examples"] {
        let Ok(dirs) = std::fs::read_dir(root.join(parent)) else {
            continue;
        };
        for d in dirs.flatten() {
            let manifest = d.path().join("Cargo.toml");
            if std::fs::read_to_string(&manifest)
                .is_ok_and(|m| m.lines().any(|l| l.trim() == wanted))
            {
                return Some(d.path());
            }
        }
    }
    None
}

/// Differences between the keys a registration's options accept and those it documents. An
/// inner table is documented either by dotted names (`window.size`) or by its type
/// (`table {enabled, size}`).
fn undocumented(reg: &Registration) -> Vec<String> {
    let mut problems = Vec::new();
    // A renamed key's old spelling is still accepted (a serde alias) but documented only as
    // deprecated, under its new name.
    let Some(accepted) = reg.current_keys_in("") else {
        return vec![format!(
            "{}: its constructor does not list the keys it accepts (parse with loopguard_core::parse_options and deny_unknown_fields)",
            reg.name
        )];
    };
    let top = reg.documented_tops();
    compare(reg.name, &accepted, &top, &mut problems);
    for table in &top {
        let documented = reg.documented_keys_in(table);
        if documented.is_empty() {
            continue;
        }
        let scope = format!("{}.{table}", reg.name);
        match reg.current_keys_in(table) {
            Some(accepted) => compare(&scope, &accepted, &documented, &mut problems),
            None => problems.push(format!("{scope}: the inner table does not list its keys")),
        }
    }
    problems
}

fn compare(
    scope: &str,
    accepted: &BTreeSet<String>,
    documented: &BTreeSet<String>,
    problems: &mut Vec<String>,
) {
    for k in accepted.difference(documented) {
        problems.push(format!(
            "{scope}: key `{k}` is accepted but has no OptionDoc"
        ));
    }
    for k in documented.difference(accepted) {
        problems.push(format!("{scope}: OptionDoc `{k}` names no accepted key"));
    }
}
