//! Kernels that write computed values into an existing tensor: `fill_`,
//! `zero_`, the range factories' out kernels (`arange`, `linspace`, `eye`)
//! and the random fills (`uniform_`, `normal_`, `randperm`).

use aten_core::meta::random::{check_normal_args, check_uniform_args};
use aten_core::meta::{arange_out_meta, eye_out_meta, linspace_out_meta};
use aten_core::tensor_iterator::convert::copy_into;
use aten_core::Tensor;
use c10_core::{
    dispatch_dtype, Element, Generator, Numeric, Result, Scalar, ScalarType, TensorBase,
};

use super::util::{dtype_of, not_implemented, wrap};
use aten_core::parallel::{parallel_chunks_mut, GRAIN_SIZE};

/// Writes `f(i)` into the `i`-th element (row-major) of `out`, in parallel
/// for large tensors; a non-contiguous `out` is written through a
/// contiguous buffer.
pub fn write_elements<T: Element + Send>(
    out: &Tensor,
    f: impl Fn(usize) -> T + Sync,
) -> Result<()> {
    if out.numel() == 0 {
        return Ok(());
    }
    let fill = |dst: &mut [T]| {
        parallel_chunks_mut(dst, 1, GRAIN_SIZE as usize, |base, part| {
            for (k, v) in part.iter_mut().enumerate() {
                *v = f(base + k);
            }
        });
    };
    if out.is_contiguous() {
        out.with_data_mut::<T, _>(fill)?;
    } else {
        let tmp = TensorBase::empty(
            &out.sizes(),
            T::DTYPE,
            out.device().unwrap_or(c10_core::Device::CPU),
        )?;
        tmp.with_data_mut::<T, _>(fill)?;
        copy_into(&Tensor::from(tmp), out)?;
    }
    Ok(())
}

/// `fill_.Scalar(value)`: every element becomes `value` (converted to the
/// tensor's dtype).
pub fn fill_(self_: &Tensor, value: Scalar) -> Result<Tensor> {
    let dtype = dtype_of(self_)?;
    value.check_fits(dtype)?;
    if self_.numel() == 0 {
        return Ok(self_.clone());
    }
    if !self_.is_contiguous() {
        copy_into(wrap(value)?.base(), self_)?;
        return Ok(self_.clone());
    }
    // A contiguous tensor is filled with one value converted once (by the
    // copy kernel's own conversion, into a one-element tensor), rather
    // than through a broadcast copy that converts every element:
    // `zero_` on gradients runs every training step.
    let one = Tensor::from(TensorBase::empty(&[], dtype, c10_core::Device::CPU)?);
    copy_into(wrap(value)?.base(), &one)?;
    dispatch_dtype!(dtype, T => {
        let v = one.to_vec::<T>()?[0];
        self_.with_data_mut::<T, _>(|dst| fill_slice(dst, v))?;
    }, _ => copy_into(wrap(value)?.base(), self_)?);
    Ok(self_.clone())
}

/// Every element of `dst` becomes `v`, in parallel for large slices.
fn fill_slice<T: Copy + Send + Sync>(dst: &mut [T], v: T) {
    parallel_chunks_mut(dst, 1, GRAIN_SIZE as usize, |_, part| part.fill(v));
}

/// `zero_()`.
pub fn zero_(self_: &Tensor) -> Result<Tensor> {
    fill_(self_, Scalar::Int(0))
}

/// `arange.start_out(start, end, step, out)`: resizes `out` to the length
/// of the range and writes `start + i * step`.
pub fn arange_out(start: Scalar, end: Scalar, step: Scalar, out: &Tensor) -> Result<Tensor> {
    arange_out_meta(start, end, step, out)?;
    let dtype = dtype_of(out)?;
    let integral = !dtype.is_floating_point();
    let (xs, xstep) = (start.to_f64(), step.to_f64());
    if dtype == ScalarType::Bool {
        return Err(not_implemented("arange_cpu", dtype));
    }
    dispatch_dtype!(dtype, T => {
        if integral {
            // PyTorch's kernel: `start + step * i` in the accumulate type,
            // int64 for every integral type, with the Scalars truncated to
            // it (a step of 0.5 gives zeros).
            let (s, st) = (start.to_i64(), step.to_i64());
            write_elements::<T>(out, |i| T::from_i64(s.wrapping_add(st.wrapping_mul(i as i64))))?;
        } else {
            write_elements::<T>(out, |i| T::from_f64(xs + xstep * i as f64))?;
        }
    }, _ => return Err(not_implemented("arange_cpu", dtype)));
    Ok(out.clone())
}

/// `linspace.out(start, end, steps, out)`: `steps` evenly spaced values,
/// the first half counted from `start` and the second from `end`, as
/// PyTorch's kernel does (so both ends are exact).
pub fn linspace_out(start: Scalar, end: Scalar, steps: i64, out: &Tensor) -> Result<Tensor> {
    linspace_out_meta(start, end, steps, out)?;
    let dtype = dtype_of(out)?;
    let (s, e) = (start.to_f64(), end.to_f64());
    let halfway = steps / 2;
    // Single-precision types step in f32 (PyTorch's opmath type), the
    // others in f64.
    let single = matches!(
        dtype,
        ScalarType::Float | ScalarType::Half | ScalarType::BFloat16
    );
    let value = move |i: usize| -> f64 {
        let i = i as i64;
        if steps == 1 {
            return s;
        }
        if single {
            let (s32, e32) = (s as f32, e as f32);
            let step = (e32 - s32) / (steps - 1) as f32;
            f64::from(if i < halfway {
                s32 + step * i as f32
            } else {
                e32 - step * (steps - i - 1) as f32
            })
        } else {
            let step = (e - s) / (steps - 1) as f64;
            if i < halfway {
                s + step * i as f64
            } else {
                e - step * (steps - i - 1) as f64
            }
        }
    };
    dispatch_dtype!(dtype, T => write_elements::<T>(out, |i| T::from_f64(value(i)))?,
        _ => return Err(not_implemented("linspace_cpu", dtype)));
    Ok(out.clone())
}

/// `eye.m_out(n, m, out)`: ones on the diagonal of an `n` x `m` matrix.
pub fn eye_out(n: i64, m: i64, out: &Tensor) -> Result<Tensor> {
    eye_out_meta(n, m, out)?;
    let dtype = dtype_of(out)?;
    let cols = m.max(1) as usize;
    dispatch_dtype!(dtype, T => write_elements::<T>(out, |i| {
        T::from_i64(i64::from(i / cols == i % cols))
    })?, _ => return Err(not_implemented("eye", dtype)));
    Ok(out.clone())
}

/// The generator a random kernel draws from: the given one or the default.
fn generator_or_default(generator: Option<Generator>) -> Generator {
    generator.unwrap_or_else(|| Generator::default_cpu().clone())
}

/// Fills a floating tensor (checked by the caller) with `sample(seed, i)`
/// for `numel` consecutive indices reserved from the generator's stream.
fn random_fill(
    self_: &Tensor,
    name: &str,
    generator: Option<Generator>,
    draws_per_element: u64,
    sample: impl Fn(u64, u64) -> f64 + Sync,
) -> Result<Tensor> {
    let dtype = dtype_of(self_)?;
    let g = generator_or_default(generator);
    let first = g.advance((self_.numel() as u64).saturating_mul(draws_per_element));
    let seed = g.current_seed();
    dispatch_dtype!(dtype, T => write_elements::<T>(self_, |i| {
        T::from_f64(sample(seed, first.wrapping_add(i as u64 * draws_per_element)))
    })?, _ => return Err(not_implemented(name, dtype)));
    Ok(self_.clone())
}

/// `uniform_(from, to, generator)`.
pub fn uniform_(
    self_: &Tensor,
    from: f64,
    to: f64,
    generator: Option<Generator>,
) -> Result<Tensor> {
    check_uniform_args(self_, from, to)?;
    // Single-precision types draw 24 bits, so that the value stays below
    // `to` after rounding (as PyTorch's float distribution does).
    let bits = if matches!(dtype_of(self_)?, ScalarType::Double) {
        53
    } else {
        24
    };
    random_fill(
        self_,
        "check_uniform_bounds",
        generator,
        1,
        move |seed, i| from + (to - from) * Generator::uniform_at(seed, i, bits),
    )
}

/// `normal_(mean, std, generator)`: Box-Muller on two draws per element.
pub fn normal_(
    self_: &Tensor,
    mean: f64,
    std: f64,
    generator: Option<Generator>,
) -> Result<Tensor> {
    check_normal_args(self_, std)?;
    random_fill(self_, "normal_kernel_cpu", generator, 2, |seed, i| {
        let u1 = 1.0 - Generator::uniform_at(seed, i, 53);
        let u2 = Generator::uniform_at(seed, i.wrapping_add(1), 53);
        mean + std * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    })
}

/// `randperm.generator_out(n, generator, out)`: `out` resized to `[n]`
/// holding a random permutation of `0..n`, shuffled as PyTorch's
/// `randperm_cpu` does (for each `i`, swap with a draw in `i..n`).
pub fn randperm_out_cpu(n: i64, generator: Option<Generator>, out: &Tensor) -> Result<Tensor> {
    aten_core::native::factories::randperm_out_checks(n, generator.as_ref(), out)?;
    let dtype = dtype_of(out)?;
    let len = usize::try_from(n).unwrap_or(0);
    let mut perm: Vec<i64> = super::util::try_vec_with_capacity(len)?;
    perm.extend(0..n);
    if len > 1 {
        let g = generator_or_default(generator);
        let first = g.advance(len as u64 - 1);
        let seed = g.current_seed();
        for i in 0..len - 1 {
            let z = Generator::random_at(seed, first.wrapping_add(i as u64)) % (len - i) as u64;
            perm.swap(i, i + z as usize);
        }
    }
    dispatch_dtype!(numeric: dtype, T => write_elements::<T>(out, |i| T::from_i64(perm[i]))?,
        _ => return Err(not_implemented("randperm", dtype)));
    Ok(out.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_draws_are_half_open() {
        for i in 0..1000 {
            for bits in [24, 53] {
                let u = Generator::uniform_at(7, i, bits);
                assert!((0.0..1.0).contains(&u), "{u}");
            }
        }
    }
}
