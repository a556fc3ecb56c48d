//! `tags.yaml`: the tags an operator may carry in `native_functions.yaml`
//! (torchgen's `parse_tags_yaml`).
//!
//! Each entry is `- tag: NAME` with a non-empty `desc:`; no other keys.
//!
//! ```
//! use aten_codegen::Tags;
//!
//! let tags = Tags::parse("- tag: pointwise\n  desc: |\n    Elementwise.\n", "tags.yaml").unwrap();
//! assert!(tags.contains("pointwise") && !tags.contains("core"));
//! assert_eq!(tags.get("pointwise").unwrap().desc(), "Elementwise.\n");
//! assert_eq!(tags.get("pointwise").unwrap().location().to_string(), "tags.yaml:1");
//! ```

use std::collections::HashMap;

use crate::error::{Location, YamlError, YamlErrors};
use crate::yaml_loader::{self, Node};

/// One tag of `tags.yaml`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tag {
    name: String,
    desc: String,
    location: Location,
}

impl Tag {
    /// The tag's name (`pointwise`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its description.
    pub fn desc(&self) -> &str {
        &self.desc
    }

    /// Where it is defined.
    pub fn location(&self) -> &Location {
        &self.location
    }
}

/// The tags of a `tags.yaml`, in file order, with lookup by name.
#[derive(Clone, Debug, Default)]
pub struct Tags {
    tags: Vec<Tag>,
    by_name: HashMap<String, usize>,
}

impl Tags {
    /// Parses `tags.yaml` text; `file` names it in errors.
    ///
    /// # Errors
    ///
    /// Every problem found, each as `FILE:LINE: message`.
    pub fn parse(text: &str, file: &str) -> Result<Tags, YamlErrors> {
        let (tags, errors) = Tags::parse_lenient(text, file);
        if errors.is_empty() {
            Ok(tags)
        } else {
            Err(errors)
        }
    }

    /// Parses `tags.yaml` text, keeping every well-formed tag and returning
    /// the problems found beside them.
    pub fn parse_lenient(text: &str, file: &str) -> (Tags, YamlErrors) {
        let (tags, errors) = Tags::parse_entries(text, file);
        (tags, YamlErrors::new(errors))
    }

    /// The tags and the problems found, unsorted.
    fn parse_entries(text: &str, file: &str) -> (Tags, Vec<YamlError>) {
        let file = Location::new(file, 1);
        let mut tags = Tags::default();
        let mut errors = Vec::new();
        let root = match yaml_loader::load(text, &file) {
            Ok(root) => root,
            Err(e) => return (tags, vec![e]),
        };
        let Some(root) = root else {
            errors.push(YamlError::new(
                file,
                "expected a sequence of tag entries, found an empty file",
            ));
            return (tags, errors);
        };
        let Some(entries) = root.as_sequence() else {
            errors.push(YamlError::new(
                file.at_line(root.line()),
                format!(
                    "expected a sequence of tag entries, found {}",
                    root.describe()
                ),
            ));
            return (tags, errors);
        };
        for entry in entries {
            if let Some(tag) = parse_entry(entry, &file, &mut errors) {
                if let Some(&first) = tags.by_name.get(&tag.name) {
                    errors.push(YamlError::new(
                        tag.location.clone(),
                        format!(
                            "duplicate tag '{}' (first defined at {})",
                            tag.name, tags.tags[first].location
                        ),
                    ));
                    continue;
                }
                tags.by_name.insert(tag.name.clone(), tags.tags.len());
                tags.tags.push(tag);
            }
        }
        (tags, errors)
    }

    /// Whether `name` is a tag.
    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// The tag called `name`.
    pub fn get(&self, name: &str) -> Option<&Tag> {
        self.by_name.get(name).map(|&i| &self.tags[i])
    }

    /// The tags in file order.
    pub fn iter(&self) -> std::slice::Iter<'_, Tag> {
        self.tags.iter()
    }

    /// How many tags there are.
    pub fn len(&self) -> usize {
        self.tags.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tags.is_empty()
    }
}

impl<'a> IntoIterator for &'a Tags {
    type Item = &'a Tag;
    type IntoIter = std::slice::Iter<'a, Tag>;
    fn into_iter(self) -> Self::IntoIter {
        self.tags.iter()
    }
}

/// One `- tag: ... desc: ...` entry.
fn parse_entry(entry: &Node<'_>, file: &Location, errors: &mut Vec<YamlError>) -> Option<Tag> {
    let here = file.at_line(entry.line());
    let Some(fields) = entry.as_mapping() else {
        errors.push(YamlError::new(
            here,
            format!(
                "expected a tag entry (a mapping), found {}",
                entry.describe()
            ),
        ));
        return None;
    };
    let mut name: Option<(String, u32)> = None;
    let mut desc: Option<String> = None;
    let mut ok = true;
    let mut seen: Vec<&str> = Vec::new();
    for (key, value) in fields {
        let at = file.at_line(key.line());
        let Some(k) = key.as_str() else {
            errors.push(YamlError::new(
                at,
                format!("expected a string key, found {}", key.describe()),
            ));
            ok = false;
            continue;
        };
        if seen.contains(&k) {
            errors.push(YamlError::new(at, format!("duplicate key '{k}'")));
            ok = false;
            continue;
        }
        seen.push(k);
        match k {
            "tag" => match value.as_str() {
                Some(v) if !v.is_empty() => name = Some((v.to_string(), key.line())),
                _ => {
                    errors.push(YamlError::new(
                        at,
                        format!(
                            "'tag' must be a non-empty string, found {}",
                            value.describe()
                        ),
                    ));
                    ok = false;
                }
            },
            "desc" => match value.as_str() {
                Some(v) => desc = Some(v.to_string()),
                None => {
                    errors.push(YamlError::new(
                        at,
                        format!("'desc' must be a string, found {}", value.describe()),
                    ));
                    ok = false;
                }
            },
            other => {
                errors.push(YamlError::new(
                    at,
                    format!("unknown key '{other}' in tag entry (expected 'tag' and 'desc')"),
                ));
                ok = false;
            }
        }
    }
    let Some((name, line)) = name else {
        if ok {
            errors.push(YamlError::new(here, "tag entry without 'tag'"));
        }
        return None;
    };
    let location = file.at_line(line);
    match desc {
        Some(d) if !d.trim().is_empty() => Some(Tag {
            name,
            desc: d,
            location,
        }),
        Some(_) if ok => {
            errors.push(YamlError::new(
                location,
                format!("tag '{name}' has an empty 'desc'"),
            ));
            None
        }
        None if ok => {
            errors.push(YamlError::new(
                location,
                format!("tag '{name}' has no 'desc'"),
            ));
            None
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_carry_lines() {
        let text = "- tag: a\n  desc: x\n- tag: a\n  desc: y\n- tag: b\n- tag: c\n  desc: z\n  color: red\n- 3\n";
        let (tags, errors) = Tags::parse_lenient(text, "t.yaml");
        assert_eq!(tags.iter().map(Tag::name).collect::<Vec<_>>(), ["a", "c"]);
        let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(errors.len(), 4);
        assert_eq!(
            shown,
            [
                "t.yaml:3: duplicate tag 'a' (first defined at t.yaml:1)",
                "t.yaml:5: tag 'b' has no 'desc'",
                "t.yaml:8: unknown key 'color' in tag entry (expected 'tag' and 'desc')",
                "t.yaml:9: expected a tag entry (a mapping), found '3'",
            ]
        );
    }

    #[test]
    fn not_a_sequence() {
        let e = Tags::parse("tag: a\n", "t.yaml").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.yaml:1: expected a sequence of tag entries, found a mapping"
        );
    }
}
