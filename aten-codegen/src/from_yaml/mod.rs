//! One `native_functions.yaml` entry to a [`NativeFunction`], with every
//! check that needs only that entry (torchgen's `NativeFunction.from_yaml`,
//! `NativeFunction.__post_init__` and the schema checks of
//! `FunctionSchema.__post_init__`).
//!
//! Problems are collected, not returned one at a time: an entry with a
//! schema that parses yields a function even when some keys are wrong (with
//! their defaults), so that one run reports everything; an entry whose
//! `func` is missing or does not parse yields none.
//!
//! - `fields`: the entry's keys and the [`Checker`](fields::Checker) that
//!   collects problems;
//! - `func`: the `func:` schema and its rules;
//! - `keys`: the value of every other key;
//! - `rules`: the rules across keys, `dispatch:` and `__post_init__`.

mod fields;
mod func;
mod keys;
mod rules;

use crate::error::{Location, YamlError};
use crate::native_function::NativeFunction;
use crate::tags::Tags;
use crate::yaml_loader::Node;

/// The keys an entry may have, as PyTorch's torchgen knows them.
pub const NATIVE_FUNCTION_KEYS: [&str; 18] = [
    "func",
    "variants",
    "dispatch",
    "structured",
    "structured_delegate",
    "structured_inherits",
    "precomputed",
    "autogen",
    "tags",
    "device_check",
    "device_guard",
    "manual_cpp_binding",
    "manual_kernel_registration",
    "python_module",
    "category_override",
    "cpp_no_default_args",
    "ufunc_inner_loop",
    "use_const_ref_for_mutable_tensors",
];

/// Parses and checks one entry; `tags` is `None` when tag names are not to
/// be checked.
pub(crate) fn parse_native_function(
    entry: &Node<'_>,
    file: &Location,
    tags: Option<&Tags>,
    errors: &mut Vec<YamlError>,
) -> Option<NativeFunction> {
    let mut c = fields::Checker { file, errors };
    let fields = fields::collect_fields(&mut c, entry)?;
    let func = func::parse_func(&mut c, entry, &fields)?;
    let keys = keys::parse_keys(&mut c, &fields, &func.func, tags);
    let mut f = NativeFunction {
        namespace: func.namespace,
        func: func.func,
        func_text: func.func_text,
        base_name: func.base_name,
        kind: func.kind,
        location: file.at_line(func.line),
        variants: keys.variants,
        dispatch: Vec::new(),
        structured: keys.structured,
        structured_delegate: keys.structured_delegate,
        structured_inherits: keys.structured_inherits,
        precomputed: keys.precomputed,
        autogen: keys.autogen,
        ufunc_inner_loop: keys.ufunc_inner_loop,
        tags: keys.tags,
        device_check: keys.device_check,
        device_guard: keys.device_guard,
        manual_cpp_binding: keys.manual_cpp_binding,
        manual_kernel_registration: keys.manual_kernel_registration,
        python_module: keys.python_module,
        category_override: keys.category_override,
        cpp_no_default_args: keys.cpp_no_default_args,
        use_const_ref_for_mutable_tensors: keys.use_const_ref_for_mutable_tensors,
    };
    f.dispatch = rules::complete_dispatch(&mut c, &f, &fields, keys.dispatch, func.factory);
    rules::check_post_init(&mut c, &f, &fields, func.random);
    Some(f)
}
