//! The CPU evaluation of a [`PointwiseProgram`] (registered as
//! [`POINTWISE_PROGRAM_STUB`]'s kernel): float32 operands, contiguous and
//! all of one shape (a chain's usual case: an activation of a product, a
//! residual sum and its activation); others are declined. The output is
//! cut into blocks of [`BLOCK`] elements, shared among the threads; for
//! each block every operation runs as one loop over the block, into a
//! block of scratch per operation (the last one into the output), so the
//! intermediate results never leave the cache. Each operation takes the
//! formula of its operator's kernel, so the fused chain's results are the
//! separate calls' to the bit.

use aten_core::native::pointwise_program::{
    PointwiseOp, PointwiseOperand, PointwiseProgram, PointwiseProgramKernel, POINTWISE_PROGRAM_STUB,
};
use aten_core::parallel::{parallel_chunks_mut, GRAIN_SIZE};
use c10_core::{Device, Error, Result, ScalarType, TensorBase};

use super::unary::FloatFn;

/// Elements per block: a block of scratch per operation stays in the
/// first-level cache for the chains graphs have.
const BLOCK: usize = 256;

/// The kernel (see the module docs).
fn run_program_cpu(
    program: &PointwiseProgram,
    inputs: &[TensorBase],
) -> Result<Option<TensorBase>> {
    if inputs.len() != program.inputs() {
        return Err(Error::internal(format!(
            "a pointwise program of {} inputs was given {}",
            program.inputs(),
            inputs.len()
        )));
    }
    let Some(first) = inputs.first() else {
        return Ok(None);
    };
    let sizes = first.sizes();
    let served = |t: &TensorBase| {
        t.dtype() == Some(ScalarType::Float)
            && t.device() == Some(Device::CPU)
            && t.sizes() == sizes
            && t.is_contiguous()
    };
    if !inputs.iter().all(served) {
        return Ok(None);
    }
    let out = TensorBase::empty(&sizes[..], ScalarType::Float, Device::CPU)?;
    with_inputs(inputs, &mut Vec::new(), &mut |xs| {
        out.with_data_mut::<f32, _>(|ys| {
            // The layouts were read again by the borrows: an input resized
            // by another thread since the checks above is refused here.
            if xs.iter().any(|x| x.len() != ys.len()) {
                return Err(Error::runtime(
                    "a fused pointwise call: an operand was resized while it ran",
                ));
            }
            evaluate(program, xs, ys);
            Ok(())
        })?
    })?;
    Ok(Some(out))
}

aten_core::register_dispatch!(
    POINTWISE_PROGRAM_STUB,
    PointwiseProgramKernel,
    CPU,
    run_program_cpu
);

/// `f` on the elements of every tensor of `tensors` (contiguous float32),
/// each under its shared borrow; `held` carries the slices already
/// borrowed down the recursion.
fn with_inputs<R>(
    tensors: &[TensorBase],
    held: &mut Vec<(*const f32, usize)>,
    f: &mut dyn FnMut(&[&[f32]]) -> Result<R>,
) -> Result<R> {
    match tensors.split_first() {
        Some((t, rest)) => t.with_data::<f32, _>(|s| {
            held.push((s.as_ptr(), s.len()));
            let r = with_inputs(rest, held, f);
            held.pop();
            r
        })?,
        None => {
            let slices: Vec<&[f32]> = held
                .iter()
                // SAFETY: each pair was taken from a slice that
                // `with_data` lends for the duration of its closure, and
                // every one of those closures is still running (this call
                // is nested inside all of them), each holding its shared
                // borrow, which keeps writers away.
                .map(|&(p, n)| unsafe { std::slice::from_raw_parts(p, n) })
                .collect();
            f(&slices)
        }
    }
}

/// Runs `program` on `xs` into `ys` (all of one length), in parallel over
/// blocks.
fn evaluate(program: &PointwiseProgram, xs: &[&[f32]], ys: &mut [f32]) {
    let work = BLOCK.saturating_mul(program.steps().len()).max(1);
    let grain = (GRAIN_SIZE as usize).div_ceil(work);
    #[cfg(target_arch = "x86_64")]
    let avx = crate::loops::has_avx2_fma();
    parallel_chunks_mut(ys, BLOCK, grain, |first, part| {
        let start = first * BLOCK;
        #[cfg(target_arch = "x86_64")]
        if avx {
            // SAFETY: AVX2 and FMA were detected.
            return unsafe { run_part_avx2(program, xs, start, part) };
        }
        run_part(program, xs, start, part)
    });
}

/// [`run_part`] compiled for AVX2 and FMA (no contraction: Rust does not
/// fuse a product and a sum it was not asked to).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_part_avx2(program: &PointwiseProgram, xs: &[&[f32]], start: usize, part: &mut [f32]) {
    run_part(program, xs, start, part)
}

/// The program on the elements `start..start + part.len()`.
#[inline(always)]
fn run_part(program: &PointwiseProgram, xs: &[&[f32]], start: usize, part: &mut [f32]) {
    let steps = program.steps();
    let mut scratch = vec![[0f32; BLOCK]; steps.len() - 1];
    for (b, out) in part.chunks_mut(BLOCK).enumerate() {
        let at = start + b * BLOCK;
        let len = out.len();
        for (k, step) in steps.iter().enumerate() {
            let (done, rest) = scratch.split_at_mut(k.min(steps.len() - 1));
            let dst: &mut [f32] = match rest.first_mut() {
                Some(block) => &mut block[..len],
                None => &mut *out,
            };
            // `PointwiseProgram::new` checked that inputs exist and results
            // come from earlier steps; the caller, that every input has
            // the output's length.
            let operand = |o: &PointwiseOperand| match *o {
                PointwiseOperand::Input(i) => Src::Slice(&xs[i][at..at + len]),
                PointwiseOperand::Result(r) => Src::Slice(&done[r][..len]),
                PointwiseOperand::Number(v) => Src::Number(v as f32),
            };
            let a = operand(&step.operands[0]);
            let b = step.operands.get(1).map(operand);
            apply(step.op, dst, a, b);
        }
    }
}

/// An operand of one block.
#[derive(Copy, Clone)]
enum Src<'a> {
    Slice(&'a [f32]),
    Number(f32),
}

/// One operation over a block.
#[inline(always)]
fn apply(op: PointwiseOp, dst: &mut [f32], a: Src<'_>, b: Option<Src<'_>>) {
    match op {
        PointwiseOp::Add => binary(dst, a, b, |x, y| x + y),
        PointwiseOp::Sub => binary(dst, a, b, |x, y| x - y),
        PointwiseOp::Mul => binary(dst, a, b, |x, y| x * y),
        PointwiseOp::Div => binary(dst, a, b, |x, y| x / y),
        PointwiseOp::Clamp { min, max } => {
            // As `clamp`'s kernel with number bounds: the comparisons keep
            // a NaN input NaN.
            let (lo, hi) = (min.map(|v| v as f32), max.map(|v| v as f32));
            match (lo, hi) {
                (Some(lo), Some(hi)) => unary(dst, a, move |x| {
                    let y = if x < lo { lo } else { x };
                    if y > hi {
                        hi
                    } else {
                        y
                    }
                }),
                (Some(lo), None) => unary(dst, a, move |x| if x < lo { lo } else { x }),
                (None, Some(hi)) => unary(dst, a, move |x| if x > hi { hi } else { x }),
                (None, None) => unary(dst, a, |x| x),
            }
        }
        PointwiseOp::Relu => unary(dst, a, |x| if x > 0.0 || x.is_nan() { x } else { 0.0 }),
        PointwiseOp::Sigmoid => unary(dst, a, |x| FloatFn::Sigmoid.f32(x)),
        PointwiseOp::Silu => unary(dst, a, |x| FloatFn::Silu.f32(x)),
        PointwiseOp::Tanh => unary(dst, a, |x| FloatFn::Tanh.f32(x)),
        PointwiseOp::Hardswish => unary(dst, a, |x| FloatFn::Hardswish.f32(x)),
        PointwiseOp::Hardsigmoid => unary(dst, a, |x| FloatFn::Hardsigmoid.f32(x)),
    }
}

#[inline(always)]
fn unary(dst: &mut [f32], a: Src<'_>, f: impl Fn(f32) -> f32) {
    match a {
        Src::Slice(a) => {
            for (d, &x) in dst.iter_mut().zip(a) {
                *d = f(x);
            }
        }
        Src::Number(v) => dst.fill(f(v)),
    }
}

#[inline(always)]
fn binary(dst: &mut [f32], a: Src<'_>, b: Option<Src<'_>>, f: impl Fn(f32, f32) -> f32) {
    let Some(b) = b else { return };
    match (a, b) {
        (Src::Slice(a), Src::Slice(b)) => {
            for ((d, &x), &y) in dst.iter_mut().zip(a).zip(b) {
                *d = f(x, y);
            }
        }
        (Src::Slice(a), Src::Number(y)) => {
            for (d, &x) in dst.iter_mut().zip(a) {
                *d = f(x, y);
            }
        }
        (Src::Number(x), Src::Slice(b)) => {
            for (d, &y) in dst.iter_mut().zip(b) {
                *d = f(x, y);
            }
        }
        (Src::Number(x), Src::Number(y)) => dst.fill(f(x, y)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aten_core::native::pointwise_program::PointwiseStep;
    use PointwiseOperand::{Input, Number, Result as R};

    fn tensor(values: Vec<f32>) -> TensorBase {
        let n = values.len() as i64;
        TensorBase::from_vec(values, &[n]).unwrap()
    }

    fn step(op: PointwiseOp, operands: &[PointwiseOperand]) -> PointwiseStep {
        PointwiseStep {
            op,
            operands: operands.to_vec(),
        }
    }

    /// Over several blocks and a partial one, a hardswish written out as
    /// PyTorch's decomposition gives `hardswish`'s values to the bit, and a
    /// residual sum with its ReLU its formula's.
    #[test]
    fn chains_round_as_their_calls() {
        let n = 3 * BLOCK + 17;
        let x: Vec<f32> = (0..n).map(|i| (i as f32 - 400.0) * 0.013).collect();
        let y: Vec<f32> = (0..n).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
        let hardswish = PointwiseProgram::new(
            1,
            vec![
                step(PointwiseOp::Add, &[Input(0), Number(3.0)]),
                step(
                    PointwiseOp::Clamp {
                        min: Some(0.0),
                        max: Some(6.0),
                    },
                    &[R(0)],
                ),
                step(PointwiseOp::Mul, &[Input(0), R(1)]),
                step(PointwiseOp::Div, &[R(2), Number(6.0)]),
            ],
        )
        .unwrap();
        let got = run_program_cpu(&hardswish, &[tensor(x.clone())])
            .unwrap()
            .unwrap()
            .to_vec::<f32>()
            .unwrap();
        for (g, &v) in got.iter().zip(&x) {
            assert_eq!(g.to_bits(), FloatFn::Hardswish.f32(v).to_bits(), "at {v}");
        }
        let residual = PointwiseProgram::new(
            2,
            vec![
                step(PointwiseOp::Add, &[Input(0), Input(1)]),
                step(PointwiseOp::Relu, &[R(0)]),
            ],
        )
        .unwrap();
        let got = run_program_cpu(&residual, &[tensor(x.clone()), tensor(y.clone())])
            .unwrap()
            .unwrap()
            .to_vec::<f32>()
            .unwrap();
        let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| (a + b).max(0.0)).collect();
        assert_eq!(got, want);
    }

    /// Operands the kernel does not serve are declined, not computed.
    #[test]
    fn other_operands_are_declined() {
        let relu = PointwiseProgram::new(
            2,
            vec![
                step(PointwiseOp::Add, &[Input(0), Input(1)]),
                step(PointwiseOp::Relu, &[R(0)]),
            ],
        )
        .unwrap();
        let a = tensor(vec![1.0; 4]);
        let shorter = tensor(vec![1.0; 3]);
        let doubles = TensorBase::from_vec(vec![1.0f64; 4], &[4]).unwrap();
        assert!(run_program_cpu(&relu, &[a.clone(), shorter])
            .unwrap()
            .is_none());
        assert!(run_program_cpu(&relu, &[a.clone(), doubles])
            .unwrap()
            .is_none());
        assert!(run_program_cpu(&relu, std::slice::from_ref(&a)).is_err());
    }
}
