//! `eager/*` and `kernels/*`: operator latency and kernel throughput,
//! mirroring libtorch's `bench_eager`, `bench_add_bw` and friends.
//!
//! - `eager/add_1`: `add` of two one-element float32 tensors through the
//!   typed API, output allocated;
//! - `kernels/add_16m_f32`: 16M float32 elements into a preallocated output;
//! - `kernels/sum_16m_f32`: the sum of 16M float32 elements;
//! - `kernels/softmax_1k_x_1k`: softmax over the last dim of 1024x1024;
//! - `kernels/mm_f32/N`: float32 `mm` of two NxN matrices (N = 256, 512,
//!   1024, 2048; throughput in FLOP, so criterion's `elem/s` reads as
//!   FLOP/s), libtorch's `bench_mm`. It chose the GEMM crate behind
//!   `mm`: at N = 1024 the `gemm` crate ran at 100 GFLOP/s on one thread
//!   and 205 on two, `matrixmultiply` at 101 and 186, and libtorch (MKL)
//!   at 94 and 181, measured in one session on the project's machine kind;
//! - `kernels/conv2d_resnet`: `conv2d` of 8x64x56x56 by 64x64x3x3 with
//!   padding 1, libtorch's `bench_conv`;
//!
//! each `kernels/*` on a `rayon` pool of 1 (`/t1`) and 2 (`/t2`) threads;
//! - `eager/mlp_forward/t*`: a two-layer MLP (batch 64, 784-256-10,
//!   float32: `linear`, `relu`, `linear`) through the typed API.

// criterion_group! generates undocumented items.
#![allow(missing_docs)]

mod support;

use aten::{ops, Scalar, Tensor};
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use support::pool_of;

/// `eager/add_1`: one call's overhead.
fn eager_add(c: &mut Criterion) {
    let a1 = Tensor::from_slice(&[1.5f32], &[1]).unwrap();
    let b1 = Tensor::from_slice(&[2.5f32], &[1]).unwrap();
    c.bench_function("eager/add_1", |b| {
        b.iter(|| ops::add_tensor(black_box(&a1), black_box(&b1)).unwrap())
    });
}

/// `kernels/add_16m_f32`, `sum_16m_f32`, `softmax_1k_x_1k`: memory-bound
/// kernels.
fn memory_bound(c: &mut Criterion) {
    let n = 16 * 1024 * 1024;
    let data: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.001).collect();
    let a = Tensor::from_slice(&data, &[n as i64]).unwrap();
    let bt = Tensor::from_slice(&data, &[n as i64]).unwrap();
    let out = Tensor::from_slice(&data, &[n as i64]).unwrap();
    let m = Tensor::from_slice(&data[..1024 * 1024], &[1024, 1024]).unwrap();
    let mut g = c.benchmark_group("kernels");
    g.sample_size(20);
    for threads in [1, 2] {
        let pool = pool_of(threads);
        g.throughput(Throughput::Bytes(3 * 4 * n as u64));
        g.bench_function(format!("add_16m_f32/t{threads}"), |b| {
            pool.install(|| b.iter(|| ops::add_out(&a, &bt, Scalar::Int(1), &out).unwrap()))
        });
        g.throughput(Throughput::Bytes(4 * n as u64));
        g.bench_function(format!("sum_16m_f32/t{threads}"), |b| {
            pool.install(|| b.iter(|| ops::sum(&a).unwrap()))
        });
        g.throughput(Throughput::Bytes(2 * 4 * 1024 * 1024));
        g.bench_function(format!("softmax_1k_x_1k/t{threads}"), |b| {
            pool.install(|| b.iter(|| ops::softmax_int(&m, 1).unwrap()))
        });
    }
    g.finish();
}

/// `kernels/mm_f32/*`, `conv2d_resnet`: compute-bound kernels.
fn compute_bound(c: &mut Criterion) {
    let mut g = c.benchmark_group("kernels");
    g.sample_size(10);
    for threads in [1, 2] {
        let pool = pool_of(threads);
        for size in [256i64, 512, 1024, 2048] {
            let n = (size * size) as usize;
            let x: Vec<f32> = (0..n).map(|i| ((i * 7) % 13) as f32 * 0.1 - 0.6).collect();
            let a = Tensor::from_slice(&x, &[size, size]).unwrap();
            let b2 = Tensor::from_slice(&x, &[size, size]).unwrap();
            g.throughput(Throughput::Elements(2 * (size as u64).pow(3)));
            g.bench_function(format!("mm_f32/{size}/t{threads}"), |b| {
                pool.install(|| b.iter(|| ops::mm(&a, &b2).unwrap()))
            });
        }
        let input: Vec<f32> = (0..8 * 64 * 56 * 56)
            .map(|i| ((i * 7) % 13) as f32 * 0.1 - 0.6)
            .collect();
        let weight: Vec<f32> = (0..64 * 64 * 9)
            .map(|i| ((i * 5) % 11) as f32 * 0.01 - 0.05)
            .collect();
        let input = Tensor::from_slice(&input, &[8, 64, 56, 56]).unwrap();
        let weight = Tensor::from_slice(&weight, &[64, 64, 3, 3]).unwrap();
        g.throughput(Throughput::Elements(2 * 8 * 64 * 56 * 56 * 64 * 9));
        g.bench_function(format!("conv2d_resnet/t{threads}"), |b| {
            pool.install(|| {
                b.iter(|| {
                    ops::conv2d_with(
                        &input,
                        &weight,
                        ops::Conv2dOptions {
                            padding: &[1, 1],
                            ..Default::default()
                        },
                    )
                    .unwrap()
                })
            })
        });
    }
    g.finish();
}

/// `eager/mlp_forward/*`: a small model through the typed API.
fn mlp_forward(c: &mut Criterion) {
    let param = |rows: i64, cols: i64, seed: usize| {
        let v: Vec<f32> = (0..(rows * cols) as usize)
            .map(|i| (((i + seed) * 7919) % 1000) as f32 * 1e-4 - 0.05)
            .collect();
        Tensor::from_slice(&v, &[rows, cols]).unwrap()
    };
    let x = param(64, 784, 1);
    let w1 = param(256, 784, 2);
    let b1 = ops::reshape(&param(1, 256, 3), &[256]).unwrap();
    let w2 = param(10, 256, 4);
    let b2 = ops::reshape(&param(1, 10, 5), &[10]).unwrap();
    for threads in [1, 2] {
        let pool = pool_of(threads);
        c.bench_function(&format!("eager/mlp_forward/t{threads}"), |b| {
            pool.install(|| {
                b.iter(|| {
                    let h = ops::relu(
                        &ops::linear_with(&x, &w1, ops::LinearOptions { bias: Some(&b1) }).unwrap(),
                    )
                    .unwrap();
                    ops::linear_with(&h, &w2, ops::LinearOptions { bias: Some(&b2) }).unwrap()
                })
            })
        });
    }
}

criterion_group!(benches, eager_add, memory_bound, compute_bound, mlp_forward);
criterion_main!(benches);
