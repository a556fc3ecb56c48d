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
pub mod convert;

use c10_core::tensor_impl::DimVector;
use c10_core::type_promotion::ResultTypeState;
use c10_core::{
    CachedBox, Device, DeviceType, Error, LayoutRef, Result, ScalarType, SmallVec, Storage,
    StorageBorrow, TensorBase, TensorLayout, ThreadShared,
};

use std::sync::atomic::{AtomicBool, Ordering};

use crate::memory_overlap;
use crate::Tensor;
pub use broadcast::infer_size;

/// Number of elements below which a loop stays on the calling thread
/// (`at::internal::GRAIN_SIZE`).
pub const GRAIN_SIZE: i64 = 32768;

/// Operands whose loop state (base pointers, borrows, steps) lives on the
/// stack: one output and up to three inputs (`addcmul`, `where`, `lerp`),
/// the state every loop zeroes before it starts; more go to the heap.
const INLINE_OPERANDS: usize = 4;
/// Dimensions whose loop counters live on the stack.
const INLINE_DIMS: usize = 8;

/// `len` elements of scratch space: in `inline` (as it is) when they fit,
/// else in `heap`, set to `fill`.
#[inline]
fn scratch<'a, T: Copy, const N: usize>(
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

/// How to build a [`TensorIterator`] (`TensorIteratorConfig`). It borrows
/// its operands (PyTorch's `add_borrowed_input`), and so does the
/// iterator it builds.
#[derive(Clone, Debug)]
pub struct TensorIteratorConfig<'a> {
    outputs: SmallVec<Option<&'a Tensor>, 2>,
    inputs: SmallVec<TensorRef<'a>, 4>,
    /// The inputs the configuration owns, by position in `inputs`: made for
    /// the iteration (a wrapped scalar, a converted copy), so nobody else
    /// lays them out.
    /// (Boxed: most configurations have none, and the configuration is
    /// moved on the hot path.)
    owned_inputs: Option<Box<[(usize, Tensor)]>>,
    check_all_same_dtype: bool,
    promote_inputs_to_common_dtype: bool,
    promote_integer_inputs_to_float: bool,
    cast_common_dtype_to_outputs: bool,
    enforce_safe_casting_to_output: bool,
    static_output_dtype: Option<ScalarType>,
    allow_cpu_scalars: bool,
    resize_outputs: bool,
    check_mem_overlap: bool,
}

impl Default for TensorIteratorConfig<'_> {
    #[inline]
    fn default() -> Self {
        TensorIteratorConfig {
            outputs: SmallVec::new(),
            inputs: SmallVec::new(),
            owned_inputs: None,
            check_all_same_dtype: true,
            promote_inputs_to_common_dtype: false,
            promote_integer_inputs_to_float: false,
            cast_common_dtype_to_outputs: false,
            enforce_safe_casting_to_output: false,
            static_output_dtype: None,
            allow_cpu_scalars: true,
            resize_outputs: true,
            check_mem_overlap: true,
        }
    }
}

/// An input a configuration borrows (`&Tensor`: PyTorch's
/// `add_borrowed_input`) or owns (`Tensor`: `add_owned_input`, for a
/// tensor made for the iteration such as a wrapped scalar).
pub trait IntoInput<'a> {
    /// Adds `self` to `config` as its next input.
    fn add_to(self, config: TensorIteratorConfig<'a>) -> TensorIteratorConfig<'a>;
}

impl<'a> IntoInput<'a> for &'a Tensor {
    #[inline]
    fn add_to(self, config: TensorIteratorConfig<'a>) -> TensorIteratorConfig<'a> {
        config.add_input(self)
    }
}

impl<'a> IntoInput<'a> for Tensor {
    #[inline]
    fn add_to(self, config: TensorIteratorConfig<'a>) -> TensorIteratorConfig<'a> {
        config.add_owned_input(self)
    }
}

impl<'a> TensorIteratorConfig<'a> {
    /// The configuration of a binary pointwise operation with type promotion
    /// (`build_borrowing_binary_op`; an owned `b`:
    /// `build_borrowing_except_last_argument_binary_op`): promote inputs,
    /// cast the result to a given output if it can hold it.
    #[inline]
    pub fn binary_op(
        out: Option<&'a Tensor>,
        a: &'a Tensor,
        b: impl IntoInput<'a>,
    ) -> TensorIteratorConfig<'a> {
        b.add_to(TensorIteratorConfig::default().add_output(out).add_input(a))
            .promote_inputs_to_common_dtype(true)
            .cast_common_dtype_to_outputs(true)
            .enforce_safe_casting_to_output(true)
    }

    /// A unary operation that keeps the dtype (`build_borrowing_unary_op`;
    /// an owned input: `build_unary_op` over a converted copy).
    #[inline]
    pub fn unary_op(out: Option<&'a Tensor>, a: impl IntoInput<'a>) -> TensorIteratorConfig<'a> {
        a.add_to(TensorIteratorConfig::default().add_output(out))
            .cast_common_dtype_to_outputs(false)
            .enforce_safe_casting_to_output(false)
            .check_all_same_dtype(true)
    }

    /// A unary floating operation: integer inputs compute in the default
    /// float dtype (`build_borrowing_unary_float_op`).
    #[inline]
    pub fn unary_float_op(out: Option<&'a Tensor>, a: &'a Tensor) -> TensorIteratorConfig<'a> {
        TensorIteratorConfig::default()
            .add_output(out)
            .add_input(a)
            .promote_inputs_to_common_dtype(true)
            .promote_integer_inputs_to_float(true)
            .cast_common_dtype_to_outputs(true)
            .enforce_safe_casting_to_output(true)
    }

    /// A comparison: promoted inputs, a `bool` output
    /// (`build_borrowing_comparison_op`; an owned `b`:
    /// `build_borrowing_except_last_argument_comparison_op`).
    #[inline]
    pub fn comparison_op(
        out: Option<&'a Tensor>,
        a: &'a Tensor,
        b: impl IntoInput<'a>,
    ) -> TensorIteratorConfig<'a> {
        let c = b
            .add_to(TensorIteratorConfig::default().add_output(out).add_input(a))
            .promote_inputs_to_common_dtype(true);
        if out.is_none() {
            c.static_output_dtype(ScalarType::Bool)
        } else {
            c.cast_common_dtype_to_outputs(true)
        }
    }

    /// Adds an output (`None`: allocate one).
    #[inline]
    pub fn add_output(mut self, out: Option<&'a Tensor>) -> Self {
        self.outputs.push(out.filter(|t| t.defined()));
        self
    }

    /// Adds an input.
    #[inline]
    pub fn add_input(mut self, input: &'a Tensor) -> Self {
        self.inputs.push(TensorRef(input));
        self
    }

    /// Adds an input the iteration owns (`add_owned_input`): a tensor made
    /// for it, such as a wrapped scalar, that nobody else resizes.
    #[inline]
    pub fn add_owned_input(mut self, input: Tensor) -> Self {
        let mut owned = self.owned_inputs.take().map_or_else(Vec::new, Vec::from);
        owned.push((self.inputs.len(), input));
        self.owned_inputs = Some(owned.into_boxed_slice());
        self.inputs.push(TensorRef(&UNDEFINED));
        self
    }

    /// Require every operand to have one dtype.
    #[inline]
    pub fn check_all_same_dtype(mut self, on: bool) -> Self {
        self.check_all_same_dtype = on;
        self
    }

    /// Compute in the promoted dtype of the inputs.
    #[inline]
    pub fn promote_inputs_to_common_dtype(mut self, on: bool) -> Self {
        self.promote_inputs_to_common_dtype = on;
        if on {
            self.check_all_same_dtype = false;
        }
        self
    }

    /// Integer and bool inputs compute in the default float dtype.
    #[inline]
    pub fn promote_integer_inputs_to_float(mut self, on: bool) -> Self {
        self.promote_integer_inputs_to_float = on;
        self
    }

    /// Outputs of another dtype than the computation's receive a cast copy.
    #[inline]
    pub fn cast_common_dtype_to_outputs(mut self, on: bool) -> Self {
        self.cast_common_dtype_to_outputs = on;
        if on {
            self.check_all_same_dtype = false;
        }
        self
    }

    /// Refuse outputs that cannot hold the computation's dtype.
    #[inline]
    pub fn enforce_safe_casting_to_output(mut self, on: bool) -> Self {
        self.enforce_safe_casting_to_output = on;
        self
    }

    /// Whether outputs of another shape are resized (`out=`) or refused
    /// (in-place operations: the output is an input).
    #[inline]
    pub fn resize_outputs(mut self, on: bool) -> Self {
        self.resize_outputs = on;
        self
    }

    /// Refuse given outputs whose elements share memory, and inputs that
    /// partially overlap an output (`compute_mem_overlaps`; on by default).
    #[inline]
    pub fn check_mem_overlap(mut self, on: bool) -> Self {
        self.check_mem_overlap = on;
        self
    }

    /// Allocated outputs get this dtype (comparisons: bool).
    #[inline]
    pub fn static_output_dtype(mut self, dtype: ScalarType) -> Self {
        self.static_output_dtype = Some(dtype);
        self.check_all_same_dtype = false;
        self
    }

    /// Builds the iterator.
    #[inline]
    pub fn build(self) -> Result<TensorIterator<'a>> {
        TensorIterator::build(self)
    }
}

/// `canCast(from, to)`: no float to integral, no complex to non-complex, no
/// non-bool to bool.
pub fn can_cast(from: ScalarType, to: ScalarType) -> bool {
    if from.is_complex() && !to.is_complex() {
        return false;
    }
    if from.is_floating_point() && to.is_integral(true) {
        return false;
    }
    if from != ScalarType::Bool && to == ScalarType::Bool {
        return false;
    }
    true
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

/// Whether two shapes are equal, compared element by element: a slice
/// comparison of integers calls `memcmp`, a call for the one or two
/// dimensions of an eager operand.
#[inline]
fn same_dims(a: &[i64], b: &[i64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// Byte strides of `layout` for the broadcast `shape`, in the operands' own
/// dimension order: leading missing dims and size-1 dims broadcast with
/// stride 0. Fails unless the layout's sizes broadcast to `shape` (a
/// tensor resized since the shape was computed), so the loops never step
/// past the layout's elements.
fn byte_strides(layout: &TensorLayout, shape: &[i64]) -> Result<DimVector> {
    let elem = layout.itemsize() as i64;
    let (sizes, strides) = (layout.sizes(), layout.strides());
    let mismatch = || {
        Error::runtime(format!(
            "operand with shape {sizes:?} doesn't match the broadcast shape {shape:?} (was it resized meanwhile?)"
        ))
    };
    let offset = shape.len().checked_sub(sizes.len()).ok_or_else(mismatch)?;
    (0..shape.len())
        .map(|i| {
            if i < offset {
                return Ok(0);
            }
            let d = i - offset;
            if sizes[d] == shape[i] {
                // With more than one element along `d`, the step is inside
                // the storage, whose size fits in `isize`. A size-1
                // dimension is never stepped along, but its stride still
                // orders dimensions as PyTorch's does (any value is valid
                // there, so it saturates).
                Ok(if shape[i] == 1 {
                    strides[d].saturating_mul(elem)
                } else {
                    strides[d] * elem
                })
            } else if sizes[d] == 1 {
                Ok(0)
            } else {
                Err(mismatch())
            }
        })
        .collect()
}

impl<'a> TensorIterator<'a> {
    fn build(mut config: TensorIteratorConfig<'a>) -> Result<TensorIterator<'a>> {
        if let Some(it) = Self::try_build_contiguous(&config) {
            return it;
        }
        let refs = std::mem::take(&mut config.inputs);
        let owned = config.owned_inputs.take().map_or_else(Vec::new, Vec::from);
        let mut inputs: SmallVec<TensorRef<'_>, 4> = refs.iter().copied().collect();
        for (i, t) in &owned {
            if let Some(slot) = inputs.get_mut(*i) {
                *slot = TensorRef(t);
            }
        }
        // 0. Memory overlaps of the given outputs (`compute_mem_overlaps`);
        // the contiguous path above only runs without given outputs.
        if config.check_mem_overlap {
            check_mem_overlaps(&config.outputs, &inputs)?;
        }
        // 1. Shape.
        let full_shape = broadcast_shape(&inputs)?;
        // 2. Dtypes and device.
        let device = common_device(&inputs, &config.outputs, config.allow_cpu_scalars)?;
        let common_dtype = compute_common_dtype(&inputs, &config)?;
        let output_dtypes = output_dtypes(&config, common_dtype)?;
        // 3. Strides of the inputs (outputs later, once allocated).
        let (input_operands, input_conversions) =
            input_operands(&refs, &owned, &config, common_dtype, device, &full_shape)?;
        // 4. Dimension order (fastest first), and the strides of new outputs.
        let (perm, output_strides) =
            output_layout(&config.outputs, &inputs, &input_operands, &full_shape)?;
        // 5. Outputs.
        let mut operands = SmallVec::new();
        let mut conversions = Vec::new();
        for (&out, &dtype) in config.outputs.iter().zip(&output_dtypes) {
            let plan = OutputPlan {
                shape: &full_shape,
                strides: &output_strides,
                common_dtype,
                device,
            };
            let (op, conversion) = plan.operand(out, dtype, &config)?;
            conversions.extend(conversion.map(|c| (operands.len(), c)));
            operands.push(op);
        }
        let noutputs = operands.len();
        operands.extend(input_operands);
        conversions.extend(
            input_conversions
                .into_iter()
                .map(|(i, c)| (noutputs + i, c)),
        );
        // 6. Apply the permutation (fastest first) and coalesce.
        let mut shape: DimVector = perm.iter().map(|&d| full_shape[d]).collect();
        for op in &mut operands {
            op.strides = perm.iter().map(|&d| op.strides[d]).collect();
        }
        coalesce(&mut shape, &mut operands);
        Ok(TensorIterator {
            state: CachedBox::new_with(|| IterState {
                operands,
                shared_an_output: AtomicBool::new(false),
                conversions,
                noutputs,
                numel: full_shape.iter().product(),
                loop_shape: shape,
                full_shape,
                common_dtype,
                device,
            }),
        })
    }

    /// PyTorch's fast set-up for the commonest case: every output is to be
    /// allocated, and the inputs are contiguous tensors (not wrapped
    /// numbers) of one shape, one dtype and one device. The common dtype is
    /// theirs, the outputs are contiguous, and the whole iteration is one
    /// run over memory (what the general path coalesces such operands to),
    /// without promoting dtypes or sorting and coalescing dimensions. Each
    /// input's layout is read once. `None`: not that case (the general path
    /// decides, errors included).
    fn try_build_contiguous(
        config: &TensorIteratorConfig<'a>,
    ) -> Option<Result<TensorIterator<'a>>> {
        if config.outputs.iter().any(Option::is_some) {
            return None;
        }
        let (first, rest) = config.inputs.split_first()?;
        if config.owned_inputs.is_some() {
            return None;
        }
        let first = first.0;
        let layout = first.layout()?;
        let (dtype, device) = (first.dtype()?, first.device()?);
        if !layout.is_contiguous() || first.is_wrapped_number() {
            return None;
        }
        if config.promote_integer_inputs_to_float && dtype.is_integral(true) {
            return None;
        }
        let sizes = layout.sizes();
        let numel = layout.numel();
        let noutputs = config.outputs.len();
        // More dimensions than a shape keeps inline take the general path
        // (the state would have to allocate for them).
        if sizes.len() > DimVector::INLINE_CAPACITY {
            return None;
        }
        // The state is built in its block, and its operands are filled
        // field by field where they lie: an operand built whole and then
        // pushed is written in word-sized pieces and copied as wide blocks
        // right after, a store-forwarding stall for each operand of every
        // eager call.
        let mut state = CachedBox::new_with(
            #[inline(always)]
            || IterState::contiguous(sizes, numel, noutputs, dtype, device),
        );
        let fill = |op: &mut Operand<'a>, t: &'a Tensor, layout: LayoutRef<'a>| {
            op.strides = DimVector::one(layout.itemsize() as i64);
            op.tensor = MaybeOwned::Borrowed(t);
            op.layout = Some(layout);
        };
        // The outputs' slots come first and are filled once every input
        // qualifies. Each input's snapshot is checked here (contiguous,
        // `numel` elements) and kept for the loops.
        let IterState {
            operands,
            full_shape: shape,
            ..
        } = &mut *state;
        operands.resize_default(noutputs + config.inputs.len());
        let (outputs, inputs) = operands.split_at_mut(noutputs);
        let (first_slot, rest_slots) = inputs.split_first_mut()?;
        fill(first_slot, first, layout);
        for (slot, t) in rest_slots.iter_mut().zip(rest) {
            let t = t.0;
            let l = t.layout()?;
            if !l.is_contiguous()
                || !same_dims(l.sizes(), shape)
                || t.dtype() != Some(dtype)
                || t.device().map(Device::device_type) != Some(device.device_type())
                || t.is_wrapped_number()
            {
                return None;
            }
            fill(slot, t, l);
        }
        let out_dtype = config.static_output_dtype.unwrap_or(dtype);
        for slot in outputs {
            match TensorBase::empty(shape, out_dtype, device) {
                Ok(out) => {
                    slot.strides = DimVector::one(out_dtype.element_size() as i64);
                    slot.tensor = MaybeOwned::Owned(Tensor::from(out));
                }
                Err(e) => return Some(Err(e)),
            }
        }
        Some(Ok(TensorIterator { state }))
    }

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
    /// iteration has at least [`GRAIN_SIZE`] elements (`at::parallel_for`):
    /// each thread gets one contiguous range of the linearized iteration.
    /// Runs serially when the iteration is small or when an output could be
    /// written by two threads at once (an output whose elements overlap, or
    /// an input that partially overlaps an output). Called from a thread of
    /// a `rayon` pool, the pieces go to that pool (work stealing nests).
    /// The pool's other workers then linger for the next region
    /// ([`crate::worker_linger`]).
    pub fn parallel_for_each(
        &mut self,
        f: impl Fn(&[*mut u8], &[i64], usize) + Sync,
    ) -> Result<()> {
        let numel = self.state.numel;
        // Small loops (the common case of eager calls) ask rayon nothing:
        // its thread count is a thread-local lookup.
        if numel < GRAIN_SIZE {
            return self.for_each(&f);
        }
        let threads = rayon::current_num_threads() as i64;
        if threads <= 1 || !self.writes_are_disjoint() {
            return self.for_each(&f);
        }
        let chunks = threads.min((numel + GRAIN_SIZE - 1) / GRAIN_SIZE);
        self.with_base_pointers(|it, bases| {
            // SAFETY: the pointers address operand storages that are
            // borrowed (outputs exclusively) for the whole parallel loop;
            // it only runs when `writes_are_disjoint` holds, so threads,
            // which run disjoint index ranges, never write one address
            // from two threads or read an address another thread writes.
            let bases = unsafe { ThreadShared::new(bases) };
            let bases = &bases;
            rayon::scope(|scope| {
                for c in 0..chunks {
                    let f = &f;
                    scope.spawn(move |_| {
                        let (begin, end) = (numel * c / chunks, numel * (c + 1) / chunks);
                        it.run_range(bases.get(), begin, end, &mut |p, s, n| f(p, s, n));
                    });
                }
            });
            crate::worker_linger::linger();
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

/// `compute_mem_overlaps`: no given output may have two elements at one
/// address, nor partly overlap an input that is not itself.
fn check_mem_overlaps(outputs: &[Option<&Tensor>], inputs: &[TensorRef<'_>]) -> Result<()> {
    for out in outputs.iter().flatten() {
        memory_overlap::assert_no_internal_overlap(out)?;
        for input in inputs {
            if !input.is_same(out) {
                memory_overlap::assert_no_partial_overlap(out, input)?;
            }
        }
    }
    Ok(())
}

/// The broadcast shape of the inputs.
fn broadcast_shape(inputs: &[TensorRef<'_>]) -> Result<DimVector> {
    let sizes: SmallVec<DimVector, 4> = inputs.iter().map(|t| t.sizes()).collect();
    if let Some((first, rest)) = sizes.split_first() {
        if rest.iter().all(|s| s == first) {
            return Ok(first.clone());
        }
    }
    let mut shape: Vec<i64> = Vec::new();
    for s in &sizes {
        shape = infer_size(&shape, s)?;
    }
    Ok(DimVector::from_slice(&shape))
}

/// The dtype of each output: a given output's own (checked against the
/// computation's), else the static or the common dtype.
fn output_dtypes(
    config: &TensorIteratorConfig<'_>,
    common_dtype: ScalarType,
) -> Result<Vec<ScalarType>> {
    config
        .outputs
        .iter()
        .map(|out| {
            let Some(o) = out else {
                return Ok(config.static_output_dtype.unwrap_or(common_dtype));
            };
            let od = o
                .dtype()
                .ok_or_else(|| Error::runtime("undefined output"))?;
            if od != common_dtype && config.static_output_dtype.is_none() {
                if config.cast_common_dtype_to_outputs {
                    if config.enforce_safe_casting_to_output && !can_cast(common_dtype, od) {
                        return Err(Error::runtime(format!(
                            "result type {common_dtype} can't be cast to the desired output type {od}"
                        )));
                    }
                } else if config.check_all_same_dtype {
                    return Err(Error::runtime(format!(
                        "Found dtype {od} but expected {common_dtype}"
                    )));
                }
            }
            Ok(od)
        })
        .collect()
}

/// The inputs' operands, each from one snapshot of its layout; inputs of
/// another dtype than the computation's get a copy that the loops fill
/// under their borrows (listed by input index).
fn input_operands<'a>(
    inputs: &[TensorRef<'a>],
    owned: &[(usize, Tensor)],
    config: &TensorIteratorConfig<'a>,
    common_dtype: ScalarType,
    device: Device,
    full_shape: &[i64],
) -> Result<(Vec<Operand<'a>>, Conversions<'a>)> {
    let mut operands = Vec::with_capacity(inputs.len());
    let mut conversions = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let t = match owned.iter().find(|(j, _)| *j == i) {
            None => input.0,
            Some((_, t)) => {
                // An owned operand's loops address its first layout: a
                // tensor resized since it was made (the broadcast shape
                // came from its current layout) is copied first, as is one
                // of another dtype than the computation's.
                let dtype = t.dtype().unwrap_or(common_dtype);
                let target = if config.promote_inputs_to_common_dtype {
                    common_dtype
                } else {
                    dtype
                };
                let current = t
                    .layout()
                    .ok_or_else(|| Error::runtime("undefined input"))?;
                let t = if target != dtype || !std::ptr::eq(&*current, first_layout(t)?) {
                    convert::to_dtype(t, target)?
                } else {
                    t.clone()
                };
                operands.push(Operand::owned(t, full_shape)?);
                continue;
            }
        };
        let layout = t
            .layout()
            .ok_or_else(|| Error::runtime("undefined input"))?;
        let dtype = t.dtype().unwrap_or(common_dtype);
        if config.promote_inputs_to_common_dtype && dtype != common_dtype {
            let copy = Tensor::from(TensorBase::empty_strided(
                layout.sizes(),
                &convert::preserved_strides(&layout),
                common_dtype,
                t.device().unwrap_or(device),
            )?);
            operands.push(Operand::owned(copy, full_shape)?);
            conversions.push((i, Conversion::From(layout, dtype)));
        } else {
            operands.push(Operand::borrowed(t, layout, full_shape)?);
        }
    }
    Ok((operands, conversions))
}

/// The dimension order (fastest first) from the inputs and any output that
/// keeps its shape, and the strides of outputs the iteration allocates or
/// resizes: PyTorch's fast set-up when every input has the broadcast shape
/// and all are contiguous (or share one dense layout), else strides that
/// follow that order.
fn output_layout(
    outputs: &[Option<&Tensor>],
    inputs: &[TensorRef<'_>],
    input_operands: &[Operand<'_>],
    full_shape: &[i64],
) -> Result<(Vec<usize>, Vec<i64>)> {
    let mut order_strides: Vec<DimVector> = Vec::new();
    for o in outputs.iter().flatten() {
        if let Some(l) = o.layout().filter(|l| l.sizes() == full_shape) {
            order_strides.push(byte_strides(&l, full_shape)?);
        }
    }
    order_strides.extend(input_operands.iter().map(|op| op.strides.clone()));
    let perm = reorder_dimensions(full_shape, &order_strides);
    let strides = fast_setup_strides(inputs, full_shape)
        .unwrap_or_else(|| strides_following(full_shape, &perm));
    Ok((perm, strides))
}

/// What an iteration's outputs are made from.
struct OutputPlan<'s> {
    shape: &'s [i64],
    strides: &'s [i64],
    common_dtype: ScalarType,
    device: Device,
}

impl OutputPlan<'_> {
    /// The operand of one output: a given one, resized when its shape
    /// differs (and `out=` allows it), written through a temporary when it
    /// has another dtype than the computation (with how it relates to the
    /// given one); or a new tensor of `dtype`.
    fn operand<'a>(
        &self,
        out: Option<&'a Tensor>,
        dtype: ScalarType,
        config: &TensorIteratorConfig<'a>,
    ) -> Result<(Operand<'a>, Option<Conversion<'a>>)> {
        let Some(o) = out else {
            let t = TensorBase::empty_strided(self.shape, self.strides, dtype, self.device)?;
            return Ok((Operand::owned(Tensor::from(t), self.shape)?, None));
        };
        let current = o.sizes();
        if current != self.shape {
            if !config.resize_outputs {
                return Err(Error::runtime(format!(
                    "output with shape {current:?} doesn't match the broadcast shape {:?}",
                    self.shape
                )));
            }
            // A resized output follows the inputs' layout, as PyTorch's
            // `resize_out` with computed strides does.
            crate::native::resize_output(o, self.shape, Some(self.strides))?;
        }
        let layout = o
            .layout()
            .ok_or_else(|| Error::runtime("undefined output"))?;
        if o.dtype() != Some(self.common_dtype)
            && config.static_output_dtype.is_none()
            && config.cast_common_dtype_to_outputs
        {
            let tmp = TensorBase::empty_strided(
                self.shape,
                self.strides,
                self.common_dtype,
                self.device,
            )?;
            let op = Operand::owned(Tensor::from(tmp), self.shape)?;
            Ok((op, Some(Conversion::BackTo(o, layout))))
        } else {
            Ok((Operand::borrowed(o, layout, self.shape)?, None))
        }
    }
}

/// `compute_fast_setup_type`: the output strides when every input has the
/// broadcast shape and all are contiguous (contiguous strides) or all share
/// one dense, non-overlapping layout (that layout).
fn fast_setup_strides(inputs: &[TensorRef<'_>], shape: &[i64]) -> Option<Vec<i64>> {
    let layouts: Vec<LayoutRef<'_>> = inputs.iter().map(|t| t.layout()).collect::<Option<_>>()?;
    if layouts.is_empty() || layouts.iter().any(|l| l.sizes() != shape) {
        return None;
    }
    if layouts.iter().all(|l| l.is_contiguous()) {
        return Some(c10_core::tensor_impl::contiguous_strides(shape).to_vec());
    }
    let first = layouts[0].strides();
    let dense = convert::preserved_strides(&layouts[0]);
    if dense == first && layouts.iter().all(|l| l.strides() == first) {
        return Some(first.to_vec());
    }
    None
}

/// Strides (in elements) of a new tensor of `shape` whose dimensions,
/// fastest first, are `perm`. As PyTorch's `allocate_or_resize_outputs`:
/// the natural order gives contiguous strides; any other order gives
/// `compatible_stride`'s running products, which are 0 past an empty
/// dimension.
fn strides_following(shape: &[i64], perm: &[usize]) -> Vec<i64> {
    if perm.iter().rev().enumerate().all(|(i, &d)| i == d) {
        return c10_core::tensor_impl::contiguous_strides(shape).to_vec();
    }
    let mut strides = vec![0i64; shape.len()];
    let mut acc = 1i64;
    for &d in perm {
        strides[d] = acc;
        acc = acc.saturating_mul(shape[d]);
    }
    strides
}

/// `reorder_dimensions`: the dimension order, fastest first. Starts from the
/// reversed order and insertion-sorts by the operands' strides (ties broken
/// by size), ignoring zero strides.
fn reorder_dimensions(shape: &[i64], strides: &[DimVector]) -> Vec<usize> {
    let ndim = shape.len();
    let mut perm: Vec<usize> = (0..ndim).rev().collect();
    if ndim <= 1 {
        return perm;
    }
    let should_swap = |dim0: usize, dim1: usize| -> i32 {
        for s in strides {
            let (s0, s1) = (s[dim0], s[dim1]);
            if s0 == 0 || s1 == 0 {
                continue;
            }
            if s0 < s1 {
                return -1;
            }
            if s0 > s1 {
                return 1;
            }
            if shape[dim0] > shape[dim1] {
                return 1;
            }
        }
        0
    };
    for i in 1..ndim {
        let mut dim1 = i;
        for dim0 in (0..i).rev() {
            let c = should_swap(perm[dim0], perm[dim1]);
            if c > 0 {
                perm.swap(dim0, dim1);
                dim1 = dim0;
            } else if c < 0 {
                break;
            }
        }
    }
    perm
}

/// `coalesce_dimensions`: merges adjacent dimensions that every operand
/// walks contiguously.
fn coalesce(shape: &mut DimVector, operands: &mut [Operand<'_>]) {
    let ndim = shape.len();
    if ndim <= 1 {
        return;
    }
    let can_coalesce = |shape: &[i64], ops: &[Operand], d0: usize, d1: usize| {
        let (s0, s1) = (shape[d0], shape[d1]);
        if s0 == 1 || s1 == 1 {
            return true;
        }
        ops.iter().all(|op| s0 * op.strides[d0] == op.strides[d1])
    };
    let mut prev = 0;
    for dim in 1..ndim {
        if can_coalesce(shape, operands, prev, dim) {
            if shape[prev] == 1 {
                for op in operands.iter_mut() {
                    op.strides[prev] = op.strides[dim];
                }
            }
            shape[prev] *= shape[dim];
        } else {
            prev += 1;
            if prev != dim {
                for op in operands.iter_mut() {
                    op.strides[prev] = op.strides[dim];
                }
                shape[prev] = shape[dim];
            }
        }
    }
    shape.truncate(prev + 1);
    for op in operands.iter_mut() {
        op.strides.truncate(prev + 1);
    }
}

fn common_device(
    inputs: &[TensorRef<'_>],
    outputs: &[Option<&Tensor>],
    allow_cpu_scalars: bool,
) -> Result<Device> {
    let mut device: Option<Device> = None;
    let all = inputs
        .iter()
        .map(|t| &**t)
        .chain(outputs.iter().flatten().copied());
    for t in all {
        let Some(d) = t.device() else { continue };
        if allow_cpu_scalars && d.device_type() == DeviceType::CPU && t.dim() == 0 {
            continue;
        }
        match device {
            None => device = Some(d),
            Some(prev) if prev.device_type() != d.device_type() => {
                return Err(Error::runtime(format!(
                    "Expected all tensors to be on the same device, but found at least two devices, {prev} and {d}!"
                )))
            }
            _ => {}
        }
    }
    Ok(device.unwrap_or(Device::CPU))
}

fn compute_common_dtype(
    inputs: &[TensorRef<'_>],
    config: &TensorIteratorConfig<'_>,
) -> Result<ScalarType> {
    if !config.promote_inputs_to_common_dtype {
        let first = inputs
            .first()
            .and_then(|t| t.dtype())
            .or(config
                .outputs
                .iter()
                .flatten()
                .next()
                .and_then(|t| t.dtype()))
            .unwrap_or(ScalarType::Float);
        if config.check_all_same_dtype {
            let all = inputs.iter().map(|t| &**t);
            for t in all.chain(config.outputs.iter().flatten().copied()) {
                if let Some(d) = t.dtype() {
                    if d != first {
                        return Err(Error::runtime(format!(
                            "expected scalar type {first} but found {d}"
                        )));
                    }
                }
            }
        }
        return Ok(first);
    }
    let mut common = match same_dtype_tensors(inputs) {
        // Promoting a dtype with itself gives it back, whatever the dims.
        Some(dtype) => dtype,
        None => promoted_dtype(inputs)?,
    };
    if config.promote_integer_inputs_to_float && common.is_integral(true) {
        common = crate::native::DEFAULT_DTYPE;
    }
    Ok(common)
}

/// The dtype of `inputs` when they all have one and none is a wrapped
/// number (whose promotion follows other rules).
fn same_dtype_tensors(inputs: &[TensorRef<'_>]) -> Option<ScalarType> {
    let (first, rest) = inputs.split_first()?;
    let dtype = first.dtype()?;
    let plain = |t: &TensorRef<'_>| t.dtype() == Some(dtype) && !t.is_wrapped_number();
    (plain(first) && rest.iter().all(plain)).then_some(dtype)
}

/// `result_type` of the inputs: type promotion with the 0-dim and
/// wrapped-number rules.
fn promoted_dtype(inputs: &[TensorRef<'_>]) -> Result<ScalarType> {
    let mut state = ResultTypeState::default();
    for t in inputs {
        let dtype = t.dtype().ok_or_else(|| Error::runtime("undefined input"))?;
        if t.is_wrapped_number() {
            state.add_number(c10_core::type_promotion::WrappedNumber::of_dtype(dtype))?;
        } else {
            state.add_tensor(dtype, t.dim())?;
        }
    }
    Ok(state.result()?.unwrap_or(ScalarType::Float))
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
