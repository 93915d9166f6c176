//! The `tail-periodicity` state machine.

use crate::exact::TailMatcher;
use crate::seed::SeedScanner;
use crate::{Algorithm, Settings, NAME};
use loopguard_core::{
    Cx, Detector, Event, EventKind, Finding, Fingerprint, Interest, Level, Stream,
};
use serde::{Deserialize, Serialize};

/// First symbol used as a stream separator by the exact engine (above every `char`).
const SENTINEL_BASE: u32 = 0x11_0000;

/// Bit `c` is set for the ASCII letters and digits (`char::is_alphanumeric` on ASCII).
const ASCII_ALNUM: u128 = {
    let mut m = 0u128;
    let mut c = 0u32;
    while c < 128 {
        let ch = c as u8 as char;
        if ch.is_ascii_alphanumeric() {
            m |= 1 << c;
        }
        c += 1;
    }
    m
};

/// Turns the streamed characters of one message into the symbol sequence the engines see:
/// a separator where the stream switches (thinking ↔ text), and long runs of filler (neither
/// letter nor digit) cut to `max-filler-run` symbols.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Prep {
    max_filler_run: u32,
    seed_join: bool,
    run: u32,
    last_stream: Option<Stream>,
    sentinels: u32,
}

impl Prep {
    /// A preparer for `settings`.
    pub fn new(settings: &Settings) -> Prep {
        Prep {
            max_filler_run: settings.max_filler_run as u32,
            seed_join: settings.algorithm == Algorithm::Seed,
            ..Prep::default()
        }
    }

    /// The separator to insert before a delta of `stream`, if the stream switched.
    pub fn switch(&mut self, stream: Stream) -> Option<u32> {
        let prev = self.last_stream.replace(stream);
        match prev {
            Some(p) if p != stream => {
                if self.seed_join {
                    self.map('\n')
                } else {
                    self.run = 0;
                    self.sentinels = self.sentinels.wrapping_add(1) % 0x7fff_0000;
                    Some(SENTINEL_BASE + self.sentinels)
                }
            }
            _ => None,
        }
    }

    /// The symbol for `ch`, or `None` when it is dropped (beyond the filler-run limit).
    #[inline]
    pub fn map(&mut self, ch: char) -> Option<u32> {
        let c = u32::from(ch);
        // Letters and digits alternate with spaces and punctuation at random in prose: keep
        // the common ASCII case free of data-dependent branches (a table bit and a mask).
        let mut alnum = ((ASCII_ALNUM >> (c & 127)) as u32 & 1) & u32::from(c < 128);
        if c >= 128 {
            alnum = u32::from(ch.is_alphanumeric());
        }
        // 0 after a letter or digit, else one more.
        self.run = self.run.saturating_add(1) & alnum.wrapping_sub(1);
        if self.max_filler_run > 0 && self.run > self.max_filler_run {
            None
        } else {
            Some(c)
        }
    }

    /// The whole symbol sequence of a message given as `(stream, delta)` pieces, with the
    /// message character offset after each symbol (for oracles and tests).
    pub fn sequence(settings: &Settings, pieces: &[(Stream, &str)]) -> Vec<(u32, u64)> {
        let mut prep = Prep::new(settings);
        let mut out = Vec::new();
        let mut offset = 0u64;
        for (stream, delta) in pieces {
            if let Some(s) = prep.switch(*stream) {
                out.push((s, offset));
            }
            for ch in delta.chars() {
                offset += 1;
                if let Some(s) = prep.map(ch) {
                    out.push((s, offset));
                }
            }
        }
        out
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
enum Engine {
    Exact(Box<TailMatcher>),
    Seed(SeedScanner),
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
struct State {
    /// Inside a message.
    started: bool,
    /// Fired in this message (at most once per message).
    fired: bool,
    prep: Prep,
    engine: Option<Engine>,
}

/// The `tail-periodicity` detector (LG007).
#[derive(Debug)]
pub struct TailPeriodicity {
    settings: Settings,
    state: State,
}

impl TailPeriodicity {
    /// A detector with `settings`.
    pub fn new(settings: Settings) -> TailPeriodicity {
        TailPeriodicity {
            settings,
            state: State::default(),
        }
    }

    /// The resolved settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Characters currently buffered for this message (bounded by the settings, never by the
    /// message length).
    pub fn buffered(&self) -> usize {
        match &self.state.engine {
            Some(Engine::Exact(f)) => f.buffered(),
            Some(Engine::Seed(s)) => s.buffered(),
            None => 0,
        }
    }

    fn reset(&mut self) {
        self.state = State {
            started: true,
            fired: false,
            prep: Prep::new(&self.settings),
            engine: None,
        };
    }

    fn fire(&mut self, q: u64, offset: u64, cx: &mut Cx<'_>) {
        self.state.fired = true;
        let sample = match &self.state.engine {
            Some(Engine::Exact(f)) => f.tail_string(q.min(201) as usize),
            Some(Engine::Seed(s)) => s.tail_string(q.min(201) as usize),
            None => String::new(),
        };
        let key = format!(
            "{NAME}/{q}/{:016x}",
            Fingerprint::of_bytes(sample.as_bytes()).short()
        );
        let copies = self.settings.min_copies as u32;
        let message = format!(
            "Repetition guard: your output ends with {copies} identical copies of the same {q}-character block. \
             Stop restating it; carry out the next step and give its result."
        );
        cx.report(
            Finding::new(NAME, Level::Critical, copies, key, message)
                .with_offset(offset)
                .with_sample(&sample),
        );
        // The message is over for this detector: free the buffer now.
        self.state.engine = None;
    }

    fn delta(&mut self, stream: Stream, delta: &str, cx: &mut Cx<'_>) {
        if self.state.fired {
            return;
        }
        if !self.state.started {
            // A delta without a message start: treat it as the start of one.
            self.reset();
        }
        let base = cx.char_offset();
        let sep = self.state.prep.switch(stream);
        let mut hit: Option<(u64, u64)> = None;
        let mut count = 0u64;
        // Split borrows: the preparer and the engine live in different fields.
        let prep = &mut self.state.prep;
        let s = &self.settings;
        let engine = self.state.engine.get_or_insert_with(|| match s.algorithm {
            Algorithm::Exact => Engine::Exact(Box::new(TailMatcher::new(
                s.min_unit,
                s.max_unit,
                s.min_copies,
                s.long_unit,
                s.root_copies,
            ))),
            Algorithm::Seed => Engine::Seed(SeedScanner::new(
                s.min_unit,
                s.max_unit,
                s.min_copies,
                s.rescan_every,
            )),
        });
        match engine {
            Engine::Exact(f) => {
                if let Some(sym) = sep {
                    if let Some(q) = f.push(sym) {
                        hit = Some((q, base));
                    }
                }
                if hit.is_none() {
                    for ch in delta.chars() {
                        count += 1;
                        if let Some(sym) = prep.map(ch) {
                            if let Some(q) = f.push(sym) {
                                hit = Some((q, base + count));
                                break;
                            }
                        }
                    }
                }
            }
            Engine::Seed(sc) => {
                if let Some(sym) = sep {
                    sc.push(sym);
                }
                for ch in delta.chars() {
                    count += 1;
                    if let Some(sym) = prep.map(ch) {
                        sc.push(sym);
                    }
                }
                if let Some(q) = sc.end_of_update() {
                    hit = Some((q, base + count));
                }
            }
        }
        if let Some((q, offset)) = hit {
            self.fire(q, offset, cx);
        }
    }
}

impl Detector for TailPeriodicity {
    fn name(&self) -> &'static str {
        NAME
    }

    fn interest(&self) -> Interest {
        Interest::of(&[
            EventKind::MessageStart,
            EventKind::TextDelta,
            EventKind::MessageEnd,
        ])
    }

    fn observe(&mut self, event: &Event<'_>, cx: &mut Cx<'_>) {
        match event {
            Event::MessageStart => self.reset(),
            Event::TextDelta { stream, delta } => self.delta(*stream, delta, cx),
            Event::MessageEnd => {
                // Nothing more can arrive for this message: release the buffer.
                self.state.engine = None;
                self.state.started = false;
            }
            _ => {}
        }
    }

    loopguard_core::snapshot_via_serde!(state);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_table_matches_is_alphanumeric() {
        for c in 0u32..128 {
            let ch = char::from_u32(c).unwrap_or('\0');
            assert_eq!((ASCII_ALNUM >> c) & 1 == 1, ch.is_alphanumeric(), "{c}");
        }
    }
}
