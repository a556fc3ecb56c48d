//! `aten-ops`: the `torch.ops` layer over the dispatcher (PyTorch's
//! `torch/_ops.py`, `torch/library.py`, `torch/_higher_order_ops`).
//!
//! - [`root`]: [`ops()`], the root of every namespace, and [`Ops`] for an
//!   isolated dispatcher; `state`: what a root's objects share;
//!   `fallbacks`: the backend fallbacks a root registers, from one list;
//!   `call_lookup`: how those fallbacks find a call's overload;
//! - [`namespace`]: [`OpNamespace`] (`torch.ops.aten`), resolving operator
//!   names lazily;
//! - [`packet`]: [`OpOverloadPacket`] (`aten.add`) and overload resolution
//!   from arguments;
//! - [`overload`]: [`OpOverload`] (`aten.add.Tensor`): calls, redispatch,
//!   `decompose`, host kernels (`py_impl`);
//! - [`arguments`]: binding positional and keyword arguments to a schema
//!   (PyTorch's `createStackForSchema`);
//! - [`resolve_key`]: which registration serves a dispatch key, for host
//!   kernels (PyTorch's `resolve_key`);
//! - [`python_dispatcher`]: the `PythonDispatcher` key's fallback that runs
//!   host kernels, and the guard that turns it on;
//! - [`library`]: runtime libraries (`torch.library.Library`);
//! - [`higher_order`]: higher-order operators and the shipped `cond`,
//!   `while_loop` and `map_impl`;
//! - [`custom_class`]: custom classes (TorchBind);
//! - [`modes`]: dispatch modes and their thread-local stack;
//! - [`pre_dispatch`]: the `PreDispatch` key's fallback that hands calls to
//!   the innermost pre-dispatch mode, above autograd;
//! - [`python_key`]: the `Python` key's fallback that hands calls to the
//!   innermost mode or to tensor subclasses;
//! - [`subclass`]: wrapper tensor subclasses (`__torch_dispatch__`) and the
//!   shipped `LoggingTensor`;
//! - [`fake`]: FakeTensor mode (shapes, strides, dtypes and devices without
//!   data, through the Meta kernels);
//! - [`functionalize`](mod@functionalize): the `Functionalize` key, functional
//!   tensor wrappers and `functionalize`;
//! - `transformers_ops`: the custom operators Hugging Face `transformers`
//!   registers, which its exported programs call.
//!
//! Every object here is unique per operator and root: looking `aten.add`
//! up twice gives the same `Arc`.

pub mod arguments;
mod call_lookup;
pub mod custom_class;
pub mod fake;
mod fallbacks;
pub mod functionalize;
pub mod higher_order;
pub mod library;
pub mod modes;
pub mod namespace;
pub mod overload;
pub mod packet;
pub mod pre_dispatch;
pub mod python_dispatcher;
pub mod python_key;
pub mod resolve_key;
pub mod root;
mod state;
pub mod subclass;
mod transformers_ops;

pub use custom_class::{class_, classes, ClassType, CustomClassBuilder};
pub use functionalize::{functionalize, Remove};
pub use higher_order::{GraphFn, HigherOrderOperator, HopArg};
pub use library::Library;
pub use modes::{push_mode, push_pre_dispatch_mode, ModeGuard, TorchDispatchMode};
pub use namespace::OpNamespace;
pub use overload::{HostKernel, OpOverload, OverloadKind};
pub use packet::OpOverloadPacket;
pub use python_dispatcher::{enable_python_dispatcher, EnablePythonDispatcher};
pub use root::{ops, Ops};
