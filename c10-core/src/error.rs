//! The error type shared by every layer of the stack.
//!
//! PyTorch raises `c10::Error` (Python `RuntimeError`) and a few subclasses
//! (`NotImplementedError`, `TypeError`, `ValueError`, `IndexError`). Here every
//! fallible API returns [`Result<T>`](Result) with an [`Error`] that carries the
//! same message PyTorch would print and an [`ErrorKind`] naming the Python
//! exception class it would surface as.

use std::fmt;

/// Which Python exception class PyTorch would raise for this error.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// `c10::Error` / Python `RuntimeError`.
    Runtime,
    /// `c10::NotImplementedError` / Python `NotImplementedError`.
    NotImplemented,
    /// `c10::TypeError` / Python `TypeError`.
    Type,
    /// `c10::ValueError` / Python `ValueError`.
    Value,
    /// `c10::IndexError` / Python `IndexError`.
    Index,
    /// Python `AttributeError` (what `torch.ops` raises for a name it cannot
    /// resolve).
    Attribute,
    /// A broken internal invariant (`TORCH_INTERNAL_ASSERT`).
    Internal,
}

/// An error with PyTorch's message text.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    /// An error of the given kind.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
        }
    }

    /// A `RuntimeError` (`TORCH_CHECK` failure).
    pub fn runtime(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Runtime, message)
    }

    /// A `NotImplementedError`.
    pub fn not_implemented(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::NotImplemented, message)
    }

    /// PyTorch's `"name" not implemented for 'Dtype'` (a kernel without a
    /// loop for `dtype`).
    pub fn not_implemented_for(name: &str, dtype: crate::ScalarType) -> Error {
        Error::not_implemented(format!("\"{name}\" not implemented for '{dtype}'"))
    }

    /// A `TypeError`.
    pub fn type_error(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Type, message)
    }

    /// A `ValueError`.
    pub fn value_error(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Value, message)
    }

    /// An `IndexError`.
    pub fn index_error(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Index, message)
    }

    /// An `AttributeError`.
    pub fn attribute_error(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Attribute, message)
    }

    /// A broken internal invariant.
    pub fn internal(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Internal, message)
    }

    /// The exception class.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, exactly as PyTorch would print it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.message)
    }
}

impl std::error::Error for Error {}

/// `Result` with the stack's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
