//! What the dispatcher reads from schemas: which arguments carry dispatch
//! keys, and how a kernel's inferred schema differs from its operator's def
//! (`findSchemaDifferences`).

use std::fmt;

use aten_boxing::schema::{Argument, FunctionSchema, Type};

/// Whether a boxed call finds dispatch keys in this argument: `Tensor`,
/// `Tensor?`, `Tensor[]`, `Tensor?[]`, `Tensor[]?`.
pub(crate) fn is_tensor_like_argument(arg: &Argument) -> bool {
    fn tensor_or_optional(t: &Type) -> bool {
        match t {
            Type::Tensor => true,
            Type::Optional(inner) => matches!(**inner, Type::Tensor),
            _ => false,
        }
    }
    let ty = arg.ty();
    tensor_or_optional(ty)
        || ty.list_element().is_some_and(tensor_or_optional)
        || ty
            .optional_element()
            .and_then(Type::list_element)
            .is_some_and(tensor_or_optional)
}

/// Writes the type a Rust kernel sees (PyTorch's
/// `cloneWithRealTypes(with_symint)`): a kernel without SymInt support
/// sees `SymInt` as `int` and `SymBool` as `bool`; a SymInt kernel sees
/// them as they are.
fn write_real_type(t: &Type, with_symint: bool, out: &mut impl fmt::Write) -> fmt::Result {
    match t {
        Type::SymInt if !with_symint => out.write_str("int"),
        Type::SymBool if !with_symint => out.write_str("bool"),
        Type::List(inner) => {
            write_real_type(inner, with_symint, out)?;
            out.write_str("[]")
        }
        Type::Optional(inner) => {
            write_real_type(inner, with_symint, out)?;
            out.write_str("?")
        }
        other => write!(out, "{other}"),
    }
}

fn real_type(t: &Type, with_symint: bool) -> String {
    let mut s = String::new();
    let _ = write_real_type(t, with_symint, &mut s);
    s
}

/// A writer that checks, without allocating, that what is written is
/// exactly `expected`.
struct Matches<'a> {
    rest: &'a str,
    ok: bool,
}

impl fmt::Write for Matches<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        match self.rest.strip_prefix(s) {
            Some(rest) if self.ok => self.rest = rest,
            _ => self.ok = false,
        }
        Ok(())
    }
}

/// Whether the def's type and the inferred type agree.
fn same_type(def: &Type, inferred: &str, with_symint: bool) -> bool {
    if inferred.bytes().any(|b| b.is_ascii_digit()) {
        return real_type(def, with_symint) == normalize_inferred(inferred);
    }
    let mut m = Matches {
        rest: inferred,
        ok: true,
    };
    let _ = write_real_type(def, with_symint, &mut m);
    m.ok && m.rest.is_empty()
}

/// An inferred type as the kernel reports it, with fixed list sizes dropped
/// (`int[2]` is the type `int[]`; the size belongs to the argument).
fn normalize_inferred(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '[' {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
        }
    }
    out
}

/// `findSchemaDifferences(def, inferred)`: the first difference, in
/// PyTorch's words, or `None`; `with_symint` for a SymInt kernel.
#[doc(alias = "findSchemaDifferences")]
pub(crate) fn find_schema_differences(
    def: &FunctionSchema,
    inferred_args: &[String],
    inferred_returns: &[String],
    with_symint: bool,
) -> Option<String> {
    if def.arguments().len() != inferred_args.len() {
        return Some(format!(
            "The number of arguments is different. {} vs {}.",
            def.arguments().len(),
            inferred_args.len()
        ));
    }
    if def.returns().len() != inferred_returns.len() {
        return Some(format!(
            "The number of returns is different. {} vs {}",
            def.returns().len(),
            inferred_returns.len()
        ));
    }
    for (what, defs, inferred) in [
        ("argument", def.arguments(), inferred_args),
        ("return", def.returns(), inferred_returns),
    ] {
        for (i, (d, k)) in defs.iter().zip(inferred).enumerate() {
            if !same_type(d.real_type(), k, with_symint) {
                return Some(format!(
                    "Type mismatch in {what} {}: {} vs {}",
                    i + 1,
                    real_type(d.real_type(), with_symint),
                    normalize_inferred(k)
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_fixed_sizes() {
        assert_eq!(normalize_inferred("int[2]"), "int[]");
        assert_eq!(normalize_inferred("Tensor?[]"), "Tensor?[]");
    }
}
