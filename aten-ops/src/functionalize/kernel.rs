//! The `Functionalize` key's kernel, one boxed fallback serving every
//! operator by the shape of its schema (what PyTorch generates per operator
//! in `RegisterFunctionalization.cpp`, and its `functionalizeFallback`):
//!
//! - an operator that writes to arguments (in place or `out=`) runs its
//!   functional variant on the wrappers' values, and each written wrapper
//!   takes its new value (all checked before any is recorded:
//!   [`FunctionalTensor::check_write`], then
//!   [`FunctionalTensor::commit_write`]) and is brought up to date; the operator's own checks are run first on Meta tensors, so
//!   `x.add_(y)` still refuses what only `add(x, y)` would accept; a value
//!   of another dtype is cast to the written tensor's;
//! - a `CompositeImplicitAutograd` operator decomposes;
//! - a view operator runs on the value (or its `*_copy` form), and the
//!   result is a wrapper sharing the input's storage, with the view added to
//!   its chain;
//! - any other operator runs on the values, and its tensors are wrapped
//!   when an input was a wrapper or no tensor came in (a factory).
//!
//! Inputs are brought up to date before they are read (a view's input
//! excepted: its view is as up to date as it is). Calls below are made
//! with `Functionalize` excluded, so the dispatch modes below see the
//! functional program.

use std::sync::Arc;

use aten_boxing::schema::FunctionSchema;
use aten_boxing::KernelFunction;
use aten_boxing::{BoxedOperator, IValue, Stack};
use c10_core::local_dispatch_key_set::ExcludeDispatchKeyGuard;
use c10_core::{
    Device, DispatchKey, DispatchKeySet, Error, ErrorKind, Result, TensorBase, TensorImpl,
};

use super::reapply_views;
use super::view_meta::{call_below, ViewMeta};
use super::wrapper::{wrap_new, wrap_view, FunctionalTensor};
use crate::call_lookup::{CallLookup, RootFallback};
use crate::overload::OpOverload;

/// The boxed fallback a root registers at `Functionalize`.
pub(crate) fn fallback_kernel(
    lookup: CallLookup,
) -> impl Fn(&dyn BoxedOperator, DispatchKeySet, &mut Stack) -> Result<()> + Send + Sync + 'static {
    move |op, _keys, stack| {
        lookup.with_overload(op, |_, overload| functionalize_call(overload, stack))
    }
}

/// The root's fallback at `Functionalize`.
pub(crate) const FALLBACK: RootFallback = RootFallback {
    key: DispatchKey::Functionalize,
    kernel: |lookup| KernelFunction::make_from_boxed_function(fallback_kernel(lookup)),
    debug: "registered by aten_ops::Ops (functionalization)",
};

fn functionalize_call(op: &OpOverload, stack: &mut Stack) -> Result<()> {
    let schema = op.schema()?;
    let n = schema.arguments().len();
    let Some(base) = stack.len().checked_sub(n) else {
        return Err(Error::internal(format!(
            "{op}: a boxed call needs {n} arguments on the stack but found {}",
            stack.len()
        )));
    };
    // A composite decomposes here, so its views and writes are seen one by
    // one (PyTorch registers the CompositeImplicitAutograd kernel at
    // `Functionalize`).
    if op.has_kernel_for_dispatch_key(DispatchKey::CompositeImplicitAutograd) {
        return op.call_with_dispatch_key(DispatchKey::CompositeImplicitAutograd, stack);
    }
    let args: Vec<IValue> = stack.drain(base..).collect();
    let returns = if schema.arguments().iter().any(|a| a.is_write()) {
        mutation(op, &schema, args)?
    } else if schema.returns().iter().any(|r| r.alias_info().is_some()) {
        view(op, args)?
    } else {
        // Results are wrapped when an input was, or when no tensor came in
        // (a factory under functionalization).
        let wrap = args.iter().any(holds_functional) || !args.iter().any(holds_tensor);
        let returns = call_below(op, unwrap_all(&args)?)?;
        if wrap {
            returns.iter().map(wrap_value).collect::<Result<_>>()?
        } else {
            returns
        }
    };
    stack.extend(returns);
    Ok(())
}

/// Whether `v` holds a defined tensor.
fn holds_tensor(v: &IValue) -> bool {
    match v {
        IValue::Tensor(t) => t.defined(),
        IValue::TensorList(ts) => !ts.is_empty(),
        IValue::OptionalTensorList(ts) => ts.iter().any(Option::is_some),
        _ => false,
    }
}

/// Whether `v` holds a functional wrapper.
fn holds_functional(v: &IValue) -> bool {
    match v {
        IValue::Tensor(t) => FunctionalTensor::of(t).is_some(),
        IValue::TensorList(ts) => ts.iter().any(|t| FunctionalTensor::of(t).is_some()),
        IValue::OptionalTensorList(ts) => ts
            .iter()
            .flatten()
            .any(|t| FunctionalTensor::of(t).is_some()),
        _ => false,
    }
}

/// A wrapper's up-to-date value; any other tensor as it is.
pub(crate) fn unwrap_tensor(t: &TensorBase) -> Result<TensorBase> {
    match FunctionalTensor::of(t) {
        Some(f) => {
            f.sync()?;
            Ok(f.value())
        }
        None => Ok(t.clone()),
    }
}

fn unwrap(v: &IValue) -> Result<IValue> {
    Ok(match v {
        IValue::Tensor(t) => IValue::Tensor(unwrap_tensor(t)?),
        IValue::TensorList(ts) => IValue::TensorList(Arc::new(
            ts.iter().map(unwrap_tensor).collect::<Result<_>>()?,
        )),
        IValue::OptionalTensorList(ts) => IValue::OptionalTensorList(Arc::new(
            ts.iter()
                .map(|t| t.as_ref().map(unwrap_tensor).transpose())
                .collect::<Result<_>>()?,
        )),
        other => other.clone(),
    })
}

fn unwrap_all(args: &[IValue]) -> Result<Stack> {
    args.iter().map(unwrap).collect()
}

/// Every defined tensor of `v` in a wrapper of its own.
fn wrap_value(v: &IValue) -> Result<IValue> {
    let wrap = |t: &TensorBase| -> Result<TensorBase> {
        if t.defined() {
            wrap_new(t)
        } else {
            Ok(t.clone())
        }
    };
    Ok(match v {
        IValue::Tensor(t) => IValue::Tensor(wrap(t)?),
        IValue::TensorList(ts) => {
            IValue::TensorList(Arc::new(ts.iter().map(wrap).collect::<Result<_>>()?))
        }
        other => other.clone(),
    })
}

/// A view operator: the view of the up-to-date value, wrapped as an alias
/// of the input.
fn view(op: &OpOverload, args: Vec<IValue>) -> Result<Stack> {
    let Some(IValue::Tensor(self_)) = args.first() else {
        return Err(Error::not_implemented(format!(
            "functionalization: the view operator {op} does not take the viewed tensor first"
        )));
    };
    let Some(functional) = FunctionalTensor::of(self_) else {
        // Not a wrapper: functionalization has nothing to track.
        return call_below(op, unwrap_all(&args)?);
    };
    // As PyTorch does, the view is taken of the value as it is: a wrapper
    // behind its storage gives a view as far behind, brought up to date
    // when it is used.
    let (root, this) = own_overload(op)?;
    let rest = unwrap_all(&args[1..])?;
    let meta = ViewMeta::new(root, this, rest.clone(), 0, reapply_views());
    let mut is_list = false;
    let views = wrap_view(functional, meta, |meta, value| {
        let mut stack = Stack::with_capacity(rest.len() + 1);
        stack.push(IValue::Tensor(value));
        stack.extend(rest.iter().cloned());
        match <[IValue; 1]>::try_from(call_below(meta.replay_op(), stack)?) {
            Ok([IValue::Tensor(v)]) => Ok(vec![v]),
            Ok([IValue::TensorList(vs)]) => {
                is_list = true;
                Ok(vs.to_vec())
            }
            _ => Err(Error::not_implemented(format!(
                "functionalization: the view operator {op} does not return one tensor or a list"
            ))),
        }
    })?;
    Ok(vec![if is_list {
        IValue::TensorList(Arc::new(views))
    } else {
        views
            .into_iter()
            .next()
            .map(IValue::Tensor)
            .unwrap_or_default()
    }])
}

/// The root and the shared object of `op`.
fn own_overload(op: &OpOverload) -> Result<(crate::Ops, Arc<OpOverload>)> {
    let root = op
        .root()
        .ok_or_else(|| Error::internal(format!("{op}: its torch.ops root is gone")))?;
    let this = op
        .overload_packet()
        .ok_or_else(|| Error::internal(format!("{op} has no packet")))?
        .overload(op.overload_name())?;
    Ok((root, this))
}

/// An operator that writes to its arguments.
fn mutation(op: &OpOverload, schema: &FunctionSchema, args: Vec<IValue>) -> Result<Stack> {
    if op.tags().iter().any(|t| t == "inplace_view") {
        return Err(Error::not_implemented(format!(
            "functionalization: the in-place view operator {op} is not supported"
        )));
    }
    let arguments = schema.arguments();
    let written: Vec<usize> = (0..args.len().min(arguments.len()))
        .filter(|&i| arguments[i].is_write())
        .collect();
    if written
        .iter()
        .any(|&i| !matches!(&args[i], IValue::Tensor(t) if t.defined()))
    {
        return Err(Error::not_implemented(format!(
            "functionalization: {op} writes to a list or an absent tensor, which is not supported"
        )));
    }
    let all_written_functional = written
        .iter()
        .all(|&i| matches!(&args[i], IValue::Tensor(t) if FunctionalTensor::of(t).is_some()));
    if !all_written_functional {
        if args.iter().any(holds_functional) {
            return Err(Error::runtime(
                "mutating a non-functional tensor with a functional tensor is not allowed. Please ensure that all of your inputs are wrapped inside of a functionalize() call.",
            ));
        }
        return call_below(op, args);
    }
    let variant = functional_variant(op, schema)?;
    let unwrapped = unwrap_all(&args)?;
    check_on_meta(op, &unwrapped)?;
    let variant_schema = variant.schema()?;
    let stack = variant_schema
        .arguments()
        .iter()
        .map(|a| {
            schema
                .argument_index_with_name(a.name())
                .and_then(|i| unwrapped.get(i).cloned())
                .ok_or_else(|| Error::internal(format!("{variant}: no argument {}", a.name())))
        })
        .collect::<Result<Stack>>()?;
    let outs = call_below(&variant, stack)?;
    let Some(extra) = outs.len().checked_sub(written.len()) else {
        return Err(Error::internal(format!(
            "functionalization: {variant} returns fewer values than {op} writes"
        )));
    };
    // Every write is checked (and cast to the written tensor's dtype, as
    // `replace_` does) before any is recorded.
    let root = op
        .root()
        .ok_or_else(|| Error::internal(format!("{op}: its torch.ops root is gone")))?;
    let mut writes = Vec::with_capacity(written.len());
    for (&i, new_value) in written.iter().zip(&outs[extra..]) {
        let (IValue::Tensor(wrapper), IValue::Tensor(value)) = (&args[i], new_value) else {
            return Err(Error::internal(format!(
                "functionalization: {variant} did not return a tensor for {op}'s argument {i}"
            )));
        };
        let Some(functional) = FunctionalTensor::of(wrapper) else {
            return Err(Error::internal("a written argument is not functional"));
        };
        let value = cast_to(&root, value, wrapper)?;
        functional.check_write(wrapper, &value)?;
        writes.push((wrapper, functional, value));
    }
    for (wrapper, functional, value) in writes {
        functional.commit_write(wrapper, value)?;
        functional.sync()?;
    }
    // Returns aliasing a written argument are that argument; the others
    // are the variant's leading results, wrapped.
    let mut plain = outs[..extra].iter();
    schema
        .returns()
        .iter()
        .map(|r| match r.alias_info() {
            Some(info) if info.is_write() => arguments
                .iter()
                .zip(&args)
                .find(|(a, _)| {
                    a.alias_info()
                        .is_some_and(|ai| ai.before_sets() == info.before_sets())
                })
                .map(|(_, v)| v.clone())
                .ok_or_else(|| Error::internal(format!("{op}: a return aliases no argument"))),
            _ => wrap_value(plain.next().unwrap_or(&IValue::None)),
        })
        .collect()
}

/// `value` in `like`'s dtype (`replace_` casts a written value).
fn cast_to(root: &crate::Ops, value: &TensorBase, like: &TensorBase) -> Result<TensorBase> {
    if value.dtype() == like.dtype() {
        return Ok(value.clone());
    }
    let Some(dtype) = like.dtype() else {
        return Err(Error::runtime(
            "functionalization: an undefined tensor was written",
        ));
    };
    let to_copy = root.overload("aten::_to_copy")?;
    let returns = call_below(
        &to_copy,
        vec![
            IValue::Tensor(value.clone()),
            IValue::Int(dtype as i64),
            IValue::None,
            IValue::None,
            IValue::None,
            IValue::bool(false),
            IValue::None,
        ],
    )?;
    match <[IValue; 1]>::try_from(returns) {
        Ok([IValue::Tensor(t)]) => Ok(t),
        _ => Err(Error::internal("_to_copy did not return a tensor")),
    }
}

/// Runs the mutating operator on fresh Meta tensors of the arguments'
/// geometry, for the errors its functional variant would not raise (a
/// broadcast into `self`, a result dtype an `out=` tensor cannot hold).
/// Operators without a Meta kernel skip the check.
fn check_on_meta(op: &OpOverload, unwrapped: &[IValue]) -> Result<()> {
    let meta = |t: &TensorBase| -> Result<TensorBase> {
        if !t.defined() {
            return Ok(t.clone());
        }
        let dtype = t
            .dtype()
            .ok_or_else(|| Error::runtime("undefined tensor"))?;
        Ok(TensorBase::from_impl(TensorImpl::new_dataless(
            TensorImpl::default_key_set(Device::META),
            dtype,
            Device::META,
            &t.sizes(),
            &t.strides(),
        )?))
    };
    let stack = unwrapped
        .iter()
        .map(|v| {
            Ok(match v {
                IValue::Tensor(t) => IValue::Tensor(meta(t)?),
                IValue::TensorList(ts) => {
                    IValue::TensorList(Arc::new(ts.iter().map(&meta).collect::<Result<_>>()?))
                }
                IValue::OptionalTensorList(ts) => IValue::OptionalTensorList(Arc::new(
                    ts.iter()
                        .map(|t| t.as_ref().map(&meta).transpose())
                        .collect::<Result<_>>()?,
                )),
                other => other.clone(),
            })
        })
        .collect::<Result<Stack>>()?;
    let _no_modes = ExcludeDispatchKeyGuard::new(DispatchKeySet::from_keys(&[
        DispatchKey::Functionalize,
        DispatchKey::Python,
        DispatchKey::PythonTLSSnapshot,
        DispatchKey::PreDispatch,
    ]));
    let mut stack = stack;
    match op.call_boxed(&mut stack) {
        Err(e) if e.kind() == ErrorKind::NotImplemented => Ok(()),
        other => other,
    }
}

/// The functional operator an in-place or `out=` operator becomes: the
/// overload of the same name without the trailing `_` (or with
/// `_functional`) whose arguments are the written operator's without its
/// `out` arguments, by name and type, and which writes nothing (the
/// grouping torchgen makes by signature).
pub(crate) fn functional_variant(
    op: &OpOverload,
    schema: &FunctionSchema,
) -> Result<Arc<OpOverload>> {
    op.functional_variant_with(|| find_functional_variant(op, schema))
}

fn find_functional_variant(op: &OpOverload, schema: &FunctionSchema) -> Result<Arc<OpOverload>> {
    let missing = || {
        Error::not_implemented(format!(
            "functionalization: {op} writes to its arguments and has no functional variant"
        ))
    };
    let root = op.root().ok_or_else(missing)?;
    let namespace = root.namespace(op.namespace());
    let name = op.op_name();
    let stem = match name.strip_suffix('_') {
        Some(stem) if !name.starts_with("__") => stem,
        _ => name,
    };
    let wanted: Vec<_> = schema.arguments().iter().filter(|a| !a.is_out()).collect();
    let matches = |candidate: &FunctionSchema| {
        candidate.arguments().len() == wanted.len()
            && !candidate.arguments().iter().any(|a| a.is_write())
            && candidate
                .arguments()
                .iter()
                .zip(&wanted)
                .all(|(a, w)| a.name() == w.name() && a.real_type() == w.real_type())
    };
    for packet_name in [stem.to_string(), format!("{stem}_functional")] {
        let Ok(packet) = namespace.op(&packet_name) else {
            continue;
        };
        let mut names = packet.overloads();
        // The overload of the same name first (`add_.Tensor` → `add.Tensor`).
        let own = op.overload_name();
        let own = if own.is_empty() { "default" } else { own };
        names.sort_by_key(|n| n != own);
        for overload in names {
            if matches(&*packet.schema(&overload)?) {
                return packet.overload(&overload);
            }
        }
    }
    Err(missing())
}
