//! `TensorIterator`: the backend-neutral half of every pointwise kernel.
//!
//! Building an iterator ([`TensorIteratorConfig::build`]) computes what
//! PyTorch's `TensorIteratorBase::build` does, in the same order:
//!
//! 1. the broadcast shape of the inputs (PyTorch's error text on mismatch);
//! 2. the common dtype (type promotion with the 0-dim and wrapped-number
//!    rules), the output dtype, and the device;
//! 3. per-operand strides for the broadcast shape (0 on broadcast dims);
//! 4. the dimension order: fastest-varying first, sorted by the operands'
//!    strides, so an output follows its inputs' layout (`a.t() + b.t()` is
//!    laid out like `a.t()`);
//! 5. the outputs: allocated (undefined ones) or resized (`out=` arguments
//!    of another shape) with strides that follow that order;
//! 6. inputs of another dtype than the computation's are converted, and an
//!    output of another dtype gets a temporary that is copied back;
//! 7. adjacent dimensions that are contiguous for every operand are merged.
//!
//! Backends then run loops over the result: [`TensorIterator::for_each`]
//! hands a closure base pointers and byte strides for runs along the
//! fastest dimension. Meta tensors stop after step 5 (no data).

pub mod broadcast;
mod build;
mod config;
pub mod convert;
mod dimensions;
mod dtypes;
mod run;

use c10_core::tensor_impl::DimVector;
use c10_core::{
    CachedBox, Device, DeviceType, Error, LayoutRef, Result, ScalarType, SmallVec, TensorBase,
    TensorLayout,
};

use std::sync::atomic::{AtomicBool, Ordering};

use crate::Tensor;
pub use broadcast::infer_size;
pub use config::{IntoInput, TensorIteratorConfig};
use dimensions::byte_strides;
pub use dtypes::can_cast;

/// A tensor an iteration borrows from its caller or owns (PyTorch's
/// `c10::MaybeOwned<TensorBase>`): inputs and `out=` arguments are
/// borrowed, so building an iteration costs no reference counting for
/// them; allocated outputs and converted inputs are owned.
#[derive(Clone, Debug)]
enum MaybeOwned<'a> {
    Borrowed(&'a Tensor),
    Owned(Tensor),
}

impl Default for MaybeOwned<'_> {
    /// The undefined tensor (a placeholder while operands are built).
    #[inline]
    fn default() -> Self {
        MaybeOwned::Borrowed(&UNDEFINED)
    }
}

impl std::ops::Deref for MaybeOwned<'_> {
    type Target = Tensor;
    #[inline]
    fn deref(&self) -> &Tensor {
        match self {
            MaybeOwned::Borrowed(t) => t,
            MaybeOwned::Owned(t) => t,
        }
    }
}

/// An input of a configuration, borrowed from the caller (PyTorch's
/// `add_borrowed_input`); an input the configuration owns
/// (`add_owned_input`) is the undefined tensor here until the set-up
/// resolves it. `Default` (the undefined tensor) only fills the unused
/// inline slots of a [`SmallVec`].
#[derive(Clone, Copy, Debug)]
struct TensorRef<'t>(&'t Tensor);

static UNDEFINED: Tensor = Tensor::undefined();

impl Default for TensorRef<'_> {
    #[inline]
    fn default() -> Self {
        TensorRef(&UNDEFINED)
    }
}

impl std::ops::Deref for TensorRef<'_> {
    type Target = Tensor;
    #[inline]
    fn deref(&self) -> &Tensor {
        self.0
    }
}

/// One operand of an iteration.
///
/// Its `strides` were computed from one layout of its tensor, checked
/// against the iteration's shape: the snapshot in `layout` for a borrowed
/// tensor (another thread may resize it meanwhile; the loops use the
/// snapshot), the tensor's first layout for an owned one (made by the
/// iteration, which is the only one to lay it out).
#[derive(Clone, Debug)]
struct Operand<'a> {
    /// The tensor the loop reads or writes (for a converted input, the
    /// converted copy; for an output of another dtype, a temporary).
    tensor: MaybeOwned<'a>,
    /// The snapshot `strides` come from, for a borrowed tensor.
    layout: Option<LayoutRef<'a>>,
    /// Byte strides in iteration order.
    strides: DimVector,
}

/// Operands (by index) computed in another dtype, and how each relates to
/// the caller's tensor.
type Conversions<'a> = Vec<(usize, Conversion<'a>)>;

/// How an operand computed in another dtype relates to the caller's tensor
/// (kept beside the operands, not in them: rare, and operands are moved
/// and dropped on the hot path).
#[derive(Clone, Debug)]
enum Conversion<'a> {
    /// An input converted to the computation's dtype: the caller's tensor
    /// (this snapshot of it, of this dtype) is converted into the operand
    /// inside the loops' borrows, so an in-place operation reads and writes
    /// it under one borrow.
    From(LayoutRef<'a>, ScalarType),
    /// An output computed into a temporary: copied back into the caller's
    /// tensor (this snapshot of it) inside the loops' borrows.
    BackTo(&'a Tensor, LayoutRef<'a>),
}

/// An operand slot not yet filled: the undefined tensor, no layout, no
/// strides.
const EMPTY_OPERAND: Operand<'static> = Operand {
    tensor: MaybeOwned::Borrowed(&UNDEFINED),
    layout: None,
    strides: SmallVec::Inline([0; _], 0),
};

/// A state's operand slots, all empty: one constant, copied into a new
/// state whole (a repeat of `EMPTY_OPERAND` was built on the stack slot by
/// slot, then copied twice).
const EMPTY_OPERANDS: [Operand<'static>; STATE_OPERANDS] = [EMPTY_OPERAND; STATE_OPERANDS];

impl Default for Operand<'_> {
    #[inline]
    fn default() -> Self {
        EMPTY_OPERAND
    }
}

impl<'a> Operand<'a> {
    /// An operand for a tensor the caller lent, laid out as `layout`.
    fn borrowed(t: &'a Tensor, layout: LayoutRef<'a>, shape: &[i64]) -> Result<Operand<'a>> {
        Ok(Operand {
            strides: byte_strides(&layout, shape)?,
            tensor: MaybeOwned::Borrowed(t),
            layout: Some(layout),
        })
    }

    /// An operand for a tensor the iteration made.
    fn owned(t: Tensor, shape: &[i64]) -> Result<Operand<'a>> {
        let strides = byte_strides(first_layout(&t)?, shape)?;
        Ok(Operand {
            strides,
            tensor: MaybeOwned::Owned(t),
            layout: None,
        })
    }

    /// The layout the loops address: the snapshot of a borrowed tensor,
    /// the first layout of an owned one.
    #[inline]
    fn loop_layout(&self) -> Result<&TensorLayout> {
        match &self.layout {
            Some(l) => Ok(l),
            None => first_layout(&self.tensor),
        }
    }
}

/// The layout a tensor was made with (which a resize replaces as the
/// current layout but never changes).
#[inline]
fn first_layout(t: &TensorBase) -> Result<&TensorLayout> {
    t.tensor_impl()
        .map(|i| i.first_layout())
        .ok_or_else(|| Error::runtime("undefined operand"))
}

/// A built iteration (see the module docs). It borrows the configuration's
/// operands.
///
/// Its state is one cached block, written where it lies: a structured
/// kernel's meta function returns the iterator in a `Result` that its
/// wrapper unwraps and hands to the implementation, and each move of a
/// state of a few hundred bytes was a copy whose wide loads waited for the
/// narrow stores that had just built it.
#[derive(Debug)]
pub struct TensorIterator<'a> {
    state: CachedBox<IterState<'a>>,
}

/// Operands kept inline in an iteration's state: one output and two
/// inputs, a binary operator's; more spill to the heap.
const STATE_OPERANDS: usize = 3;

/// What a [`TensorIterator`] holds.
#[derive(Debug)]
struct IterState<'a> {
    operands: SmallVec<Operand<'a>, STATE_OPERANDS>,
    /// Whether [`TensorIterator::output`] has shared an output. Until it
    /// has, the outputs the iteration allocated (owned operands) are
    /// reachable only through the iteration, so its loops, which borrow
    /// the iteration mutably, write them without a storage borrow. (The
    /// iteration is not `Clone` for the same reason.) Atomic only so that
    /// the state stays `Sync`; `output` takes `&self`.
    shared_an_output: AtomicBool,
    /// The operands (by index) computed in another dtype than the
    /// caller's tensor, and how they relate to it.
    conversions: Conversions<'a>,
    noutputs: usize,
    /// The number of elements of `full_shape`, read by every loop.
    numel: i64,
    /// The loop shape: fastest dimension first, after coalescing.
    loop_shape: DimVector,
    /// The broadcast shape in the operands' own dimension order.
    full_shape: DimVector,
    common_dtype: ScalarType,
    device: Device,
}

impl<'a> IterState<'a> {
    /// The state of a contiguous iteration over `shape` (`numel` elements,
    /// one run; at most `DimVector::INLINE_CAPACITY` dimensions), its
    /// operand slots empty. Always inlined and free of calls, so that it
    /// is written into the block it is made for: a value returned from a
    /// call, or built around one, is made in a temporary that is then
    /// copied in wide loads which wait for its narrow stores. The operand
    /// slots are copied whole from one constant; the shapes are written
    /// slot by slot.
    #[inline(always)]
    fn contiguous(
        shape: &[i64],
        numel: i64,
        noutputs: usize,
        common_dtype: ScalarType,
        device: Device,
    ) -> IterState<'a> {
        IterState {
            operands: SmallVec::Inline(EMPTY_OPERANDS, 0),
            shared_an_output: AtomicBool::new(false),
            conversions: Vec::new(),
            noutputs,
            numel,
            loop_shape: DimVector::one(numel),
            full_shape: DimVector::from_fn(shape.len(), |d| shape[d]),
            common_dtype,
            device,
        }
    }
}

impl<'a> TensorIterator<'a> {
    /// The dtype the computation runs in.
    #[inline]
    pub fn common_dtype(&self) -> ScalarType {
        self.state.common_dtype
    }

    /// The device.
    #[inline]
    pub fn device(&self) -> Device {
        self.state.device
    }

    /// The broadcast shape.
    #[inline]
    pub fn shape(&self) -> &[i64] {
        &self.state.full_shape
    }

    /// Number of elements.
    #[inline]
    pub fn numel(&self) -> i64 {
        self.state.numel
    }

    /// Number of operands (outputs first).
    #[inline]
    pub fn ntensors(&self) -> usize {
        self.state.operands.len()
    }

    /// Number of outputs.
    #[inline]
    pub fn noutputs(&self) -> usize {
        self.state.noutputs
    }

    /// The dtype of operand `i` as the loop sees it.
    #[inline]
    pub fn dtype(&self, i: usize) -> ScalarType {
        self.loop_dtype(&self.state.operands[i])
    }

    /// The dtype the loops see for `op`: its tensor's, or the common one
    /// for an operand without a tensor yet.
    #[inline]
    fn loop_dtype(&self, op: &Operand<'_>) -> ScalarType {
        op.tensor.dtype().unwrap_or(self.state.common_dtype)
    }

    /// Whether the first operands (outputs first) have the dtypes
    /// `expected`, in order, as the loops see them: one pass over the
    /// operands, for the check every typed loop makes.
    #[inline]
    pub fn has_dtypes(&self, expected: &[ScalarType]) -> bool {
        let operands = &self.state.operands[..];
        operands.len() >= expected.len()
            && operands
                .iter()
                .zip(expected)
                .all(|(op, &want)| self.loop_dtype(op) == want)
    }

    /// Output `i` (the tensor the caller gets back: an `out=` argument, or
    /// the allocated result).
    #[inline]
    pub fn output(&self, i: usize) -> Tensor {
        self.state.shared_an_output.store(true, Ordering::Relaxed);
        match self.conversion(i) {
            Some(Conversion::BackTo(target, _)) => (*target).clone(),
            _ => (*self.state.operands[i].tensor).clone(),
        }
    }

    /// Output `i`, as [`output`](Self::output), taking it out of the
    /// iteration (an allocated result is moved, not shared).
    #[inline]
    pub fn into_output(mut self, i: usize) -> Tensor {
        if let Some(Conversion::BackTo(target, _)) = self.conversion(i) {
            return (*target).clone();
        }
        match std::mem::take(&mut self.state.operands[i].tensor) {
            MaybeOwned::Borrowed(t) => t.clone(),
            MaybeOwned::Owned(t) => t,
        }
    }

    /// How operand `i` relates to a caller's tensor of another dtype.
    #[inline]
    fn conversion(&self, i: usize) -> Option<&Conversion<'a>> {
        self.state
            .conversions
            .iter()
            .find_map(|(j, c)| (*j == i).then_some(c))
    }

    /// Whether the loops have data to run on (not Meta, not empty).
    #[inline]
    pub fn has_data(&self) -> bool {
        self.state.device.device_type() != DeviceType::Meta && self.state.numel > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(data: &[f32], sizes: &[i64]) -> Tensor {
        Tensor::from_slice(data, sizes).unwrap()
    }

    #[test]
    fn the_state_fits_a_cached_block() {
        assert!(std::mem::size_of::<IterState<'_>>() <= c10_core::cached_box::MAX_CACHED_BYTES);
    }

    #[test]
    fn contiguous_set_ups_of_any_rank_and_operand_count() {
        // One to eight dimensions (past the inline shape: the general
        // path), one to four inputs (past the inline operands: the heap).
        for ndim in 1..=8usize {
            let sizes: Vec<i64> = (0..ndim).map(|d| 1 + (d as i64 % 2)).collect();
            let n: i64 = sizes.iter().product();
            let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
            let inputs: Vec<Tensor> = (0..4).map(|_| t(&data, &sizes)).collect();
            for ninputs in 1..=4 {
                let config = inputs[..ninputs]
                    .iter()
                    .fold(TensorIteratorConfig::default().add_output(None), |c, x| {
                        c.add_input(x)
                    });
                let mut it = config.build().unwrap();
                assert_eq!((it.shape(), it.numel()), (&sizes[..], n));
                assert_eq!(it.ntensors(), 1 + ninputs);
                it.for_each(|ptrs, strides, len| {
                    for i in 0..len {
                        let mut acc = 0.0;
                        for (p, s) in ptrs[1..].iter().zip(&strides[1..]) {
                            // SAFETY: float32 inputs, valid for `len` steps
                            // of their strides.
                            acc += unsafe { *(p.offset((i as i64 * s) as isize) as *const f32) };
                        }
                        // SAFETY: the float32 output, likewise.
                        unsafe {
                            *(ptrs[0].offset((i as i64 * strides[0]) as isize) as *mut f32) = acc
                        };
                    }
                })
                .unwrap();
                let want: Vec<f32> = data.iter().map(|x| x * ninputs as f32).collect();
                assert_eq!(it.into_output(0).to_vec::<f32>().unwrap(), want);
            }
        }
    }

    #[test]
    fn broadcast_and_layout() {
        let a = t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
        // The kernels are not linked into this crate's tests: make the
        // views directly.
        let at = Tensor::from(a.base().as_strided(&[3, 2], &[1, 3], None).unwrap());
        let bt = Tensor::from(a.base().as_strided(&[3, 2], &[1, 3], None).unwrap());
        let it = TensorIteratorConfig::binary_op(None, &at, &bt)
            .build()
            .unwrap();
        // The output of a.t() + b.t() is laid out like its inputs.
        assert_eq!(it.output(0).strides(), &[1, 3]);
        let b = t(&[1.0, 2.0, 3.0], &[3]);
        let it = TensorIteratorConfig::binary_op(None, &a, &b)
            .build()
            .unwrap();
        assert_eq!(it.shape(), &[2, 3]);
        let c = t(&[1.0, 2.0], &[2]);
        let err = TensorIteratorConfig::binary_op(None, &a, &c)
            .build()
            .unwrap_err();
        assert_eq!(
            err.message(),
            "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1"
        );
    }

    /// Doubles `[1, 2]` through `it` (a unary iteration over it) while
    /// another thread reads `seen`, a tensor over the output's storage:
    /// the reader sees the output before or after the loop, never torn.
    fn double_while_read(mut it: TensorIterator<'_>, seen: Tensor) {
        let reader = std::thread::spawn(move || {
            for _ in 0..1000 {
                let v = seen.to_vec::<f32>().unwrap();
                assert!(v == [0.0, 0.0] || v == [2.0, 4.0], "torn read {v:?}");
            }
        });
        it.for_each(|ptrs, _, n| {
            for i in 0..n {
                // SAFETY: two float32 operands, contiguous, valid for `n`.
                unsafe {
                    let x = *(ptrs[1] as *const f32).add(i);
                    *(ptrs[0] as *mut f32).add(i) = 2.0 * x;
                }
            }
        })
        .unwrap();
        reader.join().unwrap();
        assert_eq!(it.into_output(0).to_vec::<f32>().unwrap(), vec![2.0, 4.0]);
    }

    #[test]
    fn an_output_shared_through_a_view_is_still_borrowed() {
        let a = t(&[1.0, 2.0], &[2]);
        let it = TensorIteratorConfig::unary_op(None, &a).build().unwrap();
        // The handle `output` gave is gone by the loop, but a view of its
        // storage lives on another thread: once shared, an output is
        // always borrowed.
        let out = it.output(0);
        let view = Tensor::from(out.base().as_strided(&[2], &[1], None).unwrap());
        drop(out);
        double_while_read(it, view);
    }

    #[test]
    fn a_shared_output_is_borrowed_while_the_loop_writes() {
        let a = t(&[1.0, 2.0], &[2]);
        let it = TensorIteratorConfig::unary_op(None, &a).build().unwrap();
        // A handle to the allocated output escapes before the loop: the
        // output is no longer exclusively the iteration's, so the loop must
        // take its borrow flag, and a reader on another thread waits for it.
        let out = it.output(0);
        double_while_read(it, out);
    }
}
