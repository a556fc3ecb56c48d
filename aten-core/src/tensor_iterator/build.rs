//! Building an iteration ([`TensorIteratorConfig::build`]): the fast path
//! for contiguous operands of one shape and dtype, and the general build in
//! PyTorch's order of phases (`compute_mem_overlaps`, `compute_shape`,
//! `compute_types`, `compute_strides`, `reorder_dimensions`,
//! `allocate_or_resize_outputs`, `coalesce_dimensions`). The phases that
//! decide dtypes live in [`dtypes`](super::dtypes), those that decide
//! dimensions in [`dimensions`](super::dimensions).

use std::sync::atomic::AtomicBool;

use c10_core::tensor_impl::DimVector;
use c10_core::{CachedBox, Device, Error, LayoutRef, Result, ScalarType, SmallVec, TensorBase};

use super::dimensions::{
    broadcast_shape, byte_strides, coalesce, fast_setup_strides, reorder_dimensions, same_dims,
    strides_following,
};
use super::dtypes::{common_device, compute_common_dtype, output_dtypes};
use super::{
    convert, first_layout, Conversion, Conversions, IterState, MaybeOwned, Operand, TensorIterator,
    TensorIteratorConfig, TensorRef,
};
use crate::memory_overlap;
use crate::Tensor;

impl<'a> TensorIterator<'a> {
    pub(super) fn build(config: TensorIteratorConfig<'a>) -> Result<TensorIterator<'a>> {
        if let Some(it) = Self::try_build_contiguous(&config) {
            return it;
        }
        Self::build_general(config)
    }

    /// The general build, in PyTorch's order of phases. Never inlined into
    /// [`build`](Self::build), so that the contiguous path every eager
    /// call of one shape takes stays a short run of code: inlined, this
    /// path's many blocks sat among the fast path's and spread it over
    /// more instruction-cache lines than it needs.
    #[inline(never)]
    fn build_general(mut config: TensorIteratorConfig<'a>) -> Result<TensorIterator<'a>> {
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
}

/// `compute_mem_overlaps`: no given output may have two elements at one
/// address, nor partly overlap an input that is not itself.
pub(super) fn check_mem_overlaps(
    outputs: &[Option<&Tensor>],
    inputs: &[TensorRef<'_>],
) -> Result<()> {
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

/// The inputs' operands, each from one snapshot of its layout; inputs of
/// another dtype than the computation's get a copy that the loops fill
/// under their borrows (listed by input index).
pub(super) fn input_operands<'a>(
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
pub(super) fn output_layout(
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
            crate::native::resize::resize_output(o, self.shape, Some(self.strides))?;
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
