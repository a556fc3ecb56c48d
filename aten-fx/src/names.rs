//! Node names as FX picks them: the operator's name, made unique with
//! `_1`, `_2`, ..., and never a Python builtin or keyword (`sum` becomes
//! `sum_1`).

use std::collections::{HashMap, HashSet};

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

/// Hands out unique names (FX's `_Namespace.create_name`).
#[derive(Default)]
pub(crate) struct Namer {
    used: HashSet<String>,
    /// The last number given to each base.
    base_count: HashMap<String, usize>,
}

impl Namer {
    /// A fresh name based on `candidate`: sanitised, split into a base and
    /// a trailing `_<n>`, and numbered up from there (or from the base's
    /// last number) until it is neither taken nor reserved.
    pub(crate) fn fresh(&mut self, candidate: &str) -> String {
        let mut sanitised: String = candidate
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if sanitised.is_empty() || sanitised.starts_with(|c: char| c.is_ascii_digit()) {
            sanitised.insert(0, '_');
        }
        let (base, num) = match sanitised.rsplit_once('_') {
            Some((base, digits))
                if !base.is_empty()
                    && !digits.is_empty()
                    && digits.bytes().all(|b| b.is_ascii_digit()) =>
            {
                (base.to_string(), digits.parse::<usize>().ok())
            }
            _ => (sanitised.clone(), None),
        };
        let mut name = match num {
            Some(n) => format!("{base}_{n}"),
            None => base.clone(),
        };
        let mut n = match num {
            Some(n) if n != 0 => n,
            _ => self.base_count.get(&base).copied().unwrap_or(0),
        };
        while self.used.contains(&name) || RESERVED.contains(&name.as_str()) {
            n += 1;
            name = format!("{base}_{n}");
        }
        self.used.insert(name.clone());
        self.base_count.insert(base, n);
        name
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
        // A placeholder `add_1` takes the name an operator would get.
        let mut n = Namer::default();
        assert_eq!(n.fresh("add_1"), "add_1");
        assert_eq!(n.fresh("add"), "add");
        assert_eq!(n.fresh("add"), "add_2");
        assert_eq!(n.fresh("true_graph_0"), "true_graph_0");
        assert_eq!(n.fresh("true_graph_0"), "true_graph_1");
        assert_eq!(n.fresh("9lives"), "_9lives");
    }
}
