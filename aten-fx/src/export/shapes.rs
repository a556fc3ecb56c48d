//! The sizes a program accepts: each user input's sizes as expressions
//! over the size symbols, and `range_constraints`. At each call the
//! symbols are bound from the inputs' actual sizes and checked as
//! `torch.export`'s `_check_input_constraints_for_graph` checks them, with
//! its messages: a static size must match, a symbol seen before must agree
//! (the equalities export assumed between inputs), a size that is an
//! expression of one symbol must be solvable for it, and a size whose
//! expression has a range must lie in it (minimums above 2 only: sizes 0
//! and 1 are allowed at run time).

use std::collections::HashMap;
use std::fmt;

use c10_core::{Error, Result};

use super::json::At;
use super::sym_expr::SymExpr;

/// One size of a tensor the graph records: a number or an expression.
#[derive(Clone, Debug, PartialEq)]
pub enum SymSize {
    /// A static size.
    Int(i64),
    /// A symbolic size, as sympy prints it (`s72`, `4*s70`).
    Expr(String),
}

impl fmt::Display for SymSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SymSize::Int(i) => write!(f, "{i}"),
            SymSize::Expr(e) => f.write_str(e),
        }
    }
}

impl PartialEq<i64> for SymSize {
    fn eq(&self, other: &i64) -> bool {
        matches!(self, SymSize::Int(i) if i == other)
    }
}

/// A size as the loader keeps it: its value or its parsed expression.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Size {
    Int(i64),
    Expr(SymExpr),
}

impl Size {
    /// A serialized `SymInt` (`{"as_int": n}` or `{"as_expr": {"expr_str":
    /// ..., "hint": ...}}`).
    pub(crate) fn parse(at: &At<'_>) -> Result<Size> {
        match at.variant()? {
            ("as_int", v) => Ok(Size::Int(v.int()?)),
            ("as_expr", v) => {
                let text = v.field("expr_str")?.str()?;
                let expr = SymExpr::parse_srepr(text)
                    .map_err(|e| v.error(format!("bad symbolic expression: {e}")))?;
                Ok(match expr {
                    SymExpr::Int(i) => Size::Int(i),
                    e => Size::Expr(e),
                })
            }
            (other, _) => Err(at.error(format!("unsupported size form `{other}`"))),
        }
    }

    /// The public form.
    pub(crate) fn public(&self) -> SymSize {
        match self {
            Size::Int(i) => SymSize::Int(*i),
            Size::Expr(e) => SymSize::Expr(e.to_string()),
        }
    }
}

/// A range of a symbolic expression (inclusive; `None`: unbounded).
#[derive(Clone, Debug)]
struct Range {
    expr: SymExpr,
    min: Option<i64>,
    max: Option<i64>,
}

/// `range_constraints`, and the check of a call's sizes against them.
#[derive(Clone, Debug, Default)]
pub(crate) struct ShapeEnv {
    ranges: Vec<Range>,
}

/// A bound of a range: an integer, or infinite (`null`, a float infinity,
/// or an integer beyond what sizes reach).
fn bound(at: Option<At<'_>>) -> Result<Option<i64>> {
    let Some(at) = at else { return Ok(None) };
    if let Ok(i) = at.int() {
        // `int_oo` is serialized as the largest integers.
        return Ok((i.unsigned_abs() < (1 << 62)).then_some(i));
    }
    match at.float() {
        Ok(f) if f.is_infinite() => Ok(None),
        Ok(f) if f.fract() == 0.0 && f.abs() < 4.6e18 => Ok(Some(f as i64)),
        _ => Err(at.error("expected an integer bound")),
    }
}

/// Whether two expressions are one: the same symbols, and the same value
/// wherever they are evaluated.
fn same_expression(a: &SymExpr, b: &SymExpr) -> bool {
    let symbols = a.free_symbols();
    if symbols != b.free_symbols() {
        return false;
    }
    const POINTS: [[i64; 4]; 3] = [[3, 5, 7, 11], [13, 17, 19, 23], [29, 31, 37, 41]];
    POINTS.iter().all(|point| {
        let env: HashMap<String, i64> = symbols
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), point[i % 4] + (i / 4) as i64 * 43))
            .collect();
        match (a.eval(&env), b.eval(&env)) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        }
    })
}

impl ShapeEnv {
    /// `range_constraints` (`{"s72": {"min_val": 1, "max_val": 8}, "16*s39": ...}`).
    pub(crate) fn parse(at: Option<At<'_>>) -> Result<ShapeEnv> {
        let mut ranges = Vec::new();
        if let Some(at) = at {
            for (key, range) in at.entries()? {
                let expr = SymExpr::parse_str(key)
                    .map_err(|e| range.error(format!("bad range key `{key}`: {e}")))?;
                ranges.push(Range {
                    expr,
                    min: bound(range.opt("min_val")?)?,
                    max: bound(range.opt("max_val")?)?,
                });
            }
        }
        Ok(ShapeEnv { ranges })
    }

    fn range_of(&self, expr: &SymExpr) -> Option<&Range> {
        self.ranges.iter().find(|r| same_expression(&r.expr, expr))
    }

    /// The range of a symbol, for solving (`[0, 2^20]` when none is given).
    fn search_range(&self, symbol: &str) -> (i64, i64) {
        let s = SymExpr::Symbol(symbol.to_string());
        match self.range_of(&s) {
            Some(r) => (r.min.unwrap_or(0), r.max.unwrap_or(1 << 20)),
            None => (0, 1 << 20),
        }
    }

    /// `_check_symint`: the size `arg` given where the graph has `size`,
    /// at `path` (`*args[0].shape[1]`), binding symbols in `env`.
    pub(crate) fn check(
        &self,
        size: &Size,
        arg: i64,
        env: &mut HashMap<String, i64>,
        path: &str,
    ) -> Result<()> {
        let expr = match size {
            Size::Int(n) => {
                if arg != *n {
                    return Err(Error::runtime(format!(
                        "Expected input at {path} to be equal to {n}, but got {arg}. If you meant for this dimension to be dynamic, please re-export and specify dynamic_shapes (e.g. with Dim.DYNAMIC)"
                    )));
                }
                return Ok(());
            }
            Size::Expr(e) => e,
        };
        let symbols = expr.free_symbols();
        let [symbol] = symbols.as_slice() else {
            // Several symbols: a guard export deferred to the graph's own
            // runtime assertions.
            return Ok(());
        };
        if env.contains_key(symbol) {
            let existing = expr
                .eval_int(env)
                .map_err(|e| Error::runtime(format!("{path}: {}", e.0)))?;
            if arg != existing {
                return Err(Error::runtime(format!(
                    "Expected input at {path} to be equal to {existing}, but got {arg}"
                )));
            }
        } else if expr.as_symbol().is_some() {
            env.insert(symbol.clone(), arg);
        } else {
            let solution = expr.solve(symbol, arg, env, self.search_range(symbol));
            match solution {
                Some(v) => {
                    env.insert(symbol.clone(), v);
                }
                None => {
                    return Err(Error::runtime(format!(
                        "Expected input {path} = {arg} to be of the form {expr}, where {symbol} is an integer"
                    )))
                }
            }
        }
        if let Some(range) = self.range_of(expr) {
            if let Some(min) = range.min.filter(|m| *m > 2) {
                if arg < min {
                    return Err(Error::runtime(format!(
                        "Expected input at {path} to be >= {min}, but got {arg}"
                    )));
                }
            }
            if let Some(max) = range.max {
                if arg > max {
                    return Err(Error::runtime(format!(
                        "Expected input at {path} to be <= {max}, but got {arg}"
                    )));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_with(text: &str) -> ShapeEnv {
        let doc = crate::export::json_document::Document::parse(text).unwrap();
        ShapeEnv::parse(Some(At::root(&doc, "model.json"))).unwrap()
    }

    fn sym(text: &str) -> Size {
        Size::Expr(SymExpr::parse_srepr(text).unwrap())
    }

    #[test]
    fn binds_unifies_and_checks_ranges() {
        let shapes = env_with(
            r#"{"s0": {"min_val": 1, "max_val": 8}, "s1": {"min_val": 3, "max_val": 32},
                "s2": {"min_val": 2, "max_val": 6}, "16*s2": {"min_val": 32, "max_val": 96}}"#,
        );
        let mut env = HashMap::new();
        let s0 = sym("Symbol('s0', positive=True, integer=True)");
        shapes.check(&s0, 4, &mut env, "*args[0].shape[0]").unwrap();
        assert_eq!(env["s0"], 4);
        let e = shapes
            .check(&s0, 5, &mut env, "*args[1].shape[0]")
            .unwrap_err();
        assert_eq!(
            e.message(),
            "Expected input at *args[1].shape[0] to be equal to 4, but got 5"
        );
        let s1 = sym("Symbol('s1', integer=True)");
        let e = shapes
            .check(&s1, 2, &mut HashMap::new(), "*args[0].shape[1]")
            .unwrap_err();
        assert_eq!(
            e.message(),
            "Expected input at *args[0].shape[1] to be >= 3, but got 2"
        );
        let e = shapes
            .check(&s1, 33, &mut HashMap::new(), "*args[0].shape[1]")
            .unwrap_err();
        assert_eq!(
            e.message(),
            "Expected input at *args[0].shape[1] to be <= 32, but got 33"
        );
        // Sizes 0 and 1 pass a minimum of 2 or less.
        let s0_alone = sym("Symbol('s0')");
        shapes
            .check(&s0_alone, 0, &mut HashMap::new(), "p")
            .unwrap();
        let h = sym("Mul(Integer(16), Symbol('s2', integer=True))");
        let mut env = HashMap::new();
        shapes.check(&h, 48, &mut env, "*args[0].shape[2]").unwrap();
        assert_eq!(env["s2"], 3);
        let e = shapes
            .check(&h, 50, &mut HashMap::new(), "*args[0].shape[2]")
            .unwrap_err();
        assert_eq!(
            e.message(),
            "Expected input *args[0].shape[2] = 50 to be of the form 16*s2, where s2 is an integer"
        );
        let e = shapes
            .check(&h, 112, &mut HashMap::new(), "*args[0].shape[2]")
            .unwrap_err();
        assert_eq!(
            e.message(),
            "Expected input at *args[0].shape[2] to be <= 96, but got 112"
        );
        let e = shapes
            .check(&Size::Int(64), 65, &mut HashMap::new(), "*args[0].shape[2]")
            .unwrap_err();
        assert!(e.message().starts_with(
            "Expected input at *args[0].shape[2] to be equal to 64, but got 65. If you meant"
        ));
    }
}
