//! The guard: a bus plus the escalation policy.

use crate::verdict::{Action, Delivery, Verdict};
use loopguard_core::{parse_options, Bus, Config, ConfigError, Event, Finding, Level, Normalizers, Registry};
use serde::{Deserialize, Serialize};

/// Options of the `[guard]` table.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct GuardOptions {
    /// Master switch (default true).
    pub enabled: Option<bool>,
    /// Blocks within one user turn after which the guard aborts (default 3).
    pub abort_after_blocks: Option<u32>,
    /// Blocks also carry `terminate` (default false).
    pub terminate: Option<bool>,
}

/// Builds a [`Guard`].
#[derive(Debug, Default)]
pub struct GuardBuilder {
    config: Config,
    registry: Option<Registry>,
    normalizers: Option<Normalizers>,
}

impl GuardBuilder {
    /// Uses `config` (merged over nothing; presets are resolved by the caller for now).
    #[must_use]
    pub fn config(mut self, config: Config) -> GuardBuilder {
        self.config = config;
        self
    }

    /// Uses this registry instead of link-time discovery.
    #[must_use]
    pub fn registry(mut self, registry: Registry) -> GuardBuilder {
        self.registry = Some(registry);
        self
    }

    /// Uses these result normalisers.
    #[must_use]
    pub fn normalizers(mut self, n: Normalizers) -> GuardBuilder {
        self.normalizers = Some(n);
        self
    }

    /// Builds the guard.
    pub fn build(self) -> Result<Guard, ConfigError> {
        let registry = match self.registry {
            Some(r) => r,
            None => Registry::discover()?,
        };
        let file = self.config.source.as_deref();
        let opts: GuardOptions = parse_options("guard", &self.config.guard).map_err(|e| e.in_file(file))?;
        let detectors = registry.build(&self.config)?;
        let bus = Bus::with_normalizers(detectors, self.normalizers.unwrap_or_default());
        Ok(Guard {
            bus,
            enabled: opts.enabled.unwrap_or(true),
            abort_after_blocks: opts.abort_after_blocks.unwrap_or(3).max(1),
            terminate: opts.terminate.unwrap_or(false),
            blocks_this_turn: 0,
            turn: 0,
        })
    }
}

/// Watches one agent session and answers each event with a [`Verdict`].
///
/// ```
/// use loopguard_orchestrator::{Action, Guard};
/// use loopguard_core::{Config, Event, Origin};
///
/// let mut guard = Guard::builder().config(Config::default()).build().unwrap();
/// let v = guard.observe(&Event::User { text: "hello", origin: Origin::Human });
/// assert_eq!(v.action, Action::Continue);
/// ```
#[derive(Debug)]
pub struct Guard {
    bus: Bus,
    enabled: bool,
    abort_after_blocks: u32,
    terminate: bool,
    blocks_this_turn: u32,
    turn: u64,
}

impl Guard {
    /// A builder.
    pub fn builder() -> GuardBuilder {
        GuardBuilder::default()
    }

    /// The detectors this guard runs.
    pub fn detector_names(&self) -> Vec<&'static str> {
        self.bus.detector_names()
    }

    /// Turns the guard on or off (a user command such as `/runaway off`; never model output).
    pub fn set_enabled(&mut self, on: bool) {
        self.enabled = on;
    }

    /// Observes one event.
    pub fn observe(&mut self, event: &Event<'_>) -> Verdict {
        let findings = self.bus.observe(event);
        if self.bus.turn() != self.turn {
            self.turn = self.bus.turn();
            self.blocks_this_turn = 0;
        }
        if !self.enabled || findings.is_empty() {
            return Verdict::pass();
        }
        self.decide(event, findings)
    }

    fn decide(&mut self, event: &Event<'_>, findings: Vec<Finding>) -> Verdict {
        let mut v = Verdict::pass();
        let top = findings.iter().max_by_key(|f| (f.abort, f.level)).cloned();
        v.findings = findings;
        let Some(top) = top else { return v };
        v.message = Some(top.message.clone());
        if top.abort {
            v.action = Action::Abort;
            v.code = Some(top.code.clone().unwrap_or_else(|| format!("loop_aborted:{}", top.detector)));
            return v;
        }
        match (top.level, event) {
            (Level::Critical, Event::ToolCall { .. }) => {
                self.blocks_this_turn += 1;
                if self.blocks_this_turn >= self.abort_after_blocks {
                    v.action = Action::Abort;
                    v.code = Some(format!("loop_aborted:{}", top.detector));
                } else {
                    v.action = Action::Block;
                    v.terminate = self.terminate;
                }
            }
            (Level::Critical, Event::TextDelta { .. }) => {
                v.action = Action::Abort;
                v.code = Some(format!("loop_aborted:{}", top.detector));
            }
            _ => {
                v.action = Action::Steer;
                v.deliver = Delivery::Now;
            }
        }
        v
    }

    /// Serialises the whole guard state.
    pub fn snapshot(&self) -> Result<serde_json::Value, loopguard_core::StateError> {
        let bus = self.bus.snapshot()?;
        Ok(serde_json::json!({
            "bus": bus,
            "enabled": self.enabled,
            "blocks_this_turn": self.blocks_this_turn,
            "turn": self.turn,
        }))
    }
}
