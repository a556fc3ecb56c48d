//! `dispatch:` entries: which kernel serves a function under which dispatch
//! key (torchgen's `BackendMetadata`, indexed per function rather than per
//! backend).
//!
//! A YAML line may name several keys (`CPU, CUDA: add_out`); each key
//! becomes its own [`DispatchEntry`]. Keys are PyTorch's names, runtime keys
//! (`CPU`, `SparseCsrMeta`, `NestedTensorHPU`) or alias keys
//! (`CompositeImplicitAutograd`, `CompositeExplicitAutograd` ...). A kernel
//! name may carry up to three levels of namespace (`at::native::add_out`).

use c10_core::DispatchKey;

use crate::error::Location;
use crate::operator_name::is_identifier;

/// One dispatch key and the kernel registered for it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DispatchEntry {
    /// The dispatch key (a runtime key or an alias key).
    pub key: DispatchKey,
    /// The kernel's name without namespace (`add_out`).
    pub kernel: String,
    /// The kernel's namespace when the YAML gives one (`at::native`).
    pub kernel_namespace: Option<String>,
    /// Where the entry is written (for the implicit entry, the function).
    pub location: Location,
    /// Whether the entry was not written but implied: a function with no
    /// `dispatch:` that is not structured gets a `CompositeImplicitAutograd`
    /// kernel named after itself, as torchgen does.
    pub implicit: bool,
}

impl DispatchEntry {
    /// An entry.
    pub(crate) fn new(
        key: DispatchKey,
        kernel: String,
        kernel_namespace: Option<String>,
        location: Location,
        implicit: bool,
    ) -> DispatchEntry {
        DispatchEntry {
            key,
            kernel,
            kernel_namespace,
            location,
            implicit,
        }
    }
}

/// The four composite alias keys, at most one of which a function names
/// (`CompositeImplicitAutograd` may go with
/// `CompositeImplicitAutogradNestedTensor`).
pub const COMPOSITE_KEYS: [DispatchKey; 4] = [
    DispatchKey::CompositeImplicitAutograd,
    DispatchKey::CompositeImplicitAutogradNestedTensor,
    DispatchKey::CompositeExplicitAutograd,
    DispatchKey::CompositeExplicitAutogradNonFunctional,
];

/// The keys whose kernels a structured function takes from its delegate's
/// meta and impl functions, so that a `structured_delegate` function must not
/// name them (torchgen's `STRUCTURED_DISPATCH_KEYS`).
pub const STRUCTURED_DISPATCH_KEYS: [DispatchKey; 3] =
    [DispatchKey::CPU, DispatchKey::CUDA, DispatchKey::MPS];

/// The keys ufunc codegen writes kernels for (torchgen's
/// `UFUNC_DISPATCH_KEYS`): a function with `ufunc_inner_loop` must not name
/// them in `dispatch:`.
pub const UFUNC_DISPATCH_KEYS: [DispatchKey; 2] = [DispatchKey::CPU, DispatchKey::CUDA];

/// Parses one dispatch key name from a `dispatch:` line.
///
/// # Errors
///
/// An unknown name, or a key no kernel can be registered for (a per-backend
/// functionality building block like `Dense`, or `Undefined`/`CatchAll`).
pub(crate) fn parse_dispatch_key(name: &str) -> Result<DispatchKey, String> {
    let key = DispatchKey::parse(name).map_err(|_| format!("unknown dispatch key '{name}'"))?;
    if key.is_alias() || (key.is_runtime() && key != DispatchKey::Undefined) {
        Ok(key)
    } else {
        Err(format!(
            "dispatch key '{name}' cannot have kernels (use a runtime key like CPU or an alias key like CompositeExplicitAutograd)"
        ))
    }
}

/// Splits a kernel name into its namespace (up to three levels) and name.
///
/// # Errors
///
/// Not `[ns::]*name` made of identifiers, or more than three namespaces.
pub(crate) fn parse_kernel_name(text: &str) -> Result<(Option<String>, String), String> {
    let parts: Vec<&str> = text.split("::").collect();
    if !parts.iter().all(|p| is_identifier(p)) {
        return Err(format!("bad kernel name '{text}'"));
    }
    if parts.len() > 4 {
        return Err(format!(
            "kernel name '{text}' has more than 3 levels of namespace"
        ));
    }
    let (name, namespace) = parts
        .split_last()
        .map_or((text, &[][..]), |(n, ns)| (*n, ns));
    let namespace = (!namespace.is_empty()).then(|| namespace.join("::"));
    Ok((namespace, name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        assert_eq!(parse_dispatch_key("CPU"), Ok(DispatchKey::CPU));
        assert_eq!(
            parse_dispatch_key("CompositeImplicitAutograd"),
            Ok(DispatchKey::CompositeImplicitAutograd)
        );
        assert!(parse_dispatch_key("SparseCsrMeta").is_ok());
        assert_eq!(
            parse_dispatch_key("CPUU"),
            Err("unknown dispatch key 'CPUU'".to_string())
        );
        assert!(parse_dispatch_key("Dense").is_err());
        assert!(parse_dispatch_key("CatchAll").is_err());
    }

    #[test]
    fn kernel_names() {
        assert_eq!(parse_kernel_name("add_out"), Ok((None, "add_out".into())));
        assert_eq!(
            parse_kernel_name("at::native::add_out"),
            Ok((Some("at::native".into()), "add_out".into()))
        );
        assert!(parse_kernel_name("a::b::c::d::e").is_err());
        assert!(parse_kernel_name("add out").is_err());
        assert!(parse_kernel_name("").is_err());
    }
}
