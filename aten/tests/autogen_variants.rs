//! The functions `autogen:` asks of the codegen, on every device the
//! build has: out variants of functional operators (one or several
//! outputs) and the functional and out variants of in-place ones, each
//! PyTorch's `CompositeExplicitAutograd` kernel (run the source, copy into
//! the outputs).

use aten::c10::Scalar;
use aten::core::testing::DeviceTest;
use aten::ops;

aten::instantiate_device_type_tests!(
    out_variants_of_functional_operators,
    variants_of_in_place_operators,
);

fn out_variants_of_functional_operators(dev: DeviceTest) {
    let a = dev.tensor(&[1i32, 2, 3, 4], &[2, 2]);
    // Resized from empty; the dtype is the out argument's.
    let out = dev.tensor::<f64>(&[], &[0]);
    let r = ops::sum_out(&a, None, &out).unwrap();
    assert!(r.base().is_same(out.base()));
    dev.assert_values(&out, &[], &[10.0f64]);
    let x = dev.tensor(&[1.0f32, 3.0], &[1, 2]);
    let outs = [
        dev.tensor::<f32>(&[], &[0]),
        dev.tensor::<f32>(&[], &[0]),
        dev.tensor::<f32>(&[], &[0]),
    ];
    ops::native_layer_norm_out(&x, &[2], None, None, 0.0, &outs[0], &outs[1], &outs[2]).unwrap();
    dev.assert_values(&outs[0], &[1, 2], &[-1.0f32, 1.0]);
    dev.assert_values(&outs[1], &[1, 1], &[2.0f32]);
    dev.assert_values(&outs[2], &[1, 1], &[1.0f32]);
}

fn variants_of_in_place_operators(dev: DeviceTest) {
    let a = dev.tensor(&[-1.0f32, 2.0], &[2]);
    let out = dev.tensor(&[9.0f32; 2], &[2]);
    ops::relu_out(&a, &out).unwrap();
    dev.assert_values(&out, &[2], &[0.0f32, 2.0]);
    // The functional variant leaves `self` alone.
    dev.assert_values(&ops::zero(&a).unwrap(), &[2], &[0.0f32, 0.0]);
    dev.assert_values(&a, &[2], &[-1.0f32, 2.0]);
    ops::fill_scalar_out(&a, Scalar::Double(7.0), &out).unwrap();
    dev.assert_values(&out, &[2], &[7.0f32, 7.0]);
}
