//! Size classes and rounding: PyTorch's constants (`kMinBlockSize`,
//! `kSmallSize`, `kSmallBuffer`, `kLargeBuffer`, `kMinLargeAlloc`,
//! `kRoundLarge`), `round_size`, `get_allocation_size`, `should_split`, and
//! `format_size`, the pretty-printer of the out-of-memory message.
//!
//! All rounding is checked: a request whose rounded size does not fit in a
//! `usize` yields `None`, which the allocator reports as out of memory.

/// Every block size is a multiple of this (512 bytes).
pub const MIN_BLOCK_SIZE: usize = 512;
/// The largest request served from the small pool (1 MiB).
pub const SMALL_SIZE: usize = 1 << 20;
/// The size of a small-pool segment (2 MiB).
pub const SMALL_BUFFER: usize = 2 << 20;
/// The size of the segment serving a large request under
/// [`MIN_LARGE_ALLOC`] (20 MiB).
pub const LARGE_BUFFER: usize = 20 << 20;
/// Large requests below this (10 MiB) get a [`LARGE_BUFFER`] segment.
pub const MIN_LARGE_ALLOC: usize = 10 << 20;
/// Larger requests get a segment of their size rounded up to this (2 MiB).
pub const ROUND_LARGE: usize = 2 << 20;

/// The pool a block belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PoolKind {
    /// Requests of at most [`SMALL_SIZE`] bytes, packed into
    /// [`SMALL_BUFFER`] segments.
    Small,
    /// Every larger request.
    Large,
}

impl PoolKind {
    /// The pool that serves a request of `size` rounded bytes.
    pub fn for_size(size: usize) -> PoolKind {
        if size <= SMALL_SIZE {
            PoolKind::Small
        } else {
            PoolKind::Large
        }
    }
}

/// PyTorch's `round_size`: at least [`MIN_BLOCK_SIZE`], rounded up to a
/// multiple of it; `None` on overflow.
pub fn round_size(size: usize) -> Option<usize> {
    if size < MIN_BLOCK_SIZE {
        Some(MIN_BLOCK_SIZE)
    } else {
        size.checked_next_multiple_of(MIN_BLOCK_SIZE)
    }
}

/// PyTorch's `get_allocation_size`: the size of the segment to request
/// from the device for a block of `size` (already rounded) bytes; `None`
/// on overflow.
pub fn allocation_size(size: usize) -> Option<usize> {
    if size <= SMALL_SIZE {
        Some(SMALL_BUFFER)
    } else if size < MIN_LARGE_ALLOC {
        Some(LARGE_BUFFER)
    } else {
        size.checked_next_multiple_of(ROUND_LARGE)
    }
}

/// PyTorch's `should_split`: whether a free block of `block_size` bytes
/// serving a request of `size` bytes keeps its remainder as a separate free
/// block. A small-pool remainder is kept from [`MIN_BLOCK_SIZE`] bytes on; a
/// large-pool remainder only above [`SMALL_SIZE`], since anything smaller
/// would be useless to the large pool.
pub fn should_split(pool: PoolKind, block_size: usize, size: usize) -> bool {
    let remaining = block_size.saturating_sub(size);
    match pool {
        PoolKind::Small => remaining >= MIN_BLOCK_SIZE,
        PoolKind::Large => remaining > SMALL_SIZE,
    }
}

/// PyTorch's `format_size`: `N bytes` up to 1 KiB, then KiB, MiB and GiB
/// with two decimals (each unit is used up to and including one of the
/// next).
pub fn format_size(size: u64) -> String {
    const KIB: u64 = 1 << 10;
    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;
    // The float conversions only feed a two-decimal display.
    if size <= KIB {
        format!("{size} bytes")
    } else if size <= MIB {
        format!("{:.2} KiB", size as f64 / KIB as f64)
    } else if size <= GIB {
        format!("{:.2} MiB", size as f64 / MIB as f64)
    } else {
        format!("{:.2} GiB", size as f64 / GIB as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_follows_pytorch() {
        assert_eq!(round_size(0), Some(512));
        assert_eq!(round_size(1), Some(512));
        assert_eq!(round_size(512), Some(512));
        assert_eq!(round_size(513), Some(1024));
        assert_eq!(round_size(usize::MAX), None);
        assert_eq!(round_size(usize::MAX - 511), Some(usize::MAX - 511));

        assert_eq!(allocation_size(512), Some(SMALL_BUFFER));
        assert_eq!(allocation_size(SMALL_SIZE), Some(SMALL_BUFFER));
        assert_eq!(allocation_size(SMALL_SIZE + 512), Some(LARGE_BUFFER));
        assert_eq!(allocation_size(MIN_LARGE_ALLOC - 512), Some(LARGE_BUFFER));
        assert_eq!(allocation_size(MIN_LARGE_ALLOC), Some(MIN_LARGE_ALLOC));
        assert_eq!(
            allocation_size(MIN_LARGE_ALLOC + 512),
            Some(MIN_LARGE_ALLOC + ROUND_LARGE)
        );
        assert_eq!(allocation_size(usize::MAX - 511), None);
    }

    #[test]
    fn split_thresholds() {
        assert!(should_split(PoolKind::Small, 1024, 512));
        assert!(!should_split(PoolKind::Small, 1024, 1024));
        assert!(!should_split(PoolKind::Large, 2 * SMALL_SIZE, SMALL_SIZE));
        assert!(should_split(
            PoolKind::Large,
            2 * SMALL_SIZE + 512,
            SMALL_SIZE
        ));
    }

    #[test]
    fn format_size_matches_pytorch() {
        assert_eq!(format_size(0), "0 bytes");
        assert_eq!(format_size(1024), "1024 bytes");
        assert_eq!(format_size(1536), "1.50 KiB");
        assert_eq!(format_size(1 << 20), "1024.00 KiB");
        assert_eq!(format_size(20 << 20), "20.00 MiB");
        assert_eq!(format_size(1 << 30), "1024.00 MiB");
        assert_eq!(format_size(3 << 30), "3.00 GiB");
        assert_eq!(format_size(4096 << 30), "4096.00 GiB");
    }
}
