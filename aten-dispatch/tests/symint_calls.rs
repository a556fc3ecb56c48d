//! PyTorch's calling convention for SymInt arguments (`KernelFunction::call`):
//! a typed call whose arguments hold SymInts goes to the kernel's SymInt
//! entry; a kernel of plain integers gets them unpacked (a symbolic
//! `SymInt` guarded on, a symbolic element of a `SymInt[]` an error); a
//! boxed kernel gets them boxed, symbolic ones as `SymInt` values.

use aten_boxing::{IValue, KernelFunction};
use aten_dispatch::{CppFunction, Dispatcher, Library, LibraryKind, RegistrationHandle};
use c10_core::sym::{GuardLog, SymValue};
use c10_core::{Device, DeviceType, DispatchKey, ScalarType, SymInt, TensorBase, TensorImpl};

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

fn framework(d: &Dispatcher) -> Vec<RegistrationHandle> {
    [
        DispatchKey::BackendSelect,
        DispatchKey::ADInplaceOrView,
        DispatchKey::Autograd,
    ]
    .into_iter()
    .map(|key| {
        d.register_fallback(key, KernelFunction::make_fallthrough(), "framework")
            .unwrap()
    })
    .collect()
}

/// `test::sym(Tensor x, SymInt n, SymInt[] sizes) -> int` with a SymInt
/// kernel on CPU (`1000` plus how many arguments were symbolic), a plain
/// one on CUDA (`n` plus the sizes) and a boxed one on Meta (`-1` per
/// symbolic value on its stack).
fn operator(d: &Dispatcher) -> Vec<Library> {
    let mut def =
        Library::with_dispatcher(d, LibraryKind::Fragment, "test", None, "symint.rs", 1).unwrap();
    def.def("sym(Tensor x, SymInt n, SymInt[] sizes) -> int")
        .unwrap();
    let imp = |key| {
        Library::with_dispatcher(d, LibraryKind::Impl, "test", Some(key), "symint.rs", 2).unwrap()
    };
    let mut cpu = imp(DispatchKey::CPU);
    cpu.impl_(
        "sym",
        CppFunction::from_unboxed(|_: &TensorBase, n: SymInt, sizes: &[SymInt]| {
            let symbolic = sizes.iter().filter(|s| s.is_symbolic()).count();
            Ok(1000 + i64::from(n.is_symbolic()) + symbolic as i64)
        }),
    )
    .unwrap();
    let mut cuda = imp(DispatchKey::CUDA);
    cuda.impl_(
        "sym",
        CppFunction::from_unboxed(|_: &TensorBase, n: i64, sizes: &[i64]| {
            Ok(n + sizes.iter().sum::<i64>())
        }),
    )
    .unwrap();
    let mut meta = imp(DispatchKey::Meta);
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
