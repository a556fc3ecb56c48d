//! [`HintedNode`]: the plainest [`SymNodeImpl`]: an expression's text and,
//! when known, its example value (its *hint*); guards read the hint and
//! are recorded in the environment's [`GuardLog`]. Symbols without a hint
//! are *unbacked* (a data-dependent size): guarding on them is PyTorch's
//! `GuardOnDataDependentSymNode` error.

use std::sync::{Arc, Mutex};

use super::node::{SymBinaryOp, SymNode, SymNodeImpl, SymUnaryOp, SymValue};
use super::{SymBool, SymFloat, SymInt};
use crate::{Error, Result};

/// The guards the program made, in order (`ShapeEnv.guards`): each is the
/// expression and the value it was found to have.
#[derive(Clone, Debug, Default)]
pub struct GuardLog(Arc<Mutex<Vec<(String, SymValue)>>>);

impl GuardLog {
    /// An empty log.
    pub fn new() -> GuardLog {
        GuardLog::default()
    }

    /// The guards so far.
    pub fn guards(&self) -> Vec<(String, SymValue)> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn record(&self, expr: &str, value: SymValue) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((expr.to_string(), value));
    }

    /// A symbol `name` of integer type with example value `hint` (`None`:
    /// unbacked).
    pub fn int_symbol(&self, name: &str, hint: Option<i64>) -> SymInt {
        SymInt::from_node(SymNode::new(HintedNode {
            expr: name.to_string(),
            kind: Kind::Int,
            hint: hint.map(SymValue::Int),
            constant: false,
            log: self.clone(),
        }))
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    Int,
    Float,
    Bool,
}

/// A node of a [`GuardLog`]'s environment (see the module docs).
#[derive(Debug)]
pub struct HintedNode {
    expr: String,
    kind: Kind,
    hint: Option<SymValue>,
    /// A wrapped number: its hint is its value.
    constant: bool,
    log: GuardLog,
}

impl Kind {
    fn of(value: SymValue) -> Kind {
        match value {
            SymValue::Int(_) => Kind::Int,
            SymValue::Float(_) => Kind::Float,
            SymValue::Bool(_) => Kind::Bool,
        }
    }
}

impl HintedNode {
    /// A node of this one's environment.
    fn derived(&self, expr: String, kind: Kind, hint: Option<SymValue>, constant: bool) -> SymNode {
        SymNode::new(HintedNode {
            expr,
            kind,
            hint,
            constant,
            log: self.log.clone(),
        })
    }

    /// A constant of this one's environment.
    fn wrap(&self, value: SymValue) -> SymNode {
        let expr = match value {
            SymValue::Int(v) => v.to_string(),
            SymValue::Float(v) => format!("{v:?}"),
            SymValue::Bool(v) => (if v { "True" } else { "False" }).to_string(),
        };
        self.derived(expr, Kind::of(value), Some(value), true)
    }

    fn guard(&self, file: &str, line: u32) -> Result<SymValue> {
        let Some(value) = self.hint else {
            return Err(Error::runtime(format!(
                "Could not guard on data-dependent expression {} (unhinted: {}).  (Size-like symbols: none)\n\nCaused by: ({file}:{line})",
                self.expr, self.expr
            )));
        };
        if !self.constant {
            self.log.record(&self.expr, value);
        }
        Ok(value)
    }
}

/// `op` on two concrete values, through the concrete scalars' arithmetic.
fn concrete(op: SymBinaryOp, a: SymValue, b: SymValue) -> Result<SymValue> {
    use SymValue::*;
    let int = |v: SymInt| v.maybe_as_int().map(Int);
    let float = |v: SymFloat| v.maybe_as_float().map(Float);
    let boolean = |v: SymBool| v.maybe_as_bool().map(Bool);
    let value = match (a, b) {
        (Int(a), Int(b)) => {
            let (a, b) = (SymInt::new(a), SymInt::new(b));
            match op {
                SymBinaryOp::TrueDiv => float(a.truediv(&b)?),
                SymBinaryOp::Eq => boolean(a.sym_eq(&b)?),
                SymBinaryOp::Ne => boolean(a.sym_ne(&b)?),
                SymBinaryOp::Lt => boolean(a.sym_lt(&b)?),
                SymBinaryOp::Le => boolean(a.sym_le(&b)?),
                SymBinaryOp::Gt => boolean(a.sym_gt(&b)?),
                SymBinaryOp::Ge => boolean(a.sym_ge(&b)?),
                SymBinaryOp::Add => int(a.add(&b)?),
                SymBinaryOp::Sub => int(a.sub(&b)?),
                SymBinaryOp::Mul => int(a.mul(&b)?),
                SymBinaryOp::FloorDiv => int(a.floordiv(&b)?),
                SymBinaryOp::Mod => int(a.rem(&b)?),
                SymBinaryOp::Pow => int(a.pow(&b)?),
                SymBinaryOp::Min => int(a.min(&b)?),
                SymBinaryOp::Max => int(a.max(&b)?),
                SymBinaryOp::And | SymBinaryOp::Or => None,
            }
        }
        (Bool(a), Bool(b)) => {
            let (a, b) = (SymBool::new(a), SymBool::new(b));
            match op {
                SymBinaryOp::And => boolean(a.sym_and(&b)?),
                SymBinaryOp::Or => boolean(a.sym_or(&b)?),
                _ => None,
            }
        }
        (a, b) => {
            let as_float = |v: SymValue| match v {
                Int(i) => Some(SymFloat::new(i as f64)),
                Float(f) => Some(SymFloat::new(f)),
                Bool(_) => None,
            };
            match (as_float(a), as_float(b)) {
                (Some(a), Some(b)) => match op {
                    SymBinaryOp::Add => float(a.add(&b)?),
                    SymBinaryOp::Sub => float(a.sub(&b)?),
                    SymBinaryOp::Mul => float(a.mul(&b)?),
                    SymBinaryOp::TrueDiv => float(a.truediv(&b)?),
                    SymBinaryOp::Eq => boolean(a.sym_eq(&b)?),
                    SymBinaryOp::Lt => boolean(a.sym_lt(&b)?),
                    SymBinaryOp::Le => boolean(a.sym_le(&b)?),
                    _ => None,
                },
                _ => None,
            }
        }
    };
    value.ok_or_else(|| Error::runtime(format!("{op:?} of {a:?} and {b:?} is not defined")))
}

/// The operator printed between the operands, or the function printed
/// around them.
fn infix(op: SymBinaryOp) -> std::result::Result<&'static str, &'static str> {
    use SymBinaryOp::*;
    Ok(match op {
        Add => "+",
        Sub => "-",
        Mul => "*",
        TrueDiv => "/",
        FloorDiv => "//",
        Mod => "%",
        Pow => "**",
        Eq => "==",
        Ne => "!=",
        Lt => "<",
        Le => "<=",
        Gt => ">",
        Ge => ">=",
        And => "&",
        Or => "|",
        Min => return Err("Min"),
        Max => return Err("Max"),
    })
}

impl SymNodeImpl for HintedNode {
    fn is_int(&self) -> bool {
        self.kind == Kind::Int
    }
    fn is_float(&self) -> bool {
        self.kind == Kind::Float
    }
    fn is_bool(&self) -> bool {
        self.kind == Kind::Bool
    }

    fn binary(&self, op: SymBinaryOp, other: &SymNode) -> Result<SymNode> {
        let b = other.str();
        let expr = match infix(op) {
            Ok(sign) => format!("({}) {sign} ({b})", self.expr),
            Err(function) => format!("{function}({}, {b})", self.expr),
        };
        let theirs = other.hint();
        let hint = match (self.hint, theirs) {
            (Some(a), Some(b)) => Some(concrete(op, a, b)?),
            _ => None,
        };
        let kind = match hint {
            Some(value) => Kind::of(value),
            None if op.is_comparison() => Kind::Bool,
            None if op == SymBinaryOp::TrueDiv => Kind::Float,
            None => self.kind,
        };
        Ok(self.derived(expr, kind, hint, false))
    }

    fn unary(&self, op: SymUnaryOp) -> Result<SymNode> {
        let (expr, kind, hint) = match (op, self.hint) {
            (SymUnaryOp::Neg, h) => (
                format!("-({})", self.expr),
                self.kind,
                match h {
                    Some(SymValue::Int(v)) => {
                        Some(SymValue::Int(SymInt::new(v).neg()?.expect_int()?))
                    }
                    Some(SymValue::Float(v)) => Some(SymValue::Float(-v)),
                    _ => None,
                },
            ),
            (SymUnaryOp::Not, h) => (
                format!("~({})", self.expr),
                Kind::Bool,
                match h {
                    Some(SymValue::Bool(v)) => Some(SymValue::Bool(!v)),
                    _ => None,
                },
            ),
            (SymUnaryOp::SymFloat, h) => (
                format!("ToFloat({})", self.expr),
                Kind::Float,
                match h {
                    Some(SymValue::Int(v)) => Some(SymValue::Float(v as f64)),
                    other => other,
                },
            ),
            (SymUnaryOp::Floor | SymUnaryOp::Ceil, h) => {
                let name = if op == SymUnaryOp::Floor {
                    "floor"
                } else {
                    "ceiling"
                };
                let round = |v: f64| {
                    if op == SymUnaryOp::Floor {
                        v.floor()
                    } else {
                        v.ceil()
                    }
                };
                (
                    format!("{name}({})", self.expr),
                    Kind::Int,
                    match h {
                        Some(SymValue::Float(v)) if round(v).abs() < 9.0e18 => {
                            Some(SymValue::Int(round(v) as i64))
                        }
                        Some(SymValue::Int(v)) => Some(SymValue::Int(v)),
                        _ => None,
                    },
                )
            }
        };
        Ok(self.derived(expr, kind, hint, false))
    }

    fn wrap_int(&self, value: i64) -> Result<SymNode> {
        Ok(self.wrap(SymValue::Int(value)))
    }
    fn wrap_float(&self, value: f64) -> Result<SymNode> {
        Ok(self.wrap(SymValue::Float(value)))
    }
    fn wrap_bool(&self, value: bool) -> Result<SymNode> {
        Ok(self.wrap(SymValue::Bool(value)))
    }

    fn guard_int(&self, file: &str, line: u32) -> Result<i64> {
        match self.guard(file, line)? {
            SymValue::Int(v) => Ok(v),
            other => Err(Error::runtime(format!("guard_int on {other:?}"))),
        }
    }
    fn guard_float(&self, file: &str, line: u32) -> Result<f64> {
        match self.guard(file, line)? {
            SymValue::Float(v) => Ok(v),
            SymValue::Int(v) => Ok(v as f64),
            other => Err(Error::runtime(format!("guard_float on {other:?}"))),
        }
    }
    fn guard_bool(&self, file: &str, line: u32) -> Result<bool> {
        match self.guard(file, line)? {
            SymValue::Bool(v) => Ok(v),
            other => Err(Error::runtime(format!("guard_bool on {other:?}"))),
        }
    }

    fn constant_int(&self) -> Option<i64> {
        match (self.constant, self.hint) {
            (true, Some(SymValue::Int(v))) => Some(v),
            _ => None,
        }
    }
    fn constant_bool(&self) -> Option<bool> {
        match (self.constant, self.hint) {
            (true, Some(SymValue::Bool(v))) => Some(v),
            _ => None,
        }
    }
    fn hint(&self) -> Option<SymValue> {
        self.hint
    }
    fn str(&self) -> String {
        self.expr.clone()
    }
}
