//! `NativeFunction`: one entry of `native_functions.yaml`, parsed and
//! checked (torchgen's `NativeFunction`), with the small enums its keys take.
//!
//! Every key PyTorch's file uses is modelled: `func`, `variants`,
//! `dispatch`, `structured`, `structured_delegate`, `structured_inherits`,
//! `precomputed`, `autogen`, `tags`, `device_check`, `device_guard`,
//! `manual_cpp_binding`, `manual_kernel_registration`, `python_module`,
//! `category_override`, `cpp_no_default_args`, `ufunc_inner_loop` and
//! `use_const_ref_for_mutable_tensors`. The queries torchgen derives
//! (`has_composite_*_kernel`, `is_abstract`, `root_name`, `kind`) are
//! methods.

use std::fmt;

use aten_boxing::schema::{FunctionSchema, OperatorName};
use c10_core::DispatchKey;

use crate::arguments::{Arguments, SchemaKind};
use crate::dispatch::DispatchEntry;
use crate::error::Location;
use crate::operator_name::BaseOperatorName;
use crate::precompute::Precompute;
use crate::ufunc::UfuncInnerLoop;

/// A way a function is exposed in the typed API.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// A free function (`at::add`).
    Function,
    /// A `Tensor` method (`t.add(...)`).
    Method,
}

impl Variant {
    /// The name used in `variants:` (`function`, `method`).
    pub fn name(self) -> &'static str {
        match self {
            Variant::Function => "function",
            Variant::Method => "method",
        }
    }
}

/// The set of [`Variant`]s of a function; `function` when `variants:` is
/// absent.
///
/// ```
/// use aten_codegen::{Variant, Variants};
///
/// let v = Variants::FUNCTION_AND_METHOD;
/// assert!(v.contains(Variant::Method));
/// assert_eq!(v.to_string(), "function, method");
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Variants {
    function: bool,
    method: bool,
}

impl Variants {
    /// Only `function`.
    pub const FUNCTION: Variants = Variants {
        function: true,
        method: false,
    };
    /// Only `method`.
    pub const METHOD: Variants = Variants {
        function: false,
        method: true,
    };
    /// Both.
    pub const FUNCTION_AND_METHOD: Variants = Variants {
        function: true,
        method: true,
    };

    /// Whether `variant` is in the set.
    pub fn contains(self, variant: Variant) -> bool {
        match variant {
            Variant::Function => self.function,
            Variant::Method => self.method,
        }
    }

    /// The variants in the set, `function` first.
    pub fn iter(self) -> impl Iterator<Item = Variant> {
        [
            (self.function, Variant::Function),
            (self.method, Variant::Method),
        ]
        .into_iter()
        .filter_map(|(has, v)| has.then_some(v))
    }

    /// The set with `variant` added.
    pub(crate) fn with(mut self, variant: Variant) -> Variants {
        match variant {
            Variant::Function => self.function = true,
            Variant::Method => self.method = true,
        }
        self
    }

    /// The empty set (only while parsing).
    pub(crate) const NONE: Variants = Variants {
        function: false,
        method: false,
    };
}

impl Default for Variants {
    fn default() -> Variants {
        Variants::FUNCTION
    }
}

/// `function`, `method` or `function, method`.
impl fmt::Display for Variants {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(v.name())?;
        }
        Ok(())
    }
}

/// Whether generated code checks that tensor arguments share a device
/// (torchgen's `DeviceCheckType`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum DeviceCheckType {
    /// No check (`device_check: NoCheck`).
    NoCheck,
    /// All tensor arguments must be on the same device (the default).
    #[default]
    ExactSame,
}

/// One function of `native_functions.yaml`.
///
/// Values of this type come from
/// [`NativeFunctions`](crate::NativeFunctions), which hands out shared
/// references only, so they do not change after validation.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct NativeFunction {
    /// The operator namespace: the one `func:` names (`quantized::...`), or
    /// `aten`.
    pub namespace: String,
    /// The schema, parsed by the project's parser (without namespace, as
    /// written: `add.Tensor(Tensor self, ...) -> Tensor`).
    pub func: FunctionSchema,
    /// The `func:` text as written.
    pub func_text: String,
    /// The operator name taken apart (`add_` is the in-place `add`).
    pub base_name: BaseOperatorName,
    /// What the schema does with its outputs.
    pub kind: SchemaKind,
    /// Where the entry is (its `func:` line).
    pub location: Location,
    /// `variants:` (default `function`).
    pub variants: Variants,
    /// `dispatch:` flattened to one entry per key, in the order written;
    /// ends with the implicit `CompositeImplicitAutograd` entry when the
    /// function has no `dispatch:` and is not structured (see
    /// [`DispatchEntry::implicit`]). The CPU and CUDA kernels that ufunc
    /// codegen makes from [`ufunc_inner_loop`](Self::ufunc_inner_loop) are
    /// not listed.
    pub dispatch: Vec<DispatchEntry>,
    /// `structured: True`: an out function with separate meta and impl.
    pub structured: bool,
    /// `structured_delegate:`: the structured out function this functional
    /// or in-place function is implemented by.
    pub structured_delegate: Option<OperatorName>,
    /// `structured_inherits:`: the class the meta function's struct derives
    /// from in PyTorch (`TensorIteratorBase`).
    pub structured_inherits: Option<String>,
    /// `precomputed:`.
    pub precomputed: Option<Precompute>,
    /// `autogen:`: the functions codegen is expected to generate for this
    /// one (usually its out variant).
    pub autogen: Vec<OperatorName>,
    /// `ufunc_inner_loop:`, sorted by key.
    pub ufunc_inner_loop: Vec<UfuncInnerLoop>,
    /// `tags:` in the order written, without repeats.
    pub tags: Vec<String>,
    /// `device_check:`.
    pub device_check: DeviceCheckType,
    /// `device_guard:` (default true).
    pub device_guard: bool,
    /// `manual_cpp_binding:`: the typed API binding is written by hand.
    pub manual_cpp_binding: bool,
    /// `manual_kernel_registration:`: kernels are registered by hand, so
    /// no `dispatch:` is allowed.
    pub manual_kernel_registration: bool,
    /// `python_module:` (`nn`, `linalg`, `special`, `fft` ...).
    pub python_module: Option<String>,
    /// `category_override:` (`factory`, `dummy`).
    pub category_override: Option<String>,
    /// `cpp_no_default_args:`: arguments whose default the typed API omits.
    pub cpp_no_default_args: Vec<String>,
    /// `use_const_ref_for_mutable_tensors:`.
    pub use_const_ref_for_mutable_tensors: bool,
}

impl NativeFunction {
    /// The operator name without namespace (`add.Tensor`).
    pub fn name(&self) -> &OperatorName {
        self.func.operator_name()
    }

    /// The qualified operator name (`aten::add.Tensor`).
    pub fn qualified_name(&self) -> OperatorName {
        OperatorName::new(
            format!("{}::{}", self.namespace, self.func.name()),
            self.func.overload_name(),
        )
    }

    /// The base name without in-place marker (`add` for `add_.Tensor`),
    /// torchgen's `root_name`.
    pub fn root_name(&self) -> &str {
        self.base_name.base()
    }

    /// The schema's arguments split the codegen's way.
    pub fn arguments(&self) -> Arguments<'_> {
        Arguments::new(&self.func)
    }

    /// Whether this is an out variant: it has out arguments (kind
    /// [`Out`](SchemaKind::Out) or [`Scratch`](SchemaKind::Scratch)),
    /// torchgen's `is_out_fn`.
    pub fn is_out_fn(&self) -> bool {
        matches!(self.kind, SchemaKind::Out | SchemaKind::Scratch)
    }

    /// Whether the function is part of a structured family: structured
    /// itself or delegating to a structured function.
    pub fn part_of_structured_group(&self) -> bool {
        self.structured || self.structured_delegate.is_some()
    }

    /// Whether the function has the tag `name`.
    pub fn has_tag(&self, name: &str) -> bool {
        self.tags.iter().any(|t| t == name)
    }

    /// The kernel for `key`, if `dispatch` names one.
    pub fn kernel(&self, key: DispatchKey) -> Option<&DispatchEntry> {
        self.dispatch.iter().find(|e| e.key == key)
    }

    /// The dispatch entries that were written in the YAML.
    pub fn explicit_dispatch(&self) -> impl Iterator<Item = &DispatchEntry> {
        self.dispatch.iter().filter(|e| !e.implicit)
    }

    /// Whether a `CompositeImplicitAutograd` kernel serves the function
    /// (written or implied).
    pub fn has_composite_implicit_autograd_kernel(&self) -> bool {
        self.kernel(DispatchKey::CompositeImplicitAutograd)
            .is_some()
    }

    /// Whether a `CompositeImplicitAutogradNestedTensor` kernel serves it.
    pub fn has_composite_implicit_autograd_nested_tensor_kernel(&self) -> bool {
        self.kernel(DispatchKey::CompositeImplicitAutogradNestedTensor)
            .is_some()
    }

    /// Whether a `CompositeExplicitAutograd` kernel serves it.
    pub fn has_composite_explicit_autograd_kernel(&self) -> bool {
        self.kernel(DispatchKey::CompositeExplicitAutograd)
            .is_some()
    }

    /// Whether a `CompositeExplicitAutogradNonFunctional` kernel serves it.
    pub fn has_composite_explicit_autograd_non_functional_kernel(&self) -> bool {
        self.kernel(DispatchKey::CompositeExplicitAutogradNonFunctional)
            .is_some()
    }

    /// Whether any composite (backend-independent) kernel serves it.
    pub fn has_composite_kernel(&self) -> bool {
        self.has_composite_implicit_autograd_kernel()
            || self.has_composite_explicit_autograd_kernel()
            || self.has_composite_explicit_autograd_non_functional_kernel()
    }

    /// torchgen's `is_abstract`: the function's dispatch differs between
    /// backends, that is, it is structured-delegated or its kernels are not
    /// just `CompositeImplicitAutograd` (and its nested-tensor twin). An
    /// empty `dispatch: {}` counts as abstract, as in torchgen.
    pub fn is_abstract(&self) -> bool {
        let composite_implicit_only = !self.dispatch.is_empty()
            && self.dispatch.iter().all(|e| {
                e.key == DispatchKey::CompositeImplicitAutograd
                    || e.key == DispatchKey::CompositeImplicitAutogradNestedTensor
            });
        self.structured_delegate.is_some() || !composite_implicit_only
    }

    /// The name of the C++/Rust function torchgen derives from the schema
    /// (`cpp.name`): the operator name as written plus `_out` for out
    /// variants (`add_out`, `add_`, `__iand__`).
    pub fn cpp_name(&self) -> String {
        let mut name = self.base_name.to_string();
        if self.is_out_fn() {
            name.push_str("_out");
        }
        name
    }
}
