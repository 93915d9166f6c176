//! A synthetic tool-heavy transcript for benchmarks: `n` tool call/result pairs with varied
//! arguments and results and no loop, as loopguard JSONL (about 370 bytes a pair).

use std::io::Write;

/// A small deterministic generator (64-bit LCG), so every run writes the same bytes.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn word(&mut self) -> &'static str {
        const WORDS: &[&str] = &[
            "alpha", "parser", "config", "render", "buffer", "client", "server", "token", "stream",
            "event", "detector", "guard", "replay", "cache", "index", "vector", "matrix", "layout",
            "widget", "schema",
        ];
        WORDS[(self.next() as usize) % WORDS.len()]
    }
}

/// Writes the stream: a header, one user prompt, then `n` pairs, an assistant message every
/// 10 calls. Every call differs from every other (a counter is in its arguments) and every
/// result too.
pub fn write_tool_stream(n: usize, out: &mut dyn Write) -> std::io::Result<()> {
    let mut r = Lcg(0x5eed);
    writeln!(out, r#"{{"type":"session","id":"synthetic-{n}"}}"#)?;
    writeln!(
        out,
        r#"{{"type":"user","text":"Refactor the project and keep the tests green."}}"#
    )?;
    for i in 0..n {
        if i % 10 == 0 {
            writeln!(
                out,
                r#"{{"type":"assistant","text":"Step {i}: looking at the {} {} next."}}"#,
                r.word(),
                r.word()
            )?;
        }
        let (tool, args) = match r.next() % 4 {
            0 => (
                "read",
                format!(
                    r#"{{"path":"src/{}/{}_{i}.rs","offset":{},"limit":200}}"#,
                    r.word(),
                    r.word(),
                    r.next() % 500
                ),
            ),
            1 => (
                "bash",
                format!(
                    r#"{{"command":"cargo test -p {} -- {}_{i} --nocapture"}}"#,
                    r.word(),
                    r.word()
                ),
            ),
            2 => (
                "grep",
                format!(
                    r#"{{"pattern":"fn {}_{i}","path":"crates/{}"}}"#,
                    r.word(),
                    r.word()
                ),
            ),
            _ => (
                "edit",
                format!(
                    r#"{{"path":"src/{}.rs","old":"let {} = {i};","new":"let {} = {};"}}"#,
                    r.word(),
                    r.word(),
                    r.word(),
                    r.next() % 1000
                ),
            ),
        };
        writeln!(
            out,
            r#"{{"type":"tool_call","id":"call_{i}","tool":"{tool}","args":{args}}}"#
        )?;
        let err = r.next() % 17 == 0;
        writeln!(
            out,
            r#"{{"type":"tool_result","id":"call_{i}","tool":"{tool}","content":"{} {} {} (run {i}, {} ms)\n{} {} {} {} {}\nline {} of {}: ok","is_error":{err},"images":0}}"#,
            r.word(),
            r.word(),
            r.word(),
            r.next() % 10_000,
            r.word(),
            r.word(),
            r.word(),
            r.word(),
            r.word(),
            r.next() % 300,
            r.next() % 900 + 300,
        )?;
    }
    Ok(())
}
