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
/// first line, one of the first two words of a command (split on `;`, `&`, `||`) is one of
/// [`POLLING_WORDS`] (`sleep 30; kubectl get pods`, `tail -20 build.log`, `git status`). A
/// command that reads a pipe is a filter, not a poll: `cargo build 2>&1 | tail -20` is a
/// build whose output is cut, and only the words of a pipeline's first command count
/// (`ps aux | grep worker` is still a poll). A `curl` or `wget` that sends something (a
/// method that writes, a body, a form) acts and is no poll ([`sends`]). A line that acts
/// after it looks is an action: when its last command that is not a poll, a word of the
/// shell's own ([`NEUTRAL_WORDS`]: `cd`, `echo`, …) or a command that only reads
/// ([`READERS`]: `cat`, `grep`, `journalctl`, `git diff`, …) comes after its polls, the line
/// is that command (`git status; git commit -m wip` commits; `make test || tail -50
/// build.log`, `systemctl status api; journalctl -u api -n 20` and `ps aux | grep -c
/// worker; echo "not running"` still poll). A line that waits (`sleep`,
/// `wait`, `watch`) polls whatever it does next (`sleep 30; gh run view 42`).
/// Only the first line counts, so code carried in an edit command never makes it a poll.
pub(crate) fn is_polling_command(args: &Value) -> bool {
    let Some(line) = first_line(args) else {
        return false;
    };
    // Whether the line's last command that counts is a poll (none yet: `None`).
    let mut last = None;
    for (segment, piped) in commands(line) {
        if piped {
            continue;
        }
        let Some((first, second)) = command_words(segment) else {
            continue;
        };
        let poll = (POLLING_WORDS.contains(&first)
            || second.is_some_and(|w| POLLING_WORDS.contains(&w)))
            && !sends(segment);
        if WAIT_WORDS.contains(&first) {
            // A line that waits is waiting for what it asks next (`sleep 30; gh run view 42`).
            return true;
        }
        if poll {
            last = Some(true);
        } else if !NEUTRAL_WORDS.contains(&first) && !reads(first, second, segment) {
            last = Some(false);
        }
    }
    last == Some(true)
}

/// Commands that wait: a line holding one polls whatever it does next.
const WAIT_WORDS: &[&str] = &["sleep", "wait", "watch"];

/// The shell's own words that neither act nor look: they leave a line's last command what it
/// was ([`is_polling_command`]).
const NEUTRAL_WORDS: &[&str] = &[
    "cd", "pushd", "popd", "echo", "printf", "true", "false", ":", "exit", "export", "set",
    "unset", "pwd", "clear", "source", ".", "if", "then", "else", "elif", "fi", "for", "while",
    "until", "do", "done", "case", "esac", "{", "}", "(", ")",
];

/// Commands that only read what is there (files, logs, the system's state): after a poll
/// they are part of the look, not an action ([`is_polling_command`]); so are the
/// [`PROBES`].
const READERS: &[&str] = &[
    "cat",
    "head",
    "less",
    "more",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ll",
    "tree",
    "wc",
    "jq",
    "yq",
    "sort",
    "uniq",
    "cut",
    "tr",
    "column",
    "journalctl",
    "dmesg",
    "free",
    "vmstat",
    "iostat",
    "lsof",
    "netstat",
    "ss",
    "env",
    "printenv",
    "id",
    "whoami",
    "hostname",
    "uname",
    "nvidia-smi",
    "pgrep",
    "pidof",
    "readlink",
    "realpath",
    "basename",
    "dirname",
    "diff",
    // The file viewers of agent harnesses' own command sets (SWE-agent, OpenHands'
    // `str_replace_editor` asked to `view`).
    "open",
    "goto",
    "scroll_up",
    "scroll_down",
    "search_file",
    "search_dir",
    "find_file",
    "view",
];

/// The first two words of one command of a shell line (`segment`), after its variable
/// assignments (`RUST_LOG=debug`), a leading `./` left out; `None` for a blank one.
fn command_words(segment: &str) -> Option<(&str, Option<&str>)> {
    let mut words = segment
        .split_whitespace()
        .map(|w| w.trim_start_matches("./"))
        .skip_while(|w| is_assignment(w));
    let first = words.next()?;
    Some((first, words.next()))
}

/// Whether a command (`segment`, its first two words `first` and `second`) only reads
/// ([`READERS`], [`PROBES`], `awk`, `sed` without `-i`, or `git` asked to show something).
fn reads(first: &str, second: Option<&str>, segment: &str) -> bool {
    READERS.contains(&first)
        || PROBES.contains(&first)
        || first == "awk"
        || (first == "sed"
            && !segment
                .split_whitespace()
                .any(|w| w.starts_with("-i") || w == "--in-place"))
        || (first == "git"
            && second.is_some_and(|w| {
                [
                    "diff",
                    "show",
                    "log",
                    "branch",
                    "rev-parse",
                    "remote",
                    "describe",
                    "ls-files",
                    "blame",
                    "shortlog",
                ]
                .contains(&w)
            }))
}

/// Whether a call acts: a command of its shell line's first line is none that only reads or
/// looks ([`reads`]), polls without sending ([`POLLING_WORDS`]), waits or is the shell's own
/// ([`NEUTRAL_WORDS`]): `edit 1:1`, `python3 fix.py`, `sed -i …`, `curl -X POST …` act;
/// `cat build.log | tail -n 30` does not. A call without a shell command is not known to act.
pub(crate) fn acts(args: &Value) -> bool {
    first_line(args).is_some_and(|line| {
        commands(line).any(|(segment, _)| {
            let Some((first, second)) = command_words(segment) else {
                return false;
            };
            let first = first.rsplit('/').next().unwrap_or(first);
            let looks = NEUTRAL_WORDS.contains(&first)
                || WAIT_WORDS.contains(&first)
                || (POLLING_WORDS.contains(&first) && !sends(segment))
                || reads(first, second, segment);
            !looks
        })
    })
}

/// Programs that look for something: their silence means nothing was found.
const PROBES: &[&str] = &[
    "ls", "find", "fd", "locate", "which", "whereis", "type", "test", "[", "[[", "stat", "file",
];

/// Whether a call looks for something ([`loopguard_core::shape::is_search`], or a command
/// of its first line that is one of [`PROBES`]: `test -f X && echo exists`, `ls /opt/*.h`).
pub(crate) fn probes(args: &Value) -> bool {
    if loopguard_core::shape::is_search(args) {
        return true;
    }
    first_line(args).is_some_and(|line| {
        commands(line).any(|(segment, _)| {
            segment
                .split_whitespace()
                .next()
                .is_some_and(|w| PROBES.contains(&w.rsplit('/').next().unwrap_or(w)))
        })
    })
}

/// The first line of a call's `command` (or `cmd`), cut to 500 bytes: what a shell line's
/// classifiers read (code carried in an edit command never counts).
fn first_line(args: &Value) -> Option<&str> {
    let cmd = loopguard_core::shape::command(args)?;
    let line = cmd.lines().next().unwrap_or("");
    Some(line.get(..line.len().min(500)).unwrap_or(line))
}

/// Whether a shell word assigns a variable for the command after it (`RUST_LOG=debug`).
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}

/// Options with which `curl` or `wget` sends something (a method that writes, a body, a
/// form, a file): a request that acts, not a status asked for again.
const SENDING_OPTIONS: &[&str] = &[
    "-d",
    "--data",
    "--data-raw",
    "--data-binary",
    "--data-urlencode",
    "--json",
    "-F",
    "--form",
    "-T",
    "--upload-file",
    "--post-data",
    "--post-file",
    "--body-data",
    "--body-file",
];

/// Whether a `curl` or `wget` command sends something ([`SENDING_OPTIONS`], or `-X` /
/// `--request` / `--method` with `POST`, `PUT`, `PATCH` or `DELETE`): `curl -X POST
/// …/deploy` failing the same way each time is a call repeated, while `curl -s …/health` is
/// a poll.
fn sends(segment: &str) -> bool {
    let mut words = segment.split_whitespace();
    if !words
        .clone()
        .take(2)
        .any(|w| matches!(w.trim_start_matches("./"), "curl" | "wget"))
    {
        return false;
    }
    let mut method = false;
    words.any(|w| {
        let (option, value) = w.split_once('=').unwrap_or((w, ""));
        let writes = |m: &str| {
            let m = m.trim_matches(['"', '\'']);
            ["POST", "PUT", "PATCH", "DELETE"]
                .iter()
                .any(|x| m.eq_ignore_ascii_case(x))
        };
        let hit = (method && writes(w))
            || SENDING_OPTIONS.contains(&option)
            || (matches!(option, "--request" | "--method") && !value.is_empty() && writes(value))
            || w.strip_prefix("-X")
                .is_some_and(|m| !m.is_empty() && writes(m));
        method = matches!(w, "-X" | "--request" | "--method");
        hit
    })
}

/// The commands of a shell line, split on `;`, `&`, `&&`, `|`, `|&` and `||` (not on a
/// redirection's `&`: `2>&1`), each with whether it reads the output of the one before it
/// (after a single `|` or `|&`).
fn commands(line: &str) -> impl Iterator<Item = (&str, bool)> {
    let bytes = line.as_bytes();
    let mut start = 0;
    let mut piped = false;
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            let b = bytes[i];
            // A redirection (`2>&1`, `&>log`, `>&2`) separates nothing.
            let redirect = b == b'&'
                && (i.checked_sub(1).and_then(|j| bytes.get(j)) == Some(&b'>')
                    || bytes.get(i + 1) == Some(&b'>'));
            if matches!(b, b';' | b'&' | b'|') && !redirect {
                let segment = line.get(start..i).unwrap_or("");
                let was_piped = piped;
                // `||` and `&&` are one separator; a single `|` (or `|&`) is a pipe.
                let next = bytes.get(i + 1).copied();
                let double = next == Some(b);
                let stderr_pipe = b == b'|' && next == Some(b'&');
                piped = b == b'|' && !double;
                i += if double || stderr_pipe { 2 } else { 1 };
                start = i;
                return Some((segment, was_piped));
            }
            i += 1;
        }
        if start <= bytes.len() {
            let segment = line.get(start..).unwrap_or("");
            start = bytes.len() + 1;
            return Some((segment, piped));
        }
        None
    })
}

/// Whether a call's command is empty (blank): a wait when the shell answers it — a tool that
/// keeps a process running reads it as "wait and show me what it printed since" (OpenHands'
/// `execute_bash` asks for `''`) — and a failed call when the shell rejects it. Such a call
/// is a poll once it has been answered without an error.
pub(crate) fn is_wait_command(args: &Value) -> bool {
    loopguard_core::shape::command(args).is_some_and(|c| c.trim().is_empty())
}

/// Whether a call only looks: a shell line none of whose commands acts ([`acts`]) and that
/// neither polls nor waits (a look repeated while waiting is polling: [`is_polling_command`],
/// [`is_wait_command`]); or, without a shell command, a tool that reads or searches by its
/// name (`read`, `view`, `open`, `Grep`, `Glob`, `search_dir`, `find_file`, `list_files`, `ls`).
/// Any other call (an edit, a command that acts, an unknown tool) may change what a look
/// sees.
///
/// `acting`, `polling` and `waiting` are [`acts`], [`is_polling_command`] and
/// [`is_wait_command`] of the call, read once by the caller.
pub(crate) fn only_looks(
    tool: &str,
    args: &Value,
    acting: bool,
    polling: bool,
    waiting: bool,
) -> bool {
    if loopguard_core::shape::command(args).is_some() {
        return !acting && !polling && !waiting;
    }
    let t = tool.as_bytes();
    let starts = |p: &str| {
        t.get(..p.len())
            .is_some_and(|h| h.eq_ignore_ascii_case(p.as_bytes()))
    };
    loopguard_core::shape::reads_file(tool, &Value::Null)
        || starts("search")
        || starts("find")
        || starts("list")
        || ["grep", "glob", "ls"]
            .iter()
            .any(|n| tool.eq_ignore_ascii_case(n))
}

#[cfg(test)]
mod tests;
