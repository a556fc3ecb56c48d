//! `models/*`: the `.pt2` runner on the exported programs of
//! `conformance/data/models/` (copies of the shared exported models), load
//! excluded, on their shared inputs: `models/NAME/t1` and `/t2` on a
//! `rayon` pool of 1 and 2 threads, for NAME in `mlp`, `cnn`, `attention`.
//!
//! The anchor is PyTorch eager on the same archives (`ep.module()(*inputs)`
//! under `inference_mode`, `benches/scripts/bench_pt2.py`, a copy of the
//! shared harness's script). When the
//! environment variable `TORCH_PY` names a Python with `torch` and
//! `safetensors`, the bench runs that script first and prints its rows, so
//! both figures come from one run: `TORCH_PY=venv/bin/python cargo bench
//! -p benches --bench models`.

// criterion_group! generates undocumented items.
#![allow(missing_docs)]

mod support;

use std::path::PathBuf;

use aten::c10::TensorBase;
use aten::fx::export::{load_safetensors, ExportedProgram};
use criterion::{criterion_group, criterion_main, Criterion};
use support::pool_of;

fn models_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../conformance/data/models")
}

/// PyTorch's figures for the same programs, when `TORCH_PY` is set.
fn pytorch_anchor() {
    let Ok(python) = std::env::var("TORCH_PY") else {
        return;
    };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/bench_pt2.py");
    match std::process::Command::new(python)
        .arg(&script)
        .arg(models_dir())
        .output()
    {
        Ok(out) if out.status.success() => {
            println!("PyTorch eager (bench_pt2.py), median us/call:");
            print!("{}", String::from_utf8_lossy(&out.stdout));
        }
        Ok(out) => eprintln!(
            "bench_pt2.py failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => eprintln!("cannot run {}: {e}", script.display()),
    }
}

fn bench(c: &mut Criterion) {
    pytorch_anchor();
    aten::dispatcher();
    let dir = models_dir();
    let mut g = c.benchmark_group("models");
    for name in ["mlp", "cnn", "attention"] {
        let program = match ExportedProgram::load(dir.join(format!("{name}.pt2"))) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("models/{name}: skipped: {e}");
                continue;
            }
        };
        let inputs: Vec<TensorBase> =
            load_safetensors(dir.join(format!("{name}.inputs.safetensors")))
                .unwrap()
                .into_iter()
                .map(|(_, t)| t)
                .collect();
        for threads in [1, 2] {
            let pool = pool_of(threads);
            g.bench_function(format!("{name}/t{threads}"), |b| {
                pool.install(|| b.iter(|| program.run(&inputs).unwrap()))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
