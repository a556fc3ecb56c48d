//! The ten dtypes the CUDA kernel templates are instantiated for, and what
//! a template needs to know of each: its CUDA C++ type, its short name in
//! entry points, and PyTorch's compute (`opmath_type`) and accumulate
//! (`acc_type`) types.

use c10_core::ScalarType;

/// A dtype a CUDA kernel can be instantiated for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dtype {
    /// `torch.float32`, CUDA `float`.
    Float32,
    /// `torch.float64`, CUDA `double`.
    Float64,
    /// `torch.float16`, CUDA `__half`.
    Float16,
    /// `torch.bfloat16`, CUDA `__nv_bfloat16`.
    BFloat16,
    /// `torch.int8`, CUDA `signed char`.
    Int8,
    /// `torch.uint8`, CUDA `unsigned char`.
    UInt8,
    /// `torch.int16`, CUDA `short`.
    Int16,
    /// `torch.int32`, CUDA `int`.
    Int32,
    /// `torch.int64`, CUDA `long long`.
    Int64,
    /// `torch.bool`, CUDA `bool`.
    Bool,
}

impl Dtype {
    /// Every dtype, floating first.
    pub const ALL: [Dtype; 10] = [
        Dtype::Float32,
        Dtype::Float64,
        Dtype::Float16,
        Dtype::BFloat16,
        Dtype::Int8,
        Dtype::UInt8,
        Dtype::Int16,
        Dtype::Int32,
        Dtype::Int64,
        Dtype::Bool,
    ];

    /// The dtype of a `ScalarType`, or `None` for the ones no CUDA kernel
    /// is instantiated for (complex, quantized).
    pub fn from_scalar_type(scalar_type: ScalarType) -> Option<Dtype> {
        Some(match scalar_type {
            ScalarType::Float => Dtype::Float32,
            ScalarType::Double => Dtype::Float64,
            ScalarType::Half => Dtype::Float16,
            ScalarType::BFloat16 => Dtype::BFloat16,
            ScalarType::Char => Dtype::Int8,
            ScalarType::Byte => Dtype::UInt8,
            ScalarType::Short => Dtype::Int16,
            ScalarType::Int => Dtype::Int32,
            ScalarType::Long => Dtype::Int64,
            ScalarType::Bool => Dtype::Bool,
            _ => return None,
        })
    }

    /// The `ScalarType` of this dtype.
    pub fn scalar_type(self) -> ScalarType {
        match self {
            Dtype::Float32 => ScalarType::Float,
            Dtype::Float64 => ScalarType::Double,
            Dtype::Float16 => ScalarType::Half,
            Dtype::BFloat16 => ScalarType::BFloat16,
            Dtype::Int8 => ScalarType::Char,
            Dtype::UInt8 => ScalarType::Byte,
            Dtype::Int16 => ScalarType::Short,
            Dtype::Int32 => ScalarType::Int,
            Dtype::Int64 => ScalarType::Long,
            Dtype::Bool => ScalarType::Bool,
        }
    }

    /// The CUDA C++ type of an element.
    pub fn cuda_type(self) -> &'static str {
        match self {
            Dtype::Float32 => "float",
            Dtype::Float64 => "double",
            Dtype::Float16 => "__half",
            Dtype::BFloat16 => "__nv_bfloat16",
            Dtype::Int8 => "signed char",
            Dtype::UInt8 => "unsigned char",
            Dtype::Int16 => "short",
            Dtype::Int32 => "int",
            Dtype::Int64 => "long long",
            Dtype::Bool => "bool",
        }
    }

    /// The short name used in entry points (`f32`, `bf16`, `b8`, ...).
    pub fn short_name(self) -> &'static str {
        match self {
            Dtype::Float32 => "f32",
            Dtype::Float64 => "f64",
            Dtype::Float16 => "f16",
            Dtype::BFloat16 => "bf16",
            Dtype::Int8 => "i8",
            Dtype::UInt8 => "u8",
            Dtype::Int16 => "i16",
            Dtype::Int32 => "i32",
            Dtype::Int64 => "i64",
            Dtype::Bool => "b8",
        }
    }

    /// Whether this is a floating dtype.
    pub fn is_floating(self) -> bool {
        matches!(
            self,
            Dtype::Float32 | Dtype::Float64 | Dtype::Float16 | Dtype::BFloat16
        )
    }

    /// Whether this is an integer dtype (bool excluded).
    pub fn is_integral(self) -> bool {
        matches!(
            self,
            Dtype::Int8 | Dtype::UInt8 | Dtype::Int16 | Dtype::Int32 | Dtype::Int64
        )
    }

    /// The type element-wise arithmetic happens in (PyTorch's
    /// `opmath_type`): float for the 16-bit floats, the dtype itself
    /// otherwise.
    pub fn opmath(self) -> Dtype {
        match self {
            Dtype::Float16 | Dtype::BFloat16 => Dtype::Float32,
            other => other,
        }
    }

    /// The type reductions and scans accumulate in (PyTorch's CUDA
    /// `acc_type`): float for float and the 16-bit floats, double for
    /// double, int64 for the integers, bool for bool.
    pub fn acc(self) -> Dtype {
        match self {
            Dtype::Float32 | Dtype::Float16 | Dtype::BFloat16 => Dtype::Float32,
            Dtype::Float64 => Dtype::Float64,
            Dtype::Bool => Dtype::Bool,
            _ => Dtype::Int64,
        }
    }

    /// The size of an element in bytes.
    pub fn element_size(self) -> usize {
        self.scalar_type().element_size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_types_round_trip() {
        for dtype in Dtype::ALL {
            assert_eq!(Dtype::from_scalar_type(dtype.scalar_type()), Some(dtype));
        }
        assert_eq!(Dtype::from_scalar_type(ScalarType::ComplexFloat), None);
    }

    #[test]
    fn short_names_are_distinct() {
        let mut names: Vec<_> = Dtype::ALL.iter().map(|d| d.short_name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Dtype::ALL.len());
    }

    #[test]
    fn compute_and_accumulate_types_follow_pytorch() {
        assert_eq!(Dtype::Float16.opmath(), Dtype::Float32);
        assert_eq!(Dtype::Int8.opmath(), Dtype::Int8);
        assert_eq!(Dtype::BFloat16.acc(), Dtype::Float32);
        assert_eq!(Dtype::Int16.acc(), Dtype::Int64);
        assert_eq!(Dtype::Float64.acc(), Dtype::Float64);
    }
}
