//! One step of a chain of views ([`ViewMeta`]): the view operator and its
//! arguments, with the two functions functionalization needs, the view
//! replayed on a new base value ([`ViewMeta::forward`], with the view
//! operator or its `*_copy` form) and a new value of the view written into
//! its base ([`ViewMeta::inverse`], PyTorch's `FunctionalInverses`).

use std::sync::Arc;

use aten_boxing::{IValue, Stack};
use c10_core::local_dispatch_key_set::ExcludeDispatchKeyGuard;
use c10_core::{DispatchKey, Error, Result, TensorBase};

use crate::overload::OpOverload;
use crate::root::Ops;

/// The view operators [`ViewMeta::inverse`] inverts (`ns::name`,
/// overload).
const INVERTIBLE: &[(&str, &str)] = &[
    ("aten::view", ""),
    ("aten::_unsafe_view", ""),
    ("aten::_reshape_alias", ""),
    ("aten::alias", ""),
    ("aten::t", ""),
    ("aten::transpose", "int"),
    ("aten::permute", ""),
    ("aten::unsqueeze", ""),
    ("aten::squeeze", ""),
    ("aten::squeeze", "dim"),
    ("aten::squeeze", "dims"),
    ("aten::select", "int"),
    ("aten::slice", "Tensor"),
    ("aten::as_strided", ""),
    ("aten::split", "Tensor"),
    ("aten::expand", ""),
];

/// One view of a chain.
#[derive(Clone)]
pub(crate) struct ViewMeta {
    root: Ops,
    /// The view operator (`aten.view.default`).
    op: Arc<OpOverload>,
    /// Its `*_copy` form, where one exists.
    copy_op: Option<Arc<OpOverload>>,
    /// The arguments after `self`, as the call passed them.
    args: Vec<IValue>,
    /// Which result, for operators returning several views (`split`).
    out_index: usize,
    /// Whether replays use the view operator (`reapply_views`), else its
    /// `*_copy` form.
    reapply_views: bool,
}

/// Runs `op` on a full argument stack below `Functionalize`; its returns.
pub(crate) fn call_below(op: &OpOverload, mut stack: Stack) -> Result<Stack> {
    let _below = ExcludeDispatchKeyGuard::new(DispatchKey::Functionalize);
    op.call_boxed(&mut stack)?;
    Ok(stack)
}

/// The one tensor of a call's returns.
fn single(op: &OpOverload, returns: Stack) -> Result<TensorBase> {
    match <[IValue; 1]>::try_from(returns) {
        Ok([IValue::Tensor(t)]) => Ok(t),
        _ => Err(Error::internal(format!(
            "functionalization: {op} did not return one tensor"
        ))),
    }
}

impl ViewMeta {
    /// The view `op` takes with `args` (after `self`), result `out_index`.
    pub(crate) fn new(
        root: Ops,
        op: Arc<OpOverload>,
        args: Vec<IValue>,
        out_index: usize,
        reapply_views: bool,
    ) -> ViewMeta {
        let copy_name = match op.operator_name().overload_name() {
            "" => format!("{}::{}_copy", op.namespace(), op.op_name()),
            overload => format!("{}::{}_copy.{overload}", op.namespace(), op.op_name()),
        };
        let copy_op = root.overload(&copy_name).ok();
        ViewMeta {
            root,
            op,
            copy_op,
            args,
            out_index,
            reapply_views,
        }
    }

    /// This view for result `out_index` of its operator.
    pub(crate) fn with_out_index(&self, out_index: usize) -> ViewMeta {
        ViewMeta {
            out_index,
            ..self.clone()
        }
    }

    /// The view operator as `ns::name` and its overload name.
    fn op_key(&self) -> (String, &str) {
        (
            format!("{}::{}", self.op.namespace(), self.op.op_name()),
            self.op.operator_name().overload_name(),
        )
    }

    /// Whether a write through this view can be written into its base
    /// ([`ViewMeta::inverse`] knows the operator).
    pub(crate) fn check_invertible(&self) -> Result<()> {
        let (name, overload) = self.op_key();
        if INVERTIBLE.contains(&(name.as_str(), overload)) {
            Ok(())
        } else {
            Err(Error::not_implemented(format!(
                "functionalization: writing through the view operator {} is not supported",
                self.op
            )))
        }
    }

    /// The operator replays use.
    pub(crate) fn replay_op(&self) -> &Arc<OpOverload> {
        match (&self.copy_op, self.reapply_views) {
            (Some(copy), false) => copy,
            _ => &self.op,
        }
    }

    /// The view of `base` (replayed with [`ViewMeta::replay_op`]).
    pub(crate) fn forward(&self, base: &TensorBase) -> Result<TensorBase> {
        let op = self.replay_op();
        let mut stack = Stack::with_capacity(self.args.len() + 1);
        stack.push(IValue::Tensor(base.clone()));
        stack.extend(self.args.iter().cloned());
        let returns = call_below(op, stack)?;
        match <[IValue; 1]>::try_from(returns) {
            Ok([IValue::Tensor(t)]) => Ok(t),
            Ok([IValue::TensorList(views)]) => {
                views.get(self.out_index).cloned().ok_or_else(|| {
                    Error::internal(format!(
                        "functionalization: {op} returned {} views, not view {}",
                        views.len(),
                        self.out_index
                    ))
                })
            }
            _ => Err(Error::internal(format!(
                "functionalization: {op} did not return a view"
            ))),
        }
    }

    fn aten(&self, name: &str) -> Result<Arc<OpOverload>> {
        self.root.overload(name)
    }

    /// `name(args...)`, or `name_copy(args...)` when views are not
    /// reapplied.
    fn view_or_copy(&self, name: &str, args: Vec<IValue>) -> Result<TensorBase> {
        let op = if self.reapply_views {
            self.aten(name)?
        } else {
            let (base, overload) = name.split_once('.').unwrap_or((name, ""));
            let copy = if overload.is_empty() {
                format!("{base}_copy")
            } else {
                format!("{base}_copy.{overload}")
            };
            self.aten(&copy)?
        };
        single(&op, call_below(&op, args)?)
    }

    fn arg(&self, i: usize) -> Result<IValue> {
        self.args
            .get(i)
            .cloned()
            .ok_or_else(|| Error::internal(format!("{}: missing argument {i}", self.op)))
    }

    fn arg_int(&self, i: usize) -> Result<i64> {
        self.arg(i)?.to_int()
    }

    fn arg_ints(&self, i: usize) -> Result<Vec<i64>> {
        match self.args.get(i) {
            Some(IValue::IntList(v)) => Ok(v.to_vec()),
            Some(other) => other.to_list()?.iter().map(IValue::to_int).collect(),
            None => Err(Error::internal(format!(
                "{}: missing argument {i}",
                self.op
            ))),
        }
    }

    /// `base` with `mutated` (a new value of this view of it) written in.
    pub(crate) fn inverse(&self, base: &TensorBase, mutated: &TensorBase) -> Result<TensorBase> {
        self.check_invertible()?;
        let (name, overload) = self.op_key();
        match (name.as_str(), overload) {
            ("aten::view" | "aten::_unsafe_view" | "aten::_reshape_alias", _) => self.view_or_copy(
                "aten::view",
                vec![tensor_value(mutated), int_list(&base.sizes())],
            ),
            ("aten::alias", _) => self.view_or_copy("aten::alias", vec![tensor_value(mutated)]),
            ("aten::t", _) => self.view_or_copy("aten::t", vec![tensor_value(mutated)]),
            ("aten::transpose", "int") => self.view_or_copy(
                "aten::transpose.int",
                vec![tensor_value(mutated), self.arg(0)?, self.arg(1)?],
            ),
            ("aten::permute", _) => self.inverse_permute(mutated),
            ("aten::unsqueeze", _) => self.view_or_copy(
                "aten::squeeze.dim",
                vec![tensor_value(mutated), IValue::Int(self.arg_int(0)?)],
            ),
            ("aten::squeeze", overload) => self.inverse_squeeze(overload, base, mutated),
            ("aten::select", "int") => {
                self.scatter("aten::select_scatter", base, mutated, &self.args)
            }
            ("aten::slice", "Tensor") => {
                self.scatter("aten::slice_scatter", base, mutated, &self.args)
            }
            ("aten::as_strided", _) => {
                self.scatter("aten::as_strided_scatter", base, mutated, &self.args)
            }
            ("aten::split", "Tensor") => self.inverse_split(base, mutated),
            ("aten::expand", _) => self.inverse_expand(base, mutated),
            _ => Err(Error::internal(format!(
                "functionalization: {} is listed as invertible without an inverse",
                self.op
            ))),
        }
    }

    /// `name(base, mutated, *rest)`: a `*_scatter` operator writing the
    /// view's new value into its base.
    fn scatter(
        &self,
        name: &str,
        base: &TensorBase,
        mutated: &TensorBase,
        rest: &[IValue],
    ) -> Result<TensorBase> {
        let op = self.aten(name)?;
        let mut stack = vec![tensor_value(base), tensor_value(mutated)];
        stack.extend(rest.iter().cloned());
        single(&op, call_below(&op, stack)?)
    }

    /// `permute`'s inverse: the inverse permutation.
    fn inverse_permute(&self, mutated: &TensorBase) -> Result<TensorBase> {
        let dims = self.arg_ints(0)?;
        let n = dims.len() as i64;
        let mut inverse = vec![0i64; dims.len()];
        for (i, &d) in dims.iter().enumerate() {
            let d = if d < 0 { d + n } else { d };
            let slot = usize::try_from(d)
                .ok()
                .and_then(|d| inverse.get_mut(d))
                .ok_or_else(|| {
                    Error::index_error(format!("permute: dimension {d} out of range"))
                })?;
            *slot = i as i64;
        }
        self.view_or_copy(
            "aten::permute",
            vec![tensor_value(mutated), int_list(&inverse)],
        )
    }

    /// `squeeze`'s inverse: every squeezed dimension of size one comes
    /// back, in order.
    fn inverse_squeeze(
        &self,
        overload: &str,
        base: &TensorBase,
        mutated: &TensorBase,
    ) -> Result<TensorBase> {
        let base_sizes = base.sizes();
        let dims: Vec<usize> = match overload {
            "" => (0..base_sizes.len()).collect(),
            "dim" => vec![wrap(self.arg_int(0)?, base_sizes.len())?],
            _ => {
                let mut d = self
                    .arg_ints(0)?
                    .into_iter()
                    .map(|d| wrap(d, base_sizes.len()))
                    .collect::<Result<Vec<_>>>()?;
                d.sort_unstable();
                d.dedup();
                d
            }
        };
        let mut value = mutated.clone();
        for d in dims {
            if base_sizes.get(d) == Some(&1) && value.dim() < base_sizes.len() {
                value = self.view_or_copy(
                    "aten::unsqueeze",
                    vec![tensor_value(&value), IValue::Int(d as i64)],
                )?;
            }
        }
        Ok(value)
    }

    /// `split`'s inverse for output `out_index`: its slice scattered back.
    fn inverse_split(&self, base: &TensorBase, mutated: &TensorBase) -> Result<TensorBase> {
        let split_size = self.arg_int(0)?;
        let dim = self.args.get(1).map_or(Ok(0), IValue::to_int)?;
        let d = wrap(dim, mutated.dim())?;
        let start = split_size
            .checked_mul(self.out_index as i64)
            .ok_or_else(|| Error::runtime("split: start overflows"))?;
        let length = mutated.sizes().get(d).copied().unwrap_or(0);
        let end = start
            .checked_add(length)
            .ok_or_else(|| Error::runtime("split: end overflows"))?;
        let rest = [
            IValue::Int(dim),
            IValue::Int(start),
            IValue::Int(end),
            IValue::Int(1),
        ];
        self.scatter("aten::slice_scatter", base, mutated, &rest)
    }

    /// `expand`'s inverse, `base + sum_to(mutated - base)`: only what the
    /// view's elements changed by is summed into the base.
    fn inverse_expand(&self, base: &TensorBase, mutated: &TensorBase) -> Result<TensorBase> {
        let sub = self.aten("aten::sub.Tensor")?;
        let delta = single(
            &sub,
            call_below(
                &sub,
                vec![tensor_value(mutated), tensor_value(base), IValue::Int(1)],
            )?,
        )?;
        let summed = self.sum_to(&delta, &base.sizes())?;
        let add = self.aten("aten::add.Tensor")?;
        single(
            &add,
            call_below(
                &add,
                vec![tensor_value(base), tensor_value(&summed), IValue::Int(1)],
            )?,
        )
    }

    /// `at::sum_to`: `mutated` summed over the dimensions `expand`
    /// broadcast, back to `sizes`.
    fn sum_to(&self, mutated: &TensorBase, sizes: &[i64]) -> Result<TensorBase> {
        let have = mutated.sizes();
        let leading = have
            .len()
            .checked_sub(sizes.len())
            .ok_or_else(|| Error::runtime("expand: the view has fewer dimensions than its base"))?;
        let mut dims: Vec<i64> = (0..leading as i64).collect();
        for (i, &s) in sizes.iter().enumerate() {
            if s == 1 && have[leading + i] != 1 {
                dims.push((leading + i) as i64);
            }
        }
        let mut value = mutated.clone();
        if !dims.is_empty() {
            let sum = self.aten("aten::sum.dim_IntList")?;
            let stack = vec![
                IValue::Tensor(value),
                IValue::IntList(Arc::new(dims)),
                IValue::bool(true),
                IValue::None,
            ];
            value = single(&sum, call_below(&sum, stack)?)?;
        }
        if leading > 0 {
            value = self.view_or_copy(
                "aten::view",
                vec![
                    IValue::Tensor(value),
                    IValue::IntList(Arc::new(sizes.to_vec())),
                ],
            )?;
        }
        Ok(value)
    }
}

/// A tensor argument.
fn tensor_value(t: &TensorBase) -> IValue {
    IValue::Tensor(t.clone())
}

/// An `int[]` argument.
fn int_list(v: &[i64]) -> IValue {
    IValue::IntList(Arc::new(v.to_vec()))
}

fn wrap(dim: i64, rank: usize) -> Result<usize> {
    let r = rank as i64;
    let d = if dim < 0 { dim + r } else { dim };
    if (0..r.max(1)).contains(&d) {
        Ok(d as usize)
    } else {
        Err(Error::index_error(format!(
            "Dimension out of range (expected to be in range of [{}, {}], but got {dim})",
            -r.max(1),
            r.max(1) - 1
        )))
    }
}
