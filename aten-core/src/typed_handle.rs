//! How the generated API finds its operators: a typed handle from the
//! global dispatcher, looked up once per operator and cached by the caller.

use aten_boxing::{ArgList, KernelReturn};
use aten_dispatch::{Dispatcher, TypedOperatorHandle};
use c10_core::Result;

/// The typed handle of `name.overload` in the global dispatcher; `S` is the
/// argument tuple with `'static` lifetimes.
pub fn typed_handle<S: ArgList<Static = S>, R: KernelReturn>(
    name: &str,
    overload: &str,
) -> Result<TypedOperatorHandle<S, R>> {
    Dispatcher::global()
        .find_schema_or_throw(name, overload)?
        .typed::<S, R>()
}
