//! `wrap_with_set_grad_enabled(enable_grad, f, *operands)`: runs `f` on
//! the operands with grad mode set (what `torch.export` makes of a
//! `with torch.no_grad():` block in the default export IR).

use std::sync::Arc;

use aten_boxing::IValue;
use c10_core::{AutoGradMode, DispatchKeySet, Error, Result};

use super::{HigherOrderOperator, HopArg};

/// The dense kernel: grad mode set for the length of `f`'s call.
fn wrap_dense(op: &HigherOrderOperator, _: DispatchKeySet, args: &[HopArg]) -> Result<Vec<IValue>> {
    let [enable, f, operands @ ..] = args else {
        return Err(Error::runtime(format!(
            "{} expects (enable_grad, f, *operands) but got {} arguments",
            op.name(),
            args.len()
        )));
    };
    let enable = match enable.value("enable_grad")? {
        IValue::Bool(b) => b.get(),
        other => {
            return Err(Error::type_error(format!(
                "{}: enable_grad must be a bool, got {}",
                op.name(),
                other.type_name()
            )))
        }
    };
    let f = f.function("f")?;
    let operands = operands
        .iter()
        .map(|a| a.value("an operand").cloned())
        .collect::<Result<Vec<_>>>()?;
    let _mode = AutoGradMode::new(enable);
    f(&operands)
}

pub(super) fn make() -> Arc<HigherOrderOperator> {
    let op = HigherOrderOperator::new("wrap_with_set_grad_enabled");
    super::ship(&op, Arc::new(wrap_dense));
    op
}
