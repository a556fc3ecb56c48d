//! `repeat_interleave.Tensor` (PyTorch's `repeat_interleave_cpu`): for a
//! 1-d int64 or int32 tensor of counts, each index repeated as often as its
//! count says, in order.

use aten_core::Tensor;
use c10_core::{Error, Result, ScalarType, TensorBase};

/// `repeat_interleave.Tensor(repeats, *, output_size)`.
pub fn repeat_interleave_cpu(repeats: &Tensor, output_size: Option<i64>) -> Result<Tensor> {
    if repeats.dim() != 1 {
        return Err(Error::runtime(
            "repeat_interleave only accept 1D vector as repeat",
        ));
    }
    let dtype = repeats.dtype();
    let counts: Vec<i64> = match dtype {
        Some(ScalarType::Long) => repeats.to_vec::<i64>()?,
        Some(ScalarType::Int) => repeats
            .to_vec::<i32>()?
            .into_iter()
            .map(i64::from)
            .collect(),
        _ => return Err(Error::runtime("repeats has to be Long or Int tensor")),
    };
    let total = match output_size {
        Some(n) => n,
        None => {
            if counts.iter().any(|&c| c < 0) {
                return Err(Error::runtime("repeats can not be negative"));
            }
            counts
                .iter()
                .try_fold(0i64, |acc, &c| acc.checked_add(c))
                .ok_or_else(|| Error::runtime("repeat_interleave: output size overflows"))?
        }
    };
    let total = usize::try_from(total)
        .map_err(|_| Error::runtime(format!("repeat_interleave: invalid output size {total}")))?;
    let mut out: Vec<i64> = Vec::with_capacity(total);
    'fill: for (i, &c) in counts.iter().enumerate() {
        for _ in 0..c.max(0) {
            if out.len() == total {
                break 'fill;
            }
            out.push(i as i64);
        }
    }
    out.resize(total, 0);
    let len = out.len() as i64;
    let result = match dtype {
        Some(ScalarType::Int) => {
            let narrowed: Vec<i32> = out.iter().map(|&v| v as i32).collect();
            TensorBase::from_vec(narrowed, &[len])?
        }
        _ => TensorBase::from_vec(out, &[len])?,
    };
    Ok(Tensor::from_base(result))
}
