//! `loopguard hook install|uninstall <agent>`: edit the agent's hook settings.
//!
//! The settings file is read as JSON, loopguard's entries are added to (or removed from)
//! `hooks.<Event>` — one matcher group per event holding one command hook — and the file is
//! written back with every other key, event, group and hook as it was. Installing twice
//! changes nothing the second time; uninstalling removes exactly the entries that run
//! `loopguard hook <agent>` (and groups and events left empty by that). Before a change the
//! old file is copied to `<file>.loopguard-backup`; the new one replaces it atomically.

use super::protocol::Agent;
use anyhow::Context as _;
use serde_json::{json, Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `loopguard hook install|uninstall` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct InstallArgs {
    /// The agent.
    #[arg(value_enum)]
    pub agent: Agent,
    /// Edit the user's settings (the default): ~/.claude/settings.json, ~/.codex/hooks.json,
    /// ~/.gemini/settings.json.
    #[arg(long, conflicts_with = "project")]
    pub user: bool,
    /// Edit the project's settings in the current directory: .claude/settings.json,
    /// .codex/hooks.json, .gemini/settings.json.
    #[arg(long)]
    pub project: bool,
    /// Edit this settings file instead.
    #[arg(long, conflicts_with_all = ["user", "project"])]
    pub settings: Option<PathBuf>,
    /// The command the hooks run (default: this loopguard executable, then `hook <agent>`).
    #[arg(long)]
    pub command: Option<String>,
    /// Print the change and the new file; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// The hook events loopguard listens to, with the matcher to register (tool events).
pub fn events(agent: Agent) -> &'static [(&'static str, Option<&'static str>)] {
    match agent {
        Agent::ClaudeCode => &[
            ("PreToolUse", Some("*")),
            ("PostToolUse", Some("*")),
            ("PostToolUseFailure", Some("*")),
            ("UserPromptSubmit", None),
            ("Stop", None),
            ("PreCompact", None),
            ("SessionStart", None),
        ],
        Agent::Codex => &[
            ("PreToolUse", None),
            ("PostToolUse", None),
            ("UserPromptSubmit", None),
            ("Stop", None),
            ("SessionStart", None),
        ],
        Agent::GeminiCli => &[
            ("BeforeTool", None),
            ("AfterTool", None),
            ("BeforeAgent", None),
            ("AfterAgent", None),
            ("PreCompress", None),
            ("SessionStart", None),
        ],
    }
}

/// The settings file for `agent`: the project's (under `cwd`) or the user's (under `home`).
pub fn settings_path(agent: Agent, project: bool, cwd: &Path, home: &Path) -> PathBuf {
    let (dir, file) = match agent {
        Agent::ClaudeCode => (".claude", "settings.json"),
        Agent::Codex => (".codex", "hooks.json"),
        Agent::GeminiCli => (".gemini", "settings.json"),
    };
    if project {
        return cwd.join(dir).join(file);
    }
    if agent == Agent::Codex {
        if let Some(h) = std::env::var_os("CODEX_HOME").filter(|h| !h.is_empty()) {
            return PathBuf::from(h).join(file);
        }
    }
    home.join(dir).join(file)
}

/// The default hook command: this executable (shell-quoted when needed), `hook <agent>`.
pub fn default_command(agent: Agent) -> anyhow::Result<String> {
    let exe = std::env::current_exe().context("cannot find this executable's path")?;
    let exe = exe.to_string_lossy();
    let safe = exe
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:\\".contains(c));
    let exe = if safe {
        exe.into_owned()
    } else {
        format!("'{}'", exe.replace('\'', r"'\''"))
    };
    Ok(format!("{exe} hook {}", agent.as_str()))
}

/// Whether `command` runs `loopguard hook <agent>`: a word naming a `loopguard` executable
/// followed by `hook` and the agent.
pub fn is_ours(command: &str, agent: Agent) -> bool {
    let words: Vec<&str> = command
        .split_whitespace()
        .map(|w| w.trim_matches(|c| c == '\'' || c == '"'))
        .collect();
    words.windows(3).any(|w| {
        let name = w[0].rsplit(['/', '\\']).next().unwrap_or(w[0]);
        (name == "loopguard" || name == "loopguard.exe") && w[1] == "hook" && w[2] == agent.as_str()
    })
}

fn entry(agent: Agent, command: &str) -> Value {
    match agent {
        Agent::GeminiCli => json!({
            "name": "loopguard", "type": "command", "command": command, "timeout": 10000,
        }),
        _ => json!({ "type": "command", "command": command, "timeout": 10 }),
    }
}

fn hooks_table<'a>(doc: &'a mut Value, path: &Path) -> anyhow::Result<&'a mut Map<String, Value>> {
    let Value::Object(top) = doc else {
        anyhow::bail!("{}: the settings are not a JSON object", path.display());
    };
    let hooks = top
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    match hooks {
        Value::Object(h) => Ok(h),
        _ => anyhow::bail!("{}: `hooks` is not an object", path.display()),
    }
}

fn our_hook(group: &Value, agent: Agent) -> Option<usize> {
    group.get("hooks")?.as_array()?.iter().position(|h| {
        h.get("command")
            .and_then(Value::as_str)
            .is_some_and(|c| is_ours(c, agent))
    })
}

/// Adds loopguard's entries to `doc`; returns what changed (one line per event).
pub fn install(
    doc: &mut Value,
    agent: Agent,
    command: &str,
    path: &Path,
) -> anyhow::Result<Vec<String>> {
    let hooks = hooks_table(doc, path)?;
    let mut changes = Vec::new();
    for &(event, matcher) in events(agent) {
        let groups = hooks
            .entry(event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(groups) = groups else {
            anyhow::bail!("{}: `hooks.{event}` is not an array", path.display());
        };
        let mut found = false;
        for g in groups.iter_mut() {
            if let Some(i) = our_hook(g, agent) {
                found = true;
                let slot = g.get_mut("hooks").and_then(|h| h.get_mut(i));
                if let Some(h) = slot {
                    if h.get("command").and_then(Value::as_str) != Some(command) {
                        h["command"] = Value::String(command.to_owned());
                        changes.push(format!("hooks.{event}: updated the loopguard command"));
                    }
                }
            }
        }
        if !found {
            let mut group = Map::new();
            if let Some(m) = matcher {
                group.insert("matcher".into(), json!(m));
            }
            group.insert("hooks".into(), json!([entry(agent, command)]));
            groups.push(Value::Object(group));
            changes.push(format!("hooks.{event}: added `{command}`"));
        }
    }
    Ok(changes)
}

/// Removes loopguard's entries from `doc` (and the groups, events and `hooks` table left
/// empty by that); returns what changed.
pub fn uninstall(doc: &mut Value, agent: Agent) -> Vec<String> {
    let Some(Value::Object(hooks)) = doc.get_mut("hooks") else {
        return Vec::new();
    };
    let mut changes = Vec::new();
    let events: Vec<String> = hooks.keys().cloned().collect();
    for event in events {
        let Some(Value::Array(groups)) = hooks.get_mut(&event) else {
            continue;
        };
        let mut removed = 0;
        groups.retain_mut(|g| {
            let Some(Value::Array(list)) = g.get_mut("hooks") else {
                return true;
            };
            let before = list.len();
            list.retain(|h| {
                !h.get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|c| is_ours(c, agent))
            });
            removed += before - list.len();
            !(before > 0 && list.is_empty())
        });
        if removed > 0 {
            changes.push(format!(
                "hooks.{event}: removed {removed} loopguard hook(s)"
            ));
            if groups.is_empty() {
                hooks.remove(&event);
            }
        }
    }
    if hooks.is_empty() && !changes.is_empty() {
        if let Value::Object(top) = doc {
            top.remove("hooks");
        }
    }
    changes
}

/// Runs `install` (`add`) or `uninstall`.
pub(crate) fn command(a: &InstallArgs, add: bool, out: &mut dyn Write) -> anyhow::Result<u8> {
    let path = match &a.settings {
        Some(p) => p.clone(),
        None => {
            let cwd = std::env::current_dir().context("cannot read the current directory")?;
            let home = std::env::var_os("HOME")
                .or_else(|| std::env::var_os("USERPROFILE"))
                .map(PathBuf::from)
                .filter(|h| !h.as_os_str().is_empty());
            let home = match home {
                Some(h) => h,
                None if a.project => cwd.clone(),
                None => anyhow::bail!("HOME is not set: pass --project or --settings"),
            };
            settings_path(a.agent, a.project, &cwd, &home)
        }
    };
    let old = match std::fs::read_to_string(&path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(anyhow::anyhow!("{}: {e}", path.display())),
    };
    let mut doc: Value = match old.as_deref() {
        Some(t) if !t.trim().is_empty() => serde_json::from_str(t)
            .with_context(|| format!("{}: not valid JSON; nothing changed", path.display()))?,
        _ => Value::Object(Map::new()),
    };
    let changes = if add {
        let command = match &a.command {
            Some(c) => c.clone(),
            None => default_command(a.agent)?,
        };
        install(&mut doc, a.agent, &command, &path)?
    } else {
        uninstall(&mut doc, a.agent)
    };
    if changes.is_empty() {
        writeln!(
            out,
            "{}: already {}; nothing to change",
            path.display(),
            if add {
                "installed"
            } else {
                "without loopguard hooks"
            }
        )?;
        return Ok(crate::EXIT_OK);
    }
    let mut text = serde_json::to_string_pretty(&doc)?;
    text.push('\n');
    for c in &changes {
        writeln!(out, "{}: {c}", path.display())?;
    }
    if a.dry_run {
        writeln!(out, "--dry-run: {} would become:", path.display())?;
        write!(out, "{text}")?;
        return Ok(crate::EXIT_OK);
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    if let Some(old) = &old {
        let backup = backup_path(&path);
        std::fs::write(&backup, old)
            .with_context(|| format!("cannot write the backup {}", backup.display()))?;
        writeln!(out, "{}: backup of the old file", backup.display())?;
    }
    let tmp = path.with_extension("json.loopguard-tmp");
    std::fs::write(&tmp, &text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).with_context(|| format!("cannot replace {}", path.display()))?;
    if add {
        writeln!(
            out,
            "loopguard now guards new {} sessions; `loopguard hook uninstall {}` turns it off",
            a.agent.as_str(),
            a.agent.as_str()
        )?;
    }
    Ok(crate::EXIT_OK)
}

/// Where the file's previous content is kept.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".loopguard-backup");
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn our_commands_are_told_from_others() {
        let a = Agent::ClaudeCode;
        assert!(is_ours("/usr/local/bin/loopguard hook claude-code", a));
        assert!(is_ours("'/home/me/my tools/loopguard' hook claude-code", a));
        assert!(is_ours("loopguard hook claude-code --preset openclaw", a));
        assert!(is_ours("C:\\bin\\loopguard.exe hook claude-code", a));
        assert!(!is_ours("loopguard hook codex", a));
        assert!(!is_ours("echo loopguard hook", a));
        assert!(!is_ours("my-loopguard-wrapper hook claude-code", a));
        assert!(!is_ours("prettier --write", a));
    }

    #[test]
    fn install_is_idempotent_and_uninstall_restores_the_settings() {
        let p = Path::new("settings.json");
        let original = json!({
            "model": "opus",
            "permissions": {"allow": ["Bash(ls:*)"]},
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard-rm.sh"}]}
                ],
                "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]
            }
        });
        let mut doc = original.clone();
        let cmd = "/opt/loopguard hook claude-code";
        let changes = install(&mut doc, Agent::ClaudeCode, cmd, p).unwrap();
        assert_eq!(changes.len(), events(Agent::ClaudeCode).len());
        assert_eq!(doc["model"], "opus");
        assert_eq!(
            doc["hooks"]["PreToolUse"][0],
            original["hooks"]["PreToolUse"][0]
        );
        assert_eq!(doc["hooks"]["PreToolUse"][1]["hooks"][0]["command"], cmd);
        assert_eq!(doc["hooks"]["Stop"][0]["hooks"][0]["command"], cmd);
        let once = doc.clone();
        assert!(install(&mut doc, Agent::ClaudeCode, cmd, p)
            .unwrap()
            .is_empty());
        assert_eq!(doc, once);
        // A moved executable is updated in place, not added twice.
        let moved = "/usr/bin/loopguard hook claude-code";
        assert!(!install(&mut doc, Agent::ClaudeCode, moved, p)
            .unwrap()
            .is_empty());
        assert_eq!(doc["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
        // Another agent's entries are not ours.
        assert!(uninstall(&mut doc, Agent::Codex).is_empty());
        let removed = uninstall(&mut doc, Agent::ClaudeCode);
        assert_eq!(removed.len(), events(Agent::ClaudeCode).len());
        assert_eq!(doc, original);
        assert!(uninstall(&mut doc, Agent::ClaudeCode).is_empty());
    }

    #[test]
    fn a_file_without_hooks_round_trips() {
        let p = Path::new("settings.json");
        let original = json!({"theme": "dark"});
        let mut doc = original.clone();
        install(&mut doc, Agent::GeminiCli, "loopguard hook gemini-cli", p).unwrap();
        assert_eq!(
            doc["hooks"]["BeforeTool"][0]["hooks"][0]["name"],
            "loopguard"
        );
        uninstall(&mut doc, Agent::GeminiCli);
        assert_eq!(doc, original);
    }

    #[test]
    fn malformed_settings_are_refused() {
        let p = Path::new("s.json");
        assert!(install(&mut json!([1]), Agent::ClaudeCode, "x", p).is_err());
        assert!(install(&mut json!({"hooks": 3}), Agent::ClaudeCode, "x", p).is_err());
        let e = install(
            &mut json!({"hooks": {"Stop": {}}}),
            Agent::ClaudeCode,
            "x",
            p,
        )
        .unwrap_err();
        assert!(e.to_string().contains("hooks.Stop"), "{e}");
    }

    #[test]
    fn settings_paths_follow_the_scope() {
        let (cwd, home) = (Path::new("/w"), Path::new("/h"));
        assert_eq!(
            settings_path(Agent::ClaudeCode, false, cwd, home),
            Path::new("/h/.claude/settings.json")
        );
        assert_eq!(
            settings_path(Agent::ClaudeCode, true, cwd, home),
            Path::new("/w/.claude/settings.json")
        );
        assert_eq!(
            settings_path(Agent::GeminiCli, true, cwd, home),
            Path::new("/w/.gemini/settings.json")
        );
        assert_eq!(
            backup_path(Path::new("/h/.claude/settings.json")),
            Path::new("/h/.claude/settings.json.loopguard-backup")
        );
    }
}
