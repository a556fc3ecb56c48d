//! `make_fx`: capture of a closure's operator calls, printed as FX prints
//! `graph_module.code`, replayed on new inputs, under FakeTensor.

mod support;

use std::sync::Arc;

use aten_autograd::TensorAutograd;
use aten_boxing::IValue;
use aten_core::ops;
use aten_core::Tensor;
use aten_fx::{make_fx, make_fx_with, MakeFxOptions};
use aten_ops::fake::{is_fake, FakeTensorMode};
use aten_ops::push_mode;
use c10_core::device::DeviceType;
use c10_core::Device;
use c10_core::Result;
use c10_core::ScalarType;

fn iv(t: &Tensor) -> IValue {
    IValue::Tensor(t.base().clone())
}

fn tensor_of(v: &IValue) -> Tensor {
    match v {
        IValue::Tensor(t) => Tensor::from_base(t.clone()),
        other => panic!("not a tensor: {other:?}"),
    }
}

fn program(inputs: &[IValue]) -> Result<Vec<IValue>> {
    let (x, y) = (tensor_of(&inputs[0]), tensor_of(&inputs[1]));
    let a = ops::add_tensor(&x, &y)?;
    let b = ops::mul_tensor(&a, &x)?;
    let c = ops::add_tensor_with(&b, &y, ops::AddTensorOptions { alpha: 2.into() })?;
    Ok(vec![iv(&ops::sum(&c)?), iv(&a)])
}

#[test]
fn a_captured_graph_prints_like_fx_and_replays() {
    support::ops_root();
    let x = Tensor::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    let y = Tensor::from_slice(&[3.0f32, 4.0], &[2]).unwrap();
    let g = make_fx(program, &["x", "y"], &[iv(&x), iv(&y)]).unwrap();
    assert_eq!(
        g.code(),
        "\n\n\ndef forward(self, x_1, y_1):\n    add = torch.ops.aten.add.Tensor(x_1, y_1)\n    mul = torch.ops.aten.mul.Tensor(add, x_1);  x_1 = None\n    add_1 = torch.ops.aten.add.Tensor(mul, y_1, alpha = 2);  mul = y_1 = None\n    sum_1 = torch.ops.aten.sum.default(add_1);  add_1 = None\n    return (sum_1, add)\n"
    );
    assert_eq!(
        g.called_operators(),
        vec![
            "aten.add.Tensor",
            "aten.mul.Tensor",
            "aten.add.Tensor",
            "aten.sum.default"
        ]
    );
    // Replay on new inputs gives what running the program does.
    let x2 = Tensor::from_slice(&[-1.0f32, 5.0], &[2]).unwrap();
    let y2 = Tensor::from_slice(&[0.5f32, 2.0], &[2]).unwrap();
    let replayed = g.run(&[iv(&x2), iv(&y2)]).unwrap();
    let eager = program(&[iv(&x2), iv(&y2)]).unwrap();
    for (r, e) in replayed.iter().zip(&eager) {
        assert_eq!(
            tensor_of(r).to_vec::<f32>().unwrap(),
            tensor_of(e).to_vec::<f32>().unwrap()
        );
    }
    assert!(g.run(&[iv(&x2)]).is_err());
}

#[test]
fn dtype_arguments_print_as_dtypes() {
    support::ops_root();
    let x = Tensor::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    let g = make_fx(
        |inputs| {
            let s = ops::sum_with(
                &tensor_of(&inputs[0]),
                ops::SumOptions {
                    dtype: Some(ScalarType::Double),
                },
            )?;
            Ok(vec![iv(&s)])
        },
        &["x"],
        &[iv(&x)],
    )
    .unwrap();
    assert_eq!(
        g.code(),
        "\n\n\ndef forward(self, x_1):\n    sum_1 = torch.ops.aten.sum.default(x_1, dtype = torch.float64);  x_1 = None\n    return sum_1\n"
    );
}

#[test]
fn capture_under_fake_tensors_needs_no_data() {
    support::ops_root();
    let fake = FakeTensorMode::new();
    let cuda = Device::new(DeviceType::CUDA, 0);
    let x = Tensor::from_base(fake.fake_tensor(&[8, 4], ScalarType::Float, cuda).unwrap());
    let w = Tensor::from_base(fake.fake_tensor(&[4, 2], ScalarType::Float, cuda).unwrap());
    let _fake = push_mode(Arc::clone(&fake) as _);
    let g = make_fx(
        |inputs| {
            let h = ops::mm(&tensor_of(&inputs[0]), &tensor_of(&inputs[1]))?;
            let r = ops::relu(&h)?;
            assert!(is_fake(r.base()) && r.device() == Some(cuda));
            Ok(vec![iv(&r)])
        },
        &["x", "w"],
        &[iv(&x), iv(&w)],
    )
    .unwrap();
    assert_eq!(
        g.code(),
        "\n\n\ndef forward(self, x_1, w_1):\n    mm = torch.ops.aten.mm.default(x_1, w_1);  x_1 = w_1 = None\n    relu = torch.ops.aten.relu.default(mm);  mm = None\n    return relu\n"
    );
}

#[test]
fn capture_of_autograd_grad_records_forward_and_backward() {
    support::ops_root();
    let program = |inputs: &[IValue]| -> Result<Vec<IValue>> {
        let x = tensor_of(&inputs[0]);
        let y = ops::mul_tensor(&ops::mul_tensor(&x, &x)?, &ops::cos(&x)?)?;
        let seed = ops::ones_like(&y)?;
        let g = aten_autograd::grad(&[y], &[x], &[Some(seed)], None, false, false)?;
        Ok(vec![iv(g[0].as_ref().expect("x is used"))])
    };
    let x = Tensor::from_slice(&[0.5f32, -1.0, 2.0], &[3]).unwrap();
    x.requires_grad_(true).unwrap();
    let g = make_fx(program, &["x"], &[iv(&x)]).unwrap();
    let called = g.called_operators();
    // The forward, the seed, and the backward: d(x²·cos x) = 2x·cos x − x²·sin x.
    assert_eq!(
        &called[..4],
        [
            "aten.mul.Tensor",
            "aten.cos.default",
            "aten.mul.Tensor",
            "aten.ones_like.default"
        ]
    );
    assert!(
        called.contains(&"aten.sin.default".to_string()),
        "{called:?}"
    );
    assert!(called.len() > 6, "{called:?}");
    // Replayed on new inputs (no autograd needed), the graph gives the
    // gradient autograd computes.
    let x2 = Tensor::from_slice(&[1.5f32, 0.25, -3.0], &[3]).unwrap();
    let replayed = g.run(&[iv(&x2)]).unwrap();
    x2.requires_grad_(true).unwrap();
    let eager = program(&[iv(&x2)]).unwrap();
    let (r, e) = (
        tensor_of(&replayed[0]).to_vec::<f32>().unwrap(),
        tensor_of(&eager[0]).to_vec::<f32>().unwrap(),
    );
    for (a, b) in r.iter().zip(&e) {
        assert!((a - b).abs() < 1e-5, "{r:?} vs {e:?}");
    }
}

#[test]
fn pre_dispatch_capture_records_operators_before_decomposition() {
    support::ops_root();
    let program = |inputs: &[IValue]| -> Result<Vec<IValue>> {
        let b = support::ops_root().overload("aten::ones")?.call(
            &[IValue::IntList(Arc::new(vec![4, 4]))],
            &[
                ("device", IValue::device(Device::CPU)),
                ("pin_memory", IValue::bool(false)),
            ],
        )?;
        Ok(vec![iv(&ops::matmul(
            &tensor_of(&inputs[0]),
            &tensor_of(&b[0]),
        )?)])
    };
    let a = Tensor::from_slice(&[1.0f32; 16], &[4, 4]).unwrap();
    let g = make_fx_with(
        program,
        &["a"],
        &[iv(&a)],
        MakeFxOptions { pre_dispatch: true },
    )
    .unwrap();
    assert_eq!(
        g.code(),
        "\n\n\ndef forward(self, a_1):\n    ones = torch.ops.aten.ones.default([4, 4], device = device(type='cpu'), pin_memory = False)\n    matmul = torch.ops.aten.matmul.default(a_1, ones);  a_1 = ones = None\n    return matmul\n"
    );
    // Below autograd, matmul has been decomposed.
    let below = make_fx(program, &["a"], &[iv(&a)]).unwrap();
    assert!(below
        .called_operators()
        .contains(&"aten.mm.default".to_string()));
    assert!(!below
        .called_operators()
        .contains(&"aten.matmul.default".to_string()));
    // Both replay to the eager result.
    let x = Tensor::from_slice(&(0..16).map(|i| i as f32).collect::<Vec<_>>(), &[4, 4]).unwrap();
    let eager = tensor_of(&program(&[iv(&x)]).unwrap()[0])
        .to_vec::<f32>()
        .unwrap();
    for graph in [&g, &below] {
        assert_eq!(
            tensor_of(&graph.run(&[iv(&x)]).unwrap()[0])
                .to_vec::<f32>()
                .unwrap(),
            eager
        );
    }
}

#[test]
fn cond_is_one_node_with_its_branches_as_subgraphs() {
    use aten_ops::higher_order::cond;
    use aten_ops::GraphFn;
    support::ops_root();
    fn branch(f: fn(&Tensor) -> Result<Tensor>) -> GraphFn {
        Arc::new(move |xs: &[IValue]| Ok(vec![iv(&f(&tensor_of(&xs[0]))?)]))
    }
    let program = |inputs: &[IValue]| -> Result<Vec<IValue>> {
        let a = cond(
            &inputs[1],
            branch(|y| ops::mul_tensor(y, y)),
            branch(|y| ops::add_tensor(y, y)),
            &inputs[..1],
        )?;
        let b = cond(
            &inputs[2],
            branch(|y| ops::add_tensor(y, y)),
            branch(|y| ops::mul_tensor(y, y)),
            &inputs[..1],
        )?;
        Ok(vec![iv(&ops::add_tensor(
            &tensor_of(&a[0]),
            &tensor_of(&b[0]),
        )?)])
    };
    let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    let f = Tensor::from_slice(&[false], &[]).unwrap();
    let f2 = Tensor::from_slice(&[false], &[]).unwrap();
    let g = make_fx(program, &["x", "pred", "pred2"], &[iv(&x), iv(&f), iv(&f2)]).unwrap();
    assert_eq!(
        g.code(),
        "


def forward(self, x_1, pred_1, pred2_1):
    true_graph_0 = self.true_graph_0
    false_graph_0 = self.false_graph_0
    cond = torch.ops.higher_order.cond(pred_1, true_graph_0, false_graph_0, (x_1,));  pred_1 = true_graph_0 = false_graph_0 = None
    getitem = cond[0];  cond = None
    true_graph_1 = self.true_graph_1
    false_graph_1 = self.false_graph_1
    cond_1 = torch.ops.higher_order.cond(pred2_1, true_graph_1, false_graph_1, (x_1,));  pred2_1 = true_graph_1 = false_graph_1 = x_1 = None
    getitem_1 = cond_1[0];  cond_1 = None
    add = torch.ops.aten.add.Tensor(getitem, getitem_1);  getitem = getitem_1 = None
    return add
"
    );
    assert_eq!(
        g.subgraph("true_graph_0").unwrap().code(),
        "\n\n\ndef forward(self, arg0_1):\n    mul = torch.ops.aten.mul.Tensor(arg0_1, arg0_1);  arg0_1 = None\n    return (mul,)\n"
    );
    // Replayed with the other predicates, the other branches run.
    let t = Tensor::from_slice(&[true], &[]).unwrap();
    for (p, q) in [(&t, &f), (&f, &t), (&t, &t)] {
        let replayed = g.run(&[iv(&x), iv(p), iv(q)]).unwrap();
        let eager = program(&[iv(&x), iv(p), iv(q)]).unwrap();
        assert_eq!(
            tensor_of(&replayed[0]).to_vec::<f32>().unwrap(),
            tensor_of(&eager[0]).to_vec::<f32>().unwrap()
        );
    }
}

#[test]
fn while_loop_and_map_are_nodes_with_subgraphs_and_replay() {
    use aten_ops::higher_order::{map, while_loop};
    use aten_ops::GraphFn;
    support::ops_root();
    let program = |inputs: &[IValue]| -> Result<Vec<IValue>> {
        // Doubles x until its sum passes the limit, then adds y to each row.
        let cond_fn: GraphFn = Arc::new(|xs: &[IValue]| {
            let s = ops::sum(&tensor_of(&xs[0]))?;
            Ok(vec![iv(&ops::lt_tensor(&s, &tensor_of(&xs[1]))?)])
        });
        let body_fn: GraphFn = Arc::new(|xs: &[IValue]| {
            let x = tensor_of(&xs[0]);
            Ok(vec![iv(&ops::add_tensor(&x, &x)?), xs[1].clone()])
        });
        let looped = while_loop(cond_fn, body_fn, &inputs[..2])?;
        let row_fn: GraphFn = Arc::new(|xs: &[IValue]| {
            Ok(vec![iv(&ops::mul_tensor(
                &tensor_of(&xs[0]),
                &tensor_of(&xs[1]),
            )?)])
        });
        map(row_fn, &looped[..1], &inputs[2..])
    };
    let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let limit = Tensor::from_slice(&[30.0f32], &[]).unwrap();
    let y = Tensor::from_slice(&[10.0f32, 100.0], &[2]).unwrap();
    let g = make_fx(program, &["x", "limit", "y"], &[iv(&x), iv(&limit), iv(&y)]).unwrap();
    let code = g.code();
    assert!(code.contains("    while_loop_cond_graph_0 = self.while_loop_cond_graph_0\n    while_loop_body_graph_0 = self.while_loop_body_graph_0\n    while_loop = torch.ops.higher_order.while_loop(while_loop_cond_graph_0, while_loop_body_graph_0, (x_1, limit_1), ());"), "{code}");
    assert!(code.contains("    getitem = while_loop[0]"), "{code}");
    assert!(code.contains("    body_graph_0 = self.body_graph_0\n    map_impl = torch.ops.higher_order.map_impl(body_graph_0, [getitem], [y_1]);"), "{code}");
    assert_eq!(
        g.subgraph("body_graph_0").unwrap().code(),
        "\n\n\ndef forward(self, arg0_1, arg1_1):\n    mul = torch.ops.aten.mul.Tensor(arg0_1, arg1_1);  arg0_1 = arg1_1 = None\n    return (mul,)\n"
    );
    for (x, limit) in [
        (&x, 5.0f32),
        (&x, 1000.0),
        (&ops::mul_tensor(&x, &x).unwrap(), 50.0),
    ] {
        let limit = Tensor::from_slice(&[limit], &[]).unwrap();
        let inputs = [iv(x), iv(&limit), iv(&y)];
        let replayed = g.run(&inputs).unwrap();
        let eager = program(&inputs).unwrap();
        assert_eq!(
            tensor_of(&replayed[0]).to_vec::<f32>().unwrap(),
            tensor_of(&eager[0]).to_vec::<f32>().unwrap()
        );
    }
}

#[test]
fn list_results_are_bound_by_getitem_and_replay() {
    support::ops_root();
    let program = |inputs: &[IValue]| -> Result<Vec<IValue>> {
        let parts = ops::split_tensor(&tensor_of(&inputs[0]), 2)?;
        Ok(vec![iv(&ops::mul_tensor(&parts[0], &parts[1])?)])
    };
    let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    let g = make_fx(program, &["x"], &[iv(&x)]).unwrap();
    assert_eq!(
        g.code(),
        "\n\n\ndef forward(self, x_1):\n    split = torch.ops.aten.split.Tensor(x_1, 2);  x_1 = None\n    getitem = split[0]\n    getitem_1 = split[1];  split = None\n    mul = torch.ops.aten.mul.Tensor(getitem, getitem_1);  getitem = getitem_1 = None\n    return mul\n"
    );
    let y = Tensor::from_slice(&[5.0f32, 6.0, 7.0, 8.0], &[4]).unwrap();
    assert_eq!(
        tensor_of(&g.run(&[iv(&y)]).unwrap()[0])
            .to_vec::<f32>()
            .unwrap(),
        vec![35.0, 48.0]
    );
}

#[test]
fn cond_is_captured_functionalized_and_at_pre_dispatch() {
    use aten_ops::higher_order::cond;
    use aten_ops::{functionalize, GraphFn, Remove};
    support::ops_root();
    // The true branch writes into a tensor it made.
    let program = |inputs: &[IValue]| -> Result<Vec<IValue>> {
        let t: GraphFn = Arc::new(|xs: &[IValue]| {
            let y = ops::clone(&tensor_of(&xs[0]))?;
            ops::mul_tensor_(
                &ops::select_int(&y, 0, 0)?,
                &Tensor::from_slice(&[5.0f32], &[1])?,
            )?;
            Ok(vec![iv(&y)])
        });
        let f: GraphFn = Arc::new(|xs: &[IValue]| {
            Ok(vec![iv(&ops::matmul(
                &tensor_of(&xs[0]),
                &tensor_of(&xs[0]),
            )?)])
        });
        cond(&inputs[1], t, f, &inputs[..1])
    };
    let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let p = Tensor::from_slice(&[true], &[]).unwrap();
    let g = make_fx(
        |xs| functionalize(program, xs, Remove::MutationsAndViews),
        &["x", "p"],
        &[iv(&x), iv(&p)],
    )
    .unwrap();
    assert!(
        g.code().contains(
            "cond = torch.ops.higher_order.cond(p_1, true_graph_0, false_graph_0, (x_1,))"
        ),
        "{}",
        g.code()
    );
    let true_graph = g.subgraph("true_graph_0").unwrap().called_operators();
    assert!(
        true_graph.contains(&"aten.select_scatter.default".to_string()),
        "{true_graph:?}"
    );
    assert!(
        !true_graph.iter().any(|op| op.contains("mul_")),
        "{true_graph:?}"
    );
    // At pre-dispatch, the branches keep matmul.
    let pre = make_fx_with(
        program,
        &["x", "p"],
        &[iv(&x), iv(&p)],
        MakeFxOptions { pre_dispatch: true },
    )
    .unwrap();
    let false_graph = pre.subgraph("false_graph_0").unwrap().called_operators();
    assert_eq!(false_graph, vec!["aten.matmul.default"]);
    for pred in [true, false] {
        let p = Tensor::from_slice(&[pred], &[]).unwrap();
        let eager = tensor_of(&program(&[iv(&x), iv(&p)]).unwrap()[0])
            .to_vec::<f32>()
            .unwrap();
        for graph in [&g, &pre] {
            let replayed = graph.run(&[iv(&x), iv(&p)]).unwrap();
            assert_eq!(tensor_of(&replayed[0]).to_vec::<f32>().unwrap(), eager);
        }
    }
    // A branch writing to its input is refused under functionalization.
    let writes_input: GraphFn = Arc::new(|xs: &[IValue]| {
        ops::add_tensor_(&tensor_of(&xs[0]), &tensor_of(&xs[0]))?;
        Ok(vec![xs[0].clone()])
    });
    let err = functionalize(
        |xs| {
            cond(
                &xs[1],
                Arc::clone(&writes_input),
                Arc::clone(&writes_input),
                &xs[..1],
            )
        },
        &[iv(&ops::clone(&x).unwrap()), iv(&p)],
        Remove::Mutations,
    )
    .unwrap_err();
    assert!(
        err.message().contains("might be modifying the input"),
        "{}",
        err.message()
    );
}
