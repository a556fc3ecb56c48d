//! `aten-dispatch`: the `Dispatcher`, `OperatorHandle`, `OperatorEntry` and its
//! computed dispatch table, `DispatchKeyExtractor`, `Library` (def / impl /
//! fallback / fragment) with static registration, registration handles, dumps
//! and the dispatch trace (PyTorch's `ATen/core/dispatch`, `torch/library.h`).
//!
//! - [`dispatcher`]: the registry and the registration entry points;
//! - [`operator_entry`]: one operator's registrations, dumps and invariants;
//! - [`dispatch_table`]: the slot rules (`computeDispatchTableEntryWithDebug`)
//!   and the fallthrough masks;
//! - [`operator_handle`]: calls, typed and boxed, and redispatch;
//! - [`library`]: `Library`, `CppFunction` and the static registration macros;
//! - [`trace`]: the `ATEN_SHOW_DISPATCH_TRACE` trace.
//!
//! How a call works, and why reads never lock: each operator publishes its
//! table through a [`PublishedCell`](c10_core::published_cell::PublishedCell); a call loads it with one atomic load
//! (no lock, no reference count),
//! computes its key set from its arguments and the thread-local state, masks
//! out fallthrough keys, indexes the flat table and calls the kernel's
//! unboxed entry directly.

pub mod annotated_kernel;
mod dispatch_key_extractor;
pub mod dispatch_table;
pub mod dispatcher;
pub mod library;
pub mod operator_entry;
pub mod operator_handle;
pub mod registration_handle;
mod schema_check;
pub mod trace;

pub use dispatch_key_extractor::ivalue_key_set;
pub use dispatch_table::Provenance;
pub use dispatcher::{Dispatcher, RegistrationEvent};
pub use library::{CppFunction, Library, LibraryKind, StaticRegistrationError};
pub use operator_entry::{AliasAnalysisKind, OperatorEntry};
pub use operator_handle::{OperatorHandle, TypedOperatorHandle};
pub use registration_handle::RegistrationHandle;

#[doc(hidden)]
pub use c10_core as __c10;
