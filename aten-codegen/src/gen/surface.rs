//! The whole operator surface: the library defines every function of
//! PyTorch's `native_functions.yaml` (and the variants its `autogen:` asks
//! for), in PyTorch's order, whether or not the project has kernels for
//! it. A function of the project's yaml is defined with the project's entry
//! (whose schema must be PyTorch's, character for character); the others
//! with PyTorch's schema and tags, and no kernel: calling one is the
//! dispatcher's "Could not run ..." error, as for any operator without a
//! kernel for the backend.

use std::collections::HashMap;

use aten_boxing::schema::FunctionSchema;

use super::{autogen, GenOp};

/// One definition: the schema (with namespace) and its tags.
pub type Def = (FunctionSchema, Vec<String>);

/// The definitions of `surface` (PyTorch's functions, in file order) and
/// their autogen variants, with the project's own definitions (`project`,
/// in the project's order) taking the place of PyTorch's where both have a
/// function; project functions PyTorch lacks come last. A project function
/// whose schema differs from PyTorch's is an error.
pub fn merge(project: &[Def], surface: &[GenOp]) -> Result<Vec<Def>, String> {
    let by_name: HashMap<String, usize> = project
        .iter()
        .enumerate()
        .map(|(i, (s, _))| (s.operator_name().to_string(), i))
        .collect();
    let mut used = vec![false; project.len()];
    let mut defs = Vec::with_capacity(surface.len() + project.len());
    let mut take = |schema: &FunctionSchema, tags: &[String], defs: &mut Vec<Def>| {
        let name = schema.operator_name().to_string();
        match by_name.get(&name) {
            Some(&i) => {
                let (ours, our_tags) = &project[i];
                if ours.to_string() != schema.to_string() {
                    return Err(format!(
                        "the project's schema of `{name}` is not PyTorch's:\n  project: {ours}\n  PyTorch: {schema}"
                    ));
                }
                if our_tags != tags {
                    return Err(format!(
                        "the project's tags of `{name}` are not PyTorch's: {our_tags:?} against {tags:?}"
                    ));
                }
                if !std::mem::replace(&mut used[i], true) {
                    defs.push(project[i].clone());
                }
            }
            None => defs.push((schema.clone(), tags.to_vec())),
        }
        Ok(())
    };
    for op in surface {
        take(&op.schema, &op.tags, &mut defs)?;
        for derived in autogen_defs(op) {
            take(&derived, &op.tags, &mut defs)?;
        }
    }
    defs.extend(
        project
            .iter()
            .zip(&used)
            .filter(|(_, used)| !**used)
            .map(|(def, _)| def.clone()),
    );
    Ok(defs)
}

/// The schemas of the variants `op`'s `autogen:` names that the derivation
/// can express.
fn autogen_defs(op: &GenOp) -> Vec<FunctionSchema> {
    // torchgen generates the `autogen:` of a CompositeImplicitAutograd
    // function only when it is tagged `core`.
    let implicit = op
        .dispatch
        .iter()
        .any(|(key, _)| *key == c10_core::DispatchKey::CompositeImplicitAutograd);
    if implicit && !op.tags.iter().any(|t| t == "core") {
        return Vec::new();
    }
    let ns = op.schema.name().split_once("::").map_or("", |(ns, _)| ns);
    op.autogen
        .iter()
        .filter_map(|name| {
            let base = name.name().rsplit("::").next().unwrap_or_default();
            let full = if ns.is_empty() {
                base.to_string()
            } else {
                format!("{ns}::{base}")
            };
            let text = autogen::autogen_schema(&op.schema, &full, name.overload_name()).ok()?;
            FunctionSchema::parse(&text).ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(text: &str, tags: &[&str], autogen: &[&str]) -> GenOp {
        GenOp {
            schema: FunctionSchema::parse(text).unwrap(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            dispatch: Vec::new(),
            method: false,
            structured: false,
            structured_delegate: None,
            autogen: autogen
                .iter()
                .map(|a| aten_boxing::schema::OperatorName::parse(a).unwrap())
                .collect(),
        }
    }

    fn names(defs: &[Def]) -> Vec<String> {
        defs.iter()
            .map(|(s, _)| s.operator_name().to_string())
            .collect()
    }

    #[test]
    fn pytorchs_order_with_the_projects_entries_in_place() {
        let surface = [
            op("aten::a(Tensor x) -> Tensor", &["core"], &["a.out"]),
            op("aten::b(Tensor x) -> Tensor", &[], &[]),
        ];
        let project = vec![
            (
                FunctionSchema::parse("aten::mine(Tensor x) -> Tensor").unwrap(),
                vec![],
            ),
            (
                FunctionSchema::parse("aten::b(Tensor x) -> Tensor").unwrap(),
                vec![],
            ),
        ];
        let defs = merge(&project, &surface).unwrap();
        assert_eq!(
            names(&defs),
            ["aten::a", "aten::a.out", "aten::b", "aten::mine"]
        );
        assert_eq!(
            defs[1].0.to_string(),
            "aten::a.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)"
        );
        assert_eq!(defs[1].1, ["core"]);
    }

    #[test]
    fn a_project_schema_that_is_not_pytorchs_is_an_error() {
        let surface = [op("aten::b(Tensor x, int y=1) -> Tensor", &[], &[])];
        let project = vec![(
            FunctionSchema::parse("aten::b(Tensor x) -> Tensor").unwrap(),
            vec![],
        )];
        let e = merge(&project, &surface).unwrap_err();
        assert!(
            e.contains("the project's schema of `aten::b` is not PyTorch's"),
            "{e}"
        );
        let surface = [op("aten::b(Tensor x) -> Tensor", &["core"], &[])];
        let project = vec![(
            FunctionSchema::parse("aten::b(Tensor x) -> Tensor").unwrap(),
            vec![],
        )];
        let e = merge(&project, &surface).unwrap_err();
        assert!(
            e.contains("the project's tags of `aten::b` are not PyTorch's"),
            "{e}"
        );
    }
}
