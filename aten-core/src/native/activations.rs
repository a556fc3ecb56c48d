//! Activations PyTorch writes over other operators
//! (CompositeImplicitAutograd, `Activation.cpp`): `relu6` and `relu6_`
//! (`hardtanh` to `[0, 6]`).

use c10_core::{Result, Scalar};

use crate::generated::ops;
use crate::Tensor;

/// `relu6(self)`: `hardtanh(self, 0, 6)`.
pub fn relu6(self_: &Tensor) -> Result<Tensor> {
    ops::hardtanh_with(
        self_,
        ops::HardtanhOptions {
            min_val: Scalar::Int(0),
            max_val: Scalar::Int(6),
        },
    )
}

/// `relu6_(self)`: `hardtanh_(self, 0, 6)`.
pub fn relu6_(self_: &Tensor) -> Result<Tensor> {
    ops::hardtanh_with_(
        self_,
        ops::HardtanhInplaceOptions {
            min_val: Scalar::Int(0),
            max_val: Scalar::Int(6),
        },
    )
}
