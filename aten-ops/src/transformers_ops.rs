//! The custom operators Hugging Face `transformers` registers with
//! `torch.library` and its exported programs call:
//! `transformers::grouped_mm_fallback` (the experts' matrix products of a
//! mixture of experts, one per group of rows, when `torch._grouped_mm`
//! cannot serve) and its backward. Defined with the library's schemas and
//! semantics, so that those programs run without Python.

use aten_core::{ops, Tensor};
use aten_dispatch::CppFunction;
use c10_core::{Error, Result, ScalarType};

/// `offs.tolist()`: the groups' cumulative ends.
fn ends(offs: &Tensor) -> Result<Vec<i64>> {
    let dtype = offs
        .dtype()
        .ok_or_else(|| Error::runtime("Tensor is undefined"))?;
    if !dtype.is_integral(false) {
        return Err(Error::type_error(
            "slice indices must be integers or None or have an __index__ method",
        ));
    }
    ops::contiguous(&ops::to_dtype(offs, ScalarType::Long)?)?.to_vec::<i64>()
}

/// `t[start:end]`, with Python's slicing.
fn rows(t: &Tensor, start: i64, end: i64) -> Result<Tensor> {
    ops::slice_tensor_with(
        t,
        ops::SliceTensorOptions {
            start: Some(start),
            end: Some(end),
            ..Default::default()
        },
    )
}

/// Runs `group(i, start, end)` for every non-empty group of `offs`.
fn for_each_group(offs: &Tensor, mut group: impl FnMut(i64, i64, i64) -> Result<()>) -> Result<()> {
    let mut start = 0;
    for (i, end) in ends(offs)?.into_iter().enumerate() {
        if start != end {
            group(i as i64, start, end)?;
            start = end;
        }
    }
    Ok(())
}

/// `grouped_mm_fallback(input, weight, offs)`: rows `offs[i-1]..offs[i]`
/// of `input` times expert `i`'s `weight[i]`; rows no group covers are
/// zero.
fn grouped_mm_fallback(input: &Tensor, weight: &Tensor, offs: &Tensor) -> Result<Tensor> {
    let output = ops::zeros_with(
        &[input.size(0)?, weight.size(2)?],
        ops::ZerosOptions {
            dtype: input.dtype(),
            device: input.device(),
            ..Default::default()
        },
    )?;
    for_each_group(offs, |i, start, end| {
        let w = ops::select_int(weight, 0, i)?;
        ops::mm_out(&rows(input, start, end)?, &w, &rows(&output, start, end)?).map(drop)
    })?;
    Ok(output)
}

/// `grouped_mm_fallback_backward(input, weight, offs, grad_output)`: the
/// gradients of [`grouped_mm_fallback`] with respect to `input` and
/// `weight`.
fn grouped_mm_fallback_backward(
    input: &Tensor,
    weight: &Tensor,
    offs: &Tensor,
    grad_output: &Tensor,
) -> Result<(Tensor, Tensor)> {
    let grad_input = ops::zeros_like(input)?;
    let grad_weight = ops::zeros_like(weight)?;
    for_each_group(offs, |i, start, end| {
        let w = ops::select_int(weight, 0, i)?;
        let g = rows(grad_output, start, end)?;
        ops::mm_out(&g, &ops::t(&w)?, &rows(&grad_input, start, end)?)?;
        let x = ops::t(&rows(input, start, end)?)?;
        ops::mm_out(&x, &g, &ops::select_int(&grad_weight, 0, i)?).map(drop)
    })?;
    Ok((grad_input, grad_weight))
}

aten_dispatch::torch_library!(transformers, |m| {
    m.def("grouped_mm_fallback(Tensor input, Tensor weight, Tensor offs) -> Tensor")?;
    m.def("grouped_mm_fallback_backward(Tensor input, Tensor weight, Tensor offs, Tensor grad_output) -> (Tensor, Tensor)")?;
    Ok(())
});

aten_dispatch::torch_library_impl!(transformers, CompositeExplicitAutograd, |m| {
    m.impl_(
        "grouped_mm_fallback",
        CppFunction::from_unboxed(grouped_mm_fallback),
    )?;
    m.impl_(
        "grouped_mm_fallback_backward",
        CppFunction::from_unboxed(grouped_mm_fallback_backward),
    )?;
    Ok(())
});
