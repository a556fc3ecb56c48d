//! `aten keyset KEY...`: explains the key set made of the given keys (or
//! backend bits such as `CPUBit`): its members in dispatch order with their
//! table slots, its highest-priority key, and which kernel slot a call on a
//! tensor with these keys would use on this thread (after the default
//! thread-local included and excluded sets are applied).

use std::fmt::Write;

use aten::c10::local_dispatch_key_set::tls_local_dispatch_key_set;
use aten::{BackendComponent, DispatchKey, DispatchKeySet, Error};

/// Parses a key or backend-bit name into its one-element set.
pub fn parse_member(name: &str) -> Result<DispatchKeySet, Error> {
    if let Ok(b) = name.parse::<BackendComponent>() {
        return Ok(DispatchKeySet::from_backend(b));
    }
    let key = DispatchKey::parse(name)?;
    if key.is_alias() {
        return Ok(aten::c10::dispatch_key_set::get_runtime_dispatch_key_set(
            key,
        ));
    }
    Ok(DispatchKeySet::from_key(key))
}

/// The report for the set made of `names`.
pub fn explain(names: &[String]) -> Result<String, Error> {
    let mut ks = DispatchKeySet::EMPTY;
    for n in names {
        ks |= parse_member(n)?;
    }
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = write_report(&mut out, ks);
    Ok(out)
}

fn write_report(out: &mut String, ks: DispatchKeySet) -> std::fmt::Result {
    writeln!(out, "keyset:           {ks}")?;
    writeln!(out, "repr:             {0} (0x{0:016x})", ks.raw_repr())?;
    writeln!(
        out,
        "highest priority: {} (table index {})",
        ks.highest_priority_type_id(),
        ks.get_dispatch_table_index_for_dispatch_key_set()
    )?;
    writeln!(
        out,
        "functionality:    {}   backend: {}",
        ks.highest_functionality_key(),
        ks.highest_backend_key()
    )?;
    let mut keys: Vec<DispatchKey> = ks.iter().collect();
    keys.reverse();
    writeln!(
        out,
        "runtime keys, in dispatch order (highest priority first):"
    )?;
    if keys.is_empty() {
        writeln!(out, "  (none: the set holds no runtime key)")?;
    }
    for k in keys {
        writeln!(
            out,
            "  {:<28} table index {}",
            k.name(),
            k.dispatch_table_index()
        )?;
    }
    let tls = tls_local_dispatch_key_set();
    let effective = (ks | tls.included) - tls.excluded;
    writeln!(
        out,
        "with this thread's included {} and excluded {} sets, a call dispatches to {} (slot {})",
        tls.included,
        tls.excluded,
        effective.highest_priority_type_id(),
        effective.get_dispatch_table_index_for_dispatch_key_set()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explains_cpu_autograd() {
        let text = explain(&["CPU".into(), "AutogradCPU".into()]).unwrap();
        assert!(text.contains("keyset:           DispatchKeySet(CPU, AutogradCPU)"));
        assert!(text.contains("highest priority: AutogradCPU"));
        assert!(text.contains("a call dispatches to AutogradCPU"));
    }

    #[test]
    fn rejects_unknown_names() {
        assert_eq!(
            explain(&["Bogus".into()]).unwrap_err().message(),
            "could not parse dispatch key: Bogus"
        );
    }
}
