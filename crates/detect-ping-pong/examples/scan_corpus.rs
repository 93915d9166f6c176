//! Prints every `ping-pong` finding (default settings) on the given corpus sessions:
//! `cargo run -p loopguard-detect-ping-pong --example scan_corpus -- DIR FILE...`.

use loopguard_detect_ping_pong::{PingPong, Settings};
use loopguard_testkit::corpus::{events, replay};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: scan_corpus DIR FILE...");
        std::process::exit(2);
    };
    let dir = std::path::Path::new(&dir);
    for file in args {
        let path = dir.join(&file);
        if !path.is_file() {
            eprintln!("cannot read {}", path.display());
            continue;
        }
        let detector = Box::new(PingPong::new(Settings::default()));
        for (line, f) in replay(detector, &events(dir, &file)) {
            println!(
                "{file}:{line}: {} count {} {}",
                f.level.as_str(),
                f.count,
                f.message
            );
        }
    }
}
