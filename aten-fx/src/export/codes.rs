//! The enumeration codes of `torch/_export/serde/schema.py` (`ScalarType`,
//! `Layout`, `MemoryFormat`), which are not c10's numbers, and their c10
//! values.

use c10_core::{Layout, MemoryFormat, ScalarType};

/// The dtype with serialization code `code`, if this project has it.
pub(crate) fn scalar_type(code: i64) -> Option<ScalarType> {
    Some(match code {
        1 => ScalarType::Byte,
        2 => ScalarType::Char,
        3 => ScalarType::Short,
        4 => ScalarType::Int,
        5 => ScalarType::Long,
        6 => ScalarType::Half,
        7 => ScalarType::Float,
        8 => ScalarType::Double,
        9 => ScalarType::ComplexHalf,
        10 => ScalarType::ComplexFloat,
        11 => ScalarType::ComplexDouble,
        12 => ScalarType::Bool,
        13 => ScalarType::BFloat16,
        _ => return None,
    })
}

/// The name `torch` prints for serialization code `code` (for errors about
/// dtypes this project lacks).
pub(crate) fn scalar_type_name(code: i64) -> String {
    match code {
        0 => "unknown".into(),
        28 => "uint16".into(),
        29 => "float8_e4m3fn".into(),
        30 => "float8_e5m2".into(),
        31 => "float8_e4m3fnuz".into(),
        32 => "float8_e5m2fnuz".into(),
        33 => "float8_e8m0fnu".into(),
        34 => "uint32".into(),
        35 => "uint64".into(),
        _ => match scalar_type(code) {
            Some(t) => t.python_name().into(),
            None => format!("code {code}"),
        },
    }
}

/// The layout with serialization code `code`.
pub(crate) fn layout(code: i64) -> Option<Layout> {
    Some(match code {
        1 => Layout::Sparse,
        2 => Layout::SparseCsr,
        3 => Layout::SparseCsc,
        4 => Layout::SparseBsr,
        5 => Layout::SparseBsc,
        6 => Layout::Mkldnn,
        7 => Layout::Strided,
        _ => return None,
    })
}

/// The memory format with serialization code `code`.
pub(crate) fn memory_format(code: i64) -> Option<MemoryFormat> {
    Some(match code {
        1 => MemoryFormat::Contiguous,
        2 => MemoryFormat::ChannelsLast,
        3 => MemoryFormat::ChannelsLast3d,
        4 => MemoryFormat::Preserve,
        _ => return None,
    })
}
