//! Factory kernels: `empty`, `empty_strided` (Meta, and the shared logic
//! the CPU kernels call) and the composite factories (`zeros`, `ones`,
//! `full`, `scalar_tensor`, `*_like`, `arange`, `linspace`, `eye`, `rand`,
//! `randn`), which allocate with `empty` and fill through the backend's
//! in-place and out kernels.

use c10_core::{
    Device, Error, Generator, Layout, MemoryFormat, Result, Scalar, ScalarType, TensorBase,
};

use crate::generated::ops;
use crate::Tensor;

/// The default dtype (`torch.get_default_dtype()`).
pub const DEFAULT_DTYPE: ScalarType = ScalarType::Float;

fn check_layout(layout: Option<Layout>) -> Result<()> {
    match layout {
        None | Some(Layout::Strided) => Ok(()),
        Some(other) => Err(Error::runtime(format!(
            "empty: only strided tensors are supported, got layout {other}"
        ))),
    }
}

/// Strides of a tensor of `sizes` laid out in `memory_format`.
pub fn strides_for(sizes: &[i64], memory_format: MemoryFormat) -> Result<Vec<i64>> {
    let contiguous = || c10_core::tensor_impl::contiguous_strides(sizes).to_vec();
    Ok(match memory_format {
        MemoryFormat::Contiguous | MemoryFormat::Preserve => contiguous(),
        MemoryFormat::ChannelsLast => {
            if sizes.len() != 4 {
                return Err(Error::runtime(
                    "required rank 4 tensor to use channels_last format",
                ));
            }
            let (c, h, w) = (sizes[1].max(1), sizes[2].max(1), sizes[3].max(1));
            vec![c * h * w, 1, w * c, c]
        }
        MemoryFormat::ChannelsLast3d => {
            if sizes.len() != 5 {
                return Err(Error::runtime(
                    "required rank 5 tensor to use channels_last_3d format",
                ));
            }
            let (c, d, h, w) = (
                sizes[1].max(1),
                sizes[2].max(1),
                sizes[3].max(1),
                sizes[4].max(1),
            );
            vec![c * d * h * w, 1, h * w * c, w * c, c]
        }
    })
}

/// `empty` on `device`, shared by the CPU and Meta kernels.
pub fn empty_generic(
    size: &[i64],
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Device,
    memory_format: Option<MemoryFormat>,
) -> Result<Tensor> {
    check_layout(layout)?;
    if let Some(bad) = size.iter().find(|s| **s < 0) {
        return Err(Error::runtime(format!(
            "Trying to create tensor with negative dimension {bad}: {size:?}"
        )));
    }
    let strides = strides_for(size, memory_format.unwrap_or(MemoryFormat::Contiguous))?;
    TensorBase::empty_strided(size, &strides, dtype.unwrap_or(DEFAULT_DTYPE), device)
        .map(Tensor::from)
}

/// `empty_strided` on `device`, shared by the CPU and Meta kernels.
pub fn empty_strided_generic(
    size: &[i64],
    stride: &[i64],
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Device,
) -> Result<Tensor> {
    check_layout(layout)?;
    TensorBase::empty_strided(size, stride, dtype.unwrap_or(DEFAULT_DTYPE), device)
        .map(Tensor::from)
}

/// CompositeExplicitAutograd kernel of `zeros`: storage is zero-filled at
/// allocation, so `zeros` is `empty` on the requested device.
pub fn zeros(
    size: &[i64],
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    empty_with(size, dtype, layout, device, pin_memory)
}

/// CompositeExplicitAutograd kernel of `empty_permuted`: a contiguous
/// tensor of the sizes in `physical_layout`'s order, permuted back so that
/// dimension `physical_layout[i]` is the `i`-th outermost in memory.
pub fn empty_permuted(
    size: &[i64],
    physical_layout: &[i64],
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    let dim = size.len();
    if physical_layout.len() != dim {
        return Err(Error::runtime(format!(
            "Number of dimensions in size does not match the length of the physical_layout; \
             i.e. len(size) = {dim} is not equal to len(physical_layout) = {}",
            physical_layout.len()
        )));
    }
    let mut inverse = vec![-1i64; dim];
    for (i, &p) in physical_layout.iter().enumerate() {
        let slot = usize::try_from(p)
            .ok()
            .filter(|&p| p < dim)
            .ok_or_else(|| {
                Error::runtime(format!(
                    "Dimension out of range (expected to be between 0 and {}, but got {p} at \
                     index {i}).  NB: negative dims not currently supported; file an issue if \
                     you want it.",
                    dim as i64 - 1
                ))
            })?;
        if inverse[slot] >= 0 {
            return Err(Error::runtime("Duplicate dim not allowed"));
        }
        inverse[slot] = i as i64;
    }
    let physical: Vec<i64> = physical_layout.iter().map(|&p| size[p as usize]).collect();
    let t = empty_with(&physical, dtype, layout, device, pin_memory)?;
    ops::permute(&t, &inverse)
}

/// The dtype `full` gives a fill value when none is asked for: bool, int64
/// or the default floating dtype (`infer_full_dtype`).
fn full_dtype(fill_value: Scalar, dtype: Option<ScalarType>) -> Result<ScalarType> {
    Ok(match (dtype, fill_value) {
        (Some(d), _) => d,
        (None, Scalar::Bool(_)) => ScalarType::Bool,
        (None, Scalar::Int(_)) => ScalarType::Long,
        (None, Scalar::Double(_)) => DEFAULT_DTYPE,
        (None, Scalar::ComplexDouble(_)) => {
            return Err(Error::not_implemented(
                "complex tensors are not supported by this build",
            ))
        }
    })
}

/// `empty(size, dtype, layout, device, pin_memory)` through the dispatcher.
pub(crate) fn empty_with(
    size: &[i64],
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    ops::empty_memory_format_with(
        size,
        ops::EmptyMemoryFormatOptions {
            dtype,
            layout,
            device,
            pin_memory,
            memory_format: None,
        },
    )
}

/// `full(size, fill_value)` (CompositeExplicitAutograd): `empty` + `fill_`.
pub fn full(
    size: &[i64],
    fill_value: Scalar,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    let dtype = full_dtype(fill_value, dtype)?;
    let t = empty_with(size, Some(dtype), layout, device, pin_memory)?;
    ops::fill_scalar_(&t, fill_value)
}

/// `scalar_tensor(s)` (CompositeExplicitAutograd): a 0-dim tensor holding
/// `s`, of the default dtype (whatever `s`'s kind) unless `dtype` says
/// otherwise.
pub fn scalar_tensor(
    s: Scalar,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    let t = empty_with(&[], dtype, layout, device, pin_memory)?;
    ops::fill_scalar_(&t, s)
}

/// `ones(size)` (CompositeExplicitAutograd).
pub fn ones(
    size: &[i64],
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    let t = empty_with(size, dtype, layout, device, pin_memory)?;
    ops::fill_scalar_(&t, Scalar::Int(1))
}

/// `empty_like` (CompositeExplicitAutograd): with `preserve_format`, the
/// layout of `self` is kept when it is dense, else dense strides follow
/// its dimension order (`infer_dense_strides`), as PyTorch does.
pub fn empty_like(
    self_: &Tensor,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
    memory_format: Option<MemoryFormat>,
) -> Result<Tensor> {
    let dtype = dtype.or(self_.dtype());
    let device = device.or(self_.device());
    let snapshot = self_
        .layout()
        .ok_or_else(|| Error::runtime("undefined tensor"))?;
    match memory_format {
        // PyTorch keeps a non-overlapping and dense layout's strides exactly
        // (those of size-one dimensions included).
        None | Some(MemoryFormat::Preserve) => ops::empty_strided_with(
            snapshot.sizes(),
            &if crate::memory_overlap::is_non_overlapping_and_dense(
                snapshot.sizes(),
                snapshot.strides(),
            ) {
                snapshot.strides().to_vec()
            } else {
                // Dense strides in `self`'s dimension order.
                super::dims::infer_dense_strides(snapshot.sizes(), snapshot.strides())
            },
            ops::EmptyStridedOptions {
                dtype,
                layout,
                device,
                pin_memory,
            },
        ),
        Some(format) => ops::empty_memory_format_with(
            &self_.sizes(),
            ops::EmptyMemoryFormatOptions {
                dtype,
                layout,
                device,
                pin_memory,
                memory_format: Some(format),
            },
        ),
    }
}

/// `full_like(self, fill_value)` (CompositeExplicitAutograd).
pub fn full_like(
    self_: &Tensor,
    fill_value: Scalar,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
    memory_format: Option<MemoryFormat>,
) -> Result<Tensor> {
    let t = empty_like(self_, dtype, layout, device, pin_memory, memory_format)?;
    ops::fill_scalar_(&t, fill_value)
}

/// `zeros_like` (CompositeExplicitAutograd): `empty_like` + `zero_`.
pub fn zeros_like(
    self_: &Tensor,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
    memory_format: Option<MemoryFormat>,
) -> Result<Tensor> {
    let t = empty_like(self_, dtype, layout, device, pin_memory, memory_format)?;
    ops::zero_(&t)
}

/// `ones_like` (CompositeExplicitAutograd).
pub fn ones_like(
    self_: &Tensor,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
    memory_format: Option<MemoryFormat>,
) -> Result<Tensor> {
    full_like(
        self_,
        Scalar::Int(1),
        dtype,
        layout,
        device,
        pin_memory,
        memory_format,
    )
}

/// `arange.start_step(start, end, step)` (CompositeExplicitAutograd):
/// int64 when every bound is integral and no dtype is asked for.
pub fn arange_start_step(
    start: Scalar,
    end: Scalar,
    step: Scalar,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    let integral = [start, end, step].iter().all(|s| s.is_integral(true));
    let dtype = dtype.or(integral.then_some(ScalarType::Long));
    let out = empty_with(&[0], dtype, layout, device, pin_memory)?;
    ops::arange_start_out(start, end, step, &out)
}

/// `arange.start(start, end)` (CompositeExplicitAutograd).
pub fn arange_start(
    start: Scalar,
    end: Scalar,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    arange_start_step(
        start,
        end,
        Scalar::Int(1),
        dtype,
        layout,
        device,
        pin_memory,
    )
}

/// `arange(end)` (CompositeExplicitAutograd).
pub fn arange(
    end: Scalar,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    arange_start_step(
        Scalar::Int(0),
        end,
        Scalar::Int(1),
        dtype,
        layout,
        device,
        pin_memory,
    )
}

/// `linspace(start, end, steps)` (CompositeExplicitAutograd).
pub fn linspace(
    start: Scalar,
    end: Scalar,
    steps: i64,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    if steps < 0 {
        return Err(Error::runtime("number of steps must be non-negative"));
    }
    let out = empty_with(&[steps], dtype, layout, device, pin_memory)?;
    ops::linspace_out(start, end, steps, &out)
}

/// `eye.m(n, m)` (CompositeExplicitAutograd).
pub fn eye_m(
    n: i64,
    m: i64,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    let out = empty_with(&[0], dtype, layout, device, pin_memory)?;
    ops::eye_m_out(n, m, &out)
}

/// `eye(n)` (CompositeExplicitAutograd).
pub fn eye(
    n: i64,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    eye_m(n, n, dtype, layout, device, pin_memory)
}

/// `rand.generator(size, generator)` (CompositeExplicitAutograd):
/// uniform on [0, 1).
pub fn rand_generator(
    size: &[i64],
    generator: Option<Generator>,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    let t = empty_with(size, dtype, layout, device, pin_memory)?;
    ops::uniform_with_(
        &t,
        ops::UniformInplaceOptions {
            from: 0.0,
            to: 1.0,
            generator,
        },
    )
}

/// `rand(size)` (CompositeExplicitAutograd): from the default generator.
pub fn rand(
    size: &[i64],
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    rand_generator(size, None, dtype, layout, device, pin_memory)
}

/// `randn.generator(size, generator)` (CompositeExplicitAutograd):
/// standard normal.
pub fn randn_generator(
    size: &[i64],
    generator: Option<Generator>,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    let t = empty_with(size, dtype, layout, device, pin_memory)?;
    ops::normal_with_(
        &t,
        ops::NormalInplaceOptions {
            mean: 0.0,
            std: 1.0,
            generator,
        },
    )
}

/// `randn(size)` (CompositeExplicitAutograd): from the default generator.
pub fn randn(
    size: &[i64],
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    randn_generator(size, None, dtype, layout, device, pin_memory)
}

/// `randperm.generator(n, generator, dtype)` (CompositeExplicitAutograd):
/// `empty(n)` (int64 by default), filled by `randperm.generator_out`.
pub fn randperm_generator(
    n: i64,
    generator: Option<Generator>,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    let t = empty_with(
        &[n],
        Some(dtype.unwrap_or(ScalarType::Long)),
        layout,
        device,
        pin_memory,
    )?;
    ops::randperm_generator_out(n, generator, &t)
}

/// `randperm(n, dtype)` (CompositeExplicitAutograd): from the default
/// generator.
pub fn randperm(
    n: i64,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    randperm_generator(n, None, dtype, layout, device, pin_memory)
}

/// `randperm.out(n, out)` (CompositeExplicitAutograd).
pub fn randperm_out(n: i64, out: &Tensor) -> Result<Tensor> {
    ops::randperm_generator_out(n, None, out)
}

/// `randperm.generator_out`'s checks on every backend (PyTorch's
/// `randperm_out_cpu` and `check_supported_max_int_with_precision`): `n`
/// is non-negative, `n - 1` fits `out`'s dtype, and floating dtypes hold
/// every integer up to `n` exactly; then `out` is resized to `[n]`.
pub fn randperm_out_checks(n: i64, generator: Option<&Generator>, out: &Tensor) -> Result<()> {
    if n < 0 {
        return Err(Error::runtime(format!("n must be non-negative, got{n}")));
    }
    let device = out
        .device()
        .ok_or_else(|| Error::runtime("undefined tensor"))?;
    if let Some(g) = generator {
        if g.device() != device {
            return Err(Error::runtime(format!(
                "Expected a '{device}' generator device but found '{}'",
                g.device()
            )));
        }
    }
    let dtype = out
        .dtype()
        .ok_or_else(|| Error::runtime("undefined tensor"))?;
    Scalar::Int(if n > 0 { n - 1 } else { n }).check_fits(dtype)?;
    let limit = match dtype {
        ScalarType::Half => Some((2049, "2049 for Half")),
        ScalarType::Float => Some(((1 << 24) + 1, "2^24+1 for Float")),
        ScalarType::Double => Some(((1 << 53) + 1, "2^53+1 for Double")),
        _ => None,
    };
    if let Some((max, text)) = limit {
        if n > max {
            return Err(Error::runtime(format!(
                "n cannot be greater than {text} type."
            )));
        }
    }
    out.resize_(&[n])?;
    Ok(())
}

/// A factory option that defaults to `self`'s (`self.options().merge_in`).
fn inherit<T>(given: Option<T>, own: Option<T>) -> Option<T> {
    given.or(own)
}

/// `new_empty(self, size, *, dtype, layout, device, pin_memory)`
/// (CompositeExplicitAutograd): `empty` with `self`'s options where none
/// is given.
pub fn new_empty(
    self_: &Tensor,
    size: &[i64],
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    ops::empty_memory_format_with(
        size,
        ops::EmptyMemoryFormatOptions {
            dtype: inherit(dtype, self_.dtype()),
            layout: inherit(layout, Some(Layout::Strided)),
            device: inherit(device, self_.device()),
            pin_memory,
            memory_format: None,
        },
    )
}

/// `new_zeros(self, size, *, dtype, layout, device, pin_memory)`.
pub fn new_zeros(
    self_: &Tensor,
    size: &[i64],
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    ops::zeros_with(
        size,
        ops::ZerosOptions {
            dtype: inherit(dtype, self_.dtype()),
            layout: inherit(layout, Some(Layout::Strided)),
            device: inherit(device, self_.device()),
            pin_memory,
        },
    )
}

/// `new_ones(self, size, *, dtype, layout, device, pin_memory)`.
pub fn new_ones(
    self_: &Tensor,
    size: &[i64],
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    ops::ones_with(
        size,
        ops::OnesOptions {
            dtype: inherit(dtype, self_.dtype()),
            layout: inherit(layout, Some(Layout::Strided)),
            device: inherit(device, self_.device()),
            pin_memory,
        },
    )
}

/// `new_full(self, size, fill_value, *, dtype, layout, device,
/// pin_memory)`.
#[allow(clippy::too_many_arguments)]
pub fn new_full(
    self_: &Tensor,
    size: &[i64],
    fill_value: Scalar,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    ops::full_with(
        size,
        fill_value,
        ops::FullOptions {
            dtype: inherit(dtype, self_.dtype()),
            layout: inherit(layout, Some(Layout::Strided)),
            device: inherit(device, self_.device()),
            pin_memory,
        },
    )
}

/// `lift_fresh(self)` (CompositeExplicitAutograd): `self`.
pub fn lift_fresh(self_: &Tensor) -> Result<Tensor> {
    Ok(self_.clone())
}

/// `lift_fresh_copy(self)` (CompositeExplicitAutogradNonFunctional): a
/// clone.
pub fn lift_fresh_copy(self_: &Tensor) -> Result<Tensor> {
    ops::clone(self_)
}
