//! Walking the archive's JSON documents with errors that name the file and
//! the path to the offending value (`models/model.json:
//! graph_module.graph.nodes[3].target: expected a string`).

use std::cell::OnceCell;
use std::fmt::Write as _;
use std::rc::Rc;

use c10_core::{Error, Result};

use super::json_document::{Document, Json};

/// A JSON value and where it sits (file, then a path of fields and
/// indices), for error messages. The path is a chain of steps shared with
/// the parent, spelled out only when an error names it: a load walks every
/// value of the document and fails on at most one.
#[derive(Clone)]
pub(crate) struct At<'a> {
    value: Json<'a>,
    file: &'a str,
    /// The steps to the parent (`None` at the root).
    parent: Option<Rc<PathNode<'a>>>,
    /// The last step, to this value (`None` at the root).
    step: Option<Step<'a>>,
    /// This value's own node, made when its first child is.
    node: OnceCell<Rc<PathNode<'a>>>,
}

/// One step of a path: a field's name or an element's index.
#[derive(Clone, Copy)]
enum Step<'a> {
    Field(&'a str),
    Index(usize),
}

/// A node of the chain of steps from the root.
struct PathNode<'a> {
    parent: Option<Rc<PathNode<'a>>>,
    step: Option<Step<'a>>,
}

impl<'a> At<'a> {
    /// The document `value` read from `file`.
    pub(crate) fn root(doc: &'a Document, file: &'a str) -> At<'a> {
        At {
            value: doc.root(),
            file,
            parent: None,
            step: None,
            node: OnceCell::new(),
        }
    }

    /// The path, as `graph_module.graph.nodes[3].target`.
    fn path(&self) -> String {
        let mut steps = Vec::new();
        steps.extend(self.step);
        let mut node = self.parent.as_deref();
        while let Some(n) = node {
            steps.extend(n.step);
            node = n.parent.as_deref();
        }
        let mut path = String::new();
        for step in steps.iter().rev() {
            // Writing to a `String` cannot fail.
            let _ = match step {
                Step::Field(name) if path.is_empty() => write!(path, "{name}"),
                Step::Field(name) => write!(path, ".{name}"),
                Step::Index(i) => write!(path, "[{i}]"),
            };
        }
        path
    }

    /// An error about this value.
    pub(crate) fn error(&self, message: impl std::fmt::Display) -> Error {
        let path = self.path();
        if path.is_empty() {
            Error::runtime(format!("{}: {message}", self.file))
        } else {
            Error::runtime(format!("{}: {path}: {message}", self.file))
        }
    }

    fn child(&self, value: Json<'a>, step: Step<'a>) -> At<'a> {
        let node = self.node.get_or_init(|| {
            Rc::new(PathNode {
                parent: self.parent.clone(),
                step: self.step,
            })
        });
        At {
            value,
            file: self.file,
            parent: Some(node.clone()),
            step: Some(step),
            node: OnceCell::new(),
        }
    }

    /// The field `name` of an object, if present (and not `null`).
    pub(crate) fn opt(&self, name: &str) -> Result<Option<At<'a>>> {
        if self.value.as_object().is_none() {
            return Err(self.error("expected an object"));
        }
        Ok(self
            .value
            .get(name)
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| self.child(v, Step::Field(k))))
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
            .enumerate()
            .map(|(i, v)| self.child(v, Step::Index(i)))
            .collect())
    }

    /// The fields of an object, in the document's order.
    pub(crate) fn entries(&self) -> Result<Vec<(&'a str, At<'a>)>> {
        let object = self
            .value
            .as_object()
            .ok_or_else(|| self.error("expected an object"))?;
        Ok(object
            .map(|(k, v)| (k, self.child(v, Step::Field(k))))
            .collect())
    }

    /// A union: an object with exactly one field, naming the variant.
    pub(crate) fn variant(&self) -> Result<(&'a str, At<'a>)> {
        let mut object = self
            .value
            .as_object()
            .ok_or_else(|| self.error("expected an object"))?;
        let len = object.len();
        match object.next() {
            Some((k, v)) if len == 1 => Ok((k, self.child(v, Step::Field(k)))),
            _ => Err(self.error(format_args!(
                "expected a union (an object with one field), found {len} fields"
            ))),
        }
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
        if let Some(x) = self.value.as_f64() {
            return Ok(x);
        }
        match self.value.as_str() {
            Some("Infinity") => Ok(f64::INFINITY),
            Some("-Infinity") => Ok(f64::NEG_INFINITY),
            Some("NaN") => Ok(f64::NAN),
            Some(other) => Err(self.error(format_args!("expected a float, found \"{other}\""))),
            None => Err(self.error("expected a float")),
        }
    }

    /// A list of integers.
    pub(crate) fn ints(&self) -> Result<Vec<i64>> {
        self.items()?.iter().map(At::int).collect()
    }
}

/// Parses `bytes` as the JSON document `file`.
pub(crate) fn parse(bytes: &[u8], file: &str) -> Result<Document> {
    let malformed =
        |e: &dyn std::fmt::Display| Error::runtime(format!("{file}: malformed JSON: {e}"));
    let text = std::str::from_utf8(bytes).map_err(|e| malformed(&e))?;
    Document::parse(text).map_err(|e| malformed(&e))
}
