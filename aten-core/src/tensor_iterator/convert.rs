//! Dtype conversion copies: what `TensorIterator` uses to feed inputs of
//! another dtype to a computation and to hand a computation's result to an
//! output of another dtype (`static_cast` semantics), and what `copy_`
//! runs. This module holds the backend-neutral part (checks, broadcasting,
//! borrows); the element loop is each backend's [`CopyKernel`], found
//! through [`COPY_STUB`] by the device the data is on.

use c10_core::tensor_impl::{contiguous_strides, DimVector};
use c10_core::{DeviceType, Error, Result, ScalarType, StorageBorrow, TensorBase, TensorLayout};

use crate::dispatch_stub::{self, StubKernel};
use crate::Tensor;
use aten_dispatch::library::__linkme::distributed_slice;

/// Copies `src` into `dst` (same shape or broadcastable to it), converting
/// element types. Each tensor's layout is read once; the copy runs under a
/// shared borrow of `src`'s storage and an exclusive one of `dst`'s. A
/// source without data (Meta) cannot be copied into a tensor with data.
pub fn copy_into(src: &TensorBase, dst: &TensorBase) -> Result<()> {
    let (from, to) = (
        src.dtype()
            .ok_or_else(|| Error::runtime("undefined tensor"))?,
        dst.dtype()
            .ok_or_else(|| Error::runtime("undefined tensor"))?,
    );
    let (sl, dl) = match (src.layout(), dst.layout()) {
        (Some(s), Some(d)) => (s, d),
        _ => return Err(Error::runtime("undefined tensor")),
    };
    check_broadcast(sl.sizes(), dl.sizes())?;
    if !dl.storage().has_data() {
        // Meta outputs: nothing to write.
        return Ok(());
    }
    if !sl.storage().has_data() {
        let meta = src
            .device()
            .is_some_and(|d| d.device_type() == DeviceType::Meta);
        return Err(if meta {
            Error::not_implemented("Cannot copy out of meta tensor; no data!")
        } else {
            Error::runtime("Cannot copy out of a tensor that has no data")
        });
    }
    StorageBorrow::hold([(sl.storage(), false), (dl.storage(), true)], || {
        // SAFETY: both storages have data and are borrowed (the source
        // shared, the destination exclusively; one exclusive borrow when
        // they are the same storage).
        unsafe { convert_elements(&sl, from, &dl, to) }
    })?
}

/// PyTorch's error unless `src`'s sizes broadcast to `dst`'s.
fn check_broadcast(src: &[i64], dst: &[i64]) -> Result<()> {
    let shape = super::infer_size(dst, src)?;
    if shape != dst {
        return Err(Error::runtime(format!(
            "output with shape {dst:?} doesn't match the broadcast shape {shape:?}"
        )));
    }
    Ok(())
}

/// What a backend's copy kernel does (PyTorch's `copy_stub`): writes the
/// elements of `src` (of dtype `from`, broadcast to `dst`'s shape, the
/// source strides given for that shape: 0 on broadcast dimensions) into
/// `dst` (of dtype `to`), converting each.
///
/// # Safety
///
/// As [`convert_elements`]: both layouts' storages have data of the given
/// dtypes, `src_strides` keep every element inside `src`'s storage, and
/// the caller holds the borrows.
#[doc(alias = "copy_stub")]
pub type CopyKernel = unsafe fn(
    src: &TensorLayout,
    src_strides: &[i64],
    from: ScalarType,
    dst: &TensorLayout,
    to: ScalarType,
) -> Result<()>;

/// The copy kernels of the linked backends, by device type.
#[distributed_slice]
#[linkme(crate = crate::dispatch_stub::__linkme)]
pub static COPY_STUB: [StubKernel<CopyKernel>];

/// Writes the elements of `src` (of dtype `from`, broadcast to `dst`'s
/// shape) into `dst` (of dtype `to`), converting each, with the copy
/// kernel of the device the data is on.
///
/// # Safety
///
/// Both layouts' storages have data and are of the given dtypes, and the
/// caller holds a shared borrow of `src`'s storage and an exclusive one of
/// `dst`'s for the call (one exclusive borrow if they are one storage).
pub unsafe fn convert_elements(
    src: &TensorLayout,
    from: ScalarType,
    dst: &TensorLayout,
    to: ScalarType,
) -> Result<()> {
    check_broadcast(src.sizes(), dst.sizes())?;
    if from.element_size() != src.itemsize() || to.element_size() != dst.itemsize() {
        return Err(Error::internal(
            "convert_elements: dtype and layout disagree",
        ));
    }
    if dst.numel() == 0 {
        return Ok(());
    }
    if !src.storage().has_data() || !dst.storage().has_data() {
        return Err(Error::runtime("Cannot copy a tensor that has no data"));
    }
    // Source strides for the destination's shape (broadcast dims stride 0).
    let shape = dst.sizes();
    let lead = shape.len() - src.sizes().len();
    let src_strides: DimVector = (0..shape.len())
        .map(|i| match i.checked_sub(lead) {
            Some(d) if src.sizes()[d] != 1 => src.strides()[d],
            _ => 0,
        })
        .collect();
    // The copy runs where the data is: on the non-CPU device of the two
    // when they differ (a CUDA kernel copies to and from the host).
    let (sd, dd) = (
        src.storage().device().device_type(),
        dst.storage().device().device_type(),
    );
    let device = if dd == DeviceType::CPU { sd } else { dd };
    let kernel = dispatch_stub::find(&COPY_STUB, device).ok_or_else(|| {
        Error::not_implemented(format!(
            "copy_ from {sd:?} to {dd:?} has no kernel (is the backend linked?)"
        ))
    })?;
    // SAFETY: the caller's guarantees, and `src_strides` are `src`'s own
    // strides with broadcast dimensions (size 1 or missing) at 0, so they
    // reach only `src`'s elements.
    unsafe { kernel(src, &src_strides, from, dst, to) }
}

/// Strides for a copy of a tensor laid out as `layout` that keeps that
/// layout when it is dense and non-overlapping (PyTorch's `empty_like`
/// with `preserve_format`), else contiguous strides.
pub fn preserved_strides(layout: &TensorLayout) -> Vec<i64> {
    let (sizes, strides) = (layout.sizes(), layout.strides());
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by(|&a, &b| strides[a].cmp(&strides[b]).then(sizes[a].cmp(&sizes[b])));
    let mut dense = vec![0i64; sizes.len()];
    let mut acc = 1i64;
    let mut ok = true;
    for &d in &order {
        dense[d] = acc;
        if sizes[d] != 1 && strides[d] != acc {
            ok = false;
        }
        // The layout's element count fits in `i64`, and so does every
        // partial product of its sizes.
        acc = acc.saturating_mul(sizes[d].max(1));
    }
    if ok && layout.numel() > 0 && !layout.is_contiguous() {
        dense
    } else {
        contiguous_strides(sizes).to_vec()
    }
}

/// `t` itself when it has `dtype`, else [`to_dtype`].
pub fn to_dtype_if_needed(t: &Tensor, dtype: ScalarType) -> Result<Tensor> {
    if t.dtype() == Some(dtype) {
        return Ok(t.clone());
    }
    to_dtype(t, dtype)
}

/// A copy of `t` converted to `dtype` (`t.to(dtype)`), keeping a dense
/// layout (so that layout-following outputs still follow the original).
pub fn to_dtype(t: &Tensor, dtype: ScalarType) -> Result<Tensor> {
    let device = t
        .device()
        .ok_or_else(|| Error::runtime("undefined tensor"))?;
    let layout = t
        .layout()
        .ok_or_else(|| Error::runtime("undefined tensor"))?;
    let out =
        TensorBase::empty_strided(layout.sizes(), &preserved_strides(&layout), dtype, device)?;
    drop(layout);
    copy_into(t, &out)?;
    Ok(Tensor::from(out))
}
