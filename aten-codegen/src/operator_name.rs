//! Operator names as `native_functions.yaml` writes them (no namespace):
//! torchgen's `BaseOperatorName` (`add_`, `__iand__`,
//! `native_batch_norm_functional`) and the parsing of `name.overload`
//! references (`structured_delegate: add.out`, `autogen: add.Scalar_out`).

use std::fmt;

use aten_boxing::schema::OperatorName;

/// The augmented-assignment dunder methods whose `__iNAME__` form is
/// in-place (torchgen's `AUGMENTED_ASSIGNMENT_NAMES`).
const AUGMENTED_ASSIGNMENT_NAMES: [&str; 11] = [
    "add", "sub", "mul", "div", "mod", "pow", "lshift", "rshift", "and", "xor", "or",
];

/// The name of an operator without overload, taken apart: `add_` is the
/// in-place form of base `add`; `__iand__` is the in-place dunder method of
/// base `and`; `native_batch_norm_functional` is the functional variant of
/// the mutable `native_batch_norm` (torchgen's `BaseOperatorName`).
///
/// ```
/// use aten_codegen::BaseOperatorName;
///
/// let n = BaseOperatorName::parse("add_").unwrap();
/// assert_eq!((n.base(), n.is_inplace(), n.is_dunder_method()), ("add", true, false));
/// let n = BaseOperatorName::parse("__iand__").unwrap();
/// assert_eq!((n.base(), n.is_inplace(), n.is_dunder_method()), ("and", true, true));
/// assert_eq!(n.to_string(), "__iand__");
/// assert!(BaseOperatorName::parse("add_out").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BaseOperatorName {
    base: String,
    inplace: bool,
    dunder_method: bool,
    functional_overload: bool,
}

impl BaseOperatorName {
    /// Takes apart a name as written (`add_`, `__iand__`).
    ///
    /// # Errors
    ///
    /// torchgen's rules: the name is not empty, does not end in `_out`
    /// (that is what overload names are for), a dunder method starting with
    /// `i` is an augmented assignment, and a `_functional` name is neither a
    /// dunder method nor in-place.
    pub fn parse(op: &str) -> Result<BaseOperatorName, String> {
        if op.is_empty() {
            return Err("empty operator name".to_string());
        }
        if op.ends_with("_out") {
            return Err(format!(
                "operator name '{op}': the _out suffix is reserved and not permitted for operator names; did you mean to specify an out overload name instead?"
            ));
        }
        let dunder = op
            .strip_prefix("__")
            .and_then(|s| s.strip_suffix("__"))
            .filter(|inner| !inner.is_empty() && !inner.contains('_'));
        let (mut base, inplace, dunder_method) = match dunder {
            Some(inner) => match inner.strip_prefix('i') {
                Some(rest) if AUGMENTED_ASSIGNMENT_NAMES.contains(&rest) => (rest, true, true),
                _ if inner.starts_with('i') => {
                    return Err(format!(
                        "operator name '{op}': a dunder method starting with 'i' must be an in-place augmented assignment (__iadd__, __iand__, ...)"
                    ))
                }
                _ => (inner, false, true),
            },
            None => match op.strip_suffix('_') {
                Some(base) => (base, true, false),
                None => (op, false, false),
            },
        };
        let functional_overload = match base.strip_suffix("_functional") {
            Some(stripped) => {
                if dunder_method || inplace {
                    return Err(format!(
                        "operator name '{op}': a _functional operator cannot be in-place or a dunder method"
                    ));
                }
                base = stripped;
                true
            }
            None => false,
        };
        if base.is_empty() {
            return Err(format!("operator name '{op}' has an empty base name"));
        }
        Ok(BaseOperatorName {
            base: base.to_string(),
            inplace,
            dunder_method,
            functional_overload,
        })
    }

    /// The base name (`add` for `add_`, `and` for `__iand__`,
    /// `native_batch_norm` for `native_batch_norm_functional`).
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Whether this is the in-place form (`add_`, `__iand__`).
    pub fn is_inplace(&self) -> bool {
        self.inplace
    }

    /// Whether this is a Python dunder method (`__and__`).
    pub fn is_dunder_method(&self) -> bool {
        self.dunder_method
    }

    /// Whether this is the `_functional` variant of a mutable operator.
    pub fn is_functional_overload(&self) -> bool {
        self.functional_overload
    }
}

/// The name as written.
impl fmt::Display for BaseOperatorName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.dunder_method {
            let i = if self.inplace { "i" } else { "" };
            write!(f, "__{i}{}__", self.base)
        } else if self.inplace {
            write!(f, "{}_", self.base)
        } else if self.functional_overload {
            write!(f, "{}_functional", self.base)
        } else {
            f.write_str(&self.base)
        }
    }
}

/// Parses an operator reference `name` or `name.overload` without namespace
/// (torchgen's `OperatorName.parse`), as `structured_delegate` and `autogen`
/// write them.
///
/// ```
/// use aten_codegen::parse_operator_name;
///
/// let n = parse_operator_name("add.out").unwrap();
/// assert_eq!((n.name(), n.overload_name()), ("add", "out"));
/// assert!(parse_operator_name("aten::add.out").is_err());
/// assert!(parse_operator_name("add.").is_err());
/// ```
///
/// # Errors
///
/// A namespace, an empty or malformed name or overload, or a base name
/// [`BaseOperatorName::parse`] refuses.
pub fn parse_operator_name(text: &str) -> Result<OperatorName, String> {
    if text.contains("::") {
        return Err(format!(
            "'{text}': a namespace is not supported here; the function's own namespace is used"
        ));
    }
    let (name, overload) = text.split_once('.').unwrap_or((text, ""));
    if !is_identifier(name) {
        return Err(format!("'{text}' is not an operator name"));
    }
    if text.contains('.') && !is_identifier(overload) {
        return Err(format!("'{text}' has a bad overload name"));
    }
    BaseOperatorName::parse(name)?;
    Ok(OperatorName::new(name, overload))
}

/// `[A-Za-z_][A-Za-z0-9_]*`.
pub(crate) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for name in [
            "add",
            "add_",
            "__and__",
            "__iand__",
            "__lshift__",
            "__ilshift__",
            "native_batch_norm_functional",
            "_foreach_add_",
            "_cudnn_init_dropout_state",
        ] {
            assert_eq!(BaseOperatorName::parse(name).unwrap().to_string(), name);
        }
    }

    #[test]
    fn functional_overload() {
        let n = BaseOperatorName::parse("native_batch_norm_functional").unwrap();
        assert_eq!(n.base(), "native_batch_norm");
        assert!(n.is_functional_overload() && !n.is_inplace());
    }

    #[test]
    fn refused() {
        assert!(BaseOperatorName::parse("").is_err());
        assert!(BaseOperatorName::parse("add_out").is_err());
        assert!(BaseOperatorName::parse("__index__").is_err());
        assert!(BaseOperatorName::parse("foo_functional_").is_err());
        assert!(parse_operator_name("a b").is_err());
    }
}
