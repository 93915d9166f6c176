//! Recognising "this tool does not exist" in a result: OpenClaw's two error shapes, and the
//! shell's own messages for agents whose tool is a shell command.

use loopguard_core::tools::SHELLS;
use regex::Regex;
use std::sync::OnceLock;

/// At most this many command words are kept per call.
pub(crate) const MAX_WORDS: usize = 8;
/// Longer command words are not kept (no tool name is that long).
const MAX_WORD_LEN: usize = 128;

/// Each shape is compiled the first time a result could match it: most results never need
/// one (a short-lived process, such as a hook invocation, pays for none of them).
fn lazy(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("valid regex"))
}

/// [`lazy`] for a pattern over the tools table's shells, given to `pattern` as one regex
/// alternation (`bash|sh|…`).
fn lazy_over_shells(cell: &'static OnceLock<Regex>, pattern: fn(&str) -> String) -> &'static Regex {
    cell.get_or_init(|| {
        let shells: Vec<String> = SHELLS.iter().map(|s| regex::escape(s)).collect();
        Regex::new(&pattern(&shells.join("|"))).expect("valid regex")
    })
}

/// OpenClaw: "unknown tool", a colon or whitespace, an optional quote, a name.
fn unknown_tool() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    lazy(&RE, r#"(?i)unknown tool[:\s]+["'`]?([a-z0-9_.-]+)"#)
}

/// OpenClaw: "tool", an optionally quoted name, "not found" or "is not available".
fn tool_not_found() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    lazy(
        &RE,
        r#"(?i)\btool\s+["'`]?([a-z0-9_.-]+)["'`]?\s+(?:not found|is not available)"#,
    )
}

/// The shell: `/bin/bash: line 12: foo: command not found`, `bash: foo: command not found`,
/// `/bin/sh: 1: foo: not found`, `/bin/bash: line 3: /x/bin/javac: No such file or
/// directory`, `zsh: command not found: foo`, `(eval):1: command not found: foo`.
fn shell_missing() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    lazy_over_shells(&RE, |shells| {
        format!(
            r"^(?:(?:\S*/)?(?:{shells})|\(eval\))(?:: line \d+|: \d+|:\d+)?: (?:([^\s:]+): (?:command not found|not found|No such file or directory)|command not found: (\S+))\s*$",
        )
    })
}

/// The shell could not even parse the command.
fn shell_syntax() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    lazy_over_shells(&RE, |shells| {
        format!(
            r"^(?:\S*/)?(?:{shells})(?:: line \d+)?(?:: \d+)?: (?:syntax error|unexpected EOF while looking for matching)",
        )
    })
}

/// OpenClaw's extraction: only for error outcomes, the name lower-cased.
pub(crate) fn openclaw_name(content: &str) -> Option<String> {
    // Both shapes contain the word "tool" in any case (no letter of it has a non-ASCII case
    // form): most error results are told apart without the patterns.
    if !content
        .as_bytes()
        .windows(4)
        .any(|w| w.eq_ignore_ascii_case(b"tool"))
    {
        return None;
    }
    let cap = unknown_tool()
        .captures(content)
        .or_else(|| tool_not_found().captures(content))?;
    cap.get(1).map(|m| m.as_str().to_lowercase())
}

/// The lower-cased last path segment of a command word or tool name.
pub(crate) fn basename(word: &str) -> String {
    word.rsplit('/').next().unwrap_or(word).to_lowercase()
}

/// The shell's "no such command" for a command the call actually ran: the missing name
/// must be the tool as called (an agent whose tool is the first word of a command) or a
/// command word of the call's `command` argument. Returns the lower-cased base name.
pub(crate) fn shell_name(tool: &str, words: &[String], content: &str) -> Option<String> {
    // The output itself, whichever host wrapped it.
    let content = loopguard_core::shape::output_body(content);
    // Lower-cased only once a line names a missing command (most results name none).
    let mut tool_base: Option<String> = None;
    let mut by_word = None;
    // Neither word spans lines: a text without them has no line with them.
    if !content.contains("found") && !content.contains("No such file") {
        return None;
    }
    for line in content.lines() {
        if !line.contains("found") && !line.contains("No such file") {
            continue;
        }
        let Some(cap) = shell_missing().captures(line) else {
            continue;
        };
        let Some(name) = cap.get(1).or_else(|| cap.get(2)) else {
            continue;
        };
        let name = basename(name.as_str());
        if name.is_empty() {
            continue;
        }
        if name == *tool_base.get_or_insert_with(|| basename(tool)) {
            return Some(name);
        }
        if by_word.is_none() && words.iter().any(|w| basename(w) == name) {
            by_word = Some(name);
        }
    }
    by_word
}

/// Whether the result is the shell refusing to parse the command (the command never ran).
pub(crate) fn is_shell_syntax_error(content: &str) -> bool {
    loopguard_core::shape::output_body(content)
        .lines()
        .next()
        // Both messages the pattern accepts contain one of these words: most first lines are
        // told apart without the pattern.
        .filter(|l| l.contains("syntax error") || l.contains("unexpected EOF"))
        .is_some_and(|l| shell_syntax().is_match(l))
}

/// The first word of each simple command in a `command` (or `cmd`) string argument.
pub(crate) fn command_words(args: &serde_json::Value) -> Vec<String> {
    let Some(cmd) = loopguard_core::shape::command(args) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for segment in cmd.split(['\n', ';', '|', '&']) {
        let Some(word) = segment.split_whitespace().find(|w| !w.contains('=')) else {
            continue;
        };
        let word = word.trim_start_matches('(');
        if word.is_empty() || word.len() > MAX_WORD_LEN {
            continue;
        }
        if !out.iter().any(|w| w == word) {
            out.push(word.to_owned());
        }
        if out.len() >= MAX_WORDS {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn e32_openclaw_shapes() {
        assert_eq!(openclaw_name("unknown tool: foo").as_deref(), Some("foo"));
        assert_eq!(openclaw_name("Unknown tool 'foo'").as_deref(), Some("foo"));
        assert_eq!(openclaw_name("tool foo not found").as_deref(), Some("foo"));
        assert_eq!(
            openclaw_name("tool \"foo\" is not available").as_deref(),
            Some("foo")
        );
        assert_eq!(
            openclaw_name("Tool EXEC not found").as_deref(),
            Some("exec")
        );
        assert_eq!(openclaw_name("file not found").as_deref(), None);
        assert_eq!(
            openclaw_name("Error: flight HAT030 not available on date 2024-05-13").as_deref(),
            None
        );
        assert_eq!(openclaw_name("permission denied").as_deref(), None);
    }

    fn w(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn shell_shapes_name_the_command_that_ran() {
        let nf = "/bin/bash: line 12395: DISCUSSION: command not found\n/bin/bash: line 12396: It: command not found";
        assert_eq!(
            shell_name("DISCUSSION", &[], nf).as_deref(),
            Some("discussion")
        );
        assert_eq!(
            shell_name(
                "javac",
                &[],
                "/bin/bash: line 50776: javac: command not found"
            )
            .as_deref(),
            Some("javac")
        );
        assert_eq!(
            shell_name(
                "javac",
                &[],
                "/bin/bash: line 47782: /x/jdk-11.0.2/bin/javac: No such file or directory"
            )
            .as_deref(),
            Some("javac")
        );
        for (name, message) in [
            ("foo", "/bin/sh: 1: foo: not found"),
            ("ponyc", "bash: ponyc: command not found"),
            ("tree", "(eval):1: command not found: tree"),
            ("foo", "zsh: command not found: foo"),
        ] {
            assert_eq!(
                shell_name(name, &[], message).as_deref(),
                Some(name),
                "{message}"
            );
        }
        // a bash tool whose command is `javac ...`
        let words = command_words(&json!({"command": "cd /repo && javac -cp . X.java"}));
        assert_eq!(words, w(&["cd", "javac"]));
        assert_eq!(
            shell_name("bash", &words, "bash: line 1: javac: command not found").as_deref(),
            Some("javac")
        );
    }

    #[test]
    fn shell_shapes_refuse_other_messages() {
        // a builtin's complaint about its argument
        assert_eq!(
            shell_name(
                "cd",
                &[],
                "/bin/bash: line 1: cd: fastjson/: No such file or directory"
            ),
            None
        );
        // a missing file passed to another command
        assert_eq!(
            shell_name(
                "python",
                &[],
                "/bin/bash: line 3: script_to_test: No such file or directory"
            ),
            None
        );
        // a name the call did not run
        assert_eq!(
            shell_name(
                "chmod",
                &[],
                "./run_tests.sh: line 4: javac: command not found"
            ),
            None
        );
        assert_eq!(
            shell_name(
                "bash",
                &w(&["pytest"]),
                "bash: line 1: javac: command not found"
            ),
            None
        );
        // not a shell prefix
        assert_eq!(
            shell_name(
                "ls",
                &[],
                "ls: cannot access 'x': No such file or directory"
            ),
            None
        );
        assert_eq!(shell_name("x", &[], "x: command not found somewhere"), None);
    }

    #[test]
    fn shell_syntax_errors() {
        assert!(is_shell_syntax_error(
            "/bin/bash: line 2: unexpected EOF while looking for matching `''\n/bin/bash: line 4: syntax error: unexpected end of file"
        ));
        assert!(is_shell_syntax_error(
            "/bin/bash: line 2: syntax error near unexpected token `('"
        ));
        assert!(!is_shell_syntax_error("SyntaxError: invalid syntax"));
        assert!(!is_shell_syntax_error(""));
    }

    #[test]
    fn command_words_are_bounded() {
        let cmd = (0..100)
            .map(|i| format!("c{i}"))
            .collect::<Vec<_>>()
            .join(" ; ");
        assert_eq!(command_words(&json!({"command": cmd})).len(), MAX_WORDS);
        assert!(command_words(&json!({"command": ["bash", "-lc", "x"]})).is_empty());
        assert_eq!(
            command_words(&json!({"cmd": "FOO=1 make test"})),
            w(&["make"])
        );
    }
}
