//! `_grouped_mm` (CompositeExplicitAutograd): the matrix products of a
//! mixture of experts, one per group, as PyTorch's `GroupedMMUtils.h`
//! checks and computes them off the GPU. A 2-d operand is split into
//! groups along its grouped dimension at the cumulative `offs`; two 3-d
//! operands are a plain `bmm`.

use c10_core::{Error, Result, ScalarType};

use super::dims::fmt_list;
use crate::generated::ops;
use crate::Tensor;

fn dtype(t: &Tensor) -> Result<ScalarType> {
    t.dtype()
        .ok_or_else(|| Error::runtime("Tensor is undefined"))
}

/// `check_valid_strides_and_return_transposed`: a row- or column-major
/// matrix (or batch of them) whose leading stride is a multiple of 16
/// bytes.
fn check_strides(mat: &Tensor) -> Result<()> {
    let (sizes, strides) = (mat.sizes(), mat.strides());
    let end = sizes.len() - 1;
    let alignment = (16 / dtype(mat)?.element_size()) as i64;
    let leading = if strides[end - 1] == 1 && strides[end] >= sizes[end - 1].max(1) {
        strides[end]
    } else if strides[end] == 1 && strides[end - 1] >= sizes[end].max(1) {
        strides[end - 1]
    } else {
        return Err(Error::runtime(format!(
            "Invalid strides/sizes, got {} for strides and {} for sizes",
            fmt_list(&strides),
            fmt_list(&sizes)
        )));
    };
    if leading % alignment != 0 {
        return Err(Error::runtime("strides should be multiple of 16 bytes"));
    }
    Ok(())
}

/// `_grouped_mm_validate_inputs` and `_resolve_grouped_mm_out_dtype`.
fn validate(
    mat_a: &Tensor,
    mat_b: &Tensor,
    offs: Option<&Tensor>,
    bias: Option<&Tensor>,
    out_dtype: Option<ScalarType>,
) -> Result<ScalarType> {
    let allowed = [ScalarType::BFloat16, ScalarType::Float, ScalarType::Half];
    let (da, db) = (dtype(mat_a)?, dtype(mat_b)?);
    for (name, d) in [("mat_a", da), ("mat_b", db)] {
        if !allowed.contains(&d) {
            return Err(Error::runtime(format!(
                "Expected {name} to be Float32, BFloat16 or Float16 matrix, got {d}"
            )));
        }
    }
    if da != db {
        return Err(Error::runtime(format!(
            "Expected mat_a and mat_b to have the same dtype, got {da} and {db}"
        )));
    }
    for (name, t) in [("mat_a", mat_a), ("mat_b", mat_b)] {
        if t.dim() != 2 && t.dim() != 3 {
            return Err(Error::runtime(format!("{name} has to be 2 or 3d")));
        }
    }
    let (a2, b2) = (mat_a.dim() == 2, mat_b.dim() == 2);
    if (!a2 || !b2) && mat_a.size(-1)? != mat_b.size(-2)? {
        return Err(Error::runtime(
            "contraction dimension of mat_a and mat_b must match",
        ));
    }
    check_strides(mat_a)?;
    check_strides(mat_b)?;
    if offs.is_some() != (a2 || b2) {
        return Err(Error::runtime(
            "Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d",
        ));
    }
    if let Some(offs) = offs {
        if offs.dim() != 1 {
            return Err(Error::runtime("offs has to be 1D"));
        }
        if dtype(offs)? != ScalarType::Int {
            return Err(Error::runtime("Offsets have to be int32"));
        }
    }
    if bias.is_some() {
        return Err(Error::runtime("Bias not supported yet"));
    }
    let out = out_dtype.unwrap_or(da);
    if out != da {
        return Err(Error::runtime(
            "Grouped gemm output dtype must match `mat_a` dtype",
        ));
    }
    Ok(out)
}

/// `create_grouped_gemm_output_tensor`: the output's sizes, its last
/// dimension's stride padded to 16 bytes.
fn output(
    mat_a: &Tensor,
    mat_b: &Tensor,
    groups: Option<i64>,
    out_dtype: ScalarType,
) -> Result<Tensor> {
    let (a2, b2) = (mat_a.dim() == 2, mat_b.dim() == 2);
    let batch_mismatch = || Error::runtime("matrix batch sizes have to match");
    let sizes: Vec<i64> = match (a2, b2, groups) {
        (true, true, Some(g)) => vec![g, mat_a.size(0)?, mat_b.size(1)?],
        (true, false, Some(g)) if g == mat_b.size(0)? => vec![mat_a.size(0)?, mat_b.size(-1)?],
        (false, true, Some(g)) if g == mat_a.size(0)? => vec![mat_a.size(1)?, mat_b.size(1)?],
        (false, false, _) if mat_a.size(0)? == mat_b.size(0)? => {
            vec![mat_a.size(0)?, mat_a.size(1)?, mat_b.size(-1)?]
        }
        (false, false, _) => return Err(Error::runtime("batched dimension has to match")),
        _ => return Err(batch_mismatch()),
    };
    let alignment = (16 / out_dtype.element_size()) as i64;
    let last = sizes[sizes.len() - 1];
    let padded = last
        .checked_add(alignment - 1)
        .ok_or_else(|| Error::runtime("grouped_mm: the output is too large"))?
        / alignment
        * alignment;
    let strides: Vec<i64> = if a2 != b2 {
        vec![padded, 1]
    } else {
        let plane = sizes[1]
            .checked_mul(padded)
            .ok_or_else(|| Error::runtime("grouped_mm: the output is too large"))?;
        vec![plane, padded, 1]
    };
    ops::empty_strided_with(
        &sizes,
        &strides,
        ops::EmptyStridedOptions {
            dtype: Some(out_dtype),
            device: mat_a.device(),
            ..Default::default()
        },
    )
}

/// `t[start:end]` along `dim`, with Python's slicing.
fn slice(t: &Tensor, dim: i64, start: i64, end: i64) -> Result<Tensor> {
    ops::slice_tensor_with(
        t,
        ops::SliceTensorOptions {
            dim,
            start: Some(start),
            end: Some(end),
            step: 1,
        },
    )
}

/// `_grouped_mm(self, mat2, offs, bias, out_dtype)`: per group `g` ending
/// at `offs[g]`, the product of the operands' group-`g` parts (PyTorch's
/// `_grouped_mm_fallback`); output rows no group covers are unspecified.
pub fn _grouped_mm(
    self_: &Tensor,
    mat2: &Tensor,
    offs: Option<&Tensor>,
    bias: Option<&Tensor>,
    out_dtype: Option<ScalarType>,
) -> Result<Tensor> {
    let out_dtype = validate(self_, mat2, offs, bias, out_dtype)?;
    let ends: Option<Vec<i32>> = offs
        .map(|o| ops::contiguous(o).and_then(|o| o.to_vec::<i32>()))
        .transpose()?;
    let out = output(
        self_,
        mat2,
        ends.as_ref().map(|e| e.len() as i64),
        out_dtype,
    )?;
    let Some(ends) = ends else {
        ops::bmm_out(self_, mat2, &out)?;
        return Ok(out);
    };
    let (a2, b2) = (self_.dim() == 2, mat2.dim() == 2);
    let mut start = 0i64;
    for (g, &end) in ends.iter().enumerate() {
        let (g, end) = (g as i64, i64::from(end));
        match (a2, b2) {
            (true, false) => ops::mm_out(
                &slice(self_, 0, start, end)?,
                &ops::select_int(mat2, 0, g)?,
                &slice(&out, 0, start, end)?,
            )?,
            (false, true) => ops::mm_out(
                &ops::select_int(self_, 0, g)?,
                &slice(mat2, 1, start, end)?,
                &slice(&out, 1, start, end)?,
            )?,
            _ => ops::mm_out(
                &slice(self_, 1, start, end)?,
                &slice(mat2, 0, start, end)?,
                &ops::select_int(&out, 0, g)?,
            )?,
        };
        start = end;
    }
    Ok(out)
}
