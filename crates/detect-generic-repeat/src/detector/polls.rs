//! Which calls are polls: those of kind `poll` in the tools table (stamped on the call's facts
//! by the bus, [`loopguard_core::CallInfo::kind`]) and shell commands that wait, tail a log or
//! ask for a status.

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
    let Some(cmd) = loopguard_core::shape::command(args) else {
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

/// Whether a call's command is empty (blank): a wait when the shell answers it — a tool that
/// keeps a process running reads it as "wait and show me what it printed since" (OpenHands'
/// `execute_bash` asks for `''`) — and a failed call when the shell rejects it. Such a call
/// is a poll once it has been answered without an error.
pub(crate) fn is_wait_command(args: &Value) -> bool {
    loopguard_core::shape::command(args).is_some_and(|c| c.trim().is_empty())
}

#[cfg(test)]
mod tests;
