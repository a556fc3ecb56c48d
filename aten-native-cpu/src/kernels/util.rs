//! Helpers shared by the CPU kernels: wrapping Python numbers, filling a
//! meta function's outputs (directly when fresh, else through a
//! temporary), dtype dispatch by category and PyTorch's "not implemented
//! for" error.

use aten_core::structured::MetaOutput;
use aten_core::tensor_iterator::convert::copy_into;
use aten_core::Tensor;
use c10_core::{Error, LayoutRef, Result, ScalarType, TensorBase};

pub use aten_core::native::scalar_ops::wrapped_scalar_tensor as wrap;

/// `"name" not implemented for 'Dtype'` ([`Error::not_implemented_for`]).
pub fn not_implemented(name: &str, dtype: ScalarType) -> Error {
    Error::not_implemented_for(name, dtype)
}

/// Runs `$body` with `$T` bound to a floating element type, or fails with
/// `"$name" not implemented for 'Dtype'` (c10's `dispatch_dtype!` with the
/// kernels' error).
#[macro_export]
macro_rules! dispatch_floating {
    ($dtype:expr, $name:expr, $T:ident => $body:expr) => {
        c10_core::dispatch_dtype!(floating: $dtype, $T => $body,
            _ => Err($crate::kernels::util::not_implemented($name, $dtype)))
    };
}

/// Runs `$body` with `$T` bound to an integral element type (bool
/// included), or fails with `"$name" not implemented for 'Dtype'`.
#[macro_export]
macro_rules! dispatch_integral {
    ($dtype:expr, $name:expr, $T:ident => $body:expr) => {
        c10_core::dispatch_dtype!(integral: $dtype, $T => $body,
            _ => Err($crate::kernels::util::not_implemented($name, $dtype)))
    };
}

/// Runs `$body` with `$T` bound to any supported element type.
#[macro_export]
macro_rules! dispatch_all {
    ($dtype:expr, $name:expr, $T:ident => $body:expr) => {
        c10_core::dispatch_dtype!($dtype, $T => $body,
            _ => Err($crate::kernels::util::not_implemented($name, $dtype)))
    };
}

/// A snapshot of the layout of a defined tensor: a kernel takes one and
/// computes every shape and address from it.
pub fn layout_of(t: &TensorBase) -> Result<LayoutRef<'_>> {
    t.layout().ok_or_else(|| Error::runtime("undefined tensor"))
}

/// The dtype of a defined tensor.
pub fn dtype_of(t: &TensorBase) -> Result<ScalarType> {
    t.dtype().ok_or_else(|| Error::runtime("undefined tensor"))
}

/// The device of `t` (CPU for an undefined tensor).
pub fn device_of(t: &TensorBase) -> c10_core::Device {
    t.device().unwrap_or(c10_core::Device::CPU)
}

/// Runs `compute` on a fresh contiguous output: the meta function's own
/// when it allocated it, else a temporary copied into the given output
/// afterwards (an `out=` or in-place output may overlap the inputs or be
/// laid out otherwise).
pub fn with_fresh_output(
    meta: &MetaOutput,
    compute: impl FnOnce(&TensorBase) -> Result<()>,
) -> Result<()> {
    with_fresh_output_of(meta.output(), meta.is_fresh(), compute)
}

/// [`with_fresh_output`] for one output `out` of a meta function's,
/// `fresh` when the call allocated it.
pub fn with_fresh_output_of(
    out: &Tensor,
    fresh: bool,
    compute: impl FnOnce(&TensorBase) -> Result<()>,
) -> Result<()> {
    if fresh && out.is_contiguous() {
        return compute(out.base());
    }
    let tmp = TensorBase::empty(&out.sizes(), dtype_of(out)?, device_of(out))?;
    compute(&tmp)?;
    copy_into(&tmp, out.base())
}

/// Writes `values` (row-major) into `out`, one output of a meta
/// function's (`fresh` when the call allocated it), through
/// [`with_fresh_output_of`].
pub fn write_output<T: c10_core::Element>(out: &Tensor, fresh: bool, values: &[T]) -> Result<()> {
    with_fresh_output_of(out, fresh, |o| {
        o.with_data_mut::<T, _>(|dst| {
            if dst.len() != values.len() {
                return Err(Error::internal("write_output: the output's size differs"));
            }
            dst.copy_from_slice(values);
            Ok(())
        })?
    })
}

/// An empty vector with room for `n` elements, or PyTorch's out-of-memory
/// error: a kernel's scratch space grows with its tensors, whose sizes
/// may be hostile.
pub fn try_vec_with_capacity<T>(n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        c10_core::tensor_impl::out_of_memory(n.saturating_mul(std::mem::size_of::<T>()))
    })?;
    Ok(v)
}

/// `n` copies of `value`, or PyTorch's out-of-memory error.
pub fn try_vec_filled<T: Clone>(value: T, n: usize) -> Result<Vec<T>> {
    let mut v = try_vec_with_capacity(n)?;
    v.resize(n, value);
    Ok(v)
}

/// Whether `x` is NaN (never for integers and bool).
#[inline]
#[allow(clippy::eq_op)]
pub fn is_nan<T: PartialEq + Copy>(x: T) -> bool {
    x != x
}
