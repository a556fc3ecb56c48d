//! `FunctionSchema` and `OperatorName` (PyTorch's `c10::FunctionSchema`,
//! `c10::OperatorName`): the parsed form of
//! `aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`,
//! PyTorch's canonical printer, and the queries built on it.

use std::fmt;
use std::str::FromStr;

use c10_core::Error;

use super::argument::Argument;
use super::parser;

/// `ns::name` plus an overload name (empty for the default overload).
///
/// ```
/// use aten_boxing::schema::OperatorName;
///
/// let n = OperatorName::new("aten::add", "Tensor");
/// assert_eq!(n.namespace(), Some("aten"));
/// assert_eq!(n.base_name(), "add");
/// assert_eq!(n.to_string(), "aten::add.Tensor");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OperatorName {
    /// `name` or `name.overload`, as printed.
    full: String,
    /// Where `name` ends in `full`.
    name_len: usize,
}

impl OperatorName {
    /// An operator name from its qualified name and overload name.
    pub fn new(name: impl Into<String>, overload_name: impl AsRef<str>) -> OperatorName {
        let mut full = name.into();
        let name_len = full.len();
        let overload_name = overload_name.as_ref();
        if !overload_name.is_empty() {
            full.reserve_exact(1 + overload_name.len());
            full.push('.');
            full.push_str(overload_name);
        }
        OperatorName { full, name_len }
    }

    /// The name made of `parts` with `overload_name`, in one allocation.
    pub(crate) fn from_parts(parts: &[&str], overload_name: &str) -> OperatorName {
        let name_len: usize = parts.iter().map(|p| p.len()).sum();
        let extra = if overload_name.is_empty() {
            0
        } else {
            1 + overload_name.len()
        };
        let mut full = String::with_capacity(name_len + extra);
        for part in parts {
            full.push_str(part);
        }
        if !overload_name.is_empty() {
            full.push('.');
            full.push_str(overload_name);
        }
        OperatorName { full, name_len }
    }

    /// Parses `ns::name.overload` (PyTorch's `torch::jit::parseName`).
    pub fn parse(text: &str) -> Result<OperatorName, Error> {
        match parser::parse_schema_or_name(text)? {
            SchemaOrName::Name(name) => Ok(name),
            SchemaOrName::Schema(_) => Err(Error::runtime(
                "Tried to parse an operator name but function schema was given",
            )),
        }
    }

    /// The qualified name (`aten::add`).
    pub fn name(&self) -> &str {
        &self.full[..self.name_len]
    }

    /// The overload name (`Tensor`; empty for the default overload).
    pub fn overload_name(&self) -> &str {
        self.full.get(self.name_len + 1..).unwrap_or_default()
    }

    /// The namespace (`aten`), if the name has one.
    pub fn namespace(&self) -> Option<&str> {
        self.name().split_once("::").map(|(ns, _)| ns)
    }

    /// The name without its namespace (`add`).
    pub fn base_name(&self) -> &str {
        let name = self.name();
        name.split_once("::").map_or(name, |(_, n)| n)
    }
}

/// `name` or `name.overload`.
impl fmt::Display for OperatorName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.full)
    }
}

/// What [`parse_schema_or_name`](super::parse_schema_or_name) found: a bare
/// operator name or a whole schema.
#[derive(Clone, Debug, PartialEq)]
pub enum SchemaOrName {
    /// `ns::name.overload` with no argument list.
    Name(OperatorName),
    /// A full schema.
    Schema(FunctionSchema),
}

/// An operator's signature.
///
/// ```
/// use aten_boxing::schema::FunctionSchema;
///
/// let text = "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)";
/// let s: FunctionSchema = text.parse().unwrap();
/// assert_eq!(s.name(), "aten::add");
/// assert_eq!(s.overload_name(), "out");
/// assert_eq!(s.to_string(), text);
/// assert!(s.is_mutable() && !s.is_view_op());
/// assert_eq!(s.out_arguments().map(|a| a.name()).collect::<Vec<_>>(), ["out"]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionSchema {
    name: OperatorName,
    arguments: Vec<Argument>,
    returns: Vec<Argument>,
    is_vararg: bool,
    is_varret: bool,
}

/// PyTorch's assertion text for a positional argument without default after
/// one with a default (`FunctionSchema::checkSchema`).
const NON_DEFAULT_ASSERT: &str = "!seen_default_arg || arg.kwarg_only() INTERNAL ASSERT FAILED at \"/__w/pytorch/pytorch/aten/src/ATen/core/function_schema.h\":340, please report a bug to PyTorch. ";

impl FunctionSchema {
    /// Builds a schema, checking PyTorch's invariant that a positional
    /// argument without default (lists excepted) does not follow one with a
    /// default.
    pub fn new(
        name: OperatorName,
        arguments: Vec<Argument>,
        returns: Vec<Argument>,
        is_vararg: bool,
        is_varret: bool,
    ) -> Result<FunctionSchema, Error> {
        let schema = FunctionSchema {
            name,
            arguments,
            returns,
            is_vararg,
            is_varret,
        };
        schema.check_schema()?;
        Ok(schema)
    }

    /// `FunctionSchema::checkSchema`.
    fn check_schema(&self) -> Result<(), Error> {
        let mut seen_default_arg = false;
        for arg in &self.arguments {
            if arg.default_value().is_some() {
                seen_default_arg = true;
            } else if arg.ty().list_element().is_none() && seen_default_arg && !arg.kwarg_only() {
                return Err(Error::internal(format!(
                    "{NON_DEFAULT_ASSERT}Non-default positional argument follows default argument. Parameter {} in {self}",
                    arg.name()
                )));
            }
        }
        Ok(())
    }

    /// Parses a schema (PyTorch's `torch::jit::parseSchema`), failing with
    /// PyTorch's messages.
    #[doc(alias = "parseSchema")]
    pub fn parse(text: &str) -> Result<FunctionSchema, Error> {
        match parser::parse_schema_or_name(text)? {
            SchemaOrName::Schema(schema) => Ok(schema),
            SchemaOrName::Name(_) => Err(Error::runtime(
                "Tried to parse a function schema but only the operator name was given",
            )),
        }
    }

    /// The operator name with its overload.
    pub fn operator_name(&self) -> &OperatorName {
        &self.name
    }

    /// The qualified name (`aten::add`).
    pub fn name(&self) -> &str {
        self.name.name()
    }

    /// The overload name (empty for the default overload).
    pub fn overload_name(&self) -> &str {
        self.name.overload_name()
    }

    /// The arguments.
    pub fn arguments(&self) -> &[Argument] {
        &self.arguments
    }

    /// The returns.
    pub fn returns(&self) -> &[Argument] {
        &self.returns
    }

    /// Whether the schema takes any number of further arguments (`...`).
    pub fn is_vararg(&self) -> bool {
        self.is_vararg
    }

    /// Whether the schema returns any number of further values (`...`).
    pub fn is_varret(&self) -> bool {
        self.is_varret
    }

    /// Whether any argument is written (`Tensor(a!)`).
    pub fn is_mutable(&self) -> bool {
        self.arguments.iter().any(Argument::is_write)
    }

    /// Whether the operator is a view: some argument carries an alias
    /// annotation without a write (`Tensor(a) self`), PyTorch's
    /// `OpOverload.is_view`.
    pub fn is_view_op(&self) -> bool {
        self.arguments
            .iter()
            .any(|a| a.alias_info().is_some_and(|i| !i.is_write()))
    }

    /// The out arguments (keyword-only and written), in order.
    pub fn out_arguments(&self) -> impl Iterator<Item = &Argument> {
        self.arguments.iter().filter(|a| a.is_out())
    }

    /// The arguments the operator writes to.
    pub fn written_arguments(&self) -> impl Iterator<Item = &Argument> {
        self.arguments.iter().filter(|a| a.is_write())
    }

    /// The arguments that carry an alias annotation.
    pub fn aliased_arguments(&self) -> impl Iterator<Item = &Argument> {
        self.arguments.iter().filter(|a| a.alias_info().is_some())
    }

    /// Whether the argument at `index` is written (PyTorch's
    /// `is_mutable(SchemaArgument)` for an input).
    pub fn is_argument_mutable(&self, index: usize) -> bool {
        self.arguments.get(index).is_some_and(Argument::is_write)
    }

    /// The position of the argument called `name`.
    pub fn argument_index_with_name(&self, name: &str) -> Option<usize> {
        self.arguments.iter().position(|a| a.name() == name)
    }

    /// Whether any argument or return carries an alias annotation.
    pub fn has_any_alias_info(&self) -> bool {
        self.arguments
            .iter()
            .chain(&self.returns)
            .any(|a| a.alias_info().is_some())
    }

    /// Appends PyTorch's canonical printed form.
    fn write(&self, out: &mut String) {
        out.push_str(&self.name.full);
        out.push('(');
        let mut seen_kwarg_only = false;
        for (i, arg) in self.arguments.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            if arg.kwarg_only() && !seen_kwarg_only {
                out.push_str("*, ");
                seen_kwarg_only = true;
            }
            arg.write(out);
        }
        if self.is_vararg {
            if !self.arguments.is_empty() {
                out.push_str(", ");
            }
            out.push_str("...");
        }
        out.push_str(") -> ");
        let returns = &self.returns;
        let mut need_paren =
            !((returns.len() == 1 && !self.is_varret) || (returns.is_empty() && self.is_varret));
        let mut single = String::new();
        if returns.len() == 1 && !need_paren {
            returns[0].write(&mut single);
            need_paren = single.starts_with('(');
        }
        if need_paren {
            out.push('(');
        }
        if single.is_empty() {
            for (i, ret) in returns.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                ret.write(out);
            }
        } else {
            out.push_str(&single);
        }
        if self.is_varret {
            if !returns.is_empty() {
                out.push_str(", ");
            }
            out.push_str("...");
        }
        if need_paren {
            out.push(')');
        }
    }
}

/// PyTorch's canonical form, `str(schema)`.
impl fmt::Display for FunctionSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::with_capacity(128);
        self.write(&mut s);
        f.write_str(&s)
    }
}

/// [`FunctionSchema::parse`].
impl FromStr for FunctionSchema {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FunctionSchema::parse(s)
    }
}

/// [`OperatorName::parse`].
impl FromStr for OperatorName {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        OperatorName::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(text: &str) -> String {
        FunctionSchema::parse(text).unwrap().to_string()
    }

    #[test]
    fn written_arguments_are_the_mutable_ones() {
        let s = FunctionSchema::parse(
            "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
        )
        .unwrap();
        let written: Vec<&str> = s.written_arguments().map(Argument::name).collect();
        assert_eq!(written, ["out"]);
        assert!(s.is_argument_mutable(3));
        assert!(!s.is_argument_mutable(0));
        // Past the arguments: not an argument, so not written.
        assert!(!s.is_argument_mutable(4));
        let view =
            FunctionSchema::parse("view(Tensor(a) self, SymInt[] size) -> Tensor(a)").unwrap();
        assert_eq!(view.written_arguments().count(), 0);
    }

    #[test]
    fn return_parentheses() {
        assert_eq!(roundtrip("f() -> (Tensor)"), "f() -> Tensor");
        assert_eq!(roundtrip("f() -> ()"), "f() -> ()");
        assert_eq!(roundtrip("f() -> ..."), "f() -> ...");
        assert_eq!(roundtrip("f() -> (Tensor, ...)"), "f() -> (Tensor, ...)");
        assert_eq!(
            roundtrip("f(Dict(str, t) self) -> ((str, t)[])"),
            "f(Dict(str, t) self) -> ((str, t)[])"
        );
        assert_eq!(roundtrip("f() -> ((str, str))"), "f() -> ((str, str))");
        assert_eq!(roundtrip("f(...) -> int"), "f(...) -> int");
    }

    #[test]
    fn kwarg_marker_printed_once() {
        assert_eq!(
            roundtrip("f(Tensor a, *, *, int b, int c) -> ()"),
            "f(Tensor a, *, int b, int c) -> ()"
        );
        assert_eq!(roundtrip("f(*) -> ()"), "f() -> ()");
    }

    #[test]
    fn non_default_after_default() {
        let e = FunctionSchema::parse("f(int a=1, int b) -> ()").unwrap_err();
        assert!(e
            .message()
            .starts_with("!seen_default_arg || arg.kwarg_only() INTERNAL ASSERT FAILED"));
        assert!(e
            .message()
            .ends_with("Parameter b in f(int a=1, int b) -> ()"));
        assert!(FunctionSchema::parse("f(int a=1, int[] b) -> ()").is_ok());
        assert!(FunctionSchema::parse("f(int a=1, *, int b) -> ()").is_ok());
    }

    #[test]
    fn names_and_queries() {
        assert!(OperatorName::parse("f(int a) -> ()").is_err());
        assert_eq!(
            OperatorName::parse("aten::f.x").unwrap(),
            OperatorName::new("aten::f", "x")
        );
        let e = FunctionSchema::parse("aten::f").unwrap_err();
        assert_eq!(
            e.message(),
            "Tried to parse a function schema but only the operator name was given"
        );
        let s = FunctionSchema::parse("aten::t(Tensor(a) self) -> Tensor(a)").unwrap();
        assert!(s.is_view_op() && !s.is_mutable() && s.has_any_alias_info());
        assert_eq!(s.argument_index_with_name("self"), Some(0));
        assert_eq!(s.aliased_arguments().count(), 1);
    }
}
