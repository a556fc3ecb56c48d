//! `eager/*` and `kernels/*`: operator latency and kernel throughput,
//! mirroring libtorch's `bench_eager`, `bench_add_bw` and friends
//! (`../shared/perf/`).
//!
//! - `eager/add_1`: `add` of two one-element float32 tensors through the
//!   typed API, output allocated;
//! - `kernels/add_16m_f32`: 16M float32 elements into a preallocated output;
//! - `kernels/sum_16m_f32`: the sum of 16M float32 elements;
//! - `kernels/softmax_1k_x_1k`: softmax over the last dim of 1024x1024;
//!
//! each `kernels/*` on a `rayon` pool of 1 (`/t1`) and 2 (`/t2`) threads.

// criterion_group! generates undocumented items.
#![allow(missing_docs)]

use aten::{ops, Scalar, Tensor};
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};

fn bench(c: &mut Criterion) {
    let a1 = Tensor::from_slice(&[1.5f32], &[1]).unwrap();
    let b1 = Tensor::from_slice(&[2.5f32], &[1]).unwrap();
    c.bench_function("eager/add_1", |b| {
        b.iter(|| ops::add_tensor(black_box(&a1), black_box(&b1)).unwrap())
    });

    let n = 16 * 1024 * 1024;
    let data: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.001).collect();
    let a = Tensor::from_slice(&data, &[n as i64]).unwrap();
    let bt = Tensor::from_slice(&data, &[n as i64]).unwrap();
    let out = Tensor::from_slice(&data, &[n as i64]).unwrap();
    let m = Tensor::from_slice(&data[..1024 * 1024], &[1024, 1024]).unwrap();
    let mut g = c.benchmark_group("kernels");
    g.sample_size(20);
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
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

criterion_group!(benches, bench);
criterion_main!(benches);
