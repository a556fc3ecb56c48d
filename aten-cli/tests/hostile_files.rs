//! Seeded mutations of real files through the readers users reach: `.pt2`
//! archives (`aten run`), safetensors files (`--inputs`) and operator
//! records (`aten conform ops`). Every mutation must end in a result or a
//! clear error: no panic (a caught kernel panic counts too), no abort.
//!
//! The set here is fixed (seeded), small enough for CI. A longer campaign
//! runs the same mutators with more cases and another seed:
//!
//! ```sh
//! ATEN_FUZZ_CASES=1000000 ATEN_FUZZ_SEED=7 \
//!     cargo test --release -p aten-cli --test hostile_files -- --nocapture
//! ```
//!
//! (run it under `ulimit -v 4194304` to catch allocations sized by the
//! file rather than by what it holds).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use aten::fx::export::{parse_safetensors, ExportedProgram};
use aten_cli::conform::ops;

fn data(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/data")
        .join(path)
}

/// Cases per reader: `ATEN_FUZZ_CASES`, or `default`.
fn cases(default: usize) -> usize {
    std::env::var("ATEN_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The campaign's seed: `ATEN_FUZZ_SEED`, or a fixed one.
fn seed() -> u64 {
    std::env::var("ATEN_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_1234)
}

/// xorshift64*: a small deterministic generator, so that a failing case is
/// reproduced by its seed and index.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Values that break size and offset arithmetic, little-endian.
const INTERESTING: [u64; 8] = [
    0,
    1,
    u64::MAX,
    i64::MAX as u64,
    1 << 31,
    1 << 32,
    1 << 62,
    0x8000_0000_0000_0000,
];

/// One mutation of `bytes`: a byte flipped, a cut, a range repeated or
/// removed, 8 bytes overwritten by an interesting value, or a digit of a
/// number in text changed.
fn mutate(bytes: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let len = out.len().max(1);
    match rng.below(6) {
        0 => {
            let at = rng.below(len);
            if let Some(b) = out.get_mut(at) {
                *b ^= (rng.below(255) + 1) as u8;
            }
        }
        1 => out.truncate(rng.below(len)),
        2 => {
            let start = rng.below(len);
            let end = (start + 1 + rng.below(64)).min(out.len());
            let copy = out[start.min(out.len())..end].to_vec();
            let at = start.min(out.len());
            out.splice(at..at, copy);
        }
        3 => {
            let start = rng.below(len).min(out.len());
            let end = (start + 1 + rng.below(64)).min(out.len());
            out.drain(start..end);
        }
        4 => {
            let at = rng.below(len);
            let value = INTERESTING[rng.below(INTERESTING.len())].to_le_bytes();
            for (k, b) in value.iter().enumerate() {
                if let Some(slot) = out.get_mut(at + k) {
                    *slot = *b;
                }
            }
        }
        _ => {
            // A digit of the text becomes another one (sizes, offsets,
            // indices in JSON).
            let digits: Vec<usize> = (0..out.len())
                .filter(|&i| out[i].is_ascii_digit())
                .collect();
            if !digits.is_empty() {
                let at = digits[rng.below(digits.len())];
                out[at] = b'0' + rng.below(10) as u8;
            }
        }
    }
    out
}

/// Runs `f`; a panic fails the test, naming the case.
fn no_panic(what: &str, case: usize, f: impl FnOnce()) {
    if catch_unwind(AssertUnwindSafe(f)).is_err() {
        panic!("{what}: case {case} (seed {}) panicked", seed());
    }
}

#[test]
fn mutated_archives_load_and_run_or_fail_cleanly() {
    let archive = std::fs::read(data("models/mlp.pt2")).unwrap();
    let inputs: Vec<_> = parse_safetensors(
        &std::fs::read(data("models/mlp.inputs.safetensors")).unwrap(),
        "inputs",
    )
    .unwrap()
    .into_iter()
    .map(|(_, t)| t)
    .collect();
    let mut rng = Rng::new(seed());
    let (mut loaded, mut ran) = (0, 0);
    for case in 0..cases(150) {
        let bytes = mutate(&archive, &mut rng);
        no_panic("archive", case, || {
            if let Ok(program) = ExportedProgram::from_bytes(bytes, "mutated.pt2") {
                loaded += 1;
                if program.run(&inputs).is_ok() {
                    ran += 1;
                }
            }
        });
    }
    println!("archives: {loaded} loaded, {ran} ran");
}

#[test]
fn mutated_safetensors_files_parse_or_fail_cleanly() {
    let file = std::fs::read(data("models/cnn.inputs.safetensors")).unwrap();
    let mut rng = Rng::new(seed() ^ 0x5afe);
    let mut parsed = 0;
    for case in 0..cases(400) {
        let bytes = mutate(&file, &mut rng);
        no_panic("safetensors", case, || {
            parsed += usize::from(parse_safetensors(&bytes, "mutated").is_ok());
        });
    }
    println!("safetensors: {parsed} parsed");
}

#[test]
fn mutated_operator_records_run_or_fail_cleanly() {
    let text = std::fs::read_to_string(data("ops_golden.jsonl")).unwrap();
    // Small records: their mutations stay small too.
    let records: Vec<&str> = text.lines().filter(|l| l.len() < 1500).take(120).collect();
    assert!(!records.is_empty());
    let mut rng = Rng::new(seed() ^ 0x0b5);
    let mut caught = Vec::new();
    for case in 0..cases(600) {
        let record = records[rng.below(records.len())];
        let bytes = mutate(record.as_bytes(), &mut rng);
        let line = String::from_utf8_lossy(&bytes).into_owned();
        no_panic("record", case, || {
            let outcome = ops::run_record(case + 1, &line);
            if outcome.output.contains("panic while running") {
                caught.push(format!("{line}\n  -> {}", outcome.output));
            }
        });
    }
    assert!(caught.is_empty(), "kernel panics:\n{}", caught.join("\n"));
}
