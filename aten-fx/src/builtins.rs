//! The Python functions a graph calls on sizes (FX `call_function` nodes
//! whose target is not an operator): `operator.add`, `math.trunc`,
//! `torch.sym_max`, ... as `torch.export` serializes them
//! (`_operator.add`), evaluated on Python ints, floats and bools with
//! Python's semantics (floor division and modulo round towards negative
//! infinity; `/` gives a float).

use aten_boxing::IValue;
use c10_core::{Error, Result};

/// A Python function of sizes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// `operator.add`.
    Add,
    /// `operator.sub`.
    Sub,
    /// `operator.mul`.
    Mul,
    /// `operator.floordiv`.
    FloorDiv,
    /// `operator.truediv`.
    TrueDiv,
    /// `operator.mod`.
    Mod,
    /// `operator.pow`.
    Pow,
    /// `operator.neg`.
    Neg,
    /// `operator.pos`.
    Pos,
    /// `operator.abs`.
    Abs,
    /// `operator.eq`.
    Eq,
    /// `operator.ne`.
    Ne,
    /// `operator.lt`.
    Lt,
    /// `operator.le`.
    Le,
    /// `operator.gt`.
    Gt,
    /// `operator.ge`.
    Ge,
    /// `operator.and_`.
    And,
    /// `operator.or_`.
    Or,
    /// `operator.not_` and `torch.sym_not`.
    Not,
    /// `math.trunc`.
    Trunc,
    /// `math.floor`.
    Floor,
    /// `math.ceil`.
    Ceil,
    /// `torch.sym_max`.
    SymMax,
    /// `torch.sym_min`.
    SymMin,
    /// `torch.sym_float`.
    SymFloat,
    /// `torch.sym_int`.
    SymInt,
    /// `torch.sym_ite`.
    SymIte,
    /// `torch._sym_sqrt`, `math.sqrt`.
    Sqrt,
    /// `torch.sym_sum`.
    SymSum,
}

/// The builtins by the names `torch.export` writes.
const NAMES: &[(&str, Builtin)] = &[
    ("_operator.add", Builtin::Add),
    ("_operator.sub", Builtin::Sub),
    ("_operator.mul", Builtin::Mul),
    ("_operator.floordiv", Builtin::FloorDiv),
    ("_operator.truediv", Builtin::TrueDiv),
    ("_operator.mod", Builtin::Mod),
    ("_operator.pow", Builtin::Pow),
    ("_operator.neg", Builtin::Neg),
    ("_operator.pos", Builtin::Pos),
    ("_operator.abs", Builtin::Abs),
    ("_operator.eq", Builtin::Eq),
    ("_operator.ne", Builtin::Ne),
    ("_operator.lt", Builtin::Lt),
    ("_operator.le", Builtin::Le),
    ("_operator.gt", Builtin::Gt),
    ("_operator.ge", Builtin::Ge),
    ("_operator.and_", Builtin::And),
    ("_operator.or_", Builtin::Or),
    ("_operator.not_", Builtin::Not),
    ("math.trunc", Builtin::Trunc),
    ("math.floor", Builtin::Floor),
    ("math.ceil", Builtin::Ceil),
    ("math.sqrt", Builtin::Sqrt),
    ("torch.sym_max", Builtin::SymMax),
    ("torch.sym_min", Builtin::SymMin),
    ("torch.sym_not", Builtin::Not),
    ("torch.sym_float", Builtin::SymFloat),
    ("torch.sym_int", Builtin::SymInt),
    ("torch.sym_ite", Builtin::SymIte),
    ("torch._sym_sqrt", Builtin::Sqrt),
    ("torch.sym_sqrt", Builtin::Sqrt),
    ("torch.sym_sum", Builtin::SymSum),
];

/// A Python number: what builtins compute and what size expressions
/// evaluate to.
#[derive(Copy, Clone, Debug, PartialEq)]
pub(crate) enum Num {
    /// An int (sizes, strides, offsets).
    Int(i64),
    /// A float (`FloatTrueDiv`, `Float(...)`).
    Float(f64),
    /// A bool (Python's `bool` is an `int`; `Eq(...)`, `true`).
    Bool(bool),
}

impl Num {
    fn of(v: &IValue, what: &str) -> Result<Num> {
        match v {
            IValue::Int(i) => Ok(Num::Int(*i)),
            IValue::SymInt(_) => v.to_int().map(Num::Int),
            IValue::Double(d) => Ok(Num::Float(d.get())),
            IValue::Bool(b) => Ok(Num::Bool(b.get())),
            other => Err(Error::runtime(format!(
                "{what}: expected a number, got {}",
                other.type_name()
            ))),
        }
    }

    /// The value as a float.
    pub(crate) fn float(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
            Num::Bool(b) => f64::from(u8::from(b)),
        }
    }

    /// An int for ints and bools (Python's `bool` is an `int`).
    pub(crate) fn int(self) -> Option<i64> {
        match self {
            Num::Int(i) => Some(i),
            Num::Bool(b) => Some(i64::from(b)),
            Num::Float(_) => None,
        }
    }

    /// Python's truth value.
    pub(crate) fn truth(self) -> bool {
        match self {
            Num::Int(i) => i != 0,
            Num::Float(f) => f != 0.0,
            Num::Bool(b) => b,
        }
    }

    /// Both operands as ints, if neither is a float.
    fn ints(a: Num, b: Num) -> Option<(i64, i64)> {
        a.int().zip(b.int())
    }

    /// An int as is, a float rounded to an int by `round`.
    fn rounded(self, round: fn(f64) -> f64) -> Num {
        Num::Int(match self.int() {
            Some(i) => i,
            None => round(self.float()) as i64,
        })
    }

    fn value(self) -> IValue {
        match self {
            Num::Int(i) => IValue::Int(i),
            Num::Float(f) => IValue::double(f),
            Num::Bool(b) => IValue::bool(b),
        }
    }
}

impl Builtin {
    /// The builtin `target` names (`_operator.add`), if it is one.
    pub fn from_target(target: &str) -> Option<Builtin> {
        NAMES.iter().find(|(n, _)| *n == target).map(|(_, b)| *b)
    }

    /// The name `torch.export` writes (`_operator.add`).
    pub fn target(self) -> &'static str {
        NAMES
            .iter()
            .find(|(_, b)| *b == self)
            .map_or("?", |(n, _)| n)
    }

    /// The infix operator FX prints for it (`+`), if it has one.
    pub fn infix(self) -> Option<&'static str> {
        Some(match self {
            Builtin::Add => "+",
            Builtin::Sub => "-",
            Builtin::Mul => "*",
            Builtin::FloorDiv => "//",
            Builtin::TrueDiv => "/",
            Builtin::Mod => "%",
            Builtin::Pow => "**",
            Builtin::Eq => "==",
            Builtin::Ne => "!=",
            Builtin::Lt => "<",
            Builtin::Le => "<=",
            Builtin::Gt => ">",
            Builtin::Ge => ">=",
            Builtin::And => "&",
            Builtin::Or => "|",
            _ => return None,
        })
    }

    /// Applies the function to `args`.
    pub fn call(self, args: &[IValue]) -> Result<IValue> {
        match self {
            Builtin::SymSum => self.sym_sum(args),
            Builtin::SymIte => self.sym_ite(args),
            Builtin::Neg
            | Builtin::Pos
            | Builtin::Abs
            | Builtin::Not
            | Builtin::Trunc
            | Builtin::Floor
            | Builtin::Ceil
            | Builtin::SymFloat
            | Builtin::SymInt
            | Builtin::Sqrt => {
                let [a] = self.operands(args)?;
                Ok(self.unary(a)?.value())
            }
            _ => {
                let [a, b] = self.operands(args)?;
                Ok(self.binary(a, b)?.value())
            }
        }
    }

    /// The arguments as numbers.
    fn numbers(self, args: &[IValue]) -> Result<Vec<Num>> {
        args.iter().map(|a| Num::of(a, self.target())).collect()
    }

    /// The `N` arguments of a fixed-arity function, as numbers.
    fn operands<const N: usize>(self, args: &[IValue]) -> Result<[Num; N]> {
        let nums = self.numbers(args)?;
        <[Num; N]>::try_from(nums).map_err(|_| self.wrong_arity(N, args.len()))
    }

    /// Python's `TypeError` for a call with `given` arguments instead of `n`.
    fn wrong_arity(self, n: usize, given: usize) -> Error {
        Error::runtime(format!(
            "{}() takes {n} argument(s) but {given} were given",
            self.target()
        ))
    }

    /// An int result, or the overflow error where `value` is `None`.
    fn exact(self, value: Option<i64>) -> Result<Num> {
        value
            .map(Num::Int)
            .ok_or_else(|| Error::runtime(format!("{}: integer overflow", self.target())))
    }

    /// `on_ints` when both operands are ints (an overflow error where it
    /// gives nothing), else `on_floats`.
    fn int_or_float(
        self,
        a: Num,
        b: Num,
        on_ints: fn(i64, i64) -> Option<i64>,
        on_floats: fn(f64, f64) -> f64,
    ) -> Result<Num> {
        match Num::ints(a, b) {
            Some((x, y)) => self.exact(on_ints(x, y)),
            None => Ok(Num::Float(on_floats(a.float(), b.float()))),
        }
    }

    /// `torch.sym_sum`: the sum of a list (or of the arguments), exact while
    /// the terms are ints.
    fn sym_sum(self, args: &[IValue]) -> Result<IValue> {
        let items = match args {
            [IValue::IntList(xs)] => xs.iter().map(|i| Num::Int(*i)).collect(),
            [IValue::GenericList(xs)] => self.numbers(xs)?,
            _ => self.numbers(args)?,
        };
        let mut acc = Num::Int(0);
        for x in items {
            acc = self.int_or_float(acc, x, i64::checked_add, |x, y| x + y)?;
        }
        Ok(acc.value())
    }

    /// `torch.sym_ite(cond, then, else)`: one of the last two arguments, as is.
    fn sym_ite(self, args: &[IValue]) -> Result<IValue> {
        let [cond, then, otherwise] = args else {
            return Err(self.wrong_arity(3, args.len()));
        };
        Ok(if Num::of(cond, self.target())?.truth() {
            then.clone()
        } else {
            otherwise.clone()
        })
    }

    /// The one-argument functions: signs, rounding, conversions, `not`.
    fn unary(self, a: Num) -> Result<Num> {
        Ok(match self {
            Builtin::Neg => match a.int() {
                Some(i) => self.exact(i.checked_neg())?,
                None => Num::Float(-a.float()),
            },
            Builtin::Pos => match a {
                Num::Bool(b) => Num::Int(i64::from(b)),
                other => other,
            },
            Builtin::Abs => match a.int() {
                Some(i) => self.exact(i.checked_abs())?,
                None => Num::Float(a.float().abs()),
            },
            Builtin::Not => Num::Bool(!a.truth()),
            Builtin::Trunc | Builtin::SymInt => a.rounded(f64::trunc),
            Builtin::Floor => a.rounded(f64::floor),
            Builtin::Ceil => a.rounded(f64::ceil),
            Builtin::SymFloat => Num::Float(a.float()),
            _ => Num::Float(a.float().sqrt()),
        })
    }

    /// The two-argument functions, by family.
    fn binary(self, a: Num, b: Num) -> Result<Num> {
        match self {
            Builtin::Add => self.int_or_float(a, b, i64::checked_add, |x, y| x + y),
            Builtin::Sub => self.int_or_float(a, b, i64::checked_sub, |x, y| x - y),
            Builtin::Mul => self.int_or_float(a, b, i64::checked_mul, |x, y| x * y),
            Builtin::Pow => self.pow(a, b),
            Builtin::FloorDiv | Builtin::Mod | Builtin::TrueDiv => self.division(a, b),
            Builtin::Eq | Builtin::Ne | Builtin::Lt | Builtin::Le | Builtin::Gt | Builtin::Ge => {
                Ok(self.comparison(a, b))
            }
            Builtin::And | Builtin::Or => self.bitwise(a, b),
            _ => Ok(self.sym_max_min(a, b)),
        }
    }

    /// `**`: exact for ints to a non-negative power, else on floats.
    fn pow(self, a: Num, b: Num) -> Result<Num> {
        match Num::ints(a, b) {
            Some((x, y)) if y >= 0 => self.exact(int_pow(x, y)),
            _ => Ok(Num::Float(a.float().powf(b.float()))),
        }
    }

    /// `//`, `%` (rounding towards negative infinity) and `/` (a float).
    fn division(self, a: Num, b: Num) -> Result<Num> {
        if self == Builtin::TrueDiv {
            if b.float() == 0.0 {
                return Err(Error::runtime("ZeroDivisionError: division by zero"));
            }
            return Ok(Num::Float(a.float() / b.float()));
        }
        if let Some((_, 0)) = Num::ints(a, b) {
            return Err(Error::runtime(
                "ZeroDivisionError: integer division or modulo by zero",
            ));
        }
        if self == Builtin::FloorDiv {
            self.int_or_float(a, b, floor_div, |x, y| (x / y).floor())
        } else {
            self.int_or_float(a, b, python_mod, |x, y| x - y * (x / y).floor())
        }
    }

    /// `==`, `!=`, `<`, `<=`, `>`, `>=`: exact on ints; with a NaN only `!=`
    /// holds.
    fn comparison(self, a: Num, b: Num) -> Num {
        let ord = match Num::ints(a, b) {
            Some((x, y)) => Some(x.cmp(&y)),
            None => a.float().partial_cmp(&b.float()),
        };
        Num::Bool(match (self, ord) {
            (Builtin::Ne, None) => true,
            (_, None) => false,
            (Builtin::Eq, Some(o)) => o.is_eq(),
            (Builtin::Ne, Some(o)) => o.is_ne(),
            (Builtin::Lt, Some(o)) => o.is_lt(),
            (Builtin::Le, Some(o)) => o.is_le(),
            (Builtin::Gt, Some(o)) => o.is_gt(),
            (_, Some(o)) => o.is_ge(),
        })
    }

    /// `&` and `|`: logical on bools, bitwise on ints, a `TypeError` on
    /// floats.
    fn bitwise(self, a: Num, b: Num) -> Result<Num> {
        let and = self == Builtin::And;
        match (a, b) {
            (Num::Bool(x), Num::Bool(y)) => Ok(Num::Bool(if and { x && y } else { x || y })),
            _ => match Num::ints(a, b) {
                Some((x, y)) => Ok(Num::Int(if and { x & y } else { x | y })),
                None => Err(Error::runtime(format!(
                    "TypeError: unsupported operand type(s) for {}: 'float'",
                    self.infix().unwrap_or(self.target())
                ))),
            },
        }
    }

    /// `torch.sym_max` and `torch.sym_min`: a mix of int and float gives a
    /// float.
    fn sym_max_min(self, a: Num, b: Num) -> Num {
        let ints = Num::ints(a, b);
        let a_is_max = match ints {
            Some((x, y)) => x >= y,
            None => a.float() >= b.float(),
        };
        let chosen = if a_is_max == (self == Builtin::SymMax) {
            a
        } else {
            b
        };
        if ints.is_none() {
            Num::Float(chosen.float())
        } else {
            chosen
        }
    }
}

/// Python's floor division of ints (`//`); `None` on a zero divisor or
/// overflow.
pub(crate) fn floor_div(a: i64, b: i64) -> Option<i64> {
    if b == 0 {
        return None;
    }
    let q = a.checked_div(b)?;
    Some(if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    })
}

/// Python's `**` of ints, for a non-negative exponent; `None` on overflow.
pub(crate) fn int_pow(a: i64, b: i64) -> Option<i64> {
    a.checked_pow(u32::try_from(b).ok()?)
}

/// Python's modulo of ints (`%`, the sign of the divisor); `None` on a zero
/// divisor or overflow.
pub(crate) fn python_mod(a: i64, b: i64) -> Option<i64> {
    if b == 0 {
        return None;
    }
    let r = a.checked_rem(b)?;
    Some(if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(b: &str, args: &[IValue]) -> IValue {
        Builtin::from_target(b).unwrap().call(args).unwrap()
    }

    #[test]
    fn python_semantics() {
        use IValue as V;
        assert_eq!(call("_operator.add", &[V::Int(1), V::Int(12)]), V::Int(13));
        assert_eq!(
            call("_operator.floordiv", &[V::Int(-7), V::Int(2)]),
            V::Int(-4)
        );
        assert_eq!(call("_operator.mod", &[V::Int(-7), V::Int(3)]), V::Int(2));
        assert_eq!(
            call("_operator.truediv", &[V::Int(7), V::Int(2)]),
            V::double(3.5)
        );
        assert_eq!(
            call("_operator.mul", &[V::Int(3), V::double(0.5)]),
            V::double(1.5)
        );
        assert_eq!(call("_operator.ge", &[V::Int(3), V::Int(3)]), V::bool(true));
        assert_eq!(call("torch.sym_max", &[V::Int(3), V::Int(5)]), V::Int(5));
        assert_eq!(call("torch.sym_not", &[V::bool(true)]), V::bool(false));
        assert_eq!(call("math.trunc", &[V::double(-2.5)]), V::Int(-2));
        assert_eq!(call("torch.sym_float", &[V::Int(2)]), V::double(2.0));
        assert_eq!(
            call("torch.sym_ite", &[V::bool(false), V::Int(1), V::Int(2)]),
            V::Int(2)
        );
        assert_eq!(call("_operator.neg", &[V::Int(4)]), V::Int(-4));
        let e = Builtin::FloorDiv.call(&[V::Int(1), V::Int(0)]).unwrap_err();
        assert!(e.message().contains("ZeroDivisionError"));
        assert!(Builtin::Add.call(&[V::Int(i64::MAX), V::Int(1)]).is_err());
        assert!(Builtin::Add.call(&[V::Int(1)]).is_err());
        assert!(Builtin::from_target("_operator.frobnicate").is_none());
    }
}
