//! Dispatch modes and tensor subclasses: the thread-local mode stack,
//! delivery of each operator call below autograd to the innermost mode with
//! that mode popped while it runs, nesting, PyTorch's split of arguments,
//! higher-order operators' rules per mode type, and wrapper tensors whose
//! subclass handles the calls they take part in (the logging tensor).

mod support;

use std::sync::{Arc, Mutex};

use aten_boxing::IValue;
use aten_core::ops;
use aten_core::Tensor;
use aten_ops::higher_order::cond;
use aten_ops::modes::{current_mode, stack_len};
use aten_ops::{push_mode, GraphFn, OpOverload, TorchDispatchMode};
use c10_core::local_dispatch_key_set::tls_is_dispatch_key_included;
use c10_core::DispatchKey;
use c10_core::Result;

fn t(v: &[f32]) -> Tensor {
    support::ops_root();
    Tensor::from_slice(v, &[v.len() as i64]).unwrap()
}

fn tensor_of(v: &IValue) -> Tensor {
    match v {
        IValue::Tensor(t) => Tensor::from_base(t.clone()),
        other => panic!("not a tensor: {other:?}"),
    }
}

/// Records each call (with the stack depth it saw) and forwards it.
struct Recording {
    tag: &'static str,
    log: Arc<Mutex<Vec<String>>>,
}

impl TorchDispatchMode for Recording {
    fn torch_dispatch(
        &self,
        op: &OpOverload,
        args: &[IValue],
        kwargs: &[(&str, IValue)],
    ) -> Result<Vec<IValue>> {
        let keys: Vec<&str> = kwargs.iter().map(|(k, _)| *k).collect();
        self.log.lock().unwrap().push(format!(
            "{} {op} args={} kwargs={keys:?} depth={}",
            self.tag,
            args.len(),
            stack_len()
        ));
        op.call(args, kwargs)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn recording(tag: &'static str) -> (Arc<Recording>, Arc<Mutex<Vec<String>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    (
        Arc::new(Recording {
            tag,
            log: Arc::clone(&log),
        }),
        log,
    )
}

#[test]
fn a_mode_sees_each_call_with_pytorchs_argument_split() {
    let a = t(&[1.0, 2.0]);
    let (mode, log) = recording("m");
    let sum = {
        let _guard = push_mode(mode);
        assert_eq!(stack_len(), 1);
        assert!(tls_is_dispatch_key_included(DispatchKey::Python));
        let b = ops::add_tensor(&a, &a).unwrap();
        let c = ops::add_tensor_with(&b, &a, ops::AddTensorOptions { alpha: 2.into() }).unwrap();
        ops::sum(&c).unwrap()
    };
    assert_eq!(stack_len(), 0);
    assert!(!tls_is_dispatch_key_included(DispatchKey::Python));
    assert_eq!(sum.to_vec::<f32>().unwrap(), vec![12.0]);
    assert_eq!(
        *log.lock().unwrap(),
        vec![
            "m aten.add.Tensor args=2 kwargs=[] depth=0",
            "m aten.add.Tensor args=2 kwargs=[\"alpha\"] depth=0",
            "m aten.sum.default args=1 kwargs=[] depth=0",
        ]
    );
    // Without the mode nothing is recorded.
    ops::neg(&a).unwrap();
    assert_eq!(log.lock().unwrap().len(), 3);
}

#[test]
fn modes_nest_and_the_inner_one_runs_first() {
    let a = t(&[1.0]);
    let (outer, log) = recording("outer");
    let inner = Arc::new(Recording {
        tag: "inner",
        log: Arc::clone(&log),
    });
    {
        let _o = push_mode(outer);
        let _i = push_mode(inner.clone());
        assert!(Arc::ptr_eq(
            &current_mode().unwrap(),
            &(inner as Arc<dyn TorchDispatchMode>)
        ));
        ops::neg(&a).unwrap();
    }
    assert_eq!(
        *log.lock().unwrap(),
        vec![
            "inner aten.neg.default args=1 kwargs=[] depth=1",
            "outer aten.neg.default args=1 kwargs=[] depth=0",
        ]
    );
}

/// Replaces every result by zeros, and reports a wrong arity once.
struct Zeroing;

impl TorchDispatchMode for Zeroing {
    fn torch_dispatch(
        &self,
        op: &OpOverload,
        args: &[IValue],
        kwargs: &[(&str, IValue)],
    ) -> Result<Vec<IValue>> {
        if op.op_name() == "mul" {
            return Ok(vec![]);
        }
        let out = op.call(args, kwargs)?;
        let zeros = ops::zeros_like(&tensor_of(&out[0]))?;
        Ok(vec![IValue::Tensor(zeros.base().clone())])
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[test]
fn a_mode_decides_the_result() {
    let a = t(&[3.0, 4.0]);
    let _guard = push_mode(Arc::new(Zeroing));
    let r = ops::neg(&a).unwrap();
    assert_eq!(
        {
            let _off = aten_ops::modes::pop_mode_temporarily().unwrap();
            r.to_vec::<f32>().unwrap()
        },
        vec![0.0, 0.0]
    );
    let e = ops::mul_tensor(&a, &a).unwrap_err();
    assert_eq!(
        e.message(),
        "aten::mul.Tensor: the dispatch mode returned 0 values but the operator returns 1"
    );
}

struct WithRule;

impl TorchDispatchMode for WithRule {
    fn torch_dispatch(
        &self,
        op: &OpOverload,
        args: &[IValue],
        kwargs: &[(&str, IValue)],
    ) -> Result<Vec<IValue>> {
        op.call(args, kwargs)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[test]
fn higher_order_operators_use_the_rule_for_the_mode() {
    let x = t(&[1.0, 2.0]);
    let pred = IValue::Tensor(Tensor::from_slice(&[true], &[]).unwrap().base().clone());
    let id: GraphFn = Arc::new(|args: &[IValue]| Ok(args.to_vec()));
    let (mode, _log) = recording("m");
    {
        let _guard = push_mode(mode);
        let e = cond(
            &pred,
            id.clone(),
            id.clone(),
            &[IValue::Tensor(x.base().clone())],
        )
        .unwrap_err();
        assert_eq!(
            e.message(),
            "There was no rule registered for HigherOrderOperator cond and mode Recording.Hint: set Recording's supports_higher_order_operators to True. This causes all higher order operators to pass through {curr_mode}'s __torch_dispatch__, so handle them accordingly by adding support for HigerOrderOperators (in this case, cond) in Recording.__torch_dispatch__ or returning NotImplemented when not supported."
        );
    }
    let hop = support::ops_root().higher_order().op("cond").unwrap();
    let seen = Arc::new(Mutex::new(0usize));
    let count = Arc::clone(&seen);
    hop.py_impl_mode::<WithRule>(move |_mode, op, args| {
        *count.lock().unwrap() += 1;
        assert_eq!(stack_len(), 0, "the mode is popped while its rule runs");
        op.call(args)
    })
    .unwrap();
    let _guard = push_mode(Arc::new(WithRule));
    let out = cond(&pred, id.clone(), id, &[IValue::Tensor(x.base().clone())]).unwrap();
    assert_eq!(tensor_of(&out[0]).to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
    assert_eq!(*seen.lock().unwrap(), 1);
}

mod subclasses {
    use super::*;
    use aten_ops::subclass::{
        make_wrapper_subclass, subclass_object, LoggingTensor, TorchDispatchSubclass,
    };

    fn unwrap_f32(log: &LoggingTensor, t: &Tensor) -> Vec<f32> {
        Tensor::from_base(log.unwrap(t.base()))
            .to_vec::<f32>()
            .unwrap()
    }

    #[test]
    fn a_logging_tensor_records_every_operator_it_flows_through() {
        let a = t(&[1.0, 2.0]);
        let logging = LoggingTensor::new();
        let wa = Tensor::from_base(logging.wrap(a.base()).unwrap());
        assert!(wa.key_set().has(DispatchKey::Python));
        assert!(wa.to_vec::<f32>().is_err(), "a wrapper holds no data");
        let b = ops::mul_tensor(&ops::add_tensor(&wa, &wa).unwrap(), &a).unwrap();
        let s = ops::sum(&b).unwrap();
        assert!(subclass_object(s.base()).is_some(), "results are wrapped");
        assert_eq!(unwrap_f32(&logging, &s), vec![10.0]);
        assert_eq!(
            logging.log(),
            vec!["aten.add.Tensor", "aten.mul.Tensor", "aten.sum.default"]
        );
        // A mode sees the call first, then the subclass.
        let (mode, log) = recording("m");
        {
            let _guard = push_mode(mode);
            ops::neg(&wa).unwrap();
        }
        assert_eq!(
            *log.lock().unwrap(),
            vec!["m aten.neg.default args=1 kwargs=[] depth=0"]
        );
        assert_eq!(logging.log().last().unwrap(), "aten.neg.default");
    }

    /// Declines everything.
    struct Declining;

    impl TorchDispatchSubclass for Declining {
        fn torch_dispatch(
            &self,
            _cls: &Arc<dyn TorchDispatchSubclass>,
            _op: &OpOverload,
            _args: &[IValue],
            _kwargs: &[(&str, IValue)],
        ) -> Result<Option<Vec<IValue>>> {
            Ok(None)
        }

        fn name(&self) -> String {
            "Declining".into()
        }
    }

    #[test]
    fn subclasses_are_asked_in_order_until_one_handles_the_call() {
        let a = t(&[1.0, 2.0]);
        let declining: Arc<dyn TorchDispatchSubclass> = Arc::new(Declining);
        let d = Tensor::from_base(make_wrapper_subclass(a.base(), declining, ()).unwrap());
        let e = ops::neg(&d).unwrap_err();
        assert_eq!(
            e.message(),
            "Multiple dispatch failed for 'torch._ops.aten.neg.default'; all __torch_dispatch__ handlers returned NotImplemented:\n\n  - tensor subclass <class 'Declining'>\n\nFor more information, try re-running with TORCH_LOGS=not_implemented"
        );
        let logging = LoggingTensor::new();
        let l = Tensor::from_base(logging.wrap(a.base()).unwrap());
        // Declining comes first and declines; the logging tensor handles the
        // call (its unwrap leaves the other wrapper as it is, so the inner
        // call reaches Declining alone and fails).
        let e = ops::add_tensor(&d, &l).unwrap_err();
        assert!(e
            .message()
            .starts_with("Multiple dispatch failed for 'torch._ops.aten.add.Tensor'"));
        assert_eq!(logging.log(), vec!["aten.add.Tensor"]);
    }
}

mod fake_tensors {
    use super::*;
    use aten_ops::fake::{is_fake, meta_of, FakeTensorMode};
    use c10_core::device::DeviceType;
    use c10_core::Device;
    use c10_core::ScalarType;

    #[test]
    fn an_mlp_on_cuda_computes_its_shapes_without_running() {
        support::ops_root();
        let cuda = Device::new(DeviceType::CUDA, 0);
        let mode = FakeTensorMode::new();
        let fake = |sizes: &[i64]| {
            Tensor::from_base(mode.fake_tensor(sizes, ScalarType::Float, cuda).unwrap())
        };
        let (x, w1, b1, w2) = (fake(&[64, 2]), fake(&[2, 32]), fake(&[32]), fake(&[32, 3]));
        let _guard = push_mode(mode.clone());
        let h = ops::relu(&ops::add_tensor(&ops::mm(&x, &w1).unwrap(), &b1).unwrap()).unwrap();
        let out = ops::mm(&h, &w2).unwrap();
        assert!(is_fake(out.base()));
        assert_eq!(out.sizes().to_vec(), vec![64, 3]);
        assert_eq!(out.device(), Some(cuda));
        assert_eq!(out.dtype(), Some(ScalarType::Float));
        assert_eq!(meta_of(out.base()).unwrap().device(), Some(Device::META));
        // Strides follow the Meta kernels: a transpose is a view.
        let tt = ops::t(&out).unwrap();
        assert_eq!(tt.layout().unwrap().strides().to_vec(), vec![1, 3]);
        // Factories take the device they were asked for.
        let z = ops::zeros_with(
            &[4, 5],
            ops::ZerosOptions {
                device: Some(cuda),
                ..Default::default()
            },
        )
        .unwrap();
        assert!(is_fake(z.base()) && z.device() == Some(cuda));
        let cpu = ops::zeros(&[2]).unwrap();
        assert_eq!(cpu.device(), Some(Device::CPU));
        // Real tensors taking part in a call are faked under the mode.
        let real = Tensor::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
        let r = ops::add_tensor(&real, &real).unwrap();
        assert!(!is_fake(real.base()) && is_fake(r.base()));
        assert_eq!(r.device(), Some(Device::CPU));
        // A device given to a copy wins over the input's.
        let moved = ops::_to_copy_with(
            &out,
            ops::ToCopyOptions {
                device: Some(Device::CPU),
                ..Default::default()
            },
        )
        .unwrap();
        assert!(is_fake(moved.base()) && moved.device() == Some(Device::CPU));
        assert_eq!(moved.sizes().to_vec(), vec![64, 3]);
        let like = ops::_to_copy(&out).unwrap();
        assert_eq!(like.device(), Some(cuda));
    }

    #[test]
    fn fake_tensors_without_the_mode_refuse_real_ones_and_mixed_devices() {
        support::ops_root();
        let mode = FakeTensorMode::new();
        let cuda = Device::new(DeviceType::CUDA, 0);
        let a = Tensor::from_base(mode.fake_tensor(&[2], ScalarType::Float, cuda).unwrap());
        let b = Tensor::from_base(
            mode.fake_tensor(&[2], ScalarType::Float, Device::CPU)
                .unwrap(),
        );
        // Without the mode, fake tensors still compute through Meta.
        let s = ops::add_tensor(&a, &a).unwrap();
        assert!(is_fake(s.base()) && s.device() == Some(cuda));
        let e = ops::add_tensor(&a, &b).unwrap_err();
        assert_eq!(
            e.message(),
            "Unhandled FakeTensor Device Propagation for aten.add.Tensor, found two different devices cuda:0, cpu"
        );
        let real = Tensor::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
        let e = ops::mul_tensor(&b, &real).unwrap_err();
        assert!(e.message().starts_with(
            "Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode with 'allow_non_fake_inputs'."
        ));
    }
}

#[test]
fn pre_dispatch_modes_see_calls_above_autograd_then_modes_below() {
    use aten_ops::modes::{pop_pre_dispatch_mode_temporarily, pre_dispatch_stack_len};
    use aten_ops::push_pre_dispatch_mode;
    let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    support::ops_root();
    let (outer, log) = recording("pre");
    let (below, below_log) = recording("below");
    let (inner, _) = recording("pre-inner");
    {
        let _below = push_mode(below);
        let _pre = push_pre_dispatch_mode(outer);
        assert!(tls_is_dispatch_key_included(DispatchKey::PreDispatch));
        assert_eq!((pre_dispatch_stack_len(), stack_len()), (1, 1));
        ops::matmul(&a, &a).unwrap();
        {
            // Nested pre-dispatch modes: the inner one runs first and
            // forwards to the outer.
            let _inner = push_pre_dispatch_mode(inner);
            ops::matmul(&a, &a).unwrap();
            let popped = pop_pre_dispatch_mode_temporarily().unwrap();
            assert_eq!(pre_dispatch_stack_len(), 1);
            drop(popped);
            assert_eq!(pre_dispatch_stack_len(), 2);
        }
    }
    assert!(!tls_is_dispatch_key_included(DispatchKey::PreDispatch));
    assert!(pop_pre_dispatch_mode_temporarily().is_err());
    // Above autograd the composite is whole; below it, decomposed.
    assert_eq!(
        log.lock().unwrap().as_slice(),
        [
            "pre aten.matmul.default args=2 kwargs=[] depth=1",
            "pre aten.matmul.default args=2 kwargs=[] depth=1"
        ]
    );
    assert_eq!(
        below_log.lock().unwrap().as_slice(),
        [
            "below aten.mm.default args=2 kwargs=[] depth=0",
            "below aten.mm.default args=2 kwargs=[] depth=0"
        ]
    );
}

/// More ports of `test/test_python_dispatch.py`: priority between modes and
/// subclasses, re-entry, the stack after errors, the same mode pushed
/// twice.
mod python_dispatch_ports {
    use super::*;
    use aten_ops::modes::pop_mode_temporarily;
    use aten_ops::subclass::{make_wrapper_subclass, subclass_object, TorchDispatchSubclass};
    use c10_core::Error;

    /// A mode that fails with its name (`AMode`, `BMode`).
    struct Failing(&'static str);

    impl TorchDispatchMode for Failing {
        fn torch_dispatch(
            &self,
            _: &OpOverload,
            _: &[IValue],
            _: &[(&str, IValue)],
        ) -> Result<Vec<IValue>> {
            Err(Error::runtime(self.0))
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    /// `A`: pushes `AMode` and fails; `B(A)`: pushes `BMode` and calls
    /// again.
    struct Pushing {
        name: &'static str,
        reenters: bool,
        parent: Option<Arc<dyn TorchDispatchSubclass>>,
    }

    impl TorchDispatchSubclass for Pushing {
        fn torch_dispatch(
            &self,
            _: &Arc<dyn TorchDispatchSubclass>,
            op: &OpOverload,
            args: &[IValue],
            kwargs: &[(&str, IValue)],
        ) -> Result<Option<Vec<IValue>>> {
            let mode = if self.reenters { "ErrorB" } else { "ErrorA" };
            let _mode = push_mode(Arc::new(Failing(mode)));
            if self.reenters {
                op.call(args, kwargs).map(Some)
            } else {
                Err(Error::runtime("ErrorA"))
            }
        }
        fn name(&self) -> String {
            self.name.into()
        }
        fn parent(&self) -> Option<Arc<dyn TorchDispatchSubclass>> {
            self.parent.clone()
        }
    }

    fn wrapped(class: Arc<dyn TorchDispatchSubclass>) -> Tensor {
        Tensor::from_base(make_wrapper_subclass(t(&[0.0]).base(), class, ()).unwrap())
    }

    #[test]
    fn test_torch_dispatch_mode_subclass_priority() {
        let class_a: Arc<dyn TorchDispatchSubclass> = Arc::new(Pushing {
            name: "A",
            reenters: false,
            parent: None,
        });
        let class_b: Arc<dyn TorchDispatchSubclass> = Arc::new(Pushing {
            name: "B",
            reenters: true,
            parent: Some(class_a.clone()),
        });
        let a = wrapped(class_a);
        let b = wrapped(class_b);
        let err = |r: Result<Tensor>| r.unwrap_err().message().to_string();
        assert_eq!(err(ops::add_tensor(&a, &a)), "ErrorA");
        // B derives from A, so it is asked first in either order; its
        // handler re-dispatches into BMode.
        assert_eq!(err(ops::add_tensor(&a, &b)), "ErrorB");
        assert_eq!(err(ops::add_tensor(&b, &a)), "ErrorB");
        assert_eq!(err(ops::add_tensor(&b, &b)), "ErrorB");
        // Modes take precedence over arguments.
        {
            let _m = push_mode(Arc::new(Failing("ErrorA")));
            assert_eq!(err(ops::add_tensor(&b, &b)), "ErrorA");
        }
        {
            let _m = push_mode(Arc::new(Failing("ErrorB")));
            assert_eq!(err(ops::add_tensor(&a, &a)), "ErrorB");
            assert_eq!(err(ops::add_tensor(&a, &b)), "ErrorB");
        }
        // Every guard unwound through the errors.
        assert_eq!(stack_len(), 0);
        assert!(!tls_is_dispatch_key_included(DispatchKey::Python));
    }

    /// Fails on `neg`, counts and forwards everything else.
    struct FailsOnNeg(Mutex<usize>);

    impl TorchDispatchMode for FailsOnNeg {
        fn torch_dispatch(
            &self,
            op: &OpOverload,
            args: &[IValue],
            kwargs: &[(&str, IValue)],
        ) -> Result<Vec<IValue>> {
            if op.to_string() == "aten.neg.default" {
                return Err(Error::runtime("neg refused"));
            }
            *self.0.lock().unwrap() += 1;
            op.call(args, kwargs)
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    #[test]
    fn test_exception_handling() {
        let a = t(&[1.0, -2.0]);
        let mode = Arc::new(FailsOnNeg(Mutex::new(0)));
        let _m = push_mode(mode.clone());
        assert!(ops::neg(&a).is_err());
        // The mode popped while it ran is back, and still intercepts.
        assert_eq!(stack_len(), 1);
        assert!(Arc::ptr_eq(
            &(current_mode().unwrap() as Arc<dyn TorchDispatchMode>),
            &(mode.clone() as _)
        ));
        ops::abs(&a).unwrap();
        assert_eq!(*mode.0.lock().unwrap(), 1);
    }

    #[test]
    fn test_nesting_same_mode() {
        let a = t(&[1.0]);
        let (mode, log) = recording("same");
        let _outer = push_mode(mode.clone());
        let _inner = push_mode(mode);
        assert_eq!(stack_len(), 2);
        ops::abs(&a).unwrap();
        // The inner push handles the call popped, then the outer push of the
        // same instance handles the call it makes.
        assert_eq!(
            log.lock().unwrap().as_slice(),
            [
                "same aten.abs.default args=1 kwargs=[] depth=1",
                "same aten.abs.default args=1 kwargs=[] depth=0"
            ]
        );
    }

    #[test]
    fn test_get_cur_mode_and_test_get_mode_stack() {
        assert!(current_mode().is_none());
        assert_eq!(stack_len(), 0);
        assert_eq!(
            pop_mode_temporarily().err().unwrap().message(),
            "trying to pop from empty mode stack"
        );
        let (mode1, _) = recording("1");
        let (mode2, _) = recording("2");
        let mode1: Arc<dyn TorchDispatchMode> = mode1;
        let mode2: Arc<dyn TorchDispatchMode> = mode2;
        {
            let _g = push_mode(mode1.clone());
            assert!(Arc::ptr_eq(&current_mode().unwrap(), &mode1));
            assert_eq!(stack_len(), 1);
        }
        assert_eq!(stack_len(), 0);
        let _g1 = push_mode(mode1.clone());
        let _g2 = push_mode(mode2.clone());
        assert!(Arc::ptr_eq(&current_mode().unwrap(), &mode2));
        assert_eq!(stack_len(), 2);
        {
            let popped = pop_mode_temporarily().unwrap();
            assert!(Arc::ptr_eq(popped.mode(), &mode2));
            assert!(Arc::ptr_eq(&current_mode().unwrap(), &mode1));
        }
        assert!(Arc::ptr_eq(&current_mode().unwrap(), &mode2));
    }

    /// `ModeTensor`: its own handler must never run.
    struct ModeTensor;

    impl TorchDispatchSubclass for ModeTensor {
        fn torch_dispatch(
            &self,
            _: &Arc<dyn TorchDispatchSubclass>,
            _: &OpOverload,
            _: &[IValue],
            _: &[(&str, IValue)],
        ) -> Result<Option<Vec<IValue>>> {
            Err(Error::not_implemented("Shouldn't be here"))
        }
        fn name(&self) -> String {
            "ModeTensor".into()
        }
    }

    /// Unwraps `ModeTensor`s, calls, wraps the results in `ModeTensor`s.
    struct WrappingMode(Arc<dyn TorchDispatchSubclass>);

    impl TorchDispatchMode for WrappingMode {
        fn torch_dispatch(
            &self,
            op: &OpOverload,
            args: &[IValue],
            kwargs: &[(&str, IValue)],
        ) -> Result<Vec<IValue>> {
            let unwrap = |v: &IValue| match v {
                IValue::Tensor(t) => match subclass_object(t).and_then(|o| o.data::<Tensor>()) {
                    Some(elem) => IValue::Tensor(elem.base().clone()),
                    None => v.clone(),
                },
                other => other.clone(),
            };
            let args: Vec<IValue> = args.iter().map(unwrap).collect();
            op.call(&args, kwargs)?
                .into_iter()
                .map(|r| match r {
                    IValue::Tensor(t) => {
                        let elem = Tensor::from_base(t.clone());
                        make_wrapper_subclass(&t, Arc::clone(&self.0), elem).map(IValue::Tensor)
                    }
                    other => Ok(other),
                })
                .collect()
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    /// Forwards every call.
    struct BasicMode;

    impl TorchDispatchMode for BasicMode {
        fn torch_dispatch(
            &self,
            op: &OpOverload,
            args: &[IValue],
            kwargs: &[(&str, IValue)],
        ) -> Result<Vec<IValue>> {
            op.call(args, kwargs)
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    #[test]
    fn test_make_subclass_with_modes() {
        let x = t(&[4.0]);
        let class: Arc<dyn TorchDispatchSubclass> = Arc::new(ModeTensor);
        let is_mode_tensor = |t: &Tensor| {
            subclass_object(t.base())
                .and_then(|o| o.data::<Tensor>())
                .cloned()
        };
        for with_basic in [false, true] {
            let _outer = push_mode(Arc::new(WrappingMode(class.clone())));
            let _inner = with_basic.then(|| push_mode(Arc::new(BasicMode)));
            let y = ops::add_tensor(&x, &x).unwrap();
            let z = ops::add_tensor(&y, &y).unwrap();
            assert!(is_mode_tensor(&y).is_some() && is_mode_tensor(&z).is_some());
            assert_eq!(
                is_mode_tensor(&z).unwrap().to_vec::<f32>().unwrap(),
                vec![16.0]
            );
        }
        // Without the mode, the subclass's own handler runs.
        let w = Tensor::from_base(make_wrapper_subclass(x.base(), class, x.clone()).unwrap());
        assert_eq!(ops::neg(&w).unwrap_err().message(), "Shouldn't be here");
    }
}
