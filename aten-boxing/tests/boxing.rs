//! Boxing and unboxing: every IValue variant and kernel argument type round
//! trips, kernels of every arity are callable both ways, and the special
//! kernels behave as PyTorch's.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use aten_boxing::kernel_arg::{IValueConvert, KernelArg};
use aten_boxing::{
    infer_schema, BoxedKernel, BoxedOperator, IValue, KernelFunction, Object, Stack, StackExt,
};
use c10_core::{
    Complex64, Device, DispatchKey, DispatchKeySet, Generator, Layout, MemoryFormat, Result,
    Scalar, ScalarType, TensorBase, TensorImpl,
};

struct DummyOp;

impl BoxedOperator for DummyOp {
    fn operator_name(&self) -> String {
        "my::dummy".into()
    }
    fn redispatch_boxed(&self, _: DispatchKeySet, _: &mut Stack) -> Result<()> {
        Ok(())
    }
    fn dump_state(&self) -> String {
        "name: my::dummy".into()
    }
    fn schema(&self) -> Option<std::sync::Arc<aten_boxing::schema::FunctionSchema>> {
        None
    }
    fn tags(&self) -> Vec<String> {
        Vec::new()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn cpu_keys() -> DispatchKeySet {
    DispatchKeySet::from_key(DispatchKey::CPU)
}

fn tensor() -> TensorBase {
    TensorBase::from_impl(
        TensorImpl::new(cpu_keys(), ScalarType::Float, Device::CPU, vec![2, 3]).unwrap(),
    )
}

fn round_trip<T: IValueConvert + Clone + PartialEq + std::fmt::Debug>(v: T) {
    let back = T::from_ivalue(v.clone().into_ivalue()).unwrap();
    assert_eq!(back, v);
}

#[test]
fn owned_values_round_trip() {
    round_trip(5i64);
    round_trip(2.5f64);
    round_trip(true);
    round_trip(String::from("hi"));
    round_trip(Scalar::Int(3));
    round_trip(Scalar::Double(0.5));
    round_trip(Scalar::Bool(false));
    round_trip(Scalar::ComplexDouble(Complex64 { re: 1.0, im: -2.0 }));
    round_trip(ScalarType::BFloat16);
    round_trip(Layout::Sparse);
    round_trip(MemoryFormat::ChannelsLast);
    round_trip(Device::META);
    round_trip(Complex64 { re: 0.0, im: 1.0 });
    round_trip(vec![1i64, 2, 3]);
    round_trip(vec![1.5f64]);
    round_trip(vec![true, false]);
    round_trip([1i64, 2]);
    round_trip(Some(4i64));
    round_trip(None::<f64>);
    round_trip(Some(vec![7i64]));
    // PyTorch encodes dtypes as ints.
    assert_eq!(ScalarType::Float.into_ivalue(), IValue::Int(6));
    assert!(<[i64; 3]>::from_ivalue(IValue::IntList(Arc::new(vec![1]))).is_err());
}

#[test]
fn reference_values_round_trip() {
    let t = tensor();
    let back = TensorBase::from_ivalue(t.clone().into_ivalue()).unwrap();
    assert!(back.is_same(&t));
    let list = vec![t.clone(), tensor()];
    let back = Vec::<TensorBase>::from_ivalue(list.clone().into_ivalue()).unwrap();
    assert!(back[0].is_same(&list[0]) && back[1].is_same(&list[1]));
    let opt = vec![Some(t.clone()), None];
    let back = Vec::<Option<TensorBase>>::from_ivalue(opt.into_ivalue()).unwrap();
    assert!(back[0].as_ref().unwrap().is_same(&t) && back[1].is_none());
    let g = Generator::new(Device::CPU, 42);
    let back = Generator::from_ivalue(g.clone().into_ivalue()).unwrap();
    assert!(back.is_same(&g));
    let obj = IValue::Object(Arc::new(Object::new(
        "__torch__.torch.classes.my.Foo",
        7u32,
    )));
    let IValue::Object(o) = obj.clone() else {
        unreachable!()
    };
    assert_eq!(o.downcast_ref::<u32>(), Some(&7));
    assert!(obj.is(&obj.clone()));
    let dict = IValue::Dict(Arc::new(vec![(IValue::Int(1), IValue::double(2.0))]));
    assert_eq!(dict.to_string(), "{1: 2.}");
    let tuple = IValue::Tuple(Arc::new(vec![IValue::Int(1), IValue::None]));
    assert_eq!(tuple.clone(), tuple);
}

#[test]
fn borrowed_argument_types_unbox() {
    let t = tensor();
    let h = <&TensorBase>::holder_from_ivalue(IValue::Tensor(t.clone())).unwrap();
    assert!(<&TensorBase>::borrow(&h).is_same(&t));
    let h = <&[i64]>::holder_from_ivalue(IValue::IntList(Arc::new(vec![1, 2]))).unwrap();
    assert_eq!(<&[i64]>::borrow(&h), &[1, 2]);
    let h = <&str>::holder_from_ivalue(IValue::String(Arc::new("x".into()))).unwrap();
    assert_eq!(<&str>::borrow(&h), "x");
    let h = <Option<&TensorBase>>::holder_from_ivalue(IValue::None).unwrap();
    assert!(<Option<&TensorBase>>::borrow(&h).is_none());
    let h = <&[TensorBase]>::holder_from_ivalue(vec![t.clone()].into_ivalue()).unwrap();
    assert!(<&[TensorBase]>::borrow(&h)[0].is_same(&t));
    let err = <&str>::holder_from_ivalue(IValue::double(1.0)).unwrap_err();
    assert_eq!(
        err.message(),
        "Expected a value of type 'str' but instead found type 'float'."
    );
}

fn add(a: i64, b: i64) -> Result<i64> {
    Ok(a + b)
}

fn first_plus_len(
    t: &TensorBase,
    sizes: &[i64],
    name: &str,
    maybe: Option<&TensorBase>,
) -> Result<TensorBase> {
    assert_eq!(sizes.len() + name.len(), 3);
    Ok(maybe.unwrap_or(t).clone())
}

#[test]
fn unboxed_kernels_are_callable_both_ways() {
    let k = KernelFunction::make_from_unboxed_function(add);
    assert_eq!(k.dump_state(), "boxed unboxed ");
    let mut stack: Stack = vec![IValue::Int(3), IValue::Int(4)];
    k.call_boxed(&DummyOp, cpu_keys(), &mut stack).unwrap();
    assert_eq!(stack, vec![IValue::Int(7)]);
    let r: i64 = k.call(&DummyOp, cpu_keys(), (3i64, 4i64)).unwrap();
    assert_eq!(r, 7);
    assert_eq!(k.inferred_schema(), Some("(int _0, int _1) -> int _0"));

    let k = KernelFunction::make_from_unboxed_function(first_plus_len);
    assert_eq!(
        k.inferred_schema(),
        Some("(Tensor _0, int[] _1, str _2, Tensor? _3) -> Tensor _0")
    );
    let t = tensor();
    let sizes = [1i64, 2];
    let r: TensorBase = k
        .call(
            &DummyOp,
            cpu_keys(),
            (&t, &sizes[..], "x", None::<&TensorBase>),
        )
        .unwrap();
    assert!(r.is_same(&t));
    let mut stack: Stack = vec![
        IValue::Tensor(t.clone()),
        IValue::IntList(Arc::new(vec![1, 2])),
        IValue::String(Arc::new("x".into())),
        IValue::None,
    ];
    k.call_boxed(&DummyOp, cpu_keys(), &mut stack).unwrap();
    assert_eq!(stack.len(), 1);
    assert!(stack[0].to_tensor().unwrap().is_same(&t));
}

#[test]
fn wrong_signature_is_an_error_not_ub() {
    let k = KernelFunction::make_from_unboxed_function(add);
    let err = k
        .call::<(f64, i64), i64>(&DummyOp, cpu_keys(), (1.0, 2))
        .unwrap_err();
    assert!(err
        .message()
        .contains("Tried to access or call an operator with a wrong signature."));
    assert!(k
        .call::<(i64, i64), f64>(&DummyOp, cpu_keys(), (1, 2))
        .is_err());
}

#[test]
fn closures_capture_state_and_may_take_the_key_set() {
    let calls = Arc::new(AtomicI64::new(0));
    let seen = Arc::clone(&calls);
    let k = KernelFunction::make_from_unboxed_closure(move |keys: DispatchKeySet, x: i64| {
        seen.fetch_add(1, Ordering::SeqCst);
        Ok(if keys.has(DispatchKey::CPU) { x } else { -x })
    });
    let r: i64 = k.call(&DummyOp, cpu_keys(), (5i64,)).unwrap();
    assert_eq!(r, 5);
    let mut stack: Stack = vec![IValue::Int(5)];
    k.call_boxed(&DummyOp, DispatchKeySet::EMPTY, &mut stack)
        .unwrap();
    assert_eq!(stack, vec![IValue::Int(-5)]);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(k.inferred_schema(), Some("(int _0) -> int _0"));
}

#[test]
fn boxed_kernels_are_callable_typed() {
    // (a, b) -> (a + b, a * b)
    let k = KernelFunction::make_from_boxed_function(|_, _, stack| {
        let b = stack.pop_value()?.to_int()?;
        let a = stack.pop_value()?.to_int()?;
        stack.push(IValue::Int(a + b));
        stack.push(IValue::Int(a * b));
        Ok(())
    });
    assert_eq!(k.dump_state(), "boxed ");
    assert!(!k.has_unboxed());
    let (s, p): (i64, i64) = k.call(&DummyOp, cpu_keys(), (3i64, 4i64)).unwrap();
    assert_eq!((s, p), (7, 12));
    let mut stack: Stack = vec![IValue::Int(3), IValue::Int(4)];
    k.call_boxed(&DummyOp, cpu_keys(), &mut stack).unwrap();
    assert_eq!(stack, vec![IValue::Int(7), IValue::Int(12)]);
    // The wrong number of returns is an error, not a misread.
    assert!(k
        .call::<(i64, i64), i64>(&DummyOp, cpu_keys(), (3, 4))
        .is_err());
}

#[test]
fn out_kernels_hand_back_the_callers_tensor() {
    // (Tensor(a!) out, Scalar) -> Tensor(a!), written boxed.
    let k = KernelFunction::make_from_boxed_function(|_, _, stack| {
        let _scalar = stack.pop_value()?;
        let out = stack.pop_value()?;
        stack.push(out);
        Ok(())
    });
    let t = tensor();
    let r: TensorBase = k.call(&DummyOp, cpu_keys(), (&t, Scalar::Int(1))).unwrap();
    assert!(r.is_same(&t));
    // Two outs: (Scalar, Scalar, Tensor(a!), Tensor(b!)) -> (Tensor(a!), Tensor(b!)).
    let k = KernelFunction::make_from_boxed_function(|_, _, stack| {
        let mut args = stack.pop_n(4)?;
        let b = args.pop().unwrap_or_default();
        let a = args.pop().unwrap_or_default();
        stack.push(a);
        stack.push(b);
        Ok(())
    });
    let (t1, t2) = (tensor(), tensor());
    let (r1, r2): (TensorBase, TensorBase) = k
        .call(
            &DummyOp,
            cpu_keys(),
            (Scalar::Int(1), Scalar::Int(2), &t1, &t2),
        )
        .unwrap();
    assert!(r1.is_same(&t1) && r2.is_same(&t2));
}

#[test]
fn special_kernels() {
    assert!(!KernelFunction::default().is_valid());
    let ft = KernelFunction::make_fallthrough();
    assert!(ft.is_fallthrough());
    assert_eq!(ft.dump_state(), "fallthrough boxed ");
    let err = ft
        .call_boxed(&DummyOp, cpu_keys(), &mut Stack::new())
        .unwrap_err();
    assert!(err.message().starts_with("fallthrough_kernel was executed"));
    let amb = KernelFunction::make_ambiguous_autograd_other();
    let err = amb
        .call_boxed(&DummyOp, cpu_keys(), &mut Stack::new())
        .unwrap_err();
    assert!(err.message().starts_with(
        "my::dummy has kernels registered to both CompositeImplicitAutograd and a backend mapped to AutogradOther."
    ));
    assert!(err
        .message()
        .contains("Canonical state\n~~~~~~~~~~~\nname: my::dummy"));
    let named = KernelFunction::make_named_not_supported();
    let err = named
        .call_boxed(&DummyOp, cpu_keys(), &mut Stack::new())
        .unwrap_err();
    assert!(err
        .message()
        .starts_with("my::dummy is not yet supported with named tensors."));
    let missing = KernelFunction::default();
    assert!(missing
        .call_boxed(&DummyOp, cpu_keys(), &mut Stack::new())
        .is_err());
}

#[test]
fn bad_stacks_are_errors() {
    let k = KernelFunction::make_from_unboxed_function(add);
    let mut stack: Stack = vec![IValue::Int(1)];
    assert!(k.call_boxed(&DummyOp, cpu_keys(), &mut stack).is_err());
    let mut stack: Stack = vec![IValue::Int(1), IValue::double(2.0)];
    let err = k.call_boxed(&DummyOp, cpu_keys(), &mut stack).unwrap_err();
    assert_eq!(
        err.message(),
        "Expected a value of type 'int' but instead found type 'float'."
    );
}

macro_rules! arity_test {
    ($name:ident, $n:expr, ($($a:ident),*)) => {
        #[test]
        #[allow(unused_mut, unused_variables, clippy::reversed_empty_ranges)]
        fn $name() {
            let k = KernelFunction::make_from_unboxed_function(|$($a: i64),*| Ok(0i64 $(+ $a)*));
            let expected: i64 = (1..=$n).sum();
            let mut stack: Stack = (1..=$n).map(IValue::Int).collect();
            k.call_boxed(&DummyOp, cpu_keys(), &mut stack).unwrap();
            assert_eq!(stack, vec![IValue::Int(expected)]);
            let mut next = 0i64;
            $(let $a = { next += 1; next };)*
            let r: i64 = k.call(&DummyOp, cpu_keys(), ($($a,)*)).unwrap();
            assert_eq!(r, expected);
            // And the other bridge: a boxed kernel of this arity called typed.
            let b = KernelFunction::make_from_boxed_function(|_, _, stack| {
                let args = stack.pop_n($n)?;
                let mut sum = 0;
                for a in args {
                    sum += a.to_int()?;
                }
                stack.push(IValue::Int(sum));
                Ok(())
            });
            let r: i64 = b.call(&DummyOp, cpu_keys(), ($($a,)*)).unwrap();
            assert_eq!(r, expected);
        }
    };
}

arity_test!(arity_0, 0, ());
arity_test!(arity_1, 1, (a));
arity_test!(arity_2, 2, (a, b));
arity_test!(arity_3, 3, (a, b, c));
arity_test!(arity_4, 4, (a, b, c, d));
arity_test!(arity_5, 5, (a, b, c, d, e));
arity_test!(arity_6, 6, (a, b, c, d, e, f));
arity_test!(arity_7, 7, (a, b, c, d, e, f, g));
arity_test!(arity_8, 8, (a, b, c, d, e, f, g, h));
arity_test!(arity_9, 9, (a, b, c, d, e, f, g, h, i));
arity_test!(arity_10, 10, (a, b, c, d, e, f, g, h, i, j));
arity_test!(arity_11, 11, (a, b, c, d, e, f, g, h, i, j, k_));
arity_test!(arity_12, 12, (a, b, c, d, e, f, g, h, i, j, k_, l));

#[test]
fn inferred_schemas() {
    assert_eq!(infer_schema::<(), ()>(), "() -> ()");
    assert_eq!(
        infer_schema::<(&TensorBase, Option<i64>), (TensorBase, TensorBase)>(),
        "(Tensor _0, int? _1) -> (Tensor _0, Tensor _1)"
    );
    assert_eq!(
        infer_schema::<([i64; 2], Vec<Option<TensorBase>>), ()>(),
        "(int[2] _0, Tensor?[] _1) -> ()"
    );
}

#[test]
fn the_boxed_half_of_a_kernel_is_a_boxed_kernel() {
    // A boxed kernel on its own, and as a KernelFunction.
    let doubled = BoxedKernel::make_from_function(|_, _, stack: &mut Stack| {
        let x = stack.pop_value()?.to_int()?;
        stack.push(IValue::Int(2 * x));
        Ok(())
    });
    let mut stack: Stack = vec![IValue::Int(21)];
    doubled
        .call_boxed(&DummyOp, cpu_keys(), &mut stack)
        .unwrap();
    assert_eq!(stack, [IValue::Int(42)]);
    let kernel = KernelFunction::from(doubled.clone());
    assert!(kernel.boxed_kernel().unwrap().same_as(&doubled));
    assert!(!kernel.has_unboxed());
    assert_eq!(
        kernel
            .call::<(i64,), i64>(&DummyOp, cpu_keys(), (4,))
            .unwrap(),
        8
    );

    // An unboxed kernel's generated wrapper is its boxed half.
    let unboxed = KernelFunction::make_from_unboxed_closure(|x: i64| Ok(x + 1));
    let boxed = unboxed.boxed_kernel().unwrap();
    let mut stack: Stack = vec![IValue::Int(1)];
    boxed.call_boxed(&DummyOp, cpu_keys(), &mut stack).unwrap();
    assert_eq!(stack, [IValue::Int(2)]);
    assert!(!boxed.is_fallthrough());

    // The special kernels are boxed kernels too.
    assert!(BoxedKernel::make_fallthrough().is_fallthrough());
    assert!(KernelFunction::make_fallthrough()
        .boxed_kernel()
        .is_some_and(BoxedKernel::is_fallthrough));
    assert!(BoxedKernel::make_ambiguous_autograd_other().is_ambiguous_autograd_other());
    assert!(KernelFunction::default().boxed_kernel().is_none());
}
