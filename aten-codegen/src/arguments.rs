//! How the codegen reads a schema's arguments (torchgen's `Arguments`,
//! `FunctionSchema.kind()` and `FunctionSchema.signature()`): the `self`
//! argument, the `TensorOptions` group of factory functions, the out
//! arguments; the [`SchemaKind`] of a schema; and the signature that
//! functional, in-place, mutable and out variants of one operator share.

use std::fmt::Write as _;

use aten_boxing::schema::{AliasInfo, Argument, FunctionSchema, Type};

use crate::operator_name::BaseOperatorName;

/// What a schema does with its outputs (torchgen's `SchemaKind`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SchemaKind {
    /// Returns newly allocated outputs (`add.Tensor`).
    Functional,
    /// Writes into `self` and returns it (`add_.Tensor`).
    Inplace,
    /// Writes into explicit keyword-only `out` arguments (`add.out`).
    Out,
    /// Writes into positional arguments after `self`, neither in-place nor
    /// out (`_fused_moving_avg_obs_fq_helper`).
    Mutable,
    /// An out variant with `_scratch_*` out arguments (memory planning).
    Scratch,
}

impl SchemaKind {
    /// The lower-case name torchgen prints (`functional`, `out` ...).
    pub fn name(self) -> &'static str {
        match self {
            SchemaKind::Functional => "functional",
            SchemaKind::Inplace => "inplace",
            SchemaKind::Out => "out",
            SchemaKind::Mutable => "mutable",
            SchemaKind::Scratch => "scratch",
        }
    }
}

/// A schema's arguments split the way the codegen needs them, in schema
/// order: positional arguments (before `self`, `self`, after `self`), then
/// keyword-only arguments (before the `TensorOptions` group, the group of
/// `dtype`, `layout`, `device`, `pin_memory`, after it), then out arguments.
///
/// ```
/// use aten_boxing::schema::FunctionSchema;
/// use aten_codegen::Arguments;
///
/// let s = FunctionSchema::parse(
///     "empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
/// ).unwrap();
/// let a = Arguments::new(&s);
/// assert_eq!(a.self_arg().unwrap().name(), "self");
/// assert_eq!(a.tensor_options().unwrap().len(), 4);
/// assert_eq!(a.post_tensor_options_kwarg_only()[0].name(), "memory_format");
/// assert!(a.out().is_empty() && a.has_tensor_arg());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Arguments<'a> {
    all: &'a [Argument],
    positional_end: usize,
    self_index: Option<usize>,
    tensor_options_start: Option<usize>,
    out_start: usize,
}

/// The four arguments of a `TensorOptions` group, by name and real type.
fn is_tensor_options_at(kwargs: &[Argument], i: usize) -> bool {
    let expect = |a: &Argument, name: &str, inner: Type| {
        a.name() == name && a.real_type().optional_element() == Some(&inner)
    };
    kwargs.len() >= i + 4
        && expect(&kwargs[i], "dtype", Type::ScalarType)
        && expect(&kwargs[i + 1], "layout", Type::Layout)
        && expect(&kwargs[i + 2], "device", Type::Device)
        && expect(&kwargs[i + 3], "pin_memory", Type::Bool)
}

/// Whether a type is `Tensor`, or an optional or list of one.
fn is_tensor_like(t: &Type) -> bool {
    match t {
        Type::Tensor => true,
        Type::Optional(inner) | Type::List(inner) => is_tensor_like(inner),
        _ => false,
    }
}

/// Whether a type is `Generator`, or an optional or list of one.
fn is_generator_like(t: &Type) -> bool {
    match t {
        Type::Generator => true,
        Type::Optional(inner) | Type::List(inner) => is_generator_like(inner),
        _ => false,
    }
}

impl<'a> Arguments<'a> {
    /// Splits `schema`'s arguments. Out arguments start at the first
    /// written keyword-only argument; [`check`](Self::check) says whether
    /// only out arguments follow it.
    pub fn new(schema: &'a FunctionSchema) -> Arguments<'a> {
        let all = schema.arguments();
        let positional_end = all.iter().position(|a| a.kwarg_only()).unwrap_or(all.len());
        let self_index = all[..positional_end]
            .iter()
            .position(|a| a.name() == "self");
        let out_start = all[positional_end..]
            .iter()
            .position(Argument::is_write)
            .map_or(all.len(), |i| positional_end + i);
        let kwargs = &all[positional_end..out_start];
        let tensor_options_start = (0..kwargs.len())
            .find(|&i| is_tensor_options_at(kwargs, i))
            .map(|i| positional_end + i);
        Arguments {
            all,
            positional_end,
            self_index,
            tensor_options_start,
            out_start,
        }
    }

    /// Checks that the out arguments come last.
    ///
    /// # Errors
    ///
    /// A keyword-only argument that is not written follows an out argument.
    pub fn check(&self) -> Result<(), String> {
        match self.out().iter().find(|a| !a.is_write()) {
            Some(bad) => Err(format!(
                "keyword-only argument '{}' follows an out argument; out arguments (mutable keyword-only arguments) must come last",
                bad.name()
            )),
            None => Ok(()),
        }
    }

    /// All arguments in schema order.
    pub fn all(&self) -> &'a [Argument] {
        self.all
    }

    /// The positional arguments.
    pub fn positional(&self) -> &'a [Argument] {
        &self.all[..self.positional_end]
    }

    /// The positional arguments before `self`; none when there is no `self`
    /// (torchgen then counts them all as
    /// [`post_self_positional`](Self::post_self_positional)).
    pub fn pre_self_positional(&self) -> &'a [Argument] {
        match self.self_index {
            Some(i) => &self.all[..i],
            None => &[],
        }
    }

    /// The positional argument called `self`.
    pub fn self_arg(&self) -> Option<&'a Argument> {
        self.self_index.map(|i| &self.all[i])
    }

    /// The positional arguments after `self`; every positional argument
    /// when there is no `self`.
    pub fn post_self_positional(&self) -> &'a [Argument] {
        match self.self_index {
            Some(i) => &self.all[i + 1..self.positional_end],
            None => self.positional(),
        }
    }

    /// The keyword-only arguments that are not out arguments.
    pub fn kwarg_only(&self) -> &'a [Argument] {
        &self.all[self.positional_end..self.out_start]
    }

    /// The keyword-only arguments before the `TensorOptions` group (all of
    /// them when there is none).
    pub fn pre_tensor_options_kwarg_only(&self) -> &'a [Argument] {
        match self.tensor_options_start {
            Some(i) => &self.all[self.positional_end..i],
            None => self.kwarg_only(),
        }
    }

    /// The `dtype`, `layout`, `device`, `pin_memory` group of a factory
    /// function.
    pub fn tensor_options(&self) -> Option<&'a [Argument]> {
        self.tensor_options_start.map(|i| &self.all[i..i + 4])
    }

    /// The keyword-only arguments after the `TensorOptions` group.
    pub fn post_tensor_options_kwarg_only(&self) -> &'a [Argument] {
        match self.tensor_options_start {
            Some(i) => &self.all[i + 4..self.out_start],
            None => &[],
        }
    }

    /// The out arguments (keyword-only and written), last in the schema.
    pub fn out(&self) -> &'a [Argument] {
        &self.all[self.out_start..]
    }

    /// Every argument but the out arguments.
    pub fn flat_non_out(&self) -> &'a [Argument] {
        &self.all[..self.out_start]
    }

    /// Whether a non-out argument is a tensor (or optional or list of them).
    pub fn has_tensor_arg(&self) -> bool {
        self.flat_non_out()
            .iter()
            .any(|a| is_tensor_like(a.real_type()))
    }

    /// Whether a non-out argument is a `Generator` (or optional of one).
    pub fn has_generator_arg(&self) -> bool {
        self.flat_non_out()
            .iter()
            .any(|a| is_generator_like(a.real_type()))
    }

    /// The [`SchemaKind`] of a schema with these arguments and this name.
    ///
    /// # Errors
    ///
    /// An in-place name with out arguments.
    pub fn kind(&self, name: &BaseOperatorName) -> Result<SchemaKind, String> {
        let is_out = !self.out().is_empty();
        if name.is_inplace() && is_out {
            return Err(format!(
                "in-place function '{name}' cannot have out arguments"
            ));
        }
        Ok(if name.is_inplace() {
            SchemaKind::Inplace
        } else if self.out().iter().any(|a| a.name().starts_with("_scratch_")) {
            SchemaKind::Scratch
        } else if is_out {
            SchemaKind::Out
        } else if self.post_self_positional().iter().any(Argument::is_write) {
            SchemaKind::Mutable
        } else {
            SchemaKind::Functional
        })
    }
}

/// Whether two optional alias annotations are equal.
fn same_alias(a: Option<&AliasInfo>, b: Option<&AliasInfo>) -> bool {
    a == b
}

/// The signature that related variants of one operator share (torchgen's
/// `FunctionSchema.signature()`), as text: the base name without overload
/// or in-place marker, the arguments without alias annotations, out
/// arguments or `TensorOptions`, and the return types followed by the types
/// of written inputs that are not returned.
///
/// `add.Tensor`, `add_.Tensor` and `add.out` share
/// `add(Tensor self, Tensor other, *, Scalar alpha=1) -> (Tensor)`.
///
/// ```
/// use aten_boxing::schema::FunctionSchema;
/// use aten_codegen::{signature, Arguments, BaseOperatorName};
///
/// let sig = |text: &str| {
///     let s = FunctionSchema::parse(text).unwrap();
///     let base = BaseOperatorName::parse(s.name()).unwrap();
///     signature(&s, &base, &Arguments::new(&s))
/// };
/// let functional = sig("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
/// let inplace = sig("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
/// let out = sig("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
/// assert_eq!(functional, inplace);
/// assert_eq!(functional, out);
/// assert_eq!(functional, "add(Tensor self, Tensor other, *, Scalar alpha=1) -> (Tensor)");
/// ```
pub fn signature(schema: &FunctionSchema, name: &BaseOperatorName, args: &Arguments<'_>) -> String {
    let mut out = String::with_capacity(128);
    if name.is_dunder_method() {
        let _ = write!(out, "__{}__", name.base());
    } else {
        out.push_str(name.base());
    }
    out.push('(');
    // See torchgen's Note [bernoulli.p schema]: `p` takes a default there.
    let bernoulli_p = schema.name() == "bernoulli" && schema.overload_name() == "p";
    let write_arg = |out: &mut String, a: &Argument| {
        if !out.ends_with('(') {
            out.push_str(", ");
        }
        let plain = Argument::new(
            a.name(),
            a.real_type().clone(),
            a.n(),
            a.default_value().cloned(),
            a.kwarg_only(),
            None,
        );
        let _ = write!(out, "{plain}");
        if bernoulli_p && a.name() == "p" && a.default_value().is_none() {
            out.push_str("=0.5");
        }
    };
    for a in args.positional() {
        write_arg(&mut out, a);
    }
    let kwargs = args
        .pre_tensor_options_kwarg_only()
        .iter()
        .chain(args.post_tensor_options_kwarg_only());
    for (i, a) in kwargs.enumerate() {
        if i == 0 {
            if !out.ends_with('(') {
                out.push_str(", ");
            }
            out.push('*');
        }
        write_arg(&mut out, a);
    }
    out.push_str(") -> (");
    let returns = schema.returns();
    let mut n = 0;
    for r in returns {
        if n > 0 {
            out.push_str(", ");
        }
        n += 1;
        let _ = write!(out, "{}", r.real_type());
    }
    let written_inputs = args
        .self_arg()
        .into_iter()
        .chain(args.out())
        .chain(args.post_self_positional());
    for a in written_inputs {
        let returned = returns
            .iter()
            .any(|r| same_alias(r.alias_info(), a.alias_info()));
        if a.is_write() && !returned {
            if n > 0 {
                out.push_str(", ");
            }
            n += 1;
            let _ = write!(out, "{}", a.real_type());
        }
    }
    out.push(')');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(text: &str) -> (FunctionSchema, BaseOperatorName) {
        let s = FunctionSchema::parse(text).unwrap();
        let b = BaseOperatorName::parse(s.name()).unwrap();
        (s, b)
    }

    fn kind(text: &str) -> SchemaKind {
        let (s, b) = parts(text);
        Arguments::new(&s).kind(&b).unwrap()
    }

    fn sig(text: &str) -> String {
        let (s, b) = parts(text);
        signature(&s, &b, &Arguments::new(&s))
    }

    #[test]
    fn kinds() {
        assert_eq!(kind("abs(Tensor self) -> Tensor"), SchemaKind::Functional);
        assert_eq!(
            kind("abs_(Tensor(a!) self) -> Tensor(a!)"),
            SchemaKind::Inplace
        );
        assert_eq!(
            kind("abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"),
            SchemaKind::Out
        );
        assert_eq!(
            kind("f(Tensor self, Tensor(a!) running) -> Tensor"),
            SchemaKind::Mutable
        );
        assert_eq!(
            kind("f.out(Tensor self, *, Tensor(a!) out, Tensor(b!) _scratch_x) -> Tensor(a!)"),
            SchemaKind::Scratch
        );
        let (s, b) = parts("f_.out(Tensor(a!) self, *, Tensor(b!) out) -> Tensor(a!)");
        assert!(Arguments::new(&s).kind(&b).is_err());
    }

    #[test]
    fn factory_out_variants_share_the_signature() {
        let functional = sig("ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor");
        let out = sig("ones.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)");
        assert_eq!(functional, out);
        assert_eq!(functional, "ones(SymInt[] size) -> (Tensor)");
    }

    #[test]
    fn mutable_and_functional_variants() {
        let mutable =
            sig("_f(Tensor self, Tensor(a!) running_min, float c) -> (Tensor output, Tensor mask)");
        let functional = sig("_f_functional(Tensor self, Tensor running_min, float c) -> (Tensor output, Tensor mask, Tensor running_min_out)");
        assert_eq!(mutable, functional);
    }

    #[test]
    fn inplace_list_self_returning_nothing() {
        let inplace = sig("_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()");
        let functional = sig("_foreach_add.Scalar(Tensor[] self, Scalar scalar) -> Tensor[]");
        assert_eq!(inplace, functional);
    }

    #[test]
    fn bernoulli_p_takes_the_default_of_bernoulli_float() {
        assert_eq!(
            sig("bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor"),
            sig("bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)")
        );
    }

    #[test]
    fn out_must_come_last() {
        let (s, _) = parts("f.out(Tensor self, *, Tensor(a!) out, int x) -> Tensor(a!)");
        assert!(Arguments::new(&s).check().is_err());
    }
}
