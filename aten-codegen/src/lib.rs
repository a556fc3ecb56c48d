//! `aten-codegen`: the model of PyTorch's `native_functions.yaml` and
//! `tags.yaml` (PyTorch's `torchgen/model.py` and the parsing half of
//! `torchgen/gen.py`), on which the generators build.
//!
//! ```
//! use aten_codegen::{NativeFunctions, Tags, Variant};
//! use c10_core::DispatchKey;
//!
//! let tags = Tags::parse("- tag: pointwise\n  desc: elementwise\n", "tags.yaml").unwrap();
//! let yaml = "
//! - func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
//!   variants: function, method
//!   dispatch:
//!     CPU, CUDA: add_tensor
//!     CompositeExplicitAutograd: add_composite
//!   tags: [pointwise]
//! ";
//! let fns = NativeFunctions::parse(yaml, "native_functions.yaml", &tags).unwrap();
//! let add = fns.get("add.Tensor").unwrap();
//! assert!(add.variants.contains(Variant::Method));
//! assert_eq!(add.kernel(DispatchKey::CUDA).unwrap().kernel, "add_tensor");
//! assert_eq!(add.func.arguments()[2].name(), "alpha");
//!
//! let broken = "- func: add.Tensor(Tensor self) -> Tensor\n  dispatch:\n    CPUU: add_cpu\n";
//! let errors = NativeFunctions::parse(broken, "nf.yaml", &tags).unwrap_err();
//! assert_eq!(errors.to_string(), "nf.yaml:3: unknown dispatch key 'CPUU'");
//! ```
//!
//! # What it gives a generator
//!
//! [`NativeFunctions`] holds the functions in file order
//! ([`NativeFunctions::iter`]), looks them up by operator name
//! ([`NativeFunctions::get`]), and groups related variants
//! ([`NativeFunctions::groups`], [`NativeFunctions::structured_families`],
//! [`NativeFunctions::grouped`], [`NativeFunctions::out_variant_of`]). Each
//! [`NativeFunction`] carries its parsed [`FunctionSchema`](aten_boxing::schema::FunctionSchema)
//! and source text, [`SchemaKind`], [`Variants`], [`DispatchEntry`]s (one
//! per key, with the implied `CompositeImplicitAutograd` entry of a function
//! without `dispatch:`), structured relationships, tags and every other key.
//! [`Arguments`] splits a schema into `self`, `TensorOptions` and out
//! arguments the way the generators need.
//!
//! # Validation
//!
//! Loading checks what torchgen checks, and reports every problem as
//! `FILE:LINE: message` (torchgen stops at the first, with a Python
//! traceback): malformed YAML, unknown or duplicate keys, unknown tags, bad
//! dispatch keys and kernel names, `func` schemas that do not parse (with
//! the parser's message) or break the native-function schema rules, bad
//! `variants`/`device_check`/booleans, duplicate functions, structured
//! functions that are not out variants or have no functional variant,
//! `structured_delegate`s that are missing or not structured, and the other
//! rules of torchgen's `NativeFunction`, `NativeFunctionsGroup` and
//! `error_check_native_functions`. Lines point at the key at fault where
//! there is one, else at the entry's `func:` line.
//!
//! # The YAML crate
//!
//! YAML is read with [`saphyr-parser`](https://crates.io/crates/saphyr-parser)
//! 0.3, the event parser of the `saphyr` project:
//!
//! - it is maintained (the `saphyr-rs` organisation continues `yaml-rust`
//!   and `yaml-rust2`, with 2025 releases), whereas the classic `serde_yaml`
//!   is archived and its forks are either unmaintained or of doubtful
//!   provenance;
//! - every event carries a span with its line, which is what errors need
//!   (`yaml-rust2`'s and `saphyr`'s loaded trees drop or wrap marks, and
//!   serde-based crates lose them after deserialising);
//! - scalars borrow from the input, so loading PyTorch's 16,000-line file
//!   allocates little (see the `codegen/load_native_functions` benchmark);
//! - it is small (two dependencies, `arraydeque` and `thiserror`), has no
//!   `unsafe` and no default features to turn off.
//!
//! The tree with lines is built here ([`yaml_loader`]), so the choice stays
//! behind one module.
//!
//! # Modules
//!
//! - [`yaml_loader`]: YAML text to nodes with lines;
//! - `tags`: [`Tags`] from `tags.yaml`;
//! - `operator_name`: [`BaseOperatorName`] and operator references;
//! - `arguments`: [`Arguments`], [`SchemaKind`], [`signature`];
//! - `dispatch`, `ufunc`, `precompute`: the values of `dispatch:`,
//!   `ufunc_inner_loop:` and `precomputed:`;
//! - `native_function`: [`NativeFunction`] and its small enums;
//! - `from_yaml`: one entry to a function, with its checks;
//! - `native_functions`: the [`NativeFunctions`] collection and groups;
//! - `validate`: checks across functions;
//! - `derivatives`: `derivatives.yaml` ([`Derivatives`]);
//! - `error`: [`Location`], [`YamlError`], [`YamlErrors`].

mod arguments;
mod derivatives;
mod dispatch;
mod error;
mod from_yaml;
pub mod gen;
pub mod kernel_index;
mod native_function;
mod native_functions;
mod operator_name;
mod precompute;
mod tags;
mod ufunc;
mod validate;
pub mod yaml_loader;

pub use arguments::{signature, Arguments, SchemaKind};
pub use derivatives::{DerivativeEntry, Derivatives, Differentiable, Formula, Formulas};
pub use dispatch::{DispatchEntry, COMPOSITE_KEYS, STRUCTURED_DISPATCH_KEYS, UFUNC_DISPATCH_KEYS};
pub use error::{Location, YamlError, YamlErrors};
pub use from_yaml::NATIVE_FUNCTION_KEYS;
pub use native_function::{DeviceCheckType, NativeFunction, Variant, Variants};
pub use native_functions::{GroupedNativeFunction, NativeFunctions, NativeFunctionsGroup};
pub use operator_name::{parse_operator_name, BaseOperatorName};
pub use precompute::{Precompute, PrecomputedArgument};
pub use tags::{Tag, Tags};
pub use ufunc::{UfuncInnerLoop, UfuncKey};
