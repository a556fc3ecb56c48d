//! Comparing a computed `result` with the expected one, both in the JSON
//! encoding of `ops_golden.jsonl`.
//!
//! Structure, dtype and shape must match exactly; integer and bool values
//! too; float values within a tolerance fitting their dtype
//! (`|actual - expected| <= atol + rtol * |expected|`, NaN equal to NaN,
//! infinities equal only to themselves); complex values (`[re, im]`) part
//! by part, with the tolerance of their parts' dtype and an absolute one
//! scaled by the largest expected magnitude, as the FFT results they come
//! from have cancellation errors of that size. Result strides are PyTorch's layout
//! choices: a difference there does not fail the comparison but is counted
//! in [`Comparison`], so that the runner can report how far the project's
//! layouts are from PyTorch's.

use serde_json::Value;

use super::decode::json_f64;

/// A float tolerance: `|actual - expected| <= atol + rtol * |expected|`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Tolerance {
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
}

impl Tolerance {
    /// Whether `actual` is close enough to `expected`.
    pub fn close(self, expected: f64, actual: f64) -> bool {
        if expected.is_nan() || actual.is_nan() {
            return expected.is_nan() && actual.is_nan();
        }
        if expected.is_infinite() || actual.is_infinite() {
            return expected == actual;
        }
        (actual - expected).abs() <= self.atol + self.rtol * expected.abs()
    }
}

/// The tolerance for values of the dtype `dtype` (by its Python name), or
/// `None` for dtypes compared exactly (integers, bool).
///
/// float32 results may differ from PyTorch's by summation order and by the
/// vectorised transcendental functions used, a few ulps; float64 ones by
/// far less; float16 and bfloat16 results by one ulp of their own after
/// rounding from a float computation.
pub fn tolerance(dtype: &str) -> Option<Tolerance> {
    match dtype {
        "float64" => Some(Tolerance {
            rtol: 1e-9,
            atol: 1e-12,
        }),
        "float32" => Some(Tolerance {
            rtol: 1e-5,
            atol: 1e-6,
        }),
        "float16" | "bfloat16" => Some(Tolerance {
            rtol: 1e-2,
            atol: 1e-3,
        }),
        "complex64" => tolerance("float32"),
        "complex128" => tolerance("float64"),
        _ => None,
    }
}

/// The absolute tolerance a complex tensor's parts get on top of their
/// dtype's: a multiple of the largest expected part (near-zero terms of a
/// transform are sums that cancel).
fn complex_atol(dtype: &str, values: &[Value]) -> f64 {
    let scale = match dtype {
        "complex64" => 1e-5,
        "complex128" => 1e-12,
        _ => return 0.0,
    };
    let largest = values
        .iter()
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|v| json_f64(v).ok())
        .filter(|x| x.is_finite())
        .fold(0.0f64, |m, x| m.max(x.abs()));
    scale * largest
}

/// Whether an element (a number, or a complex `[re, im]`) is close enough.
fn close_element(tol: Tolerance, expected: &Value, actual: &Value) -> bool {
    match (expected.as_array(), actual.as_array()) {
        (Some(e), Some(a)) => {
            e.len() == a.len() && e.iter().zip(a).all(|(e, a)| close_element(tol, e, a))
        }
        (None, None) => {
            matches!((json_f64(expected), json_f64(actual)), (Ok(e), Ok(a)) if tol.close(e, a))
        }
        _ => false,
    }
}

/// What a comparison noticed besides pass/fail.
#[derive(Debug, Default, Clone)]
pub struct Comparison {
    /// Result tensors whose strides were compared (dtype and shape matched).
    pub strides_compared: usize,
    /// One description per result tensor whose strides differ from the
    /// expected ones.
    pub strides_differ: Vec<String>,
}

fn kind_of(v: &Value) -> Option<(&str, &Value)> {
    match v {
        Value::Object(obj) if obj.len() == 1 => obj.iter().next().map(|(k, b)| (k.as_str(), b)),
        _ => None,
    }
}

fn at(path: &str) -> String {
    if path.is_empty() {
        "result".into()
    } else {
        format!("result{path}")
    }
}

/// Compares `actual` with `expected`; `Err` describes the first difference.
/// Stride differences go to `notes`.
pub fn compare(expected: &Value, actual: &Value, notes: &mut Comparison) -> Result<(), String> {
    compare_at(expected, actual, "", notes)
}

fn compare_at(
    expected: &Value,
    actual: &Value,
    path: &str,
    notes: &mut Comparison,
) -> Result<(), String> {
    let (Some((ek, eb)), Some((ak, ab))) = (kind_of(expected), kind_of(actual)) else {
        return if expected == actual {
            Ok(())
        } else {
            Err(format!("{}: expected {expected}, got {actual}", at(path)))
        };
    };
    if ek != ak {
        return Err(format!("{}: expected a {ek}, got a {ak}", at(path)));
    }
    match ek {
        "tensor" => compare_tensors(eb, ab, path, notes),
        "list" | "tuple" => {
            let (Some(e), Some(a)) = (eb.as_array(), ab.as_array()) else {
                return Err(format!("{}: malformed {ek}", at(path)));
            };
            if e.len() != a.len() {
                return Err(format!(
                    "{}: expected {} elements, got {}",
                    at(path),
                    e.len(),
                    a.len()
                ));
            }
            for (i, (e, a)) in e.iter().zip(a).enumerate() {
                compare_at(e, a, &format!("{path}[{i}]"), notes)?;
            }
            Ok(())
        }
        "float" => {
            let tol = tolerance("float64").unwrap_or(Tolerance {
                rtol: 0.0,
                atol: 0.0,
            });
            match (json_f64(eb), json_f64(ab)) {
                (Ok(e), Ok(a)) if tol.close(e, a) => Ok(()),
                _ => Err(format!("{}: expected {eb}, got {ab}", at(path))),
            }
        }
        _ => {
            if eb == ab {
                Ok(())
            } else {
                Err(format!("{}: expected {expected}, got {actual}", at(path)))
            }
        }
    }
}

fn field<'a>(body: &'a Value, name: &str, path: &str) -> Result<&'a Value, String> {
    body.get(name)
        .ok_or_else(|| format!("{}: tensor without `{name}`", at(path)))
}

fn compare_tensors(
    expected: &Value,
    actual: &Value,
    path: &str,
    notes: &mut Comparison,
) -> Result<(), String> {
    let dtype = field(expected, "dtype", path)?;
    let got_dtype = field(actual, "dtype", path)?;
    if dtype != got_dtype {
        return Err(format!(
            "{}: expected dtype {dtype}, got {got_dtype}",
            at(path)
        ));
    }
    let shape = field(expected, "shape", path)?;
    let got_shape = field(actual, "shape", path)?;
    if shape != got_shape {
        return Err(format!(
            "{}: expected shape {shape}, got {got_shape}",
            at(path)
        ));
    }
    let (Some(values), Some(got)) = (
        field(expected, "values", path)?.as_array(),
        field(actual, "values", path)?.as_array(),
    ) else {
        return Err(format!("{}: tensor `values` is not a list", at(path)));
    };
    if values.len() != got.len() {
        return Err(format!(
            "{}: expected {} values, got {}",
            at(path),
            values.len(),
            got.len()
        ));
    }
    let name = dtype.as_str().unwrap_or_default();
    let tol = tolerance(name).map(|t| Tolerance {
        atol: t.atol + complex_atol(name, values),
        ..t
    });
    let mut mismatches = 0usize;
    let mut first = None;
    for (i, (e, a)) in values.iter().zip(got).enumerate() {
        let ok = match tol {
            Some(tol) => close_element(tol, e, a),
            None => match (e.as_i64(), a.as_i64()) {
                (Some(e), Some(a)) => e == a,
                _ => e == a,
            },
        };
        if !ok {
            mismatches += 1;
            first.get_or_insert((i, e, a));
        }
    }
    if let Some((i, e, a)) = first {
        return Err(format!(
            "{}: {mismatches} of {} values differ; first at flat index {i}: expected {e}, got {a}",
            at(path),
            values.len()
        ));
    }
    let strides = field(expected, "strides", path)?;
    let got_strides = field(actual, "strides", path)?;
    notes.strides_compared += 1;
    if strides != got_strides {
        notes.strides_differ.push(format!(
            "{}: expected strides {strides}, got {got_strides} (shape {shape})",
            at(path)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tensor(dtype: &str, shape: &[i64], strides: &[i64], values: Value) -> Value {
        json!({"tensor": {"dtype": dtype, "shape": shape, "strides": strides, "values": values}})
    }

    #[test]
    fn floats_compare_within_the_dtype_tolerance() {
        let mut notes = Comparison::default();
        let e = tensor("float32", &[3], &[1], json!([1.0, "nan", "-inf"]));
        let a = tensor("float32", &[3], &[1], json!([1.000001, "nan", "-inf"]));
        assert!(compare(&e, &a, &mut notes).is_ok());
        let a = tensor("float32", &[3], &[1], json!([1.001, "nan", "-inf"]));
        let err = compare(&e, &a, &mut notes).unwrap_err();
        assert!(err.contains("1 of 3 values differ"), "{err}");
        let a = tensor("float32", &[3], &[1], json!([1.0, 0.0, "-inf"]));
        assert!(compare(&e, &a, &mut notes).is_err());
        let a = tensor("float32", &[3], &[1], json!([1.0, "nan", "inf"]));
        assert!(compare(&e, &a, &mut notes).is_err());
        let e = tensor("bfloat16", &[1], &[1], json!([0.328125]));
        let a = tensor("bfloat16", &[1], &[1], json!([0.330078125]));
        assert!(compare(&e, &a, &mut notes).is_ok());
    }

    #[test]
    fn complex_values_compare_part_by_part() {
        let mut notes = Comparison::default();
        let e = tensor("complex64", &[2], &[1], json!([[10.0, 0.0], [0.0, -0.0]]));
        // Near-zero parts within a tolerance scaled by the largest part.
        let a = tensor(
            "complex64",
            &[2],
            &[1],
            json!([[10.00001, 2e-5], [-3e-5, 0.0]]),
        );
        assert!(compare(&e, &a, &mut notes).is_ok());
        let a = tensor("complex64", &[2], &[1], json!([[10.0, 0.0], [0.0, 0.01]]));
        assert!(compare(&e, &a, &mut notes).is_err());
        let a = tensor("complex64", &[2], &[1], json!([[10.0, 0.0], 0.0]));
        assert!(compare(&e, &a, &mut notes).is_err());
    }

    #[test]
    fn integers_bools_dtype_and_shape_are_exact() {
        let mut notes = Comparison::default();
        let e = tensor("int64", &[2], &[1], json!([1, 2]));
        assert!(compare(&e, &tensor("int64", &[2], &[1], json!([1, 3])), &mut notes).is_err());
        assert!(compare(&e, &tensor("int32", &[2], &[1], json!([1, 2])), &mut notes).is_err());
        assert!(compare(
            &e,
            &tensor("int64", &[2, 1], &[1, 1], json!([1, 2])),
            &mut notes
        )
        .is_err());
        let e = tensor("bool", &[1], &[1], json!([true]));
        assert!(compare(&e, &tensor("bool", &[1], &[1], json!([false])), &mut notes).is_err());
        assert!(compare(&e, &e.clone(), &mut notes).is_ok());
    }

    #[test]
    fn strides_are_counted_not_failed() {
        let mut notes = Comparison::default();
        let e = tensor("int16", &[2, 2], &[2, 1], json!([1, 2, 3, 4]));
        let a = tensor("int16", &[2, 2], &[1, 2], json!([1, 2, 3, 4]));
        assert!(compare(&e, &a, &mut notes).is_ok());
        assert!(compare(&e, &e.clone(), &mut notes).is_ok());
        assert_eq!(notes.strides_compared, 2);
        assert_eq!(notes.strides_differ.len(), 1);
    }

    #[test]
    fn structure_must_match() {
        let mut notes = Comparison::default();
        let t = tensor("int8", &[1], &[1], json!([4]));
        let e = json!({"list": [t.clone(), t.clone()]});
        assert!(compare(&e, &json!({"list": [t.clone()]}), &mut notes).is_err());
        assert!(compare(&e, &t, &mut notes).is_err());
        assert!(compare(&e, &e.clone(), &mut notes).is_ok());
        assert!(compare(&json!({"int": 3}), &json!({"int": 3}), &mut notes).is_ok());
        assert!(compare(&json!({"int": 3}), &json!({"int": 4}), &mut notes).is_err());
        assert!(compare(
            &json!({"float": 0.1}),
            &json!({"float": 0.1000000000001}),
            &mut notes
        )
        .is_ok());
        assert!(compare(&json!(null), &json!(null), &mut notes).is_ok());
        assert!(compare(&json!(null), &json!({"int": 0}), &mut notes).is_err());
    }
}
