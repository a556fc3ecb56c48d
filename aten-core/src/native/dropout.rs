//! The dropout family (CompositeImplicitAutograd, PyTorch's `Dropout.cpp`):
//! outside training, or with `p = 0`, the input itself; with `p = 1`, the
//! input times zero; otherwise `dropout` runs `native_dropout`, and the
//! others multiply by noise drawn here: one draw per element, or per
//! (batch, channel) for the feature forms, scaled by `1 / (1 - p)`; the
//! alpha forms keep the mean and variance of a SELU's output.

use c10_core::{Error, Result, Scalar, ScalarType};

use crate::generated::ops;
use crate::Tensor;

/// Which member of the family.
#[derive(Copy, Clone)]
struct Kind {
    feature: bool,
    alpha: bool,
    inplace: bool,
}

fn check_p(p: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&p) {
        return Err(Error::runtime(format!(
            "dropout probability has to be between 0 and 1, but got {p}"
        )));
    }
    Ok(())
}

/// `input * other`, in place for the in-place members.
fn multiply(input: &Tensor, other: &Tensor, inplace: bool) -> Result<Tensor> {
    if inplace {
        ops::mul_tensor_(input, other)
    } else {
        ops::mul_tensor(input, other)
    }
}

/// Bernoulli(`keep`) draws of `input`'s dtype: per element, or per batch
/// and channel (`make_feature_noise`).
fn noise(input: &Tensor, keep: f64, feature: bool) -> Result<Tensor> {
    let sizes = input.sizes();
    let shape: Vec<i64> = if feature {
        if sizes.len() < 2 {
            return Err(Error::runtime(
                "Feature dropout requires at least 2 dimensions in the input",
            ));
        }
        let mut s = vec![sizes[0], sizes[1]];
        s.resize(sizes.len(), 1);
        s
    } else {
        sizes.to_vec()
    };
    let dtype = input.dtype().unwrap_or(ScalarType::Float);
    let draws = ops::uniform(&ops::empty_memory_format_with(
        &shape,
        ops::EmptyMemoryFormatOptions {
            dtype: Some(ScalarType::Float),
            device: input.device(),
            ..Default::default()
        },
    )?)?;
    ops::_to_copy_with(
        &ops::lt_scalar(&draws, Scalar::Double(keep))?,
        ops::ToCopyOptions {
            dtype: Some(dtype),
            ..Default::default()
        },
    )
}

/// `_dropout_impl`.
fn dropout_impl(input: &Tensor, p: f64, train: bool, kind: Kind) -> Result<Tensor> {
    check_p(p)?;
    if p == 0.0 || !train || input.numel() == 0 {
        return Ok(input.clone());
    }
    if p == 1.0 {
        let zero = ops::zeros_with(
            &[],
            ops::ZerosOptions {
                dtype: input.dtype(),
                device: input.device(),
                ..Default::default()
            },
        )?;
        return multiply(input, &zero, kind.inplace);
    }
    let mut mask = noise(input, 1.0 - p, kind.feature)?;
    if kind.alpha {
        const ALPHA: f64 = 1.758_099_340_847_376_6;
        let a = 1.0 / ((ALPHA * ALPHA * p + 1.0) * (1.0 - p)).sqrt();
        let b = ops::add_scalar(
            &ops::mul_scalar(
                &ops::add_scalar(&mask, Scalar::Int(-1))?,
                Scalar::Double(ALPHA * a),
            )?,
            Scalar::Double(ALPHA * a * p),
        )?;
        mask = ops::mul_scalar(&mask, Scalar::Double(a))?;
        let scaled = multiply(input, &mask, kind.inplace)?;
        return if kind.inplace {
            ops::add_tensor_(&scaled, &b)
        } else {
            ops::add_tensor(&scaled, &b)
        };
    }
    mask = ops::div_scalar(&mask, Scalar::Double(1.0 - p))?;
    multiply(input, &mask, kind.inplace)
}

/// `dropout(input, p, train)`: the input itself outside training; in
/// training, `native_dropout`'s output.
pub fn dropout(input: &Tensor, p: f64, train: bool) -> Result<Tensor> {
    check_p(p)?;
    if !train || p == 0.0 || input.numel() == 0 {
        return Ok(input.clone());
    }
    ops::native_dropout(input, p, Some(train)).map(|(out, _)| out)
}

const PLAIN: Kind = Kind {
    feature: false,
    alpha: false,
    inplace: false,
};

/// `dropout_(self, p, train)`.
pub fn dropout_(self_: &Tensor, p: f64, train: bool) -> Result<Tensor> {
    dropout_impl(
        self_,
        p,
        train,
        Kind {
            inplace: true,
            ..PLAIN
        },
    )
}

/// `feature_dropout(input, p, train)`.
pub fn feature_dropout(input: &Tensor, p: f64, train: bool) -> Result<Tensor> {
    dropout_impl(
        input,
        p,
        train,
        Kind {
            feature: true,
            ..PLAIN
        },
    )
}

/// `feature_dropout_(self, p, train)`.
pub fn feature_dropout_(self_: &Tensor, p: f64, train: bool) -> Result<Tensor> {
    let kind = Kind {
        feature: true,
        inplace: true,
        ..PLAIN
    };
    dropout_impl(self_, p, train, kind)
}

/// `alpha_dropout(input, p, train)`.
pub fn alpha_dropout(input: &Tensor, p: f64, train: bool) -> Result<Tensor> {
    dropout_impl(
        input,
        p,
        train,
        Kind {
            alpha: true,
            ..PLAIN
        },
    )
}

/// `alpha_dropout_(self, p, train)`.
pub fn alpha_dropout_(self_: &Tensor, p: f64, train: bool) -> Result<Tensor> {
    let kind = Kind {
        alpha: true,
        inplace: true,
        ..PLAIN
    };
    dropout_impl(self_, p, train, kind)
}

/// `feature_alpha_dropout(input, p, train)`.
pub fn feature_alpha_dropout(input: &Tensor, p: f64, train: bool) -> Result<Tensor> {
    let kind = Kind {
        feature: true,
        alpha: true,
        inplace: false,
    };
    dropout_impl(input, p, train, kind)
}

/// `feature_alpha_dropout_(self, p, train)`.
pub fn feature_alpha_dropout_(self_: &Tensor, p: f64, train: bool) -> Result<Tensor> {
    let kind = Kind {
        feature: true,
        alpha: true,
        inplace: true,
    };
    dropout_impl(self_, p, train, kind)
}
