//! [`SymNodeImpl`]: what a shape environment's node answers, and
//! [`SymNode`], the shared handle the symbolic scalars hold.

use std::fmt;
use std::sync::Arc;

use crate::{Error, Result};

/// A concrete value of a node: what a hint is.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum SymValue {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
}

/// An operation of two symbolic values (`SymNodeImpl::add`, `mul`, ...;
/// one method per operation there).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum SymBinaryOp {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b` as a float.
    TrueDiv,
    /// `a // b` (Python's: rounded down).
    FloorDiv,
    /// `a % b` (Python's: the sign of `b`).
    Mod,
    /// `a ** b`.
    Pow,
    /// `min(a, b)` (`sym_min`).
    Min,
    /// `max(a, b)` (`sym_max`).
    Max,
    /// `a == b`.
    Eq,
    /// `a != b`.
    Ne,
    /// `a < b`.
    Lt,
    /// `a <= b`.
    Le,
    /// `a > b`.
    Gt,
    /// `a >= b`.
    Ge,
    /// `a and b` (`sym_and`).
    And,
    /// `a or b` (`sym_or`).
    Or,
}

impl SymBinaryOp {
    /// Whether the result is a `SymBool`.
    pub fn is_comparison(self) -> bool {
        use SymBinaryOp::*;
        matches!(self, Eq | Ne | Lt | Le | Gt | Ge | And | Or)
    }
}

/// An operation of one symbolic value.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum SymUnaryOp {
    /// `-a`.
    Neg,
    /// `not a` (`sym_not`).
    Not,
    /// The integer as a float (`sym_float`).
    SymFloat,
    /// `floor(a)`, an integer.
    Floor,
    /// `ceil(a)`, an integer.
    Ceil,
}

/// A node of symbolic expressions (`c10::SymNodeImpl`): a shape
/// environment implements it; the symbolic scalars call it. Every method a
/// node cannot answer is an error, never a panic.
pub trait SymNodeImpl: Send + Sync + fmt::Debug {
    /// Whether the node is an integer.
    fn is_int(&self) -> bool;
    /// Whether the node is a float.
    fn is_float(&self) -> bool;
    /// Whether the node is a boolean.
    fn is_bool(&self) -> bool;
    /// `self op other`.
    fn binary(&self, op: SymBinaryOp, other: &SymNode) -> Result<SymNode>;
    /// `op self`.
    fn unary(&self, op: SymUnaryOp) -> Result<SymNode>;
    /// A constant integer of this node's environment (`wrap_int`).
    fn wrap_int(&self, value: i64) -> Result<SymNode>;
    /// A constant float of this node's environment (`wrap_float`).
    fn wrap_float(&self, value: f64) -> Result<SymNode>;
    /// A constant boolean of this node's environment (`wrap_bool`).
    fn wrap_bool(&self, value: bool) -> Result<SymNode>;
    /// The integer's value, recorded as a guard by the environment; `file`
    /// and `line` say where the program asked.
    fn guard_int(&self, file: &str, line: u32) -> Result<i64>;
    /// The float's value, recorded as a guard.
    fn guard_float(&self, file: &str, line: u32) -> Result<f64>;
    /// The boolean's value, recorded as a guard.
    fn guard_bool(&self, file: &str, line: u32) -> Result<bool>;
    /// Asserts that the boolean holds (a runtime assertion for unbacked
    /// values, where a guard would be an error); returns it.
    fn expect_true(&self, file: &str, line: u32) -> Result<bool> {
        self.guard_bool(file, line)
    }
    /// The value, when the node is a constant integer (`constant_int`).
    fn constant_int(&self) -> Option<i64> {
        None
    }
    /// The value, when the node is a constant boolean (`constant_bool`).
    fn constant_bool(&self) -> Option<bool> {
        None
    }
    /// The example value the environment knows, if any (the node's
    /// `hint`).
    fn hint(&self) -> Option<SymValue> {
        None
    }
    /// Whether the environment knows an example value (`has_hint`).
    fn has_hint(&self) -> bool {
        self.hint().is_some()
    }
    /// The expression as PyTorch prints it (`s0*2`).
    fn str(&self) -> String;
}

/// A shared handle to a [`SymNodeImpl`] (`c10::SymNode`, an intrusive
/// pointer there). One pointer wide, so that an `IValue` holds it inline.
#[derive(Clone)]
pub struct SymNode(Arc<Box<dyn SymNodeImpl>>);

impl SymNode {
    /// A handle to `node`.
    pub fn new(node: impl SymNodeImpl + 'static) -> SymNode {
        SymNode(Arc::new(Box::new(node)))
    }

    /// The node.
    pub fn get(&self) -> &(dyn SymNodeImpl + 'static) {
        &**self.0
    }

    /// Whether both handles are the same node.
    pub fn ptr_eq(&self, other: &SymNode) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::ops::Deref for SymNode {
    type Target = dyn SymNodeImpl + 'static;
    fn deref(&self) -> &Self::Target {
        self.get()
    }
}

impl fmt::Debug for SymNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SymNode({})", self.get().str())
    }
}

impl fmt::Display for SymNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.get().str())
    }
}

/// A symbolic scalar as the arithmetic shared by the three sees it.
pub(super) trait SymScalar {
    /// The node, when symbolic.
    fn node(&self) -> Option<&SymNode>;
    /// The scalar as a node of `like`'s environment (a concrete one
    /// wrapped).
    fn to_node(&self, like: &SymNode) -> Result<SymNode>;
}

/// Both operands as nodes of the environment of whichever is symbolic;
/// `None` when both are concrete.
pub(super) fn node_operands<S: SymScalar>(a: &S, b: &S) -> Result<Option<(SymNode, SymNode)>> {
    let Some(like) = a.node().or(b.node()) else {
        return Ok(None);
    };
    Ok(Some((a.to_node(like)?, b.to_node(like)?)))
}

/// A comparison of two concrete values.
pub(super) fn compare_values<T: PartialOrd + PartialEq>(
    op: SymBinaryOp,
    a: T,
    b: T,
) -> Result<bool> {
    Ok(match op {
        SymBinaryOp::Eq => a == b,
        SymBinaryOp::Ne => a != b,
        SymBinaryOp::Lt => a < b,
        SymBinaryOp::Le => a <= b,
        SymBinaryOp::Gt => a > b,
        SymBinaryOp::Ge => a >= b,
        other => return Err(Error::internal(format!("{other:?} is not a comparison"))),
    })
}
