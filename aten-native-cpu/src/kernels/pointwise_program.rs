//! The CPU evaluation of a [`PointwiseProgram`] (registered as
//! [`POINTWISE_PROGRAM_STUB`]'s kernel): float32 operands, contiguous, each
//! of the output's shape (a chain's usual case: an activation of a
//! product, a residual sum and its activation) or broadcast to it along
//! leading and trailing dimensions (a bias along the last dimensions, a
//! squeeze-and-excitation gate `[N, C, 1, 1]`, a per-channel scale
//! `[C, 1, 1]`: element `e` reads `(e / inner) % len`), when only
//! arithmetic reads them directly; others are declined. A walk through a
//! broadcast input's runs divides once per part, not per run, and runs
//! shorter than [`SHORT_RUN`] (the channels of small planes) are laid out
//! once per call as one period that blocks read in place. The output is
//! cut into blocks of [`BLOCK`] elements, shared among the threads; for
//! each block every operation runs as one loop over the block, into a
//! block of scratch per operation (the last one into the output), so the
//! intermediate results never leave the cache. A donated input of the
//! output's shape is the output: the steps before the last read it where
//! it lies, and the last reads each of its elements just before writing
//! it, so the chain needs no new buffer and writes memory the cache
//! already holds. Each operation takes the formula of its
//! operator's kernel, so the fused chain's results are the separate calls'
//! to the bit.

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
    donated: Option<usize>,
) -> Result<Option<TensorBase>> {
    if inputs.len() != program.inputs() {
        return Err(Error::internal(format!(
            "a pointwise program of {} inputs was given {}",
            program.inputs(),
            inputs.len()
        )));
    }
    if inputs.is_empty() {
        return Ok(None);
    }
    let Some(sizes) = broadcast_sizes(inputs) else {
        return Ok(None);
    };
    let Some(out_len) = sizes
        .iter()
        .try_fold(1usize, |n, &s| n.checked_mul(usize::try_from(s).ok()?))
    else {
        return Ok(None);
    };
    let mut reads = Vec::with_capacity(inputs.len());
    for t in inputs {
        let served = t.dtype() == Some(ScalarType::Float)
            && t.device() == Some(Device::CPU)
            && t.is_contiguous();
        match Read::of(&t.sizes(), &sizes) {
            Some(read) if served => reads.push(read),
            _ => return Ok(None),
        }
    }
    // A broadcast input is computed on once per output element: worth it
    // for arithmetic (MobileNetV3's hard-sigmoid gates: 224 -> 131 us), not
    // for a transcendental function of it, which the separate calls compute
    // once per input element (EfficientNet's `sigmoid` gates: 949 -> 1330
    // us when served here).
    let arithmetic = |op: PointwiseOp| {
        matches!(
            op,
            PointwiseOp::Add | PointwiseOp::Sub | PointwiseOp::Mul | PointwiseOp::Div
        )
    };
    let widened_into_other_ops = program.steps().iter().any(|step| {
        !arithmetic(step.op)
            && step.operands.iter().any(
                |o| matches!(o, PointwiseOperand::Input(i) if reads.get(*i) != Some(&Read::Same)),
            )
    });
    if widened_into_other_ops {
        return Ok(None);
    }
    // A donated input of the output's shape becomes the output: each of
    // its elements is read before it is written.
    let own = donated.filter(|&k| reads.get(k) == Some(&Read::Same));
    let out = match own {
        Some(k) => {
            reads[k] = Read::Own;
            inputs[k].clone()
        }
        None => TensorBase::empty(&sizes[..], ScalarType::Float, Device::CPU)?,
    };
    if out_len == 0 {
        return Ok(Some(out));
    }
    // The donated input is reached through the output's borrow alone: an
    // empty slice takes its place among the shared borrows.
    with_inputs(inputs, own, &mut Vec::new(), &mut |xs| {
        out.with_data_mut::<f32, _>(|ys| {
            // The layouts were read again by the borrows: an input resized
            // by another thread since the checks above is refused here.
            let resized = xs
                .iter()
                .zip(&reads)
                .any(|(x, r)| x.len() != r.len(ys.len()));
            if resized || ys.len() != out_len {
                return Err(Error::runtime(
                    "a fused pointwise call: an operand was resized while it ran",
                ));
            }
            // Short runs (the channels of small planes) are laid out once,
            // a period of them, so that blocks read them in place.
            let periods: Vec<Option<Vec<f32>>> =
                xs.iter().zip(&reads).map(|(x, &r)| period(x, r)).collect();
            let xs: Vec<Operand<'_>> = xs
                .iter()
                .zip(&reads)
                .zip(&periods)
                .map(|((&x, &read), laid)| match laid {
                    Some(p) => Operand {
                        x: p,
                        read: Read::Broadcast {
                            inner: 1,
                            len: p.len(),
                        },
                    },
                    None => Operand { x, read },
                })
                .collect();
            evaluate(program, &xs, ys);
            Ok(())
        })?
    })?;
    Ok(Some(out))
}

/// Runs shorter than this are laid out as a period (see [`period`]).
const SHORT_RUN: usize = 64;

/// The most elements a laid-out period may have.
const MAX_PERIOD: usize = 1 << 16;

/// For an input broadcast in runs shorter than [`SHORT_RUN`] (a per-channel
/// scale of planes of a few positions), one period of the values the
/// output reads (each of its `len` values `inner` times), when it is
/// at most [`MAX_PERIOD`] long: each block then reads a slice of it where
/// it would gather a few elements per run.
fn period(x: &[f32], read: Read) -> Option<Vec<f32>> {
    let Read::Broadcast { inner, len } = read else {
        return None;
    };
    let n = inner.checked_mul(len)?;
    if inner <= 1 || inner >= SHORT_RUN || n > MAX_PERIOD || x.len() != len {
        return None;
    }
    let mut laid = Vec::with_capacity(n);
    for &v in x {
        laid.extend(std::iter::repeat_n(v, inner));
    }
    Some(laid)
}

/// The shape all of `inputs` broadcast to, when they do.
fn broadcast_sizes(inputs: &[TensorBase]) -> Option<Vec<i64>> {
    let ndim = inputs.iter().map(|t| t.dim()).max()?;
    let mut sizes = vec![1i64; ndim];
    for t in inputs {
        let own = t.sizes();
        for (d, &s) in own.iter().enumerate() {
            let at = &mut sizes[ndim - own.len() + d];
            if *at == 1 {
                *at = s;
            } else if s != 1 && s != *at {
                return None;
            }
        }
    }
    Some(sizes)
}

/// How output element `e` finds its value in an input.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Read {
    /// At `e` (the output's shape).
    Same,
    /// The output's own element `e`, read before it is written (a donated
    /// input).
    Own,
    /// At `(e / inner) % len`: an input whose sizes are ones, then the
    /// output's (`len` elements), then ones (`inner` output elements each):
    /// a bias along the last dimensions (`inner` 1), a gate `[N, C, 1, 1]`,
    /// a per-channel scale `[C, 1, 1]` of a batch of images.
    Broadcast { inner: usize, len: usize },
}

impl Read {
    /// How an input of `own` sizes is read for an output of `out` sizes
    /// (of at least one element), if either way does it.
    fn of(own: &[i64], out: &[i64]) -> Option<Read> {
        let pad = out.len().checked_sub(own.len())?;
        let size = |d: usize| if d < pad { 1 } else { own[d - pad] };
        if own == out {
            return Some(Read::Same);
        }
        let elements = |dims: &[i64]| usize::try_from(dims.iter().product::<i64>()).ok();
        // Leading ones, then the output's sizes, then trailing ones (a
        // dimension of size one in both counts as matched).
        let mut from = 0;
        while from < out.len() && size(from) == 1 && out[from] != 1 {
            from += 1;
        }
        let mut to = from;
        while to < out.len() && size(to) == out[to] {
            to += 1;
        }
        if !(to..out.len()).all(|d| size(d) == 1) {
            return None;
        }
        Some(Read::Broadcast {
            inner: elements(&out[to..])?,
            len: elements(&out[from..to])?,
        })
    }

    /// The input's length for an output of `out_len` elements.
    fn len(self, out_len: usize) -> usize {
        match self {
            Read::Same => out_len,
            Read::Own => 0,
            Read::Broadcast { len, .. } => len,
        }
    }
}

/// An input's elements and how the output reads them.
#[derive(Copy, Clone)]
struct Operand<'a> {
    x: &'a [f32],
    read: Read,
}

/// Where a block finds an input's values.
#[derive(Copy, Clone)]
enum InBlock {
    /// The input's own elements, from this offset.
    At(usize),
    /// One value for the whole block (a block inside one run of a
    /// broadcast input).
    Value(f32),
    /// Gathered into the input's block of scratch.
    Gathered,
    /// The output's own elements (a donated input).
    Own,
}

/// The widest vector's lanes.
const LANES: usize = 16;

/// A block of an input's gathered values, with a vector's slack after it.
#[derive(Clone)]
struct Gather([f32; BLOCK + LANES]);

/// Where the blocks walking a broadcast input stand in its runs: the
/// value the next element reads and how many elements of its run are
/// left, so that a walk divides once, not at each run.
#[derive(Copy, Clone, Default)]
struct Run {
    index: usize,
    left: usize,
}

impl Run {
    /// Where element `at` stands in runs of `inner` elements reading the
    /// `n` values in turn.
    fn at(at: usize, inner: usize, n: usize) -> Run {
        let q = at / inner;
        Run {
            index: q % n,
            left: (q + 1) * inner - at,
        }
    }

    /// Past `k` more elements, `k` at most `left`.
    #[inline(always)]
    fn advance(&mut self, k: usize, inner: usize, n: usize) {
        self.left -= k;
        if self.left == 0 {
            self.left = inner;
            self.index += 1;
            if self.index == n {
                self.index = 0;
            }
        }
    }
}

impl Operand<'_> {
    /// Where a walk from output element `at` stands in this input's runs
    /// (for the broadcast inputs whose runs are longer than one element).
    fn run_at(&self, at: usize) -> Run {
        match self.read {
            Read::Broadcast { inner, len: n } if inner > 1 => Run::at(at, inner, n),
            _ => Run::default(),
        }
    }

    /// Where the input's values for output elements `at .. at +
    /// block.len()` are, gathered into `block` when broadcast across a
    /// run's end; `run` is where `at` stands in the input's runs (from
    /// [`Operand::run_at`]), moved past the block.
    #[inline(always)]
    fn block(&self, at: usize, len: usize, block: &mut Gather, run: &mut Run) -> InBlock {
        let block = &mut block.0;
        match self.read {
            Read::Same => InBlock::At(at),
            Read::Own => InBlock::Own,
            Read::Broadcast { inner: 1, len: n } => {
                let first = at % n;
                if first + len <= n {
                    return InBlock::At(first);
                }
                let mut i = first;
                for v in block[..len].iter_mut() {
                    *v = self.x[i];
                    i += 1;
                    if i == n {
                        i = 0;
                    }
                }
                InBlock::Gathered
            }
            Read::Broadcast { inner, len: n } => {
                // Runs of `inner` elements read one value each.
                if len <= run.left {
                    let v = self.x[run.index];
                    run.advance(len, inner, n);
                    return InBlock::Value(v);
                }
                let mut filled = 0;
                while filled < len {
                    let take = run.left.min(len - filled);
                    let v = self.x[run.index];
                    if take <= LANES {
                        // One vector store for a short run (a small plane's
                        // channel): the lanes past it are the next run's
                        // to overwrite, or the slack's.
                        block[filled..filled + LANES].fill(v);
                    } else {
                        block[filled..filled + take].fill(v);
                    }
                    filled += take;
                    run.advance(take, inner, n);
                }
                InBlock::Gathered
            }
        }
    }
}

aten_core::register_dispatch!(
    POINTWISE_PROGRAM_STUB,
    PointwiseProgramKernel,
    CPU,
    run_program_cpu
);

/// `f` on the elements of every tensor of `tensors` (contiguous float32),
/// each under its shared borrow, but an empty slice for tensor `skip`;
/// `held` carries the slices already borrowed down the recursion.
fn with_inputs<R>(
    tensors: &[TensorBase],
    skip: Option<usize>,
    held: &mut Vec<(*const f32, usize)>,
    f: &mut dyn FnMut(&[&[f32]]) -> Result<R>,
) -> Result<R> {
    match tensors.split_first() {
        Some((_, rest)) if skip == Some(held.len()) => {
            held.push((std::ptr::NonNull::<f32>::dangling().as_ptr(), 0));
            let r = with_inputs(rest, skip, held, f);
            held.pop();
            r
        }
        Some((t, rest)) => t.with_data::<f32, _>(|s| {
            held.push((s.as_ptr(), s.len()));
            let r = with_inputs(rest, skip, held, f);
            held.pop();
            r
        })?,
        None => {
            let slices: Vec<&[f32]> = held
                .iter()
                // SAFETY: each pair but the skipped one's (a dangling,
                // aligned pointer and length zero: an empty slice) was
                // taken from a slice that `with_data` lends for the
                // duration of its closure, and every one of those closures
                // is still running (this call is nested inside all of
                // them), each holding its shared borrow, which keeps
                // writers away.
                .map(|&(p, n)| unsafe { std::slice::from_raw_parts(p, n) })
                .collect();
            f(&slices)
        }
    }
}

/// Runs `program` on `xs` into `ys` (all of one length), in parallel over
/// blocks.
fn evaluate(program: &PointwiseProgram, xs: &[Operand<'_>], ys: &mut [f32]) {
    let work = BLOCK.saturating_mul(program.steps().len()).max(1);
    let grain = (GRAIN_SIZE as usize).div_ceil(work);
    #[cfg(target_arch = "x86_64")]
    let avx = crate::loops::has_avx2_fma();
    #[cfg(target_arch = "x86_64")]
    let avx512 = avx && std::is_x86_feature_detected!("avx512f");
    parallel_chunks_mut(ys, BLOCK, grain, |first, part| {
        let start = first * BLOCK;
        #[cfg(target_arch = "x86_64")]
        if avx512 {
            // SAFETY: AVX-512F, AVX2 and FMA were detected.
            return unsafe { run_part_avx512(program, xs, start, part) };
        }
        #[cfg(target_arch = "x86_64")]
        if avx {
            // SAFETY: AVX2 and FMA were detected.
            return unsafe { run_part_avx2(program, xs, start, part) };
        }
        run_part(program, xs, start, part)
    });
}

/// [`run_part`] compiled for AVX-512: each operation's loop on 16 lanes
/// (EfficientNet's SiLU chains 1.2 ms at 8), each lane computing the
/// formula of [`run_part_avx2`], so the bits are the same.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn run_part_avx512(
    program: &PointwiseProgram,
    xs: &[Operand<'_>],
    start: usize,
    part: &mut [f32],
) {
    run_part(program, xs, start, part)
}

/// [`run_part`] compiled for AVX2 and FMA (no contraction: Rust does not
/// fuse a product and a sum it was not asked to).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_part_avx2(
    program: &PointwiseProgram,
    xs: &[Operand<'_>],
    start: usize,
    part: &mut [f32],
) {
    run_part(program, xs, start, part)
}

thread_local! {
    /// Each thread's blocks of scratch, kept from one program to the next
    /// (a chain after each of a network's convolutions would otherwise
    /// allocate and clear them per call).
    static SCRATCH: std::cell::Cell<Vec<f32>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The program on the elements `start..start + part.len()`.
#[inline(always)]
fn run_part(program: &PointwiseProgram, xs: &[Operand<'_>], start: usize, part: &mut [f32]) {
    let steps = program.steps();
    let Some(last) = steps.len().checked_sub(1) else {
        return;
    };
    // A block per step but the last; one per input for the broadcast
    // ones' gathered values.
    let mut scratch = SCRATCH.with(std::cell::Cell::take);
    scratch.resize(last * BLOCK, 0.0);
    let mut gathered = vec![Gather([0.0; BLOCK + LANES]); xs.len()];
    let mut blocks = vec![InBlock::At(0); xs.len()];
    let mut runs: Vec<Run> = xs.iter().map(|x| x.run_at(start)).collect();
    for (b, out) in part.chunks_mut(BLOCK).enumerate() {
        let at = start + b * BLOCK;
        let len = out.len();
        for (((x, block), found), run) in xs
            .iter()
            .zip(gathered.iter_mut())
            .zip(blocks.iter_mut())
            .zip(runs.iter_mut())
        {
            *found = x.block(at, len, block, run);
        }
        for (k, step) in steps.iter().enumerate() {
            let (done, rest) = scratch.split_at_mut(k.min(last) * BLOCK);
            // `PointwiseProgram::new` checked that inputs exist and results
            // come from earlier steps; the caller, that every input has
            // the length its read asks for. A donated input is the output:
            // read from it until the last step, which reads each element
            // of it just before writing it.
            let operand = |o: &PointwiseOperand| match *o {
                PointwiseOperand::Input(i) => match blocks[i] {
                    InBlock::At(from) => Some(Src::Slice(&xs[i].x[from..from + len])),
                    InBlock::Value(v) => Some(Src::Number(v)),
                    InBlock::Gathered => Some(Src::Slice(&gathered[i].0[..len])),
                    InBlock::Own => None,
                },
                PointwiseOperand::Result(r) => Some(Src::Slice(&done[r * BLOCK..r * BLOCK + len])),
                PointwiseOperand::Number(v) => Some(Src::Number(v as f32)),
            };
            if k == last {
                let a = operand(&step.operands[0]).unwrap_or(Src::Dst);
                let b = step.operands.get(1).map(|o| operand(o).unwrap_or(Src::Dst));
                apply(step.op, out, a, b);
            } else {
                let own = Src::Slice(&*out);
                let a = operand(&step.operands[0]).unwrap_or(own);
                let b = step.operands.get(1).map(|o| operand(o).unwrap_or(own));
                apply(step.op, &mut rest[..len], a, b);
            }
        }
    }
    SCRATCH.with(|cell| cell.set(scratch));
}

/// An operand of one block.
#[derive(Copy, Clone)]
enum Src<'a> {
    Slice(&'a [f32]),
    Number(f32),
    /// The destination's own element, read before it is written.
    Dst,
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
        Src::Dst => {
            for d in dst.iter_mut() {
                *d = f(*d);
            }
        }
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
        (Src::Dst, Src::Slice(b)) => {
            for (d, &y) in dst.iter_mut().zip(b) {
                *d = f(*d, y);
            }
        }
        (Src::Slice(a), Src::Dst) => {
            for (d, &x) in dst.iter_mut().zip(a) {
                *d = f(x, *d);
            }
        }
        (Src::Dst, Src::Number(y)) => {
            for d in dst.iter_mut() {
                *d = f(*d, y);
            }
        }
        (Src::Number(x), Src::Dst) => {
            for d in dst.iter_mut() {
                *d = f(x, *d);
            }
        }
        (Src::Dst, Src::Dst) => {
            for d in dst.iter_mut() {
                *d = f(*d, *d);
            }
        }
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

    /// A residual sum and its ReLU.
    fn residual() -> PointwiseProgram {
        PointwiseProgram::new(
            2,
            vec![
                step(PointwiseOp::Add, &[Input(0), Input(1)]),
                step(PointwiseOp::Relu, &[R(0)]),
            ],
        )
        .unwrap()
    }

    /// The program's values on `inputs`, into a new tensor.
    fn values_of(program: &PointwiseProgram, inputs: &[TensorBase]) -> Vec<f32> {
        run_program_cpu(program, inputs, None)
            .unwrap()
            .unwrap()
            .to_vec::<f32>()
            .unwrap()
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
        let got = run_program_cpu(&hardswish, &[tensor(x.clone())], None)
            .unwrap()
            .unwrap()
            .to_vec::<f32>()
            .unwrap();
        for (g, &v) in got.iter().zip(&x) {
            assert_eq!(g.to_bits(), FloatFn::Hardswish.f32(v).to_bits(), "at {v}");
        }
        let residual = residual();
        let got = values_of(&residual, &[tensor(x.clone()), tensor(y.clone())]);
        let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| (a + b).max(0.0)).collect();
        assert_eq!(got, want);
    }

    /// A gate broadcast along the trailing dimensions, a bias along the
    /// leading ones and a per-channel scale along both read, for each
    /// output element, the value the separate broadcasting calls would;
    /// ones between matched sizes, and a `sigmoid` of a broadcast input,
    /// are declined.
    #[test]
    fn broadcast_operands_read_their_elements() {
        let shaped = |values: Vec<f32>, sizes: &[i64]| TensorBase::from_vec(values, sizes).unwrap();
        let (n, c, h, w) = (2usize, 3usize, 5usize, 70usize);
        let len = n * c * h * w;
        let x: Vec<f32> = (0..len).map(|i| (i as f32 * 0.37).sin() * 4.0).collect();
        let gate: Vec<f32> = (0..n * c).map(|i| i as f32 * 0.5 - 1.0).collect();
        let bias: Vec<f32> = (0..w).map(|i| i as f32 * 0.01).collect();
        let program = PointwiseProgram::new(
            3,
            vec![
                step(PointwiseOp::Mul, &[Input(0), Input(1)]),
                step(PointwiseOp::Sigmoid, &[R(0)]),
                step(PointwiseOp::Add, &[R(1), Input(2)]),
            ],
        )
        .unwrap();
        let sizes = [n as i64, c as i64, h as i64, w as i64];
        let inputs = [
            shaped(x.clone(), &sizes),
            shaped(gate.clone(), &[n as i64, c as i64, 1, 1]),
            shaped(bias.clone(), &[1, w as i64]),
        ];
        let out = run_program_cpu(&program, &inputs, None).unwrap().unwrap();
        assert_eq!(out.sizes(), &sizes[..]);
        let got = out.to_vec::<f32>().unwrap();
        for (e, g) in got.iter().enumerate() {
            let want = FloatFn::Sigmoid.f32(x[e] * gate[e / (h * w)]) + bias[e % w];
            assert_eq!(g.to_bits(), want.to_bits(), "element {e}");
        }
        // A per-channel scale of a batch of images (ones before and after
        // its channels) is read as `(e / inner) % len`.
        let scale: Vec<f32> = (0..c).map(|i| 0.25 + i as f32).collect();
        let channels = [
            inputs[0].clone(),
            shaped(scale.clone(), &[c as i64, 1, 1]),
            inputs[2].clone(),
        ];
        let got = run_program_cpu(&program, &channels, None)
            .unwrap()
            .unwrap()
            .to_vec::<f32>()
            .unwrap();
        for (e, g) in got.iter().enumerate() {
            let want = FloatFn::Sigmoid.f32(x[e] * scale[(e / (h * w)) % c]) + bias[e % w];
            assert_eq!(g.to_bits(), want.to_bits(), "element {e}");
        }
        // Ones between matched sizes are declined.
        let between = shaped(vec![1.0; n * h], &[n as i64, 1, h as i64, 1]);
        let declined = [inputs[0].clone(), between, inputs[2].clone()];
        assert!(run_program_cpu(&program, &declined, None)
            .unwrap()
            .is_none());
        // A transcendental function of a broadcast input is left to the
        // separate calls, which compute it once per input element.
        let gated = PointwiseProgram::new(
            2,
            vec![
                step(PointwiseOp::Sigmoid, &[Input(1)]),
                step(PointwiseOp::Mul, &[Input(0), R(0)]),
            ],
        )
        .unwrap();
        let gated_inputs = [inputs[0].clone(), inputs[1].clone()];
        assert!(run_program_cpu(&gated, &gated_inputs, None)
            .unwrap()
            .is_none());
    }

    /// A donated input of the output's shape becomes the output, with the
    /// values a new tensor would hold; a broadcast one is not written.
    #[test]
    fn a_donated_input_is_written_in_place() {
        let n = 2 * BLOCK + 9;
        let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 100.0).collect();
        let y: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
        let residual = residual();
        let want = values_of(&residual, &[tensor(x.clone()), tensor(y.clone())]);
        let (a, b) = (tensor(x.clone()), tensor(y.clone()));
        let out = run_program_cpu(&residual, &[a.clone(), b.clone()], Some(1))
            .unwrap()
            .unwrap();
        assert!(out.is_same(&b));
        assert_eq!(b.to_vec::<f32>().unwrap(), want);
        assert_eq!(a.to_vec::<f32>().unwrap(), x);
        let scale = TensorBase::from_vec(vec![2.0f32], &[1]).unwrap();
        let scaled =
            PointwiseProgram::new(2, vec![step(PointwiseOp::Mul, &[Input(0), Input(1)])]).unwrap();
        let out = run_program_cpu(&scaled, &[a.clone(), scale.clone()], Some(1))
            .unwrap()
            .unwrap();
        assert!(!out.is_same(&scale));
        assert_eq!(scale.to_vec::<f32>().unwrap(), vec![2.0]);
    }

    /// A per-channel scale of planes shorter than a vector (a late
    /// stage's 2 x 2) is read right across blocks, and from a part that
    /// starts inside a run, as a thread's part does.
    #[test]
    fn short_runs_read_their_channels() {
        let (n, c, plane) = (3usize, 37usize, 3usize);
        let len = n * c * plane;
        assert!(len > BLOCK);
        let x: Vec<f32> = (0..len).map(|i| i as f32 * 0.25 - 7.0).collect();
        let scale: Vec<f32> = (0..c).map(|i| 1.5 + i as f32).collect();
        let program =
            PointwiseProgram::new(2, vec![step(PointwiseOp::Mul, &[Input(0), Input(1)])]).unwrap();
        let inputs = [
            TensorBase::from_vec(x.clone(), &[n as i64, c as i64, plane as i64]).unwrap(),
            TensorBase::from_vec(scale.clone(), &[c as i64, 1]).unwrap(),
        ];
        let want: Vec<f32> = (0..len).map(|e| x[e] * scale[(e / plane) % c]).collect();
        assert_eq!(values_of(&program, &inputs), want);
        let scale_read = Read::of(&[c as i64, 1], &[n as i64, c as i64, plane as i64]).unwrap();
        let xs = [
            Operand {
                x: &x,
                read: Read::Same,
            },
            Operand {
                x: &scale,
                read: scale_read,
            },
        ];
        let start = BLOCK + 1;
        let mut part = vec![0.0; len - start];
        run_part(&program, &xs, start, &mut part);
        assert_eq!(part, want[start..]);
    }

    /// A donated input read by the last step, as either operand, is read
    /// element by element before it is overwritten.
    #[test]
    fn the_last_step_reads_the_donated_input_in_place() {
        let n = BLOCK + 5;
        let x: Vec<f32> = (0..n).map(|i| i as f32 - 9.5).collect();
        let scale = TensorBase::from_vec(vec![3.0f32], &[1]).unwrap();
        for program in [
            PointwiseProgram::new(2, vec![step(PointwiseOp::Mul, &[Input(0), Input(1)])]),
            PointwiseProgram::new(2, vec![step(PointwiseOp::Sub, &[Input(1), Input(0)])]),
            PointwiseProgram::new(2, vec![step(PointwiseOp::Add, &[Input(0), Input(0)])]),
        ] {
            let program = program.unwrap();
            let want = values_of(&program, &[tensor(x.clone()), scale.clone()]);
            let own = tensor(x.clone());
            let out = run_program_cpu(&program, &[own.clone(), scale.clone()], Some(0))
                .unwrap()
                .unwrap();
            assert!(out.is_same(&own));
            assert_eq!(own.to_vec::<f32>().unwrap(), want);
        }
    }

    /// Operands the kernel does not serve are declined, not computed.
    #[test]
    fn other_operands_are_declined() {
        let relu = residual();
        let a = tensor(vec![1.0; 4]);
        let shorter = tensor(vec![1.0; 3]);
        let doubles = TensorBase::from_vec(vec![1.0f64; 4], &[4]).unwrap();
        assert!(run_program_cpu(&relu, &[a.clone(), shorter], None)
            .unwrap()
            .is_none());
        assert!(run_program_cpu(&relu, &[a.clone(), doubles], None)
            .unwrap()
            .is_none());
        assert!(run_program_cpu(&relu, std::slice::from_ref(&a), None).is_err());
    }
}
