//! Tensor subclasses with `__torch_dispatch__` (PyTorch's wrapper
//! subclasses, `_make_wrapper_subclass`).
//!
//! A wrapper tensor has its own sizes, dtype and device but no data; its
//! `pyobj_slot` holds a [`SubclassObject`]: the subclass (whose handler
//! runs for every operator call the tensor takes part in) and the
//! instance's own data (usually the tensors it wraps). Its key set adds
//! `Python` and `PythonTLSSnapshot` to a dense tensor's, so calls reach the
//! `Python` key's fallback below autograd; with no mode pushed, the
//! fallback offers the call to the subclasses among the arguments, in the
//! order they appear (a derived class before its parents), until one
//! handles it. A handler unwraps, calls the
//! operator on what it wrapped, and wraps the results.
//!
//! [`LoggingTensor`] is the shipped example: it records every operator it
//! flows through.

use std::any::Any;
use std::sync::{Arc, Mutex};

use aten_boxing::IValue;
use c10_core::{Device, DispatchKey, Error, Result, TensorBase, TensorImpl};

use crate::overload::OpOverload;

/// A tensor subclass's `__torch_dispatch__` (a classmethod in PyTorch).
pub trait TorchDispatchSubclass: Send + Sync + 'static {
    /// Handles a call one of whose arguments is a tensor of this subclass;
    /// `cls` is this subclass as the wrapper tensors hold it (PyTorch's
    /// `cls`, for wrapping results). `Ok(None)` is `NotImplemented` (the
    /// next subclass is asked).
    fn torch_dispatch(
        &self,
        cls: &Arc<dyn TorchDispatchSubclass>,
        op: &OpOverload,
        args: &[IValue],
        kwargs: &[(&str, IValue)],
    ) -> Result<Option<Vec<IValue>>>;

    /// The class's name in messages.
    fn name(&self) -> String;

    /// The class this one derives from (`class B(A)`), if any: a subclass
    /// is asked before the classes it derives from, wherever its tensors
    /// appear among the arguments.
    fn parent(&self) -> Option<Arc<dyn TorchDispatchSubclass>> {
        None
    }
}

/// Whether `class` is `ancestor` or derives from it.
fn derives_from(
    class: &Arc<dyn TorchDispatchSubclass>,
    ancestor: &Arc<dyn TorchDispatchSubclass>,
) -> bool {
    let mut current = Some(Arc::clone(class));
    // A parent chain longer than this is a cycle a user built.
    for _ in 0..64 {
        match current {
            Some(c) if Arc::ptr_eq(&c, ancestor) => return true,
            Some(c) => current = c.parent(),
            None => return false,
        }
    }
    false
}

/// What a wrapper tensor's `pyobj_slot` holds.
pub struct SubclassObject {
    class: Arc<dyn TorchDispatchSubclass>,
    data: Box<dyn Any + Send + Sync>,
}

impl SubclassObject {
    /// The subclass.
    pub fn class(&self) -> &Arc<dyn TorchDispatchSubclass> {
        &self.class
    }

    /// The instance's data, if it is a `T`.
    pub fn data<T: Any>(&self) -> Option<&T> {
        self.data.downcast_ref()
    }
}

/// `_make_wrapper_subclass`: a data-less tensor with `like`'s sizes,
/// strides, dtype and device, of subclass `class`, carrying `data`.
pub fn make_wrapper_subclass(
    like: &TensorBase,
    class: Arc<dyn TorchDispatchSubclass>,
    data: impl Any + Send + Sync,
) -> Result<TensorBase> {
    let Some(device) = like.device() else {
        return Err(Error::runtime("cannot wrap an undefined tensor"));
    };
    make_wrapper_subclass_on(like, device, class, data)
}

/// [`make_wrapper_subclass`] with another device than `like`'s (a fake
/// tensor's device).
pub fn make_wrapper_subclass_on(
    like: &TensorBase,
    device: Device,
    class: Arc<dyn TorchDispatchSubclass>,
    data: impl Any + Send + Sync,
) -> Result<TensorBase> {
    let (Some(dtype), Some(layout)) = (like.dtype(), like.layout()) else {
        return Err(Error::runtime("cannot wrap an undefined tensor"));
    };
    let keys = TensorImpl::default_key_set(device)
        .add(DispatchKey::Python)
        .add(DispatchKey::PythonTLSSnapshot);
    let object: Arc<dyn Any + Send + Sync> = Arc::new(SubclassObject {
        class,
        data: Box::new(data),
    });
    let tensor = TensorImpl::new_dataless(keys, dtype, device, layout.sizes(), layout.strides())?
        .with_pyobj_slot(object);
    Ok(TensorBase::from_impl(tensor))
}

/// The subclass object of a wrapper tensor.
pub fn subclass_object(t: &TensorBase) -> Option<&SubclassObject> {
    t.pyobj_slot()?.downcast_ref::<SubclassObject>()
}

/// The subclasses of the wrapper tensors among `values` (also inside
/// lists), each once, in order of appearance except that a subclass comes
/// before the classes it derives from (PyTorch's overloaded args).
pub(crate) fn overloaded_classes(values: &[IValue]) -> Vec<Arc<dyn TorchDispatchSubclass>> {
    fn visit(v: &IValue, out: &mut Vec<Arc<dyn TorchDispatchSubclass>>) {
        // `append_overloaded_arg`: each class once; a class goes before
        // the first listed class it derives from, else at the end.
        let mut add = |t: &TensorBase| {
            if let Some(o) = subclass_object(t) {
                let class = o.class();
                if out.iter().any(|c| Arc::ptr_eq(c, class)) {
                    return;
                }
                match out.iter().position(|listed| derives_from(class, listed)) {
                    Some(at) => out.insert(at, Arc::clone(class)),
                    None => out.push(Arc::clone(class)),
                }
            }
        };
        match v {
            IValue::Tensor(t) => add(t),
            IValue::TensorList(ts) => ts.iter().for_each(add),
            IValue::OptionalTensorList(ts) => ts.iter().flatten().for_each(add),
            IValue::GenericList(items) | IValue::Tuple(items) => {
                items.iter().for_each(|i| visit(i, out))
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    values.iter().for_each(|v| visit(v, &mut out));
    out
}

/// Offers a call to each subclass in turn; PyTorch's error when all
/// decline.
pub(crate) fn dispatch_to_subclasses(
    op: &OpOverload,
    all_args: &[IValue],
    args: &[IValue],
    kwargs: &[(&str, IValue)],
) -> Result<Vec<IValue>> {
    let classes = overloaded_classes(all_args);
    if classes.is_empty() {
        return Err(Error::internal(
            "Hit Python dispatch key but no arguments had PyInterpreter (no tensor args?)",
        ));
    }
    for class in &classes {
        if let Some(results) = class.torch_dispatch(class, op, args, kwargs)? {
            return Ok(results);
        }
    }
    let mut message = format!(
        "Multiple dispatch failed for 'torch._ops.{op}'; all __torch_dispatch__ handlers returned NotImplemented:\n\n"
    );
    for class in &classes {
        message.push_str(&format!("  - tensor subclass <class '{}'>\n", class.name()));
    }
    message.push_str("\nFor more information, try re-running with TORCH_LOGS=not_implemented");
    Err(Error::type_error(message))
}

/// A subclass that records the name of every operator its tensors flow
/// through (PyTorch's `LoggingTensor` of `torch.testing._internal`).
pub struct LoggingTensor {
    log: Mutex<Vec<String>>,
}

impl LoggingTensor {
    /// A logging subclass with an empty log.
    pub fn new() -> Arc<LoggingTensor> {
        Arc::new(LoggingTensor {
            log: Mutex::new(Vec::new()),
        })
    }

    /// Wraps `elem` as a tensor of this subclass.
    pub fn wrap(self: &Arc<Self>, elem: &TensorBase) -> Result<TensorBase> {
        make_wrapper_subclass(
            elem,
            Arc::clone(self) as Arc<dyn TorchDispatchSubclass>,
            elem.clone(),
        )
    }

    /// The tensor a wrapper of this subclass wraps (`t` itself otherwise).
    pub fn unwrap(&self, t: &TensorBase) -> TensorBase {
        match subclass_object(t) {
            Some(o) if self.is(o) => o.data::<TensorBase>().cloned().unwrap_or_else(|| t.clone()),
            _ => t.clone(),
        }
    }

    /// The operators recorded so far.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn is(&self, o: &SubclassObject) -> bool {
        std::ptr::addr_eq(Arc::as_ptr(o.class()), self as *const Self)
    }

    fn unwrap_value(&self, v: &IValue) -> IValue {
        match v {
            IValue::Tensor(t) => IValue::Tensor(self.unwrap(t)),
            IValue::TensorList(ts) => {
                IValue::TensorList(Arc::new(ts.iter().map(|t| self.unwrap(t)).collect()))
            }
            IValue::OptionalTensorList(ts) => IValue::OptionalTensorList(Arc::new(
                ts.iter()
                    .map(|t| t.as_ref().map(|t| self.unwrap(t)))
                    .collect(),
            )),
            IValue::GenericList(items) => IValue::GenericList(Arc::new(
                items.iter().map(|i| self.unwrap_value(i)).collect(),
            )),
            IValue::Tuple(items) => IValue::Tuple(Arc::new(
                items.iter().map(|i| self.unwrap_value(i)).collect(),
            )),
            other => other.clone(),
        }
    }
}

impl TorchDispatchSubclass for LoggingTensor {
    fn torch_dispatch(
        &self,
        cls: &Arc<dyn TorchDispatchSubclass>,
        op: &OpOverload,
        args: &[IValue],
        kwargs: &[(&str, IValue)],
    ) -> Result<Option<Vec<IValue>>> {
        self.log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(op.to_string());
        let args: Vec<IValue> = args.iter().map(|a| self.unwrap_value(a)).collect();
        let kwargs: Vec<(&str, IValue)> = kwargs
            .iter()
            .map(|(k, v)| (*k, self.unwrap_value(v)))
            .collect();
        // Every tensor result is wrapped again.
        op.call(&args, &kwargs)?
            .into_iter()
            .map(|r| match r {
                IValue::Tensor(t) if t.defined() => {
                    make_wrapper_subclass(&t, Arc::clone(cls), t.clone()).map(IValue::Tensor)
                }
                other => Ok(other),
            })
            .collect::<Result<Vec<IValue>>>()
            .map(Some)
    }

    fn name(&self) -> String {
        "LoggingTensor".into()
    }
}
