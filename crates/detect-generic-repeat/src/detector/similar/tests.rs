//! The skeleton kept as text identifies a command exactly as its fingerprint does, and so
//! does a result's text kept for its exact identity.

use super::{call_words, RawResult, Skeleton, MAX_RAW_TEXT};

/// A call's skeleton ([`call_words`]).
fn skeleton(args: &serde_json::Value) -> Option<Skeleton> {
    call_words(args).0
}
use loopguard_core::{result_fingerprint, Fingerprint};
use proptest::prelude::*;
use serde_json::{json, Value};

/// The skeleton's fingerprint as it is defined: the SHA-256 of the kept words joined by
/// single spaces.
fn reference(args: &Value) -> Option<Fingerprint> {
    let cmd = loopguard_core::shape::command(args)?;
    let cmd = cmd.get(..cmd.len().min(2000)).unwrap_or(cmd);
    let words: Vec<&str> = cmd
        .split_whitespace()
        .filter(|w| {
            let w = w.trim_start_matches(['"', '\'']);
            !(w.starts_with('/')
                || w.starts_with("./")
                || w.starts_with("../")
                || w.starts_with("~/"))
        })
        .collect();
    Some(Fingerprint::combine(&[
        b"skeleton",
        words.join(" ").as_bytes(),
    ]))
}

/// Commands of words that are paths, quoted paths and plain words, spaced by runs of
/// whitespace; some long enough for the 2000-byte cut (which may fall inside a character).
fn command() -> impl Strategy<Value = String> {
    let word = prop_oneof![
        Just("find".to_owned()),
        Just("-name".to_owned()),
        Just("é".to_owned()),
        "[a-c]{1,3}",
        "[\"']?(/|\\./|\\.\\./|~/|\\.)[a-c/]{0,3}",
    ];
    let space = prop_oneof![
        Just(" "),
        Just("  "),
        Just("\t"),
        Just("\n"),
        Just(" \u{3000}")
    ];
    (
        prop::collection::vec((word, space), 0..12),
        any::<bool>(),
        0usize..3,
    )
        .prop_map(|(words, long, pad)| {
            let mut s: String = words.into_iter().map(|(w, sp)| w + sp).collect();
            if long {
                // Past the cut, a word on each side of it, or a character across it.
                s = format!("{}{}{s}", "x".repeat(1998 + pad), "é ");
            }
            s
        })
}

fn json_of(s: &Skeleton) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

proptest! {
    /// The text's fingerprint is the defined one, and two skeletons are equal exactly when
    /// their fingerprints are, whether held as text or restored from a snapshot.
    #[test]
    fn text_identifies_as_the_fingerprint_does(a in command(), b in command()) {
        let (aa, ab) = (json!({"command": a}), json!({"command": b}));
        let (sa, sb) = (skeleton(&aa), skeleton(&ab));
        let (ra, rb) = (reference(&aa), reference(&ab));
        prop_assert_eq!(sa.as_ref().map(Skeleton::fingerprint), ra);
        prop_assert_eq!(sb.as_ref().map(Skeleton::fingerprint), rb);
        prop_assert_eq!(sa == sb, ra == rb);
        let (Some(sa), Some(sb)) = (sa, sb) else {
            return Err(TestCaseError::fail("a command has a skeleton"));
        };
        // A snapshot holds the fingerprint; a restored skeleton compares as before.
        let restored: Skeleton = serde_json::from_str(&json_of(&sa))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(json_of(&sa), serde_json::to_string(&ra).unwrap_or_default());
        prop_assert_eq!(restored == sb, ra == rb);
        prop_assert_eq!(sb == restored, ra == rb);
        prop_assert!(restored == sa);
    }
}

proptest! {
    /// A result's identity kept as text tells results apart exactly as their fingerprints
    /// do, serialises as the fingerprint, and compares as before once restored; a text
    /// longer than the copy limit is kept hashed, and a reused buffer holds the new text.
    #[test]
    fn raw_results_identify_as_their_fingerprints_do(
        a in "[ab\u{e9}\n]{0,6}",
        b in "[ab\u{e9}\n]{0,6}",
        (ia, ib) in (0u32..2, 0u32..2),
        long in any::<bool>(),
    ) {
        let a = if long { format!("{a}{}", "x".repeat(MAX_RAW_TEXT + 1)) } else { a };
        let kept = RawResult::of(&a, ia, Some(RawResult::of("old text", 3, None)));
        prop_assert_eq!(matches!(kept, RawResult::Hashed(_)), long);
        let (fa, fb) = (result_fingerprint(&a, ia), result_fingerprint(&b, ib));
        prop_assert_eq!(kept.fingerprint(), fa);
        prop_assert!(kept.is(&a, ia));
        prop_assert_eq!(kept.is(&b, ib), fa == fb);
        let json = serde_json::to_string(&kept).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&json, &serde_json::to_string(&fa).unwrap_or_default());
        let restored: RawResult =
            serde_json::from_str(&json).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(restored.is(&a, ia));
        prop_assert_eq!(restored.is(&b, ib), fa == fb);
    }
}

#[test]
fn paths_are_left_out_and_words_kept() {
    let a = skeleton(&json!({"command": "find /usr/lib -name '*.so'"}));
    let b = skeleton(&json!({"cmd": "find  \"/opt\"\t-name '*.so'"}));
    assert!(a.is_some() && a == b);
    let c = skeleton(&json!({"command": "find /usr/lib -name '*.a'"}));
    assert_ne!(a, c);
    assert_eq!(skeleton(&json!({"path": "/usr"})), None);
    assert_eq!(
        skeleton(&json!({"command": "ls ./src ../x ~/y"})),
        Some(Skeleton::Text("ls".to_owned()))
    );
}
