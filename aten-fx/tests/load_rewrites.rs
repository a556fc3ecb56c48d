//! What a program's graph becomes at load: constant folding (what is
//! folded: calls on known values only; what is kept: values a run-time
//! call reads; what is not folded: random or writing calls, values that
//! views or the output read), batch normalisations fused into their
//! convolutions, and pointwise chains fused into one pass (what is fused:
//! chains whose inner values only the next call reads; what is not: values
//! the output reads, chains across a write; operands the backend does not
//! serve run the calls one by one); the rewritten graphs compute what the
//! plain ones do (the same bits, or within the corpus tolerance for a
//! batch normalisation), and each rewrite has its switch.

mod support;

use std::path::PathBuf;

use aten_boxing::IValue;
use aten_core::ops;
use aten_core::Tensor;
use aten_fx::export::{load_safetensors, ExportedProgram, LoadOptions};
use aten_fx::{make_fx, Graph, Interpreter};
use c10_core::{Result, TensorBase};

fn iv(t: &Tensor) -> IValue {
    IValue::Tensor(t.base().clone())
}

fn tensor_of(v: &IValue) -> Tensor {
    match v {
        IValue::Tensor(t) => Tensor::from_base(t.clone()),
        other => panic!("not a tensor: {other:?}"),
    }
}

fn values(v: &IValue) -> Vec<f32> {
    tensor_of(v).base().to_vec::<f32>().unwrap()
}

/// `x` (user input) and `w` (a weight).
fn inputs() -> (Tensor, Tensor) {
    let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    let w = Tensor::from_slice(&[0.5f32, -1.0, 2.0, 1.5, 0.25, -0.75], &[2, 3]).unwrap();
    (x, w)
}

fn capture(f: impl FnOnce(&Tensor, &Tensor) -> Result<Vec<Tensor>>) -> Graph {
    support::ops_root();
    let (x, w) = inputs();
    make_fx(
        |xs| {
            let out = f(&tensor_of(&xs[0]), &tensor_of(&xs[1]))?;
            Ok(out.iter().map(iv).collect())
        },
        &["x", "w"],
        &[iv(&x), iv(&w)],
    )
    .unwrap()
}

/// Folds with `w` known; how many calls were folded, and the outputs of
/// the folded and of the unfolded graph on the same inputs.
fn fold(graph: &Graph) -> (usize, Vec<IValue>, Vec<IValue>) {
    let (x, w) = inputs();
    let plain = Interpreter::new(graph).unwrap();
    let mut folded = Interpreter::new(graph).unwrap();
    let count = folded.fold_constants(&[None, Some(iv(&w))]);
    let run = |i: &Interpreter| i.run(&[iv(&x), iv(&w)]).unwrap();
    (count, run(&folded), run(&plain))
}

#[test]
fn a_weights_transpose_is_folded_and_the_product_agrees() {
    let graph = capture(|x, w| Ok(vec![ops::mm(x, &ops::t(w)?)?]));
    let (count, folded, plain) = fold(&graph);
    assert_eq!(count, 1, "{}", graph.code());
    assert_eq!(values(&folded[0]), values(&plain[0]));
    assert_eq!(values(&plain[0]), [4.5, -0.25, 9.0, 2.75]);
}

#[test]
fn a_chain_on_weights_folds_whole_and_keeps_only_its_end() {
    let graph = capture(|x, w| {
        let w2 = ops::mul_scalar(&ops::t(w)?, 2.0.into())?;
        Ok(vec![ops::mm(x, &w2)?])
    });
    let (count, folded, plain) = fold(&graph);
    assert_eq!(count, 2, "{}", graph.code());
    assert_eq!(values(&folded[0]), values(&plain[0]));
}

#[test]
fn nothing_that_the_output_or_a_view_reads_is_folded() {
    // The output is a view of a folded value: every run must return its
    // own tensor, so the product is made at run time.
    let graph = capture(|_x, w| Ok(vec![ops::mul_scalar(w, 3.0.into())?]));
    assert_eq!(fold(&graph).0, 0);
    let graph = capture(|_x, w| Ok(vec![ops::t(&ops::mul_scalar(w, 3.0.into())?)?]));
    let (count, folded, plain) = fold(&graph);
    assert_eq!(count, 0, "{}", graph.code());
    assert_eq!(values(&folded[0]), values(&plain[0]));
    // Two runs of a folded graph give tensors that share no storage.
    let mut interp = Interpreter::new(&graph).unwrap();
    let (x, w) = inputs();
    interp.fold_constants(&[None, Some(iv(&w))]);
    let a = interp.run(&[iv(&x), iv(&w)]).unwrap();
    let b = interp.run(&[iv(&x), iv(&w)]).unwrap();
    ops::fill_scalar_(&tensor_of(&a[0]), 0.0.into()).unwrap();
    assert_eq!(values(&b[0]), values(&plain[0]));
}

#[test]
fn random_and_writing_calls_are_never_folded() {
    let uniform = || support::ops_root().overload("aten::uniform").unwrap();
    let graph = capture(|x, w| {
        let noise = uniform().call(&[iv(w)], &[]).unwrap();
        Ok(vec![ops::mm(x, &ops::t(&tensor_of(&noise[0]))?)?])
    });
    // Only the transpose of the noise could be folded, and it reads the
    // random call.
    assert_eq!(fold(&graph).0, 0, "{}", graph.code());
    let graph = capture(|x, w| {
        let wt = ops::t(w)?;
        let y = ops::mm(x, &wt)?;
        ops::relu_(&y)?;
        Ok(vec![y])
    });
    assert_eq!(fold(&graph).0, 0, "{}", graph.code());
}

#[test]
fn an_unknown_input_or_a_wrong_count_folds_nothing() {
    let graph = capture(|x, w| Ok(vec![ops::mm(x, &ops::t(w)?)?]));
    let mut interp = Interpreter::new(&graph).unwrap();
    assert_eq!(interp.fold_constants(&[None, None]), 0);
    assert_eq!(interp.fold_constants(&[None]), 0);
}

fn models(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/data/models")
        .join(file)
}

#[test]
fn an_exported_program_gives_the_same_bits_folded_or_not() {
    support::ops_root();
    let inputs: Vec<_> = load_safetensors(models("attention.inputs.safetensors"))
        .unwrap()
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    let folded = ExportedProgram::load(models("attention.pt2")).unwrap();
    let plain = ExportedProgram::load_with(
        models("attention.pt2"),
        &LoadOptions {
            fold_constants: false,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    assert!(folded.folded_calls() > 0);
    assert_eq!(plain.folded_calls(), 0);
    let (a, b) = (folded.run(&inputs).unwrap(), plain.run(&inputs).unwrap());
    for (a, b) in a.iter().zip(&b) {
        assert_eq!(a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
    }
}

/// The inputs of model `name`, and the model loaded with and without
/// fusion.
fn fused_and_plain(name: &str) -> (Vec<TensorBase>, ExportedProgram, ExportedProgram) {
    let inputs = load_safetensors(models(&format!("{name}.inputs.safetensors")))
        .unwrap()
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    let path = models(&format!("{name}.pt2"));
    let fused = ExportedProgram::load(&path).unwrap();
    let plain = ExportedProgram::load_with(
        &path,
        &LoadOptions {
            fuse: false,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    (inputs, fused, plain)
}

/// The two programs' outputs on `inputs` agree within the corpus
/// tolerance.
fn assert_within_tolerance(
    name: &str,
    fused: &ExportedProgram,
    plain: &ExportedProgram,
    inputs: &[TensorBase],
) {
    let (a, b) = (fused.run(inputs).unwrap(), plain.run(inputs).unwrap());
    for (a, b) in a.iter().zip(&b) {
        let (a, b) = (a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() <= 1e-4 + 1e-4 * y.abs(), "{name}: {x} vs {y}");
        }
    }
}

#[test]
fn batch_norms_fold_into_their_convolutions_within_the_tolerance() {
    support::ops_root();
    // The last in pre-dispatch form: `conv2d` and `batch_norm`.
    for name in ["cnn", "resnet10", "../models3/mobilenet_v2_ir"] {
        let (inputs, fused, plain) = fused_and_plain(name);
        let norms = fused
            .graph()
            .called_operators()
            .iter()
            .filter(|t| t.contains("batch_norm"))
            .count();
        assert!(norms > 0);
        assert_eq!(
            fused.fused_calls() - fused.fused_pointwise_calls(),
            norms,
            "{name}"
        );
        assert_eq!(plain.fused_calls(), 0);
        assert_within_tolerance(name, &fused, &plain, &inputs);
    }
}

/// A batch normalisation after a convolution is folded into the
/// convolution's bias and a per-channel product that joins the ReLU after
/// it. The convolution still reads its weight from the graph's input (no
/// scaled copy is made): the fused graph computes what the plain one does
/// within the tolerance, also when run with another weight.
#[test]
fn a_batch_norm_folds_into_its_convolution_without_copying_the_weight() {
    support::ops_root();
    let t = |v: Vec<f32>, s: &[i64]| Tensor::from_slice(&v, s).unwrap();
    let wave = |n: usize, k: usize| -> Vec<f32> {
        (0..n).map(|i| ((i * k) % 13) as f32 * 0.1 - 0.6).collect()
    };
    let x = t(wave(2 * 3 * 5 * 5, 7), &[2, 3, 5, 5]);
    let w = t(wave(4 * 3 * 3 * 3, 5), &[4, 3, 3, 3]);
    let gamma = t(vec![1.5, -0.5, 2.0, 0.75], &[4]);
    let beta = t(vec![0.1, 0.2, -0.3, 0.0], &[4]);
    let mean = t(vec![0.05, -0.1, 0.2, 0.0], &[4]);
    let var = t(vec![1.0, 0.5, 2.0, 0.25], &[4]);
    let all = [&x, &w, &gamma, &beta, &mean, &var].map(iv);
    let graph = make_fx(
        |xs| {
            let ts: Vec<Tensor> = xs.iter().map(tensor_of).collect();
            let y = ops::conv2d(&ts[0], &ts[1])?;
            let (y, _, _) = ops::_native_batch_norm_legit_no_training(
                &y,
                Some(&ts[2]),
                Some(&ts[3]),
                &ts[4],
                &ts[5],
                0.1,
                1e-5,
            )?;
            Ok(vec![iv(&ops::relu(&y)?)])
        },
        &["x", "w", "gamma", "beta", "mean", "var"],
        &all,
    )
    .unwrap();
    let plain = Interpreter::new(&graph).unwrap();
    let mut fused = Interpreter::new(&graph).unwrap();
    let known: Vec<Option<IValue>> = all
        .iter()
        .enumerate()
        .map(|(k, v)| (k > 0).then(|| v.clone()))
        .collect();
    assert_eq!(fused.fuse_batch_norms(&known), 1);
    // The product and the ReLU: one chain.
    assert_eq!(fused.fuse_pointwise(), 1);
    let targets = fused.targets();
    assert!(
        !targets.iter().any(|t| t.contains("batch_norm")),
        "{targets:?}"
    );
    assert!(
        targets.iter().any(|t| t == "aten::mul.Tensor"),
        "{targets:?}"
    );
    let agree = |inputs: &[IValue]| {
        let (a, b) = (fused.run(inputs).unwrap(), plain.run(inputs).unwrap());
        let (a, b) = (values(&a[0]), values(&b[0]));
        assert_eq!(a.len(), 2 * 4 * 3 * 3);
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() <= 1e-5 + 1e-5 * y.abs(), "{x} vs {y}");
        }
    };
    agree(&all);
    let mut other = all.clone();
    other[1] = iv(&t(wave(4 * 3 * 3 * 3, 3), &[4, 3, 3, 3]));
    agree(&other);
}

/// Fuses the pointwise chains of `graph`; how many calls were fused, and
/// the outputs of the fused and of the plain graph on `x`, `w`.
fn fuse(graph: &Graph, x: &Tensor, w: &Tensor) -> (usize, Vec<IValue>, Vec<IValue>) {
    let plain = Interpreter::new(graph).unwrap();
    let mut fused = Interpreter::new(graph).unwrap();
    let count = fused.fuse_pointwise();
    let run = |i: &Interpreter| i.run(&[iv(x), iv(w)]).unwrap();
    (count, run(&fused), run(&plain))
}

fn bits(v: &IValue) -> Vec<u64> {
    let t = tensor_of(v);
    match t.base().dtype() {
        Some(c10_core::ScalarType::Double) => t
            .base()
            .to_vec::<f64>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect(),
        _ => values(v).iter().map(|v| u64::from(v.to_bits())).collect(),
    }
}

/// SiLU as `mul(x, sigmoid(x))`, hardswish as PyTorch decomposes it, and
/// a residual sum with its ReLU.
fn chains(x: &Tensor, w: &Tensor) -> Result<Vec<Tensor>> {
    let silu = ops::mul_tensor(x, &ops::sigmoid(x)?)?;
    let three = ops::add_scalar(w, 3.0.into())?;
    let six = ops::clamp_with(
        &three,
        ops::ClampOptions {
            min: Some(0.0.into()),
            max: Some(6.0.into()),
        },
    )?;
    let hardswish = ops::div_scalar(&ops::mul_tensor(w, &six)?, 6.0.into())?;
    let residual = ops::relu(&ops::add_tensor(&silu, &hardswish)?)?;
    Ok(vec![residual])
}

#[test]
fn pointwise_chains_fuse_and_give_the_same_bits() {
    let graph = capture(chains);
    let (x, w) = inputs();
    let (count, fused, plain) = fuse(&graph, &x, &w);
    // Eight calls, one chain: seven fused into the last.
    assert_eq!(count, 7, "{}", graph.code());
    assert_eq!(bits(&fused[0]), bits(&plain[0]));
    // Larger operands, over several of the evaluator's blocks and threads.
    let big = |k: f32| {
        let v: Vec<f32> = (0..5000).map(|i| (i as f32 - 2500.0) * 0.003 * k).collect();
        Tensor::from_slice(&v, &[50, 100]).unwrap()
    };
    let (_, fused, plain) = fuse(&graph, &big(1.0), &big(-2.0));
    assert_eq!(bits(&fused[0]), bits(&plain[0]));
    // Both inputs one tensor: the chain reads one storage twice.
    let (_, fused, plain) = fuse(&graph, &x, &x);
    assert_eq!(bits(&fused[0]), bits(&plain[0]));
}

#[test]
fn operands_the_backend_declines_run_the_calls() {
    // Captured in float32, replayed in float64 and with shapes that
    // broadcast: the chain's calls run one by one.
    let graph = capture(chains);
    let to_f64 = |t: &Tensor| {
        let v: Vec<f64> = t
            .base()
            .to_vec::<f32>()
            .unwrap()
            .into_iter()
            .map(f64::from)
            .collect();
        Tensor::from_slice(&v, &t.sizes()).unwrap()
    };
    let (x, w) = inputs();
    let (count, fused, plain) = fuse(&graph, &to_f64(&x), &to_f64(&w));
    assert_eq!(count, 7);
    assert_eq!(bits(&fused[0]), bits(&plain[0]));
    // Transposed views: not contiguous.
    let (xt, wt) = (ops::t(&x).unwrap(), ops::t(&w).unwrap());
    let (_, fused, plain) = fuse(&graph, &xt, &wt);
    assert_eq!(bits(&fused[0]), bits(&plain[0]));
    let row = Tensor::from_slice(&[0.5f32, -1.0, 2.0], &[3]).unwrap();
    let (_, fused, plain) = fuse(&graph, &x, &row);
    assert_eq!(tensor_of(&fused[0]).sizes(), [2, 3]);
    assert_eq!(bits(&fused[0]), bits(&plain[0]));
}

/// An in-place activation ends the chain that makes the value it writes
/// when nothing else reads that value (pre-dispatch graphs' `hardtanh_`
/// and `relu_`); one that writes a graph input runs as it was.
#[test]
fn an_in_place_activation_ends_a_chain_whose_value_only_it_reads() {
    let graph = capture(|x, w| {
        let y = ops::mul_tensor(x, w)?;
        Ok(vec![ops::relu_(&y)?])
    });
    let (x, w) = inputs();
    let (count, fused, plain) = fuse(&graph, &x, &w);
    assert_eq!(count, 1, "{}", graph.code());
    assert_eq!(bits(&fused[0]), bits(&plain[0]));
    // The input itself is written: no fusion, and the write happens.
    let graph = capture(|x, w| Ok(vec![ops::add_tensor(&ops::relu_(x)?, w)?]));
    let (fresh, w) = inputs();
    let (count, _, _) = fuse(&graph, &fresh, &w);
    assert_eq!(count, 0, "{}", graph.code());
}

/// A chain whose input is a fresh value that dies with it (here `exp`'s)
/// writes its result in that value's place; the graph's own inputs, which
/// the caller holds, are never written.
#[test]
fn a_chain_writes_over_a_dying_input_but_never_the_callers() {
    let graph = capture(|x, w| {
        let e = ops::exp(x)?;
        let y = ops::mul_tensor(&e, w)?;
        Ok(vec![ops::relu(&ops::add_tensor(&y, x)?)?])
    });
    let (x, w) = inputs();
    let before = (values(&iv(&x)), values(&iv(&w)));
    let (count, fused, plain) = fuse(&graph, &x, &w);
    assert_eq!(count, 2, "{}", graph.code());
    assert_eq!(bits(&fused[0]), bits(&plain[0]));
    assert_eq!((values(&iv(&x)), values(&iv(&w))), before);
}

#[test]
fn values_the_output_reads_and_chains_across_a_write_are_not_fused() {
    let graph = capture(|x, _w| {
        let s = ops::sigmoid(x)?;
        Ok(vec![ops::mul_tensor(x, &s)?, s])
    });
    let (x, w) = inputs();
    let (count, fused, plain) = fuse(&graph, &x, &w);
    assert_eq!(count, 0, "{}", graph.code());
    assert_eq!(bits(&fused[1]), bits(&plain[1]));
    // The sigmoid must be taken before the write to `t`.
    let graph = capture(|x, _w| {
        let t = ops::add_scalar(x, 1.0.into())?;
        let s = ops::sigmoid(&t)?;
        ops::add_tensor_(&t, &t)?;
        Ok(vec![ops::mul_tensor(&t, &s)?])
    });
    let (count, fused, plain) = fuse(&graph, &x, &w);
    assert_eq!(count, 0, "{}", graph.code());
    assert_eq!(bits(&fused[0]), bits(&plain[0]));
}

#[test]
fn exported_activations_fuse_within_the_tolerance() {
    support::ops_root();
    for name in ["efficientnet_b0", "mobilenet_v3_small"] {
        let (inputs, fused, plain) = fused_and_plain(name);
        assert!(fused.fused_pointwise_calls() > 0, "{name}");
        assert_eq!(plain.fused_calls(), 0);
        assert_within_tolerance(name, &fused, &plain, &inputs);
    }
}

/// Counts the calls it sees.
struct Counting(std::sync::atomic::AtomicUsize);

impl aten_ops::TorchDispatchMode for Counting {
    fn torch_dispatch(
        &self,
        op: &aten_ops::OpOverload,
        args: &[IValue],
        kwargs: &[(&str, IValue)],
    ) -> Result<Vec<IValue>> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        op.call(args, kwargs)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[test]
fn under_a_mode_a_fused_chain_runs_its_calls() {
    let graph = capture(chains);
    let mut fused = Interpreter::new(&graph).unwrap();
    assert_eq!(fused.fuse_pointwise(), 7);
    let (x, w) = inputs();
    let plain = Interpreter::new(&graph)
        .unwrap()
        .run(&[iv(&x), iv(&w)])
        .unwrap();
    let mode = std::sync::Arc::new(Counting(Default::default()));
    let out = {
        let _guard = aten_ops::modes::push_mode(mode.clone());
        fused.run(&[iv(&x), iv(&w)]).unwrap()
    };
    // The mode sees every call of the chain, as it would unfused.
    assert_eq!(mode.0.load(std::sync::atomic::Ordering::Relaxed), 8);
    assert_eq!(bits(&out[0]), bits(&plain[0]));
}
