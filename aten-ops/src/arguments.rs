//! Binding a call's positional and keyword arguments to a schema: PyTorch's
//! `createStackForSchema`, which `torch.ops` runs for every call from
//! Python, with its error messages (each a schema-match error that overload
//! resolution collects), and its one implicit conversion of a Python number
//! into a tensor for the operators that allow it.

use aten_boxing::normalize::{default_to_ivalue, type_mismatch, value_matches_type};
use aten_boxing::schema::{FunctionSchema, Type};
use aten_boxing::{IValue, Stack};
use c10_core::{Error, Result, TensorBase};

/// A call's keyword arguments: names and values, in the caller's order.
pub type Kwargs<'a> = &'a [(&'a str, IValue)];

/// `createStackForSchema`: the full argument list of `schema` from `args`
/// and `kwargs`, defaults filled in, each value checked against its
/// argument's type (a Python `int` passed for a `float` becomes a float, as
/// the binding converts it). Pushed onto `stack`.
#[doc(alias = "createStackForSchema")]
pub fn bind_arguments(
    schema: &FunctionSchema,
    args: &[IValue],
    kwargs: Kwargs<'_>,
    stack: &mut Stack,
) -> Result<()> {
    let arguments = schema.arguments();
    let given = args.len() + kwargs.len();
    if given > arguments.len() {
        return Err(Error::runtime(format!(
            "{}() expected at most {} argument(s) but received {given} argument(s). Declaration: {schema}",
            schema.name(),
            arguments.len(),
        )));
    }
    let base = stack.len();
    let result = (|| {
        for (pos, value) in args.iter().enumerate() {
            let argument = &arguments[pos];
            if argument.kwarg_only() {
                return Err(Error::runtime(format!(
                    "{}() takes {pos} positional argument(s) but {} was/were given.  Declaration: {schema}",
                    schema.name(),
                    args.len()
                )));
            }
            stack.push(coerce(schema, pos, value)?);
        }
        let mut consumed = 0;
        for (pos, argument) in arguments.iter().enumerate().skip(args.len()) {
            if let Some((_, value)) = kwargs.iter().find(|(k, _)| *k == argument.name()) {
                stack.push(coerce(schema, pos, value)?);
                consumed += 1;
            } else if let Some(default) = argument.default_value() {
                stack.push(default_to_ivalue(default)?);
            } else {
                return Err(Error::runtime(format!(
                    "{}() is missing value for argument '{}'. Declaration: {schema}",
                    schema.name(),
                    argument.name()
                )));
            }
        }
        if consumed != kwargs.len() {
            return Err(kwargs_error(schema, kwargs));
        }
        Ok(())
    })();
    if result.is_err() {
        stack.truncate(base);
    }
    result
}

/// Whether [`bind_arguments`] would succeed, without building its error
/// (overload resolution asks this of each overload in turn).
pub fn accepts(schema: &FunctionSchema, args: &[IValue], kwargs: Kwargs<'_>) -> bool {
    let arguments = schema.arguments();
    if args.len() + kwargs.len() > arguments.len() {
        return false;
    }
    let numbers = allows_numbers_as_tensors(schema);
    let fits = |pos: usize, value: &IValue| {
        let argument = &arguments[pos];
        value_matches_type(value, argument.ty())
            || (matches!(value, IValue::Int(_)) && wants_float(argument.ty()))
            || (numbers && wants_tensor(argument.ty()) && is_number(value))
    };
    if !args
        .iter()
        .enumerate()
        .all(|(pos, v)| !arguments[pos].kwarg_only() && fits(pos, v))
    {
        return false;
    }
    let mut consumed = 0;
    for (pos, argument) in arguments.iter().enumerate().skip(args.len()) {
        match kwargs.iter().find(|(k, _)| *k == argument.name()) {
            Some((_, value)) if fits(pos, value) => consumed += 1,
            Some(_) => return false,
            None if argument.default_value().is_some() => {}
            None => return false,
        }
    }
    consumed == kwargs.len()
}

/// The `aten` operators whose `Tensor` arguments take Python numbers
/// (`torch::should_allow_numbers_as_tensors`): a number there becomes a
/// wrapped-number tensor, which type promotion treats as the number.
const NUMBERS_AS_TENSORS: &[&str] = &[
    "add",
    "add_",
    "add_out",
    "div",
    "div_",
    "div_out",
    "divide",
    "divide_",
    "divide_out",
    "mul",
    "mul_",
    "mul_out",
    "multiply",
    "multiply_",
    "multiply_out",
    "sub",
    "sub_",
    "sub_out",
    "subtract",
    "subtract_",
    "subtract_out",
    "true_divide",
    "true_divide_",
    "true_divide_out",
    "to",
    "_to_copy",
    "copy_",
    "copy",
    "floor_divide",
    "floor_divide_",
    "floor_divide_out",
    "_conj",
];

/// Whether the operator's `Tensor` arguments take Python numbers
/// (`opAllowsNumbersAsTensors`: the `prims` operators and a few `aten`
/// ones).
#[doc(alias = "opAllowsNumbersAsTensors")]
pub fn allows_numbers_as_tensors(schema: &FunctionSchema) -> bool {
    let name = schema.operator_name();
    match name.namespace() {
        Some("prims") | Some("nvprims") => true,
        Some("aten") => NUMBERS_AS_TENSORS.contains(&name.base_name()),
        _ => false,
    }
}

/// Whether `ty` is `Tensor` or `Tensor?`.
fn wants_tensor(ty: &Type) -> bool {
    match ty {
        Type::Tensor => true,
        Type::Optional(inner) => **inner == Type::Tensor,
        _ => false,
    }
}

/// A Python number as the wrapped-number tensor `toIValue` makes of it
/// (`scalar_to_tensor`, then `set_wrapped_number(true)`): int64, float64,
/// bool or complex128, 0-dim, on the CPU.
fn wrapped_number(value: &IValue) -> Option<Result<IValue>> {
    let tensor = match value {
        IValue::Int(i) | IValue::SymInt(i) => TensorBase::wrapped_number(*i),
        IValue::Double(d) => TensorBase::wrapped_number(d.get()),
        IValue::Bool(b) => TensorBase::wrapped_number(b.get()),
        IValue::ComplexDouble(c) => TensorBase::wrapped_number(**c),
        _ => return None,
    };
    Some(tensor.map(IValue::Tensor))
}

/// Whether a Python `int` converts to this argument's type.
fn wants_float(ty: &Type) -> bool {
    match ty {
        Type::Float => true,
        Type::Optional(inner) => **inner == Type::Float,
        _ => false,
    }
}

/// The value for argument `pos` of `schema`, converted where the binding
/// converts (an int for a float; a number for a tensor of an operator that
/// takes numbers as tensors), or the binding's type-mismatch error.
pub fn coerce(schema: &FunctionSchema, pos: usize, value: &IValue) -> Result<IValue> {
    let argument = &schema.arguments()[pos];
    if value_matches_type(value, argument.ty()) {
        return Ok(value.clone());
    }
    match value {
        IValue::Int(i) if wants_float(argument.ty()) => Ok(IValue::double(*i as f64)),
        _ if wants_tensor(argument.ty()) && allows_numbers_as_tensors(schema) => {
            wrapped_number(value)
                .unwrap_or_else(|| Err(type_mismatch(schema, argument, value, Some(pos))))
        }
        _ => Err(type_mismatch(schema, argument, value, Some(pos))),
    }
}

/// Whether `value` is a Python number.
fn is_number(value: &IValue) -> bool {
    matches!(
        value,
        IValue::Int(_)
            | IValue::SymInt(_)
            | IValue::Double(_)
            | IValue::Bool(_)
            | IValue::ComplexDouble(_)
    )
}

/// `findErrorInKwargs`: an unknown keyword, or one that repeats a
/// positional argument.
#[doc(alias = "findErrorInKwargs")]
fn kwargs_error(schema: &FunctionSchema, kwargs: Kwargs<'_>) -> Error {
    let arguments = schema.arguments();
    for (name, _) in kwargs {
        if !arguments.iter().any(|a| a.name() == *name) {
            return Error::runtime(format!(
                "Unknown keyword argument '{name}' for operator '{}'. Schema: {schema}",
                schema.name()
            ));
        }
    }
    for argument in arguments {
        if kwargs.iter().any(|(k, _)| *k == argument.name()) {
            return Error::runtime(format!(
                "Argument '{}' specified both as positional and keyword argument. Schema: {schema}",
                argument.name()
            ));
        }
    }
    Error::internal("keyword arguments were not consumed but none is in error")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> FunctionSchema {
        FunctionSchema::parse("ns::f(int a, float b=1.5, *, bool flag=False) -> int").unwrap()
    }

    #[test]
    fn binds_positional_keywords_and_defaults() {
        let mut stack = Stack::new();
        bind_arguments(
            &schema(),
            &[IValue::Int(1), IValue::Int(2)],
            &[("flag", IValue::bool(true))],
            &mut stack,
        )
        .unwrap();
        assert_eq!(
            stack,
            vec![IValue::Int(1), IValue::double(2.0), IValue::bool(true)]
        );
    }

    #[test]
    fn reports_the_bindings_errors_and_leaves_the_stack() {
        let s = schema();
        let mut stack = vec![IValue::Int(7)];
        let err = |args: &[IValue], kwargs: Kwargs<'_>, stack: &mut Stack| {
            bind_arguments(&s, args, kwargs, stack)
                .unwrap_err()
                .message()
                .to_string()
        };
        assert!(err(&vec![IValue::Int(1); 4], &[], &mut stack)
            .starts_with("ns::f() expected at most 3 argument(s) but received 4 argument(s)."));
        assert!(err(
            &[IValue::Int(1), IValue::double(1.0), IValue::bool(true)],
            &[],
            &mut stack
        )
        .starts_with("ns::f() takes 2 positional argument(s) but 3 was/were given.  Declaration:"));
        assert!(err(&[], &[], &mut stack)
            .starts_with("ns::f() is missing value for argument 'a'. Declaration: ns::f("));
        assert!(err(&[IValue::Int(1)], &[("g", IValue::None)], &mut stack)
            .starts_with("Unknown keyword argument 'g' for operator 'ns::f'. Schema: "));
        assert!(err(&[IValue::Int(1)], &[("a", IValue::Int(2))], &mut stack)
            .starts_with("Argument 'a' specified both as positional and keyword argument."));
        assert!(err(&[IValue::bool(true)], &[], &mut stack).starts_with(
            "ns::f() Expected a value of type 'int' for argument 'a' but instead found type 'bool'.\nPosition: 0\n"
        ));
        assert_eq!(stack, vec![IValue::Int(7)]);
    }

    #[test]
    fn accepts_agrees_with_binding() {
        let s = schema();
        type Case = (Vec<IValue>, Vec<(&'static str, IValue)>);
        let cases: Vec<Case> = vec![
            (vec![IValue::Int(1)], vec![]),
            (
                vec![IValue::Int(1), IValue::Int(2)],
                vec![("flag", IValue::bool(true))],
            ),
            (vec![IValue::Int(1); 4], vec![]),
            (
                vec![IValue::Int(1), IValue::double(1.0), IValue::bool(true)],
                vec![],
            ),
            (vec![], vec![]),
            (vec![IValue::Int(1)], vec![("g", IValue::None)]),
            (vec![IValue::Int(1)], vec![("a", IValue::Int(2))]),
            (vec![IValue::bool(true)], vec![]),
            (vec![], vec![("a", IValue::Int(2)), ("b", IValue::Int(3))]),
        ];
        for (args, kwargs) in cases {
            let bound = bind_arguments(&s, &args, &kwargs, &mut Stack::new()).is_ok();
            assert_eq!(accepts(&s, &args, &kwargs), bound, "{args:?} {kwargs:?}");
        }
    }
}
