//! Reduction and scan instantiations over one dimension: sum, prod, mean,
//! amax, amin, argmax, argmin, any, all and var (from `cu/reduce.cu`, one
//! block per output element), and cumsum and cumprod (from `cu/scan.cu`,
//! one block per row), keyed by (operator, input dtype, output dtype).
//!
//! Output dtypes are PyTorch's defaults: integer and bool sums, products
//! and scans give int64, argmax and argmin int64, any and all bool (uint8
//! for uint8 inputs).

use super::dtype::Dtype;
use c10_core::{Error, Result};

/// A reduction over one dimension.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)] // Each variant is the PyTorch operator of its name.
pub enum ReduceOp {
    Sum,
    Prod,
    /// The kernel takes `factor` (in the accumulate type) and multiplies
    /// the sum by it, as PyTorch's MeanOps does.
    Mean,
    /// NaN-propagating.
    Amax,
    /// NaN-propagating.
    Amin,
    /// NaN counts as the largest; ties give the lowest index.
    Argmax,
    /// NaN counts as the smallest; ties give the lowest index.
    Argmin,
    Any,
    All,
    /// The kernel takes `correction` (a double).
    Var,
}

impl ReduceOp {
    /// Every reduction.
    pub const ALL: [ReduceOp; 10] = [
        ReduceOp::Sum,
        ReduceOp::Prod,
        ReduceOp::Mean,
        ReduceOp::Amax,
        ReduceOp::Amin,
        ReduceOp::Argmax,
        ReduceOp::Argmin,
        ReduceOp::Any,
        ReduceOp::All,
        ReduceOp::Var,
    ];

    /// The operator's name in entry points.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Mean => "mean",
            ReduceOp::Amax => "amax",
            ReduceOp::Amin => "amin",
            ReduceOp::Argmax => "argmax",
            ReduceOp::Argmin => "argmin",
            ReduceOp::Any => "any",
            ReduceOp::All => "all",
            ReduceOp::Var => "var",
        }
    }

    /// The output dtype for an input dtype, or `None` where PyTorch does
    /// not support the reduction on it.
    pub fn output_dtype(self, input: Dtype) -> Option<Dtype> {
        match self {
            ReduceOp::Sum | ReduceOp::Prod => Some(if input.is_floating() {
                input
            } else {
                Dtype::Int64
            }),
            ReduceOp::Mean | ReduceOp::Var => input.is_floating().then_some(input),
            ReduceOp::Amax | ReduceOp::Amin => Some(input),
            ReduceOp::Argmax | ReduceOp::Argmin => (input != Dtype::Bool).then_some(Dtype::Int64),
            ReduceOp::Any | ReduceOp::All => Some(if input == Dtype::UInt8 {
                Dtype::UInt8
            } else {
                Dtype::Bool
            }),
        }
    }
}

/// One reduction instantiation.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReduceKernel {
    /// What it computes.
    pub op: ReduceOp,
    /// The input's dtype.
    pub input: Dtype,
    /// The output's dtype.
    pub output: Dtype,
}

impl ReduceKernel {
    /// The instantiation for `op` on `input`, with PyTorch's output dtype.
    pub fn new(op: ReduceOp, input: Dtype) -> Result<Self> {
        let output = op.output_dtype(input).ok_or_else(|| {
            Error::not_implemented_for(&format!("{}_cuda", op.name()), input.scalar_type())
        })?;
        Ok(ReduceKernel { op, input, output })
    }

    /// Every reduction instantiation a backend uses.
    pub fn all() -> Vec<ReduceKernel> {
        ReduceOp::ALL
            .iter()
            .flat_map(|&op| {
                Dtype::ALL
                    .iter()
                    .filter_map(move |&d| ReduceKernel::new(op, d).ok())
            })
            .collect()
    }

    /// The `extern "C"` entry point's name, e.g. `at_reduce_sum_i32_i64`.
    pub fn entry_point(&self) -> String {
        super::entry_name("reduce", self.op.name(), self.input, self.output)
    }

    /// The entry point's definition: `(out, in, at_reduce_shape shape[,
    /// factor | correction])`.
    pub(super) fn render_entry(&self) -> String {
        let out = self.output.cuda_type();
        let inp = self.input.cuda_type();
        let acc = self.output.acc().cuda_type();
        let opmath = self.input.opmath().cuda_type();
        let (scalars, ops) = match self.op {
            ReduceOp::Sum => (String::new(), format!("const at_sum_ops<{acc}> ops{{}};")),
            ReduceOp::Prod => (String::new(), format!("const at_prod_ops<{acc}> ops{{}};")),
            ReduceOp::Mean => (
                format!(", {acc} factor"),
                format!("const at_mean_ops<{acc}> ops{{factor}};"),
            ),
            ReduceOp::Amax => (
                String::new(),
                format!("const at_amax_ops<{opmath}> ops{{}};"),
            ),
            ReduceOp::Amin => (
                String::new(),
                format!("const at_amin_ops<{opmath}> ops{{}};"),
            ),
            ReduceOp::Argmax => (
                String::new(),
                format!("const at_arg_ops<{opmath}, true> ops{{}};"),
            ),
            ReduceOp::Argmin => (
                String::new(),
                format!("const at_arg_ops<{opmath}, false> ops{{}};"),
            ),
            ReduceOp::Any => (
                String::new(),
                "const at_any_all_ops<true> ops{};".to_string(),
            ),
            ReduceOp::All => (
                String::new(),
                "const at_any_all_ops<false> ops{};".to_string(),
            ),
            ReduceOp::Var => (
                ", double correction".to_string(),
                format!("at_var_ops<{acc}> ops{{}};\n  ops.correction = correction;"),
            ),
        };
        format!(
            "extern \"C\" __global__ void {name}({out}* __restrict__ out, const {inp}* __restrict__ in, \
             at_reduce_shape shape{scalars}) {{\n  {ops}\n  at_reduce_rows<{out}, {inp}>(out, in, shape, ops);\n}}\n",
            name = self.entry_point()
        )
    }
}

/// An inclusive scan along one dimension.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)] // Each variant is the PyTorch operator of its name.
pub enum ScanOp {
    Cumsum,
    Cumprod,
}

impl ScanOp {
    /// Every scan.
    pub const ALL: [ScanOp; 2] = [ScanOp::Cumsum, ScanOp::Cumprod];

    /// The operator's name in entry points.
    pub fn name(self) -> &'static str {
        match self {
            ScanOp::Cumsum => "cumsum",
            ScanOp::Cumprod => "cumprod",
        }
    }

    /// The output dtype for an input dtype: floats keep theirs, integers
    /// and bool give int64.
    pub fn output_dtype(self, input: Dtype) -> Dtype {
        if input.is_floating() {
            input
        } else {
            Dtype::Int64
        }
    }
}

/// One scan instantiation.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ScanKernel {
    /// What it computes.
    pub op: ScanOp,
    /// The input's dtype.
    pub input: Dtype,
    /// The output's dtype.
    pub output: Dtype,
}

impl ScanKernel {
    /// The instantiation for `op` on `input`, with PyTorch's output dtype.
    pub fn new(op: ScanOp, input: Dtype) -> ScanKernel {
        ScanKernel {
            op,
            input,
            output: op.output_dtype(input),
        }
    }

    /// Every scan instantiation a backend uses.
    pub fn all() -> Vec<ScanKernel> {
        ScanOp::ALL
            .iter()
            .flat_map(|&op| Dtype::ALL.iter().map(move |&d| ScanKernel::new(op, d)))
            .collect()
    }

    /// The `extern "C"` entry point's name, e.g. `at_scan_cumsum_f16_f16`.
    pub fn entry_point(&self) -> String {
        super::entry_name("scan", self.op.name(), self.input, self.output)
    }

    /// The entry point's definition: `(out, in, at_scan_shape shape)`.
    pub(super) fn render_entry(&self) -> String {
        let out = self.output.cuda_type();
        let inp = self.input.cuda_type();
        let acc = self.output.acc().cuda_type();
        let functor = match self.op {
            ScanOp::Cumsum => format!("at_scan_add<{acc}>()"),
            ScanOp::Cumprod => format!("at_scan_mul<{acc}>()"),
        };
        format!(
            "extern \"C\" __global__ void {name}({out}* __restrict__ out, const {inp}* __restrict__ in, \
             at_scan_shape shape) {{\n  at_scan_rows<{out}, {inp}, {acc}>(out, in, shape, {functor});\n}}\n",
            name = self.entry_point()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_dtypes_follow_pytorch() {
        assert_eq!(
            ReduceKernel::new(ReduceOp::Sum, Dtype::Bool)
                .unwrap()
                .output,
            Dtype::Int64
        );
        assert_eq!(
            ReduceKernel::new(ReduceOp::Sum, Dtype::Float16)
                .unwrap()
                .output,
            Dtype::Float16
        );
        assert!(ReduceKernel::new(ReduceOp::Mean, Dtype::Int32).is_err());
        assert!(ReduceKernel::new(ReduceOp::Argmax, Dtype::Bool).is_err());
        assert_eq!(
            ReduceKernel::new(ReduceOp::Any, Dtype::UInt8)
                .unwrap()
                .output,
            Dtype::UInt8
        );
        assert_eq!(
            ReduceKernel::new(ReduceOp::All, Dtype::Int8)
                .unwrap()
                .output,
            Dtype::Bool
        );
        assert_eq!(
            ScanKernel::new(ScanOp::Cumsum, Dtype::Int16).output,
            Dtype::Int64
        );
    }

    #[test]
    fn half_sums_accumulate_in_float() {
        let src = ReduceKernel::new(ReduceOp::Sum, Dtype::BFloat16)
            .unwrap()
            .render_entry();
        assert!(src.contains("at_sum_ops<float>"));
        let src = ScanKernel::new(ScanOp::Cumprod, Dtype::Float16).render_entry();
        assert!(src.contains("at_scan_rows<__half, __half, float>"));
    }
}
