//! YAML text to a small tree of [`Node`]s that remember their line, the part
//! of PyYAML plus torchgen's `LineLoader` (which adds `__line__` to every
//! mapping) that the codegen needs.
//!
//! The events come from `saphyr-parser` (see the crate docs for why); this
//! module builds the tree from them with an explicit stack and refuses
//! nesting deeper than [`MAX_DEPTH`], so no input can overflow the call stack
//! (neither while building nor while dropping the tree). Scalars borrow from the input where
//! they can. Aliases (`*anchor`) are refused: the files this reads never use
//! them, and expanding them is how "billion laughs" inputs blow up memory.
//!
//! ```
//! use aten_codegen::yaml_loader::{load, Value};
//! use aten_codegen::Location;
//!
//! let text = "- func: abs(Tensor self) -> Tensor\n  variants: function, method\n";
//! let root = load(text, &Location::new("f.yaml", 0)).unwrap().unwrap();
//! let Value::Sequence(items) = root.value() else { panic!() };
//! let entry = items[0].as_mapping().unwrap();
//! assert_eq!(entry[1].0.as_str(), Some("variants"));
//! assert_eq!(entry[1].1.line(), 2);
//! ```

use std::borrow::Cow;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

use crate::error::{Location, YamlError};

/// A YAML node and the 1-based line it starts on.
#[derive(Clone, Debug, PartialEq)]
pub struct Node<'a> {
    value: Value<'a>,
    line: u32,
}

/// What a [`Node`] holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Value<'a> {
    /// A scalar: its text and whether it was written plain (unquoted, not a
    /// block scalar). Only plain scalars are resolved to `null` or booleans,
    /// as YAML's core schema does.
    Scalar {
        /// The scalar's text after unescaping and folding.
        text: Cow<'a, str>,
        /// Whether it was written without quotes or block indicators.
        plain: bool,
    },
    /// A sequence, in order.
    Sequence(Vec<Node<'a>>),
    /// A mapping: key and value pairs in the order written (duplicates kept,
    /// so that callers can report them).
    Mapping(Vec<(Node<'a>, Node<'a>)>),
}

impl<'a> Node<'a> {
    /// The node's value.
    pub fn value(&self) -> &Value<'a> {
        &self.value
    }

    /// The 1-based line the node starts on.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The text of a scalar that is not `null`.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar { text, .. } if !self.is_null() => Some(text),
            _ => None,
        }
    }

    /// A plain scalar spelling a YAML boolean (`true`, `True`, `TRUE`,
    /// `false`, `False`, `FALSE`).
    pub fn as_bool(&self) -> Option<bool> {
        match &self.value {
            Value::Scalar { text, plain: true } => match text.as_ref() {
                "true" | "True" | "TRUE" => Some(true),
                "false" | "False" | "FALSE" => Some(false),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether this is a plain `null`: empty, `~`, `null`, `Null` or `NULL`.
    pub fn is_null(&self) -> bool {
        matches!(
            &self.value,
            Value::Scalar { text, plain: true } if matches!(text.as_ref(), "" | "~" | "null" | "Null" | "NULL")
        )
    }

    /// The items of a sequence.
    pub fn as_sequence(&self) -> Option<&[Node<'a>]> {
        match &self.value {
            Value::Sequence(items) => Some(items),
            _ => None,
        }
    }

    /// The entries of a mapping.
    pub fn as_mapping(&self) -> Option<&[(Node<'a>, Node<'a>)]> {
        match &self.value {
            Value::Mapping(entries) => Some(entries),
            _ => None,
        }
    }

    /// A short description for error messages: `a mapping`, `a sequence`,
    /// `null`, `'text'`.
    pub fn describe(&self) -> String {
        match &self.value {
            Value::Mapping(_) => "a mapping".to_string(),
            Value::Sequence(_) => "a sequence".to_string(),
            Value::Scalar { .. } if self.is_null() => "null".to_string(),
            Value::Scalar { text, .. } => format!("'{text}'"),
        }
    }
}

/// A collection being built.
enum Frame<'a> {
    Sequence {
        items: Vec<Node<'a>>,
        line: u32,
    },
    Mapping {
        entries: Vec<(Node<'a>, Node<'a>)>,
        key: Option<Node<'a>>,
        line: u32,
    },
}

/// How deeply sequences and mappings may nest.
pub const MAX_DEPTH: usize = 256;

/// The 1-based line a span starts on.
fn line_of(span: &Span) -> u32 {
    u32::try_from(span.start.line()).unwrap_or(u32::MAX)
}

/// Parses one YAML document. `file` names the file in errors (its line is
/// ignored). Returns `None` for a stream with no document (an empty file or
/// one with only comments).
///
/// # Errors
///
/// A syntax error, an alias, a second document, or nesting deeper than
/// [`MAX_DEPTH`], each at its line.
pub fn load<'a>(text: &'a str, file: &Location) -> Result<Option<Node<'a>>, YamlError> {
    let mut frames: Vec<Frame<'a>> = Vec::new();
    let mut root: Option<Node<'a>> = None;
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(|e| {
            let line = u32::try_from(e.marker().line()).unwrap_or(u32::MAX);
            YamlError::new(
                file.at_line(line.max(1)),
                format!(
                    "invalid YAML: {} (column {})",
                    e.info(),
                    e.marker().col() + 1
                ),
            )
        })?;
        let line = line_of(&span);
        let done = match event {
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => None,
            Event::DocumentStart(_) => {
                if root.is_some() {
                    return Err(YamlError::new(
                        file.at_line(line),
                        "expected one YAML document, found another",
                    ));
                }
                None
            }
            Event::Alias(_) => {
                return Err(YamlError::new(
                    file.at_line(line),
                    "YAML aliases are not supported",
                ))
            }
            Event::Scalar(text, style, _, _) => Some(Node {
                value: Value::Scalar {
                    text,
                    plain: style == ScalarStyle::Plain,
                },
                line,
            }),
            Event::SequenceStart(_, _) | Event::MappingStart(_, _) if frames.len() >= MAX_DEPTH => {
                return Err(YamlError::new(
                    file.at_line(line),
                    format!("YAML nested more than {MAX_DEPTH} levels deep"),
                ))
            }
            Event::SequenceStart(_, _) => {
                frames.push(Frame::Sequence {
                    items: Vec::new(),
                    line,
                });
                None
            }
            Event::MappingStart(_, _) => {
                frames.push(Frame::Mapping {
                    entries: Vec::new(),
                    key: None,
                    line,
                });
                None
            }
            Event::SequenceEnd | Event::MappingEnd => match frames.pop() {
                Some(Frame::Sequence { items, line }) => Some(Node {
                    value: Value::Sequence(items),
                    line,
                }),
                Some(Frame::Mapping { entries, line, .. }) => Some(Node {
                    value: Value::Mapping(entries),
                    line,
                }),
                None => None,
            },
        };
        let Some(node) = done else { continue };
        match frames.last_mut() {
            Some(Frame::Sequence { items, .. }) => items.push(node),
            Some(Frame::Mapping { entries, key, .. }) => match key.take() {
                Some(k) => entries.push((k, node)),
                None => *key = Some(node),
            },
            None => root = Some(node),
        }
    }
    Ok(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc() -> Location {
        Location::new("t.yaml", 0)
    }

    #[test]
    fn lines_of_entries_keys_and_values() {
        let text =
            "# comment\n\n- func: a() -> ()\n  dispatch:\n    CPU: a_cpu\n- func: b() -> ()\n";
        let root = load(text, &loc()).unwrap().unwrap();
        let items = root.as_sequence().unwrap();
        assert_eq!(items.len(), 2);
        let first = items[0].as_mapping().unwrap();
        assert_eq!(items[0].line(), 3);
        assert_eq!(first[0].0.line(), 3);
        assert_eq!(first[1].0.line(), 4);
        let dispatch = first[1].1.as_mapping().unwrap();
        assert_eq!(dispatch[0].0.line(), 5);
        assert_eq!(dispatch[0].1.as_str(), Some("a_cpu"));
        assert_eq!(items[1].line(), 6);
    }

    #[test]
    fn scalars_nulls_and_booleans() {
        let text = "a: True\nb: 'True'\nc:\nd: [x, y]\ne: ~\n";
        let root = load(text, &loc()).unwrap().unwrap();
        let m = root.as_mapping().unwrap();
        assert_eq!(m[0].1.as_bool(), Some(true));
        assert_eq!(m[1].1.as_bool(), None);
        assert_eq!(m[1].1.as_str(), Some("True"));
        assert!(m[2].1.is_null() && m[2].1.as_str().is_none());
        assert_eq!(m[3].1.as_sequence().unwrap().len(), 2);
        assert!(m[4].1.is_null());
        assert_eq!(m[3].1.describe(), "a sequence");
    }

    #[test]
    fn empty_input_is_no_document() {
        assert_eq!(load("", &loc()).unwrap(), None);
        assert_eq!(load("# only a comment\n", &loc()).unwrap(), None);
    }

    #[test]
    fn syntax_errors_aliases_and_documents_are_errors() {
        let e = load("a: [b\nc: d\n", &loc()).unwrap_err();
        assert!(e.to_string().starts_with("t.yaml:"), "{e}");
        assert!(e.message().starts_with("invalid YAML"), "{e}");
        let e = load("a: &x 1\nb: *x\n", &loc()).unwrap_err();
        assert_eq!(e.to_string(), "t.yaml:2: YAML aliases are not supported");
        let e = load("a: 1\n---\nb: 2\n", &loc()).unwrap_err();
        assert_eq!(e.location().line(), 2);
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        // saphyr-parser bounds flow nesting itself.
        let text = "[".repeat(100_000);
        assert!(load(&text, &loc()).is_err());
        // Block nesting is bounded here.
        let text = format!("{}x", "- ".repeat(10_000));
        let e = load(&text, &loc()).unwrap_err();
        assert_eq!(e.message(), "YAML nested more than 256 levels deep");
        let text = format!("{}x", "- ".repeat(MAX_DEPTH));
        assert!(load(&text, &loc()).unwrap().is_some());
    }
}
