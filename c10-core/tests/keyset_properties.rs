//! Property tests of the key-set algebra on representable sets.

use c10_core::{BackendComponent, DispatchKey, DispatchKeySet};
use proptest::prelude::*;

/// Any set built from runtime keys, functionality keys and backend bits.
fn any_keyset() -> impl Strategy<Value = DispatchKeySet> {
    let keys: Vec<DispatchKey> = DispatchKey::all()
        .filter(|k| (k.is_runtime() || k.is_functionality()) && *k != DispatchKey::Undefined)
        .collect();
    let backends: Vec<BackendComponent> = BackendComponent::backends().collect();
    (
        proptest::collection::vec(proptest::sample::select(keys), 0..8),
        proptest::collection::vec(proptest::sample::select(backends), 0..3),
    )
        .prop_map(|(ks, bs)| DispatchKeySet::from_keys(&ks) | DispatchKeySet::from_backends(&bs))
}

fn runtime_key() -> impl Strategy<Value = DispatchKey> {
    proptest::sample::select(DispatchKeySet::FULL.iter().collect::<Vec<_>>())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn union_and_intersection_laws(a in any_keyset(), b in any_keyset(), c in any_keyset()) {
        prop_assert_eq!(a | b, b | a);
        prop_assert_eq!(a & b, b & a);
        prop_assert_eq!((a | b) | c, a | (b | c));
        prop_assert_eq!((a & b) & c, a & (b & c));
        prop_assert_eq!(a & (b | c), (a & b) | (a & c));
        prop_assert_eq!(a | (a & b), a);
        prop_assert!((a | b).has_all(a));
        prop_assert!(a.has_all(a & b));
    }

    #[test]
    fn difference_keeps_backend_bits(a in any_keyset(), b in any_keyset()) {
        let d = a - b;
        // Functionality bits: exactly a's minus b's. Backend bits: a's, untouched.
        let mask = c10_core::FULL_BACKEND_MASK;
        prop_assert_eq!(d.raw_repr() & !mask, a.raw_repr() & !mask & !b.raw_repr());
        prop_assert_eq!(d.raw_repr() & mask, a.raw_repr() & mask);
        prop_assert_eq!(a - a, DispatchKeySet::from_raw_repr(a.raw_repr() & mask));
        prop_assert_eq!((a - b) | (a & b), a);
    }

    #[test]
    fn iteration_is_successive_highest_priority_removal(a in any_keyset()) {
        let mut expected = Vec::new();
        let mut rest = a;
        loop {
            let k = rest.highest_priority_type_id();
            if k == DispatchKey::Undefined {
                break;
            }
            // A per-backend functionality without any backend bit names no
            // runtime key (`StartOfDenseBackends` ...): iteration skips it.
            if k.is_runtime() {
                expected.push(k);
            }
            rest = remove_runtime_key(rest, a, k);
        }
        expected.reverse();
        prop_assert_eq!(a.iter().collect::<Vec<_>>(), expected);
    }

    #[test]
    fn every_iterated_key_is_a_member(a in any_keyset()) {
        for k in a {
            prop_assert!(a.has(k));
            prop_assert!(k.is_runtime());
        }
        let rebuilt: DispatchKeySet = a.iter().collect();
        prop_assert!(a.has_all(rebuilt));
    }

    #[test]
    fn add_then_has(a in any_keyset(), k in runtime_key()) {
        prop_assert!(a.add(k).has(k));
        prop_assert!(!a.remove(k).has(k) || k == DispatchKey::Undefined);
    }

    #[test]
    fn full_after_holds_exactly_the_lower_keys(k in runtime_key(), probe in runtime_key()) {
        let after = DispatchKeySet::full_after(k);
        let below = probe.to_functionality_key() < k.to_functionality_key();
        prop_assert_eq!(after.has(probe), below || probe == DispatchKey::PythonDispatcher);
    }

    #[test]
    fn table_index_is_the_highest_keys_slot(a in any_keyset()) {
        prop_assert_eq!(
            a.get_dispatch_table_index_for_dispatch_key_set(),
            a.highest_priority_type_id().dispatch_table_index()
        );
    }
}

/// The state of a walk from the highest-priority key down after visiting `k`:
/// a per-backend key drops its backend bit while lower backends remain for
/// its functionality; the last one drops the functionality and brings the
/// set's backends back for the functionalities below.
fn remove_runtime_key(
    rest: DispatchKeySet,
    orig: DispatchKeySet,
    k: DispatchKey,
) -> DispatchKeySet {
    let mask = c10_core::FULL_BACKEND_MASK;
    let f = k.to_functionality_key();
    if !f.is_per_backend_functionality() || !k.is_runtime() {
        return rest.remove(f);
    }
    let bit = DispatchKeySet::from_backend(k.to_backend_component()).raw_repr();
    let lower_backends = rest.raw_repr() & mask & (bit - 1);
    if lower_backends != 0 {
        DispatchKeySet::from_raw_repr((rest.raw_repr() & !mask) | lower_backends)
    } else {
        DispatchKeySet::from_raw_repr(
            (rest.remove(f).raw_repr() & !mask) | (orig.raw_repr() & mask),
        )
    }
}
