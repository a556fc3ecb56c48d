//! Runtime libraries (`torch.library.Library`): define operators, register
//! kernels (typed or boxed Rust closures) per dispatch key, fallthroughs
//! and backend fallbacks while the program runs. Dropping a library
//! removes everything it registered; the `torch.ops` namespaces see the
//! change at their next lookup.

use std::collections::HashSet;
use std::panic::Location;

use aten_boxing::schema::FunctionSchema;
use aten_dispatch::{AliasAnalysisKind, CppFunction, LibraryKind};
use c10_core::{DispatchKey, Error, Result};

use crate::custom_class::check_schema_classes;
use crate::root::{ops, Ops};

/// Namespaces a DEF or FRAGMENT library may not use.
const RESERVED_NAMESPACES: &[&str] = &["prim"];

/// A library made at run time (`torch.library.Library(ns, kind,
/// dispatch_key)`).
pub struct Library {
    ns: String,
    kind: LibraryKind,
    dispatch_key: Option<DispatchKey>,
    root: Ops,
    /// The registrations; dropped (undone) with the library.
    m: aten_dispatch::Library,
    /// `ns/name/key` of each kernel registered (`_op_impls`).
    op_impls: HashSet<String>,
    /// `ns::name[.overload]` of each def (`_op_defs`).
    op_defs: Vec<String>,
}

impl Library {
    /// `Library(ns, kind, dispatch_key)` on [`ops()`]: `kind` is `"DEF"`,
    /// `"IMPL"` or `"FRAGMENT"`; `dispatch_key` `""` for none.
    #[track_caller]
    pub fn new(ns: &str, kind: &str, dispatch_key: &str) -> Result<Library> {
        Library::with_root(ops(), ns, kind, dispatch_key)
    }

    /// A library on the dispatcher of `root`.
    #[track_caller]
    pub fn with_root(root: &Ops, ns: &str, kind: &str, dispatch_key: &str) -> Result<Library> {
        let caller = Location::caller();
        let kind = match kind {
            "DEF" => LibraryKind::Def,
            "IMPL" => LibraryKind::Impl,
            "FRAGMENT" => LibraryKind::Fragment,
            other => {
                return Err(Error::value_error(format!(
                    "('Unsupported kind: ', '{other}')"
                )))
            }
        };
        if RESERVED_NAMESPACES.contains(&ns) && kind != LibraryKind::Impl {
            return Err(Error::value_error(format!(
                "('{ns}', ' is a reserved namespace. Please try creating a library with another name.')"
            )));
        }
        let dispatch_key = parse_key(dispatch_key)?;
        let m = aten_dispatch::Library::with_dispatcher(
            root.dispatcher(),
            kind,
            ns,
            dispatch_key,
            caller.file(),
            caller.line(),
        )?;
        Ok(Library {
            ns: ns.to_string(),
            kind,
            dispatch_key,
            root: root.clone(),
            m,
            op_impls: HashSet::new(),
            op_defs: Vec::new(),
        })
    }

    /// The namespace.
    pub fn ns(&self) -> &str {
        &self.ns
    }

    /// `define(schema, alias_analysis="", tags=())`: defines an operator;
    /// returns its name (`ns::name[.overload]`). `alias_analysis` is `""`
    /// (from the schema), `"FROM_SCHEMA"` or `"CONSERVATIVE"`.
    pub fn define(&mut self, schema: &str, alias_analysis: &str, tags: &[&str]) -> Result<String> {
        let alias = match alias_analysis {
            "" | "FROM_SCHEMA" => AliasAnalysisKind::FromSchema,
            "CONSERVATIVE" => AliasAnalysisKind::Conservative,
            other => {
                return Err(Error::runtime(format!(
                    "Invalid alias_analysis type {other}"
                )))
            }
        };
        let qualified = if schema.split('(').next().unwrap_or("").contains("::") {
            schema.to_string()
        } else {
            format!("{}::{schema}", self.ns)
        };
        let parsed = FunctionSchema::parse(&qualified)?;
        check_schema_classes(&parsed)?;
        let name = parsed.operator_name().to_string();
        self.m.def_with(
            schema,
            Some(alias),
            tags.iter().map(|t| t.to_string()).collect(),
        )?;
        self.op_defs.push(name.clone());
        Ok(name)
    }

    /// `impl(op_name, fn, dispatch_key="")`: registers `f` (a typed Rust
    /// function via [`CppFunction::from_unboxed`], or a boxed one via
    /// [`CppFunction::from_boxed`]) for `op_name` at `dispatch_key`, else
    /// the library's key, else CompositeImplicitAutograd. PyTorch's errors
    /// for a second runtime kernel at one operator and key, and for a Meta
    /// kernel on an operator with a CompositeImplicitAutograd kernel.
    pub fn impl_(&mut self, op_name: &str, f: CppFunction, dispatch_key: &str) -> Result<()> {
        let key_name = if dispatch_key.is_empty() {
            self.dispatch_key.map_or(String::new(), |k| k.to_string())
        } else {
            dispatch_key.to_string()
        };
        let short = op_name.rsplit("::").next().unwrap_or(op_name);
        let impl_key = format!("{}/{short}/{key_name}", self.ns);
        // Reserve the key (released again if the registration fails), so
        // the set's lock is not held while the dispatcher runs.
        if !self.root.inner.library_impls().insert(impl_key.clone()) {
            return Err(Error::runtime(format!(
                "This is not allowed since there's already a kernel registered from python overriding {short}'s behavior for {key_name} dispatch key and {} namespace.",
                self.ns
            )));
        }
        match self.register_impl(op_name, f, &key_name) {
            Ok(()) => {
                self.op_impls.insert(impl_key);
                Ok(())
            }
            Err(e) => {
                self.root.inner.library_impls().remove(&impl_key);
                Err(e)
            }
        }
    }

    fn register_impl(&mut self, op_name: &str, f: CppFunction, key_name: &str) -> Result<()> {
        if key_name == "Meta" {
            let qualified = if op_name.contains("::") {
                op_name.to_string()
            } else {
                format!("{}::{op_name}", self.ns)
            };
            let name = aten_boxing::schema::OperatorName::parse(&qualified)?;
            let has_cia = self.root.dispatcher().find_op(&name).is_some_and(|op| {
                op.has_kernel_for_dispatch_key(DispatchKey::CompositeImplicitAutograd)
            });
            if has_cia {
                return Err(Error::runtime(format!(
                    "We should not register a meta kernel directly to the operator '{op_name}', because it has a CompositeImplicitAutograd kernel in core. Instead we should let the operator decompose, and ensure that we have meta kernels for the base ops that it decomposes into."
                )));
            }
        }
        let key = parse_key(key_name)?.unwrap_or(DispatchKey::CompositeImplicitAutograd);
        self.m.impl_(op_name, f.dispatch(key))?;
        Ok(())
    }

    /// Registers a fallthrough kernel for `op_name` at `dispatch_key`.
    pub fn impl_fallthrough(&mut self, op_name: &str, dispatch_key: &str) -> Result<()> {
        self.impl_(op_name, CppFunction::fallthrough(), dispatch_key)
    }

    /// `fallback(fn, dispatch_key="")`: a backend fallback (libraries of
    /// namespace `_` only, PyTorch's error otherwise).
    pub fn fallback(&mut self, f: CppFunction, dispatch_key: &str) -> Result<()> {
        let key = match parse_key(dispatch_key)? {
            Some(k) => Some(k),
            None => self.dispatch_key,
        };
        if self.ns != "_" {
            return Err(Error::runtime(format!(
                "Fallback can only be registered using library fragment on the global namespace \"_\" but it is {}",
                self.ns
            )));
        }
        let Some(key) = key else {
            return Err(Error::runtime(
                "fallback(...): a fallback needs a dispatch key: give one or create the library with one",
            ));
        };
        self.m.fallback(f.dispatch(key))?;
        Ok(())
    }

    /// The operators this library defined.
    pub fn defined(&self) -> &[String] {
        &self.op_defs
    }

    /// `_destroy()`: removes every registration now (dropping does the
    /// same).
    pub fn destroy(self) {}
}

impl Drop for Library {
    fn drop(&mut self) {
        let mut impls = self.root.inner.library_impls();
        for key in self.op_impls.drain() {
            impls.remove(&key);
        }
        // `m` drops after this, undoing the registrations.
    }
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.kind {
            LibraryKind::Def => "DEF",
            LibraryKind::Impl => "IMPL",
            LibraryKind::Fragment => "FRAGMENT",
        };
        write!(
            f,
            "Library(kind={kind}, ns={}, dispatch_key={})>",
            self.ns,
            self.dispatch_key.map_or(String::new(), |k| k.to_string())
        )
    }
}

fn parse_key(name: &str) -> Result<Option<DispatchKey>> {
    if name.is_empty() {
        return Ok(None);
    }
    DispatchKey::parse(name).map(Some)
}
