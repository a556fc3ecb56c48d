//! Structured kernels at run time (PyTorch's structured kernels).
//!
//! A structured family is an out operator (`add.out`, `structured: True`
//! in the yaml) and the functional and in-place operators that delegate to
//! it (`add.Tensor`, `add_.Tensor`). Its logic is split as PyTorch splits
//! it:
//!
//! - the **meta function** ([`crate::meta`], PyTorch's `TORCH_META_FUNC`):
//!   backend-neutral; checks the arguments and describes the outputs
//!   (sizes, dtype, strides), calling [`SetOutput`] for them. It returns
//!   the family's state: the built `TensorIterator` of a
//!   `structured_inherits: TensorIteratorBase` family (which holds its
//!   output), [`MetaOutput<N>`](MetaOutput) for the others, or a
//!   [`DeferredOutput`] whose functional output the impl may allocate;
//! - the **impl** of each backend (PyTorch's `TORCH_IMPL_FUNC`): the loops,
//!   given the meta function's result and the arguments;
//! - the **wrappers**, generated per backend and member: they pick the
//!   [`SetOutput`] of the member (functional: allocate; in-place: check
//!   `self`; out: resize and check `out`), run the meta function, then the
//!   backend's impl (the Meta backend has none), and return the output
//!   ([`SetOutput::finish`]).

use c10_core::{Device, Error, Result, ScalarType, TensorBase};

use crate::native::resize::resize_output;
use crate::tensor_iterator::{TensorIterator, TensorIteratorConfig};
use crate::Tensor;

/// What `set_output` does for the member of a structured family being
/// called (PyTorch's generated `set_output_raw_strided` of the functional,
/// in-place and out classes).
#[derive(Copy, Clone, Debug)]
#[doc(alias = "set_output_raw_strided")]
pub enum SetOutput<'a> {
    /// The functional member (`add`): the output is allocated as described.
    Functional,
    /// The in-place member (`add_`): the output is `self`, which must
    /// already be what the meta function describes.
    Inplace(&'a Tensor),
    /// The out member (`add.out`, `max.dim_max`): each given output is
    /// resized to the described shape (PyTorch's `resize_output`) and must
    /// have its dtype and device.
    Out(&'a [&'a Tensor]),
}

impl<'a> SetOutput<'a> {
    /// The given (first) output, if any (PyTorch's `maybe_get_output`).
    #[inline]
    pub fn maybe_get_output(self) -> Option<&'a Tensor> {
        self.maybe_get_output_at(0)
    }

    /// The given output `index`, if any.
    #[inline]
    pub fn maybe_get_output_at(self, index: usize) -> Option<&'a Tensor> {
        match self {
            SetOutput::Functional => None,
            SetOutput::Inplace(t) => (index == 0).then_some(t),
            SetOutput::Out(outs) => outs.get(index).copied(),
        }
    }

    /// Builds a `TensorIterator` family's iteration with this member's
    /// output policy: the configuration names the output
    /// ([`maybe_get_output`](Self::maybe_get_output)); an in-place output
    /// keeps its shape (PyTorch's "output with shape ... doesn't match the
    /// broadcast shape").
    #[inline]
    pub fn build<'c>(self, config: TensorIteratorConfig<'c>) -> Result<TensorIterator<'c>> {
        match self {
            SetOutput::Inplace(_) => config.resize_outputs(false).build(),
            _ => config.build(),
        }
    }

    /// Sets output `index` of a family not built on `TensorIterator`:
    /// allocates it (`strides`: or contiguous), checks `self`, or resizes
    /// and checks the given output. Returns the output.
    pub fn set_output_raw_strided(
        self,
        index: usize,
        sizes: &[i64],
        strides: Option<&[i64]>,
        dtype: ScalarType,
        device: Device,
    ) -> Result<Tensor> {
        match self {
            SetOutput::Functional => Ok(Tensor::from(match strides {
                Some(s) => TensorBase::empty_strided(sizes, s, dtype, device)?,
                None => TensorBase::empty(sizes, dtype, device)?,
            })),
            SetOutput::Inplace(t) if index == 0 => {
                check_inplace(t, sizes, dtype, device)?;
                Ok(t.clone())
            }
            SetOutput::Inplace(_) => Err(Error::internal(format!(
                "an in-place call has one output, not output {index}"
            ))),
            SetOutput::Out(outs) => {
                let t = *outs.get(index).ok_or_else(|| {
                    Error::internal(format!("the out= call has no output {index}"))
                })?;
                check_output(t, dtype, device)?;
                resize_output(t, sizes, strides)?;
                Ok(t.clone())
            }
        }
    }

    /// The value a member returns: the output. (Version counters of the
    /// tensors in-place and out members write are bumped by the
    /// `ADInplaceOrView` kernels above the backends, not here.)
    #[inline]
    pub fn finish(self, output: Tensor) -> Tensor {
        output
    }
}

/// `self` of an in-place call must be what the meta function describes
/// (PyTorch's `check_inplace`).
fn check_inplace(t: &Tensor, sizes: &[i64], dtype: ScalarType, device: Device) -> Result<()> {
    let bad = |what: &str, have: String, want: String| {
        Error::runtime(format!(
            "Bad in-place call: input tensor {what} {have} and output tensor {what} {want} should match"
        ))
    };
    let have_dtype = t.dtype();
    if have_dtype != Some(dtype) {
        let have = have_dtype.map_or("undefined", |d| d.type_meta_name());
        return Err(bad("dtype", have.into(), dtype.type_meta_name().into()));
    }
    let have_device = t.device();
    if have_device != Some(device) {
        let have = have_device.map_or("undefined".to_string(), |d| d.to_string());
        return Err(bad("device", have, device.to_string()));
    }
    let current = t.sizes();
    if current != sizes {
        return Err(bad("size", format!("{current:?}"), format!("{sizes:?}")));
    }
    Ok(())
}

/// `out`'s dtype and device must be the described ones.
fn check_output(t: &Tensor, dtype: ScalarType, device: Device) -> Result<()> {
    let (have_dtype, have_device) = (t.dtype(), t.device());
    if have_dtype != Some(dtype) {
        return Err(Error::runtime(format!(
            "Expected out tensor to have dtype {}, but got {} instead",
            dtype.type_meta_name(),
            have_dtype.map_or("undefined", |d| d.type_meta_name())
        )));
    }
    if have_device != Some(device) {
        return Err(Error::runtime(format!(
            "Expected out tensor to have device {device}, but got {} instead",
            have_device.map_or("undefined".to_string(), |d| d.to_string())
        )));
    }
    Ok(())
}

/// One output as a meta function describes it: sizes, strides (`None`:
/// contiguous) and dtype.
pub type OutputSpec<'s> = (&'s [i64], Option<&'s [i64]>, ScalarType);

/// The output of an `autogen` out variant: `out` resized to `result`'s
/// shape ([`resize_output`]), then `result` copied in (converting its
/// dtype).
pub fn copy_to_out(result: &Tensor, out: &Tensor) -> Result<()> {
    resize_output(out, &result.sizes(), None)?;
    crate::generated::ops::copy_(out, result)?;
    Ok(())
}

/// The structured state of a family not built on `TensorIterator`: the
/// `N` outputs its `set_output` made, and whether the call allocated them
/// (a fresh output shares memory with no input).
#[derive(Clone, Debug)]
pub struct MetaOutput<const N: usize = 1> {
    outputs: [Tensor; N],
    fresh: bool,
}

impl<const N: usize> MetaOutput<N> {
    /// The (first) output the impl writes.
    #[inline]
    pub fn output(&self) -> &Tensor {
        &self.outputs[0]
    }

    /// Every output the impl writes.
    #[inline]
    pub fn outputs(&self) -> &[Tensor; N] {
        &self.outputs
    }

    /// The outputs, for the member to return.
    #[inline]
    pub fn into_outputs(self) -> [Tensor; N] {
        self.outputs
    }

    /// Whether the output was allocated by this call (the functional
    /// member), so that no input overlaps it.
    #[inline]
    pub fn is_fresh(&self) -> bool {
        self.fresh
    }
}

impl SetOutput<'_> {
    /// [`set_output_raw_strided`](Self::set_output_raw_strided) of the one
    /// output, contiguous, as the structured state of a family not built
    /// on `TensorIterator`.
    pub fn set_output(
        self,
        sizes: &[i64],
        dtype: ScalarType,
        device: Device,
    ) -> Result<MetaOutput> {
        self.set_outputs([(sizes, None, dtype)], device)
    }

    /// Sets each output `i` as `outputs[i]` describes it (sizes, strides or
    /// contiguous, dtype), all on `device`: the structured state of a
    /// family not built on `TensorIterator`.
    pub fn set_outputs<const N: usize>(
        self,
        outputs: [OutputSpec<'_>; N],
        device: Device,
    ) -> Result<MetaOutput<N>> {
        let mut made: [Tensor; N] = std::array::from_fn(|_| Tensor::undefined());
        for (i, (sizes, strides, dtype)) in outputs.into_iter().enumerate() {
            made[i] = self.set_output_raw_strided(i, sizes, strides, dtype, device)?;
        }
        Ok(MetaOutput {
            outputs: made,
            fresh: matches!(self, SetOutput::Functional),
        })
    }
}

/// What a meta function hands back to the generated wrapper: the output
/// its backend's impl wrote.
pub trait StructuredMeta {
    /// The (first) output.
    fn into_output(self) -> Result<Tensor>;
}

impl StructuredMeta for TensorIterator<'_> {
    #[inline]
    fn into_output(self) -> Result<Tensor> {
        Ok(TensorIterator::into_output(self, 0))
    }
}

impl<const N: usize> StructuredMeta for MetaOutput<N> {
    #[inline]
    fn into_output(self) -> Result<Tensor> {
        Ok(self.outputs.into_iter().next().unwrap_or_default())
    }
}

/// The structured state of a one-output family whose functional output
/// is allocated when first needed: by the impl, which may make it itself
/// ([`supply`](Self::supply): a kernel that writes every element skips
/// zeroing a large output), or else zeroed on first use; the Meta backend
/// gets it when the wrapper returns. In-place and out outputs are set at
/// once.
#[derive(Debug)]
pub struct DeferredOutput {
    sizes: Vec<i64>,
    dtype: ScalarType,
    device: Device,
    output: std::cell::OnceCell<Tensor>,
    fresh: bool,
}

impl SetOutput<'_> {
    /// [`set_output`](Self::set_output), with a functional output
    /// allocated when first needed ([`DeferredOutput`]).
    pub fn defer_output(
        self,
        sizes: &[i64],
        dtype: ScalarType,
        device: Device,
    ) -> Result<DeferredOutput> {
        let output = std::cell::OnceCell::new();
        let fresh = matches!(self, SetOutput::Functional);
        if !fresh {
            let _ = output.set(self.set_output_raw_strided(0, sizes, None, dtype, device)?);
        }
        Ok(DeferredOutput {
            sizes: sizes.to_vec(),
            dtype,
            device,
            output,
            fresh,
        })
    }
}

impl DeferredOutput {
    /// Whether the output is the call's own (the functional member), so
    /// that no input overlaps it.
    #[inline]
    pub fn is_fresh(&self) -> bool {
        self.fresh
    }

    /// The described sizes.
    #[inline]
    pub fn sizes(&self) -> &[i64] {
        &self.sizes
    }

    /// The output, allocated (contiguous, zeroed) if no one has yet.
    pub fn output(&self) -> Result<&Tensor> {
        if let Some(t) = self.output.get() {
            return Ok(t);
        }
        let made = Tensor::from(TensorBase::empty(&self.sizes, self.dtype, self.device)?);
        Ok(self.output.get_or_init(|| made))
    }

    /// Gives the functional output the impl allocated and wrote: it must be
    /// contiguous with the described sizes, dtype and device, and no output
    /// may exist yet.
    pub fn supply(&mut self, output: Tensor) -> Result<()> {
        let fits = output.sizes() == self.sizes
            && output.dtype() == Some(self.dtype)
            && output.device() == Some(self.device)
            && output.is_contiguous();
        if !self.fresh || !fits {
            return Err(Error::internal(
                "supply: the output does not match the meta function's",
            ));
        }
        self.output
            .set(output)
            .map_err(|_| Error::internal("supply: the output exists already"))
    }
}

impl StructuredMeta for DeferredOutput {
    fn into_output(self) -> Result<Tensor> {
        self.output()?;
        self.output
            .into_inner()
            .ok_or_else(|| Error::internal("a deferred output was not made"))
    }
}
