//! `TensorIterator` with a backend linked: inputs of another dtype are
//! converted by the backend's copy kernel (`copy_stub`) under the loop's
//! borrows.

use aten::core::tensor_iterator::TensorIteratorConfig;
use aten::{ScalarType, Tensor};

fn t(data: &[f32], sizes: &[i64]) -> Tensor {
    aten::dispatcher();
    Tensor::from_slice(data, sizes).unwrap()
}

#[test]
fn promotes_and_loops() {
    let a = Tensor::from_slice(&[1i64, 2, 3], &[3]).unwrap();
    let b = t(&[0.5, 0.5, 0.5], &[3]);
    let mut it = TensorIteratorConfig::binary_op(None, &a, &b)
        .build()
        .unwrap();
    assert_eq!(it.common_dtype(), ScalarType::Float);
    let mut seen = 0;
    it.for_each(|ptrs, strides, n| {
        for i in 0..n {
            // SAFETY: three float32 operands, valid for `n` elements.
            unsafe {
                let x = *(ptrs[1].offset(i as isize * strides[1] as isize) as *const f32);
                let y = *(ptrs[2].offset(i as isize * strides[2] as isize) as *const f32);
                *(ptrs[0].offset(i as isize * strides[0] as isize) as *mut f32) = x + y;
            }
            seen += 1;
        }
    })
    .unwrap();
    assert_eq!(seen, 3);
    assert_eq!(it.output(0).to_vec::<f32>().unwrap(), vec![1.5, 2.5, 3.5]);
}

#[test]
fn an_owned_input_resized_before_the_set_up_is_read_as_it_is_now() {
    let a = t(&[1.0, 2.0, 3.0, 4.0], &[4]);
    // Made with two elements, then resized to four: the iteration must not
    // address the layout it was made with.
    let owned = t(&[10.0, 20.0], &[2]);
    owned.resize_(&[4]).unwrap();
    aten::ops::fill_scalar_(&owned, aten::Scalar::Double(1.0)).unwrap();
    let mut it = TensorIteratorConfig::binary_op(None, &a, owned)
        .build()
        .unwrap();
    assert_eq!(it.shape(), &[4]);
    it.for_each(|ptrs, strides, n| {
        for i in 0..n as isize {
            // SAFETY: three float32 operands, valid for `n` elements.
            unsafe {
                let x = *(ptrs[1].offset(i * strides[1] as isize) as *const f32);
                let y = *(ptrs[2].offset(i * strides[2] as isize) as *const f32);
                *(ptrs[0].offset(i * strides[0] as isize) as *mut f32) = x + y;
            }
        }
    })
    .unwrap();
    assert_eq!(
        it.output(0).to_vec::<f32>().unwrap(),
        vec![2.0, 3.0, 4.0, 5.0]
    );
}
