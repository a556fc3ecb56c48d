//! Decoding the JSON encoding of `ops_golden.jsonl` into boxed values.
//!
//! Input tensors are `{"tensor": {"dtype", "shape", "strides", "offset",
//! "storage"}}`: a 1-D CPU storage tensor holding `storage` and the strided
//! view `as_strided(shape, strides, offset)` of it, so that non-contiguous
//! inputs reach the kernels as they did in PyTorch. Other values are
//! `{"int": n}`, `{"float": x}`, `{"bool": b}`, `{"str": s}`,
//! `{"dtype": name}`, `{"list": [...]}` and `null`; floats may be the
//! strings `"nan"`, `"inf"` and `"-inf"`. A few encodings the oracle does not
//! use yet are accepted too: `{"device": "cpu"}`, `{"layout": "strided"}`,
//! `{"memory_format": "channels_last"}`, `{"complex": [re, im]}` and
//! `{"tuple": [...]}`.
//!
//! Decoding is schema-free; a call's values are then bound to its schema
//! ([`bind`]) by the binder every `torch.ops` call goes through
//! (`aten::torch_ops::arguments::bind_arguments`, PyTorch's
//! `createStackForSchema`), which converts them as Python's does (an `int`
//! where a `float` is expected, one `int` for an `int[2]`, an empty list for
//! a typed list).

use std::sync::Arc;

use aten::boxing::schema::FunctionSchema;
use aten::boxing::{IValue, Stack};
use aten::c10::half::{bf16, f16};
use aten::c10::{Complex, Complex64, Element, TensorBase};
use aten::dispatch::OperatorHandle;
use aten::torch_ops::arguments::bind_arguments;
use aten::{Device, Layout, MemoryFormat, ScalarType};
use serde_json::Value;

/// Splits `"aten::add.Tensor"` into `("aten::add", "Tensor")`; the overload
/// `default` is the empty overload name.
pub fn parse_op_name(op: &str) -> Result<(String, String), String> {
    let (namespace, rest) = op.split_once("::").ok_or_else(|| {
        format!("operator `{op}` has no namespace (expected `ns::name.overload`)")
    })?;
    let (name, overload) = rest.split_once('.').unwrap_or((rest, ""));
    if namespace.is_empty() || name.is_empty() {
        return Err(format!("malformed operator name `{op}`"));
    }
    let overload = if overload == "default" { "" } else { overload };
    Ok((format!("{namespace}::{name}"), overload.to_string()))
}

/// The operator `op` (`ns::name.overload`) in the global dispatcher, with a
/// schema.
pub fn find_operator(op: &str) -> Result<OperatorHandle, String> {
    let (name, overload) = parse_op_name(op)?;
    aten::dispatcher()
        .find_schema_or_throw(&name, &overload)
        .map_err(|e| e.to_string())
}

/// The dtype named `name` (`"float32"`, `"int64"`, `"bool"`...).
pub fn parse_dtype(name: &str) -> Result<ScalarType, String> {
    name.parse::<ScalarType>().map_err(|e| e.to_string())
}

fn parse_layout(name: &str) -> Result<Layout, String> {
    Ok(match name.strip_prefix("torch.").unwrap_or(name) {
        "strided" => Layout::Strided,
        "sparse_coo" => Layout::Sparse,
        "sparse_csr" => Layout::SparseCsr,
        "sparse_csc" => Layout::SparseCsc,
        "sparse_bsr" => Layout::SparseBsr,
        "sparse_bsc" => Layout::SparseBsc,
        "_mkldnn" | "mkldnn" => Layout::Mkldnn,
        "jagged" => Layout::Jagged,
        _ => return Err(format!("unknown layout `{name}`")),
    })
}

fn parse_memory_format(name: &str) -> Result<MemoryFormat, String> {
    Ok(match name.strip_prefix("torch.").unwrap_or(name) {
        "contiguous_format" => MemoryFormat::Contiguous,
        "preserve_format" => MemoryFormat::Preserve,
        "channels_last" => MemoryFormat::ChannelsLast,
        "channels_last_3d" => MemoryFormat::ChannelsLast3d,
        _ => return Err(format!("unknown memory format `{name}`")),
    })
}

/// A JSON number or one of the strings `nan`, `inf`, `-inf`.
pub fn json_f64(v: &Value) -> Result<f64, String> {
    match v {
        Value::Number(n) => n
            .as_f64()
            .ok_or_else(|| format!("number {n} is not representable")),
        Value::String(s) => match s.as_str() {
            "nan" | "NaN" => Ok(f64::NAN),
            "inf" | "+inf" | "Infinity" => Ok(f64::INFINITY),
            "-inf" | "-Infinity" => Ok(f64::NEG_INFINITY),
            _ => Err(format!("expected a float, got the string {s:?}")),
        },
        _ => Err(format!("expected a float, got {v}")),
    }
}

/// A JSON integer.
pub fn json_i64(v: &Value) -> Result<i64, String> {
    v.as_i64()
        .ok_or_else(|| format!("expected an integer (int64), got {v}"))
}

fn json_bool(v: &Value) -> Result<bool, String> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Number(n) if n.as_i64() == Some(0) => Ok(false),
        Value::Number(n) if n.as_i64() == Some(1) => Ok(true),
        _ => Err(format!("expected a bool, got {v}")),
    }
}

fn int_vec(v: &Value, what: &str) -> Result<Vec<i64>, String> {
    v.as_array()
        .ok_or_else(|| format!("`{what}` is not a list"))?
        .iter()
        .map(json_i64)
        .collect()
}

fn ints<T: Element + TryFrom<i64>>(items: &[Value]) -> Result<Vec<T>, String> {
    items
        .iter()
        .map(|v| {
            let i = json_i64(v)?;
            T::try_from(i).map_err(|_| format!("{i} is out of range for {}", T::DTYPE))
        })
        .collect()
}

fn floats<T>(items: &[Value], convert: impl Fn(f64) -> T) -> Result<Vec<T>, String> {
    items.iter().map(|v| json_f64(v).map(&convert)).collect()
}

/// Complex elements, each a pair `[re, im]` of floats.
fn complexes<T>(items: &[Value], convert: impl Fn(f64) -> T) -> Result<Vec<Complex<T>>, String> {
    items
        .iter()
        .map(|v| match v.as_array().map(Vec::as_slice) {
            Some([re, im]) => Ok(Complex::new(convert(json_f64(re)?), convert(json_f64(im)?))),
            _ => Err(format!("expected a complex element [re, im], got {v}")),
        })
        .collect()
}

fn sized<T: Element>(data: Vec<T>) -> Result<TensorBase, String> {
    let len = data.len() as i64;
    TensorBase::from_vec(data, &[len]).map_err(|e| e.to_string())
}

/// A 1-D CPU tensor of `dtype` holding `items` (the storage of an input).
pub fn storage_tensor(dtype: ScalarType, items: &[Value]) -> Result<TensorBase, String> {
    match dtype {
        ScalarType::Bool => sized(items.iter().map(json_bool).collect::<Result<Vec<_>, _>>()?),
        ScalarType::Byte => sized(ints::<u8>(items)?),
        ScalarType::Char => sized(ints::<i8>(items)?),
        ScalarType::Short => sized(ints::<i16>(items)?),
        ScalarType::Int => sized(ints::<i32>(items)?),
        ScalarType::Long => sized(ints::<i64>(items)?),
        ScalarType::Half => sized(floats(items, f16::from_f64)?),
        ScalarType::BFloat16 => sized(floats(items, bf16::from_f64)?),
        ScalarType::Float => sized(floats(items, |x| x as f32)?),
        ScalarType::Double => sized(floats(items, |x| x)?),
        ScalarType::ComplexFloat => sized(complexes(items, |x| x as f32)?),
        ScalarType::ComplexDouble => sized(complexes(items, |x| x)?),
        other => Err(format!("unsupported dtype {}", other.python_name())),
    }
}

/// The tensor of a `{"tensor": {...}}` body: a strided view of its storage.
///
/// A body with `values` instead of `storage` (the result encoding) gives
/// a contiguous tensor of `shape` holding them.
pub fn decode_tensor(body: &Value) -> Result<TensorBase, String> {
    let field = |name: &str| {
        body.get(name)
            .ok_or_else(|| format!("tensor without `{name}`"))
    };
    let dtype_name = field("dtype")?
        .as_str()
        .ok_or("tensor `dtype` is not a string")?;
    let dtype = parse_dtype(dtype_name)?;
    let shape = int_vec(field("shape")?, "shape")?;
    if let Some(storage) = body.get("storage") {
        let storage = storage.as_array().ok_or("tensor `storage` is not a list")?;
        let strides = int_vec(field("strides")?, "strides")?;
        let offset = match body.get("offset") {
            Some(v) => json_i64(v)?,
            None => 0,
        };
        let base = storage_tensor(dtype, storage)?;
        return base
            .as_strided(&shape, &strides, Some(offset))
            .map_err(|e| e.to_string());
    }
    let values = field("values")?
        .as_array()
        .ok_or("tensor `values` is not a list")?;
    let base = storage_tensor(dtype, values)?;
    let strides = aten::c10::tensor_impl::contiguous_strides(&shape);
    base.as_strided(&shape, &strides, Some(0))
        .map_err(|e| e.to_string())
}

fn list_of(items: &[IValue]) -> IValue {
    let all = |f: fn(&IValue) -> bool| !items.is_empty() && items.iter().all(f);
    if all(|v| matches!(v, IValue::Int(_))) {
        IValue::IntList(Arc::new(
            items
                .iter()
                .filter_map(|v| match v {
                    IValue::Int(i) => Some(*i),
                    _ => None,
                })
                .collect(),
        ))
    } else if all(|v| matches!(v, IValue::Double(_))) {
        IValue::DoubleList(Arc::new(
            items
                .iter()
                .filter_map(|v| match v {
                    IValue::Double(x) => Some(x.get()),
                    _ => None,
                })
                .collect(),
        ))
    } else if all(|v| matches!(v, IValue::Bool(_))) {
        IValue::BoolList(Arc::new(
            items
                .iter()
                .filter_map(|v| match v {
                    IValue::Bool(b) => Some(b.get()),
                    _ => None,
                })
                .collect(),
        ))
    } else if all(|v| matches!(v, IValue::Tensor(_))) {
        IValue::TensorList(Arc::new(
            items
                .iter()
                .filter_map(|v| match v {
                    IValue::Tensor(t) => Some(t.clone()),
                    _ => None,
                })
                .collect(),
        ))
    } else if all(|v| matches!(v, IValue::Tensor(_) | IValue::None))
        && items.iter().any(|v| matches!(v, IValue::Tensor(_)))
    {
        IValue::OptionalTensorList(Arc::new(
            items
                .iter()
                .map(|v| match v {
                    IValue::Tensor(t) => Some(t.clone()),
                    _ => None,
                })
                .collect(),
        ))
    } else {
        IValue::GenericList(Arc::new(items.to_vec()))
    }
}

/// One encoded value as an `IValue`.
pub fn decode_value(v: &Value) -> Result<IValue, String> {
    let obj = match v {
        Value::Null => return Ok(IValue::None),
        Value::Object(obj) if obj.len() == 1 => obj,
        _ => {
            return Err(format!(
                "unsupported value encoding: {} (a value is null or an object of one kind, such as {{\"int\": 2}} or {{\"tensor\": {{...}}}})",
                short(v)
            ))
        }
    };
    let Some((kind, body)) = obj.iter().next() else {
        return Err("empty value object".into());
    };
    let text = || {
        body.as_str()
            .ok_or_else(|| format!("`{kind}` value is not a string"))
    };
    Ok(match kind.as_str() {
        "tensor" => IValue::Tensor(decode_tensor(body)?),
        "int" => IValue::Int(json_i64(body)?),
        "float" => IValue::double(json_f64(body)?),
        "bool" => IValue::bool(body.as_bool().ok_or("`bool` value is not a bool")?),
        "str" => IValue::String(Arc::new(text()?.to_string())),
        "dtype" => IValue::Int(parse_dtype(text()?)? as i64),
        "layout" => IValue::Int(parse_layout(text()?)? as i64),
        "memory_format" => IValue::Int(parse_memory_format(text()?)? as i64),
        "device" => IValue::device(text()?.parse::<Device>().map_err(|e| e.to_string())?),
        "complex" => {
            let parts = body.as_array().ok_or("`complex` value is not [re, im]")?;
            let [re, im] = parts.as_slice() else {
                return Err("`complex` value is not [re, im]".into());
            };
            IValue::ComplexDouble(Arc::new(Complex64 {
                re: json_f64(re)?,
                im: json_f64(im)?,
            }))
        }
        "list" | "tuple" => {
            let items = body
                .as_array()
                .ok_or_else(|| format!("`{kind}` value is not a list"))?
                .iter()
                .enumerate()
                .map(|(i, item)| decode_value(item).map_err(|e| format!("{kind} item {i}: {e}")))
                .collect::<Result<Vec<_>, _>>()?;
            if kind == "tuple" {
                IValue::Tuple(Arc::new(items))
            } else {
                list_of(&items)
            }
        }
        _ => return Err(format!("unknown value kind `{kind}`")),
    })
}

/// `v`'s JSON, cut to a readable length for messages.
fn short(v: &Value) -> String {
    let mut text = v.to_string();
    if text.len() > 80 {
        let mut end = 77;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("...");
    }
    text
}

/// The positional and keyword arguments of a call, decoded: `args` (a
/// JSON list) and `kwargs` (a JSON object, or absent).
pub type DecodedArguments = (Vec<IValue>, Vec<(String, IValue)>);

/// Decodes `args` and `kwargs` (see [`DecodedArguments`]).
pub fn decode_arguments(
    args: Option<&Value>,
    kwargs: Option<&Value>,
) -> Result<DecodedArguments, String> {
    let positional = match args {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| decode_value(v).map_err(|e| format!("argument {i}: {e}")))
            .collect::<Result<Vec<_>, String>>()?,
        Some(other) => return Err(format!("`args` is not a list: {}", short(other))),
    };
    let keywords = match kwargs {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(name, v)| {
                let value = decode_value(v).map_err(|e| format!("keyword `{name}`: {e}"))?;
                Ok((name.clone(), value))
            })
            .collect::<Result<Vec<_>, String>>()?,
        Some(other) => return Err(format!("`kwargs` is not an object: {}", short(other))),
    };
    Ok((positional, keywords))
}

/// The full boxed argument stack of a call to `schema`: the decoded values
/// bound as a `torch.ops` call binds them (`createStackForSchema`:
/// converted, checked, completed with defaults).
pub fn bind(
    schema: &FunctionSchema,
    (positional, keywords): &DecodedArguments,
) -> aten::Result<Stack> {
    let keywords: Vec<(&str, IValue)> = keywords
        .iter()
        .map(|(name, value)| (name.as_str(), value.clone()))
        .collect();
    let mut stack = Stack::new();
    bind_arguments(schema, positional, &keywords, &mut stack)?;
    Ok(stack)
}

/// The full boxed argument stack of a call: [`decode_arguments`], then
/// [`bind`].
pub fn decode_call(
    schema: &FunctionSchema,
    args: Option<&Value>,
    kwargs: Option<&Value>,
) -> Result<Vec<IValue>, String> {
    let decoded = decode_arguments(args, kwargs)?;
    bind(schema, &decoded).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_bare_list_item_names_its_place_and_the_encoding() {
        let e = decode_value(&json!({"list": [{"int": 1}, 2]})).unwrap_err();
        assert!(
            e.starts_with("list item 1: unsupported value encoding: 2 (a value is null or an object of one kind"),
            "{e}"
        );
    }

    #[test]
    fn operator_names_split_at_the_overload() {
        assert_eq!(
            parse_op_name("aten::add.Tensor").unwrap(),
            ("aten::add".to_string(), "Tensor".to_string())
        );
        assert_eq!(
            parse_op_name("aten::zeros.default").unwrap(),
            ("aten::zeros".to_string(), String::new())
        );
        assert_eq!(
            parse_op_name("aten::zeros").unwrap(),
            ("aten::zeros".to_string(), String::new())
        );
        assert!(parse_op_name("zeros").is_err());
        assert!(parse_op_name("::zeros").is_err());
    }

    #[test]
    fn tensors_are_strided_views_of_their_storage() {
        let v = json!({"tensor": {"dtype": "int8", "shape": [5, 1], "strides": [2, 2],
            "offset": 1, "storage": [0, 1, 7, -9, 9, -3, -6, -3, -7, 1, 4]}});
        let IValue::Tensor(t) = decode_value(&v).unwrap() else {
            panic!("not a tensor")
        };
        assert_eq!(t.dtype(), Some(ScalarType::Char));
        assert_eq!(t.sizes(), &[5, 1]);
        assert_eq!(t.strides(), &[2, 2]);
        assert_eq!(t.storage_offset(), 1);
        assert_eq!(t.to_vec::<i8>().unwrap(), vec![1, -9, -3, -3, 1]);
    }

    #[test]
    fn float_storage_takes_nan_and_infinities() {
        let v = json!({"tensor": {"dtype": "float32", "shape": [4], "strides": [1],
            "offset": 0, "storage": [1.5, "nan", "inf", "-inf"]}});
        let IValue::Tensor(t) = decode_value(&v).unwrap() else {
            panic!("not a tensor")
        };
        let got = t.to_vec::<f32>().unwrap();
        assert_eq!(got[0], 1.5);
        assert!(got[1].is_nan());
        assert_eq!(got[2], f32::INFINITY);
        assert_eq!(got[3], f32::NEG_INFINITY);
        let v = json!({"tensor": {"dtype": "bfloat16", "shape": [], "strides": [],
            "offset": 0, "storage": [2.046875]}});
        let IValue::Tensor(t) = decode_value(&v).unwrap() else {
            panic!("not a tensor")
        };
        assert_eq!(t.to_vec::<bf16>().unwrap(), vec![bf16::from_f64(2.046875)]);
    }

    #[test]
    fn bad_tensors_are_errors() {
        for bad in [
            json!({"tensor": {"dtype": "float99", "shape": [1], "strides": [1], "offset": 0, "storage": [1]}}),
            json!({"tensor": {"dtype": "int8", "shape": [1], "strides": [1], "offset": 0, "storage": [300]}}),
            json!({"tensor": {"dtype": "int8", "shape": [3], "strides": [1], "offset": 0, "storage": [1]}}),
            json!({"tensor": {"dtype": "int8", "shape": [1], "strides": [-1], "offset": 0, "storage": [1]}}),
            json!({"tensor": {"dtype": "int8", "shape": [1], "offset": 0, "storage": [1]}}),
            json!({"tensor": {"dtype": "float32", "shape": [1], "strides": [1], "offset": 0, "storage": ["x"]}}),
            json!({"tensor": 3}),
            json!({"what": 3}),
            json!(3),
            json!({"int": 1.5}),
        ] {
            assert!(decode_value(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn scalars_lists_and_none() {
        assert!(matches!(
            decode_value(&json!({"int": -3})),
            Ok(IValue::Int(-3))
        ));
        assert!(
            matches!(decode_value(&json!({"float": "-inf"})), Ok(IValue::Double(x)) if x == f64::NEG_INFINITY)
        );
        assert!(matches!(decode_value(&json!({"bool": true})), Ok(IValue::Bool(b)) if b.get()));
        assert!(matches!(decode_value(&json!(null)), Ok(IValue::None)));
        assert!(
            matches!(decode_value(&json!({"str": "trunc"})), Ok(IValue::String(s)) if s.as_str() == "trunc")
        );
        assert!(
            matches!(decode_value(&json!({"dtype": "float16"})), Ok(IValue::Int(i)) if i == ScalarType::Half as i64)
        );
        assert!(matches!(
            decode_value(&json!({"memory_format": "channels_last"})),
            Ok(IValue::Int(2))
        ));
        assert!(matches!(
            decode_value(&json!({"device": "cpu"})),
            Ok(IValue::Device(_))
        ));
        let ints = decode_value(&json!({"list": [{"int": 2}, {"int": 3}]})).unwrap();
        assert!(matches!(ints, IValue::IntList(v) if *v == vec![2, 3]));
        let floats = decode_value(&json!({"list": [{"float": 2.0}]})).unwrap();
        assert!(matches!(floats, IValue::DoubleList(_)));
        let bools = decode_value(&json!({"list": [{"bool": false}]})).unwrap();
        assert!(matches!(bools, IValue::BoolList(_)));
        let t = json!({"tensor": {"dtype": "bool", "shape": [], "strides": [], "offset": 0, "storage": [true]}});
        let tensors = decode_value(&json!({"list": [t.clone(), t.clone()]})).unwrap();
        assert!(matches!(tensors, IValue::TensorList(v) if v.len() == 2));
        let optional = decode_value(&json!({"list": [t, null]})).unwrap();
        assert!(
            matches!(optional, IValue::OptionalTensorList(v) if v.len() == 2 && v[1].is_none())
        );
        let mixed = decode_value(&json!({"list": [{"int": 1}, {"float": 2.5}]})).unwrap();
        assert!(matches!(mixed, IValue::GenericList(_)));
    }

    #[test]
    fn calls_are_checked_against_the_schema() {
        let schema = FunctionSchema::parse(
            "aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
        )
        .unwrap();
        let args = json!([{"list": [{"int": 2}]}]);
        let kwargs = json!({"dtype": {"dtype": "float64"}});
        let stack = decode_call(&schema, Some(&args), Some(&kwargs)).unwrap();
        assert_eq!(stack.len(), 5);
        assert!(matches!(&stack[1], IValue::Int(i) if *i == ScalarType::Double as i64));
        assert!(matches!(&stack[4], IValue::None));
        let bad = json!({"colour": {"str": "red"}});
        let e = decode_call(&schema, Some(&args), Some(&bad)).unwrap_err();
        assert!(e.contains("Unknown keyword argument 'colour'"), "{e}");
        let e = decode_call(&schema, Some(&json!({"x": 1})), None).unwrap_err();
        assert!(e.contains("not a list"), "{e}");
    }
}
