//! [`SymInt`]: an integer, concrete or symbolic (`c10::SymInt`).

use std::fmt;

use super::node::{compare_values, node_operands, SymBinaryOp, SymNode, SymScalar, SymUnaryOp};
use super::{SymBool, SymFloat};
use crate::{Error, Result};

/// An integer that is either known (`Int`) or a node of a shape
/// environment's expressions (see the [module docs](super)). A constant
/// node is never kept: [`SymInt::from_node`] reads it as its value.
#[derive(Clone)]
pub struct SymInt(Repr);

#[derive(Clone)]
enum Repr {
    Int(i64),
    Node(SymNode),
}

impl SymInt {
    /// A concrete integer.
    pub const fn new(value: i64) -> SymInt {
        SymInt(Repr::Int(value))
    }

    /// The integer a node stands for: its value when the node is a
    /// constant, else the node.
    pub fn from_node(node: SymNode) -> SymInt {
        match node.constant_int() {
            Some(v) => SymInt::new(v),
            None => SymInt(Repr::Node(node)),
        }
    }

    /// Whether the integer is a node (`is_symbolic`, `is_heap_allocated`).
    #[doc(alias = "is_heap_allocated")]
    pub fn is_symbolic(&self) -> bool {
        matches!(self.0, Repr::Node(_))
    }

    /// The value when concrete (`maybe_as_int`).
    pub fn maybe_as_int(&self) -> Option<i64> {
        match self.0 {
            Repr::Int(v) => Some(v),
            Repr::Node(_) => None,
        }
    }

    /// The node when symbolic (`toSymNode`).
    #[doc(alias = "toSymNode")]
    pub fn as_node(&self) -> Option<&SymNode> {
        match &self.0 {
            Repr::Int(_) => None,
            Repr::Node(n) => Some(n),
        }
    }

    /// The value, an error when symbolic (`expect_int`).
    pub fn expect_int(&self) -> Result<i64> {
        self.maybe_as_int().ok_or_else(|| {
            Error::runtime(format!(
                "when unpacking SymInt, expected int but got {self}"
            ))
        })
    }

    /// The value, guarding on it when symbolic (`guard_int`): the node's
    /// environment records that the program relied on it.
    pub fn guard_int(&self, file: &str, line: u32) -> Result<i64> {
        match &self.0 {
            Repr::Int(v) => Ok(*v),
            Repr::Node(n) => n.guard_int(file, line),
        }
    }

    /// The integer as a node of `like`'s environment (`wrap_node`'s
    /// inverse: a concrete one is wrapped).
    pub fn to_node(&self, like: &SymNode) -> Result<SymNode> {
        match &self.0 {
            Repr::Int(v) => like.wrap_int(*v),
            Repr::Node(n) => Ok(n.clone()),
        }
    }

    /// `self op other` for an integer-valued `op`.
    fn arith(&self, op: SymBinaryOp, other: &SymInt) -> Result<SymInt> {
        if let Some((a, b)) = node_operands(self, other)? {
            return Ok(SymInt::from_node(a.binary(op, &b)?));
        }
        let (a, b) = (self.maybe_as_int(), other.maybe_as_int());
        let (Some(a), Some(b)) = (a, b) else {
            return Err(Error::internal("a SymInt is neither concrete nor a node"));
        };
        int_op(op, a, b).map(SymInt::new)
    }

    /// `self + other`.
    pub fn add(&self, other: &SymInt) -> Result<SymInt> {
        self.arith(SymBinaryOp::Add, other)
    }

    /// `self - other`.
    pub fn sub(&self, other: &SymInt) -> Result<SymInt> {
        self.arith(SymBinaryOp::Sub, other)
    }

    /// `self * other`.
    pub fn mul(&self, other: &SymInt) -> Result<SymInt> {
        self.arith(SymBinaryOp::Mul, other)
    }

    /// `self // other`, rounded down as Python rounds.
    pub fn floordiv(&self, other: &SymInt) -> Result<SymInt> {
        self.arith(SymBinaryOp::FloorDiv, other)
    }

    /// `self % other`, with `other`'s sign as in Python.
    #[doc(alias = "mod")]
    pub fn rem(&self, other: &SymInt) -> Result<SymInt> {
        self.arith(SymBinaryOp::Mod, other)
    }

    /// `self ** other` (a non-negative exponent).
    pub fn pow(&self, other: &SymInt) -> Result<SymInt> {
        self.arith(SymBinaryOp::Pow, other)
    }

    /// `min(self, other)` (`sym_min`).
    #[doc(alias = "sym_min")]
    pub fn min(&self, other: &SymInt) -> Result<SymInt> {
        self.arith(SymBinaryOp::Min, other)
    }

    /// `max(self, other)` (`sym_max`).
    #[doc(alias = "sym_max")]
    pub fn max(&self, other: &SymInt) -> Result<SymInt> {
        self.arith(SymBinaryOp::Max, other)
    }

    /// `-self`.
    pub fn neg(&self) -> Result<SymInt> {
        match &self.0 {
            Repr::Int(v) => v
                .checked_neg()
                .map(SymInt::new)
                .ok_or_else(|| overflow(SymBinaryOp::Sub, 0, *v)),
            Repr::Node(n) => Ok(SymInt::from_node(n.unary(SymUnaryOp::Neg)?)),
        }
    }

    /// `self / other` as a float.
    pub fn truediv(&self, other: &SymInt) -> Result<SymFloat> {
        self.to_sym_float()?.truediv(&other.to_sym_float()?)
    }

    /// The integer as a float (`sym_float`).
    #[doc(alias = "sym_float")]
    pub fn to_sym_float(&self) -> Result<SymFloat> {
        match &self.0 {
            Repr::Int(v) => Ok(SymFloat::new(*v as f64)),
            Repr::Node(n) => Ok(SymFloat::from_node(n.unary(SymUnaryOp::SymFloat)?)),
        }
    }

    /// `self op other` for a comparison.
    fn compare(&self, op: SymBinaryOp, other: &SymInt) -> Result<SymBool> {
        if let Some((a, b)) = node_operands(self, other)? {
            return Ok(SymBool::from_node(a.binary(op, &b)?));
        }
        let (a, b) = (self.maybe_as_int(), other.maybe_as_int());
        let (Some(a), Some(b)) = (a, b) else {
            return Err(Error::internal("a SymInt is neither concrete nor a node"));
        };
        Ok(SymBool::new(compare_values(op, a, b)?))
    }

    /// `self == other` (`sym_eq`).
    pub fn sym_eq(&self, other: &SymInt) -> Result<SymBool> {
        self.compare(SymBinaryOp::Eq, other)
    }

    /// `self != other` (`sym_ne`).
    pub fn sym_ne(&self, other: &SymInt) -> Result<SymBool> {
        self.compare(SymBinaryOp::Ne, other)
    }

    /// `self < other` (`sym_lt`).
    pub fn sym_lt(&self, other: &SymInt) -> Result<SymBool> {
        self.compare(SymBinaryOp::Lt, other)
    }

    /// `self <= other` (`sym_le`).
    pub fn sym_le(&self, other: &SymInt) -> Result<SymBool> {
        self.compare(SymBinaryOp::Le, other)
    }

    /// `self > other` (`sym_gt`).
    pub fn sym_gt(&self, other: &SymInt) -> Result<SymBool> {
        self.compare(SymBinaryOp::Gt, other)
    }

    /// `self >= other` (`sym_ge`).
    pub fn sym_ge(&self, other: &SymInt) -> Result<SymBool> {
        self.compare(SymBinaryOp::Ge, other)
    }
}

fn overflow(op: SymBinaryOp, a: i64, b: i64) -> Error {
    Error::runtime(format!(
        "SymInt arithmetic overflowed: {op:?} of {a} and {b}"
    ))
}

/// An integer operation on concrete values, as Python computes it (floor
/// division and modulo round down), checked.
fn int_op(op: SymBinaryOp, a: i64, b: i64) -> Result<i64> {
    use SymBinaryOp::*;
    let zero = || Error::runtime("ZeroDivisionError: integer division or modulo by zero");
    let value = match op {
        Add => a.checked_add(b),
        Sub => a.checked_sub(b),
        Mul => a.checked_mul(b),
        FloorDiv => {
            if b == 0 {
                return Err(zero());
            }
            a.checked_div(b).map(|q| {
                if a % b != 0 && ((a < 0) != (b < 0)) {
                    q - 1
                } else {
                    q
                }
            })
        }
        Mod => {
            if b == 0 {
                return Err(zero());
            }
            a.checked_rem(b).map(|r| {
                if r != 0 && ((r < 0) != (b < 0)) {
                    r + b
                } else {
                    r
                }
            })
        }
        Pow => {
            let e = u32::try_from(b).map_err(|_| {
                Error::runtime(format!(
                    "SymInt pow: the exponent {b} is not a small non-negative integer"
                ))
            })?;
            a.checked_pow(e)
        }
        Min => Some(a.min(b)),
        Max => Some(a.max(b)),
        other => {
            return Err(Error::internal(format!(
                "{other:?} is not an integer operation"
            )))
        }
    };
    value.ok_or_else(|| overflow(op, a, b))
}

impl SymScalar for SymInt {
    fn node(&self) -> Option<&SymNode> {
        self.as_node()
    }
    fn to_node(&self, like: &SymNode) -> Result<SymNode> {
        SymInt::to_node(self, like)
    }
}

impl From<i64> for SymInt {
    fn from(value: i64) -> SymInt {
        SymInt::new(value)
    }
}

impl PartialEq<i64> for SymInt {
    /// Equal only when concrete and equal (no guard is made).
    fn eq(&self, other: &i64) -> bool {
        self.maybe_as_int() == Some(*other)
    }
}

impl fmt::Display for SymInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Int(v) => write!(f, "{v}"),
            Repr::Node(n) => write!(f, "{n}"),
        }
    }
}

impl fmt::Debug for SymInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The integers of a `SymInt[]` that must be concrete
/// (`C10_AS_INTARRAYREF_SLOW`, `asIntArrayRefSlow`): an error naming the
/// list when one is symbolic.
#[doc(alias = "asIntArrayRefSlow", alias = "C10_AS_INTARRAYREF_SLOW")]
pub fn as_int_array(xs: &[SymInt]) -> Result<Vec<i64>> {
    xs.iter()
        .map(SymInt::maybe_as_int)
        .collect::<Option<Vec<i64>>>()
        .ok_or_else(|| Error::runtime("SymIntArrayRef expected to contain only concrete integers"))
}
