//! `ufunc_inner_loop:`: the scalar and vector inner loops that ufunc codegen
//! turns into CPU and CUDA kernels of a structured function (torchgen's
//! `UfuncKey` and `UfuncInnerLoop`).
//!
//! The value is either one loop (`add (AllAndComplex, BFloat16, Half)`, for
//! [`UfuncKey::Generic`]) or a mapping from [`UfuncKey`] to a loop. A loop is
//! a name and, in parentheses, the dtypes it supports: dtype names
//! (`BFloat16`) or classes (`Integral`, `Floating`, `Complex`, `All`,
//! `AllAndComplex`, `FloatingAndComplex`).
//!
//! ```
//! use aten_codegen::{UfuncInnerLoop, UfuncKey};
//! use c10_core::ScalarType;
//!
//! let l = UfuncInnerLoop::parse("add (Floating, Half)", UfuncKey::Generic).unwrap();
//! assert_eq!(l.name, "add");
//! assert_eq!(l.supported_dtypes, [ScalarType::Float, ScalarType::Double, ScalarType::Half]);
//! ```

use c10_core::ScalarType;

/// Which kernel instantiations a ufunc inner loop is for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UfuncKey {
    /// A CUDA functor over both operands.
    CUDAFunctor,
    /// A CUDA functor with the other operand a CPU scalar.
    CUDAFunctorOnOther,
    /// A CUDA functor with `self` a CPU scalar.
    CUDAFunctorOnSelf,
    /// The CPU scalar loop.
    CPUScalar,
    /// The CPU vectorized loop.
    CPUVector,
    /// Fills the CUDA functors and `CPUScalar`.
    ScalarOnly,
    /// Fills every CUDA and CPU instantiation.
    Generic,
}

impl UfuncKey {
    /// Every key, in torchgen's order.
    pub const ALL: [UfuncKey; 7] = [
        UfuncKey::CUDAFunctor,
        UfuncKey::CUDAFunctorOnOther,
        UfuncKey::CUDAFunctorOnSelf,
        UfuncKey::CPUScalar,
        UfuncKey::CPUVector,
        UfuncKey::ScalarOnly,
        UfuncKey::Generic,
    ];

    /// The key's name (`Generic`).
    pub fn name(self) -> &'static str {
        match self {
            UfuncKey::CUDAFunctor => "CUDAFunctor",
            UfuncKey::CUDAFunctorOnOther => "CUDAFunctorOnOther",
            UfuncKey::CUDAFunctorOnSelf => "CUDAFunctorOnSelf",
            UfuncKey::CPUScalar => "CPUScalar",
            UfuncKey::CPUVector => "CPUVector",
            UfuncKey::ScalarOnly => "ScalarOnly",
            UfuncKey::Generic => "Generic",
        }
    }

    /// The key called `name`.
    pub fn parse(name: &str) -> Option<UfuncKey> {
        UfuncKey::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// One inner loop: its name and the dtypes it is instantiated for.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct UfuncInnerLoop {
    /// Which instantiations it serves.
    pub ufunc_key: UfuncKey,
    /// The loop's name (`add`).
    pub name: String,
    /// The dtypes, classes expanded, in the order written, without repeats.
    pub supported_dtypes: Vec<ScalarType>,
}

/// The dtypes ufunc loops may name, by their C++ names.
fn dtype(name: &str) -> Option<ScalarType> {
    Some(match name {
        "Byte" => ScalarType::Byte,
        "Char" => ScalarType::Char,
        "Short" => ScalarType::Short,
        "Int" => ScalarType::Int,
        "Long" => ScalarType::Long,
        "Half" => ScalarType::Half,
        "Float" => ScalarType::Float,
        "Double" => ScalarType::Double,
        "ComplexHalf" => ScalarType::ComplexHalf,
        "ComplexFloat" => ScalarType::ComplexFloat,
        "ComplexDouble" => ScalarType::ComplexDouble,
        "Bool" => ScalarType::Bool,
        "BFloat16" => ScalarType::BFloat16,
        _ => return None,
    })
}

/// The dtype classes (torchgen's `DTYPE_CLASSES`); `Integral` excludes
/// `Bool` and `Floating` the reduced-precision types.
fn dtype_class(name: &str) -> Option<&'static [ScalarType]> {
    use ScalarType::*;
    Some(match name {
        "Integral" => &[Byte, Char, Int, Long, Short],
        "Floating" => &[Float, Double],
        "Complex" => &[ComplexFloat, ComplexDouble],
        "All" => &[Byte, Char, Int, Long, Short, Float, Double],
        "AllAndComplex" => &[
            Byte,
            Char,
            Int,
            Long,
            Short,
            Float,
            Double,
            ComplexFloat,
            ComplexDouble,
        ],
        "FloatingAndComplex" => &[Float, Double, ComplexFloat, ComplexDouble],
        _ => return None,
    })
}

impl UfuncInnerLoop {
    /// Parses `NAME (DTYPE, ...)`.
    ///
    /// # Errors
    ///
    /// No parenthesised dtype list, an empty name, or an unknown dtype.
    pub fn parse(text: &str, ufunc_key: UfuncKey) -> Result<UfuncInnerLoop, String> {
        let malformed = || format!("bad ufunc inner loop '{text}' (expected 'NAME (DTYPE, ...)')");
        let (name, dtypes) = text.split_once(' ').ok_or_else(malformed)?;
        let dtypes = dtypes
            .trim()
            .strip_prefix('(')
            .and_then(|d| d.strip_suffix(')'))
            .ok_or_else(malformed)?;
        if name.is_empty() {
            return Err(malformed());
        }
        let mut supported_dtypes: Vec<ScalarType> = Vec::new();
        for d in dtypes.split(',').map(str::trim) {
            let single;
            let expanded: &[ScalarType] = match (dtype_class(d), dtype(d)) {
                (Some(class), _) => class,
                (None, Some(t)) => {
                    single = [t];
                    &single
                }
                (None, None) => {
                    return Err(format!("unknown dtype '{d}' in ufunc inner loop '{text}'"))
                }
            };
            for t in expanded {
                if !supported_dtypes.contains(t) {
                    supported_dtypes.push(*t);
                }
            }
        }
        Ok(UfuncInnerLoop {
            ufunc_key,
            name: name.to_string(),
            supported_dtypes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_expand_in_order_without_repeats() {
        let l = UfuncInnerLoop::parse(
            "add (AllAndComplex, BFloat16, Half, ComplexHalf, Float)",
            UfuncKey::Generic,
        )
        .unwrap();
        assert_eq!(l.supported_dtypes.len(), 12);
        assert_eq!(l.supported_dtypes[0], ScalarType::Byte);
        assert_eq!(l.supported_dtypes[11], ScalarType::ComplexHalf);
    }

    #[test]
    fn malformed() {
        assert!(UfuncInnerLoop::parse("add", UfuncKey::Generic).is_err());
        assert!(UfuncInnerLoop::parse("add Float", UfuncKey::Generic).is_err());
        assert!(UfuncInnerLoop::parse("add (Quux)", UfuncKey::Generic).is_err());
        assert_eq!(UfuncKey::parse("ScalarOnly"), Some(UfuncKey::ScalarOnly));
        assert_eq!(UfuncKey::parse("Vector"), None);
    }
}
