//! Activations PyTorch writes over other operators (`Activation.cpp`):
//! `relu6` and `relu6_` (`hardtanh` to `[0, 6]`), `selu` (`elu` with
//! SELU's constants), `celu` (`elu` scaled by `alpha`), `prelu` (the
//! weight shaped to broadcast over the channels, then `_prelu_kernel`,
//! whose CPU kernel is written here as a `where`).

use c10_core::{Error, Result, Scalar};

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

/// SELU's `alpha` and `scale`.
const SELU_ALPHA: f64 = 1.673_263_242_354_377_3;
const SELU_SCALE: f64 = 1.050_700_987_355_480_5;

fn selu_options() -> ops::EluOptions {
    ops::EluOptions {
        alpha: Scalar::Double(SELU_ALPHA),
        scale: Scalar::Double(SELU_SCALE),
        input_scale: Scalar::Int(1),
    }
}

/// `selu(self)`: `elu(self, alpha, scale)` with SELU's constants.
pub fn selu(self_: &Tensor) -> Result<Tensor> {
    ops::elu_with(self_, selu_options())
}

/// `selu_(self)`.
pub fn selu_(self_: &Tensor) -> Result<Tensor> {
    elu_in_place(self_, selu_options())
}

/// `elu_(self, ...)` with the options of an out-of-place `elu`.
fn elu_in_place(self_: &Tensor, o: ops::EluOptions) -> Result<Tensor> {
    ops::elu_with_(
        self_,
        ops::EluInplaceOptions {
            alpha: o.alpha,
            scale: o.scale,
            input_scale: o.input_scale,
        },
    )
}

/// `celu`'s options: `elu(self, alpha, 1, 1 / alpha)`.
fn celu_options(alpha: Scalar) -> Result<ops::EluOptions> {
    let a = alpha.to_f64();
    if a == 0.0 {
        return Err(Error::runtime(
            "ZeroDivisionError: alpha cannot be 0 for CELU",
        ));
    }
    Ok(ops::EluOptions {
        alpha,
        scale: Scalar::Double(1.0),
        input_scale: Scalar::Double(1.0 / a),
    })
}

/// `celu(self, alpha)` (CompositeExplicitAutograd).
pub fn celu(self_: &Tensor, alpha: Scalar) -> Result<Tensor> {
    ops::elu_with(self_, celu_options(alpha)?)
}

/// `celu_(self, alpha)` (CompositeExplicitAutograd).
pub fn celu_(self_: &Tensor, alpha: Scalar) -> Result<Tensor> {
    elu_in_place(self_, celu_options(alpha)?)
}

/// `prelu(self, weight)`: one weight, or one per channel (dimension 1).
pub fn prelu(self_: &Tensor, weight: &Tensor) -> Result<Tensor> {
    if self_.dtype() != weight.dtype() {
        let name = |t: &Tensor| t.dtype().map_or("?", |d| d.name());
        return Err(Error::runtime(format!(
            "prelu: Type promoting not supported. Got {} and {}",
            name(self_),
            name(weight)
        )));
    }
    let dim = self_.dim();
    if weight.numel() != 1 {
        if dim == 0 {
            return Err(Error::runtime("Not allow zero-dim input tensor."));
        }
        let channels = if dim > 1 { self_.sizes()[1] } else { 1 };
        if channels != weight.numel() {
            return Err(Error::runtime(format!(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers = {} and channel size = {channels}.",
                weight.numel()
            )));
        }
    }
    if weight.dim() > 1 {
        return Err(Error::runtime(format!(
            "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {}",
            weight.dim()
        )));
    }
    let weight = if dim != weight.dim() {
        let mut shape = vec![1i64; dim];
        if dim > 1 {
            shape[1] = weight.numel();
        }
        ops::reshape(weight, &shape)?
    } else {
        weight.clone()
    };
    ops::_prelu_kernel(self_, &weight)
}

/// `_prelu_kernel(self, weight)` on the CPU: `self` where positive, else
/// `weight * self`.
pub fn _prelu_kernel(self_: &Tensor, weight: &Tensor) -> Result<Tensor> {
    let positive = ops::gt_scalar(self_, Scalar::Int(0))?;
    ops::where_self(&positive, self_, &ops::mul_tensor(weight, self_)?)
}
