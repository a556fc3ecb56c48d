//! Row kernel instantiations (from `cu/row.cu`): softmax and log_softmax
//! over the last dimension, and layer_norm's forward with its mean and
//! rstd outputs, on contiguous `[rows, cols]` data, one block per row.

use super::dtype::Dtype;
use c10_core::{Error, Result};

/// A row kernel.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RowOp {
    /// `_softmax` over the last dimension: `(out, in, rows, cols)`.
    Softmax,
    /// `_log_softmax` over the last dimension: `(out, in, rows, cols)`.
    LogSoftmax,
    /// `native_layer_norm`'s forward over the last `cols` elements:
    /// `(y, mean, rstd, x, weight, bias, rows, cols, eps)`, with `mean`,
    /// `rstd` and `eps` in the accumulate type and `weight` and `bias`
    /// nullable.
    LayerNorm,
}

impl RowOp {
    /// Every row kernel.
    pub const ALL: [RowOp; 3] = [RowOp::Softmax, RowOp::LogSoftmax, RowOp::LayerNorm];

    /// The operator's name in entry points.
    pub fn name(self) -> &'static str {
        match self {
            RowOp::Softmax => "softmax",
            RowOp::LogSoftmax => "log_softmax",
            RowOp::LayerNorm => "layer_norm",
        }
    }

    /// Whether PyTorch supports the kernel from `input` to `output`:
    /// floating dtypes, and for the softmaxes also a 16-bit float input
    /// with a float32 output (`half_to_float`).
    pub fn supports(self, input: Dtype, output: Dtype) -> bool {
        if !input.is_floating() {
            return false;
        }
        match self {
            RowOp::Softmax | RowOp::LogSoftmax => {
                output == input
                    || (output == Dtype::Float32
                        && matches!(input, Dtype::Float16 | Dtype::BFloat16))
            }
            RowOp::LayerNorm => output == input,
        }
    }
}

/// One row kernel instantiation.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RowKernel {
    /// What it computes.
    pub op: RowOp,
    /// The input's dtype.
    pub input: Dtype,
    /// The output's dtype.
    pub output: Dtype,
}

impl RowKernel {
    /// An instantiation, checked against the dtypes PyTorch supports.
    pub fn new(op: RowOp, input: Dtype, output: Dtype) -> Result<Self> {
        if !op.supports(input, output) {
            return Err(Error::not_implemented(format!(
                "\"{}\" has no CUDA kernel from {} to {}",
                op.name(),
                input.scalar_type(),
                output.scalar_type()
            )));
        }
        Ok(RowKernel { op, input, output })
    }

    /// Every row kernel instantiation a backend uses.
    pub fn all() -> Vec<RowKernel> {
        let mut kernels = Vec::new();
        for op in RowOp::ALL {
            for input in Dtype::ALL {
                for output in Dtype::ALL {
                    if let Ok(k) = RowKernel::new(op, input, output) {
                        kernels.push(k);
                    }
                }
            }
        }
        kernels
    }

    /// The `extern "C"` entry point's name, e.g. `at_row_softmax_f16_f32`.
    pub fn entry_point(&self) -> String {
        super::entry_name("row", self.op.name(), self.input, self.output)
    }

    /// The entry point's definition.
    pub(super) fn render_entry(&self) -> String {
        let out = self.output.cuda_type();
        let inp = self.input.cuda_type();
        let acc = self.input.acc().cuda_type();
        let name = self.entry_point();
        match self.op {
            RowOp::Softmax | RowOp::LogSoftmax => {
                let log = self.op == RowOp::LogSoftmax;
                format!(
                    "extern \"C\" __global__ void {name}({out}* __restrict__ out, const {inp}* __restrict__ in, \
                     long long rows, long long cols) {{\n  at_softmax_rows<{log}, {out}, {inp}, {acc}>(out, in, rows, cols);\n}}\n"
                )
            }
            RowOp::LayerNorm => format!(
                "extern \"C\" __global__ void {name}({out}* __restrict__ y, {acc}* __restrict__ mean, \
                 {acc}* __restrict__ rstd, const {inp}* __restrict__ x, const {inp}* __restrict__ weight, \
                 const {inp}* __restrict__ bias, long long rows, long long cols, {acc} eps) {{\n  \
                 at_layer_norm_rows<{out}, {acc}>(y, mean, rstd, x, weight, bias, rows, cols, eps);\n}}\n"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn supported_dtypes() {
        assert_eq!(RowKernel::all().len(), 6 + 6 + 4);
        assert!(RowKernel::new(RowOp::Softmax, Dtype::Int32, Dtype::Int32).is_err());
        assert!(RowKernel::new(RowOp::LayerNorm, Dtype::Float16, Dtype::Float32).is_err());
        let k = RowKernel::new(RowOp::LogSoftmax, Dtype::BFloat16, Dtype::Float32).unwrap();
        assert!(k
            .render_entry()
            .contains("at_softmax_rows<true, float, __nv_bfloat16, float>"));
    }
}
