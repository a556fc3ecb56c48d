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
    let args = MemberArgs::new(schema, member)?;
    let core = match backend {
        Backend::Kernel { core, .. } => core,
        Backend::DefaultBackend { .. } => "crate",
    };
    let mut body = args.run_meta(member, core, meta_fn, backend)?;
    let (take, returned) = take_outputs(core, schema.returns().len());
    body.push_str(&take);
    match backend {
        Backend::Kernel { .. } => {
            let finished: Vec<String> = returned
                .iter()
                .map(|r| format!("set_output.finish({r})"))
                .collect();
            let _ = write!(body, "Ok({})", single_or_tuple(&finished));
        }
        Backend::DefaultBackend { out_fn } => {
            if member == Member::Out {
                return Err("the default backend serves functional and in-place members".into());
            }
            let outputs: Vec<String> = returned.iter().map(|r| format!("&{r}")).collect();
            let _ = write!(
                body,
                "ops::{}()?.call(({}, {}))",
                super::names::with_suffix(out_fn, "op"),
                args.inputs.join(", "),
                outputs.join(", ")
            );
        }
    }
    let code = format!(
        "/// Structured kernel ({member:?}, {suffix}) of `{schema}`.\n\
         pub fn {name}({}) -> Result<{ret}> {{\n{body}\n}}\n",
        args.params.join(", ")
    );
    Ok((name, code))
}

/// The arguments of one family member, as its kernel takes them and as it
/// passes them on.
struct MemberArgs {
    /// `name: Type`, in schema order.
    params: Vec<String>,
    /// The inputs (every argument, less an out member's out arguments).
    inputs: Vec<String>,
    /// The inputs as the meta function and the impl take them: an owned
    /// argument (`Tensor?[]` arrives as a `Vec`) is lent to both.
    lent: Vec<String>,
    /// An out member's out arguments.
    out_args: Vec<String>,
}

impl MemberArgs {
    /// Sorts the arguments of `member`'s schema.
    fn new(schema: &FunctionSchema, member: Member) -> Result<MemberArgs, String> {
        let mut args = MemberArgs {
            params: Vec::new(),
            inputs: Vec::new(),
            lent: Vec::new(),
            out_args: Vec::new(),
        };
        for a in schema.arguments() {
            let id = ident(a.name());
            let ty = argument_type(a)?;
            if member == Member::Out && a.is_out() {
                args.out_args.push(id);
            } else {
                args.lent.push(if ty.starts_with("Vec<") {
                    format!("&{id}")
                } else {
                    id.clone()
                });
                args.inputs.push(id);
            }
            args.params.push(format!("{}: {ty}", ident(a.name())));
        }
        Ok(args)
    }

    /// The `SetOutput` variant of `member`: allocate, check `self`, or
    /// resize and check the out arguments.
    fn set_output(&self, member: Member) -> Result<String, String> {
        Ok(match member {
            Member::Functional => "Functional".to_string(),
            Member::Inplace => format!(
                "Inplace({})",
                self.inputs
                    .first()
                    .ok_or("in-place function without arguments")?
            ),
            Member::Out if self.out_args.is_empty() => {
                return Err("structured out function without an out argument".into())
            }
            Member::Out => "Out(&outs)".to_string(),
        })
    }

    /// The body's start: the meta function, then the backend's impl if it
    /// has one.
    fn run_meta(
        &self,
        member: Member,
        core: &str,
        meta_fn: &str,
        backend: Backend<'_>,
    ) -> Result<String, String> {
        let set_output = self.set_output(member)?;
        let outs = if self.out_args.is_empty() {
            String::new()
        } else {
            format!("let outs = [{}];\n", self.out_args.join(", "))
        };
        let meta_inputs = self.lent.join(", ");
        let impl_path = match backend {
            Backend::Kernel { impl_path, .. } => impl_path,
            Backend::DefaultBackend { .. } => None,
        };
        let binding = if impl_path.is_some() {
            "mut meta"
        } else {
            "meta"
        };
        let mut body = format!(
            "{outs}let set_output = {core}::structured::SetOutput::{set_output};\n\
             let {binding} = {core}::meta::{meta_fn}(set_output, {meta_inputs})?;\n"
        );
        if let Some(path) = impl_path {
            let _ = writeln!(body, "{path}(&mut meta, {meta_inputs})?;");
        }
        Ok(body)
    }
}

/// The statement that takes the outputs out of the structured state, and
/// their names: one tensor, or one per return.
fn take_outputs(core: &str, nret: usize) -> (String, Vec<String>) {
    if nret == 1 {
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
    }
}

/// The value returned for `values`: the one value, or a tuple of them.
fn single_or_tuple(values: &[String]) -> String {
    if values.len() == 1 {
        values.concat()
    } else {
        format!("({})", values.join(", "))
    }
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
        let _ = write!(body, "Ok({})", single_or_tuple(&cloned));
    }
    let code = format!(
        "/// `autogen` variant `{derived}` of `{source}`.\n\
         pub fn {kernel}({}) -> Result<{}> {{\n{body}\n}}\n",
        params.join(", "),
        returns_type(derived.returns())?
    );
    Ok((kernel.to_string(), code))
}
