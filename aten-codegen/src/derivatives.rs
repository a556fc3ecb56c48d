//! `derivatives.yaml`: the derivative formulas of operators (torchgen's
//! `load_derivatives`), as a model the autograd generators read.
//!
//! Each entry is `- name: SCHEMA` followed by formulas. A key naming
//! arguments of the schema (`self`, or `self, other` for one formula of
//! several inputs) holds a backward formula: the gradient of those inputs
//! given `grad`. Any other key names outputs (`result`, or the returns'
//! names) and holds a forward-mode formula. `output_differentiability:`
//! lists, per return, whether it is differentiable. `dispatch:` instead
//! gives the formulas per autograd key (`Default`, `AutogradNestedTensor`,
//! ...).
//!
//! ```
//! use aten_codegen::Derivatives;
//!
//! let text = "- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  self: grad * other\n  other: grad * self\n  result: other_t * self_p + self_t * other_p\n";
//! let d = Derivatives::parse(text, "derivatives.yaml").unwrap();
//! let mul = d.get("mul.Tensor").unwrap();
//! let formulas = mul.formulas("Default").unwrap();
//! assert_eq!(formulas.backward()[1].inputs(), ["other"]);
//! assert_eq!(formulas.forward()[0].formula(), "other_t * self_p + self_t * other_p");
//! ```

use std::collections::HashMap;

use aten_boxing::schema::FunctionSchema;

use crate::error::{Location, YamlError, YamlErrors};
use crate::yaml_loader::{self, Node};

/// One formula and the names it is keyed by (inputs for a backward
/// formula, outputs for a forward one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Formula {
    names: Vec<String>,
    formula: String,
}

impl Formula {
    /// The inputs (or outputs) the formula is for, in the order written.
    pub fn inputs(&self) -> Vec<&str> {
        self.names.iter().map(String::as_str).collect()
    }

    /// The formula's text.
    pub fn formula(&self) -> &str {
        &self.formula
    }
}

/// The formulas of one autograd key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Formulas {
    backward: Vec<Formula>,
    forward: Vec<Formula>,
}

impl Formulas {
    /// Backward formulas, in file order.
    pub fn backward(&self) -> &[Formula] {
        &self.backward
    }

    /// Forward-mode formulas, in file order.
    pub fn forward(&self) -> &[Formula] {
        &self.forward
    }
}

/// Whether one output is differentiable (`output_differentiability`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Differentiable {
    /// `True`.
    Yes,
    /// `False`.
    No,
    /// A condition on the arguments, as written (`"!dtype || ..."`).
    When(String),
}

/// One entry of `derivatives.yaml`.
#[derive(Clone, Debug)]
pub struct DerivativeEntry {
    schema: FunctionSchema,
    location: Location,
    dispatch: Vec<(String, Formulas)>,
    output_differentiability: Option<Vec<Differentiable>>,
}

impl DerivativeEntry {
    /// The operator's schema.
    pub fn schema(&self) -> &FunctionSchema {
        &self.schema
    }

    /// Where the entry starts.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// The formulas of autograd key `key` (`Default` for an entry without
    /// `dispatch:`).
    pub fn formulas(&self, key: &str) -> Option<&Formulas> {
        self.dispatch
            .iter()
            .find_map(|(k, f)| (k == key).then_some(f))
    }

    /// Every autograd key with formulas, in file order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.dispatch.iter().map(|(k, _)| k.as_str())
    }

    /// Per return, whether it is differentiable (all, when not given).
    pub fn output_differentiability(&self) -> Option<&[Differentiable]> {
        self.output_differentiability.as_deref()
    }
}

/// The entries of a `derivatives.yaml`, by operator name.
#[derive(Clone, Debug, Default)]
pub struct Derivatives {
    entries: Vec<DerivativeEntry>,
    by_name: HashMap<String, usize>,
}

/// `name.overload` (or `name`) of a schema.
fn full_name(schema: &FunctionSchema) -> String {
    match schema.overload_name() {
        "" => schema.name().to_string(),
        o => format!("{}.{o}", schema.name()),
    }
}

impl Derivatives {
    /// Parses `derivatives.yaml` text; `file` names it in errors.
    ///
    /// # Errors
    ///
    /// Every problem found, each as `FILE:LINE: message`.
    pub fn parse(text: &str, file: &str) -> Result<Derivatives, YamlErrors> {
        let file = Location::new(file, 1);
        let mut errors = Vec::new();
        let mut out = Derivatives::default();
        let root = match yaml_loader::load(text, &file) {
            Ok(Some(root)) => root,
            Ok(None) => return Ok(out),
            Err(e) => return Err(YamlErrors::new(vec![e])),
        };
        let Some(entries) = root.as_sequence() else {
            let message = format!("expected a sequence of entries, found {}", root.describe());
            return Err(YamlErrors::new(vec![YamlError::new(
                file.at_line(root.line()),
                message,
            )]));
        };
        for node in entries {
            let Some(entry) = parse_entry(node, &file, &mut errors) else {
                continue;
            };
            let name = full_name(&entry.schema);
            if let Some(&first) = out.by_name.get(&name) {
                let message = format!(
                    "duplicate entry for '{name}' (first at {})",
                    out.entries[first].location
                );
                errors.push(YamlError::new(entry.location.clone(), message));
                continue;
            }
            out.by_name.insert(name, out.entries.len());
            out.entries.push(entry);
        }
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(YamlErrors::new(errors))
        }
    }

    /// The entry of `name` (`add.Tensor`, `abs`).
    pub fn get(&self, name: &str) -> Option<&DerivativeEntry> {
        self.by_name.get(name).map(|&i| &self.entries[i])
    }

    /// The entries in file order.
    pub fn iter(&self) -> std::slice::Iter<'_, DerivativeEntry> {
        self.entries.iter()
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// A scalar's text, or an error naming `what`.
fn scalar<'n>(
    node: &'n Node<'_>,
    what: &str,
    file: &Location,
    errors: &mut Vec<YamlError>,
) -> Option<&'n str> {
    let text = node.as_str();
    if text.is_none() {
        errors.push(YamlError::new(
            file.at_line(node.line()),
            format!("{what}: expected a string, found {}", node.describe()),
        ));
    }
    text
}

/// One entry: its schema (`name:`), then its `dispatch:`,
/// `output_differentiability:` and formula keys.
fn parse_entry(
    node: &Node<'_>,
    file: &Location,
    errors: &mut Vec<YamlError>,
) -> Option<DerivativeEntry> {
    let at = file.at_line(node.line());
    let Some(fields) = node.as_mapping() else {
        errors.push(YamlError::new(
            at,
            format!("expected a mapping, found {}", node.describe()),
        ));
        return None;
    };
    let schema = parse_name(fields, &at, file, errors)?;
    let mut entry = DerivativeEntry {
        schema,
        location: at,
        dispatch: Vec::new(),
        output_differentiability: None,
    };
    let mut defaults = Vec::new();
    for (key, value) in fields {
        let Some(k) = scalar(key, "key", file, errors) else {
            continue;
        };
        match k {
            "name" => {}
            "dispatch" => {
                let keys = parse_dispatch(&entry.schema, value, file, errors);
                entry.dispatch.extend(keys);
            }
            "output_differentiability" => {
                let flags = parse_output_differentiability(&entry.schema, value, file, errors);
                if flags.is_some() {
                    entry.output_differentiability = flags;
                }
            }
            _ => defaults.push((key.clone(), value.clone())),
        }
    }
    if !defaults.is_empty() {
        if !entry.dispatch.is_empty() {
            errors.push(YamlError::new(
                entry.location.clone(),
                "formulas beside 'dispatch:' (put them under 'Default')",
            ));
        }
        let f = parse_formulas(&entry.schema, &defaults, file, errors)?;
        entry.dispatch.push(("Default".to_string(), f));
    }
    Some(entry)
}

/// The schema of an entry's `name:` (the entry starts at `at`).
fn parse_name(
    fields: &[(Node<'_>, Node<'_>)],
    at: &Location,
    file: &Location,
    errors: &mut Vec<YamlError>,
) -> Option<FunctionSchema> {
    let name = fields.iter().find(|(k, _)| k.as_str() == Some("name"));
    let Some((_, name)) = name else {
        errors.push(YamlError::new(at.clone(), "entry without 'name'"));
        return None;
    };
    let text = scalar(name, "name", file, errors)?;
    match FunctionSchema::parse(text) {
        Ok(s) => Some(s),
        Err(e) => {
            errors.push(YamlError::new(
                file.at_line(name.line()),
                format!("name: {}", e.message().trim()),
            ));
            None
        }
    }
}

/// The formulas per autograd key of a `dispatch:` mapping, in file order.
fn parse_dispatch(
    schema: &FunctionSchema,
    value: &Node<'_>,
    file: &Location,
    errors: &mut Vec<YamlError>,
) -> Vec<(String, Formulas)> {
    let Some(keys) = value.as_mapping() else {
        errors.push(YamlError::new(
            file.at_line(value.line()),
            "dispatch: expected a mapping of autograd keys",
        ));
        return Vec::new();
    };
    let mut dispatch = Vec::new();
    for (dk, formulas) in keys {
        let Some(dk) = scalar(dk, "dispatch key", file, errors) else {
            continue;
        };
        let pairs = formulas.as_mapping().unwrap_or_default();
        if let Some(f) = parse_formulas(schema, pairs, file, errors) {
            dispatch.push((dk.to_string(), f));
        }
    }
    dispatch
}

/// The flags of `output_differentiability:`, one per return.
fn parse_output_differentiability(
    schema: &FunctionSchema,
    value: &Node<'_>,
    file: &Location,
    errors: &mut Vec<YamlError>,
) -> Option<Vec<Differentiable>> {
    let flags: Option<Vec<Differentiable>> = value.as_sequence().and_then(|items| {
        items
            .iter()
            .map(|n| match (n.as_bool(), n.as_str()) {
                (Some(true), _) => Some(Differentiable::Yes),
                (Some(false), _) => Some(Differentiable::No),
                (None, Some(c)) => Some(Differentiable::When(c.to_string())),
                (None, None) => None,
            })
            .collect()
    });
    match flags {
        Some(f) if f.len() == schema.returns().len() => return Some(f),
        Some(f) => errors.push(YamlError::new(
            file.at_line(value.line()),
            format!(
                "output_differentiability: {} flags for {} outputs",
                f.len(),
                schema.returns().len()
            ),
        )),
        None => errors.push(YamlError::new(
            file.at_line(value.line()),
            "output_differentiability: expected a list of booleans or conditions",
        )),
    }
    None
}

/// The names a formula may be keyed by as outputs: the returns' names, or
/// `result` (one return) and `result0`, `result1`, ... .
fn is_output_name(schema: &FunctionSchema, name: &str) -> bool {
    let returns = schema.returns();
    returns
        .iter()
        .any(|r| !r.name().is_empty() && r.name() == name)
        || (name == "result" && returns.len() == 1)
        || name
            .strip_prefix("result")
            .and_then(|i| i.parse::<usize>().ok())
            .is_some_and(|i| i < returns.len())
}

fn parse_formulas(
    schema: &FunctionSchema,
    pairs: &[(Node<'_>, Node<'_>)],
    file: &Location,
    errors: &mut Vec<YamlError>,
) -> Option<Formulas> {
    let mut formulas = Formulas::default();
    let mut seen: Vec<String> = Vec::new();
    let before = errors.len();
    for (key, value) in pairs {
        let Some(k) = scalar(key, "key", file, errors) else {
            continue;
        };
        let Some(text) = scalar(value, k, file, errors) else {
            continue;
        };
        let names: Vec<String> = k.split(',').map(|n| n.trim().to_string()).collect();
        let is_input = |n: &str| schema.arguments().iter().any(|a| a.name() == n);
        let at = file.at_line(key.line());
        let formula = Formula {
            names: names.clone(),
            formula: text.trim().to_string(),
        };
        if names.iter().all(|n| is_input(n)) {
            for n in &names {
                if seen.contains(n) {
                    errors.push(YamlError::new(
                        at.clone(),
                        format!("a second formula for input '{n}'"),
                    ));
                }
                seen.push(n.clone());
            }
            formulas.backward.push(formula);
        } else if names.iter().all(|n| is_output_name(schema, n)) {
            formulas.forward.push(formula);
        } else {
            errors.push(YamlError::new(
                at,
                format!(
                    "'{k}' names neither inputs nor outputs of {}",
                    full_name(schema)
                ),
            ));
        }
    }
    (errors.len() == before).then_some(formulas)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_bad_entries() {
        let text = "- name: abs(Tensor self) -> Tensor\n  input: grad\n- name: relu(Tensor self) -> Tensor\n  output_differentiability: [True, False]\n- name: abs(Tensor self) -> Tensor\n  self: grad\n";
        let errors = Derivatives::parse(text, "d.yaml").unwrap_err();
        let messages: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(
            messages,
            [
                "d.yaml:2: 'input' names neither inputs nor outputs of abs",
                "d.yaml:4: output_differentiability: 2 flags for 1 outputs",
            ]
        );
    }

    #[test]
    fn dispatch_sections_and_named_outputs() {
        let text = "- name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)\n  self: value_selecting_reduction_backward(grad, dim, indices, self.sizes(), keepdim)\n  values: gather_with_keepdimed_indices(self_t, dim, indices, keepdim)\n  output_differentiability: [True, False]\n- name: mean(Tensor self) -> Tensor\n  dispatch:\n    Default:\n      self: grad.expand(self.sizes()) / self.numel()\n      result: auto_linear\n    AutogradNestedTensor:\n      self: nested_mean_backward(grad)\n";
        let d = Derivatives::parse(text, "d.yaml").unwrap();
        let max = d.get("max.dim").unwrap();
        assert_eq!(
            max.output_differentiability(),
            Some(&[Differentiable::Yes, Differentiable::No][..])
        );
        assert_eq!(
            max.formulas("Default").unwrap().forward()[0].inputs(),
            ["values"]
        );
        let mean = d.get("mean").unwrap();
        assert_eq!(
            mean.keys().collect::<Vec<_>>(),
            ["Default", "AutogradNestedTensor"]
        );
    }
}
