//! Walking the archive's JSON documents with errors that name the file and
//! the path to the offending value (`models/model.json:
//! graph_module.graph.nodes[3].target: expected a string`).

use c10_core::{Error, Result};
use serde_json::Value;

/// A JSON value and where it sits (file, then a path of fields and
/// indices), for error messages.
#[derive(Clone)]
pub(crate) struct At<'a> {
    value: &'a Value,
    file: &'a str,
    path: String,
}

impl<'a> At<'a> {
    /// The document `value` read from `file`.
    pub(crate) fn root(value: &'a Value, file: &'a str) -> At<'a> {
        At {
            value,
            file,
            path: String::new(),
        }
    }

    /// An error about this value.
    pub(crate) fn error(&self, message: impl std::fmt::Display) -> Error {
        if self.path.is_empty() {
            Error::runtime(format!("{}: {message}", self.file))
        } else {
            Error::runtime(format!("{}: {}: {message}", self.file, self.path))
        }
    }

    fn child(&self, value: &'a Value, step: std::fmt::Arguments<'_>) -> At<'a> {
        let path = if self.path.is_empty() {
            step.to_string()
        } else {
            format!("{}{step}", self.path)
        };
        At {
            value,
            file: self.file,
            path,
        }
    }

    /// The field `name` of an object, if present (and not `null`).
    pub(crate) fn opt(&self, name: &str) -> Result<Option<At<'a>>> {
        let object = self
            .value
            .as_object()
            .ok_or_else(|| self.error("expected an object"))?;
        Ok(object
            .get(name)
            .filter(|v| !v.is_null())
            .map(|v| self.field_at(v, name)))
    }

    fn field_at(&self, value: &'a Value, name: &str) -> At<'a> {
        if self.path.is_empty() {
            self.child(value, format_args!("{name}"))
        } else {
            self.child(value, format_args!(".{name}"))
        }
    }

    /// The field `name` of an object.
    pub(crate) fn field(&self, name: &str) -> Result<At<'a>> {
        self.opt(name)?
            .ok_or_else(|| self.error(format_args!("missing field `{name}`")))
    }

    /// The elements of an array.
    pub(crate) fn items(&self) -> Result<Vec<At<'a>>> {
        let array = self
            .value
            .as_array()
            .ok_or_else(|| self.error("expected an array"))?;
        Ok(array
            .iter()
            .enumerate()
            .map(|(i, v)| self.child(v, format_args!("[{i}]")))
            .collect())
    }

    /// The fields of an object, in the document's order.
    pub(crate) fn entries(&self) -> Result<Vec<(&'a str, At<'a>)>> {
        let object = self
            .value
            .as_object()
            .ok_or_else(|| self.error("expected an object"))?;
        Ok(object
            .iter()
            .map(|(k, v)| (k.as_str(), self.field_at(v, k)))
            .collect())
    }

    /// A union: an object with exactly one field, naming the variant.
    pub(crate) fn variant(&self) -> Result<(&'a str, At<'a>)> {
        let mut entries = self.entries()?;
        if entries.len() != 1 {
            return Err(self.error(format_args!(
                "expected a union (an object with one field), found {} fields",
                entries.len()
            )));
        }
        Ok(entries.remove(0))
    }

    /// A string.
    pub(crate) fn str(&self) -> Result<&'a str> {
        self.value
            .as_str()
            .ok_or_else(|| self.error("expected a string"))
    }

    /// An integer.
    pub(crate) fn int(&self) -> Result<i64> {
        self.value
            .as_i64()
            .ok_or_else(|| self.error("expected an integer"))
    }

    /// A boolean.
    pub(crate) fn bool(&self) -> Result<bool> {
        self.value
            .as_bool()
            .ok_or_else(|| self.error("expected a boolean"))
    }

    /// A float: a number, or `"Infinity"`, `"-Infinity"`, `"NaN"`.
    pub(crate) fn float(&self) -> Result<f64> {
        match self.value {
            Value::Number(n) => n.as_f64().ok_or_else(|| self.error("expected a float")),
            Value::String(s) => match s.as_str() {
                "Infinity" => Ok(f64::INFINITY),
                "-Infinity" => Ok(f64::NEG_INFINITY),
                "NaN" => Ok(f64::NAN),
                other => Err(self.error(format_args!("expected a float, found \"{other}\""))),
            },
            _ => Err(self.error("expected a float")),
        }
    }

    /// A list of integers.
    pub(crate) fn ints(&self) -> Result<Vec<i64>> {
        self.items()?.iter().map(At::int).collect()
    }
}

/// Parses `bytes` as the JSON document `file`.
pub(crate) fn parse(bytes: &[u8], file: &str) -> Result<Value> {
    serde_json::from_slice(bytes)
        .map_err(|e| Error::runtime(format!("{file}: malformed JSON: {e}")))
}
