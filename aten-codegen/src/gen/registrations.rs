//! Registration code: the library's schema definitions, with tags (the
//! kernel registrations are rendered by [`super`] per hosting crate).

use std::fmt::Write;

use aten_boxing::schema::FunctionSchema;

/// One operator overload as the registration generators see it.
pub struct OpRegistration<'a> {
    /// The parsed schema (`aten::add.Tensor(...)`).
    pub schema: &'a FunctionSchema,
    /// Tags from the yaml.
    pub tags: &'a [String],
}

/// The schema text without its namespace (`add.Tensor(Tensor self, ...)`).
fn unqualified(schema: &FunctionSchema) -> String {
    let text = schema.to_string();
    match text.split_once("::") {
        Some((_, rest)) => rest.to_string(),
        None => text,
    }
}

/// `torch_library!(aten, ...)` with every definition.
pub fn render_defs(ns: &str, ops: &[OpRegistration<'_>]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "aten_dispatch::torch_library!({ns}, |m| {{");
    for op in ops {
        let tags = op
            .tags
            .iter()
            .map(|t| format!("{t:?}.to_string()"))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(
            out,
            "    m.def_with({:?}, Some(AliasAnalysisKind::FromSchema), vec![{tags}])?;",
            unqualified(op.schema)
        );
    }
    let _ = writeln!(out, "    Ok(())\n}});");
    out
}
