//! The CPU copy kernel (PyTorch's `copy_kernel` behind `copy_stub`): the
//! element loop of `copy_` and of `TensorIterator`'s dtype conversions,
//! registered for the CPU device type. The checks, broadcasting and
//! borrows are `aten-core`'s (`tensor_iterator::convert`).
//!
//! The loop walks both layouts with a multi-index, so it needs no memory
//! beyond the two tensors.

use aten_core::tensor_iterator::convert::{CopyKernel, COPY_STUB};
use c10_core::tensor_impl::for_each_offset_pair;
use c10_core::{dispatch_dtype, Error, Numeric, Result, ScalarType, TensorLayout};

fn unsupported(from: ScalarType, to: ScalarType) -> Error {
    Error::runtime(format!("conversion from {from} to {to} is not supported"))
}

/// Converts the elements of `src` (read at `src_strides` over `dst`'s
/// shape) into `dst` with `static_cast` semantics ([`Numeric::cast_from`]).
///
/// # Safety
///
/// See [`CopyKernel`].
unsafe fn copy_kernel(
    src: &TensorLayout,
    src_strides: &[i64],
    from: ScalarType,
    dst: &TensorLayout,
    to: ScalarType,
) -> Result<()> {
    let (Some(sp), Some(dp)) = (src.data_ptr(), dst.data_ptr()) else {
        return Err(Error::runtime("Cannot copy a tensor that has no data"));
    };
    let shape = dst.sizes();
    if src_strides.len() != shape.len() {
        return Err(Error::internal("copy_kernel: strides and shape disagree"));
    }
    dispatch_dtype!(from, S => {
        dispatch_dtype!(to, D => {
            let (s, d) = (sp as *const S, dp as *mut D);
            for_each_offset_pair(shape, src_strides, dst.strides(), |n, so, ss, doff, ds| {
                for i in 0..n as isize {
                    // SAFETY: the offsets walk `dst`'s elements and the
                    // matching (broadcast) elements of `src`, which the
                    // caller guarantees stay inside their storages; the
                    // dtypes match `S`/`D`; the caller holds the borrows.
                    // Elements are read and written through raw pointers one
                    // at a time, so a source that overlaps the destination
                    // is no aliasing violation.
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

aten_core::register_dispatch!(COPY_STUB, CopyKernel, CPU, copy_kernel);

#[cfg(test)]
mod tests {
    use aten_core::tensor_iterator::convert::copy_into;
    use c10_core::{Device, ScalarType, TensorBase};

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
