//! Structured kernels and `autogen` out variants.
//!
//! A structured family is an out function marked `structured: True` and the
//! functional and in-place functions whose `structured_delegate` names it.
//! The project writes two things per family, as PyTorch does: a *meta*
//! function (`crate::meta::<family>(inputs) -> Result<TensorMeta>`: shape,
//! dtype and strides of the output, and every argument check) and, per
//! backend, an *impl* (the out function's `dispatch:` kernel,
//! `(inputs, out: &Tensor) -> Result<()>`). The generator writes the three
//! registered kernels around them:
//!
//! - functional: run meta, allocate the output it describes, run impl;
//! - in-place: run meta, check that `self` can hold the result, run impl on
//!   `self`;
//! - out: run meta, resize `out` as PyTorch does, run impl on `out`.
//!
//! `autogen: name.out` asks for an out variant of a functional operator: its
//! schema is derived (`*, Tensor(a!) out` added, `Tensor(a!)` returned) and
//! its kernel runs the functional operator and copies into `out`.

use std::fmt::Write;

use aten_boxing::schema::FunctionSchema;

use super::names::{function_name, ident};
use super::rust_types::{argument_type, returns_type};

/// Which member of a structured family a function is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Member {
    /// `add.Tensor`.
    Functional,
    /// `add_.Tensor`.
    Inplace,
    /// `add.out`.
    Out,
}

/// The generated kernel of one family member for one backend; returns the
/// kernel's name and code.
pub fn render_member(
    schema: &FunctionSchema,
    member: Member,
    family: &str,
    impl_path: &str,
    key_suffix: &str,
) -> Result<(String, String), String> {
    let base = schema.name().rsplit("::").next().unwrap_or(schema.name());
    let name = super::names::with_suffix(
        &function_name(base, schema.overload_name()),
        &format!("structured_{key_suffix}"),
    );
    let ret = returns_type(schema.returns())?;
    let mut params = Vec::new();
    let mut inputs = Vec::new();
    for a in schema.arguments() {
        let id = ident(a.name());
        params.push(format!("{id}: {}", argument_type(a)?));
        if !(member == Member::Out && a.is_out()) {
            inputs.push(id);
        }
    }
    let meta_inputs = inputs.join(", ");
    let body = match member {
        Member::Functional => format!(
            "let meta = crate::meta::{family}({meta_inputs})?;\n\
             let out = meta.allocate()?;\n\
             {impl_path}({meta_inputs}, &out)?;\n\
             Ok(out)"
        ),
        Member::Inplace => format!(
            "let meta = crate::meta::{family}({meta_inputs})?;\n\
             meta.check_inplace(self_)?;\n\
             {impl_path}({meta_inputs}, self_)?;\n\
             self_.bump_version();\n\
             Ok(self_.clone())"
        ),
        Member::Out => format!(
            "let meta = crate::meta::{family}({meta_inputs})?;\n\
             meta.resize_out(out)?;\n\
             {impl_path}({meta_inputs}, out)?;\n\
             out.bump_version();\n\
             Ok(out.clone())"
        ),
    };
    let code = format!(
        "/// Structured kernel ({member:?}) of `{schema}`.\npub fn {name}({}) -> Result<{ret}> {{\n{body}\n}}\n",
        params.join(", ")
    );
    Ok((name, code))
}

/// The schema text of the `autogen` out variant of a functional schema with
/// one tensor return, or why there is none.
pub fn autogen_out_schema(
    functional: &FunctionSchema,
    out_overload: &str,
) -> Result<String, String> {
    if functional.returns().len() != 1
        || functional.returns()[0].real_type().to_string() != "Tensor"
    {
        return Err("autogen out variants are generated for single-tensor returns only".into());
    }
    let text = functional.to_string();
    let (head, rest) = text.split_once('(').ok_or("schema without arguments")?;
    let name = head.split('.').next().unwrap_or(head);
    let (args, _returns) = rest.rsplit_once(") -> ").ok_or("schema without returns")?;
    let has_kwarg_marker = functional.arguments().iter().any(|a| a.kwarg_only());
    let mut new_args = args.to_string();
    if !new_args.is_empty() {
        new_args.push_str(", ");
    }
    if !has_kwarg_marker {
        new_args.push_str("*, ");
    }
    new_args.push_str("Tensor(a!) out");
    Ok(format!("{name}.{out_overload}({new_args}) -> Tensor(a!)"))
}

/// The CompositeExplicitAutograd kernel of an `autogen` out variant: run the
/// functional operator, copy the result into `out`.
pub fn render_autogen_kernel(
    functional: &FunctionSchema,
    out_name: &str,
) -> Result<(String, String), String> {
    let base = functional
        .name()
        .rsplit("::")
        .next()
        .unwrap_or(functional.name());
    let functional_fn = function_name(base, functional.overload_name());
    let kernel = format!("{out_name}_autogen");
    let mut params = String::new();
    let mut args = Vec::new();
    for a in functional.arguments() {
        let id = ident(a.name());
        let _ = write!(params, "{id}: {}, ", argument_type(a)?);
        args.push(id);
    }
    let code = format!(
        "/// `autogen` out variant of `{functional}`.\n\
         pub fn {kernel}({params}out: &Tensor) -> Result<Tensor> {{\n\
             let result = ops::{}()?.call(({}))?;\n\
             crate::structured::copy_to_out(&result, out)?;\n\
             Ok(out.clone())\n\
         }}\n",
        super::names::with_suffix(&functional_fn, "op"),
        args.iter().map(|a| format!("{a},")).collect::<String>()
    );
    Ok((kernel, code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derives_out_schemas() {
        let f = FunctionSchema::parse("aten::relu(Tensor self) -> Tensor").unwrap();
        assert_eq!(
            autogen_out_schema(&f, "out").unwrap(),
            "aten::relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"
        );
        let f = FunctionSchema::parse(
            "aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None) -> Tensor",
        )
        .unwrap();
        assert!(autogen_out_schema(&f, "out")
            .unwrap()
            .ends_with("ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)"));
    }
}
