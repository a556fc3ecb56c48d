//! Where each hand-written kernel of a module tree is defined, so that
//! generated code names it by its full path
//! (`crate::native::factories::zeros`) and a reader goes straight from a
//! registration to the kernel.
//!
//! The index reads the tree's source files: a kernel is a top-level
//! `pub fn` (at the start of a line), or a name inside the invocation of a
//! `macro_rules!` macro defined in the same file (the families of aliases
//! that one macro writes). A `pub fn` wins over a macro's mention; a name
//! found in two files is an error, as is a kernel found nowhere.

use std::collections::BTreeMap;
use std::path::Path;

/// The files that define each kernel name of one module tree.
#[derive(Clone, Debug, Default)]
pub struct KernelIndex {
    /// The module path of the tree (`crate::native`).
    root: String,
    /// Name → modules with a top-level `pub fn` of it.
    defined: BTreeMap<String, Vec<String>>,
    /// Name → modules whose own macros' invocations mention it.
    in_macros: BTreeMap<String, Vec<String>>,
}

impl KernelIndex {
    /// The index of the `*.rs` files directly in `dir` (its `mod.rs`
    /// excluded), whose module path is `root`.
    pub fn scan(dir: &Path, root: &str) -> Result<KernelIndex, String> {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut files = Vec::new();
        for entry in entries {
            let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
            let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            if path.extension().is_some_and(|e| e == "rs") && stem != "mod" {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                files.push((stem.to_string(), text));
            }
        }
        Ok(KernelIndex::from_sources(root, &files))
    }

    /// The index of `(module, source)` pairs under `root`.
    pub fn from_sources(root: &str, files: &[(String, String)]) -> KernelIndex {
        let mut index = KernelIndex {
            root: root.to_string(),
            ..KernelIndex::default()
        };
        for (module, text) in files {
            for name in top_level_pub_fns(text) {
                add(&mut index.defined, name, module);
            }
            for name in macro_invocation_idents(text) {
                add(&mut index.in_macros, name, module);
            }
        }
        index
    }

    /// The full path of kernel `name`.
    pub fn path(&self, name: &str) -> Result<String, String> {
        let modules = self
            .defined
            .get(name)
            .or_else(|| self.in_macros.get(name))
            .ok_or_else(|| format!("kernel `{name}` is defined in no module of `{}`", self.root))?;
        match modules.as_slice() {
            [module] => Ok(format!("{}::{module}::{name}", self.root)),
            _ => Err(format!(
                "kernel `{name}` is defined in several modules of `{}`: {}",
                self.root,
                modules.join(", ")
            )),
        }
    }
}

fn add(map: &mut BTreeMap<String, Vec<String>>, name: &str, module: &str) {
    let modules = map.entry(name.to_string()).or_default();
    if !modules.iter().any(|m| m == module) {
        modules.push(module.to_string());
    }
}

/// The names of `pub fn`s that start a line (top-level items; methods and
/// nested items are indented).
fn top_level_pub_fns(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter_map(|line| {
        let rest = line.strip_prefix("pub fn ")?;
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        (end > 0).then(|| &rest[..end])
    })
}

/// Every identifier inside the top-level invocations (`name! { .. }` or
/// `name!( .. );` at the start of a line) of the macros `text` defines.
fn macro_invocation_idents(text: &str) -> Vec<&str> {
    let macros: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("macro_rules! "))
        .filter_map(|rest| {
            rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
        })
        .filter(|name| !name.is_empty())
        .collect();
    let mut idents = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let Some(name) = macros.iter().find(|m| {
            line.strip_prefix(**m)
                .and_then(|r| r.strip_prefix('!'))
                .is_some_and(|r| r.trim_start().starts_with(['{', '(']))
        }) else {
            continue;
        };
        let body_start = start + name.len() + 1;
        if let Some(body) = balanced_body(&text[body_start..]) {
            idents.extend(identifiers(body));
        }
    }
    idents
}

/// The text between the first opening bracket of `text` and its matching
/// closing one.
fn balanced_body(text: &str) -> Option<&str> {
    let open = text.find(['{', '('])?;
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[open + 1..open + i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// The identifiers of `text` (words of letters, digits and `_` that do not
/// start with a digit).
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| {
            w.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> KernelIndex {
        let files = [
            (
                "factories".to_string(),
                "pub fn zeros(sizes: &[i64]) -> T {}\nimpl X {\n    pub fn new() {}\n}\npub fn ones_like(x: T) {}\n".to_string(),
            ),
            (
                "aliases".to_string(),
                "macro_rules! aliases {\n    ($($n:ident = $t:ident;)*) => {};\n}\n\naliases! {\n    absolute = abs_op;\n    fix = trunc_op;\n}\n// fix in a comment outside the invocation\n".to_string(),
            ),
            ("twice".to_string(), "pub fn zeros() {}\n".to_string()),
            (
                "logical".to_string(),
                "macro_rules! pairs {\n    ($($a:ident, $b:ident);*) => {};\n}\n\n// only_in_a_comment is no kernel\npairs!(\n    logical_and, logical_and_;\n    logical_or, logical_or_\n);\n".to_string(),
            ),
        ];
        KernelIndex::from_sources("crate::native", &files)
    }

    #[test]
    fn finds_top_level_functions_and_macro_made_ones() {
        let index = index();
        assert_eq!(
            index.path("ones_like").unwrap(),
            "crate::native::factories::ones_like"
        );
        assert_eq!(index.path("fix").unwrap(), "crate::native::aliases::fix");
        assert_eq!(
            index.path("absolute").unwrap(),
            "crate::native::aliases::absolute"
        );
        // An invocation in parentheses, over several lines.
        assert_eq!(
            index.path("logical_or_").unwrap(),
            "crate::native::logical::logical_or_"
        );
        // A method is not a kernel, nor a name outside the invocations.
        assert!(index.path("new").unwrap_err().contains("no module"));
        assert!(index.path("only_in_a_comment").is_err());
    }

    #[test]
    fn a_name_in_two_modules_is_an_error() {
        let e = index().path("zeros").unwrap_err();
        assert!(
            e.contains("several modules") && e.contains("factories, twice"),
            "{e}"
        );
    }
}
