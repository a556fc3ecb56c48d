//! The Rust mirrors of the structs kernels take by value: the strided
//! pointwise loops' `at_strided_params` (with PyTorch's `IntDivider` magic
//! numbers), the reductions' `at_reduce_shape` and the scans'
//! `at_scan_shape`. Each is `#[repr(C)]` with the field order, types and
//! sizes of its CUDA definition in `cu/`.

use c10_core::{Error, Result};

/// The most operands a strided launch carries (`where`: the output and
/// three inputs).
pub const MAX_OPERANDS: usize = 4;

/// Division by a fixed divisor as a multiply-high, an add and a shift
/// (PyTorch's `IntDivider<unsigned int>`): for every `n` below 2^31,
/// `n / divisor == (umulhi(n, magic) + n) >> shift`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IntDivider {
    /// The divisor, 1 to `i32::MAX`.
    pub divisor: u32,
    /// The multiplier.
    pub magic: u32,
    /// The shift: the smallest `s` with `2^s >= divisor`.
    pub shift: u32,
}

impl IntDivider {
    /// The magic numbers for `divisor`, which must lie in `1..=i32::MAX`.
    pub fn new(divisor: u32) -> Result<IntDivider> {
        if divisor == 0 || divisor > i32::MAX as u32 {
            return Err(Error::internal(format!(
                "IntDivider takes a divisor in 1..=2^31-1, got {divisor}"
            )));
        }
        let shift = 32 - (divisor - 1).leading_zeros();
        let d = u64::from(divisor);
        let magic = ((1u64 << 32) * ((1u64 << shift) - d)) / d + 1;
        debug_assert!(magic <= u64::from(u32::MAX));
        Ok(IntDivider {
            divisor,
            magic: magic as u32,
            shift,
        })
    }

    /// `n / divisor` the way the kernels compute it (for `n` below 2^31).
    pub fn div(&self, n: u32) -> u32 {
        let high = ((u64::from(n) * u64::from(self.magic)) >> 32) as u32;
        (high + n) >> self.shift
    }
}

/// `at_strided_params`: the sizes and per-operand element strides of a
/// strided pointwise launch, dims innermost first, operand 0 the output.
/// Unused dims have size 1 and unused operands stride 0.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StridedParams {
    /// Each dim's size.
    pub sizes: [u32; 8],
    /// Each size's `IntDivider` multiplier.
    pub magic: [u32; 8],
    /// Each size's `IntDivider` shift.
    pub shift: [u32; 8],
    /// `strides[d][k]`: operand k's element stride along dim d.
    pub strides: [[u32; MAX_OPERANDS]; 8],
}

impl StridedParams {
    /// The parameters for `sizes` (innermost first, 1 to 8 dims, each at
    /// least 1) and one stride list per operand (each as long as `sizes`;
    /// at most four operands). Fails unless every index and every
    /// operand's largest offset fit the kernels' 32-bit indexing (below
    /// 2^31).
    pub fn new(sizes: &[usize], strides: &[&[usize]]) -> Result<StridedParams> {
        if sizes.is_empty() || sizes.len() > 8 {
            return Err(Error::internal(format!(
                "strided CUDA kernels take 1 to 8 dimensions, got {}",
                sizes.len()
            )));
        }
        if strides.is_empty() || strides.len() > MAX_OPERANDS {
            return Err(Error::internal(format!(
                "strided CUDA kernels take 1 to {MAX_OPERANDS} operands, got {}",
                strides.len()
            )));
        }
        let limit = i32::MAX as u128;
        let numel = sizes
            .iter()
            .fold(1u128, |n, &s| n.saturating_mul(s as u128));
        if sizes.contains(&0) || numel > limit {
            return Err(Error::internal(format!(
                "strided CUDA kernels need sizes of at least 1 and fewer than 2^31 elements, got {sizes:?}"
            )));
        }
        let mut params = StridedParams {
            sizes: [1; 8],
            magic: [1; 8],
            shift: [0; 8],
            strides: [[0; MAX_OPERANDS]; 8],
        };
        for (d, &size) in sizes.iter().enumerate() {
            let divider = IntDivider::new(size as u32)?;
            params.sizes[d] = size as u32;
            params.magic[d] = divider.magic;
            params.shift[d] = divider.shift;
        }
        for (k, operand) in strides.iter().enumerate() {
            if operand.len() != sizes.len() {
                return Err(Error::internal(format!(
                    "operand {k} has {} strides for {} dimensions",
                    operand.len(),
                    sizes.len()
                )));
            }
            let last: u128 = sizes
                .iter()
                .zip(operand.iter())
                .map(|(&size, &stride)| (size as u128 - 1) * stride as u128)
                .sum();
            if last > limit {
                return Err(Error::internal(format!(
                    "operand {k}'s offsets reach {last}, past 32-bit indexing"
                )));
            }
            for (d, &stride) in operand.iter().enumerate() {
                // A stride only matters below the largest offset, which
                // fits; a larger one sits on a dim of size 1 and is
                // multiplied by zero.
                params.strides[d][k] = if sizes[d] == 1 { 0 } else { stride as u32 };
            }
        }
        Ok(params)
    }

    /// The element offsets of linear index `linear` for the first
    /// `offsets.len()` operands, as the kernels compute them.
    pub fn offsets(&self, mut linear: u32, offsets: &mut [u32]) {
        offsets.iter_mut().for_each(|o| *o = 0);
        for d in 0..8 {
            let divider = IntDivider {
                divisor: self.sizes[d],
                magic: self.magic[d],
                shift: self.shift[d],
            };
            let q = divider.div(linear);
            let r = linear - q * self.sizes[d];
            for (k, o) in offsets.iter_mut().enumerate() {
                *o += r * self.strides[d][k];
            }
            linear = q;
        }
    }
}

/// `at_reduce_shape`: a one-dimension reduction's view of its input as
/// `[outer, reduce, inner]`, in elements. Output element `o` (written
/// contiguously) reduces the elements at `(o / inner_size) * outer_stride
/// + (o % inner_size) * inner_stride + r * reduce_stride` for `r` below
/// `reduce_size`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ReduceShape {
    /// The number of outputs.
    pub num_outputs: i64,
    /// How many outputs share one outer index (at least 1).
    pub inner_size: i64,
    /// The input stride of the outer index.
    pub outer_stride: i64,
    /// The input stride of the inner index.
    pub inner_stride: i64,
    /// The length of the reduced dimension.
    pub reduce_size: i64,
    /// The input stride of the reduced dimension.
    pub reduce_stride: i64,
}

/// `at_scan_shape`: a scan's view of its input and output as `[outer, len,
/// inner]`, in elements, each with its own strides. Row `r` is `(r /
/// inner_size, r % inner_size)`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanShape {
    /// The number of rows scanned.
    pub num_rows: i64,
    /// How many rows share one outer index (at least 1).
    pub inner_size: i64,
    /// The length of the scanned dimension.
    pub len: i64,
    /// The input stride of the outer index.
    pub in_outer_stride: i64,
    /// The input stride of the inner index.
    pub in_inner_stride: i64,
    /// The input stride of the scanned dimension.
    pub in_stride: i64,
    /// The output stride of the outer index.
    pub out_outer_stride: i64,
    /// The output stride of the inner index.
    pub out_inner_stride: i64,
    /// The output stride of the scanned dimension.
    pub out_stride: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_divider_matches_division() {
        let mut divisors: Vec<u32> = (1..=4096).collect();
        divisors.extend([
            65535,
            65536,
            65537,
            1 << 20,
            (1 << 20) + 1,
            1_000_003,
            (1 << 30) - 1,
            1 << 30,
            (1 << 30) + 1,
            i32::MAX as u32 - 1,
            i32::MAX as u32,
        ]);
        let mut numerators: Vec<u32> = (0..2048).collect();
        numerators.extend([
            65535,
            65536,
            999_999_999,
            (1 << 30) - 1,
            1 << 30,
            i32::MAX as u32 - 1,
            i32::MAX as u32,
        ]);
        // A simple LCG adds scattered numerators without a dependency.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..2000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            numerators.push(((x >> 33) as u32) & (i32::MAX as u32));
        }
        for &d in &divisors {
            let divider = IntDivider::new(d).unwrap();
            for &n in &numerators {
                assert_eq!(divider.div(n), n / d, "{n} / {d}");
            }
        }
        assert!(IntDivider::new(0).is_err());
        assert!(IntDivider::new(1 << 31).is_err());
    }

    #[test]
    fn strided_offsets_walk_the_layout() {
        // A [3, 4] output (row-major) and a transposed [3, 4] input: dims
        // innermost first.
        let params = StridedParams::new(&[4, 3], &[&[1, 4], &[3, 1]]).unwrap();
        let mut offsets = [0u32; 2];
        let mut seen = Vec::new();
        for i in 0..12 {
            params.offsets(i, &mut offsets);
            seen.push(offsets);
        }
        assert_eq!(seen[0], [0, 0]);
        assert_eq!(seen[1], [1, 3]);
        assert_eq!(seen[4], [4, 1]);
        assert_eq!(seen[11], [11, 11]);
    }

    #[test]
    fn strided_params_refuse_what_32_bit_indexing_cannot_reach() {
        assert!(StridedParams::new(&[], &[&[]]).is_err());
        assert!(StridedParams::new(&[1; 9], &[&[0; 9]]).is_err());
        assert!(StridedParams::new(&[2, 0], &[&[1, 2]]).is_err());
        assert!(StridedParams::new(&[1 << 16, 1 << 15], &[&[1, 1 << 16]]).is_err());
        assert!(StridedParams::new(&[2], &[&[1 << 31]]).is_err());
        assert!(StridedParams::new(&[2], &[&[1], &[2]]).is_ok());
        assert!(StridedParams::new(&[2], &[&[1], &[1, 2]]).is_err());
        let one: &[usize] = &[1];
        assert!(StridedParams::new(&[2], &[one; 5]).is_err());
        // A huge stride on a dim of size 1 never contributes.
        let p = StridedParams::new(&[1, 5], &[&[usize::MAX, 1]]).unwrap();
        assert_eq!(p.strides[0][0], 0);
    }

    #[test]
    fn layouts_match_the_cuda_structs() {
        assert_eq!(
            std::mem::size_of::<StridedParams>(),
            4 * (8 * 3 + 8 * MAX_OPERANDS)
        );
        assert_eq!(std::mem::size_of::<ReduceShape>(), 6 * 8);
        assert_eq!(std::mem::size_of::<ScanShape>(), 9 * 8);
    }
}
