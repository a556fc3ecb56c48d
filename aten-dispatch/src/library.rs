//! `Library`: the registration API (`torch::Library`), and static
//! registration in the spirit of `TORCH_LIBRARY`, `TORCH_LIBRARY_FRAGMENT`
//! and `TORCH_LIBRARY_IMPL`.
//!
//! A library has a kind (DEF: the one block that defines a namespace;
//! FRAGMENT: more definitions for it; IMPL: kernels for one dispatch key), a
//! namespace (`_` for IMPL blocks that register backend fallbacks) and a
//! place in the source (its debug string `registered at file:line`). Every
//! registration it makes lives as long as the library.
//!
//! Static registrations ([`torch_library!`](crate::torch_library),
//! [`torch_library_fragment!`](crate::torch_library_fragment),
//! [`torch_library_impl!`](crate::torch_library_impl)) are collected at link
//! time and run by [`Dispatcher::global`]: backend fallbacks, then
//! definitions, then implementations. A block that fails registers nothing;
//! the failure is kept ([`Dispatcher::static_registration_errors`],
//! [`Dispatcher::check_static_registrations`]) and reported as a warning
//! ([`c10_core::warning`]).

use aten_boxing::kernel_function::KernelFunctor;
use aten_boxing::schema::{FunctionSchema, OperatorName};
use aten_boxing::{BoxedOperator, KernelFunction, Stack};
use c10_core::{DispatchKey, DispatchKeySet, Error, Result};

use crate::dispatcher::Dispatcher;
use crate::operator_entry::AliasAnalysisKind;
use crate::registration_handle::RegistrationHandle;

/// The kind of a library block.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LibraryKind {
    /// `TORCH_LIBRARY`: the unique block defining a namespace.
    #[doc(alias = "TORCH_LIBRARY")]
    Def,
    /// `TORCH_LIBRARY_IMPL`: kernels for one dispatch key.
    #[doc(alias = "TORCH_LIBRARY_IMPL")]
    Impl,
    /// `TORCH_LIBRARY_FRAGMENT`: more definitions for a namespace.
    #[doc(alias = "TORCH_LIBRARY_FRAGMENT")]
    Fragment,
}

impl LibraryKind {
    /// The C++ macro name, as error messages print it.
    pub fn name(self) -> &'static str {
        match self {
            LibraryKind::Def => "TORCH_LIBRARY",
            LibraryKind::Impl => "TORCH_LIBRARY_IMPL",
            LibraryKind::Fragment => "TORCH_LIBRARY_FRAGMENT",
        }
    }
}

/// A kernel on its way into a registration (`torch::CppFunction`): the
/// kernel, an optional dispatch key (`torch::dispatch`) and an optional
/// debug string.
pub struct CppFunction {
    kernel: KernelFunction,
    key: Option<DispatchKey>,
    debug: Option<String>,
}

impl CppFunction {
    /// A Rust function or closure (its boxed wrapper is made automatically).
    #[doc(alias = "makeFromUnboxedFunction")]
    pub fn from_unboxed<M, F: KernelFunctor<M>>(f: F) -> CppFunction {
        CppFunction::from_kernel(KernelFunction::make_from_unboxed_closure(f))
    }

    /// A boxed kernel.
    #[doc(alias = "makeFromBoxedFunction")]
    pub fn from_boxed(
        f: impl Fn(&dyn BoxedOperator, DispatchKeySet, &mut Stack) -> Result<()> + Send + Sync + 'static,
    ) -> CppFunction {
        CppFunction::from_kernel(KernelFunction::make_from_boxed_function(f))
    }

    /// `makeFallthrough()`.
    #[doc(alias = "makeFallthrough")]
    pub fn fallthrough() -> CppFunction {
        CppFunction::from_kernel(KernelFunction::make_fallthrough())
    }

    /// `makeNamedNotSupported()`.
    #[doc(alias = "makeNamedNotSupported")]
    pub fn named_not_supported() -> CppFunction {
        CppFunction::from_kernel(KernelFunction::make_named_not_supported())
    }

    /// Any kernel.
    pub fn from_kernel(kernel: KernelFunction) -> CppFunction {
        CppFunction {
            kernel,
            key: None,
            debug: None,
        }
    }

    /// `torch::dispatch(key, f)`: the kernel applies to `key` only.
    pub fn dispatch(mut self, key: DispatchKey) -> CppFunction {
        self.key = Some(key);
        self
    }

    /// Sets the debug string shown in dumps.
    pub fn debug(mut self, debug: impl Into<String>) -> CppFunction {
        self.debug = Some(debug.into());
        self
    }
}

/// A registration block (`torch::Library`).
pub struct Library {
    kind: LibraryKind,
    ns: Option<String>,
    key: Option<DispatchKey>,
    file: &'static str,
    line: u32,
    dispatcher: Dispatcher,
    handles: Vec<RegistrationHandle>,
}

impl Library {
    /// A block on the global dispatcher.
    pub fn new(
        kind: LibraryKind,
        ns: &str,
        key: Option<DispatchKey>,
        file: &'static str,
        line: u32,
    ) -> Result<Library> {
        Library::with_dispatcher(Dispatcher::global(), kind, ns, key, file, line)
    }

    /// A block on `dispatcher`. `ns` is `_` for fallback-only IMPL blocks;
    /// `key` `None` (or `Undefined`) means catch-all.
    pub fn with_dispatcher(
        dispatcher: &Dispatcher,
        kind: LibraryKind,
        ns: &str,
        key: Option<DispatchKey>,
        file: &'static str,
        line: u32,
    ) -> Result<Library> {
        let key = key.filter(|k| *k != DispatchKey::Undefined);
        let mut lib = Library {
            kind,
            ns: (ns != "_").then(|| ns.to_string()),
            key,
            file,
            line,
            dispatcher: dispatcher.clone(),
            handles: Vec::new(),
        };
        match kind {
            LibraryKind::Def | LibraryKind::Fragment if lib.ns.is_none() => {
                return Err(lib.error(format!(
                    "{0}: cannot define {0} with the wildcard namespace _ (every {0} defines operators for a distinct namespace!) Did you mean to use TORCH_LIBRARY_IMPL instead?  ",
                    kind.name()
                )));
            }
            LibraryKind::Def => {
                let handle = dispatcher.register_library(ns, lib.debug_string().into())?;
                lib.handles.push(handle);
            }
            _ => {}
        }
        Ok(lib)
    }

    fn debug_string(&self) -> String {
        format!("registered at {}:{}", self.file, self.line)
    }

    fn error(&self, message: String) -> Error {
        Error::runtime(format!(
            "{message}(Error occurred while processing {} block at {}:{})",
            self.kind.name(),
            self.file,
            self.line
        ))
    }

    /// The dispatcher this block registers with.
    pub fn dispatcher(&self) -> &Dispatcher {
        &self.dispatcher
    }

    /// `def("schema")`: defines an operator (alias analysis FROM_SCHEMA).
    pub fn def(&mut self, schema: &str) -> Result<&mut Library> {
        self.def_with(schema, Some(AliasAnalysisKind::FromSchema), Vec::new())
    }

    /// `def` with an explicit alias-analysis kind (`None`: leave it unset, as
    /// `def(parseSchema(...))` does) and tags.
    #[doc(alias = "def")]
    pub fn def_with(
        &mut self,
        schema: &str,
        alias_analysis: Option<AliasAnalysisKind>,
        tags: Vec<String>,
    ) -> Result<&mut Library> {
        let schema = self.qualify_schema(schema)?;
        let handle =
            self.dispatcher
                .register_def(schema, self.debug_string(), alias_analysis, tags)?;
        self.handles.push(handle);
        Ok(self)
    }

    /// `def(name_or_schema, f)`: defines an operator and registers `f` as
    /// its catch-all kernel (or at `f`'s key). With a bare name the schema is
    /// inferred from `f` and alias analysis is CONSERVATIVE.
    #[doc(alias = "def")]
    pub fn def_fn(&mut self, name_or_schema: &str, f: CppFunction) -> Result<&mut Library> {
        let (schema, alias) = if name_or_schema.contains('(') {
            (
                self.qualify_schema(name_or_schema)?,
                AliasAnalysisKind::FromSchema,
            )
        } else {
            let Some(inferred) = f.kernel.inferred_schema() else {
                return Err(self.error(format!(
                    "def(\"{name_or_schema}\"): Full schema string was not specified, and we couldn't infer schema either.  Please explicitly provide a schema string.  "
                )));
            };
            let text = format!("{name_or_schema}{inferred}");
            (self.qualify_schema(&text)?, AliasAnalysisKind::Conservative)
        };
        let name = schema.operator_name().clone();
        let def =
            self.dispatcher
                .register_def(schema, self.debug_string(), Some(alias), Vec::new())?;
        let key = f.key.or(self.key);
        let debug = f.debug.unwrap_or_else(|| self.debug_string());
        let kernel = self.dispatcher.register_impl(name, key, f.kernel, debug)?;
        self.handles.push(def);
        self.handles.push(kernel);
        Ok(self)
    }

    /// `impl(name, f)`: registers `f` for the operator `name` (`op`,
    /// `op.overload` or `ns::op.overload`) at the block's key, or at `f`'s.
    #[doc(alias = "impl")]
    pub fn impl_(&mut self, name: &str, f: impl Into<CppFunction>) -> Result<&mut Library> {
        let f = f.into();
        let name = self.qualify_name(name)?;
        let key = match (self.key, f.key) {
            (Some(lib_key), Some(f_key)) if lib_key != f_key => {
                return Err(self.error(format!(
                    "impl(\"{name}\", ...): Explicitly provided dispatch key ({f_key}) is inconsistent with the dispatch key of the enclosing {} block ({lib_key}).  Please declare a separate {} block for this dispatch key and move your impl() there.  ",
                    self.kind.name(),
                    self.kind.name()
                )))
            }
            (lib_key, f_key) => f_key.or(lib_key),
        };
        let debug = f.debug.unwrap_or_else(|| self.debug_string());
        let handle = self.dispatcher.register_impl(name, key, f.kernel, debug)?;
        self.handles.push(handle);
        Ok(self)
    }

    /// Registers a fallthrough kernel, the same as `impl(name,
    /// CppFunction::fallthrough())` for one operator.
    pub fn impl_fallthrough(&mut self, name: &str) -> Result<&mut Library> {
        self.impl_(name, CppFunction::fallthrough())
    }

    /// `fallback(f)`: a backend fallback for the block's key (IMPL blocks of
    /// namespace `_` only).
    pub fn fallback(&mut self, f: impl Into<CppFunction>) -> Result<&mut Library> {
        let f = f.into();
        if self.kind != LibraryKind::Impl {
            return Err(self.error(format!(
                "fallback(...): Cannot define an operator inside of a {} block.  Did you mean to call this function inside a TORCH_LIBRARY_IMPL block?  ",
                self.kind.name()
            )));
        }
        if let Some(ns) = &self.ns {
            let key = self.key.map_or("CatchAll".to_string(), |k| k.to_string());
            return Err(self.error(format!(
                "fallback(...): Fallback functions which apply to only a single namespace (you specified {ns}) are not supported.  If you intended to apply this fallback function globally, please define a separate block:\n\n    TORCH_LIBRARY_IMPL(_, {key}, m) {{ m.fallback(...); }}\n\n"
            )));
        }
        let Some(key) = f.key.or(self.key) else {
            return Err(self.error(
                "fallback(...): a fallback needs a dispatch key: declare the block with one.  "
                    .into(),
            ));
        };
        let debug = f.debug.unwrap_or_else(|| self.debug_string());
        let handle = self.dispatcher.register_fallback(key, f.kernel, debug)?;
        self.handles.push(handle);
        Ok(self)
    }

    /// Keeps every registration of this block for the life of the dispatcher.
    pub fn leak(mut self) {
        for handle in self.handles.drain(..) {
            handle.forget();
        }
    }

    /// Parses a schema and checks or adds the namespace.
    fn qualify_schema(&self, text: &str) -> Result<FunctionSchema> {
        if self.kind == LibraryKind::Impl {
            let name = text.split('(').next().unwrap_or(text);
            return Err(self.error(format!(
                "def(\"{name}\"): Cannot define an operator inside of a TORCH_LIBRARY_IMPL block.  All def()s should be placed in the (unique) TORCH_LIBRARY block for their namespace.  "
            )));
        }
        let ns = self.ns.as_deref().unwrap_or("_");
        let head = text.split('(').next().unwrap_or(text);
        let text = match head.split_once("::") {
            Some((given, _)) if given != ns => {
                return Err(self.error(format!(
                    "Explicitly provided namespace ({given}) in schema string does not match namespace of enclosing {} block ({ns}).  Move this definition to the (unique) TORCH_LIBRARY block corresponding to this namespace (and consider deleting the namespace from your schema string.)  ",
                    self.kind.name()
                )))
            }
            Some(_) => text.to_string(),
            None => format!("{ns}::{text}"),
        };
        FunctionSchema::parse(&text)
    }

    /// Parses an operator name and checks or adds the namespace.
    fn qualify_name(&self, name: &str) -> Result<OperatorName> {
        let full = match (name.split_once("::"), &self.ns) {
            (Some((given, _)), Some(ns)) if given != ns => {
                return Err(self.error(format!(
                    "impl(\"{name}\", ...): Explicitly provided namespace ({given}) in operator name does not match namespace of enclosing {0} block ({ns}).  Move this definition to the {0} block corresponding to this namespace (and consider deleting the namespace from your schema string.)  ",
                    self.kind.name()
                )))
            }
            (Some(_), _) => name.to_string(),
            (None, Some(ns)) => format!("{ns}::{name}"),
            (None, None) => {
                return Err(self.error(format!(
                    "impl(\"{name}\", ...): an operator name needs a namespace in a block for namespace _.  "
                )))
            }
        };
        OperatorName::parse(&full)
    }
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Library({} {} at {}:{})",
            self.kind.name(),
            self.ns.as_deref().unwrap_or("_"),
            self.file,
            self.line
        )
    }
}

impl<F> From<F> for CppFunction
where
    F: Into<KernelFunction>,
{
    fn from(f: F) -> CppFunction {
        CppFunction::from_kernel(f.into())
    }
}

/// A block registered statically (see the module docs).
pub struct StaticLibrary {
    /// The block's kind.
    pub kind: LibraryKind,
    /// Its namespace (`_` for global fallbacks).
    pub ns: &'static str,
    /// Its dispatch key (`None`: catch-all).
    pub key: Option<DispatchKey>,
    /// Source file.
    pub file: &'static str,
    /// Source line.
    pub line: u32,
    /// The body.
    pub init: fn(&mut Library) -> Result<()>,
}

#[doc(hidden)]
pub use linkme as __linkme;

/// Every statically registered block linked into the program.
#[linkme::distributed_slice]
pub static STATIC_LIBRARIES: [StaticLibrary];

/// A static registration block that failed. Its own registrations are
/// undone; every other block still ran. See
/// [`Dispatcher::static_registration_errors`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaticRegistrationError {
    /// The block's kind.
    pub kind: LibraryKind,
    /// Its namespace (`_` for global fallbacks).
    pub ns: &'static str,
    /// Its dispatch key (`None`: catch-all).
    pub key: Option<DispatchKey>,
    /// Source file of the block.
    pub file: &'static str,
    /// Source line of the block.
    pub line: u32,
    /// Why it failed.
    pub error: Error,
}

impl std::fmt::Display for StaticRegistrationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}({}", self.kind.name(), self.ns)?;
        if let Some(key) = self.key {
            write!(f, ", {key}")?;
        }
        write!(
            f,
            ") block at {}:{} failed and registered nothing: {}",
            self.file,
            self.line,
            self.error.message()
        )
    }
}

/// Runs every linked static block on `dispatcher`; returns the blocks that
/// failed (the caller records and reports them).
pub(crate) fn run_static_registrations(dispatcher: &Dispatcher) -> Vec<StaticRegistrationError> {
    let mut blocks: Vec<&StaticLibrary> = STATIC_LIBRARIES.iter().collect();
    // Backend fallbacks (`_` blocks, which need no operator) first, so every
    // operator is created with them already in place rather than refreshed
    // once per fallback key; then definitions, then implementations;
    // otherwise link order.
    blocks.sort_by_key(|b| match (b.kind, b.ns) {
        (LibraryKind::Impl, "_") => 0,
        (LibraryKind::Impl, _) => 2,
        _ => 1,
    });
    let mut errors = Vec::new();
    for block in blocks {
        let result = Library::with_dispatcher(
            dispatcher, block.kind, block.ns, block.key, block.file, block.line,
        )
        .and_then(|mut lib| {
            (block.init)(&mut lib)?;
            lib.leak();
            Ok(())
        });
        if let Err(error) = result {
            errors.push(StaticRegistrationError {
                kind: block.kind,
                ns: block.ns,
                key: block.key,
                file: block.file,
                line: block.line,
                error,
            });
        }
    }
    errors
}

/// Shared body of the static registration macros.
#[doc(hidden)]
#[macro_export]
macro_rules! __static_library {
    ($kind:expr, $ns:expr, $key:expr, $init:expr) => {
        const _: () = {
            #[$crate::library::__linkme::distributed_slice($crate::library::STATIC_LIBRARIES)]
            #[linkme(crate = $crate::library::__linkme)]
            static BLOCK: $crate::library::StaticLibrary = $crate::library::StaticLibrary {
                kind: $kind,
                ns: $ns,
                key: $key,
                file: file!(),
                line: line!(),
                init: $init,
            };
        };
    };
}

/// `TORCH_LIBRARY(ns, m) { ... }`: `torch_library!(ns, |m| { m.def("...")?; Ok(()) });`
#[macro_export]
#[doc(alias = "TORCH_LIBRARY")]
macro_rules! torch_library {
    ($ns:ident, $init:expr) => {
        $crate::__static_library!(
            $crate::library::LibraryKind::Def,
            stringify!($ns),
            None,
            $init
        );
    };
}

/// `TORCH_LIBRARY_FRAGMENT(ns, m) { ... }`.
#[macro_export]
#[doc(alias = "TORCH_LIBRARY_FRAGMENT")]
macro_rules! torch_library_fragment {
    ($ns:ident, $init:expr) => {
        $crate::__static_library!(
            $crate::library::LibraryKind::Fragment,
            stringify!($ns),
            None,
            $init
        );
    };
}

/// `TORCH_LIBRARY_IMPL(ns, Key, m) { ... }` (`_` as `ns` for fallbacks).
#[macro_export]
#[doc(alias = "TORCH_LIBRARY_IMPL")]
macro_rules! torch_library_impl {
    ($ns:tt, $key:ident, $init:expr) => {
        $crate::__static_library!(
            $crate::library::LibraryKind::Impl,
            stringify!($ns),
            Some($crate::__c10::DispatchKey::$key),
            $init
        );
    };
}
