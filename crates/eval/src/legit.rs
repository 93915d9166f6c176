//! The legitimate-text gate: real files found on the machine (the Rust sources of the Cargo
//! registry, the Python standard library) and every assistant text and thought of the
//! corpus's clean sessions, each streamed as one assistant answer in 16-character deltas
//! through the default preset, exactly as `loopguard scan` replays
//! `{"type":"user","text":"write NAME"}` + `{"type":"assistant","text":TEXT}`.
//!
//! Files are read in place and never copied. The set is deterministic for a given machine:
//! candidate paths are sorted, then a fixed-size sample is taken in the order of a hash of
//! each path relative to its root (so the sample does not depend on where the root lies).

use loopguard::orchestrator::GuardTemplate;
use loopguard_transcript::{Entry, Format, Record, Transcript};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Extensions of the files taken.
pub const EXTENSIONS: &[&str] = &["rs", "py", "md", "toml", "json", "html"];
/// Smallest file taken, in bytes.
pub const MIN_BYTES: u64 = 2 * 1024;
/// Largest file taken, in bytes.
pub const MAX_BYTES: u64 = 300 * 1024;
/// Files sampled from the machine (at most).
pub const SAMPLE: usize = 5_000;
/// Texts the gate needs.
pub const REQUIRED: usize = 3_000;
/// Delta size of the replay, in characters.
pub const CHUNK: usize = 16;

/// Where a legitimate text comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A file on the machine.
    File(PathBuf),
    /// An assistant text (`thinking = false`) or thought of a corpus session.
    Corpus {
        /// The session file name.
        session: String,
        /// 0-based line.
        line: usize,
        /// The thought rather than the visible text.
        thinking: bool,
    },
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::File(p) => write!(f, "{}", p.display()),
            Origin::Corpus {
                session,
                line,
                thinking,
            } => write!(
                f,
                "{session}:{line} ({})",
                if *thinking { "thinking" } else { "text" }
            ),
        }
    }
}

/// The roots searched for files: `$CARGO_HOME/registry/src` (default `~/.cargo/registry/src`)
/// and the Python standard library (`sysconfig`'s `stdlib` path, else `/usr/lib/python3*`).
pub fn default_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    if let Some(h) = cargo_home {
        let src = h.join("registry/src");
        if src.is_dir() {
            roots.push(src);
        }
    }
    let stdlib = std::process::Command::new("python3")
        .args([
            "-c",
            "import sysconfig;print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .filter(|p| p.is_dir());
    match stdlib {
        Some(p) => roots.push(p),
        None => {
            if let Ok(rd) = std::fs::read_dir("/usr/lib") {
                let mut found: Vec<PathBuf> = rd
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| {
                        p.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with("python3"))
                            && p.is_dir()
                    })
                    .collect();
                found.sort();
                roots.extend(found);
            }
        }
    }
    roots
}

/// FNV-1a, 64 bits: a fixed, platform-independent order for the sample.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.filter_map(Result::ok) {
        let Ok(ft) = e.file_type() else { continue };
        let p = e.path();
        if ft.is_dir() {
            walk(&p, out);
        } else if ft.is_file()
            && p.extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| EXTENSIONS.contains(&x))
            && e.metadata()
                .is_ok_and(|m| (MIN_BYTES..=MAX_BYTES).contains(&m.len()))
        {
            out.push(p);
        }
    }
}

/// The qualifying files under `roots` (extension and size), then at most `sample` of them
/// in hash order of their path relative to the root, returned sorted.
pub fn sample_files(roots: &[PathBuf], sample: usize) -> Vec<PathBuf> {
    let mut all: Vec<(u64, PathBuf)> = Vec::new();
    for root in roots {
        let mut found = Vec::new();
        walk(root, &mut found);
        for p in found {
            let rel = p.strip_prefix(root).unwrap_or(&p);
            all.push((fnv(rel.to_string_lossy().as_bytes()), p));
        }
    }
    all.sort();
    all.dedup_by(|a, b| a.1 == b.1);
    all.truncate(sample);
    let mut files: Vec<PathBuf> = all.into_iter().map(|(_, p)| p).collect();
    files.sort();
    files
}

/// Every assistant text and thought of the corpus sessions labelled `loop = false`.
pub fn corpus_texts(
    corpus: &Path,
    labels: &[crate::Label],
) -> Result<Vec<(Origin, String)>, String> {
    let mut out = Vec::new();
    let mut clean: Vec<&str> = labels
        .iter()
        .filter(|l| l.clean())
        .map(|l| l.path.as_str())
        .collect();
    clean.sort_unstable();
    for name in clean {
        let t = loopguard_transcript::read_file(&corpus.join(name)).map_err(|e| e.to_string())?;
        for e in &t.entries {
            if let Record::Assistant { text, thinking } = &e.record {
                for (body, is_thought) in [(text, false), (thinking, true)] {
                    if let Some(b) = body.as_ref().filter(|b| !b.is_empty()) {
                        out.push((
                            Origin::Corpus {
                                session: name.to_owned(),
                                line: e.line,
                                thinking: is_thought,
                            },
                            b.clone(),
                        ));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// `write NAME` + one assistant message holding `body` (as its thought when `thinking`).
pub fn answer(name: &str, body: String, thinking: bool) -> Transcript {
    let record = if thinking {
        Record::Assistant {
            text: None,
            thinking: Some(body),
        }
    } else {
        Record::Assistant {
            text: Some(body),
            thinking: None,
        }
    };
    Transcript {
        file: name.to_owned(),
        format: Format::Loopguard,
        lines: 2,
        entries: vec![
            Entry {
                line: 0,
                record: Record::User {
                    text: format!("write {name}"),
                },
            },
            Entry { line: 1, record },
        ],
        issues: Vec::new(),
    }
}

/// One finding on a legitimate text.
#[derive(Clone, Debug, PartialEq)]
pub struct LegitFinding {
    /// Where the text came from.
    pub origin: String,
    /// Detector.
    pub detector: String,
    /// `warning` or `critical`.
    pub level: String,
    /// Character offset where it fired, for text detectors.
    pub offset: Option<u64>,
}

/// The outcome of the gate.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LegitReport {
    /// Files taken from the machine.
    pub files: usize,
    /// Corpus texts and thoughts.
    pub corpus: usize,
    /// Files that were not UTF-8 (skipped, not counted).
    pub skipped: usize,
    /// Characters streamed.
    pub chars: u64,
    /// Every finding.
    pub findings: Vec<LegitFinding>,
}

impl LegitReport {
    /// Texts streamed.
    pub fn texts(&self) -> usize {
        self.files + self.corpus
    }
}

fn stream(
    template: &GuardTemplate,
    origin: &Origin,
    t: &Transcript,
    report: &mut LegitReport,
) -> Result<(), String> {
    let s = loopguard_cli::scan::scan_with(t, template, CHUNK).map_err(|e| e.to_string())?;
    for f in s.findings {
        report.findings.push(LegitFinding {
            origin: origin.to_string(),
            detector: f.detector,
            level: serde_json::to_value(f.level)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            offset: f.offset,
        });
    }
    Ok(())
}

/// Streams every file of `files` and every text of `corpus` through `preset`.
pub fn run_gate(
    preset: &str,
    files: &[PathBuf],
    corpus: Vec<(Origin, String)>,
) -> Result<LegitReport, String> {
    let config = loopguard_cli::load_config(None, Some(preset)).map_err(|e| e.to_string())?;
    let template = loopguard::orchestrator::Guard::builder()
        .config(config)
        .template()
        .map_err(|e| e.to_string())?;
    let mut report = LegitReport::default();
    for p in files {
        let Ok(text) = std::fs::read_to_string(p) else {
            report.skipped += 1;
            continue;
        };
        report.files += 1;
        report.chars += text.chars().count() as u64;
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("file");
        let origin = Origin::File(p.clone());
        stream(&template, &origin, &answer(name, text, false), &mut report)?;
    }
    for (origin, text) in corpus {
        report.corpus += 1;
        report.chars += text.chars().count() as u64;
        let thinking = matches!(origin, Origin::Corpus { thinking: true, .. });
        stream(
            &template,
            &origin,
            &answer("answer", text, thinking),
            &mut report,
        )?;
    }
    Ok(report)
}

/// The line that opens the machine-measured text section of docs/evaluation.md.
pub const SECTION_MARKER: &str = "\n## Text detectors on legitimate text\n";

/// The text section of docs/evaluation.md.
pub fn render_markdown(r: &LegitReport) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    s.push_str(SECTION_MARKER);
    let _ = writeln!(
        s,
        "\nMeasured on the machine that ran `cargo xtask eval` (`--check` compares only the sections \
         above). Every qualifying file (extensions {}, {}–{} KiB) of the Cargo registry sources and \
         the Python standard library, sampled in a fixed hash order to at most {SAMPLE}, and every \
         assistant text and thought of the corpus's clean sessions, each streamed as one \
         assistant answer in {CHUNK}-character deltas through the default preset.\n",
        EXTENSIONS
            .iter()
            .map(|e| format!("`.{e}`"))
            .collect::<Vec<_>>()
            .join(" "),
        MIN_BYTES / 1024,
        MAX_BYTES / 1024
    );
    let _ = writeln!(
        s,
        "| texts | files | corpus texts | characters | findings |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|");
    let _ = writeln!(
        s,
        "| {} | {} | {} | {} | {} |",
        r.texts(),
        r.files,
        r.corpus,
        r.chars,
        r.findings.len()
    );
    s
}

/// Root-length buckets of the run measurement (upper bounds, inclusive).
pub const ROOT_BUCKETS: &[u64] = &[1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096, u64::MAX];

/// The longest legitimate periodic runs in one bucket and context.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunMax {
    /// Runs seen.
    pub runs: u64,
    /// Longest span, with its root, copies and text.
    pub span: (u64, u64, u64, String),
    /// Most copies, with its root, span and text.
    pub copies: (u64, u64, u64, String),
}

/// Every maximal exact periodic run of every text, the tail-periodicity preparation of
/// `preset` applied, by (code, root bucket).
pub fn measure(
    preset: &str,
    files: &[PathBuf],
    corpus: &[(Origin, String)],
) -> Result<BTreeMap<(bool, usize), RunMax>, String> {
    use loopguard::tail_periodicity::{measure_runs, Options, Settings};
    let config = loopguard_cli::load_config(None, Some(preset)).map_err(|e| e.to_string())?;
    let mut table = config
        .detectors
        .get("tail-periodicity")
        .cloned()
        .unwrap_or_default();
    table.remove("enabled");
    let options: Options = toml::Value::Table(table)
        .try_into()
        .map_err(|e| format!("tail-periodicity options: {e}"))?;
    let settings = Settings::from_options(&options).map_err(|e| e.to_string())?;
    let mut out: BTreeMap<(bool, usize), RunMax> = BTreeMap::new();
    let mut one = |origin: String, text: &str| {
        for m in measure_runs(&settings, text) {
            let b = ROOT_BUCKETS
                .iter()
                .position(|&hi| m.run.root <= hi)
                .unwrap_or(0);
            let e = out.entry((m.code, b)).or_default();
            e.runs += 1;
            let (span, copies) = (m.run.span(), m.run.copies());
            if span > e.span.0 {
                e.span = (span, m.run.root, copies, origin.clone());
            }
            if copies > e.copies.0 {
                e.copies = (copies, m.run.root, span, origin.clone());
            }
        }
    };
    for p in files {
        if let Ok(text) = std::fs::read_to_string(p) {
            one(p.display().to_string(), &text);
        }
    }
    for (o, text) in corpus {
        one(o.to_string(), text);
    }
    Ok(out)
}
