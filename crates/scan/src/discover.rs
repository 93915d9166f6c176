//! Finding the agents' session folders on this machine, for `loopguard scan` with no path.
//!
//! | agent | folder | override |
//! |---|---|---|
//! | Claude Code | `~/.claude/projects` | `$CLAUDE_CONFIG_DIR/projects` |
//! | Codex | `~/.codex/sessions` | `$CODEX_HOME/sessions` |
//! | Pi | `~/.pi/agent/sessions` | `$PI_CODING_AGENT_DIR/sessions` |
//!
//! Each folder is searched recursively for `*.jsonl` files, like a directory given on the
//! command line.

use crate::{walk, PathError};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The environment discovery reads (the process environment by [`Env::from_process`]).
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// `$HOME`.
    pub home: Option<OsString>,
    /// `$CLAUDE_CONFIG_DIR`.
    pub claude_config_dir: Option<OsString>,
    /// `$CODEX_HOME`.
    pub codex_home: Option<OsString>,
    /// `$PI_CODING_AGENT_DIR`.
    pub pi_agent_dir: Option<OsString>,
}

impl Env {
    /// The process environment (empty values count as unset).
    pub fn from_process() -> Env {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        Env {
            home: var("HOME"),
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            codex_home: var("CODEX_HOME"),
            pi_agent_dir: var("PI_CODING_AGENT_DIR"),
        }
    }
}

/// One agent's session folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// The agent: `Claude Code`, `Codex` or `Pi`.
    pub agent: &'static str,
    /// The folder.
    pub dir: PathBuf,
    /// Whether it exists.
    pub found: bool,
    /// The session files in it (sorted), after the `since` filter.
    pub files: Vec<PathBuf>,
}

/// The folders each agent keeps sessions in under `env`.
pub fn folders(env: &Env) -> Vec<(&'static str, PathBuf)> {
    let home = env.home.as_ref().map(PathBuf::from);
    let under = |over: &Option<OsString>, default: &[&str], leaf: &str| -> Option<PathBuf> {
        let base = match over {
            Some(o) => PathBuf::from(o),
            None => {
                let mut p = home.clone()?;
                for d in default {
                    p.push(d);
                }
                p
            }
        };
        Some(base.join(leaf))
    };
    let mut out = Vec::new();
    if let Some(p) = under(&env.claude_config_dir, &[".claude"], "projects") {
        out.push(("Claude Code", p));
    }
    if let Some(p) = under(&env.codex_home, &[".codex"], "sessions") {
        out.push(("Codex", p));
    }
    if let Some(p) = under(&env.pi_agent_dir, &[".pi", "agent"], "sessions") {
        out.push(("Pi", p));
    }
    out
}

/// Finds every agent's folder under `env` and the sessions in it modified at or after
/// `since` (all of them for `None`).
pub fn discover(env: &Env, since: Option<SystemTime>) -> Result<Vec<Source>, PathError> {
    let mut out = Vec::new();
    for (agent, dir) in folders(env) {
        let found = dir.is_dir();
        let mut files = Vec::new();
        if found {
            walk(&dir, &mut files)?;
            files.sort();
            if let Some(t) = since {
                files.retain(|f| modified(f).is_some_and(|m| m >= t));
            }
        }
        out.push(Source {
            agent,
            dir,
            found,
            files,
        });
    }
    Ok(out)
}

fn modified(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// A `--since` that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--since `{0}`: expected a date YYYY-MM-DD (UTC midnight) or YYYY-MM-DDTHH:MM")]
pub struct BadDate(pub String);

/// Parses `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM[:SS]` (UTC).
///
/// ```
/// use loopguard_scan::discover::parse_since;
/// use std::time::{Duration, UNIX_EPOCH};
/// assert_eq!(parse_since("1970-01-02").unwrap(), UNIX_EPOCH + Duration::from_secs(86_400));
/// assert_eq!(parse_since("2000-03-01T01:02").unwrap(), UNIX_EPOCH + Duration::from_secs(951_872_520));
/// assert!(parse_since("yesterday").is_err());
/// ```
pub fn parse_since(s: &str) -> Result<SystemTime, BadDate> {
    let bad = || BadDate(s.to_owned());
    let (date, time) = match s.split_once(['T', ' ']) {
        Some((d, t)) => (d, Some(t)),
        None => (s, None),
    };
    let mut d = date.split('-');
    let mut num = |max: i64| -> Result<i64, BadDate> {
        let v: i64 = d.next().ok_or_else(bad)?.parse().map_err(|_| bad())?;
        if (0..=max).contains(&v) {
            Ok(v)
        } else {
            Err(bad())
        }
    };
    let (y, m, day) = (num(9999)?, num(12)?, num(31)?);
    if m == 0 || day == 0 || d.next().is_some() || y < 1970 {
        return Err(bad());
    }
    let mut secs = days_from_civil(y, m, day) * 86_400;
    if let Some(t) = time {
        let parts: Vec<&str> = t.trim_end_matches('Z').split(':').collect();
        if !(2..=3).contains(&parts.len()) {
            return Err(bad());
        }
        let limits = [23, 59, 60];
        let mult = [3600, 60, 1];
        for (i, p) in parts.iter().enumerate() {
            let v: i64 = p.parse().map_err(|_| bad())?;
            if v < 0 || v > limits[i] {
                return Err(bad());
            }
            secs += v * mult[i];
        }
    }
    let secs = u64::try_from(secs).map_err(|_| bad())?;
    Ok(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_replace_the_home_defaults() {
        let env = Env {
            home: Some("/h".into()),
            codex_home: Some("/c".into()),
            ..Env::default()
        };
        assert_eq!(
            folders(&env),
            [
                ("Claude Code", PathBuf::from("/h/.claude/projects")),
                ("Codex", PathBuf::from("/c/sessions")),
                ("Pi", PathBuf::from("/h/.pi/agent/sessions")),
            ]
        );
        assert!(folders(&Env::default()).is_empty());
    }

    #[test]
    fn dates_parse_to_utc() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2024, 3, 1), 19_783);
        assert!(parse_since("2024-13-01").is_err());
        assert!(parse_since("2024-01-01T25:00").is_err());
        assert!(parse_since("2024-01-01-01").is_err());
    }
}
