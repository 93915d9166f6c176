//! Replay: a transcript as the event stream a live agent would have produced.

use crate::{Entry, Record, Transcript};
use loopguard_core::{Event, Origin, OwnedEvent, Stream};
use std::collections::VecDeque;

/// The default size of a replayed text delta, in characters (`scan --chunk`).
pub const DEFAULT_CHUNK: usize = 16;

/// Replays `t` as `(line, event)` pairs, `line` being the 0-based line each event comes from.
///
/// | record | events |
/// |---|---|
/// | `session` | `SessionStart`, then `RunStart` (same line) |
/// | `user` | `User` with origin `Unknown` (the guard tells people from repeated harness text) |
/// | `assistant` | `MessageStart`, the thinking then the text as `TextDelta`s of `chunk` characters, `MessageEnd` |
/// | `tool_call` | `ToolCall` with the line's `batch` |
/// | `tool_result` | `ToolResult` (no details) |
/// | `compaction` | `Compaction` |
///
/// A `RunEnd` (the settle point, where the guard delivers steers queued after a block or an
/// abort) comes before each `user` line that follows agent activity, and at the end of a
/// transcript with agent activity (on its last line).
///
/// A transcript without a header gets its `RunStart` on the line of its first record.
/// `chunk == 0` streams each part of a message as one delta. Text is never split inside a
/// character. The iterator is lazy: it holds at most a few events at a time.
pub fn replay(t: &Transcript, chunk: usize) -> Replay<'_> {
    Replay {
        entries: t.entries.iter(),
        chunk,
        queue: VecDeque::new(),
        text: VecDeque::new(),
        end: None,
        started: false,
        active: None,
        finished: false,
        last_line: 0,
    }
}

/// The iterator returned by [`replay`].
#[derive(Debug)]
pub struct Replay<'a> {
    entries: std::slice::Iter<'a, Entry>,
    chunk: usize,
    queue: VecDeque<(usize, OwnedEvent)>,
    /// Text still to stream for the current message: (line, stream, rest).
    text: VecDeque<(usize, Stream, &'a str)>,
    /// The line of a `MessageEnd` still to emit after the text.
    end: Option<usize>,
    started: bool,
    /// The last line of agent activity (assistant or tool) since the last settle point.
    active: Option<usize>,
    finished: bool,
    last_line: usize,
}

impl<'a> Replay<'a> {
    fn next_delta(&mut self) -> Option<(usize, OwnedEvent)> {
        while let Some((line, stream, rest)) = self.text.pop_front() {
            if rest.is_empty() {
                continue;
            }
            let (delta, tail) = split_delta(rest, self.chunk);
            if !tail.is_empty() {
                self.text.push_front((line, stream, tail));
            }
            return Some((
                line,
                OwnedEvent::TextDelta {
                    stream,
                    delta: delta.to_owned(),
                },
            ));
        }
        None
    }

    fn expand(&mut self, e: &'a Entry) {
        if matches!(e.record, Record::Usage { .. }) {
            return;
        }
        let line = e.line;
        self.last_line = line;
        if !self.started {
            self.started = true;
            if let Record::Session { id, .. } = &e.record {
                self.queue
                    .push_back((line, OwnedEvent::SessionStart { id: id.clone() }));
                self.queue
                    .push_back((line, OwnedEvent::RunStart { run_id: None }));
                return;
            }
            self.queue
                .push_back((line, OwnedEvent::RunStart { run_id: None }));
        }
        match &e.record {
            // A header after the first record cannot be read; keep it harmless anyway.
            Record::Session { id, .. } => self
                .queue
                .push_back((line, OwnedEvent::SessionStart { id: id.clone() })),
            Record::User { text } => {
                // The agent settled before the next user-side message.
                if self.active.take().is_some() {
                    self.queue.push_back((line, OwnedEvent::RunEnd));
                }
                self.queue.push_back((
                    line,
                    OwnedEvent::User {
                        text: text.clone(),
                        origin: Origin::Unknown,
                    },
                ));
            }
            Record::Assistant { text, thinking } => {
                self.active = Some(line);
                self.queue.push_back((line, OwnedEvent::MessageStart));
                if let Some(th) = thinking {
                    self.text.push_back((line, Stream::Thinking, th));
                }
                if let Some(tx) = text {
                    self.text.push_back((line, Stream::Text, tx));
                }
                self.end = Some(line);
            }
            Record::ToolCall { .. } | Record::ToolResult { .. } => {
                self.active = Some(line);
                if let Some(ev) = tool_event(&e.record) {
                    self.queue.push_back((line, OwnedEvent::from_event(&ev)));
                }
            }
            Record::Compaction => self.queue.push_back((line, OwnedEvent::Compaction)),
            Record::Usage { .. } => {}
        }
    }
}

impl Iterator for Replay<'_> {
    type Item = (usize, OwnedEvent);

    fn next(&mut self) -> Option<(usize, OwnedEvent)> {
        loop {
            if let Some(x) = self.queue.pop_front() {
                return Some(x);
            }
            if let Some(x) = self.next_delta() {
                return Some(x);
            }
            if let Some(line) = self.end.take() {
                return Some((line, OwnedEvent::MessageEnd));
            }
            match self.entries.next() {
                Some(e) => self.expand(e),
                None => {
                    // The session ends: the agent settles after its last activity.
                    if self.finished {
                        return None;
                    }
                    self.finished = true;
                    self.active.take()?;
                    return Some((self.last_line, OwnedEvent::RunEnd));
                }
            }
        }
    }
}

/// Replay one record at a time, for records read as a stream ([`Records`](crate::Records)):
/// the same events as [`replay`], in the same order, borrowed from each record instead of
/// copied.
///
/// ```
/// use loopguard_transcript::{Entry, Record, Replayer};
/// let mut r = Replayer::new(4);
/// let mut kinds = Vec::new();
/// let e = Entry { line: 0, record: Record::Assistant { text: Some("hello".into()), thinking: None } };
/// r.entry(&e, &mut |line, ev| kinds.push((line, ev.kind().as_str())));
/// r.finish(&mut |line, ev| kinds.push((line, ev.kind().as_str())));
/// assert_eq!(kinds, [(0, "run_start"), (0, "message_start"), (0, "text_delta"), (0, "text_delta"), (0, "message_end"), (0, "run_end")]);
/// ```
#[derive(Clone, Debug)]
pub struct Replayer {
    chunk: usize,
    started: bool,
    active: bool,
    last_line: usize,
    finished: bool,
}

impl Replayer {
    /// A replay streaming text in deltas of `chunk` characters (0: one delta per part).
    pub fn new(chunk: usize) -> Replayer {
        Replayer {
            chunk,
            started: false,
            active: false,
            last_line: 0,
            finished: false,
        }
    }

    /// The events of one record, given to `f` with the record's line.
    pub fn entry(&mut self, e: &Entry, f: &mut dyn FnMut(usize, &Event<'_>)) {
        if matches!(e.record, Record::Usage { .. }) {
            return;
        }
        let line = e.line;
        self.last_line = line;
        if !self.started {
            self.started = true;
            if let Record::Session { id, .. } = &e.record {
                f(line, &Event::SessionStart { id });
                f(line, &Event::RunStart { run_id: None });
                return;
            }
            f(line, &Event::RunStart { run_id: None });
        }
        match &e.record {
            Record::Session { id, .. } => f(line, &Event::SessionStart { id }),
            Record::User { text } => {
                if std::mem::take(&mut self.active) {
                    f(line, &Event::RunEnd);
                }
                f(
                    line,
                    &Event::User {
                        text,
                        origin: Origin::Unknown,
                    },
                );
            }
            Record::Assistant { text, thinking } => {
                self.active = true;
                f(line, &Event::MessageStart);
                for (stream, part) in [(Stream::Thinking, thinking), (Stream::Text, text)] {
                    if let Some(part) = part {
                        self.deltas(line, stream, part, f);
                    }
                }
                f(line, &Event::MessageEnd);
            }
            Record::ToolCall { .. } | Record::ToolResult { .. } => {
                self.active = true;
                if let Some(ev) = tool_event(&e.record) {
                    f(line, &ev);
                }
            }
            Record::Compaction => f(line, &Event::Compaction),
            Record::Usage { .. } => {}
        }
    }

    fn deltas(
        &self,
        line: usize,
        stream: Stream,
        mut rest: &str,
        f: &mut dyn FnMut(usize, &Event<'_>),
    ) {
        while !rest.is_empty() {
            let (delta, tail) = split_delta(rest, self.chunk);
            f(line, &Event::TextDelta { stream, delta });
            rest = tail;
        }
    }

    /// The end of the transcript: the settle point after the last agent activity, if any
    /// (once; later calls do nothing).
    pub fn finish(&mut self, f: &mut dyn FnMut(usize, &Event<'_>)) {
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        if std::mem::take(&mut self.active) {
            f(self.last_line, &Event::RunEnd);
        }
    }
}

/// The next delta of `rest` (its first `chunk` characters; all of it when `chunk` is 0) and
/// what follows it.
fn split_delta(rest: &str, chunk: usize) -> (&str, &str) {
    let cut = if chunk == 0 {
        rest.len()
    } else {
        rest.char_indices()
            .nth(chunk)
            .map_or(rest.len(), |(i, _)| i)
    };
    rest.split_at(cut)
}

/// The event of a tool call or tool result record (borrowing from it); `None` for the others.
fn tool_event(record: &Record) -> Option<Event<'_>> {
    match record {
        Record::ToolCall {
            id,
            tool,
            args,
            batch,
            ..
        } => Some(Event::ToolCall {
            id,
            tool,
            args,
            batch: *batch,
        }),
        Record::ToolResult {
            id,
            tool,
            content,
            is_error,
            images,
            ..
        } => Some(Event::ToolResult {
            id,
            tool,
            content,
            is_error: *is_error,
            images: *images,
            details: None,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read_bytes;

    fn kinds(t: &Transcript, chunk: usize) -> Vec<(usize, String)> {
        replay(t, chunk)
            .map(|(l, e)| {
                let k = match e {
                    OwnedEvent::TextDelta {
                        stream: Stream::Thinking,
                        delta,
                    } => format!("think:{delta}"),
                    OwnedEvent::TextDelta {
                        stream: Stream::Text,
                        delta,
                    } => format!("text:{delta}"),
                    other => other.as_event().kind().as_str().to_owned(),
                };
                (l, k)
            })
            .collect()
    }

    #[test]
    fn assistant_streams_thinking_then_text_in_chunks() {
        let t = read_bytes(
            br#"{"type":"session","id":"s"}
{"type":"assistant","text":"h\u00e9llo","thinking":"abc"}
{"type":"compaction"}
"#,
            "x",
        )
        .unwrap();
        let got = kinds(&t, 2);
        let want: Vec<(usize, String)> = [
            (0, "session_start"),
            (0, "run_start"),
            (1, "message_start"),
            (1, "think:ab"),
            (1, "think:c"),
            (1, "text:hé"),
            (1, "text:ll"),
            (1, "text:o"),
            (1, "message_end"),
            (2, "compaction"),
            (2, "run_end"),
        ]
        .iter()
        .map(|(l, k)| (*l, (*k).to_owned()))
        .collect();
        assert_eq!(got, want);
        let whole = kinds(&t, 0);
        assert!(whole.contains(&(1, "text:héllo".to_owned())), "{whole:?}");
    }

    #[test]
    fn no_header_puts_run_start_on_the_first_record() {
        let t = read_bytes(
            b"\n{\"type\":\"user\",\"text\":\"go\"}\n{\"type\":\"assistant\"}\n",
            "x",
        )
        .unwrap();
        assert_eq!(
            kinds(&t, 16),
            [
                (1, "run_start"),
                (1, "user"),
                (2, "message_start"),
                (2, "message_end"),
                (2, "run_end")
            ]
            .iter()
            .map(|(l, k)| (*l, (*k).to_owned()))
            .collect::<Vec<_>>()
        );
    }

    #[test]
    fn the_streaming_replayer_gives_the_events_of_replay() {
        let t = read_bytes(
            br#"{"type":"session","id":"s"}
{"type":"user","text":"go"}
{"type":"assistant","text":"h\u00e9llo there","thinking":"abc"}
{"type":"tool_call","id":"a","tool":"read","args":{"p":1},"batch":7}
{"type":"tool_result","id":"a","tool":"read","content":"x","is_error":true,"images":1}
{"type":"user","text":"again"}
{"type":"compaction"}
{"type":"assistant"}
"#,
            "x",
        )
        .unwrap();
        for chunk in [0, 1, 3, 16] {
            let want: Vec<(usize, OwnedEvent)> = replay(&t, chunk).collect();
            let mut got = Vec::new();
            let mut r = Replayer::new(chunk);
            let mut push = |l: usize, e: &Event<'_>| got.push((l, OwnedEvent::from_event(e)));
            for e in &t.entries {
                r.entry(e, &mut push);
            }
            r.finish(&mut push);
            r.finish(&mut push);
            assert_eq!(got, want, "chunk {chunk}");
        }
    }

    #[test]
    fn calls_keep_their_batch_and_results_their_flags() {
        let t = read_bytes(
            br#"{"type":"tool_call","id":"a","tool":"read","args":{"p":1},"batch":7}
{"type":"tool_result","id":"a","tool":"read","content":"x","is_error":true,"images":1}
"#,
            "x",
        )
        .unwrap();
        let ev: Vec<OwnedEvent> = replay(&t, 16).map(|(_, e)| e).collect();
        assert!(
            matches!(&ev[1], OwnedEvent::ToolCall { batch: Some(7), .. }),
            "{ev:?}"
        );
        assert!(
            matches!(
                &ev[2],
                OwnedEvent::ToolResult {
                    is_error: true,
                    images: 1,
                    ..
                }
            ),
            "{ev:?}"
        );
    }
}
