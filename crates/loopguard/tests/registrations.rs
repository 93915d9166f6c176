//! What every built-in registration declares holds together: its documented options are exactly
//! the keys its table accepts, its preset tables and environment variables name accepted keys,
//! and its renamed keys lead to accepted ones.

use std::collections::BTreeSet;

fn top(key: &str) -> &str {
    key.split('.').next().unwrap_or(key)
}

#[test]
fn documented_options_are_exactly_the_accepted_keys() {
    for reg in loopguard::builtin() {
        let accepted = reg
            .accepted_keys()
            .unwrap_or_else(|| panic!("{}: the constructor does not list its keys", reg.name));
        let accepted: BTreeSet<String> = accepted.into_iter().collect();
        let documented: BTreeSet<String> = reg.options.iter().map(|o| o.name.to_owned()).collect();
        check(reg.name, "", &accepted, &documented);
        // An inner table documents its keys in its type: `table {a, b, c}`.
        for o in reg.options {
            let Some(list) =
                o.ty.strip_prefix("table {")
                    .and_then(|t| t.strip_suffix('}'))
            else {
                continue;
            };
            let documented: BTreeSet<String> =
                list.split(',').map(|k| k.trim().to_owned()).collect();
            let accepted: BTreeSet<String> = reg
                .accepted_keys_in(o.name)
                .unwrap_or_else(|| panic!("{}.{}: the keys are not listed", reg.name, o.name))
                .into_iter()
                .collect();
            check(reg.name, o.name, &accepted, &documented);
        }
    }
}

fn check(name: &str, table: &str, accepted: &BTreeSet<String>, documented: &BTreeSet<String>) {
    {
        let reg_name = if table.is_empty() {
            name.to_owned()
        } else {
            format!("{name}.{table}")
        };
        let undocumented: Vec<_> = accepted.difference(documented).collect();
        let unknown: Vec<_> = documented.difference(accepted).collect();
        assert!(
            undocumented.is_empty() && unknown.is_empty(),
            "{reg_name}: accepted but not documented {undocumented:?}; documented but not accepted {unknown:?}"
        );
    }
}

#[test]
fn declared_keys_are_accepted_keys() {
    for reg in loopguard::builtin() {
        let accepted: BTreeSet<String> = reg
            .accepted_keys()
            .unwrap_or_default()
            .into_iter()
            .chain(["enabled".to_owned()])
            .collect();
        for e in reg.env {
            assert!(
                accepted.contains(top(e.key)),
                "{}: {} -> {}",
                reg.name,
                e.var,
                e.key
            );
        }
        for (from, to) in reg.openclaw.keys {
            assert!(accepted.contains(top(to)), "{}: {from} -> {to}", reg.name);
        }
        for r in reg.renamed {
            assert!(
                accepted.contains(top(r.new)),
                "{}: {} -> {}",
                reg.name,
                r.old,
                r.new
            );
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
