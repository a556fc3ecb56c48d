//! The checks exported programs carry (CompositeExplicitAutograd, as in
//! PyTorch's `ATen/native/ComparisonUtils.cpp` and `Functions.cpp`):
//! `_assert_scalar` (a runtime assertion on sizes), `_assert_tensor_metadata`
//! (an input's dtype, device, layout and geometry), and
//! `sym_constrain_range(_for_size)` (a data-dependent size inside its range).

use c10_core::{Device, Error, Layout, Result, Scalar, ScalarType};

use crate::Tensor;

/// `_assert_scalar(self, assert_msg)`: fails with `assert_msg` unless `self`
/// holds (is true, or a non-zero number).
pub fn _assert_scalar(self_: Scalar, assert_msg: &str) -> Result<()> {
    let holds = match self_ {
        Scalar::Bool(b) => b,
        Scalar::Int(i) => i != 0,
        Scalar::Double(d) => d != 0.0,
        Scalar::ComplexDouble(c) => c.re != 0.0 || c.im != 0.0,
    };
    if holds {
        Ok(())
    } else if assert_msg.is_empty() {
        Err(Error::runtime("Assertion error"))
    } else {
        Err(Error::runtime(assert_msg))
    }
}

/// `Tensor NAME mismatch! Expected: E, Got: G` when `expected` is given and
/// differs from `got`.
fn assert_match<T: PartialEq + std::fmt::Debug>(
    got: T,
    expected: Option<T>,
    name: &str,
    show: impl Fn(&T) -> String,
) -> Result<()> {
    match expected {
        Some(e) if e != got => Err(Error::runtime(format!(
            "Tensor {name} mismatch! Expected: {}, Got: {}",
            show(&e),
            show(&got)
        ))),
        _ => Ok(()),
    }
}

/// `_assert_tensor_metadata(a, size, stride, dtype, *, device, layout)`:
/// fails unless `a` has each property that is given. A device without an
/// index matches any index of its type.
pub fn _assert_tensor_metadata(
    a: &Tensor,
    size: Option<&[i64]>,
    stride: Option<&[i64]>,
    dtype: Option<ScalarType>,
    device: Option<Device>,
    layout: Option<Layout>,
) -> Result<()> {
    let list = |v: &&[i64]| format!("{v:?}");
    assert_match(&a.sizes()[..], size, "sizes", list)?;
    assert_match(&a.strides()[..], stride, "strides", list)?;
    let got = a
        .dtype()
        .ok_or_else(|| Error::runtime("_assert_tensor_metadata: an undefined tensor"))?;
    assert_match(got, dtype, "dtype", |d: &ScalarType| d.to_string())?;
    if let (Some(expected), Some(got)) = (device, a.device()) {
        let differs = expected.device_type() != got.device_type()
            || (expected.index() >= 0 && got.index() >= 0 && expected.index() != got.index());
        if differs {
            return Err(Error::runtime(format!(
                "Tensor device mismatch! Expected: {expected}, Got: {got}"
            )));
        }
    }
    assert_match(Layout::Strided, layout, "layout", |l: &Layout| {
        l.to_string()
    })
}

/// `sym_constrain_range(size, *, min, max)`: fails unless `min <= size <=
/// max` (unbounded sides default to the `int64` limits).
pub fn sym_constrain_range(size: Scalar, min: Option<i64>, max: Option<i64>) -> Result<()> {
    let min = min.unwrap_or(i64::MIN);
    let max = max.unwrap_or(i64::MAX);
    if max < min {
        return Err(Error::runtime(format!(
            "Max must be greater than or equal to min. Got min={min} max={max}"
        )));
    }
    let value = size.to_i64();
    if value < min || value > max {
        return Err(Error::runtime(format!(
            "Invalid value range for {value} between [{min}, {max}]."
        )));
    }
    Ok(())
}

/// `sym_constrain_range_for_size(size, *, min, max)`: a size's range (its
/// minimum defaults to 0; a maximum must exceed 2).
pub fn sym_constrain_range_for_size(
    size: Scalar,
    min: Option<i64>,
    max: Option<i64>,
) -> Result<()> {
    if let Some(max) = max.filter(|m| *m <= 2) {
        return Err(Error::runtime(format!(
            "Max value to constrain_range_for_size must be greater than 2. got: {max}"
        )));
    }
    sym_constrain_range(size, Some(min.unwrap_or(0)), max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assertions_pass_or_name_what_differs() {
        _assert_scalar(Scalar::Bool(true), "never").unwrap();
        let e = _assert_scalar(
            Scalar::Bool(false),
            "Runtime assertion failed for expression Eq(s0, 4)",
        )
        .unwrap_err();
        assert_eq!(
            e.message(),
            "Runtime assertion failed for expression Eq(s0, 4)"
        );
        sym_constrain_range_for_size(Scalar::Int(5), None, Some(8)).unwrap();
        let e = sym_constrain_range_for_size(Scalar::Int(9), None, Some(8)).unwrap_err();
        assert_eq!(e.message(), "Invalid value range for 9 between [0, 8].");
        let e = sym_constrain_range_for_size(Scalar::Int(1), None, Some(2)).unwrap_err();
        assert!(e
            .message()
            .starts_with("Max value to constrain_range_for_size"));
        let e = sym_constrain_range(Scalar::Int(1), Some(3), Some(2)).unwrap_err();
        assert!(e
            .message()
            .starts_with("Max must be greater than or equal to min"));
    }
}
