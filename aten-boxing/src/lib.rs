//! `aten-boxing`: `IValue` and the `Stack`, `FunctionSchema` with its parser and
//! printer, `KernelFunction`, and the traits that box and unbox Rust values so
//! that any Rust kernel can be called through a stack and any boxed kernel
//! through a typed signature (PyTorch's `ATen/core/ivalue*`, `ATen/core/boxing`,
//! `function_schema*`). Depends only on `c10-core`.
//!
//! - [`ivalue`]: the 16-byte tagged [`IValue`];
//! - [`stack`]: the [`Stack`] and its helpers;
//! - [`kernel_arg`]: Rust types to and from `IValue`s, as kernel arguments
//!   and returns;
//! - [`kernel_function`]: [`KernelFunction`] with its boxed half
//!   ([`BoxedKernel`]) and unboxed entry points and the bridges between them;
//! - [`schema`]: [`FunctionSchema`], its parser and canonical printer;
//! - [`normalize`]: positional and keyword arguments to a checked stack.

pub mod ivalue;
pub mod kernel_arg;
pub mod kernel_function;
pub mod normalize;
pub mod stack;

pub use ivalue::{IValue, Inline, InlineScalar, Object};
pub use kernel_arg::{IValueConvert, KernelArg, KernelReturn, TensorLike};
pub use kernel_function::{
    infer_schema, ArgList, BoxedKernel, BoxedOperator, CppSignature, KernelEntries, KernelFunction,
    KernelFunctor,
};
pub use stack::{Stack, StackExt};

pub mod schema;

pub use schema::{AliasInfo, Argument, DefaultValue, FunctionSchema, OperatorName, Type};
