//! `NativeFunctions`: every function of a `native_functions.yaml`, in file
//! order, with lookups by operator name and the groups of related variants
//! (torchgen's `parse_native_yaml`, `pre_group_native_functions` and
//! `get_grouped_native_functions`).
//!
//! A *group* ([`NativeFunctionsGroup`]) is the functional, in-place,
//! mutable and out variants of one operator: the functions whose
//! [`signature`](crate::signature) is the same, when there is both a
//! functional and an out variant among them. A group whose out variant is
//! `structured: True` is a *structured family*: its functional and in-place
//! variants name the out variant as their `structured_delegate`.
//!
//! ```
//! use aten_codegen::{NativeFunctions, Tags};
//!
//! let tags = Tags::parse("- tag: pointwise\n  desc: elementwise\n", "tags.yaml").unwrap();
//! let yaml = "
//! - func: abs(Tensor self) -> Tensor
//!   variants: function, method
//!   structured_delegate: abs.out
//!   tags: pointwise
//!
//! - func: abs_(Tensor(a!) self) -> Tensor(a!)
//!   variants: function, method
//!   structured_delegate: abs.out
//!
//! - func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
//!   structured: True
//!   dispatch:
//!     CPU, CUDA: abs_out
//! ";
//! let fns = NativeFunctions::parse(yaml, "native_functions.yaml", &tags).unwrap();
//! assert_eq!(fns.len(), 3);
//! let family = fns.structured_families().next().unwrap();
//! assert_eq!(family.out.name().to_string(), "abs.out");
//! assert_eq!(family.inplace.unwrap().name().to_string(), "abs_");
//! assert_eq!(fns.out_variant_of("abs").unwrap().location.line(), 11);
//! assert_eq!(fns.get("abs.out").unwrap().dispatch.len(), 2);
//! ```

use std::collections::HashMap;

use aten_boxing::schema::OperatorName;

use crate::arguments::{signature, SchemaKind};
use crate::error::{Location, YamlError, YamlErrors};
use crate::from_yaml::parse_native_function;
use crate::native_function::NativeFunction;
use crate::tags::Tags;
use crate::validate::check_across_functions;
use crate::yaml_loader;

/// Indices of a group's members in [`NativeFunctions`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct GroupSlots {
    pub(crate) functional: Option<usize>,
    pub(crate) inplace: Option<usize>,
    pub(crate) mutable: Option<usize>,
    pub(crate) out: Option<usize>,
    pub(crate) scratch: Option<usize>,
}

impl GroupSlots {
    /// The slot of a schema kind.
    pub(crate) fn slot(&mut self, kind: SchemaKind) -> &mut Option<usize> {
        match kind {
            SchemaKind::Functional => &mut self.functional,
            SchemaKind::Inplace => &mut self.inplace,
            SchemaKind::Mutable => &mut self.mutable,
            SchemaKind::Out => &mut self.out,
            SchemaKind::Scratch => &mut self.scratch,
        }
    }

    /// Whether the members form a group (a functional and an out variant).
    pub(crate) fn is_group(&self) -> bool {
        self.functional.is_some() && self.out.is_some()
    }
}

/// The variants of one operator that share a signature: always a
/// functional and an out variant, maybe an in-place and a mutable one
/// (torchgen's `NativeFunctionsGroup`).
#[derive(Clone, Copy, Debug)]
pub struct NativeFunctionsGroup<'a> {
    /// The functional variant (`add.Tensor`).
    pub functional: &'a NativeFunction,
    /// The in-place variant (`add_.Tensor`).
    pub inplace: Option<&'a NativeFunction>,
    /// The mutable variant, if any (writes positional arguments).
    pub mutable: Option<&'a NativeFunction>,
    /// The out variant (`add.out`).
    pub out: &'a NativeFunction,
}

impl<'a> NativeFunctionsGroup<'a> {
    /// Whether the group is a structured family: its out variant is
    /// `structured: True`.
    pub fn structured(&self) -> bool {
        self.out.structured
    }

    /// The members: functional, out, then in-place and mutable when present
    /// (torchgen's order).
    pub fn functions(&self) -> impl Iterator<Item = &'a NativeFunction> {
        [
            Some(self.functional),
            Some(self.out),
            self.inplace,
            self.mutable,
        ]
        .into_iter()
        .flatten()
    }

    /// The base name shared by the members (`add`).
    pub fn root_name(&self) -> &'a str {
        self.functional.root_name()
    }
}

/// A function on its own or a group, in the order torchgen's
/// `get_grouped_native_functions` gives them.
#[derive(Clone, Copy, Debug)]
pub enum GroupedNativeFunction<'a> {
    /// A function that is in no group.
    Function(&'a NativeFunction),
    /// A group of variants.
    Group(NativeFunctionsGroup<'a>),
}

/// The functions of one `native_functions.yaml`, validated.
#[derive(Clone, Debug, Default)]
pub struct NativeFunctions {
    functions: Vec<NativeFunction>,
    by_name: HashMap<OperatorName, usize>,
    /// Every set of functions sharing a signature, in first-seen order,
    /// with its members in file order.
    pre_groups: Vec<(GroupSlots, Vec<usize>)>,
    /// For each function, its pre-group.
    pre_group_of: Vec<usize>,
}

impl NativeFunctions {
    /// Parses and validates `native_functions.yaml` text; `file` names it
    /// in errors and tag names are checked against `tags`.
    ///
    /// # Errors
    ///
    /// Every problem found, each as `FILE:LINE: message`, in file order.
    pub fn parse(text: &str, file: &str, tags: &Tags) -> Result<NativeFunctions, YamlErrors> {
        let (functions, errors) = NativeFunctions::parse_lenient(text, file, Some(tags));
        if errors.is_empty() {
            Ok(functions)
        } else {
            Err(errors)
        }
    }

    /// Parses and validates, returning the functions that could be read
    /// beside every problem found (what `aten yaml check` reports). With
    /// `tags` `None`, tag names are not checked.
    ///
    /// An entry whose `func` is missing or does not parse, and the second
    /// entry of a duplicated name, are left out; other problems leave the
    /// function in with the offending key at its default.
    pub fn parse_lenient(
        text: &str,
        file: &str,
        tags: Option<&Tags>,
    ) -> (NativeFunctions, YamlErrors) {
        let file = Location::new(file, 1);
        let mut errors = Vec::new();
        let mut functions = NativeFunctions::default();
        let root = match yaml_loader::load(text, &file) {
            Ok(Some(root)) => root,
            Ok(None) => return (functions, YamlErrors::default()),
            Err(e) => return (functions, YamlErrors::new(vec![e])),
        };
        let Some(entries) = root.as_sequence() else {
            errors.push(YamlError::new(
                file.at_line(root.line()),
                format!(
                    "expected a sequence of function entries, found {}",
                    root.describe()
                ),
            ));
            return (functions, YamlErrors::new(errors));
        };
        functions.functions.reserve(entries.len());
        for entry in entries {
            let Some(f) = parse_native_function(entry, &file, tags, &mut errors) else {
                continue;
            };
            if let Some(&first) = functions.by_name.get(f.name()) {
                errors.push(YamlError::new(
                    f.location.clone(),
                    format!(
                        "duplicate function '{}' (first defined at {})",
                        f.name(),
                        functions.functions[first].location
                    ),
                ));
                continue;
            }
            functions
                .by_name
                .insert(f.name().clone(), functions.functions.len());
            functions.functions.push(f);
        }
        functions.build_pre_groups(&mut errors);
        check_across_functions(&functions, &mut errors);
        (functions, YamlErrors::new(errors))
    }

    /// Groups the functions by signature, reporting two of one kind.
    fn build_pre_groups(&mut self, errors: &mut Vec<YamlError>) {
        let mut by_signature: HashMap<String, usize> = HashMap::with_capacity(self.functions.len());
        self.pre_group_of = Vec::with_capacity(self.functions.len());
        for (i, f) in self.functions.iter().enumerate() {
            let sig = signature(&f.func, &f.base_name, &f.arguments());
            let next = self.pre_groups.len();
            let g = *by_signature.entry(sig).or_insert(next);
            if g == next {
                self.pre_groups.push((GroupSlots::default(), Vec::new()));
            }
            let (slots, members) = &mut self.pre_groups[g];
            let slot = slots.slot(f.kind);
            match slot {
                Some(other) => errors.push(YamlError::new(
                    f.location.clone(),
                    format!(
                        "{} has the same signature as {} (both are {} variants)",
                        f.name(),
                        self.functions[*other].name(),
                        f.kind.name()
                    ),
                )),
                None => *slot = Some(i),
            }
            members.push(i);
            self.pre_group_of.push(g);
        }
    }

    /// The group made of `slots`, if it is one.
    fn group(&self, slots: &GroupSlots) -> Option<NativeFunctionsGroup<'_>> {
        let get = |i: Option<usize>| i.map(|i| &self.functions[i]);
        Some(NativeFunctionsGroup {
            functional: get(slots.functional)?,
            inplace: get(slots.inplace),
            mutable: get(slots.mutable),
            out: get(slots.out)?,
        })
    }

    /// How many functions there are.
    pub fn len(&self) -> usize {
        self.functions.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.functions.is_empty()
    }

    /// The functions in file order.
    pub fn iter(&self) -> std::slice::Iter<'_, NativeFunction> {
        self.functions.iter()
    }

    /// The functions in file order, as a slice.
    pub fn as_slice(&self) -> &[NativeFunction] {
        &self.functions
    }

    /// The function called `name` (`add.Tensor`; `abs` for a default
    /// overload), without namespace.
    pub fn get(&self, name: &str) -> Option<&NativeFunction> {
        let (base, overload) = name.split_once('.').unwrap_or((name, ""));
        self.by_operator_name(&OperatorName::new(base, overload))
    }

    /// The function with operator name `name` (without namespace).
    pub fn by_operator_name(&self, name: &OperatorName) -> Option<&NativeFunction> {
        self.by_name.get(name).map(|&i| &self.functions[i])
    }

    /// Every group of related variants, in first-seen order.
    pub fn groups(&self) -> impl Iterator<Item = NativeFunctionsGroup<'_>> {
        self.pre_groups.iter().filter_map(|(s, _)| self.group(s))
    }

    /// The structured families: groups whose out variant is structured.
    pub fn structured_families(&self) -> impl Iterator<Item = NativeFunctionsGroup<'_>> {
        self.groups().filter(NativeFunctionsGroup::structured)
    }

    /// The out variants (functions with out arguments), in file order.
    pub fn out_variants(&self) -> impl Iterator<Item = &NativeFunction> {
        self.functions.iter().filter(|f| f.is_out_fn())
    }

    /// The functions and groups in torchgen's grouped order: for each
    /// signature in order of first appearance, its group, or its functions
    /// one by one when they do not form a group.
    pub fn grouped(&self) -> impl Iterator<Item = GroupedNativeFunction<'_>> {
        self.pre_groups
            .iter()
            .flat_map(move |(slots, members)| -> Vec<GroupedNativeFunction<'_>> {
                match self.group(slots) {
                    Some(g) => vec![GroupedNativeFunction::Group(g)],
                    None => members
                        .iter()
                        .map(|&i| GroupedNativeFunction::Function(&self.functions[i]))
                        .collect(),
                }
            })
    }

    /// The group the function called `name` belongs to.
    pub fn group_of(&self, name: &str) -> Option<NativeFunctionsGroup<'_>> {
        let f = self.get(name)?;
        let i = *self.by_name.get(f.name())?;
        let (slots, _) = &self.pre_groups[*self.pre_group_of.get(i)?];
        self.group(slots)
    }

    /// The out variant of the function called `name`: itself when it is
    /// one, else the out variant of its group.
    pub fn out_variant_of(&self, name: &str) -> Option<&NativeFunction> {
        let f = self.get(name)?;
        if f.is_out_fn() {
            return Some(f);
        }
        self.group_of(name).map(|g| g.out)
    }

    /// The index of a function and its signature group's slots (for
    /// validation).
    pub(crate) fn pre_group_slots(&self, index: usize) -> Option<&GroupSlots> {
        let g = *self.pre_group_of.get(index)?;
        self.pre_groups.get(g).map(|(s, _)| s)
    }
}

impl<'a> IntoIterator for &'a NativeFunctions {
    type Item = &'a NativeFunction;
    type IntoIter = std::slice::Iter<'a, NativeFunction>;
    fn into_iter(self) -> Self::IntoIter {
        self.functions.iter()
    }
}
