//! Constant folding: the calls of a compiled graph whose operands are all
//! known before any run (the weights, buffers and constants a program
//! lifted, literal constants, and what is computed from them alone) are
//! evaluated once, when the program is loaded, and become constants. The
//! transposes of the weights of every linear layer are the common case: a
//! run then starts from the transposed view instead of making it again.
//!
//! Only what cannot change between runs is folded:
//! - operators that write none of their arguments and are not random
//!   (the `nondeterministic_seeded` tag), and only when no call of the
//!   graph writes any argument (a folded view would otherwise see, or
//!   make, writes in another order than the graph's);
//! - functions of sizes and `getitem`s of known values;
//! - never a higher-order call, nor anything read from an input the caller
//!   leaves unknown (user inputs, and buffers that the program mutates).
//!
//! A call that fails while folding is left as it was: the run reports the
//! same error in its place.

use super::{Interpreter, Step};
use aten_boxing::IValue;

impl Interpreter {
    /// Folds every call whose operands follow from `known` alone (see the
    /// module docs); `known[k]` is input `k`'s value, `None` when it is
    /// only known at run time. Returns how many calls were folded.
    pub fn fold_constants(&mut self, known: &[Option<IValue>]) -> usize {
        if known.len() != self.num_inputs || self.steps.iter().any(writes_an_argument) {
            return 0;
        }
        let mut values: Vec<Option<IValue>> = vec![None; self.steps.len()];
        let mut folded = vec![false; self.steps.len()];
        for (i, step) in self.steps.iter().enumerate() {
            values[i] = match step {
                Step::Input(k) => known[*k].clone(),
                Step::Constant(v) => Some(v.clone()),
                Step::Call { .. } | Step::Builtin { .. } | Step::GetItem { .. }
                    if foldable(step)
                        && Interpreter::step_reads(step)
                            .iter()
                            .all(|&j| values[j].is_some()) =>
                {
                    let value = self.step(i, step, &[], &values).ok();
                    folded[i] = value.is_some();
                    value
                }
                _ => None,
            };
        }
        // A folded value is kept where a step that makes a new value reads
        // it at run time; one that only other folded calls read is not
        // kept. One that a view, a `getitem`, a higher-order call or the
        // output reads is not folded at all: every run's results would
        // share its storage, and a caller writing into one would change
        // them all. Readers come after what they read, so one pass from
        // the end settles both (a value unfolded here has its own operands
        // visited later).
        let mut read_at_run = vec![false; self.steps.len()];
        for i in (0..self.steps.len()).rev() {
            if folded[i] {
                continue;
            }
            let step = &self.steps[i];
            let aliasing = match step {
                Step::Call { schema, .. } => schema.is_view_op(),
                Step::Builtin { .. } | Step::Input(_) | Step::Constant(_) => false,
                Step::HigherOrder { .. }
                | Step::GetItem { .. }
                | Step::Output(_)
                | Step::Fused(_) => true,
            };
            for j in Interpreter::step_reads(step) {
                read_at_run[j] = true;
                if aliasing && values[j].as_ref().is_some_and(holds_tensor) {
                    folded[j] = false;
                }
            }
        }
        let mut count = 0;
        for (i, value) in values.into_iter().enumerate() {
            if folded[i] {
                count += usize::from(!matches!(self.steps[i], Step::GetItem { .. }));
                let kept = if read_at_run[i] { value } else { None };
                self.steps[i] = Step::Constant(kept.unwrap_or(IValue::None));
            }
        }
        count
    }
}

/// Whether the step is a call that writes one of its arguments.
pub(super) fn writes_an_argument(step: &Step) -> bool {
    match step {
        Step::Call { schema, .. } => schema.is_mutable(),
        // A higher-order call's functions may write anything.
        Step::HigherOrder { .. } => true,
        _ => false,
    }
}

/// Whether the step gives the same value on every run of the same
/// operands.
fn foldable(step: &Step) -> bool {
    match step {
        Step::Call { op, schema, .. } => {
            !schema.is_mutable() && !op.tags().iter().any(|t| t == "nondeterministic_seeded")
        }
        Step::Builtin { .. } | Step::GetItem { .. } => true,
        _ => false,
    }
}

/// Whether a value is or holds a tensor (whose storage readers could
/// share).
fn holds_tensor(v: &IValue) -> bool {
    match v {
        IValue::Tensor(_) | IValue::TensorList(_) | IValue::OptionalTensorList(_) => true,
        IValue::Tuple(items) | IValue::GenericList(items) => items.iter().any(holds_tensor),
        _ => false,
    }
}
