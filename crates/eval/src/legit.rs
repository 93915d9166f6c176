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

/// A fixed, platform-independent order for the sample.
fn fnv(bytes: &[u8]) -> u64 {
    loopguard::core::fnv1a(loopguard::core::FNV1A_START, bytes)
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
    let s = loopguard_scan::scan_with(t, template, CHUNK).map_err(|e| e.to_string())?;
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
    let config = loopguard::orchestrator::resolve(&loopguard::Config {
        preset: Some(preset.to_owned()),
        ..loopguard::Config::default()
    })
    .map_err(|e| e.to_string())?;
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

/// The measured parts of the text section.
#[derive(Clone, Debug, Default)]
pub struct TextSection {
    /// The gate.
    pub gate: LegitReport,
    /// The longest periodic runs of the gate's texts, by (code, root bucket).
    pub runs: BTreeMap<(u8, usize), RunMax>,
    /// For each evidence scale (percent): tail-periodicity's findings on the gate's texts and
    /// the runaways timed.
    pub scales: Vec<(u32, usize, Vec<Timed>)>,
}

/// The text section of docs/evaluation.md.
pub fn render_markdown(t: &TextSection) -> String {
    use std::fmt::Write;
    let r = &t.gate;
    let mut s = String::new();
    s.push_str(SECTION_MARKER);
    let _ = writeln!(
        s,
        "\nMeasured on the machine that ran `cargo xtask eval` (`--check` compares only the sections \
         above, and fails when any legitimate text gets a finding or fewer than {REQUIRED} texts are \
         found). Every qualifying file (extensions {}, {}–{} KiB) of the Cargo registry sources and \
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
    for f in &r.findings {
        let _ = writeln!(
            s,
            "\n- {} {} at {:?} in `{}`",
            f.detector, f.level, f.offset, f.origin
        );
    }
    let _ = writeln!(
        s,
        "\n### Longest exact periodic runs of those texts, and the default thresholds\n\n\
         Per root length (the primitive root of the repeated unit), in prose and in code (inside a \
         fence, or a message most of whose lines look like code): the longest span and the most \
         copies of any maximal run, against the span the default's threshold row asks of a run \
         of that root (`span` and `copies × root`, whichever is larger; tiny roots count by span \
         only). Runs of data (inside one word of data, or begun on a line already 4,096 \
         characters long) are counted in their context and again as data, against the code row \
         and the data row, whichever asks more.\n"
    );
    let _ = writeln!(
        s,
        "| context | root ≤ | runs | longest span (root, copies) | most copies (root) | threshold row |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    for ((code, b), m) in &t.runs {
        let hi = ROOT_BUCKETS.get(*b).copied().unwrap_or(0);
        use loopguard::tail_periodicity::{evidence::row_for, CODE_TABLE, DATA_TABLE};
        let table = match code {
            0 => loopguard::tail_periodicity::PROSE_TABLE,
            1 | 3 => CODE_TABLE,
            _ => loopguard::tail_periodicity::NOISY_TABLE,
        };
        let mut row = row_for(table, m.span.1);
        if *code == 3 {
            row.span = row.span.max(row_for(DATA_TABLE, m.span.1).span);
        }
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} ({}, {}) | {} ({}) | span ≥ {}{} |",
            match code {
                0 => "prose",
                1 => "code",
                3 => "data",
                _ => "prose, numbers masked",
            },
            if hi == u64::MAX {
                "∞".to_owned()
            } else {
                hi.to_string()
            },
            m.runs,
            m.span.0,
            m.span.1,
            m.span.2,
            m.copies.0,
            m.copies.1,
            row.span,
            if row.copies > 0 {
                format!(", copies ≥ {}", row.copies)
            } else {
                String::new()
            }
        );
    }
    let _ = writeln!(
        s,
        "\n### The cost of waiting\n\n\
         Every text runaway of the corpus and `examples/`, and the project's runaway fixtures, \
         streamed in {CHUNK}-character deltas through tail-periodicity: the characters streamed \
         after the loop began (the first character of its periodic run) before the detector \
         fired, at three settings of `evidence-scale` (the default is 100), beside the findings \
         the same setting gives on the legitimate texts above.\n"
    );
    let _ = writeln!(
        s,
        "| evidence-scale | findings on legitimate texts | runaways caught | median | max |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|");
    for (scale, fp, rows) in &t.scales {
        let caught = rows.iter().filter(|r| r.fired.is_some()).count();
        let (med, max) = latency(rows).unwrap_or((0, 0));
        let _ = writeln!(
            s,
            "| {scale} | {fp} | {caught}/{} | {med} | {max} |",
            rows.len()
        );
    }
    if let Some((_, _, rows)) = t.scales.iter().find(|(sc, _, _)| *sc == 100) {
        let _ = writeln!(s, "\n| runaway (default) | characters | root | loop began at | fired at | streamed after it began |");
        let _ = writeln!(s, "|---|---|---|---|---|---|");
        for r in rows {
            match r.fired {
                Some((root, start, off)) => {
                    let _ = writeln!(
                        s,
                        "| {} | {} | {root} | {start} | {off} | {} |",
                        r.name,
                        r.chars,
                        off - start
                    );
                }
                None => {
                    let _ = writeln!(s, "| {} | {} | – | – | missed | – |", r.name, r.chars);
                }
            }
        }
    }
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
/// `preset` applied, by (context: 0 prose, 1 code, 2 prose with numbers masked, 3 data — a
/// run inside a word of data or on a long line, whatever else it is; root bucket).
pub fn measure(
    preset: &str,
    files: &[PathBuf],
    corpus: &[(Origin, String)],
) -> Result<BTreeMap<(u8, usize), RunMax>, String> {
    use loopguard::tail_periodicity::{measure_runs, Options, Settings};
    let config = loopguard::orchestrator::resolve(&loopguard::Config {
        preset: Some(preset.to_owned()),
        ..loopguard::Config::default()
    })
    .map_err(|e| e.to_string())?;
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
    let mut out: BTreeMap<(u8, usize), RunMax> = BTreeMap::new();
    let mut one = |origin: String, text: &str| {
        for m in measure_runs(&settings, text) {
            let b = ROOT_BUCKETS
                .iter()
                .position(|&hi| m.run.root <= hi)
                .unwrap_or(0);
            let context = if m.noisy { 2 } else { u8::from(m.code) };
            // A run of data counts in its context and among the runs of data.
            for c in std::iter::once(context).chain(m.data.then_some(3)) {
                let e = out.entry((c, b)).or_default();
                e.runs += 1;
                let (span, copies) = (m.run.span(), m.run.copies());
                if span > e.span.0 {
                    e.span = (span, m.run.root, copies, origin.clone());
                }
                if copies > e.copies.0 {
                    e.copies = (copies, m.run.root, span, origin.clone());
                }
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

/// A text runaway to time: where it comes from and its text.
#[derive(Clone, Debug, PartialEq)]
pub struct Runaway {
    /// A name for the table.
    pub name: String,
    /// The message text.
    pub text: String,
    /// Streamed as the message's thought.
    pub thinking: bool,
    /// Where the loop began, when known (else the start of the exact periodic run at the
    /// firing point).
    pub began: Option<u64>,
}

/// Every text runaway: the assistant messages of the corpus sessions labelled as text loops,
/// those of `examples/text-runaway.jsonl`, and the project's runaway fixtures.
pub fn runaways(
    corpus: &Path,
    labels: &[crate::Label],
    workspace: &Path,
) -> Result<Vec<Runaway>, String> {
    let mut out = Vec::new();
    let mut files: Vec<(String, PathBuf)> = labels
        .iter()
        .filter(|l| {
            l.loops()
                && l.kind
                    .as_deref()
                    .is_some_and(|k| k == "text-periodic" || k == "text-variation")
        })
        .map(|l| (l.path.clone(), corpus.join(&l.path)))
        .collect();
    files.sort();
    files.push((
        "examples/text-runaway.jsonl".to_owned(),
        workspace.join("examples/text-runaway.jsonl"),
    ));
    for (name, path) in files {
        let t = loopguard_transcript::read_file(&path).map_err(|e| e.to_string())?;
        for e in &t.entries {
            if let Record::Assistant { text, thinking } = &e.record {
                for (body, is_thought) in [(text, false), (thinking, true)] {
                    if let Some(b) = body.as_ref().filter(|b| !b.is_empty()) {
                        out.push(Runaway {
                            name: name.clone(),
                            text: b.clone(),
                            thinking: is_thought,
                            began: None,
                        });
                    }
                }
            }
        }
    }
    use loopguard_testkit::texts;
    let fixtures = [
        (
            "fixture: 92-line code block ×32",
            format!(
                "Here is the module:\n\n{}",
                texts::block_92_lines().repeat(32)
            ),
            false,
        ),
        (
            "fixture: 2-line thought ×1420",
            texts::thought_2_lines().repeat(1420),
            true,
        ),
        (
            "fixture: 143-character sentence ×20",
            format!("{}\n\n{}", texts::prose(), texts::unit_143().repeat(20)),
            false,
        ),
        (
            "fixture: five-paragraph answer ×6",
            format!(
                "Summary.\n\n{}",
                format!("{}\n\n", texts::prose()).repeat(6)
            ),
            false,
        ),
    ];
    for (name, text, thinking) in fixtures {
        out.push(Runaway {
            name: name.to_owned(),
            text,
            thinking,
            began: None,
        });
    }
    let head = "I'll retry the deployment until the health check passes.\n\n";
    out.push(Runaway {
        name: "fixture: counter loop, copies differ in their numbers ×40".to_owned(),
        text: texts::noisy_loop(40),
        thinking: false,
        began: Some(head.chars().count() as u64),
    });
    Ok(out)
}

/// Streams `text` as one message through one tail-periodicity detector; the finding's
/// offset and root (unit) length.
pub fn tail_fire(
    settings: &loopguard::tail_periodicity::Settings,
    text: &str,
    thinking: bool,
) -> Option<(u64, u64)> {
    use loopguard::core::{Bus, Event, Stream};
    let det = loopguard::tail_periodicity::TailPeriodicity::new(settings.clone());
    let mut bus = Bus::new(vec![Box::new(det)]);
    let stream = if thinking {
        Stream::Thinking
    } else {
        Stream::Text
    };
    let _ = bus.observe(&Event::MessageStart);
    let mut rest = text;
    while !rest.is_empty() {
        let cut = rest
            .char_indices()
            .nth(CHUNK)
            .map_or(rest.len(), |(i, _)| i);
        let (delta, tail) = rest.split_at(cut);
        rest = tail;
        if let Some(f) = bus
            .observe(&Event::TextDelta { stream, delta })
            .into_iter()
            .next()
        {
            let root = f.key.split('/').nth(1).and_then(|q| q.parse().ok())?;
            return Some((f.offset?, root));
        }
    }
    None
}

/// Where the loop began: the start of the run of period `root` that ends at `offset`.
pub fn loop_start(text: &str, offset: u64, root: u64) -> u64 {
    let chars: Vec<char> = text.chars().take(offset as usize).collect();
    let p = root as usize;
    let mut start = chars.len().saturating_sub(p);
    while start > 0 && chars.get(start - 1) == chars.get(start - 1 + p) {
        start -= 1;
    }
    start as u64
}

/// One row of the cost-of-waiting table.
#[derive(Clone, Debug, PartialEq)]
pub struct Timed {
    /// The runaway.
    pub name: String,
    /// Its length in characters.
    pub chars: u64,
    /// Root length, where the loop began and where it fired.
    pub fired: Option<(u64, u64, u64)>,
}

/// Times every runaway under `settings`.
pub fn time_runaways(
    settings: &loopguard::tail_periodicity::Settings,
    runaways: &[Runaway],
) -> Vec<Timed> {
    runaways
        .iter()
        .map(|r| Timed {
            name: r.name.clone(),
            chars: r.text.chars().count() as u64,
            fired: tail_fire(settings, &r.text, r.thinking).map(|(off, root)| {
                (
                    root,
                    r.began.unwrap_or_else(|| loop_start(&r.text, off, root)),
                    off,
                )
            }),
        })
        .collect()
}

/// Median and max of the characters streamed after the loop began, over the caught ones.
pub fn latency(rows: &[Timed]) -> Option<(u64, u64)> {
    let mut v: Vec<u64> = rows
        .iter()
        .filter_map(|t| t.fired.map(|(_, start, off)| off - start))
        .collect();
    v.sort_unstable();
    let max = *v.last()?;
    let med = v.get(v.len() / 2).copied()?;
    Some((med, max))
}

/// Legitimate texts on which tail-periodicity alone fires under `settings`.
pub fn tail_false_positives(
    settings: &loopguard::tail_periodicity::Settings,
    files: &[PathBuf],
    corpus: &[(Origin, String)],
) -> usize {
    let mut n = 0;
    for p in files {
        if let Ok(text) = std::fs::read_to_string(p) {
            n += usize::from(tail_fire(settings, &text, false).is_some());
        }
    }
    for (o, text) in corpus {
        let thinking = matches!(o, Origin::Corpus { thinking: true, .. });
        n += usize::from(tail_fire(settings, text, thinking).is_some());
    }
    n
}
