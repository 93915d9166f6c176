//! Per-session guard state on disk.
//!
//! One file per (agent, session) in the state directory, named after the sanitised session
//! id. Every invocation takes an exclusive lock on the session's `.lock` file (never renamed,
//! so every process locks the same file), reads the state, and writes the new state to a
//! temporary file that takes the old one's place by renames: concurrent hooks of one session
//! are serialised, and a crash leaves either the old state or the new one, never half of one.
//!
//! No rename replaces an existing file (but a file left over by a crash). On ext4 (the usual Linux file system), renaming
//! over an existing file makes the kernel allocate and start writing the new file's blocks
//! before the rename returns (its `auto_da_alloc` safeguard for programs that do not call
//! `fsync`): that costs 0.2 to 8 ms per invocation, more than everything else a hook does.
//! So the old state is first renamed aside (`<stem>.prev.json`), the new one renamed into
//! place, and the old one removed; a reader that finds no state file but the one set aside
//! (a crash between the two renames) reads that one.
//!
//! Nothing is `fsync`ed: a hook answers within a few milliseconds and the state is a cache
//! of the session's recent history, not data of the user's. A process crash (or a killed
//! hook) loses at most the invocation that was running. A power loss or an operating system
//! crash can lose the updates of the last seconds, or leave an empty state file; such a file
//! is reported once and replaced, and that session's guard starts afresh (it forgets the
//! repetitions it had counted, it does not misjudge).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The state file format version; a file of another version is replaced.
pub const STATE_VERSION: u32 = 1;

/// State files (and their locks) untouched for longer than this are pruned.
pub const PRUNE_AFTER: Duration = Duration::from_secs(7 * 24 * 3600);

/// The environment variable that overrides the state directory.
pub const STATE_DIR_ENV: &str = "LOOPGUARD_STATE_DIR";

/// A state directory problem.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// No directory could be chosen.
    #[error(
        "no state directory: set {STATE_DIR_ENV}, XDG_STATE_HOME or HOME, or pass --state-dir"
    )]
    NoDir,
    /// A file operation failed.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> StateError + 'a {
    move |source| StateError::Io {
        what,
        path: path.to_owned(),
        source,
    }
}

/// The state directory: `flag`, else `$LOOPGUARD_STATE_DIR`, else `$XDG_STATE_HOME/loopguard`,
/// else `~/.local/state/loopguard` (on Windows `%LOCALAPPDATA%\loopguard\state`).
pub fn state_dir(flag: Option<&Path>) -> Result<PathBuf, StateError> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(p) = flag {
        return Ok(p.to_owned());
    }
    if let Some(p) = var(STATE_DIR_ENV) {
        return Ok(p);
    }
    if let Some(p) = var("XDG_STATE_HOME").filter(|p| p.is_absolute()) {
        return Ok(p.join("loopguard"));
    }
    if cfg!(windows) {
        if let Some(p) = var("LOCALAPPDATA") {
            return Ok(p.join("loopguard").join("state"));
        }
    }
    var("HOME")
        .map(|h| h.join(".local").join("state").join("loopguard"))
        .ok_or(StateError::NoDir)
}

/// A file-name-safe form of a session id: ASCII letters, digits, `-` and `_` kept (at most 64);
/// when anything was dropped or cut, a hash of the whole id is appended so that different ids
/// never share a file.
pub fn file_stem(agent: &str, session_id: &str) -> String {
    let kept: String = session_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(64)
        .collect();
    if kept == session_id && !kept.is_empty() {
        return format!("{agent}-{kept}");
    }
    let hash = Sha256::digest(session_id.as_bytes());
    let hex: String = hash.iter().take(8).map(|b| format!("{b:02x}")).collect();
    if kept.is_empty() {
        format!("{agent}-{hex}")
    } else {
        format!("{agent}-{kept}-{hex}")
    }
}

/// What the hook keeps between invocations besides the guard.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Memo {
    /// Current batch number (calls reported back to back share one).
    pub batch: u64,
    /// The last event was a tool call (the next call joins its batch).
    pub in_calls: bool,
    /// Agent activity since the last settle point.
    pub active: bool,
    /// A compaction was reported before it happened (`PreCompact`); its `SessionStart`
    /// afterwards is the same compaction.
    pub compacting: bool,
    /// Derived call ids handed out, for agents that send none: (call fingerprint, id), oldest
    /// first, at most [`MAX_PENDING`].
    pub pending: Vec<(String, String)>,
    /// The next derived id number.
    pub next_id: u64,
    /// Text for the model still to deliver at the next event that can carry it.
    pub carry: Option<String>,
}

/// Most derived call ids remembered while their results are awaited.
pub const MAX_PENDING: usize = 64;

/// A state file's content.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Saved {
    /// [`STATE_VERSION`].
    pub version: u32,
    /// Fingerprint of the configuration the guard was built with.
    pub config: String,
    /// The hook's own memory.
    pub memo: Memo,
    /// `Guard::snapshot`.
    pub guard: Value,
}

fn why_unusable(bytes: &[u8], e: &serde_json::Error) -> String {
    #[derive(Deserialize)]
    struct Head {
        version: Option<u32>,
    }
    match serde_json::from_slice::<Head>(bytes) {
        Ok(Head { version: Some(v) }) if v != STATE_VERSION => {
            format!("state version {v}, this loopguard writes {STATE_VERSION}")
        }
        Ok(Head { version: None }) => "no `version`".to_owned(),
        _ => format!("not a state file ({e})"),
    }
}

/// A locked session: its files, and the lock, released on drop.
#[derive(Debug)]
pub struct Session {
    path: PathBuf,
    /// The previous state while it is set aside during [`Session::save`].
    prev_path: PathBuf,
    lock_path: PathBuf,
    _lock: File,
}

/// What was found in a state file.
#[derive(Debug)]
pub enum Loaded {
    /// No file: a new session.
    Missing,
    /// A readable state.
    Found(Box<Saved>),
    /// A file that cannot be used (why); it is replaced.
    Unusable(String),
}

impl Session {
    /// Locks the session `stem` in `dir` (created if needed), waiting for other invocations.
    pub fn lock(dir: &Path, stem: &str) -> Result<Session, StateError> {
        std::fs::create_dir_all(dir).map_err(io("cannot create state directory", dir))?;
        let lock_path = dir.join(format!("{stem}.lock"));
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io("cannot open lock file", &lock_path))?;
        fs4::FileExt::lock(&file).map_err(io("cannot lock", &lock_path))?;
        Ok(Session {
            path: dir.join(format!("{stem}.json")),
            prev_path: dir.join(format!("{stem}.prev.json")),
            lock_path,
            _lock: file,
        })
    }

    /// The state file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the state file.
    pub fn load(&self, config: &str) -> Result<Loaded, StateError> {
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            // A save interrupted between its two renames left the old state set aside.
            Err(e) if e.kind() == ErrorKind::NotFound => match std::fs::read(&self.prev_path) {
                Ok(b) => b,
                Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Loaded::Missing),
                Err(e) => return Err(io("cannot read", &self.prev_path)(e)),
            },
            Err(e) => return Err(io("cannot read", &self.path)(e)),
        };
        // One parse in the common case; the version is looked at only to say why a file
        // that does not parse as this version's state is unusable.
        let saved: Saved = match serde_json::from_slice(&bytes) {
            Ok(s) => s,
            Err(e) => return Ok(Loaded::Unusable(why_unusable(&bytes, &e))),
        };
        if saved.version != STATE_VERSION {
            return Ok(Loaded::Unusable(format!(
                "state version {}, this loopguard writes {STATE_VERSION}",
                saved.version
            )));
        }
        if saved.config != config {
            return Ok(Loaded::Unusable(
                "written with another configuration".to_owned(),
            ));
        }
        Ok(Loaded::Found(Box::new(saved)))
    }

    /// Writes the state atomically: a temporary file beside it takes the old state's place
    /// (the old state renamed aside, the new one renamed into place, the old one removed; see
    /// the module's documentation for why nothing is renamed over an existing file).
    pub fn save(&self, saved: &Saved) -> Result<(), StateError> {
        let bytes = serde_json::to_vec(saved).map_err(|e| StateError::Io {
            what: "cannot encode state for",
            path: self.path.clone(),
            source: std::io::Error::other(e),
        })?;
        let tmp = self
            .path
            .with_extension(format!("json.tmp{}", std::process::id()));
        let written = File::create(&tmp)
            .and_then(|mut f| f.write_all(&bytes))
            .map_err(io("cannot write", &tmp));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        let aside = match std::fs::rename(&self.path, &self.prev_path) {
            Ok(()) => true,
            Err(e) if e.kind() == ErrorKind::NotFound => false,
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                return Err(io("cannot set aside", &self.path)(e));
            }
        };
        if let Err(e) = std::fs::rename(&tmp, &self.path) {
            let _ = std::fs::remove_file(&tmp);
            if aside {
                let _ = std::fs::rename(&self.prev_path, &self.path);
            }
            return Err(io("cannot replace", &self.path)(e));
        }
        // The old state (or one a crash left set aside): the new state is in place.
        match std::fs::remove_file(&self.prev_path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io("cannot remove", &self.prev_path)(e)),
        }
    }

    /// Removes the state and lock files of other sessions in `dir` untouched for longer than
    /// `age`; returns how many files went. Errors are ignored (another invocation may be
    /// pruning at the same time).
    pub fn prune(&self, dir: &Path, age: Duration) -> usize {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return 0;
        };
        let now = SystemTime::now();
        let mut removed = 0;
        for entry in entries.flatten() {
            let p = entry.path();
            if p == self.path || p == self.prev_path || p == self.lock_path {
                continue;
            }
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let ours =
                name.ends_with(".json") || name.ends_with(".lock") || name.contains(".json.tmp");
            if !ours {
                continue;
            }
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| now.duration_since(t).ok())
                .is_some_and(|d| d > age);
            if old && std::fs::remove_file(&p).is_ok() {
                removed += 1;
            }
        }
        removed
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn session_ids_become_distinct_safe_file_names() {
        assert_eq!(
            file_stem("claude-code", "0b3c-41_aa"),
            "claude-code-0b3c-41_aa"
        );
        let evil = file_stem("claude-code", "../../etc/passwd");
        assert!(evil.starts_with("claude-code-etcpasswd-"), "{evil}");
        assert!(!evil.contains('/') && !evil.contains('.'));
        assert_ne!(
            file_stem("codex", "a/b"),
            file_stem("codex", "ab"),
            "dropping characters must not merge ids"
        );
        assert_ne!(file_stem("codex", "x"), file_stem("claude-code", "x"));
        let long = "x".repeat(300);
        assert!(file_stem("codex", &long).len() < 100);
        assert!(file_stem("codex", "").starts_with("codex-"));
    }

    /// A state under configuration `c` whose memo's batch is `batch`.
    fn saved_state(batch: u64) -> Saved {
        Saved {
            version: STATE_VERSION,
            config: "c".into(),
            memo: Memo {
                batch,
                ..Memo::default()
            },
            guard: serde_json::json!({"x": 1}),
        }
    }

    #[test]
    fn state_round_trips_and_bad_files_are_unusable() {
        let dir = tempfile::tempdir().unwrap();
        let s = Session::lock(dir.path(), "claude-code-s").unwrap();
        assert!(matches!(s.load("c").unwrap(), Loaded::Missing));
        let saved = saved_state(3);
        s.save(&saved).unwrap();
        match s.load("c").unwrap() {
            Loaded::Found(f) => {
                assert_eq!(f.memo.batch, 3);
                assert_eq!(f.guard, serde_json::json!({"x": 1}));
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(s.load("other").unwrap(), Loaded::Unusable(m) if m.contains("configuration"))
        );
        std::fs::write(s.path(), b"{\"version\": 99}").unwrap();
        assert!(matches!(s.load("c").unwrap(), Loaded::Unusable(m) if m.contains("version 99")));
        std::fs::write(s.path(), b"\0garbage").unwrap();
        assert!(
            matches!(s.load("c").unwrap(), Loaded::Unusable(m) if m.contains("not a state file"))
        );
        // No temporary file and no old state is left behind.
        s.save(&saved).unwrap();
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names
                .iter()
                .all(|n| !n.contains("tmp") && !n.contains("prev")),
            "{names:?}"
        );
    }

    #[test]
    fn a_state_set_aside_by_an_interrupted_save_is_read_and_then_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let s = Session::lock(dir.path(), "claude-code-s").unwrap();
        let mut saved = saved_state(7);
        s.save(&saved).unwrap();
        // A crash after the old state was renamed aside, before the new one took its place.
        let aside = dir.path().join("claude-code-s.prev.json");
        std::fs::rename(s.path(), &aside).unwrap();
        match s.load("c").unwrap() {
            Loaded::Found(f) => assert_eq!(f.memo.batch, 7),
            other => panic!("{other:?}"),
        }
        saved.memo.batch = 8;
        s.save(&saved).unwrap();
        assert!(!aside.exists());
        match s.load("c").unwrap() {
            Loaded::Found(f) => assert_eq!(f.memo.batch, 8),
            other => panic!("{other:?}"),
        }
        // The current state wins over one set aside.
        std::fs::write(
            &aside,
            serde_json::to_vec(&Saved {
                memo: Memo::default(),
                ..saved.clone()
            })
            .unwrap(),
        )
        .unwrap();
        match s.load("c").unwrap() {
            Loaded::Found(f) => assert_eq!(f.memo.batch, 8),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn prune_removes_only_old_files_of_other_sessions() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("claude-code-old.json");
        let fresh = dir.path().join("claude-code-fresh.json");
        let foreign = dir.path().join("notes.txt");
        for p in [&old, &fresh, &foreign] {
            std::fs::write(p, b"{}").unwrap();
        }
        let week_ago = SystemTime::now() - Duration::from_secs(8 * 24 * 3600);
        for p in [&old, &foreign] {
            File::options()
                .write(true)
                .open(p)
                .unwrap()
                .set_modified(week_ago)
                .unwrap();
        }
        let s = Session::lock(dir.path(), "claude-code-me").unwrap();
        assert_eq!(s.prune(dir.path(), PRUNE_AFTER), 1);
        assert!(!old.exists());
        assert!(fresh.exists() && foreign.exists());
    }
}
