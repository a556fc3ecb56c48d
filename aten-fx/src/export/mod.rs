//! Programs exported by `torch.export` (`torch/export`): the `.pt2`
//! archive that `torch.export.save` writes, loaded into an
//! [`ExportedProgram`] and run through `torch.ops`, with its inputs and
//! outputs carried as safetensors files.
//!
//! - [`program`]: [`ExportedProgram::load`] and [`ExportedProgram::run`];
//! - `archive`: the archive's entries, mapped in place, and its format checks;
//! - `zip_file`: the zip container's directory (zip64, data descriptors);
//! - `json`: walking `model.json` with errors naming file and path;
//! - `deserialize`: `model.json`'s graph into a [`Graph`](crate::Graph);
//! - [`shapes`]: symbolic sizes: what inputs a program accepts;
//! - `sym_expr`: the sympy expressions of symbolic sizes;
//! - `codes`: the serializer's dtype, layout and memory-format codes;
//! - `raw`: tensors from and to little-endian bytes;
//! - [`regular_file`]: opening only regular files, read to their size;
//! - [`safetensors_file`]: named tensors in safetensors files.

mod archive;
mod codes;
mod deserialize;
mod json;
mod json_document;
pub mod program;
mod raw;
pub mod regular_file;
pub mod safetensors_file;
pub mod shapes;
mod sym_expr;
mod zip_file;

pub use program::{ExportedProgram, LoadOptions, LoadPhases, TensorSpec};
pub use regular_file::{open_regular_file, read_regular_file};
pub use safetensors_file::{
    load_safetensors, parse_safetensors, save_safetensors, serialize_safetensors,
};
pub use shapes::SymSize;
