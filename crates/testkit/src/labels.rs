//! The one reader of the corpus's `labels.toml` (one `[[session]]` table per file), used by
//! the detector crates' corpus tests, the evaluation and the end-to-end tests.

use serde::Deserialize;
use std::path::Path;

/// Whether a session loops, per its label.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum LoopLabel {
    /// `true` or `false`.
    Bool(bool),
    /// `"unsure"`.
    Other(String),
}

/// One `[[session]]` of `labels.toml`.
#[derive(Clone, Debug, Deserialize)]
pub struct Label {
    /// File name in the corpus folder.
    pub path: String,
    /// Agent kind.
    #[serde(default)]
    pub agent: String,
    /// Number of lines.
    #[serde(default)]
    pub events: usize,
    /// Loop or not.
    #[serde(rename = "loop")]
    pub is_loop: LoopLabel,
    /// The loop kind.
    #[serde(default)]
    pub kind: Option<String>,
    /// 0-based line of the third occurrence of the repeated unit.
    #[serde(default)]
    pub first_event: Option<usize>,
    /// 0-based line of its first occurrence.
    #[serde(default)]
    pub loop_start: Option<usize>,
    /// For text kinds: character offset of the third occurrence.
    #[serde(default)]
    pub first_char: Option<u64>,
    /// The labeller's note.
    #[serde(default)]
    pub note: String,
}

impl Label {
    /// `loop = true`.
    pub fn loops(&self) -> bool {
        self.is_loop == LoopLabel::Bool(true)
    }

    /// `loop = false`.
    pub fn clean(&self) -> bool {
        self.is_loop == LoopLabel::Bool(false)
    }

    /// `loop = "unsure"` (or any other word).
    pub fn unsure(&self) -> bool {
        matches!(self.is_loop, LoopLabel::Other(_))
    }

    /// A loop of `kind`.
    pub fn loops_of(&self, kind: &str) -> bool {
        self.loops() && self.kind.as_deref() == Some(kind)
    }
}

/// labels.toml could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LabelsError {
    /// The file could not be read.
    #[error("cannot read {path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The OS message.
        message: String,
    },
    /// The file is not a valid labels file.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What was wrong.
        message: String,
    },
}

#[derive(Deserialize)]
struct LabelsFile {
    session: Vec<Label>,
}

/// Reads `labels.toml` at `path`.
pub fn read_labels(path: &Path) -> Result<Vec<Label>, LabelsError> {
    read_file(path, parse_labels)
}

/// Reads the file at `path` and parses its text with `parse` (an error names the file).
pub fn read_file<T>(
    path: &Path,
    parse: impl FnOnce(&str) -> Result<T, String>,
) -> Result<T, LabelsError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| LabelsError::Io {
        path: name.clone(),
        message: e.to_string(),
    })?;
    parse(&text).map_err(|message| LabelsError::Invalid {
        path: name,
        message,
    })
}

/// Parses the text of a labels file.
pub fn parse_labels(text: &str) -> Result<Vec<Label>, String> {
    let f: LabelsFile = toml::from_str(text).map_err(|e| e.to_string())?;
    Ok(f.session)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_read_with_their_loop_word_and_optional_fields() {
        let text = r#"
            [[session]]
            path = "a.jsonl"
            events = 3
            loop = false

            [[session]]
            path = "b.jsonl"
            loop = true
            kind = "ping-pong"
            loop_start = 4
            first_event = 9

            [[session]]
            path = "c.jsonl"
            loop = "unsure"
        "#;
        let l = parse_labels(text).expect("valid labels");
        assert_eq!(l.len(), 3);
        assert!(l[0].clean() && l[0].events == 3 && l[0].kind.is_none());
        assert!(l[1].loops_of("ping-pong") && !l[1].loops_of("tool-repeat"));
        assert_eq!((l[1].loop_start, l[1].first_event), (Some(4), Some(9)));
        assert!(l[2].unsure() && !l[2].loops() && !l[2].clean());
    }

    #[test]
    fn a_session_without_a_loop_word_is_an_error_naming_the_key() {
        let err = parse_labels("[[session]]\npath = \"a.jsonl\"\n").expect_err("no loop word");
        assert!(err.contains("loop"), "{err}");
    }
}
