//! `c10-core`: the bottom layer of the stack, PyTorch's `c10/core`.
//!
//! It owns the vocabulary of dispatch and knows nothing about operators:
//!
//! - [`DispatchKey`] and [`BackendComponent`] ([`dispatch_key`]): every key of
//!   PyTorch 2.15 with its numeric value and name;
//! - [`DispatchKeySet`] ([`dispatch_key_set`]): the 64-bit key set, its
//!   priority order, iteration, runtime table index and the alias-key
//!   mappings;
//! - the thread-local included/excluded sets and their RAII guards
//!   ([`local_dispatch_key_set`]);
//! - the [`Error`] type every layer returns ([`error`]), and warnings with
//!   their redirectable handler ([`warning`], PyTorch's `TORCH_WARN`);
//! - the values operators take: [`ScalarType`], [`Device`], [`Layout`],
//!   [`MemoryFormat`], [`Scalar`], [`Generator`];
//! - [`Storage`] with its allocators and borrow discipline (device memory
//!   and the registry of backends' allocators in [`device_allocator`]),
//!   [`TensorImpl`]
//!   and the [`TensorBase`] handle (strided views of a storage), and the
//!   [`Element`] types of the dtypes;
//! - [`SmallVec`] and [`CachedBox`], the containers of an operator's
//!   per-call values (sizes, strides, an iteration's state);
//! - `sync`, the seam through which the lock-free protocols reach their
//!   atomics, cells and thread-locals: `loom`'s model-checked ones in a
//!   `--cfg loom` build.

pub mod allocator;
pub mod cached_box;
pub mod complex;
pub mod device;
pub mod device_allocator;
pub mod dispatch_key;
pub mod dispatch_key_set;
pub mod element;
pub mod error;
pub mod generator;
pub mod grad_mode;
mod handle_owner;
mod intrusive_ptr;
pub mod layout;
pub mod local_dispatch_key_set;
pub mod published_cell;
pub mod scalar;
pub mod scalar_type;
mod small_block_cache;
pub mod small_vec;
pub mod storage;
pub mod sym;
mod sync;
pub mod tensor_impl;
pub mod tensor_layout;
#[cfg(test)]
mod test_support;
pub mod thread_shared;
pub mod type_promotion;
pub mod warning;

pub use allocator::{Allocator, DataPtr};
pub use cached_box::CachedBox;
pub use complex::Complex;
pub use device::{Device, DeviceType};
pub use element::{Element, Numeric};
pub use generator::Generator;
pub use grad_mode::{enable_grad, no_grad, AutoGradMode, GradMode, InferenceMode};
#[doc(hidden)]
pub use half;
pub use handle_owner::merge_queued_handle_counts;
pub use layout::{Layout, MemoryFormat};
pub use scalar::{Complex64, Scalar};
pub use scalar_type::ScalarType;
pub use small_vec::SmallVec;
pub use storage::{BorrowSlot, Storage, StorageBorrow};
pub use sym::{SymBool, SymFloat, SymInt, SymNode};
pub use tensor_impl::{AutogradMetaInterface, TensorBase, TensorImpl};
pub use tensor_layout::{LayoutRef, TensorLayout};
pub use thread_shared::ThreadShared;

pub use dispatch_key::{BackendComponent, DispatchKey, NUM_BACKENDS, NUM_FUNCTIONALITY_KEYS};
pub use dispatch_key_set::{DispatchKeySet, FULL_BACKEND_MASK, NUM_RUNTIME_ENTRIES};
pub use error::{Error, ErrorKind, Result};
pub use local_dispatch_key_set::{
    AutoDispatchBelowADInplaceOrView, AutoDispatchBelowAutograd, ExcludeDispatchKeyGuard,
    IncludeDispatchKeyGuard, LocalDispatchKeySet,
};
