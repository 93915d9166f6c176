//! What every built-in registration declares holds together: its documented options are exactly
//! the keys its table accepts (inner tables included, old spellings of renamed keys aside), and
//! its preset tables, environment variables, OpenClaw mapping and renamed keys name accepted
//! keys.

use loopguard::Registration;
use std::collections::BTreeSet;

fn top(key: &str) -> &str {
    key.split('.').next().unwrap_or(key)
}

/// The keys of the table at `table` (empty: the detector's own) that the options accept,
/// without the old spellings of renamed keys.
fn current(reg: &Registration, table: &str) -> BTreeSet<String> {
    reg.current_keys_in(table)
        .unwrap_or_else(|| panic!("{}: the table `{table}` does not list its keys", reg.name))
}

#[test]
fn documented_options_are_exactly_the_accepted_keys() {
    for reg in loopguard::builtin() {
        let tops = reg.documented_tops();
        assert_eq!(current(reg, ""), tops, "{}", reg.name);
        for table in &tops {
            // Every key that is a table: its accepted keys are its documented ones (a table
            // whose keys are undocumented fails here).
            if let Some(accepted) = reg.current_keys_in(table) {
                let inner = reg.documented_keys_in(table);
                assert_eq!(accepted, inner, "{}.{table}", reg.name);
            }
        }
    }
}

#[test]
fn declared_keys_are_accepted_keys() {
    for reg in loopguard::builtin() {
        let accepted: BTreeSet<String> = current(reg, "")
            .into_iter()
            .chain(["enabled".to_owned()])
            .collect();
        // Every key a name maps to (from an env variable, an OpenClaw key or an old key) is
        // accepted.
        let maps_to_accepted = |from: &str, to: &str| {
            assert!(accepted.contains(top(to)), "{}: {from} -> {to}", reg.name);
        };
        for e in reg.env {
            maps_to_accepted(e.var, e.key);
        }
        for (from, to) in reg.openclaw.keys {
            maps_to_accepted(from, to);
        }
        for r in reg.renamed {
            maps_to_accepted(r.old, r.new);
        }
        for p in reg.presets {
            let table = reg
                .preset_table(p.preset)
                .and_then(Result::ok)
                .unwrap_or_else(|| panic!("{}: preset {} parses", reg.name, p.preset));
            for k in table.keys() {
                assert!(
                    accepted.contains(k),
                    "{}: preset {}: {k}",
                    reg.name,
                    p.preset
                );
            }
        }
    }
}
