//! Which calls are polls: OpenClaw's known poll calls and shell commands that wait, tail a log
//! or ask for a status.

use serde_json::Value;

/// Words that make a shell command an observation of something that changes on its own
/// (waiting, tailing a log, asking for a status): its output advancing a little is progress.
const POLLING_WORDS: &[&str] = &[
    "sleep", "tail", "watch", "wait", "status", "logs", "log", "ps", "top", "ping", "curl", "wget",
    "get", "describe", "poll", "progress", "uptime", "date", "du", "df",
];

/// Whether a call's `command` (or `cmd`) argument reads as a polling shell command: on its
/// first line, one of the first two words of a pipeline segment (split on `;`, `&`, `|`) is one
/// of [`POLLING_WORDS`] (`sleep 30; kubectl get pods`, `tail -20 build.log`, `git status`).
/// Only the first line counts, so code carried in an edit command never makes it a poll.
pub(crate) fn is_polling_command(args: &Value) -> bool {
    let Some(cmd) = ["command", "cmd"]
        .iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
    else {
        return false;
    };
    let line = cmd.lines().next().unwrap_or("");
    let line = line.get(..line.len().min(500)).unwrap_or(line);
    line.split([';', '&', '|']).any(|segment| {
        segment
            .split_whitespace()
            .take(2)
            .any(|w| POLLING_WORDS.contains(&w.trim_start_matches("./")))
    })
}

/// OpenClaw's known poll calls: `command_status` (any arguments), or `process` with action
/// `poll` or `log`.
pub(crate) fn is_known_poll(tool: &str, args: &Value) -> bool {
    match tool {
        "command_status" => true,
        "process" => matches!(
            args.get("action").and_then(Value::as_str),
            Some("poll" | "log")
        ),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
