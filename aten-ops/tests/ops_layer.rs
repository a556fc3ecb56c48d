//! The `torch.ops` layer end to end: namespaces, packets and overload
//! resolution, overloads, host kernels under the Python dispatcher, runtime
//! libraries, boxed fallbacks that inspect the operator, higher-order
//! operators and custom classes, with PyTorch's error texts.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use aten_autograd::TensorAutograd;
use aten_boxing::{IValue, Stack};
use aten_core::ops;
use aten_core::Tensor;
use aten_dispatch::CppFunction;
use aten_ops::custom_class::{class_, classes, downcast_object};
use aten_ops::higher_order::{cond, map, while_loop};
use aten_ops::{
    enable_python_dispatcher, GraphFn, HigherOrderOperator, HopArg, Library, Ops, OverloadKind,
};
use c10_core::local_dispatch_key_set::IncludeDispatchKeyGuard;
use c10_core::DispatchKey;
use c10_core::DispatchKeySet;
use c10_core::ErrorKind;

fn t(v: &[f32], sizes: &[i64]) -> Tensor {
    support::dispatcher();
    Tensor::from_slice(v, sizes).unwrap()
}

fn iv(t: &Tensor) -> IValue {
    IValue::Tensor(t.base().clone())
}

fn vals(v: &IValue) -> Vec<f32> {
    let IValue::Tensor(t) = v else {
        panic!("not a tensor: {v:?}")
    };
    ops::contiguous(&Tensor::from_base(t.clone()))
        .unwrap()
        .to_vec::<f32>()
        .unwrap()
}

fn root() -> &'static Ops {
    support::ops_root()
}

fn graph_fn(
    f: impl Fn(&[IValue]) -> c10_core::Result<Vec<IValue>> + Send + Sync + 'static,
) -> GraphFn {
    Arc::new(f)
}

fn tensor_arg(v: &IValue) -> Tensor {
    match v {
        IValue::Tensor(t) => Tensor::from_base(t.clone()),
        other => panic!("not a tensor: {other:?}"),
    }
}

#[test]
fn namespaces_resolve_lazily_and_objects_are_unique() {
    let aten = root().aten();
    let add = aten.op("add").unwrap();
    assert!(Arc::ptr_eq(&add, &root().aten().op("add").unwrap()));
    assert_eq!(add.to_string(), "aten.add");
    assert_eq!(format!("{add:?}"), "<OpOverloadPacket(op='aten.add')>");
    assert_eq!(add.qualified_name(), "aten::add");
    let overloads = add.overloads();
    for name in ["Tensor", "Scalar", "out"] {
        assert!(overloads.contains(&name.to_string()), "{overloads:?}");
    }
    assert_eq!(
        add.schema("Tensor").unwrap().to_string(),
        "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    );
    let tensor = add.overload("Tensor").unwrap();
    assert!(Arc::ptr_eq(&tensor, &add.overload("Tensor").unwrap()));
    assert!(Arc::ptr_eq(
        &tensor,
        &root().overload("aten::add.Tensor").unwrap()
    ));
    assert!(add.resolved_overloads().contains(&"Tensor".to_string()));
    assert!(aten.resolved().contains(&"add".to_string()));
    // The default overload.
    let relu = aten.op("relu").unwrap();
    assert_eq!(relu.overloads()[0], "default");
    assert_eq!(relu.overload("default").unwrap().name(), "aten::relu");

    let e = aten.op("no_such_op").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Attribute);
    assert_eq!(
        e.message(),
        "'_OpNamespace' 'aten' object has no attribute 'no_such_op'"
    );
    let e = add.overload("Foo").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Attribute);
    assert_eq!(
        e.message(),
        "The underlying op of 'aten.add' has no overload name 'Foo'"
    );
}

#[test]
fn overloads_describe_and_call_their_operator() {
    let add = root().overload("aten::add.Tensor").unwrap();
    assert_eq!(add.name(), "aten::add.Tensor");
    assert_eq!(add.overload_name(), "Tensor");
    assert_eq!(add.namespace(), "aten");
    assert_eq!(add.op_name(), "add");
    assert_eq!(add.to_string(), "aten.add.Tensor");
    assert_eq!(
        format!("{add:?}"),
        "<OpOverload(op='aten.add', overload='Tensor')>"
    );
    assert_eq!(add.kind(), OverloadKind::OpOverload);
    assert!(!add.is_view());
    assert_eq!(
        add.tags(),
        vec!["core".to_string(), "pointwise".to_string()]
    );
    assert!(root().overload("aten::view").unwrap().is_view());
    assert!(add.has_kernel_for_dispatch_key(DispatchKey::CPU));
    // These tests link the CPU backend only.
    assert!(!add.has_kernel_for_dispatch_key(DispatchKey::CUDA));
    assert!(add.has_kernel_for_any_dispatch_key(DispatchKeySet::from_key(DispatchKey::CPU)));
    assert!(Arc::ptr_eq(
        &add.overload_packet().unwrap(),
        &root().aten().op("add").unwrap()
    ));

    let a = t(&[1.0, 2.0], &[2]);
    let b = t(&[10.0, 20.0], &[2]);
    let out = add
        .call(&[iv(&a), iv(&b)], &[("alpha", IValue::Int(2))])
        .unwrap();
    assert_eq!(vals(&out[0]), vec![21.0, 42.0]);

    // Boxed, redispatch, and straight to the kernel at a key.
    let mut stack: Stack = vec![iv(&a), iv(&b), IValue::Int(1)];
    add.call_boxed(&mut stack).unwrap();
    assert_eq!(vals(&stack[0]), vec![11.0, 22.0]);
    let mut stack: Stack = vec![iv(&a), iv(&b), IValue::Int(1)];
    add.redispatch(DispatchKeySet::from_key(DispatchKey::CPU), &mut stack)
        .unwrap();
    assert_eq!(vals(&stack[0]), vec![11.0, 22.0]);
    let mut stack: Stack = vec![iv(&a), iv(&b), IValue::Int(1)];
    add.call_with_dispatch_key(DispatchKey::CPU, &mut stack)
        .unwrap();
    assert_eq!(vals(&stack[0]), vec![11.0, 22.0]);

    // decompose: NotImplemented without a CompositeImplicitAutograd kernel.
    assert!(add.decompose(&[iv(&a), iv(&b)], &[]).unwrap().is_none());

    let e = add.call(&[iv(&a)], &[]).unwrap_err();
    assert!(e.message().starts_with(
        "aten::add() is missing value for argument 'other'. Declaration: aten::add.Tensor("
    ));
}

#[test]
fn packets_pick_the_overload_from_the_arguments() {
    let add = root().aten().op("add").unwrap();
    let a = t(&[1.0, 2.0], &[2]);
    let out = add.call(&[iv(&a), iv(&a)], &[]).unwrap();
    assert_eq!(vals(&out[0]), vec![2.0, 4.0]);
    // `add` takes Python numbers as tensors (`should_allow_numbers_as_tensors`):
    // add.Tensor, the first overload, takes 3 as a wrapped number.
    let out = add
        .call(&[iv(&a), IValue::Int(3)], &[("alpha", IValue::Int(2))])
        .unwrap();
    assert_eq!(vals(&out[0]), vec![7.0, 8.0]);
    let out = add.call(&[IValue::Int(1), IValue::Int(2)], &[]).unwrap();
    match &out[0] {
        IValue::Tensor(t) => {
            assert_eq!(t.dtype(), Some(c10_core::ScalarType::Long));
            assert!(t.sizes().is_empty() && !t.is_wrapped_number());
            assert_eq!(t.to_vec::<i64>().unwrap(), [3]);
        }
        other => panic!("{other:?}"),
    }
    // Other operators take no number for a tensor.
    let eq = root().aten().op("eq").unwrap();
    let e = eq.call(&[IValue::Int(1), IValue::Int(2)], &[]).unwrap_err();
    let m = e.message();
    assert!(
        m.starts_with("Overloaded torch operator invoked from Python failed to match any schema:\naten::eq() Expected a value of type 'Tensor' for argument 'self' but instead found type 'int'.\nPosition: 0\n"),
        "{m}"
    );
    assert!(m.ends_with("\n\n"), "{m}");
    assert_eq!(
        m.matches("Declaration: aten::eq.").count(),
        eq.overloads().len(),
        "{m}"
    );
}

/// A runtime library with a custom operator `opslayer::<name>(Tensor x) ->
/// Tensor` that doubles `x` on CPU and keeps its shape on Meta.
fn doubling_library(name: &str) -> Library {
    let mut lib = Library::new("opslayer", "FRAGMENT", "").unwrap();
    lib.define(
        &format!("{name}(Tensor x) -> Tensor"),
        "",
        &["pt2_compliant_tag"],
    )
    .unwrap();
    lib.impl_(
        name,
        CppFunction::from_unboxed(|x: &Tensor| ops::mul_scalar(x, 2.0.into())),
        "CPU",
    )
    .unwrap();
    lib.impl_(
        name,
        CppFunction::from_unboxed(|x: &Tensor| ops::empty_like(x)),
        "Meta",
    )
    .unwrap();
    lib
}

#[test]
fn runtime_libraries_define_custom_operators_and_take_them_away() {
    let lib = doubling_library("twice");
    let packet = root().namespace("opslayer").op("twice").unwrap();
    assert_eq!(packet.overloads(), vec!["default".to_string()]);
    let x = t(&[1.0, 2.0, 3.0], &[3]);
    let out = packet.call(&[iv(&x)], &[]).unwrap();
    assert_eq!(vals(&out[0]), vec![2.0, 4.0, 6.0]);
    let overload = packet.overload("default").unwrap();
    assert_eq!(overload.tags(), vec!["pt2_compliant_tag".to_string()]);
    // The typed handle.
    let handle = support::dispatcher()
        .find_schema_or_throw("opslayer::twice", "")
        .unwrap()
        .typed::<(&Tensor,), Tensor>()
        .unwrap();
    let y = handle.call((&x,)).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![2.0, 4.0, 6.0]);
    // Meta.
    let m = Tensor::empty(&[4], c10_core::ScalarType::Float, c10_core::Device::META).unwrap();
    let out = overload.call(&[iv(&m)], &[]).unwrap();
    assert_eq!(tensor_arg(&out[0]).sizes().to_vec(), vec![4]);
    // `aten ops` / `aten dump` see it.
    let names: Vec<String> = support::dispatcher()
        .all_op_names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    assert!(names.contains(&"opslayer::twice".to_string()));
    let dump = overload.handle().dump_state();
    assert!(
        dump.contains("CPU: registered at") && dump.contains("Meta: registered at"),
        "{dump}"
    );
    assert!(dump.contains("ops_layer.rs"), "{dump}");

    overload
        .py_impl(DispatchKey::CPU, |_, _, _| Ok(()))
        .unwrap();
    drop(lib);
    let e = root().namespace("opslayer").op("twice").unwrap_err();
    assert_eq!(
        e.message(),
        "'_OpNamespace' 'opslayer' object has no attribute 'twice'"
    );
    assert!(overload.call(&[iv(&x)], &[]).is_err());
    let names: Vec<String> = support::dispatcher()
        .all_op_names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    assert!(!names.contains(&"opslayer::twice".to_string()));
    // Defined again: the same objects see the new def.
    let _lib = doubling_library("twice");
    let again = root().namespace("opslayer").op("twice").unwrap();
    assert!(Arc::ptr_eq(&again, &packet));
    assert_eq!(
        vals(&overload.call(&[iv(&x)], &[]).unwrap()[0]),
        vec![2.0, 4.0, 6.0]
    );
    // The old def's host kernels went with it.
    overload
        .py_impl(DispatchKey::CPU, |_, _, _| Ok(()))
        .unwrap();
}

#[test]
fn runtime_library_errors_are_pytorchs() {
    let e = Library::new("opslayer", "FOO", "").unwrap_err();
    assert_eq!(
        (e.kind(), e.message()),
        (ErrorKind::Value, "('Unsupported kind: ', 'FOO')")
    );
    let e = Library::new("prim", "FRAGMENT", "").unwrap_err();
    assert_eq!(
        e.message(),
        "('prim', ' is a reserved namespace. Please try creating a library with another name.')"
    );
    let mut lib = doubling_library("errs");
    let e = lib
        .define("errs2(Tensor x) -> Tensor", "PURE", &[])
        .unwrap_err();
    assert_eq!(e.message(), "Invalid alias_analysis type PURE");
    let e = lib
        .impl_(
            "errs",
            CppFunction::from_unboxed(|x: &Tensor| ops::neg(x)),
            "CPU",
        )
        .unwrap_err();
    assert_eq!(
        e.message(),
        "This is not allowed since there's already a kernel registered from python overriding errs's behavior for CPU dispatch key and opslayer namespace."
    );
    let e = lib.fallback(CppFunction::fallthrough(), "CPU").unwrap_err();
    assert_eq!(
        e.message(),
        "Fallback can only be registered using library fragment on the global namespace \"_\" but it is opslayer"
    );
    // A CompositeImplicitAutograd kernel rules out a Meta kernel.
    lib.define("errs_cia(Tensor x) -> Tensor", "", &[]).unwrap();
    lib.impl_(
        "errs_cia",
        CppFunction::from_unboxed(|x: &Tensor| ops::neg(x)),
        "",
    )
    .unwrap();
    let e = lib
        .impl_(
            "errs_cia",
            CppFunction::from_unboxed(|x: &Tensor| ops::neg(x)),
            "Meta",
        )
        .unwrap_err();
    assert!(e.message().starts_with(
        "We should not register a meta kernel directly to the operator 'errs_cia', because it has a CompositeImplicitAutograd kernel in core."
    ));
    // decompose runs that kernel.
    let x = t(&[1.0, -2.0], &[2]);
    let cia = root().overload("opslayer::errs_cia").unwrap();
    assert_eq!(
        vals(&cia.decompose(&[iv(&x)], &[]).unwrap().unwrap()[0]),
        vec![-1.0, 2.0]
    );
}

#[test]
fn host_kernels_run_under_the_python_dispatcher() {
    let _lib = doubling_library("hosted");
    let op = root().overload("opslayer::hosted").unwrap();
    // A CPU host kernel replaces the CPU kernel and may call it.
    op.py_impl(DispatchKey::CPU, |op, _keys, stack| {
        op.call_with_dispatch_key(DispatchKey::CPU, stack)?;
        let doubled = tensor_arg(&stack[0]);
        stack[0] = IValue::Tensor(ops::add_scalar(&doubled, 1.0.into())?.base().clone());
        Ok(())
    })
    .unwrap();
    let x = t(&[1.0, 2.0], &[2]);
    // Without the Python dispatcher the table's kernels run.
    assert_eq!(vals(&op.call(&[iv(&x)], &[]).unwrap()[0]), vec![2.0, 4.0]);
    {
        let _on = enable_python_dispatcher();
        assert_eq!(vals(&op.call(&[iv(&x)], &[]).unwrap()[0]), vec![3.0, 5.0]);
        // Typed calls go through it too.
        let typed = op.handle().typed::<(&Tensor,), Tensor>().unwrap();
        assert_eq!(
            typed.call((&x,)).unwrap().to_vec::<f32>().unwrap(),
            vec![3.0, 5.0]
        );
        assert_eq!(op.cached_dispatch_keys(), vec![DispatchKey::CPU]);
    }

    // At an autograd key: counts, then redispatches below autograd (no
    // graph is recorded).
    let neg = root().overload("aten::neg").unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&calls);
    neg.py_impl(DispatchKey::AutogradCPU, move |op, keys, stack| {
        seen.fetch_add(1, Ordering::SeqCst);
        op.redispatch(
            keys & DispatchKeySet::full_after(DispatchKey::AutogradOther),
            stack,
        )
    })
    .unwrap();
    assert!(
        neg.cached_dispatch_keys().is_empty(),
        "py_impl clears the cache"
    );
    let w = t(&[1.0, 2.0], &[2]).requires_grad_(true).unwrap();
    {
        let _on = enable_python_dispatcher();
        let out = neg.call(&[iv(&w)], &[]).unwrap();
        assert_eq!(vals(&out[0]), vec![-1.0, -2.0]);
        assert!(!tensor_arg(&out[0]).requires_grad());
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let out = neg.call(&[iv(&w)], &[]).unwrap();
    assert!(tensor_arg(&out[0]).requires_grad());
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // Removed, the host kernel no longer runs, even under the Python
    // dispatcher.
    assert!(neg.remove_py_impl(DispatchKey::AutogradCPU));
    assert!(!neg.remove_py_impl(DispatchKey::AutogradCPU));
    {
        let _on = enable_python_dispatcher();
        let out = neg.call(&[iv(&w)], &[]).unwrap();
        assert!(tensor_arg(&out[0]).requires_grad());
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    let e = op.py_impl(DispatchKey::CPU, |_, _, _| Ok(())).unwrap_err();
    assert_eq!(
        e.message(),
        "Trying to override a python impl for DispatchKey.CPU on operator opslayer::hosted"
    );
    let e = op
        .py_impl(DispatchKey::Python, |_, _, _| Ok(()))
        .unwrap_err();
    assert_eq!(
        e.message(),
        "Please register a mode for the DispatchKey.Python key instead."
    );
}

#[test]
fn boxed_fallbacks_see_the_operator() {
    let _lib = doubling_library("inspected");
    /// What the fallback saw of each call: name, argument count, tags.
    type Seen = Vec<(String, usize, Vec<String>)>;
    let seen: Arc<Mutex<Seen>> = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let mut lib = Library::new("_", "IMPL", "TESTING_ONLY_GenericMode").unwrap();
    lib.fallback(
        CppFunction::from_boxed(move |op, keys, stack| {
            let schema = op.schema().expect("a def");
            let n = schema.arguments().len();
            log.lock().unwrap().push((op.operator_name(), n, op.tags()));
            // Rewrite: every alpha becomes 3.
            if let Some(pos) = schema.argument_index_with_name("alpha") {
                let base = stack.len() - n;
                stack[base + pos] = IValue::Int(3);
            }
            let handle = op
                .as_any()
                .downcast_ref::<aten_dispatch::OperatorHandle>()
                .expect("the dispatcher's handle");
            handle.redispatch_boxed(
                keys & DispatchKeySet::full_after(DispatchKey::TESTING_ONLY_GenericMode),
                stack,
            )
        }),
        "",
    )
    .unwrap();
    let a = t(&[1.0, 2.0], &[2]);
    let inspected = root().overload("opslayer::inspected").unwrap();
    let (sum, doubled) = {
        let _mode = IncludeDispatchKeyGuard::new(DispatchKey::TESTING_ONLY_GenericMode);
        let sum = ops::add_tensor(&a, &a).unwrap();
        (sum, inspected.call(&[iv(&a)], &[]).unwrap())
    };
    assert_eq!(sum.to_vec::<f32>().unwrap(), vec![4.0, 8.0]);
    assert_eq!(vals(&doubled[0]), vec![2.0, 4.0]);
    let seen = seen.lock().unwrap();
    let tags = vec!["core".to_string(), "pointwise".to_string()];
    assert_eq!(seen[0], ("aten::add.Tensor".to_string(), 3, tags));
    assert_eq!(
        seen[1],
        (
            "opslayer::inspected".to_string(),
            1,
            vec!["pt2_compliant_tag".to_string()]
        )
    );
}

#[test]
fn cond_runs_one_branch() {
    let double = graph_fn(|args| {
        Ok(vec![iv(&ops::mul_scalar(
            &tensor_arg(&args[0]),
            2.0.into(),
        )?)])
    });
    let negate = graph_fn(|args| Ok(vec![iv(&ops::neg(&tensor_arg(&args[0]))?)]));
    let x = t(&[1.0, 2.0], &[2]);
    let yes = iv(&Tensor::from_slice(&[true], &[]).unwrap());
    let no = iv(&Tensor::from_slice(&[0i64], &[1]).unwrap());
    let out = cond(&yes, double.clone(), negate.clone(), &[iv(&x)]).unwrap();
    assert_eq!(vals(&out[0]), vec![2.0, 4.0]);
    let out = cond(&no, double.clone(), negate.clone(), &[iv(&x)]).unwrap();
    assert_eq!(vals(&out[0]), vec![-1.0, -2.0]);
    let out = cond(
        &IValue::bool(false),
        double.clone(),
        negate.clone(),
        &[iv(&x)],
    )
    .unwrap();
    assert_eq!(vals(&out[0]), vec![-1.0, -2.0]);

    let out = cond(&IValue::Int(0), double.clone(), negate.clone(), &[iv(&x)]).unwrap();
    assert_eq!(vals(&out[0]), vec![-1.0, -2.0]);
    let e = cond(&IValue::None, double.clone(), negate.clone(), &[iv(&x)]).unwrap_err();
    assert_eq!(
        e.message(),
        "Expected pred to be bool or tensor, but got None."
    );
    let e = cond(&iv(&x), double.clone(), negate.clone(), &[iv(&x)]).unwrap_err();
    assert!(e
        .message()
        .starts_with("Expected pred to be bool or single-element tensor, but got "));
    let e = cond(&yes, double.clone(), negate.clone(), &[IValue::Int(1)]).unwrap_err();
    assert!(e.message().starts_with(
        "Expect operands to be a tuple of possibly nested dict/list/tuple that only consists of tensor leaves, but got ["
    ));

    // Gradients flow through the branch taken.
    let w = t(&[1.0, 2.0], &[2]).requires_grad_(true).unwrap();
    let out = cond(&yes, double, negate, &[iv(&w)]).unwrap();
    ops::sum(&tensor_arg(&out[0])).unwrap().backward().unwrap();
    assert_eq!(w.grad().unwrap().to_vec::<f32>().unwrap(), vec![2.0, 2.0]);
}

#[test]
fn while_loop_carries_state_and_map_stacks() {
    // Count to 5 with an int and accumulate a tensor.
    let cond_fn = graph_fn(|args| {
        let IValue::Int(i) = args[0] else { panic!() };
        Ok(vec![IValue::bool(i < 5)])
    });
    let body_fn = graph_fn(|args| {
        let IValue::Int(i) = args[0] else { panic!() };
        let acc = ops::add_scalar(&tensor_arg(&args[1]), (i as f64).into())?;
        Ok(vec![IValue::Int(i + 1), iv(&acc)])
    });
    let acc = t(&[0.0, 10.0], &[2]);
    let out = while_loop(
        cond_fn.clone(),
        body_fn.clone(),
        &[IValue::Int(0), iv(&acc)],
    )
    .unwrap();
    assert_eq!(out[0], IValue::Int(5));
    assert_eq!(vals(&out[1]), vec![10.0, 20.0]);
    // Not entered: tensors come back cloned.
    let out = while_loop(cond_fn, body_fn, &[IValue::Int(9), iv(&acc)]).unwrap();
    assert_eq!(vals(&out[1]), vec![0.0, 10.0]);
    let bad = graph_fn(|_| Ok(vec![IValue::Int(1)]));
    let e = while_loop(bad, graph_fn(|a| Ok(a.to_vec())), &[IValue::Int(0)]).unwrap_err();
    assert_eq!(
        e.message(),
        "cond_fn must return a boolean scalar tensor or a boolean but got 1"
    );
    let e = while_loop(
        graph_fn(|_| Ok(vec![])),
        graph_fn(|a| Ok(a.to_vec())),
        &[IValue::double(1.0)],
    )
    .unwrap_err();
    assert!(e.message().starts_with(
        "Expect carried_inputs to be a tuple of possibly nested dict/list/tuple that onlyconsists of tensor or int leaves"
    ));

    let xs = t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]);
    let add_y = graph_fn(|args| {
        Ok(vec![
            iv(&ops::add_tensor(
                &tensor_arg(&args[0]),
                &tensor_arg(&args[1]),
            )?),
            IValue::None,
        ])
    });
    let y = t(&[100.0, 200.0], &[2]);
    let out = map(add_y.clone(), &[iv(&xs)], &[iv(&y)]).unwrap();
    assert_eq!(tensor_arg(&out[0]).sizes().to_vec(), vec![3, 2]);
    assert_eq!(
        vals(&out[0]),
        vec![101.0, 202.0, 103.0, 204.0, 105.0, 206.0]
    );
    assert_eq!(out[1], IValue::None);
    let e = map(add_y.clone(), &[iv(&xs), iv(&y)], &[]).unwrap_err();
    assert_eq!(
        e.message(),
        "Leading dimensions of mapped xs must be consistent. Got shapes [torch.Size([3, 2]), torch.Size([2])]."
    );
    let e = map(add_y, &[IValue::Int(1)], &[]).unwrap_err();
    assert_eq!(
        e.message(),
        "Mapped xs can only consist of tensors. Got xs [1]."
    );
}

#[test]
fn higher_order_operators_dispatch_by_key() {
    let ho = root().higher_order();
    for name in ["cond", "map_impl", "while_loop"] {
        assert_eq!(ho.op(name).unwrap().name(), name);
    }
    let e = ho.op("nope").unwrap_err();
    assert_eq!(
        e.message(),
        "'_HigherOrderNamespace' 'torch.ops.higher_order' object has no attribute 'nope'"
    );
    let hop = HigherOrderOperator::new("opslayer_probe");
    hop.register();
    assert!(Arc::ptr_eq(&hop, &ho.op("opslayer_probe").unwrap()));
    assert!(!hop.non_fallthrough_keys().has(DispatchKey::ADInplaceOrView));
    hop.py_impl(DispatchKey::Meta, |_, _, _| Ok(vec![IValue::Int(0)]))
        .unwrap();
    hop.py_impl(DispatchKey::CompositeExplicitAutograd, |op, keys, args| {
        assert_eq!(op.name(), "opslayer_probe");
        let key = keys.highest_priority_type_id().to_string();
        Ok(vec![
            IValue::String(Arc::new(key)),
            args[0].value("x")?.clone(),
        ])
    })
    .unwrap();
    let x = t(&[1.0], &[1]);
    // AutogradCPU is the highest key; nothing serves it.
    let e = hop.call(&[HopArg::Value(iv(&x))]).unwrap_err();
    assert!(
        e.message().starts_with("could not find kernel for"),
        "{}",
        e.message()
    );
    hop.py_impl(DispatchKey::Autograd, |op, keys, args| {
        op.redispatch(
            keys & DispatchKeySet::full_after(DispatchKey::AutogradOther),
            args,
        )
    })
    .unwrap();
    let out = hop.call(&[HopArg::Value(iv(&x))]).unwrap();
    assert_eq!(out[0], IValue::String(Arc::new("CPU".into())));
    let e = hop
        .py_impl(DispatchKey::Meta, |_, _, _| Ok(vec![]))
        .unwrap_err();
    assert_eq!(
        e.message(),
        "Trying to override a python impl for DispatchKey.Meta on operator opslayer_probe"
    );
}

struct Counter {
    count: AtomicUsize,
}

#[test]
fn custom_classes_travel_in_ivalues_and_dispatch() {
    class_::<Counter>("opslayer", "Counter")
        .def_init(|args| {
            let start = match args.first() {
                Some(IValue::Int(i)) => *i as usize,
                _ => 0,
            };
            Ok(Counter {
                count: AtomicUsize::new(start),
            })
        })
        .def("increment", |this, _| {
            Ok(IValue::Int(
                this.count.fetch_add(1, Ordering::SeqCst) as i64 + 1,
            ))
        })
        .register()
        .unwrap();
    let e = class_::<Counter>("opslayer", "Counter")
        .register()
        .unwrap_err();
    assert_eq!(
        e.message(),
        "Custom class with name __torch__.torch.classes.opslayer.Counter is already registered. Ensure that registration with torch::class_ is only called once."
    );
    let class = classes().get("opslayer", "Counter").unwrap();
    assert_eq!(class.method_names(), ["increment"]);
    let counter = class.instantiate(&[IValue::Int(10)]).unwrap();
    assert_eq!(
        class.call_method(&counter, "increment", &[]).unwrap(),
        IValue::Int(11)
    );
    let e = classes().call_method(&counter, "nope", &[]).unwrap_err();
    assert_eq!(e.message(), "Method 'nope' is not defined.");
    let e = classes().get("opslayer", "Missing").unwrap_err();
    assert_eq!(
        e.message(),
        "Unknown custom class type opslayer.Missing. Please ensure it is registered."
    );

    let mut lib = Library::new("opslayer", "FRAGMENT", "").unwrap();
    let e = lib
        .define(
            "bad(__torch__.torch.classes.opslayer.Missing c) -> int",
            "",
            &[],
        )
        .unwrap_err();
    assert_eq!(
        e.message(),
        "Unknown custom class type opslayer.Missing. Please ensure it is registered."
    );
    lib.define(
        "bump(__torch__.torch.classes.opslayer.Counter c, Tensor x) -> Tensor",
        "",
        &[],
    )
    .unwrap();
    lib.impl_(
        "bump",
        CppFunction::from_boxed(|_, _, stack| {
            let x = tensor_arg(&stack.pop().expect("x"));
            let c = stack.pop().expect("c");
            let n = downcast_object::<Counter>(&c)
                .expect("a Counter")
                .count
                .fetch_add(1, Ordering::SeqCst);
            stack.push(iv(&ops::add_scalar(&x, (n as f64).into())?));
            Ok(())
        }),
        "CPU",
    )
    .unwrap();
    let bump = root().namespace("opslayer").op("bump").unwrap();
    assert!(bump.has_torchbind_op_overload());
    assert_eq!(
        bump.overload("default").unwrap().kind(),
        OverloadKind::TorchBind
    );
    let x = t(&[1.0], &[1]);
    let out = bump.call(&[counter.clone(), iv(&x)], &[]).unwrap();
    assert_eq!(vals(&out[0]), vec![12.0]);
    let e = bump.call(&[IValue::Int(1), iv(&x)], &[]).unwrap_err();
    assert!(e.message().starts_with(
        "opslayer::bump() Expected a value of type '__torch__.torch.classes.opslayer.Counter' for argument 'c' but instead found type 'int'."
    ), "{}", e.message());
}

#[test]
fn isolated_roots_own_their_dispatcher() {
    let d = aten_dispatch::Dispatcher::new();
    let root = Ops::new(&d).unwrap();
    let mut skips = Vec::new();
    for key in ["ADInplaceOrView", "BackendSelect"] {
        let mut lib = Library::with_root(&root, "_", "IMPL", key).unwrap();
        lib.fallback(CppFunction::fallthrough(), "").unwrap();
        skips.push(lib);
    }
    let e = Ops::new(&d).unwrap_err();
    assert!(e.message().starts_with(
        "Tried to register multiple backend fallbacks for the same dispatch key PythonDispatcher"
    ));
    let mut lib = Library::with_root(&root, "iso", "DEF", "").unwrap();
    lib.define("f(int x) -> int", "", &[]).unwrap();
    lib.impl_(
        "f",
        CppFunction::from_boxed(|_, _, stack| {
            let IValue::Int(x) = stack.pop().expect("x") else {
                unreachable!()
            };
            stack.push(IValue::Int(x * 10));
            Ok(())
        }),
        "",
    )
    .unwrap();
    let out = root
        .namespace("iso")
        .op("f")
        .unwrap()
        .call(&[IValue::Int(4)], &[])
        .unwrap();
    assert_eq!(out, vec![IValue::Int(40)]);
    assert!(super_root_lacks("iso"));
}

fn super_root_lacks(ns: &str) -> bool {
    root().namespace(ns).op("f").is_err()
}

#[test]
fn lookups_calls_and_libraries_from_several_threads() {
    let x = t(&[1.0, 2.0], &[2]);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let churn = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut rounds = 0;
            while !stop.load(Ordering::SeqCst) || rounds < 20 {
                let lib = doubling_library("churn");
                let op = root().overload("opslayer::churn").unwrap();
                let _ = op.py_impl(DispatchKey::CPU, |op, _, stack| {
                    op.call_with_dispatch_key(DispatchKey::CPU, stack)
                });
                drop(lib);
                rounds += 1;
            }
            rounds
        })
    };
    let callers: Vec<_> = (0..3)
        .map(|_| {
            let x = x.clone();
            std::thread::spawn(move || {
                let _on = enable_python_dispatcher();
                for _ in 0..200 {
                    let add = root().aten().op("add").unwrap();
                    let out = add.call(&[iv(&x), iv(&x)], &[]).unwrap();
                    assert_eq!(vals(&out[0]), vec![2.0, 4.0]);
                    // The churning operator may or may not exist right now;
                    // when it answers, it answers right.
                    if let Ok(packet) = root().namespace("opslayer").op("churn") {
                        if let Ok(out) = packet.call(&[iv(&x)], &[]) {
                            assert_eq!(vals(&out[0]), vec![2.0, 4.0]);
                        }
                    }
                }
            })
        })
        .collect();
    for c in callers {
        c.join().unwrap();
    }
    stop.store(true, Ordering::SeqCst);
    assert!(churn.join().unwrap() >= 20);
}
