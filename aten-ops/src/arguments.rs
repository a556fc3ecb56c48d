//! Binding a call's positional and keyword arguments to a schema: PyTorch's
//! `createStackForSchema`, which `torch.ops` runs for every call from
//! Python, with its error messages (each a schema-match error that overload
//! resolution collects), and its one implicit conversion of a Python number
//! into a tensor for the operators that allow it.

use aten_boxing::normalize::{default_to_ivalue, type_mismatch, value_matches_type};
use aten_boxing::schema::{FunctionSchema, Type};
use aten_boxing::{IValue, Stack};
use std::sync::Arc;

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
    let fits = |pos: usize, value: &IValue| conversion(schema, pos, value).is_some();
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
        IValue::Int(i) => TensorBase::wrapped_number(*i),
        // A symbolic size is guarded on: the tensor holds its value.
        IValue::SymInt(_) => match value.to_int() {
            Ok(i) => TensorBase::wrapped_number(i),
            Err(e) => return Some(Err(e)),
        },
        IValue::Double(d) => TensorBase::wrapped_number(d.get()),
        IValue::Bool(b) => TensorBase::wrapped_number(b.get()),
        IValue::ComplexDouble(c) => TensorBase::wrapped_number(**c),
        _ => return None,
    };
    Some(tensor.map(IValue::Tensor))
}

/// How a value becomes argument `pos` of `schema` in a binding.
enum Conversion {
    /// It has the argument's type.
    Same,
    /// It converts (`python_conversion`) to this value.
    Converted(IValue),
    /// A Python number for a tensor of an operator that takes numbers as
    /// tensors: a wrapped-number tensor.
    WrappedNumber,
}

/// How `value` becomes argument `pos` of `schema`, or `None` when it
/// cannot (a type mismatch).
fn conversion(schema: &FunctionSchema, pos: usize, value: &IValue) -> Option<Conversion> {
    let argument = &schema.arguments()[pos];
    // An untyped list (a Python list) is typed even where it matches.
    if value_matches_type(value, argument.ty()) && !matches!(value, IValue::GenericList(_)) {
        return Some(Conversion::Same);
    }
    let converted = python_conversion(value.clone(), argument.real_type(), argument.n());
    if value_matches_type(&converted, argument.ty()) {
        return Some(Conversion::Converted(converted));
    }
    (wants_tensor(argument.ty()) && allows_numbers_as_tensors(schema) && value.is_number())
        .then_some(Conversion::WrappedNumber)
}

/// The value for argument `pos` of `schema`, converted where the binding
/// converts (see `python_conversion`; a number for a tensor of an
/// operator that takes numbers as tensors), or the binding's type-mismatch
/// error.
pub fn coerce(schema: &FunctionSchema, pos: usize, value: &IValue) -> Result<IValue> {
    let mismatch = || type_mismatch(schema, &schema.arguments()[pos], value, Some(pos));
    match conversion(schema, pos, value) {
        Some(Conversion::Same) => Ok(value.clone()),
        Some(Conversion::Converted(v)) => Ok(v),
        Some(Conversion::WrappedNumber) => wrapped_number(value).unwrap_or_else(|| Err(mismatch())),
        None => Err(mismatch()),
    }
}

/// `value` converted to the schema type `ty` as Python's binding converts
/// it (`toIValue`): an int becomes a float for `float`, one number fills an
/// `int[N]`, `float[N]` or `bool[N]`, ints a `float[]`, an empty list the
/// typed list asked for, tensors and `None`s a `Tensor?[]`. Anything else
/// is returned as it is, for the type check to accept or reject.
fn python_conversion(value: IValue, ty: &Type, n: Option<i32>) -> IValue {
    match ty {
        Type::Optional(inner) if !value.is_none() => python_conversion(value, inner, n),
        Type::Float => match value {
            IValue::Int(i) => IValue::double(i as f64),
            other => other,
        },
        Type::List(elem) => python_list_conversion(value, elem, n),
        _ => value,
    }
}

/// `python_conversion` to a list of `elem`.
fn python_list_conversion(value: IValue, elem: &Type, n: Option<i32>) -> IValue {
    let generic = match &value {
        IValue::GenericList(items) => Some(Arc::clone(items)),
        _ => None,
    };
    match elem {
        Type::Int | Type::SymInt | Type::ScalarType | Type::Layout | Type::MemoryFormat => {
            match (&value, n) {
                (IValue::Int(i), Some(n)) if n > 0 => {
                    IValue::IntList(Arc::new(vec![*i; n as usize]))
                }
                _ if generic.as_ref().is_some_and(|g| g.is_empty()) => {
                    IValue::IntList(Arc::new(Vec::new()))
                }
                _ => value,
            }
        }
        Type::Float => match &value {
            IValue::IntList(v) => {
                IValue::DoubleList(Arc::new(v.iter().map(|i| *i as f64).collect()))
            }
            IValue::Double(x) if n.is_some_and(|n| n > 0) => {
                IValue::DoubleList(Arc::new(vec![x.get(); n.unwrap_or(1) as usize]))
            }
            IValue::GenericList(items) => {
                let numbers: Option<Vec<f64>> = items
                    .iter()
                    .map(|v| match v {
                        IValue::Int(i) => Some(*i as f64),
                        IValue::Double(x) => Some(x.get()),
                        _ => None,
                    })
                    .collect();
                numbers.map_or(value, |v| IValue::DoubleList(Arc::new(v)))
            }
            _ => value,
        },
        Type::Bool => match (&value, n) {
            (IValue::Bool(b), Some(n)) if n > 0 => {
                IValue::BoolList(Arc::new(vec![b.get(); n as usize]))
            }
            _ if generic.as_ref().is_some_and(|g| g.is_empty()) => {
                IValue::BoolList(Arc::new(Vec::new()))
            }
            _ => value,
        },
        Type::Tensor if generic.as_ref().is_some_and(|g| g.is_empty()) => {
            IValue::TensorList(Arc::new(Vec::new()))
        }
        Type::Optional(inner) if **inner == Type::Tensor => match &value {
            IValue::TensorList(ts) => {
                IValue::OptionalTensorList(Arc::new(ts.iter().cloned().map(Some).collect()))
            }
            IValue::GenericList(items) => {
                let tensors: Option<Vec<Option<TensorBase>>> = items
                    .iter()
                    .map(|v| match v {
                        IValue::Tensor(t) => Some(Some(t.clone())),
                        IValue::None => Some(None),
                        _ => None,
                    })
                    .collect();
                tensors.map_or(value, |v| IValue::OptionalTensorList(Arc::new(v)))
            }
            _ => value,
        },
        _ => value,
    }
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
    fn values_convert_as_pythons_binding_converts_them() {
        let s = FunctionSchema::parse(
            "ns::g(SymInt[2] size, SymInt[] sizes, float? f, float[] fs, int i) -> ()",
        )
        .unwrap();
        let c = coerce(&s, 0, &IValue::Int(3)).unwrap();
        assert!(matches!(c, IValue::IntList(v) if *v == vec![3, 3]));
        let c = coerce(&s, 1, &IValue::GenericList(Arc::new(Vec::new()))).unwrap();
        assert!(matches!(c, IValue::IntList(v) if v.is_empty()));
        let c = coerce(&s, 2, &IValue::Int(3)).unwrap();
        assert!(matches!(c, IValue::Double(x) if x == 3.0));
        assert!(matches!(
            coerce(&s, 2, &IValue::None).unwrap(),
            IValue::None
        ));
        let mixed = IValue::GenericList(Arc::new(vec![IValue::Int(1), IValue::double(0.5)]));
        let c = coerce(&s, 3, &mixed).unwrap();
        assert!(matches!(c, IValue::DoubleList(v) if *v == vec![1.0, 0.5]));
        // One int fills only a sized list; a float is no int.
        assert!(coerce(&s, 1, &IValue::Int(3)).is_err());
        let e = coerce(&s, 4, &IValue::double(1.5)).unwrap_err();
        assert!(e.message().starts_with(
            "ns::g() Expected a value of type 'int' for argument 'i' but instead found type 'float'."
        ));
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
