//! Call-time behaviour: key extraction, the thread-local sets, fallthrough
//! masks, backend fallbacks, BackendSelect, redispatch and the errors for
//! missing and ambiguous kernels (PyTorch's op_registration_test and the
//! call-time rules of dispatch_rules.md §4-5), and the entries a call with
//! SymInt arguments takes.

use std::sync::{Arc, Mutex};

use aten_boxing::{IValue, KernelFunction, Stack, StackExt};
use aten_dispatch::{trace, CppFunction, Dispatcher, Library, LibraryKind, RegistrationHandle};
use c10_core::dispatch_key_set::AFTER_AUTOGRAD_KEYSET;
use c10_core::sym::{GuardLog, SymValue};
use c10_core::{
    AutoDispatchBelowAutograd, Device, DeviceType, DispatchKey, DispatchKeySet,
    ExcludeDispatchKeyGuard, Result, ScalarType, SymInt, TensorBase, TensorImpl,
};

fn tensor(device: DeviceType) -> TensorBase {
    let device = Device::new(device, -1);
    TensorBase::from_impl(
        TensorImpl::new(
            TensorImpl::default_key_set(device),
            ScalarType::Float,
            device,
            vec![1],
        )
        .unwrap(),
    )
}

fn tensor_with(keys: &[DispatchKey]) -> TensorBase {
    TensorBase::from_impl(
        TensorImpl::new(
            DispatchKeySet::from_keys(keys),
            ScalarType::Float,
            Device::CPU,
            vec![1],
        )
        .unwrap(),
    )
}

/// The fallbacks a process gets from PyTorch's framework that matter for
/// calls: BackendSelect, ADInplaceOrView and the autograd keys fall through.
fn framework(d: &Dispatcher) -> Vec<RegistrationHandle> {
    let mut handles = Vec::new();
    for key in [
        DispatchKey::BackendSelect,
        DispatchKey::ADInplaceOrView,
        DispatchKey::Autograd,
    ] {
        handles.push(
            d.register_fallback(key, KernelFunction::make_fallthrough(), "framework")
                .unwrap(),
        );
    }
    handles
}

fn defined(d: &Dispatcher, schema: &str) -> Library {
    let mut m =
        Library::with_dispatcher(d, LibraryKind::Fragment, "test", None, "calls.rs", 1).unwrap();
    m.def(schema).unwrap();
    m
}

fn imp(d: &Dispatcher, key: DispatchKey) -> Library {
    Library::with_dispatcher(d, LibraryKind::Impl, "test", Some(key), "calls.rs", 2).unwrap()
}

/// A kernel that tags its result by returning its `n`-th argument... we use
/// ints: each kernel returns a distinct number.
fn returns(n: i64) -> CppFunction {
    CppFunction::from_unboxed(move |_: &TensorBase| Ok(n))
}

#[test]
fn picks_the_kernel_of_the_highest_key() {
    let d = Dispatcher::new();
    let _fw = framework(&d);
    let _def = defined(&d, "fn(Tensor x) -> int");
    let mut cpu = imp(&d, DispatchKey::CPU);
    cpu.impl_("fn", returns(1)).unwrap();
    let mut cuda = imp(&d, DispatchKey::CUDA);
    cuda.impl_("fn", returns(2)).unwrap();
    let op = d.find_schema_or_throw("test::fn", "").unwrap();
    let typed = op.typed::<(&TensorBase,), i64>().unwrap();
    // The autograd keys fall through to the backend kernel.
    assert_eq!(typed.call((&tensor(DeviceType::CPU),)).unwrap(), 1);
    assert_eq!(typed.call((&tensor(DeviceType::CUDA),)).unwrap(), 2);
    let mut stack: Stack = vec![IValue::Tensor(tensor(DeviceType::CUDA))];
    op.call_boxed(&mut stack).unwrap();
    assert_eq!(stack, vec![IValue::Int(2)]);
}

/// `makeNamedNotSupported()` as a kernel: a call fails with PyTorch's
/// named-tensor message, naming the operator.
#[test]
fn a_named_not_supported_kernel_names_the_operator() {
    let d = Dispatcher::new();
    let _fw = framework(&d);
    let _def = defined(&d, "fn(Tensor x) -> int");
    let mut cpu = imp(&d, DispatchKey::CPU);
    cpu.impl_("fn", CppFunction::named_not_supported()).unwrap();
    let op = d.find_schema_or_throw("test::fn", "").unwrap();
    let mut stack: Stack = vec![IValue::Tensor(tensor(DeviceType::CPU))];
    let err = op.call_boxed(&mut stack).unwrap_err();
    assert!(
        err.message()
            .starts_with("test::fn is not yet supported with named tensors."),
        "{}",
        err.message()
    );
}

/// The CPU and AutogradCPU slots, which tables also keep inline, follow
/// every change: a kernel arriving, being replaced by an alias kernel's
/// choice, and going away.
#[test]
fn cpu_slots_follow_registrations_and_removals() {
    let d = Dispatcher::new();
    let _fw = framework(&d);
    let _def = defined(&d, "fn(Tensor x) -> int");
    let op = d.find_schema_or_throw("test::fn", "").unwrap();
    let typed = op.typed::<(&TensorBase,), i64>().unwrap();
    let t = tensor(DeviceType::CPU);
    assert!(typed.call((&t,)).is_err());
    let mut composite = imp(&d, DispatchKey::CompositeExplicitAutograd);
    composite.impl_("fn", returns(1)).unwrap();
    assert_eq!(typed.call((&t,)).unwrap(), 1);
    let mut cpu = imp(&d, DispatchKey::CPU);
    cpu.impl_("fn", returns(2)).unwrap();
    assert_eq!(typed.call((&t,)).unwrap(), 2);
    let mut autograd = imp(&d, DispatchKey::AutogradCPU);
    autograd.impl_("fn", returns(3)).unwrap();
    assert_eq!(typed.call((&t,)).unwrap(), 3);
    let mut stack: Stack = vec![IValue::Tensor(t.clone())];
    op.call_boxed(&mut stack).unwrap();
    assert_eq!(stack, vec![IValue::Int(3)]);
    drop(autograd);
    assert_eq!(typed.call((&t,)).unwrap(), 2);
    drop(cpu);
    assert_eq!(typed.call((&t,)).unwrap(), 1);
    drop(composite);
    let err = typed.call((&t,)).unwrap_err();
    assert!(
        err.message().starts_with("Could not run 'test::fn'"),
        "{err}"
    );
}

#[test]
fn missing_kernels_report_pytorchs_error() {
    let d = Dispatcher::new();
    let _fw = framework(&d);
    let _def = defined(&d, "fn(Tensor x) -> int");
    let mut cpu = imp(&d, DispatchKey::CPU);
    cpu.impl_("fn", returns(1)).unwrap();
    let op = d.find_schema_or_throw("test::fn", "").unwrap();
    let typed = op.typed::<(&TensorBase,), i64>().unwrap();
    let err = typed.call((&tensor(DeviceType::CUDA),)).unwrap_err();
    assert!(err
        .message()
        .starts_with("Could not run 'test::fn' with arguments from the 'CUDA' backend. This could be because the operator doesn't exist for this backend"));
    assert!(err
        .message()
        .contains("'test::fn' is only available for these backends: [CPU, BackendSelect, ADInplaceOrView, AutogradOther, AutogradCPU,"));
    assert!(err
        .message()
        .contains("\n\nCPU: registered at calls.rs:2 [kernel]\n"));

    // No tensor arguments and no fallback: the Undefined variant.
    let _def2 = defined(&d, "nothing(int x) -> int");
    let op2 = d.find_schema_or_throw("test::nothing", "").unwrap();
    let err = op2.typed::<(i64,), i64>().unwrap().call((1,)).unwrap_err();
    // BackendSelect is in the default included set and falls through.
    assert!(err.message().starts_with(
        "There were no tensor arguments to this function (e.g., you passed an empty list of Tensors), but no fallback function is registered for schema test::nothing."
    ));
}

#[test]
fn autograd_kernels_redispatch_below_themselves() {
    let d = Dispatcher::new();
    let _fw = framework(&d);
    let _def = defined(&d, "fn(Tensor x) -> int");
    let mut cpu = imp(&d, DispatchKey::CPU);
    cpu.impl_("fn", returns(10)).unwrap();
    let op = d.find_schema_or_throw("test::fn", "").unwrap();
    let typed = op.typed::<(&TensorBase,), i64>().unwrap();
    let below = typed.clone();
    let mut autograd = imp(&d, DispatchKey::AutogradCPU);
    autograd
        .impl_(
            "fn",
            CppFunction::from_unboxed(move |keys: DispatchKeySet, x: &TensorBase| {
                assert_eq!(keys.highest_priority_type_id(), DispatchKey::AutogradCPU);
                Ok(below.redispatch(keys & AFTER_AUTOGRAD_KEYSET, (x,))? + 1)
            }),
        )
        .unwrap();
    let t = tensor(DeviceType::CPU);
    assert_eq!(typed.call((&t,)).unwrap(), 11);
    {
        // Below autograd, the CPU kernel runs directly.
        let _g = AutoDispatchBelowAutograd::new();
        assert_eq!(typed.call((&t,)).unwrap(), 10);
    }
    let (result, lines) = trace::capture(|| typed.call((&t,)).unwrap());
    assert_eq!(result, 11);
    assert_eq!(
        lines,
        "[call] op=[test::fn], key=[AutogradCPU]\n [redispatch] op=[test::fn], key=[CPU]\n"
    );
    // Dropping the autograd kernel restores the fallthrough.
    drop(autograd);
    assert_eq!(typed.call((&t,)).unwrap(), 10);
}

#[test]
fn fallthrough_masks_are_per_backend() {
    let d = Dispatcher::new();
    let _def = defined(&d, "fn(Tensor x) -> int");
    let mut cpu = imp(&d, DispatchKey::CPU);
    cpu.impl_("fn", returns(1)).unwrap();
    let mut cuda = imp(&d, DispatchKey::CUDA);
    cuda.impl_("fn", returns(2)).unwrap();
    let mut ag_cpu = imp(&d, DispatchKey::AutogradCPU);
    ag_cpu.impl_("fn", CppFunction::fallthrough()).unwrap();
    let mut ag_cuda = imp(&d, DispatchKey::AutogradCUDA);
    ag_cuda.impl_("fn", returns(20)).unwrap();
    let _g = ExcludeDispatchKeyGuard::new(DispatchKeySet::from_keys(&[
        DispatchKey::BackendSelect,
        DispatchKey::ADInplaceOrView,
    ]));
    let typed = d
        .find_schema_or_throw("test::fn", "")
        .unwrap()
        .typed::<(&TensorBase,), i64>()
        .unwrap();
    assert_eq!(typed.call((&tensor(DeviceType::CPU),)).unwrap(), 1);
    assert_eq!(typed.call((&tensor(DeviceType::CUDA),)).unwrap(), 20);
    // A tensor with both backends dispatches on the highest backend, CUDA.
    let both = tensor_with(&[DispatchKey::CPU, DispatchKey::AutogradCUDA]);
    assert_eq!(typed.call((&both,)).unwrap(), 20);
}

#[test]
fn backend_fallbacks_apply_to_ops_defined_before_and_after() {
    let d = Dispatcher::new();
    let _fw = framework(&d);
    let _early = defined(&d, "early(Tensor x) -> int");
    let log = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&log);
    let mut global = Library::with_dispatcher(
        &d,
        LibraryKind::Impl,
        "_",
        Some(DispatchKey::CPU),
        "calls.rs",
        3,
    )
    .unwrap();
    global
        .fallback(CppFunction::from_boxed(move |op, _keys, stack| {
            seen.lock().unwrap().push(op.operator_name());
            stack.drop_n(1)?;
            stack.push(IValue::Int(-1));
            Ok(())
        }))
        .unwrap();
    let _late = defined(&d, "late(Tensor x) -> int");
    let t = tensor(DeviceType::CPU);
    let call = |name: &str| {
        d.find_schema_or_throw(name, "")
            .unwrap()
            .typed::<(&TensorBase,), i64>()
            .unwrap()
            .call((&t,))
    };
    assert_eq!(call("test::early").unwrap(), -1);
    assert_eq!(call("test::late").unwrap(), -1);
    assert_eq!(*log.lock().unwrap(), vec!["test::early", "test::late"]);
    // A kernel beats the fallback; a CompositeImplicitAutograd kernel does too.
    let mut cpu = imp(&d, DispatchKey::CPU);
    cpu.impl_("early", returns(5)).unwrap();
    let mut cia = imp(&d, DispatchKey::CompositeImplicitAutograd);
    cia.impl_("late", returns(6)).unwrap();
    assert_eq!(call("test::early").unwrap(), 5);
    assert_eq!(call("test::late").unwrap(), 6);
    // Dropping the fallback removes it from every table.
    drop(cpu);
    drop(global);
    assert!(call("test::early").is_err());
    // An operator defined after the fallback is gone does not see it (new
    // operators start from a cached fallbacks-only table).
    let _after = defined(&d, "after(Tensor x) -> int");
    assert!(call("test::after").is_err());
    d.check_all_invariants().unwrap();
}

#[test]
fn backend_select_routes_factories_by_device() {
    let d = Dispatcher::new();
    let _fw = framework(&d);
    let _def = defined(&d, "empty(int[] size, *, Device? device=None) -> int");
    let op = d.find_schema_or_throw("test::empty", "").unwrap();
    let typed = op.typed::<(&[i64], Option<Device>), i64>().unwrap();
    let redispatch = typed.clone();
    let mut bs = imp(&d, DispatchKey::BackendSelect);
    bs.impl_(
        "empty",
        CppFunction::from_unboxed(
            move |_: DispatchKeySet, size: &[i64], device: Option<Device>| {
                let device = device.unwrap_or(Device::CPU);
                let keys =
                    DispatchKeySet::from_key(device.device_type().backend_component().dense_key());
                redispatch.redispatch(keys, (size, Some(device)))
            },
        ),
    )
    .unwrap();
    let mut cpu = imp(&d, DispatchKey::CPU);
    cpu.impl_(
        "empty",
        CppFunction::from_unboxed(|s: &[i64], _: Option<Device>| Ok(s.len() as i64)),
    )
    .unwrap();
    let mut meta = imp(&d, DispatchKey::Meta);
    meta.impl_(
        "empty",
        CppFunction::from_unboxed(|_: &[i64], _: Option<Device>| Ok(-7)),
    )
    .unwrap();
    assert_eq!(typed.call((&[2, 3][..], None::<Device>)).unwrap(), 2);
    assert_eq!(typed.call((&[2, 3][..], Some(Device::META))).unwrap(), -7);
    // Boxed, with the default filled in by the caller.
    let mut stack: Stack = vec![
        IValue::IntList(Arc::new(vec![1, 2, 3])),
        IValue::device(Device::META),
    ];
    op.call_boxed(&mut stack).unwrap();
    assert_eq!(stack, vec![IValue::Int(-7)]);
}

#[test]
fn ambiguous_autograd_other_raises_when_called() {
    let d = Dispatcher::new();
    let _def = defined(&d, "fn(Tensor x) -> int");
    let mut cia = imp(&d, DispatchKey::CompositeImplicitAutograd);
    cia.impl_("fn", returns(1)).unwrap();
    let mut fpga = imp(&d, DispatchKey::FPGA);
    fpga.impl_("fn", returns(2)).unwrap();
    let typed = d
        .find_schema_or_throw("test::fn", "")
        .unwrap()
        .typed::<(&TensorBase,), i64>()
        .unwrap();
    let _g = ExcludeDispatchKeyGuard::new(DispatchKeySet::from_keys(&[
        DispatchKey::BackendSelect,
        DispatchKey::ADInplaceOrView,
    ]));
    assert_eq!(
        typed.call((&tensor_with(&[DispatchKey::FPGA]),)).unwrap(),
        2
    );
    let err = typed
        .call((&tensor_with(&[
            DispatchKey::FPGA,
            DispatchKey::AutogradOther,
        ]),))
        .unwrap_err();
    assert!(err.message().starts_with(
        "test::fn has kernels registered to both CompositeImplicitAutograd and a backend mapped to AutogradOther."
    ));
}

#[test]
fn typed_handles_check_signatures() {
    let d = Dispatcher::new();
    let mut m =
        Library::with_dispatcher(&d, LibraryKind::Fragment, "test", None, "calls.rs", 4).unwrap();
    m.def_fn("dummy", CppFunction::from_unboxed(|_: i64| Ok(())))
        .unwrap();
    let op = d.find_schema_or_throw("test::dummy", "").unwrap();
    assert!(op.typed::<(i64,), ()>().is_ok());
    let err = op.typed::<(f64,), ()>().unwrap_err();
    assert!(err
        .message()
        .starts_with("\nTried to access or call an operator with a wrong signature.\n  operator: test::dummy(int _0) -> ()"));
    // A second unboxed kernel with another signature is refused.
    let mut cpu = imp(&d, DispatchKey::CPU);
    let err = cpu
        .impl_("dummy", CppFunction::from_unboxed(|_: i64| Ok(1i64)))
        .unwrap_err();
    assert!(err
        .message()
        .contains("Inferred operator schema for a C++ kernel function doesn't match"));
    let mut cuda = imp(&d, DispatchKey::CUDA);
    // Same inferred schema, different Rust signature (&[i64] vs Vec<i64> both
    // infer int[]): the C++-signature check catches it.
    let _def = defined(&d, "lists(int[] x) -> ()");
    cuda.impl_("lists", CppFunction::from_unboxed(|_: &[i64]| Ok(())))
        .unwrap();
    let err = cpu
        .impl_("lists", CppFunction::from_unboxed(|_: Vec<i64>| Ok(())))
        .unwrap_err();
    assert!(err.message().contains("Mismatch in kernel C++ signatures"));
    d.check_all_invariants().unwrap();
}

#[test]
fn registration_listener_hears_defs() {
    let d = Dispatcher::new();
    let heard = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&heard);
    let _early = defined(&d, "a(Tensor x) -> Tensor");
    let listener =
        d.add_registration_listener(move |e| sink.lock().unwrap().push(format!("{e:?}")));
    let late = defined(&d, "b(Tensor x) -> Tensor");
    drop(late);
    drop(listener);
    let _ignored = defined(&d, "c(Tensor x) -> Tensor");
    let heard = heard.lock().unwrap();
    assert_eq!(heard.len(), 3, "{heard:?}");
    assert!(heard[0].contains("OperatorRegistered") && heard[0].contains("test::a"));
    assert!(heard[1].contains("OperatorRegistered") && heard[1].contains("test::b"));
    assert!(heard[2].contains("OperatorDeregistered") && heard[2].contains("test::b"));
}

#[test]
fn boxed_calls_need_the_arguments() {
    let d = Dispatcher::new();
    let _fw = framework(&d);
    let _def = defined(&d, "fn(Tensor x, int n) -> int");
    let mut cpu = imp(&d, DispatchKey::CPU);
    cpu.impl_(
        "fn",
        CppFunction::from_unboxed(|_: &TensorBase, n: i64| Ok(n)),
    )
    .unwrap();
    let op = d.find_schema_or_throw("test::fn", "").unwrap();
    let mut short: Stack = vec![IValue::Int(1)];
    assert!(op.call_boxed(&mut short).is_err());
    let mut wrong: Stack = vec![IValue::Tensor(tensor(DeviceType::CPU)), IValue::double(1.0)];
    let err = op.call_boxed(&mut wrong).unwrap_err();
    assert_eq!(
        err.message(),
        "Expected a value of type 'int' but instead found type 'float'."
    );
    let _ = Result::<()>::Ok(());
}

#[test]
fn a_panic_inside_a_trace_capture_restores_the_threads_trace_state() {
    let d = Dispatcher::new();
    let _fw = framework(&d);
    let _fn = defined(&d, "fn(Tensor x) -> int");
    let _gn = defined(&d, "gn(Tensor x) -> int");
    let mut cpu = imp(&d, DispatchKey::CPU);
    let kernel = |x: &TensorBase| {
        if x.sizes()[0] == 2 {
            panic!("kernel panics");
        }
        Ok(1i64)
    };
    cpu.impl_("fn", CppFunction::from_unboxed(kernel)).unwrap();
    cpu.impl_("gn", CppFunction::from_unboxed(kernel)).unwrap();
    let typed = d
        .find_schema_or_throw("test::fn", "")
        .unwrap()
        .typed::<(&TensorBase,), i64>()
        .unwrap();
    // The inner captures trace `gn`, the outer one `fn`.
    let inner_op = d
        .find_schema_or_throw("test::gn", "")
        .unwrap()
        .typed::<(&TensorBase,), i64>()
        .unwrap();
    let t = tensor(DeviceType::CPU);
    let panicking = TensorBase::from_impl(
        TensorImpl::new(
            TensorImpl::default_key_set(Device::CPU),
            ScalarType::Float,
            Device::CPU,
            vec![2],
        )
        .unwrap(),
    );
    let traced_by_environment = std::env::var("ATEN_SHOW_DISPATCH_TRACE").is_ok_and(|v| v == "1");

    // A panic in the captured closure, and one inside a traced kernel.
    for inner in [
        Box::new(|| -> i64 { panic!("closure panics") }) as Box<dyn Fn() -> i64>,
        Box::new(|| inner_op.call((&panicking,)).unwrap()),
    ] {
        let (result, lines) = trace::capture(|| {
            typed.call((&t,)).unwrap();
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                trace::capture(|| {
                    inner_op.call((&t,)).unwrap();
                    inner()
                })
            }));
            assert!(caught.is_err());
            // The enclosing capture goes on, at the same nesting level.
            typed.call((&t,)).unwrap()
        });
        assert_eq!(result, 1);
        assert_eq!(
            lines,
            "[call] op=[test::fn], key=[CPU]\n[call] op=[test::fn], key=[CPU]\n"
        );
    }

    // Outside any capture the thread is not tracing any more.
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        trace::capture(|| -> i64 { panic!("closure panics") })
    }));
    assert!(caught.is_err());
    assert_eq!(trace::enabled(), traced_by_environment);

    // The guard form ends the same way.
    let caught = std::panic::catch_unwind(|| {
        let _capture = trace::TraceCapture::start();
        assert!(trace::enabled());
        panic!("guard panics");
    });
    assert!(caught.is_err());
    assert_eq!(trace::enabled(), traced_by_environment);
    let capture = trace::TraceCapture::start();
    typed.call((&t,)).unwrap();
    assert_eq!(capture.finish(), "[call] op=[test::fn], key=[CPU]\n");
}

#[test]
fn fallbacks_registered_together_serve_every_operator_and_leave_one_by_one() {
    let d = Dispatcher::new();
    let _fw = framework(&d);
    let _op = defined(&d, "op(Tensor x) -> int");
    let tagged = |n: i64| {
        KernelFunction::make_from_boxed_function(move |_op, _keys, stack| {
            stack.drop_n(1)?;
            stack.push(IValue::Int(n));
            Ok(())
        })
    };
    let t = tensor(DeviceType::CPU);
    let call = || {
        d.find_schema_or_throw("test::op", "")
            .unwrap()
            .typed::<(&TensorBase,), i64>()
            .unwrap()
            .call((&t,))
    };
    let mut handles = d
        .register_fallbacks(vec![
            (DispatchKey::Python, tagged(1), "python".into()),
            (DispatchKey::CPU, tagged(2), "cpu".into()),
        ])
        .unwrap();
    assert_eq!(call().unwrap(), 2);
    // A key taken already, or named twice, fails the whole call and
    // registers nothing.
    let e = d
        .register_fallbacks(vec![
            (DispatchKey::Functionalize, tagged(3), "new".into()),
            (DispatchKey::CPU, tagged(4), "again".into()),
        ])
        .unwrap_err();
    assert!(e
        .message()
        .contains("Tried to register multiple backend fallbacks for the same dispatch key CPU"));
    let e = d
        .register_fallbacks(vec![
            (DispatchKey::Functionalize, tagged(3), "one".into()),
            (DispatchKey::Functionalize, tagged(4), "two".into()),
        ])
        .unwrap_err();
    assert!(
        e.message().contains("previous registration one"),
        "{}",
        e.message()
    );
    assert!(d
        .register_fallback(DispatchKey::Functionalize, tagged(5), "alone")
        .is_ok());
    // Each handle removes its own fallback.
    drop(handles.pop());
    assert!(call().is_err());
    drop(handles);
    d.check_all_invariants().unwrap();
}

#[test]
fn a_fallback_republishes_only_the_tables_it_reroutes() {
    let d = Dispatcher::new();
    let _fw = framework(&d);
    let _a = defined(&d, "a(Tensor x) -> int");
    let _b = defined(&d, "b(Tensor x) -> int");
    let mut cpu = imp(&d, DispatchKey::CPU);
    cpu.impl_("a", returns(1)).unwrap();
    let a = d.find_schema_or_throw("test::a", "").unwrap();
    let b = d.find_schema_or_throw("test::b", "").unwrap();
    let (va, vb) = (a.table_version(), b.table_version());
    let fallback = d
        .register_fallback(
            DispatchKey::CPU,
            KernelFunction::make_from_boxed_function(|_op, _keys, stack| {
                stack.drop_n(1)?;
                stack.push(IValue::Int(-1));
                Ok(())
            }),
            "calls.rs",
        )
        .unwrap();
    // `a` keeps its own CPU kernel: its table is the same and is not
    // published again; `b` now reaches the fallback.
    assert_eq!(a.table_version(), va);
    assert!(b.table_version() > vb);
    let t = tensor(DeviceType::CPU);
    let typed = |h: &aten_dispatch::OperatorHandle| {
        h.typed::<(&TensorBase,), i64>()
            .unwrap()
            .call((&t,))
            .unwrap()
    };
    assert_eq!((typed(&a), typed(&b)), (1, -1));
    drop(fallback);
    d.check_all_invariants().unwrap();
}

// PyTorch's calling convention for SymInt arguments (`KernelFunction::call`):
// a typed call whose arguments hold SymInts goes to the kernel's SymInt
// entry; a kernel of plain integers gets them unpacked (a symbolic `SymInt`
// guarded on, a symbolic element of a `SymInt[]` an error); a boxed kernel
// gets them boxed, symbolic ones as `SymInt` values.

/// `test::sym(Tensor x, SymInt n, SymInt[] sizes) -> int` with a SymInt
/// kernel on CPU (`1000` plus how many arguments were symbolic), a plain
/// one on CUDA (`n` plus the sizes) and a boxed one on Meta (`-1` per
/// symbolic value on its stack).
fn operator(d: &Dispatcher) -> Vec<Library> {
    let def = defined(d, "sym(Tensor x, SymInt n, SymInt[] sizes) -> int");
    let mut cpu = imp(d, DispatchKey::CPU);
    cpu.impl_(
        "sym",
        CppFunction::from_unboxed(|_: &TensorBase, n: SymInt, sizes: &[SymInt]| {
            let symbolic = sizes.iter().filter(|s| s.is_symbolic()).count();
            Ok(1000 + i64::from(n.is_symbolic()) + symbolic as i64)
        }),
    )
    .unwrap();
    let mut cuda = imp(d, DispatchKey::CUDA);
    cuda.impl_(
        "sym",
        CppFunction::from_unboxed(|_: &TensorBase, n: i64, sizes: &[i64]| {
            Ok(n + sizes.iter().sum::<i64>())
        }),
    )
    .unwrap();
    let mut meta = imp(d, DispatchKey::Meta);
    meta.impl_(
        "sym",
        CppFunction::from_boxed(
            |_: &dyn aten_boxing::BoxedOperator, _, stack: &mut Vec<IValue>| {
                let mut symbolic = 0;
                for v in stack.drain(..) {
                    match v {
                        IValue::SymInt(_) => symbolic += 1,
                        IValue::GenericList(items) => {
                            symbolic += items
                                .iter()
                                .filter(|v| matches!(v, IValue::SymInt(_)))
                                .count()
                        }
                        _ => {}
                    }
                }
                stack.push(IValue::Int(-(symbolic as i64)));
                Ok(())
            },
        ),
    )
    .unwrap();
    vec![def, cpu, cuda, meta]
}

#[test]
fn symint_arguments_take_the_entries_in_pytorch_s_order() {
    let d = Dispatcher::new();
    let _fw = framework(&d);
    let _libs = operator(&d);
    let op = d.find_schema_or_throw("test::sym", "").unwrap();
    let typed = op.typed::<(&TensorBase, SymInt, &[SymInt]), i64>().unwrap();
    let env = GuardLog::new();
    let s0 = env.int_symbol("s0", Some(5));
    let concrete = [SymInt::new(2), SymInt::new(3)];
    let symbolic = [SymInt::new(2), env.int_symbol("s1", Some(3))];

    // 1. The SymInt entry: the kernel sees the symbols.
    let cpu = tensor(DeviceType::CPU);
    assert_eq!(typed.call((&cpu, s0.clone(), &symbolic[..])).unwrap(), 1002);
    assert_eq!(
        typed.call((&cpu, SymInt::new(4), &concrete[..])).unwrap(),
        1000
    );
    assert!(env.guards().is_empty());

    // 2. The plain entry, the SymInts unpacked: a symbolic `SymInt` is
    // guarded on (its hint read and recorded) ...
    let cuda = tensor(DeviceType::CUDA);
    assert_eq!(
        typed.call((&cuda, SymInt::new(4), &concrete[..])).unwrap(),
        9
    );
    assert_eq!(typed.call((&cuda, s0.clone(), &concrete[..])).unwrap(), 10);
    assert_eq!(env.guards(), vec![("s0".to_string(), SymValue::Int(5))]);
    // ... and a symbolic element of a `SymInt[]` is an error.
    let err = typed
        .call((&cuda, SymInt::new(4), &symbolic[..]))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "SymIntArrayRef expected to contain only concrete integers"
    );

    // 3. The boxed entry: symbolic values are boxed as `SymInt`s.
    let meta = tensor(DeviceType::Meta);
    assert_eq!(typed.call((&meta, s0.clone(), &symbolic[..])).unwrap(), -2);
    assert_eq!(
        typed.call((&meta, SymInt::new(1), &concrete[..])).unwrap(),
        0
    );
}

#[test]
fn integer_arguments_reach_a_symint_kernel_boxed() {
    let d = Dispatcher::new();
    let _fw = framework(&d);
    let _libs = operator(&d);
    let op = d.find_schema_or_throw("test::sym", "").unwrap();
    // A call of plain integers: the plain kernel directly, the SymInt
    // kernel (which has no plain entry) through its boxed wrapper.
    let ints = op.typed::<(&TensorBase, i64, &[i64]), i64>().unwrap();
    let cuda = tensor(DeviceType::CUDA);
    assert_eq!(ints.call((&cuda, 1, &[2, 3][..])).unwrap(), 6);
    let cpu = tensor(DeviceType::CPU);
    assert_eq!(ints.call((&cpu, 1, &[2, 3][..])).unwrap(), 1000);
    // Both typed views of the operator coexist; another concrete twin does
    // not.
    assert!(op.typed::<(&TensorBase, SymInt, &[SymInt]), i64>().is_ok());
    let err = op
        .typed::<(&TensorBase, SymInt, Vec<SymInt>), i64>()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Tried to access or call an operator with a wrong signature"),
        "{err}"
    );
}

#[test]
fn kernels_are_checked_against_their_own_kind() {
    let d = Dispatcher::new();
    let _fw = framework(&d);
    let _libs = operator(&d);
    let mut xla = Library::with_dispatcher(
        &d,
        LibraryKind::Impl,
        "test",
        Some(DispatchKey::XLA),
        "s.rs",
        3,
    )
    .unwrap();
    // Another SymInt signature than the CPU kernel's is refused ...
    let err = xla
        .impl_(
            "sym",
            CppFunction::from_unboxed(|_: &TensorBase, n: SymInt, _: Vec<SymInt>| n.expect_int()),
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("Mismatch in kernel C++ signatures"), "{err}");
    // ... and so is another plain one than the CUDA kernel's.
    let err = xla
        .impl_(
            "sym",
            CppFunction::from_unboxed(|_: &TensorBase, n: i64, _: Vec<i64>| Ok(n)),
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("Mismatch in kernel C++ signatures"), "{err}");
}
