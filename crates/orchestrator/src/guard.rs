//! The guard: the core's event bus plus the escalation, budget and delivery policy.

use crate::options::{Dedup, Policy};
use crate::presets::{check_config, resolve_with};
use crate::verdict::{Action, Delivery, Verdict};
use crate::wording::{steer_text, Path, CONTINUE_STEER};
use loopguard_core::{
    args_fingerprint, call_fingerprint, Bus, Config, ConfigError, Event, Finding, Fingerprint,
    FixedMap, Level, Normalizers, Registry, StateError, Tools,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;

/// Version of the snapshot layout.
pub const SNAPSHOT_VERSION: u64 = 1;

/// Writes each configuration warning to stderr, once per process.
fn warn_once(warnings: &[String]) {
    static SHOWN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    if warnings.is_empty() {
        return;
    }
    let Ok(mut shown) = SHOWN.lock() else {
        return;
    };
    for w in warnings {
        if !shown.contains(w) {
            eprintln!("loopguard: warning: {w}");
            shown.push(w.clone());
        }
    }
}

/// Builds a [`Guard`].
///
/// The configuration is resolved over its preset ([`crate::resolve`]; `default` when it names
/// none, or the one given with [`GuardBuilder::preset`]), then the overrides of the agent given
/// with [`GuardBuilder::agent`] are merged over it.
#[derive(Debug, Default)]
pub struct GuardBuilder {
    config: Option<Config>,
    preset: Option<String>,
    agent: Option<String>,
    no_preset: bool,
    registry: Option<Registry>,
    normalizers: Option<Normalizers>,
}

impl GuardBuilder {
    /// Uses `config`, resolved over its preset.
    #[must_use]
    pub fn config(mut self, config: Config) -> GuardBuilder {
        self.config = Some(config);
        self
    }

    /// Starts from preset `name` (it wins over the configuration's own `preset` key).
    #[must_use]
    pub fn preset(mut self, name: &str) -> GuardBuilder {
        self.preset = Some(name.to_owned());
        self
    }

    /// Uses the configuration as given, with no preset underneath (tests, hosts that build
    /// the whole configuration themselves).
    #[must_use]
    pub fn no_preset(mut self) -> GuardBuilder {
        self.no_preset = true;
        self
    }

    /// Merges the `[agents.<id>]` overrides of agent `id` over the defaults.
    #[must_use]
    pub fn agent(mut self, id: &str) -> GuardBuilder {
        self.agent = Some(id.to_owned());
        self
    }

    /// Uses this registry instead of link-time discovery.
    #[must_use]
    pub fn registry(mut self, registry: Registry) -> GuardBuilder {
        self.registry = Some(registry);
        self
    }

    /// Uses these result normalisers (the configuration's `[tools]` entries that name a
    /// normaliser or volatile keys are still registered over them).
    #[must_use]
    pub fn normalizers(mut self, n: Normalizers) -> GuardBuilder {
        self.normalizers = Some(n);
        self
    }

    /// The configuration the guard will run (preset resolved, unlinked preset-only detectors
    /// dropped, agent overrides merged), checked against the registry.
    pub fn resolved(&self) -> Result<(Config, Registry), ConfigError> {
        let (resolved, registry) = self.resolved_with_agents()?;
        let config = match &self.agent {
            Some(id) => resolved.for_agent(id),
            None => {
                let mut c = resolved;
                c.agents.clear();
                c
            }
        };
        Ok((config, registry))
    }

    /// The resolved configuration rendered for `loopguard config check` (see
    /// [`crate::render_resolved`]): every `[guard]` key with its effective value and every
    /// linked detector, on or off.
    pub fn describe(&self) -> Result<String, ConfigError> {
        let (config, registry) = self.resolved_with_agents()?;
        crate::presets::render_resolved(&config, &registry)
    }

    fn resolved_with_agents(&self) -> Result<(Config, Registry), ConfigError> {
        let registry = match &self.registry {
            Some(r) => r.clone(),
            None => Registry::discover()?,
        };
        let user = self.config.clone().unwrap_or_default();
        let mut resolved = if self.no_preset {
            crate::presets::upgraded(&user, &registry)
        } else {
            let mut c = user.clone();
            if let Some(p) = &self.preset {
                c.preset = Some(p.clone());
            }
            resolve_with(&c, &registry)?
        };
        drop_unlinked_preset_tables(&mut resolved, &user, &registry);
        check_config(&resolved, &registry)?;
        warn_once(&resolved.warnings);
        Ok((resolved, registry))
    }

    /// Builds the guard.
    pub fn build(self) -> Result<Guard, ConfigError> {
        self.template()?.build()
    }

    /// Resolves and checks the configuration and its `[guard]` settings once, for building
    /// many guards alike (a host with many sessions) without resolving again each time.
    pub fn template(self) -> Result<GuardTemplate, ConfigError> {
        let (config, registry) = self.resolved()?;
        let settings = Policy::from_table(&config.guard).map_err(|e| config.locate(e))?;
        let tools = Tools::from_config(&config.tools).map_err(|e| config.locate(e))?;
        let normalizers = match self.normalizers {
            Some(mut n) => {
                tools.configure(&mut n);
                n
            }
            None => tools.normalizers(),
        };
        Ok(GuardTemplate {
            config,
            registry,
            settings,
            tools,
            normalizers,
        })
    }
}

/// A resolved, checked configuration that builds guards ([`GuardBuilder::template`]).
#[derive(Clone, Debug)]
pub struct GuardTemplate {
    config: Config,
    registry: Registry,
    settings: Policy,
    tools: Tools,
    normalizers: Normalizers,
}

impl GuardTemplate {
    /// The resolved configuration the guards run.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// A fresh guard (only the detectors are built anew).
    pub fn build(&self) -> Result<Guard, ConfigError> {
        let detectors = self.registry.build(&self.config)?;
        let mut bus = Bus::with_tools(detectors, self.tools.clone(), self.normalizers.clone());
        bus.set_plain_results(self.settings.plain_results);
        let state = State {
            enabled: self.settings.enabled,
            ..State::default()
        };
        Ok(Guard {
            bus,
            settings: self.settings.clone(),
            state,
        })
    }
}

/// Removes the tables a preset brought for detectors this program does not link, unless the
/// user's own configuration names them (then the registry reports them as not linked).
fn drop_unlinked_preset_tables(resolved: &mut Config, user: &Config, registry: &Registry) {
    let named = |name: &str| {
        user.detectors.contains_key(name)
            || user.agents.values().any(|a| a.detectors.contains_key(name))
    };
    resolved
        .detectors
        .retain(|name, _| registry.get(name).is_some() || named(name));
    for a in resolved.agents.values_mut() {
        a.detectors
            .retain(|name, _| registry.get(name).is_some() || named(name));
    }
}

/// A steer or compaction waiting for the settle point.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Pending {
    Steer(String),
    Compact,
}

/// The current batch. Which of its calls wait for a result, and which of those the guard
/// refused, is the bus's to know (it pairs results with calls).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct BatchState {
    id: Option<u64>,
    blocked: Option<String>,
    /// The call whose block refused the batch.
    #[serde(default)]
    blocked_call: Option<Fingerprint>,
    /// The abort code of that block's detector.
    #[serde(default)]
    abort_code: Option<String>,
}

impl BatchState {
    /// Begins batch `id`.
    fn start(&mut self, id: u64) {
        *self = BatchState {
            id: Some(id),
            ..BatchState::default()
        };
    }
}

/// Warning de-duplication: the last bucket emitted per key, at most
/// [`Policy::MAX_DEDUP_KEYS`] keys, the oldest evicted first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct DedupMap {
    buckets: FixedMap<String, u32>,
    order: VecDeque<String>,
}

impl DedupMap {
    fn admit(&mut self, mode: Dedup, size: u32, f: &Finding) -> bool {
        match mode {
            Dedup::None => true,
            Dedup::PerKey => {
                if self.buckets.contains_key(&f.key) {
                    return false;
                }
                self.set(&f.key, 0);
                true
            }
            Dedup::Buckets => {
                let bucket = f.count / size.max(1);
                let last = self.buckets.get(&f.key).copied().unwrap_or(0);
                if bucket > last {
                    self.set(&f.key, bucket);
                    true
                } else {
                    false
                }
            }
        }
    }

    fn set(&mut self, key: &str, bucket: u32) {
        if let Some(b) = self.buckets.get_mut(key) {
            *b = bucket;
            return;
        }
        while self.order.len() >= Policy::MAX_DEDUP_KEYS {
            if let Some(old) = self.order.pop_front() {
                self.buckets.remove(&old);
            }
        }
        self.order.push_back(key.to_owned());
        self.buckets.insert(key.to_owned(), bucket);
    }

    fn clear(&mut self) {
        self.buckets.clear();
        self.order.clear();
    }

    fn len(&self) -> usize {
        self.order.len()
    }
}

/// Everything the guard itself remembers about a session (the detectors' state lives in the
/// bus). Serialised by [`Guard::snapshot`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct State {
    enabled: bool,
    blocks_turn: u32,
    blocks_run: u32,
    steers_used: u32,
    compactions_used: u32,
    text_aborted: Option<u64>,
    pending: Option<Pending>,
    batch: BatchState,
    dedup: DedupMap,
    /// The newest calls the guard refused (their bus sequence numbers and refusals): a call
    /// reported again gets its refusal again.
    #[serde(default)]
    refusals: VecDeque<Refusal>,
}

/// How the guard refused a call ([`State::refusals`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Refusal {
    seq: u64,
    reason: String,
    code: String,
    terminate: bool,
    whole_batch: bool,
}

/// How many refusals [`State::refusals`] keeps.
const MAX_REFUSALS: usize = 16;

impl State {
    fn new_turn(&mut self) {
        self.blocks_turn = 0;
        self.steers_used = 0;
        self.compactions_used = 0;
        self.pending = None;
        self.dedup.clear();
    }
}

/// What the budget allows for one trigger.
enum Spend {
    Steer(String),
    Compact,
    GiveUp,
}

/// Watches one agent session and answers each event with a [`Verdict`].
///
/// Detectors judge; the guard decides:
/// - a finding with `abort` ends the request (code `loop_aborted:<detector>` or the finding's
///   own code);
/// - a critical finding on a tool call blocks it; the N-th block of a user turn
///   (`abort-after-blocks`) or of a run (`abort-after-run-blocks`) aborts instead;
/// - a critical finding on streamed text aborts the generation (once per message) and, with
///   `steer-on-block`, queues a steer for the settle point (`RunEnd`);
/// - a warning steers the model, after de-duplication and within the steer budget; when the
///   budget is exhausted the guard compacts (`compactions-per-turn`) with a fresh budget, then
///   gives up (blocks and aborts stay, steers stop).
///
/// ```
/// use loopguard_orchestrator::{Action, Guard};
/// use loopguard_core::{Config, Event, Origin};
///
/// let mut guard = Guard::builder().config(Config::default()).no_preset().build().unwrap();
/// let v = guard.observe(&Event::User { text: "hello", origin: Origin::Human });
/// assert_eq!(v.action(), Action::Continue);
/// assert_eq!(guard.command("/runaway off"), Some(false));
/// assert!(!guard.is_enabled());
/// ```
#[derive(Debug)]
pub struct Guard {
    bus: Bus,
    settings: Policy,
    state: State,
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

    /// The policy in force (the resolved `[guard]` table).
    pub fn settings(&self) -> &Policy {
        &self.settings
    }

    /// Whether a tool result with `id` and `tool`, sent now, would answer a call this guard
    /// refused (then [`Guard::observe`] shows it to no detector: the call never ran). The bus
    /// pairs it with its call as it pairs every result, so a host that numbers its results
    /// its own way is answered alike.
    pub fn answers_refused(&self, id: &str, tool: &str) -> bool {
        self.state.enabled && self.bus.answers_refused(id, tool)
    }

    /// Whether the guard is on.
    pub fn is_enabled(&self) -> bool {
        self.state.enabled
    }

    /// Turns the guard on or off (a user command such as `/runaway off`; never model output).
    pub fn set_enabled(&mut self, on: bool) {
        self.state.enabled = on;
    }

    /// Runs a user command: `/runaway on`, `/runaway off`, `/runaway toggle` or a bare
    /// `/runaway` (toggles). Returns the new state, or `None` when `line` is not such a
    /// command. Only the host calls this, for a person's input: nothing in model output
    /// reaches it.
    pub fn command(&mut self, line: &str) -> Option<bool> {
        let mut words = line.split_whitespace();
        let head = words.next()?;
        if !head.eq_ignore_ascii_case("/runaway") {
            return None;
        }
        let on = match words.next().map(str::to_ascii_lowercase).as_deref() {
            None | Some("toggle") => !self.state.enabled,
            Some("on" | "enable") => true,
            Some("off" | "disable") => false,
            Some(_) => return None,
        };
        if words.next().is_some() {
            return None;
        }
        self.state.enabled = on;
        Some(on)
    }

    /// Remembers a message the host sends on the guard's behalf, so that when it comes back
    /// as a user message it does not start a new turn. Every steer the guard emits is
    /// remembered already; call this only when the host rewords or re-sends one.
    pub fn note_own_message(&mut self, text: &str) {
        self.bus.note_own_message(text);
    }

    /// Number of events observed (the next event's sequence number on the bus).
    pub fn seq(&self) -> u64 {
        self.bus.seq()
    }

    /// Characters of the current assistant message streamed so far (text and thinking
    /// deltas since its `MessageStart`, the last one observed included).
    pub fn char_offset(&self) -> u64 {
        self.bus.char_offset()
    }

    /// Observes one event and answers with a verdict.
    pub fn observe(&mut self, event: &Event<'_>) -> Verdict {
        let mut decoded = None;
        let event = event.with_decoded_args(&mut decoded);
        let event = &*event;
        if !self.state.enabled {
            self.bus.observe_vetoed(event);
            return Verdict::default();
        }
        let mut call: Option<&str> = None;
        match event {
            // The result of a call the guard refused (an error result carrying the guard's
            // reason), whatever id the host gave it: the call never ran, so detectors must not
            // see it, and a streak is never reset by the guard's own veto.
            Event::ToolResult { id, tool, .. } if self.answers_refused(id, tool) => {
                self.bus.observe_vetoed(event);
                return Verdict::default();
            }
            Event::ToolCall {
                id,
                tool,
                args,
                batch,
            } => {
                // The same call reported again while it waits for its result: it was judged
                // when first reported, and is neither counted nor judged twice; it gets the
                // verdict the call got (let through, or refused with the same reason).
                if let Some(a) = self.bus.announced_again(id, tool, args, *batch) {
                    let refusal = self.state.refusals.iter().find(|r| r.seq == a.seq);
                    match (a.refused, refusal) {
                        (false, _) => {
                            self.bus.observe_announced_again();
                            return Verdict::default();
                        }
                        (true, Some(r)) => {
                            let v = Verdict::Block {
                                reason: r.reason.clone(),
                                code: r.code.clone(),
                                terminate: r.terminate,
                                whole_batch: r.whole_batch,
                                findings: Vec::new(),
                            };
                            self.bus.observe_announced_again();
                            return v;
                        }
                        // A refusal no longer remembered: judged as a new call.
                        (true, None) => {}
                    }
                }
                let b = self.bus.batch_for(*batch);
                if self.state.batch.id != Some(b) {
                    self.state.batch.start(b);
                }
                if let Some(reason) = self.state.batch.blocked.clone() {
                    return self.refuse_with_batch(event, tool, args, reason);
                }
                call = Some(id);
            }
            _ => {}
        }
        let findings = self.bus.observe(event);
        let life = *self.bus.lifecycle();
        if life.new_turn {
            self.state.new_turn();
        }
        if life.new_run {
            self.state.blocks_run = 0;
            self.state.dedup.clear();
        }
        let v = self.decide_on(event, call, &findings);
        if call.is_some() && matches!(v.action(), Action::Block | Action::Abort) {
            self.bus.note_refused();
            self.remember_refusal(life.seq, &v);
            if v.whole_batch() {
                // The call's identity, as the bus computed it.
                self.state.batch.blocked_call = life.call;
            }
        }
        if let Verdict::Steer { message, .. } | Verdict::Compact { message, .. } = &v {
            self.bus.note_own_message(message);
        }
        v.with_findings(findings)
    }

    /// A call of a batch that was blocked: refused with it. The very call that was blocked,
    /// issued again in the same batch, counts as a block (so a host that keeps one batch open
    /// still reaches the abort); any other call does not.
    fn refuse_with_batch(
        &mut self,
        event: &Event<'_>,
        tool: &str,
        args: &Value,
        reason: String,
    ) -> Verdict {
        self.bus.observe_refused(event);
        self.bus.note_refused();
        let same =
            self.state.batch.blocked_call == Some(call_fingerprint(tool, &args_fingerprint(args)));
        if same && self.count_block() {
            let code = self
                .state
                .batch
                .abort_code
                .clone()
                .unwrap_or_else(|| "loop_aborted:batch".to_owned());
            self.state.pending = None;
            return Verdict::Abort {
                code,
                message: reason,
                findings: Vec::new(),
            };
        }
        Verdict::Block {
            reason,
            code: "tool_loop:batch".to_owned(),
            terminate: self.settings.terminate,
            whole_batch: true,
            findings: Vec::new(),
        }
    }

    /// Remembers how the call of sequence number `seq` was refused, for the same call
    /// reported again.
    fn remember_refusal(&mut self, seq: u64, v: &Verdict) {
        if let Verdict::Block {
            reason,
            code,
            terminate,
            whole_batch,
            ..
        } = v
        {
            let refusals = &mut self.state.refusals;
            if refusals.len() >= MAX_REFUSALS {
                refusals.pop_front();
            }
            refusals.push_back(Refusal {
                seq,
                reason: reason.clone(),
                code: code.clone(),
                terminate: *terminate,
                whole_batch: *whole_batch,
            });
        }
    }

    /// Counts one block in the turn and the run; whether that reaches an abort.
    fn count_block(&mut self) -> bool {
        let s = &self.settings;
        self.state.blocks_turn = self.state.blocks_turn.saturating_add(1);
        self.state.blocks_run = self.state.blocks_run.saturating_add(1);
        let by_turn = s.abort_after_blocks > 0 && self.state.blocks_turn >= s.abort_after_blocks;
        let by_run =
            s.abort_after_run_blocks > 0 && self.state.blocks_run >= s.abort_after_run_blocks;
        by_turn || by_run
    }

    /// The verdict on `findings`, without them (the caller moves them in).
    fn decide_on(
        &mut self,
        event: &Event<'_>,
        call: Option<&str>,
        findings: &[Finding],
    ) -> Verdict {
        let top = pick(findings);
        let settle = matches!(event, Event::RunEnd);

        if let Some(top) = top.filter(|f| f.level == Level::Fatal) {
            return self.abort(top);
        }
        if settle {
            if let Some(p) = self.state.pending.take() {
                return deliver_pending(&mut self.state, p);
            }
        }
        let Some(top) = top else {
            return Verdict::default();
        };
        let is_text = matches!(event, Event::TextDelta { .. } | Event::MessageEnd);
        match top.level {
            Level::Critical if call.is_some() => self.block(top),
            Level::Critical if is_text => self.text_abort(top),
            _ => self.warn(findings),
        }
    }

    fn abort(&mut self, top: &Finding) -> Verdict {
        self.state.pending = None;
        Verdict::Abort {
            code: abort_code(top),
            message: top.message.clone(),
            findings: Vec::new(),
        }
    }

    fn block(&mut self, top: &Finding) -> Verdict {
        if self.count_block() {
            return self.abort(top);
        }
        let s = &self.settings;
        let (terminate, whole_batch) = (s.terminate, s.whole_batch);
        if whole_batch {
            self.state.batch.blocked = Some(format!(
                "Blocked with the rest of its batch: {}",
                top.message
            ));
            self.state.batch.abort_code = Some(abort_code(top));
            if let Some(b) = self.state.batch.id {
                self.bus.refuse_batch(b);
            }
        }
        if self.settings.steer_on_block {
            self.queue(Path::Tool, top);
        }
        Verdict::Block {
            reason: top.message.clone(),
            code: format!("tool_loop:{}", top.detector),
            terminate,
            whole_batch,
            findings: Vec::new(),
        }
    }

    fn text_abort(&mut self, top: &Finding) -> Verdict {
        let message = self.bus.message();
        if self.state.text_aborted == Some(message) {
            return Verdict::default();
        }
        self.state.text_aborted = Some(message);
        if self.settings.steer_on_block {
            self.queue(Path::Text, top);
        }
        Verdict::Abort {
            code: abort_code(top),
            message: top.message.clone(),
            findings: Vec::new(),
        }
    }

    fn warn(&mut self, findings: &[Finding]) -> Verdict {
        let mode = self.settings.warning_dedup;
        let size = self.settings.warning_bucket_size;
        let mut chosen: Option<&Finding> = None;
        for f in findings {
            let admitted = f.level >= Level::Critical || self.state.dedup.admit(mode, size, f);
            if admitted && chosen.is_none_or(|c| (f.level, f.count) > (c.level, c.count)) {
                chosen = Some(f);
            }
        }
        let Some(f) = chosen else {
            return Verdict::default();
        };
        match self.spend(Path::Warning, f) {
            Spend::Steer(message) => Verdict::Steer {
                message,
                deliver: Delivery::Now,
                findings: Vec::new(),
            },
            Spend::Compact => {
                self.state.steers_used = 0;
                Verdict::Compact {
                    message: CONTINUE_STEER.to_owned(),
                    deliver: Delivery::Now,
                    findings: Vec::new(),
                }
            }
            Spend::GiveUp => Verdict::default(),
        }
    }

    /// Queues the steer (or compaction) of a block or text abort for the settle point.
    fn queue(&mut self, path: Path, f: &Finding) {
        if self.state.pending == Some(Pending::Compact) {
            return;
        }
        match self.spend(path, f) {
            Spend::Steer(text) => self.state.pending = Some(Pending::Steer(text)),
            Spend::Compact => self.state.pending = Some(Pending::Compact),
            Spend::GiveUp => {}
        }
    }

    fn spend(&mut self, path: Path, f: &Finding) -> Spend {
        let s = &self.settings;
        if s.steers_per_turn == 0 {
            self.state.steers_used = self.state.steers_used.saturating_add(1);
            return Spend::Steer(steer_text(
                s.steer_wording,
                path,
                self.state.steers_used,
                0,
                f,
            ));
        }
        if self.state.steers_used < s.steers_per_turn {
            self.state.steers_used += 1;
            return Spend::Steer(steer_text(
                s.steer_wording,
                path,
                self.state.steers_used,
                s.steers_per_turn,
                f,
            ));
        }
        if self.state.compactions_used < s.compactions_per_turn {
            self.state.compactions_used += 1;
            return Spend::Compact;
        }
        Spend::GiveUp
    }

    /// Serialises the whole session state: the guard's own (budget, block counts, pending
    /// steer, de-duplication, on/off) and the bus with every detector.
    pub fn snapshot(&self) -> Result<Value, StateError> {
        let bus = self.bus.snapshot()?;
        let guard = serde_json::to_value(&self.state).map_err(|e| StateError::Invalid {
            detector: "guard",
            message: e.to_string(),
        })?;
        Ok(serde_json::json!({ "version": SNAPSHOT_VERSION, "guard": guard, "bus": bus }))
    }

    /// Restores a snapshot taken by [`Guard::snapshot`] from a guard built with the same
    /// configuration. A snapshot with a wrong version, a missing part or state beyond its
    /// bounds is refused before anything changes; if a detector refuses its part, detectors
    /// before it may already be restored, so build a fresh guard before retrying.
    pub fn restore(&mut self, snapshot: &Value) -> Result<(), StateError> {
        let bad = |message: String| StateError::Invalid {
            detector: "guard",
            message,
        };
        match snapshot.get("version").and_then(Value::as_u64) {
            Some(SNAPSHOT_VERSION) => {}
            Some(n) => {
                return Err(bad(format!(
                    "snapshot version {n} is not supported (expected {SNAPSHOT_VERSION})"
                )))
            }
            None => return Err(bad("missing `version`".to_owned())),
        }
        let guard = snapshot
            .get("guard")
            .ok_or_else(|| bad("missing `guard`".to_owned()))?;
        let state = State::deserialize(guard).map_err(|e| bad(e.to_string()))?;
        if state.dedup.len() > Policy::MAX_DEDUP_KEYS
            || state.dedup.buckets.len() != state.dedup.order.len()
            || state.refusals.len() > MAX_REFUSALS
        {
            return Err(bad("state exceeds its bounds".to_owned()));
        }
        let bus = snapshot
            .get("bus")
            .ok_or_else(|| bad("missing `bus`".to_owned()))?;
        self.bus.restore(bus)?;
        self.state = state;
        Ok(())
    }
}

fn deliver_pending(state: &mut State, p: Pending) -> Verdict {
    match p {
        Pending::Steer(message) => Verdict::Steer {
            message,
            deliver: Delivery::AtSettle,
            findings: Vec::new(),
        },
        Pending::Compact => {
            state.steers_used = 0;
            Verdict::Compact {
                message: CONTINUE_STEER.to_owned(),
                deliver: Delivery::AtSettle,
                findings: Vec::new(),
            }
        }
    }
}

/// The finding that decides: abort first, then the highest level, then the highest count
/// (the first one wins ties).
fn pick(findings: &[Finding]) -> Option<&Finding> {
    let mut best: Option<&Finding> = None;
    for f in findings {
        if best.is_none_or(|b| (f.level, f.count) > (b.level, b.count)) {
            best = Some(f);
        }
    }
    best
}

fn abort_code(f: &Finding) -> String {
    match &f.code {
        Some(c) if f.level == Level::Fatal => c.clone(),
        _ => format!("loop_aborted:{}", f.detector),
    }
}
