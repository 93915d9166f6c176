//! The default settings on the evaluation corpus: no finding on sessions labelled
//! `loop = false`; labelled post-compaction loops are caught.
#![allow(clippy::unwrap_used)]

mod common;

use loopguard_core::OwnedEvent;
use loopguard_detect_post_compaction::{PostCompactionGuard, Settings};

#[test]
fn corpus_no_false_positives_and_labelled_loops_caught() {
    let Some(dir) = common::corpus_dir() else {
        return;
    };
    let labels = common::labels(&dir);
    assert!(!labels.is_empty());
    let (mut sessions_with_compaction, mut fp, mut caught, mut loops) = (0, vec![], 0, 0);
    for l in &labels {
        let events = common::events(&dir, &l.path);
        if events
            .iter()
            .any(|(_, e)| matches!(e, OwnedEvent::Compaction))
        {
            sessions_with_compaction += 1;
        }
        let f = common::replay(
            Box::new(PostCompactionGuard::new(Settings::default())),
            &events,
        );
        if l.loop_ == "false" && !f.is_empty() {
            fp.push((l.path.clone(), f[0].0));
        }
        if l.loop_ == "true" && l.kind.as_deref() == Some("post-compaction") {
            loops += 1;
            if !f.is_empty() {
                caught += 1;
            }
        }
    }
    eprintln!(
        "post-compaction-guard: {} sessions, {} with a compaction, labelled post-compaction loops caught {}/{}, \
         false positives {}",
        labels.len(),
        sessions_with_compaction,
        caught,
        loops,
        fp.len()
    );
    assert!(fp.is_empty(), "findings on loop=false sessions: {fp:?}");
    assert_eq!(caught, loops);
}
