//! `RegistrationHandle`: the receipt of one registration. Dropping it undoes
//! exactly that registration (PyTorch's `RegistrationHandleRAII`).

/// Undoes its registration when dropped; [`forget`](Self::forget) keeps the
/// registration for the life of the dispatcher.
#[must_use = "dropping the handle undoes the registration at once"]
#[doc(alias = "RegistrationHandleRAII")]
pub struct RegistrationHandle {
    undo: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl RegistrationHandle {
    pub(crate) fn new(undo: impl FnOnce() + Send + Sync + 'static) -> RegistrationHandle {
        RegistrationHandle {
            undo: Some(Box::new(undo)),
        }
    }

    /// Keeps the registration forever.
    pub fn forget(mut self) {
        self.undo = None;
    }
}

impl Drop for RegistrationHandle {
    fn drop(&mut self) {
        if let Some(undo) = self.undo.take() {
            undo();
        }
    }
}

impl std::fmt::Debug for RegistrationHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RegistrationHandle")
    }
}
