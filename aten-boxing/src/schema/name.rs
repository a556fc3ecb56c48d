//! `Name`: an argument or alias-set name, kept inline when short (nearly
//! all are), so that parsing a schema does not allocate for each one.

use std::fmt;
use std::hash::{Hash, Hasher};

/// How many bytes fit inline.
const INLINE: usize = 22;

/// A string that lives inline up to 22 bytes and on the heap beyond.
#[derive(Clone)]
pub(crate) enum Name {
    /// Short: the bytes and their count.
    Inline { len: u8, bytes: [u8; INLINE] },
    /// Long.
    Heap(Box<str>),
}

impl Name {
    /// A name holding `s`.
    pub(crate) fn new(s: &str) -> Name {
        if s.len() <= INLINE {
            let mut bytes = [0u8; INLINE];
            bytes[..s.len()].copy_from_slice(s.as_bytes());
            Name::Inline {
                len: s.len() as u8,
                bytes,
            }
        } else {
            Name::Heap(s.into())
        }
    }

    /// The text.
    pub(crate) fn as_str(&self) -> &str {
        match self {
            // The bytes were a whole `&str`, so they are valid UTF-8.
            Name::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            Name::Heap(s) => s,
        }
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Name) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Name {}

impl Hash for Name {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Name) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Name {
    fn cmp(&self, other: &Name) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_names() {
        assert_eq!(Name::new("self").as_str(), "self");
        assert_eq!(Name::new("").as_str(), "");
        let long = "a_rather_long_argument_name_indeed";
        assert_eq!(Name::new(long).as_str(), long);
        assert!(matches!(Name::new(long), Name::Heap(_)));
        assert_eq!(Name::new("é".repeat(11).as_str()).as_str(), "é".repeat(11));
        assert_eq!(Name::new("x"), Name::new("x"));
    }
}
