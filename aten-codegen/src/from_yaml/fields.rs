//! The keys of one entry, found, and the [`Checker`] that reads their
//! values and collects the entry's problems.

use super::NATIVE_FUNCTION_KEYS;
use crate::error::{Location, YamlError};
use crate::yaml_loader::Node;

/// The value of one key and the line of the key.
#[derive(Clone, Copy)]
pub(super) struct Field<'n, 'a> {
    pub(super) line: u32,
    pub(super) value: &'n Node<'a>,
}

/// Collects the problems of one entry.
pub(super) struct Checker<'e> {
    pub(super) file: &'e Location,
    pub(super) errors: &'e mut Vec<YamlError>,
}

impl Checker<'_> {
    pub(super) fn error(&mut self, line: u32, message: impl Into<String>) {
        self.errors
            .push(YamlError::new(self.file.at_line(line), message));
    }

    pub(super) fn bool(&mut self, field: Option<Field<'_, '_>>, key: &str, default: bool) -> bool {
        let Some(f) = field else { return default };
        match f.value.as_bool() {
            Some(b) => b,
            None => {
                self.error(
                    f.line,
                    format!(
                        "'{key}' must be True or False, found {}",
                        f.value.describe()
                    ),
                );
                default
            }
        }
    }

    pub(super) fn string(
        &mut self,
        field: Option<Field<'_, '_>>,
        key: &str,
    ) -> Option<(String, u32)> {
        let f = field?;
        match f.value.as_str() {
            Some(s) => Some((s.to_string(), f.line)),
            None => {
                self.error(
                    f.line,
                    format!("'{key}' must be a string, found {}", f.value.describe()),
                );
                None
            }
        }
    }

    /// A sequence of strings, each with its line.
    pub(super) fn strings<'n>(
        &mut self,
        f: Field<'n, '_>,
        key: &str,
    ) -> Option<Vec<(&'n str, u32)>> {
        let Some(items) = f.value.as_sequence() else {
            self.error(
                f.line,
                format!(
                    "'{key}' must be a list of strings, found {}",
                    f.value.describe()
                ),
            );
            return None;
        };
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            match item.as_str() {
                Some(s) => out.push((s, item.line())),
                None => {
                    self.error(
                        item.line(),
                        format!(
                            "'{key}' must be a list of strings, found {} in it",
                            item.describe()
                        ),
                    );
                    return None;
                }
            }
        }
        Some(out)
    }
}

/// The entry's keys, found.
#[derive(Default)]
pub(super) struct Fields<'n, 'a> {
    slots: [Option<Field<'n, 'a>>; NATIVE_FUNCTION_KEYS.len()],
}

impl<'n, 'a> Fields<'n, 'a> {
    pub(super) fn get(&self, key: &str) -> Option<Field<'n, 'a>> {
        let i = NATIVE_FUNCTION_KEYS.iter().position(|k| *k == key)?;
        self.slots[i]
    }
}

/// The keys of `entry`, each with its value and line; unknown and duplicate
/// keys are reported. `None` when the entry is not a mapping.
pub(super) fn collect_fields<'n, 'a>(
    c: &mut Checker<'_>,
    entry: &'n Node<'a>,
) -> Option<Fields<'n, 'a>> {
    let Some(mapping) = entry.as_mapping() else {
        c.error(
            entry.line(),
            format!(
                "expected a function entry (a mapping), found {}",
                entry.describe()
            ),
        );
        return None;
    };
    let mut fields = Fields::default();
    for (key, value) in mapping {
        let Some(name) = key.as_str() else {
            c.error(
                key.line(),
                format!("expected a string key, found {}", key.describe()),
            );
            continue;
        };
        match NATIVE_FUNCTION_KEYS.iter().position(|k| *k == name) {
            Some(i) if fields.slots[i].is_some() => {
                c.error(key.line(), format!("duplicate key '{name}'"));
            }
            Some(i) => {
                fields.slots[i] = Some(Field {
                    line: key.line(),
                    value,
                });
            }
            None => c.error(key.line(), format!("unknown key '{name}'")),
        }
    }
    Some(fields)
}
