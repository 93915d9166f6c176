//! Result normalisation: volatile fields (durations, pids, ids, timestamps) must not make a
//! stuck call look like progress.
//!
//! The bus computes one fingerprint for every tool result: `norm_fp` (after the tool's
//! [`Normalizer`]). The exact one (text and image count, [`crate::result_fingerprint`]) is a
//! pure function of the event, hashed by the few detectors that read it. Hosts register
//! their own normalisers per tool name with [`Normalizers::register`].

use crate::fingerprint::{args_fingerprint, Fingerprint, ResultHasher};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// Everything a normaliser may look at.
#[derive(Clone, Copy, Debug)]
pub struct ResultInput<'a> {
    /// Tool name.
    pub tool: &'a str,
    /// The call's arguments, when the call was seen.
    pub args: Option<&'a Value>,
    /// The result text.
    pub content: &'a str,
    /// Error flag.
    pub is_error: bool,
    /// Image count.
    pub images: u32,
    /// Structured details, when the runtime has them.
    pub details: Option<&'a Value>,
    /// Where the text pass of `content` (trimmed) is kept once computed, so that the generic
    /// normaliser and the result's shape compute it once between them; `None`: each reader
    /// computes its own.
    pub text_pass: Option<&'a TextPass>,
}

/// The text pass (durations, pids, uuids, date-times masked) of one result's trimmed
/// content, computed by the first of its readers that needs it. Made for one result: every
/// reader given the same `TextPass` must ask it about the same content.
#[derive(Default)]
pub struct TextPass {
    text: std::cell::OnceCell<String>,
    /// The buffer the text is written into (the previous result's, on the bus: the pass
    /// allocates nothing per result once it is large enough).
    buffer: std::cell::Cell<String>,
}

impl fmt::Debug for TextPass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TextPass").field(&self.text.get()).finish()
    }
}

impl TextPass {
    /// Nothing computed yet.
    pub fn new() -> TextPass {
        TextPass::default()
    }

    /// Nothing computed yet; the text will be written into `buffer` (cleared first).
    pub(crate) fn with_buffer(buffer: String) -> TextPass {
        TextPass {
            text: std::cell::OnceCell::new(),
            buffer: std::cell::Cell::new(buffer),
        }
    }

    /// The text pass of `content.trim()`.
    pub(crate) fn of(&self, content: &str) -> &str {
        self.text.get_or_init(|| {
            let mut out = self.buffer.take();
            out.clear();
            crate::normalizers::text::normalize_text_into(content.trim(), &mut out);
            out
        })
    }

    /// The buffer back, for the next result's pass.
    pub(crate) fn into_buffer(self) -> String {
        self.text
            .into_inner()
            .unwrap_or_else(|| self.buffer.into_inner())
    }
}

/// Turns a result into a fingerprint that ignores what does not mean progress.
pub trait Normalizer: Send + Sync {
    /// The fingerprint of the normalised result.
    fn fingerprint(&self, input: &ResultInput<'_>) -> Fingerprint;

    /// Whether [`ResultInput::args`] is read. When `false` the bus keeps no copy of a call's
    /// arguments until its result arrives (and passes `Some(&Value::Null)` for them).
    fn uses_args(&self) -> bool {
        true
    }
}

/// The exact result: the error flag, the text, the image count, and the details (canonical
/// JSON) when present.
#[derive(Clone, Copy, Debug, Default)]
pub struct Exact;

impl Normalizer for Exact {
    fn fingerprint(&self, input: &ResultInput<'_>) -> Fingerprint {
        let mut h = ResultHasher::new();
        // A failure is never the same outcome as an answer of the same text (OpenClaw hashes a
        // thrown error apart from any result).
        if input.is_error {
            h.text("error");
        }
        h.text(input.content);
        h.images(input.images);
        if let Some(d) = input.details {
            h.text(&args_fingerprint(d).to_hex());
        }
        h.finish()
    }

    fn uses_args(&self) -> bool {
        false
    }
}

/// A set of normalisers keyed by tool name, with a fallback for every other tool.
#[derive(Clone)]
pub struct Normalizers {
    /// Shared between the copies of one set (a guard per session clones the built-in set);
    /// [`Normalizers::register`] copies it on write.
    by_tool: Arc<BTreeMap<String, Arc<dyn Normalizer>>>,
    fallback: Arc<dyn Normalizer>,
}

impl fmt::Debug for Normalizers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Normalizers")
            .field("tools", &self.by_tool.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Default for Normalizers {
    fn default() -> Self {
        Normalizers::builtin()
    }
}

impl Normalizers {
    /// Exact hashing for every tool.
    pub fn exact() -> Normalizers {
        Normalizers {
            by_tool: Arc::new(BTreeMap::new()),
            fallback: Arc::new(Exact),
        }
    }

    /// loopguard's built-in normalisers: built once per process, then shared (a clone is a
    /// few reference counts).
    pub fn builtin() -> Normalizers {
        static BUILTIN: std::sync::OnceLock<Normalizers> = std::sync::OnceLock::new();
        BUILTIN.get_or_init(crate::normalizers::builtin).clone()
    }

    /// Uses `n` for results of `tool` (exact name).
    pub fn register(&mut self, tool: impl Into<String>, n: Arc<dyn Normalizer>) {
        Arc::make_mut(&mut self.by_tool).insert(tool.into(), n);
    }

    /// Uses `n` for every tool without its own normaliser.
    pub fn set_fallback(&mut self, n: Arc<dyn Normalizer>) {
        self.fallback = n;
    }

    fn get(&self, tool: &str) -> &dyn Normalizer {
        match self.by_tool.get(tool) {
            Some(n) => n.as_ref(),
            None => self.fallback.as_ref(),
        }
    }

    /// The normalised fingerprint of one result.
    pub fn fingerprint(&self, input: &ResultInput<'_>) -> Fingerprint {
        self.get(input.tool).fingerprint(input)
    }

    /// Whether the normaliser of `tool` reads the call's arguments.
    pub fn uses_args(&self, tool: &str) -> bool {
        self.get(tool).uses_args()
    }
}
