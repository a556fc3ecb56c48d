//! The pieces every argument binding shares: a schema default as an
//! `IValue`, whether a value has an argument's type, and PyTorch's
//! type-mismatch message. The binder itself is `aten-ops`'
//! `bind_arguments` (PyTorch's `createStackForSchema`).

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
        Type::Number => value.is_number(),
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

#[cfg(test)]
mod tests {
    use super::*;

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
