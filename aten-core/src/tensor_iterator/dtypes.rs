//! The dtype and device phases of a build (PyTorch's `compute_types`):
//! the common dtype under type promotion, each output's dtype, the common
//! device, and `canCast`.

use c10_core::type_promotion::ResultTypeState;
use c10_core::{Device, DeviceType, Error, Result, ScalarType};

use super::{TensorIteratorConfig, TensorRef};
use crate::Tensor;

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

/// The dtype of each output: a given output's own (checked against the
/// computation's), else the static or the common dtype.
pub(super) fn output_dtypes(
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

pub(super) fn common_device(
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

pub(super) fn compute_common_dtype(
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
        common = crate::native::factories::DEFAULT_DTYPE;
    }
    Ok(common)
}

/// The dtype of `inputs` when they all have one and none is a wrapped
/// number (whose promotion follows other rules).
pub(super) fn same_dtype_tensors(inputs: &[TensorRef<'_>]) -> Option<ScalarType> {
    let (first, rest) = inputs.split_first()?;
    let dtype = first.dtype()?;
    let plain = |t: &TensorRef<'_>| t.dtype() == Some(dtype) && !t.is_wrapped_number();
    (plain(first) && rest.iter().all(plain)).then_some(dtype)
}

/// `result_type` of the inputs: type promotion with the 0-dim and
/// wrapped-number rules.
pub(super) fn promoted_dtype(inputs: &[TensorRef<'_>]) -> Result<ScalarType> {
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
