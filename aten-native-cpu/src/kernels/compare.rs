//! Comparisons (`eq`, `ne`, `lt`, `le`, `gt`, `ge`), logical operations
//! (`logical_and`, `logical_or`, `logical_xor`: bool results) and bitwise
//! operations (`bitwise_and`, `bitwise_or`, `bitwise_xor`: integral and
//! bool only).

use aten_core::tensor_iterator::convert::copy_into;
use aten_core::tensor_iterator::{TensorIterator, TensorIteratorConfig};
use aten_core::Tensor;
use c10_core::{Numeric, Result, Scalar, ScalarType};

use crate::loops::binary;
use crate::{dispatch_all, dispatch_integral};
use aten_core::structured::SetOutput;

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
    v: SetOutput<'_>,
    a: &Tensor,
    b: &Tensor,
    promote: bool,
    run: impl FnOnce(&mut TensorIterator<'_>) -> Result<()>,
) -> Result<Tensor> {
    let direct = v
        .maybe_get_output()
        .filter(|o| o.dtype() == Some(ScalarType::Bool));
    let mut config = TensorIteratorConfig::default()
        .add_output(direct)
        .add_input(a)
        .add_input(b)
        .static_output_dtype(ScalarType::Bool);
    if promote {
        config = config.promote_inputs_to_common_dtype(true);
    }
    let mut iter = v.build(config)?;
    if iter.has_data() {
        run(&mut iter)?;
    }
    let result = iter.output(0);
    match v.maybe_get_output() {
        Some(o) if direct.is_none() => {
            if matches!(v, SetOutput::Inplace(_)) && o.sizes() != result.sizes() {
                return Err(c10_core::Error::runtime(format!(
                    "output with shape {:?} doesn't match the broadcast shape {:?}",
                    o.sizes(),
                    result.sizes()
                )));
            }
            aten_core::native::resize::resize_output(o, &result.sizes(), None)?;
            copy_into(&result, o)?;
            Ok(o.clone())
        }
        _ => Ok(v.finish(iter.into_output(0))),
    }
}

/// A comparison over an iteration built by `comparison_op`: the output is
/// bool, or of the common dtype (ones and zeros).
pub fn compare_loop(iter: &mut TensorIterator<'_>, cmp: Cmp) -> Result<()> {
    if !iter.has_data() {
        return Ok(());
    }
    let to_bool = iter.dtype(0) == ScalarType::Bool;
    // One loop per comparison, so each loop body is a single compare and
    // vectorizes.
    macro_rules! per_cmp {
        ($T:ty; $($c:ident => $op:tt),*) => {
            match cmp {
                $(Cmp::$c if to_bool => binary::<bool, $T, $T>(iter, |x, y| x $op y),)*
                $(Cmp::$c => binary::<$T, $T, $T>(iter, |x, y| <$T>::from_i64(i64::from(x $op y))),)*
            }
        };
    }
    dispatch_all!(iter.common_dtype(), "compare", T => per_cmp!(T; Eq => ==, Ne => !=, Lt => <, Le => <=, Gt => >, Ge => >=))
}

/// Defines the comparisons' impls.
macro_rules! compare_impls {
    ($($name:ident => $cmp:ident),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`.")]
        pub fn $name(iter: &mut TensorIterator<'_>, _: &Tensor, _: &Tensor) -> Result<()> {
            compare_loop(iter, Cmp::$cmp)
        }
    )*};
}

compare_impls!(
    eq_tensor_out => Eq, ne_tensor_out => Ne, lt_tensor_out => Lt,
    le_tensor_out => Le, gt_tensor_out => Gt, ge_tensor_out => Ge,
);

/// Defines the comparisons' impls of the Scalar overloads (the meta
/// function wrapped the scalar into the iteration).
macro_rules! compare_scalar_impls {
    ($($name:ident => $cmp:ident),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`.")]
        pub fn $name(iter: &mut TensorIterator<'_>, _: &Tensor, _: Scalar) -> Result<()> {
            compare_loop(iter, Cmp::$cmp)
        }
    )*};
}

compare_scalar_impls!(
    eq_scalar_out => Eq, ne_scalar_out => Ne, lt_scalar_out => Lt,
    le_scalar_out => Le, gt_scalar_out => Gt, ge_scalar_out => Ge,
);

/// A logical operation on the truth values of `a` and `b`.
pub fn logical(v: SetOutput<'_>, a: &Tensor, b: &Tensor, op: Logic) -> Result<Tensor> {
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

/// A bitwise operation (integral and bool dtypes) over an iteration.
pub fn bitwise_loop(iter: &mut TensorIterator<'_>, op: Logic) -> Result<()> {
    let name = match op {
        Logic::And => "bitwise_and_cpu",
        Logic::Or => "bitwise_or_cpu",
        Logic::Xor => "bitwise_xor_cpu",
    };
    let dtype = iter.common_dtype();
    if !dtype.is_integral(true) {
        return Err(super::util::not_implemented(name, dtype));
    }
    if !iter.has_data() {
        return Ok(());
    }
    dispatch_integral!(dtype, name, T => crate::loops::binary::<T, T, T>(iter, move |x, y| {
        let (p, q) = (x.to_i64(), y.to_i64());
        T::from_i64(match op {
            Logic::And => p & q,
            Logic::Or => p | q,
            Logic::Xor => p ^ q,
        })
    }))
}

/// Defines the bitwise operations' impls.
macro_rules! bitwise_impls {
    ($($name:ident => $op:ident),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`.")]
        pub fn $name(iter: &mut TensorIterator<'_>, _: &Tensor, _: &Tensor) -> Result<()> {
            bitwise_loop(iter, Logic::$op)
        }
    )*};
}

bitwise_impls!(
    bitwise_and_tensor_out => And, bitwise_or_tensor_out => Or, bitwise_xor_tensor_out => Xor,
);
