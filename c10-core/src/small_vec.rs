//! `SmallVec`: a vector that keeps up to `N` elements inline (c10's
//! `SmallVector`), for sizes, strides and the handful of operands of a
//! kernel, which would otherwise cost an allocation each.
//!
//! Written without `unsafe`: the inline array is always fully initialised,
//! slots past the length hold `T::default()`.

use std::fmt;

/// Up to `N` elements inline, on the heap beyond.
#[derive(Clone)]
pub enum SmallVec<T, const N: usize> {
    /// `len` elements at the front of the array; the rest are defaults.
    Inline([T; N], u8),
    /// More than `N` elements.
    Heap(Vec<T>),
}

impl<T: Default, const N: usize> Default for SmallVec<T, N> {
    #[inline]
    fn default() -> Self {
        SmallVec::Inline(std::array::from_fn(|_| T::default()), 0)
    }
}

impl<T: Default, const N: usize> SmallVec<T, N> {
    /// An empty vector.
    #[inline]
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `value`, moving to the heap when the inline part is full.
    #[inline]
    pub fn push(&mut self, value: T) {
        match self {
            SmallVec::Inline(a, n) if (*n as usize) < N => {
                a[*n as usize] = value;
                *n += 1;
            }
            _ => self.push_spilled(value),
        }
    }

    /// `push` past the inline capacity (kept out of line so that `push`
    /// stays small enough to inline).
    #[cold]
    #[inline(never)]
    fn push_spilled(&mut self, value: T) {
        match self {
            SmallVec::Inline(a, _) => {
                let mut heap: Vec<T> = Vec::with_capacity(N * 2);
                heap.extend(a.iter_mut().map(std::mem::take));
                heap.push(value);
                *self = SmallVec::Heap(heap);
            }
            SmallVec::Heap(v) => v.push(value),
        }
    }

    /// Grows or shrinks to `len` elements, new ones `T::default()`. Inline,
    /// growing moves the length only: the slots past it are defaults.
    pub fn resize_default(&mut self, len: usize) {
        if let SmallVec::Inline(_, n) = self {
            if len <= N && len >= *n as usize {
                *n = len as u8;
                return;
            }
        }
        while self.len() < len {
            self.push(T::default());
        }
        self.truncate(len);
    }

    /// Keeps the first `len` elements.
    pub fn truncate(&mut self, len: usize) {
        match self {
            SmallVec::Inline(a, n) => {
                let keep = (*n as usize).min(len);
                a[keep..*n as usize].fill_with(T::default);
                *n = keep as u8;
            }
            SmallVec::Heap(v) => v.truncate(len),
        }
    }
}

impl<T: Copy + Default, const N: usize> SmallVec<T, N> {
    /// The vector `[value]`, built as [`from_fn`](Self::from_fn) builds
    /// (in place, no call).
    #[inline(always)]
    pub fn one(value: T) -> Self {
        Self::from_fn(1, |_| value)
    }

    /// The vector `[f(0), f(1), ..., f(len - 1)]` (`f` is called in that
    /// order). Inline, it is built without a call: inlined where the
    /// vector is stored (a tensor's layout in its block), the slots are
    /// written there, not in a temporary that is then copied in wide loads
    /// which would wait for its narrow stores (a store-forwarding stall).
    #[inline(always)]
    pub fn from_fn(len: usize, mut f: impl FnMut(usize) -> T) -> Self {
        if len > N {
            return SmallVec::Heap((0..len).map(f).collect());
        }
        let mut a = [T::default(); N];
        for (i, slot) in a.iter_mut().enumerate() {
            if i < len {
                *slot = f(i);
            }
        }
        SmallVec::Inline(a, len as u8)
    }
}

impl<T: Clone + Default, const N: usize> SmallVec<T, N> {
    /// A copy of `v`.
    #[inline]
    pub fn from_slice(v: &[T]) -> Self {
        if v.len() <= N {
            // Each slot is written once (a copy over a defaulted array
            // wrote the leading slots twice, the second time through a
            // `memcpy` call).
            let a = std::array::from_fn(|i| v.get(i).cloned().unwrap_or_default());
            SmallVec::Inline(a, v.len() as u8)
        } else {
            SmallVec::Heap(v.to_vec())
        }
    }
}

impl<T: Default, const N: usize> FromIterator<T> for SmallVec<T, N> {
    #[inline]
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut out = Self::default();
        for v in iter {
            out.push(v);
        }
        out
    }
}

impl<T: Default, const N: usize> Extend<T> for SmallVec<T, N> {
    #[inline]
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for v in iter {
            self.push(v);
        }
    }
}

impl<T, const N: usize> SmallVec<T, N> {
    /// How many elements are kept inline (`N`).
    pub const INLINE_CAPACITY: usize = N;
}

impl<T, const N: usize> std::ops::Deref for SmallVec<T, N> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        match self {
            SmallVec::Inline(a, n) => &a[..*n as usize],
            SmallVec::Heap(v) => v,
        }
    }
}

impl<T, const N: usize> std::ops::DerefMut for SmallVec<T, N> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            SmallVec::Inline(a, n) => &mut a[..*n as usize],
            SmallVec::Heap(v) => v,
        }
    }
}

impl<'a, T, const N: usize> IntoIterator for &'a SmallVec<T, N> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T, const N: usize> IntoIterator for &'a mut SmallVec<T, N> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl<T: PartialEq, const N: usize> PartialEq for SmallVec<T, N> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Eq, const N: usize> Eq for SmallVec<T, N> {}

/// Comparisons with the other ways a list of elements is written, both
/// ways round (sizes and strides are compared with slices, arrays and
/// vectors throughout).
macro_rules! eq_with {
    ($($(#[$m:meta])* [$($g:tt)*] $other:ty;)*) => {$(
        impl<$($g)* T: PartialEq, const N: usize> PartialEq<$other> for SmallVec<T, N> {
            #[inline]
            fn eq(&self, other: &$other) -> bool {
                self[..] == other[..]
            }
        }
        impl<$($g)* T: PartialEq, const N: usize> PartialEq<SmallVec<T, N>> for $other {
            #[inline]
            fn eq(&self, other: &SmallVec<T, N>) -> bool {
                self[..] == other[..]
            }
        }
    )*};
}

eq_with! {
    [] [T];
    ['a,] &'a [T];
    [const M: usize,] [T; M];
    ['a, const M: usize,] &'a [T; M];
    [] Vec<T>;
}

impl<T: fmt::Debug, const N: usize> fmt::Debug for SmallVec<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_fn_and_one_fill_the_slots_they_are_given() {
        let v: SmallVec<i64, 4> = SmallVec::from_fn(3, |i| 10 * i as i64);
        assert!(matches!(v, SmallVec::Inline(a, 3) if a == [0, 10, 20, 0]));
        let w: SmallVec<i64, 2> = SmallVec::from_fn(3, |i| i as i64 + 1);
        assert!(matches!(&w, SmallVec::Heap(_)));
        assert_eq!(&*w, [1, 2, 3]);
        let e: SmallVec<i64, 2> = SmallVec::from_fn(0, |_| unreachable!());
        assert!(e.is_empty());
        let one: SmallVec<i64, 3> = SmallVec::one(7);
        assert!(matches!(one, SmallVec::Inline([7, 0, 0], 1)));
    }

    #[test]
    fn grows_past_the_inline_part_and_truncates() {
        let mut v: SmallVec<String, 2> = SmallVec::new();
        for s in ["a", "b", "c"] {
            v.push(s.to_string());
        }
        assert!(matches!(v, SmallVec::Heap(_)));
        assert_eq!(&*v, ["a", "b", "c"]);
        let mut w: SmallVec<String, 4> = ["x", "y", "z"].iter().map(|s| s.to_string()).collect();
        w.truncate(1);
        assert_eq!(&*w, ["x"]);
        // The dropped slots were reset, so nothing is kept alive.
        if let SmallVec::Inline(a, _) = &w {
            assert!(a[1..].iter().all(String::is_empty));
        }
        assert_eq!(
            SmallVec::<i64, 2>::from_slice(&[1, 2, 3]),
            [1, 2, 3].into_iter().collect::<SmallVec<i64, 2>>()
        );
    }

    #[test]
    fn resize_default_grows_with_defaults_and_shrinks() {
        let mut v: SmallVec<String, 3> = SmallVec::new();
        v.push("a".into());
        v.resize_default(3);
        assert_eq!(&*v, ["a", "", ""]);
        assert!(matches!(v, SmallVec::Inline(_, 3)));
        v[2] = "c".into();
        v.resize_default(5);
        assert_eq!(&*v, ["a", "", "c", "", ""]);
        v.resize_default(1);
        assert_eq!(&*v, ["a"]);
        let mut w: SmallVec<String, 3> = SmallVec::new();
        w.resize_default(2);
        w[1] = "x".into();
        w.resize_default(1);
        w.resize_default(2);
        assert_eq!(&*w, ["", ""], "a slot given up is a default again");
    }
}
