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

impl MemoryFormat {
    /// The memory format a strided tensor's `strides` suggest
    /// (`suggest_memory_format`): channels-last for a 4-d (or 5-d) tensor
    /// whose strides order channels first, then width, height and batch,
    /// contiguous otherwise and in the ambiguous cases PyTorch leaves
    /// contiguous.
    pub fn suggest(sizes: &[i64], strides: &[i64]) -> MemoryFormat {
        if sizes.len() != strides.len() {
            return MemoryFormat::Contiguous;
        }
        match sizes.len() {
            4 if strides_ordered(sizes, strides, &[1, 3, 2, 0]) => MemoryFormat::ChannelsLast,
            5 if strides_ordered(sizes, strides, &[1, 4, 3, 2, 0]) => MemoryFormat::ChannelsLast3d,
            _ => MemoryFormat::Contiguous,
        }
    }
}

impl MemoryFormat {
    /// Whether `strides` lay `sizes` out densely in this channels-last
    /// format (`compute_channels_last_contiguous_2d` and its 3-d form):
    /// a 4-d (`ChannelsLast`) or 5-d (`ChannelsLast3d`) tensor whose
    /// strides, channels first, then the spatial dimensions innermost
    /// first, then the batch, are the running products of the sizes, size-1
    /// dimensions taking any stride. False for the other formats and ranks.
    pub fn is_channels_last_contiguous(self, sizes: &[i64], strides: &[i64]) -> bool {
        let order: &[usize] = match (self, sizes.len()) {
            (MemoryFormat::ChannelsLast, 4) => &[1, 3, 2, 0],
            (MemoryFormat::ChannelsLast3d, 5) => &[1, 4, 3, 2, 0],
            _ => return false,
        };
        if strides.len() != sizes.len() {
            return false;
        }
        let mut expected = 1i64;
        for &d in order {
            if sizes[d] != 1 {
                if strides[d] != expected {
                    return false;
                }
                expected = expected.saturating_mul(sizes[d]);
            }
        }
        true
    }
}

/// Whether the strides grow along `order` (innermost first) as a
/// channels-last layout's do (`is_channels_last_strides_2d_s4` and its
/// 3-d form).
fn strides_ordered(sizes: &[i64], strides: &[i64], order: &[usize]) -> bool {
    // A trivial channel stride: default to the contiguous format.
    if strides[1] == 0 {
        return false;
    }
    let mut min = 0i64;
    for &d in order {
        if sizes[d] == 0 || strides[d] < min {
            return false;
        }
        // `N111` tensors (and their slices) with equal strides are
        // ambiguous: contiguous.
        if d == 0 && min == strides[1] {
            return false;
        }
        min = strides[d];
        if sizes[d] > 1 {
            min = min.saturating_mul(sizes[d]);
        }
    }
    true
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

#[cfg(test)]
mod tests {
    use super::MemoryFormat;

    #[test]
    fn suggested_formats_follow_pytorchs_rules() {
        let suggest = MemoryFormat::suggest;
        assert_eq!(
            suggest(&[2, 3, 4, 5], &[60, 20, 5, 1]),
            MemoryFormat::Contiguous
        );
        assert_eq!(
            suggest(&[2, 3, 4, 5], &[60, 1, 15, 3]),
            MemoryFormat::ChannelsLast
        );
        // One channel and strides that order it first: channels-last
        // (PyTorch's [1, 1, 4, 8] @ [32, 1, 8, 1]).
        assert_eq!(
            suggest(&[1, 1, 4, 8], &[32, 1, 8, 1]),
            MemoryFormat::ChannelsLast
        );
        // Ambiguous N111 and a zero channel stride stay contiguous.
        assert_eq!(
            suggest(&[4, 1, 1, 1], &[1, 1, 1, 1]),
            MemoryFormat::Contiguous
        );
        assert_eq!(
            suggest(&[2, 3, 4, 5], &[20, 0, 5, 1]),
            MemoryFormat::Contiguous
        );
        assert_eq!(
            suggest(&[2, 3, 2, 2, 2], &[24, 1, 12, 6, 3]),
            MemoryFormat::ChannelsLast3d
        );
        assert_eq!(suggest(&[3, 4], &[1, 3]), MemoryFormat::Contiguous);
    }

    #[test]
    fn channels_last_contiguity_follows_pytorchs_rules() {
        let cl = MemoryFormat::ChannelsLast;
        assert!(cl.is_channels_last_contiguous(&[2, 3, 4, 5], &[60, 1, 15, 3]));
        assert!(!cl.is_channels_last_contiguous(&[2, 3, 4, 5], &[60, 20, 5, 1]));
        // Size-1 dimensions take any stride.
        assert!(cl.is_channels_last_contiguous(&[1, 3, 1, 1], &[7, 1, 9, 9]));
        // Other ranks and formats are never channels-last contiguous.
        assert!(!cl.is_channels_last_contiguous(&[3, 4], &[1, 3]));
        let cl3 = MemoryFormat::ChannelsLast3d;
        assert!(cl3.is_channels_last_contiguous(&[2, 3, 2, 2, 2], &[24, 1, 12, 6, 3]));
        assert!(!cl3.is_channels_last_contiguous(&[2, 3, 4, 5], &[60, 1, 15, 3]));
        assert!(!MemoryFormat::Contiguous.is_channels_last_contiguous(&[2], &[1]));
    }
}
