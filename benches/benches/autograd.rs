//! `autograd/*`: the autograd layer, mirroring libtorch's `bench_train`
//! (the perf harness's training benchmark: the same MLP, step and adds).
//!
//! - `autograd/mlp_train_step/t*`: forward, backward and an SGD update
//!   (`p -= 0.01 * p.grad`, then `p.grad.zero_()` under `no_grad`) of the
//!   MLP of `eager/mlp_forward` (batch 64, 784-256-10, float32, `linear`,
//!   `relu`, `linear`, `cross_entropy`), on a `rayon` pool of 1 and 2
//!   threads;
//! - `autograd/mlp_forward_grad_mode/t1`: the same forward, graph recorded;
//! - `autograd/add_1_requires_grad`: one recorded `add` of two one-element
//!   tensors that require grad (node, edges, history);
//! - `autograd/add_1_backward`: `add`, `sum` and `backward` of the same.

// criterion_group! generates undocumented items.
#![allow(missing_docs)]

mod support;

use aten::autograd::{self, TensorAutograd};
use aten::{ops, Scalar, Tensor};
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use support::pool_of;

/// A deterministic `[rows, cols]` float32 tensor with values in [-0.05, 0.05).
fn param(rows: i64, cols: i64, seed: u64) -> Tensor {
    let v: Vec<f32> = (0..rows * cols)
        .map(|i| {
            let h = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed;
            ((h >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.1
        })
        .collect();
    Tensor::from_slice(&v, &[rows, cols]).unwrap()
}

fn bench(c: &mut Criterion) {
    aten::dispatcher();
    let x = param(64, 784, 1);
    let target = Tensor::from_vec((0..64).map(|i| i % 10).collect::<Vec<i64>>(), &[64]).unwrap();
    let w1 = param(256, 784, 2).requires_grad_(true).unwrap();
    let b1 = ops::zeros(&[256]).unwrap().requires_grad_(true).unwrap();
    let w2 = param(10, 256, 4).requires_grad_(true).unwrap();
    let b2 = ops::zeros(&[10]).unwrap().requires_grad_(true).unwrap();
    let params = [w1.clone(), b1.clone(), w2.clone(), b2.clone()];
    let forward = || {
        let h =
            ops::relu(&ops::linear_with(&x, &w1, ops::LinearOptions { bias: Some(&b1) }).unwrap())
                .unwrap();
        let logits = ops::linear_with(&h, &w2, ops::LinearOptions { bias: Some(&b2) }).unwrap();
        ops::cross_entropy_loss(&logits, &target).unwrap()
    };
    for threads in [1, 2] {
        let pool = pool_of(threads);
        c.bench_function(&format!("autograd/mlp_train_step/t{threads}"), |b| {
            pool.install(|| {
                b.iter(|| {
                    forward().backward().unwrap();
                    let _no_grad = autograd::no_grad();
                    for p in &params {
                        let g = p.grad().unwrap();
                        ops::sub_tensor_with_(
                            p,
                            &g,
                            ops::SubTensorInplaceOptions {
                                alpha: Scalar::Double(0.01),
                            },
                        )
                        .unwrap();
                        ops::zero_(&g).unwrap();
                    }
                })
            })
        });
    }
    c.bench_function("autograd/mlp_forward_grad_mode/t1", |b| {
        let pool = pool_of(1);
        pool.install(|| b.iter(|| black_box(forward())))
    });
    let a = Tensor::from_slice(&[1.5f32], &[1])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let bt = Tensor::from_slice(&[2.5f32], &[1])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    c.bench_function("autograd/add_1_requires_grad", |b| {
        b.iter(|| ops::add_tensor(black_box(&a), black_box(&bt)).unwrap())
    });
    c.bench_function("autograd/add_1_backward", |b| {
        b.iter(|| {
            ops::sum(&ops::add_tensor(&a, &bt).unwrap())
                .unwrap()
                .backward()
                .unwrap()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
