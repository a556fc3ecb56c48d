//! [`SymFloat`]: a float, concrete or symbolic (`c10::SymFloat`).

use std::fmt;

use super::node::{compare_values, node_operands, SymBinaryOp, SymNode, SymScalar};
use super::SymBool;
use crate::{Error, Result};

/// A float that is either known or a node of a shape environment's
/// expressions.
#[derive(Clone)]
pub struct SymFloat(Repr);

#[derive(Clone)]
enum Repr {
    Double(f64),
    Node(SymNode),
}

impl SymFloat {
    /// A concrete float.
    pub const fn new(value: f64) -> SymFloat {
        SymFloat(Repr::Double(value))
    }

    /// The float a node stands for.
    pub fn from_node(node: SymNode) -> SymFloat {
        SymFloat(Repr::Node(node))
    }

    /// Whether the float is a node.
    pub fn is_symbolic(&self) -> bool {
        matches!(self.0, Repr::Node(_))
    }

    /// The value when concrete.
    pub fn maybe_as_float(&self) -> Option<f64> {
        match self.0 {
            Repr::Double(v) => Some(v),
            Repr::Node(_) => None,
        }
    }

    /// The node when symbolic (`toSymNodeImpl`).
    pub fn as_node(&self) -> Option<&SymNode> {
        match &self.0 {
            Repr::Double(_) => None,
            Repr::Node(n) => Some(n),
        }
    }

    /// The value, an error when symbolic (`expect_float`).
    pub fn expect_float(&self) -> Result<f64> {
        self.maybe_as_float().ok_or_else(|| {
            Error::runtime(format!(
                "when unpacking SymFloat, expected float but got {self}"
            ))
        })
    }

    /// The value, guarding on it when symbolic (`guard_float`).
    pub fn guard_float(&self, file: &str, line: u32) -> Result<f64> {
        match &self.0 {
            Repr::Double(v) => Ok(*v),
            Repr::Node(n) => n.guard_float(file, line),
        }
    }

    fn arith(&self, op: SymBinaryOp, other: &SymFloat) -> Result<SymFloat> {
        if let Some((a, b)) = node_operands(self, other)? {
            return Ok(SymFloat::from_node(a.binary(op, &b)?));
        }
        let (Some(a), Some(b)) = (self.maybe_as_float(), other.maybe_as_float()) else {
            return Err(Error::internal("a SymFloat is neither concrete nor a node"));
        };
        let value = match op {
            SymBinaryOp::Add => a + b,
            SymBinaryOp::Sub => a - b,
            SymBinaryOp::Mul => a * b,
            SymBinaryOp::TrueDiv => {
                if b == 0.0 {
                    return Err(Error::runtime("ZeroDivisionError: float division by zero"));
                }
                a / b
            }
            SymBinaryOp::Pow => a.powf(b),
            SymBinaryOp::Min => a.min(b),
            SymBinaryOp::Max => a.max(b),
            other => {
                return Err(Error::internal(format!(
                    "{other:?} is not a float operation"
                )))
            }
        };
        Ok(SymFloat::new(value))
    }

    /// `self + other`.
    pub fn add(&self, other: &SymFloat) -> Result<SymFloat> {
        self.arith(SymBinaryOp::Add, other)
    }

    /// `self - other`.
    pub fn sub(&self, other: &SymFloat) -> Result<SymFloat> {
        self.arith(SymBinaryOp::Sub, other)
    }

    /// `self * other`.
    pub fn mul(&self, other: &SymFloat) -> Result<SymFloat> {
        self.arith(SymBinaryOp::Mul, other)
    }

    /// `self / other`.
    pub fn truediv(&self, other: &SymFloat) -> Result<SymFloat> {
        self.arith(SymBinaryOp::TrueDiv, other)
    }

    /// `self ** other`.
    pub fn pow(&self, other: &SymFloat) -> Result<SymFloat> {
        self.arith(SymBinaryOp::Pow, other)
    }

    /// `self op other` for a comparison.
    fn compare(&self, op: SymBinaryOp, other: &SymFloat) -> Result<SymBool> {
        if let Some((a, b)) = node_operands(self, other)? {
            return Ok(SymBool::from_node(a.binary(op, &b)?));
        }
        let (Some(a), Some(b)) = (self.maybe_as_float(), other.maybe_as_float()) else {
            return Err(Error::internal("a SymFloat is neither concrete nor a node"));
        };
        Ok(SymBool::new(compare_values(op, a, b)?))
    }

    /// `self == other` (`sym_eq`).
    pub fn sym_eq(&self, other: &SymFloat) -> Result<SymBool> {
        self.compare(SymBinaryOp::Eq, other)
    }

    /// `self < other` (`sym_lt`).
    pub fn sym_lt(&self, other: &SymFloat) -> Result<SymBool> {
        self.compare(SymBinaryOp::Lt, other)
    }

    /// `self <= other` (`sym_le`).
    pub fn sym_le(&self, other: &SymFloat) -> Result<SymBool> {
        self.compare(SymBinaryOp::Le, other)
    }
}

impl SymScalar for SymFloat {
    fn node(&self) -> Option<&SymNode> {
        self.as_node()
    }
    fn to_node(&self, like: &SymNode) -> Result<SymNode> {
        match &self.0 {
            Repr::Double(v) => like.wrap_float(*v),
            Repr::Node(n) => Ok(n.clone()),
        }
    }
}

impl From<f64> for SymFloat {
    fn from(value: f64) -> SymFloat {
        SymFloat::new(value)
    }
}

impl fmt::Display for SymFloat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Double(v) => write!(f, "{v:?}"),
            Repr::Node(n) => write!(f, "{n}"),
        }
    }
}

impl fmt::Debug for SymFloat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
