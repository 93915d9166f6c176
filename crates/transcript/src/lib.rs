//! # loopguard-transcript
//!
//! Reads agent transcripts and replays them as loopguard events.
//!
//! - [`read_file`] / [`read_reader`] recognise the format ([`detect_format`]) and read the
//!   file into a [`Transcript`]: one [`Entry`] per non-blank line, each with its 0-based line
//!   index. Errors ([`TranscriptError`]) name the file and the line, and no input makes the
//!   reader panic.
//! - [`replay`] turns a transcript into `(line, OwnedEvent)` pairs, the way a live agent would
//!   have emitted them: assistant messages become streamed text deltas of a chosen size.
//!
//! ```
//! use loopguard_transcript::{read_reader, replay};
//! let jsonl = br#"{"type":"session","id":"s1"}
//! {"type":"user","text":"list the files"}
//! {"type":"assistant","text":"Listing them now."}
//! {"type":"tool_call","id":"c1","tool":"bash","args":{"command":"ls"},"batch":0}
//! {"type":"tool_result","id":"c1","tool":"bash","content":"a.rs\nb.rs","is_error":false,"images":0}
//! "#;
//! let t = read_reader(&jsonl[..], "demo.jsonl").unwrap();
//! assert_eq!(t.lines, 5);
//! let lines: Vec<usize> = replay(&t, 8).map(|(line, _)| line).collect();
//! // session, run start, user, message start, 3 deltas ("Listing ", "them now", "."), message end,
//! // call, result, and the settle point after the last activity
//! assert_eq!(lines, [0, 0, 1, 2, 2, 2, 2, 2, 3, 4, 4]);
//! ```
#![warn(missing_docs)]

mod error;
pub mod formats;
mod replay;
mod stream;

pub use error::{JsonType, LineError, TranscriptError};
pub use formats::{detect_format, Format, FormatIssue};
pub use replay::{replay, Replay, Replayer, DEFAULT_CHUNK};
pub use stream::{Item, Records};

use serde_json::Value;
use std::io::BufRead;
use std::path::Path;

/// The longest line a reader accepts, in bytes (a guard against unbounded buffers); a longer
/// line is reported and skipped, and the read goes on.
pub const MAX_LINE_BYTES: usize = 256 * 1024 * 1024;

/// One record of a transcript, whatever format it came from.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Record {
    /// The session header.
    Session {
        /// Session id.
        id: String,
        /// Where the session came from, when known.
        source: Option<String>,
        /// The source's license, when known.
        license: Option<String>,
    },
    /// A user-side message (a person or the harness).
    User {
        /// The text.
        text: String,
    },
    /// One complete assistant message.
    Assistant {
        /// Visible text, if any.
        text: Option<String>,
        /// Reasoning recorded in clear, if any.
        thinking: Option<String>,
    },
    /// A tool call.
    ToolCall {
        /// Call id.
        id: String,
        /// Tool name.
        tool: String,
        /// Arguments.
        args: Value,
        /// Index of the issuing assistant message, when the source says.
        batch: Option<u64>,
        /// Some argument string was cut by the converter.
        truncated: bool,
    },
    /// A tool result.
    ToolResult {
        /// Id of the call it answers.
        id: String,
        /// Tool name.
        tool: String,
        /// Text content.
        content: String,
        /// The source's error flag.
        is_error: bool,
        /// Number of image blocks.
        images: u32,
        /// The content was cut by the converter.
        truncated: bool,
    },
    /// The context was compacted here.
    Compaction,
    /// What the model call behind the assistant message before it cost, as the agent
    /// recorded it (Claude Code's `message.usage`, Codex's `token_count` events). No event is
    /// replayed for it.
    Usage {
        /// The model the agent named, when it did.
        model: Option<String>,
        /// Input tokens sent with the call: the whole context, cached parts included.
        input: u64,
        /// Output tokens the model wrote (reasoning included).
        output: u64,
    },
}

/// A record and the 0-based line it was read from.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// 0-based line index in the file.
    pub line: usize,
    /// The record.
    pub record: Record,
}

/// A whole transcript.
#[derive(Clone, Debug, PartialEq)]
pub struct Transcript {
    /// The file name used in messages and reports.
    pub file: String,
    /// The format it was read as.
    pub format: Format,
    /// Number of lines in the file, blank lines included.
    pub lines: usize,
    /// The records, in file order.
    pub entries: Vec<Entry>,
    /// Lines of a Pi, Claude Code or Codex file that could not be mapped to records (never
    /// dropped silently: `scan` reports each with its file and line).
    pub issues: Vec<FormatIssue>,
}

impl Transcript {
    /// The session id of the header, if there is one.
    pub fn session_id(&self) -> Option<&str> {
        self.entries.first().and_then(|e| match &e.record {
            Record::Session { id, .. } => Some(id.as_str()),
            _ => None,
        })
    }
}

/// Reads a transcript file, recognising its format.
pub fn read_file(path: &Path) -> Result<Transcript, TranscriptError> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| TranscriptError::Io {
        file: name.clone(),
        message: e.to_string(),
    })?;
    read_reader(std::io::BufReader::new(file), &name)
}

/// Reads a transcript from `reader`, recognising its format. `file` names it in errors.
pub fn read_reader<R: BufRead>(reader: R, file: &str) -> Result<Transcript, TranscriptError> {
    read_as(reader, file, None)
}

/// Reads loopguard JSONL from `reader` (no format detection). `file` names it in errors.
pub fn read_loopguard_jsonl<R: BufRead>(
    reader: R,
    file: &str,
) -> Result<Transcript, TranscriptError> {
    read_as(reader, file, Some(Format::Loopguard))
}

/// Reads from bytes, recognising the format (handy for tests and fuzzing).
pub fn read_bytes(bytes: &[u8], file: &str) -> Result<Transcript, TranscriptError> {
    read_reader(bytes, file)
}

fn read_as<R: BufRead>(
    reader: R,
    file: &str,
    forced: Option<Format>,
) -> Result<Transcript, TranscriptError> {
    let mut records = match forced {
        Some(Format::Loopguard) => Records::loopguard(reader, file),
        _ => Records::new(reader, file),
    };
    let mut entries = Vec::new();
    let mut issues = Vec::new();
    while let Some(item) = records.next_item()? {
        match item {
            Item::Entry(e) => entries.push(e),
            Item::Issue(i) => issues.push(i),
            // A loopguard file is read strictly: its first bad line is the error.
            Item::Bad(e) if records.format() == Format::Loopguard => return Err(e),
            Item::Bad(e) => issues.push(FormatIssue {
                line: e.line_index().unwrap_or(0),
                message: match e {
                    TranscriptError::Line { problem, .. } => problem.to_string(),
                    other => other.to_string(),
                },
            }),
        }
    }
    Ok(Transcript {
        file: file.to_owned(),
        format: records.format(),
        lines: records.lines(),
        entries,
        issues,
    })
}

/// Reads one line (through `\n`) into `buf`, keeping at most `max` + 1 bytes of it (the
/// rest is consumed and dropped); returns the bytes consumed, 0 at the end of the input (more
/// than `max` means "too long"). Shared by the transcript reader and the stdio sidecar.
pub fn read_line_bounded<R: BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let available = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(total);
        }
        let (used, done) = match memchr::memchr(b'\n', available) {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        if buf.len() <= max {
            let keep = used.min(max + 1 - buf.len());
            buf.extend_from_slice(available.get(..keep).unwrap_or(available));
        }
        reader.consume(used);
        total += used;
        if done {
            return Ok(total);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(s: &str) -> Result<Transcript, TranscriptError> {
        read_bytes(s.as_bytes(), "t.jsonl")
    }

    #[test]
    fn blank_lines_are_skipped_but_counted() {
        let t = read(
            "{\"type\":\"session\",\"id\":\"s\"}\n\n  \r\n{\"type\":\"user\",\"text\":\"hi\"}\n",
        )
        .unwrap();
        assert_eq!(t.lines, 4);
        assert_eq!(t.entries.iter().map(|e| e.line).collect::<Vec<_>>(), [0, 3]);
        assert_eq!(t.session_id(), Some("s"));
    }

    #[test]
    fn a_last_line_without_newline_counts() {
        let t = read("{\"type\":\"user\",\"text\":\"a\"}\n{\"type\":\"compaction\"}").unwrap();
        assert_eq!(t.lines, 2);
        assert_eq!(
            t.entries[1],
            Entry {
                line: 1,
                record: Record::Compaction
            }
        );
    }

    #[test]
    fn errors_name_file_and_1_based_line() {
        let err =
            read("{\"type\":\"user\",\"text\":\"a\"}\n\n{\"type\":\"tool_call\",\"id\":\"c\"}\n")
                .unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.jsonl:3: `tool_call` line: missing field `tool`"
        );
        assert_eq!(err.line_index(), Some(2));
        assert_eq!(err.file(), "t.jsonl");
        let err = read("{\"type\":\"user\",\"text\":\"a\"}\nnot json\n").unwrap_err();
        assert!(
            err.to_string().starts_with("t.jsonl:2: invalid JSON: "),
            "{err}"
        );
        let err = read_bytes(b"{\"type\":\"user\",\"text\":\"\xff\"}\n", "u.jsonl").unwrap_err();
        assert_eq!(
            err.to_string(),
            "u.jsonl:1: not valid UTF-8 (at byte offset 23 of the line)"
        );
        let err = read("{\"type\":\"user\",\"text\":\"a\"}\n{\"type\":\"thought\"}\n").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("t.jsonl:2: unknown line type `thought`"),
            "{err}"
        );
    }

    #[test]
    fn other_formats_are_recognised_and_read_by_their_reader() {
        let pi = r#"{"type":"session","id":"x","timestamp":"2025-11-20T23:33:50.805Z","cwd":"/w"}"#;
        let t = read(pi).unwrap();
        assert_eq!(t.format, Format::Pi);
        let cc = r#"{"type":"file-history-snapshot","messageId":"m","snapshot":{}}"#;
        assert_eq!(read(cc).unwrap().format, Format::ClaudeCode);
        let codex = r#"{"timestamp":"t","type":"session_meta","payload":{}}"#;
        assert_eq!(read(codex).unwrap().format, Format::Codex);
        let odd = "\n{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{}}\n{\"timestamp\":\"t\",\"type\":\"mystery\"}\n";
        let t = read(odd).unwrap();
        assert_eq!(t.lines, 3);
        assert!(
            t.issues.iter().any(|i| i.message.contains("mystery")),
            "{:?}",
            t.issues
        );
        // Forcing the loopguard reader reads the Pi header as a loopguard header.
        assert!(read_loopguard_jsonl(pi.as_bytes(), "p").is_ok());
    }

    #[test]
    fn streaming_reads_equal_whole_text_reads_on_real_sessions() {
        let Some(dir) = formats::native::testutil::shared_dir() else {
            return;
        };
        let mut checked = 0;
        for agent in ["claude-code", "pi", "codex"] {
            let Ok(files) = std::fs::read_dir(dir.join("native-sessions").join(agent)) else {
                continue;
            };
            for f in files.flatten() {
                let path = f.path();
                if path.extension().is_none_or(|x| x != "jsonl") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                let streamed = read_bytes(text.as_bytes(), "f").unwrap();
                let whole = formats::native::read_native(streamed.format, &text).unwrap();
                assert_eq!(streamed.entries, whole.entries, "{}", path.display());
                assert_eq!(streamed.issues, whole.issues, "{}", path.display());
                assert_eq!(streamed.lines, whole.lines, "{}", path.display());
                checked += 1;
            }
        }
        assert!(checked > 0, "no native session found");
    }

    #[test]
    fn a_bad_line_of_a_stream_is_reported_and_the_rest_read() {
        let text = b"{\"type\":\"user\",\"text\":\"a\"}\n\xff\n{\"type\":\"user\",\"text\":\"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"}\n{\"type\":\"compaction\"}\n";
        let mut r = Records::new(&text[..], "t.jsonl").max_line(64);
        let mut got = Vec::new();
        while let Some(item) = r.next_item().unwrap() {
            got.push(match item {
                Item::Entry(e) => format!("{} ok", e.line),
                Item::Bad(e) => e.to_string(),
                Item::Issue(i) => i.to_string(),
            });
        }
        assert_eq!(
            got,
            [
                "0 ok",
                "t.jsonl:2: not valid UTF-8 (at byte offset 0 of the line)",
                "t.jsonl:3: line longer than 64 bytes",
                "3 ok"
            ]
        );
        assert_eq!(r.lines(), 4);
    }

    #[test]
    fn empty_input_is_an_empty_transcript() {
        let t = read("").unwrap();
        assert_eq!((t.lines, t.entries.len()), (0, 0));
    }

    #[test]
    fn missing_file_is_an_io_error_naming_it() {
        let err = read_file(Path::new("/nonexistent/x.jsonl")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("/nonexistent/x.jsonl: cannot read: "),
            "{err}"
        );
    }

    #[test]
    fn bounded_line_reader_splits_lines() {
        let mut r: &[u8] = b"ab\ncd";
        let mut buf = Vec::new();
        assert_eq!(
            read_line_bounded(&mut r, &mut buf, MAX_LINE_BYTES).unwrap(),
            3
        );
        assert_eq!(buf, b"ab\n");
        buf.clear();
        assert_eq!(
            read_line_bounded(&mut r, &mut buf, MAX_LINE_BYTES).unwrap(),
            2
        );
        assert_eq!(buf, b"cd");
        buf.clear();
        assert_eq!(
            read_line_bounded(&mut r, &mut buf, MAX_LINE_BYTES).unwrap(),
            0
        );
    }

    #[test]
    fn bounded_line_reader_keeps_at_most_max_plus_one_bytes() {
        // A tiny buffer makes the line arrive in several `fill_buf` pieces.
        let mut r = std::io::BufReader::with_capacity(
            2,
            &b"abcdefg
hi
"[..],
        );
        let mut buf = Vec::new();
        assert_eq!(read_line_bounded(&mut r, &mut buf, 3).unwrap(), 8);
        assert_eq!(buf, b"abcd");
        buf.clear();
        assert_eq!(read_line_bounded(&mut r, &mut buf, 3).unwrap(), 3);
        assert_eq!(buf, b"hi\n");
    }
}
