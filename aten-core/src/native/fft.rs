//! The geometry of the FFT operators `_fft_r2c` and `_fft_c2r`: argument
//! checks, output sizes and dtypes, and the strides PyTorch's CPU (MKL)
//! kernels give their outputs (`_exec_fft`: the batch dimensions ordered
//! by the input's strides, outermost first, the transformed ones
//! innermost in the order they are transformed). The Meta kernels return
//! an output of that geometry; the CPU kernels begin with the same
//! functions and fill it.

use c10_core::tensor_impl::maybe_wrap_dim;
use c10_core::{Error, Result, ScalarType, TensorBase};

use super::dims::fmt_list;
use crate::meta::dtype_and_device;
use crate::Tensor;

/// How a transform is scaled (`fft_norm_mode`): not at all, by
/// `1/sqrt(n)` or by `1/n`, `n` being the signal's element count. As in
/// PyTorch's MKL kernels, any value but 0 and 1 scales by `1/n`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FftNorm {
    /// No scaling (`fft_norm_mode::none`, 0).
    None,
    /// By `1/sqrt(n)` (`by_root_n`, 1).
    ByRootN,
    /// By `1/n` (`by_n`, 2).
    ByN,
}

impl FftNorm {
    /// The mode of the operators' `normalization` argument.
    pub fn from_i64(normalization: i64) -> FftNorm {
        match normalization {
            0 => FftNorm::None,
            1 => FftNorm::ByRootN,
            _ => FftNorm::ByN,
        }
    }

    /// The factor a signal of `n` elements is scaled by.
    pub fn factor(self, n: i64) -> f64 {
        match self {
            FftNorm::None => 1.0,
            FftNorm::ByRootN => 1.0 / (n as f64).sqrt(),
            FftNorm::ByN => 1.0 / n as f64,
        }
    }
}

/// What a CPU kernel needs of an FFT call, from one snapshot of the
/// input's geometry.
#[derive(Clone, Debug)]
pub struct FftGeometry {
    /// The input's sizes.
    pub in_sizes: Vec<i64>,
    /// The transformed dimensions, wrapped, in the order given (the last
    /// one is the real/half-complex dimension).
    pub dims: Vec<usize>,
    /// The output's sizes.
    pub out_sizes: Vec<i64>,
    /// The output's strides (PyTorch's layout).
    pub out_strides: Vec<i64>,
    /// The output's dtype.
    pub out_dtype: ScalarType,
    /// The scaling.
    pub norm: FftNorm,
}

impl FftGeometry {
    /// A new output of this geometry on `self_`'s device.
    pub fn output(&self, self_: &Tensor) -> Result<Tensor> {
        let device = dtype_and_device(self_)?.1;
        Ok(Tensor::from(TensorBase::empty_strided(
            &self.out_sizes,
            &self.out_strides,
            self.out_dtype,
            device,
        )?))
    }
}

/// The dimensions `dim` of a tensor with `ndim` dimensions, wrapped; no
/// repeats, at least one.
fn wrap_fft_dims(dim: &[i64], ndim: usize) -> Result<Vec<usize>> {
    if dim.is_empty() {
        return Err(Error::runtime("FFT dims must not be empty"));
    }
    let mut seen = vec![false; ndim];
    dim.iter()
        .map(|&d| {
            let w = maybe_wrap_dim(d, ndim, false)?;
            if std::mem::replace(&mut seen[w], true) {
                return Err(Error::runtime("FFT dims must be unique"));
            }
            Ok(w)
        })
        .collect()
}

/// PyTorch's error for an unsupported element type (the MKL plan's).
fn check_fft_dtype(value_type: ScalarType) -> Result<()> {
    match value_type {
        ScalarType::Float | ScalarType::Double => Ok(()),
        other => Err(Error::runtime(format!(
            "MKL FFT doesn't support tensors of type: {other}"
        ))),
    }
}

/// A signal of zero elements cannot be collapsed into batches
/// (`_exec_fft`'s `reshape([-1, signal sizes...])`).
fn check_signal(numel: i64, signal: &[i64]) -> Result<()> {
    if signal.contains(&0) {
        let mut shape = vec![-1];
        shape.extend_from_slice(signal);
        return Err(Error::runtime(format!(
            "cannot reshape tensor of {numel} elements into shape {} because the unspecified dimension size -1 can be any value and is ambiguous",
            fmt_list(&shape)
        )));
    }
    Ok(())
}

/// `dims` sorted by `strides`, largest first, ties in their order
/// (`_sort_dims`).
fn sorted_by_stride(dims: &[usize], strides: &[i64]) -> Vec<usize> {
    let mut sorted = dims.to_vec();
    sorted.sort_by(|&a, &b| strides[b].cmp(&strides[a]));
    sorted
}

/// `std::partition` as libstdc++ runs it (from both ends, swapping): the
/// elements satisfying `pred` first; returns how many there are. Its
/// order decides the order of batch dimensions of equal stride.
fn partition(v: &mut [usize], pred: impl Fn(usize) -> bool) -> usize {
    let (mut first, mut last) = (0, v.len());
    loop {
        loop {
            if first == last {
                return first;
            }
            if !pred(v[first]) {
                break;
            }
            first += 1;
        }
        loop {
            last -= 1;
            if first == last {
                return first;
            }
            if pred(v[last]) {
                break;
            }
        }
        v.swap(first, last);
        first += 1;
    }
}

/// The strides `_exec_fft` gives an output of `out_sizes` transformed
/// over `dims` (in this order) from an input with `in_strides`: the batch
/// dimensions, sorted by the input's strides, collapsed into one outermost
/// dimension of a contiguous buffer whose inner dimensions are `dims`.
fn exec_fft_strides(in_strides: &[i64], out_sizes: &[i64], dims: &[usize]) -> Result<Vec<i64>> {
    let ndim = out_sizes.len();
    let mut transformed = vec![false; ndim];
    for &d in dims {
        transformed[d] = true;
    }
    let mut permute: Vec<usize> = (0..ndim).collect();
    let batch_dims = partition(&mut permute, |d| !transformed[d]);
    permute[..batch_dims].sort_by(|&a, &b| in_strides[b].cmp(&in_strides[a]));
    permute[batch_dims..].copy_from_slice(dims);
    let overflow = || Error::runtime("FFT: the output is too large");
    // The contiguous strides of [batch, out_sizes[dims]...].
    let mut signal_strides = vec![1i64; dims.len() + 1];
    for j in (0..dims.len()).rev() {
        signal_strides[j] = signal_strides[j + 1]
            .checked_mul(out_sizes[dims[j]].max(1))
            .ok_or_else(overflow)?;
    }
    let mut out_strides = vec![0i64; ndim];
    let mut batch_numel = 1i64;
    for &d in permute[..batch_dims].iter().rev() {
        out_strides[d] = batch_numel
            .checked_mul(signal_strides[0])
            .ok_or_else(overflow)?;
        batch_numel = batch_numel.checked_mul(out_sizes[d]).ok_or_else(overflow)?;
    }
    for (j, &d) in dims.iter().enumerate() {
        out_strides[d] = signal_strides[1 + j];
    }
    Ok(out_strides)
}

/// An FFT's input, read from one snapshot of its layout: its dtype, sizes,
/// strides and element count, and the transformed dimensions wrapped.
struct FftInput {
    dtype: ScalarType,
    in_sizes: Vec<i64>,
    in_strides: Vec<i64>,
    numel: i64,
    dims: Vec<usize>,
}

impl FftInput {
    /// Reads `self_`, whose dtype must pass `check` (its name, as
    /// PyTorch's `TORCH_CHECK(self.is_...())` names it, and the test).
    fn read(
        self_: &Tensor,
        dim: &[i64],
        check: (&str, fn(ScalarType) -> bool),
    ) -> Result<FftInput> {
        let dtype = dtype_and_device(self_)?.0;
        let (name, passes) = check;
        if !passes(dtype) {
            return Err(Error::runtime(format!(
                "Expected self.{name}() to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)"
            )));
        }
        let layout = self_
            .layout()
            .ok_or_else(|| Error::runtime("Tensor is undefined"))?;
        let (in_sizes, in_strides) = (layout.sizes().to_vec(), layout.strides().to_vec());
        let numel = layout.numel();
        drop(layout);
        let dims = wrap_fft_dims(dim, in_sizes.len())?;
        Ok(FftInput {
            dtype,
            in_sizes,
            in_strides,
            numel,
            dims,
        })
    }
}

/// The geometry of `_fft_r2c(self, dim, normalization, onesided)`: a real
/// floating input; a complex output of its shape, the last transformed
/// dimension halved (`n/2 + 1`) when `onesided`.
pub fn fft_r2c_geometry(
    self_: &Tensor,
    dim: &[i64],
    normalization: i64,
    onesided: bool,
) -> Result<FftGeometry> {
    let FftInput {
        dtype,
        in_sizes,
        in_strides,
        numel,
        dims,
    } = FftInput::read(
        self_,
        dim,
        ("is_floating_point", ScalarType::is_floating_point),
    )?;
    let (last, rest) = dims
        .split_last()
        .ok_or_else(|| Error::internal("no FFT dim"))?;
    let mut out_sizes = in_sizes.clone();
    if onesided {
        out_sizes[*last] = in_sizes[*last] / 2 + 1;
    }
    let mut sorted = sorted_by_stride(rest, &in_strides);
    sorted.push(*last);
    let signal: Vec<i64> = sorted.iter().map(|&d| in_sizes[d]).collect();
    check_signal(numel, &signal)?;
    check_fft_dtype(dtype)?;
    let out_strides = exec_fft_strides(&in_strides, &out_sizes, &sorted)?;
    let out_dtype = match dtype {
        ScalarType::Double => ScalarType::ComplexDouble,
        _ => ScalarType::ComplexFloat,
    };
    Ok(FftGeometry {
        in_sizes,
        dims,
        out_sizes,
        out_strides,
        out_dtype,
        norm: FftNorm::from_i64(normalization),
    })
}

/// The geometry of `_fft_c2r(self, dim, normalization, last_dim_size)`: a
/// complex input holding at least `last_dim_size/2 + 1` elements along the
/// last transformed dimension; a real output of its shape with
/// `last_dim_size` there. With several dimensions, PyTorch first runs a
/// complex-to-complex transform over the others, whose layout the output's
/// follows.
pub fn fft_c2r_geometry(
    self_: &Tensor,
    dim: &[i64],
    normalization: i64,
    last_dim_size: i64,
) -> Result<FftGeometry> {
    let FftInput {
        dtype,
        in_sizes,
        in_strides,
        numel,
        dims,
    } = FftInput::read(self_, dim, ("is_complex", ScalarType::is_complex))?;
    let (last, rest) = dims
        .split_last()
        .ok_or_else(|| Error::internal("no FFT dim"))?;
    let mut strides = in_strides;
    if !rest.is_empty() {
        let sorted = sorted_by_stride(rest, &strides);
        let signal: Vec<i64> = sorted.iter().map(|&d| in_sizes[d]).collect();
        check_signal(numel, &signal)?;
        strides = exec_fft_strides(&strides, &in_sizes, &sorted)?;
    }
    let in_last = in_sizes[*last];
    if last_dim_size < 1 {
        return Err(Error::runtime(format!(
            "Invalid number of data points ({last_dim_size}) specified"
        )));
    }
    if in_last < last_dim_size / 2 + 1 {
        return Err(Error::runtime(format!(
            "_fft_c2r: expected at least {} elements along dimension {last} of the input for last_dim_size {last_dim_size}, but got {in_last}",
            last_dim_size / 2 + 1
        )));
    }
    check_signal(numel, &[in_last])?;
    let value_type = match dtype {
        ScalarType::ComplexDouble => ScalarType::Double,
        ScalarType::ComplexFloat => ScalarType::Float,
        ScalarType::ComplexHalf => ScalarType::Half,
        _ => ScalarType::BFloat16,
    };
    check_fft_dtype(value_type)?;
    let mut out_sizes = in_sizes.clone();
    out_sizes[*last] = last_dim_size;
    let out_strides = exec_fft_strides(&strides, &out_sizes, &[*last])?;
    Ok(FftGeometry {
        in_sizes,
        dims,
        out_sizes,
        out_strides,
        out_dtype: value_type,
        norm: FftNorm::from_i64(normalization),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_swaps_from_both_ends_as_libstdcxx() {
        // Dimension 0 transformed: [0, 1, 2] becomes [2, 1 | 0].
        let mut v = vec![0, 1, 2];
        assert_eq!(partition(&mut v, |d| d != 0), 2);
        assert_eq!(v, vec![2, 1, 0]);
        let mut v = vec![0, 1, 2, 3];
        assert_eq!(partition(&mut v, |d| d == 1 || d == 3), 2);
        assert_eq!(v, vec![3, 1, 2, 0]);
        let mut v: Vec<usize> = vec![];
        assert_eq!(partition(&mut v, |_| true), 0);
    }

    #[test]
    fn output_strides_follow_pytorchs_mkl_layout() {
        // [5, 3, 1] over dims [0, 2]: the batch dimension 1 outermost.
        assert_eq!(
            exec_fft_strides(&[3, 1, 1], &[5, 3, 1], &[0, 2]).unwrap(),
            vec![1, 5, 1]
        );
        // [2, 3, 1] over dims [0, 1].
        assert_eq!(
            exec_fft_strides(&[3, 1, 1], &[2, 3, 1], &[0, 1]).unwrap(),
            vec![3, 1, 6]
        );
        // Contiguous batches stay contiguous.
        assert_eq!(
            exec_fft_strides(&[24, 6, 1], &[3, 4, 4], &[2]).unwrap(),
            vec![16, 4, 1]
        );
    }

    #[test]
    fn normalization_modes() {
        assert_eq!(FftNorm::from_i64(0).factor(4), 1.0);
        assert_eq!(FftNorm::from_i64(1).factor(4), 0.5);
        assert_eq!(FftNorm::from_i64(2).factor(4), 0.25);
        assert_eq!(FftNorm::from_i64(7), FftNorm::ByN);
    }
}
