//! The naming scheme of the typed API.
//!
//! An overload `name.overload` becomes the function `name_overload`, lower
//! case (`add.Tensor` -> `add_tensor`, `sum.dim_IntList` ->
//! `sum_dim_intlist`); the default overload (empty or `default`) keeps the
//! bare name (`relu`). In-place operators keep their trailing underscore at
//! the end (`add_.Tensor` -> `add_tensor_`, `relu_` -> `relu_`). Rust keywords get a
//! trailing underscore (`where` -> `where_`). Argument names follow the same
//! rule (`self` -> `self_`).

/// Rust keywords and reserved words that cannot be identifiers.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "box", "break", "const", "continue", "crate", "dyn", "else", "enum",
    "extern", "false", "final", "fn", "for", "if", "impl", "in", "let", "loop", "macro", "match",
    "mod", "move", "mut", "override", "priv", "pub", "ref", "return", "self", "Self", "static",
    "struct", "super", "trait", "true", "try", "type", "typeof", "unsafe", "unsized", "use",
    "virtual", "where", "while", "yield", "abstract", "become", "do", "gen",
];

/// An identifier that is not a keyword.
pub fn ident(name: &str) -> String {
    if KEYWORDS.contains(&name) {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

/// The function name of `base.overload`.
pub fn function_name(base: &str, overload: &str) -> String {
    let inplace = base.ends_with('_') && !base.ends_with("__");
    let stem = if inplace {
        &base[..base.len() - 1]
    } else {
        base
    };
    let mut name = if overload.is_empty() || overload == "default" {
        stem.to_string()
    } else {
        format!("{stem}_{}", overload.to_lowercase())
    };
    if inplace {
        name.push('_');
    }
    ident(&name)
}

/// `name` with a suffix, keeping an in-place name's trailing underscore
/// last (`add_tensor` + `op` -> `add_tensor_op`, `add_tensor_` + `op` ->
/// `add_tensor_op_`).
pub fn with_suffix(name: &str, suffix: &str) -> String {
    match name.strip_suffix('_') {
        Some(stem) => format!("{stem}_{suffix}_"),
        None => format!("{name}_{suffix}"),
    }
}

/// CamelCase of a function name, for option structs (`add_tensor` ->
/// `AddTensor`, `add_tensor_` -> `AddTensorInplace`).
pub fn camel(name: &str) -> String {
    if let Some(stem) = name.strip_suffix('_') {
        return format!("{}Inplace", camel(stem));
    }
    let mut out = String::new();
    let mut upper = true;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheme() {
        assert_eq!(function_name("add", "Tensor"), "add_tensor");
        assert_eq!(function_name("add_", "Tensor"), "add_tensor_");
        assert_eq!(function_name("relu_", ""), "relu_");
        assert_eq!(function_name("relu", ""), "relu");
        assert_eq!(function_name("where", ""), "where_");
        assert_eq!(function_name("sum", "dim_IntList"), "sum_dim_intlist");
        assert_eq!(camel("add_tensor"), "AddTensor");
        assert_eq!(camel("add_tensor_"), "AddTensorInplace");
        assert_eq!(ident("self"), "self_");
    }
}
