//! Fake detectors for the orchestrator's tests: they report findings on simple rules so the
//! escalation, budget, delivery and state machinery can be tested without the real detectors.
#![allow(dead_code)]

use loopguard_core::OwnedEvent;
use loopguard_core::{
    parse_options, Config, ConfigError, Cx, Detector, Event, EventKind, Finding, Interest, Level,
    OptionDoc, Registration, Registry,
};
use loopguard_orchestrator::{Guard, Verdict};
use serde::{Deserialize, Serialize};

/// `repeat`: consecutive identical calls (tool + args); warning from `warn` (0: never),
/// critical from `block`, on the ToolCall event.
#[derive(Default)]
pub struct Repeat {
    warn: u32,
    block: u32,
    state: RepeatState,
}

#[derive(Default, Serialize, Deserialize)]
struct RepeatState {
    last: Option<String>,
    streak: u32,
}

#[derive(Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RepeatOptions {
    warn: Option<u32>,
    block: Option<u32>,
}

impl Detector for Repeat {
    fn name(&self) -> &'static str {
        "repeat"
    }
    fn interest(&self) -> Interest {
        Interest::of(&[EventKind::ToolCall])
    }
    fn observe(&mut self, _event: &Event<'_>, cx: &mut Cx<'_>) {
        let Some(call) = cx.call() else { return };
        let key = format!("{}:{}", call.tool, call.call_fp);
        if self.state.last.as_deref() == Some(key.as_str()) {
            self.state.streak += 1;
        } else {
            self.state.streak = 1;
            self.state.last = Some(key.clone());
        }
        let n = self.state.streak;
        let level = if n >= self.block {
            Level::Critical
        } else if self.warn > 0 && n >= self.warn {
            Level::Warning
        } else {
            return;
        };
        let f = Finding::new(
            "repeat",
            level,
            n,
            key,
            format!("called {} {n} times", call.tool),
        )
        .with_tool(call.tool.clone())
        .with_sample("{\"path\":\"a\"}")
        .with_evidence(vec![cx.seq()]);
        cx.report(f);
    }
    loopguard_core::snapshot_via_serde!(state);
}

fn build_repeat(t: &toml::Table) -> Result<Box<dyn Detector>, ConfigError> {
    let o: RepeatOptions = parse_options("detectors.repeat", t)?;
    let warn = o.warn.unwrap_or(3);
    let block = o.block.unwrap_or(5);
    if warn > 0 && warn >= block {
        return Err(ConfigError::invalid(
            "detectors.repeat.warn",
            "must be lower than block",
        ));
    }
    Ok(Box::new(Repeat {
        warn,
        block,
        state: RepeatState::default(),
    }))
}

pub static REPEAT: Registration = Registration {
    options: &[
        OptionDoc {
            name: "warn",
            ty: "integer",
            default: "3",
            doc: "warning streak",
        },
        OptionDoc {
            name: "block",
            ty: "integer",
            default: "5",
            doc: "critical streak",
        },
    ],
    ..Registration::bare(
        "repeat",
        "TST101",
        "consecutive identical calls",
        build_repeat,
    )
};

/// `text`: a critical finding on every text delta containing "LOOP" or "again".
#[derive(Default)]
pub struct Text {
    state: u64,
}

impl Detector for Text {
    fn name(&self) -> &'static str {
        "text"
    }
    fn interest(&self) -> Interest {
        Interest::of(&[EventKind::TextDelta])
    }
    fn observe(&mut self, event: &Event<'_>, cx: &mut Cx<'_>) {
        if let Event::TextDelta { delta, .. } = event {
            if delta.contains("LOOP") || delta.contains("again") {
                self.state += 1;
                cx.report(
                    Finding::new("text", Level::Critical, 2, "tape", "the text repeats")
                        .with_sample("LOOP LOOP")
                        .with_offset(cx.char_offset()),
                );
            }
        }
    }
    loopguard_core::snapshot_via_serde!(state);
}

fn build_text(_: &toml::Table) -> Result<Box<dyn Detector>, ConfigError> {
    Ok(Box::new(Text::default()))
}

pub static TEXT: Registration = Registration::bare("text", "TST102", "text loop", build_text);

/// `persist`: asks for an abort on a tool result whose content is "PERSIST" or
/// "Tool exec not found".
#[derive(Default)]
pub struct Persist {
    state: u32,
}

impl Detector for Persist {
    fn name(&self) -> &'static str {
        "persist"
    }
    fn interest(&self) -> Interest {
        Interest::of(&[EventKind::ToolResult])
    }
    fn observe(&mut self, event: &Event<'_>, cx: &mut Cx<'_>) {
        if let Event::ToolResult { content, .. } = event {
            if *content == "PERSIST" || *content == "Tool exec not found" {
                self.state += 1;
                cx.report(
                    Finding::new("persist", Level::Critical, 3, "p", "the loop persisted")
                        .with_abort("compaction_loop_persisted"),
                );
            }
        }
    }
    loopguard_core::snapshot_via_serde!(state);
}

fn build_persist(_: &toml::Table) -> Result<Box<dyn Detector>, ConfigError> {
    Ok(Box::new(Persist::default()))
}

pub static PERSIST: Registration = Registration::bare("persist", "TST103", "abort", build_persist);

/// `poll`: counts calls per tool (`poll*` and `process`); warning with the count from 10, critical from 20 (the
/// OpenClaw tiers), key = tool name.
#[derive(Default)]
pub struct Poll {
    state: std::collections::BTreeMap<String, u32>,
}

impl Detector for Poll {
    fn name(&self) -> &'static str {
        "poll"
    }
    fn interest(&self) -> Interest {
        Interest::of(&[EventKind::ToolCall])
    }
    fn observe(&mut self, _event: &Event<'_>, cx: &mut Cx<'_>) {
        let Some(call) = cx.call() else { return };
        if !call.tool.starts_with("poll") && call.tool != "process" {
            return;
        }
        let n = self.state.entry(call.tool.clone()).or_insert(0);
        let count = *n;
        *n += 1;
        if count >= 20 {
            cx.report(Finding::new(
                "poll",
                Level::Critical,
                count,
                call.tool.clone(),
                "CRITICAL: stuck polling loop",
            ));
        } else if count >= 10 {
            cx.report(Finding::new(
                "poll",
                Level::Warning,
                count,
                call.tool.clone(),
                format!("WARNING: polled {count} times"),
            ));
        }
    }
    loopguard_core::snapshot_via_serde!(state);
}

fn build_poll(_: &toml::Table) -> Result<Box<dyn Detector>, ConfigError> {
    Ok(Box::new(Poll::default()))
}

pub static POLL: Registration = Registration {
    default_enabled: false,
    ..Registration::bare("poll", "TST104", "poll counter", build_poll)
};

/// A registry of the four fake detectors.
pub fn registry() -> Registry {
    Registry::from_entries([&REPEAT, &TEXT, &PERSIST, &POLL]).expect("fake registry")
}

/// A guard over the fake detectors with `toml` as its whole configuration (no preset).
pub fn guard(toml: &str) -> Guard {
    let c = Config::from_toml_str(toml, Some("test.toml")).expect("test config");
    Guard::builder()
        .config(c)
        .no_preset()
        .registry(registry())
        .build()
        .expect("test guard")
}

/// Feeds every event and returns the verdicts.
pub fn feed(g: &mut Guard, events: &[OwnedEvent]) -> Vec<Verdict> {
    events.iter().map(|e| g.observe(&e.as_event())).collect()
}
