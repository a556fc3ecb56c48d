//! `aten yaml check FILE [--tags TAGS]`: loads and validates a
//! `native_functions.yaml` with [`aten_codegen`] and reports the errors
//! (`FILE:LINE: message`, one per line) and how many functions, groups,
//! structured families and out variants it holds.
//!
//! Without `--tags`, the `tags.yaml` beside `FILE` is used when there is
//! one; otherwise tag names are not checked (the report says so).
//!
//! ```
//! use aten_cli::yaml_check::check_text;
//!
//! let yaml = "- func: abs(Tensor self) -> Tensor\n  variants: function, methods\n";
//! let report = check_text(yaml, "nf.yaml", None);
//! assert_eq!(report.errors, 1);
//! assert!(report.text.starts_with("nf.yaml:2: illegal variant 'methods'"));
//! assert!(report.text.contains("functions: 1\n"));
//! ```

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use aten_codegen::{NativeFunctions, Tags};

/// What `aten yaml check` prints, and how many errors it found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct YamlCheckReport {
    /// The errors, one per line, then the counts.
    pub text: String,
    /// How many errors were found (in the tags file too).
    pub errors: usize,
}

/// Checks `native_functions.yaml` text named `file`, with the `tags.yaml`
/// text and name in `tags` (tag names unchecked when `None`).
pub fn check_text(text: &str, file: &str, tags: Option<(&str, &str)>) -> YamlCheckReport {
    let mut out = String::new();
    let mut errors = 0;
    let parsed_tags = tags.map(|(tags_text, tags_file)| {
        let (parsed, tag_errors) = Tags::parse_lenient(tags_text, tags_file);
        for e in &tag_errors {
            let _ = writeln!(out, "{e}");
        }
        errors += tag_errors.len();
        (parsed, tags_file)
    });
    let (functions, fn_errors) =
        NativeFunctions::parse_lenient(text, file, parsed_tags.as_ref().map(|(t, _)| t));
    for e in &fn_errors {
        let _ = writeln!(out, "{e}");
    }
    errors += fn_errors.len();
    let _ = writeln!(out, "functions: {}", functions.len());
    let _ = writeln!(out, "groups: {}", functions.groups().count());
    let _ = writeln!(
        out,
        "structured families: {}",
        functions.structured_families().count()
    );
    let _ = writeln!(out, "out variants: {}", functions.out_variants().count());
    match &parsed_tags {
        Some((t, name)) => {
            let _ = writeln!(out, "tags: {} (from {name})", t.len());
        }
        None => {
            let _ = writeln!(
                out,
                "tags: not checked (no tags.yaml beside {file}; pass --tags)"
            );
        }
    }
    let _ = writeln!(out, "errors: {errors}");
    YamlCheckReport { text: out, errors }
}

/// Checks the file at `file`, with the tags file at `tags` or else the
/// `tags.yaml` beside `file` if there is one.
///
/// # Errors
///
/// A file that cannot be read, with the reason.
pub fn check_file(file: &Path, tags: Option<&Path>) -> Result<YamlCheckReport, String> {
    let read = |path: &Path| {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    };
    let text = read(file)?;
    let tags_path: Option<PathBuf> = match tags {
        Some(t) => Some(t.to_path_buf()),
        None => {
            let beside = file.with_file_name("tags.yaml");
            beside.is_file().then_some(beside)
        }
    };
    let tags_text = match &tags_path {
        Some(p) => Some(read(p)?),
        None => None,
    };
    let file_name = file.display().to_string();
    let tags_name = tags_path.as_ref().map(|p| p.display().to_string());
    let tags_arg = match (&tags_text, &tags_name) {
        (Some(t), Some(n)) => Some((t.as_str(), n.as_str())),
        _ => None,
    };
    Ok(check_text(&text, &file_name, tags_arg))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TAGS: &str = "- tag: core\n  desc: core ops\n";

    #[test]
    fn counts_and_errors() {
        let yaml = "
- func: abs(Tensor self) -> Tensor
  structured_delegate: abs.out
  tags: [core, pointwize]

- func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU: abs_out
";
        let report = check_text(yaml, "nf.yaml", Some((TAGS, "tags.yaml")));
        assert_eq!(report.errors, 1);
        assert_eq!(
            report.text,
            "nf.yaml:4: unknown tag 'pointwize' (not in tags.yaml)\n\
             functions: 2\n\
             groups: 1\n\
             structured families: 1\n\
             out variants: 1\n\
             tags: 1 (from tags.yaml)\n\
             errors: 1\n"
        );
    }

    #[test]
    fn tag_file_errors_count() {
        let report = check_text("", "nf.yaml", Some(("- tag: x\n", "t.yaml")));
        assert_eq!(report.errors, 1);
        assert!(report.text.starts_with("t.yaml:1: tag 'x' has no 'desc'\n"));
    }

    #[test]
    fn pytorch_file_is_clean() {
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../conformance/data/pytorch/native_functions.yaml");
        let report = check_file(&file, None).unwrap();
        assert_eq!(report.errors, 0, "{}", report.text);
        assert!(
            report.text.starts_with("functions: 2590\n"),
            "{}",
            report.text
        );
        assert!(report.text.contains("structured families: 279\n"));
        assert!(report.text.contains("tags: 20 (from "));
    }

    #[test]
    fn unreadable_file() {
        let err = check_file(Path::new("/nonexistent/nf.yaml"), None).unwrap_err();
        assert!(err.starts_with("cannot read /nonexistent/nf.yaml"), "{err}");
    }
}
