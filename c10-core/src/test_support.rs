//! Helpers shared by this crate's unit tests.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Counts its drops in a shared counter: the value a test hands to an
/// owner (a handle, a box, a storage) to see when, and how often, the
/// owner drops it.
#[derive(Debug)]
pub(crate) struct DropProbe(pub(crate) Arc<AtomicUsize>);

impl Drop for DropProbe {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}
