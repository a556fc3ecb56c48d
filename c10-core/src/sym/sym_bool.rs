//! [`SymBool`]: a boolean, concrete or symbolic (`c10::SymBool`).

use std::fmt;

use super::node::{compare_values, node_operands, SymBinaryOp, SymNode, SymScalar, SymUnaryOp};
use crate::{Error, Result};

/// A boolean that is either known or a node of a shape environment's
/// expressions (a comparison of sizes).
#[derive(Clone)]
pub struct SymBool(Repr);

#[derive(Clone)]
enum Repr {
    Bool(bool),
    Node(SymNode),
}

impl SymBool {
    /// A concrete boolean.
    pub const fn new(value: bool) -> SymBool {
        SymBool(Repr::Bool(value))
    }

    /// The boolean a node stands for: its value when the node is a
    /// constant, else the node.
    pub fn from_node(node: SymNode) -> SymBool {
        match node.constant_bool() {
            Some(v) => SymBool::new(v),
            None => SymBool(Repr::Node(node)),
        }
    }

    /// Whether the boolean is a node.
    pub fn is_symbolic(&self) -> bool {
        matches!(self.0, Repr::Node(_))
    }

    /// The value when concrete (`maybe_as_bool`).
    pub fn maybe_as_bool(&self) -> Option<bool> {
        match self.0 {
            Repr::Bool(v) => Some(v),
            Repr::Node(_) => None,
        }
    }

    /// The node when symbolic.
    pub fn as_node(&self) -> Option<&SymNode> {
        match &self.0 {
            Repr::Bool(_) => None,
            Repr::Node(n) => Some(n),
        }
    }

    /// The value, an error when symbolic (`expect_bool`).
    pub fn expect_bool(&self) -> Result<bool> {
        self.maybe_as_bool().ok_or_else(|| {
            Error::runtime(format!(
                "when unpacking SymBool, expected bool but got {self}"
            ))
        })
    }

    /// The value, guarding on it when symbolic (`guard_bool`).
    pub fn guard_bool(&self, file: &str, line: u32) -> Result<bool> {
        match &self.0 {
            Repr::Bool(v) => Ok(*v),
            Repr::Node(n) => n.guard_bool(file, line),
        }
    }

    /// Asserts that the boolean holds (`expect_true`): a concrete false is
    /// `false`; a node records a runtime assertion with its environment.
    pub fn expect_true(&self, file: &str, line: u32) -> Result<bool> {
        match &self.0 {
            Repr::Bool(v) => Ok(*v),
            Repr::Node(n) => n.expect_true(file, line),
        }
    }

    fn logic(&self, op: SymBinaryOp, other: &SymBool) -> Result<SymBool> {
        if let Some((a, b)) = node_operands(self, other)? {
            return Ok(SymBool::from_node(a.binary(op, &b)?));
        }
        let (Some(a), Some(b)) = (self.maybe_as_bool(), other.maybe_as_bool()) else {
            return Err(Error::internal("a SymBool is neither concrete nor a node"));
        };
        let value = match op {
            SymBinaryOp::And => a && b,
            SymBinaryOp::Or => a || b,
            other => compare_values(other, a, b)?,
        };
        Ok(SymBool::new(value))
    }

    /// `self and other` (`sym_and`).
    pub fn sym_and(&self, other: &SymBool) -> Result<SymBool> {
        self.logic(SymBinaryOp::And, other)
    }

    /// `self or other` (`sym_or`).
    pub fn sym_or(&self, other: &SymBool) -> Result<SymBool> {
        self.logic(SymBinaryOp::Or, other)
    }

    /// `not self` (`sym_not`).
    pub fn sym_not(&self) -> Result<SymBool> {
        match &self.0 {
            Repr::Bool(v) => Ok(SymBool::new(!v)),
            Repr::Node(n) => Ok(SymBool::from_node(n.unary(SymUnaryOp::Not)?)),
        }
    }
}

impl SymScalar for SymBool {
    fn node(&self) -> Option<&SymNode> {
        self.as_node()
    }
    fn to_node(&self, like: &SymNode) -> Result<SymNode> {
        match &self.0 {
            Repr::Bool(v) => like.wrap_bool(*v),
            Repr::Node(n) => Ok(n.clone()),
        }
    }
}

impl From<bool> for SymBool {
    fn from(value: bool) -> SymBool {
        SymBool::new(value)
    }
}

impl fmt::Display for SymBool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Bool(true) => f.write_str("True"),
            Repr::Bool(false) => f.write_str("False"),
            Repr::Node(n) => write!(f, "{n}"),
        }
    }
}

impl fmt::Debug for SymBool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
