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

/// A Python number.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Num {
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Num {
    fn of(v: &IValue, what: &str) -> Result<Num> {
        match v {
            IValue::Int(i) | IValue::SymInt(i) => Ok(Num::Int(*i)),
            IValue::Double(d) => Ok(Num::Float(d.get())),
            IValue::Bool(b) => Ok(Num::Bool(b.get())),
            other => Err(Error::runtime(format!(
                "{what}: expected a number, got {}",
                other.type_name()
            ))),
        }
    }

    fn float(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
            Num::Bool(b) => f64::from(u8::from(b)),
        }
    }

    /// An int for ints and bools (Python's `bool` is an `int`).
    fn int(self) -> Option<i64> {
        match self {
            Num::Int(i) => Some(i),
            Num::Bool(b) => Some(i64::from(b)),
            Num::Float(_) => None,
        }
    }

    fn truth(self) -> bool {
        match self {
            Num::Int(i) => i != 0,
            Num::Float(f) => f != 0.0,
            Num::Bool(b) => b,
        }
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
        let name = self.target();
        let arity = |n: usize| -> Result<()> {
            if args.len() == n {
                Ok(())
            } else {
                Err(Error::runtime(format!(
                    "{name}() takes {n} argument(s) but {} were given",
                    args.len()
                )))
            }
        };
        let overflow = || Error::runtime(format!("{name}: integer overflow"));
        let zero = || Error::runtime("ZeroDivisionError: integer division or modulo by zero");
        if self == Builtin::SymSum {
            let items = match args {
                [IValue::IntList(xs)] => xs.iter().map(|i| Num::Int(*i)).collect(),
                [IValue::GenericList(xs)] => xs
                    .iter()
                    .map(|x| Num::of(x, name))
                    .collect::<Result<Vec<_>>>()?,
                _ => args
                    .iter()
                    .map(|x| Num::of(x, name))
                    .collect::<Result<Vec<_>>>()?,
            };
            let mut acc = Num::Int(0);
            for x in items {
                acc = match (acc.int(), x.int()) {
                    (Some(a), Some(b)) => Num::Int(a.checked_add(b).ok_or_else(overflow)?),
                    _ => Num::Float(acc.float() + x.float()),
                };
            }
            return Ok(acc.value());
        }
        if self == Builtin::SymIte {
            arity(3)?;
            let cond = Num::of(&args[0], name)?;
            return Ok(if cond.truth() {
                args[1].clone()
            } else {
                args[2].clone()
            });
        }
        let nums = args
            .iter()
            .map(|a| Num::of(a, name))
            .collect::<Result<Vec<_>>>()?;
        let result = match self {
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
                arity(1)?;
                let a = nums[0];
                match self {
                    Builtin::Neg => match a.int() {
                        Some(i) => Num::Int(i.checked_neg().ok_or_else(overflow)?),
                        None => Num::Float(-a.float()),
                    },
                    Builtin::Pos => match a {
                        Num::Bool(b) => Num::Int(i64::from(b)),
                        other => other,
                    },
                    Builtin::Abs => match a.int() {
                        Some(i) => Num::Int(i.checked_abs().ok_or_else(overflow)?),
                        None => Num::Float(a.float().abs()),
                    },
                    Builtin::Not => Num::Bool(!a.truth()),
                    Builtin::Trunc | Builtin::SymInt => match a.int() {
                        Some(i) => Num::Int(i),
                        None => Num::Int(a.float().trunc() as i64),
                    },
                    Builtin::Floor => match a.int() {
                        Some(i) => Num::Int(i),
                        None => Num::Int(a.float().floor() as i64),
                    },
                    Builtin::Ceil => match a.int() {
                        Some(i) => Num::Int(i),
                        None => Num::Int(a.float().ceil() as i64),
                    },
                    Builtin::SymFloat => Num::Float(a.float()),
                    _ => Num::Float(a.float().sqrt()),
                }
            }
            _ => {
                arity(2)?;
                let (a, b) = (nums[0], nums[1]);
                let ints = a.int().zip(b.int());
                match self {
                    Builtin::Add | Builtin::Sub | Builtin::Mul => match ints {
                        Some((x, y)) => Num::Int(
                            match self {
                                Builtin::Add => x.checked_add(y),
                                Builtin::Sub => x.checked_sub(y),
                                _ => x.checked_mul(y),
                            }
                            .ok_or_else(overflow)?,
                        ),
                        None => Num::Float(match self {
                            Builtin::Add => a.float() + b.float(),
                            Builtin::Sub => a.float() - b.float(),
                            _ => a.float() * b.float(),
                        }),
                    },
                    Builtin::FloorDiv => match ints {
                        Some((_, 0)) => return Err(zero()),
                        Some((x, y)) => {
                            let q = x.checked_div(y).ok_or_else(overflow)?;
                            Num::Int(if x % y != 0 && ((x < 0) != (y < 0)) {
                                q - 1
                            } else {
                                q
                            })
                        }
                        None => Num::Float((a.float() / b.float()).floor()),
                    },
                    Builtin::Mod => match ints {
                        Some((_, 0)) => return Err(zero()),
                        Some((x, y)) => {
                            let r = x.checked_rem(y).ok_or_else(overflow)?;
                            Num::Int(if r != 0 && ((r < 0) != (y < 0)) {
                                r + y
                            } else {
                                r
                            })
                        }
                        None => {
                            let (x, y) = (a.float(), b.float());
                            Num::Float(x - y * (x / y).floor())
                        }
                    },
                    Builtin::TrueDiv => {
                        if b.float() == 0.0 {
                            return Err(Error::runtime("ZeroDivisionError: division by zero"));
                        }
                        Num::Float(a.float() / b.float())
                    }
                    Builtin::Pow => match ints {
                        Some((x, y)) if y >= 0 => Num::Int(
                            x.checked_pow(u32::try_from(y).map_err(|_| overflow())?)
                                .ok_or_else(overflow)?,
                        ),
                        _ => Num::Float(a.float().powf(b.float())),
                    },
                    Builtin::Eq
                    | Builtin::Ne
                    | Builtin::Lt
                    | Builtin::Le
                    | Builtin::Gt
                    | Builtin::Ge => {
                        let ord = match ints {
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
                    Builtin::And | Builtin::Or => match (a, b) {
                        (Num::Bool(x), Num::Bool(y)) => {
                            Num::Bool(if self == Builtin::And { x && y } else { x || y })
                        }
                        _ => match ints {
                            Some((x, y)) => {
                                Num::Int(if self == Builtin::And { x & y } else { x | y })
                            }
                            None => {
                                return Err(Error::runtime(format!(
                                    "TypeError: unsupported operand type(s) for {}: 'float'",
                                    self.infix().unwrap_or(name)
                                )))
                            }
                        },
                    },
                    Builtin::SymMax | Builtin::SymMin => {
                        let pick_a = match ints {
                            Some((x, y)) => (x >= y) == (self == Builtin::SymMax),
                            None => (a.float() >= b.float()) == (self == Builtin::SymMax),
                        };
                        let chosen = if pick_a { a } else { b };
                        // A mix of int and float gives a float.
                        if ints.is_none() {
                            Num::Float(chosen.float())
                        } else {
                            chosen
                        }
                    }
                    _ => unreachable!("unary builtins are handled above"),
                }
            }
        };
        Ok(result.value())
    }
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
