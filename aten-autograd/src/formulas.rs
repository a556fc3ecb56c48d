//! The named backward functions the formulas of `derivatives.yaml` call
//! (PyTorch's `torch/csrc/autograd/FunctionsManual.cpp`). Each is written
//! over the typed operator API, so it runs on any backend and, run with
//! grad mode on (`create_graph`), is itself recorded: gradients of
//! gradients come from the same code.

use aten_core::{ops, Tensor};
use c10_core::{Error, Result, Scalar, ScalarType};

use aten_core::native::backward as composite;
/// The backward composites the formulas call as they are, and the
/// dtype conversion they share with them.
pub use aten_core::native::backward::{
    avg_pool2d_backward, cast_to, embedding_dense_backward, gather_backward, index_select_backward,
    max_pool2d_with_indices_backward, nll_loss_backward,
};

/// `at::sum_to(grad, sizes)`: sums a broadcast gradient back to `sizes`.
pub fn sum_to(grad: &Tensor, sizes: &[i64]) -> Result<Tensor> {
    let gs = grad.sizes();
    if &gs[..] == sizes {
        return Ok(grad.clone());
    }
    let lead = gs.len().saturating_sub(sizes.len());
    let mut dims: Vec<i64> = (0..lead as i64).collect();
    for (i, &s) in sizes.iter().enumerate() {
        if s == 1 && gs[lead + i] != 1 {
            dims.push((lead + i) as i64);
        }
    }
    let mut g = if dims.is_empty() {
        grad.clone()
    } else {
        ops::sum_dim_intlist_with(
            grad,
            Some(&dims),
            ops::SumDimIntlistOptions {
                keepdim: true,
                dtype: None,
            },
        )?
    };
    if lead > 0 || &g.sizes()[..] != sizes {
        g = ops::view(&g, sizes)?;
    }
    Ok(g)
}

/// `maybe_multiply(t, s)`: `t * s`, or `t` itself when `s` is 1.
pub fn maybe_multiply(t: &Tensor, s: Scalar) -> Result<Tensor> {
    let one = match s {
        Scalar::Int(1) => true,
        Scalar::Double(x) => x == 1.0,
        Scalar::Bool(b) => b,
        _ => false,
    };
    if one {
        Ok(t.clone())
    } else {
        ops::mul_scalar(t, s)
    }
}

/// `grad` passed through unchanged.
pub fn identity(grad: &Tensor) -> Result<Tensor> {
    Ok(grad.clone())
}

/// A zero gradient shaped like `grad`.
pub fn zeros_like(grad: &Tensor) -> Result<Tensor> {
    ops::zeros_like(grad)
}

/// `-grad`.
pub fn neg(grad: &Tensor) -> Result<Tensor> {
    ops::neg(grad)
}

/// `grad * other`.
pub fn mul_tensor_backward(grad: &Tensor, other: &Tensor) -> Result<Tensor> {
    ops::mul_tensor(grad, other)
}

/// The gradient of `self / other` for `self`: `grad / other`.
pub fn div_tensor_self_backward(grad: &Tensor, other: &Tensor) -> Result<Tensor> {
    ops::div_tensor(grad, other)
}

/// The gradient of `self / other` for `other`: `-grad * ((self / other) / other)`.
pub fn div_tensor_other_backward(grad: &Tensor, self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    let q = ops::div_tensor(&ops::div_tensor(self_, other)?, other)?;
    ops::neg(&ops::mul_tensor(grad, &q)?)
}

fn scalar_tensor_like(value: f64, like: &Tensor) -> Result<Tensor> {
    ops::full_like(like, Scalar::Double(value))
}

/// `pow_backward(grad, self, exponent)`: `grad * exponent * self^(exponent - 1)`,
/// zero for an exponent of 0.
pub fn pow_backward(grad: &Tensor, self_: &Tensor, exponent: Scalar) -> Result<Tensor> {
    let e = exponent.to_f64();
    if e == 0.0 {
        return ops::zeros_like(self_);
    }
    let minus_one = match exponent {
        Scalar::Int(i) => Scalar::Int(i - 1),
        _ => Scalar::Double(e - 1.0),
    };
    let p = ops::pow_tensor_scalar(self_, minus_one)?;
    ops::mul_tensor(grad, &ops::mul_scalar(&p, exponent)?)
}

/// `pow_backward_self`: the base's gradient of `self ** exponent`, zero
/// where the exponent is 0.
pub fn pow_backward_self(grad: &Tensor, self_: &Tensor, exponent: &Tensor) -> Result<Tensor> {
    let em1 = ops::sub_scalar(exponent, Scalar::Int(1))?;
    let val = ops::mul_tensor(
        grad,
        &ops::mul_tensor(exponent, &ops::pow_tensor_tensor(self_, &em1)?)?,
    )?;
    let zero = ops::eq_scalar(exponent, Scalar::Int(0))?;
    ops::masked_fill_scalar(&val, &zero, Scalar::Double(0.0))
}

/// `pow_backward_exponent`: the exponent's gradient of `self ** exponent`,
/// `grad * result * log(self)`, zero where the base is 0 and the exponent
/// non-negative.
pub fn pow_backward_exponent(
    grad: &Tensor,
    self_: &Tensor,
    exponent: &Tensor,
    result: &Tensor,
) -> Result<Tensor> {
    let cond = ops::logical_and(
        &ops::eq_scalar(self_, Scalar::Int(0))?,
        &ops::ge_scalar(exponent, Scalar::Int(0))?,
    )?;
    let out = ops::mul_tensor(grad, &ops::mul_tensor(result, &ops::log(self_)?)?)?;
    let out = ops::masked_fill_scalar(
        &out,
        &ops::expand(&cond, &out.sizes())?,
        Scalar::Double(0.0),
    )?;
    Ok(out)
}

/// `grad` where `keep`, 0 elsewhere.
fn grad_where(keep: &Tensor, grad: &Tensor) -> Result<Tensor> {
    ops::where_self(keep, grad, &scalar_tensor_like(0.0, grad)?)
}

/// The gradient of `where(condition, self, other)` for `self` (`for_self`)
/// or `other`.
pub fn where_backward(condition: &Tensor, grad: &Tensor, for_self: bool) -> Result<Tensor> {
    let zero = ops::zeros_like(grad)?;
    if for_self {
        ops::where_self(condition, grad, &zero)
    } else {
        ops::where_self(condition, &zero, grad)
    }
}

/// `masked_fill(self, mask, value)`'s gradient for `self`.
pub fn masked_fill_backward(grad: &Tensor, mask: &Tensor) -> Result<Tensor> {
    ops::masked_fill_scalar(grad, mask, Scalar::Double(0.0))
}

/// The gradient of `maximum(self, other)` (`is_max`) or `minimum` for
/// `self`: `grad` where `self` wins, half where the two tie.
pub fn max_min_self_backward(
    grad: &Tensor,
    self_: &Tensor,
    other: &Tensor,
    is_max: bool,
) -> Result<Tensor> {
    let ties = ops::eq_tensor(self_, other)?;
    let half = ops::where_self(&ties, &ops::div_scalar(grad, Scalar::Int(2))?, grad)?;
    let loses = if is_max {
        ops::lt_tensor(self_, other)?
    } else {
        ops::gt_tensor(self_, other)?
    };
    let loses = ops::expand(&loses, &half.sizes())?;
    ops::masked_fill_scalar(&half, &loses, Scalar::Double(0.0))
}

/// `clamp_backward`: `grad` where `min < self < max` (PyTorch passes no
/// gradient where the input equals a bound).
pub fn clamp_backward(
    grad: &Tensor,
    self_: &Tensor,
    min: Option<Scalar>,
    max: Option<Scalar>,
) -> Result<Tensor> {
    let keep = match (min, max) {
        (Some(lo), Some(hi)) => {
            ops::logical_and(&ops::gt_scalar(self_, lo)?, &ops::lt_scalar(self_, hi)?)?
        }
        (Some(lo), None) => ops::gt_scalar(self_, lo)?,
        (None, Some(hi)) => ops::lt_scalar(self_, hi)?,
        (None, None) => return Ok(grad.clone()),
    };
    grad_where(&keep, grad)
}

/// `threshold_backward(grad, self, threshold)`: `grad` where `self > threshold`.
pub fn threshold_backward(grad: &Tensor, self_: &Tensor, threshold: f64) -> Result<Tensor> {
    grad_where(&ops::gt_scalar(self_, Scalar::Double(threshold))?, grad)
}

/// `abs`'s gradient: `grad * sgn(self)`.
pub fn abs_backward(grad: &Tensor, self_: &Tensor) -> Result<Tensor> {
    ops::mul_tensor(grad, &ops::sign(self_)?)
}

/// `tanh_backward(grad, result)`: `grad * (1 - result^2)`.
pub fn tanh_backward(grad: &Tensor, result: &Tensor) -> Result<Tensor> {
    let one_minus = one_minus(&ops::mul_tensor(result, result)?)?;
    ops::mul_tensor(grad, &one_minus)
}

/// `sigmoid_backward(grad, result)`: `grad * result * (1 - result)`.
pub fn sigmoid_backward(grad: &Tensor, result: &Tensor) -> Result<Tensor> {
    let one_minus = one_minus(result)?;
    ops::mul_tensor(grad, &ops::mul_tensor(result, &one_minus)?)
}

/// `gelu_backward(grad, self, approximate)`.
pub fn gelu_backward(grad: &Tensor, self_: &Tensor, approximate: &str) -> Result<Tensor> {
    let x = self_;
    match approximate {
        "none" => {
            // 0.5 * (1 + erf(x / sqrt 2)) + x * exp(-x^2 / 2) / sqrt(2 pi)
            let cdf = ops::mul_scalar(
                &ops::add_scalar(
                    &ops::erf(&ops::mul_scalar(
                        x,
                        Scalar::Double(std::f64::consts::FRAC_1_SQRT_2),
                    )?)?,
                    Scalar::Int(1),
                )?,
                Scalar::Double(0.5),
            )?;
            let pdf = ops::mul_scalar(
                &ops::exp(&ops::mul_scalar(
                    &ops::mul_tensor(x, x)?,
                    Scalar::Double(-0.5),
                )?)?,
                Scalar::Double(1.0 / (2.0 * std::f64::consts::PI).sqrt()),
            )?;
            ops::mul_tensor(grad, &ops::add_tensor(&cdf, &ops::mul_tensor(x, &pdf)?)?)
        }
        "tanh" => {
            let k_beta = std::f64::consts::SQRT_2 * std::f64::consts::FRAC_2_SQRT_PI * 0.5;
            let k_kappa = 0.044715;
            let x_sq = ops::mul_tensor(x, x)?;
            let x_cube = ops::mul_tensor(&x_sq, x)?;
            let inner = ops::mul_scalar(
                &ops::add_tensor(x, &ops::mul_scalar(&x_cube, Scalar::Double(k_kappa))?)?,
                Scalar::Double(k_beta),
            )?;
            let t = ops::tanh(&inner)?;
            let left = ops::mul_scalar(x, Scalar::Double(0.5))?;
            let right = ops::add_scalar(&t, Scalar::Int(1))?;
            let left_d = ops::mul_scalar(&right, Scalar::Double(0.5))?;
            let tanh_d = one_minus(&ops::mul_tensor(&t, &t)?)?;
            let inner_d = ops::mul_scalar(
                &ops::add_scalar(
                    &ops::mul_scalar(&x_sq, Scalar::Double(3.0 * k_kappa))?,
                    Scalar::Int(1),
                )?,
                Scalar::Double(k_beta),
            )?;
            let right_d = ops::mul_tensor(&ops::mul_tensor(&left, &tanh_d)?, &inner_d)?;
            ops::mul_tensor(grad, &ops::add_tensor(&left_d, &right_d)?)
        }
        other => Err(Error::runtime(format!(
            "approximate argument must be either none or tanh, got {other}"
        ))),
    }
}

/// `silu`'s gradient: `grad * s * (1 + x * (1 - s))`, `s = sigmoid(x)`.
pub fn silu_backward(grad: &Tensor, self_: &Tensor) -> Result<Tensor> {
    let s = ops::sigmoid(self_)?;
    let inner = ops::add_scalar(&ops::mul_tensor(self_, &one_minus(&s)?)?, Scalar::Int(1))?;
    ops::mul_tensor(grad, &ops::mul_tensor(&s, &inner)?)
}

/// `erf`'s gradient: `grad * 2 / sqrt(pi) * exp(-x^2)`.
pub fn erf_backward(grad: &Tensor, self_: &Tensor) -> Result<Tensor> {
    let e = ops::exp(&ops::neg(&ops::mul_tensor(self_, self_)?)?)?;
    ops::mul_tensor(
        grad,
        &ops::mul_scalar(&e, Scalar::Double(std::f64::consts::FRAC_2_SQRT_PI))?,
    )
}

/// The dims a reduction over `dims` of a `ndim`-d tensor reduced, wrapped
/// and sorted (`dims` empty or absent: all).
fn reduced_dims(dims: Option<&[i64]>, ndim: usize) -> Result<Vec<i64>> {
    let mut out: Vec<i64> = match dims {
        Some(d) if !d.is_empty() => d
            .iter()
            .map(|&x| c10_core::tensor_impl::maybe_wrap_dim(x, ndim, true).map(|v| v as i64))
            .collect::<Result<_>>()?,
        _ => (0..ndim as i64).collect(),
    };
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// A reduction's output made broadcastable against its input again
/// (`unsqueeze_multiple` when the dims were not kept).
fn restore_reduced_dims(t: &Tensor, dims: &[i64], keepdim: bool) -> Result<Tensor> {
    if keepdim {
        return Ok(t.clone());
    }
    let mut out = t.clone();
    for &d in dims {
        out = ops::unsqueeze(&out, d)?;
    }
    Ok(out)
}

/// `sum_backward(grad, sizes, dims, keepdim)`: `grad` expanded back.
pub fn sum_backward(
    grad: &Tensor,
    sizes: &[i64],
    dims: Option<&[i64]>,
    keepdim: bool,
) -> Result<Tensor> {
    let dims = reduced_dims(dims, sizes.len())?;
    let g = restore_reduced_dims(grad, &dims, keepdim)?;
    ops::expand(&g, sizes)
}

/// `mean_backward`: `sum_backward / n`, `n` the number of reduced elements.
pub fn mean_backward(
    grad: &Tensor,
    sizes: &[i64],
    dims: Option<&[i64]>,
    keepdim: bool,
) -> Result<Tensor> {
    let rd = reduced_dims(dims, sizes.len())?;
    let n: i64 = rd.iter().map(|&d| sizes[d as usize]).product();
    let g = sum_backward(grad, sizes, dims, keepdim)?;
    ops::div_scalar(&g, Scalar::Int(n))
}

/// `amax`/`amin`'s gradient: split evenly among the elements equal to the
/// extremum (`scale_grad_by_count`).
pub fn amaxamin_backward(
    grad: &Tensor,
    self_: &Tensor,
    result: &Tensor,
    dims: &[i64],
    keepdim: bool,
) -> Result<Tensor> {
    let rd = reduced_dims(Some(dims), self_.dim())?;
    let g = restore_reduced_dims(grad, &rd, keepdim)?;
    let r = restore_reduced_dims(result, &rd, keepdim)?;
    let mask = ops::eq_tensor(self_, &r)?;
    let maskf = cast_to(&mask, grad.dtype().unwrap_or(ScalarType::Float))?;
    let count = ops::sum_dim_intlist_with(
        &maskf,
        Some(&rd),
        ops::SumDimIntlistOptions {
            keepdim: true,
            dtype: None,
        },
    )?;
    ops::mul_tensor(&ops::div_tensor(&g, &count)?, &maskf)
}

/// `logsumexp_backward`: `grad * exp(self - result)`.
pub fn logsumexp_backward(
    grad: &Tensor,
    self_: &Tensor,
    result: &Tensor,
    dims: &[i64],
    keepdim: bool,
) -> Result<Tensor> {
    let rd = reduced_dims(Some(dims), self_.dim())?;
    let g = restore_reduced_dims(grad, &rd, keepdim)?;
    let r = restore_reduced_dims(result, &rd, keepdim)?;
    ops::mul_tensor(&g, &ops::exp(&ops::sub_tensor(self_, &r)?)?)
}

/// A one-hot mask along `dim` of a tensor of `sizes`: true where the
/// position along `dim` equals `index` (broadcast along `dim`).
fn one_hot_along(index: &Tensor, sizes: &[i64], dim: usize) -> Result<Tensor> {
    let mut shape = vec![1i64; sizes.len()];
    shape[dim] = sizes[dim];
    let positions = composite::arange_as(sizes[dim], index)?;
    let positions = ops::view(&positions, &shape)?;
    ops::eq_tensor(&positions, index)
}

/// `value_selecting_reduction_backward`: the gradient of `max.dim` and
/// friends, flowing to the selected positions.
pub fn value_selecting_reduction_backward(
    grad: &Tensor,
    dim: i64,
    indices: &Tensor,
    sizes: &[i64],
    keepdim: bool,
) -> Result<Tensor> {
    let d = c10_core::tensor_impl::maybe_wrap_dim(dim, sizes.len(), true)?;
    if sizes.is_empty() {
        return Ok(grad.clone());
    }
    let (g, idx) = if keepdim {
        (grad.clone(), indices.clone())
    } else {
        (
            ops::unsqueeze(grad, d as i64)?,
            ops::unsqueeze(indices, d as i64)?,
        )
    };
    let mask = one_hot_along(&idx, sizes, d)?;
    let g = ops::expand(&g, sizes)?;
    grad_where(&mask, &g)
}

/// `prod`'s gradient over all elements: `prod_{j != i} self_j` for each
/// `i`, written so that it stays differentiable with zeros in `self`
/// (PyTorch's `prod_safe_zeros_backward`): `result / self` without zeros;
/// with one zero at `z`, the product `P` of the others there and
/// `self_z * P / self_i` elsewhere; with more, each product computed with
/// its own element masked to 1.
pub fn prod_backward(grad: &Tensor, self_: &Tensor, result: &Tensor) -> Result<Tensor> {
    if self_.numel() == 0 {
        return ops::zeros_like(self_);
    }
    let is_zero = ops::eq_scalar(self_, Scalar::Int(0))?;
    let zeros = ops::sum(&cast_to(&is_zero, ScalarType::Long)?)?;
    let n_zeros = zeros.to_vec::<i64>()?.first().copied().unwrap_or(0);
    let one = scalar_tensor_like(1.0, self_)?;
    let others = match n_zeros {
        0 => ops::div_tensor(result, self_)?,
        1 => {
            let nonzero = ops::where_self(&is_zero, &one, self_)?;
            let p = ops::prod(&nonzero)?;
            let x_z = ops::sum(&grad_where(&is_zero, self_)?)?;
            let elsewhere = ops::div_tensor(&ops::mul_tensor(&x_z, &p)?, &nonzero)?;
            ops::where_self(&is_zero, &ops::expand(&p, &self_.sizes())?, &elsewhere)?
        }
        _ => {
            let flat = ops::reshape(self_, &[-1])?;
            let n = flat.numel();
            let mut parts = Vec::with_capacity(n as usize);
            let positions = composite::arange_as(n, self_)?;
            let ones = ops::ones_like(&flat)?;
            for i in 0..n {
                let mask = ops::eq_scalar(&positions, Scalar::Int(i))?;
                parts.push(ops::prod(&ops::where_self(&mask, &ones, &flat)?)?);
            }
            ops::reshape(&ops::stack(&parts)?, &self_.sizes())?
        }
    };
    ops::mul_tensor(grad, &others)
}

/// `var_backward`: `2 / (n - correction) * grad * (self - mean)`.
pub fn var_backward(
    grad: &Tensor,
    self_: &Tensor,
    dims: Option<&[i64]>,
    correction: Option<Scalar>,
    keepdim: bool,
) -> Result<Tensor> {
    let sizes = self_.sizes();
    let rd = reduced_dims(dims, sizes.len())?;
    let n: i64 = rd.iter().map(|&d| sizes[d as usize]).product();
    let c = correction.map_or(1.0, |c| c.to_f64());
    let g = restore_reduced_dims(grad, &rd, keepdim)?;
    let mean = ops::mean_dim_with(
        self_,
        Some(&rd),
        ops::MeanDimOptions {
            keepdim: true,
            dtype: None,
        },
    )?;
    let centered = ops::sub_tensor(self_, &mean)?;
    let scale = 2.0 / (n as f64 - c);
    ops::mul_tensor(&ops::mul_scalar(&g, Scalar::Double(scale))?, &centered)
}

/// `cumsum_backward`: the reversed cumulative sum of `grad`.
pub fn cumsum_backward(grad: &Tensor, dim: i64) -> Result<Tensor> {
    if grad.dim() == 0 || grad.numel() <= 1 {
        return Ok(grad.clone());
    }
    let f = ops::flip(grad, &[dim])?;
    ops::flip(&ops::cumsum(&f, dim)?, &[dim])
}

/// `_softmax_backward_data`: `output * (grad - sum(grad * output, dim))`.
pub fn softmax_backward_data(grad: &Tensor, output: &Tensor, dim: i64) -> Result<Tensor> {
    let go = ops::mul_tensor(grad, output)?;
    let s = ops::sum_dim_intlist_with(
        &go,
        Some(&[dim]),
        ops::SumDimIntlistOptions {
            keepdim: true,
            dtype: None,
        },
    )?;
    ops::sub_tensor(&go, &ops::mul_tensor(output, &s)?)
}

/// `_log_softmax_backward_data`: `grad - exp(output) * sum(grad, dim)`.
pub fn log_softmax_backward_data(grad: &Tensor, output: &Tensor, dim: i64) -> Result<Tensor> {
    let s = ops::sum_dim_intlist_with(
        grad,
        Some(&[dim]),
        ops::SumDimIntlistOptions {
            keepdim: true,
            dtype: None,
        },
    )?;
    ops::sub_tensor(grad, &ops::mul_tensor(&ops::exp(output)?, &s)?)
}

/// Whether a matrix of `sizes` and `strides` is column-major (a
/// transposed row-major matrix, as `linear`'s `weight.t()` is).
fn column_major(sizes: &[i64], strides: &[i64]) -> bool {
    sizes.len() == 2 && strides.len() == 2 && strides[0] == 1 && strides[1] == sizes[0]
}

/// `mm_mat1_backward`: `grad @ mat2^T`, computed as `(mat2 @ grad^T)^T`
/// when `mat1` was column-major, so the gradient has `mat1`'s layout (as
/// PyTorch does: a gradient accumulated into a transposed parameter then
/// adds contiguous runs).
pub fn mm_mat1_backward(
    grad: &Tensor,
    mat2: &Tensor,
    mat1_sizes: &[i64],
    mat1_strides: &[i64],
    alpha: Scalar,
) -> Result<Tensor> {
    if column_major(mat1_sizes, mat1_strides) {
        let product = ops::mm(mat2, &ops::t(grad)?)?;
        return maybe_multiply(&ops::t(&product)?, alpha);
    }
    maybe_multiply(&ops::mm(grad, &ops::t(mat2)?)?, alpha)
}

/// `mm_mat2_backward`: `mat1^T @ grad`, computed as `(grad^T @ mat1)^T`
/// when `mat2` was column-major (`x @ weight.t()` in `linear`), so the
/// weight's gradient comes out in the weight's own row-major layout.
pub fn mm_mat2_backward(
    grad: &Tensor,
    mat1: &Tensor,
    mat2_sizes: &[i64],
    mat2_strides: &[i64],
    alpha: Scalar,
) -> Result<Tensor> {
    if column_major(mat2_sizes, mat2_strides) {
        let product = ops::mm(&ops::t(grad)?, mat1)?;
        return maybe_multiply(&ops::t(&product)?, alpha);
    }
    maybe_multiply(&ops::mm(&ops::t(mat1)?, grad)?, alpha)
}

/// `permute_backwards`: `grad` permuted by the inverse permutation.
pub fn permute_backwards(grad: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let n = dims.len();
    let mut inverse = vec![0i64; n];
    for (i, &d) in dims.iter().enumerate() {
        let d = c10_core::tensor_impl::maybe_wrap_dim(d, n, true)?;
        inverse[d] = i as i64;
    }
    ops::permute(grad, &inverse)
}

/// `slice_backward`: `grad` placed into zeros of the input's sizes.
pub fn slice_backward(
    grad: &Tensor,
    sizes: &[i64],
    dim: i64,
    start: Option<i64>,
    end: Option<i64>,
    step: i64,
) -> Result<Tensor> {
    let out = composite::zeros_as(sizes, grad)?;
    let region = ops::slice_tensor_with(
        &out,
        ops::SliceTensorOptions {
            dim,
            start,
            end,
            step,
        },
    )?;
    ops::copy_(&region, grad)?;
    Ok(out)
}

/// `select_backward`: `grad` placed at `index` along `dim` of zeros.
pub fn select_backward(grad: &Tensor, sizes: &[i64], dim: i64, index: i64) -> Result<Tensor> {
    let out = composite::zeros_as(sizes, grad)?;
    ops::copy_(&ops::select_int(&out, dim, index)?, grad)?;
    Ok(out)
}

/// `as_strided_backward` for an input with the given geometry: the
/// gradient scattered (added, for overlapping views) into zeros laid out
/// like the input.
pub fn as_strided_backward(
    grad: &Tensor,
    input_sizes: &[i64],
    input_strides: &[i64],
    input_offset: i64,
    size: &[i64],
    stride: &[i64],
    storage_offset: Option<i64>,
) -> Result<Tensor> {
    let out = ops::empty_strided_with(
        input_sizes,
        input_strides,
        ops::EmptyStridedOptions {
            dtype: grad.dtype(),
            device: grad.device(),
            ..Default::default()
        },
    )?;
    ops::zero_(&out)?;
    let offset = storage_offset.unwrap_or(input_offset) - input_offset;
    let region = ops::as_strided_with(
        &out,
        size,
        stride,
        ops::AsStridedOptions {
            storage_offset: Some(offset),
        },
    )?;
    ops::copy_(&region, grad)?;
    Ok(out)
}

/// `split_backward`: the chunks' gradients concatenated (zeros for chunks
/// without one).
pub fn split_backward(
    grads: &[Tensor],
    split_size: i64,
    dim: i64,
    sizes: &[i64],
) -> Result<Tensor> {
    let d = c10_core::tensor_impl::maybe_wrap_dim(dim, sizes.len(), false)?;
    let like = grads
        .iter()
        .find(|g| g.defined())
        .ok_or_else(|| Error::runtime("split_backward: no gradient"))?;
    let total = sizes[d];
    let mut parts = Vec::with_capacity(grads.len());
    let mut at = 0;
    for g in grads {
        let len = split_size.min(total - at).max(0);
        if g.defined() {
            parts.push(g.clone());
        } else {
            let mut s = sizes.to_vec();
            s[d] = len;
            parts.push(composite::zeros_as(&s, like)?);
        }
        at += len;
    }
    ops::cat_with(&parts, ops::CatOptions { dim })
}

/// `cat_tensors_backward`: `grad` sliced back into each input (an empty
/// gradient for skipped 1-d empty inputs).
pub fn cat_tensors_backward(grad: &Tensor, sizes: &[Vec<i64>], dim: i64) -> Result<Vec<Tensor>> {
    let nd = grad.dim();
    let d = c10_core::tensor_impl::maybe_wrap_dim(dim, nd, false)?;
    let mut out = Vec::with_capacity(sizes.len());
    let mut at = 0;
    for s in sizes {
        if s.len() == 1 && s[0] == 0 {
            out.push(composite::zeros_as(&[0], grad)?);
            continue;
        }
        let len = s.get(d).copied().unwrap_or(0);
        out.push(ops::narrow(grad, d as i64, at, len)?);
        at += len;
    }
    Ok(out)
}

/// `stack`'s gradient: `grad` unbound along `dim`.
pub fn stack_backward(grad: &Tensor, n: usize, dim: i64) -> Result<Vec<Tensor>> {
    let d = c10_core::tensor_impl::maybe_wrap_dim(dim, grad.dim(), false)? as i64;
    (0..n as i64).map(|i| ops::select_int(grad, d, i)).collect()
}

/// `repeat_backward`: the tiles of `grad` summed back to the input's sizes.
pub fn repeat_backward(grad: &Tensor, repeats: &[i64], sizes: &[i64]) -> Result<Tensor> {
    let lead = repeats.len() - sizes.len();
    // View grad as [r0, ..., r_lead-1, r_lead, s0, r_lead+1, s1, ...], sum the repeats.
    let mut shape = Vec::new();
    let mut sum_dims = Vec::new();
    for (i, &r) in repeats.iter().enumerate() {
        if i < lead {
            sum_dims.push(shape.len() as i64);
            shape.push(r);
        } else {
            sum_dims.push(shape.len() as i64);
            shape.push(r);
            shape.push(sizes[i - lead]);
        }
    }
    if grad.numel() == 0 {
        return composite::zeros_as(sizes, grad);
    }
    let g = ops::reshape(grad, &shape)?;
    let s = ops::sum_dim_intlist(&g, Some(&sum_dims))?;
    ops::reshape(&s, sizes)
}

/// `mse_loss_backward`: `2 * (self - target) * grad`, divided by the
/// number of elements for reduction `mean`.
pub fn mse_loss_backward(
    grad: &Tensor,
    self_: &Tensor,
    target: &Tensor,
    reduction: i64,
) -> Result<Tensor> {
    let diff = ops::sub_tensor(self_, target)?;
    let norm = if reduction == 1 {
        2.0 / self_.numel().max(1) as f64
    } else {
        2.0
    };
    ops::mul_tensor(&ops::mul_scalar(&diff, Scalar::Double(norm))?, grad)
}

/// `native_dropout_backward(grad, mask, scale)`: `grad * mask * scale`.
pub fn native_dropout_backward(grad: &Tensor, mask: &Tensor, scale: f64) -> Result<Tensor> {
    let m = cast_to(mask, grad.dtype().unwrap_or(ScalarType::Float))?;
    ops::mul_scalar(&ops::mul_tensor(grad, &m)?, Scalar::Double(scale))
}

/// The dropout scale `1 / (1 - p)` of a training `native_dropout` (0 for
/// `p = 1`).
pub fn dropout_scale(p: f64, train: Option<bool>) -> f64 {
    if train == Some(false) {
        1.0
    } else if p >= 1.0 {
        0.0
    } else {
        1.0 / (1.0 - p)
    }
}

/// The gradient of `lerp(self, end, weight)` for `self`: `grad * (1 - weight)`.
pub fn lerp_self_backward(grad: &Tensor, weight: Scalar) -> Result<Tensor> {
    ops::mul_scalar(grad, Scalar::Double(1.0 - weight.to_f64()))
}

/// `atan2`'s gradients: `grad * other / (self^2 + other^2)` for `self`,
/// `-grad * self / (...)` for `other`.
pub fn atan2_backward(
    grad: &Tensor,
    self_: &Tensor,
    other: &Tensor,
    for_self: bool,
) -> Result<Tensor> {
    let denom = ops::add_tensor(
        &ops::mul_tensor(self_, self_)?,
        &ops::mul_tensor(other, other)?,
    )?;
    if for_self {
        ops::mul_tensor(grad, &ops::div_tensor(other, &denom)?)
    } else {
        ops::mul_tensor(grad, &ops::div_tensor(&ops::neg(self_)?, &denom)?)
    }
}

/// `remainder`/`fmod`'s gradient for `other`: `-grad * div(self, other, mode)`.
pub fn rounded_div_other_backward(
    grad: &Tensor,
    self_: &Tensor,
    other: &Tensor,
    mode: &str,
) -> Result<Tensor> {
    let q = ops::div_tensor_mode(self_, other, Some(mode))?;
    ops::neg(&ops::mul_tensor(grad, &q)?)
}

/// `mv`'s gradient for the matrix: `outer(grad, vec)`.
pub fn mv_self_backward(grad: &Tensor, vec: &Tensor) -> Result<Tensor> {
    ops::mul_tensor(&ops::unsqueeze(grad, 1)?, &ops::unsqueeze(vec, 0)?)
}

/// `bmm`'s gradients: `grad @ mat2^T` for `self`, `self^T @ grad` for `mat2`.
pub fn bmm_backward(grad: &Tensor, other: &Tensor, for_self: bool) -> Result<Tensor> {
    let ot = ops::transpose_int(other, 1, 2)?;
    if for_self {
        ops::bmm(grad, &ot)
    } else {
        ops::bmm(&ot, grad)
    }
}

/// `1 - t`.
fn one_minus(t: &Tensor) -> Result<Tensor> {
    ops::add_scalar(&ops::neg(t)?, Scalar::Int(1))
}

/// `div(self, other, rounding_mode)`'s gradient for `self`: zero with a
/// rounding mode (the result is piecewise constant).
pub fn div_mode_self_backward(
    grad: &Tensor,
    other: &Tensor,
    rounding_mode: Option<&str>,
) -> Result<Tensor> {
    match rounding_mode {
        Some(_) => ops::zeros_like(grad),
        None => div_tensor_self_backward(grad, other),
    }
}

/// `div(self, other, rounding_mode)`'s gradient for `other`.
pub fn div_mode_other_backward(
    grad: &Tensor,
    self_: &Tensor,
    other: &Tensor,
    rounding_mode: Option<&str>,
) -> Result<Tensor> {
    match rounding_mode {
        Some(_) => ops::zeros_like(grad),
        None => div_tensor_other_backward(grad, self_, other),
    }
}

/// `native_layer_norm`'s gradients for input, weight and bias. The saved
/// mean and rstd are not differentiable outputs; when this backward is
/// itself recorded (`create_graph`) they are recomputed from the input so
/// that the gradient of the gradient sees their dependence on it.
#[allow(clippy::too_many_arguments)]
pub fn native_layer_norm_backward(
    grads: &[Tensor],
    input: &Tensor,
    normalized_shape: &[i64],
    mean: &Tensor,
    rstd: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
    grad_input_mask: [bool; 3],
) -> Result<Vec<Tensor>> {
    let grad = &grads[0];
    if !grad.defined() {
        return Ok(vec![Tensor::undefined(); 3]);
    }
    let recomputed;
    let (mean, rstd) = if c10_core::GradMode::is_enabled() && input.requires_grad() {
        let (_, m, r) = aten_core::native::nn::math_native_layer_norm(
            input,
            normalized_shape,
            None,
            None,
            eps,
        )?;
        recomputed = (m, r);
        (&recomputed.0, &recomputed.1)
    } else {
        (mean, rstd)
    };
    let (a, b, c) = aten_core::native::backward::native_layer_norm_backward(
        grad,
        input,
        normalized_shape,
        mean,
        rstd,
        weight,
        bias,
        &grad_input_mask,
    )?;
    Ok(vec![a, b, c])
}

/// The sizes of an optional bias.
pub fn bias_sizes_opt(bias: Option<&Tensor>) -> Option<Vec<i64>> {
    bias.map(|b| b.sizes().to_vec())
}

/// A convolution's gradients for input, weight and bias.
#[allow(clippy::too_many_arguments)]
pub fn convolution_backward(
    grad: &Tensor,
    input: &Tensor,
    weight: &Tensor,
    bias_sizes: Option<Vec<i64>>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    transposed: bool,
    output_padding: &[i64],
    groups: i64,
    grad_input_mask: [bool; 3],
) -> Result<Vec<Tensor>> {
    let (a, b, c) = aten_core::native::backward::convolution_backward(
        grad,
        input,
        weight,
        bias_sizes.as_deref(),
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
        &grad_input_mask,
    )?;
    Ok(vec![a, b, c])
}

/// `native_group_norm`'s gradients for input, weight and bias. Only the
/// output's gradient given: the backward composite (mean and rstd
/// recomputed from the input when this backward is recorded, as for layer
/// norm). Gradients of the mean or rstd given too (PyTorch uses them):
/// the forward composite is recomputed and differentiated as a whole.
#[allow(clippy::too_many_arguments, non_snake_case)]
pub fn native_group_norm_backward(
    grads: &[Tensor],
    input: &Tensor,
    mean: &Tensor,
    rstd: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    N: i64,
    C: i64,
    HxW: i64,
    group: i64,
    eps: f64,
    grad_input_mask: [bool; 3],
) -> Result<Vec<Tensor>> {
    let given = |i: usize| grads.get(i).is_some_and(|g| g.defined());
    if given(1) || given(2) {
        return vjp_by_recompute(
            |xs| {
                let (y, m, r) = aten_core::native::backward::math_group_norm(
                    &xs[0],
                    xs.get(1).filter(|t| t.defined()),
                    xs.get(2).filter(|t| t.defined()),
                    N,
                    C,
                    HxW,
                    group,
                    eps,
                )?;
                Ok(vec![y, m, r])
            },
            &[
                input,
                weight.unwrap_or(&Tensor::undefined()),
                bias.unwrap_or(&Tensor::undefined()),
            ],
            grads,
            &grad_input_mask,
        );
    }
    let grad = &grads[0];
    if !grad.defined() {
        return Ok(vec![Tensor::undefined(); 3]);
    }
    let recomputed;
    let (mean, rstd) = if c10_core::GradMode::is_enabled() && input.requires_grad() {
        let (_, m, r) =
            aten_core::native::backward::math_group_norm(input, None, None, N, C, HxW, group, eps)?;
        recomputed = (m, r);
        (&recomputed.0, &recomputed.1)
    } else {
        (mean, rstd)
    };
    let (a, b, c) = aten_core::native::backward::native_group_norm_backward(
        grad,
        input,
        mean,
        rstd,
        weight,
        N,
        C,
        group,
        &grad_input_mask,
    )?;
    // No gradient for an absent weight or bias.
    let given_if = |t: Tensor, present: bool| if present { t } else { Tensor::undefined() };
    Ok(vec![
        a,
        given_if(b, weight.is_some()),
        given_if(c, bias.is_some()),
    ])
}

/// The gradients of `f`'s outputs (`grads`, undefined where none) with
/// respect to its inputs, by recording `f` again and differentiating the
/// record: for formulas whose closed form is not written out. Recorded
/// itself when the backward pass is (`create_graph`: grad mode on), so
/// gradients of gradients work; otherwise on detached copies.
pub fn vjp_by_recompute(
    f: impl Fn(&[Tensor]) -> Result<Vec<Tensor>>,
    inputs: &[&Tensor],
    grads: &[Tensor],
    wanted: &[bool],
) -> Result<Vec<Tensor>> {
    let create_graph = c10_core::GradMode::is_enabled();
    let _grad = c10_core::enable_grad();
    let xs: Vec<Tensor> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if !t.defined() {
                return Ok(Tensor::undefined());
            }
            let want = wanted.get(i).copied().unwrap_or(false);
            if create_graph && t.requires_grad() {
                return Ok((*t).clone());
            }
            let d = crate::meta::detach(t)?;
            if want && d.dtype().is_some_and(crate::is_differentiable_type) {
                crate::meta::set_requires_grad(&d, true)?;
            }
            Ok(d)
        })
        .collect::<Result<_>>()?;
    let outs = f(&xs)?;
    let mut roots = Vec::new();
    let mut root_grads = Vec::new();
    for (o, g) in outs.iter().zip(grads) {
        if g.defined() && o.requires_grad() {
            roots.push(o.clone());
            root_grads.push(Some(g.clone()));
        }
    }
    let positions: Vec<usize> = (0..xs.len())
        .filter(|&i| {
            xs[i].defined() && xs[i].requires_grad() && wanted.get(i).copied().unwrap_or(false)
        })
        .collect();
    let mut result = vec![Tensor::undefined(); inputs.len()];
    if roots.is_empty() || positions.is_empty() {
        return Ok(result);
    }
    let wrt: Vec<Tensor> = positions.iter().map(|&i| xs[i].clone()).collect();
    let gs = crate::engine::grad(
        &roots,
        &wrt,
        &root_grads,
        Some(create_graph),
        create_graph,
        true,
    )?;
    for (p, g) in positions.into_iter().zip(gs) {
        if let Some(g) = g {
            result[p] = g;
        }
    }
    Ok(result)
}
