//! FakeTensor mode (PyTorch's `FakeTensorMode`): tensors with sizes,
//! strides, a dtype and a device but no data, on which every operator runs
//! its Meta kernel while the device is kept, so a program's output shapes
//! can be computed for any device, CUDA included, without running it.
//!
//! A fake tensor is a wrapper tensor (see [`subclass`](crate::subclass)) on
//! its fake device whose data is a Meta tensor of the same geometry. Under
//! the mode, every call is rewritten: fake tensors become their Meta
//! tensors, real tensors are faked first, a factory's `device` becomes
//! `meta`; the Meta results are wrapped as fake tensors on the common device
//! of the inputs (or the factory's device). Without the mode, a call that
//! sees a fake tensor is rewritten the same way by the fake tensors'
//! subclass, which refuses real tensors among the arguments, as PyTorch
//! does. Operators without a Meta kernel decompose where they have a
//! CompositeImplicitAutograd kernel, or fail with the Meta backend's error.

use std::sync::Arc;

use aten_boxing::schema::FunctionSchema;
use aten_boxing::IValue;
use c10_core::{Device, Error, Result, ScalarType, TensorBase, TensorImpl};

use crate::modes::TorchDispatchMode;
use crate::overload::OpOverload;
use crate::subclass::{make_wrapper_subclass_on, subclass_object, TorchDispatchSubclass};

/// The data of a fake tensor: its Meta twin.
struct FakeData {
    meta: TensorBase,
}

/// The subclass of fake tensors.
struct FakeTensorClass;

/// `FakeTensorMode`: push it with [`push_mode`](crate::push_mode).
pub struct FakeTensorMode {
    class: Arc<dyn TorchDispatchSubclass>,
}

impl FakeTensorMode {
    /// A fake-tensor mode.
    pub fn new() -> Arc<FakeTensorMode> {
        Arc::new(FakeTensorMode {
            class: Arc::new(FakeTensorClass),
        })
    }

    /// A fake tensor of `sizes` (contiguous), `dtype` and `device`.
    pub fn fake_tensor(
        &self,
        sizes: &[i64],
        dtype: ScalarType,
        device: Device,
    ) -> Result<TensorBase> {
        let strides = c10_core::tensor_impl::contiguous_strides(sizes);
        fake_from_geometry(&self.class, sizes, &strides, dtype, device)
    }

    /// `from_tensor`: a fake tensor with `t`'s sizes, strides, dtype and
    /// device (a fake tensor is returned as it is).
    pub fn from_tensor(&self, t: &TensorBase) -> Result<TensorBase> {
        if is_fake(t) {
            return Ok(t.clone());
        }
        let (Some(dtype), Some(device), Some(layout)) = (t.dtype(), t.device(), t.layout()) else {
            return Err(Error::runtime("cannot fake an undefined tensor"));
        };
        fake_from_geometry(&self.class, layout.sizes(), layout.strides(), dtype, device)
    }
}

fn fake_from_geometry(
    class: &Arc<dyn TorchDispatchSubclass>,
    sizes: &[i64],
    strides: &[i64],
    dtype: ScalarType,
    device: Device,
) -> Result<TensorBase> {
    let meta = TensorBase::from_impl(TensorImpl::new_dataless(
        TensorImpl::default_key_set(Device::META),
        dtype,
        Device::META,
        sizes,
        strides,
    )?);
    wrap(class, &meta, device)
}

fn wrap(
    class: &Arc<dyn TorchDispatchSubclass>,
    meta: &TensorBase,
    device: Device,
) -> Result<TensorBase> {
    make_wrapper_subclass_on(
        meta,
        device,
        Arc::clone(class),
        FakeData { meta: meta.clone() },
    )
}

/// Whether `t` is a fake tensor.
pub fn is_fake(t: &TensorBase) -> bool {
    meta_of(t).is_some()
}

/// The Meta twin of a fake tensor.
pub fn meta_of(t: &TensorBase) -> Option<&TensorBase> {
    subclass_object(t)?.data::<FakeData>().map(|d| &d.meta)
}

/// Points the call's device argument (positional or keyword, added when
/// the schema has one and the call gave none) at Meta, and returns the
/// device it named.
fn meta_device_argument(
    schema: &FunctionSchema,
    args: &mut [IValue],
    kwargs: &mut Vec<(&str, IValue)>,
) -> Option<Device> {
    let at = schema.argument_index_with_name("device")?;
    let slot: Option<&mut IValue> = match args.get_mut(at) {
        Some(v) => Some(v),
        None => kwargs
            .iter_mut()
            .find(|(k, _)| *k == "device")
            .map(|(_, v)| v),
    };
    let Some(v) = slot else {
        kwargs.push(("device", IValue::device(Device::META)));
        return None;
    };
    let named = match v {
        IValue::Device(d) => Some(d.get()),
        _ => None,
    };
    *v = IValue::device(Device::META);
    named
}

/// Rewrites one call for Meta and wraps its results (see the module docs).
fn fake_call(
    class: &Arc<dyn TorchDispatchSubclass>,
    mode: Option<&FakeTensorMode>,
    op: &OpOverload,
    args: &[IValue],
    kwargs: &[(&str, IValue)],
) -> Result<Vec<IValue>> {
    let mut common: Option<Device> = None;
    let mut to_meta = |t: &TensorBase| -> Result<TensorBase> {
        let (meta, device) = match meta_of(t) {
            Some(meta) => (meta.clone(), t.device()),
            None => match mode {
                Some(mode) => {
                    let fake = mode.from_tensor(t)?;
                    (meta_of(&fake).cloned().unwrap_or_default(), t.device())
                }
                None => {
                    return Err(Error::runtime(format!(
                        "Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode with 'allow_non_fake_inputs'. Found in {op}"
                    )))
                }
            },
        };
        // CPU scalars (0-dim) take part on any device, as in PyTorch.
        let is_cpu_scalar = device == Some(Device::CPU) && t.dim() == 0;
        if let (Some(d), false) = (device, is_cpu_scalar) {
            match common {
                None => common = Some(d),
                Some(c) if c != d => {
                    return Err(Error::runtime(format!(
                        "Unhandled FakeTensor Device Propagation for {op}, found two different devices {c}, {d}"
                    )))
                }
                _ => {}
            }
        }
        Ok(meta)
    };
    let mut convert = |v: &IValue| -> Result<IValue> {
        Ok(match v {
            IValue::Tensor(t) if t.defined() => IValue::Tensor(to_meta(t)?),
            IValue::TensorList(ts) => IValue::TensorList(Arc::new(
                ts.iter().map(&mut to_meta).collect::<Result<Vec<_>>>()?,
            )),
            IValue::OptionalTensorList(ts) => IValue::OptionalTensorList(Arc::new(
                ts.iter()
                    .map(|t| t.as_ref().map(&mut to_meta).transpose())
                    .collect::<Result<Vec<_>>>()?,
            )),
            other => other.clone(),
        })
    };
    let mut args: Vec<IValue> = args.iter().map(&mut convert).collect::<Result<_>>()?;
    let mut kwargs: Vec<(&str, IValue)> = kwargs
        .iter()
        .map(|(k, v)| Ok((*k, convert(v)?)))
        .collect::<Result<_>>()?;
    // A device given explicitly wins (`_to_copy(x, device=...)`,
    // `empty_like(x, device=...)`); else the inputs' device.
    let schema = op.schema()?;
    if let Some(d) = meta_device_argument(&schema, &mut args, &mut kwargs) {
        common = Some(d);
    }
    let out_device = common.unwrap_or(Device::CPU);
    op.call(&args, &kwargs)?
        .into_iter()
        .map(|r| match r {
            IValue::Tensor(t) if t.defined() => wrap(class, &t, out_device).map(IValue::Tensor),
            IValue::TensorList(ts) => Ok(IValue::TensorList(Arc::new(
                ts.iter()
                    .map(|t| wrap(class, t, out_device))
                    .collect::<Result<Vec<_>>>()?,
            ))),
            other => Ok(other),
        })
        .collect()
}

impl TorchDispatchMode for FakeTensorMode {
    fn torch_dispatch(
        &self,
        op: &OpOverload,
        args: &[IValue],
        kwargs: &[(&str, IValue)],
    ) -> Result<Vec<IValue>> {
        fake_call(&self.class, Some(self), op, args, kwargs)
    }

    fn name(&self) -> String {
        "FakeTensorMode".into()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl TorchDispatchSubclass for FakeTensorClass {
    fn torch_dispatch(
        &self,
        cls: &Arc<dyn TorchDispatchSubclass>,
        op: &OpOverload,
        args: &[IValue],
        kwargs: &[(&str, IValue)],
    ) -> Result<Option<Vec<IValue>>> {
        fake_call(cls, None, op, args, kwargs).map(Some)
    }

    fn name(&self) -> String {
        "FakeTensor".into()
    }
}
