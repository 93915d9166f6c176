//! Shared helpers: the workspace root, the corpus location, temporary files, running the CLI.

use std::path::{Path, PathBuf};

/// The workspace root.
pub fn root() -> PathBuf {
    let tests = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    tests.parent().map(Path::to_path_buf).unwrap_or(tests)
}

/// The corpus folder: `$LOOPGUARD_CORPUS`, else `../shared/corpus` from the workspace root.
/// `None` (with a note on stderr) when it is absent, except under `CI=true`, where its absence
/// fails the test.
pub fn corpus_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("LOOPGUARD_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => root().join("../shared/corpus"),
    };
    if dir.join("labels.toml").is_file() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "the corpus is required under CI=true but was not found at {} (set LOOPGUARD_CORPUS)",
        dir.display()
    );
    eprintln!(
        "note: corpus not found at {}; skipping this corpus test (set LOOPGUARD_CORPUS)",
        dir.display()
    );
    None
}

/// A temporary directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// `name` is read as one path component: a character other than an ASCII letter, digit,
    /// `-` or `_` becomes `_` (a name holding `/` would otherwise make nested directories,
    /// and only the innermost would be removed).
    pub fn new(name: &str) -> TempDir {
        let name: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let dir = std::env::temp_dir().join(format!("loopguard-e2e-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    /// Writes `name` with `text`; returns its path.
    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What one run of the command gave.
#[derive(Debug)]
pub struct Run {
    pub code: u8,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
}

/// Runs `loopguard ARGS` in-process (the binary's `main` is this plus the exit).
pub fn loopguard(args: &[&str]) -> Run {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let argv = std::iter::once("loopguard").chain(args.iter().copied());
    let code = loopguard_cli::run(argv, &mut out, &mut err);
    Run {
        code,
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err).into_owned(),
    }
}

/// A transcript of `n` reads of one file with identical results; `args(i)` gives the i-th
/// call's arguments as JSON text. Lines: 0 header, 1 user, then for read `i` the assistant
/// line `2 + 3i`, the call `3 + 3i` and the result `4 + 3i`.
pub fn reads(n: usize, args: impl Fn(usize) -> String) -> String {
    let mut s = String::from("{\"type\":\"session\",\"id\":\"reads\"}\n{\"type\":\"user\",\"text\":\"Why does load fail?\"}\n");
    for i in 0..n {
        s.push_str("{\"type\":\"assistant\",\"text\":\"Let me read the file.\"}\n");
        s.push_str(&format!(
            "{{\"type\":\"tool_call\",\"id\":\"c{i}\",\"tool\":\"read\",\"args\":{},\"batch\":{i}}}\n",
            args(i)
        ));
        s.push_str(&format!(
            "{{\"type\":\"tool_result\",\"id\":\"c{i}\",\"tool\":\"read\",\"content\":\"fn load() {{}}\\n\",\"is_error\":false,\"images\":0}}\n"
        ));
    }
    s
}
