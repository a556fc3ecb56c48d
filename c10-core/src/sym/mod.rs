//! Symbolic scalars (`c10/core/SymInt.h`, `SymFloat.h`, `SymBool.h`,
//! `SymNodeImpl.h`): a [`SymInt`], [`SymFloat`] or [`SymBool`] holds a
//! concrete value inline or a handle to a [`SymNode`], a node of some
//! shape environment's expressions. Arithmetic on two concrete values is
//! plain (checked) arithmetic; with a node on either side the node does it
//! (a concrete operand is wrapped by the node first), and a node that turns
//! out constant is a concrete value again. Reading a symbolic value as a
//! number is a *guard* (`guard_int`, recorded by the node's environment)
//! or an *expectation* (`expect_int`, an error when symbolic).

mod hinted;
mod node;
mod sym_bool;
mod sym_float;
mod sym_int;

pub use hinted::{GuardLog, HintedNode};
pub use node::{SymBinaryOp, SymNode, SymNodeImpl, SymUnaryOp, SymValue};
pub use sym_bool::SymBool;
pub use sym_float::SymFloat;
pub use sym_int::{as_int_array, SymInt};

#[cfg(test)]
mod tests;
