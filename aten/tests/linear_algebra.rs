//! Matrix products (structured `mm`, `bmm`, `addmm`) and triangles
//! (`tril`, `triu`) on every device the
//! build has: the functional, in-place and out members share one meta
//! function; out= and in-place outputs are written through a temporary.

use aten::core::testing::DeviceTest;
use aten::ops;

aten::instantiate_device_type_tests!(
    matrix_products_check_and_compute,
    out_and_in_place_members,
    triangles,
);

fn triangles(dev: DeviceTest) {
    let a = dev.tensor(&[1i64, 2, 3, 4, 5, 6, 7, 8, 9], &[3, 3]);
    dev.assert_values(
        &ops::tril(&a).unwrap(),
        &[3, 3],
        &[1i64, 0, 0, 4, 5, 0, 7, 8, 9],
    );
    let u = ops::triu_with(&a, ops::TriuOptions { diagonal: 1 }).unwrap();
    dev.assert_values(&u, &[3, 3], &[0i64, 2, 3, 0, 0, 6, 0, 0, 0]);
    // In place on a transposed view: the result lands in the view.
    let t = ops::clone(&a).unwrap().t().unwrap();
    t.tril_().unwrap();
    dev.assert_values(
        &ops::contiguous(&t).unwrap(),
        &[3, 3],
        &[1i64, 0, 0, 2, 5, 0, 3, 6, 9],
    );
    let v = dev.tensor(&[1i64, 2], &[2]);
    let err = dev.assert_error(ops::tril(&v));
    assert_eq!(err, "tril: input tensor must have at least 2 dimensions");
}

fn matrix_products_check_and_compute(dev: DeviceTest) {
    let a = dev.tensor(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let b = dev.tensor(&[1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0], &[3, 2]);
    dev.assert_values(
        &ops::mm(&a, &b).unwrap(),
        &[2, 2],
        &[4.0f32, 5.0, 10.0, 11.0],
    );
    let err = dev.assert_error(ops::mm(&a, &a));
    assert_eq!(
        err,
        "mm: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"
    );
    let d = dev.tensor(&[1.0f64; 6], &[3, 2]);
    let err = dev.assert_error(ops::mm(&a, &d));
    assert_eq!(
        err,
        "expected mat1 and mat2 to have the same dtype, but got: float != double"
    );
    let bias = dev.tensor(&[10.0f32, 20.0], &[2]);
    dev.assert_values(
        &ops::addmm(&bias, &a, &b).unwrap(),
        &[2, 2],
        &[14.0f32, 25.0, 20.0, 31.0],
    );
    let a3 = dev.tensor(&[1.0f32; 12], &[2, 2, 3]);
    let b3 = dev.tensor(&[1.0f32; 12], &[2, 3, 2]);
    dev.assert_values(&ops::bmm(&a3, &b3).unwrap(), &[2, 2, 2], &[3.0f32; 8]);
    let err = dev.assert_error(ops::bmm(&a, &b));
    assert_eq!(err, "batch1 must be a 3D tensor");
}

fn out_and_in_place_members(dev: DeviceTest) {
    let a = dev.tensor(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
    let eye = dev.tensor(&[1.0f32, 0.0, 0.0, 1.0], &[2, 2]);
    // A transposed out= keeps its strides and receives the product.
    let out = dev.tensor(&[0.0f32; 4], &[2, 2]).t().unwrap();
    ops::mm_out(&a, &eye, &out).unwrap();
    assert_eq!(out.strides(), &[1, 2]);
    if dev.has_data() {
        assert_eq!(
            ops::contiguous(&out).unwrap().to_vec::<f32>().unwrap(),
            vec![1.0, 2.0, 3.0, 4.0]
        );
    }
    // An empty out= is resized; one of another dtype is refused.
    let empty = dev.tensor::<f32>(&[], &[0]);
    ops::mm_out(&a, &eye, &empty).unwrap();
    dev.assert_values(&empty, &[2, 2], &[1.0f32, 2.0, 3.0, 4.0]);
    let wrong = dev.tensor(&[0.0f64; 4], &[2, 2]);
    let err = dev.assert_error(ops::mm_out(&a, &eye, &wrong));
    assert_eq!(
        err,
        "Expected out tensor to have dtype float, but got double instead"
    );
    // In place: self is the bias and the result, read before it is written.
    let c = ops::clone(&a).unwrap();
    let before = c.version();
    c.addmm_(&a, &eye).unwrap();
    dev.assert_values(&c, &[2, 2], &[2.0f32, 4.0, 6.0, 8.0]);
    assert_eq!(c.version(), before + 1);
    let row = dev.tensor(&[1.0f32, 2.0], &[1, 2]);
    let err = dev.assert_error(row.addmm_(&a, &eye));
    assert_eq!(
        err,
        "Bad in-place call: input tensor size [1, 2] and output tensor size [2, 2] should match"
    );
    // An out= with elements of another shape is resized, with PyTorch's
    // deprecation warning.
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let guard =
        aten::c10::warning::WarningHandlerGuard::new(move |w: &aten::c10::warning::Warning| {
            sink.lock().unwrap().push(w.message().to_string())
        });
    let small = dev.tensor(&[0.0f32; 3], &[3]);
    ops::mm_out(&a, &eye, &small).unwrap();
    drop(guard);
    assert_eq!(small.sizes(), &[2, 2]);
    let warnings = seen.lock().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with(
        "An output with one or more elements was resized since it had shape [3], which does not match the required output shape [2, 2]."
    ));
    // The out member may alias an input.
    let x = ops::clone(&a).unwrap();
    ops::mm_out(&x, &eye, &x).unwrap();
    dev.assert_values(&x, &[2, 2], &[1.0f32, 2.0, 3.0, 4.0]);
}
