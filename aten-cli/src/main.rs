//! The `aten` binary: inspect dispatch keys and key sets, and run
//! conformance files produced by PyTorch against this implementation.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use aten_cli::conform::{self, Report};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "aten",
    version,
    about = "PyTorch's c10/ATen operator stack, in Rust"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Explain the key set made of the given keys (or backend bits like CPUBit).
    Keyset {
        /// Dispatch key names (PyTorch's spelling), ORed together.
        #[arg(required = true)]
        keys: Vec<String>,
    },
    /// Parse an operator schema; print its canonical form and structure.
    Schema {
        /// The schema text, e.g. 'aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor'.
        text: String,
    },
    /// List the operators registered in the global dispatcher.
    Ops {
        /// Instead, count the functions of this native_functions.yaml that
        /// are defined, and which kernels they have (CompositeImplicitAutograd,
        /// CPU, Meta, none); fail if one is not defined.
        #[arg(long, value_name = "YAML")]
        surface: Option<PathBuf>,
    },
    /// Print an operator's registrations (`_dispatch_dump`).
    Dump {
        /// `ns::name` or `ns::name.overload`.
        op: String,
    },
    /// Print an operator's computed dispatch table (`_dispatch_dump_table`).
    Table {
        /// `ns::name` or `ns::name.overload`.
        op: String,
    },
    /// Check this implementation against a conformance file.
    Conform {
        #[command(subcommand)]
        what: Conform,
    },
    /// Run a program exported by `torch.export` (a `.pt2` archive) on the
    /// tensors of a safetensors file; print one line per output and the
    /// time taken.
    Run {
        /// The `.pt2` archive.
        model: PathBuf,
        /// The inputs: `input_0`, `input_1`, ... (or the graph's input names).
        #[arg(long)]
        inputs: PathBuf,
        /// Where to write the outputs (`output_0`, ...) as safetensors.
        #[arg(long)]
        output: Option<PathBuf>,
    },
    /// Time a program exported by `torch.export` (a `.pt2` archive): for
    /// each size and thread count, load plus first run, then the median,
    /// p90 and minimum latency over timed batches of calls, and the peak
    /// resident memory. `--json` writes the rows of the peer harness
    /// (`perf/peers/bench_peers.py`) with `runtime` = `aten`.
    Bench {
        /// The `.pt2` archive.
        model: PathBuf,
        /// The base size's inputs (`NAME.inputs.safetensors`: `input_0`, ...).
        #[arg(long)]
        inputs: PathBuf,
        /// The base size's expected outputs (default:
        /// `NAME.expected.safetensors` beside the inputs, if there).
        #[arg(long)]
        expected: Option<PathBuf>,
        /// The sizes to time, comma-separated: `base`, and `SIZE` for each
        /// `NAME.SIZE.inputs.safetensors` beside the inputs; `all` for every
        /// size there.
        #[arg(long, value_delimiter = ',', default_value = "base")]
        sizes: Vec<String>,
        /// Thread counts, comma-separated; each is timed on its own.
        #[arg(long, value_delimiter = ',', default_value = "1")]
        threads: Vec<usize>,
        /// Timed batches per size and thread count.
        #[arg(long, default_value_t = 15)]
        rounds: usize,
        /// How long one batch should last, in milliseconds.
        #[arg(long, default_value_t = 40.0)]
        rep_ms: f64,
        /// A fixed number of calls per batch instead (`--rep-ms` is then
        /// ignored).
        #[arg(long)]
        iters: Option<usize>,
        /// The least time of untimed warm-up calls, in milliseconds.
        #[arg(long, default_value_t = 200.0)]
        warmup_ms: f64,
        /// Run every call on every run: no constant folding at load.
        #[arg(long)]
        no_fold: bool,
        /// No fusion at load (a batch normalisation stays apart from its
        /// convolution, pointwise chains run call by call).
        #[arg(long)]
        no_fuse: bool,
        /// After each cell's timing, time every node over as many calls as
        /// one batch and print the N slowest nodes and the time per
        /// operator, each with its rate: GFLOP/s for convolutions and
        /// matrix products, else GB/s of the tensors read and written.
        #[arg(long, value_name = "N")]
        profile: Option<usize>,
        /// Write the rows as JSON, one object per line, to PATH (`-` or no
        /// PATH: standard output instead of the text lines).
        #[arg(long, num_args = 0..=1, default_missing_value = "-", value_name = "PATH")]
        json: Option<PathBuf>,
    },
    /// Read native_functions.yaml files.
    Yaml {
        #[command(subcommand)]
        what: Yaml,
    },
}

#[derive(Subcommand)]
enum Yaml {
    /// Load and validate a native_functions.yaml: print its errors
    /// (FILE:LINE: message) and how many functions, groups, structured
    /// families and out variants it holds; fail if there are errors.
    Check {
        /// The native_functions.yaml file.
        file: PathBuf,
        /// The tags.yaml file (default: the tags.yaml beside FILE, if any).
        #[arg(long)]
        tags: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum Conform {
    /// The key table against a file like dispatch_keys.json.
    Keys {
        /// The JSON file.
        file: PathBuf,
    },
    /// Dispatch-table scenarios in the format of dispatch_tables.jsonl.
    Tables {
        /// The JSON-lines file.
        file: PathBuf,
    },
    /// Key-set queries in the format of keyset_queries.jsonl.
    Keysets {
        /// The JSON-lines file.
        file: PathBuf,
    },
    /// Schemas through the parser and printer: JSON lines like
    /// schema_cases.jsonl, or one schema per line like schemas.txt.
    Schemas {
        /// The file.
        file: PathBuf,
    },
    /// Boxed operator calls in the format of ops_golden.jsonl: one
    /// `{"op", "result"}` or `{"op", "error"}` line per record.
    Ops {
        /// The JSON-lines file.
        file: PathBuf,
        /// Run every record with its tensors on the Meta device instead,
        /// comparing result structure, dtypes and shapes.
        #[arg(long)]
        meta: bool,
    },
    /// Operator calls differentiated by autograd, in the format of
    /// grad_golden.jsonl: prints one JSON line per record (the gradients or
    /// the error), then `N passed, M failed`.
    Grads {
        /// The JSON-lines file.
        file: PathBuf,
    },
    /// Every NAME.pt2 of a directory on NAME.inputs.safetensors against
    /// NAME.expected.safetensors: one line per model, then `N passed, M
    /// failed`.
    Models {
        /// The directory.
        dir: PathBuf,
    },
}

fn main() -> ExitCode {
    aten_cli::malloc_retention::retain_freed_memory();
    let cli = Cli::parse();
    match cli.command {
        Command::Ops { surface: None } => print_or_fail(Ok::<_, String>(aten_cli::registry::ops())),
        Command::Ops {
            surface: Some(file),
        } => surface(&file),
        Command::Dump { op } => print_or_fail(aten_cli::registry::dump(&op)),
        Command::Table { op } => print_or_fail(aten_cli::registry::table(&op)),
        Command::Keyset { keys } => print_or_fail(aten_cli::keyset::explain(&keys)),
        // PyTorch's `ErrorReport` text starts with a line break.
        Command::Schema { text } => print_or_fail(
            conform::schemas::explain(&text).map_err(|e| e.trim_start_matches('\n').to_owned()),
        ),
        Command::Yaml {
            what: Yaml::Check { file, tags },
        } => match aten_cli::yaml_check::check_file(&file, tags.as_deref()) {
            Ok(report) => success_if(emit(&report.text) && report.errors == 0),
            Err(e) => fail(e),
        },
        Command::Run {
            model,
            inputs,
            output,
        } => print_or_fail(aten_cli::run::run(&model, &inputs, output.as_deref())),
        Command::Conform { what } => conform(what),
        Command::Bench {
            model,
            inputs,
            expected,
            sizes,
            threads,
            rounds,
            rep_ms,
            iters,
            warmup_ms,
            no_fold,
            no_fuse,
            profile,
            json,
        } => {
            let options = aten_cli::bench::BenchOptions {
                expected,
                sizes,
                threads,
                rounds,
                rep_ms,
                iters,
                warmup_ms,
                profile,
                load: aten::fx::export::LoadOptions {
                    fold_constants: !no_fold,
                    fuse: !no_fuse,
                },
                ..aten_cli::bench::BenchOptions::new(model, inputs)
            };
            bench(&options, json.as_deref())
        }
    }
}

/// `aten bench`: the cells as text or JSON rows; fails when a cell failed.
fn bench(options: &aten_cli::bench::BenchOptions, json: Option<&Path>) -> ExitCode {
    let cells = match aten_cli::bench::bench(options) {
        Ok(cells) => cells,
        Err(e) => return fail(e),
    };
    let all_ok = cells.iter().all(|c| c.error.is_none());
    let rows: String = cells
        .iter()
        .map(|c| aten_cli::bench::row(options, c) + "\n")
        .collect();
    let mut text: String = cells
        .iter()
        .map(|c| aten_cli::bench::describe(c) + "\n")
        .collect();
    if let Some(top) = options.profile {
        for c in &cells {
            text += &aten_cli::bench::describe_profile(c, top);
        }
    }
    match json {
        Some(path) if path != Path::new("-") => {
            if let Err(e) = std::fs::write(path, rows) {
                return fail(format!("{}: {e}", path.display()));
            }
            success_if(emit(&text) && all_ok)
        }
        Some(_) => success_if(emit(&rows) && all_ok),
        None => success_if(emit(&text) && all_ok),
    }
}

/// `aten ops FILE`: the operators of a surface file, and those not defined.
fn surface(file: &Path) -> ExitCode {
    let label = file.display().to_string();
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("{label}: {e}");
            return ExitCode::FAILURE;
        }
    };
    match aten_cli::registry::surface(&text, &label) {
        Ok((report, missing)) => {
            let listed: String = missing
                .iter()
                .map(|m| format!("not defined: {m}\n"))
                .collect();
            success_if(emit(&report) && emit(&listed) && missing.is_empty())
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// `aten conform ...`: one runner over its file or folder.
fn conform(what: Conform) -> ExitCode {
    match what {
        Conform::Keys { file } => with_file(&file, |text| {
            let report = conform::keys::run(text)?;
            Ok((Vec::new(), report))
        }),
        Conform::Tables { file } => with_file(&file, |text| Ok(conform::tables::run(text))),
        Conform::Keysets { file } => with_file(&file, |text| Ok(conform::keysets::run(text))),
        Conform::Schemas { file } => with_file(&file, |text| Ok(conform::schemas::run(text))),
        Conform::Ops { file, meta: false } => with_file(&file, |text| Ok(conform::ops::run(text))),
        Conform::Ops { file, meta: true } => {
            with_file(&file, |text| Ok(conform::ops::run_meta(text)))
        }
        Conform::Grads { file } => with_file(&file, |text| Ok(conform::grads::run(text))),
        Conform::Models { dir } => report(conform::models::run(&dir)),
    }
}

/// Prints a command's text, or its error after `error: `.
fn print_or_fail<E: std::fmt::Display>(result: Result<String, E>) -> ExitCode {
    match result {
        Ok(text) => success_if(emit(&text)),
        Err(e) => fail(e),
    }
}

/// Reports `e` after `error: ` and fails.
fn fail(e: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::FAILURE
}

/// Writes `text` to stdout; `false` when it cannot be written (a closed
/// pipe, as in `aten ops | head`: the reader has what it wanted, and the
/// command stops without a panic).
fn emit(text: &str) -> bool {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .is_ok()
}

fn success_if(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Reads `file`, runs `f`, writes its output lines to stdout, failures and the
/// tally to stderr. Keys reports its tally on stdout too (it writes no lines).
fn with_file(
    file: &Path,
    f: impl FnOnce(&str) -> Result<(Vec<String>, Report), String>,
) -> ExitCode {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", file.display());
            return ExitCode::FAILURE;
        }
    };
    match f(&text) {
        Ok(r) => report(Ok(r)),
        Err(e) => report(Err(format!("{}: {e}", file.display()))),
    }
}

/// Writes a runner's output lines to stdout, failures and the tally to
/// stderr (the tally to stdout when there are no lines).
fn report(result: Result<(Vec<String>, Report), String>) -> ExitCode {
    let (lines, report) = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for line in &lines {
        if writeln!(out, "{line}").is_err() {
            return ExitCode::FAILURE;
        }
    }
    drop(out.flush());
    for failure in report.failures.iter().take(20) {
        eprintln!("FAIL {failure}");
    }
    if report.failures.len() > 20 {
        eprintln!("... and {} more failures", report.failures.len() - 20);
    }
    for note in report.notes.iter().take(20) {
        eprintln!("{note}");
    }
    if report.notes.len() > 20 {
        eprintln!("... and {} more notes", report.notes.len() - 20);
    }
    match report.tally {
        Some(tally) => {
            if lines.is_empty() {
                if !emit(&format!("{tally}\n")) {
                    return ExitCode::FAILURE;
                }
            } else {
                eprintln!("{tally}");
            }
            if tally.failed == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        None => ExitCode::SUCCESS,
    }
}
