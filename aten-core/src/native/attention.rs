//! Scaled dot-product attention as PyTorch's `transformers/attention.cpp`
//! writes it for the CPU: `scaled_dot_product_attention`
//! (CompositeImplicitAutograd) validates its inputs, turns a boolean mask
//! into an additive one, and picks the CPU flash kernel
//! (`_scaled_dot_product_flash_attention_for_cpu`) when its constraints
//! hold, else the math form (`_scaled_dot_product_attention_math`,
//! CompositeImplicitAutograd: float16 and bfloat16 computed in float32,
//! `q` and `k` each scaled by the square root of the scale, a causal mask
//! from `ones(L, S).tril()`, grouped-query heads repeated, `_safe_softmax`
//! so that fully masked rows are zeros). The flash kernel's output is the
//! math form's (contiguous), with the log-sum-exp of the scores.

use c10_core::{Error, Layout, Result, Scalar, ScalarType};

use super::backward::cast_to;
use crate::generated::ops;
use crate::Tensor;

fn dtype_of(t: &Tensor) -> Result<ScalarType> {
    t.dtype()
        .ok_or_else(|| Error::runtime("scaled_dot_product_attention: an undefined tensor"))
}

/// `validate_sdpa_input`.
fn validate(
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    attn_mask: Option<&Tensor>,
) -> Result<()> {
    let (q, k, v) = (dtype_of(query)?, dtype_of(key)?, dtype_of(value)?);
    if q != k || q != v {
        return Err(Error::runtime(format!(
            "Expected query, key, and value to have the same dtype, but got query.dtype: {} key.dtype: {} and value.dtype: {} instead.",
            q.type_meta_name(),
            k.type_meta_name(),
            v.type_meta_name()
        )));
    }
    if query.device() != key.device() || query.device() != value.device() {
        return Err(Error::runtime(format!(
            "Expected query, key, and value to have the same device type, but got query.device: {} key.device: {} and value.device: {} instead.",
            query.device().map_or("?".to_string(), |d| d.to_string()),
            key.device().map_or("?".to_string(), |d| d.to_string()),
            value.device().map_or("?".to_string(), |d| d.to_string())
        )));
    }
    if query.dim() < 2 || key.dim() < 2 || value.dim() < 2 {
        return Err(Error::runtime(format!(
            "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: {} key.dim: {} and value.dim: {} instead.",
            query.dim(),
            key.dim(),
            value.dim()
        )));
    }
    if let Some(mask) = attn_mask {
        let m = dtype_of(mask)?;
        if m != ScalarType::Bool && m != ScalarType::Float && m != q {
            return Err(Error::runtime(format!(
                "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: {} and  query.dtype: {} instead.",
                m.type_meta_name(),
                q.type_meta_name()
            )));
        }
    }
    Ok(())
}

/// `convert_boolean_attn_mask`: a boolean mask (true: attend) as an
/// additive one of `dtype` (`0` and `-inf`); other masks pass through.
fn additive_mask(mask: Option<&Tensor>, dtype: ScalarType) -> Result<Option<Tensor>> {
    let Some(mask) = mask else { return Ok(None) };
    if mask.dtype() != Some(ScalarType::Bool) {
        return Ok(Some(mask.clone()));
    }
    let scalar = |v: f64| {
        ops::scalar_tensor_with(
            Scalar::Double(v),
            ops::ScalarTensorOptions {
                dtype: Some(dtype),
                layout: Some(Layout::Strided),
                device: mask.device(),
                pin_memory: None,
            },
        )
    };
    Ok(Some(ops::where_self(
        mask,
        &scalar(0.0)?,
        &scalar(f64::NEG_INFINITY)?,
    )?))
}

/// The dtype attention computes in: float32 for float16 and bfloat16.
fn accumulate_dtype(dtype: ScalarType) -> ScalarType {
    match dtype {
        ScalarType::Half | ScalarType::BFloat16 => ScalarType::Float,
        other => other,
    }
}

/// `sdp::calculate_scale`: the given scale, else `1 / sqrt(E)`.
fn softmax_scale(query: &Tensor, scale: Option<f64>) -> f64 {
    scale.unwrap_or_else(|| {
        let e = query.sizes().last().copied().unwrap_or(1) as f64;
        1.0 / e.sqrt()
    })
}

/// `pre_process_group_query_attention_input`: with `enable_gqa`, the key
/// and value heads repeated to the query's.
fn group_query(
    query: &Tensor,
    key: Tensor,
    value: Tensor,
    enable_gqa: bool,
) -> Result<(Tensor, Tensor)> {
    if !enable_gqa {
        return Ok((key, value));
    }
    let heads = |t: &Tensor| t.sizes()[t.dim() - 3];
    let (q, k, v) = (heads(query), heads(&key), heads(&value));
    if q == k && k == v {
        return Ok((key, value));
    }
    if k == 0 || v == 0 || q % k != 0 || q % v != 0 {
        return Err(Error::runtime(
            "Number of heads in key and value must divide the number of heads in ",
        ));
    }
    let repeat = |t: &Tensor, by: i64| {
        ops::repeat_interleave_self_int_with(
            t,
            by,
            ops::RepeatInterleaveSelfIntOptions {
                dim: Some(-3),
                output_size: None,
            },
        )
    };
    Ok((repeat(&key, q / k)?, repeat(&value, q / v)?))
}

/// `_scaled_dot_product_attention_math(query, key, value, attn_mask,
/// dropout_p, is_causal, dropout_mask, *, scale, enable_gqa)`: the output
/// and the attention weights.
#[allow(clippy::too_many_arguments)]
pub fn _scaled_dot_product_attention_math(
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    attn_mask: Option<&Tensor>,
    dropout_p: f64,
    is_causal: bool,
    dropout_mask: Option<&Tensor>,
    scale: Option<f64>,
    enable_gqa: bool,
) -> Result<(Tensor, Tensor)> {
    let origin = dtype_of(query)?;
    let query_acc = cast_to(query, accumulate_dtype(origin))?;
    let key_acc = cast_to(key, accumulate_dtype(dtype_of(key)?))?;
    let value_acc = cast_to(value, accumulate_dtype(dtype_of(value)?))?;
    // q and k are each scaled by the square root, for stability.
    let negative = scale.is_some_and(|s| s < 0.0);
    let factor = softmax_scale(&query_acc, scale.map(f64::abs)).sqrt();
    let q = ops::mul_scalar(
        &query_acc,
        Scalar::Double(if negative { 0.0 - factor } else { factor }),
    )?;
    let mut mask = attn_mask.cloned();
    if is_causal {
        if mask.is_some() {
            return Err(Error::runtime(
                "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True",
            ));
        }
        let (l, s) = (q.sizes()[q.dim() - 2], key_acc.sizes()[key_acc.dim() - 2]);
        let ones = ops::ones_with(
            &[l, s],
            ops::OnesOptions {
                dtype: Some(ScalarType::Bool),
                layout: Some(Layout::Strided),
                device: q.device(),
                pin_memory: None,
            },
        )?;
        mask = additive_mask(Some(&ops::tril(&ones)?), dtype_of(&q)?)?;
    }
    let (key_expanded, value_expanded) = group_query(&q, key_acc, value_acc, enable_gqa)?;
    let kt = ops::transpose_int(&key_expanded, -2, -1)?;
    let mut attn = ops::matmul(&q, &ops::mul_scalar(&kt, Scalar::Double(factor))?)?;
    if let Some(mask) = &mask {
        attn = ops::add_tensor_(&attn, mask)?;
    }
    attn = ops::_safe_softmax(&attn, -1)?;
    if dropout_p > 0.0 {
        match dropout_mask {
            Some(keep) => {
                attn =
                    ops::masked_fill_scalar(&attn, &ops::logical_not(keep)?, Scalar::Double(0.0))?;
                let scaled =
                    ops::mul_scalar(&value_expanded, Scalar::Double(1.0 / (1.0 - dropout_p)))?;
                let out = ops::matmul(&attn, &scaled)?;
                return Ok((cast_to(&out, origin)?, cast_to(&attn, origin)?));
            }
            None => attn = ops::dropout(&attn, dropout_p, true)?,
        }
    }
    let out = ops::matmul(&attn, &value_expanded)?;
    Ok((cast_to(&out, origin)?, cast_to(&attn, origin)?))
}

/// `_safe_softmax(self, dim, dtype)` (CompositeExplicitAutograd): `softmax`,
/// with rows that are `-inf` throughout made zeros.
pub fn _safe_softmax(self_: &Tensor, dim: i64, dtype: Option<ScalarType>) -> Result<Tensor> {
    let out = ops::softmax_int_with(self_, dim, ops::SoftmaxIntOptions { dtype })?;
    let options = |d| ops::ScalarTensorOptions {
        dtype: d,
        layout: None,
        device: out.device(),
        pin_memory: None,
    };
    let neg_inf = ops::scalar_tensor_with(Scalar::Double(f64::NEG_INFINITY), options(out.dtype()))?;
    let masked = ops::eq_tensor(self_, &neg_inf)?;
    let masked_rows = ops::all_dim_with(&masked, dim, ops::AllDimOptions { keepdim: true })?;
    let zero = ops::scalar_tensor_with(Scalar::Double(0.0), options(out.dtype()))?;
    ops::where_self(&masked_rows, &zero, &out)
}

/// Whether the CPU flash kernel serves a call (`use_flash_attention_cpp`).
fn flash_applies(
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    attn_mask: Option<&Tensor>,
    dropout_p: f64,
) -> bool {
    let dims = [query.dim(), key.dim(), value.dim()];
    if dropout_p > 0.0 || dims.iter().any(|&d| d != 4) {
        return false;
    }
    let (q, k, v) = (query.sizes(), key.sizes(), value.sizes());
    if q[0] != k[0] || q[0] != v[0] || q[1] != k[1] || q[1] != v[1] {
        return false;
    }
    if q[3] != k[3] || q[3] != v[3] || q[2] == 0 || k[2] == 0 {
        return false;
    }
    if [query, key, value]
        .iter()
        .any(|t| t.strides().last().copied() != Some(1))
    {
        return false;
    }
    if let Some(mask) = attn_mask {
        let m = mask.sizes();
        let fits = match m.len() {
            2 => true,
            4 => (0..2).all(|i| m[i] == 1 || m[i] == q[i]),
            _ => false,
        };
        if !fits {
            return false;
        }
    }
    matches!(
        query.dtype(),
        Some(ScalarType::Float | ScalarType::Double | ScalarType::BFloat16 | ScalarType::Half)
    )
}

/// `scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
/// is_causal, *, scale, enable_gqa)`.
#[allow(clippy::too_many_arguments)]
pub fn scaled_dot_product_attention(
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    attn_mask: Option<&Tensor>,
    dropout_p: f64,
    is_causal: bool,
    scale: Option<f64>,
    enable_gqa: bool,
) -> Result<Tensor> {
    validate(query, key, value, attn_mask)?;
    let mask = additive_mask(attn_mask, dtype_of(query)?)?;
    if flash_applies(query, key, value, mask.as_ref(), dropout_p) {
        let (out, _) = ops::_scaled_dot_product_flash_attention_for_cpu_with(
            query,
            key,
            value,
            ops::ScaledDotProductFlashAttentionForCpuOptions {
                dropout_p,
                is_causal,
                attn_mask: mask.as_ref(),
                scale,
            },
        )?;
        return Ok(out);
    }
    let (out, _) = _scaled_dot_product_attention_math(
        query,
        key,
        value,
        mask.as_ref(),
        dropout_p,
        is_causal,
        None,
        scale,
        enable_gqa,
    )?;
    Ok(out)
}

/// `_scaled_dot_product_flash_attention_for_cpu(query, key, value,
/// dropout_p, is_causal, *, attn_mask, scale)` on the CPU: the math form's
/// output and the log-sum-exp of the scores per query (float32 for
/// reduced-precision inputs).
#[allow(clippy::too_many_arguments)]
pub fn _scaled_dot_product_flash_attention_cpu(
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    dropout_p: f64,
    is_causal: bool,
    attn_mask: Option<&Tensor>,
    scale: Option<f64>,
) -> Result<(Tensor, Tensor)> {
    if !query.dtype().is_some_and(|d| d.is_floating_point()) {
        return Err(Error::runtime(format!(
            "query must be FP32, FP64, BF16, FP16 but got {}",
            query.dtype().map_or("?", |d| d.python_name())
        )));
    }
    if query.dim() != 4 || key.dim() != 4 || value.dim() != 4 {
        return Err(Error::runtime(format!(
            "q, k, v must be a 4 dimensional tensor, got {}, {}, {}",
            query.dim(),
            key.dim(),
            value.dim()
        )));
    }
    if dropout_p != 0.0 {
        return Err(Error::runtime(format!(
            "dropout probability must be zero, got {dropout_p}"
        )));
    }
    let (out, _) = _scaled_dot_product_attention_math(
        query,
        key,
        value,
        attn_mask,
        dropout_p,
        is_causal,
        None,
        scale,
        query.sizes()[1] != key.sizes()[1],
    )?;
    // The log-sum-exp of the scaled, masked scores.
    let acc = accumulate_dtype(dtype_of(query)?);
    let q = cast_to(query, acc)?;
    let k = cast_to(key, acc)?;
    let scores = ops::mul_scalar(
        &ops::matmul(&q, &ops::transpose_int(&k, -2, -1)?)?,
        Scalar::Double(softmax_scale(&q, scale)),
    )?;
    let scores = match (attn_mask, is_causal) {
        (Some(mask), _) => ops::add_tensor(&scores, mask)?,
        (None, true) => {
            let (l, s) = (q.sizes()[2], k.sizes()[2]);
            let ones = ops::ones_with(
                &[l, s],
                ops::OnesOptions {
                    dtype: Some(ScalarType::Bool),
                    ..Default::default()
                },
            )?;
            let mask = additive_mask(Some(&ops::tril(&ones)?), acc)?
                .ok_or_else(|| Error::internal("causal mask"))?;
            ops::add_tensor(&scores, &mask)?
        }
        (None, false) => scores,
    };
    let logsumexp = ops::logsumexp(&scores, &[-1])?;
    Ok((out, logsumexp))
}
