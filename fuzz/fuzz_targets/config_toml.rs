//! Configuration parsing never panics, and a parsed config resolves and builds or fails with
//! an error.
#![no_main]
use libfuzzer_sys::fuzz_target;
use loopguard_core::Config;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(config) = Config::from_toml_str(text, Some("fuzz.toml")) {
        if let Ok(resolved) = loopguard::orchestrator::resolve(&config) {
            let _ = loopguard::orchestrator::Guard::builder().config(resolved).build();
        }
    }
});
