//! Kernels split over `rayon`'s threads give the single-threaded results:
//! elementwise loops bit for bit, reductions within rounding; and iterations
//! whose output overlaps an input stay on one thread (no data race).

use aten::{ops, Tensor};

fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

/// The same computation on 1 and 2 threads, as `f32` values.
fn both(f: impl Fn() -> Tensor + Sync) -> (Vec<f32>, Vec<f32>) {
    let one = on_threads(1, || f().to_vec::<f32>().unwrap());
    let two = on_threads(2, || f().to_vec::<f32>().unwrap());
    (one, two)
}

fn data(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 7919) % 1013) as f32 / 101.0 - 5.0)
        .collect()
}

#[test]
fn elementwise_loops_split_exactly() {
    let (rows, cols) = (300i64, 400i64);
    let x = Tensor::from_slice(&data((rows * cols) as usize), &[rows, cols]).unwrap();
    // A transposed view plus a broadcast row: strided, several dims.
    let xt = ops::as_strided(&x, &[cols, rows], &[1, cols]).unwrap();
    let b = Tensor::from_slice(&data(rows as usize), &[rows]).unwrap();
    let (one, two) = both(|| ops::mul_tensor(&ops::add_tensor(&xt, &b).unwrap(), &xt).unwrap());
    assert_eq!(one, two);
    let xv = x.to_vec::<f32>().unwrap();
    let bv = b.to_vec::<f32>().unwrap();
    for (k, got) in one.iter().enumerate() {
        let (c, r) = (k / rows as usize, k % rows as usize);
        let v = xv[r * cols as usize + c];
        assert_eq!(*got, (v + bv[r]) * v);
    }
}

#[test]
fn in_place_on_itself_splits() {
    let n = 200_000;
    let v = data(n);
    let x = Tensor::from_slice(&v, &[n as i64]).unwrap();
    on_threads(2, || x.add_tensor_(&x).unwrap());
    let got = x.to_vec::<f32>().unwrap();
    assert!(got.iter().zip(&v).all(|(g, v)| *g == v + v));
}

#[test]
fn partially_overlapping_in_place_is_refused() {
    // x[1..] += x[..n-1] over one storage: PyTorch's TensorIterator
    // refuses the partial overlap (the result would depend on the order
    // and the threads), on any number of threads, and writes nothing.
    let n = 100_000i64;
    let run = |threads| {
        let x = Tensor::from_slice(&vec![1i64; n as usize], &[n]).unwrap();
        let head = ops::as_strided(&x, &[n - 1], &[1]).unwrap();
        let tail = ops::as_strided_with(
            &x,
            &[n - 1],
            &[1],
            ops::AsStridedOptions {
                storage_offset: Some(1),
            },
        )
        .unwrap();
        let err = on_threads(threads, || tail.add_tensor_(&head).unwrap_err());
        assert!(err.message().starts_with(
            "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location."
        ));
        x.to_vec::<i64>().unwrap()
    };
    assert_eq!(run(1), vec![1; n as usize]);
    assert_eq!(run(2), vec![1; n as usize]);
}

#[test]
fn reductions_split_within_rounding() {
    let v = data(1 << 20);
    let x = Tensor::from_slice(&v, &[1024, 1024]).unwrap();
    let want: f64 = v.iter().map(|x| *x as f64).sum();
    let (one, two) = both(|| ops::sum(&x).unwrap());
    for got in [one[0], two[0]] {
        assert!((got as f64 - want).abs() <= 1e-6 * want.abs().max(1.0));
    }
    // Many kept positions, reduced over a strided dim.
    let (one, two) = both(|| ops::mean_dim(&x, Some(&[0])).unwrap());
    assert_eq!(one.len(), 1024);
    for (c, (a, b)) in one.iter().zip(&two).enumerate() {
        let want: f64 = (0..1024).map(|r| v[r * 1024 + c] as f64).sum::<f64>() / 1024.0;
        assert!((*a as f64 - want).abs() < 1e-5 && a == b);
    }
}

#[test]
fn scans_and_softmax_split_exactly() {
    let x = Tensor::from_slice(&data(512 * 300), &[512, 300]).unwrap();
    for dim in [0, 1] {
        let (one, two) = both(|| ops::softmax_int(&x, dim).unwrap());
        assert_eq!(one, two);
        let (one, two) = both(|| ops::log_softmax_int(&x, dim).unwrap());
        assert_eq!(one, two);
        let (one, two) = both(|| ops::cumsum(&x, dim).unwrap());
        assert_eq!(one, two);
    }
    // Rows of the last-dim fast path sum to one.
    let s = ops::softmax_int(&x, 1).unwrap().to_vec::<f32>().unwrap();
    for row in s.chunks(300) {
        assert!((row.iter().map(|v| *v as f64).sum::<f64>() - 1.0).abs() < 1e-5);
    }
}

#[test]
fn products_split_exactly() {
    // `x @ w.t()` (`linear`: dot-product blocks, split by columns of the
    // weight) and `g.t() @ x` (row blocks), big enough to be split on two
    // threads; each element of `C` is computed by one thread as on one, so
    // the results are identical.
    let x = Tensor::from_slice(&data(64 * 784), &[64, 784]).unwrap();
    let w = Tensor::from_slice(&data(256 * 784), &[256, 784]).unwrap();
    let g = Tensor::from_slice(&data(64 * 256), &[64, 256]).unwrap();
    let (one, two) = both(|| ops::linear(&x, &w).unwrap());
    assert_eq!(one, two);
    let (xv, wv) = (x.to_vec::<f32>().unwrap(), w.to_vec::<f32>().unwrap());
    for (i, j) in [(0, 0), (63, 255), (17, 130), (40, 127), (40, 128)] {
        let want: f64 = (0..784)
            .map(|p| xv[i * 784 + p] as f64 * wv[j * 784 + p] as f64)
            .sum();
        let got = one[i * 256 + j] as f64;
        assert!(
            (got - want).abs() <= 1e-3 * want.abs().max(1.0),
            "({i}, {j}): {got} vs {want}"
        );
    }
    let (one, two) = both(|| ops::mm(&ops::t(&g).unwrap(), &x).unwrap());
    assert_eq!(one, two);
}

#[test]
fn kernels_called_from_a_parallel_iterator_share_one_storage() {
    // A user's own `par_iter` over row blocks of one tensor, each block big
    // enough for the kernel to split it: a worker waiting for its kernel's
    // chunks never runs another block's kernel, which would find this
    // thread's borrow of the storage taken ("already borrowed").
    use rayon::prelude::*;
    let (blocks, rows, cols) = (8i64, 64i64, 1024i64);
    let big = Tensor::from_slice(
        &vec![1.0f32; (blocks * rows * cols) as usize],
        &[blocks * rows, cols],
    )
    .unwrap();
    let one = Tensor::from_slice(&[1.0f32], &[]).unwrap();
    on_threads(4, || {
        (0..blocks).into_par_iter().for_each(|i| {
            let block = ops::narrow(&big, 0, i * rows, rows).unwrap();
            for _ in 0..5 {
                ops::add_tensor_(&block, &one).unwrap();
            }
        })
    });
    assert!(big.to_vec::<f32>().unwrap().iter().all(|&v| v == 6.0));
}
