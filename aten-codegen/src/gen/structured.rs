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
//! schema is derived (`super::autogen`) and its kernel runs the functional
//! operator and copies into `out`.

use std::fmt::Write;

use aten_boxing::schema::FunctionSchema;

use super::autogen::is_inplace;
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
    // The inputs as the meta function and the impl take them: an owned
    // argument (`Tensor?[]` arrives as a `Vec`) is lent to both.
    let mut lent = Vec::new();
    let mut out_args = Vec::new();
    for a in schema.arguments() {
        let id = ident(a.name());
        let ty = argument_type(a)?;
        if member == Member::Out && a.is_out() {
            out_args.push(id);
        } else {
            lent.push(if ty.starts_with("Vec<") {
                format!("&{id}")
            } else {
                id.clone()
            });
            inputs.push(id);
        }
        params.push(format!("{}: {ty}", ident(a.name())));
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
            format!("let output = {core}::structured::StructuredMeta::into_output(meta)?;\n"),
            vec!["output".to_string()],
        )
    } else {
        let names: Vec<String> = (0..nret).map(|i| format!("output{i}")).collect();
        (
            format!("let [{}] = meta.into_outputs();\n", names.join(", ")),
            names,
        )
    };
    let meta_inputs = lent.join(", ");
    let call_inputs = inputs.join(", ");
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
                "{take}ops::{}()?.call(({call_inputs}, {}))",
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

/// The CompositeExplicitAutograd kernel `kernel` of the `autogen` function
/// `derived` of `source`: run the source (an in-place one on a clone of
/// `self`), then return the result, or copy each result into its out
/// argument (PyTorch's `resize_output`, then `copy_`) and return those.
pub fn render_autogen_kernel(
    source: &FunctionSchema,
    derived: &FunctionSchema,
    kernel: &str,
) -> Result<(String, String), String> {
    let base = source.name().rsplit("::").next().unwrap_or(source.name());
    let source_fn = function_name(base, source.overload_name());
    let mut params = Vec::new();
    let mut outs = Vec::new();
    for a in derived.arguments() {
        let id = ident(a.name());
        params.push(format!("{id}: {}", argument_type(a)?));
        if a.is_out() {
            outs.push(id);
        }
    }
    // The out variant of a factory drops the `TensorOptions` arguments: the
    // source runs with the out tensor's (PyTorch's `out.options()`).
    let first_out = outs.first().cloned();
    let args: Vec<String> = source
        .arguments()
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let id = ident(a.name());
            if i == 0 && is_inplace(source) {
                return Ok("&result".to_string());
            }
            if derived.arguments().iter().any(|d| d.name() == a.name()) {
                return Ok(id);
            }
            let out = first_out
                .as_deref()
                .ok_or_else(|| format!("argument `{}` has no value", a.name()))?;
            match a.name() {
                "dtype" => Ok(format!("{out}.dtype()")),
                "layout" => Ok("Some(Layout::Strided)".to_string()),
                "device" => Ok(format!("{out}.device()")),
                "pin_memory" => Ok("None::<bool>".to_string()),
                other => Err(format!("argument `{other}` has no value")),
            }
        })
        .collect::<Result<_, String>>()?;
    let call = format!(
        "ops::{}()?.call(({}))?",
        super::names::with_suffix(&source_fn, "op"),
        args.iter().map(|a| format!("{a},")).collect::<String>()
    );
    let mut body = String::new();
    let results: Vec<String> = if is_inplace(source) {
        let first = source
            .arguments()
            .first()
            .ok_or("in-place function without arguments")?;
        let _ = writeln!(
            body,
            "let result = ops::clone({})?;\n{call};",
            ident(first.name())
        );
        vec!["result".to_string()]
    } else if outs.len() > 1 || source.returns().len() > 1 {
        let names: Vec<String> = (0..source.returns().len())
            .map(|i| format!("result{i}"))
            .collect();
        let _ = writeln!(body, "let ({}) = {call};", names.join(", "));
        names
    } else {
        let _ = writeln!(body, "let result = {call};");
        vec!["result".to_string()]
    };
    if outs.is_empty() {
        let _ = write!(body, "Ok(result)");
    } else {
        if outs.len() != results.len() {
            return Err("out arguments and returns differ in number".into());
        }
        for (r, o) in results.iter().zip(&outs) {
            let _ = writeln!(body, "crate::structured::copy_to_out(&{r}, {o})?;");
        }
        let cloned: Vec<String> = outs.iter().map(|o| format!("{o}.clone()")).collect();
        let value = if cloned.len() == 1 {
            cloned.concat()
        } else {
            format!("({})", cloned.join(", "))
        };
        let _ = write!(body, "Ok({value})");
    }
    let code = format!(
        "/// `autogen` variant `{derived}` of `{source}`.\n\
         pub fn {kernel}({}) -> Result<{}> {{\n{body}\n}}\n",
        params.join(", "),
        returns_type(derived.returns())?
    );
    Ok((kernel.to_string(), code))
}
