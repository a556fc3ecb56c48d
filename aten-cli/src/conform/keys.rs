//! `aten conform keys FILE`: the key table against a file in the format of
//! `dispatch_keys.json` (every key's value, name, single-key set and alias
//! flag; the runtime keys of each alias key; `FULL_AFTER` and
//! `getBackendKeySetFromAutograd` per runtime key; the full set).

use std::collections::BTreeSet;

use aten::c10::dispatch_key_set::{get_backend_key_set_from_autograd, is_included_in_alias};
use aten::c10::NUM_BACKENDS;
use aten::{DispatchKey, DispatchKeySet};
use serde_json::Value;

use super::Report;
use crate::json::{str_field, u64_field};

/// Checks every fact of the file; `Err` when the file is not in the format.
pub fn run(input: &str) -> Result<Report, String> {
    let doc: Value = serde_json::from_str(input).map_err(|e| e.to_string())?;
    let mut report = Report::default();

    let num_backends = u64_field(&doc, "num_backends")?;
    report.check(num_backends == u64::from(NUM_BACKENDS), || {
        format!("num_backends: expected {num_backends}, have {NUM_BACKENDS}")
    });

    check_keys(&doc, &mut report)?;
    check_aliases(&doc, &mut report)?;
    check_runtime_keys(&doc, &mut report)?;

    let full = DispatchKeySet::FULL;
    let repr = u64_field(&doc, "full_keyset_repr")?;
    report.check(repr == full.raw_repr(), || {
        format!(
            "full_keyset_repr: expected {repr}, have {}",
            full.raw_repr()
        )
    });
    let string = str_field(&doc, "full_keyset_string")?;
    report.check(string == full.to_string(), || {
        format!("full_keyset_string: expected {string}, have {full}")
    });
    Ok(report)
}

fn check_keys(doc: &Value, report: &mut Report) -> Result<(), String> {
    let keys = doc
        .get("keys")
        .and_then(Value::as_array)
        .ok_or("missing list `keys`")?;
    let mut listed = BTreeSet::new();
    for entry in keys {
        let value = u64_field(entry, "value")?;
        let name = str_field(entry, "name")?;
        let repr = u64_field(entry, "keyset_repr")?;
        let is_alias = entry
            .get("is_alias")
            .and_then(Value::as_bool)
            .ok_or("missing bool `is_alias`")?;
        listed.insert(value);
        let Some(key) = u8::try_from(value).ok().and_then(DispatchKey::from_u8) else {
            report.check(false, || {
                format!("key {value} ({name}) does not exist here")
            });
            continue;
        };
        let ok = key.name() == name
            && DispatchKeySet::from_key(key).raw_repr() == repr
            && key.is_alias() == is_alias;
        report.check(ok, || {
            format!(
                "key {value}: expected {name} repr {repr} alias {is_alias}, have {} repr {} alias {}",
                key.name(),
                DispatchKeySet::from_key(key).raw_repr(),
                key.is_alias()
            )
        });
    }
    // Every key here must be in the file (the file leaves out only the
    // EndOfFunctionalityKeys marker, which is not a key).
    for key in DispatchKey::all().filter(|k| *k != DispatchKey::EndOfFunctionalityKeys) {
        let present = listed.contains(&u64::from(key.as_u8()));
        report.check(present, || {
            format!("key {} ({key}) is not in the file", key.as_u8())
        });
    }
    Ok(())
}

fn check_aliases(doc: &Value, report: &mut Report) -> Result<(), String> {
    let aliases = doc
        .get("alias_to_runtime_keys")
        .and_then(Value::as_object)
        .ok_or("missing object `alias_to_runtime_keys`")?;
    for (name, expected) in aliases {
        let alias = DispatchKey::parse(name).map_err(|e| e.to_string())?;
        let expected: Vec<&str> = expected
            .as_array()
            .ok_or("alias entry is not a list")?
            .iter()
            .filter_map(Value::as_str)
            .collect();
        // Listed in enum order, as the oracle does.
        let have: Vec<&str> = DispatchKey::all()
            .filter(|k| k.is_runtime() && is_included_in_alias(*k, alias))
            .map(DispatchKey::name)
            .collect();
        report.check(have == expected, || {
            format!("alias {name}: expected {expected:?}, have {have:?}")
        });
    }
    Ok(())
}

fn check_runtime_keys(doc: &Value, report: &mut Report) -> Result<(), String> {
    let per_key = doc
        .get("per_runtime_key")
        .and_then(Value::as_object)
        .ok_or("missing object `per_runtime_key`")?;
    let names: Vec<&str> = per_key.keys().map(String::as_str).collect();
    let have: Vec<&str> = DispatchKeySet::FULL.iter().map(DispatchKey::name).collect();
    let (mut sorted_names, mut sorted_have) = (names.clone(), have.clone());
    sorted_names.sort_unstable();
    sorted_have.sort_unstable();
    report.check(sorted_names == sorted_have, || {
        format!("runtime keys: expected {names:?}, have {have:?}")
    });
    for (name, facts) in per_key {
        let key = DispatchKey::parse(name).map_err(|e| e.to_string())?;
        let full_after = u64_field(facts, "full_after_repr")?;
        let have = DispatchKeySet::full_after(key).raw_repr();
        report.check(full_after == have, || {
            format!("FULL_AFTER({name}): expected {full_after}, have {have}")
        });
        let backends = str_field(facts, "backend_keyset_from_autograd")?;
        let have = get_backend_key_set_from_autograd(key).to_string();
        report.check(backends == have, || {
            format!("getBackendKeySetFromAutograd({name}): expected {backends}, have {have}")
        });
    }
    Ok(())
}
