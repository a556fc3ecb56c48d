//! `aten-dispatch`: the `Dispatcher`, `OperatorHandle`, `OperatorEntry` and its
//! computed dispatch table, `DispatchKeyExtractor`, `Library` (def / impl /
//! fallback / fragment) with static registration, registration handles, dumps
//! and the dispatch trace (PyTorch's `ATen/core/dispatch`, `torch/library.h`).
//!
//! Filled by issue #4.
