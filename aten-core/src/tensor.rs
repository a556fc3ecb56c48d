//! `Tensor`: the user-facing tensor handle (`at::Tensor`), a transparent
//! newtype over [`TensorBase`] that the generated operator methods attach to.
//! It boxes to and unboxes from `IValue`s exactly as `TensorBase` does.

use std::ops::Deref;

use aten_boxing::kernel_arg::TensorLike;
use c10_core::{Device, Element, Result, ScalarType, TensorBase};

/// A tensor (`at::Tensor`). Cheap to clone: clones share the tensor.
#[derive(Clone, Debug, Default)]
#[repr(transparent)]
pub struct Tensor(TensorBase);

impl Tensor {
    /// The undefined tensor.
    pub const fn undefined() -> Tensor {
        Tensor(TensorBase::undefined())
    }

    /// See [`TensorBase::is_exclusively_owned`].
    #[inline]
    pub fn is_exclusively_owned(&mut self) -> bool {
        self.0.is_exclusively_owned()
    }

    /// Wraps a base handle.
    pub fn from_base(base: TensorBase) -> Tensor {
        Tensor(base)
    }

    /// The base handle.
    pub fn base(&self) -> &TensorBase {
        &self.0
    }

    /// A CPU tensor holding `data` with shape `sizes`.
    pub fn from_vec<T: Element>(data: Vec<T>, sizes: &[i64]) -> Result<Tensor> {
        TensorBase::from_vec(data, sizes).map(Tensor)
    }

    /// A CPU tensor holding a copy of `data` with shape `sizes`.
    pub fn from_slice<T: Element>(data: &[T], sizes: &[i64]) -> Result<Tensor> {
        Tensor::from_vec(data.to_vec(), sizes)
    }

    /// A zero-filled contiguous tensor (`at::empty`, zeroed for soundness).
    pub fn empty(sizes: &[i64], dtype: ScalarType, device: Device) -> Result<Tensor> {
        TensorBase::empty(sizes, dtype, device).map(Tensor)
    }
}

impl Deref for Tensor {
    type Target = TensorBase;
    fn deref(&self) -> &TensorBase {
        &self.0
    }
}

impl From<TensorBase> for Tensor {
    fn from(base: TensorBase) -> Tensor {
        Tensor(base)
    }
}

impl From<Tensor> for TensorBase {
    fn from(t: Tensor) -> TensorBase {
        t.0
    }
}

impl TensorLike for Tensor {
    fn from_base(t: TensorBase) -> Self {
        Tensor(t)
    }
    fn as_base(&self) -> &TensorBase {
        &self.0
    }
    fn into_base(self) -> TensorBase {
        self.0
    }
}

aten_boxing::tensor_kernel_arg!(Tensor);

#[cfg(test)]
mod tests {
    use super::*;
    use aten_boxing::kernel_arg::IValueConvert;
    use aten_boxing::IValue;

    #[test]
    fn boxes_like_tensor_base() {
        let t = Tensor::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
        let v = t.clone().into_ivalue();
        assert!(matches!(&v, IValue::Tensor(b) if b.is_same(t.base())));
        let back = Tensor::from_ivalue(v).unwrap();
        assert!(back.is_same(&t));
        assert_eq!(back.to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
    }
}
