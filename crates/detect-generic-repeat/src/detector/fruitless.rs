//! The fruitless-search streak: consecutive searches, by any tool and in any words, for one
//! thing that each found nothing.

use super::{push_bounded, GenericRepeat};
use crate::NAME;
use loopguard_core::shape::{is_no_match, is_silent, says_nothing_found};
use loopguard_core::{Cx, Finding, Level};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;

/// Most bytes of a call's string arguments [`search_terms`] reads.
const TERMS_BYTES: usize = 2000;
/// Longest string argument [`search_terms`] reads: a search names what it looks for in a
/// short argument; a longer one is code or a file's text (an edit's, a write's).
const MAX_SEARCH_TEXT: usize = 256;
/// Most terms a call keeps.
const MAX_TERMS: usize = 16;
/// Shortest term (once squashed): shorter words (`def`, `foo`, `src`) name nothing in
/// particular.
const MIN_TERM: usize = 4;
/// Longest word of [`NOT_TERMS`].
const LONGEST_NOT_TERM: usize = 10;

/// Words that say how to search, not what for (squashed: lower case, without `_` and `-`):
/// the searchers and the shell words around them, the search tools' own names and keys, and
/// the keywords a pattern names a definition with (`def X`, `class X`).
const NOT_TERMS: &[&str] = &[
    "async",
    "await",
    "class",
    "const",
    "count",
    "echo",
    "egrep",
    "exclude",
    "exec",
    "export",
    "false",
    "fgrep",
    "file",
    "filename",
    "files",
    "find",
    "findfile",
    "from",
    "func",
    "function",
    "glob",
    "grep",
    "head",
    "impl",
    "import",
    "iname",
    "include",
    "interface",
    "line",
    "lines",
    "module",
    "name",
    "null",
    "number",
    "only",
    "package",
    "path",
    "paths",
    "pattern",
    "print",
    "private",
    "public",
    "python",
    "python3",
    "recursive",
    "return",
    "rgrep",
    "search",
    "searchdir",
    "searchfile",
    "searchterm",
    "self",
    "sort",
    "static",
    "struct",
    "tail",
    "true",
    "type",
    "uniq",
    "void",
    "with",
    "xargs",
    "zgrep",
];

/// The hashes of [`NOT_TERMS`], which is what a term is compared with.
const NOT_TERM_HASHES: [u64; NOT_TERMS.len()] = {
    let mut out = [0; NOT_TERMS.len()];
    let mut i = 0;
    while i < NOT_TERMS.len() {
        out[i] = loopguard_core::fnv1a(loopguard_core::FNV1A_START, NOT_TERMS[i].as_bytes());
        i += 1;
    }
    out
};

/// The terms a call searches for: the words of its short string arguments (at most
/// [`MAX_SEARCH_TEXT`] bytes each, [`TERMS_BYTES`] in all) that are not options (`-rn`,
/// `--include=*.py`) nor paths (a word holding a `/`), cut into runs of letters, digits, `_`
/// and `-`, each squashed (lower case, without `_` and `-`, so that `parse_header_value`,
/// `parseHeaderValue` and `parseheadervalue` are one term), at least [`MIN_TERM`] long,
/// with a letter, and not a word of [`NOT_TERMS`]; hashed ([`loopguard_core::fnv1a`], stable
/// in snapshots), sorted, at most [`MAX_TERMS`].
pub(super) fn search_terms(args: &Value) -> Vec<u64> {
    fn walk(v: &Value, terms: &mut Vec<u64>, budget: &mut usize) {
        match v {
            Value::String(s) if s.len() <= MAX_SEARCH_TEXT && s.len() <= *budget => {
                *budget -= s.len();
                text(s.as_bytes(), terms);
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, terms, budget)),
            Value::Object(m) => m.values().for_each(|x| walk(x, terms, budget)),
            _ => {}
        }
    }
    fn text(s: &[u8], terms: &mut Vec<u64>) {
        for word in s.split(u8::is_ascii_whitespace) {
            if word.first() == Some(&b'-') || word.contains(&b'/') {
                continue;
            }
            let runs = word.split(|c| !(c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-')));
            for run in runs {
                // Squashed as it is hashed.
                let (mut n, mut letter, mut h) = (0usize, false, loopguard_core::FNV1A_START);
                for c in run.iter().filter(|c| c.is_ascii_alphanumeric()) {
                    let c = c.to_ascii_lowercase();
                    letter |= c.is_ascii_alphabetic();
                    h = loopguard_core::fnv1a(h, &[c]);
                    n += 1;
                }
                let listed = || n <= LONGEST_NOT_TERM && NOT_TERM_HASHES.contains(&h);
                if n >= MIN_TERM && letter && !listed() {
                    terms.push(h);
                }
            }
        }
    }
    let mut terms = Vec::new();
    let mut budget = TERMS_BYTES;
    walk(args, &mut terms, &mut budget);
    terms.sort_unstable();
    terms.dedup();
    terms.truncate(MAX_TERMS);
    terms
}

/// The fruitless-search streak: consecutive results that found nothing, each of a call
/// that shares a term with every call before it in the streak.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct FruitlessStreak {
    /// The terms every call of the streak searched for (sorted).
    terms: Vec<u64>,
    count: u32,
    warned: bool,
    /// The tools the streak's calls used, in order, each once (for the message).
    tools: Vec<String>,
    seqs: VecDeque<u64>,
}

impl FruitlessStreak {
    /// A new streak at a result that found nothing for `terms` (none: no streak), in the old
    /// streak's buffers.
    fn restart(&mut self, terms: &[u64]) {
        self.terms.clear();
        self.terms.extend_from_slice(terms);
        self.count = u32::from(!terms.is_empty());
        self.warned = false;
        self.tools.clear();
        self.seqs.clear();
    }
}

/// Most tool names a streak's message lists.
const MAX_TOOLS: usize = 4;

/// Whether an answer found nothing: a search tool's "No matches found" and the like
/// ([`says_nothing_found`]), or, for a call that looks for something (`probe`: a `grep`,
/// a `find`, an `ls`), silence or only `grep`'s exit status 1.
pub(super) fn found_nothing(probe: bool, content: &str) -> bool {
    says_nothing_found(content) || (probe && (is_silent(content) || is_no_match(content)))
}

impl GenericRepeat {
    /// Extends the fruitless-search streak with this result when it found nothing and its
    /// call shares a term with the streak's; starts a new streak at it when it found nothing
    /// for other terms; ends the streak otherwise. Warns once the streak reaches
    /// `fruitless-warning-threshold` results, unless a streak of alike calls already warned
    /// about the same empty answers.
    pub(super) fn fruitless_result(
        &mut self,
        tool: &str,
        terms: &[u64],
        probe: bool,
        content: &str,
        cx: &mut Cx<'_>,
    ) {
        let Some(threshold) = self.settings.similar_calls.as_ref().and_then(|sc| {
            (sc.fruitless_warn_threshold > 0).then_some(sc.fruitless_warn_threshold)
        }) else {
            return;
        };
        let st = &mut self.state.fruitless;
        if terms.is_empty() || !found_nothing(probe, content) {
            st.restart(&[]);
            return;
        }
        if st.count > 0 && st.terms.iter().any(|t| terms.binary_search(t).is_ok()) {
            st.terms.retain(|t| terms.binary_search(t).is_ok());
            st.count = st.count.saturating_add(1);
        } else {
            st.restart(terms);
        }
        if st.tools.len() < MAX_TOOLS && !st.tools.iter().any(|t| t == tool) {
            st.tools.push(tool.to_owned());
        }
        push_bounded(&mut st.seqs, cx.seq());
        if st.count < threshold || st.warned {
            return;
        }
        st.warned = true;
        // One steer per loop: a streak of alike calls that found nothing may have spoken.
        let similar = &self.state.similar;
        if similar.warned && similar.empty {
            return;
        }
        let st = &self.state.fruitless;
        let tools = st
            .tools
            .iter()
            .map(|t| format!("`{t}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let msg = format!(
            "Loop warning: your last {} searches ({tools}) looked for the same thing in other words, \
             and each found nothing. Another wording will not find it either: it is probably not \
             there. Step back: check the name against the task and the code you have read, or go \
             on without it.",
            st.count
        );
        let key = format!("fruitless:{:016x}", st.terms.first().copied().unwrap_or(0));
        let f = Finding::new(NAME, Level::Warning, st.count, key, msg)
            .with_evidence(st.seqs.iter().copied().collect());
        cx.report(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn terms_are_the_words_searched_for_in_any_spelling() {
        let a = search_terms(
            &json!({"command": "grep -rn 'def parse_header_value' src/ --include=*.py"}),
        );
        let b = search_terms(&json!({"search_term": "parseHeaderValue"}));
        let c = search_terms(&json!({"file_name": "parse-header-value.py"}));
        assert_eq!(a.len(), 1, "{a:?}");
        assert_eq!(a, b);
        assert_eq!(a, c);
    }

    #[test]
    fn options_paths_and_search_words_are_no_terms() {
        for args in [
            json!({"command": "grep -rn src/ --include=*.py | head -20"}),
            json!({"command": "find /usr/lib -name '*.so' -type f"}),
            json!({"search_term": "class def", "dir": "/repo/src"}),
        ] {
            assert!(search_terms(&args).is_empty(), "{args}");
        }
    }

    #[test]
    fn the_words_that_are_no_terms_are_never_terms() {
        for w in NOT_TERMS {
            // Each alone, in any case, spelled with `_`, or beside a term.
            let upper = w.to_ascii_uppercase();
            let spaced = format!("{}_{}", &w[..2], &w[2..]);
            for text in [*w, upper.as_str(), spaced.as_str()] {
                assert!(
                    search_terms(&json!({ "search_term": text })).is_empty(),
                    "{text}"
                );
            }
            let beside = search_terms(&json!({ "search_term": format!("{w} parse_header_value") }));
            assert_eq!(
                beside,
                search_terms(&json!({ "search_term": "parse_header_value" }))
            );
        }
        assert!(
            NOT_TERMS.windows(2).all(|w| w[0] < w[1]),
            "sorted, each once"
        );
        for w in NOT_TERMS {
            assert!(w.len() >= MIN_TERM, "{w}: shorter words are never terms");
            assert!(
                w.len() <= LONGEST_NOT_TERM,
                "{w}: longer words are never looked up"
            );
            assert!(
                w.bytes()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()),
                "{w}"
            );
        }
    }

    #[test]
    fn nothing_found_is_said_or_a_probe_is_silent() {
        assert!(found_nothing(false, "No matches found for \"x\" in /repo"));
        // Cline's `search_files`, and a count that is not zero.
        assert!(found_nothing(false, "Found 0 results."));
        assert!(!found_nothing(
            false,
            "Found 10 results.\n\nsrc/app.ts\n│----"
        ));
        assert!(found_nothing(true, ""));
        assert!(found_nothing(true, "Command exited with code 1"));
        // An edit that answers nothing found nothing only if it looked for something.
        assert!(!found_nothing(false, ""));
        assert!(!found_nothing(
            true,
            "src/a.py:3: def parse_header_value(x):"
        ));
    }
}
