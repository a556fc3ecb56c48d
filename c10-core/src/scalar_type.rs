//! `ScalarType` (a tensor's dtype), with PyTorch's numeric values and names.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;

/// `c10::ScalarType`. The discriminants are PyTorch's (a dtype travels through
/// an `IValue` as this integer, as in PyTorch).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(i8)]
#[allow(missing_docs)]
pub enum ScalarType {
    Byte = 0,
    Char = 1,
    Short = 2,
    Int = 3,
    Long = 4,
    Half = 5,
    Float = 6,
    Double = 7,
    ComplexHalf = 8,
    ComplexFloat = 9,
    ComplexDouble = 10,
    Bool = 11,
    QInt8 = 12,
    QUInt8 = 13,
    QInt32 = 14,
    BFloat16 = 15,
    /// `torch.bcomplex32`, complex with bfloat16 parts, new in PyTorch 2.15.
    /// Its numeric value in PyTorch is not in the oracle data; this project
    /// uses 46 until it can be checked.
    ComplexBFloat16 = 46,
}

const ALL: [ScalarType; 17] = [
    ScalarType::Byte,
    ScalarType::Char,
    ScalarType::Short,
    ScalarType::Int,
    ScalarType::Long,
    ScalarType::Half,
    ScalarType::Float,
    ScalarType::Double,
    ScalarType::ComplexHalf,
    ScalarType::ComplexFloat,
    ScalarType::ComplexDouble,
    ScalarType::Bool,
    ScalarType::QInt8,
    ScalarType::QUInt8,
    ScalarType::QInt32,
    ScalarType::BFloat16,
    ScalarType::ComplexBFloat16,
];

impl ScalarType {
    /// The dtype with PyTorch's value `v`.
    pub fn from_i64(v: i64) -> Result<ScalarType, Error> {
        ALL.iter()
            .copied()
            .find(|t| *t as i64 == v)
            .ok_or_else(|| Error::runtime(format!("Unknown ScalarType {v}")))
    }

    /// Bytes per element (`elementSize`).
    pub const fn element_size(self) -> usize {
        match self {
            ScalarType::Byte | ScalarType::Char | ScalarType::Bool => 1,
            ScalarType::QInt8 | ScalarType::QUInt8 => 1,
            ScalarType::Short | ScalarType::Half | ScalarType::BFloat16 => 2,
            ScalarType::Int | ScalarType::Float | ScalarType::QInt32 => 4,
            ScalarType::ComplexHalf | ScalarType::ComplexBFloat16 => 4,
            ScalarType::Long | ScalarType::Double | ScalarType::ComplexFloat => 8,
            ScalarType::ComplexDouble => 16,
        }
    }

    /// `isFloatingType`.
    pub const fn is_floating_point(self) -> bool {
        matches!(
            self,
            ScalarType::Half | ScalarType::Float | ScalarType::Double | ScalarType::BFloat16
        )
    }

    /// `isComplexType`.
    pub const fn is_complex(self) -> bool {
        matches!(
            self,
            ScalarType::ComplexHalf
                | ScalarType::ComplexFloat
                | ScalarType::ComplexDouble
                | ScalarType::ComplexBFloat16
        )
    }

    /// The real type of a complex type's parts; other types unchanged
    /// (`toRealValueType`).
    pub const fn to_real_value_type(self) -> ScalarType {
        match self {
            ScalarType::ComplexDouble => ScalarType::Double,
            ScalarType::ComplexHalf => ScalarType::Half,
            ScalarType::ComplexBFloat16 => ScalarType::BFloat16,
            ScalarType::ComplexFloat => ScalarType::Float,
            other => other,
        }
    }

    /// `isIntegralType(t, include_bool)`.
    pub const fn is_integral(self, include_bool: bool) -> bool {
        match self {
            ScalarType::Byte
            | ScalarType::Char
            | ScalarType::Short
            | ScalarType::Int
            | ScalarType::Long => true,
            ScalarType::Bool => include_bool,
            _ => false,
        }
    }

    /// C++ name (`Float`), as `toString(ScalarType)` prints it.
    pub const fn name(self) -> &'static str {
        match self {
            ScalarType::Byte => "Byte",
            ScalarType::Char => "Char",
            ScalarType::Short => "Short",
            ScalarType::Int => "Int",
            ScalarType::Long => "Long",
            ScalarType::Half => "Half",
            ScalarType::Float => "Float",
            ScalarType::Double => "Double",
            ScalarType::ComplexHalf => "ComplexHalf",
            ScalarType::ComplexFloat => "ComplexFloat",
            ScalarType::ComplexDouble => "ComplexDouble",
            ScalarType::Bool => "Bool",
            ScalarType::QInt8 => "QInt8",
            ScalarType::QUInt8 => "QUInt8",
            ScalarType::QInt32 => "QInt32",
            ScalarType::BFloat16 => "BFloat16",
            ScalarType::ComplexBFloat16 => "ComplexBFloat16",
        }
    }

    /// The name `caffe2::TypeMeta` prints in messages (`float`, `long
    /// int`): the C++ type's name.
    #[doc(alias = "TypeMeta")]
    pub const fn type_meta_name(self) -> &'static str {
        match self {
            ScalarType::Float => "float",
            ScalarType::Double => "double",
            ScalarType::Half => "c10::Half",
            ScalarType::BFloat16 => "c10::BFloat16",
            ScalarType::Long => "long int",
            ScalarType::Int => "int",
            ScalarType::Short => "short int",
            ScalarType::Char => "signed char",
            ScalarType::Byte => "unsigned char",
            ScalarType::Bool => "bool",
            ScalarType::ComplexFloat => "c10::complex<float>",
            ScalarType::ComplexDouble => "c10::complex<double>",
            _ => self.name(),
        }
    }

    /// Python name without the `torch.` prefix (`float32`).
    pub const fn python_name(self) -> &'static str {
        match self {
            ScalarType::Byte => "uint8",
            ScalarType::Char => "int8",
            ScalarType::Short => "int16",
            ScalarType::Int => "int32",
            ScalarType::Long => "int64",
            ScalarType::Half => "float16",
            ScalarType::Float => "float32",
            ScalarType::Double => "float64",
            ScalarType::ComplexHalf => "complex32",
            ScalarType::ComplexFloat => "complex64",
            ScalarType::ComplexDouble => "complex128",
            ScalarType::Bool => "bool",
            ScalarType::QInt8 => "qint8",
            ScalarType::QUInt8 => "quint8",
            ScalarType::QInt32 => "qint32",
            ScalarType::BFloat16 => "bfloat16",
            ScalarType::ComplexBFloat16 => "bcomplex32",
        }
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// Parses the C++ name (`Float`), the Python name (`float32`, with or
/// without `torch.`) or a Python alias (`float`, `long`, `half` ...).
impl FromStr for ScalarType {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.strip_prefix("torch.").unwrap_or(s);
        let alias = match s {
            "float" => Some(ScalarType::Float),
            "double" => Some(ScalarType::Double),
            "half" => Some(ScalarType::Half),
            "long" => Some(ScalarType::Long),
            "int" => Some(ScalarType::Int),
            "short" => Some(ScalarType::Short),
            "cfloat" => Some(ScalarType::ComplexFloat),
            "cdouble" => Some(ScalarType::ComplexDouble),
            _ => None,
        };
        alias
            .or_else(|| {
                ALL.iter()
                    .copied()
                    .find(|t| t.name() == s || t.python_name() == s)
            })
            .ok_or_else(|| Error::runtime(format!("unknown dtype: {s}")))
    }
}
