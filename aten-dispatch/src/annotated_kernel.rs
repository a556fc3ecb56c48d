//! `AnnotatedKernel`: a registered kernel together with what the dumps and
//! checks need to know about it (its debug string, its inferred schema) and
//! an identity, so that dropping a registration removes exactly that kernel.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use aten_boxing::KernelFunction;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A kernel as registered at one key of one operator, or as a backend fallback.
#[derive(Debug)]
pub struct AnnotatedKernel {
    /// The kernel.
    pub kernel: KernelFunction,
    /// `registered at file:line`, or the explicit debug string.
    pub debug: Arc<str>,
    /// Unique per registration.
    pub id: u64,
}

impl AnnotatedKernel {
    /// Annotates a kernel with its debug string and a fresh identity.
    pub fn new(kernel: KernelFunction, debug: impl Into<Arc<str>>) -> Arc<AnnotatedKernel> {
        Arc::new(AnnotatedKernel {
            kernel,
            debug: debug.into(),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// The ambiguous-AutogradOther kernel, shown with `debug`. PyTorch 2.15
    /// prints the AutogradOther backend fallback's debug string for it when
    /// one is registered, `ambiguous_autogradother` otherwise.
    pub fn ambiguous_autograd_other(debug: Arc<str>) -> Arc<AnnotatedKernel> {
        static KERNEL: std::sync::OnceLock<KernelFunction> = std::sync::OnceLock::new();
        Arc::new(AnnotatedKernel {
            kernel: KERNEL
                .get_or_init(KernelFunction::make_ambiguous_autograd_other)
                .clone(),
            debug,
            id: 0,
        })
    }

    /// Whether both are the same registration as far as a call can tell:
    /// the same entry points and the same debug string.
    pub fn same_as(&self, other: &AnnotatedKernel) -> bool {
        self.kernel.equals_boxed_and_unboxed(&other.kernel) && self.debug == other.debug
    }
}
