//! The CPU copy kernel (PyTorch's `copy_kernel` behind `copy_stub`): the
//! element loop of `copy_` and of `TensorIterator`'s dtype conversions,
//! registered for the CPU device type. The checks, broadcasting and
//! borrows are `aten-core`'s (`tensor_iterator::convert`).
//!
//! The loop walks both layouts with a multi-index, so it needs no memory
//! beyond the two tensors. Complex tensors copy to complex dtypes only.

use aten_core::tensor_iterator::convert::{CopyKernel, COPY_STUB};
use c10_core::tensor_impl::for_each_offset_pair;
use c10_core::{
    dispatch_dtype, Complex, Element, Error, Numeric, Result, ScalarType, TensorLayout,
};

fn unsupported(from: ScalarType, to: ScalarType) -> Error {
    Error::runtime(format!("conversion from {from} to {to} is not supported"))
}

/// Converts the elements of `src` (read at `src_strides` over `dst`'s
/// shape) into `dst` with `static_cast` semantics ([`Numeric::cast_from`]);
/// complex elements only to complex dtypes.
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
    let walk = Walk {
        shape,
        src_strides,
        dst_strides: dst.strides(),
        sp,
        dp,
    };
    use ScalarType::{ComplexDouble, ComplexFloat};
    // SAFETY: each arm converts from the element type `from` names to the
    // one `to` names; the rest is the caller's (see `Walk::convert`).
    unsafe {
        match (from, to) {
            (ComplexFloat, ComplexFloat) => walk.convert(|c: Complex<f32>| c),
            (ComplexDouble, ComplexDouble) => walk.convert(|c: Complex<f64>| c),
            (ComplexFloat, ComplexDouble) => {
                walk.convert(|c: Complex<f32>| Complex::new(f64::from(c.re), f64::from(c.im)))
            }
            (ComplexDouble, ComplexFloat) => {
                walk.convert(|c: Complex<f64>| Complex::new(c.re as f32, c.im as f32))
            }
            _ => dispatch_dtype!(from, S => {
                dispatch_dtype!(to, D => walk.convert(|v: S| <D as Numeric>::cast_from(v)),
                    _ => Err(unsupported(from, to)))
            }, _ => Err(unsupported(from, to))),
        }
    }
}

/// The two layouts a copy walks: `dst`'s shape, `src` read at
/// `src_strides`, from the first elements `sp` and `dp`.
struct Walk<'a> {
    shape: &'a [i64],
    src_strides: &'a [i64],
    dst_strides: &'a [i64],
    sp: *mut u8,
    dp: *mut u8,
}

impl Walk<'_> {
    /// Writes `convert` of each source element to its destination.
    ///
    /// # Safety
    ///
    /// `sp` and `dp` hold elements of `S` and `D`, and the walk stays inside
    /// their storages, which the caller borrows (see [`CopyKernel`]).
    unsafe fn convert<S: Element, D: Element>(&self, convert: impl Fn(S) -> D) -> Result<()> {
        let (s, d) = (self.sp as *const S, self.dp as *mut D);
        for_each_offset_pair(
            self.shape,
            self.src_strides,
            self.dst_strides,
            |n, so, ss, doff, ds| {
                for i in 0..n as isize {
                    // SAFETY: the offsets walk `dst`'s elements and the
                    // matching (broadcast) elements of `src`, which the
                    // caller guarantees stay inside their storages; the
                    // dtypes match `S`/`D`; the caller holds the borrows.
                    // Elements are read and written through raw pointers
                    // one at a time, so a source that overlaps the
                    // destination is no aliasing violation.
                    unsafe {
                        let v = s.offset(so + i * ss).read();
                        d.offset(doff + i * ds).write(convert(v));
                    }
                }
            },
        );
        Ok(())
    }
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
        // Complex elements copy (and widen) to complex dtypes only.
        let c = TensorBase::from_vec(
            vec![
                c10_core::Complex::new(1.0f32, -2.0),
                c10_core::Complex::new(3.0, 4.0),
            ],
            &[2],
        )
        .unwrap();
        let wide = TensorBase::empty(&[2], ScalarType::ComplexDouble, Device::CPU).unwrap();
        copy_into(&c, &wide).unwrap();
        assert_eq!(
            wide.to_vec::<c10_core::Complex<f64>>().unwrap()[1],
            c10_core::Complex::new(3.0, 4.0)
        );
        assert!(copy_into(&c, &back.as_strided(&[2], &[1], None).unwrap()).is_err());
        let meta = TensorBase::empty(&[3], ScalarType::Int, Device::META).unwrap();
        let err = copy_into(&meta, &src).unwrap_err();
        assert!(
            err.message().contains("Cannot copy out of meta tensor"),
            "{err}"
        );
        copy_into(&src, &meta).unwrap();
    }
}
