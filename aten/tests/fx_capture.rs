//! `make_fx`: capture of a closure's operator calls, printed as FX prints
//! `graph_module.code`, replayed on new inputs, under FakeTensor.

use std::sync::Arc;

use aten::boxing::IValue;
use aten::c10::device::DeviceType;
use aten::fx::make_fx;
use aten::torch_ops::fake::{is_fake, FakeTensorMode};
use aten::torch_ops::push_mode;
use aten::{ops, Device, Result, ScalarType, Tensor};

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
    aten::ops_root();
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
    aten::ops_root();
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
    aten::ops_root();
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
