//! Encoding returned boxed values in the JSON encoding of
//! `ops_golden.jsonl`.
//!
//! A tensor becomes `{"tensor": {"dtype", "shape", "strides", "values"}}`
//! with its elements in logical row-major order (non-finite floats as the
//! strings `"nan"`, `"inf"`, `"-inf"`; complex elements as `[re, im]`); an
//! operator with several returns
//! gives `{"list": [...]}` of them, as does a returned list or tuple. Scalars
//! are `{"int": n}`, `{"float": x}`, `{"bool": b}`, `{"str": s}`; a return
//! whose schema type is `ScalarType`, `Layout` or `MemoryFormat` is written
//! by name (`{"dtype": "float32"}`).

use aten::boxing::schema::Type;
use aten::boxing::IValue;
use aten::c10::half::{bf16, f16};
use aten::c10::{Complex, Element, TensorBase};
use aten::{Layout, MemoryFormat, ScalarType};
use serde_json::{json, Map, Value};

/// A float as JSON: a number, or `"nan"`, `"inf"`, `"-inf"`.
pub fn float_value(x: f64) -> Value {
    if x.is_nan() {
        Value::from("nan")
    } else if x == f64::INFINITY {
        Value::from("inf")
    } else if x == f64::NEG_INFINITY {
        Value::from("-inf")
    } else {
        Value::from(x)
    }
}

fn values_of<T: Element>(t: &TensorBase, f: impl Fn(T) -> Value) -> Result<Vec<Value>, String> {
    Ok(t.to_vec::<T>()
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(f)
        .collect())
}

/// The elements of `t` in logical row-major order, as JSON values.
pub fn tensor_values(t: &TensorBase) -> Result<Vec<Value>, String> {
    let dtype = t.dtype().ok_or("undefined tensor")?;
    match dtype {
        ScalarType::Bool => values_of::<bool>(t, Value::from),
        ScalarType::Byte => values_of::<u8>(t, Value::from),
        ScalarType::Char => values_of::<i8>(t, Value::from),
        ScalarType::Short => values_of::<i16>(t, Value::from),
        ScalarType::Int => values_of::<i32>(t, Value::from),
        ScalarType::Long => values_of::<i64>(t, Value::from),
        ScalarType::Half => values_of::<f16>(t, |x| float_value(x.to_f64())),
        ScalarType::BFloat16 => values_of::<bf16>(t, |x| float_value(x.to_f64())),
        ScalarType::Float => values_of::<f32>(t, |x| float_value(f64::from(x))),
        ScalarType::Double => values_of::<f64>(t, float_value),
        ScalarType::ComplexFloat => values_of::<Complex<f32>>(t, |c| {
            json!([float_value(f64::from(c.re)), float_value(f64::from(c.im))])
        }),
        ScalarType::ComplexDouble => {
            values_of::<Complex<f64>>(t, |c| json!([float_value(c.re), float_value(c.im)]))
        }
        other => Err(format!(
            "cannot read values of dtype {}",
            other.python_name()
        )),
    }
}

/// `{"tensor": {"dtype", "shape", "strides", "values"}}`, or `null` for an
/// undefined tensor.
pub fn encode_tensor(t: &TensorBase) -> Result<Value, String> {
    let Some(dtype) = t.dtype() else {
        return Ok(Value::Null);
    };
    let mut body = Map::new();
    body.insert("dtype".into(), Value::from(dtype.python_name()));
    body.insert("shape".into(), Value::from(t.sizes().to_vec()));
    body.insert("strides".into(), Value::from(t.strides().to_vec()));
    body.insert("values".into(), Value::from(tensor_values(t)?));
    let mut outer = Map::new();
    outer.insert("tensor".into(), Value::Object(body));
    Ok(Value::Object(outer))
}

fn layout_name(layout: Layout) -> &'static str {
    match layout {
        Layout::Strided => "strided",
        Layout::Sparse => "sparse_coo",
        Layout::SparseCsr => "sparse_csr",
        Layout::Mkldnn => "_mkldnn",
        Layout::SparseCsc => "sparse_csc",
        Layout::SparseBsr => "sparse_bsr",
        Layout::SparseBsc => "sparse_bsc",
        Layout::Jagged => "jagged",
    }
}

fn memory_format_name(format: MemoryFormat) -> &'static str {
    match format {
        MemoryFormat::Contiguous => "contiguous_format",
        MemoryFormat::Preserve => "preserve_format",
        MemoryFormat::ChannelsLast => "channels_last",
        MemoryFormat::ChannelsLast3d => "channels_last_3d",
    }
}

/// An int of the schema type `ty` (real type): by name for `ScalarType`,
/// `Layout` and `MemoryFormat`, else `{"int": i}`.
fn encode_int(i: i64, ty: Option<&Type>) -> Result<Value, String> {
    let ty = match ty {
        Some(Type::Optional(inner)) => Some(&**inner),
        other => other,
    };
    Ok(match ty {
        Some(Type::ScalarType) => {
            json!({"dtype": ScalarType::from_i64(i).map_err(|e| e.to_string())?.python_name()})
        }
        Some(Type::Layout) => {
            json!({"layout": layout_name(Layout::from_i64(i).map_err(|e| e.to_string())?)})
        }
        Some(Type::MemoryFormat) => json!({
            "memory_format": memory_format_name(MemoryFormat::from_i64(i).map_err(|e| e.to_string())?)
        }),
        _ => json!({ "int": i }),
    })
}

fn list(items: Vec<Value>) -> Value {
    json!({ "list": items })
}

/// The element type of the list type `ty` (through `?`).
fn element_type(ty: Option<&Type>) -> Option<&Type> {
    match ty? {
        Type::List(elem) => Some(elem),
        Type::Optional(inner) => element_type(Some(inner)),
        _ => None,
    }
}

/// One returned value; `ty` is its schema type (real type), when known.
pub fn encode_value(v: &IValue, ty: Option<&Type>) -> Result<Value, String> {
    Ok(match v {
        IValue::None => Value::Null,
        IValue::Tensor(t) => encode_tensor(t)?,
        IValue::Double(x) => json!({ "float": float_value(x.get()) }),
        IValue::Int(i) => encode_int(*i, ty)?,
        IValue::Bool(b) => json!({ "bool": b.get() }),
        IValue::String(s) => json!({ "str": s.as_str() }),
        IValue::ComplexDouble(c) => json!({"complex": [float_value(c.re), float_value(c.im)]}),
        IValue::Device(d) => json!({ "device": d.get().to_string() }),
        IValue::IntList(v) => {
            let elem = element_type(ty);
            list(
                v.iter()
                    .map(|i| encode_int(*i, elem))
                    .collect::<Result<_, _>>()?,
            )
        }
        IValue::DoubleList(v) => list(
            v.iter()
                .map(|x| json!({"float": float_value(*x)}))
                .collect(),
        ),
        IValue::BoolList(v) => list(v.iter().map(|b| json!({ "bool": b })).collect()),
        IValue::TensorList(v) => list(v.iter().map(encode_tensor).collect::<Result<_, _>>()?),
        IValue::OptionalTensorList(v) => list(
            v.iter()
                .map(|t| t.as_ref().map_or(Ok(Value::Null), encode_tensor))
                .collect::<Result<_, _>>()?,
        ),
        IValue::GenericList(items) => {
            let elem = element_type(ty);
            list(
                items
                    .iter()
                    .map(|x| encode_value(x, elem))
                    .collect::<Result<_, _>>()?,
            )
        }
        IValue::Tuple(items) => {
            let types = match ty {
                Some(Type::Tuple(types)) => Some(types),
                _ => None,
            };
            list(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, x)| encode_value(x, types.and_then(|t| t.get(i))))
                    .collect::<Result<_, _>>()?,
            )
        }
        other => return Err(format!("cannot encode a returned {}", other.tag_kind())),
    })
}

/// The `result` of a call: the single return, a `{"list": [...]}` of
/// several, or `null` for none. `types` are the schema's return types.
pub fn encode_returns(returns: &[IValue], types: &[&Type]) -> Result<Value, String> {
    let encoded = returns
        .iter()
        .enumerate()
        .map(|(i, v)| encode_value(v, types.get(i).copied()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(match encoded.len() {
        0 => Value::Null,
        1 => encoded.into_iter().next().unwrap_or(Value::Null),
        _ => list(encoded),
    })
}

/// `v` as one line of JSON with Python's `json.dumps` separators (`", "`
/// and `": "`), the style of the oracle's files.
pub fn to_line(v: &Value) -> String {
    let mut out = String::new();
    write_line(v, &mut out);
    out
}

fn write_line(v: &Value, out: &mut String) {
    match v {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_line(item, out);
            }
            out.push(']');
        }
        Value::Object(fields) => {
            out.push('{');
            for (i, (key, value)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push_str(": ");
                write_line(value, out);
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// An output line: `{"op": op, field: value}` (without `op` when there is
/// none), fields in that order.
pub fn output_line(op: Option<&str>, field: &str, value: &Value) -> String {
    let mut out = String::from("{");
    if let Some(op) = op {
        out.push_str("\"op\": ");
        out.push_str(&Value::from(op).to_string());
        out.push_str(", ");
    }
    out.push_str(&Value::from(field).to_string());
    out.push_str(": ");
    write_line(value, &mut out);
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn tensors_are_written_in_logical_order_with_strides() {
        let base =
            TensorBase::from_vec(vec![1.0f32, 2.0, f32::NAN, f32::NEG_INFINITY], &[4]).unwrap();
        let t = base.as_strided(&[2, 2], &[1, 2], Some(0)).unwrap();
        let v = encode_tensor(&t).unwrap();
        assert_eq!(
            v,
            json!({"tensor": {"dtype": "float32", "shape": [2, 2], "strides": [1, 2],
                "values": [1.0, "nan", 2.0, "-inf"]}})
        );
        assert_eq!(
            to_line(&v),
            r#"{"tensor": {"dtype": "float32", "shape": [2, 2], "strides": [1, 2], "values": [1.0, "nan", 2.0, "-inf"]}}"#
        );
        assert_eq!(
            output_line(Some("aten::t.default"), "error", &Value::from("bad \"t\"")),
            r#"{"op": "aten::t.default", "error": "bad \"t\""}"#
        );
        assert_eq!(
            output_line(None, "result", &Value::Null),
            r#"{"result": null}"#
        );
        let b = TensorBase::from_vec(vec![true, false], &[2]).unwrap();
        assert_eq!(
            encode_tensor(&b).unwrap()["tensor"]["values"],
            json!([true, false])
        );
        let h = TensorBase::from_vec(vec![bf16::from_f64(0.328125)], &[]).unwrap();
        assert_eq!(
            encode_tensor(&h).unwrap()["tensor"]["values"],
            json!([0.328125])
        );
    }

    #[test]
    fn several_returns_make_a_list() {
        let a = IValue::Tensor(TensorBase::from_vec(vec![4i8], &[1]).unwrap());
        let b = IValue::Tensor(TensorBase::from_vec(vec![2i64], &[1]).unwrap());
        let v = encode_returns(&[a, b], &[&Type::Tensor, &Type::Tensor]).unwrap();
        assert_eq!(
            v,
            json!({"list": [
                {"tensor": {"dtype": "int8", "shape": [1], "strides": [1], "values": [4]}},
                {"tensor": {"dtype": "int64", "shape": [1], "strides": [1], "values": [2]}}]})
        );
        assert_eq!(encode_returns(&[], &[]).unwrap(), Value::Null);
    }

    #[test]
    fn scalars_and_typed_ints() {
        assert_eq!(
            encode_value(&IValue::Int(3), None).unwrap(),
            json!({"int": 3})
        );
        assert_eq!(
            encode_value(&IValue::Int(6), Some(&Type::ScalarType)).unwrap(),
            json!({"dtype": "float32"})
        );
        assert_eq!(
            encode_value(&IValue::double(f64::INFINITY), None).unwrap(),
            json!({"float": "inf"})
        );
        assert_eq!(
            encode_value(&IValue::bool(true), None).unwrap(),
            json!({"bool": true})
        );
        assert_eq!(
            encode_value(&IValue::IntList(Arc::new(vec![1, 2])), None).unwrap(),
            json!({"list": [{"int": 1}, {"int": 2}]})
        );
        assert_eq!(
            encode_value(
                &IValue::Tuple(Arc::new(vec![IValue::None, IValue::double(0.5)])),
                None
            )
            .unwrap(),
            json!({"list": [null, {"float": 0.5}]})
        );
    }
}
