//! `cargo run --release -p loopguard-scan --example gen-stream -- N OUT`: writes the synthetic
//! tool-heavy stream of N call/result pairs to OUT (see `loopguard_scan::synthetic`).

use std::io::Write;

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(n), Some(out)) = (args.first().and_then(|n| n.parse().ok()), args.get(1)) else {
        eprintln!("usage: gen-stream N OUT");
        return std::process::ExitCode::from(2);
    };
    let write = || -> std::io::Result<()> {
        let mut f = std::io::BufWriter::new(std::fs::File::create(out)?);
        loopguard_scan::synthetic::write_tool_stream(n, &mut f)?;
        f.flush()
    };
    match write() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen-stream: {out}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
