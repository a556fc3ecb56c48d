//! Compiles every kernel instantiation the CUDA backend uses with NVRTC,
//! for `compute_90`, and checks each PTX defines its entry point. Needs
//! libnvrtc (CUDA 13) on the loader's path but no GPU.
//!
//! The full list compiles in batches of entry points per NVRTC program
//! (the same entry point text as each instantiation's own source, behind
//! one copy of the prelude and templates); one instantiation of every
//! operator also compiles from its own source, the backend's path.
//!
//! Without libnvrtc the tests say why they skip and pass, unless
//! `ATEN_REQUIRE_NVRTC=1` (CI sets it), in which case absence fails them.

use aten_native_cuda::kernel_cache::{DiskCache, KernelCache};
use aten_native_cuda::kernels::{all_instantiations, module_source, Instantiation};
use aten_native_cuda::nvrtc::{self, Compiled};
use std::collections::HashSet;
use std::io::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

const ARCH: &str = "compute_90";

/// Writes to the real stderr, past the test harness's capture, so that a
/// skip or the compiled count shows in a normal `cargo test` run.
fn report(message: &str) {
    let _ = writeln!(std::io::stderr(), "{message}");
}

/// Whether NVRTC is here; if not, skips (or, under
/// `ATEN_REQUIRE_NVRTC=1`, fails) the calling test.
fn nvrtc_or_skip(test: &str) -> bool {
    if nvrtc::is_available() {
        return true;
    }
    let why = nvrtc::compile_uncached("", ARCH)
        .err()
        .map(|e| e.message().to_string())
        .unwrap_or_default();
    if std::env::var("ATEN_REQUIRE_NVRTC").as_deref() == Ok("1") {
        panic!("ATEN_REQUIRE_NVRTC=1 but NVRTC cannot be used: {why}");
    }
    report(&format!("skipping {test}: {why}"));
    false
}

/// The PTX line that defines an `extern "C"` kernel.
fn defines_entry(ptx: &str, name: &str) -> bool {
    ptx.contains(&format!(".entry {name}("))
}

/// How many entry points share one NVRTC program: a program's fixed cost
/// (parsing the prelude and a template) is most of a lone kernel's, so
/// batches make the whole list several times faster to compile.
const BATCH: usize = 64;

/// What is wrong with one compilation's outcome for the entry points
/// `names`, if anything: a failure, a warning (the templates are kept
/// warning-free, so a warning is a failure), or a missing entry point.
fn problems(outcome: c10_core::Result<Compiled>, names: &[String]) -> Vec<(String, String)> {
    match outcome {
        Err(e) => names
            .iter()
            .map(|name| (name.clone(), e.message().to_string()))
            .collect(),
        Ok(c) if !c.log.trim().is_empty() => names
            .iter()
            .map(|name| (name.clone(), format!("NVRTC warned:\n{}", c.log.trim_end())))
            .collect(),
        Ok(c) => names
            .iter()
            .filter(|name| !defines_entry(&c.ptx, name))
            .map(|name| {
                (
                    name.clone(),
                    "the PTX does not define the entry point".to_string(),
                )
            })
            .collect(),
    }
}

/// Compiles `kernels` as one module; on any problem compiles each alone,
/// so that the report names the broken instantiations. Returns the
/// problems.
fn compile_batch(kernels: &[Instantiation]) -> Vec<(String, String)> {
    let names: Vec<String> = kernels.iter().map(Instantiation::entry_point).collect();
    let outcome = nvrtc::compile_uncached_with_log(&module_source(kernels), ARCH);
    if problems(outcome, &names).is_empty() {
        return Vec::new();
    }
    kernels
        .iter()
        .zip(names)
        .flat_map(|(kernel, name)| {
            problems(
                nvrtc::compile_uncached_with_log(&kernel.source(), ARCH),
                std::slice::from_ref(&name),
            )
        })
        .collect()
}

#[test]
fn every_instantiation_compiles_for_compute_90() {
    if !nvrtc_or_skip("every_instantiation_compiles_for_compute_90") {
        return;
    }
    let all = all_instantiations();
    let batches: Vec<&[Instantiation]> = all.chunks(BATCH).collect();
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(batches.len());
    let next = AtomicUsize::new(0);
    let failures: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
    let start = Instant::now();
    // NVRTC programs are independent, so each thread compiles its own
    // batches; the cache is bypassed so that every source really compiles.
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(batch) = batches.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let failed = compile_batch(batch);
                    failures.lock().unwrap().extend(failed);
                }
            });
        }
    });
    let elapsed = start.elapsed();
    let failures = failures.into_inner().unwrap();
    report(&format!(
        "nvrtc_templates: compiled {} of {} instantiations for {ARCH} in {:.1} s \
         ({} programs on {threads} threads)",
        all.len() - failures.len(),
        all.len(),
        elapsed.as_secs_f64(),
        batches.len()
    ));
    if !failures.is_empty() {
        let shown: Vec<String> = failures
            .iter()
            .take(5)
            .map(|(name, problem)| format!("{name}: {problem}"))
            .collect();
        panic!(
            "{} of {} instantiations failed; the first:\n\n{}",
            failures.len(),
            all.len(),
            shown.join("\n\n")
        );
    }
}

#[test]
fn each_operator_compiles_from_its_own_source() {
    if !nvrtc_or_skip("each_operator_compiles_from_its_own_source") {
        return;
    }
    // The backend compiles one instantiation per program: check that
    // path on the first instantiation of every operator and family.
    let mut seen = HashSet::new();
    let firsts: Vec<Instantiation> = all_instantiations()
        .into_iter()
        .filter(|k| {
            let operator = match k {
                Instantiation::Pointwise(p) => ("pointwise", p.op.name()),
                Instantiation::Reduce(r) => ("reduce", r.op.name()),
                Instantiation::Scan(s) => ("scan", s.op.name()),
                Instantiation::Row(r) => ("row", r.op.name()),
            };
            seen.insert(operator)
        })
        .collect();
    let failed: Vec<(String, String)> = firsts
        .iter()
        .flat_map(|kernel| {
            problems(
                nvrtc::compile_uncached_with_log(&kernel.source(), ARCH),
                &[kernel.entry_point()],
            )
        })
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    report(&format!(
        "nvrtc_templates: compiled {} single-instantiation sources",
        firsts.len()
    ));
}

#[test]
fn a_broken_source_returns_nvrtcs_log() {
    if !nvrtc_or_skip("a_broken_source_returns_nvrtcs_log") {
        return;
    }
    let source = "extern \"C\" __global__ void broken(float* out) { out[0] = no_such_name; }\n";
    let err = nvrtc::compile_uncached(source, ARCH).unwrap_err();
    let message = err.message();
    assert!(message.starts_with("NVRTC failed to compile"), "{message}");
    assert!(
        message.contains("no_such_name"),
        "the log is missing: {message}"
    );
    // The cached path reports the same failure and caches nothing.
    let cache = KernelCache::new(None);
    let err = nvrtc::compile_with(&cache, source, ARCH).unwrap_err();
    assert!(err.message().contains("no_such_name"));
    assert!(cache.is_empty());
    // A warning is no failure, but it comes back in the log.
    let warned = nvrtc::compile_uncached_with_log(
        "extern \"C\" __global__ void w(unsigned* a) { if (a[0] < 0u) a[1] = 1; }\n",
        ARCH,
    )
    .unwrap();
    assert!(
        warned.log.contains("pointless comparison"),
        "{}",
        warned.log
    );
    assert!(defines_entry(&warned.ptx, "w"));
    // An unknown architecture is an error too.
    let err =
        nvrtc::compile_uncached("extern \"C\" __global__ void k() {}", "compute_1").unwrap_err();
    assert!(
        err.message().starts_with("NVRTC failed"),
        "{}",
        err.message()
    );
}

#[test]
fn compiled_kernels_are_cached_in_memory_and_on_disk() {
    if !nvrtc_or_skip("compiled_kernels_are_cached_in_memory_and_on_disk") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("aten-nvrtc-cache-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let kernel = all_instantiations()
        .into_iter()
        .find(|k| matches!(k, Instantiation::Row(_)))
        .unwrap();
    let source = kernel.source();

    let cache = KernelCache::new(Some(DiskCache::new(&dir)));
    let ptx = nvrtc::compile_with(&cache, &source, ARCH).unwrap();
    assert!(defines_entry(&ptx, &kernel.entry_point()));
    assert_eq!(cache.len(), 1);
    let files = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(files, 1, "one PTX file in the disk cache");

    // Another cache over the same folder (a later process) loads it.
    let later = KernelCache::new(Some(DiskCache::new(&dir)));
    assert_eq!(nvrtc::compile_with(&later, &source, ARCH).unwrap(), ptx);
    let _ = std::fs::remove_dir_all(&dir);
}
