//! `loopguard-eval [--preset P]... [--check] [--corpus DIR] [--out FILE]`: replays the labelled
//! corpus through `loopguard scan`'s code, prints the evaluation and writes
//! `docs/evaluation.md` (or, with `--check`, fails when that file is not current). Exits 1 when
//! the default preset breaks the gate (a finding on a clean session, or a covered loop missed).
//!
//! `loopguard-eval --measure-runs [--files LIST]`: prints, per context (prose, code, prose
//! with numbers masked, data) and root bucket, the longest legitimate periodic runs of the
//! files listed in `LIST` (one path a line; by default every file of the gate's roots) and of
//! the corpus's clean assistant texts: what tail-periodicity's threshold rows are set from.

use loopguard_eval::legit;
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
    let mut legit_only = false;
    let mut measure_runs = false;
    let mut file_list: Option<PathBuf> = None;
    let mut sample = legit::SAMPLE;
    let mut corpus: Option<PathBuf> = None;
    let root = workspace_root();
    let mut out = root.join("docs/evaluation.md");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--preset" => presets.push(args.next().ok_or("--preset needs a name")?),
            "--check" => check = true,
            "--legit-only" => legit_only = true,
            "--measure-runs" => measure_runs = true,
            "--files" => {
                file_list = Some(PathBuf::from(
                    args.next()
                        .ok_or("--files needs a file listing paths, one per line")?,
                ))
            }
            "--legit-sample" => {
                sample = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .ok_or("--legit-sample needs a number of files")?
            }
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
    if measure_runs {
        // The files listed (one path a line), else every qualifying file, not only the gate's
        // sample.
        let files = match &file_list {
            Some(list) => std::fs::read_to_string(list)
                .map_err(|e| format!("{}: {e}", list.display()))?
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(PathBuf::from)
                .collect(),
            None => legit::sample_files(&legit::default_roots(), usize::MAX),
        };
        let texts = legit::corpus_texts(&corpus, &labels)?;
        let m = legit::measure("default", &files, &texts)?;
        println!("files: {}, corpus texts: {}", files.len(), texts.len());
        for ((code, b), r) in &m {
            println!(
                "{} root<={} runs {} | longest span {} (root {}, copies {}) {} | most copies {} (root {}, span {}) {}",
                ["prose", "code ", "noisy", "data "].get(usize::from(*code)).unwrap_or(&"?"),
                legit::ROOT_BUCKETS.get(*b).copied().unwrap_or(0),
                r.runs,
                r.span.0, r.span.1, r.span.2, r.span.3,
                r.copies.0, r.copies.1, r.copies.2, r.copies.3
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let gate_report = legit_gate(&corpus, &labels, sample)?;
    let legit_failures = legit_failures(&gate_report);
    if legit_only {
        return Ok(if legit_failures.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }
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
    let text_md = legit::render_markdown(&text_section(
        &root,
        &corpus,
        &labels,
        gate_report.clone(),
        sample,
    )?);
    print!("{text_md}");
    if !partial {
        if check {
            let current = std::fs::read_to_string(&out).unwrap_or_default();
            // The text section is measured on this machine's files: only the corpus part,
            // which every machine reproduces, must be current.
            let generated = current
                .split_once(legit::SECTION_MARKER)
                .map_or(current.as_str(), |(head, _)| head);
            if generated != md {
                return Err(format!(
                    "{} is not current: run `cargo xtask eval` and commit it",
                    out.display()
                ));
            }
        } else {
            std::fs::write(&out, format!("{md}{text_md}"))
                .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
            eprintln!("wrote {}", out.display());
        }
    }
    if !gate.is_empty() || !legit_failures.is_empty() {
        eprintln!("default preset fails the gate:");
        for g in gate.iter().chain(&legit_failures) {
            eprintln!("  {g}");
        }
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Streams the legitimate-text set through the default preset and prints its summary.
fn legit_gate(
    corpus: &Path,
    labels: &[loopguard_eval::Label],
    sample: usize,
) -> Result<legit::LegitReport, String> {
    let roots = legit::default_roots();
    let files = legit::sample_files(&roots, sample);
    let texts = legit::corpus_texts(corpus, labels)?;
    let started = std::time::Instant::now();
    let report = legit::run_gate("default", &files, texts)?;
    eprintln!(
        "legitimate texts: {} ({} files under {}; {} corpus texts and thoughts), {} characters, {} findings, {:.1} s",
        report.texts(),
        report.files,
        roots
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        report.corpus,
        report.chars,
        report.findings.len(),
        started.elapsed().as_secs_f64()
    );
    for f in &report.findings {
        eprintln!(
            "  finding on legitimate text: {} {} at {:?} in {}",
            f.detector, f.level, f.offset, f.origin
        );
    }
    Ok(report)
}

/// The measured text section: the gate, the periodic runs of its texts, and the runaways
/// timed at three evidence scales.
fn text_section(
    root: &Path,
    corpus: &Path,
    labels: &[loopguard_eval::Label],
    gate: legit::LegitReport,
    sample: usize,
) -> Result<legit::TextSection, String> {
    use loopguard::tail_periodicity::Settings;
    let files = legit::sample_files(&legit::default_roots(), sample);
    let texts = legit::corpus_texts(corpus, labels)?;
    let runs = legit::measure("default", &files, &texts)?;
    let runaways = legit::runaways(corpus, labels, root)?;
    let mut scales = Vec::new();
    for scale in [50u32, 100, 200] {
        let settings = Settings {
            evidence_scale: scale,
            ..Settings::default()
        };
        let fp = legit::tail_false_positives(&settings, &files, &texts);
        scales.push((scale, fp, legit::time_runaways(&settings, &runaways)));
    }
    Ok(legit::TextSection { gate, runs, scales })
}

/// The legitimate-text gate's failures: any finding, or fewer texts than required.
fn legit_failures(r: &legit::LegitReport) -> Vec<String> {
    let mut out = Vec::new();
    if r.texts() < legit::REQUIRED {
        out.push(format!(
            "legitimate-text gate: only {} texts found ({} files, {} corpus texts), {} needed",
            r.texts(),
            r.files,
            r.corpus,
            legit::REQUIRED
        ));
    }
    if !r.findings.is_empty() {
        out.push(format!(
            "legitimate-text gate: {} findings on {} legitimate texts (listed above)",
            r.findings.len(),
            r.texts()
        ));
    }
    out
}
