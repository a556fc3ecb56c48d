//! The convolution entry points of `torch.nn.functional`
//! (CompositeImplicitAutograd, as PyTorch's `Convolution.cpp` writes them):
//! `conv1d`, `conv2d`, `conv3d` and their `padding="same"|"valid"` forms
//! (through `_convolution_mode`), and `conv_transpose1d`/`2d`/`3d`. Each
//! takes an unbatched input by adding a batch of one (`batchify`) and calls
//! `convolution` with the parameters as given (it expands one-element
//! lists itself).

use std::sync::atomic::{AtomicBool, Ordering};

use c10_core::{Error, Result, Scalar};

use super::dims::fmt_list;
use crate::generated::ops;
use crate::Tensor;

/// `batchify`: the input with a batch dimension, and whether it had one.
fn batchify(input: &Tensor, spatial: usize, name: &str) -> Result<(Tensor, bool)> {
    let unbatched = spatial + 1;
    let batched = input.dim() == unbatched + 1;
    if input.dim() != unbatched && !batched {
        return Err(Error::runtime(format!(
            "Expected {unbatched}D (unbatched) or {}D (batched) input to {name}, but got input of size: {}",
            unbatched + 1,
            fmt_list(&input.sizes())
        )));
    }
    Ok(if batched {
        (input.clone(), true)
    } else {
        (ops::unsqueeze(input, 0)?, false)
    })
}

/// The result of a batchified call, without the batch it was given.
fn unbatchify(output: Tensor, batched: bool) -> Result<Tensor> {
    if batched {
        Ok(output)
    } else {
        ops::squeeze_dim(&output, 0)
    }
}

/// `conv1d`/`conv2d`/`conv3d` over `spatial` dimensions.
#[allow(clippy::too_many_arguments)]
fn conv_nd(
    name: &str,
    spatial: usize,
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    groups: i64,
) -> Result<Tensor> {
    if let Some(b) = bias {
        if b.dtype() != input.dtype() {
            let name_of = |t: &Tensor| t.dtype().map_or("?", |d| d.type_meta_name());
            return Err(Error::runtime(format!(
                "Input type ({}) and bias type ({}) should be the same",
                name_of(input),
                name_of(b)
            )));
        }
    }
    let (batched, is_batched) = batchify(input, spatial, name)?;
    let out = ops::convolution(
        &batched,
        weight,
        bias,
        stride,
        padding,
        dilation,
        false,
        &[0],
        groups,
    )?;
    unbatchify(out, is_batched)
}

/// `conv1d(input, weight, bias, stride, padding, dilation, groups)`.
pub fn conv1d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    groups: i64,
) -> Result<Tensor> {
    conv_nd(
        "conv1d", 1, input, weight, bias, stride, padding, dilation, groups,
    )
}

/// `conv2d(input, weight, bias, stride, padding, dilation, groups)`.
pub fn conv2d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    groups: i64,
) -> Result<Tensor> {
    conv_nd(
        "conv2d", 2, input, weight, bias, stride, padding, dilation, groups,
    )
}

/// `conv3d(input, weight, bias, stride, padding, dilation, groups)`.
pub fn conv3d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    groups: i64,
) -> Result<Tensor> {
    conv_nd(
        "conv3d", 3, input, weight, bias, stride, padding, dilation, groups,
    )
}

/// The `padding="same"|"valid"` forms over `spatial` dimensions.
#[allow(clippy::too_many_arguments)]
fn conv_nd_padding(
    name: &str,
    spatial: usize,
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &str,
    dilation: &[i64],
    groups: i64,
) -> Result<Tensor> {
    let (batched, is_batched) = batchify(input, spatial, name)?;
    let out = ops::_convolution_mode(&batched, weight, bias, stride, padding, dilation, groups)?;
    unbatchify(out, is_batched)
}

/// `conv1d.padding(input, weight, bias, stride, padding, dilation, groups)`.
pub fn conv1d_padding(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &str,
    dilation: &[i64],
    groups: i64,
) -> Result<Tensor> {
    conv_nd_padding(
        "conv1d", 1, input, weight, bias, stride, padding, dilation, groups,
    )
}

/// `conv2d.padding(input, weight, bias, stride, padding, dilation, groups)`.
pub fn conv2d_padding(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &str,
    dilation: &[i64],
    groups: i64,
) -> Result<Tensor> {
    conv_nd_padding(
        "conv2d", 2, input, weight, bias, stride, padding, dilation, groups,
    )
}

/// `conv3d.padding(input, weight, bias, stride, padding, dilation, groups)`.
pub fn conv3d_padding(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &str,
    dilation: &[i64],
    groups: i64,
) -> Result<Tensor> {
    conv_nd_padding(
        "conv3d", 3, input, weight, bias, stride, padding, dilation, groups,
    )
}

/// `_convolution_mode(input, weight, bias, stride, padding, dilation,
/// groups)`: `padding` is `"same"` or `"valid"`.
pub fn _convolution_mode(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &str,
    dilation: &[i64],
    groups: i64,
) -> Result<Tensor> {
    match padding {
        "same" => convolution_same(input, weight, bias, stride, dilation, groups),
        "valid" => ops::convolution(
            input,
            weight,
            bias,
            stride,
            &[0],
            dilation,
            false,
            &[0],
            groups,
        ),
        other => Err(Error::runtime(format!("Invalid padding string: '{other}'"))),
    }
}

/// `_pooling_same_mode_padding_lr`: the left and right padding that keep
/// a dimension's size, symmetric where possible.
fn same_padding_lr(input: i64, kernel: i64, stride: i64, dilation: i64) -> (i64, i64) {
    let mut total = dilation * (kernel - 1);
    if stride > 2 && total % 2 == 1 {
        // The floor of the output size gives a little room.
        let wiggle = input % stride - 1;
        if wiggle > 0 {
            total -= 1;
        }
    }
    let left = total / 2;
    (left, total - left)
}

/// Warned once per process, as `TORCH_WARN_ONCE`.
static WARNED_ASYMMETRIC_SAME: AtomicBool = AtomicBool::new(false);

/// `convolution_same`'s argument checks, in PyTorch's order; the number of
/// spatial dimensions.
fn check_same_arguments(
    input: &Tensor,
    weight: &Tensor,
    stride: &[i64],
    dilation: &[i64],
    groups: i64,
) -> Result<usize> {
    let k = weight.dim();
    if k <= 2 {
        return Err(Error::runtime(
            "weight should have at least three dimensions",
        ));
    }
    if groups <= 0 {
        return Err(Error::runtime("non-positive groups is not supported"));
    }
    let dim = k - 2;
    let (weight_sizes, input_sizes) = (weight.sizes(), input.sizes());
    if input.dim() != k {
        return Err(Error::runtime(format!(
            "Expected {k}-dimensional input for {k}-dimensional weight{}, but got {}-dimensional input of size {} instead",
            fmt_list(&weight_sizes),
            input.dim(),
            fmt_list(&input_sizes)
        )));
    }
    if stride.len() != dim && stride.len() != 1 {
        return Err(Error::runtime(format!(
            "stride cannot broadcast to {dim} dimensions"
        )));
    }
    if dilation.len() != dim && dilation.len() != 1 {
        return Err(Error::runtime(format!(
            "dilation cannot broadcast to {dim} dimensions"
        )));
    }
    if stride.iter().any(|&s| s != 1) {
        return Err(Error::runtime(
            "padding='same' is not supported for strided convolutions",
        ));
    }
    Ok(dim)
}

/// `convolution_same`: the padding that keeps the sizes; an asymmetric one
/// is applied to a padded copy of the input.
fn convolution_same(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    dilation: &[i64],
    groups: i64,
) -> Result<Tensor> {
    let dim = check_same_arguments(input, weight, stride, dilation, groups)?;
    let (weight_sizes, input_sizes) = (weight.sizes(), input.sizes());
    let at = |v: &[i64], i: usize| if v.len() == 1 { v[0] } else { v[i] };
    let mut left = Vec::with_capacity(dim);
    let mut right = Vec::with_capacity(dim);
    for i in 0..dim {
        let (l, r) = same_padding_lr(
            input_sizes[i + 2],
            weight_sizes[i + 2],
            at(stride, i),
            at(dilation, i),
        );
        left.push(l);
        right.push(r);
    }
    let output_padding = vec![0; dim];
    if left == right {
        return ops::convolution(
            input,
            weight,
            bias,
            stride,
            &left,
            dilation,
            false,
            &output_padding,
            groups,
        );
    }
    if !WARNED_ASYMMETRIC_SAME.swap(true, Ordering::Relaxed) {
        c10_core::torch_warn!(
            "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded copy of the input be created"
        );
    }
    let mut pad = vec![0; 2 * dim];
    for i in 0..dim {
        let delta = right[i] - left[i];
        let at = 2 * (dim - 1 - i);
        if delta > 0 {
            pad[at + 1] = delta;
        } else {
            pad[at] = delta;
            left[i] = right[i];
        }
    }
    let padded = ops::constant_pad_nd_with(
        input,
        &pad,
        ops::ConstantPadNdOptions {
            value: Scalar::Int(0),
        },
    )?;
    ops::convolution(
        &padded,
        weight,
        bias,
        stride,
        &left,
        dilation,
        false,
        &output_padding,
        groups,
    )
}

/// `conv_transpose1d`/`2d`/`3d` over `spatial` dimensions.
#[allow(clippy::too_many_arguments)]
fn conv_transpose_nd(
    name: &str,
    spatial: usize,
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    output_padding: &[i64],
    groups: i64,
    dilation: &[i64],
) -> Result<Tensor> {
    let (batched, is_batched) = batchify(input, spatial, name)?;
    let out = ops::convolution(
        &batched,
        weight,
        bias,
        stride,
        padding,
        dilation,
        true,
        output_padding,
        groups,
    )?;
    unbatchify(out, is_batched)
}

/// `conv_transpose1d(input, weight, bias, stride, padding, output_padding,
/// groups, dilation)`.
#[allow(clippy::too_many_arguments)]
pub fn conv_transpose1d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    output_padding: &[i64],
    groups: i64,
    dilation: &[i64],
) -> Result<Tensor> {
    conv_transpose_nd(
        "conv_transpose1d",
        1,
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )
}

/// `conv_transpose2d.input(input, weight, bias, stride, padding,
/// output_padding, groups, dilation)`.
#[allow(clippy::too_many_arguments)]
pub fn conv_transpose2d_input(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    output_padding: &[i64],
    groups: i64,
    dilation: &[i64],
) -> Result<Tensor> {
    conv_transpose_nd(
        "conv_transpose2d",
        2,
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )
}

/// `conv_transpose3d.input(input, weight, bias, stride, padding,
/// output_padding, groups, dilation)`.
#[allow(clippy::too_many_arguments)]
pub fn conv_transpose3d_input(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    output_padding: &[i64],
    groups: i64,
    dilation: &[i64],
) -> Result<Tensor> {
    conv_transpose_nd(
        "conv_transpose3d",
        3,
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )
}

#[cfg(test)]
mod tests {
    use super::same_padding_lr;

    #[test]
    fn same_padding_is_symmetric_where_it_can_be() {
        assert_eq!(same_padding_lr(10, 3, 1, 1), (1, 1));
        assert_eq!(same_padding_lr(10, 4, 1, 1), (1, 2));
        assert_eq!(same_padding_lr(10, 3, 1, 2), (2, 2));
    }
}
