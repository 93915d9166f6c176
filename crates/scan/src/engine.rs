//! The streaming scan of one session: each record is replayed and judged as it is read;
//! what the loops cost is counted from a bounded window of recent records.

use crate::tokens::{self, Price};
use crate::{
    FindingDetail, FindingReport, LoopReport, ScanError, ScanOptions, Scanned, SessionReport,
    TimelineEvent, Wasted, MAX_TIMELINE,
};
use loopguard::core::{truncate_chars, Event};
use loopguard::orchestrator::{Action, Guard, GuardTemplate};
use loopguard::{Config, ConfigError};
use loopguard_transcript::{Entry, Format, Item, Record, Records, Replayer, Transcript};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::io::BufRead;

/// Most (first event, line) pairs kept to map a finding's evidence to lines (older
/// evidence, beyond any detector's window, is left out of `lines`).
const MAX_SEQ_LINES: usize = 1 << 16;
/// Most records held back to count what a loop cost.
const MAX_HELD: usize = 4096;
/// Most bytes of text held back to count what a loop cost.
const MAX_HELD_BYTES: usize = 16 << 20;

/// Scans a stream of records.
pub fn scan_records<R: BufRead>(
    mut records: Records<R>,
    template: &GuardTemplate,
    opts: &ScanOptions,
) -> Result<Scanned, ScanError> {
    let file = records.file().to_owned();
    let mut engine = Engine::new(template.build()?, opts);
    let mut problems = Vec::new();
    let mut bad_lines = false;
    let mut io_error = None;
    loop {
        match records.next_item() {
            Ok(Some(Item::Entry(e))) => engine.entry(e),
            Ok(Some(Item::Bad(e))) => {
                bad_lines = true;
                problems.push(e.to_string());
            }
            Ok(Some(Item::Issue(i))) => problems.push(format!("{file}:{i}")),
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(e) => {
                io_error = Some(e);
                break;
            }
        }
    }
    let dropped = records.issues_dropped();
    if dropped > 0 {
        problems.push(format!("{file}: {dropped} more lines could not be mapped"));
    }
    let session = engine.finish(file, records.format(), records.lines());
    Ok(Scanned {
        session,
        problems,
        bad_lines,
        io_error,
    })
}

/// Replays one transcript already in memory through a fresh guard built from `config`
/// (already resolved).
pub fn scan_transcript(
    t: &Transcript,
    config: &Config,
    chunk: usize,
) -> Result<SessionReport, ConfigError> {
    scan_with(
        t,
        &Guard::builder().config(config.clone()).template()?,
        chunk,
    )
}

/// Replays one transcript already in memory through a fresh guard built from `template`.
pub fn scan_with(
    t: &Transcript,
    template: &GuardTemplate,
    chunk: usize,
) -> Result<SessionReport, ConfigError> {
    let opts = ScanOptions {
        chunk,
        ..ScanOptions::default()
    };
    let mut engine = Engine::new(template.build()?, &opts);
    for e in &t.entries {
        engine.entry(e.clone());
    }
    Ok(engine.finish(t.file.clone(), t.format, t.lines))
}

/// A record held back for the cost of loops.
struct Held {
    entry: Entry,
    bytes: usize,
    /// Its text's tokens, once counted.
    tokens: Option<u64>,
}

#[derive(Default)]
struct Cost {
    /// Text tokens the model read (user text, results).
    read: u64,
    /// Text tokens the model wrote (assistant text, call arguments).
    written: u64,
    /// Usage the transcript records.
    input: u64,
    output: u64,
    usage: bool,
}

impl Cost {
    fn add_record(&mut self, r: &Record, text_tokens: u64) {
        match r {
            Record::User { .. } | Record::ToolResult { .. } => self.read += text_tokens,
            Record::Assistant { .. } | Record::ToolCall { .. } => self.written += text_tokens,
            Record::Usage { input, output, .. } => {
                self.usage = true;
                self.input += input;
                self.output += output;
            }
            _ => {}
        }
    }

    fn text(&self) -> u64 {
        self.read + self.written
    }

    fn usd(&self, price: Option<Price>) -> Option<f64> {
        let p = price?;
        Some(if self.usage {
            p.cost(self.input, self.output)
        } else {
            p.cost(self.read, self.written)
        })
    }
}

struct LoopAcc {
    detector: String,
    key: String,
    tool: Option<String>,
    lo: usize,
    hi: usize,
    /// The lines whose records were counted already.
    counted: Option<(usize, usize)>,
    action: Action,
    findings: usize,
    cost: Cost,
    timeline: Vec<(usize, u8, TimelineEvent)>,
}

struct Judge {
    guard: Guard,
    seq: u64,
    seq_lines: VecDeque<(u64, usize)>,
    findings: Vec<FindingReport>,
    details: Vec<FindingDetail>,
    loops: Vec<LoopAcc>,
    loop_of: HashMap<(String, String), usize>,
    /// Loops that got a finding on the record being replayed.
    touched: Vec<usize>,
    /// The line of the first abort.
    cut: Option<usize>,
    wasted: Wasted,
    wasted_cost: Cost,
}

struct Engine {
    replayer: Replayer,
    judge: Judge,
    held: VecDeque<Held>,
    held_bytes: usize,
    model: Option<String>,
    price: Option<Price>,
}

impl Engine {
    fn new(guard: Guard, opts: &ScanOptions) -> Engine {
        Engine {
            replayer: Replayer::new(opts.chunk),
            judge: Judge {
                guard,
                seq: 0,
                seq_lines: VecDeque::new(),
                findings: Vec::new(),
                details: Vec::new(),
                loops: Vec::new(),
                loop_of: HashMap::new(),
                touched: Vec::new(),
                cut: None,
                wasted: Wasted::default(),
                wasted_cost: Cost::default(),
            },
            held: VecDeque::new(),
            held_bytes: 0,
            model: None,
            price: opts.price,
        }
    }

    fn entry(&mut self, e: Entry) {
        // Held first, then read where it is held: the record is moved once.
        let bytes = record_bytes(&e.record);
        self.held_bytes += bytes;
        self.held.push_back(Held {
            entry: e,
            bytes,
            tokens: None,
        });
        let Engine {
            replayer,
            judge: j,
            held,
            model,
            ..
        } = self;
        if let Some(Held { entry: e, .. }) = held.back() {
            if let Record::Usage { model: Some(m), .. } = &e.record {
                if model.as_deref() != Some(m) {
                    *model = Some(m.clone());
                }
            }
            match j.cut {
                Some(cut) if e.line > cut => j.waste(&e.record),
                _ => {
                    // The result of a call the guard refused (paired by the guard as it pairs
                    // every result) is waste too.
                    if let Record::ToolResult { id, tool, .. } = &e.record {
                        if j.guard.answers_refused(id, tool) {
                            j.waste(&e.record);
                        }
                    }
                }
            }
            replayer.entry(e, &mut |line, ev| j.observe(line, ev, Some(e)));
        }
        self.evict();
        let touched = std::mem::take(&mut self.judge.touched);
        for i in &touched {
            self.account(*i);
        }
        self.judge.touched = touched;
        self.judge.touched.clear();
    }

    /// Forgets the oldest held records beyond the bounds (never the newest).
    fn evict(&mut self) {
        while self.held.len() > MAX_HELD
            || (self.held_bytes > MAX_HELD_BYTES && self.held.len() > 1)
        {
            if let Some(h) = self.held.pop_front() {
                self.held_bytes -= h.bytes;
            }
        }
    }

    /// Counts the held records of loop `i`'s span not counted yet.
    fn account(&mut self, i: usize) {
        let Some(l) = self.judge.loops.get_mut(i) else {
            return;
        };
        let (lo, hi) = (l.lo, l.hi);
        let start = self.held.partition_point(|h| h.entry.line < lo);
        for h in self.held.range_mut(start..) {
            let line = h.entry.line;
            if line > hi {
                break;
            }
            if l.counted.is_some_and(|(a, b)| line >= a && line <= b) {
                continue;
            }
            let t = *h
                .tokens
                .get_or_insert_with(|| record_tokens(&h.entry.record));
            l.cost.add_record(&h.entry.record, t);
            if l.timeline.len() < MAX_TIMELINE {
                if let Some(ev) = timeline_event(&h.entry) {
                    l.timeline.push((line, 0, ev));
                }
            }
        }
        l.counted = Some(match l.counted {
            Some((a, b)) => (a.min(lo), b.max(hi)),
            None => (lo, hi),
        });
    }

    fn finish(mut self, file: String, format: Format, lines: usize) -> SessionReport {
        let j = &mut self.judge;
        self.replayer
            .finish(&mut |line, ev| j.observe(line, ev, None));
        let touched = std::mem::take(&mut self.judge.touched);
        for i in touched {
            self.account(i);
        }
        let price = self
            .price
            .or_else(|| self.model.as_deref().and_then(tokens::price_of));
        let j = self.judge;
        let mut wasted = j.wasted;
        if j.wasted_cost.usage {
            wasted.tokens = j.wasted_cost.input + j.wasted_cost.output;
        }
        wasted.usd = j.wasted_cost.usd(price);
        let loops = j
            .loops
            .into_iter()
            .map(|mut l| {
                l.timeline.sort_by_key(|(line, rank, _)| (*line, *rank));
                LoopReport {
                    usd: l.cost.usd(price),
                    input_tokens: l.cost.usage.then_some(l.cost.input),
                    output_tokens: l.cost.usage.then_some(l.cost.output),
                    tokens: l.cost.text(),
                    detector: l.detector,
                    key: l.key,
                    tool: l.tool,
                    lines: [l.lo, l.hi],
                    action: l.action,
                    findings: l.findings,
                    timeline: l.timeline.into_iter().map(|(_, _, e)| e).collect(),
                }
            })
            .collect();
        SessionReport {
            path: file,
            format: format.as_str(),
            events: lines,
            findings: j.findings,
            wasted,
            model: self.model,
            loops,
            details: j.details,
        }
    }
}

impl Judge {
    /// Counts one record as saved.
    fn waste(&mut self, r: &Record) {
        if matches!(r, Record::Usage { .. }) {
            self.wasted_cost.add_record(r, 0);
            return;
        }
        let t = record_tokens(r);
        self.wasted.events += 1;
        self.wasted.chars += record_chars(r);
        self.wasted.tokens += t;
        self.wasted_cost.add_record(r, t);
    }

    fn line_of(&self, seq: u64) -> Option<usize> {
        let i = self.seq_lines.partition_point(|&(first, _)| first <= seq);
        i.checked_sub(1)
            .and_then(|i| self.seq_lines.get(i))
            .map(|&(_, l)| l)
    }

    fn observe(&mut self, line: usize, ev: &Event<'_>, entry: Option<&Entry>) {
        let seq = self.seq;
        self.seq += 1;
        if self.seq_lines.back().map(|&(_, l)| l) != Some(line) {
            if self.seq_lines.len() >= MAX_SEQ_LINES {
                self.seq_lines.pop_front();
            }
            self.seq_lines.push_back((seq, line));
        }
        let v = self.guard.observe(ev);
        if v.is_continue() {
            return;
        }
        let action = v.action();
        if action == Action::Abort && self.cut.is_none() {
            self.cut = Some(line);
            if let (Event::TextDelta { .. }, Some(Entry { record, .. })) = (ev, entry) {
                self.waste_rest_of_message(record);
            }
        }
        if action == Action::Block && self.cut.is_none() {
            if let (Event::ToolCall { .. }, Some(e)) = (ev, entry) {
                self.waste(&e.record);
            }
        }
        for f in v.findings() {
            let mut lines: Vec<usize> =
                f.evidence.iter().filter_map(|&s| self.line_of(s)).collect();
            lines.sort_unstable();
            lines.dedup();
            let lo = lines.first().copied().unwrap_or(line).min(line);
            self.findings.push(FindingReport {
                event: line,
                detector: f.detector.to_owned(),
                level: f.level,
                action,
                count: f.count,
                message: f.message.clone(),
                offset: f.offset,
            });
            let k = (f.detector.to_owned(), f.key.clone());
            let i = match self.loop_of.get(&k) {
                Some(&i) => i,
                None => {
                    self.loops.push(LoopAcc {
                        detector: k.0.clone(),
                        key: k.1.clone(),
                        tool: f.tool.clone(),
                        lo,
                        hi: line,
                        counted: None,
                        action,
                        findings: 0,
                        cost: Cost::default(),
                        timeline: Vec::new(),
                    });
                    self.loop_of.insert(k, self.loops.len() - 1);
                    self.loops.len() - 1
                }
            };
            if let Some(l) = self.loops.get_mut(i) {
                l.lo = l.lo.min(lo);
                l.hi = l.hi.max(line);
                l.action = l.action.max(action);
                l.findings += 1;
                if l.tool.is_none() {
                    l.tool = f.tool.clone();
                }
                if l.timeline.len() < MAX_TIMELINE {
                    l.timeline.push((
                        line,
                        1,
                        TimelineEvent {
                            line,
                            kind: "verdict",
                            tool: f.tool.clone(),
                            label: truncate_chars(&one_line(&f.message), 160),
                            action: Some(action),
                            error: false,
                        },
                    ));
                }
            }
            if !self.touched.contains(&i) {
                self.touched.push(i);
            }
            self.details.push(FindingDetail {
                key: f.key.clone(),
                lines,
                tool: f.tool.clone(),
                code: v.code().map(str::to_owned),
                sample: f.sample.clone(),
            });
        }
    }

    /// An abort inside a streamed message saves the rest of the message.
    fn waste_rest_of_message(&mut self, r: &Record) {
        let Record::Assistant { text, thinking } = r else {
            return;
        };
        let mut skip = usize::try_from(self.guard.char_offset()).unwrap_or(usize::MAX);
        let mut left_chars = 0u64;
        let mut left_tokens = 0u64;
        for part in [thinking, text].into_iter().flatten() {
            let n = part.chars().count();
            if skip >= n {
                skip -= n;
                continue;
            }
            let at = part.char_indices().nth(skip).map_or(part.len(), |(i, _)| i);
            let rest = part.get(at..).unwrap_or("");
            left_chars += (n - skip) as u64;
            left_tokens += tokens::count(rest);
            skip = 0;
        }
        self.wasted.chars += left_chars;
        self.wasted.tokens += left_tokens;
        self.wasted_cost.written += left_tokens;
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Bytes of the strings a value holds (an upper bound of nothing; a cheap size).
fn value_bytes(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len() + 2,
        Value::Array(a) => a.iter().map(value_bytes).sum::<usize>() + 2,
        Value::Object(o) => {
            o.iter()
                .map(|(k, v)| k.len() + 3 + value_bytes(v))
                .sum::<usize>()
                + 2
        }
        _ => 8,
    }
}

fn record_bytes(r: &Record) -> usize {
    64 + match r {
        Record::User { text } => text.len(),
        Record::Assistant { text, thinking } => {
            text.as_deref().map_or(0, str::len) + thinking.as_deref().map_or(0, str::len)
        }
        Record::ToolCall { args, tool, id, .. } => value_bytes(args) + tool.len() + id.len(),
        Record::ToolResult { content, .. } => content.len(),
        _ => 0,
    }
}

fn record_chars(r: &Record) -> u64 {
    let n = |s: &str| s.chars().count() as u64;
    match r {
        Record::User { text } => n(text),
        Record::Assistant { text, thinking } => {
            text.as_deref().map_or(0, n) + thinking.as_deref().map_or(0, n)
        }
        Record::ToolCall { args, .. } => n(&serde_json::to_string(args).unwrap_or_default()),
        Record::ToolResult { content, .. } => n(content),
        _ => 0,
    }
}

/// Tokens of the text a record carries (what the model read or wrote).
fn record_tokens(r: &Record) -> u64 {
    match r {
        Record::User { text } => tokens::count(text),
        Record::Assistant { text, thinking } => {
            text.as_deref().map_or(0, tokens::count) + thinking.as_deref().map_or(0, tokens::count)
        }
        Record::ToolCall { args, tool, .. } => {
            tokens::count(tool) + tokens::count(&serde_json::to_string(args).unwrap_or_default())
        }
        Record::ToolResult { content, .. } => tokens::count(content),
        _ => 0,
    }
}

fn timeline_event(e: &Entry) -> Option<TimelineEvent> {
    let short = |s: &str| truncate_chars(&one_line(s), 80);
    let (kind, tool, label, error) = match &e.record {
        Record::User { text } => ("user", None, short(text), false),
        Record::Assistant { text, thinking } => (
            "assistant",
            None,
            short(text.as_deref().or(thinking.as_deref()).unwrap_or("")),
            false,
        ),
        Record::ToolCall { tool, args, .. } => (
            "call",
            Some(tool.clone()),
            short(&serde_json::to_string(args).unwrap_or_default()),
            false,
        ),
        Record::ToolResult {
            tool,
            content,
            is_error,
            ..
        } => ("result", Some(tool.clone()), short(content), *is_error),
        Record::Compaction => ("compaction", None, String::new(), false),
        _ => return None,
    };
    Some(TimelineEvent {
        line: e.line,
        kind,
        tool,
        label,
        action: None,
        error,
    })
}
