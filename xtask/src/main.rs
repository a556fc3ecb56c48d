//! `cargo xtask`: project automation, in the style of rust-analyzer's xtask.
//!
//! The `codegen [--check]` command (turning `native_functions.yaml` into the
//! generated registrations and typed API) arrives with issue #5; until then
//! this binary only knows `help`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None | Some("help") | Some("--help") => {
            println!("usage: cargo xtask <command>\n\ncommands:\n  help    this text");
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("xtask: unknown command `{other}` (run `cargo xtask help`)");
            ExitCode::FAILURE
        }
    }
}
