//! The `Functionalize` kernel of the shipped higher-order operators
//! (PyTorch's `cond_func` and its kin in `torch/_higher_order_ops`).

use std::sync::Arc;

use aten_boxing::IValue;
use c10_core::local_dispatch_key_set::{
    tls_is_dispatch_key_excluded, tls_set_dispatch_key_excluded, ExcludeDispatchKeyGuard,
};
use c10_core::{DispatchKey, DispatchKeySet, Error, Result};

use super::{GraphFn, HigherOrderOperator, HopArg};
use crate::functionalize::wrapper;
use crate::functionalize::{kernel, map_tensors, reapply_views, run_on_wrappers};

/// The `Functionalize` kernel of the shipped higher-order operators
/// (PyTorch's `cond_func` and its kin): the operator runs below
/// `Functionalize` on the up-to-date values, with each function run
/// functionalized on wrappers of what it is given (so a capture below
/// records functional subgraphs); its results are wrapped. A function that
/// writes to its inputs is refused, as PyTorch refuses it.
pub(super) fn higher_order_kernel(
    op: &HigherOrderOperator,
    keys: DispatchKeySet,
    args: &[HopArg],
) -> Result<Vec<IValue>> {
    let reapply = reapply_views();
    let name = op.name().to_string();
    let args = args
        .iter()
        .map(|a| {
            Ok(match a {
                HopArg::Value(v) => HopArg::Value(map_tensors(v, &mut kernel::unwrap_tensor)?),
                HopArg::Fn(f) => {
                    let (f, name) = (Arc::clone(f), name.clone());
                    let g: GraphFn =
                        Arc::new(move |xs: &[IValue]| run_functionalized(&f, xs, reapply, &name));
                    HopArg::Fn(g)
                }
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let results = {
        let _below = ExcludeDispatchKeyGuard::new(DispatchKey::Functionalize);
        op.redispatch(keys.remove(DispatchKey::Functionalize), &args)?
    };
    results
        .iter()
        .map(|v| map_tensors(v, &mut |t| wrapper::wrap_new(t)))
        .collect()
}

/// Re-allows `Functionalize` (the caller excluded it) until dropped.
struct Reallow(bool);

impl Drop for Reallow {
    fn drop(&mut self) {
        tls_set_dispatch_key_excluded(DispatchKey::Functionalize, self.0);
    }
}

/// Runs a higher-order operator's function functionalized on `inputs`.
fn run_functionalized(
    f: &GraphFn,
    inputs: &[IValue],
    reapply: bool,
    op_name: &str,
) -> Result<Vec<IValue>> {
    let _reallow = Reallow(tls_is_dispatch_key_excluded(DispatchKey::Functionalize));
    tls_set_dispatch_key_excluded(DispatchKey::Functionalize, false);
    run_on_wrappers(
        |wrapped| f(wrapped),
        inputs,
        reapply,
        |_, _| {
            Err(Error::runtime(format!(
            "torch.{op_name}: a function might be modifying the input! Consider cloning the input before modifying it."
        )))
        },
    )
}
