//! `aten ops`, `aten dump OP` and `aten table OP`: what the global
//! dispatcher holds (PyTorch's `torch._C._dispatch_get_all_op_names`,
//! `_dispatch_dump` and `_dispatch_dump_table`).

use aten::boxing::schema::OperatorName;
use aten::{Error, Result};

/// Every registered operator, one per line, sorted.
pub fn ops() -> String {
    let mut out = String::new();
    for name in aten::dispatcher().all_op_names() {
        out.push_str(&name.to_string());
        out.push('\n');
    }
    out
}

fn find(op: &str) -> Result<aten::dispatch::OperatorHandle> {
    let name = OperatorName::parse(op)?;
    aten::dispatcher()
        .find_op(&name)
        .ok_or_else(|| Error::runtime(format!("no operator named {op} is registered")))
}

/// `_dispatch_dump(op)`.
pub fn dump(op: &str) -> Result<String> {
    Ok(find(op)?.dump_state())
}

/// `_dispatch_dump_table(op)`.
pub fn table(op: &str) -> Result<String> {
    Ok(find(op)?.dump_computed_table())
}
