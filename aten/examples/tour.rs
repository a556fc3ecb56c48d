//! A guided tour of the stack, printed for a reader who knows PyTorch.
//!
//! Run with `cargo run --release --example tour`. Each section shows one
//! layer, from dispatch keys to a two-layer MLP running on the CPU kernels,
//! trained by autograd, and the `torch.ops` layer above it all.

use aten::boxing::{IValue, Stack};
use aten::c10::dispatch_key_set::AFTER_AUTOGRAD_KEYSET;
use aten::c10::dispatch_key_set::{
    get_runtime_dispatch_key_set, DEFAULT_EXCLUDED_SET, DEFAULT_INCLUDED_SET,
};
use aten::c10::local_dispatch_key_set::tls_local_dispatch_key_set;
use aten::c10::{
    AutoDispatchBelowAutograd, Device, ScalarType, TensorBase, TensorImpl, NUM_RUNTIME_ENTRIES,
};
use aten::dispatch::{trace, CppFunction, Library, LibraryKind};
use aten::{BackendComponent, DispatchKey, DispatchKeySet, Result};

fn section(title: &str) {
    println!("\n== {title} ==");
}

/// The CPU kernel of `tour::scale`: a plain Rust function.
fn scale_cpu(x: &TensorBase, factor: i64) -> Result<i64> {
    Ok(x.sizes().iter().product::<i64>() * factor)
}

fn main() -> Result<()> {
    dispatch_keys();
    let tensor = priority();
    thread_local_state(tensor);
    alias_keys();
    custom_operator()
}

/// Section 1: dispatch keys and key sets.
fn dispatch_keys() {
    section("1. Dispatch keys");
    println!(
        "A CPU tensor that requires grad carries {}.",
        DispatchKeySet::from_keys(&[DispatchKey::CPU, DispatchKey::AutogradCPU])
    );
    println!(
        "CPU is a per-backend key: functionality {} crossed with backend {}.",
        DispatchKey::CPU.to_functionality_key(),
        DispatchKey::CPU.to_backend_component()
    );
    let cross = DispatchKeySet::from_keys(&[DispatchKey::AutogradCUDA, DispatchKey::CPU]);
    println!(
        "Key sets are cross products: {{AutogradCUDA, CPU}} is {cross} (raw 0x{:x}).",
        cross.raw_repr()
    );
}

/// Section 2: the order in which a call's keys run; returns the call's
/// key set.
fn priority() -> DispatchKeySet {
    section("2. Priority: which kernel runs first");
    let tensor = DispatchKeySet::from_keys(&[
        DispatchKey::CPU,
        DispatchKey::AutogradCPU,
        DispatchKey::ADInplaceOrView,
    ]);
    println!("Keys of the call: {tensor}");
    let mut rest = tensor;
    let mut step = 1;
    while !rest.is_empty() {
        let k = rest.highest_priority_type_id();
        if k == DispatchKey::Undefined {
            break;
        }
        let role = if k.to_functionality_key() == DispatchKey::Dense {
            "the backend kernel computes the result"
        } else {
            "its kernel does its part and redispatches below itself"
        };
        println!(
            "  step {step}: {k:<16} (table slot {:>3}): {role}",
            k.dispatch_table_index()
        );
        rest = rest & DispatchKeySet::full_after(k);
        step += 1;
    }
    println!(
        "Every operator has a flat table of {NUM_RUNTIME_ENTRIES} slots, one per runtime key."
    );
    tensor
}

/// Section 3: thread-local include and exclude sets, with the call of
/// section 2 (`tensor`).
fn thread_local_state(tensor: DispatchKeySet) {
    section("3. Thread-local state");
    println!("A new thread includes {DEFAULT_INCLUDED_SET}");
    println!("and excludes {DEFAULT_EXCLUDED_SET}.");
    {
        let _below = AutoDispatchBelowAutograd::new();
        let tls = tls_local_dispatch_key_set();
        let effective = (tensor | tls.included) - tls.excluded;
        println!(
            "Inside AutoDispatchBelowAutograd the same call starts at {} ({effective}).",
            effective.highest_priority_type_id()
        );
    }
    let tls = tls_local_dispatch_key_set();
    println!(
        "After the guard, it starts at {} again.",
        ((tensor | tls.included) - tls.excluded).highest_priority_type_id()
    );
}

/// Section 4: the runtime slots an alias key fills.
fn alias_keys() {
    section("4. Alias keys");
    for alias in [
        DispatchKey::Autograd,
        DispatchKey::CompositeExplicitAutograd,
        DispatchKey::CompositeImplicitAutograd,
    ] {
        let keys = get_runtime_dispatch_key_set(alias);
        println!(
            "A kernel registered to {alias} fills {} runtime slots, e.g. CPU: {}, AutogradCPU: {}.",
            keys.iter().count(),
            keys.has(DispatchKey::CPU),
            keys.has(DispatchKey::AutogradCPU)
        );
    }
    println!(
        "Backends without their own autograd key use {}: HIP -> {}.",
        DispatchKey::AutogradOther,
        BackendComponent::HIPBit.autograd_key()
    );
}

/// Section 5: a custom operator with kernels at several keys.
fn custom_operator() -> Result<()> {
    section("5. The dispatcher: a custom operator");
    let dispatcher = aten::dispatcher();
    let mut def = Library::new(LibraryKind::Def, "tour", None, file!(), line!())?;
    def.def("scale(Tensor x, int factor) -> int")?;
    let mut cpu = Library::new(
        LibraryKind::Impl,
        "tour",
        Some(DispatchKey::CPU),
        file!(),
        line!(),
    )?;
    cpu.impl_("scale", CppFunction::from_unboxed(scale_cpu))?;
    let op = dispatcher.find_schema_or_throw("tour::scale", "")?;
    let typed = op.typed::<(&TensorBase, i64), i64>()?;
    let below = typed.clone();
    let mut autograd = Library::new(
        LibraryKind::Impl,
        "tour",
        Some(DispatchKey::AutogradCPU),
        file!(),
        line!(),
    )?;
    autograd.impl_(
        "scale",
        CppFunction::from_unboxed(move |keys: DispatchKeySet, x: &TensorBase, factor: i64| {
            println!("  [AutogradCPU kernel] recording nothing, redispatching below autograd");
            below.redispatch(keys & AFTER_AUTOGRAD_KEYSET, (x, factor))
        }),
    )?;
    let mut tracer = Library::new(
        LibraryKind::Impl,
        "_",
        Some(DispatchKey::Tracer),
        file!(),
        line!(),
    )?;
    tracer.fallback(CppFunction::from_boxed(|op, keys, stack| {
        println!(
            "  [Tracer fallback] {} with {} arguments on the stack",
            op.operator_name(),
            stack.len()
        );
        op.redispatch_boxed(
            keys & DispatchKeySet::full_after(DispatchKey::Tracer),
            stack,
        )
    }))?;

    let x = TensorBase::from_impl(TensorImpl::new(
        TensorImpl::default_key_set(Device::CPU),
        ScalarType::Float,
        Device::CPU,
        vec![2, 3],
    )?);
    println!("x carries {}", x.key_set());
    let ((), lines) = trace::capture(|| {
        let r = typed
            .call((&x, 10))
            .map(|r| println!("typed call: tour::scale(x, 10) = {r}"));
        if let Err(e) = r {
            println!("typed call failed: {e}");
        }
    });
    print!("dispatch trace:\n{lines}");
    let mut stack: Stack = vec![IValue::Tensor(x.clone()), IValue::Int(2)];
    op.call_boxed(&mut stack)?;
    println!("boxed call:  stack after the call = {stack:?}");
    {
        let _tracing = aten::c10::IncludeDispatchKeyGuard::new(DispatchKey::Tracer);
        let r = typed.call((&x, 1))?;
        println!("with Tracer included for this thread the call still returns {r}");
    }
    println!("\nIts computed table (non-empty slots):");
    for line in op.dump_computed_table().lines() {
        if !line.contains("[backend fallback]")
            || line.starts_with("Tracer")
            || line.starts_with("AutogradCPU")
        {
            println!("  {line}");
        }
    }
    drop(autograd);
    let mut skip = Library::new(
        LibraryKind::Impl,
        "tour",
        Some(DispatchKey::AutogradCPU),
        file!(),
        line!(),
    )?;
    skip.impl_("scale", CppFunction::fallthrough())?;
    let ((), lines) = trace::capture(|| {
        let _ = typed.call((&x, 3));
    });
    print!("with a fallthrough at AutogradCPU, the call goes straight to CPU:\n{lines}");
    mlp()
}

/// Section 6: a two-layer MLP from the operator library.
fn mlp() -> Result<()> {
    use aten::{ops, Generator, Tensor};
    section("6. A two-layer MLP, end to end through the dispatcher");
    let g = Generator::new(Device::CPU, 0);
    let randn = |shape: &[i64], scale: f64| -> Result<Tensor> {
        let t = ops::randn_generator(shape, Some(g.clone()))?;
        ops::mul_scalar(&t, aten::Scalar::Double(scale))
    };
    let (batch, inputs, hidden, classes) = (64, 784, 256, 10);
    let x = randn(&[batch, inputs], 1.0)?;
    let w1 = randn(&[hidden, inputs], (1.0 / inputs as f64).sqrt())?;
    let b1 = ops::zeros(&[hidden])?;
    let w2 = randn(&[classes, hidden], (1.0 / hidden as f64).sqrt())?;
    let b2 = ops::zeros(&[classes])?;
    let target = ops::arange(aten::Scalar::Int(batch))?;
    let target = ops::remainder_scalar(&target, aten::Scalar::Int(classes))?;
    let forward = || -> Result<(Tensor, Tensor, Tensor)> {
        let h = ops::relu(&ops::linear_with(
            &x,
            &w1,
            ops::LinearOptions { bias: Some(&b1) },
        )?)?;
        let logits = ops::linear_with(&h, &w2, ops::LinearOptions { bias: Some(&b2) })?;
        let loss = ops::cross_entropy_loss(&logits, &target)?;
        Ok((h, logits, loss))
    };
    let (h, logits, loss) = forward()?;
    println!("input   {:?} float32", x.sizes());
    println!(
        "hidden  {:?} = relu(linear(input, w1 {:?}, b1))",
        h.sizes(),
        w1.sizes()
    );
    println!(
        "logits  {:?} = linear(hidden, w2 {:?}, b2)",
        logits.sizes(),
        w2.sizes()
    );
    println!(
        "loss    {:?} = cross_entropy(logits, target): {:.4} (ln 10 = {:.4} for a guess)",
        loss.sizes(),
        loss.to_vec::<f32>()?[0],
        (classes as f32).ln()
    );
    let (_, lines) = trace::capture(|| forward().map(|_| ()));
    println!("dispatch trace of one forward step (each operator, the key that ran it):");
    for line in lines.lines() {
        println!("  {line}");
    }
    train()
}

/// Two interleaved spirals of `n` points each: inputs `[2n, 2]`, labels
/// `[2n]` (0 or 1).
fn spirals(n: usize) -> Result<(aten::Tensor, aten::Tensor)> {
    let mut points = Vec::with_capacity(4 * n);
    let mut labels = Vec::with_capacity(2 * n);
    for class in 0..2 {
        for i in 0..n {
            let t = i as f32 / n as f32;
            let r = 0.1 + 0.9 * t;
            let theta = 3.0 * std::f32::consts::PI * t + class as f32 * std::f32::consts::PI;
            // A deterministic wobble in place of noise.
            let wobble = 0.02 * ((i * 7919 + class * 104_729) % 13) as f32 / 13.0;
            points.push((r + wobble) * theta.cos());
            points.push((r + wobble) * theta.sin());
            labels.push(class as i64);
        }
    }
    Ok((
        aten::Tensor::from_vec(points, &[2 * n as i64, 2])?,
        aten::Tensor::from_vec(labels, &[2 * n as i64])?,
    ))
}

/// Section 7: the MLP trained by autograd.
fn train() -> Result<()> {
    use aten::autograd::{self, TensorAutograd};
    use aten::{ops, Generator, Scalar, Tensor};
    section("7. Autograd: training the MLP on two spirals");
    let (x, y) = spirals(200)?;
    let g = Generator::new(Device::CPU, 1);
    let init = |shape: &[i64], fan_in: i64| -> Result<Tensor> {
        let u = ops::rand_generator(shape, Some(g.clone()))?;
        let bound = 1.0 / (fan_in as f64).sqrt();
        let t = ops::mul_scalar(
            &ops::sub_scalar(&u, Scalar::Double(0.5))?,
            Scalar::Double(2.0 * bound),
        )?;
        t.requires_grad_(true)
    };
    let hidden = 128;
    let w1 = init(&[hidden, 2], 2)?;
    let b1 = init(&[hidden], 2)?;
    let w2 = init(&[2, hidden], hidden)?;
    let b2 = init(&[2], hidden)?;
    let params = [w1.clone(), b1.clone(), w2.clone(), b2.clone()];
    println!(
        "{} points in two interleaved spirals; MLP 2-{hidden}-2 (relu), full-batch SGD",
        x.sizes()[0]
    );
    let forward = || -> Result<Tensor> {
        let h = ops::relu(&ops::linear_with(
            &x,
            &w1,
            ops::LinearOptions { bias: Some(&b1) },
        )?)?;
        ops::linear_with(&h, &w2, ops::LinearOptions { bias: Some(&b2) })
    };
    let accuracy = |logits: &Tensor| -> Result<f64> {
        let predicted = ops::argmax_with(
            logits,
            ops::ArgmaxOptions {
                dim: Some(1),
                keepdim: false,
            },
        )?;
        let hits = ops::sum(&ops::eq_tensor(&predicted, &y)?)?;
        Ok(hits.to_vec::<i64>()?[0] as f64 / y.numel() as f64)
    };
    let lr = Scalar::Double(0.5);
    let mut step = 0;
    let mut acc = 0.0;
    while step < 20_000 {
        let logits = forward()?;
        let loss = ops::cross_entropy_loss(&logits, &y)?;
        if step % 500 == 0 {
            acc = accuracy(&logits)?;
            println!(
                "  step {step:>5}  loss {:.4}  accuracy {:.1}%",
                loss.to_vec::<f32>()?[0],
                100.0 * acc
            );
            if acc > 0.95 {
                break;
            }
        }
        loss.backward()?;
        let _no_grad = autograd::no_grad();
        for p in &params {
            if let Some(grad) = p.grad() {
                ops::sub_tensor_with_(p, &grad, ops::SubTensorInplaceOptions { alpha: lr })?;
                ops::zero_(&grad)?;
            }
        }
        step += 1;
    }
    println!("accuracy {:.1}% after {step} steps", 100.0 * acc);
    let loss = ops::cross_entropy_loss(&forward()?, &y)?;
    let (result, lines) = trace::capture(|| loss.backward());
    result?;
    println!("dispatch trace of one backward step (each operator the formulas call, the key that ran it):");
    for line in lines.lines() {
        println!("  {line}");
    }
    torch_ops()
}

/// Section 8: `torch.ops`, runtime libraries, host kernels, `cond` and a
/// custom class.
fn torch_ops() -> Result<()> {
    use aten::Tensor;

    section("8. torch.ops: packets, overloads, runtime libraries, cond, custom classes");
    let a = Tensor::from_slice(&[1.0f32, 2.0], &[2])?;
    packets_and_overloads(&a)?;
    let mut lib = aten::torch_ops::Library::new("tour", "FRAGMENT", "")?;
    runtime_library(&mut lib, &a)?;
    higher_order_cond(&a)?;
    custom_class(&mut lib)?;
    modes()
}

/// A tensor as an `IValue`.
fn iv(t: &aten::Tensor) -> IValue {
    IValue::Tensor(t.base().clone())
}

/// A result's values (NaN for a non-tensor result).
fn values(v: &IValue) -> Result<Vec<f32>> {
    match v {
        IValue::Tensor(t) => aten::Tensor::from_base(t.clone()).to_vec::<f32>(),
        other => Ok(vec![f32::NAN; usize::from(!other.is_none())]),
    }
}

/// Section 8, first part: an overload packet resolving its overload from
/// the arguments.
fn packets_and_overloads(a: &aten::Tensor) -> Result<()> {
    let add = aten::ops_root().aten().op("add")?;
    println!("{add:?} has overloads {:?}", add.overloads());
    for args in [vec![iv(a), iv(a)], vec![iv(a), IValue::Int(10)]] {
        let shown: Vec<String> = args.iter().map(|v| v.type_name()).collect();
        let out = add.call(&args, &[("alpha", IValue::Int(2))])?;
        println!(
            "aten.add({}, alpha=2) = {:?}",
            shown.join(", "),
            values(&out[0])?
        );
    }
    let e = add.call(&[IValue::Int(1)], &[]).unwrap_err();
    let first_lines: Vec<&str> = e.message().lines().take(2).collect();
    println!("aten.add(1) fails:\n  {}", first_lines.join("\n  "));
    Ok(())
}

/// Section 8: an operator defined at run time, with CPU and Meta kernels
/// and a host kernel under the Python dispatcher.
fn runtime_library(lib: &mut aten::torch_ops::Library, a: &aten::Tensor) -> Result<()> {
    use aten::torch_ops::enable_python_dispatcher;
    use aten::{ops, Tensor};

    lib.define("cube(Tensor x) -> Tensor", "", &[])?;
    lib.impl_(
        "cube",
        CppFunction::from_unboxed(|x: &Tensor| ops::mul_tensor(&ops::mul_tensor(x, x)?, x)),
        "CPU",
    )?;
    lib.impl_(
        "cube",
        CppFunction::from_unboxed(|x: &Tensor| ops::empty_like(x)),
        "Meta",
    )?;
    let cube = aten::ops_root()
        .namespace("tour")
        .op("cube")?
        .overload("default")?;
    println!(
        "{cube:?} on CPU: {:?}",
        values(&cube.call(&[iv(a)], &[])?[0])?
    );
    let meta = Tensor::empty(&[5, 7], ScalarType::Float, Device::META)?;
    if let IValue::Tensor(m) = &cube.call(&[iv(&meta)], &[])?[0] {
        println!("on Meta: sizes {:?}, no data", m.sizes().to_vec());
    }
    cube.py_impl(DispatchKey::CPU, |op, _keys, stack| {
        op.call_with_dispatch_key(DispatchKey::CPU, stack)?;
        if let Some(IValue::Tensor(t)) = stack.first() {
            stack[0] = IValue::Tensor(ops::neg(&Tensor::from_base(t.clone()))?.base().clone());
        }
        Ok(())
    })?;
    let _python_dispatcher = enable_python_dispatcher();
    println!(
        "with a host kernel at CPU (negates), under the Python dispatcher: {:?}",
        values(&cube.call(&[iv(a)], &[])?[0])?
    );
    Ok(())
}

/// Section 8: the `cond` higher-order operator.
fn higher_order_cond(a: &aten::Tensor) -> Result<()> {
    use std::sync::Arc;

    use aten::torch_ops::higher_order::cond;
    use aten::torch_ops::GraphFn;
    use aten::{ops, Tensor};

    let double: GraphFn = Arc::new(|args: &[IValue]| {
        let IValue::Tensor(x) = &args[0] else {
            return Ok(args.to_vec());
        };
        Ok(vec![IValue::Tensor(
            ops::mul_scalar(&Tensor::from_base(x.clone()), 2.0.into())?
                .base()
                .clone(),
        )])
    });
    let identity: GraphFn = Arc::new(|args: &[IValue]| Ok(args.to_vec()));
    for flag in [true, false] {
        let pred = Tensor::from_slice(&[flag], &[])?;
        let out = cond(&iv(&pred), double.clone(), identity.clone(), &[iv(a)])?;
        println!(
            "cond(tensor({flag}), double, identity, (x,)) = {:?}",
            values(&out[0])?
        );
    }
    Ok(())
}

/// Section 8: a custom class (TorchBind) and an operator that takes one.
fn custom_class(lib: &mut aten::torch_ops::Library) -> Result<()> {
    use std::sync::atomic::{AtomicI64, Ordering};

    use aten::torch_ops::custom_class::{class_, downcast_object};

    struct Accumulator(AtomicI64);
    let class = class_::<Accumulator>("tour", "Accumulator")
        .def_init(|args| match args.first() {
            Some(IValue::Int(start)) => Ok(Accumulator(AtomicI64::new(*start))),
            _ => Ok(Accumulator(AtomicI64::new(0))),
        })
        .def("add", |this, args| match args.first() {
            Some(IValue::Int(n)) => Ok(IValue::Int(this.0.fetch_add(*n, Ordering::SeqCst) + n)),
            _ => Err(aten::Error::type_error("add expects an int")),
        })
        .register()?;
    let acc = class.instantiate(&[IValue::Int(100)])?;
    lib.define(
        "total(__torch__.torch.classes.tour.Accumulator acc) -> int",
        "",
        &[],
    )?;
    lib.impl_(
        "total",
        CppFunction::from_boxed(|_, _, stack| {
            let total = stack
                .pop()
                .as_ref()
                .and_then(downcast_object::<Accumulator>)
                .map(|a| a.0.load(Ordering::SeqCst));
            stack.push(IValue::Int(total.unwrap_or(-1)));
            Ok(())
        }),
        "",
    )?;
    class.call_method(&acc, "add", &[IValue::Int(23)])?;
    let total = aten::ops_root().namespace("tour").op("total")?;
    println!(
        "{acc}: after add(23), tour.total(acc) = {:?} ({:?})",
        total.call(std::slice::from_ref(&acc), &[])?[0],
        total.overload("default")?.kind()
    );
    Ok(())
}

/// Section 9: dispatch modes, a logging tensor subclass, FakeTensor.
fn modes() -> Result<()> {
    use std::sync::{Arc, Mutex};

    use aten::torch_ops::fake::FakeTensorMode;
    use aten::torch_ops::subclass::LoggingTensor;
    use aten::torch_ops::{push_mode, OpOverload, TorchDispatchMode};
    use aten::{ops, Tensor};

    section("9. Dispatch modes, tensor subclasses, FakeTensor");
    /// Counts the operators called below autograd, and forwards them.
    struct Counting(Mutex<Vec<String>>);
    impl TorchDispatchMode for Counting {
        fn torch_dispatch(
            &self,
            op: &OpOverload,
            args: &[IValue],
            kwargs: &[(&str, IValue)],
        ) -> Result<Vec<IValue>> {
            if let Ok(mut seen) = self.0.lock() {
                seen.push(op.to_string());
            }
            op.call(args, kwargs)
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }
    let x = Tensor::from_slice(&[1.0f32, -2.0, 3.0], &[3])?;
    let counting = Arc::new(Counting(Mutex::new(Vec::new())));
    let y = {
        let _mode = push_mode(counting.clone());
        ops::sum(&ops::relu(&ops::mul_tensor(&x, &x)?)?)?
    };
    println!(
        "a counting mode saw {:?}; the result is still {:?}",
        counting.0.lock().map(|s| s.clone()).unwrap_or_default(),
        y.to_vec::<f32>()?
    );

    let logging = LoggingTensor::new();
    let lx = Tensor::from_base(logging.wrap(x.base())?);
    let ly = ops::neg(&ops::add_tensor(&lx, &x)?)?;
    println!(
        "a LoggingTensor recorded {:?}; unwrapped: {:?}",
        logging.log(),
        Tensor::from_base(logging.unwrap(ly.base())).to_vec::<f32>()?
    );

    let cuda = Device::new(aten::c10::device::DeviceType::CUDA, 0);
    let fake = FakeTensorMode::new();
    let f = |sizes: &[i64]| -> Result<Tensor> {
        Ok(Tensor::from_base(fake.fake_tensor(
            sizes,
            ScalarType::Float,
            cuda,
        )?))
    };
    let (input, w1, b1, w2) = (f(&[4096, 2])?, f(&[2, 256])?, f(&[256])?, f(&[256, 3])?);
    {
        let _fake = push_mode(fake.clone());
        let hidden = ops::relu(&ops::add_tensor(&ops::mm(&input, &w1)?, &b1)?)?;
        let logits = ops::log_softmax_int(&ops::mm(&hidden, &w2)?, 1)?;
        println!(
            "under FakeTensor, the MLP's logits on {cuda}: sizes {:?}, strides {:?}, dtype {:?}, no CUDA needed",
            logits.sizes().to_vec(),
            logits.layout().map(|l| l.strides().to_vec()).unwrap_or_default(),
            logits.dtype().unwrap_or(ScalarType::Float)
        );
    }
    capture()
}

/// Section 9, continued: a program with an in-place update through a view,
/// captured as it runs and captured functionalized.
fn capture() -> Result<()> {
    use aten::c10::TensorBase;
    use aten::fx::make_fx;
    use aten::torch_ops::{functionalize, Remove};
    use aten::{ops, Tensor};

    let program = |xs: &[IValue]| -> Result<Vec<IValue>> {
        let IValue::Tensor(x) = &xs[0] else {
            return Err(aten::c10::Error::runtime("expected a tensor"));
        };
        let x = Tensor::from_base(x.clone());
        let row = ops::select_int(&x, 0, 1)?;
        ops::add_tensor_(&row, &Tensor::from(TensorBase::wrapped_number(1.0f64)?))?;
        let y = ops::relu(&ops::t(&x)?)?;
        Ok(vec![IValue::Tensor(y.base().clone())])
    };
    let x = || -> Result<IValue> {
        let t = Tensor::from_slice(&[-1.0f32, 2.0, -3.0, 4.0, -5.0, 6.0], &[2, 3])?;
        Ok(IValue::Tensor(t.base().clone()))
    };
    let graph = make_fx(program, &["x"], &[x()?])?;
    println!(
        "make_fx of a program writing into a row of x:{}",
        graph.code()
    );
    let functional = make_fx(
        |xs| functionalize(program, xs, Remove::MutationsAndViews),
        &["x"],
        &[x()?],
    )?;
    println!(
        "the same, functionalized (no mutation left but writing x back):{}",
        functional.code()
    );
    exported()
}

/// Section 10: a program exported by `torch.export` and saved with
/// `torch.export.save`, loaded from its `.pt2` archive and run.
fn exported() -> Result<()> {
    use aten::fx::export::{load_safetensors, ExportedProgram};
    use std::collections::BTreeMap;

    section("10. Running a program exported by torch.export (.pt2)");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/data/models");
    let program = ExportedProgram::load(dir.join("cnn.pt2"))?;
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for target in program.targets() {
        *counts.entry(target).or_default() += 1;
    }
    println!(
        "cnn.pt2 (a small ResNet: conv-BN-ReLU stem, two residual blocks, pooling, a linear head): {} nodes",
        program.num_nodes()
    );
    for (target, n) in &counts {
        println!("  {n:>2} x {target}");
    }
    for spec in program.inputs() {
        let sizes: Vec<String> = spec.sizes.iter().map(|s| s.to_string()).collect();
        println!(
            "input `{}`: {} [{}]",
            spec.name,
            spec.dtype.python_name(),
            sizes.join(", ")
        );
    }
    let inputs: Vec<TensorBase> = load_safetensors(dir.join("cnn.inputs.safetensors"))?
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    let start = std::time::Instant::now();
    let outputs = program.run(&inputs)?;
    let elapsed = start.elapsed();
    let expected = load_safetensors(dir.join("cnn.expected.safetensors"))?;
    let logits = outputs[0].to_vec::<f32>()?;
    let reference = expected[0].1.to_vec::<f32>()?;
    let worst = logits
        .iter()
        .zip(&reference)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    let classes: Vec<usize> = logits
        .chunks(10)
        .map(|row| {
            (0..row.len())
                .max_by(|&i, &j| row[i].total_cmp(&row[j]))
                .unwrap_or(0)
        })
        .collect();
    println!(
        "ran in {:.3} ms: logits {:?}, predicted classes {classes:?}; largest difference from PyTorch's outputs {worst:.1e}",
        elapsed.as_secs_f64() * 1e3,
        &outputs[0].sizes()[..]
    );
    Ok(())
}
