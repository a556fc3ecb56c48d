//! The trigonometric, hyperbolic and logarithmic float operators of the
//! Core ATen opset (`acos` ... `log10`): values against the standard
//! library in float64 and float32, integer inputs promoted to the default
//! float dtype, and the in-place and `out=` forms through `torch.ops`.

use aten::boxing::IValue;
use aten::{ops, ScalarType, Tensor};

fn call(name: &str, args: &[IValue]) -> IValue {
    let mut out = aten::ops_root()
        .overload(name)
        .unwrap()
        .call(args, &[])
        .unwrap();
    out.pop().unwrap()
}

fn tensor_of(v: &IValue) -> Tensor {
    match v {
        IValue::Tensor(t) => Tensor::from_base(t.clone()),
        other => panic!("not a tensor: {other:?}"),
    }
}

fn iv(t: &Tensor) -> IValue {
    IValue::Tensor(t.base().clone())
}

/// An operator's name and its reference in float64.
type Reference = (&'static str, fn(f64) -> f64);

const OPS: &[Reference] = &[
    ("acos", f64::acos),
    ("asin", f64::asin),
    ("atan", f64::atan),
    ("acosh", f64::acosh),
    ("asinh", f64::asinh),
    ("atanh", f64::atanh),
    ("cosh", f64::cosh),
    ("sinh", f64::sinh),
    ("tan", f64::tan),
    ("log2", f64::log2),
    ("log10", f64::log10),
];

fn same(a: f64, b: f64, tol: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tol * (1.0 + b.abs())
}

#[test]
fn float_operators_match_the_standard_library() {
    aten::ops_root();
    let xs = [-2.0f64, -0.5, 0.0, 0.25, 0.9, 1.0, 1.5, 3.0];
    let x64 = Tensor::from_slice(&xs, &[8]).unwrap();
    let x32 = Tensor::from_slice(&xs.map(|x| x as f32), &[8]).unwrap();
    for (name, f) in OPS {
        let want: Vec<f64> = xs.iter().map(|&x| f(x)).collect();
        let got = tensor_of(&call(&format!("aten::{name}"), &[iv(&x64)]));
        for (g, w) in got.to_vec::<f64>().unwrap().iter().zip(&want) {
            assert!(same(*g, *w, 1e-15), "{name} f64: {g} vs {w}");
        }
        let got = tensor_of(&call(&format!("aten::{name}"), &[iv(&x32)]));
        assert_eq!(got.dtype(), Some(ScalarType::Float));
        for (g, w) in got.to_vec::<f32>().unwrap().iter().zip(&want) {
            assert!(same(f64::from(*g), *w, 1e-6), "{name} f32: {g} vs {w}");
        }
    }
}

#[test]
fn integers_promote_and_in_place_and_out_forms_agree() {
    aten::ops_root();
    let ints = Tensor::from_slice(&[1i64, 2, 10], &[3]).unwrap();
    for (name, f) in OPS {
        let r = tensor_of(&call(&format!("aten::{name}"), &[iv(&ints)]));
        assert_eq!(r.dtype(), Some(ScalarType::Float), "{name}");
        let want: Vec<f32> = [1.0, 2.0, 10.0].iter().map(|&x| f(x) as f32).collect();
        for (g, w) in r.to_vec::<f32>().unwrap().iter().zip(&want) {
            assert!(
                same(f64::from(*g), f64::from(*w), 1e-6),
                "{name}: {g} vs {w}"
            );
        }
        // In place on a float tensor, and into an out tensor.
        let x = Tensor::from_slice(&[0.5f32, 2.0], &[2]).unwrap();
        let want = tensor_of(&call(&format!("aten::{name}"), &[iv(&x)]))
            .to_vec::<f32>()
            .unwrap();
        let out = ops::empty_memory_format(&[0]).unwrap();
        aten::ops_root()
            .overload(&format!("aten::{name}.out"))
            .unwrap()
            .call(&[iv(&x)], &[("out", iv(&out))])
            .unwrap();
        let y = ops::clone(&x).unwrap();
        call(&format!("aten::{name}_"), &[iv(&y)]);
        let bits = |t: &Tensor| {
            t.to_vec::<f32>()
                .unwrap()
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>()
        };
        let want_bits: Vec<u32> = want.iter().map(|v| v.to_bits()).collect();
        assert_eq!(bits(&out), want_bits, "{name}.out");
        assert_eq!(bits(&y), want_bits, "{name}_");
        // An integer tensor cannot hold the result in place.
        let i = Tensor::from_slice(&[1i64], &[1]).unwrap();
        let err = aten::ops_root()
            .overload(&format!("aten::{name}_"))
            .unwrap()
            .call(&[iv(&i)], &[])
            .unwrap_err();
        assert_eq!(
            err.message(),
            "result type Float can't be cast to the desired output type Long",
            "{name}_"
        );
    }
}
