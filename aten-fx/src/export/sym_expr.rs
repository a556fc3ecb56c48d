//! Symbolic sizes as `torch.export` writes them: sympy expressions over
//! the size symbols (`s72`), in `srepr` form in `tensor_values` and
//! `sym_int_values` (`Mul(Integer(4), Symbol('s72', positive=True,
//! integer=True))`) and in `str` form as the keys of `range_constraints`
//! (`16*s39`). [`SymExpr`] parses both, prints the `str` form (as PyTorch's
//! messages show it), and evaluates with Python's integer semantics
//! (`FloorDiv` and `Mod` round towards negative infinity) once the symbols
//! are bound; [`SymExpr::solve`] finds a symbol's value from one equation.

use std::collections::HashMap;
use std::fmt;

use crate::builtins::{floor_div, int_pow, python_mod, Num};

/// A sympy expression over size symbols.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum SymExpr {
    /// `Integer(n)`.
    Int(i64),
    /// `Rational(p, q)`.
    Rational(i64, i64),
    /// `Float('x', precision=53)`.
    Float(f64),
    /// `true` / `false`.
    Bool(bool),
    /// `Symbol('s72', ...)`.
    Symbol(String),
    /// A function of its arguments (`Add`, `Mul`, `Pow`, `FloorDiv`,
    /// `Mod`, `Max`, `Eq`, ...).
    Call(Func, Vec<SymExpr>),
}

/// The functions of the expressions PyTorch writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Func {
    Add,
    Mul,
    Pow,
    FloorDiv,
    CleanDiv,
    Mod,
    PythonMod,
    IntTrueDiv,
    FloatTrueDiv,
    TruncToInt,
    CeilToInt,
    FloorToInt,
    RoundToInt,
    Max,
    Min,
    Abs,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Not,
    Piecewise,
    ToFloat,
}

impl Func {
    fn from_name(name: &str) -> Option<Func> {
        Some(match name {
            "Add" => Func::Add,
            "Mul" => Func::Mul,
            "Pow" | "PowByNatural" | "FloatPow" => Func::Pow,
            "FloorDiv" => Func::FloorDiv,
            "CleanDiv" => Func::CleanDiv,
            "Mod" => Func::Mod,
            "PythonMod" => Func::PythonMod,
            "IntTrueDiv" => Func::IntTrueDiv,
            "FloatTrueDiv" | "TrueDiv" => Func::FloatTrueDiv,
            "TruncToInt" => Func::TruncToInt,
            "CeilToInt" | "ceiling" => Func::CeilToInt,
            "FloorToInt" | "floor" => Func::FloorToInt,
            "RoundToInt" => Func::RoundToInt,
            "Max" => Func::Max,
            "Min" => Func::Min,
            "Abs" => Func::Abs,
            "Eq" | "Equality" => Func::Eq,
            "Ne" | "Unequality" => Func::Ne,
            "StrictLessThan" | "Lt" => Func::Lt,
            "LessThan" | "Le" => Func::Le,
            "StrictGreaterThan" | "Gt" => Func::Gt,
            "GreaterThan" | "Ge" => Func::Ge,
            "And" => Func::And,
            "Or" => Func::Or,
            "Not" => Func::Not,
            "Piecewise" => Func::Piecewise,
            "ToFloat" => Func::ToFloat,
            _ => return None,
        })
    }

    /// The one argument of a one-argument function.
    fn one(self, vals: &[Num]) -> Result<Num, EvalError> {
        match vals {
            [a] => Ok(*a),
            _ => Err(EvalError(format!("`{}` takes one argument", self.name()))),
        }
    }

    /// The two arguments of a two-argument function.
    fn two(self, vals: &[Num]) -> Result<(Num, Num), EvalError> {
        match vals {
            [a, b] => Ok((*a, *b)),
            _ => Err(EvalError(format!("`{}` takes two arguments", self.name()))),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Func::Add => "Add",
            Func::Mul => "Mul",
            Func::Pow => "Pow",
            Func::FloorDiv => "FloorDiv",
            Func::CleanDiv => "CleanDiv",
            Func::Mod => "Mod",
            Func::PythonMod => "PythonMod",
            Func::IntTrueDiv => "IntTrueDiv",
            Func::FloatTrueDiv => "FloatTrueDiv",
            Func::TruncToInt => "TruncToInt",
            Func::CeilToInt => "CeilToInt",
            Func::FloorToInt => "FloorToInt",
            Func::RoundToInt => "RoundToInt",
            Func::Max => "Max",
            Func::Min => "Min",
            Func::Abs => "Abs",
            Func::Eq => "Eq",
            Func::Ne => "Ne",
            Func::Lt => "Lt",
            Func::Le => "Le",
            Func::Gt => "Gt",
            Func::Ge => "Ge",
            Func::And => "And",
            Func::Or => "Or",
            Func::Not => "Not",
            Func::Piecewise => "Piecewise",
            Func::ToFloat => "ToFloat",
        }
    }
}

/// The values as integers, if all are.
fn ints(vals: &[Num]) -> Option<Vec<i64>> {
    vals.iter().map(|v| v.int()).collect()
}

/// `Max` and `Min` of any number of values: exact while all are integers.
fn max_min(f: Func, vals: &[Num]) -> Result<Num, EvalError> {
    let max = f == Func::Max;
    match ints(vals) {
        Some(is) => {
            let it = is.into_iter();
            Ok(Num::Int(if max { it.max() } else { it.min() }.ok_or_else(
                || EvalError(format!("`{}` of nothing", f.name())),
            )?))
        }
        None => {
            let fs = vals.iter().map(|v| v.float());
            Ok(Num::Float(if max {
                fs.fold(f64::NEG_INFINITY, f64::max)
            } else {
                fs.fold(f64::INFINITY, f64::min)
            }))
        }
    }
}

/// `v` rounded to the nearest integer, halves to even (Python's `round`).
fn round_half_even(v: f64) -> f64 {
    let r = v.round();
    if (v - v.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - v.signum()
    } else {
        r
    }
}

/// A failure to evaluate: a symbol without a value, or arithmetic that
/// overflows or divides by zero.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EvalError(pub(crate) String);

impl SymExpr {
    /// Parses sympy's `srepr` text (`Mul(Integer(4), Symbol('s72', positive=True))`).
    pub(crate) fn parse_srepr(text: &str) -> Result<SymExpr, String> {
        let mut p = Parser::new(text);
        let e = p.srepr()?;
        p.end()?;
        Ok(e)
    }

    /// Parses sympy's `str` text (`16*s39`, `s0 + 1`, `Max(1, s0)`).
    pub(crate) fn parse_str(text: &str) -> Result<SymExpr, String> {
        let mut p = Parser::new(text);
        let e = p.infix(0)?;
        p.end()?;
        Ok(e)
    }

    /// The symbols the expression mentions, sorted, without repeats.
    pub(crate) fn free_symbols(&self) -> Vec<String> {
        fn walk(e: &SymExpr, out: &mut Vec<String>) {
            match e {
                SymExpr::Symbol(s) if !out.contains(s) => out.push(s.clone()),
                SymExpr::Call(_, args) => args.iter().for_each(|a| walk(a, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out.sort();
        out
    }

    /// Whether the expression is a bare symbol.
    pub(crate) fn as_symbol(&self) -> Option<&str> {
        match self {
            SymExpr::Symbol(s) => Some(s),
            _ => None,
        }
    }

    /// The value with the symbols of `env`.
    pub(crate) fn eval(&self, env: &HashMap<String, i64>) -> Result<Num, EvalError> {
        use Num::{Bool, Float, Int};
        Ok(match self {
            SymExpr::Int(i) => Int(*i),
            SymExpr::Float(f) => Float(*f),
            SymExpr::Bool(b) => Bool(*b),
            SymExpr::Rational(p, q) => {
                if *q != 0 && p % q == 0 {
                    Int(p / q)
                } else {
                    Float(*p as f64 / *q as f64)
                }
            }
            SymExpr::Symbol(s) => Int(*env
                .get(s)
                .ok_or_else(|| EvalError(format!("symbol `{s}` has no value")))?),
            SymExpr::Call(f, args) => {
                let vals = args
                    .iter()
                    .map(|a| a.eval(env))
                    .collect::<Result<Vec<_>, _>>()?;
                self.apply(*f, &vals)?
            }
        })
    }

    /// `f` (this expression's function) applied to its arguments' values.
    fn apply(&self, f: Func, vals: &[Num]) -> Result<Num, EvalError> {
        use Num::Bool;
        match f {
            Func::Add | Func::Mul => self.add_mul(f, vals),
            Func::Max | Func::Min => max_min(f, vals),
            Func::And => Ok(Bool(vals.iter().all(|v| v.truth()))),
            Func::Or => Ok(Bool(vals.iter().any(|v| v.truth()))),
            Func::Piecewise => self.piecewise(vals),
            Func::Pow
            | Func::FloorDiv
            | Func::CleanDiv
            | Func::Mod
            | Func::PythonMod
            | Func::IntTrueDiv
            | Func::FloatTrueDiv => {
                let (a, b) = f.two(vals)?;
                self.arithmetic(f, a, b)
            }
            Func::Eq | Func::Ne | Func::Lt | Func::Le | Func::Gt | Func::Ge => {
                let (a, b) = f.two(vals)?;
                self.comparison(f, a, b)
            }
            Func::TruncToInt
            | Func::CeilToInt
            | Func::FloorToInt
            | Func::RoundToInt
            | Func::Abs
            | Func::ToFloat
            | Func::Not => self.unary(f, f.one(vals)?),
        }
    }

    /// The error for arithmetic that overflows.
    fn overflow(&self) -> EvalError {
        EvalError(format!("`{self}` overflows"))
    }

    /// The error for an integer division or modulo by zero.
    fn divides_by_zero(&self) -> EvalError {
        EvalError(format!("`{self}` divides by zero"))
    }

    /// `Add` and `Mul` of any number of terms: exact while all are integers.
    fn add_mul(&self, f: Func, vals: &[Num]) -> Result<Num, EvalError> {
        let add = f == Func::Add;
        match ints(vals) {
            Some(is) => {
                let mut acc: i64 = if add { 0 } else { 1 };
                for i in is {
                    acc = if add {
                        acc.checked_add(i)
                    } else {
                        acc.checked_mul(i)
                    }
                    .ok_or_else(|| self.overflow())?;
                }
                Ok(Num::Int(acc))
            }
            None => {
                let fs = vals.iter().map(|v| v.float());
                Ok(Num::Float(if add { fs.sum() } else { fs.product() }))
            }
        }
    }

    /// `Pow`, the divisions and the modulos of two values.
    fn arithmetic(&self, f: Func, a: Num, b: Num) -> Result<Num, EvalError> {
        use Num::{Float, Int};
        let ints = a.int().zip(b.int());
        Ok(match f {
            Func::Pow => match ints {
                Some((a, b)) if b >= 0 => Int(int_pow(a, b).ok_or_else(|| self.overflow())?),
                _ => Float(a.float().powf(b.float())),
            },
            Func::FloorDiv | Func::CleanDiv => match ints {
                Some((a, b)) => Int(floor_div(a, b).ok_or_else(|| self.divides_by_zero())?),
                None => Float((a.float() / b.float()).floor()),
            },
            Func::Mod | Func::PythonMod => match ints {
                Some((a, b)) => Int(python_mod(a, b).ok_or_else(|| self.divides_by_zero())?),
                None => Float(a.float().rem_euclid(b.float())),
            },
            _ => Float(a.float() / b.float()),
        })
    }

    /// The one-argument functions: rounding to integers, `Abs`, `ToFloat`,
    /// `Not`.
    fn unary(&self, f: Func, v: Num) -> Result<Num, EvalError> {
        use Num::{Bool, Float, Int};
        Ok(match (f, v) {
            (Func::TruncToInt, v) => Int(v.float().trunc() as i64),
            (Func::CeilToInt | Func::FloorToInt, Int(i)) => Int(i),
            (Func::CeilToInt, v) => Int(v.float().ceil() as i64),
            (Func::FloorToInt, v) => Int(v.float().floor() as i64),
            (Func::RoundToInt, v) => Int(round_half_even(v.float()) as i64),
            (Func::Abs, Int(i)) => Int(i.checked_abs().ok_or_else(|| self.overflow())?),
            (Func::Abs, v) => Float(v.float().abs()),
            (Func::ToFloat, v) => Float(v.float()),
            (_, v) => Bool(!v.truth()),
        })
    }

    /// `Eq`, `Ne`, `Lt`, `Le`, `Gt`, `Ge`: exact on integers; an error with
    /// a NaN.
    fn comparison(&self, f: Func, a: Num, b: Num) -> Result<Num, EvalError> {
        let exact = match (a.int(), b.int()) {
            (Some(a), Some(b)) => Some(a.cmp(&b)),
            _ => a.float().partial_cmp(&b.float()),
        };
        let ord = exact.ok_or_else(|| EvalError(format!("`{self}`: NaN")))?;
        Ok(Num::Bool(match f {
            Func::Eq => ord.is_eq(),
            Func::Ne => ord.is_ne(),
            Func::Lt => ord.is_lt(),
            Func::Le => ord.is_le(),
            Func::Gt => ord.is_gt(),
            _ => ord.is_ge(),
        }))
    }

    /// `Piecewise((value, condition), ...)`: the value of the first
    /// condition that holds (the arguments alternate value and condition).
    fn piecewise(&self, vals: &[Num]) -> Result<Num, EvalError> {
        vals.chunks(2)
            .find_map(|pair| match pair {
                [value, cond] if cond.truth() => Some(*value),
                _ => None,
            })
            .ok_or_else(|| EvalError(format!("`{self}`: no condition holds")))
    }

    /// The integer value with the symbols of `env`.
    pub(crate) fn eval_int(&self, env: &HashMap<String, i64>) -> Result<i64, EvalError> {
        match self.eval(env)? {
            Num::Int(i) => Ok(i),
            Num::Bool(b) => Ok(i64::from(b)),
            Num::Float(f) => Err(EvalError(format!("`{self}` is {f}, not an integer"))),
        }
    }

    /// A value of `symbol` for which the expression (in which `symbol` is
    /// the one unbound symbol) equals `target`: exact for expressions
    /// affine in it (`k*s + c`), else searched in `range` (PyTorch's
    /// `try_solve`). `None` when no integer fits.
    pub(crate) fn solve(
        &self,
        symbol: &str,
        target: i64,
        env: &HashMap<String, i64>,
        range: (i64, i64),
    ) -> Option<i64> {
        let mut env = env.clone();
        let mut at = |v: i64| {
            env.insert(symbol.to_string(), v);
            self.eval_int(&env).ok()
        };
        let (f0, f1, f2) = (at(0), at(1), at(2));
        if let (Some(f0), Some(f1), Some(f2)) = (f0, f1, f2) {
            let k = f1 - f0;
            if k != 0 && f2 - f1 == k && (target - f0) % k == 0 {
                let s = (target - f0) / k;
                if at(s) == Some(target) {
                    return Some(s);
                }
            }
        }
        let (lo, hi) = range;
        if hi.saturating_sub(lo) <= 1 << 20 {
            return (lo..=hi).find(|&s| at(s) == Some(target));
        }
        None
    }
}

/// The `str` form sympy prints (`4*s72`, `s70 + 1`), as PyTorch's messages
/// show expressions.
impl fmt::Display for SymExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SymExpr::Int(i) => write!(f, "{i}"),
            SymExpr::Rational(p, q) => write!(f, "{p}/{q}"),
            SymExpr::Float(x) => write!(f, "{x:?}"),
            SymExpr::Bool(b) => f.write_str(if *b { "True" } else { "False" }),
            SymExpr::Symbol(s) => f.write_str(s),
            SymExpr::Call(func, args) => {
                let shown: Vec<String> = args
                    .iter()
                    .map(|a| match a {
                        SymExpr::Call(Func::Add, _) if *func != Func::Add => format!("({a})"),
                        _ => a.to_string(),
                    })
                    .collect();
                match func {
                    Func::Add => {
                        // Sympy prints the constant term last.
                        let (consts, terms): (Vec<_>, Vec<_>) = args
                            .iter()
                            .zip(&shown)
                            .partition(|(a, _)| matches!(a, SymExpr::Int(_)));
                        let mut out = String::new();
                        for (a, s) in terms.into_iter().chain(consts) {
                            match a {
                                SymExpr::Int(i) if *i < 0 && !out.is_empty() => {
                                    // In i128: `i64::MIN` has no i64 negation.
                                    out.push_str(&format!(" - {}", -i128::from(*i)));
                                }
                                _ if out.is_empty() => out.push_str(s),
                                _ => out.push_str(&format!(" + {s}")),
                            }
                        }
                        f.write_str(&out)
                    }
                    Func::Mul => f.write_str(&shown.join("*")),
                    Func::Pow => write!(f, "{}**{}", shown[0], shown.get(1).map_or("?", |s| s)),
                    Func::FloorDiv => {
                        write!(f, "(({})//({}))", shown[0], shown.get(1).map_or("?", |s| s))
                    }
                    Func::Mod | Func::PythonMod => {
                        write!(f, "Mod({})", shown.join(", "))
                    }
                    _ => write!(f, "{}({})", func.name(), shown.join(", ")),
                }
            }
        }
    }
}

/// A recursive-descent reader of both textual forms.
struct Parser<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Parser<'a> {
        Parser { text, at: 0 }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    fn skip_ws(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start().len();
    }

    fn error(&self, what: &str) -> String {
        format!("{what} at offset {} of `{}`", self.at, self.text)
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_ws();
        if self.rest().starts_with(token) {
            self.at += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Result<(), String> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.error(&format!("expected `{token}`")))
        }
    }

    fn end(&mut self) -> Result<(), String> {
        self.skip_ws();
        if self.rest().is_empty() {
            Ok(())
        } else {
            Err(self.error("unexpected text"))
        }
    }

    fn ident(&mut self) -> Option<&'a str> {
        self.skip_ws();
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if len == 0 || rest.as_bytes()[0].is_ascii_digit() {
            return None;
        }
        self.at += len;
        Some(&rest[..len])
    }

    fn integer(&mut self) -> Result<i64, String> {
        self.skip_ws();
        let rest = self.rest();
        let neg = rest.starts_with('-');
        let body = &rest[usize::from(neg)..];
        let len = body
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(body.len());
        if len == 0 {
            return Err(self.error("expected an integer"));
        }
        let text = &rest[..len + usize::from(neg)];
        self.at += text.len();
        text.parse::<i64>()
            .map_err(|_| self.error(&format!("integer `{text}` out of range")))
    }

    fn quoted(&mut self) -> Result<&'a str, String> {
        self.skip_ws();
        let quote = match self.rest().chars().next() {
            Some(q @ ('\'' | '"')) => q,
            _ => return Err(self.error("expected a quoted name")),
        };
        self.at += 1;
        let rest = self.rest();
        let end = rest
            .find(quote)
            .ok_or_else(|| self.error("unterminated string"))?;
        self.at += end + 1;
        Ok(&rest[..end])
    }

    /// Skips `key=value` assumptions (`positive=True`).
    fn skip_keywords(&mut self) -> Result<(), String> {
        while self.eat(",") {
            self.ident()
                .ok_or_else(|| self.error("expected a keyword"))?;
            self.expect("=")?;
            if self.ident().is_none() {
                self.integer()?;
            }
        }
        Ok(())
    }

    fn srepr(&mut self) -> Result<SymExpr, String> {
        let name = self
            .ident()
            .ok_or_else(|| self.error("expected an expression"))?;
        match name {
            "true" | "True" | "BooleanTrue" => return Ok(SymExpr::Bool(true)),
            "false" | "False" | "BooleanFalse" => return Ok(SymExpr::Bool(false)),
            "oo" | "int_oo" => return Ok(SymExpr::Int(i64::MAX)),
            _ => {}
        }
        self.expect("(")?;
        let e = match name {
            "Integer" => SymExpr::Int(self.integer()?),
            "Zero" => SymExpr::Int(0),
            "One" => SymExpr::Int(1),
            "NegativeOne" => SymExpr::Int(-1),
            "Half" => SymExpr::Rational(1, 2),
            "Rational" => {
                let p = self.integer()?;
                self.expect(",")?;
                let q = self.integer()?;
                SymExpr::Rational(p, q)
            }
            "Float" => {
                let text = self.quoted()?;
                let value = text
                    .parse::<f64>()
                    .map_err(|_| self.error(&format!("bad float `{text}`")))?;
                self.skip_keywords()?;
                SymExpr::Float(value)
            }
            "Symbol" | "Dummy" => {
                let s = self.quoted()?.to_string();
                self.skip_keywords()?;
                SymExpr::Symbol(s)
            }
            other => {
                let func = Func::from_name(other)
                    .ok_or_else(|| self.error(&format!("unsupported function `{other}`")))?;
                let mut args = Vec::new();
                if !self.eat(")") {
                    loop {
                        if self.eat("(") {
                            // Piecewise's (value, condition) pairs.
                            args.push(self.srepr()?);
                            self.expect(",")?;
                            args.push(self.srepr()?);
                            self.expect(")")?;
                        } else {
                            args.push(self.srepr()?);
                        }
                        if !self.eat(",") {
                            break;
                        }
                    }
                    self.expect(")")?;
                }
                return Ok(SymExpr::Call(func, args));
            }
        };
        self.expect(")")?;
        Ok(e)
    }

    /// Infix (`str` form), by precedence: 1 `+ -`, 2 `* / // %`, 3 unary
    /// minus, 4 `**`.
    fn infix(&mut self, min: u8) -> Result<SymExpr, String> {
        let mut lhs = self.unary()?;
        loop {
            self.skip_ws();
            let rest = self.rest();
            let (op, prec, len) = if rest.starts_with("**") {
                ("**", 4, 2)
            } else if rest.starts_with("//") {
                ("//", 2, 2)
            } else if rest.starts_with('*') {
                ("*", 2, 1)
            } else if rest.starts_with('/') {
                ("/", 2, 1)
            } else if rest.starts_with('%') {
                ("%", 2, 1)
            } else if rest.starts_with('+') {
                ("+", 1, 1)
            } else if rest.starts_with('-') {
                ("-", 1, 1)
            } else {
                break;
            };
            if prec < min {
                break;
            }
            self.at += len;
            // `**` is right-associative.
            let rhs = self.infix(if op == "**" { prec } else { prec + 1 })?;
            lhs = match op {
                "+" => SymExpr::Call(Func::Add, vec![lhs, rhs]),
                "-" => SymExpr::Call(
                    Func::Add,
                    vec![lhs, SymExpr::Call(Func::Mul, vec![SymExpr::Int(-1), rhs])],
                ),
                "*" => SymExpr::Call(Func::Mul, vec![lhs, rhs]),
                "/" => SymExpr::Call(Func::FloatTrueDiv, vec![lhs, rhs]),
                "//" => SymExpr::Call(Func::FloorDiv, vec![lhs, rhs]),
                "%" => SymExpr::Call(Func::Mod, vec![lhs, rhs]),
                _ => SymExpr::Call(Func::Pow, vec![lhs, rhs]),
            };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<SymExpr, String> {
        if self.eat("-") {
            let e = self.infix(3)?;
            return Ok(match e {
                SymExpr::Int(i) => SymExpr::Int(-i),
                e => SymExpr::Call(Func::Mul, vec![SymExpr::Int(-1), e]),
            });
        }
        if self.eat("(") {
            let e = self.infix(0)?;
            self.expect(")")?;
            return Ok(e);
        }
        self.skip_ws();
        if self.rest().starts_with(|c: char| c.is_ascii_digit()) {
            return Ok(SymExpr::Int(self.integer()?));
        }
        let name = self
            .ident()
            .ok_or_else(|| self.error("expected an expression"))?;
        if self.eat("(") {
            let func = Func::from_name(name)
                .ok_or_else(|| self.error(&format!("unsupported function `{name}`")))?;
            let mut args = Vec::new();
            if !self.eat(")") {
                loop {
                    args.push(self.infix(0)?);
                    if !self.eat(",") {
                        break;
                    }
                }
                self.expect(")")?;
            }
            return Ok(SymExpr::Call(func, args));
        }
        Ok(match name {
            "True" => SymExpr::Bool(true),
            "False" => SymExpr::Bool(false),
            "oo" | "int_oo" => SymExpr::Int(i64::MAX),
            s => SymExpr::Symbol(s.to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, i64)]) -> HashMap<String, i64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn a_sum_with_the_smallest_constant_prints() {
        let e = SymExpr::parse_srepr(&format!(
            "Add(Symbol('s0', integer=True), Integer({}))",
            i64::MIN
        ))
        .unwrap();
        assert_eq!(e.to_string(), "s0 - 9223372036854775808");
    }

    #[test]
    fn parses_and_evaluates_srepr() {
        let e = SymExpr::parse_srepr(
            "Mul(Integer(4), Pow(Symbol('s70', positive=True, integer=True), Integer(2)))",
        )
        .unwrap();
        assert_eq!(e.free_symbols(), ["s70"]);
        assert_eq!(e.eval_int(&env(&[("s70", 12)])).unwrap(), 576);
        assert_eq!(e.to_string(), "4*s70**2");
        let e = SymExpr::parse_srepr("Add(Symbol('s70', positive=True, integer=True), Integer(1))")
            .unwrap();
        assert_eq!(e.to_string(), "s70 + 1");
        let e =
            SymExpr::parse_srepr("FloorDiv(Add(Symbol('s0'), Integer(-7)), Integer(2))").unwrap();
        assert_eq!(e.eval_int(&env(&[("s0", 2)])).unwrap(), -3);
        let e = SymExpr::parse_srepr("Mod(Integer(-7), Integer(3))").unwrap();
        assert_eq!(e.eval_int(&env(&[])).unwrap(), 2);
        let e =
            SymExpr::parse_srepr("CeilToInt(IntTrueDiv(Symbol('s0', integer=True), Integer(2)))")
                .unwrap();
        assert_eq!(e.eval_int(&env(&[("s0", 5)])).unwrap(), 3);
        let e = SymExpr::parse_srepr("Max(Integer(1), Symbol('s0'))").unwrap();
        assert_eq!(e.eval_int(&env(&[("s0", 0)])).unwrap(), 1);
        let e = SymExpr::parse_srepr("Eq(Symbol('s0'), Integer(4))").unwrap();
        assert_eq!(e.eval(&env(&[("s0", 4)])).unwrap(), Num::Bool(true));
        assert!(e.eval(&env(&[])).is_err());
    }

    #[test]
    fn parses_the_str_form_of_range_keys() {
        let e = SymExpr::parse_str("16*s39").unwrap();
        assert_eq!(e.eval_int(&env(&[("s39", 3)])).unwrap(), 48);
        let e = SymExpr::parse_str("-s0 + 2*s1**2 - 1").unwrap();
        assert_eq!(e.eval_int(&env(&[("s0", 3), ("s1", 2)])).unwrap(), 4);
        let e = SymExpr::parse_str("Max(1, s0//2)").unwrap();
        assert_eq!(e.eval_int(&env(&[("s0", 7)])).unwrap(), 3);
        assert!(SymExpr::parse_str("s0 +").is_err());
        assert!(SymExpr::parse_srepr("Symbol(").is_err());
        assert!(SymExpr::parse_srepr("Frobnicate(Integer(1))").is_err());
    }

    #[test]
    fn solves_for_a_symbol() {
        let e = SymExpr::parse_srepr("Mul(Integer(16), Symbol('s39'))").unwrap();
        assert_eq!(e.solve("s39", 48, &env(&[]), (2, 6)), Some(3));
        assert_eq!(e.solve("s39", 50, &env(&[]), (2, 6)), None);
        let e = SymExpr::parse_srepr("Pow(Symbol('s0'), Integer(2))").unwrap();
        assert_eq!(e.solve("s0", 49, &env(&[]), (1, 100)), Some(7));
    }
}
