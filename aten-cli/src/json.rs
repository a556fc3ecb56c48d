//! Small JSON helpers for the conformance commands: JSON lines whose fields
//! keep the order they were written in, and typed field access with
//! readable errors.

use serde_json::Value;

/// A JSON object written field by field, in order.
#[derive(Default)]
pub struct OrderedObject {
    fields: Vec<(String, Value)>,
}

impl OrderedObject {
    /// An empty object.
    pub fn new() -> OrderedObject {
        OrderedObject::default()
    }

    /// Appends a field.
    pub fn field(mut self, name: &str, value: impl Into<Value>) -> OrderedObject {
        self.fields.push((name.to_string(), value.into()));
        self
    }

    /// The object as one line of JSON.
    pub fn to_line(&self) -> String {
        let mut out = String::from("{");
        for (i, (k, v)) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(&Value::String(k.clone()).to_string());
            out.push_str(": ");
            out.push_str(&v.to_string());
        }
        out.push('}');
        out
    }
}

/// `{"error": message}` as one line.
pub fn error_line(message: &str) -> String {
    OrderedObject::new().field("error", message).to_line()
}

/// The string field `name` of `obj`.
pub fn str_field<'a>(obj: &'a Value, name: &str) -> Result<&'a str, String> {
    obj.get(name)
        .ok_or_else(|| format!("missing field `{name}`"))?
        .as_str()
        .ok_or_else(|| format!("field `{name}` is not a string"))
}

/// The array-of-strings field `name` of `obj`.
pub fn str_list_field<'a>(obj: &'a Value, name: &str) -> Result<Vec<&'a str>, String> {
    obj.get(name)
        .ok_or_else(|| format!("missing field `{name}`"))?
        .as_array()
        .ok_or_else(|| format!("field `{name}` is not a list"))?
        .iter()
        .map(|v| {
            v.as_str()
                .ok_or_else(|| format!("field `{name}` holds a non-string"))
        })
        .collect()
}

/// The unsigned integer field `name` of `obj`.
pub fn u64_field(obj: &Value, name: &str) -> Result<u64, String> {
    obj.get(name)
        .ok_or_else(|| format!("missing field `{name}`"))?
        .as_u64()
        .ok_or_else(|| format!("field `{name}` is not an unsigned integer"))
}
