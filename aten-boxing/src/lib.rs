//! `aten-boxing`: `IValue` and the `Stack`, `FunctionSchema` with its parser and
//! printer, `KernelFunction`, and the traits that box and unbox Rust values so
//! that any Rust kernel can be called through a stack and any boxed kernel
//! through a typed signature (PyTorch's `ATen/core/ivalue*`, `ATen/core/boxing`,
//! `function_schema*`).
//!
//! Filled by issue #3; depends only on `c10-core`.
