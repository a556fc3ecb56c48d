//! `aten ops`, `aten dump OP` and `aten table OP`: what the global
//! dispatcher holds (PyTorch's `torch._C._dispatch_get_all_op_names`,
//! `_dispatch_dump` and `_dispatch_dump_table`); `aten ops --surface`: how
//! much of a `native_functions.yaml` is defined, and with which kernels.

use aten::boxing::schema::OperatorName;
use aten::{DispatchKey, Error, Result};

/// Every registered operator, one per line, sorted.
pub fn ops() -> String {
    let mut out = String::new();
    for name in aten::dispatcher().all_op_names() {
        out.push_str(&name.to_string());
        out.push('\n');
    }
    out
}

/// The registered operator `op` (`name.overload`); when there is none, the
/// error names the overloads registered under `op`'s name.
fn find(op: &str) -> Result<aten::dispatch::OperatorHandle> {
    let name = OperatorName::parse(op)?;
    let dispatcher = aten::dispatcher();
    if let Some(handle) = dispatcher.find_op(&name) {
        return Ok(handle);
    }
    let overloads: Vec<String> = dispatcher
        .all_op_names()
        .into_iter()
        .filter(|o| o.name() == name.name())
        .map(|o| o.to_string())
        .collect();
    let hint = match overloads.as_slice() {
        [] => String::new(),
        some => format!(
            "; its overloads are {} (name one as NAME.OVERLOAD)",
            some.join(", ")
        ),
    };
    Err(Error::runtime(format!(
        "no operator named {op} is registered{hint}"
    )))
}

/// `_dispatch_dump(op)`.
pub fn dump(op: &str) -> Result<String> {
    Ok(find(op)?.dump_state())
}

/// `_dispatch_dump_table(op)`.
pub fn table(op: &str) -> Result<String> {
    Ok(find(op)?.dump_computed_table())
}

/// The kernels an operator has: a CompositeImplicitAutograd one, and
/// (directly or through a CompositeExplicitAutograd kernel) ones that
/// serve CPU and Meta tensors.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Kernels {
    /// A CompositeImplicitAutograd kernel (a decomposition).
    pub implicit: bool,
    /// A kernel for CPU tensors (not counting the decomposition).
    pub cpu: bool,
    /// A kernel for Meta tensors (not counting the decomposition).
    pub meta: bool,
}

/// The kernels the operator `op` has, or `None` when it is not defined.
pub fn kernels(op: &OperatorName) -> Option<Kernels> {
    let handle = aten::dispatcher().find_op(op).filter(|h| h.has_schema())?;
    let has = |k| handle.has_kernel_for_dispatch_key(k);
    let explicit = has(DispatchKey::CompositeExplicitAutograd)
        || has(DispatchKey::CompositeExplicitAutogradNonFunctional);
    Some(Kernels {
        implicit: has(DispatchKey::CompositeImplicitAutograd),
        cpu: has(DispatchKey::CPU) || explicit,
        meta: has(DispatchKey::Meta) || explicit,
    })
}

/// How much of the functions of a `native_functions.yaml` (its text,
/// `label` naming it) the global dispatcher defines, and with which
/// kernels: a report, and the functions that are not defined.
pub fn surface(yaml: &str, label: &str) -> Result<(String, Vec<String>)> {
    let names: Vec<&str> = yaml
        .lines()
        .filter_map(|l| l.strip_prefix("- func: "))
        .filter_map(|f| f.split_once('(').map(|(name, _)| name.trim()))
        .collect();
    let (mut implicit, mut cpu, mut meta, mut none) = (0, 0, 0, 0);
    let mut missing = Vec::new();
    for name in &names {
        let op = OperatorName::parse(&format!("aten::{name}"))?;
        match kernels(&op) {
            None => missing.push(op.to_string()),
            Some(k) if k.implicit => implicit += 1,
            Some(k) => {
                cpu += usize::from(k.cpu);
                meta += usize::from(k.meta);
                none += usize::from(!k.cpu && !k.meta);
            }
        }
    }
    let report = format!(
        "{} functions in {label}: {} defined\n  \
         with a CompositeImplicitAutograd kernel: {implicit}\n  \
         with a CPU kernel: {cpu}\n  \
         with a Meta kernel: {meta}\n  \
         with no kernel: {none}\n",
        names.len(),
        names.len() - missing.len(),
    );
    Ok((report, missing))
}
