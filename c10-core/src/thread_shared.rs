//! `ThreadShared`: raw pointers (or values holding them) that the threads
//! of one parallel loop share. Raw pointers are neither `Send` nor `Sync`;
//! a kernel that splits its work over threads wraps its data pointers in
//! this one type, and the promise that makes sharing them sound is made
//! once, where the wrapper is built.

/// A value holding raw pointers, shared by the threads of a parallel loop
/// (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct ThreadShared<T>(T);

impl<T> ThreadShared<T> {
    /// Wraps `value` for the threads of a loop.
    ///
    /// # Safety
    ///
    /// While the wrapper (or a copy of it) is reachable from other threads,
    /// the memory its pointers address stays valid (its storages borrowed,
    /// outputs exclusively), and the threads only read memory that no
    /// thread writes and write memory that no other thread reads or writes.
    ///
    /// `value` itself must be sound to send to and share with other threads
    /// apart from its raw pointers: raw pointers, and plain data or shared
    /// references holding them. A value with non-atomic shared state (an
    /// `Rc`, a `&Cell`) must never be wrapped: the wrapper is `Send` and
    /// `Sync` whatever `T` is.
    #[inline]
    pub unsafe fn new(value: T) -> ThreadShared<T> {
        ThreadShared(value)
    }

    /// The wrapped value (a method, so that closures capture the whole
    /// wrapper rather than its non-`Send` field).
    #[inline]
    pub fn get(&self) -> &T {
        &self.0
    }
}

// SAFETY: `new`'s contract: `T` is raw pointers or plain data holding
// them, the pointed-to memory stays valid and the threads' accesses through
// it do not race.
unsafe impl<T> Send for ThreadShared<T> {}
// SAFETY: as above; shared access only hands out `&T`.
unsafe impl<T> Sync for ThreadShared<T> {}
