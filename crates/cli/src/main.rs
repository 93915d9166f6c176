//! The `loopguard` command. See the crate README for the commands and the scan report.

use std::process::ExitCode;

fn main() -> ExitCode {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let code = loopguard_cli::run(std::env::args_os(), &mut stdout.lock(), &mut stderr.lock());
    ExitCode::from(code)
}
