//! The library behind the `aten` binary: inspection commands, conformance
//! runners and the runner of exported programs, kept as plain functions so tests can call them.

pub mod bench;
pub mod conform;
pub mod json;
pub mod keyset;
pub mod malloc_retention;
pub mod panic_guard;
pub mod registry;
pub mod run;
pub mod yaml_check;
