//! Running a built iteration: the serial and parallel loops over runs of
//! the fastest dimension, with the operands' storages borrowed for the
//! whole loop, converted inputs and outputs computed in a temporary, and
//! the check that parallel chunks write disjoint memory.

use std::sync::atomic::Ordering;

use c10_core::{Error, Result, Storage, StorageBorrow, ThreadShared};

use super::{convert, Conversion, MaybeOwned, Operand, TensorIterator};
use crate::parallel::{in_parallel_region, parallel_for, GRAIN_SIZE};

/// Operands whose loop state (base pointers, borrows, steps) lives on the
/// stack: one output and up to three inputs (`addcmul`, `where`, `lerp`),
/// the state every loop zeroes before it starts; more go to the heap.
const INLINE_OPERANDS: usize = 4;

/// Dimensions whose loop counters live on the stack.
const INLINE_DIMS: usize = 8;

/// `len` elements of scratch space: in `inline` (as it is) when they fit,
/// else in `heap`, set to `fill`.
#[inline]
pub(super) fn scratch<'a, T: Copy, const N: usize>(
    inline: &'a mut [T; N],
    heap: &'a mut Vec<T>,
    len: usize,
    fill: T,
) -> &'a mut [T] {
    if len <= N {
        &mut inline[..len]
    } else {
        heap.clear();
        heap.resize(len, fill);
        heap
    }
}

impl<'a> TensorIterator<'a> {
    /// Runs `f` over the iteration on the calling thread:
    /// `f(pointers, byte_strides, n)` is called for runs of `n` elements
    /// along the fastest dimension; `pointers[i]` points at operand `i`'s
    /// first element of the run (outputs first) and `byte_strides[i]` is its
    /// step. The operands' storages are borrowed for the whole call (outputs
    /// exclusively). Afterwards, outputs computed in a temporary are copied
    /// back. Meta and empty iterations call nothing.
    ///
    /// The pointers are valid for the `n` elements at their strides, of the
    /// dtypes [`dtype`](Self::dtype) reports; `f` must read and write them as
    /// such. The iteration is borrowed mutably, so `f` cannot reach its
    /// tensors by other means.
    pub fn for_each(&mut self, mut f: impl FnMut(&[*mut u8], &[i64], usize)) -> Result<()> {
        let numel = self.state.numel;
        self.with_base_pointers(|it, bases| it.run_range(bases, 0, numel, &mut f))
    }

    /// [`for_each`](Self::for_each) split over `rayon`'s threads when the
    /// iteration has at least [`GRAIN_SIZE`] elements
    /// ([`parallel_for`]): each thread gets one contiguous range of the
    /// linearized iteration. Runs serially when the iteration is small,
    /// inside another region, or when an output could be written by two
    /// threads at once (an output whose elements overlap, or an input that
    /// partially overlaps an output). The operands stay borrowed by the
    /// calling thread, which runs no other work while it waits.
    pub fn parallel_for_each(
        &mut self,
        f: impl Fn(&[*mut u8], &[i64], usize) + Sync,
    ) -> Result<()> {
        let numel = self.state.numel;
        // Small loops (the common case of eager calls) ask rayon nothing:
        // its thread count is a thread-local lookup.
        if numel < GRAIN_SIZE || in_parallel_region() {
            return self.for_each(&f);
        }
        if rayon::current_num_threads() <= 1 || !self.writes_are_disjoint() {
            return self.for_each(&f);
        }
        self.with_base_pointers(|it, bases| {
            // SAFETY: the pointers address operand storages that are
            // borrowed (outputs exclusively) for the whole parallel loop;
            // it only runs when `writes_are_disjoint` holds, so threads,
            // which run disjoint index ranges, never write one address
            // from two threads or read an address another thread writes.
            let bases = unsafe { ThreadShared::new(bases) };
            parallel_for(0, numel, GRAIN_SIZE, |begin, end| {
                it.run_range(bases.get(), begin, end, &mut |p, s, n| f(p, s, n));
            });
        })
    }

    /// Computes every operand's base pointer from the layout its strides
    /// came from, borrows the storages, fills converted inputs, calls
    /// `body`, copies temporaries back and releases the borrows: an
    /// in-place operation that converts `self` reads and writes it under
    /// one exclusive borrow, so no other thread's update falls in between.
    /// Outputs this iteration allocated need no borrow until
    /// [`output`](Self::output) shares one: while `self` is borrowed
    /// mutably, nobody else can reach them.
    fn with_base_pointers(&mut self, body: impl FnOnce(&Self, &[*mut u8])) -> Result<()> {
        if !self.has_data() {
            return Ok(());
        }
        let this = &*self;
        let n = this.state.operands.len();
        let noutputs = this.state.noutputs;
        let outputs_unshared = !this.state.shared_an_output.load(Ordering::Relaxed);
        let mut inline = [std::ptr::null_mut::<u8>(); INLINE_OPERANDS];
        let mut heap = Vec::new();
        let bases = scratch(&mut inline, &mut heap, n, std::ptr::null_mut());
        // The storages to borrow: each operand's (written when it is an
        // output or a converted copy), and the converted inputs' sources
        // and copy-back targets.
        let mut inline_borrows = [None; INLINE_OPERANDS];
        let mut heap_borrows = Vec::new();
        let borrows = scratch(&mut inline_borrows, &mut heap_borrows, n, None);
        for (i, (borrow, op)) in borrows.iter_mut().zip(&this.state.operands).enumerate() {
            let layout = op.loop_layout()?;
            let output = i < noutputs;
            let unshared = output && outputs_unshared && matches!(op.tensor, MaybeOwned::Owned(_));
            if !unshared {
                *borrow = Some((layout.storage(), output));
            }
        }
        if !this.state.conversions.is_empty() {
            return this.with_conversions(borrows, bases, body);
        }
        StorageBorrow::hold_slots(borrows, || {
            this.fill_bases(bases)?;
            body(this, bases);
            Ok(())
        })?
    }

    /// Every operand's base pointer, read while its storage is borrowed (a
    /// storage's data moves when it grows).
    #[inline]
    fn fill_bases(&self, bases: &mut [*mut u8]) -> Result<()> {
        for (base, op) in bases.iter_mut().zip(&self.state.operands) {
            *base = op
                .loop_layout()?
                .data_ptr()
                .ok_or_else(|| Error::runtime("operand has no data"))?;
        }
        Ok(())
    }

    /// The rest of `with_base_pointers` when operands are converted: the
    /// sources of converted inputs (shared) and the targets of copies back
    /// (exclusive) are borrowed with the operands, inputs are converted,
    /// `body` runs, and results are copied back, all under those borrows.
    #[cold]
    #[inline(never)]
    fn with_conversions<'s>(
        &'s self,
        borrows: &mut [Option<(&'s Storage, bool)>],
        bases: &mut [*mut u8],
        body: impl FnOnce(&Self, &[*mut u8]),
    ) -> Result<()> {
        let conversions = || {
            self.state
                .conversions
                .iter()
                .map(|(i, c)| (&self.state.operands[*i], c))
        };
        // A converted input's copy is written too.
        for (i, _) in &self.state.conversions {
            if let Some((_, write)) = &mut borrows[*i] {
                *write = true;
            }
        }
        let sources = conversions().map(|(_, c)| match c {
            Conversion::From(source, _) => (source.storage(), false),
            Conversion::BackTo(_, target) => (target.storage(), true),
        });
        let run = || -> Result<()> {
            self.fill_bases(bases)?;
            for (op, c) in conversions() {
                if let Conversion::From(source, from) = c {
                    let to = op.tensor.dtype().unwrap_or(self.state.common_dtype);
                    // SAFETY: the source's storage is borrowed shared and
                    // the copy's exclusively (both listed above).
                    unsafe { convert::convert_elements(source, *from, op.loop_layout()?, to)? };
                }
            }
            body(self, bases);
            for (op, c) in conversions() {
                if let (Conversion::BackTo(target, layout), Some(from)) = (c, op.tensor.dtype()) {
                    let to = target.dtype().unwrap_or(from);
                    // SAFETY: the temporary's storage is borrowed (or owned
                    // alone) and the target's exclusively.
                    unsafe { convert::convert_elements(op.loop_layout()?, from, layout, to)? };
                }
            }
            Ok(())
        };
        StorageBorrow::hold(borrows.iter().flatten().copied().chain(sources), run)?
    }

    /// Calls `f` for the linear iteration indices `begin..end` (in loop
    /// order, fastest dimension first), in runs along dimension 0.
    fn run_range(
        &self,
        bases: &[*mut u8],
        begin: i64,
        end: i64,
        f: &mut impl FnMut(&[*mut u8], &[i64], usize),
    ) {
        let nops = self.state.operands.len();
        let ndim = self.state.loop_shape.len();
        // Step along dimension 0 (a 0-dim iteration is one element).
        let mut inline_strides = [0i64; INLINE_OPERANDS];
        let mut heap_strides = Vec::new();
        let inner_strides = scratch(&mut inline_strides, &mut heap_strides, nops, 0);
        if ndim == 0 {
            if begin < end {
                f(bases, inner_strides, 1);
            }
            return;
        }
        for (s, op) in inner_strides.iter_mut().zip(&self.state.operands) {
            *s = op.strides[0];
        }
        if ndim == 1 && begin == 0 {
            // The whole of one run (a contiguous or coalesced iteration on
            // one thread): it starts at the base pointers.
            if end > 0 {
                f(bases, inner_strides, end as usize);
            }
            return;
        }
        let mut inline_ptrs = [std::ptr::null_mut::<u8>(); INLINE_OPERANDS];
        let mut heap_ptrs = Vec::new();
        let ptrs = scratch(&mut inline_ptrs, &mut heap_ptrs, nops, std::ptr::null_mut());
        if ndim == 1 {
            // Part of one run (a thread's share of it).
            if begin < end {
                for ((p, &base), &s) in ptrs.iter_mut().zip(bases).zip(&*inner_strides) {
                    *p = base.wrapping_offset((begin * s) as isize);
                }
                f(ptrs, inner_strides, (end - begin) as usize);
            }
            return;
        }
        let mut inline_counter = [0i64; INLINE_DIMS];
        let mut heap_counter = Vec::new();
        let counter = scratch(&mut inline_counter, &mut heap_counter, ndim, 0);
        // The multi-index of `begin`.
        let mut rest = begin;
        for (c, &size) in counter.iter_mut().zip(&self.state.loop_shape) {
            *c = rest % size;
            rest /= size;
        }
        let mut pos = begin;
        while pos < end {
            for ((p, &base), op) in ptrs.iter_mut().zip(bases).zip(&self.state.operands) {
                let offset: i64 = counter
                    .iter()
                    .zip(op.strides.iter())
                    .map(|(c, s)| c * s)
                    .sum();
                *p = base.wrapping_offset(offset as isize);
            }
            let run = (self.state.loop_shape[0] - counter[0]).min(end - pos);
            f(ptrs, inner_strides, run as usize);
            pos += run;
            // Advance the multi-index by `run` (which ends dimension 0's row
            // or the range).
            counter[0] += run;
            let mut d = 0;
            while d + 1 < ndim && counter[d] == self.state.loop_shape[d] {
                counter[d] = 0;
                counter[d + 1] += 1;
                d += 1;
            }
        }
    }

    /// Whether splitting the iteration over threads keeps every output
    /// element written by one thread only: no output has two indices at one
    /// address, outputs do not share memory, and every input either is
    /// disjoint from each output's memory or reads it at exactly the
    /// output's positions (in-place operations).
    fn writes_are_disjoint(&self) -> bool {
        let outputs = &self.state.operands[..self.state.noutputs];
        outputs.iter().all(|out| !self.self_overlaps(out))
            && outputs.iter().enumerate().all(|(i, a)| {
                outputs[i + 1..]
                    .iter()
                    .all(|b| !self.memory_ranges_meet(a, b))
            })
            && self.state.operands[self.state.noutputs..]
                .iter()
                .all(|input| {
                    outputs.iter().all(|out| {
                        let offset =
                            |op: &Operand<'a>| op.loop_layout().ok().map(|l| l.storage_offset());
                        let same_positions = offset(input) == offset(out)
                            && input.strides == out.strides
                            && input.tensor.dtype() == out.tensor.dtype();
                        same_positions || !self.memory_ranges_meet(input, out)
                    })
                })
    }

    /// Whether two indices of the iteration reach one address of `op`
    /// (conservatively: dimensions sorted by stride must each step past
    /// everything the smaller ones reach).
    fn self_overlaps(&self, op: &Operand<'a>) -> bool {
        let elem = op.tensor.dtype().map_or(1, |d| d.element_size() as i64);
        let mut dims: Vec<(i64, i64)> = op
            .strides
            .iter()
            .zip(&self.state.loop_shape)
            .filter(|(_, &size)| size > 1)
            .map(|(&stride, &size)| (stride.abs(), size))
            .collect();
        dims.sort_unstable();
        let mut reach = elem;
        for (stride, size) in dims {
            if stride < reach {
                return true;
            }
            reach += stride * (size - 1);
        }
        false
    }

    /// Whether the byte ranges `a` and `b` touch in this iteration overlap
    /// (and they share a storage).
    fn memory_ranges_meet(&self, a: &Operand<'a>, b: &Operand<'a>) -> bool {
        let range = |op: &Operand<'a>| -> Option<(usize, i64, i64)> {
            let layout = op.loop_layout().ok()?;
            let key = layout
                .storage()
                .data_ptr()
                .map_or(0, |p| p.as_ptr() as usize);
            let elem = layout.itemsize() as i64;
            let start = layout.storage_offset() * elem;
            let (mut lo, mut hi) = (start, start + elem);
            for (&stride, &size) in op.strides.iter().zip(&self.state.loop_shape) {
                let span = stride * (size - 1);
                if span < 0 {
                    lo += span;
                } else {
                    hi += span;
                }
            }
            Some((key, lo, hi))
        };
        match (range(a), range(b)) {
            (Some((ka, la, ha)), Some((kb, lb, hb))) => ka == kb && la < hb && lb < ha,
            _ => false,
        }
    }

    /// Whether every operand is contiguous with its own element size along
    /// a single dimension (the vectorizable case).
    pub fn is_contiguous(&self) -> bool {
        self.state.loop_shape.len() <= 1
            && self.state.operands.iter().all(|op| {
                op.strides.first().copied().unwrap_or(0)
                    == op.tensor.dtype().map_or(0, |d| d.element_size() as i64)
                    || self.state.loop_shape.first().copied().unwrap_or(1) <= 1
            })
    }
}
