//! Key tables and key-set queries against the PyTorch 2.15 oracle data
//! copied into `conformance/data/`.

use std::path::PathBuf;

use aten_cli::conform;

fn data(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/data")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_key_matches_dispatch_keys_json() {
    let report = conform::keys::run(&data("dispatch_keys.json")).unwrap();
    let tally = report.tally.unwrap();
    assert!(report.failures.is_empty(), "{:#?}", report.failures);
    // 155 keys, one per absent-key check, 6 aliases, 136 runtime keys x 2,
    // plus the global facts: the run really checked everything.
    assert!(tally.passed > 155 * 2 + 6 + 136 * 2, "{tally}");
}

#[test]
fn every_query_matches_keyset_queries_jsonl() {
    let input = data("keyset_queries.jsonl");
    let (lines, report) = conform::keysets::run(&input);
    assert_eq!(lines.len(), input.lines().count());
    assert!(
        report.failures.is_empty(),
        "{:#?}",
        &report.failures[..report.failures.len().min(5)]
    );
    assert_eq!(report.tally.unwrap().passed, 3000);
}
