//! The symbolic scalars over [`GuardLog`]'s hinted nodes.

use super::*;

#[test]
fn concrete_arithmetic_is_python_s_and_checked() {
    let i = SymInt::new;
    assert_eq!(i(-7).floordiv(&i(2)).unwrap(), -4);
    assert_eq!(i(7).floordiv(&i(-2)).unwrap(), -4);
    assert_eq!(i(-7).rem(&i(2)).unwrap(), 1);
    assert_eq!(i(7).rem(&i(-2)).unwrap(), -1);
    assert_eq!(i(3).pow(&i(4)).unwrap(), 81);
    assert_eq!(i(3).min(&i(-4)).unwrap(), -4);
    assert!(i(1).floordiv(&i(0)).is_err());
    assert!(i(i64::MAX).add(&i(1)).is_err());
    assert!(i(i64::MIN).floordiv(&i(-1)).is_err());
    assert!(i(2).pow(&i(-1)).is_err());
    assert_eq!(i(3).sym_lt(&i(4)).unwrap().maybe_as_bool(), Some(true));
    assert_eq!(i(1).truediv(&i(4)).unwrap().maybe_as_float(), Some(0.25));
    assert!(!i(5).is_symbolic());
    assert_eq!(i(5).expect_int().unwrap(), 5);
}

#[test]
fn symbolic_values_build_expressions_and_guard_on_hints() {
    let env = GuardLog::new();
    let s0 = env.int_symbol("s0", Some(6));
    assert!(s0.is_symbolic());
    assert_eq!(s0.maybe_as_int(), None);
    let e = s0
        .mul(&SymInt::new(2))
        .unwrap()
        .add(&SymInt::new(1))
        .unwrap();
    assert!(e.is_symbolic());
    assert_eq!(e.to_string(), "((s0) * (2)) + (1)");
    let err = e.expect_int().unwrap_err().to_string();
    assert!(
        err.contains("when unpacking SymInt, expected int but got"),
        "{err}"
    );
    // A guard reads the hint and is recorded.
    assert_eq!(e.guard_int("f.rs", 1).unwrap(), 13);
    assert_eq!(
        env.guards(),
        vec![("((s0) * (2)) + (1)".to_string(), SymValue::Int(13))]
    );
    let lt = SymInt::new(3).sym_lt(&s0).unwrap();
    assert!(lt.is_symbolic());
    assert!(lt.guard_bool("f.rs", 2).unwrap());
    assert!(lt.sym_not().unwrap().is_symbolic());
    // A constant node is read as its value.
    let c = SymInt::from_node(s0.as_node().unwrap().wrap_int(4).unwrap());
    assert!(!c.is_symbolic());
    assert_eq!(c, 4);
}

#[test]
fn an_unbacked_symbol_cannot_be_guarded_on() {
    let env = GuardLog::new();
    let u0 = env.int_symbol("u0", None);
    let err = u0.guard_int("f.rs", 9).unwrap_err().to_string();
    assert!(
        err.contains("Could not guard on data-dependent expression u0"),
        "{err}"
    );
    assert!(env.guards().is_empty());
    // Arithmetic still builds the expression.
    let e = u0.add(&SymInt::new(1)).unwrap();
    assert_eq!(e.to_string(), "(u0) + (1)");
    assert!(!e.as_node().unwrap().has_hint());
}

#[test]
fn int_arrays_must_be_concrete() {
    let env = GuardLog::new();
    let ok = as_int_array(&[SymInt::new(2), SymInt::new(3)]).unwrap();
    assert_eq!(ok, vec![2, 3]);
    let err = as_int_array(&[SymInt::new(2), env.int_symbol("s0", Some(3))]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "SymIntArrayRef expected to contain only concrete integers"
    );
}

#[test]
fn the_handles_are_small() {
    assert_eq!(std::mem::size_of::<SymNode>(), 8);
    assert_eq!(std::mem::size_of::<SymInt>(), 16);
}

#[test]
fn min_max_floats_and_booleans_mix_concrete_and_symbolic_operands() {
    let env = GuardLog::new();
    let s0 = env.int_symbol("s0", Some(7));
    let m = SymInt::new(3).max(&s0).unwrap();
    assert_eq!(m.to_string(), "Max(3, s0)");
    assert_eq!(m.guard_int("f.rs", 1).unwrap(), 7);
    assert_eq!(SymInt::new(3).min(&SymInt::new(-2)).unwrap(), -2);
    let half = s0.truediv(&SymInt::new(2)).unwrap();
    assert!(half.is_symbolic());
    assert_eq!(half.guard_float("f.rs", 2).unwrap(), 3.5);
    assert!(SymFloat::new(1.0).truediv(&SymFloat::new(0.0)).is_err());
    let big = s0.sym_gt(&SymInt::new(4)).unwrap();
    let both = SymBool::new(true).sym_and(&big).unwrap();
    assert!(both.is_symbolic());
    assert!(both.guard_bool("f.rs", 3).unwrap());
    assert_eq!(
        SymBool::new(true)
            .sym_or(&SymBool::new(false))
            .unwrap()
            .maybe_as_bool(),
        Some(true)
    );
    assert_eq!(
        SymBool::new(true)
            .sym_and(&SymBool::new(false))
            .unwrap()
            .maybe_as_bool(),
        Some(false)
    );
}
