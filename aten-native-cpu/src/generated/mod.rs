//! Code generated from the project's `native_functions.yaml` by
//! `cargo xtask codegen` (never edited by hand).

pub mod register_cpu;
