//! The FFT operators `_fft_r2c` and `_fft_c2r` on `rustfft`.
//!
//! Both compute in `f64` whatever the dtype (one rounding at the end), on
//! a row-major buffer of the input's values, one 1-D transform per line
//! along each transformed dimension; the output (`aten_core`'s geometry,
//! PyTorch's layout) receives the buffer in logical order. `_fft_r2c`
//! transforms the full signal, so the two-sided output is the spectrum
//! itself and the one-sided one its first half along the last transformed
//! dimension. `_fft_c2r` transforms the other dimensions complex to
//! complex, then extends each line of the last one to its Hermitian-
//! symmetric whole (`X[n - k] = conj(X[k])`) and keeps the real part of its
//! inverse transform, as a complex-to-real transform does (the imaginary
//! parts of the zero and Nyquist terms do not reach it).

use std::sync::Arc;

use aten_core::native::{fft::fft_c2r_geometry, fft::fft_r2c_geometry, fft::FftGeometry};
use aten_core::parallel::{parallel_chunks_mut, GRAIN_SIZE};
use aten_core::Tensor;
use c10_core::tensor_impl::for_each_offset;
use c10_core::{Complex, Element, Error, Result, ScalarType, TensorBase};
use rustfft::num_complex::Complex as C64;
use rustfft::{Fft, FftDirection, FftPlanner};

use super::util::{dtype_of, not_implemented};

/// The row-major extents of a buffer of `sizes` around dimension `d`:
/// (elements before it, its size, elements after it).
fn split_at_dim(sizes: &[i64], d: usize) -> (usize, usize, usize) {
    let prod = |s: &[i64]| s.iter().map(|&x| x as usize).product::<usize>();
    (prod(&sizes[..d]), sizes[d] as usize, prod(&sizes[d + 1..]))
}

/// Runs `line` on every line of `buf` (row-major, of `sizes`) along
/// dimension `d`: each gets the line's values in a scratch vector and
/// writes them back. Blocks of the outer dimensions go to `rayon`'s
/// threads when the buffer is large.
fn for_each_line(
    buf: &mut [C64<f64>],
    sizes: &[i64],
    d: usize,
    line: impl Fn(&mut Vec<C64<f64>>, &mut Vec<C64<f64>>) + Sync,
) {
    let (_, n, inner) = split_at_dim(sizes, d);
    let block_len = n * inner;
    if block_len == 0 {
        return;
    }
    let run_block = |block: &mut [C64<f64>]| {
        let (mut values, mut scratch) = (Vec::with_capacity(n), Vec::new());
        for j in 0..inner {
            values.clear();
            values.extend((0..n).map(|k| block[k * inner + j]));
            line(&mut values, &mut scratch);
            for (k, v) in values.iter().enumerate().take(n) {
                block[k * inner + j] = *v;
            }
        }
    };
    let grain = (GRAIN_SIZE as usize).div_ceil(block_len.max(1));
    parallel_chunks_mut(buf, block_len, grain, |_, part| {
        part.chunks_mut(block_len.max(1)).for_each(run_block)
    });
}

/// A 1-D complex transform of `n` points.
fn plan(planner: &mut FftPlanner<f64>, n: usize, direction: FftDirection) -> Arc<dyn Fft<f64>> {
    planner.plan_fft(n, direction)
}

/// Transforms `buf` (row-major, of `sizes`) along dimension `d` in place.
fn transform_along(
    planner: &mut FftPlanner<f64>,
    buf: &mut [C64<f64>],
    sizes: &[i64],
    d: usize,
    direction: FftDirection,
) {
    let fft = plan(planner, sizes[d] as usize, direction);
    for_each_line(buf, sizes, d, |values, scratch| {
        scratch.resize(fft.get_inplace_scratch_len(), C64::default());
        fft.process_with_scratch(values, scratch);
    });
}

/// The element count of the signal: the product of `sizes` over `dims`.
fn signal_numel(sizes: &[i64], dims: &[usize]) -> i64 {
    dims.iter().map(|&d| sizes[d]).product()
}

/// `t`'s values in logical order as complex `f64`s, checked to fill
/// `sizes` (the geometry's snapshot; another thread may have resized `t`).
fn read_values(t: &Tensor, sizes: &[i64]) -> Result<Vec<C64<f64>>> {
    fn read<T: Element>(t: &Tensor, f: impl Fn(T) -> C64<f64>) -> Result<Vec<C64<f64>>> {
        Ok(t.base().to_vec::<T>()?.into_iter().map(f).collect())
    }
    let dtype = dtype_of(t)?;
    let values = match dtype {
        ScalarType::Float => read(t, |x: f32| C64::new(f64::from(x), 0.0))?,
        ScalarType::Double => read(t, |x: f64| C64::new(x, 0.0))?,
        ScalarType::ComplexFloat => read(t, |c: Complex<f32>| {
            C64::new(f64::from(c.re), f64::from(c.im))
        })?,
        ScalarType::ComplexDouble => read(t, |c: Complex<f64>| C64::new(c.re, c.im))?,
        other => return Err(not_implemented("fft", other)),
    };
    if values.len() as i64 != sizes.iter().product::<i64>() {
        return Err(Error::runtime(
            "FFT: the input was resized while the kernel ran",
        ));
    }
    Ok(values)
}

/// Writes `values` (logical order of the output's sizes) into `out`, a new
/// tensor of the geometry's sizes and strides, converted by `convert`.
fn write_values<T: Element>(
    out: &Tensor,
    geometry: &FftGeometry,
    values: &[f64],
    per_element: usize,
    convert: impl Fn(&[f64]) -> T,
) -> Result<()> {
    let storage_len = {
        let layout = out
            .layout()
            .ok_or_else(|| Error::runtime("undefined output"))?;
        layout.storage().nbytes() / std::mem::size_of::<T>()
    };
    // The whole storage as one contiguous run: the output is new, and its
    // layout a permutation of a contiguous one.
    let flat: TensorBase = out
        .base()
        .as_strided(&[storage_len as i64], &[1], Some(0))?;
    flat.with_data_mut::<T, _>(|dst| {
        let mut chunks = values.chunks_exact(per_element);
        let mut result = Ok(());
        for_each_offset(&geometry.out_sizes, &geometry.out_strides, 0, |off| {
            let slot = usize::try_from(off).ok().and_then(|o| dst.get_mut(o));
            match (slot, chunks.next()) {
                (Some(slot), Some(v)) => *slot = convert(v),
                _ => result = Err(Error::internal("FFT: the output does not fit its layout")),
            }
        });
        result
    })?
}

/// `_fft_r2c(self, dim, normalization, onesided)` on CPU.
pub fn _fft_r2c_cpu(
    self_: &Tensor,
    dim: &[i64],
    normalization: i64,
    onesided: bool,
) -> Result<Tensor> {
    let g = fft_r2c_geometry(self_, dim, normalization, onesided)?;
    let out = g.output(self_)?;
    if out.numel() == 0 {
        return Ok(out);
    }
    let mut buf = read_values(self_, &g.in_sizes)?;
    let mut planner = FftPlanner::new();
    for &d in &g.dims {
        transform_along(
            &mut planner,
            &mut buf,
            &g.in_sizes,
            d,
            FftDirection::Forward,
        );
    }
    let scale = g.norm.factor(signal_numel(&g.in_sizes, &g.dims));
    // The output's elements in logical order: the spectrum, cut along the
    // last transformed dimension when one-sided.
    let last = g.dims[g.dims.len() - 1];
    let (outer, n, inner) = split_at_dim(&g.in_sizes, last);
    let kept = g.out_sizes[last] as usize;
    let mut values = Vec::with_capacity(outer * kept * inner * 2);
    for o in 0..outer {
        for k in 0..kept {
            let row = &buf[(o * n + k) * inner..(o * n + k + 1) * inner];
            for c in row {
                values.extend([c.re * scale, c.im * scale]);
            }
        }
    }
    match g.out_dtype {
        ScalarType::ComplexDouble => {
            write_values(&out, &g, &values, 2, |v| Complex::new(v[0], v[1]))?
        }
        _ => write_values(&out, &g, &values, 2, |v| {
            Complex::new(v[0] as f32, v[1] as f32)
        })?,
    }
    Ok(out)
}

/// `_fft_c2r(self, dim, normalization, last_dim_size)` on CPU.
pub fn _fft_c2r_cpu(
    self_: &Tensor,
    dim: &[i64],
    normalization: i64,
    last_dim_size: i64,
) -> Result<Tensor> {
    let g = fft_c2r_geometry(self_, dim, normalization, last_dim_size)?;
    let out = g.output(self_)?;
    if out.numel() == 0 {
        return Ok(out);
    }
    let mut buf = read_values(self_, &g.in_sizes)?;
    let mut planner = FftPlanner::new();
    let (last, rest) = g
        .dims
        .split_last()
        .ok_or_else(|| Error::internal("no FFT dim"))?;
    for &d in rest {
        transform_along(
            &mut planner,
            &mut buf,
            &g.in_sizes,
            d,
            FftDirection::Inverse,
        );
    }
    // Each line along the last dimension: the first `half` terms, the rest
    // by Hermitian symmetry, transformed back; the real parts are kept.
    let (outer, n_in, inner) = split_at_dim(&g.in_sizes, *last);
    let len = last_dim_size as usize;
    let half = len / 2 + 1;
    let fft = plan(&mut planner, len, FftDirection::Inverse);
    let scale = g.norm.factor(signal_numel(&g.out_sizes, &g.dims));
    let mut values = vec![0f64; outer * len * inner];
    let run_block = |(o, block): (usize, &mut [f64])| {
        let src = &buf[o * n_in * inner..(o + 1) * n_in * inner];
        let mut line = vec![C64::default(); len];
        let mut scratch = vec![C64::default(); fft.get_inplace_scratch_len()];
        for j in 0..inner {
            for k in 0..half {
                line[k] = src[k * inner + j];
            }
            for k in half..len {
                line[k] = line[len - k].conj();
            }
            fft.process_with_scratch(&mut line, &mut scratch);
            for (k, c) in line.iter().enumerate() {
                block[k * inner + j] = c.re * scale;
            }
        }
    };
    let block_len = len * inner;
    let grain = (GRAIN_SIZE as usize).div_ceil(block_len.max(1));
    parallel_chunks_mut(&mut values, block_len, grain, |first, part| {
        for (i, block) in part.chunks_mut(block_len.max(1)).enumerate() {
            run_block((first + i, block));
        }
    });
    match g.out_dtype {
        ScalarType::Double => write_values(&out, &g, &values, 1, |v| v[0])?,
        _ => write_values(&out, &g, &values, 1, |v| v[0] as f32)?,
    }
    Ok(out)
}
