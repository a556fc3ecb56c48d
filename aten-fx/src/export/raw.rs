//! Tensors to and from raw little-endian bytes: the weight files of a
//! `.pt2` archive and the data of safetensors files.

use c10_core::half::{bf16, f16};
use c10_core::{dispatch_dtype, Device, Element, Error, Result, ScalarType, TensorBase};

/// An element type read from and written as little-endian bytes.
trait LeBytes: Element {
    /// `bytes` holds exactly `size_of::<Self>()` bytes; `None` when they
    /// are not a valid value (a bool byte other than 0 or 1).
    fn read(bytes: &[u8]) -> Option<Self>;
    /// Appends the value's bytes.
    fn write(self, out: &mut Vec<u8>);
}

macro_rules! le_bytes {
    ($($t:ty),*) => {$(
        impl LeBytes for $t {
            #[inline]
            fn read(bytes: &[u8]) -> Option<Self> {
                Some(<$t>::from_le_bytes(bytes.try_into().ok()?))
            }
            #[inline]
            fn write(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}

le_bytes!(u8, i8, i16, i32, i64, f32, f64);

macro_rules! le_bytes_u16 {
    ($($t:ty),*) => {$(
        impl LeBytes for $t {
            #[inline]
            fn read(bytes: &[u8]) -> Option<Self> {
                Some(<$t>::from_bits(u16::from_le_bytes(bytes.try_into().ok()?)))
            }
            #[inline]
            fn write(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_bits().to_le_bytes());
            }
        }
    )*};
}

le_bytes_u16!(f16, bf16);

impl LeBytes for bool {
    #[inline]
    fn read(bytes: &[u8]) -> Option<Self> {
        match bytes {
            [0] => Some(false),
            [1] => Some(true),
            _ => None,
        }
    }
    #[inline]
    fn write(self, out: &mut Vec<u8>) {
        out.push(u8::from(self));
    }
}

fn unsupported(dtype: ScalarType) -> Error {
    Error::runtime(format!(
        "tensors of dtype {} are not supported",
        dtype.python_name()
    ))
}

/// A one-dimensional CPU tensor of `dtype` holding the elements encoded in
/// `bytes` (a whole number of elements; bools must be 0 or 1).
pub(crate) fn storage_from_bytes(bytes: &[u8], dtype: ScalarType) -> Result<TensorBase> {
    dispatch_dtype!(dtype, T => decode::<T>(bytes, dtype), _ => Err(unsupported(dtype)))
}

fn decode<T: LeBytes>(bytes: &[u8], dtype: ScalarType) -> Result<TensorBase> {
    let width = std::mem::size_of::<T>();
    if !bytes.len().is_multiple_of(width) {
        return Err(Error::runtime(format!(
            "{} bytes is not a whole number of {} elements ({width} bytes each)",
            bytes.len(),
            dtype.python_name()
        )));
    }
    let numel = bytes.len() / width;
    let len = i64::try_from(numel).map_err(|_| Error::runtime("tensor data too large"))?;
    let write = |out: &mut [std::mem::MaybeUninit<T>]| {
        for (slot, chunk) in out.iter_mut().zip(bytes.chunks_exact(width)) {
            let value = T::read(chunk).ok_or_else(|| {
                Error::runtime(format!("invalid {} value in the data", dtype.python_name()))
            })?;
            slot.write(value);
        }
        Ok(())
    };
    // Decoded straight into the storage (no intermediate vector).
    // SAFETY: the storage holds `len` elements, one per `width`-byte chunk
    // of `bytes`, so the loop writes every element unless it returns an
    // error.
    unsafe { TensorBase::empty_written_by::<T>(&[len], write) }
}

/// A CPU tensor of `dtype` viewing `bytes` (a whole storage) as
/// `as_strided(sizes, strides, storage_offset)`; the view must fit in the
/// storage.
pub(crate) fn tensor_from_bytes(
    bytes: &[u8],
    dtype: ScalarType,
    sizes: &[i64],
    strides: &[i64],
    storage_offset: i64,
) -> Result<TensorBase> {
    if sizes.len() != strides.len() {
        return Err(Error::runtime(format!(
            "{} sizes but {} strides",
            sizes.len(),
            strides.len()
        )));
    }
    let storage = storage_from_bytes(bytes, dtype)?;
    storage.as_strided(sizes, strides, Some(storage_offset))
}

/// The elements of `t` (a CPU tensor, any layout) in row-major order, as
/// little-endian bytes.
pub(crate) fn tensor_to_bytes(t: &TensorBase) -> Result<Vec<u8>> {
    let dtype = t
        .dtype()
        .ok_or_else(|| Error::runtime("an undefined tensor has no data"))?;
    if t.device() != Some(Device::CPU) {
        return Err(Error::runtime("only CPU tensors can be written"));
    }
    dispatch_dtype!(dtype, T => encode::<T>(t), _ => Err(unsupported(dtype)))
}

fn encode<T: LeBytes>(t: &TensorBase) -> Result<Vec<u8>> {
    let layout = t
        .layout()
        .ok_or_else(|| Error::runtime("an undefined tensor has no data"))?;
    let sizes = layout.sizes().to_vec();
    let strides = layout.strides().to_vec();
    let offset = layout.storage_offset();
    // A contiguous tensor of the same sizes over the whole storage, so the
    // elements are read through `with_data`, then gathered by stride.
    let storage_len = layout.storage().nbytes() / std::mem::size_of::<T>();
    let len = i64::try_from(storage_len).map_err(|_| Error::runtime("tensor data too large"))?;
    let flat = t.as_strided(&[len], &[1], Some(0))?;
    // An expanded view may stand for far more elements than its storage
    // holds: its bytes are counted, and reserved fallibly.
    let nbytes = usize::try_from(layout.numel())
        .ok()
        .and_then(|n| n.checked_mul(std::mem::size_of::<T>()))
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or_else(|| {
            Error::runtime(format!(
                "a tensor of sizes {sizes:?} is too large to write: its bytes overflow"
            ))
        })?;
    let mut out = Vec::new();
    out.try_reserve_exact(nbytes)
        .map_err(|_| c10_core::tensor_impl::out_of_memory(nbytes))?;
    flat.with_data::<T, _>(|all| -> Result<()> {
        let mut index = vec![0i64; sizes.len()];
        if sizes.contains(&0) {
            return Ok(());
        }
        loop {
            let mut at = offset;
            for (i, s) in index.iter().zip(&strides) {
                at += i * s;
            }
            let value = usize::try_from(at)
                .ok()
                .and_then(|at| all.get(at))
                .ok_or_else(|| Error::internal("a view outside its storage"))?;
            value.write(&mut out);
            // The next index in row-major order.
            let mut d = sizes.len();
            loop {
                if d == 0 {
                    return Ok(());
                }
                d -= 1;
                index[d] += 1;
                if index[d] < sizes[d] {
                    break;
                }
                index[d] = 0;
            }
        }
    })??;
    Ok(out)
}
