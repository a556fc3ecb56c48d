//! The schemas of `autogen:` variants, derived as torchgen derives them
//! (`native_function_generation.py`):
//!
//! - an out variant (`name.out`, `name.X_out`) of an in-place function
//!   (`self_to_out_signature`): `self` loses its annotation and an `out`
//!   argument takes `self`'s type and annotation; the returns stay;
//! - of a functional function (`functional_to_out_signature`): the
//!   arguments lose their annotations and the `TensorOptions` block
//!   (`dtype`, `layout`, `device`, `pin_memory`), and one out argument per
//!   tensor-like return is added (`out`, or `out0`, `out1`, ... by return
//!   position), annotated with the first unused alias sets;
//! - of a mutable function (`mutable_to_out_signature`): the same out
//!   arguments, the other arguments as they are;
//! - in both of the last two, the returns are the out arguments when every
//!   return is a plain `Tensor`, and only the non-tensor returns otherwise
//!   (`Tensor[]` outs return `()`);
//! - a functional variant of an in-place or mutable function
//!   (`signature(keep_return_names=True)`): every argument loses its
//!   annotation (and the `TensorOptions` block), the returns keep their
//!   names and lose their annotations, and each written argument (`self`,
//!   then the positional ones after it) that no return aliases is returned
//!   as `NAME_out`.

use aten_boxing::schema::{AliasInfo, Argument, FunctionSchema, Type};

/// Whether `overload` names an out variant.
pub(crate) fn is_out_name(overload: &str) -> bool {
    overload == "out" || overload.ends_with("_out")
}

/// Whether `schema` is an in-place function (`zero_`, `fill_.Scalar`, and
/// the augmented-assignment dunders such as `__ilshift__`).
pub(crate) fn is_inplace(schema: &FunctionSchema) -> bool {
    /// torchgen's `AUGMENTED_ASSIGNMENT_NAMES`.
    const AUGMENTED: &[&str] = &[
        "add", "sub", "mul", "div", "mod", "pow", "lshift", "rshift", "and", "xor", "or",
    ];
    let base = schema.name().rsplit("::").next().unwrap_or(schema.name());
    match base.strip_prefix("__").and_then(|b| b.strip_suffix("__")) {
        Some(dunder) => dunder
            .strip_prefix('i')
            .is_some_and(|op| AUGMENTED.contains(&op)),
        None => base.ends_with('_'),
    }
}

/// `arg` without its alias annotation (and, with `name`, renamed).
fn plain(arg: &Argument, name: Option<&str>) -> Argument {
    Argument::new(
        name.unwrap_or(arg.name()),
        arg.real_type().clone(),
        arg.n(),
        arg.default_value().cloned(),
        arg.kwarg_only(),
        None,
    )
}

/// The text of `ty` annotated as written to alias set `set`
/// (`Tensor(a!)`, `Tensor(a!)[]`, `Tensor(a!)?`).
fn written(ty: &Type, set: &str) -> Result<String, String> {
    match ty {
        Type::Tensor => Ok(format!("Tensor({set}!)")),
        Type::Optional(inner) if **inner == Type::Tensor => Ok(format!("Tensor({set}!)?")),
        Type::List(inner) if **inner == Type::Tensor => Ok(format!("Tensor({set}!)[]")),
        other => Err(format!("no out argument for a return of type {other}")),
    }
}

/// The alias sets an annotation names (its own and its contained types').
fn alias_sets(info: &AliasInfo, out: &mut Vec<String>) {
    out.extend(info.before_sets().iter().map(|s| s.as_str().to_string()));
    for inner in info.contained_types() {
        alias_sets(inner, out);
    }
}

/// The first written alias set of an annotation, with its list element's.
fn written_set(info: Option<&AliasInfo>) -> Option<String> {
    let info = info?;
    if let Some(set) = info.before_sets().first().filter(|_| info.is_write()) {
        return Some(set.as_str().to_string());
    }
    info.contained_types()
        .iter()
        .find_map(|inner| written_set(Some(inner)))
}

/// Whether a type is tensor-like (`Tensor`, `Tensor?`, `Tensor[]`, ...).
fn tensor_like(ty: &Type) -> bool {
    match ty {
        Type::Tensor => true,
        Type::Optional(inner) => tensor_like(inner),
        Type::List(inner) => tensor_like(inner),
        _ => false,
    }
}

/// The index of the `TensorOptions` block among the keyword-only
/// arguments: four consecutive ones named `dtype`, `layout`, `device`,
/// `pin_memory`.
fn tensor_options_at(kwargs: &[&Argument]) -> Option<usize> {
    const NAMES: [&str; 4] = ["dtype", "layout", "device", "pin_memory"];
    (0..kwargs.len().saturating_sub(3))
        .find(|&i| NAMES.iter().zip(&kwargs[i..]).all(|(n, a)| a.name() == *n))
}

/// `arguments.signature()`: annotations stripped, the `TensorOptions` block
/// and out arguments dropped.
fn signature_arguments(source: &FunctionSchema) -> Vec<Argument> {
    let kwargs: Vec<&Argument> = source
        .arguments()
        .iter()
        .filter(|a| a.kwarg_only() && !a.is_out())
        .collect();
    let options = tensor_options_at(&kwargs).map(|i| i..i + 4);
    let mut k = 0;
    let mut args = Vec::new();
    for a in source.arguments() {
        if a.is_out() {
            continue;
        }
        if a.kwarg_only() {
            let dropped = options.as_ref().is_some_and(|r| r.contains(&k));
            k += 1;
            if dropped {
                continue;
            }
        }
        args.push(plain(a, None));
    }
    args
}

/// One printed argument and whether it is keyword-only.
type Item = (String, bool);

fn item(a: &Argument) -> Item {
    (a.to_string(), a.kwarg_only())
}

/// Prints a schema from its parts and returns its canonical text.
fn print(name: &str, args: &[Item], returns: &[String]) -> Result<String, String> {
    let mut items = Vec::new();
    let mut star = false;
    for (text, kwarg_only) in args {
        if *kwarg_only && !star {
            items.push("*".to_string());
            star = true;
        }
        items.push(text.clone());
    }
    let text = format!("{name}({}) -> ({})", items.join(", "), returns.join(", "));
    FunctionSchema::parse(&text)
        .map(|s| s.to_string())
        .map_err(|e| format!("derived schema `{text}` does not parse: {e}"))
}

/// `generate_out_args_from_schema`: the out arguments for `source`'s
/// returns, and the returns of the out variant.
fn out_arguments(source: &FunctionSchema) -> Result<(Vec<Item>, Vec<String>), String> {
    let returns = source.returns();
    if !returns.iter().any(|r| tensor_like(r.real_type())) {
        return Err("an out variant needs a tensor-like return".into());
    }
    let mut used = Vec::new();
    for a in source.arguments() {
        if let Some(info) = a.alias_info() {
            alias_sets(info, &mut used);
        }
    }
    let valid: Vec<String> = ('a'..='z')
        .map(|c| c.to_string())
        .filter(|c| !used.contains(c))
        .collect();
    let all_tensors = returns.iter().all(|r| *r.real_type() == Type::Tensor);
    let mut outs = Vec::new();
    let mut new_returns = Vec::new();
    for (i, r) in returns.iter().enumerate() {
        if tensor_like(r.real_type()) {
            let set = valid.get(i).ok_or("too many returns for an out variant")?;
            let name = if returns.len() == 1 {
                "out".to_string()
            } else {
                format!("out{i}")
            };
            let ty = written(r.real_type(), set)?;
            outs.push((format!("{ty} {name}"), true));
            if all_tensors {
                new_returns.push(ty);
            }
        } else {
            new_returns.push(r.to_string());
        }
    }
    Ok((outs, new_returns))
}

/// The schema text of the function `autogen: name.overload` asks of
/// `source` (`name` with its namespace).
pub fn autogen_schema(
    source: &FunctionSchema,
    name: &str,
    overload: &str,
) -> Result<String, String> {
    if source.arguments().iter().any(Argument::is_out) {
        return Err("autogen variants come from functions without out arguments".into());
    }
    let full = if overload.is_empty() {
        name.to_string()
    } else {
        format!("{name}.{overload}")
    };
    let inplace = is_inplace(source);
    let mutable = !inplace && source.arguments().iter().any(Argument::is_write);
    if is_out_name(overload) {
        if inplace {
            let self_arg = source
                .arguments()
                .iter()
                .find(|a| a.name() == "self" && !a.kwarg_only())
                .ok_or("an in-place function without `self`")?;
            let mut args: Vec<Item> = source
                .arguments()
                .iter()
                .map(|a| {
                    if std::ptr::eq(a, self_arg) {
                        item(&plain(a, None))
                    } else {
                        item(a)
                    }
                })
                .collect();
            let out = Argument::new(
                "out",
                self_arg.real_type().clone(),
                self_arg.n(),
                None,
                true,
                self_arg.alias_info().cloned(),
            );
            args.push(item(&out));
            let returns: Vec<String> = source.returns().iter().map(Argument::to_string).collect();
            return print(&full, &args, &returns);
        }
        let (outs, returns) = out_arguments(source)?;
        let mut args: Vec<Item> = if mutable {
            source.arguments().iter().map(item).collect()
        } else {
            signature_arguments(source).iter().map(item).collect()
        };
        args.extend(outs);
        return print(&full, &args, &returns);
    }
    if !inplace && !mutable {
        return Err(
            "a functional autogen variant comes from an in-place or mutable function".into(),
        );
    }
    let args: Vec<Item> = signature_arguments(source).iter().map(item).collect();
    let returned: Vec<Option<String>> = source
        .returns()
        .iter()
        .map(|r| written_set(r.alias_info()))
        .collect();
    let mut returns: Vec<String> = source
        .returns()
        .iter()
        .map(|r| plain(r, None).to_string())
        .collect();
    let positional: Vec<&Argument> = source
        .arguments()
        .iter()
        .filter(|a| !a.kwarg_only())
        .collect();
    let self_at = positional.iter().position(|a| a.name() == "self");
    let candidates = match self_at {
        Some(i) => positional[i..].to_vec(),
        None => positional,
    };
    for a in candidates {
        let Some(set) = written_set(a.alias_info()) else {
            continue;
        };
        if returned.iter().any(|r| r.as_deref() == Some(&set)) {
            continue;
        }
        returns.push(format!("{} {}_out", a.real_type(), a.name()));
    }
    print(&full, &args, &returns)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn derive(source: &str, name: &str, overload: &str) -> String {
        autogen_schema(&FunctionSchema::parse(source).unwrap(), name, overload).unwrap()
    }

    #[test]
    fn out_variants_of_functional_in_place_and_mutable_functions() {
        assert_eq!(
            derive(
                "aten::relu_(Tensor(a!) self) -> Tensor(a!)",
                "aten::relu",
                "out"
            ),
            "aten::relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"
        );
        assert_eq!(
            derive(
                "aten::__ilshift__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
                "aten::__lshift__",
                "Scalar_out"
            ),
            "aten::__lshift__.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)"
        );
        assert_eq!(
            derive(
                "aten::empty_strided(SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
                "aten::empty_strided",
                "out"
            ),
            "aten::empty_strided.out(SymInt[] size, SymInt[] stride, *, Tensor(a!) out) -> Tensor(a!)"
        );
        assert_eq!(
            derive(
                "aten::full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
                "aten::full_like",
                "out"
            ),
            "aten::full_like.out(Tensor self, Scalar fill_value, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)"
        );
        assert_eq!(
            derive(
                "aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",
                "aten::native_dropout",
                "out"
            ),
            "aten::native_dropout.out(Tensor input, float p, bool? train, *, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))"
        );
        assert_eq!(
            derive(
                "aten::unsafe_split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]",
                "aten::unsafe_split",
                "Tensor_out"
            ),
            "aten::unsafe_split.Tensor_out(Tensor self, SymInt split_size, int dim=0, *, Tensor(a!)[] out) -> ()"
        );
        assert_eq!(
            derive(
                "aten::_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
                "aten::_foreach_add",
                "Scalar_out"
            ),
            "aten::_foreach_add.Scalar_out(Tensor[] self, Scalar scalar, *, Tensor(a!)[] out) -> ()"
        );
        assert_eq!(
            derive(
                "aten::_fused_moving_avg_obs_fq_helper(Tensor self, Tensor observer_on, Tensor fake_quant_on, Tensor(a!) running_min, Tensor(b!) running_max, Tensor(c!) scale, Tensor(d!) zero_point, float averaging_const, int quant_min, int quant_max, int ch_axis, bool per_row_fake_quant=False, bool symmetric_quant=False) -> (Tensor output, Tensor mask)",
                "aten::_fused_moving_avg_obs_fq_helper",
                "out"
            ),
            "aten::_fused_moving_avg_obs_fq_helper.out(Tensor self, Tensor observer_on, Tensor fake_quant_on, Tensor(a!) running_min, Tensor(b!) running_max, Tensor(c!) scale, Tensor(d!) zero_point, float averaging_const, int quant_min, int quant_max, int ch_axis, bool per_row_fake_quant=False, bool symmetric_quant=False, *, Tensor(e!) out0, Tensor(f!) out1) -> (Tensor(e!), Tensor(f!))"
        );
    }

    #[test]
    fn functional_variants_return_what_was_written() {
        assert_eq!(
            derive(
                "aten::zero_(Tensor(a!) self) -> Tensor(a!)",
                "aten::zero",
                ""
            ),
            "aten::zero(Tensor self) -> Tensor"
        );
        assert_eq!(
            derive(
                "aten::_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
                "aten::_native_batch_norm_legit_functional",
                ""
            ),
            "aten::_native_batch_norm_legit_functional(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor, Tensor running_mean_out, Tensor running_var_out)"
        );
        assert_eq!(
            derive(
                "aten::_fused_adam_(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor[] state_steps, *, float lr) -> ()",
                "aten::_fused_adam",
                ""
            ),
            "aten::_fused_adam(Tensor[] self, Tensor[] grads, Tensor[] state_steps, *, float lr) -> (Tensor[] self_out, Tensor[] grads_out)"
        );
    }

    #[test]
    fn what_cannot_be_derived_is_an_error() {
        let f = FunctionSchema::parse("aten::f(Tensor x) -> int").unwrap();
        assert!(autogen_schema(&f, "aten::f", "out").is_err());
        assert!(autogen_schema(&f, "aten::g", "").is_err());
    }
}
