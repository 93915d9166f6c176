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
    /// The line being read when it is not wholly in the reader's buffer.
    buf: Vec<u8>,
    st: Lines,
}

/// What a read keeps between lines, apart from the input.
#[derive(Debug)]
struct Lines {
    file: String,
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

/// What [`Lines::line`] left to its caller.
enum Left {
    /// Nothing, or items queued.
    Nothing,
    /// The item of a loopguard line, handed straight to the caller rather than queued.
    Item(Item),
    /// A long loopguard line: the caller gives its text up to the record
    /// ([`formats::loopguard::parse_line_owned`]).
    Owned,
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
            buf: Vec::new(),
            st: Lines {
                file: file.to_owned(),
                max_line: MAX_LINE_BYTES,
                lines: 0,
                format: None,
                native: None,
                out: VecDeque::new(),
                issues: VecDeque::new(),
                bad: None,
                records: 0,
                ended: false,
            },
        }
    }

    /// A reader that takes the input as loopguard JSONL whatever its first line says.
    pub fn loopguard(reader: R, file: &str) -> Records<R> {
        let mut r = Records::new(reader, file);
        r.st.format = Some(Format::Loopguard);
        r
    }

    /// Lines longer than `max` bytes are reported as [`LineError::TooLong`] and skipped
    /// (default [`MAX_LINE_BYTES`]).
    pub fn max_line(mut self, max: usize) -> Records<R> {
        self.st.max_line = max;
        self
    }

    /// The format: recognised from the first non-blank line; loopguard until then.
    pub fn format(&self) -> Format {
        self.st.format()
    }

    /// The lines read so far, blank lines included (all of them once the read ended).
    pub fn lines(&self) -> usize {
        self.st.lines
    }

    /// The file name used in errors.
    pub fn file(&self) -> &str {
        &self.st.file
    }

    /// Issues of a native read counted beyond [`MAX_ISSUES`](crate::formats::native::MAX_ISSUES)
    /// and not yielded.
    pub fn issues_dropped(&mut self) -> usize {
        self.st.native.as_mut().map_or(0, LineState::issues_dropped)
    }

    /// The next item; `Ok(None)` at the end of the input. An error is an I/O error: the
    /// input cannot be read further.
    pub fn next_item(&mut self) -> Result<Option<Item>, TranscriptError> {
        loop {
            let st = &mut self.st;
            if let Some(b) = st.bad.take() {
                return Ok(Some(Item::Bad(b)));
            }
            if let Some(i) = st.issues.pop_front() {
                return Ok(Some(Item::Issue(i)));
            }
            if let Some(e) = st.out.pop_front() {
                return Ok(Some(Item::Entry(e)));
            }
            if st.ended {
                return Ok(None);
            }
            // The queues are empty: a line's own item can be yielded at once.
            if let Some(item) = self.read_one()? {
                return Ok(Some(item));
            }
        }
    }

    /// Reads one line; its item when it is a loopguard line's (the rest is queued).
    fn read_one(&mut self) -> Result<Option<Item>, TranscriptError> {
        // A line wholly inside the reader's buffer is read where it lies.
        let available = loop {
            match self.reader.fill_buf() {
                Ok(b) => break b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.st.io_error(&e)),
            }
        };
        if let Some(end) = memchr::memchr(b'\n', available) {
            if end < self.st.max_line {
                let index = self.st.lines;
                self.st.lines += 1;
                let raw = available.get(..end).unwrap_or_default();
                let item = self.st.line(index, raw);
                self.reader.consume(end + 1);
                return Ok(item);
            }
        }
        self.read_copied()
    }

    /// [`Records::read_one`] of a line copied into the line buffer: one that straddles the
    /// reader's buffer, the last without a newline, or one too long.
    fn read_copied(&mut self) -> Result<Option<Item>, TranscriptError> {
        self.buf.clear();
        if self.buf.capacity() > KEEP_BUFFER_BYTES {
            self.buf = Vec::new();
        }
        let st = &mut self.st;
        let index = st.lines;
        let n = read_line_bounded(&mut self.reader, &mut self.buf, st.max_line)
            .map_err(|e| st.io_error(&e))?;
        if n == 0 {
            st.ended = true;
            if let Some(native) = &mut st.native {
                native.drain(true, &mut st.out, &mut st.issues);
            }
            return Ok(None);
        }
        st.lines += 1;
        if n > st.max_line {
            st.line_problem(index, LineError::TooLong(st.max_line));
            return Ok(None);
        }
        let raw = self.buf.strip_suffix(b"\n").unwrap_or(&self.buf);
        // The line's length without its `\r` (which `line` takes off).
        let len = raw.strip_suffix(b"\r").map_or(raw.len(), <[u8]>::len);
        if len < formats::loopguard::IN_PLACE_BYTES {
            return Ok(st.line(index, raw));
        }
        // A long line is checked once, as the string it is given up as: a loopguard line's
        // record takes it over, so that its longest text is held once.
        let mut line = std::mem::take(&mut self.buf);
        line.truncate(len);
        let text = match String::from_utf8(line) {
            Ok(text) => text,
            Err(e) => {
                st.line_problem(index, LineError::Utf8(e.utf8_error().valid_up_to()));
                return Ok(None);
            }
        };
        Ok(match st.text_line(index, &text, true) {
            Left::Nothing => None,
            Left::Item(item) => Some(item),
            Left::Owned => {
                let parsed = formats::loopguard::parse_line_owned(text, st.records == 0);
                Some(st.record_item(index, parsed))
            }
        })
    }
}

/// Whether `trim` would leave nothing of `text`, known at its first character that is not
/// white space (no trimming of both ends of every line).
#[inline]
fn is_blank(text: &str) -> bool {
    text.chars().all(char::is_whitespace)
}

impl Lines {
    /// The format: recognised from the first non-blank line; loopguard until then.
    fn format(&self) -> Format {
        self.format.unwrap_or(Format::Loopguard)
    }

    fn io_error(&self, e: &std::io::Error) -> TranscriptError {
        TranscriptError::Io {
            file: self.file.clone(),
            message: e.to_string(),
        }
    }

    /// Reads line `index` (without its newline); the item of a loopguard line.
    fn line(&mut self, index: usize, raw: &[u8]) -> Option<Item> {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let text = match std::str::from_utf8(raw) {
            Ok(t) => t,
            Err(e) => {
                let problem = LineError::Utf8(e.valid_up_to());
                self.line_problem(index, problem);
                return None;
            }
        };
        match self.text_line(index, text, false) {
            Left::Item(item) => Some(item),
            Left::Nothing | Left::Owned => None,
        }
    }

    /// Reads line `index`, its text checked as UTF-8. With `can_own`, a long loopguard line
    /// is left to the caller, who owns its text.
    ///
    /// Inlined into both callers: the common one, [`Lines::line`], then hands its record on
    /// without a further move.
    #[inline(always)]
    fn text_line(&mut self, index: usize, text: &str, can_own: bool) -> Left {
        if is_blank(text) {
            return Left::Nothing;
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
            None if can_own && text.len() >= formats::loopguard::IN_PLACE_BYTES => {
                return Left::Owned;
            }
            None => {
                let parsed = formats::loopguard::parse_line(text, self.records == 0);
                return Left::Item(self.record_item(index, parsed));
            }
        }
        Left::Nothing
    }

    /// The item of loopguard line `index`: its record, or its error.
    fn record_item(&mut self, index: usize, parsed: Result<Record, LineError>) -> Item {
        match parsed {
            Ok(record) => {
                self.records += 1;
                Item::Entry(Entry {
                    line: index,
                    record,
                })
            }
            Err(problem) => Item::Bad(self.line_error(index, problem)),
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn blank_is_what_trim_leaves_empty(
            text in "[ \t\r\u{b}\u{c}\u{85}\u{a0}\u{2028}\u{3000}\u{feff}a{}]{0,6}"
        ) {
            prop_assert_eq!(is_blank(&text), text.trim().is_empty(), "{:?}", text);
        }
    }

    fn items<R: BufRead>(mut r: Records<R>) -> (Vec<String>, usize) {
        let mut got = Vec::new();
        while let Some(item) = r.next_item().unwrap() {
            got.push(format!("{item:?}"));
        }
        (got, r.lines())
    }

    /// Lines read where they lie in the reader's buffer and lines copied out of it (cut by
    /// the buffer's end, the last one without a newline, too long) read the same.
    #[test]
    fn lines_read_in_the_buffer_or_copied_read_the_same() {
        let text: &[u8] = b"{\"type\":\"session\",\"id\":\"s\"}\r\n\n  \r\n{\"type\":\"user\",\"text\":\"a\\u00e9\"}\n\xff\xfe\n{\"type\":\"tool_call\",\"id\":\"c\",\"tool\":\"t\",\"args\":{\"p\":[1,2.5,\"x\"]}}\r\nnot json\n{\"type\":\"user\",\"text\":\"a long line, longer than the limit of the reads below\"}\n{\"type\":\"user\"\r\r\n{\"type\":\"compaction\"}";
        // Limits at, just below and just above each line's length.
        let mut maxes: Vec<usize> = text
            .split_inclusive(|&b| b == b'\n')
            .flat_map(|l| [l.len() - 1, l.len(), l.len() + 1])
            .collect();
        maxes.push(MAX_LINE_BYTES);
        let blank_first = [b"\n", text].concat();
        for text in [text, &blank_first[..]] {
            for &max in &maxes {
                let whole = items(Records::new(text, "t.jsonl").max_line(max));
                assert!(whole.0.len() >= 5, "{whole:?}");
                if max == MAX_LINE_BYTES {
                    assert!(whole.0[0].contains("record: Session"), "{whole:?}");
                    assert!(whole.0[1].contains("record: User"), "{whole:?}");
                }
                for cap in 1..=text.len() + 1 {
                    let r = std::io::BufReader::with_capacity(cap, text);
                    assert_eq!(
                        items(Records::new(r, "t.jsonl").max_line(max)),
                        whole,
                        "capacity {cap}, max {max}"
                    );
                }
            }
        }
        // Lines longer than the in-place threshold, read in a buffer that holds them or copied
        // out of a small one (where a loopguard line's text is given up to its record).
        let big = "y".repeat(formats::loopguard::IN_PLACE_BYTES);
        let long: Vec<u8> = [
            format!("{{\"type\":\"user\",\"text\":\"{big}\"}}\n").into_bytes(),
            b"{\"type\":\"session\",\"id\":\"s\"}\n".to_vec(),
            format!("{{\"type\":\"tool_result\",\"id\":\"c\",\"tool\":\"t\",\"content\":\"a\\n{big}\\u00e9\"}}\r\n").into_bytes(),
            [format!("{{\"type\":\"user\",\"text\":\"{big}").as_bytes(), b"\xff\"}\n"].concat(),
            format!("{}\r\n", " ".repeat(formats::loopguard::IN_PLACE_BYTES + 1)).into_bytes(),
            format!("{{\"type\":\"user\",\"x\":\"{big}\"}}\n").into_bytes(),
            format!("{{\"type\":\"assistant\",\"thinking\":\"{big}\"}}").into_bytes(),
        ]
        .concat();
        let whole = items(Records::new(
            std::io::BufReader::with_capacity(long.len() + 1, &long[..]),
            "t.jsonl",
        ));
        assert_eq!(
            whole.0.len(),
            6,
            "{:?}",
            whole.0.iter().map(|i| i.get(..80)).collect::<Vec<_>>()
        );
        let copied = items(Records::new(
            std::io::BufReader::with_capacity(4096, &long[..]),
            "t.jsonl",
        ));
        assert!(
            copied == whole,
            "long lines copied out read as in the buffer"
        );
        let native = b"{\"type\":\"session\",\"id\":\"x\",\"timestamp\":\"2025-11-20T23:33:50.805Z\",\"cwd\":\"/w\"}\n\xff\n{\"type\":\"mystery\"}\n";
        let whole = items(Records::new(&native[..], "p.jsonl"));
        for cap in 1..=native.len() + 1 {
            let r = std::io::BufReader::with_capacity(cap, &native[..]);
            assert_eq!(items(Records::new(r, "p.jsonl")), whole, "capacity {cap}");
        }
    }
}
