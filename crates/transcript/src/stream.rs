//! Streaming reads: one line in memory at a time, records out as soon as they are complete.

use crate::error::{LineError, TranscriptError};
use crate::formats::native::LineState;
use crate::formats::{self, Format, FormatIssue};
use crate::{read_line_bounded, Entry, Record, MAX_LINE_BYTES};
use serde_json::Value;
use std::collections::VecDeque;
use std::io::BufRead;

/// A line buffer larger than this is given back after its line was read (one huge line must
/// not keep its memory for the rest of the file).
const KEEP_BUFFER_BYTES: usize = 1 << 20;

/// What a streaming read yields.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Item {
    /// A record and the line it came from.
    Entry(Entry),
    /// A line that could not be read as a record (bad UTF-8, too long, not a valid loopguard
    /// line). The read goes on with the next line.
    Bad(TranscriptError),
    /// A line of a Pi, Claude Code or Codex file that could not be mapped (or only in part).
    Issue(FormatIssue),
}

/// Reads a transcript one line at a time ([`Records::next_item`]); memory holds one line
/// and, for the native formats, the one assistant message still open.
///
/// ```
/// use loopguard_transcript::{Item, Records, Record};
/// let text = b"{\"type\":\"user\",\"text\":\"a\"}\nnot json\n{\"type\":\"compaction\"}\n";
/// let mut r = Records::new(&text[..], "t.jsonl");
/// let mut kinds = Vec::new();
/// while let Some(item) = r.next_item().unwrap() {
///     kinds.push(match item {
///         Item::Entry(e) => format!("{}:{:?}", e.line, e.record),
///         Item::Bad(e) => e.to_string(),
///         _ => String::new(),
///     });
/// }
/// assert_eq!(kinds[0], "0:User { text: \"a\" }");
/// assert!(kinds[1].starts_with("t.jsonl:2: invalid JSON"));
/// assert_eq!(kinds[2], "2:Compaction");
/// assert_eq!(r.lines(), 3);
/// ```
#[derive(Debug)]
pub struct Records<R> {
    reader: R,
    file: String,
    buf: Vec<u8>,
    max_line: usize,
    lines: usize,
    format: Option<Format>,
    native: Option<LineState>,
    out: VecDeque<Entry>,
    issues: VecDeque<FormatIssue>,
    bad: Option<TranscriptError>,
    records: usize,
    ended: bool,
}

impl std::fmt::Debug for LineState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LineState")
    }
}

impl<R: BufRead> Records<R> {
    /// A reader of `reader`, recognising the format from its first non-blank line. `file`
    /// names it in errors.
    pub fn new(reader: R, file: &str) -> Records<R> {
        Records {
            reader,
            file: file.to_owned(),
            buf: Vec::new(),
            max_line: MAX_LINE_BYTES,
            lines: 0,
            format: None,
            native: None,
            out: VecDeque::new(),
            issues: VecDeque::new(),
            bad: None,
            records: 0,
            ended: false,
        }
    }

    /// A reader that takes the input as loopguard JSONL whatever its first line says.
    pub fn loopguard(reader: R, file: &str) -> Records<R> {
        let mut r = Records::new(reader, file);
        r.format = Some(Format::Loopguard);
        r
    }

    /// Lines longer than `max` bytes are reported as [`LineError::TooLong`] and skipped
    /// (default [`MAX_LINE_BYTES`]).
    pub fn max_line(mut self, max: usize) -> Records<R> {
        self.max_line = max;
        self
    }

    /// The format: recognised from the first non-blank line; loopguard until then.
    pub fn format(&self) -> Format {
        self.format.unwrap_or(Format::Loopguard)
    }

    /// The lines read so far, blank lines included (all of them once the read ended).
    pub fn lines(&self) -> usize {
        self.lines
    }

    /// The file name used in errors.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// Issues of a native read counted beyond [`MAX_ISSUES`](crate::formats::native::MAX_ISSUES)
    /// and not yielded.
    pub fn issues_dropped(&mut self) -> usize {
        self.native.as_mut().map_or(0, LineState::issues_dropped)
    }

    /// The next item; `Ok(None)` at the end of the input. An error is an I/O error: the
    /// input cannot be read further.
    pub fn next_item(&mut self) -> Result<Option<Item>, TranscriptError> {
        loop {
            if let Some(b) = self.bad.take() {
                return Ok(Some(Item::Bad(b)));
            }
            if let Some(i) = self.issues.pop_front() {
                return Ok(Some(Item::Issue(i)));
            }
            if let Some(e) = self.out.pop_front() {
                return Ok(Some(Item::Entry(e)));
            }
            if self.ended {
                return Ok(None);
            }
            self.read_one()?;
        }
    }

    fn read_one(&mut self) -> Result<(), TranscriptError> {
        self.buf.clear();
        if self.buf.capacity() > KEEP_BUFFER_BYTES {
            self.buf = Vec::new();
        }
        let index = self.lines;
        let n = read_line_bounded(&mut self.reader, &mut self.buf, self.max_line).map_err(|e| {
            TranscriptError::Io {
                file: self.file.clone(),
                message: e.to_string(),
            }
        })?;
        if n == 0 {
            self.ended = true;
            if let Some(st) = &mut self.native {
                st.drain(true, &mut self.out, &mut self.issues);
            }
            return Ok(());
        }
        self.lines += 1;
        if n > self.max_line {
            self.line_problem(index, LineError::TooLong(self.max_line));
            return Ok(());
        }
        let raw = self.buf.strip_suffix(b"\n").unwrap_or(&self.buf);
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let text = match std::str::from_utf8(raw) {
            Ok(t) => t,
            Err(e) => {
                let problem = LineError::Utf8(e.valid_up_to());
                self.line_problem(index, problem);
                return Ok(());
            }
        };
        if text.trim().is_empty() {
            return Ok(());
        }
        if self.format.is_none() {
            let mut format = Format::Loopguard;
            if let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(text) {
                if let Some(f) = formats::detect_object(&obj) {
                    format = f;
                }
            }
            self.format = Some(format);
        }
        if self.native.is_none() && self.format != Some(Format::Loopguard) {
            self.native = LineState::new(self.format());
        }
        match &mut self.native {
            Some(st) => {
                st.line(index, text);
                st.drain(false, &mut self.out, &mut self.issues);
            }
            // A long line gives its buffer up to the record: its longest text is held once.
            None if text.len() >= formats::loopguard::IN_PLACE_BYTES => {
                let len = text.len();
                let mut line = std::mem::take(&mut self.buf);
                line.truncate(len);
                let parsed = match String::from_utf8(line) {
                    Ok(line) => formats::loopguard::parse_line_owned(line, self.records == 0),
                    Err(e) => Err(LineError::Utf8(e.utf8_error().valid_up_to())),
                };
                self.push_record(index, parsed);
            }
            None => {
                let parsed = formats::loopguard::parse_line(text, self.records == 0);
                self.push_record(index, parsed);
            }
        }
        Ok(())
    }

    /// Queues the record of line `index`, or keeps its error.
    fn push_record(&mut self, index: usize, parsed: Result<Record, LineError>) {
        match parsed {
            Ok(record) => {
                self.records += 1;
                self.out.push_back(Entry {
                    line: index,
                    record,
                });
            }
            Err(problem) => self.bad = Some(self.line_error(index, problem)),
        }
    }

    fn line_error(&self, index: usize, problem: LineError) -> TranscriptError {
        TranscriptError::Line {
            file: self.file.clone(),
            line: index + 1,
            problem,
        }
    }

    /// A line that cannot be read at all: an error of its own in a loopguard file, an issue
    /// of a native one.
    fn line_problem(&mut self, index: usize, problem: LineError) {
        match &mut self.native {
            Some(st) => {
                st.issue(index, problem.to_string());
                st.drain(false, &mut self.out, &mut self.issues);
            }
            None => self.bad = Some(self.line_error(index, problem)),
        }
    }
}
