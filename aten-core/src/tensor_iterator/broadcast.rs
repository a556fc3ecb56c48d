//! Broadcasting: the shape two shapes broadcast to (`infer_size`).

use c10_core::{Error, Result};

/// The broadcast of `a` and `b`, or PyTorch's error.
pub fn infer_size(a: &[i64], b: &[i64]) -> Result<Vec<i64>> {
    let ndim = a.len().max(b.len());
    let mut out = vec![0; ndim];
    for i in (0..ndim).rev() {
        let offset = ndim - 1 - i;
        let da = a.len().checked_sub(1 + offset).map_or(1, |j| a[j]);
        let db = b.len().checked_sub(1 + offset).map_or(1, |j| b[j]);
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return Err(Error::runtime(format!(
                "The size of tensor a ({da}) must match the size of tensor b ({db}) at non-singleton dimension {i}"
            )));
        };
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasts() {
        assert_eq!(infer_size(&[2, 1, 4], &[3, 1]).unwrap(), vec![2, 3, 4]);
        assert_eq!(infer_size(&[], &[5]).unwrap(), vec![5]);
        assert!(infer_size(&[2], &[3]).is_err());
    }
}
