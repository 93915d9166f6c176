//! Canonical JSON: any text either fails to parse with an error or fingerprints; the canonical
//! form parses back to the same canonical form.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
        let canon = loopguard_core::canonical_json(&v);
        let back: serde_json::Value = serde_json::from_str(&canon).expect("canonical JSON parses");
        assert_eq!(loopguard_core::canonical_json(&back), canon);
        assert_eq!(loopguard_core::args_fingerprint(&back), loopguard_core::args_fingerprint(&v));
    }
    let _ = loopguard_core::args_fingerprint_str(text);
});
