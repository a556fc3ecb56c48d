//! `aten bench MODEL.pt2 --inputs IN.safetensors`: the latency of an
//! exported program, measured the way model-runner users expect
//! (ONNX Runtime's `onnxruntime_perf_test`, OpenVINO's `benchmark_app`) and
//! the way the peer harness (`perf/peers/bench_peers.py`) times ONNX
//! Runtime, OpenVINO and inductor, so that its rows line up with theirs.
//!
//! One *cell* is one size of the program's inputs at one thread count:
//!
//! 1. the archive is loaded afresh and called once; load plus that call is
//!    the first run (`first_run_s`), the call alone `first_call_s`; the
//!    first outputs are compared with the expected ones when a file of
//!    them is known;
//! 2. untimed calls for at least the warm-up time (and at least 3) give
//!    the cost of one call, from which the batch size `k` is set so that
//!    a batch lasts about `rep_ms` (or `k` is `--iters`);
//! 3. each of `rounds` reps makes a few untimed calls and then times a
//!    batch of `k` calls; the latency figures are the median, the p90
//!    (interpolated between reps) and the minimum of the batch means.
//!
//! The operators (and `torch.ops`) are registered before the first cell,
//! as the peers' imports happen before theirs; that one-time cost is
//! reported apart (`startup_s`). Peak resident memory (the process's
//! high-water mark) is read after the
//! first cell, which is the base size at the first thread count, as the
//! harness's fresh-process workers do. A cell runs on a `rayon` pool of its
//! thread count, the pool every intra-op loop of the kernels uses.

use std::path::{Path, PathBuf};
use std::time::Instant;

use aten::fx::export::{ExportedProgram, LoadOptions, LoadPhases};
use aten::fx::interpreter::NodeProfile;
use serde_json::Value;

use crate::conform::models::{
    compare_outputs, numbered, other_sizes, tolerances, Tolerance, Tolerances,
};
use crate::json::OrderedObject;
use crate::panic_guard::guarded;
use crate::run::program_inputs;

/// What to measure and how.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// The `.pt2` archive.
    pub model: PathBuf,
    /// The base size's inputs (`NAME.inputs.safetensors`).
    pub inputs: PathBuf,
    /// The base size's expected outputs; by default `NAME.expected.safetensors`
    /// beside the inputs, when it exists.
    pub expected: Option<PathBuf>,
    /// The sizes to time: `base` and `SIZE` for each
    /// `NAME.SIZE.inputs.safetensors` beside the inputs; `all` is every size
    /// there is.
    pub sizes: Vec<String>,
    /// The thread counts, each its own cell.
    pub threads: Vec<usize>,
    /// Timed batches per cell.
    pub rounds: usize,
    /// How long a batch should last, in milliseconds.
    pub rep_ms: f64,
    /// The calls per batch, instead of sizing batches by `rep_ms`.
    pub iters: Option<usize>,
    /// The least time of untimed calls before timing, in milliseconds.
    pub warmup_ms: f64,
    /// How the archive is prepared (constant folding on or off).
    pub load: LoadOptions,
    /// Profile each cell's nodes and report this many of the slowest.
    pub profile: Option<usize>,
}

impl BenchOptions {
    /// The harness's defaults for `model` on `inputs`: the base size at 1
    /// thread, 15 batches of about 40 ms after 200 ms of warm-up.
    pub fn new(model: PathBuf, inputs: PathBuf) -> BenchOptions {
        BenchOptions {
            model,
            inputs,
            expected: None,
            sizes: vec!["base".into()],
            threads: vec![1],
            rounds: 15,
            rep_ms: 40.0,
            iters: None,
            warmup_ms: 200.0,
            load: LoadOptions::default(),
            profile: None,
        }
    }
}

/// One size's files.
#[derive(Clone, Debug)]
struct SizeFiles {
    label: String,
    inputs: PathBuf,
    expected: Option<PathBuf>,
}

/// Latency figures over a cell's batches, in microseconds per call.
#[derive(Clone, Debug, PartialEq)]
pub struct Latency {
    /// The median of the batch means.
    pub median_us: f64,
    /// Their 90th percentile, interpolated between batches.
    pub p90_us: f64,
    /// The fastest batch's mean.
    pub min_us: f64,
    /// How many batches were timed.
    pub reps: usize,
    /// Calls per batch.
    pub iters_per_rep: usize,
}

/// The `q`-quantile (0 to 1) of sorted `values`, interpolated linearly
/// between neighbours (numpy's default, Python's `quantiles(method =
/// "inclusive")`).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        n => {
            let at = q * (n - 1) as f64;
            let lo = at.floor() as usize;
            let hi = (lo + 1).min(n - 1);
            sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo as f64)
        }
    }
}

impl Latency {
    /// The figures of batch means `samples_us` with `iters_per_rep` calls
    /// each.
    pub fn of(samples_us: &[f64], iters_per_rep: usize) -> Latency {
        let mut sorted = samples_us.to_vec();
        sorted.sort_by(f64::total_cmp);
        Latency {
            median_us: quantile(&sorted, 0.5),
            p90_us: quantile(&sorted, 0.9),
            min_us: sorted.first().copied().unwrap_or(f64::NAN),
            reps: sorted.len(),
            iters_per_rep,
        }
    }
}

/// Times `call` as one cell's steps 2 and 3 (see the module docs).
pub fn time_calls(
    mut call: impl FnMut() -> Result<(), String>,
    options: &BenchOptions,
) -> Result<Latency, String> {
    let warmup = (options.warmup_ms.max(options.rep_ms) / 1e3).max(0.0);
    let start = Instant::now();
    let mut calls = 0usize;
    while calls < 3 || start.elapsed().as_secs_f64() < warmup {
        call()?;
        calls += 1;
    }
    let per_call = start.elapsed().as_secs_f64() / calls as f64;
    let k = options.iters.unwrap_or_else(|| {
        let k = (options.rep_ms / 1e3 / per_call.max(1e-9)).round();
        // At most a million calls per batch: a call that takes no time at
        // all must not make the batch endless.
        (k as usize).clamp(1, 1_000_000)
    });
    let untimed = k.div_ceil(5).max(2);
    let mut samples = Vec::with_capacity(options.rounds);
    for _ in 0..options.rounds.max(1) {
        for _ in 0..untimed {
            call()?;
        }
        let t = Instant::now();
        for _ in 0..k {
            call()?;
        }
        samples.push(t.elapsed().as_secs_f64() / k as f64 * 1e6);
    }
    Ok(Latency::of(&samples, k))
}

/// The process's peak resident memory in MiB (`VmHWM` of
/// `/proc/self/status`), where the system reports it.
pub fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some((kb / 1024.0 * 10.0).round() / 10.0)
}

/// What one cell measured.
#[derive(Clone, Debug)]
pub struct Cell {
    /// `base` or the size's name.
    pub size: String,
    /// The input shapes.
    pub input_shapes: Vec<Vec<i64>>,
    /// The thread count.
    pub threads: usize,
    /// Latency, unless the cell failed.
    pub latency: Option<Latency>,
    /// Load plus the first call, in seconds.
    pub first_run_s: Option<f64>,
    /// The first call alone, in seconds.
    pub first_call_s: Option<f64>,
    /// The load's phases (parse, bind, prepare).
    pub load_phases: Option<LoadPhases>,
    /// Peak resident memory (first cell only).
    pub peak_rss_mb: Option<f64>,
    /// The process's one-time registration of the operators (first cell
    /// only), in seconds.
    pub startup_s: Option<f64>,
    /// The largest difference from the expected outputs, when compared.
    pub max_abs_diff: Option<f64>,
    /// Whether the outputs matched (`None`: nothing to compare with).
    pub matched: Option<bool>,
    /// The tolerance applied to the first output.
    pub tolerance: Option<Tolerance>,
    /// Why the cell failed or its outputs differ.
    pub error: Option<String>,
    /// With `--profile`: each node's mean time and work per call, slowest
    /// first.
    pub profile: Vec<NodeTime>,
}

/// The stem of an inputs file: `dir/NAME` for `dir/NAME.inputs.safetensors`.
fn inputs_stem(inputs: &Path) -> Option<(PathBuf, String)> {
    let file = inputs.file_name()?.to_str()?;
    let stem = file.strip_suffix(".inputs.safetensors")?;
    Some((
        inputs.parent().unwrap_or(Path::new("")).to_path_buf(),
        stem.to_string(),
    ))
}

/// The files of each size `options` names, in its order.
fn size_files(options: &BenchOptions) -> Result<Vec<SizeFiles>, String> {
    let stem = inputs_stem(&options.inputs);
    let sibling = |label: &str, kind: &str| -> Option<PathBuf> {
        let (dir, name) = stem.as_ref()?;
        Some(if label == "base" {
            dir.join(format!("{name}.{kind}.safetensors"))
        } else {
            dir.join(format!("{name}.{label}.{kind}.safetensors"))
        })
    };
    let mut labels = Vec::new();
    for size in &options.sizes {
        if size == "all" {
            labels.push("base".to_string());
            if let Some((dir, name)) = &stem {
                labels.extend(other_sizes(dir, name));
            }
        } else {
            labels.push(size.clone());
        }
    }
    labels.dedup();
    labels
        .into_iter()
        .map(|label| {
            if label == "base" {
                let expected = options
                    .expected
                    .clone()
                    .or_else(|| sibling("base", "expected").filter(|p| p.is_file()));
                return Ok(SizeFiles {
                    label,
                    inputs: options.inputs.clone(),
                    expected,
                });
            }
            let inputs = sibling(&label, "inputs").ok_or_else(|| {
                format!(
                    "--sizes {label}: the inputs file {} is not named NAME.inputs.safetensors, so \
                     its sizes cannot be found",
                    options.inputs.display()
                )
            })?;
            if !inputs.is_file() {
                return Err(format!("--sizes {label}: no file {}", inputs.display()));
            }
            let expected = sibling(&label, "expected").filter(|p| p.is_file());
            Ok(SizeFiles {
                label,
                inputs,
                expected,
            })
        })
        .collect()
}

/// The tolerances `models.json` beside the archive gives the model (the
/// defaults without one).
fn model_tolerances(model: &Path) -> Result<Tolerances, String> {
    let dir = model.parent().unwrap_or(Path::new(""));
    let name = model
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    Ok(tolerances(dir)?.remove(name).unwrap_or_default())
}

/// Measures one cell; an error becomes the cell's `error`.
fn run_cell(options: &BenchOptions, files: &SizeFiles, threads: usize, tol: &Tolerances) -> Cell {
    let mut cell = Cell {
        size: files.label.clone(),
        input_shapes: Vec::new(),
        threads,
        latency: None,
        first_run_s: None,
        first_call_s: None,
        load_phases: None,
        peak_rss_mb: None,
        startup_s: None,
        max_abs_diff: None,
        matched: None,
        tolerance: None,
        error: None,
        profile: Vec::new(),
    };
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool,
        Err(e) => {
            cell.error = Some(format!("cannot start {threads} threads: {e}"));
            return cell;
        }
    };
    let what = format!("{} ({})", options.model.display(), files.label);
    let outcome = guarded(&what, || {
        pool.install(|| measure(options, files, tol, &mut cell))
    });
    if let Err(e) = outcome {
        cell.error = Some(e);
    }
    cell
}

/// Steps 1 to 3 of a cell, filling `cell` as they go.
fn measure(
    options: &BenchOptions,
    files: &SizeFiles,
    tol: &Tolerances,
    cell: &mut Cell,
) -> Result<(), String> {
    let load_start = Instant::now();
    let program =
        ExportedProgram::load_with(&options.model, &options.load).map_err(|e| e.to_string())?;
    cell.load_phases = Some(program.load_phases());
    let args = program_inputs(&program, &files.inputs)?;
    cell.input_shapes = args.iter().map(|t| t.sizes().to_vec()).collect();
    let call_start = Instant::now();
    let outputs = program.run(&args).map_err(|e| e.to_string())?;
    cell.first_call_s = Some(call_start.elapsed().as_secs_f64());
    cell.first_run_s = Some(load_start.elapsed().as_secs_f64());
    if let Some(path) = &files.expected {
        let expected = numbered(path, "output_", program.outputs().len())?;
        cell.tolerance = expected
            .first()
            .and_then(|e| e.dtype())
            .map(|d| tol.for_dtype(d));
        match compare_outputs(&outputs, &expected, tol) {
            Ok(diff) => {
                cell.max_abs_diff = Some(diff);
                cell.matched = Some(true);
            }
            Err(e) => {
                cell.matched = Some(false);
                cell.error = Some(format!("outputs differ from the expected ones: {e}"));
            }
        }
    }
    drop(outputs);
    let latency = time_calls(
        || program.run(&args).map(drop).map_err(|e| e.to_string()),
        options,
    )?;
    if options.profile.is_some() {
        cell.profile = profile_nodes(&program, &args, latency.iters_per_rep.max(1))?;
    }
    cell.latency = Some(latency);
    Ok(())
}

/// One node of a profile: its mean time and work per call.
#[derive(Clone, Debug)]
pub struct NodeTime {
    /// The node's name in the graph.
    pub node: String,
    /// What it calls (`aten::convolution`).
    pub target: String,
    /// Wall time, in microseconds.
    pub us: f64,
    /// Floating-point operations (0 for a call that multiplies no
    /// matrices).
    pub flops: f64,
    /// Bytes of the tensors the call read and wrote.
    pub bytes: f64,
}

/// Each call node's mean wall time and work over `calls` calls, slowest
/// first.
fn profile_nodes(
    program: &ExportedProgram,
    args: &[aten::c10::TensorBase],
    calls: usize,
) -> Result<Vec<NodeTime>, String> {
    let names = program.node_names();
    let mut profile = NodeProfile::new(names.len());
    for _ in 0..calls {
        program
            .run_timed(args, Some(&mut profile))
            .map_err(|e| e.to_string())?;
    }
    let per_call = calls as f64;
    let mut nodes: Vec<NodeTime> = names
        .iter()
        .enumerate()
        .filter_map(|(i, name)| {
            Some(NodeTime {
                node: name.clone(),
                target: program.node_target(i)?,
                us: profile.time[i].as_secs_f64() * 1e6 / per_call,
                flops: profile.flops[i] / per_call,
                bytes: profile.bytes[i] / per_call,
            })
        })
        .collect();
    nodes.sort_by(|a, b| b.us.total_cmp(&a.us));
    Ok(nodes)
}

/// The rate of `work` done in `us` microseconds: GFLOP/s for calls that
/// multiply matrices, else GB/s of the tensors read and written.
fn rate(flops: f64, bytes: f64, us: f64) -> String {
    let us = us.max(1e-9);
    if flops > 0.0 {
        format!("{:7.1} GFLOP/s", flops / us / 1e3)
    } else {
        format!("{:7.1} GB/s   ", bytes / us / 1e3)
    }
}

/// A cell's profile as text: the `top` slowest nodes, then the time per
/// operator, each with its rate to set against the machine's peaks:
/// GFLOP/s for calls that multiply matrices, else GB/s of the tensors read
/// and written.
pub fn describe_profile(cell: &Cell, top: usize) -> String {
    let total: f64 = cell.profile.iter().map(|n| n.us).sum();
    let share = |us: f64| 100.0 * us / total.max(1e-9);
    let mut out = format!(
        "{} t{}: {:.1} us in {} nodes\n",
        cell.size,
        cell.threads,
        total,
        cell.profile.len()
    );
    for n in cell.profile.iter().take(top) {
        out += &format!(
            "  {:10.1} us {:5.1}% {}  {} ({})\n",
            n.us,
            share(n.us),
            rate(n.flops, n.bytes, n.us),
            n.node,
            n.target
        );
    }
    // Per operator: time, calls, operations and bytes.
    let mut per_op: Vec<(String, f64, usize, f64, f64)> = Vec::new();
    for n in &cell.profile {
        match per_op.iter_mut().find(|(t, ..)| *t == n.target) {
            Some(entry) => {
                entry.1 += n.us;
                entry.2 += 1;
                entry.3 += n.flops;
                entry.4 += n.bytes;
            }
            None => per_op.push((n.target.clone(), n.us, 1, n.flops, n.bytes)),
        }
    }
    per_op.sort_by(|a, b| b.1.total_cmp(&a.1));
    out += "  per operator:\n";
    for (target, us, count, flops, bytes) in per_op {
        out += &format!(
            "  {us:10.1} us {:5.1}% {}  {target} x{count}\n",
            share(us),
            rate(flops, bytes, us)
        );
    }
    out
}

/// Measures every cell: each size at each thread count, in that order.
pub fn bench(options: &BenchOptions) -> Result<Vec<Cell>, String> {
    if options.threads.contains(&0) {
        return Err("--threads: a thread count must be at least 1".into());
    }
    let sizes = size_files(options)?;
    let tol = model_tolerances(&options.model)?;
    // The registration of every operator and of `torch.ops` happens once
    // per process, as importing a runtime does; like the peers' imports,
    // it is not part of a first run (it is reported as `startup_s`).
    let startup = Instant::now();
    aten::ops_root();
    let startup_s = startup.elapsed().as_secs_f64();
    let mut cells = Vec::new();
    for files in &sizes {
        for &threads in &options.threads {
            let mut cell = run_cell(options, files, threads, &tol);
            if cells.is_empty() {
                cell.peak_rss_mb = peak_rss_mb();
                cell.startup_s = Some(startup_s);
            }
            cells.push(cell);
        }
    }
    Ok(cells)
}

/// A float as JSON, `null` for none or a value JSON cannot hold.
fn number(x: Option<f64>) -> Value {
    x.and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

/// A cell as a row of the peer harness's format (one object per model,
/// size, runtime and thread count; `runtime` is `aten`).
pub fn row(options: &BenchOptions, cell: &Cell) -> String {
    let model = options
        .model
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let dir = options
        .model
        .parent()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let lat = cell.latency.as_ref();
    OrderedObject::new()
        .field("model", model)
        .field("dir", dir)
        .field("size", cell.size.as_str())
        .field("input_shapes", serde_json::json!(cell.input_shapes))
        .field("dims", Value::Null)
        .field("runtime", "aten")
        .field("threads", cell.threads)
        .field("median_us", number(lat.map(|l| l.median_us)))
        .field("p90_us", number(lat.map(|l| l.p90_us)))
        .field("min_us", number(lat.map(|l| l.min_us)))
        .field("first_run_s", number(cell.first_run_s))
        .field("first_call_s", number(cell.first_call_s))
        .field("prepare_s", Value::Null)
        .field("load_parse_s", number(cell.load_phases.map(|p| p.parse_s)))
        .field("load_bind_s", number(cell.load_phases.map(|p| p.bind_s)))
        .field(
            "load_prepare_s",
            number(cell.load_phases.map(|p| p.prepare_s)),
        )
        .field("peak_rss_mb", number(cell.peak_rss_mb))
        .field("startup_s", number(cell.startup_s))
        .field("ok", cell.error.is_none() && lat.is_some())
        .field("max_abs_diff", number(cell.max_abs_diff))
        .field("rtol", number(cell.tolerance.map(|t| t.rtol)))
        .field("atol", number(cell.tolerance.map(|t| t.atol)))
        .field(
            "error",
            cell.error.clone().map_or(Value::Null, Value::String),
        )
        .field("reps", lat.map_or(Value::Null, |l| l.reps.into()))
        .field(
            "iters_per_rep",
            lat.map_or(Value::Null, |l| l.iters_per_rep.into()),
        )
        .to_line()
}

/// A cell as one line for a person.
pub fn describe(cell: &Cell) -> String {
    let mut line = format!("{} t{}:", cell.size, cell.threads);
    if let Some(l) = &cell.latency {
        line += &format!(
            " median {:.1} us, p90 {:.1} us, min {:.1} us ({} batches of {});",
            l.median_us, l.p90_us, l.min_us, l.reps, l.iters_per_rep
        );
    }
    if let (Some(run), Some(call)) = (cell.first_run_s, cell.first_call_s) {
        let load = cell.load_phases.map_or(String::new(), |p| {
            format!(
                "load: parse {:.2}, bind {:.2}, prepare {:.2} ms; ",
                p.parse_s * 1e3,
                p.bind_s * 1e3,
                p.prepare_s * 1e3
            )
        });
        line += &format!(
            " first run {:.2} ms ({load}first call {:.2} ms);",
            run * 1e3,
            call * 1e3
        );
    }
    if let Some(mb) = cell.peak_rss_mb {
        line += &format!(" peak RSS {mb:.1} MiB;");
    }
    if let Some(s) = cell.startup_s {
        line += &format!(" operators registered in {:.1} ms;", s * 1e3);
    }
    match (cell.matched, cell.max_abs_diff) {
        (Some(true), Some(d)) => line += &format!(" outputs match (max diff {d:.2e})"),
        (None, _) => line += " no expected outputs",
        _ => {}
    }
    if let Some(e) = &cell.error {
        line += &format!(" error: {e}");
    }
    line.trim_end_matches(';').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_between_batches_as_python_does() {
        // statistics.quantiles([1, 2, 3, 4, 10], n=10, method="inclusive")[8]
        // is 7.6; the median is 3.
        let l = Latency::of(&[4.0, 1.0, 10.0, 3.0, 2.0], 7);
        assert_eq!(l.median_us, 3.0);
        assert!((l.p90_us - 7.6).abs() < 1e-12, "{}", l.p90_us);
        assert_eq!((l.min_us, l.reps, l.iters_per_rep), (1.0, 5, 7));
        // An even count: the median is the mean of the middle two.
        assert_eq!(Latency::of(&[1.0, 2.0, 3.0, 4.0], 1).median_us, 2.5);
        assert_eq!(Latency::of(&[5.0], 1).p90_us, 5.0);
    }

    #[test]
    fn a_fixed_batch_makes_that_many_timed_calls_per_round() {
        let mut options = BenchOptions::new("m.pt2".into(), "m.inputs.safetensors".into());
        options.iters = Some(4);
        options.rounds = 3;
        options.warmup_ms = 0.0;
        options.rep_ms = 0.0;
        let mut calls = 0;
        let l = time_calls(
            || {
                calls += 1;
                Ok(())
            },
            &options,
        )
        .unwrap();
        // 3 warm-up calls, then per round 2 untimed and 4 timed.
        assert_eq!(calls, 3 + 3 * (2 + 4));
        assert_eq!((l.reps, l.iters_per_rep), (3, 4));
    }

    #[test]
    fn a_failing_call_ends_the_timing_with_its_error() {
        let options = BenchOptions::new("m.pt2".into(), "m.inputs.safetensors".into());
        let e = time_calls(|| Err("boom".into()), &options).unwrap_err();
        assert_eq!(e, "boom");
    }

    #[test]
    fn sizes_name_the_sibling_files() {
        let dir = std::env::temp_dir().join(format!("aten-bench-sizes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for file in [
            "m.inputs.safetensors",
            "m.expected.safetensors",
            "m.size2.inputs.safetensors",
            "m.size3.inputs.safetensors",
            "m.size3.expected.safetensors",
        ] {
            std::fs::write(dir.join(file), b"").unwrap();
        }
        let mut options = BenchOptions::new(dir.join("m.pt2"), dir.join("m.inputs.safetensors"));
        options.sizes = vec!["all".into()];
        let sizes = size_files(&options).unwrap();
        let labels: Vec<_> = sizes.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["base", "size2", "size3"]);
        assert_eq!(sizes[0].expected, Some(dir.join("m.expected.safetensors")));
        assert_eq!(sizes[1].inputs, dir.join("m.size2.inputs.safetensors"));
        assert_eq!(sizes[1].expected, None);
        assert_eq!(
            sizes[2].expected,
            Some(dir.join("m.size3.expected.safetensors"))
        );
        options.sizes = vec!["size9".into()];
        let e = size_files(&options).unwrap_err();
        assert!(e.contains("size9") && e.contains("no file"), "{e}");
        options.inputs = dir.join("other.safetensors");
        options.sizes = vec!["size2".into()];
        let e = size_files(&options).unwrap_err();
        assert!(e.contains("NAME.inputs.safetensors"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
