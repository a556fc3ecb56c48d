//! `aten-codegen`: the model of PyTorch's `native_functions.yaml` and
//! `tags.yaml` and the generators that turn it into registrations and the typed
//! API (PyTorch's `torchgen`).
//!
//! Filled by issue #5.
