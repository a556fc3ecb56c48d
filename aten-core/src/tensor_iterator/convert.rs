//! Dtype conversion copies: what `TensorIterator` uses to feed inputs of
//! another dtype to a computation and to hand a computation's result to an
//! output of another dtype (`static_cast` semantics, see
//! [`Numeric`]).

use c10_core::{dispatch_dtype, Error, Numeric, Result, ScalarType, StorageBorrow, TensorBase};

use crate::Tensor;

fn unsupported(from: ScalarType, to: ScalarType) -> Error {
    Error::runtime(format!("conversion from {from} to {to} is not supported"))
}

/// Copies `src` into `dst` (same shape or broadcastable to it), converting
/// element types.
pub fn copy_into(src: &TensorBase, dst: &TensorBase) -> Result<()> {
    let (from, to) = (
        src.dtype()
            .ok_or_else(|| Error::runtime("undefined tensor"))?,
        dst.dtype()
            .ok_or_else(|| Error::runtime("undefined tensor"))?,
    );
    let shape = super::infer_size(dst.sizes(), src.sizes())?;
    if shape != dst.sizes() {
        return Err(Error::runtime(format!(
            "output with shape {:?} doesn't match the broadcast shape {shape:?}",
            dst.sizes()
        )));
    }
    let (sl, dl) = match (src.layout(), dst.layout()) {
        (Some(s), Some(d)) => (s, d),
        _ => return Err(Error::runtime("undefined tensor")),
    };
    let (Some(sp), Some(dp)) = (sl.storage().data_ptr(), dl.storage().data_ptr()) else {
        // Meta tensors: nothing to copy.
        return Ok(());
    };
    // Source strides for the destination shape (broadcast dims stride 0).
    let offset = shape.len() - src.dim();
    let src_strides: Vec<i64> = (0..shape.len())
        .map(|i| {
            if i < offset || sl.sizes()[i - offset] == 1 {
                0
            } else {
                sl.strides()[i - offset]
            }
        })
        .collect();
    let _borrow = StorageBorrow::new([(sl.storage(), false), (dl.storage(), true)]);
    let mut src_offsets = Vec::with_capacity(dst.numel() as usize);
    c10_core::tensor_impl::for_each_offset(&shape, &src_strides, sl.storage_offset(), |o| {
        src_offsets.push(o)
    });
    let mut dst_offsets = Vec::with_capacity(src_offsets.len());
    c10_core::tensor_impl::for_each_offset(dl.sizes(), dl.strides(), dl.storage_offset(), |o| {
        dst_offsets.push(o)
    });
    dispatch_dtype!(from, S => {
        dispatch_dtype!(to, D => {
            let (s, d) = (sp.as_ptr() as *const S, dp.as_ptr() as *mut D);
            for (so, dof) in src_offsets.iter().zip(&dst_offsets) {
                // SAFETY: the offsets come from the views' sizes and strides,
                // which lie inside their storages; the dtypes match `S`/`D`;
                // the borrows keep other kernels away. Overlapping source and
                // destination (one storage) is borrowed exclusively.
                unsafe {
                    *d.add(*dof as usize) = <D as Numeric>::cast_from(*s.add(*so as usize));
                }
            }
            Ok(())
        }, _ => Err(unsupported(from, to)))
    }, _ => Err(unsupported(from, to)))
}

/// Strides for a copy of `t` that keeps its layout when it is dense and
/// non-overlapping (PyTorch's `empty_like` with `preserve_format`), else
/// contiguous strides.
pub fn preserved_strides(t: &TensorBase) -> Vec<i64> {
    let (sizes, strides) = (t.sizes(), t.strides());
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
        acc *= sizes[d].max(1);
    }
    if ok && !sizes.contains(&0) && !t.is_contiguous() {
        dense
    } else {
        c10_core::tensor_impl::contiguous_strides(sizes).to_vec()
    }
}

/// A copy of `t` converted to `dtype` (`t.to(dtype)`), keeping a dense
/// layout (so that layout-following outputs still follow the original).
pub fn to_dtype(t: &Tensor, dtype: ScalarType) -> Result<Tensor> {
    let device = t
        .device()
        .ok_or_else(|| Error::runtime("undefined tensor"))?;
    let out = TensorBase::empty_strided(t.sizes(), &preserved_strides(t), dtype, device)?;
    copy_into(t, &out)?;
    Ok(Tensor::from(out))
}
