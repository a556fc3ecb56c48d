//! Ports of PyTorch's `test/test_dispatch.py`: every registration order and
//! every deregistration order of a set of registrations gives the same state
//! and table for the same active registrations, the final dumps match
//! PyTorch's text, errors leave no trace, and removing everything makes the
//! operator vanish.

use std::collections::HashMap;

use aten_boxing::schema::OperatorName;
use aten_dispatch::{
    AliasAnalysisKind, CppFunction, Dispatcher, Library, LibraryKind, RegistrationHandle,
};
use c10_core::{DispatchKey, Result, TensorBase};

fn impl_t_t(t: &TensorBase) -> Result<TensorBase> {
    Ok(t.clone())
}

/// One registration of the harness (`m.def_`, `m.impl_t_t`, ...).
type Op = Box<dyn Fn(&Dispatcher) -> Result<Library>>;

fn lib(d: &Dispatcher, key: Option<DispatchKey>) -> Result<Library> {
    // A fresh FRAGMENT block per registration, like the Python harness; its
    // location is /dev/null:0.
    Library::with_dispatcher(d, LibraryKind::Fragment, "test", key, "/dev/null", 0)
}

fn def_(schema: &'static str) -> Op {
    Box::new(move |d| {
        let mut m = lib(d, None)?;
        m.def(schema)?;
        Ok(m)
    })
}

fn def_alias(schema: &'static str, alias: Option<AliasAnalysisKind>) -> Op {
    Box::new(move |d| {
        let mut m = lib(d, None)?;
        m.def_with(schema, alias, Vec::new())?;
        Ok(m)
    })
}

fn def_name_t_t(name: &'static str) -> Op {
    Box::new(move |d| {
        let mut m = lib(d, None)?;
        m.def_fn(
            name,
            CppFunction::from_unboxed(impl_t_t).debug("default_def_name_t_t"),
        )?;
        Ok(m)
    })
}

fn impl_t_t_at(name: &'static str, key: Option<DispatchKey>, debug: &'static str) -> Op {
    Box::new(move |d| {
        let mut m = lib(d, None)?;
        let f = CppFunction::from_unboxed(impl_t_t).debug(debug);
        m.impl_(name, if let Some(k) = key { f.dispatch(k) } else { f })?;
        Ok(m)
    })
}

/// The in-tree fallbacks PyTorch 2.15 registers for every operator
/// (`torch_global_fallbacks.json`), shown masked as the Python tests do.
fn framework_fallbacks(d: &Dispatcher) -> Vec<RegistrationHandle> {
    let data = include_str!("../../conformance/data/torch_global_fallbacks.json");
    let list: Vec<(String, bool)> = data
        .split('{')
        .skip(1)
        .filter_map(|chunk| {
            let key = chunk
                .split("\"key\": \"")
                .nth(1)?
                .split('"')
                .next()?
                .to_string();
            let fallthrough = chunk.contains("\"fallthrough\": true");
            Some((key, fallthrough))
        })
        .collect();
    assert!(list.len() > 30);
    list.into_iter()
        .map(|(key, fallthrough)| {
            let kernel = if fallthrough {
                aten_boxing::KernelFunction::make_fallthrough()
            } else {
                aten_boxing::KernelFunction::make_from_boxed_function(|_, _, _| Ok(()))
            };
            d.register_fallback(
                key.parse().unwrap(),
                kernel,
                "registered in pytorch framework",
            )
            .unwrap()
        })
        .collect()
}

const CHECKED_KEYS: [&str; 8] = [
    "Undefined",
    "CPU",
    "CUDA",
    "XLA",
    "AutogradOther",
    "AutogradCPU",
    "AutogradCUDA",
    "AutogradXLA",
];

/// `extract_dispatch_table_with_keys`.
fn extract(table: &str, keys: &[&str]) -> String {
    let mut out = String::new();
    for k in keys {
        for line in table.lines() {
            if line.starts_with(&format!("{k}:")) {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    fn go(prefix: &mut Vec<usize>, rest: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if rest.is_empty() {
            out.push(prefix.clone());
            return;
        }
        for i in 0..rest.len() {
            let x = rest.remove(i);
            prefix.push(x);
            go(prefix, rest, out);
            prefix.pop();
            rest.insert(i, x);
        }
    }
    let mut out = Vec::new();
    go(&mut Vec::new(), &mut (0..n).collect(), &mut out);
    out
}

struct Outcome {
    state: String,
    table: String,
}

/// `commute`: every constructor order and every destructor order; after
/// each step the invariants hold and the dumps depend only on the set of
/// active registrations. Returns the final state with everything active.
fn commute(ops: &[Op], ctor_orders: Option<Vec<Vec<usize>>>) -> Outcome {
    let name = OperatorName::parse("test::foo").unwrap();
    let mut seen: HashMap<u32, (String, String)> = HashMap::new();
    let mut check = |d: &Dispatcher, active: u32| {
        d.check_all_invariants().unwrap();
        let (state, table) = match d.find_op(&name) {
            Some(op) => (op.dump_state(), op.dump_computed_table()),
            None => (String::new(), String::new()),
        };
        if active == 0 {
            assert_eq!(state, "", "the operator must vanish");
        }
        let entry = seen
            .entry(active)
            .or_insert_with(|| (state.clone(), table.clone()));
        assert_eq!(entry.0, state, "state differs for active set {active:b}");
        assert_eq!(entry.1, table, "table differs for active set {active:b}");
    };
    let ctor_orders = ctor_orders.unwrap_or_else(|| permutations(ops.len()));
    let dtor_orders = permutations(ops.len());
    for ctor in &ctor_orders {
        for dtor in &dtor_orders {
            let d = Dispatcher::new();
            let _fallbacks = framework_fallbacks(&d);
            let mut libs: Vec<Option<Library>> = (0..ops.len()).map(|_| None).collect();
            let mut active = 0u32;
            check(&d, active);
            for &i in ctor {
                libs[i] = Some(ops[i](&d).unwrap());
                active |= 1 << i;
                check(&d, active);
            }
            for &i in dtor {
                libs[i] = None;
                active &= !(1 << i);
                check(&d, active);
            }
        }
    }
    let (state, table) = seen[&((1u32 << ops.len()) - 1)].clone();
    Outcome { state, table }
}

/// Registers `ops` in order and returns the first error, checking that the
/// failed registration left the state as it was.
fn expect_raises(ops: &[Op]) -> String {
    let name = OperatorName::parse("test::foo").unwrap();
    let d = Dispatcher::new();
    let mut libs = Vec::new();
    for op in ops {
        let before = d
            .find_op(&name)
            .map(|o| (o.dump_state(), o.dump_computed_table()));
        match op(&d) {
            Ok(l) => libs.push(l),
            Err(e) => {
                let after = d
                    .find_op(&name)
                    .map(|o| (o.dump_state(), o.dump_computed_table()));
                assert_eq!(before, after, "a failed registration changed the state");
                d.check_all_invariants().unwrap();
                return e.to_string();
            }
        }
    }
    panic!("expected an error");
}

fn k(name: &str) -> Option<DispatchKey> {
    Some(name.parse().unwrap())
}

#[test]
fn test_def() {
    let r = commute(
        &[
            def_("foo(Tensor x) -> Tensor"),
            impl_t_t_at("foo", None, "impl_t_t"),
            impl_t_t_at("foo", k("CPU"), "impl_t_t"),
            impl_t_t_at("foo", k("Autograd"), "impl_t_t"),
            impl_t_t_at("foo", k("AutogradCPU"), "impl_t_t"),
        ],
        None,
    );
    assert_eq!(
        r.state,
        "name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at /dev/null:0
alias analysis kind: FROM_SCHEMA
CPU: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
AutogradCPU: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
Autograd[alias]: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
CompositeImplicitAutograd[alias]: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
"
    );
}

#[test]
fn test_def_impl_schema_mismatch() {
    let expected = "Inferred operator schema for a C++ kernel function doesn't match the expected function schema.
  operator: test::foo
  expected schema: test::foo(Tensor x, Tensor y) -> Tensor
    registered at /dev/null:0
  inferred schema: (Tensor _0) -> Tensor _0
    impl_t_t
  reason: The number of arguments is different. 2 vs 1.";
    assert_eq!(
        expect_raises(&[
            def_("foo(Tensor x, Tensor y) -> Tensor"),
            impl_t_t_at("foo", None, "impl_t_t"),
        ]),
        expected
    );
    assert_eq!(
        expect_raises(&[
            impl_t_t_at("foo", None, "impl_t_t"),
            def_("foo(Tensor x, Tensor y) -> Tensor"),
        ]),
        expected
    );
}

#[test]
fn test_def_with_inference() {
    let r = commute(
        &[
            def_name_t_t("foo"),
            impl_t_t_at("foo", k("CPU"), "impl_t_t"),
            impl_t_t_at("foo", k("Autograd"), "impl_t_t"),
            impl_t_t_at("foo", k("AutogradCPU"), "impl_t_t"),
        ],
        None,
    );
    assert_eq!(
        r.state,
        "name: test::foo
schema: test::foo(Tensor _0) -> Tensor _0
debug: registered at /dev/null:0
alias analysis kind: CONSERVATIVE
CPU: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
AutogradCPU: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
Autograd[alias]: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
CompositeImplicitAutograd[alias]: default_def_name_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
"
    );
}

#[test]
fn test_def_only_and_impl_only() {
    let r = commute(&[def_("foo(Tensor x, Tensor y) -> Tensor")], None);
    assert_eq!(
        r.state,
        "name: test::foo
schema: test::foo(Tensor x, Tensor y) -> Tensor
debug: registered at /dev/null:0
alias analysis kind: FROM_SCHEMA
"
    );
    let r = commute(
        &[
            impl_t_t_at("foo", None, "impl_t_t"),
            impl_t_t_at("foo", k("CPU"), "impl_t_t"),
            impl_t_t_at("foo", k("Autograd"), "impl_t_t"),
            impl_t_t_at("foo", k("AutogradCPU"), "impl_t_t"),
        ],
        None,
    );
    assert_eq!(
        r.state,
        "name: test::foo
schema: (none)
CPU: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
AutogradCPU: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
Autograd[alias]: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
CompositeImplicitAutograd[alias]: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
"
    );
}

#[test]
fn test_computed_table() {
    let r = commute(
        &[
            def_name_t_t("foo"),
            impl_t_t_at("foo", k("CPU"), "fn_cpu"),
            impl_t_t_at("foo", k("XLA"), "fn_xla"),
            impl_t_t_at("foo", k("Autograd"), "fn_autograd"),
            impl_t_t_at("foo", k("AutogradCPU"), "fn_autogradcpu"),
        ],
        None,
    );
    assert_eq!(
        extract(&r.table, &CHECKED_KEYS),
        "Undefined: default_def_name_t_t [math kernel]
CPU: fn_cpu [kernel]
CUDA: default_def_name_t_t [math kernel]
XLA: fn_xla [kernel]
AutogradOther: default_def_name_t_t [math kernel]
AutogradCPU: fn_autogradcpu [kernel]
AutogradCUDA: default_def_name_t_t [math kernel]
AutogradXLA: fn_autograd [autograd kernel]
"
    );
}

#[test]
fn test_computed_table_with_cpu_math() {
    let r = commute(
        &[
            def_("foo(Tensor x) -> Tensor"),
            impl_t_t_at("foo", k("CPU"), "fn_cpu"),
            impl_t_t_at("foo", k("CompositeImplicitAutograd"), "fn_math"),
        ],
        None,
    );
    assert_eq!(
        extract(&r.table, &CHECKED_KEYS),
        "Undefined: fn_math [math kernel]
CPU: fn_cpu [kernel]
CUDA: fn_math [math kernel]
XLA: fn_math [math kernel]
AutogradOther: fn_math [math kernel]
AutogradCPU: registered in pytorch framework [backend fallback]
AutogradCUDA: fn_math [math kernel]
AutogradXLA: fn_math [math kernel]
"
    );
}

#[test]
fn test_computed_table_with_autograd_only() {
    let r = commute(
        &[
            def_("foo(Tensor x) -> Tensor"),
            impl_t_t_at("foo", k("Autograd"), "impl_t_t"),
        ],
        None,
    );
    assert_eq!(
        extract(&r.table, &CHECKED_KEYS),
        "AutogradOther: impl_t_t [autograd kernel]
AutogradCPU: impl_t_t [autograd kernel]
AutogradCUDA: impl_t_t [autograd kernel]
AutogradXLA: impl_t_t [autograd kernel]
"
    );
}

#[test]
fn test_computed_table_with_ambiguous_autogradother() {
    let r = commute(
        &[
            def_("foo(Tensor x) -> Tensor"),
            impl_t_t_at("foo", k("CompositeImplicitAutograd"), "fn_math"),
            impl_t_t_at("foo", k("FPGA"), "fn_fpga"),
        ],
        None,
    );
    let mut keys = CHECKED_KEYS.to_vec();
    keys.push("FPGA");
    // PyTorch 2.15 shows the AutogradOther fallback's debug on the ambiguous slot.
    assert_eq!(
        extract(&r.table, &keys),
        "Undefined: fn_math [math kernel]
CPU: fn_math [math kernel]
CUDA: fn_math [math kernel]
XLA: fn_math [math kernel]
AutogradOther: registered in pytorch framework [ambiguous autogradother]
AutogradCPU: fn_math [math kernel]
AutogradCUDA: fn_math [math kernel]
AutogradXLA: fn_math [math kernel]
FPGA: fn_fpga [kernel]
"
    );
}

#[test]
fn test_computed_table_with_cpu_autograd_math_defaultbackend() {
    let r = commute(
        &[
            def_("foo(Tensor x) -> Tensor"),
            impl_t_t_at("foo", k("CPU"), "fn_cpu"),
            impl_t_t_at("foo", k("Autograd"), "fn_autograd"),
            impl_t_t_at("foo", k("CompositeImplicitAutograd"), "fn_math"),
            impl_t_t_at("foo", k("CompositeExplicitAutograd"), "fn_defaultbackend"),
        ],
        None,
    );
    assert_eq!(
        r.state,
        "name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at /dev/null:0
alias analysis kind: FROM_SCHEMA
CPU: fn_cpu :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
Autograd[alias]: fn_autograd :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
CompositeImplicitAutograd[alias]: fn_math :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
CompositeExplicitAutograd[alias]: fn_defaultbackend :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
"
    );
    assert_eq!(
        extract(&r.table, &CHECKED_KEYS),
        "Undefined: fn_defaultbackend [default backend kernel]
CPU: fn_cpu [kernel]
CUDA: fn_defaultbackend [default backend kernel]
XLA: fn_defaultbackend [default backend kernel]
AutogradOther: fn_autograd [autograd kernel]
AutogradCPU: fn_autograd [autograd kernel]
AutogradCUDA: fn_autograd [autograd kernel]
AutogradXLA: fn_autograd [autograd kernel]
"
    );
}

#[test]
fn test_computed_table_with_cpu_defaultbackend() {
    let r = commute(
        &[
            def_("foo(Tensor x) -> Tensor"),
            impl_t_t_at("foo", k("CPU"), "fn_cpu"),
            impl_t_t_at("foo", k("CompositeExplicitAutograd"), "fn_defaultbackend"),
        ],
        None,
    );
    assert_eq!(
        extract(&r.table, &CHECKED_KEYS),
        "Undefined: fn_defaultbackend [default backend kernel]
CPU: fn_cpu [kernel]
CUDA: fn_defaultbackend [default backend kernel]
XLA: fn_defaultbackend [default backend kernel]
AutogradOther: registered in pytorch framework [backend fallback]
AutogradCPU: registered in pytorch framework [backend fallback]
AutogradCUDA: registered in pytorch framework [backend fallback]
AutogradXLA: registered in pytorch framework [backend fallback]
"
    );
}

#[test]
fn test_multiple_def_error() {
    let msg = "Tried to register an operator (test::foo(Tensor x, Tensor y) -> Tensor) with the same name and overload name multiple times. Each overload's schema should only be registered with a single call to def(). Duplicate registration: registered at /dev/null:0. Original registration: registered at /dev/null:0";
    assert_eq!(
        expect_raises(&[
            def_("foo(Tensor x, Tensor y) -> Tensor"),
            def_("foo(Tensor x, Tensor y) -> Tensor"),
        ]),
        msg
    );
    // A default alias kind does not make a second def acceptable.
    assert!(expect_raises(&[
        def_alias(
            "foo(Tensor x) -> Tensor",
            Some(AliasAnalysisKind::PureFunction)
        ),
        def_alias("foo(Tensor x) -> Tensor", None),
    ])
    .starts_with(
        "Tried to register an operator (test::foo(Tensor x) -> Tensor) with the same name"
    ));
}

#[test]
fn test_def_with_explicit_alias_and_default() {
    let r = commute(
        &[def_alias(
            "foo(Tensor x, Tensor y) -> Tensor",
            Some(AliasAnalysisKind::PureFunction),
        )],
        None,
    );
    assert!(r.state.ends_with("alias analysis kind: PURE_FUNCTION\n"));
    let r = commute(&[def_alias("foo(Tensor x) -> Tensor", None)], None);
    assert!(r
        .state
        .ends_with("alias analysis kind: CONSERVATIVE (default)\n"));
}

#[test]
fn test_overwrite_math() {
    let r = commute(
        &[
            impl_t_t_at("foo", None, "fn1"),
            impl_t_t_at("foo", None, "fn2"),
        ],
        Some(vec![vec![0, 1]]),
    );
    assert_eq!(
        r.state,
        "name: test::foo
schema: (none)
CompositeImplicitAutograd[alias]: fn2 :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
CompositeImplicitAutograd[alias] (inactive): fn1 :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
"
    );
}

#[test]
fn test_multiple_fallback() {
    let d = Dispatcher::new();
    let mut m =
        Library::with_dispatcher(&d, LibraryKind::Impl, "_", k("XLA"), "/dev/null", 0).unwrap();
    m.fallback(CppFunction::fallthrough()).unwrap();
    let err = m.fallback(CppFunction::fallthrough()).unwrap_err();
    assert_eq!(
        err.message(),
        "Tried to register multiple backend fallbacks for the same dispatch key XLA; previous registration registered at /dev/null:0, new registration registered at /dev/null:0"
    );
}

#[test]
fn test_find_dangling_impls() {
    let d = Dispatcher::new();
    assert!(d.find_dangling_impls().is_empty());
    let _m = impl_t_t_at("foo", k("CPU"), "impl")(&d).unwrap();
    let dangling = d.find_dangling_impls();
    assert_eq!(dangling.len(), 1);
    assert_eq!(dangling[0].operator_name().to_string(), "test::foo");
}

#[test]
fn library_errors() {
    let d = Dispatcher::new();
    let _a = Library::with_dispatcher(&d, LibraryKind::Def, "ns", None, "a.rs", 1).unwrap();
    let err = Library::with_dispatcher(&d, LibraryKind::Def, "ns", None, "b.rs", 2).unwrap_err();
    assert!(err
        .message()
        .starts_with("Only a single TORCH_LIBRARY can be used to register the namespace ns;"));
    assert!(err
        .message()
        .ends_with("Previous registration of TORCH_LIBRARY was registered at a.rs:1; latest registration was registered at b.rs:2"));
    drop(_a);
    // Once the first library is gone, the namespace can be claimed again.
    let mut again = Library::with_dispatcher(&d, LibraryKind::Def, "ns", None, "c.rs", 3).unwrap();
    let err = again.def("other::f(Tensor x) -> Tensor").unwrap_err();
    assert!(err
        .message()
        .starts_with("Explicitly provided namespace (other) in schema string does not match namespace of enclosing TORCH_LIBRARY block (ns)."));
    assert!(err
        .message()
        .ends_with("(Error occurred while processing TORCH_LIBRARY block at c.rs:3)"));

    let mut imp =
        Library::with_dispatcher(&d, LibraryKind::Impl, "ns", k("CPU"), "d.rs", 4).unwrap();
    assert!(imp
        .def("f(Tensor x) -> Tensor")
        .unwrap_err()
        .message()
        .starts_with(
            "def(\"f\"): Cannot define an operator inside of a TORCH_LIBRARY_IMPL block."
        ));
    let err = imp
        .impl_(
            "f",
            CppFunction::from_unboxed(impl_t_t).dispatch(DispatchKey::CUDA),
        )
        .unwrap_err();
    assert!(err.message().starts_with(
        "impl(\"ns::f\", ...): Explicitly provided dispatch key (CUDA) is inconsistent with the dispatch key of the enclosing TORCH_LIBRARY_IMPL block (CPU)."
    ));
    assert!(imp
        .fallback(CppFunction::fallthrough())
        .unwrap_err()
        .message()
        .starts_with("fallback(...): Fallback functions which apply to only a single namespace (you specified ns) are not supported."));
    let err = Library::with_dispatcher(&d, LibraryKind::Def, "_", None, "e.rs", 5).unwrap_err();
    assert!(err
        .message()
        .starts_with("TORCH_LIBRARY: cannot define TORCH_LIBRARY with the wildcard namespace _"));
    // Nothing half-registered survives the failures.
    assert!(d.all_op_names().is_empty());
}

#[test]
fn find_schema_or_throw_messages() {
    let d = Dispatcher::new();
    assert_eq!(
        d.find_schema_or_throw("test::foo", "")
            .unwrap_err()
            .message(),
        "Could not find schema for test::foo."
    );
    let _m = impl_t_t_at("foo", k("CPU"), "impl")(&d).unwrap();
    assert_eq!(
        d.find_schema_or_throw("test::foo", "").unwrap_err().message(),
        "Could not find schema for test::foo. but we found an implementation; did you forget to def() the operator?"
    );
    let _def = def_("foo(Tensor x) -> Tensor")(&d).unwrap();
    assert!(d.find_schema_or_throw("test::foo", "").is_ok());
}
