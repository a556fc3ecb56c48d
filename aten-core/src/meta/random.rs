//! Meta kernels of the random operators (`uniform_`, `normal_`,
//! `native_dropout`, `randperm.generator_out`) and the argument checks
//! their CPU kernels share.

use c10_core::{Error, Generator, Result, ScalarType};

use super::{dtype_and_device, new_contiguous};
use crate::native::factories::randperm_out_checks;
use crate::Tensor;

/// `native_dropout(input, p, train)`: the output (`input`'s shape and
/// dtype) and the bool keep mask; for an empty input, two tensors laid out
/// like it, both of its dtype (PyTorch returns before drawing).
pub fn native_dropout_meta(
    input: &Tensor,
    p: f64,
    _train: Option<bool>,
) -> Result<(Tensor, Tensor)> {
    if input.numel() == 0 {
        let like = || crate::native::factories::empty_like(input, None, None, None, None, None);
        return Ok((like()?, like()?));
    }
    if !(0.0..=1.0).contains(&p) {
        return Err(Error::runtime(format!(
            "dropout probability has to be between 0 and 1, but got {p}"
        )));
    }
    let (dtype, device) = dtype_and_device(input)?;
    let sizes = input.sizes();
    Ok((
        new_contiguous(&sizes, dtype, device)?,
        new_contiguous(&sizes, ScalarType::Bool, device)?,
    ))
}

/// `uniform_`'s checks: a floating tensor and `from <= to`.
pub fn check_uniform_args(self_: &Tensor, from: f64, to: f64) -> Result<()> {
    if from > to {
        return Err(Error::runtime(format!(
            "uniform_ expects to return a [from, to) range, but found from={from} > to={to}"
        )));
    }
    require_floating(self_, "check_uniform_bounds")
}

/// A random fill's dtype check: floating, unless `self` is empty (an
/// empty tensor returns before the dtype is looked at); the error names
/// PyTorch's `kernel`.
fn require_floating(self_: &Tensor, kernel: &str) -> Result<()> {
    let dtype = dtype_and_device(self_)?.0;
    if !dtype.is_floating_point() && self_.numel() != 0 {
        return Err(Error::not_implemented_for(kernel, dtype));
    }
    Ok(())
}

/// `normal_`'s checks: a floating tensor and `std >= 0`.
pub fn check_normal_args(self_: &Tensor, std: f64) -> Result<()> {
    if std < 0.0 {
        return Err(Error::runtime(format!(
            "normal expects std >= 0.0, but found std {std}"
        )));
    }
    require_floating(self_, "normal_kernel_cpu")
}

/// `uniform_(self, from, to, *, generator)`.
pub fn uniform_meta_(
    self_: &Tensor,
    from: f64,
    to: f64,
    _generator: Option<Generator>,
) -> Result<Tensor> {
    check_uniform_args(self_, from, to)?;
    Ok(self_.clone())
}

/// `normal_(self, mean, std, *, generator)`.
pub fn normal_meta_(
    self_: &Tensor,
    _mean: f64,
    std: f64,
    _generator: Option<Generator>,
) -> Result<Tensor> {
    check_normal_args(self_, std)?;
    Ok(self_.clone())
}

/// `randperm.generator_out(n, generator, out)` on Meta: the checks and
/// the resize.
pub fn randperm_generator_out_meta(
    n: i64,
    generator: Option<Generator>,
    out: &Tensor,
) -> Result<Tensor> {
    randperm_out_checks(n, generator.as_ref(), out)?;
    Ok(out.clone())
}
