//! The `[guard]` table: the orchestrator's policy keys, their defaults and validation.

use loopguard_core::{parse_options, ConfigError};
use serde::{Deserialize, Serialize};

/// The `[guard]` table as written (every key optional): the guard's policy before
/// [`PolicyOptions::resolve`] fills in the defaults and validates it into a [`Policy`].
///
/// | key | type | default | meaning |
/// |---|---|---|---|
/// | `enabled` | bool | `true` | master switch; only the user can change it (config or [`crate::Guard::command`]) |
/// | `abort-after-blocks` | integer | `3` | the N-th block within one user turn becomes an abort (`0`: never) |
/// | `abort-after-run-blocks` | integer | `0` | the N-th block within one run becomes an abort (`0`: never; OpenClaw's "recover once" is `2`) |
/// | `terminate` | bool | `false` | blocks also carry the `terminate` hint |
/// | `whole-batch` | bool | `false` | a block refuses every call of the current batch |
/// | `steers-per-turn` | integer | `0` | steer budget per user turn (`0`: unlimited) |
/// | `compactions-per-turn` | integer | `0` | compactions when the budget is exhausted, each with a fresh budget |
/// | `steer-on-block` | bool | `false` | a block (and a text abort) also queues a steer for the settle point |
/// | `steer-wording` | `"detector"` / `"escalating"` | `"detector"` | steer text: the finding's message, or escalating wording per retry |
/// | `warning-dedup` | `"none"` / `"per-key"` / `"buckets"` | `"none"` | which repeated warnings reach the model |
/// | `warning-bucket-size` | integer | `10` | bucket size for `warning-dedup = "buckets"` |
/// | `plain-results` | bool | `false` | detectors read each tool result without the host's wrapping ([`loopguard_core::wrapping::plain`] lists the wrappings) |
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PolicyOptions {
    /// Master switch (default true).
    pub enabled: Option<bool>,
    /// Blocks within one user turn after which the guard aborts: the N-th block is an abort
    /// (default 3; 0 = never).
    pub abort_after_blocks: Option<u32>,
    /// Blocks also carry `terminate` (default false).
    pub terminate: Option<bool>,
    /// Blocks within one run after which the guard aborts (default 0 = never).
    pub abort_after_run_blocks: Option<u32>,
    /// A block refuses the whole batch of the blocked call (default false).
    pub whole_batch: Option<bool>,
    /// Steers per user turn (default 0 = unlimited).
    pub steers_per_turn: Option<u32>,
    /// Compactions per user turn once the steer budget is exhausted (default 0).
    pub compactions_per_turn: Option<u32>,
    /// A block or a text abort also queues a steer delivered at the settle point (default false).
    pub steer_on_block: Option<bool>,
    /// Steer wording (default `detector`).
    pub steer_wording: Option<Wording>,
    /// Warning de-duplication (default `none`).
    pub warning_dedup: Option<Dedup>,
    /// Bucket size for `warning-dedup = "buckets"` (default 10).
    pub warning_bucket_size: Option<u32>,
    /// Detectors read each tool result as its plain text (default false: as the host sent it).
    pub plain_results: Option<bool>,
}

/// How steer texts are worded.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Wording {
    /// The finding's own message, verbatim.
    Detector,
    /// pi-repetition-guard's escalating wording: the sample on the first retry, none on the
    /// second, a "state the blocker" fallback on the last.
    Escalating,
}

impl Wording {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Wording::Detector => "detector",
            Wording::Escalating => "escalating",
        }
    }
}

/// Which repeated warnings reach the model.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dedup {
    /// Every warning becomes a steer (subject to the budget).
    None,
    /// One steer per warning key per user turn and run.
    PerKey,
    /// OpenClaw: a key's warning is emitted only when `count / bucket-size` exceeds the last
    /// bucket emitted for it (counts below one bucket are never emitted); at most 256 keys.
    Buckets,
}

impl Dedup {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Dedup::None => "none",
            Dedup::PerKey => "per-key",
            Dedup::Buckets => "buckets",
        }
    }
}

/// The guard's policy: escalation (blocks, aborts), budget (steers, compactions) and delivery,
/// resolved from the `[guard]` table (defaults filled in, validated).
///
/// ```
/// let p = loopguard_orchestrator::Policy::from_table(&toml::Table::new()).unwrap();
/// assert_eq!(p.abort_after_blocks, loopguard_orchestrator::Policy::DEFAULT_ABORT_AFTER_BLOCKS);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Policy {
    /// Master switch.
    pub enabled: bool,
    /// The N-th block within one user turn becomes an abort (0 = never).
    pub abort_after_blocks: u32,
    /// The N-th block within one run becomes an abort (0 = never).
    pub abort_after_run_blocks: u32,
    /// Blocks carry `terminate`.
    pub terminate: bool,
    /// A block refuses the whole batch.
    pub whole_batch: bool,
    /// Steers per user turn (0 = unlimited).
    pub steers_per_turn: u32,
    /// Compactions per user turn once the budget is exhausted.
    pub compactions_per_turn: u32,
    /// A block or a text abort queues a steer for the settle point.
    pub steer_on_block: bool,
    /// Steer wording.
    pub steer_wording: Wording,
    /// Warning de-duplication.
    pub warning_dedup: Dedup,
    /// Bucket size for [`Dedup::Buckets`].
    pub warning_bucket_size: u32,
    /// Detectors read each tool result without the host's wrapping
    /// ([`loopguard_core::wrapping::plain`]).
    pub plain_results: bool,
}

impl Policy {
    /// Default of `abort-after-blocks` (pi-loop-guard's `LOOP_GUARD_ABORT_THRESHOLD`).
    pub const DEFAULT_ABORT_AFTER_BLOCKS: u32 = 3;
    /// Default of `warning-bucket-size` (OpenClaw's 10-count buckets).
    pub const DEFAULT_WARNING_BUCKET_SIZE: u32 = 10;
    /// The most warning keys the de-duplication remembers (OpenClaw: 256).
    pub const MAX_DEDUP_KEYS: usize = 256;
    /// The largest accepted value of the count keys (a guard against typos such as `1e9`).
    pub const MAX_COUNT: u32 = 1_000_000;

    /// Parses and validates a `[guard]` table.
    pub fn from_table(table: &toml::Table) -> Result<Policy, ConfigError> {
        let o: PolicyOptions = parse_options("guard", table)?;
        o.resolve()
    }

    /// The settings as a TOML table (every key, for `loopguard config check`).
    pub fn to_table(&self) -> toml::Table {
        let mut t = toml::Table::new();
        let int = |n: u32| toml::Value::Integer(i64::from(n));
        t.insert("enabled".into(), toml::Value::Boolean(self.enabled));
        t.insert("abort-after-blocks".into(), int(self.abort_after_blocks));
        t.insert(
            "abort-after-run-blocks".into(),
            int(self.abort_after_run_blocks),
        );
        t.insert("terminate".into(), toml::Value::Boolean(self.terminate));
        t.insert("whole-batch".into(), toml::Value::Boolean(self.whole_batch));
        t.insert("steers-per-turn".into(), int(self.steers_per_turn));
        t.insert(
            "compactions-per-turn".into(),
            int(self.compactions_per_turn),
        );
        t.insert(
            "steer-on-block".into(),
            toml::Value::Boolean(self.steer_on_block),
        );
        t.insert(
            "steer-wording".into(),
            toml::Value::String(self.steer_wording.as_str().into()),
        );
        t.insert(
            "warning-dedup".into(),
            toml::Value::String(self.warning_dedup.as_str().into()),
        );
        t.insert("warning-bucket-size".into(), int(self.warning_bucket_size));
        t.insert(
            "plain-results".into(),
            toml::Value::Boolean(self.plain_results),
        );
        t
    }
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            enabled: true,
            abort_after_blocks: Policy::DEFAULT_ABORT_AFTER_BLOCKS,
            abort_after_run_blocks: 0,
            terminate: false,
            whole_batch: false,
            steers_per_turn: 0,
            compactions_per_turn: 0,
            steer_on_block: false,
            steer_wording: Wording::Detector,
            warning_dedup: Dedup::None,
            warning_bucket_size: Policy::DEFAULT_WARNING_BUCKET_SIZE,
            plain_results: false,
        }
    }
}

impl PolicyOptions {
    /// Fills in defaults and validates.
    pub fn resolve(&self) -> Result<Policy, ConfigError> {
        let d = Policy::default();
        let bounded = |key: &str, v: Option<u32>, default: u32| -> Result<u32, ConfigError> {
            let n = v.unwrap_or(default);
            if n > Policy::MAX_COUNT {
                return Err(ConfigError::invalid(
                    format!("guard.{key}"),
                    format!("must be at most {}, found {n}", Policy::MAX_COUNT),
                ));
            }
            Ok(n)
        };
        let s = Policy {
            enabled: self.enabled.unwrap_or(d.enabled),
            abort_after_blocks: bounded(
                "abort-after-blocks",
                self.abort_after_blocks,
                d.abort_after_blocks,
            )?,
            abort_after_run_blocks: bounded(
                "abort-after-run-blocks",
                self.abort_after_run_blocks,
                d.abort_after_run_blocks,
            )?,
            terminate: self.terminate.unwrap_or(d.terminate),
            whole_batch: self.whole_batch.unwrap_or(d.whole_batch),
            steers_per_turn: bounded("steers-per-turn", self.steers_per_turn, d.steers_per_turn)?,
            compactions_per_turn: bounded(
                "compactions-per-turn",
                self.compactions_per_turn,
                d.compactions_per_turn,
            )?,
            steer_on_block: self.steer_on_block.unwrap_or(d.steer_on_block),
            steer_wording: self.steer_wording.unwrap_or(d.steer_wording),
            warning_dedup: self.warning_dedup.unwrap_or(d.warning_dedup),
            warning_bucket_size: bounded(
                "warning-bucket-size",
                self.warning_bucket_size,
                d.warning_bucket_size,
            )?,
            plain_results: self.plain_results.unwrap_or(d.plain_results),
        };
        if s.warning_bucket_size == 0 {
            return Err(ConfigError::invalid(
                "guard.warning-bucket-size",
                "must be a positive integer",
            ));
        }
        if s.compactions_per_turn > 0 && s.steers_per_turn == 0 {
            return Err(ConfigError::invalid(
                "guard.compactions-per-turn",
                "needs a steer budget: set guard.steers-per-turn to a positive integer (0 means unlimited, which is never exhausted)",
            ));
        }
        Ok(s)
    }
}

/// The former name of [`PolicyOptions`].
#[deprecated(note = "renamed `PolicyOptions` (the `[guard]` table as written)")]
pub type GuardOptions = PolicyOptions;

/// The former name of [`Policy`].
#[deprecated(note = "renamed `Policy` (the resolved `[guard]` policy)")]
pub type GuardSettings = Policy;

#[cfg(test)]
mod tests {
    use super::*;

    fn table(s: &str) -> toml::Table {
        s.parse().unwrap()
    }

    #[test]
    fn defaults_match_pi_loop_guard() {
        let s = Policy::from_table(&toml::Table::new()).unwrap();
        assert!(s.enabled);
        assert_eq!(s.abort_after_blocks, 3);
        assert!(!s.terminate);
        assert_eq!(s, Policy::default());
    }

    #[test]
    fn errors_name_the_key() {
        let err = Policy::from_table(&table("abort-after-blocks = -1")).unwrap_err();
        assert_eq!(err.path(), Some("guard.abort-after-blocks"));
        let err = Policy::from_table(&table("steer-wording = \"loud\"")).unwrap_err();
        assert_eq!(err.path(), Some("guard.steer-wording"));
        let err = Policy::from_table(&table("abort-after-block = 2")).unwrap_err();
        assert!(
            err.to_string()
                .contains("unknown field `abort-after-block`"),
            "{err}"
        );
        let err = Policy::from_table(&table("warning-bucket-size = 0")).unwrap_err();
        assert_eq!(err.path(), Some("guard.warning-bucket-size"));
        let err = Policy::from_table(&table("compactions-per-turn = 1")).unwrap_err();
        assert_eq!(err.path(), Some("guard.compactions-per-turn"));
        let err = Policy::from_table(&table("steers-per-turn = 2000000")).unwrap_err();
        assert_eq!(err.path(), Some("guard.steers-per-turn"));
    }

    #[test]
    fn to_table_round_trips() {
        let s = Policy {
            steers_per_turn: 2,
            compactions_per_turn: 1,
            warning_dedup: Dedup::Buckets,
            steer_wording: Wording::Escalating,
            ..Policy::default()
        };
        assert_eq!(Policy::from_table(&s.to_table()).unwrap(), s);
    }
}
