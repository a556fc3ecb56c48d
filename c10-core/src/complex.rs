//! `Complex<T>`: a complex number of two parts (`c10::complex<T>`), the
//! element type of the complex dtypes (complex64 is `Complex<f32>`,
//! complex128 `Complex<f64>`) and, as [`Complex64`](crate::Complex64), the
//! payload of complex scalars.

/// A complex number (`c10::complex<T>`): the real part, then the imaginary
/// part, laid out as C++ lays them out.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Default)]
pub struct Complex<T> {
    /// Real part.
    pub re: T,
    /// Imaginary part.
    pub im: T,
}

impl<T> Complex<T> {
    /// The number `re + im * i`.
    pub const fn new(re: T, im: T) -> Complex<T> {
        Complex { re, im }
    }
}

#[cfg(test)]
mod tests {
    use super::Complex;
    use crate::{Element, ScalarType, TensorBase};

    #[test]
    fn complex_elements_have_their_dtypes_size() {
        assert_eq!(
            std::mem::size_of::<Complex<f32>>(),
            ScalarType::ComplexFloat.element_size()
        );
        assert_eq!(
            std::mem::size_of::<Complex<f64>>(),
            ScalarType::ComplexDouble.element_size()
        );
        assert_eq!(<Complex<f32>>::DTYPE, ScalarType::ComplexFloat);
    }

    #[test]
    fn complex_tensors_are_made_viewed_and_read() {
        let data: Vec<Complex<f64>> = (0..6)
            .map(|i| Complex::new(i as f64, -(i as f64)))
            .collect();
        let t = TensorBase::from_vec(data, &[2, 3]).unwrap();
        assert_eq!(t.dtype(), Some(ScalarType::ComplexDouble));
        // A transposed view reads in its own logical order.
        let v = t.as_strided(&[3, 2], &[1, 3], None).unwrap();
        let read = v.to_vec::<Complex<f64>>().unwrap();
        assert_eq!(read[1], Complex::new(3.0, -3.0));
        assert!(v.to_vec::<Complex<f32>>().is_err());
    }
}
