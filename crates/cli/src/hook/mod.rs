//! `loopguard hook …`: guard a live agent session through the agent's own hooks.
//!
//! Each hook invocation is one short process: it reads one hook input on stdin, restores the
//! session's guard from the state directory, observes the events the input stands for, saves
//! the guard again and answers in the agent's hook output (see [`protocol`]). The events are
//! the ones `loopguard scan` replays from the agent's session file, so a session guarded live
//! and the same session scanned afterwards get the same verdicts on its tool calls:
//!
//! | hook input | events |
//! |---|---|
//! | first input of a session | `SessionStart` (the session id), `RunStart` |
//! | `PreToolUse` / `BeforeTool` | `ToolCall` (calls reported back to back share a batch; a denied call ends its batch) |
//! | `PostToolUse`, `PostToolUseFailure` / `AfterTool` | `ToolResult` (`PostToolUseFailure`: an error) |
//! | `UserPromptSubmit` / `BeforeAgent` | `RunEnd` after agent activity, then `User` |
//! | `Stop` / `AfterAgent` | `RunEnd` after agent activity |
//! | `PreCompact` / `PreCompress`, or `SessionStart` with `source: "compact"` (once per compaction) | `Compaction` |
//!
//! Verdicts become hook output: a block denies the call with the guard's reason; a steer is
//! given to the model as `additionalContext` of the event, or, where the event cannot carry
//! it (before a call, at a stop), of the next event that can (the call's result, the next
//! prompt); an abort stops the agent (`continue: false`) with the abort code in
//! `stopReason`; continue prints nothing. The assistant's own text never reaches a hook, so
//! the text detectors do not run here.

pub mod install;
pub mod protocol;
pub mod state;

use crate::load_config;
use loopguard::orchestrator::{Action, Guard, GuardTemplate, Verdict};
use loopguard::{Event, Origin};
use protocol::{carries_context, Agent, Happening, Input, Reply, Slot};
use serde_json::Value;
use sha2::{Digest, Sha256};
use state::{Loaded, Memo, Saved, Session, MAX_PENDING, STATE_VERSION};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Exit status of a hook invocation that failed. Claude Code, Codex and Gemini CLI treat 2 as
/// "block", so loopguard's own failures use 1: a non-blocking error, the session goes on.
pub const EXIT_HOOK_FAILED: u8 = 1;

/// Largest hook input read from stdin.
pub const MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

/// `loopguard hook …`.
#[derive(Debug, clap::Args)]
pub struct HookArgs {
    /// The hook command.
    #[command(subcommand)]
    pub command: HookCommand,
}

/// The `hook` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum HookCommand {
    /// Answer one Claude Code hook: hook input JSON on stdin, hook output JSON on stdout.
    ClaudeCode(RunArgs),
    /// Answer one Codex hook (Codex speaks Claude Code's hook protocol).
    Codex(RunArgs),
    /// Answer one Gemini CLI hook.
    GeminiCli(RunArgs),
    /// Add loopguard's hook entries to the agent's settings file.
    Install(install::InstallArgs),
    /// Remove exactly loopguard's hook entries from the agent's settings file.
    Uninstall(install::InstallArgs),
}

/// Options of one hook invocation.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// Preset to start from (overrides the configuration file's `preset`).
    #[arg(long)]
    pub preset: Option<String>,
    /// Configuration file (TOML).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Where session states are kept (default: $LOOPGUARD_STATE_DIR, else
    /// $XDG_STATE_HOME/loopguard, else ~/.local/state/loopguard).
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
}

/// What a hook invocation needs besides its input: the guard's template, the configuration
/// fingerprint (a state written under another configuration is not restored), the state
/// directory.
#[derive(Debug)]
pub struct Context {
    /// Builds the session's guard.
    pub template: GuardTemplate,
    /// Fingerprint of the resolved configuration.
    pub fingerprint: String,
    /// The state directory.
    pub state_dir: PathBuf,
}

impl Context {
    /// The context for `args`: configuration from `--config` / `--preset`, then the
    /// `LOOP_GUARD_*` variables; the state directory from `--state-dir` or the environment.
    pub fn from_args(args: &RunArgs) -> anyhow::Result<Context> {
        let mut config = load_config(args.config.as_deref(), args.preset.as_deref())?;
        let env: Vec<(String, String)> = std::env::vars()
            .filter(|(k, _)| k.starts_with("LOOP_GUARD_"))
            .collect();
        config.apply_env(env.iter().cloned())?;
        let fingerprint = fingerprint(args, &env);
        // `load_config` resolved the preset already: resolving it again would parse the
        // preset's TOML a second time for the same configuration.
        let template = Guard::builder().config(config).no_preset().template()?;
        Ok(Context {
            template,
            fingerprint,
            state_dir: state::state_dir(args.state_dir.as_deref())?,
        })
    }
}

/// What decides the configuration: this loopguard's version (its presets), the preset, the
/// configuration file's path and content, the `LOOP_GUARD_*` variables. Cheaper than
/// rendering the resolved configuration on every invocation, and as exact: the same inputs
/// resolve to the same configuration.
fn fingerprint(args: &RunArgs, env: &[(String, String)]) -> String {
    let mut h = Sha256::new();
    let mut field = |b: &[u8]| {
        h.update((b.len() as u64).to_le_bytes());
        h.update(b);
    };
    field(env!("CARGO_PKG_VERSION").as_bytes());
    field(args.preset.as_deref().unwrap_or("").as_bytes());
    match &args.config {
        Some(p) => {
            field(p.to_string_lossy().as_bytes());
            field(&std::fs::read(p).unwrap_or_default());
        }
        None => field(b""),
    }
    let mut env: Vec<&(String, String)> = env.iter().collect();
    env.sort();
    for (k, v) in env {
        field(k.as_bytes());
        field(v.as_bytes());
    }
    hex(&h.finalize()[..8])
}

/// One verdict other than continue, as the hook saw it (for tests and diagnostics).
#[derive(Clone, Debug, PartialEq)]
pub struct Seen {
    /// The action.
    pub action: Action,
    /// The block or abort code.
    pub code: Option<String>,
    /// The detectors behind it.
    pub detectors: Vec<&'static str>,
}

/// The result of one hook invocation.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The hook output to print (nothing when `None`).
    pub output: Option<Value>,
    /// The verdicts other than continue.
    pub verdicts: Vec<Seen>,
    /// Lines for stderr (an unusable state file replaced …).
    pub notes: Vec<String>,
}

/// A hook invocation that could not be answered.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    /// The input.
    #[error(transparent)]
    Input(#[from] protocol::InputError),
    /// The state directory.
    #[error(transparent)]
    State(#[from] state::StateError),
    /// The guard could not be built.
    #[error("cannot build the guard: {0}")]
    Config(#[from] loopguard::ConfigError),
    /// The guard could not be snapshotted.
    #[error("cannot save the guard of session {session}: {message}")]
    Snapshot {
        /// The session id.
        session: String,
        /// What went wrong.
        message: String,
    },
}

/// Answers one hook input of `agent`'s protocol.
pub fn handle(agent: Agent, bytes: &[u8], cx: &Context) -> Result<Outcome, HookError> {
    handle_input(agent, &protocol::parse(agent, bytes)?, cx)
}

/// Answers one parsed hook input.
pub fn handle_input(agent: Agent, input: &Input, cx: &Context) -> Result<Outcome, HookError> {
    let mut outcome = Outcome::default();
    if input.happening == Happening::Ignored {
        return Ok(outcome);
    }
    let session = Session::lock(
        &cx.state_dir,
        &state::file_stem(agent.as_str(), &input.guard_key()),
    )?;
    let mut guard = cx.template.build()?;
    let (mut memo, fresh) = match session.load(&cx.fingerprint)? {
        Loaded::Found(saved) => match guard.restore(&saved.guard) {
            Ok(()) => (saved.memo, false),
            Err(e) => {
                outcome.notes.push(format!(
                    "loopguard: {}: cannot restore the guard ({e}); this session's guard starts afresh",
                    session.path().display()
                ));
                guard = cx.template.build()?;
                (Memo::default(), true)
            }
        },
        Loaded::Missing => {
            session.prune(&cx.state_dir, state::PRUNE_AFTER);
            (Memo::default(), true)
        }
        Loaded::Unusable(why) => {
            outcome.notes.push(format!(
                "loopguard: {}: {why}; replaced, this session's guard starts afresh",
                session.path().display()
            ));
            (Memo::default(), true)
        }
    };
    let slot = input.slot();
    let mut reply = Reply::default();
    let mut steer: Option<String> = None;
    let mut observe = |guard: &mut Guard, ev: &Event<'_>, reply: &mut Reply| {
        let v = guard.observe(ev);
        if !v.is_continue() {
            apply(&v, slot, reply, &mut steer);
            outcome.verdicts.push(Seen {
                action: v.action(),
                code: v.code().map(str::to_owned),
                detectors: v.findings().iter().map(|f| f.detector).collect(),
            });
        }
    };
    if fresh {
        observe(
            &mut guard,
            &Event::SessionStart {
                id: &input.guard_key(),
            },
            &mut reply,
        );
        observe(&mut guard, &Event::RunStart { run_id: None }, &mut reply);
    }
    match &input.happening {
        Happening::ToolCall { id, tool, args } => {
            if !memo.in_calls {
                memo.batch = memo.batch.saturating_add(1);
            }
            memo.in_calls = true;
            memo.active = true;
            let id = match id {
                Some(id) => id.clone(),
                None => derive_call_id(&mut memo, tool, args),
            };
            let ev = Event::ToolCall {
                id: &id,
                tool,
                args,
                batch: Some(memo.batch),
            };
            observe(&mut guard, &ev, &mut reply);
            // A denied call never runs and gets no result, so the agent's next call (after
            // the model has read the denial) would look like a sibling: a denial ends the
            // batch.
            if reply.deny.is_some() {
                memo.in_calls = false;
            }
        }
        Happening::ToolResult {
            id,
            tool,
            args,
            content,
            is_error,
            images,
        } => {
            memo.in_calls = false;
            memo.active = true;
            let id = match id {
                Some(id) => id.clone(),
                None => match_call_id(&mut memo, tool, args),
            };
            let ev = Event::ToolResult {
                id: &id,
                tool,
                content,
                is_error: *is_error,
                images: *images,
                details: None,
            };
            observe(&mut guard, &ev, &mut reply);
        }
        Happening::User { text } => {
            memo.in_calls = false;
            if std::mem::take(&mut memo.active) {
                observe(&mut guard, &Event::RunEnd, &mut reply);
            }
            let ev = Event::User {
                text,
                origin: Origin::Unknown,
            };
            observe(&mut guard, &ev, &mut reply);
        }
        Happening::Settle => {
            memo.in_calls = false;
            if std::mem::take(&mut memo.active) {
                observe(&mut guard, &Event::RunEnd, &mut reply);
            }
        }
        Happening::Compaction { after } => {
            memo.in_calls = false;
            let seen_before = *after && memo.compacting;
            memo.compacting = !*after;
            if !seen_before {
                observe(&mut guard, &Event::Compaction, &mut reply);
            }
        }
        Happening::SessionStart | Happening::Ignored => {}
    }
    // Text for the model: this invocation's steer, else the one still carried; delivered
    // now if this event can carry it, else kept for the next one that can.
    if let Some(s) = steer {
        memo.carry = Some(s);
    }
    if carries_context(slot) {
        reply.context = memo.carry.take();
    }
    let snapshot = guard.snapshot().map_err(|e| HookError::Snapshot {
        session: input.session_id.clone(),
        message: e.to_string(),
    })?;
    session.save(&Saved {
        version: STATE_VERSION,
        config: cx.fingerprint.clone(),
        memo,
        guard: snapshot,
    })?;
    outcome.output = protocol::render(agent, &input.event, slot, &reply);
    Ok(outcome)
}

/// Folds one verdict into the reply.
fn apply(v: &Verdict, slot: Slot, reply: &mut Reply, steer: &mut Option<String>) {
    let message = v.message().unwrap_or("loopguard found a loop");
    let code = v.code().unwrap_or("loop");
    match v.action() {
        Action::Continue => {}
        Action::Steer => *steer = Some(message.to_owned()),
        Action::Block => {
            reply.deny = Some(format!("{message} [loopguard {code}]"));
            if v.terminate() {
                reply.stop = Some(format!("loopguard stopped the agent ({code}): {message}"));
            }
        }
        Action::Abort => {
            if slot == Slot::PreTool {
                reply.deny = Some(format!("{message} [loopguard {code}]"));
            }
            reply.stop = Some(format!("loopguard stopped the session ({code}): {message}"));
        }
        Action::Compact => {
            reply.notice = Some(
                "loopguard: this session keeps looping after its steers; compacting the \
                 context (/compact) may get it out"
                    .to_owned(),
            );
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn call_fingerprint(tool: &str, args: &Value) -> String {
    let mut h = Sha256::new();
    h.update(tool.as_bytes());
    h.update([0]);
    h.update(args.to_string().as_bytes());
    hex(&h.finalize()[..8])
}

/// A call id for an agent that sends none, remembered until the call's result comes.
fn derive_call_id(memo: &mut Memo, tool: &str, args: &Value) -> String {
    memo.next_id = memo.next_id.saturating_add(1);
    let id = format!("loopguard-call-{}", memo.next_id);
    if memo.pending.len() >= MAX_PENDING {
        memo.pending.remove(0);
    }
    memo.pending
        .push((call_fingerprint(tool, args), id.clone()));
    id
}

/// The derived id of the oldest call awaiting its result with the same tool and arguments
/// (a fresh id when none is remembered).
fn match_call_id(memo: &mut Memo, tool: &str, args: &Value) -> String {
    let fp = call_fingerprint(tool, args);
    match memo.pending.iter().position(|(f, _)| *f == fp) {
        Some(i) => memo.pending.remove(i).1,
        None => {
            memo.next_id = memo.next_id.saturating_add(1);
            format!("loopguard-call-{}", memo.next_id)
        }
    }
}

/// `loopguard hook …`.
pub(crate) fn command(
    a: &HookArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<u8> {
    let (agent, args) = match &a.command {
        HookCommand::ClaudeCode(r) => (Agent::ClaudeCode, r),
        HookCommand::Codex(r) => (Agent::Codex, r),
        HookCommand::GeminiCli(r) => (Agent::GeminiCli, r),
        HookCommand::Install(i) => return install::command(i, true, out),
        HookCommand::Uninstall(i) => return install::command(i, false, out),
    };
    let mut input = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(MAX_INPUT_BYTES)
        .read_to_end(&mut input);
    let result = read
        .map_err(|e| anyhow::anyhow!("cannot read the hook input on stdin: {e}"))
        .and_then(|_| run_once(agent, &input, args));
    let written = result.and_then(|o| {
        for n in &o.notes {
            writeln!(err, "{n}")?;
        }
        if let Some(v) = &o.output {
            writeln!(out, "{v}")?;
        }
        Ok(())
    });
    match written {
        Ok(()) => Ok(crate::EXIT_OK),
        Err(e) => {
            let _ = writeln!(err, "loopguard hook {}: {e:#}", agent.as_str());
            Ok(EXIT_HOOK_FAILED)
        }
    }
}

/// Whether a command line runs a hook (`loopguard hook claude-code|codex|gemini-cli …`),
/// whose failures must exit with [`EXIT_HOOK_FAILED`] rather than 2.
pub fn is_hook_invocation(args: &[std::ffi::OsString]) -> bool {
    let word = |i: usize| args.get(i).and_then(|a| a.to_str());
    word(1) == Some("hook") && matches!(word(2), Some("claude-code" | "codex" | "gemini-cli"))
}

fn run_once(agent: Agent, input: &[u8], args: &RunArgs) -> anyhow::Result<Outcome> {
    let input = protocol::parse(agent, input)?;
    // An event loopguard ignores costs no configuration and no state.
    if input.happening == Happening::Ignored {
        return Ok(Outcome::default());
    }
    let cx = Context::from_args(args)?;
    Ok(handle_input(agent, &input, &cx)?)
}

/// The session state file `handle` uses for `session_id` of `agent` in `dir` (a main
/// session; a subagent's is keyed `<session_id>/<agent_id>`).
pub fn state_file(dir: &Path, agent: Agent, session_id: &str) -> PathBuf {
    dir.join(format!(
        "{}.json",
        state::file_stem(agent.as_str(), session_id)
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn cx(dir: &Path) -> Context {
        Context::from_args(&RunArgs {
            preset: None,
            config: None,
            state_dir: Some(dir.to_owned()),
        })
        .unwrap()
    }

    fn pre(session: &str, id: Option<&str>, cmd: &str) -> Vec<u8> {
        let mut v = serde_json::json!({
            "session_id": session, "transcript_path": "/t", "cwd": "/", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": cmd},
        });
        if let Some(id) = id {
            v["tool_use_id"] = id.into();
        }
        v.to_string().into_bytes()
    }

    fn post(session: &str, id: Option<&str>, cmd: &str, out: &str) -> Vec<u8> {
        let mut v = serde_json::json!({
            "session_id": session, "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": cmd}, "tool_response": {"stdout": out, "stderr": ""},
        });
        if let Some(id) = id {
            v["tool_use_id"] = id.into();
        }
        v.to_string().into_bytes()
    }

    #[test]
    fn derived_ids_pair_calls_with_their_results() {
        let mut m = Memo::default();
        let args = serde_json::json!({"command": "ls"});
        let other = serde_json::json!({"command": "pwd"});
        let a = derive_call_id(&mut m, "Bash", &args);
        let b = derive_call_id(&mut m, "Bash", &other);
        let c = derive_call_id(&mut m, "Bash", &args);
        assert_eq!(match_call_id(&mut m, "Bash", &other), b);
        assert_eq!(match_call_id(&mut m, "Bash", &args), a);
        assert_eq!(match_call_id(&mut m, "Bash", &args), c);
        let orphan = match_call_id(&mut m, "Bash", &args);
        assert!(![a, b, c].contains(&orphan));
        for _ in 0..(MAX_PENDING * 2) {
            derive_call_id(&mut m, "Bash", &args);
        }
        assert_eq!(m.pending.len(), MAX_PENDING);
    }

    #[test]
    fn a_repeated_call_is_steered_then_denied_then_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let cx = cx(dir.path());
        let mut actions = Vec::new();
        let mut outputs = Vec::new();
        for i in 0..12 {
            let id = format!("toolu_{i}");
            let o = handle(Agent::ClaudeCode, &pre("S", Some(&id), "cargo build"), &cx).unwrap();
            assert!(o.notes.is_empty(), "{:?}", o.notes);
            actions.extend(o.verdicts.iter().map(|v| v.action));
            let stopped = o
                .output
                .as_ref()
                .is_some_and(|v| v["continue"] == Value::Bool(false));
            outputs.push(o.output);
            if stopped {
                break;
            }
            let o = handle(
                Agent::ClaudeCode,
                &post("S", Some(&id), "cargo build", "same"),
                &cx,
            )
            .unwrap();
            actions.extend(o.verdicts.iter().map(|v| v.action));
            outputs.push(o.output);
        }
        assert!(actions.contains(&Action::Steer), "{actions:?}");
        let first_block = actions.iter().position(|a| *a == Action::Block);
        let first_block = first_block.unwrap_or_else(|| panic!("{actions:?}"));
        let first_steer = actions.iter().position(|a| *a == Action::Steer).unwrap();
        assert!(first_steer < first_block, "{actions:?}");
        assert_eq!(actions.last(), Some(&Action::Abort), "{actions:?}");
        // The steer reached the model after a tool result, the block denied a call.
        assert!(outputs
            .iter()
            .flatten()
            .any(
                |v| v["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
                    && v["hookSpecificOutput"]["additionalContext"].is_string()
            ));
        assert!(outputs
            .iter()
            .flatten()
            .any(|v| v["hookSpecificOutput"]["permissionDecision"] == "deny"));
        let last = outputs.last().unwrap().as_ref().unwrap();
        assert!(
            last["stopReason"]
                .as_str()
                .unwrap()
                .contains("loop_aborted:"),
            "{last}"
        );
    }

    #[test]
    fn a_corrupt_state_is_reported_once_and_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let cx = cx(dir.path());
        let file = state_file(dir.path(), Agent::ClaudeCode, "S");
        std::fs::write(&file, b"not json").unwrap();
        let o = handle(Agent::ClaudeCode, &pre("S", Some("a"), "ls"), &cx).unwrap();
        assert_eq!(o.notes.len(), 1, "{:?}", o.notes);
        assert!(o.notes[0].contains(&file.display().to_string()));
        let o = handle(Agent::ClaudeCode, &post("S", Some("a"), "ls", "x"), &cx).unwrap();
        assert!(o.notes.is_empty(), "{:?}", o.notes);
    }

    #[test]
    fn sessions_do_not_share_state() {
        let dir = tempfile::tempdir().unwrap();
        let cx = cx(dir.path());
        for i in 0..4 {
            let id = format!("a{i}");
            handle(Agent::ClaudeCode, &pre("A", Some(&id), "same"), &cx).unwrap();
            handle(Agent::ClaudeCode, &post("A", Some(&id), "same", "x"), &cx).unwrap();
        }
        // Session B's first identical call is nothing special.
        let o = handle(Agent::ClaudeCode, &pre("B", Some("b0"), "same"), &cx).unwrap();
        assert!(o.verdicts.is_empty(), "{:?}", o.verdicts);
        assert!(o.output.is_none());
    }

    #[test]
    fn a_subagent_gets_its_own_guard() {
        let dir = tempfile::tempdir().unwrap();
        let cx = cx(dir.path());
        let sub = |id: &str| {
            let mut v: Value = serde_json::from_slice(&pre("M", Some(id), "cargo build")).unwrap();
            v["agent_id"] = "explorer-1".into();
            v.to_string().into_bytes()
        };
        for i in 0..4 {
            let id = format!("s{i}");
            handle(Agent::ClaudeCode, &sub(&id), &cx).unwrap();
            let mut r: Value =
                serde_json::from_slice(&post("M", Some(&id), "cargo build", "x")).unwrap();
            r["agent_id"] = "explorer-1".into();
            handle(Agent::ClaudeCode, r.to_string().as_bytes(), &cx).unwrap();
        }
        // The main session's first such call is judged on its own history only.
        let o = handle(Agent::ClaudeCode, &pre("M", Some("m0"), "cargo build"), &cx).unwrap();
        assert!(o.verdicts.is_empty(), "{:?}", o.verdicts);
        // The subagent's fifth identical call is denied.
        let o = handle(Agent::ClaudeCode, &sub("s4"), &cx).unwrap();
        assert_eq!(o.verdicts.first().map(|v| v.action), Some(Action::Block));
    }

    #[test]
    fn hook_invocations_are_told_from_other_commands() {
        let args = |a: &[&str]| a.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert!(is_hook_invocation(&args(&[
            "loopguard",
            "hook",
            "claude-code",
            "--bogus"
        ])));
        assert!(is_hook_invocation(&args(&[
            "loopguard",
            "hook",
            "gemini-cli"
        ])));
        assert!(!is_hook_invocation(&args(&[
            "loopguard",
            "hook",
            "install",
            "--bogus"
        ])));
        assert!(!is_hook_invocation(&args(&["loopguard", "scan"])));
    }
}
