//! `Argument`: one argument or return of a schema (PyTorch's
//! `c10::Argument`) and its printed form.

use std::fmt;

use super::alias_info::AliasInfo;
use super::default_value::DefaultValue;
use super::name::Name;
use super::types::Type;

/// An argument or return value: name, type (real and fake), static list
/// size `N`, default, keyword-only flag and alias annotation.
///
/// ```
/// use aten_boxing::schema::{FunctionSchema, Type};
///
/// let s = FunctionSchema::parse(
///     "aten::f(Tensor self, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
/// )
/// .unwrap();
/// let dtype = &s.arguments()[1];
/// assert_eq!(dtype.real_type().to_string(), "ScalarType?");
/// assert_eq!(dtype.ty().to_string(), "int?");
/// assert!(dtype.kwarg_only() && !dtype.is_out());
/// assert!(s.arguments()[2].is_out());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Argument {
    name: Name,
    real_type: Type,
    /// The fake type when it differs from the real one (rare, so boxed).
    fake_type: Option<Box<Type>>,
    n: Option<i32>,
    default_value: Option<DefaultValue>,
    kwarg_only: bool,
    /// Boxed, as in PyTorch: most arguments have none.
    alias_info: Option<Box<AliasInfo>>,
}

impl Argument {
    /// An argument with the given real type; the fake type is derived
    /// ([`Type::to_fake`]).
    pub fn new(
        name: &str,
        real_type: Type,
        n: Option<i32>,
        default_value: Option<DefaultValue>,
        kwarg_only: bool,
        alias_info: Option<AliasInfo>,
    ) -> Argument {
        Argument::with_boxed_alias(
            name,
            real_type,
            n,
            default_value,
            kwarg_only,
            alias_info.map(Box::new),
        )
    }

    /// [`new`](Self::new) with the alias annotation already boxed.
    pub(crate) fn with_boxed_alias(
        name: &str,
        real_type: Type,
        n: Option<i32>,
        default_value: Option<DefaultValue>,
        kwarg_only: bool,
        alias_info: Option<Box<AliasInfo>>,
    ) -> Argument {
        let fake_type = real_type.to_fake().map(Box::new);
        Argument {
            name: Name::new(name),
            real_type,
            fake_type,
            n,
            default_value,
            kwarg_only,
            alias_info,
        }
    }

    /// The name (empty for an unnamed return).
    pub fn name(&self) -> &str {
        self.name.as_str()
    }

    /// The type as PyTorch's `Argument::type()` gives it: the fake type, in
    /// which `ScalarType`, `Layout`, `MemoryFormat` and `SymInt` are `int`.
    pub fn ty(&self) -> &Type {
        self.fake_type.as_deref().unwrap_or(&self.real_type)
    }

    /// The type as written in the schema.
    pub fn real_type(&self) -> &Type {
        &self.real_type
    }

    /// The static size of a list argument (`int[2]` has `N == 2`).
    pub fn n(&self) -> Option<i32> {
        self.n
    }

    /// The default value.
    pub fn default_value(&self) -> Option<&DefaultValue> {
        self.default_value.as_ref()
    }

    /// Whether the argument can only be passed by keyword (after `*`).
    pub fn kwarg_only(&self) -> bool {
        self.kwarg_only
    }

    /// Whether this is an out argument: keyword-only and written.
    pub fn is_out(&self) -> bool {
        self.kwarg_only && self.is_write()
    }

    /// The alias annotation.
    pub fn alias_info(&self) -> Option<&AliasInfo> {
        self.alias_info.as_deref()
    }

    /// Whether the operator writes to this argument.
    pub fn is_write(&self) -> bool {
        self.alias_info.as_ref().is_some_and(|a| a.is_write())
    }

    /// Appends the printed form (`Tensor(a!)? out`, `int[2] stride=1`,
    /// `str? mode="mean"`), PyTorch's `operator<<(ostream&, Argument)`.
    pub(crate) fn write(&self, out: &mut String) {
        use std::fmt::Write;
        let ty = &self.real_type;
        let unopt = ty.optional_element().unwrap_or(ty);
        match unopt.list_element() {
            Some(element) => {
                let _ = write!(out, "{element}");
                if let Some(contained) = self
                    .alias_info
                    .as_ref()
                    .and_then(|a| a.contained_types().first())
                {
                    let _ = write!(out, "{contained}");
                }
                out.push('[');
                if let Some(n) = self.n {
                    out.push_str(&n.to_string());
                }
                out.push(']');
            }
            None => {
                let _ = write!(out, "{unopt}");
            }
        }
        if let Some(alias) = &self.alias_info {
            if !alias.before_sets().is_empty() {
                let _ = write!(out, "{alias}");
            }
        }
        if ty.optional_element().is_some() {
            out.push('?');
        }
        let name = self.name.as_str();
        if !name.is_empty() {
            out.push(' ');
            out.push_str(name);
        }
        if let Some(default) = &self.default_value {
            out.push('=');
            let quote = *ty == Type::Str || *unopt == Type::Str;
            let collapse = ty.list_element() == Some(&Type::Int);
            default.write_schema_default(quote, collapse, out);
        }
    }
}

/// The argument as it appears in a printed schema.
impl fmt::Display for Argument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::with_capacity(32);
        self.write(&mut s);
        f.write_str(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_alias_before_optional_marker() {
        let mut a = AliasInfo::new();
        a.add_before_set("a");
        a.after_equals_before();
        a.set_is_write(true);
        let arg = Argument::new(
            "out",
            Type::optional(Type::Tensor),
            None,
            None,
            true,
            Some(a),
        );
        assert_eq!(arg.to_string(), "Tensor(a!)? out");
        assert!(arg.is_out());
    }

    #[test]
    fn int_lists_collapse_but_symint_lists_do_not() {
        let ints = Argument::new(
            "stride",
            Type::list(Type::Int),
            Some(2),
            Some(DefaultValue::IntList(vec![1, 1])),
            false,
            None,
        );
        assert_eq!(ints.to_string(), "int[2] stride=1");
        let symints = Argument::new(
            "stride",
            Type::list(Type::SymInt),
            Some(2),
            Some(DefaultValue::IntList(vec![1, 1])),
            false,
            None,
        );
        assert_eq!(symints.to_string(), "SymInt[2] stride=[1, 1]");
        assert_eq!(symints.ty().to_string(), "int[]");
    }

    #[test]
    fn strings_are_quoted_only_for_str_types() {
        let s = Argument::new(
            "order",
            Type::optional(Type::Str),
            None,
            Some(DefaultValue::Str(b"NCHW".to_vec())),
            false,
            None,
        );
        assert_eq!(s.to_string(), "str? order=\"NCHW\"");
        let d = Argument::new(
            "device",
            Type::optional(Type::Device),
            None,
            Some(DefaultValue::Str(b"cpu".to_vec())),
            false,
            None,
        );
        assert_eq!(d.to_string(), "Device? device=cpu");
    }
}
