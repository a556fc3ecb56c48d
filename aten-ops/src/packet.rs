//! `OpOverloadPacket` (`torch.ops.aten.add`): every overload of one
//! operator name, and calls that pick the overload from the arguments.
//!
//! The overload list is read lock-free: it is published with the count of
//! def changes it was computed at, and recomputed (in the dispatcher's def
//! order) when a library has defined or removed a def since.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use aten_boxing::schema::FunctionSchema;
use aten_boxing::{IValue, Stack};
use c10_core::published_cell::PublishedCell;
use c10_core::{Error, Result};

use crate::arguments::{accepts, bind_arguments, Kwargs};
use crate::overload::{OpOverload, OverloadKind};
use crate::state::{OpsInner, Shared};

/// The overloads, in def order, with their schemas.
struct Resolved {
    overloads: Vec<(Arc<OpOverload>, Arc<FunctionSchema>)>,
}

impl Resolved {
    fn same_as(&self, other: &[(Arc<OpOverload>, Arc<FunctionSchema>)]) -> bool {
        self.overloads.len() == other.len()
            && self
                .overloads
                .iter()
                .zip(other)
                .all(|((a, s), (b, t))| Arc::ptr_eq(a, b) && Arc::ptr_eq(s, t))
    }
}

/// All overloads of `ns::name` (PyTorch's `OpOverloadPacket`).
pub struct OpOverloadPacket {
    ns: String,
    name: String,
    qualified: String,
    me: Weak<OpOverloadPacket>,
    root: Weak<OpsInner>,
    shared: Arc<Shared>,
    /// Republished only when the list changed (a cell keeps every value it
    /// held); `checked` is the count of def changes it was last checked at.
    current: PublishedCell<Resolved>,
    checked: AtomicU64,
    /// Every overload object made, by overload name (`""` for the default):
    /// the same object comes back after a refresh.
    made: Mutex<HashMap<String, Arc<OpOverload>>>,
    /// The overload names looked up so far, in lookup order (`_dir`).
    dir: Mutex<Vec<String>>,
}

impl OpOverloadPacket {
    pub(crate) fn new(
        ns: &str,
        name: &str,
        root: Weak<OpsInner>,
        shared: Arc<Shared>,
    ) -> OpOverloadPacket {
        // The weak self-reference is filled by `Arc::new_cyclic` in
        // `into_arc`; until then it is empty and no overload is made.
        OpOverloadPacket {
            ns: ns.to_string(),
            name: name.to_string(),
            qualified: format!("{ns}::{name}"),
            me: Weak::new(),
            root,
            shared,
            current: PublishedCell::new(Resolved {
                overloads: Vec::new(),
            }),
            checked: AtomicU64::new(u64::MAX),
            made: Mutex::new(HashMap::new()),
            dir: Mutex::new(Vec::new()),
        }
    }

    /// The root this packet was looked up in (`None` once it is gone).
    pub(crate) fn root(&self) -> Option<crate::Ops> {
        self.root.upgrade().map(|inner| crate::Ops { inner })
    }

    pub(crate) fn into_arc(self) -> Arc<OpOverloadPacket> {
        Arc::new_cyclic(|me| OpOverloadPacket {
            me: me.clone(),
            ..self
        })
    }

    /// The overloads as of now.
    fn resolved(&self) -> &Resolved {
        let generation = self.shared.generation();
        if self.checked.load(Ordering::Acquire) == generation {
            return self.current.load();
        }
        let mut made = self.made.lock().unwrap_or_else(|p| p.into_inner());
        if self.checked.load(Ordering::Acquire) == generation {
            return self.current.load();
        }
        let root = self.root.upgrade();
        let mut overloads = Vec::new();
        for (handle, schema) in self.shared.dispatcher.find_overloads_kept(&self.qualified) {
            let overload = Arc::clone(
                made.entry(schema.overload_name().to_string())
                    .or_insert_with(|| {
                        let fresh = Arc::new(OpOverload::new(
                            self.me.clone(),
                            handle,
                            Arc::clone(&self.shared),
                        ));
                        match &root {
                            Some(root) => root.remember_overload(fresh),
                            None => fresh,
                        }
                    }),
            );
            overloads.push((overload, schema));
        }
        if !self.current.load().same_as(&overloads) {
            self.current.store(Resolved { overloads });
        }
        self.checked.store(generation, Ordering::Release);
        self.current.load()
    }

    /// `ns::name`.
    pub fn qualified_name(&self) -> &str {
        &self.qualified
    }

    /// The operator's name without namespace.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.ns
    }

    /// The overload names as the dispatcher has them (`""` for the default),
    /// in def order.
    pub(crate) fn overload_names(&self) -> Vec<String> {
        self.resolved()
            .overloads
            .iter()
            .map(|(_, s)| s.overload_name().to_string())
            .collect()
    }

    /// `overloads()`: the overload names in def order, `"default"` for the
    /// one without a name.
    pub fn overloads(&self) -> Vec<String> {
        self.overload_names()
            .into_iter()
            .map(|n| if n.is_empty() { "default".into() } else { n })
            .collect()
    }

    /// The schema of overload `overload` (`"default"` for the unnamed one).
    pub fn schema(&self, overload: &str) -> Result<Arc<FunctionSchema>> {
        let wanted = if overload == "default" { "" } else { overload };
        self.resolved()
            .overloads
            .iter()
            .find(|(_, s)| s.overload_name() == wanted)
            .map(|(_, s)| Arc::clone(s))
            .ok_or_else(|| self.no_overload(overload))
    }

    /// `torch.ops.ns.name.<overload>`: the overload object (the same one on
    /// every lookup). `"default"` names the overload without a name.
    pub fn overload(&self, overload: &str) -> Result<Arc<OpOverload>> {
        let wanted = if overload == "default" { "" } else { overload };
        let found = self
            .resolved()
            .overloads
            .iter()
            .find(|(_, s)| s.overload_name() == wanted)
            .map(|(o, _)| Arc::clone(o))
            .ok_or_else(|| self.no_overload(overload))?;
        let mut dir = self.dir.lock().unwrap_or_else(|p| p.into_inner());
        if !dir.iter().any(|d| d == overload) {
            dir.push(overload.to_string());
        }
        Ok(found)
    }

    fn no_overload(&self, overload: &str) -> Error {
        Error::attribute_error(format!(
            "The underlying op of '{self}' has no overload name '{overload}'"
        ))
    }

    /// `__iter__`: the overload names looked up so far, in lookup order.
    pub fn resolved_overloads(&self) -> Vec<String> {
        self.dir.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// `_has_torchbind_op_overload`: some overload takes a custom-class
    /// object.
    pub fn has_torchbind_op_overload(&self) -> bool {
        self.resolved()
            .overloads
            .iter()
            .any(|(o, _)| o.kind() == OverloadKind::TorchBind)
    }

    /// `__call__`: picks the first overload (in def order) whose schema
    /// accepts the arguments, and calls it. With one overload its binding
    /// error is the error; with several, PyTorch's "failed to match any
    /// schema" lists each overload's.
    pub fn call(&self, args: &[IValue], kwargs: Kwargs<'_>) -> Result<Vec<IValue>> {
        let resolved = self.resolved();
        let mut stack = Stack::with_capacity(8);
        if let [(overload, schema)] = resolved.overloads.as_slice() {
            bind_arguments(schema, args, kwargs, &mut stack)?;
            overload.call_boxed(&mut stack)?;
            return Ok(stack);
        }
        if resolved.overloads.is_empty() {
            return Err(Error::attribute_error(format!(
                "'_OpNamespace' '{}' object has no attribute '{}'",
                self.ns, self.name
            )));
        }
        // The first overload that accepts the arguments; errors are built
        // only when none does.
        if let Some((overload, schema)) = resolved
            .overloads
            .iter()
            .find(|(_, schema)| accepts(schema, args, kwargs))
        {
            bind_arguments(schema, args, kwargs, &mut stack)?;
            overload.call_boxed(&mut stack)?;
            return Ok(stack);
        }
        let errors = resolved
            .overloads
            .iter()
            .filter_map(|(_, schema)| bind_arguments(schema, args, kwargs, &mut stack).err());
        let mut message = String::from(
            "Overloaded torch operator invoked from Python failed to match any schema:\n",
        );
        for e in errors {
            message.push_str(e.message());
            message.push_str("\n\n");
        }
        Err(Error::runtime(message))
    }
}

impl std::fmt::Display for OpOverloadPacket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.ns, self.name)
    }
}

impl std::fmt::Debug for OpOverloadPacket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<OpOverloadPacket(op='{}.{}')>", self.ns, self.name)
    }
}
