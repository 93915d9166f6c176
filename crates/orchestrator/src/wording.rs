//! Steer texts. With `steer-wording = "escalating"` they follow pi-repetition-guard: the first
//! retry carries the repeated sample, the second drops it and escalates, the last offers a
//! "state the blocker" fallback. Texts are action-oriented ("do the operation"), because a
//! looping model is usually rehearsing its next action without doing it.

use crate::options::Wording;
use loopguard_core::{truncate_chars, Finding};

/// Every steer the guard writes starts with this marker.
pub const STEER_PREFIX: &str = "[loopguard]";

/// The most characters of a tool-argument sample a tool steer quotes.
pub const MAX_ARGS_SAMPLE: usize = 80;

/// The most characters of a text sample a text steer quotes.
pub const MAX_TEXT_SAMPLE: usize = 200;

/// Which path triggered the steer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    /// A text loop (the generation was aborted).
    Text,
    /// A tool-call loop (the call was blocked).
    Tool,
    /// A warning.
    Warning,
}

/// The steer sent after a compaction, with the fresh budget.
pub const CONTINUE_STEER: &str =
    "[loopguard] The context was compacted to break a repetition loop. \
Continue the original task from the current state: do the next operation and give its result; \
do not repeat earlier steps.";

const BLOCKER: &str = "If you cannot finish, say plainly what is blocking you and stop.";

/// The steer for trigger number `retry` (1-based) of a budget of `max` (0 = unlimited).
pub(crate) fn steer_text(
    wording: Wording,
    path: Path,
    retry: u32,
    max: u32,
    f: &Finding,
) -> String {
    if wording == Wording::Detector {
        return f.message.clone();
    }
    let last = max > 0 && retry >= max;
    let mut s = match (path, retry) {
        (Path::Text, 1) => {
            let sample = f
                .sample
                .as_deref()
                .map(|s| truncate_chars(s, MAX_TEXT_SAMPLE))
                .unwrap_or_else(|| "(no sample)".to_owned());
            format!(
                "{STEER_PREFIX} You are in a loop: you keep restating the same content without doing the next step. \
Stop restating; do the operation now and give its result; do not describe what you will do. \
Repeated fragment (excerpt): {sample}"
            )
        }
        (Path::Text, 2) => format!(
            "{STEER_PREFIX} Second detection: you are still repeating without executing. Stop all descriptive text, \
do the task's target operation and give a short result."
        ),
        (Path::Text, n) => format!(
            "{STEER_PREFIX} Detection {n}: finish the goal as briefly as possible, or state clearly that you cannot \
and why. Repeat nothing."
        ),
        (Path::Tool, 1) => {
            let tool = f.tool.as_deref().unwrap_or("the same tool");
            let args = f
                .sample
                .as_deref()
                .filter(|s| !s.is_empty())
                .map(|s| truncate_chars(s, MAX_ARGS_SAMPLE))
                .unwrap_or_else(|| "no args".to_owned());
            format!(
                "{STEER_PREFIX} Tool-call loop detected: you called `{tool}` (args: {args}) repeatedly without finishing. \
Stop repeating the same call; complete the goal from the information you already have."
            )
        }
        (Path::Tool, 2) => {
            let tool = f.tool.as_deref().unwrap_or("that tool");
            format!(
                "{STEER_PREFIX} Second tool-call loop: stop calling `{tool}`; finish from the information you already \
have with a short result."
            )
        }
        (Path::Tool, n) => format!(
            "{STEER_PREFIX} Tool-call loop {n}: stop calling tools; finish in the shortest form, or state clearly \
that you cannot and why."
        ),
        (Path::Warning, 1) => match f.sample.as_deref().filter(|s| !s.is_empty()) {
            Some(sample) => {
                format!("{STEER_PREFIX} {} Repeated: {}", f.message, truncate_chars(sample, MAX_TEXT_SAMPLE))
            }
            None => format!("{STEER_PREFIX} {}", f.message),
        },
        (Path::Warning, n) => format!(
            "{STEER_PREFIX} Warning {n}: you are still repeating the same step ({}). Change your approach now: \
do a different operation, or give your result.",
            f.detector
        ),
    };
    if last {
        s.push(' ');
        s.push_str(BLOCKER);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use loopguard_core::Level;

    fn finding() -> Finding {
        Finding::new("tail-periodicity", Level::Critical, 2, "k", "repeated text")
            .with_sample(&"loop unit ".repeat(40))
            .with_tool("read")
    }

    #[test]
    fn j55_first_steer_has_the_sample_second_escalates_without_it() {
        let f = finding();
        let first = steer_text(Wording::Escalating, Path::Text, 1, 2, &f);
        assert!(first.starts_with(STEER_PREFIX));
        assert!(first.contains("loop unit loop unit"), "{first}");
        assert!(first.chars().count() <= MAX_TEXT_SAMPLE + 400, "{first}");
        let second = steer_text(Wording::Escalating, Path::Text, 2, 2, &f);
        assert!(second.contains("Second"));
        assert!(!second.contains("loop unit"));
        assert!(
            second.contains("what is blocking you"),
            "last retry offers the fallback: {second}"
        );
        assert!(!first.contains("what is blocking you"));
    }

    #[test]
    fn tool_steers_name_the_tool_then_drop_the_args_then_the_tool() {
        let f = finding();
        let one = steer_text(Wording::Escalating, Path::Tool, 1, 3, &f);
        assert!(
            one.contains("`read`") && one.contains("args: loop unit"),
            "{one}"
        );
        assert!(one.chars().count() < 400);
        let two = steer_text(Wording::Escalating, Path::Tool, 2, 3, &f);
        assert!(
            two.contains("`read`") && !two.contains("loop unit"),
            "{two}"
        );
        let three = steer_text(Wording::Escalating, Path::Tool, 3, 3, &f);
        assert!(
            !three.contains("`read`") && three.contains("cannot"),
            "{three}"
        );
    }

    #[test]
    fn detector_wording_is_verbatim() {
        let f = finding();
        assert_eq!(
            steer_text(Wording::Detector, Path::Tool, 2, 2, &f),
            "repeated text"
        );
    }

    #[test]
    fn missing_sample_is_said() {
        let f = Finding::new("x", Level::Critical, 1, "k", "m");
        assert!(steer_text(Wording::Escalating, Path::Text, 1, 2, &f).contains("(no sample)"));
        assert!(steer_text(Wording::Escalating, Path::Tool, 1, 2, &f).contains("no args"));
    }
}
