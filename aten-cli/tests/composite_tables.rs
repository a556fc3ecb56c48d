//! The dispatch tables of the project's composite operators against
//! PyTorch 2.15's (`aten_dispatch_tables.jsonl`, copied into
//! `conformance/data/`): for every operator this project registers kernels
//! for whose PyTorch CPU slot holds a composite kernel, the rule that fills each
//! backend slot (`Undefined`, `CPU`, `CUDA`, `Meta`) must be PyTorch's:
//! `[math kernel]` for CompositeImplicitAutograd, `[default backend
//! kernel]` for CompositeExplicitAutograd, `[kernel]` for a backend's own.
//! Slots PyTorch fills with a backend this project does not build (CUDA
//! kernels) are skipped.

use std::collections::BTreeMap;
use std::path::PathBuf;

use aten::boxing::schema::OperatorName;
use aten::dispatch::Dispatcher;

const KEYS: &[&str] = &["Undefined", "CPU", "CUDA", "Meta"];

/// Operators this project registers as CPU and Meta kernels where PyTorch
/// decomposes them (its `CompositeExplicitAutograd` wrappers call out
/// variants this project does not define yet). Printed, not failed; an
/// entry is removed when the operator is registered as PyTorch's.
const KNOWN_DIFFERENCES: &[&str] = &[];

/// `key -> [tag]` from a computed-table dump.
fn our_tags(dump: &str) -> BTreeMap<String, String> {
    dump.lines()
        .filter_map(|line| {
            let (key, rest) = line.split_once(": ")?;
            let tag = rest.rsplit_once(" [")?.1.trim_end_matches(']');
            Some((key.to_string(), tag.to_string()))
        })
        .collect()
}

#[test]
fn composite_operators_fill_slots_by_pytorchs_rules() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/data/aten_dispatch_tables.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let d = Dispatcher::global();
    let mut checked = Vec::new();
    let mut mismatches = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let record: serde_json::Value = serde_json::from_str(line).expect("valid json");
        let op = record["op"].as_str().expect("op name");
        let (name, overload) = op.split_once('.').unwrap_or((op, ""));
        let Some(handle) = d.find_schema(&OperatorName::new(name, overload)) else {
            continue;
        };
        // Operators defined without kernels (the rest of PyTorch's surface)
        // have tables of fallbacks alone.
        let kernels = aten_cli::registry::kernels(handle.operator_name()).unwrap_or_default();
        if kernels == aten_cli::registry::Kernels::default() {
            continue;
        }
        let entries = &record["entries"];
        let origin = |key: &str| entries[key].as_str().unwrap_or("").to_string();
        if !origin("CPU").starts_with("Composite") {
            continue;
        }
        let ours = our_tags(&handle.dump_computed_table());
        for key in KEYS {
            let theirs = origin(key);
            let Some((who, tag)) = theirs.rsplit_once(" [") else {
                continue;
            };
            if !(who.starts_with("Composite") || who == "CPU" || who == "Meta") {
                continue;
            }
            let tag = tag.trim_end_matches(']');
            let mine = ours.get(*key).map(String::as_str).unwrap_or("(empty)");
            if mine != tag && KNOWN_DIFFERENCES.contains(&op) {
                println!("known difference: {op} at {key}: PyTorch [{tag}], ours [{mine}]");
            } else if mine != tag {
                mismatches.push(format!(
                    "{op} at {key}: PyTorch [{tag}] ({who}), ours [{mine}]"
                ));
            }
        }
        checked.push(op.to_string());
    }
    println!(
        "{} composite operators checked: {}",
        checked.len(),
        checked.join(" ")
    );
    assert!(
        checked.len() >= 40,
        "too few composite operators found: {checked:?}"
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
