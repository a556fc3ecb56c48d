//! Node names as FX picks them: the operator's name, made unique with
//! `_1`, `_2`, ..., and never a Python builtin or keyword (`sum` becomes
//! `sum_1`).

use std::collections::HashMap;

/// Python names FX never gives a node (builtins and keywords it avoids).
const RESERVED: &[&str] = &[
    "abs",
    "all",
    "any",
    "bool",
    "bytes",
    "callable",
    "chr",
    "complex",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "filter",
    "float",
    "format",
    "getattr",
    "hash",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "iter",
    "len",
    "list",
    "map",
    "max",
    "min",
    "next",
    "object",
    "open",
    "ord",
    "pow",
    "print",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "slice",
    "sorted",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
    "and",
    "as",
    "assert",
    "break",
    "class",
    "continue",
    "def",
    "del",
    "elif",
    "else",
    "except",
    "finally",
    "for",
    "from",
    "global",
    "if",
    "import",
    "in",
    "is",
    "lambda",
    "not",
    "or",
    "pass",
    "raise",
    "return",
    "try",
    "while",
    "with",
    "yield",
    "None",
    "True",
    "False",
    "self",
    "torch",
    "inf",
    "nan",
];

/// Hands out unique names.
#[derive(Default)]
pub(crate) struct Namer {
    counts: HashMap<String, usize>,
}

impl Namer {
    /// A fresh name based on `base`.
    pub(crate) fn fresh(&mut self, base: &str) -> String {
        let base: String = base
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let count = self.counts.entry(base.clone()).or_insert(0);
        if *count == 0 {
            *count = 1;
            if !RESERVED.contains(&base.as_str()) {
                return base;
            }
        }
        let n = *count;
        *count += 1;
        format!("{base}_{n}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_avoid_builtins() {
        let mut n = Namer::default();
        assert_eq!(n.fresh("add"), "add");
        assert_eq!(n.fresh("add"), "add_1");
        assert_eq!(n.fresh("sum"), "sum_1");
        assert_eq!(n.fresh("sum"), "sum_2");
        assert_eq!(n.fresh("x"), "x");
    }
}
