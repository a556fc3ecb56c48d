//! `cargo xtask`: project automation, in the style of rust-analyzer's xtask.
//!
//! `cargo xtask codegen` reads the project's `native_functions.yaml` (with
//! `tags.yaml`, and `derivatives.yaml` for the autograd kernels) at the
//! repository root, and PyTorch's own `native_functions.yaml`
//! (`conformance/data/pytorch/`) for the operators the library defines
//! without kernels, and writes the generated Rust files;
//! `cargo xtask codegen --check` writes nothing and fails, naming each stale
//! file and the command to run, when a generated file differs from what the
//! generator produces.
//!
//! `cargo xtask test [ARGS]` runs every test: `cargo test --workspace
//! [ARGS]`, then c10-core's `loom` models of its lock-free protocols (a
//! build with `--cfg loom`, in its own target directory so that the normal
//! build stays cached).
//!
//! `tests/tidy.rs` checks the house rules over the repository's files
//! (dependency order, module docs, no issue numbers, links that stay in
//! the repository); it runs with `cargo test`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use aten_codegen::gen::{generate, GenOp};
use aten_codegen::kernel_index::KernelIndex;
use aten_codegen::{Derivatives, NativeFunctions, Tags};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("codegen") => {
            let check = args.iter().any(|a| a == "--check");
            match codegen(&repo_root(), check) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("{e}");
                    ExitCode::FAILURE
                }
            }
        }
        Some("test") => match test(&repo_root(), &args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        },
        None | Some("help") | Some("--help") => {
            println!(
                "usage: cargo xtask <command>\n\ncommands:\n  codegen [--check]   regenerate (or check) the files generated from native_functions.yaml\n  test [ARGS]         cargo test --workspace [ARGS], then the loom models\n  help                this text"
            );
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("xtask: unknown command `{other}` (run `cargo xtask help`)");
            ExitCode::FAILURE
        }
    }
}

/// `cargo test --workspace ARGS`, then the `loom` models (see the crate
/// docs).
fn test(root: &Path, args: &[String]) -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let run = |command: &mut Command, what: &str| -> Result<(), String> {
        let status = command
            .current_dir(root)
            .status()
            .map_err(|e| format!("cannot run {what}: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("{what} failed ({status})"))
        }
    };
    run(
        Command::new(&cargo)
            .args(["test", "--workspace"])
            .args(args),
        "cargo test --workspace",
    )?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join("loom");
    let mut loom = Command::new(&cargo);
    loom.args(["test", "-p", "c10-core", "--release", "--lib", "loom"])
        .env("RUSTFLAGS", "--cfg loom")
        .env("CARGO_TARGET_DIR", target);
    if std::env::var_os("LOOM_MAX_PREEMPTIONS").is_none() {
        // Every interleaving with up to three preemptions: what crossbeam
        // checks, and minutes here rather than hours.
        loom.env("LOOM_MAX_PREEMPTIONS", "3");
    }
    run(&mut loom, "the loom models (c10-core, --cfg loom)")
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Regenerates every file, or with `check` reports the stale ones.
fn codegen(root: &Path, check: bool) -> Result<(), String> {
    let tags_path = root.join("tags.yaml");
    let yaml_path = root.join("native_functions.yaml");
    let tags = Tags::parse(&read(&tags_path)?, "tags.yaml").map_err(|e| e.to_string())?;
    let functions = NativeFunctions::parse(&read(&yaml_path)?, "native_functions.yaml", &tags)
        .map_err(|e| e.to_string())?;
    let derivatives_path = root.join("derivatives.yaml");
    let derivatives = Derivatives::parse(&read(&derivatives_path)?, "derivatives.yaml")
        .map_err(|e| e.to_string())?;
    // PyTorch's own yaml: the whole operator surface the library defines.
    let pytorch_dir = root.join("conformance/data/pytorch");
    let pytorch_tags = Tags::parse(&read(&pytorch_dir.join("tags.yaml"))?, "tags.yaml")
        .map_err(|e| e.to_string())?;
    let pytorch = NativeFunctions::parse(
        &read(&pytorch_dir.join("native_functions.yaml"))?,
        "conformance/data/pytorch/native_functions.yaml",
        &pytorch_tags,
    )
    .map_err(|e| e.to_string())?;
    let ops: Vec<GenOp> = functions.iter().map(GenOp::from_native).collect();
    let surface: Vec<GenOp> = pytorch.iter().map(GenOp::from_native).collect();
    let native = KernelIndex::scan(&root.join("aten-core/src/native"), "crate::native")?;
    let (files, skipped) = generate("aten", &ops, &surface, &derivatives, &native)?;
    for s in &skipped {
        eprintln!("codegen: skipped {s}");
    }
    let mut stale = Vec::new();
    for file in files {
        let path = root.join(&file.path);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current == file.contents {
            continue;
        }
        if check {
            stale.push(file.path);
            continue;
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(&path, &file.contents).map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!("codegen: updated {}", file.path);
    }
    if !stale.is_empty() {
        return Err(format!(
            "generated files are stale:\n{}\nrun `cargo xtask codegen` and commit the result",
            stale
                .iter()
                .map(|p| format!("  {p}"))
                .collect::<Vec<_>>()
                .join("\n")
        ));
    }
    Ok(())
}
