//! The library behind the `aten` binary: inspection commands and
//! conformance runners, kept as plain functions so tests can call them.

pub mod conform;
pub mod json;
pub mod keyset;
pub mod registry;
pub mod yaml_check;
