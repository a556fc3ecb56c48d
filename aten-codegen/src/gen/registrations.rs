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

/// `torch_library!(aten, ...)` with every definition: a table of schemas
/// (without namespace) and tags, defined in order.
pub fn render_defs(ns: &str, ops: &[OpRegistration<'_>]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "/// Every definition of the `{ns}` library, in registration order: the schema\n\
         /// (without namespace) and its tags.\n\
         const DEFS: &[(&str, &[&str])] = &["
    );
    for op in ops {
        let tags = op
            .tags
            .iter()
            .map(|t| format!("{t:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(out, "    ({:?}, &[{tags}]),", unqualified(op.schema));
    }
    let _ = writeln!(out, "];\n");
    let _ = writeln!(
        out,
        "aten_dispatch::torch_library!({ns}, |m| {{\n\
         \x20   for (schema, tags) in DEFS {{\n\
         \x20       let tags = tags.iter().map(|t| t.to_string()).collect();\n\
         \x20       m.def_with(schema, Some(AliasAnalysisKind::FromSchema), tags)?;\n\
         \x20   }}\n\
         \x20   Ok(())\n\
         }});"
    );
    out
}
