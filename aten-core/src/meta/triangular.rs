//! Meta functions of `tril` and `triu`: an output of `self`'s shape,
//! dtype and device (contiguous), for inputs of at least two dimensions.

use c10_core::{Error, Result};

use crate::structured::{MetaOutput, SetOutput};
use crate::Tensor;

/// The output of a triangle of `self_` (`name` starts the error).
fn triangle(out: SetOutput<'_>, self_: &Tensor, name: &str) -> Result<MetaOutput> {
    if self_.dim() < 2 {
        return Err(Error::runtime(format!(
            "{name}: input tensor must have at least 2 dimensions"
        )));
    }
    let (dtype, device) = super::dtype_and_device(self_)?;
    out.set_output(&self_.sizes(), dtype, device)
}

/// `tril(self, diagonal)`.
pub fn tril(out: SetOutput<'_>, self_: &Tensor, _diagonal: i64) -> Result<MetaOutput> {
    triangle(out, self_, "tril")
}

/// `triu(self, diagonal)`.
pub fn triu(out: SetOutput<'_>, self_: &Tensor, _diagonal: i64) -> Result<MetaOutput> {
    triangle(out, self_, "triu")
}
