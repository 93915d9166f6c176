//! `loopguard-eval [--preset P]... [--check] [--corpus DIR] [--out FILE]`: replays the labelled
//! corpus through `loopguard scan`'s code, prints the evaluation and writes
//! `docs/evaluation.md` (or, with `--check`, fails when that file is not current). Exits 1 when
//! the default preset breaks the gate (a finding on a clean session, or a covered loop missed).

use loopguard_eval::{
    compare_with_seed, corpus_dir, evaluate, gate_failures, read_disputed, read_labels,
    render_markdown, scan_corpus,
};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const ALL_PRESETS: &[&str] = &[
    "default",
    "pi-loop-guard",
    "pi-repetition-guard",
    "openclaw",
];

fn main() -> ExitCode {
    match real_main() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("loopguard-eval: {e}");
            ExitCode::from(2)
        }
    }
}

fn workspace_root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or(here)
}

fn real_main() -> Result<ExitCode, String> {
    let mut presets: Vec<String> = Vec::new();
    let mut check = false;
    let mut corpus: Option<PathBuf> = None;
    let root = workspace_root();
    let mut out = root.join("docs/evaluation.md");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--preset" => presets.push(args.next().ok_or("--preset needs a name")?),
            "--check" => check = true,
            "--corpus" => {
                corpus = Some(PathBuf::from(args.next().ok_or("--corpus needs a folder")?))
            }
            "--out" => out = PathBuf::from(args.next().ok_or("--out needs a file")?),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    let partial = !presets.is_empty();
    if presets.is_empty() {
        presets = ALL_PRESETS.iter().map(|s| (*s).to_owned()).collect();
    }
    let Some(corpus) = corpus.or_else(|| corpus_dir(&root)) else {
        if std::env::var("CI").as_deref() == Ok("true") {
            return Err(
                "the corpus is missing (set LOOPGUARD_CORPUS or provide ../shared/corpus)".into(),
            );
        }
        eprintln!("loopguard-eval: no corpus found (LOOPGUARD_CORPUS or ../shared/corpus); nothing to evaluate");
        return Ok(ExitCode::SUCCESS);
    };
    let labels = read_labels(&corpus.join("labels.toml")).map_err(|e| e.to_string())?;
    let disputed =
        read_disputed(&root.join("crates/eval/disputed.toml")).map_err(|e| e.to_string())?;
    let mut results = Vec::new();
    let mut gate = Vec::new();
    for p in &presets {
        let report = scan_corpus(&corpus, p)?;
        let evals = evaluate(&report, &labels, &disputed);
        if p == "default" {
            gate = gate_failures(&evals);
        }
        results.push((p.clone(), evals));
    }
    if let Some((_, default)) = results.iter().find(|(p, _)| p == "default") {
        for (p, seed) in results.iter().filter(|(p, _)| p != "default") {
            for v in compare_with_seed(default, seed) {
                eprintln!("note: default vs {p}: {v}");
            }
        }
    }
    let md = render_markdown(&results, &disputed);
    print!("{md}");
    if !partial {
        if check {
            let current = std::fs::read_to_string(&out).unwrap_or_default();
            if current != md {
                return Err(format!(
                    "{} is not current: run `cargo xtask eval` and commit it",
                    out.display()
                ));
            }
        } else {
            std::fs::write(&out, &md)
                .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
            eprintln!("wrote {}", out.display());
        }
    }
    if !gate.is_empty() {
        eprintln!("default preset fails the gate:");
        for g in &gate {
            eprintln!("  {g}");
        }
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
