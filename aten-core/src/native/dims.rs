//! Dimension arithmetic shared by every kernel: wrapping negative
//! dimensions (`maybe_wrap_dim`), the mask of a reduction's dimensions
//! (`make_dim_mask`) and inferring a `-1` size (`infer_size`).

use c10_core::{Error, Result};

/// Wraps a possibly negative dimension of a tensor with `ndim` dimensions
/// (`maybe_wrap_dim`; a 0-dim tensor accepts 0 and -1).
pub fn wrap_dim(dim: i64, ndim: usize) -> Result<usize> {
    c10_core::tensor_impl::maybe_wrap_dim(dim, ndim, true)
}

/// Which of `ndim` dimensions a reduction over `dims` reduces (every one
/// for `None` or an empty list), each wrapped; a repeated one is an error
/// (`make_dim_mask`).
pub fn make_dim_mask(dims: Option<&[i64]>, ndim: usize) -> Result<Vec<bool>> {
    make_dim_mask_with(dims, ndim, false)
}

/// [`make_dim_mask`] with PyTorch's `allow_empty_dims`: when set, an empty
/// list reduces no dimension (`any.dims(self, [])`), and only `None`
/// reduces every one.
pub fn make_dim_mask_with(
    dims: Option<&[i64]>,
    ndim: usize,
    allow_empty_dims: bool,
) -> Result<Vec<bool>> {
    let mut mask = vec![false; ndim];
    match dims {
        None => mask.iter_mut().for_each(|r| *r = true),
        Some([]) if !allow_empty_dims => mask.iter_mut().for_each(|r| *r = true),
        Some(list) => {
            for &d in list {
                let w = wrap_dim(d, ndim)?;
                if ndim == 0 {
                    continue;
                }
                if mask[w] {
                    return Err(Error::runtime(format!(
                        "dim {w} appears multiple times in the list of dims"
                    )));
                }
                mask[w] = true;
            }
        }
    }
    Ok(mask)
}

/// Resolves the one `-1` in `shape` for a tensor of `numel` elements and
/// checks that the shape holds exactly `numel` elements (`infer_size`).
pub fn infer_size(shape: &[i64], numel: i64) -> Result<Vec<i64>> {
    let mut inferred = None;
    let mut product: i64 = 1;
    for (i, &s) in shape.iter().enumerate() {
        if s == -1 {
            if inferred.is_some() {
                return Err(Error::runtime("only one dimension can be inferred"));
            }
            inferred = Some(i);
        } else if s >= 0 {
            product = product.saturating_mul(s);
        } else {
            return Err(Error::runtime(format!("invalid shape dimension {s}")));
        }
    }
    let mut out = shape.to_vec();
    let fits = match inferred {
        // `numel / 0` is undefined: a -1 next to a zero size only fits an
        // empty tensor, and stays ambiguous (PyTorch's wording).
        Some(i) if product != 0 && numel % product == 0 => {
            out[i] = numel / product;
            true
        }
        Some(_) => false,
        None => product == numel,
    };
    if !fits {
        return Err(Error::runtime(format!(
            "shape '{}' is invalid for input of size {numel}",
            fmt_list(shape)
        )));
    }
    Ok(out)
}

/// The strides a view of `old` sizes and strides with `new` sizes needs,
/// or `None` when such a view cannot share the storage (`computeStride`).
pub fn compute_stride(
    old_shape: &[i64],
    old_stride: &[i64],
    new_shape: &[i64],
) -> Option<Vec<i64>> {
    if old_shape.is_empty() {
        return Some(vec![1; new_shape.len()]);
    }
    let numel: i64 = old_shape.iter().product();
    if numel == 0 {
        if old_shape == new_shape {
            return Some(old_stride.to_vec());
        }
        return Some(c10_core::tensor_impl::contiguous_strides(new_shape).to_vec());
    }
    let mut new_stride = vec![0i64; new_shape.len()];
    let mut view_d = new_shape.len() as i64 - 1;
    let mut chunk_base_stride = *old_stride.last()?;
    let mut tensor_numel: i64 = 1;
    let mut view_numel: i64 = 1;
    for tensor_d in (0..old_shape.len()).rev() {
        tensor_numel *= old_shape[tensor_d];
        let chunk_ends = tensor_d == 0
            || (old_shape[tensor_d - 1] != 1
                && old_stride[tensor_d - 1] != tensor_numel * chunk_base_stride);
        if chunk_ends {
            while view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d as usize] == 1) {
                new_stride[view_d as usize] = view_numel * chunk_base_stride;
                view_numel *= new_shape[view_d as usize];
                view_d -= 1;
            }
            if view_numel != tensor_numel {
                return None;
            }
            if tensor_d > 0 {
                chunk_base_stride = old_stride[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    if view_d != -1 {
        return None;
    }
    Some(new_stride)
}

/// `infer_dense_strides(sizes, strides)`: contiguous strides for `sizes`
/// in the dimension order of `strides` (smaller strides inner; ties keep
/// the smaller size inner; stride-0 dimensions stay where a contiguous
/// layout has them), as `TensorIterator` orders dimensions. Sizes 0 and 1
/// do not grow the next stride.
pub fn infer_dense_strides(sizes: &[i64], strides: &[i64]) -> Vec<i64> {
    let ndim = sizes.len().min(strides.len());
    if ndim == 0 {
        return Vec::new();
    }
    // Innermost first: n-1, ..., 0, then a stable insertion sort.
    let mut perm: Vec<usize> = (0..ndim).rev().collect();
    let should_swap = |d0: usize, d1: usize| -> i32 {
        let (s0, s1) = (strides[d0], strides[d1]);
        if s0 == 0 || s1 == 0 {
            0
        } else if s0 != s1 {
            if s0 < s1 {
                -1
            } else {
                1
            }
        } else if sizes[d0] > sizes[d1] {
            1
        } else {
            0
        }
    };
    for i in 1..ndim {
        let mut dim1 = i;
        for j in 1..=i {
            let dim0 = i - j;
            match should_swap(perm[dim0], perm[dim1]) {
                c if c > 0 => {
                    perm.swap(dim0, dim1);
                    dim1 = dim0;
                }
                c if c < 0 => break,
                _ => {}
            }
        }
    }
    let mut out = vec![0i64; ndim];
    let mut current = 1i64;
    for &d in &perm {
        out[d] = current;
        if sizes[d] > 1 {
            current = current.saturating_mul(sizes[d]);
        }
    }
    out
}

/// `a, b, c`: an int list's items as PyTorch prints them in messages.
pub fn join_list(v: &[i64]) -> String {
    v.iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `[a, b, c]` as PyTorch prints an int list in messages.
pub fn fmt_list(v: &[i64]) -> String {
    format!("[{}]", join_list(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_negative_dims() {
        assert_eq!(wrap_dim(-1, 3).unwrap(), 2);
        assert_eq!(wrap_dim(0, 0).unwrap(), 0);
        assert!(wrap_dim(3, 3).is_err());
    }

    #[test]
    fn infers_one_size() {
        assert_eq!(infer_size(&[2, -1], 6).unwrap(), vec![2, 3]);
        assert_eq!(
            infer_size(&[4, -1], 6).unwrap_err().message(),
            "shape '[4, -1]' is invalid for input of size 6"
        );
        assert!(infer_size(&[-1, -1], 6).is_err());
        assert!(infer_size(&[0, -1], 0).is_err());
    }

    #[test]
    fn strides_of_views() {
        // Contiguous to any shape.
        assert_eq!(compute_stride(&[2, 3], &[3, 1], &[3, 2]), Some(vec![2, 1]));
        // A transposed matrix cannot be flattened.
        assert_eq!(compute_stride(&[2, 3], &[1, 2], &[6]), None);
        // Splitting a strided dim keeps its stride.
        assert_eq!(compute_stride(&[6], &[2], &[2, 3]), Some(vec![6, 2]));
        assert_eq!(compute_stride(&[], &[], &[1]), Some(vec![1]));
    }
}
