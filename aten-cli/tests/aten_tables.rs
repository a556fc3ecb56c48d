//! The dispatch tables of every operator this project registers kernels
//! for in the `aten` namespace against PyTorch 2.15's (`aten_dispatch_tables.jsonl`,
//! copied into `conformance/data/`): at `Undefined`, `CPU`, `Meta`, the
//! autograd keys `AutogradCPU` and `AutogradOther`, and `ADInplaceOrView`,
//! the rule that fills the slot (`[kernel]`, `[default backend kernel]` and
//! which alias key gave it, `[autograd kernel]`, `[math kernel]`,
//! `[backend fallback]`, empty) must be PyTorch's. Structured families get
//! theirs from the generated Meta and
//! `CompositeExplicitAutogradNonFunctional` kernels, the autograd keys from
//! the generated Autograd kernels (every operator without a
//! CompositeImplicitAutograd kernel) and ADInplaceOrView from the generated
//! kernels of in-place, `out=` and view operators.
//!
//! The exceptions are listed below with their reason; an entry that has
//! come to match is reported so that it is removed.

use std::collections::BTreeMap;
use std::path::PathBuf;

use aten::boxing::schema::OperatorName;
use aten::dispatch::Dispatcher;

const KEYS: &[&str] = &[
    "Undefined",
    "CPU",
    "Meta",
    "AutogradCPU",
    "AutogradOther",
    "ADInplaceOrView",
];

/// Meta kernels this project has where PyTorch has none in C++ (its Meta
/// slot is the backend fallback, and Python meta registrations serve Meta
/// tensors): `aten-core`'s Meta kernels of unstructured operators, and the
/// `CPU, Meta` pointwise kernels whose `TensorIterator` serves both.
const EXTRA_META_KERNELS: &[&str] = &[
    "aten::_adaptive_avg_pool2d",
    "aten::_adaptive_avg_pool2d_backward",
    "aten::_adaptive_avg_pool3d",
    "aten::_cdist_forward",
    "aten::_embedding_bag",
    "aten::_fft_c2r",
    "aten::_fft_r2c",
    "aten::_native_batch_norm_legit",
    "aten::_native_batch_norm_legit.no_stats",
    "aten::_pdist_forward",
    "aten::_slow_conv2d_forward",
    "aten::abs.out",
    "aten::col2im",
    "aten::dot",
    "aten::embedding_dense_backward",
    "aten::flip",
    "aten::grid_sampler_2d",
    "aten::hardtanh",
    "aten::index_select",
    "aten::isnan",
    "aten::logical_and.out",
    "aten::logical_not.out",
    "aten::logical_or.out",
    "aten::logical_xor.out",
    "aten::max_pool3d_with_indices",
    "aten::native_batch_norm",
    "aten::native_dropout",
    "aten::native_group_norm_backward",
    "aten::native_layer_norm_backward",
    "aten::prod",
    "aten::randperm.generator_out",
    "aten::reflection_pad2d",
    "aten::relu",
    "aten::slow_conv_dilated2d",
    "aten::var.correction",
    "aten::where.self",
];

/// Slots where PyTorch's rule follows from kernels this project does not
/// have: `narrow` and `chunk` are CompositeImplicitAutograd here as there,
/// but PyTorch also gives them NestedTensor kernels, which make torchgen
/// treat them as abstract and generate their ADInplaceOrView kernels
/// (nested tensors do not exist here).
const OTHER_EXCEPTIONS: &[(&str, &str)] = &[
    ("aten::narrow", "ADInplaceOrView"),
    ("aten::chunk", "ADInplaceOrView"),
];

/// `key -> rule` of a computed-table dump: the tag, and for a
/// default-backend kernel the alias key that gave it.
fn our_rules(table: &str, registrations: &str) -> BTreeMap<String, String> {
    let default_backend = [
        "CompositeExplicitAutogradNonFunctional",
        "CompositeExplicitAutograd",
    ]
    .into_iter()
    .find(|alias| registrations.contains(&format!("\n{alias}[alias]: ")))
    .unwrap_or("?");
    table
        .lines()
        .filter_map(|line| {
            let (key, rest) = line.split_once(": ")?;
            let tag = rest.rsplit_once(" [")?.1.trim_end_matches(']');
            let rule = if tag == "default backend kernel" {
                format!("{default_backend} [{tag}]")
            } else {
                format!("[{tag}]")
            };
            Some((key.to_string(), rule))
        })
        .collect()
}

/// PyTorch's rule for a slot: `who [tag]` reduced as [`our_rules`] does.
fn their_rule(entry: &str) -> String {
    match entry.rsplit_once(" [") {
        Some((who, tag)) if tag == "default backend kernel]" => format!("{who} [{tag}"),
        Some((_, tag)) => format!("[{tag}"),
        None => "(empty)".to_string(),
    }
}

#[test]
fn aten_operators_fill_their_slots_as_pytorch() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/data/aten_dispatch_tables.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let d = Dispatcher::global();
    let (mut checked, mut mismatches, mut now_matching) = (0, Vec::new(), Vec::new());
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
        checked += 1;
        let ours = our_rules(&handle.dump_computed_table(), &handle.dump_state());
        let excepted = EXTRA_META_KERNELS.contains(&op);
        let mut differs = false;
        for key in KEYS {
            let theirs = record["entries"][key]
                .as_str()
                .map_or("(empty)".to_string(), their_rule);
            let mine = ours
                .get(*key)
                .cloned()
                .unwrap_or_else(|| "(empty)".to_string());
            if mine != theirs {
                let excepted =
                    (excepted && *key == "Meta") || OTHER_EXCEPTIONS.contains(&(op, *key));
                differs |= excepted;
                if !excepted {
                    mismatches.push(format!("{op} at {key}: PyTorch {theirs}, ours {mine}"));
                }
            }
        }
        if excepted && !differs {
            now_matching.push(op.to_string());
        }
    }
    println!("{checked} aten operators checked");
    assert!(checked >= 250, "too few operators found: {checked}");
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    assert!(
        now_matching.is_empty(),
        "these operators match PyTorch now; remove them from the exceptions: {now_matching:?}"
    );
}
