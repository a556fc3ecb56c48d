//! Dtype conversion copies: what `TensorIterator` uses to feed inputs of
//! another dtype to a computation and to hand a computation's result to an
//! output of another dtype (`static_cast` semantics, see
//! [`Numeric`]), and what `copy_` runs on CPU.
//!
//! A copy walks both tensors' layouts (one snapshot of each) with a
//! multi-index, so it needs no memory beyond the two tensors.

use c10_core::tensor_impl::{contiguous_strides, for_each_offset_pair, DimVector};
use c10_core::{
    dispatch_dtype, DeviceType, Error, Numeric, Result, ScalarType, StorageBorrow, TensorBase,
    TensorLayout,
};

use crate::Tensor;

fn unsupported(from: ScalarType, to: ScalarType) -> Error {
    Error::runtime(format!("conversion from {from} to {to} is not supported"))
}

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

/// Writes the elements of `src` (of dtype `from`, broadcast to `dst`'s
/// shape) into `dst` (of dtype `to`), converting each.
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
    let (Some(sp), Some(dp)) = (src.data_ptr(), dst.data_ptr()) else {
        return Err(Error::runtime("Cannot copy a tensor that has no data"));
    };
    // Source strides for the destination's shape (broadcast dims stride 0).
    let shape = dst.sizes();
    let lead = shape.len() - src.sizes().len();
    let src_strides: DimVector = (0..shape.len())
        .map(|i| match i.checked_sub(lead) {
            Some(d) if src.sizes()[d] != 1 => src.strides()[d],
            _ => 0,
        })
        .collect();
    dispatch_dtype!(from, S => {
        dispatch_dtype!(to, D => {
            let (s, d) = (sp as *const S, dp as *mut D);
            for_each_offset_pair(shape, &src_strides, dst.strides(), |n, so, ss, doff, ds| {
                for i in 0..n as isize {
                    // SAFETY: the offsets walk `dst`'s elements and the
                    // matching (broadcast) elements of `src`, which their
                    // layouts keep inside their storages; the dtypes match
                    // `S`/`D`; the caller holds the borrows. Elements are
                    // read and written through raw pointers one at a time,
                    // so a source that overlaps the destination is no
                    // aliasing violation.
                    unsafe {
                        let v = s.offset(so + i * ss).read();
                        d.offset(doff + i * ds).write(<D as Numeric>::cast_from(v));
                    }
                }
            });
            Ok(())
        }, _ => Err(unsupported(from, to)))
    }, _ => Err(unsupported(from, to)))
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

#[cfg(test)]
mod tests {
    use super::*;
    use c10_core::Device;

    #[test]
    fn copies_broadcast_and_convert_without_scratch() {
        let src = TensorBase::from_vec(vec![1i32, 2, 3], &[3]).unwrap();
        let dst = TensorBase::empty(&[2, 3], ScalarType::Double, Device::CPU).unwrap();
        copy_into(&src, &dst).unwrap();
        assert_eq!(dst.to_vec::<f64>().unwrap(), vec![1., 2., 3., 1., 2., 3.]);
        let t = dst.as_strided(&[3, 2], &[1, 3], None).unwrap();
        let back = TensorBase::empty(&[3, 2], ScalarType::Long, Device::CPU).unwrap();
        copy_into(&t, &back).unwrap();
        assert_eq!(back.to_vec::<i64>().unwrap(), vec![1, 1, 2, 2, 3, 3]);
        assert!(copy_into(&back, &src).is_err());
        let meta = TensorBase::empty(&[3], ScalarType::Int, Device::META).unwrap();
        let err = copy_into(&meta, &src).unwrap_err();
        assert!(
            err.message().contains("Cannot copy out of meta tensor"),
            "{err}"
        );
        copy_into(&src, &meta).unwrap();
    }
}
