//! Named tensors to and from safetensors files (the `safetensors` crate):
//! how `aten run` takes a program's inputs and writes its outputs.

use std::path::Path;

use c10_core::{Error, Result, ScalarType, TensorBase};
use safetensors::tensor::{Dtype, TensorView};

use super::raw;

fn dtype_from(d: Dtype) -> Option<ScalarType> {
    Some(match d {
        Dtype::BOOL => ScalarType::Bool,
        Dtype::U8 => ScalarType::Byte,
        Dtype::I8 => ScalarType::Char,
        Dtype::I16 => ScalarType::Short,
        Dtype::I32 => ScalarType::Int,
        Dtype::I64 => ScalarType::Long,
        Dtype::F16 => ScalarType::Half,
        Dtype::BF16 => ScalarType::BFloat16,
        Dtype::F32 => ScalarType::Float,
        Dtype::F64 => ScalarType::Double,
        _ => return None,
    })
}

fn dtype_to(d: ScalarType) -> Option<Dtype> {
    Some(match d {
        ScalarType::Bool => Dtype::BOOL,
        ScalarType::Byte => Dtype::U8,
        ScalarType::Char => Dtype::I8,
        ScalarType::Short => Dtype::I16,
        ScalarType::Int => Dtype::I32,
        ScalarType::Long => Dtype::I64,
        ScalarType::Half => Dtype::F16,
        ScalarType::BFloat16 => Dtype::BF16,
        ScalarType::Float => Dtype::F32,
        ScalarType::Double => Dtype::F64,
        _ => return None,
    })
}

/// The tensors of a safetensors file held in memory, in the order of
/// their data in the file; `label` names it in errors.
pub fn parse_safetensors(bytes: &[u8], label: &str) -> Result<Vec<(String, TensorBase)>> {
    let file = safetensors::SafeTensors::deserialize(bytes)
        .map_err(|e| Error::runtime(format!("{label}: not a safetensors file: {e}")))?;
    let mut tensors = file.tensors();
    // The data order is the writer's order (`input_0`, `input_1`, ...).
    tensors.sort_by_key(|(_, view)| view.data().as_ptr() as usize);
    tensors
        .into_iter()
        .map(|(name, view)| {
            let dtype = dtype_from(view.dtype()).ok_or_else(|| {
                Error::runtime(format!(
                    "{label}: tensor `{name}`: dtype {:?} is not supported",
                    view.dtype()
                ))
            })?;
            let sizes = view
                .shape()
                .iter()
                .map(|&s| i64::try_from(s).map_err(|_| Error::runtime("size too large")))
                .collect::<Result<Vec<_>>>()?;
            let strides = c10_core::tensor_layout::contiguous_strides(&sizes).to_vec();
            let tensor =
                raw::tensor_from_bytes(view.data(), dtype, &sizes, &strides, 0).map_err(|e| {
                    Error::runtime(format!("{label}: tensor `{name}`: {}", e.message()))
                })?;
            Ok((name, tensor))
        })
        .collect()
}

/// The tensors of the safetensors file at `path`, in the order of their
/// data in the file.
pub fn load_safetensors(path: impl AsRef<Path>) -> Result<Vec<(String, TensorBase)>> {
    let path = path.as_ref();
    let label = path.display().to_string();
    let bytes =
        std::fs::read(path).map_err(|e| Error::runtime(format!("{label}: cannot read: {e}")))?;
    parse_safetensors(&bytes, &label)
}

/// `tensors` (CPU, any layout) encoded as a safetensors file.
pub fn serialize_safetensors(tensors: &[(String, TensorBase)]) -> Result<Vec<u8>> {
    let mut encoded = Vec::with_capacity(tensors.len());
    for (name, t) in tensors {
        let dtype = t
            .dtype()
            .ok_or_else(|| Error::runtime(format!("`{name}` is an undefined tensor")))?;
        let st = dtype_to(dtype).ok_or_else(|| {
            Error::runtime(format!(
                "`{name}`: dtype {} has no safetensors form",
                dtype.python_name()
            ))
        })?;
        let shape = t
            .sizes()
            .iter()
            .map(|&s| usize::try_from(s).map_err(|_| Error::runtime("negative size")))
            .collect::<Result<Vec<_>>>()?;
        encoded.push((name.clone(), st, shape, raw::tensor_to_bytes(t)?));
    }
    let views = encoded
        .iter()
        .map(|(name, dtype, shape, data)| {
            TensorView::new(*dtype, shape.clone(), data)
                .map(|v| (name.clone(), v))
                .map_err(|e| Error::runtime(format!("`{name}`: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    safetensors::tensor::serialize(views, None)
        .map_err(|e| Error::runtime(format!("cannot encode safetensors: {e}")))
}

/// Writes `tensors` to the safetensors file at `path`.
pub fn save_safetensors(path: impl AsRef<Path>, tensors: &[(String, TensorBase)]) -> Result<()> {
    let path = path.as_ref();
    let bytes = serialize_safetensors(tensors)?;
    std::fs::write(path, bytes)
        .map_err(|e| Error::runtime(format!("{}: cannot write: {e}", path.display())))
}
