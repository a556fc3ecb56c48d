//! `gradcheck` (first derivatives against finite differences, float64) over
//! every differentiable operator this project registers, and
//! `gradgradcheck` (second derivatives) where the backward formulas are
//! themselves differentiable. Inputs avoid the points where an operator is
//! not differentiable (ties, zeros of `abs`, bounds of `clamp`).

mod support;

use aten_autograd::gradcheck::{gradcheck, gradgradcheck, GradcheckOptions};
use aten_autograd::TensorAutograd;
use aten_core::ops;
use aten_core::Tensor;
use c10_core::Result;
use c10_core::Scalar;

/// Deterministic values in (-1, 1), no two equal, none near 0.
fn values(n: usize, seed: u64) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let h = ((i as u64 + 1) * 2654435761 + seed * 40503) % 1000;
            let v = (h as f64 / 1000.0) * 1.6 - 0.8;
            let v = if v.abs() < 0.1 { v + 0.25 } else { v };
            v + i as f64 * 1e-3
        })
        .collect()
}

fn x(shape: &[i64], seed: u64) -> Tensor {
    support::dispatcher();
    let n = shape.iter().product::<i64>() as usize;
    Tensor::from_vec(values(n, seed), shape)
        .unwrap()
        .requires_grad_(true)
        .unwrap()
}

/// Positive values (for `log`, `sqrt`, ...).
fn pos(shape: &[i64], seed: u64) -> Tensor {
    let n = shape.iter().product::<i64>() as usize;
    let v: Vec<f64> = values(n, seed).into_iter().map(|v| v.abs() + 0.5).collect();
    Tensor::from_vec(v, shape)
        .unwrap()
        .requires_grad_(true)
        .unwrap()
}

fn long(v: &[i64], shape: &[i64]) -> Tensor {
    Tensor::from_slice(v, shape).unwrap()
}

/// A function under test.
type TestFn = Box<dyn Fn(&[Tensor]) -> Result<Vec<Tensor>>>;

/// Name, function, inputs, and whether to check second derivatives.
type Case = (&'static str, TestFn, Vec<Tensor>, bool);

fn one(f: impl Fn(&[Tensor]) -> Result<Tensor> + 'static) -> TestFn {
    Box::new(move |t| Ok(vec![f(t)?]))
}

fn cases() -> Vec<Case> {
    let mask = Tensor::from_slice(&[true, false, true, false, false, true], &[2, 3]).unwrap();
    let m2 = mask.clone();
    let idx = long(&[2, 0, 2], &[3]);
    let gidx = long(&[0, 2, 1, 1, 0, 2], &[2, 3]);
    let target = long(&[1, 0, 2, 1], &[4]);
    let emb_idx = long(&[1, 3, 1, 0], &[2, 2]);
    let (i1, i2, t1, e1) = (idx.clone(), gidx.clone(), target.clone(), emb_idx.clone());
    vec![
        (
            "add.Tensor",
            one(|t| {
                ops::add_tensor_with(
                    &t[0],
                    &t[1],
                    ops::AddTensorOptions {
                        alpha: Scalar::Double(2.0),
                    },
                )
            }),
            vec![x(&[2, 3], 1), x(&[3], 2)],
            true,
        ),
        (
            "sub.Tensor",
            one(|t| ops::sub_tensor(&t[0], &t[1])),
            vec![x(&[2, 3], 1), x(&[2, 1], 2)],
            true,
        ),
        (
            "mul.Tensor",
            one(|t| ops::mul_tensor(&t[0], &t[1])),
            vec![x(&[2, 3], 1), x(&[2, 3], 2)],
            true,
        ),
        (
            "div.Tensor",
            one(|t| ops::div_tensor(&t[0], &t[1])),
            vec![x(&[2, 3], 1), pos(&[2, 3], 2)],
            true,
        ),
        (
            "mul.Scalar",
            one(|t| ops::mul_scalar(&t[0], Scalar::Double(1.5))),
            vec![x(&[4], 1)],
            true,
        ),
        (
            "div.Scalar",
            one(|t| ops::div_scalar(&t[0], Scalar::Double(1.5))),
            vec![x(&[4], 1)],
            true,
        ),
        (
            "pow.Tensor_Scalar",
            one(|t| ops::pow_tensor_scalar(&t[0], Scalar::Double(2.5))),
            vec![pos(&[4], 1)],
            true,
        ),
        (
            "pow.Tensor_Tensor",
            one(|t| ops::pow_tensor_tensor(&t[0], &t[1])),
            vec![pos(&[4], 1), x(&[4], 2)],
            true,
        ),
        (
            "atan2",
            one(|t| ops::atan2(&t[0], &t[1])),
            vec![x(&[4], 1), pos(&[4], 2)],
            true,
        ),
        (
            "maximum",
            one(|t| ops::maximum(&t[0], &t[1])),
            vec![x(&[4], 1), x(&[4], 7)],
            false,
        ),
        (
            "minimum",
            one(|t| ops::minimum(&t[0], &t[1])),
            vec![x(&[4], 1), x(&[4], 7)],
            false,
        ),
        (
            "lerp.Scalar",
            one(|t| ops::lerp_scalar(&t[0], &t[1], Scalar::Double(0.3))),
            vec![x(&[4], 1), x(&[4], 2)],
            true,
        ),
        (
            "where.self",
            one(move |t| ops::where_self(&mask, &t[0], &t[1])),
            vec![x(&[2, 3], 1), x(&[2, 3], 2)],
            true,
        ),
        (
            "masked_fill.Scalar",
            one(move |t| ops::masked_fill_scalar(&t[0], &m2, Scalar::Double(0.0))),
            vec![x(&[2, 3], 1)],
            true,
        ),
        (
            "clamp",
            one(|t| {
                ops::clamp_with(
                    &t[0],
                    ops::ClampOptions {
                        min: Some(Scalar::Double(-0.5)),
                        max: Some(Scalar::Double(0.55)),
                    },
                )
            }),
            vec![x(&[6], 3)],
            false,
        ),
        ("neg", one(|t| ops::neg(&t[0])), vec![x(&[4], 1)], true),
        ("abs", one(|t| ops::abs(&t[0])), vec![x(&[4], 1)], true),
        ("exp", one(|t| ops::exp(&t[0])), vec![x(&[4], 1)], true),
        ("expm1", one(|t| ops::expm1(&t[0])), vec![x(&[4], 1)], true),
        ("log", one(|t| ops::log(&t[0])), vec![pos(&[4], 1)], true),
        (
            "log1p",
            one(|t| ops::log1p(&t[0])),
            vec![pos(&[4], 1)],
            true,
        ),
        ("sqrt", one(|t| ops::sqrt(&t[0])), vec![pos(&[4], 1)], true),
        (
            "rsqrt",
            one(|t| ops::rsqrt(&t[0])),
            vec![pos(&[4], 1)],
            true,
        ),
        (
            "reciprocal",
            one(|t| ops::reciprocal(&t[0])),
            vec![pos(&[4], 1)],
            true,
        ),
        ("sin", one(|t| ops::sin(&t[0])), vec![x(&[4], 1)], true),
        ("cos", one(|t| ops::cos(&t[0])), vec![x(&[4], 1)], true),
        ("tanh", one(|t| ops::tanh(&t[0])), vec![x(&[4], 1)], true),
        (
            "sigmoid",
            one(|t| ops::sigmoid(&t[0])),
            vec![x(&[4], 1)],
            true,
        ),
        ("relu", one(|t| ops::relu(&t[0])), vec![x(&[4], 1)], true),
        ("gelu", one(|t| ops::gelu(&t[0])), vec![x(&[4], 1)], true),
        (
            "gelu tanh",
            one(|t| {
                ops::gelu_with(
                    &t[0],
                    ops::GeluOptions {
                        approximate: "tanh",
                    },
                )
            }),
            vec![x(&[4], 1)],
            true,
        ),
        ("silu", one(|t| ops::silu(&t[0])), vec![x(&[4], 1)], true),
        ("erf", one(|t| ops::erf(&t[0])), vec![x(&[4], 1)], true),
        (
            "square",
            one(|t| ops::square(&t[0])),
            vec![x(&[4], 1)],
            true,
        ),
        ("floor", one(|t| ops::floor(&t[0])), vec![x(&[4], 1)], false),
        ("sum", one(|t| ops::sum(&t[0])), vec![x(&[2, 3], 1)], true),
        (
            "sum.dim_IntList",
            one(|t| ops::sum_dim_intlist(&t[0], Some(&[1]))),
            vec![x(&[2, 3], 1)],
            true,
        ),
        (
            "mean.dim",
            one(|t| {
                ops::mean_dim_with(
                    &t[0],
                    Some(&[0]),
                    ops::MeanDimOptions {
                        keepdim: true,
                        dtype: None,
                    },
                )
            }),
            vec![x(&[2, 3], 1)],
            true,
        ),
        ("prod", one(|t| ops::prod(&t[0])), vec![x(&[4], 1)], true),
        (
            "amax",
            one(|t| {
                ops::amax_with(
                    &t[0],
                    ops::AmaxOptions {
                        dim: &[1],
                        keepdim: false,
                    },
                )
            }),
            vec![x(&[2, 3], 1)],
            true,
        ),
        (
            "amin",
            one(|t| {
                ops::amin_with(
                    &t[0],
                    ops::AminOptions {
                        dim: &[0],
                        keepdim: true,
                    },
                )
            }),
            vec![x(&[2, 3], 1)],
            true,
        ),
        (
            "max.dim",
            Box::new(|t: &[Tensor]| Ok(vec![ops::max_dim(&t[0], 1)?.0])),
            vec![x(&[2, 3], 1)],
            true,
        ),
        (
            "logsumexp",
            one(|t| ops::logsumexp(&t[0], &[1])),
            vec![x(&[2, 3], 1)],
            true,
        ),
        (
            "var.correction",
            one(|t| {
                ops::var_correction_with(
                    &t[0],
                    ops::VarCorrectionOptions {
                        dim: Some(&[1]),
                        correction: None,
                        keepdim: false,
                    },
                )
            }),
            vec![x(&[2, 3], 1)],
            true,
        ),
        (
            "cumsum",
            one(|t| ops::cumsum(&t[0], 1)),
            vec![x(&[2, 3], 1)],
            true,
        ),
        (
            "softmax.int",
            one(|t| ops::softmax_int(&t[0], 1)),
            vec![x(&[2, 3], 1)],
            true,
        ),
        (
            "log_softmax.int",
            one(|t| ops::log_softmax_int(&t[0], 0)),
            vec![x(&[2, 3], 1)],
            true,
        ),
        (
            "mm",
            one(|t| ops::mm(&t[0], &t[1])),
            vec![x(&[2, 3], 1), x(&[3, 2], 2)],
            true,
        ),
        (
            "bmm",
            one(|t| ops::bmm(&t[0], &t[1])),
            vec![x(&[2, 2, 3], 1), x(&[2, 3, 2], 2)],
            true,
        ),
        (
            "addmm",
            one(|t| {
                ops::addmm_with(
                    &t[0],
                    &t[1],
                    &t[2],
                    ops::AddmmOptions {
                        beta: Scalar::Double(0.5),
                        alpha: Scalar::Double(2.0),
                    },
                )
            }),
            vec![x(&[2], 3), x(&[2, 3], 1), x(&[3, 2], 2)],
            true,
        ),
        (
            "dot",
            one(|t| ops::dot(&t[0], &t[1])),
            vec![x(&[3], 1), x(&[3], 2)],
            true,
        ),
        (
            "mv",
            one(|t| ops::mv(&t[0], &t[1])),
            vec![x(&[2, 3], 1), x(&[3], 2)],
            true,
        ),
        (
            "matmul",
            one(|t| ops::matmul(&t[0], &t[1])),
            vec![x(&[2, 2, 3], 1), x(&[3], 2)],
            true,
        ),
        (
            "linear",
            one(|t| ops::linear_with(&t[0], &t[1], ops::LinearOptions { bias: Some(&t[2]) })),
            vec![x(&[2, 3], 1), x(&[4, 3], 2), x(&[4], 3)],
            true,
        ),
        (
            "view/permute/transpose",
            one(|t| ops::transpose_int(&ops::permute(&ops::view(&t[0], &[3, 2])?, &[1, 0])?, 0, 1)),
            vec![x(&[2, 3], 1)],
            true,
        ),
        (
            "t/expand/unsqueeze/squeeze",
            one(|t| {
                ops::squeeze(&ops::unsqueeze(
                    &ops::expand(&ops::t(&t[0])?, &[2, 3, 2])?,
                    0,
                )?)
            }),
            vec![x(&[2, 3], 1)],
            true,
        ),
        (
            "slice/select/narrow",
            one(|t| {
                ops::select_int(
                    &ops::narrow(
                        &ops::slice_tensor_with(
                            &t[0],
                            ops::SliceTensorOptions {
                                dim: 1,
                                start: Some(0),
                                end: Some(3),
                                step: 2,
                            },
                        )?,
                        0,
                        1,
                        2,
                    )?,
                    1,
                    1,
                )
            }),
            vec![x(&[3, 4], 1)],
            true,
        ),
        (
            "as_strided",
            one(|t| {
                ops::as_strided_with(
                    &t[0],
                    &[2, 2],
                    &[1, 2],
                    ops::AsStridedOptions {
                        storage_offset: Some(1),
                    },
                )
            }),
            vec![x(&[6], 1)],
            true,
        ),
        (
            "split.Tensor",
            Box::new(|t: &[Tensor]| ops::split_tensor(&t[0], 2)),
            vec![x(&[5, 2], 1)],
            true,
        ),
        (
            "cat",
            one(|t| ops::cat_with(&[t[0].clone(), t[1].clone()], ops::CatOptions { dim: 1 })),
            vec![x(&[2, 3], 1), x(&[2, 1], 2)],
            true,
        ),
        (
            "stack",
            one(|t| ops::stack_with(&[t[0].clone(), t[1].clone()], ops::StackOptions { dim: 1 })),
            vec![x(&[2, 3], 1), x(&[2, 3], 2)],
            true,
        ),
        (
            "index_select",
            one(move |t| ops::index_select(&t[0], 0, &i1)),
            vec![x(&[3, 2], 1)],
            true,
        ),
        (
            "gather",
            one(move |t| ops::gather(&t[0], 1, &i2)),
            vec![x(&[2, 3], 1)],
            true,
        ),
        (
            "flip",
            one(|t| ops::flip(&t[0], &[0, 1])),
            vec![x(&[2, 3], 1)],
            true,
        ),
        (
            "repeat",
            one(|t| ops::repeat(&t[0], &[2, 1, 2])),
            vec![x(&[2, 3], 1)],
            true,
        ),
        (
            "tril/triu",
            one(|t| ops::triu(&ops::tril(&t[0])?)),
            vec![x(&[3, 3], 1)],
            true,
        ),
        (
            "clone/_to_copy",
            one(|t| ops::clone(&t[0])),
            vec![x(&[3], 1)],
            true,
        ),
        (
            "conv2d",
            one(|t| {
                ops::conv2d_with(
                    &t[0],
                    &t[1],
                    ops::Conv2dOptions {
                        bias: Some(&t[2]),
                        stride: &[2, 1],
                        padding: &[1, 0],
                        dilation: &[1, 2],
                        groups: 1,
                    },
                )
            }),
            vec![x(&[1, 2, 5, 5], 1), x(&[3, 2, 3, 2], 2), x(&[3], 3)],
            true,
        ),
        (
            "conv2d groups",
            one(|t| {
                ops::conv2d_with(
                    &t[0],
                    &t[1],
                    ops::Conv2dOptions {
                        bias: None,
                        stride: &[1, 1],
                        padding: &[1, 1],
                        dilation: &[1, 1],
                        groups: 2,
                    },
                )
            }),
            vec![x(&[1, 4, 3, 3], 1), x(&[2, 2, 2, 2], 2)],
            true,
        ),
        (
            "max_pool2d",
            one(|t| {
                ops::max_pool2d_with(
                    &t[0],
                    &[2, 2],
                    ops::MaxPool2dOptions {
                        stride: &[1, 1],
                        padding: &[0, 0],
                        dilation: &[1, 1],
                        ceil_mode: false,
                    },
                )
            }),
            vec![x(&[1, 1, 3, 3], 1)],
            true,
        ),
        (
            "layer_norm",
            one(|t| {
                ops::layer_norm_with(
                    &t[0],
                    &[3],
                    ops::LayerNormOptions {
                        weight: Some(&t[1]),
                        bias: Some(&t[2]),
                        eps: 1e-5,
                        cudnn_enable: true,
                    },
                )
            }),
            vec![x(&[2, 3], 1), x(&[3], 2), x(&[3], 3)],
            false,
        ),
        (
            "layer_norm input",
            one(|t| {
                ops::layer_norm_with(
                    &t[0],
                    &[3],
                    ops::LayerNormOptions {
                        weight: None,
                        bias: None,
                        eps: 1e-5,
                        cudnn_enable: true,
                    },
                )
            }),
            vec![x(&[2, 3], 1)],
            true,
        ),
        (
            "embedding",
            one(move |t| ops::embedding(&t[0], &e1)),
            vec![x(&[4, 3], 1)],
            true,
        ),
        (
            "mse_loss",
            one(|t| ops::mse_loss(&t[0], &t[1])),
            vec![x(&[2, 3], 1), x(&[2, 3], 2)],
            true,
        ),
        (
            "cross_entropy_loss",
            one(move |t| ops::cross_entropy_loss(&t[0], &t1)),
            vec![x(&[4, 3], 1)],
            true,
        ),
    ]
}

#[test]
fn gradients_match_finite_differences() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, f, inputs, double) in cases() {
        checked += 1;
        if let Err(e) = gradcheck(|t| f(t), &inputs, GradcheckOptions::default()) {
            failures.push(format!("{name}: {e}"));
            continue;
        }
        if double {
            if let Err(e) = gradgradcheck(|t| f(t), &inputs, GradcheckOptions::default()) {
                failures.push(format!("{name} (second derivatives): {e}"));
            }
        }
    }
    println!("{checked} operators checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn gradcheck_catches_a_wrong_gradient() {
    // A hook that doubles the gradient makes the Jacobian wrong.
    let x = x(&[3], 1);
    let e = gradcheck(
        |t| {
            let y = ops::mul_scalar(&t[0], Scalar::Int(3))?;
            y.register_hook(|g| Ok(Some(ops::mul_scalar(g, Scalar::Int(2))?)))?;
            Ok(vec![ops::sum(&y)?])
        },
        &[x],
        GradcheckOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("Jacobian mismatch"), "{e}");
}
