//! Structured kernels and `autogen` out variants.
//!
//! A structured family is an out function marked `structured: True` and the
//! functional and in-place functions whose `structured_delegate` names it.
//! The project writes two things per family, as PyTorch does: a *meta*
//! function in `aten-core` (`aten_core::meta::<functional name>(set_output,
//! inputs)`, returning the structured state: the built `TensorIterator` of
//! a `TensorIteratorBase` family) and, per backend, an *impl* (the out
//! function's `dispatch:` kernel, `(&mut state, inputs) -> Result<()>`).
//! The generator writes the registered kernels around them:
//!
//! - per backend of the out function's `dispatch:`, and for Meta (whose
//!   kernels are the meta functions alone), the functional member (the
//!   meta function allocates the output), the in-place member (it checks
//!   `self`) and the out member (it resizes and checks `out`), each
//!   running the meta function, then the backend's impl;
//! - `CompositeExplicitAutogradNonFunctional` kernels of the functional and
//!   in-place members: the meta function, then the out operator through the
//!   dispatcher (PyTorch's default-backend kernels of structured families).
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

/// Where a structured wrapper is generated and what it runs after the
/// meta function.
#[derive(Copy, Clone, Debug)]
pub enum Backend<'a> {
    /// A backend's kernel in the crate whose path to `aten-core` is
    /// `core`, running the impl at `impl_path` (none: the Meta backend).
    Kernel {
        /// `crate` inside `aten-core`, `aten_core` elsewhere.
        core: &'a str,
        /// The impl, if the backend has one.
        impl_path: Option<&'a str>,
    },
    /// The `CompositeExplicitAutogradNonFunctional` kernel (in
    /// `aten-core`): the out operator's typed handle in `ops` runs after
    /// the meta function.
    DefaultBackend {
        /// The typed API name of the family's out operator.
        out_fn: &'a str,
    },
}

/// The generated kernel of one family member; returns the kernel's name
/// and code. `meta_fn` is the family's meta function, `suffix` names the
/// kernel's backend (`cpu`, `meta`, `default_backend`).
pub fn render_member(
    schema: &FunctionSchema,
    member: Member,
    meta_fn: &str,
    backend: Backend<'_>,
    suffix: &str,
) -> Result<(String, String), String> {
    let base = schema.name().rsplit("::").next().unwrap_or(schema.name());
    let name = super::names::with_suffix(
        &function_name(base, schema.overload_name()),
        &format!("structured_{suffix}"),
    );
    let ret = returns_type(schema.returns())?;
    let mut params = Vec::new();
    let mut inputs = Vec::new();
    let mut out_args = Vec::new();
    for a in schema.arguments() {
        let id = ident(a.name());
        params.push(format!("{id}: {}", argument_type(a)?));
        if member == Member::Out && a.is_out() {
            out_args.push(id);
        } else {
            inputs.push(id);
        }
    }
    let core = match backend {
        Backend::Kernel { core, .. } => core,
        Backend::DefaultBackend { .. } => "crate",
    };
    let set_output = match member {
        Member::Functional => "Functional".to_string(),
        Member::Inplace => format!(
            "Inplace({})",
            inputs
                .first()
                .ok_or("in-place function without arguments")?
        ),
        Member::Out if out_args.is_empty() => {
            return Err("structured out function without an out argument".into())
        }
        Member::Out => "Out(&outs)".to_string(),
    };
    let outs = if out_args.is_empty() {
        String::new()
    } else {
        format!("let outs = [{}];\n", out_args.join(", "))
    };
    let nret = schema.returns().len();
    // The outputs as the member returns them: one tensor, or a tuple.
    let (take, returned) = if nret == 1 {
        (
            format!("let output = {core}::structured::StructuredMeta::into_output(meta);\n"),
            vec!["output".to_string()],
        )
    } else {
        let names: Vec<String> = (0..nret).map(|i| format!("output{i}")).collect();
        (
            format!("let [{}] = meta.into_outputs();\n", names.join(", ")),
            names,
        )
    };
    let meta_inputs = inputs.join(", ");
    let runs_impl = matches!(
        backend,
        Backend::Kernel {
            impl_path: Some(_),
            ..
        }
    );
    let binding = if runs_impl { "mut meta" } else { "meta" };
    let mut body = format!(
        "{outs}let set_output = {core}::structured::SetOutput::{set_output};\n\
         let {binding} = {core}::meta::{meta_fn}(set_output, {meta_inputs})?;\n"
    );
    match backend {
        Backend::Kernel { impl_path, .. } => {
            if let Some(path) = impl_path {
                let _ = writeln!(body, "{path}(&mut meta, {meta_inputs})?;");
            }
            let finished: Vec<String> = returned
                .iter()
                .map(|r| format!("set_output.finish({r})"))
                .collect();
            let value = if nret == 1 {
                finished.concat()
            } else {
                format!("({})", finished.join(", "))
            };
            let _ = write!(body, "{take}Ok({value})");
        }
        Backend::DefaultBackend { out_fn } => {
            if member == Member::Out {
                return Err("the default backend serves functional and in-place members".into());
            }
            let outputs: Vec<String> = returned.iter().map(|r| format!("&{r}")).collect();
            let _ = write!(
                body,
                "{take}ops::{}()?.call(({meta_inputs}, {}))",
                super::names::with_suffix(out_fn, "op"),
                outputs.join(", ")
            );
        }
    }
    let code = format!(
        "/// Structured kernel ({member:?}, {suffix}) of `{schema}`.\n\
         pub fn {name}({}) -> Result<{ret}> {{\n{body}\n}}\n",
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
