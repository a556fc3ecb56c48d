//! `aten-fx`: graphs of operator calls (PyTorch's `torch.fx` as `make_fx`
//! produces them).
//!
//! - [`graph`]: [`Graph`], its nodes and arguments, replay, and printing in
//!   the format of FX's `graph_module.code`;
//! - [`interpreter`]: [`Interpreter`], the one runner of graphs;
//! - [`builtins`]: the Python functions graphs call on sizes;
//! - [`make_fx`](mod@make_fx): capture of a closure's operator calls under a dispatch
//!   mode;
//! - [`export`]: programs saved by `torch.export.save` (`.pt2`), loaded and
//!   run.

pub mod builtins;
pub mod export;
pub mod graph;
pub mod interpreter;
pub mod make_fx;
mod names;

pub use builtins::Builtin;
pub use export::ExportedProgram;
pub use graph::{Arg, Graph, Node, NodeKind};
pub use interpreter::Interpreter;
pub use make_fx::{make_fx, make_fx_with, MakeFxOptions};
