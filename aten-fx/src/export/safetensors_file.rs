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
    if let Some(name) = repeated_name(bytes) {
        return Err(Error::runtime(format!(
            "{label}: not a safetensors file: tensor `{name}` appears twice in the header"
        )));
    }
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
                .map(|&s| {
                    i64::try_from(s).map_err(|_| {
                        Error::runtime(format!("{label}: tensor `{name}`: size {s} is too large"))
                    })
                })
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

/// A name the header of a (well-formed) safetensors file lists twice: the
/// JSON reader keeps the last, so a reader that kept the first would see
/// other data. Only the header's top-level keys are read.
fn repeated_name(bytes: &[u8]) -> Option<String> {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};

    struct FirstRepeat;
    impl<'de> Visitor<'de> for FirstRepeat {
        type Value = Option<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(
            self,
            mut map: A,
        ) -> std::result::Result<Self::Value, A::Error> {
            let mut seen = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                map.next_value::<IgnoredAny>()?;
                if !seen.insert(key.clone()) {
                    return Ok(Some(key));
                }
            }
            Ok(None)
        }
    }
    let n = usize::try_from(u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?)).ok()?;
    let header = bytes.get(8..8usize.checked_add(n)?)?;
    serde_json::Deserializer::from_slice(header)
        .deserialize_map(FirstRepeat)
        .ok()
        .flatten()
}

/// The tensors of the safetensors file at `path`, in the order of their
/// data in the file.
pub fn load_safetensors(path: impl AsRef<Path>) -> Result<Vec<(String, TensorBase)>> {
    let path = path.as_ref();
    let label = path.display().to_string();
    let bytes = super::read_regular_file(path, &label)?;
    parse_safetensors(&bytes, &label)
}

/// One tensor's entry, encoded: name, dtype, shape and bytes.
type Encoded = (String, Dtype, Vec<usize>, Vec<u8>);

/// `tensors` (CPU, any layout) encoded as a safetensors file.
pub fn serialize_safetensors(tensors: &[(String, TensorBase)]) -> Result<Vec<u8>> {
    let encoded = encode_all(tensors)?;
    safetensors::tensor::serialize(views(&encoded)?, None)
        .map_err(|e| Error::runtime(format!("cannot encode safetensors: {e}")))
}

/// Each tensor's bytes, in row-major order.
fn encode_all(tensors: &[(String, TensorBase)]) -> Result<Vec<Encoded>> {
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
        let bytes =
            raw::tensor_to_bytes(t).map_err(|e| Error::runtime(format!("`{name}`: {e}")))?;
        encoded.push((name.clone(), st, shape, bytes));
    }
    Ok(encoded)
}

/// The safetensors views of encoded entries.
fn views(encoded: &[Encoded]) -> Result<Vec<(String, TensorView<'_>)>> {
    encoded
        .iter()
        .map(|(name, dtype, shape, data)| {
            TensorView::new(*dtype, shape.clone(), data)
                .map(|v| (name.clone(), v))
                .map_err(|e| Error::runtime(format!("`{name}`: {e}")))
        })
        .collect()
}

/// Writes `tensors` to the safetensors file at `path`, streamed from their
/// encoded bytes (no second copy of the whole file in memory).
pub fn save_safetensors(path: impl AsRef<Path>, tensors: &[(String, TensorBase)]) -> Result<()> {
    let path = path.as_ref();
    let encoded = encode_all(tensors)?;
    safetensors::tensor::serialize_to_file(views(&encoded)?, None, path)
        .map_err(|e| Error::runtime(format!("{}: cannot write: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A safetensors file whose header is `header`, followed by `data`.
    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(data);
        bytes
    }

    #[test]
    fn a_name_listed_twice_is_an_error() {
        let one = r#"{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}"#;
        assert_eq!(
            parse_safetensors(&file(one, &[0; 4]), "f").unwrap().len(),
            1
        );
        let twice = r#"{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                        "a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}"#;
        let err = parse_safetensors(&file(twice, &[0; 8]), "f").unwrap_err();
        assert!(err.message().contains("`a` appears twice"), "{err}");
    }

    #[test]
    fn sizes_past_i64_and_ranks_past_the_bound_name_the_tensor() {
        let huge = r#"{"t": {"dtype": "F32", "shape": [0, 18446744073709551615], "data_offsets": [0, 0]}}"#;
        let err = parse_safetensors(&file(huge, &[]), "f").unwrap_err();
        assert!(err.message().starts_with("f: tensor `t`: size"), "{err}");
        let shape = vec!["1"; 100_000].join(", ");
        let deep =
            format!(r#"{{"t": {{"dtype": "F32", "shape": [{shape}], "data_offsets": [0, 4]}}}}"#);
        let err = parse_safetensors(&file(&deep, &[0; 4]), "f").unwrap_err();
        assert!(err.message().contains("at most 1024 dimensions"), "{err}");
        assert!(err.message().len() < 200, "{}", err.message().len());
    }

    #[test]
    fn writing_an_expanded_view_counts_its_bytes_first() {
        let one = TensorBase::from_vec(vec![1.0f32], &[1]).unwrap();
        let wide = one.as_strided(&[1, i64::MAX], &[0, 0], None).unwrap();
        let err = serialize_safetensors(&[("o".into(), wide)]).unwrap_err();
        assert!(err.message().contains("too large to write"), "{err}");
        let long = one.as_strided(&[1 << 62], &[0], None).unwrap();
        let err = serialize_safetensors(&[("o".into(), long)]).unwrap_err();
        assert!(err.message().contains("too large to write"), "{err}");
    }
}
