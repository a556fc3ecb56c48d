//! Pointwise operators end to end through the generated API, on every
//! device the build has (`instantiate_device_type_tests!`).

use aten::core::testing::DeviceTest;
use aten::{ops, Scalar, ScalarType, Tensor};

fn f32s(v: &[f32], shape: &[i64]) -> Tensor {
    Tensor::from_slice(v, shape).unwrap()
}

// Kernel tests run once per device (CPU and Meta): Meta runs the meta
// functions alone, so it checks shapes, dtypes and argument errors.
aten::instantiate_device_type_tests!(
    arithmetic_broadcasts_and_promotes,
    structured_members_share_one_meta_function,
    reductions_and_copies,
    functional_and_in_place_forms_run_through_out_variants,
    reduced_precision_add_rounds_as_pytorch,
);

/// `a + alpha * b` in bfloat16 as PyTorch's CPU kernel rounds it: fused
/// in float32 over the whole 32-element blocks of a vectorized inner loop,
/// `a + bf16(alpha * b)` past them and in loops it does not vectorize.
fn reduced_precision_add_rounds_as_pytorch(dev: DeviceTest) {
    let bf16 = |v: &[f32], shape: &[i64]| {
        ops::_to_copy_with(
            &dev.tensor(v, shape),
            ops::ToCopyOptions {
                dtype: Some(ScalarType::BFloat16),
                ..Default::default()
            },
        )
        .unwrap()
    };
    let values = |t: &Tensor| {
        ops::_to_copy_with(
            t,
            ops::ToCopyOptions {
                dtype: Some(ScalarType::Float),
                ..Default::default()
            },
        )
        .unwrap()
        .to_vec::<f32>()
        .unwrap()
    };
    let add = |a: &Tensor, b: &Tensor| {
        ops::add_tensor_with(
            a,
            b,
            ops::AddTensorOptions {
                alpha: Scalar::Double(-1.5),
            },
        )
        .unwrap()
    };
    // -4.0625 + 1.5 * 8.6875 is 8.96875: 9 rounded once, 8.9375 through
    // the rounded product 13.0.
    let a = bf16(&[-4.0625; 80], &[80]);
    let b = bf16(&[-8.6875; 40], &[40]);
    let slice = |end, step| {
        ops::slice_tensor_with(
            &a,
            ops::SliceTensorOptions {
                dim: 0,
                start: Some(0),
                end: Some(end),
                step,
            },
        )
        .unwrap()
    };
    let contiguous = add(&slice(40, 1), &b);
    assert_eq!(contiguous.dtype(), Some(ScalarType::BFloat16));
    let strided = add(&slice(80, 2), &b);
    if dev.has_data() {
        let mut expected = vec![9.0f32; 32];
        expected.extend([8.9375f32; 8]);
        assert_eq!(values(&contiguous), expected);
        assert_eq!(values(&strided), [8.9375f32; 40]);
    }
}

fn arithmetic_broadcasts_and_promotes(dev: DeviceTest) {
    let a = dev.tensor(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let b = dev.tensor(&[10.0f32, 20.0, 30.0], &[3]);
    let r = ops::add_tensor(&a, &b).unwrap();
    dev.assert_values(&r, &[2, 3], &[11f32, 22., 33., 14., 25., 36.]);
    let i = dev.tensor(&[1i64, 2, 3], &[3]);
    let r = ops::add_tensor_with(
        &i,
        &i,
        ops::AddTensorOptions {
            alpha: Scalar::Int(2),
        },
    )
    .unwrap();
    dev.assert_values(&r, &[3], &[3i64, 6, 9]);
    let err = dev.assert_error(ops::add_tensor_with(
        &i,
        &i,
        ops::AddTensorOptions {
            alpha: Scalar::Double(0.5),
        },
    ));
    assert_eq!(
        err,
        "For integral input tensors, argument alpha must not be a floating point number."
    );
    let r = ops::add_scalar(&i, Scalar::Double(0.5)).unwrap();
    assert_eq!(r.dtype(), Some(ScalarType::Float));
    let r = ops::div_tensor(&i, &i).unwrap();
    assert_eq!(r.dtype(), Some(ScalarType::Float));
    let z = dev.tensor(&[0i64, 1, 1], &[3]);
    if let Some(err) = dev.assert_data_error(ops::div_tensor_mode(&i, &z, Some("trunc"))) {
        assert_eq!(err, "ZeroDivisionError");
    }
    if let Some(err) = dev.assert_data_error(ops::bitwise_xor_tensor(&a, &a)) {
        assert_eq!(err, "\"bitwise_xor_cpu\" not implemented for 'Float'");
    }
    // In place: version bumps, and the shape of self is kept.
    let before = a.version();
    a.add_tensor_(&b).unwrap();
    dev.assert_values(&a, &[2, 3], &[11f32, 22., 33., 14., 25., 36.]);
    assert_eq!(a.version(), before + 1);
    let err = dev.assert_error(b.add_tensor_(&a));
    assert_eq!(
        err,
        "output with shape [3] doesn't match the broadcast shape [2, 3]"
    );
    let c = ops::lt_tensor(&a, &b).unwrap();
    dev.assert_values(&c, &[2, 3], &[false; 6]);
    let e = ops::exp(&dev.tensor(&[0.0f32], &[1])).unwrap();
    dev.assert_values(&e, &[1], &[1.0f32]);
    let g = ops::gt_scalar(&a, Scalar::Int(20)).unwrap();
    dev.assert_values(&g, &[2, 3], &[false, true, true, false, true, true]);
}

fn structured_members_share_one_meta_function(dev: DeviceTest) {
    let a = dev.tensor(&[1i64, -2, 3], &[3]);
    let b = dev.tensor(&[2i64, 2, 2], &[3]);
    // The out member resizes an empty `out` and checks its dtype.
    let out = dev.tensor::<i64>(&[], &[0]);
    ops::mul_out(&a, &b, &out).unwrap();
    dev.assert_values(&out, &[3], &[2i64, -4, 6]);
    let bad = dev.tensor(&[false; 3], &[3]);
    let err = dev.assert_error(ops::mul_out(&a, &b, &bad));
    assert_eq!(
        err,
        "result type Long can't be cast to the desired output type Bool"
    );
    // The in-place member keeps self's dtype; the functional one promotes.
    let f = dev.tensor(&[0.5f32, 0.5, 0.5], &[3]);
    let err = dev.assert_error(a.mul_tensor_(&f));
    assert_eq!(
        err,
        "result type Float can't be cast to the desired output type Long"
    );
    dev.assert_values(
        &ops::mul_tensor(&a, &f).unwrap(),
        &[3],
        &[0.5f32, -1.0, 1.5],
    );
    // Comparisons into an out of another dtype write ones and zeros.
    let out = dev.tensor(&[9.0f32; 3], &[3]);
    ops::eq_tensor_out(&a, &b, &out).unwrap();
    dev.assert_values(&out, &[3], &[0.0f32, 0.0, 0.0]);
    let neg_bool = dev.tensor(&[true], &[1]);
    assert!(dev
        .assert_error(ops::neg(&neg_bool))
        .starts_with("Negation, the `-` operator"));
}

fn reductions_and_copies(dev: DeviceTest) {
    let a = dev.tensor(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    dev.assert_values(&ops::sum(&a).unwrap(), &[], &[21.0f32]);
    let s = ops::sum_dim_intlist_with(
        &a,
        Some(&[1][..]),
        ops::SumDimIntlistOptions {
            keepdim: true,
            dtype: None,
        },
    )
    .unwrap();
    dev.assert_values(&s, &[2, 1], &[6.0f32, 15.0]);
    let (v, i) = ops::max_dim(&a, 0).unwrap();
    dev.assert_values(&v, &[3], &[4.0f32, 5.0, 6.0]);
    dev.assert_values(&i, &[3], &[1i64, 1, 1]);
    let sm = ops::softmax_int(&a, 1).unwrap();
    assert_eq!(sm.sizes(), &[2, 3]);
    if dev.has_data() {
        let row: f32 = sm.to_vec::<f32>().unwrap()[..3].iter().sum();
        assert!((row - 1.0).abs() < 1e-6);
    }
    let i64s = dev.tensor(&[1i64, 2, 3], &[3]);
    assert_eq!(ops::sum(&i64s).unwrap().dtype(), Some(ScalarType::Long));
    assert!(ops::mean(&i64s).is_err());
    let t = ops::as_strided(&a, &[3, 2], &[1, 3]).unwrap();
    let c = ops::clone(&t).unwrap();
    assert_eq!(c.strides(), &[1, 3]);
    let k = ops::contiguous(&t).unwrap();
    assert_eq!(k.strides(), &[2, 1]);
    dev.assert_values(&k, &[3, 2], &[1f32, 4., 2., 5., 3., 6.]);
    assert!(ops::sum_dim_intlist(&a, Some(&[5][..])).is_err());
}

fn functional_and_in_place_forms_run_through_out_variants(dev: DeviceTest) {
    let a = dev.tensor(&[-1.5f32, 0.0, 2.0], &[3]);
    let b = dev.tensor(&[1.0f32, 1.0, 0.0], &[3]);
    dev.assert_values(&ops::abs(&a).unwrap(), &[3], &[1.5f32, 0.0, 2.0]);
    let and = ops::logical_and(&a, &b).unwrap();
    dev.assert_values(&and, &[3], &[true, false, false]);
    // In place: the result keeps self's dtype and storage.
    let c = ops::clone(&a).unwrap();
    let r = ops::logical_and_(&c, &b).unwrap();
    assert!(r.base().is_same(c.base()));
    dev.assert_values(&c, &[3], &[1.0f32, 0.0, 0.0]);
    let d = ops::clone(&a).unwrap();
    ops::abs_(&d).unwrap();
    dev.assert_values(&d, &[3], &[1.5f32, 0.0, 2.0]);
    // A transposed input gives a result laid out like it (the out kernel
    // resizes the fresh output with the input's strides).
    let m = dev
        .tensor(&[-1.0f32, 2.0, -3.0, 4.0, -5.0, 6.0], &[2, 3])
        .t()
        .unwrap();
    assert_eq!(ops::abs(&m).unwrap().strides(), m.strides());
    assert_eq!(ops::logical_not(&m).unwrap().strides(), m.strides());
    assert_eq!(ops::neg(&m).unwrap().strides(), m.strides());
}

fn meta(shape: &[i64]) -> Tensor {
    ops::empty_memory_format_with(
        shape,
        ops::EmptyMemoryFormatOptions {
            device: Some(aten::Device::META),
            ..Default::default()
        },
    )
    .unwrap()
}

#[test]
fn logsumexp_composes_over_its_out_variant() {
    let a = f32s(
        &[
            1.0,
            2.0,
            3.0,
            f32::NEG_INFINITY,
            f32::NEG_INFINITY,
            f32::INFINITY,
        ],
        &[2, 3],
    );
    let r = ops::logsumexp(&a, &[1]).unwrap();
    assert_eq!(r.sizes(), &[2]);
    let v = r.to_vec::<f32>().unwrap();
    let expected = (1f32.exp() + 2f32.exp() + 3f32.exp()).ln();
    assert!((v[0] - expected).abs() < 1e-6, "{v:?}");
    assert_eq!(v[1], f32::INFINITY);
    // A row of -inf only gives -inf (the infinite maximum is not subtracted).
    let n = f32s(&[f32::NEG_INFINITY, f32::NEG_INFINITY], &[1, 2]);
    let k = ops::logsumexp_with(&n, &[1], ops::LogsumexpOptions { keepdim: true }).unwrap();
    assert_eq!(k.sizes(), &[1, 1]);
    assert_eq!(k.to_vec::<f32>().unwrap(), vec![f32::NEG_INFINITY]);
    // Integral inputs compute in the default dtype; an integral out= is refused.
    let i = Tensor::from_slice(&[0i64, 0], &[2]).unwrap();
    let li = ops::logsumexp(&i, &[0]).unwrap();
    assert_eq!(li.dtype(), Some(ScalarType::Float));
    assert!((li.to_vec::<f32>().unwrap()[0] - 2f32.ln()).abs() < 1e-6);
    let bad = Tensor::from_slice(&[0i64], &[1]).unwrap();
    let err = ops::logsumexp_out(&i, &[0], false, &bad)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("logsumexp(): Expected floating point type for result tensor, but got: Long"),
        "{err}"
    );
    // The out variant resizes its output; Meta tensors flow through.
    let out = f32s(&[0.0; 5], &[5]);
    ops::logsumexp_out(&a, &[0], false, &out).unwrap();
    assert_eq!(out.sizes(), &[3]);
    let m = meta(&[4, 5]);
    let lm = ops::logsumexp(&m, &[0]).unwrap();
    assert_eq!(
        (&lm.sizes()[..], lm.device()),
        (&[5][..], Some(aten::Device::META))
    );
}

/// In-place contiguous loops (the output is one of the inputs) stage each
/// page of results on the stack before writing it: at lengths around page
/// boundaries, for several element widths and for every aliased operand,
/// they give what the functional forms give.
#[test]
fn in_place_loops_match_the_functional_forms() {
    fn check<T: aten::c10::Element + Copy + PartialEq + std::fmt::Debug>(
        make: impl Fn(usize) -> T,
        n: usize,
    ) {
        let v: Vec<T> = (0..n).map(&make).collect();
        let w: Vec<T> = (0..n).map(|i| make(i * 7 + 3)).collect();
        let fresh = |d: &[T]| Tensor::from_slice(d, &[n as i64]).unwrap();
        let (a, b) = (fresh(&v), fresh(&w));
        let cases: [(&str, Tensor, Tensor); 4] = [
            (
                "add_(self, other)",
                ops::add_tensor(&a, &b).unwrap(),
                ops::add_tensor_(&fresh(&v), &b).unwrap(),
            ),
            ("mul_(self, self)", ops::mul_tensor(&a, &a).unwrap(), {
                let x = fresh(&v);
                ops::mul_tensor_(&x, &x).unwrap()
            }),
            (
                "sub_(self, other, alpha=2)",
                ops::sub_tensor_with(
                    &a,
                    &b,
                    ops::SubTensorOptions {
                        alpha: Scalar::Int(2),
                    },
                )
                .unwrap(),
                ops::sub_tensor_with_(
                    &fresh(&v),
                    &b,
                    ops::SubTensorInplaceOptions {
                        alpha: Scalar::Int(2),
                    },
                )
                .unwrap(),
            ),
            (
                "abs_(self)",
                ops::abs(&a).unwrap(),
                ops::abs_(&fresh(&v)).unwrap(),
            ),
        ];
        for (name, expected, got) in cases {
            assert_eq!(
                got.to_vec::<T>().unwrap(),
                expected.to_vec::<T>().unwrap(),
                "{name}, {n} elements of {:?}",
                T::DTYPE
            );
        }
    }
    for n in [1, 15, 511, 512, 513, 1023, 1024, 1025, 4096 + 17, 40_000] {
        check(|i| ((i * 7919) % 1013) as f32 / 101.0 - 5.0, n);
        check(|i| ((i * 7919) % 1013) as f64 / 101.0 - 5.0, n);
        check(|i| ((i * 7919) % 1013) as i64 - 500, n);
        check(|i| ((i * 31) % 199) as i16 - 99, n);
    }
}
