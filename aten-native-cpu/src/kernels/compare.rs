//! Comparisons (`eq`, `ne`, `lt`, `le`, `gt`, `ge`), logical operations
//! (`logical_and`, `logical_or`, `logical_xor`: bool results) and bitwise
//! operations (`bitwise_and`, `bitwise_or`, `bitwise_xor`: integral and
//! bool only).

use aten_core::tensor_iterator::convert::copy_into;
use aten_core::tensor_iterator::{TensorIterator, TensorIteratorConfig};
use aten_core::Tensor;
use c10_core::{Numeric, Result, ScalarType};

use super::util::Variant;
use crate::loops::binary;
use crate::{dispatch_all, dispatch_integral};

/// A comparison.
#[derive(Copy, Clone, Debug)]
#[allow(missing_docs)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// A logical operation.
#[derive(Copy, Clone, Debug)]
#[allow(missing_docs)]
pub enum Logic {
    And,
    Or,
    Xor,
}

/// Runs a bool-valued binary operation: the loop writes a bool tensor,
/// which an `out=` / in-place tensor of another dtype receives converted.
fn bool_result(
    v: Variant<'_>,
    a: &Tensor,
    b: &Tensor,
    promote: bool,
    run: impl FnOnce(&mut TensorIterator<'_>) -> Result<()>,
) -> Result<Tensor> {
    let direct = v.output().filter(|o| o.dtype() == Some(ScalarType::Bool));
    let mut config = TensorIteratorConfig::default()
        .add_output(direct)
        .add_input(a)
        .add_input(b)
        .static_output_dtype(ScalarType::Bool);
    if promote {
        config = config.promote_inputs_to_common_dtype(true);
    }
    if matches!(v, Variant::Inplace(_)) {
        config = config.resize_outputs(false);
    }
    let mut iter = config.build()?;
    if iter.has_data() {
        run(&mut iter)?;
    }
    let result = iter.output(0);
    match v.output() {
        Some(o) if direct.is_none() => {
            if matches!(v, Variant::Inplace(_)) && o.sizes() != result.sizes() {
                return Err(c10_core::Error::runtime(format!(
                    "output with shape {:?} doesn't match the broadcast shape {:?}",
                    o.sizes(),
                    result.sizes()
                )));
            }
            o.resize_(&result.sizes())?;
            copy_into(&result, o)?;
            o.bump_version();
            Ok(o.clone())
        }
        _ => Ok(v.finish(iter)),
    }
}

/// A comparison of `a` and `b` (bool result).
pub fn compare(v: Variant<'_>, a: &Tensor, b: &Tensor, cmp: Cmp) -> Result<Tensor> {
    bool_result(v, a, b, true, |iter| {
        // One loop per comparison, so each loop body is a single compare
        // and vectorizes.
        macro_rules! per_cmp {
            ($T:ty; $($c:ident => $op:tt),*) => {
                match cmp {
                    $(Cmp::$c => binary::<bool, $T, $T>(iter, |x, y| x $op y),)*
                }
            };
        }
        dispatch_all!(iter.common_dtype(), "compare", T => per_cmp!(T; Eq => ==, Ne => !=, Lt => <, Le => <=, Gt => >, Ge => >=))
    })
}

/// A logical operation on the truth values of `a` and `b`.
pub fn logical(v: Variant<'_>, a: &Tensor, b: &Tensor, op: Logic) -> Result<Tensor> {
    bool_result(v, a, b, false, |iter| {
        dispatch_all!(iter.dtype(1), "logical", A => {
            dispatch_all!(iter.dtype(2), "logical", B => binary::<bool, A, B>(iter, move |x, y| {
                let (p, q) = (x.to_f64() != 0.0, y.to_f64() != 0.0);
                match op {
                    Logic::And => p && q,
                    Logic::Or => p || q,
                    Logic::Xor => p != q,
                }
            }))
        })
    })
}

/// A bitwise operation (integral and bool dtypes).
pub fn bitwise(v: Variant<'_>, a: &Tensor, b: &Tensor, op: Logic) -> Result<Tensor> {
    let name = match op {
        Logic::And => "bitwise_and_cpu",
        Logic::Or => "bitwise_or_cpu",
        Logic::Xor => "bitwise_xor_cpu",
    };
    let mut iter = v
        .configure(TensorIteratorConfig::binary_op(v.output(), a, b))
        .build()?;
    let dtype = iter.common_dtype();
    if !dtype.is_integral(true) {
        return Err(super::util::not_implemented(name, dtype));
    }
    if iter.has_data() {
        dispatch_integral!(dtype, name, T => crate::loops::binary::<T, T, T>(&mut iter, move |x, y| {
            let (p, q) = (x.to_i64(), y.to_i64());
            T::from_i64(match op {
                Logic::And => p & q,
                Logic::Or => p | q,
                Logic::Xor => p ^ q,
            })
        }))?;
    }
    Ok(v.finish(iter))
}
