//! `checkAndNormalizeInputs`: turn a call's positional and keyword arguments
//! into the full boxed stack a schema asks for, with defaults filled in and
//! every value checked against its argument's type, or fail with PyTorch's
//! message.

use std::sync::Arc;

use c10_core::{Complex64, Device, Error, Result};

use crate::ivalue::IValue;
use crate::schema::{Argument, DefaultValue, FunctionSchema, Type};

/// The `IValue` of a schema default.
pub fn default_to_ivalue(default: &DefaultValue) -> Result<IValue> {
    Ok(match default {
        DefaultValue::None => IValue::None,
        DefaultValue::Bool(b) => IValue::bool(*b),
        DefaultValue::Int(i) => IValue::Int(*i),
        DefaultValue::Double(d) => IValue::double(*d),
        DefaultValue::Complex(re, im) => {
            IValue::ComplexDouble(Arc::new(Complex64 { re: *re, im: *im }))
        }
        DefaultValue::Str(bytes) => {
            IValue::String(Arc::new(String::from_utf8_lossy(bytes).into_owned()))
        }
        DefaultValue::Device(text) => IValue::device(text.parse::<Device>()?),
        DefaultValue::IntList(v) => IValue::IntList(Arc::new(v.clone())),
        DefaultValue::DoubleList(v) => IValue::DoubleList(Arc::new(v.clone())),
        DefaultValue::BoolList(v) => IValue::BoolList(Arc::new(v.clone())),
        DefaultValue::ComplexList(v) => IValue::GenericList(Arc::new(
            v.iter()
                .map(|(re, im)| IValue::ComplexDouble(Arc::new(Complex64 { re: *re, im: *im })))
                .collect(),
        )),
    })
}

/// Whether `value` can be passed where the schema type `ty` is expected
/// (`value.type()->isSubtypeOf(ty)`).
pub fn value_matches_type(value: &IValue, ty: &Type) -> bool {
    match ty {
        Type::Any | Type::Var(_) => true,
        Type::Optional(inner) => value.is_none() || value_matches_type(value, inner),
        Type::Union(types) => types.iter().any(|t| value_matches_type(value, t)),
        Type::NoneType => value.is_none(),
        Type::Tensor => matches!(value, IValue::Tensor(_)),
        Type::Int | Type::SymInt | Type::ScalarType | Type::Layout | Type::MemoryFormat => {
            matches!(value, IValue::Int(_) | IValue::SymInt(_))
        }
        Type::Float => matches!(value, IValue::Double(_)),
        Type::Complex => matches!(value, IValue::ComplexDouble(_)),
        Type::Bool | Type::SymBool => matches!(value, IValue::Bool(_)),
        Type::Number => matches!(
            value,
            IValue::Int(_)
                | IValue::SymInt(_)
                | IValue::Double(_)
                | IValue::Bool(_)
                | IValue::ComplexDouble(_)
        ),
        Type::Str => matches!(value, IValue::String(_)),
        Type::Device => matches!(value, IValue::Device(_)),
        Type::Generator => matches!(value, IValue::Generator(_)),
        Type::Class(name) => matches!(value, IValue::Object(o) if o.class_name() == name),
        Type::List(elem) => list_matches(value, elem),
        Type::Tuple(types) => match value {
            IValue::Tuple(items) => {
                items.len() == types.len()
                    && items
                        .iter()
                        .zip(types)
                        .all(|(v, t)| value_matches_type(v, t))
            }
            _ => false,
        },
        Type::Dict(k, v) => match value {
            IValue::Dict(items) => items
                .iter()
                .all(|(key, val)| value_matches_type(key, k) && value_matches_type(val, v)),
            _ => false,
        },
        _ => false,
    }
}

fn list_matches(value: &IValue, elem: &Type) -> bool {
    let is = |t: &Type| elem == t;
    match value {
        IValue::IntList(_) => {
            is(&Type::Int) || is(&Type::SymInt) || matches!(elem, Type::Any | Type::Var(_))
        }
        IValue::DoubleList(_) => is(&Type::Float) || matches!(elem, Type::Any | Type::Var(_)),
        IValue::BoolList(_) => is(&Type::Bool) || matches!(elem, Type::Any | Type::Var(_)),
        IValue::TensorList(ts) => {
            is(&Type::Tensor)
                || matches!(elem, Type::Optional(t) if **t == Type::Tensor)
                || matches!(elem, Type::Any | Type::Var(_))
                || ts.is_empty()
        }
        IValue::OptionalTensorList(_) => {
            matches!(elem, Type::Optional(t) if **t == Type::Tensor)
                || matches!(elem, Type::Any | Type::Var(_))
        }
        IValue::GenericList(items) => items.iter().all(|v| value_matches_type(v, elem)),
        _ => false,
    }
}

/// `formatTypeMismatchMsg`: `value` does not fit `argument`.
pub fn type_mismatch(
    schema: &FunctionSchema,
    argument: &Argument,
    value: &IValue,
    position: Option<usize>,
) -> Error {
    let position = position.map_or(String::new(), |p| format!("Position: {p}\n"));
    Error::runtime(format!(
        "{}() Expected a value of type '{}' for argument '{}' but instead found type '{}'.\n{position}Value: {value}\nDeclaration: {schema}",
        schema.name(),
        argument.ty().annotation_str(),
        argument.name(),
        value.type_name(),
    ))
}

/// `checkAndNormalizeInputs`: `inputs` (positional) and `kwargs` become the
/// full argument list of `schema`, in order, with defaults filled in.
#[doc(alias = "checkAndNormalizeInputs")]
pub fn check_and_normalize_inputs(
    schema: &FunctionSchema,
    mut inputs: Vec<IValue>,
    kwargs: &[(String, IValue)],
) -> Result<Vec<IValue>> {
    let arguments = schema.arguments();
    if inputs.len() > arguments.len() {
        return Err(Error::runtime(format!(
            "Expected at most {} argument(s) for operator '{}', but received {} argument(s). Declaration: {schema}",
            arguments.len(),
            schema.name(),
            inputs.len()
        )));
    }
    let mut consumed = 0;
    for (pos, argument) in arguments.iter().enumerate() {
        if pos < inputs.len() {
            if !value_matches_type(&inputs[pos], argument.ty()) {
                return Err(type_mismatch(schema, argument, &inputs[pos], Some(pos)));
            }
            continue;
        }
        if let Some((_, value)) = kwargs.iter().find(|(k, _)| k == argument.name()) {
            if !value_matches_type(value, argument.ty()) {
                return Err(type_mismatch(schema, argument, value, None));
            }
            inputs.push(value.clone());
            consumed += 1;
            continue;
        }
        if let Some(default) = argument.default_value() {
            inputs.push(default_to_ivalue(default)?);
            continue;
        }
        return Err(Error::runtime(format!(
            "{}() is missing value for argument '{}'. Declaration: {schema}",
            schema.name(),
            argument.name()
        )));
    }
    if consumed != kwargs.len() {
        for (name, _) in kwargs {
            if !arguments.iter().any(|a| a.name() == name) {
                return Err(Error::runtime(format!(
                    "Unknown keyword argument '{name}' for operator '{}'. Schema: {schema}",
                    schema.name()
                )));
            }
        }
        for argument in arguments {
            if kwargs.iter().any(|(k, _)| k == argument.name()) {
                return Err(Error::runtime(format!(
                    "Argument '{}' specified both as positional and keyword argument. Schema: {schema}",
                    argument.name()
                )));
            }
        }
    }
    Ok(inputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(text: &str) -> FunctionSchema {
        FunctionSchema::parse(text).unwrap()
    }

    #[test]
    fn fills_defaults_and_keywords() {
        let s = schema("aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
        let t = IValue::Tensor(c10_core::TensorBase::undefined());
        let stack = check_and_normalize_inputs(
            &s,
            vec![t.clone(), IValue::IntList(Arc::new(vec![0]))],
            &[("dtype".into(), IValue::Int(6))],
        )
        .unwrap();
        assert_eq!(stack.len(), 4);
        assert_eq!(stack[2], IValue::bool(false));
        assert_eq!(stack[3], IValue::Int(6));
    }

    #[test]
    fn reports_pytorchs_errors() {
        let s = schema("aten::f(Tensor self, int dim, *, bool flag=True) -> Tensor");
        let t = IValue::Tensor(c10_core::TensorBase::undefined());
        let err =
            check_and_normalize_inputs(&s, vec![t.clone(), IValue::double(1.5)], &[]).unwrap_err();
        assert!(err.message().starts_with(
            "aten::f() Expected a value of type 'int' for argument 'dim' but instead found type 'float'.\nPosition: 1\n"
        ));
        let err = check_and_normalize_inputs(&s, vec![t.clone()], &[]).unwrap_err();
        assert!(err
            .message()
            .starts_with("aten::f() is missing value for argument 'dim'."));
        let err = check_and_normalize_inputs(
            &s,
            vec![t.clone(), IValue::Int(0)],
            &[("nope".into(), IValue::Int(1))],
        )
        .unwrap_err();
        assert!(err
            .message()
            .starts_with("Unknown keyword argument 'nope' for operator 'aten::f'."));
        let err = check_and_normalize_inputs(
            &s,
            vec![t.clone(), IValue::Int(0)],
            &[("dim".into(), IValue::Int(1))],
        )
        .unwrap_err();
        assert!(err
            .message()
            .starts_with("Argument 'dim' specified both as positional and keyword argument."));
        let err = check_and_normalize_inputs(
            &s,
            vec![t.clone(), IValue::Int(0), IValue::bool(true), IValue::None],
            &[],
        )
        .unwrap_err();
        assert!(err.message().starts_with(
            "Expected at most 3 argument(s) for operator 'aten::f', but received 4 argument(s)."
        ));
    }

    #[test]
    fn type_checks() {
        assert!(value_matches_type(&IValue::Int(1), &Type::Number));
        assert!(!value_matches_type(&IValue::Int(1), &Type::Float));
        assert!(value_matches_type(
            &IValue::None,
            &Type::optional(Type::Tensor)
        ));
        assert!(value_matches_type(
            &IValue::IntList(Arc::new(vec![1])),
            &Type::list(Type::SymInt)
        ));
        assert!(!value_matches_type(
            &IValue::DoubleList(Arc::new(vec![1.0])),
            &Type::list(Type::Int)
        ));
    }
}
