//! Source locations and the errors of loading and validating
//! `native_functions.yaml` / `tags.yaml` (torchgen's `Location` and its
//! `in FILE:LINE` context), each printed as `FILE:LINE: message`.

use std::fmt;
use std::sync::Arc;

/// A place in a YAML file: the file name as given to the loader and a
/// 1-based line (torchgen's `Location`).
///
/// ```
/// use aten_codegen::Location;
///
/// let loc = Location::new("native_functions.yaml", 12);
/// assert_eq!(loc.to_string(), "native_functions.yaml:12");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    file: Arc<str>,
    line: u32,
}

impl Location {
    /// The location `file:line`.
    pub fn new(file: impl Into<Arc<str>>, line: u32) -> Location {
        Location {
            file: file.into(),
            line,
        }
    }

    /// The same file at another line (shares the file name).
    pub fn at_line(&self, line: u32) -> Location {
        Location {
            file: Arc::clone(&self.file),
            line,
        }
    }

    /// The file name.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The 1-based line.
    pub fn line(&self) -> u32 {
        self.line
    }
}

/// `FILE:LINE`.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// One problem found in a YAML file, with where it is.
///
/// ```
/// use aten_codegen::{Location, YamlError};
///
/// let e = YamlError::new(Location::new("f.yaml", 3), "unknown key 'foo'");
/// assert_eq!(e.to_string(), "f.yaml:3: unknown key 'foo'");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct YamlError {
    location: Location,
    message: String,
}

impl YamlError {
    /// An error at `location`.
    pub fn new(location: Location, message: impl Into<String>) -> YamlError {
        YamlError {
            location,
            message: message.into(),
        }
    }

    /// Where the problem is.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// What the problem is, without the location.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// `FILE:LINE: message`.
impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

impl std::error::Error for YamlError {}

/// All the errors found in one load, in file order; printed one per line.
///
/// ```
/// use aten_codegen::{Location, YamlError, YamlErrors};
///
/// let errors = YamlErrors::new(vec![
///     YamlError::new(Location::new("f.yaml", 9), "b"),
///     YamlError::new(Location::new("f.yaml", 2), "a"),
/// ]);
/// assert_eq!(errors.to_string(), "f.yaml:2: a\nf.yaml:9: b");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct YamlErrors {
    errors: Vec<YamlError>,
}

impl YamlErrors {
    /// The errors, sorted by file and line (stably: errors at one line keep
    /// the order they were found in).
    pub fn new(mut errors: Vec<YamlError>) -> YamlErrors {
        errors.sort_by(|a, b| a.location.cmp(&b.location));
        YamlErrors { errors }
    }

    /// The errors, in file order.
    pub fn errors(&self) -> &[YamlError] {
        &self.errors
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// Iterates over the errors in file order.
    pub fn iter(&self) -> std::slice::Iter<'_, YamlError> {
        self.errors.iter()
    }
}

impl<'a> IntoIterator for &'a YamlErrors {
    type Item = &'a YamlError;
    type IntoIter = std::slice::Iter<'a, YamlError>;
    fn into_iter(self) -> Self::IntoIter {
        self.errors.iter()
    }
}

impl IntoIterator for YamlErrors {
    type Item = YamlError;
    type IntoIter = std::vec::IntoIter<YamlError>;
    fn into_iter(self) -> Self::IntoIter {
        self.errors.into_iter()
    }
}

/// One error per line, no trailing newline.
impl fmt::Display for YamlErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for YamlErrors {}
