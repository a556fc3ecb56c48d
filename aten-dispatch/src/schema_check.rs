//! What the dispatcher reads from schemas: which arguments carry dispatch
//! keys, and how a kernel's inferred schema differs from its operator's def
//! (`findSchemaDifferences`).

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

/// The type a Rust kernel without SymInt support sees: `SymInt` as `int`
/// (PyTorch's `cloneWithRealTypes(false)`).
fn without_symint(t: &Type) -> String {
    match t {
        Type::SymInt => "int".into(),
        Type::List(inner) => format!("{}[]", without_symint(inner)),
        Type::Optional(inner) => format!("{}?", without_symint(inner)),
        other => other.to_string(),
    }
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
/// PyTorch's words, or `None`.
pub(crate) fn find_schema_differences(
    def: &FunctionSchema,
    inferred_args: &[String],
    inferred_returns: &[String],
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
            let (d, k) = (without_symint(d.ty()), normalize_inferred(k));
            if d != k {
                return Some(format!("Type mismatch in {what} {}: {d} vs {k}", i + 1));
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
