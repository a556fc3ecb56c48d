//! Soundness under misuse: hostile layouts, resizes racing kernels on other
//! threads, concurrent in-place updates, re-entrant borrows and the memory
//! a tensor keeps across resizes. Each test is a reproducer of a failure
//! this stack once had (a crash, a hang, a lost update or unbounded
//! memory); none of them may panic, hang or corrupt memory.

use std::sync::atomic::{AtomicBool, Ordering};

use aten::{ops, Scalar, ScalarType, Tensor};
use proptest::prelude::*;

fn f32s(v: &[f32], shape: &[i64]) -> Tensor {
    Tensor::from_slice(v, shape).unwrap()
}

#[test]
fn negative_strides_and_invalid_sizes_are_errors() {
    assert!(ops::empty_strided(&[2, 2], &[-(1 << 30), 1 << 30]).is_err());
    assert!(ops::empty_strided(&[4, 2], &[-16, 64]).is_err());
    assert!(ops::empty_strided(&[-1, -1], &[1, 1]).is_err());
    assert!(ops::empty_memory_format(&[-1, -1]).is_err());
    assert!(ops::empty_memory_format(&[i64::MAX, 2]).is_err());
    let t = f32s(&[1., 2., 3., 4.], &[4]);
    assert!(ops::as_strided(&t, &[2], &[i64::MAX]).is_err());
    // A size-1 dimension may have any stride; iterating over it must not
    // overflow byte strides.
    let odd = ops::as_strided(&t, &[1, 3], &[i64::MAX / 2, 1]).unwrap();
    let sum = ops::add_tensor(&odd, &f32s(&[1.], &[1, 1])).unwrap();
    assert_eq!(sum.to_vec::<f32>().unwrap(), vec![2., 3., 4.]);
}

#[test]
fn concurrent_in_place_updates_that_convert_self_lose_nothing() {
    // float32 += float64: computed in float64, copied back into `x`. The
    // read of `x`, the computation and the write back are one exclusive
    // borrow, so two threads' updates never overwrite each other.
    let x = ops::zeros(&[64]).unwrap();
    let one = Tensor::from_slice(&[1f64], &[1]).unwrap();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                for _ in 0..300 {
                    ops::add_tensor_(&x, &one).unwrap();
                }
            });
        }
    });
    assert!(x.to_vec::<f32>().unwrap().iter().all(|&v| v == 600.0));
}

#[test]
fn concurrent_in_place_updates_lose_nothing() {
    let x = ops::zeros(&[100_000]).unwrap();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                for _ in 0..50 {
                    ops::add_tensor_(&x, &ops::ones(&[100_000]).unwrap()).unwrap();
                }
            });
        }
    });
    assert!(x.to_vec::<f32>().unwrap().iter().all(|&v| v == 100.0));
}

#[test]
fn a_growing_out_argument_grows_its_one_storage_and_frees_old_layouts() {
    let out = ops::empty_memory_format(&[0]).unwrap();
    let storage = out.storage().unwrap();
    for n in 1..=2000i64 {
        let a = ops::ones(&[n * 8]).unwrap();
        ops::add_out(&a, &a, Scalar::Int(1), &out).unwrap();
        assert!(out.storage().unwrap().is_same(&storage));
    }
    assert_eq!(out.numel(), 16_000);
    assert_eq!(storage.nbytes(), 16_000 * 4);
    assert!(out.to_vec::<f32>().unwrap().iter().all(|&v| v == 2.0));
    // Every layout an earlier call replaced was freed: the handles left
    // are this test's, the first layout's and the current one's.
    assert_eq!(storage.use_count(), 3);
}

#[test]
fn kernels_survive_a_resize_racing_on_another_thread() {
    let x = ops::ones(&[16, 16]).unwrap();
    let index = Tensor::from_slice(&[0i64, 3, 1], &[3]).unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..3000 {
                let sizes: &[i64] = match i % 3 {
                    0 => &[256],
                    1 => &[4, 64],
                    _ => &[16, 16],
                };
                x.base().resize_(sizes).unwrap();
            }
            stop.store(true, Ordering::Relaxed);
        });
        while !stop.load(Ordering::Relaxed) {
            // Any of these may fail (the shape changed under them); none
            // may read outside a storage.
            let _ = ops::sum(&x);
            let _ = ops::index_select(&x, 0, &index);
            let _ = ops::add_tensor(&x, &x);
            let _ = ops::sum_dim_intlist(&x, Some(&[0][..]));
            let _ = ops::cumsum(&x, 0);
            let _ = ops::flip(&x, &[0]);
            let _ = ops::contiguous(&ops::t(&x).unwrap_or_else(|_| x.clone()));
            if let Ok(v) = x.to_vec::<f32>() {
                assert_eq!(v.len(), 256);
            }
        }
    });
}

#[test]
fn an_operator_inside_with_data_on_the_same_tensor_fails_instead_of_hanging() {
    let x = f32s(&[1., 2.], &[2]);
    let inner = x
        .with_data::<f32, _>(|_| ops::add_tensor_(&x, &x).map(|_| ()))
        .unwrap();
    let err = inner.unwrap_err();
    assert!(err.message().contains("is already borrowed"), "{err}");
    // The failed call left nothing behind.
    ops::add_tensor_(&x, &x).unwrap();
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![2., 4.]);
}

/// A layout over `storage_elems` elements, valid or not.
fn arbitrary_layout() -> impl Strategy<Value = (Vec<i64>, Vec<i64>, i64)> {
    (0usize..4).prop_flat_map(|ndim| {
        (
            prop::collection::vec(prop_oneof![0i64..5, Just(i64::MAX), -2i64..0], ndim),
            prop::collection::vec(prop_oneof![0i64..8, Just(i64::MAX / 2), -3i64..0], ndim),
            prop_oneof![0i64..40, Just(i64::MAX), -1i64..0],
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Every view a constructor accepts has all its elements inside its
    /// storage (reading them all succeeds and finds them), and a view is
    /// accepted exactly when that holds.
    #[test]
    fn views_stay_inside_their_storage((sizes, strides, offset) in arbitrary_layout()) {
        let base = ops::arange(Scalar::Int(48)).unwrap();
        let view = ops::as_strided_with(
            &base,
            &sizes,
            &strides,
            ops::AsStridedOptions { storage_offset: Some(offset) },
        );
        let valid = sizes.len() == strides.len()
            && sizes.iter().all(|&s| s >= 0)
            && strides.iter().all(|&s| s >= 0)
            && offset >= 0
            && sizes.iter().try_fold(1i64, |a, &s| a.checked_mul(s)).is_some()
            && (sizes.contains(&0)
                || sizes.iter().zip(&strides).try_fold(offset, |last, (&size, &stride)| {
                    (size - 1).checked_mul(stride).and_then(|x| last.checked_add(x))
                }).is_some_and(|last| last < 48));
        prop_assert_eq!(view.is_ok(), valid);
        if let Ok(view) = view {
            if view.numel() > 1 << 16 {
                // Stride-0 views may be valid with any number of elements;
                // reading that many is an allocation error, not a crash.
                prop_assert!(view.to_vec::<i64>().is_err());
                return Ok(());
            }
            let values = view.to_vec::<i64>().unwrap();
            prop_assert_eq!(values.len() as i64, view.numel());
            prop_assert!(values.iter().all(|&v| (0..48).contains(&v)));
            // Views of it and in-place writes through it stay inside too.
            if view.numel() > 0 {
                let flat = ops::reshape(&view, &[-1]).unwrap();
                prop_assert_eq!(flat.to_vec::<i64>().unwrap(), values);
            }
        }
    }

    /// Two threads adding to the same random slice of one tensor: every
    /// update lands.
    #[test]
    fn no_update_is_lost(len in 1i64..5000, start in 0i64..100, times in 1usize..20) {
        let x = ops::zeros_with(&[len + 100], ops::ZerosOptions {
            dtype: Some(ScalarType::Long),
            ..Default::default()
        }).unwrap();
        let view = ops::narrow(&x, 0, start, len).unwrap();
        let one = Tensor::from_slice(&[1i64], &[1]).unwrap();
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..times {
                        ops::add_tensor_(&view, &one).unwrap();
                    }
                });
            }
        });
        let v = x.to_vec::<i64>().unwrap();
        for (i, &e) in v.iter().enumerate() {
            let inside = (start..start + len).contains(&(i as i64));
            prop_assert_eq!(e, if inside { 2 * times as i64 } else { 0 });
        }
    }
}
