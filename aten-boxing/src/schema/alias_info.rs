//! `AliasInfo`: the alias annotation of a schema type (`Tensor(a!)`,
//! `Tensor(a -> a|b)`, `Tensor(a!)[]`), PyTorch's `ATen/core/alias_info.h`.

use std::fmt;

use super::name::Name;

/// The name of an alias set (`a`, `*`, `$0`): PyTorch's `alias::a` symbol
/// without its namespace.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AliasSet(Name);

impl AliasSet {
    /// The set called `name`.
    pub fn new(name: &str) -> AliasSet {
        AliasSet(Name::new(name))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Display for AliasSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for AliasSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq<str> for AliasSet {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for AliasSet {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// A sorted set of alias sets that stores one member without allocating.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
enum Sets {
    #[default]
    Empty,
    One(AliasSet),
    Many(Vec<AliasSet>),
}

impl Sets {
    fn as_slice(&self) -> &[AliasSet] {
        match self {
            Sets::Empty => &[],
            Sets::One(s) => std::slice::from_ref(s),
            Sets::Many(v) => v,
        }
    }

    /// Adds `name` unless present, keeping the order.
    fn insert(&mut self, name: &str) {
        match self {
            Sets::Empty => *self = Sets::One(AliasSet::new(name)),
            Sets::One(first) => {
                if first.as_str() != name {
                    let new = AliasSet::new(name);
                    let first = first.clone();
                    *self = Sets::Many(if first < new {
                        vec![first, new]
                    } else {
                        vec![new, first]
                    });
                }
            }
            Sets::Many(v) => {
                if let Err(at) = v.binary_search_by(|s| s.as_str().cmp(name)) {
                    v.insert(at, AliasSet::new(name));
                }
            }
        }
    }
}

/// Which alias sets a value belongs to before and after the operator runs,
/// whether the operator writes to it, and the annotations of contained
/// values (the elements of an annotated list).
///
/// Set names are stored without PyTorch's `alias::` prefix; `*` is the
/// wildcard set and `$0`, `$1`, ... are the fresh sets of the `Tensor!`
/// shorthand.
///
/// ```
/// use aten_boxing::schema::FunctionSchema;
///
/// let s = FunctionSchema::parse("foo(Tensor(a!)[] out) -> ()").unwrap();
/// let list = s.arguments()[0].alias_info().unwrap();
/// assert!(list.before_sets().is_empty() && list.is_write());
/// assert_eq!(list.contained_types()[0].before_sets(), ["a"]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct AliasInfo {
    before: Sets,
    /// Ignored while `after_is_before`.
    after: Sets,
    /// The after sets are the before sets (an annotation without `->`),
    /// kept implicit to save copying them.
    after_is_before: bool,
    is_write: bool,
    contained: Vec<AliasInfo>,
}

impl PartialEq for AliasInfo {
    fn eq(&self, other: &AliasInfo) -> bool {
        self.is_write == other.is_write
            && self.before == other.before
            && self.after_sets() == other.after_sets()
            && self.contained == other.contained
    }
}

impl Eq for AliasInfo {}

impl std::hash::Hash for AliasInfo {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.is_write.hash(state);
        self.before.as_slice().hash(state);
        self.after_sets().hash(state);
        self.contained.hash(state);
    }
}

impl AliasInfo {
    /// The wildcard set's name.
    pub const WILDCARD: &'static str = "*";

    /// No sets, not written, nothing contained.
    pub fn new() -> AliasInfo {
        AliasInfo::default()
    }

    /// Adds a set the value may be in before the operator runs.
    pub fn add_before_set(&mut self, name: &str) {
        self.materialize_after();
        self.before.insert(name);
    }

    /// Adds a set the value may be in after the operator runs.
    pub fn add_after_set(&mut self, name: &str) {
        self.materialize_after();
        self.after.insert(name);
    }

    /// Makes implicit after sets explicit before either side changes.
    fn materialize_after(&mut self) {
        if self.after_is_before {
            self.after.clone_from(&self.before);
            self.after_is_before = false;
        }
    }

    /// Marks the value as written by the operator (`!`).
    pub fn set_is_write(&mut self, is_write: bool) {
        self.is_write = is_write;
    }

    /// Adds the annotation of a contained value.
    pub fn add_contained_type(&mut self, info: AliasInfo) {
        self.contained.push(info);
    }

    /// The sets before the call, sorted by name.
    pub fn before_sets(&self) -> &[AliasSet] {
        self.before.as_slice()
    }

    /// The sets after the call, sorted by name.
    pub fn after_sets(&self) -> &[AliasSet] {
        if self.after_is_before {
            self.before.as_slice()
        } else {
            self.after.as_slice()
        }
    }

    /// Whether the operator writes to the value.
    pub fn is_write(&self) -> bool {
        self.is_write
    }

    /// Annotations of contained values (`[0]` is the element of a list).
    pub fn contained_types(&self) -> &[AliasInfo] {
        &self.contained
    }

    /// Whether the wildcard is among the before sets.
    pub fn is_wildcard_before(&self) -> bool {
        self.before_sets().iter().any(|s| s == Self::WILDCARD)
    }

    /// Whether the wildcard is among the after sets.
    pub fn is_wildcard_after(&self) -> bool {
        self.after_sets().iter().any(|s| s == Self::WILDCARD)
    }

    /// The annotation of `T[]` given the element's (`element`) and the
    /// list's own (`container`): the element's becomes the container's
    /// contained type, and a list without its own annotation gets one with
    /// no sets and the element's write flag (PyTorch's `parseType`).
    pub(crate) fn list_container(
        element: Option<Box<AliasInfo>>,
        container: Option<Box<AliasInfo>>,
    ) -> Option<Box<AliasInfo>> {
        let Some(element) = element else {
            return container;
        };
        let mut container = container.unwrap_or_else(|| {
            let mut c = Box::new(AliasInfo::new());
            c.set_is_write(element.is_write());
            c
        });
        container.add_contained_type(*element);
        Some(container)
    }

    /// Makes the after sets equal to the before sets (an annotation
    /// without `->`).
    pub(crate) fn after_equals_before(&mut self) {
        self.after = Sets::Empty;
        self.after_is_before = true;
    }
}

/// Writes `names` joined by `|`, in PyTorch's printing order.
///
/// PyTorch keeps the sets in an `unordered_set` and prints them in its
/// iteration order; for the sets its schemas use that order is descending
/// (`Tensor(a|b)` prints as `Tensor(b|a)`), which is the rule here.
fn write_sets(f: &mut fmt::Formatter<'_>, names: &[AliasSet]) -> fmt::Result {
    for (i, name) in names.iter().rev().enumerate() {
        if i > 0 {
            f.write_str("|")?;
        }
        f.write_str(name.as_str())?;
    }
    Ok(())
}

/// The annotation as schemas spell it: `(a)`, `(a!)`, `(b|a)`,
/// `(a! -> b|a)`, `(*)`.
impl fmt::Display for AliasInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        write_sets(f, self.before_sets())?;
        if self.is_write {
            f.write_str("!")?;
        }
        if self.before_sets() != self.after_sets() {
            f.write_str(" -> ")?;
            write_sets(f, self.after_sets())?;
        }
        f.write_str(")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_pytorch() {
        let mut a = AliasInfo::new();
        a.add_before_set("a");
        a.add_before_set("b");
        a.add_before_set("a");
        a.after_equals_before();
        assert_eq!(a.to_string(), "(b|a)");
        a.set_is_write(true);
        a.add_after_set("c");
        assert_eq!(a.to_string(), "(b|a! -> c|b|a)");
        assert_eq!(AliasInfo::new().to_string(), "()");
    }

    #[test]
    fn sets_stay_sorted_and_unique() {
        let mut a = AliasInfo::new();
        for name in ["c", "a", "b", "a", "c"] {
            a.add_before_set(name);
        }
        assert_eq!(a.before_sets(), ["a", "b", "c"]);
        assert!(a.after_sets().is_empty());
        a.add_before_set(AliasInfo::WILDCARD);
        assert!(a.is_wildcard_before() && !a.is_wildcard_after());
    }
}
