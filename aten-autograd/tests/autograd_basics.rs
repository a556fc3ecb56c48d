//! The autograd layer end to end: recording, backward, accumulation,
//! `grad`, modes, in-place and view rules, and PyTorch's errors.

mod support;

use aten_autograd::{self as autograd, TensorAutograd};
use aten_core::ops;
use aten_core::Tensor;

fn t(v: &[f64], sizes: &[i64]) -> Tensor {
    support::dispatcher();
    Tensor::from_slice(v, sizes).unwrap()
}

fn leaf(v: &[f64], sizes: &[i64]) -> Tensor {
    t(v, sizes).requires_grad_(true).unwrap()
}

fn vals(t: &Tensor) -> Vec<f64> {
    ops::contiguous(t).unwrap().to_vec::<f64>().unwrap()
}

#[test]
fn mul_add_backward_accumulates_into_leaves() {
    let x = leaf(&[1.0, 2.0, 3.0], &[3]);
    let y = leaf(&[4.0, 5.0, 6.0], &[3]);
    let z = ops::add_tensor(&ops::mul_tensor(&x, &y).unwrap(), &x).unwrap();
    assert!(z.requires_grad() && !z.is_leaf());
    assert_eq!(z.grad_fn().unwrap().name(), "AddBackward0");
    let s = ops::sum(&z).unwrap();
    s.backward().unwrap();
    assert_eq!(vals(&x.grad().unwrap()), vec![5.0, 6.0, 7.0]);
    assert_eq!(vals(&y.grad().unwrap()), vec![1.0, 2.0, 3.0]);
    // A second graph accumulates.
    let s2 = ops::sum(&ops::mul_tensor(&x, &x).unwrap()).unwrap();
    s2.backward().unwrap();
    assert_eq!(vals(&x.grad().unwrap()), vec![7.0, 10.0, 13.0]);
}

#[test]
fn broadcast_gradients_are_summed_to_the_input_shape() {
    let x = leaf(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let b = leaf(&[1.0, 1.0, 1.0], &[3]);
    let y = ops::mul_tensor(&x, &b).unwrap();
    let g = autograd::grad(
        &[ops::sum(&y).unwrap()],
        std::slice::from_ref(&b),
        &[],
        None,
        false,
        false,
    )
    .unwrap();
    assert_eq!(vals(g[0].as_ref().unwrap()), vec![5.0, 7.0, 9.0]);
    assert!(b.grad().is_none(), "grad() leaves .grad alone");
}

#[test]
fn errors_match_pytorch() {
    let x = leaf(&[1.0, 2.0], &[2]);
    let e = ops::add_tensor_(&x, &t(&[1.0, 1.0], &[2])).unwrap_err();
    assert!(
        e.to_string()
            .contains("a leaf Variable that requires grad is being used in an in-place operation."),
        "{e}"
    );
    let plain = t(&[1.0], &[1]);
    let e = plain.backward().unwrap_err();
    assert!(
        e.to_string()
            .contains("element 0 of tensors does not require grad and does not have a grad_fn"),
        "{e}"
    );
    let ints = Tensor::from_slice(&[1i64, 2], &[2]).unwrap();
    let e = ints.requires_grad_(true).unwrap_err();
    assert!(e
        .to_string()
        .contains("only Tensors of floating point dtype can require gradients"));
    let out = t(&[0.0, 0.0], &[2]);
    let e = ops::add_out(&x, &x, c10_core::Scalar::Int(1), &out).unwrap_err();
    assert!(
        e.to_string().contains(
            "add(): functions with out=... arguments don't support automatic differentiation"
        ),
        "{e}"
    );
}

#[test]
fn freed_graph_and_modified_saved_tensor_are_errors() {
    let x = leaf(&[1.0, 2.0], &[2]);
    let y = ops::exp(&x).unwrap();
    let s = ops::sum(&y).unwrap();
    s.backward_with(None, Some(false), false).unwrap();
    let e = s.backward().unwrap_err();
    assert!(
        e.to_string()
            .starts_with("Trying to backward through the graph a second time"),
        "{e}"
    );

    let a = leaf(&[1.0, 2.0], &[2]);
    let b = ops::mul_scalar(&a, c10_core::Scalar::Int(2)).unwrap();
    let c = ops::exp(&b).unwrap();
    ops::add_tensor_(&c, &t(&[1.0, 1.0], &[2])).unwrap();
    let e = ops::sum(&c).unwrap().backward().unwrap_err();
    assert!(
        e.to_string().contains("one of the variables needed for gradient computation has been modified by an inplace operation: [torch.DoubleTensor [2]], which is output 0 of ExpBackward0, is at version 1; expected version 0 instead."),
        "{e}"
    );
}

#[test]
fn no_grad_and_inference_mode_record_nothing() {
    let x = leaf(&[1.0, 2.0], &[2]);
    {
        let _g = autograd::no_grad();
        let y = ops::mul_tensor(&x, &x).unwrap();
        assert!(!y.requires_grad());
    }
    {
        let _i = autograd::inference_mode();
        let y = ops::mul_tensor(&x, &x).unwrap();
        assert!(!y.requires_grad() && y.is_inference());
    }
    let y = ops::mul_tensor(&x, &x).unwrap();
    assert!(y.requires_grad());
}

#[test]
fn double_backward() {
    let x = leaf(&[1.0, 2.0, 3.0], &[3]);
    let y = ops::sum(&ops::mul_tensor(&ops::mul_tensor(&x, &x).unwrap(), &x).unwrap()).unwrap();
    let g = autograd::grad(&[y], std::slice::from_ref(&x), &[], None, true, false).unwrap();
    let g = g[0].clone().unwrap();
    assert_eq!(vals(&g), vec![3.0, 12.0, 27.0]);
    let gg = autograd::grad(
        &[ops::sum(&g).unwrap()],
        std::slice::from_ref(&x),
        &[],
        None,
        false,
        false,
    )
    .unwrap();
    assert_eq!(vals(gg[0].as_ref().unwrap()), vec![6.0, 12.0, 18.0]);
}

#[test]
fn in_place_on_a_view_rebases_the_base() {
    let x = leaf(&[1.0, 2.0, 3.0, 4.0], &[4]);
    let base = ops::mul_scalar(&x, c10_core::Scalar::Int(1)).unwrap();
    let v = ops::slice_tensor_with(
        &base,
        ops::SliceTensorOptions {
            dim: 0,
            start: Some(1),
            end: Some(3),
            step: 1,
        },
    )
    .unwrap();
    ops::mul_tensor_(&v, &t(&[10.0, 10.0], &[2])).unwrap();
    assert_eq!(base.grad_fn().unwrap().name(), "CopySlices");
    ops::sum(&base).unwrap().backward().unwrap();
    assert_eq!(vals(&x.grad().unwrap()), vec![1.0, 10.0, 10.0, 1.0]);
}

#[test]
fn hooks_and_retain_grad() {
    let x = leaf(&[1.0, 2.0], &[2]);
    let y = ops::mul_scalar(&x, c10_core::Scalar::Int(3)).unwrap();
    y.retain_grad().unwrap();
    let _h = x
        .register_hook(|g| Ok(Some(ops::mul_scalar(g, c10_core::Scalar::Int(2))?)))
        .unwrap();
    ops::sum(&y).unwrap().backward().unwrap();
    assert_eq!(vals(&y.grad().unwrap()), vec![1.0, 1.0]);
    assert_eq!(vals(&x.grad().unwrap()), vec![6.0, 6.0]);
}

#[test]
fn inference_tensors_follow_pytorch_rules() {
    let made = {
        let _i = autograd::inference_mode();
        let t = t(&[1.0, 2.0], &[2]);
        // In place inside inference mode is fine.
        ops::add_tensor_(&t, &t).unwrap();
        t
    };
    assert!(made.is_inference());
    let e = ops::exp_(&made).unwrap_err();
    assert!(
        e.to_string()
            .contains("Inplace update to inference tensor outside InferenceMode is not allowed"),
        "{e}"
    );
    let e = made.requires_grad_(true).unwrap_err();
    assert!(
        e.to_string().contains(
            "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
        ),
        "{e}"
    );
    let w = leaf(&[3.0, 4.0], &[2]);
    let e = ops::mul_tensor(&made, &w).unwrap_err();
    assert!(
        e.to_string()
            .contains("Inference tensors cannot be saved for backward"),
        "{e}"
    );
    // A normal tensor's version moves with in-place writes, at ADInplaceOrView.
    let n = t(&[1.0], &[1]);
    assert_eq!(n.version(), 0);
    ops::add_tensor_(&n, &n).unwrap();
    assert_eq!(n.version(), 1);
}

#[test]
fn a_leaf_hook_may_run_a_backward_pass_through_the_same_leaf() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let x = leaf(&[1.0, 2.0], &[2]);
    let calls = Arc::new(AtomicUsize::new(0));
    let (inner_x, inner_calls) = (x.clone(), Arc::clone(&calls));
    let _h = x
        .register_hook(move |_g| {
            if inner_calls.fetch_add(1, Ordering::SeqCst) == 0 {
                // Backward runs without grad mode, as PyTorch's does.
                let _grad = autograd::enable_grad();
                let y = ops::sum(&ops::mul_scalar(&inner_x, c10_core::Scalar::Int(10))?)?;
                y.backward()?;
            }
            Ok(None)
        })
        .unwrap();
    ops::sum(&x).unwrap().backward().unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(vals(&x.grad().unwrap()), vec![11.0, 11.0]);
}

#[test]
fn accumulating_never_writes_a_gradient_the_caller_holds() {
    let x = leaf(&[1.0, 2.0], &[2]);
    let g = t(&[5.0, 7.0], &[2]);
    // Identity-like graph: the first gradient reaching x is g itself.
    let y = ops::clone(&x).unwrap();
    y.backward_with(Some(g.clone()), None, true).unwrap();
    y.backward_with(Some(g.clone()), None, false).unwrap();
    assert_eq!(vals(&g), vec![5.0, 7.0]);
    assert_eq!(vals(&x.grad().unwrap()), vec![10.0, 14.0]);
    let z = ops::clone(&x).unwrap();
    let h = t(&[1.0, 1.0], &[2]);
    z.backward_with(Some(h.clone()), None, false).unwrap();
    assert_eq!(vals(&h), vec![1.0, 1.0]);
}

#[test]
fn threads_share_a_leaf_and_lose_no_gradient() {
    // Two threads record on one leaf and run backward concurrently: every
    // contribution reaches `.grad` (the accumulator is shared and updates
    // under one lock).
    let x = leaf(&[1.0, 2.0], &[2]);
    let rounds = 50;
    std::thread::scope(|s| {
        for k in 1..=2i64 {
            let x = x.clone();
            s.spawn(move || {
                for _ in 0..rounds {
                    let y =
                        ops::sum(&ops::mul_scalar(&x, c10_core::Scalar::Int(k)).unwrap()).unwrap();
                    y.backward().unwrap();
                }
            });
        }
    });
    let total = (rounds * 3) as f64;
    assert_eq!(vals(&x.grad().unwrap()), vec![total, total]);
}

#[test]
fn detach_shares_data_and_detach_in_place_leaves_the_graph() {
    let x = leaf(&[1.0, 2.0], &[2]);
    let d = ops::detach(&x).unwrap();
    assert!(!d.requires_grad() && d.grad_fn().is_none());
    ops::add_tensor_(&d, &t(&[1.0, 1.0], &[2])).unwrap();
    assert_eq!(vals(&x), vec![2.0, 3.0], "detach shares the data");

    let y = ops::mul_scalar(&x, c10_core::Scalar::Double(2.0)).unwrap();
    assert!(y.requires_grad());
    let same = ops::detach_(&y).unwrap();
    assert!(!y.requires_grad() && y.grad_fn().is_none() && y.is_leaf());
    assert!(!same.requires_grad());

    let y2 = ops::mul_scalar(&x, c10_core::Scalar::Double(1.0)).unwrap();
    let w = ops::slice_tensor_with(
        &y2,
        ops::SliceTensorOptions {
            end: Some(1),
            ..Default::default()
        },
    )
    .unwrap();
    let e = ops::detach_(&w).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("Can't detach views in-place. Use detach() instead."),
        "{e}"
    );
    assert!(
        w.requires_grad(),
        "a refused detach_ leaves the view in the graph"
    );
}
