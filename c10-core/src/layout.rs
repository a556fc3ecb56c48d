//! `Layout` and `MemoryFormat`, with PyTorch's numeric values (both travel
//! through an `IValue` as integers, as in PyTorch).

use std::fmt;

use crate::error::Error;

/// `c10::Layout`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(i8)]
#[allow(missing_docs)]
pub enum Layout {
    Strided = 0,
    Sparse = 1,
    SparseCsr = 2,
    Mkldnn = 3,
    SparseCsc = 4,
    SparseBsr = 5,
    SparseBsc = 6,
    Jagged = 7,
}

impl Layout {
    /// The layout with PyTorch's value `v`.
    pub fn from_i64(v: i64) -> Result<Layout, Error> {
        Ok(match v {
            0 => Layout::Strided,
            1 => Layout::Sparse,
            2 => Layout::SparseCsr,
            3 => Layout::Mkldnn,
            4 => Layout::SparseCsc,
            5 => Layout::SparseBsr,
            6 => Layout::SparseBsc,
            7 => Layout::Jagged,
            _ => return Err(Error::runtime(format!("Unknown layout {v}"))),
        })
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Layout::Strided => "Strided",
            Layout::Sparse => "Sparse",
            Layout::SparseCsr => "SparseCsr",
            Layout::Mkldnn => "Mkldnn",
            Layout::SparseCsc => "SparseCsc",
            Layout::SparseBsr => "SparseBsr",
            Layout::SparseBsc => "SparseBsc",
            Layout::Jagged => "Jagged",
        };
        f.pad(name)
    }
}

/// `c10::MemoryFormat`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(i8)]
#[allow(missing_docs)]
pub enum MemoryFormat {
    Contiguous = 0,
    Preserve = 1,
    ChannelsLast = 2,
    ChannelsLast3d = 3,
}

impl MemoryFormat {
    /// The memory format with PyTorch's value `v`.
    pub fn from_i64(v: i64) -> Result<MemoryFormat, Error> {
        Ok(match v {
            0 => MemoryFormat::Contiguous,
            1 => MemoryFormat::Preserve,
            2 => MemoryFormat::ChannelsLast,
            3 => MemoryFormat::ChannelsLast3d,
            _ => return Err(Error::runtime(format!("Unknown memory format {v}"))),
        })
    }
}

impl fmt::Display for MemoryFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            MemoryFormat::Contiguous => "Contiguous",
            MemoryFormat::Preserve => "Preserve",
            MemoryFormat::ChannelsLast => "ChannelsLast",
            MemoryFormat::ChannelsLast3d => "ChannelsLast3d",
        };
        f.pad(name)
    }
}
