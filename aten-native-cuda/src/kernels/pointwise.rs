//! Element-wise kernel instantiations: the unary and binary operators,
//! `where`, `clamp`, `fill` and the dtype-converting copy, each keyed by
//! (operator, input dtype, output dtype, layout), with the dtypes PyTorch
//! supports each operator on and the rendering of one instantiation's
//! source from `cu/pointwise.cu`.
//!
//! Inputs of a binary operator share one dtype (the common dtype); a
//! backend casts a mismatched input with the copy kernel first. Operators
//! that PyTorch computes in floating point on integer inputs (`exp`,
//! true division, `atan2`, ...) have instantiations from each integer dtype
//! and bool to float32, so the promotion happens in the kernel's load.

use super::dtype::Dtype;
use c10_core::{Error, Result};
use std::fmt::Write as _;

/// The largest number of dimensions a strided instantiation handles.
pub const MAX_STRIDED_DIMS: u8 = 8;

/// How a pointwise kernel walks its operands.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Layout {
    /// Every operand contiguous: vectorised loads and stores of 4 elements
    /// where every pointer is aligned to 4 elements, a scalar tail, a
    /// grid-stride loop over a 64-bit count.
    Contiguous,
    /// Any strides (non-negative), `ndim` dimensions (1 to
    /// [`MAX_STRIDED_DIMS`]): an offset calculator over 32-bit indices,
    /// with sizes and per-operand strides passed in an
    /// [`StridedParams`](super::params::StridedParams).
    Strided {
        /// The number of dimensions, after the caller's coalescing.
        ndim: u8,
    },
}

impl Layout {
    /// Every layout a backend uses: contiguous, and strided with 1 to
    /// [`MAX_STRIDED_DIMS`] dimensions.
    pub fn all() -> Vec<Layout> {
        let mut layouts = vec![Layout::Contiguous];
        layouts.extend((1..=MAX_STRIDED_DIMS).map(|ndim| Layout::Strided { ndim }));
        layouts
    }

    fn suffix(self) -> String {
        match self {
            Layout::Contiguous => "contig".to_string(),
            Layout::Strided { ndim } => format!("strided{ndim}"),
        }
    }
}

/// A pointwise operator with one tensor input.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)] // Each variant is the PyTorch operator of its name.
pub enum UnaryOp {
    Neg,
    Abs,
    Sign,
    Exp,
    Expm1,
    Log,
    Log1p,
    Log2,
    Sqrt,
    Rsqrt,
    Reciprocal,
    Sin,
    Cos,
    Tan,
    Tanh,
    Sigmoid,
    Erf,
    Relu,
    /// `gelu(approximate='none')`.
    GeluErf,
    /// `gelu(approximate='tanh')`.
    GeluTanh,
    Silu,
    Floor,
    Ceil,
    /// Half to even.
    Round,
    Trunc,
    LogicalNot,
    BitwiseNot,
}

impl UnaryOp {
    /// Every unary operator.
    pub const ALL: [UnaryOp; 27] = [
        UnaryOp::Neg,
        UnaryOp::Abs,
        UnaryOp::Sign,
        UnaryOp::Exp,
        UnaryOp::Expm1,
        UnaryOp::Log,
        UnaryOp::Log1p,
        UnaryOp::Log2,
        UnaryOp::Sqrt,
        UnaryOp::Rsqrt,
        UnaryOp::Reciprocal,
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Tan,
        UnaryOp::Tanh,
        UnaryOp::Sigmoid,
        UnaryOp::Erf,
        UnaryOp::Relu,
        UnaryOp::GeluErf,
        UnaryOp::GeluTanh,
        UnaryOp::Silu,
        UnaryOp::Floor,
        UnaryOp::Ceil,
        UnaryOp::Round,
        UnaryOp::Trunc,
        UnaryOp::LogicalNot,
        UnaryOp::BitwiseNot,
    ];

    /// The operator's name in entry points and in the template's functor
    /// (`op_<name>`).
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "neg",
            UnaryOp::Abs => "abs",
            UnaryOp::Sign => "sign",
            UnaryOp::Exp => "exp",
            UnaryOp::Expm1 => "expm1",
            UnaryOp::Log => "log",
            UnaryOp::Log1p => "log1p",
            UnaryOp::Log2 => "log2",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Rsqrt => "rsqrt",
            UnaryOp::Reciprocal => "reciprocal",
            UnaryOp::Sin => "sin",
            UnaryOp::Cos => "cos",
            UnaryOp::Tan => "tan",
            UnaryOp::Tanh => "tanh",
            UnaryOp::Sigmoid => "sigmoid",
            UnaryOp::Erf => "erf",
            UnaryOp::Relu => "relu",
            UnaryOp::GeluErf => "gelu_erf",
            UnaryOp::GeluTanh => "gelu_tanh",
            UnaryOp::Silu => "silu",
            UnaryOp::Floor => "floor",
            UnaryOp::Ceil => "ceil",
            UnaryOp::Round => "round",
            UnaryOp::Trunc => "trunc",
            UnaryOp::LogicalNot => "logical_not",
            UnaryOp::BitwiseNot => "bitwise_not",
        }
    }

    /// The output dtype for an input dtype, or `None` where PyTorch does
    /// not support the operator on it.
    pub fn output_dtype(self, input: Dtype) -> Option<Dtype> {
        use UnaryOp::*;
        match self {
            Abs | Sign => Some(input),
            Neg | Relu | Floor | Ceil | Round | Trunc => (input != Dtype::Bool).then_some(input),
            Exp | Expm1 | Log | Log1p | Log2 | Sqrt | Rsqrt | Reciprocal | Sin | Cos | Tan
            | Tanh | Sigmoid | Erf => Some(promote_to_float(input)),
            GeluErf | GeluTanh | Silu => input.is_floating().then_some(input),
            LogicalNot => Some(Dtype::Bool),
            BitwiseNot => (!input.is_floating()).then_some(input),
        }
    }
}

/// A pointwise operator with two tensor inputs of one dtype.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)] // Each variant is the PyTorch operator of its name.
pub enum BinaryOp {
    /// `a + alpha * b`; the kernel takes `alpha` in the compute type.
    Add,
    /// `a - alpha * b`; the kernel takes `alpha` in the compute type.
    Sub,
    Mul,
    /// `div(rounding_mode=None)`.
    DivTrue,
    /// `div(rounding_mode='trunc')`.
    DivTrunc,
    /// `div(rounding_mode='floor')`.
    DivFloor,
    Remainder,
    Fmod,
    /// NaN-propagating.
    Maximum,
    /// NaN-propagating.
    Minimum,
    Pow,
    Atan2,
    BitwiseAnd,
    BitwiseOr,
    BitwiseXor,
    LogicalAnd,
    LogicalOr,
    LogicalXor,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl BinaryOp {
    /// Every binary operator.
    pub const ALL: [BinaryOp; 24] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::DivTrue,
        BinaryOp::DivTrunc,
        BinaryOp::DivFloor,
        BinaryOp::Remainder,
        BinaryOp::Fmod,
        BinaryOp::Maximum,
        BinaryOp::Minimum,
        BinaryOp::Pow,
        BinaryOp::Atan2,
        BinaryOp::BitwiseAnd,
        BinaryOp::BitwiseOr,
        BinaryOp::BitwiseXor,
        BinaryOp::LogicalAnd,
        BinaryOp::LogicalOr,
        BinaryOp::LogicalXor,
        BinaryOp::Eq,
        BinaryOp::Ne,
        BinaryOp::Lt,
        BinaryOp::Le,
        BinaryOp::Gt,
        BinaryOp::Ge,
    ];

    /// The operator's name in entry points and in the template's functor
    /// (`op_<name>`).
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::DivTrue => "div_true",
            BinaryOp::DivTrunc => "div_trunc",
            BinaryOp::DivFloor => "div_floor",
            BinaryOp::Remainder => "remainder",
            BinaryOp::Fmod => "fmod",
            BinaryOp::Maximum => "maximum",
            BinaryOp::Minimum => "minimum",
            BinaryOp::Pow => "pow",
            BinaryOp::Atan2 => "atan2",
            BinaryOp::BitwiseAnd => "bitwise_and",
            BinaryOp::BitwiseOr => "bitwise_or",
            BinaryOp::BitwiseXor => "bitwise_xor",
            BinaryOp::LogicalAnd => "logical_and",
            BinaryOp::LogicalOr => "logical_or",
            BinaryOp::LogicalXor => "logical_xor",
            BinaryOp::Eq => "eq",
            BinaryOp::Ne => "ne",
            BinaryOp::Lt => "lt",
            BinaryOp::Le => "le",
            BinaryOp::Gt => "gt",
            BinaryOp::Ge => "ge",
        }
    }

    /// Whether the output is bool whatever the inputs (comparisons and
    /// logical operators): these compute in the inputs' compute type.
    pub fn is_predicate(self) -> bool {
        use BinaryOp::*;
        matches!(
            self,
            LogicalAnd | LogicalOr | LogicalXor | Eq | Ne | Lt | Le | Gt | Ge
        )
    }

    /// The output dtype for the inputs' dtype, or `None` where PyTorch does
    /// not support the operator on it.
    pub fn output_dtype(self, input: Dtype) -> Option<Dtype> {
        use BinaryOp::*;
        match self {
            Add | Mul | Maximum | Minimum => Some(input),
            Sub | DivTrunc | DivFloor | Remainder | Fmod | Pow => {
                (input != Dtype::Bool).then_some(input)
            }
            DivTrue | Atan2 => Some(promote_to_float(input)),
            BitwiseAnd | BitwiseOr | BitwiseXor => (!input.is_floating()).then_some(input),
            LogicalAnd | LogicalOr | LogicalXor | Eq | Ne | Lt | Le | Gt | Ge => Some(Dtype::Bool),
        }
    }

    fn takes_alpha(self) -> bool {
        matches!(self, BinaryOp::Add | BinaryOp::Sub)
    }
}

/// PyTorch's `promote_integer_inputs_to_float`: integers and bool compute
/// in the default float dtype.
fn promote_to_float(input: Dtype) -> Dtype {
    if input.is_floating() {
        input
    } else {
        Dtype::Float32
    }
}

/// What a pointwise kernel computes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PointwiseOp {
    /// One input.
    Unary(UnaryOp),
    /// Two inputs of one dtype.
    Binary(BinaryOp),
    /// `where(cond, x, y)`: a bool condition, `x` and `y` of the input
    /// dtype, which is also the output's.
    Where,
    /// `clamp(x, min, max)` with scalar bounds, taken in the compute type
    /// (a missing bound is the type's lowest or highest value).
    Clamp,
    /// Writes one value, taken in the output dtype; no input (the input
    /// dtype is the output's).
    Fill,
    /// The dtype-converting copy, `c10::convert` semantics.
    Copy,
}

impl PointwiseOp {
    /// Every operator other than the per-op enumerations' members.
    fn all() -> Vec<PointwiseOp> {
        let mut ops: Vec<PointwiseOp> = UnaryOp::ALL
            .iter()
            .map(|&op| PointwiseOp::Unary(op))
            .collect();
        ops.extend(BinaryOp::ALL.iter().map(|&op| PointwiseOp::Binary(op)));
        ops.extend([
            PointwiseOp::Where,
            PointwiseOp::Clamp,
            PointwiseOp::Fill,
            PointwiseOp::Copy,
        ]);
        ops
    }

    /// The operator's name in entry points.
    pub fn name(self) -> &'static str {
        match self {
            PointwiseOp::Unary(op) => op.name(),
            PointwiseOp::Binary(op) => op.name(),
            PointwiseOp::Where => "where",
            PointwiseOp::Clamp => "clamp",
            PointwiseOp::Fill => "fill",
            PointwiseOp::Copy => "copy",
        }
    }

    /// Whether PyTorch supports the operator from `input` to `output`.
    pub fn supports(self, input: Dtype, output: Dtype) -> bool {
        match self {
            PointwiseOp::Unary(op) => op.output_dtype(input) == Some(output),
            PointwiseOp::Binary(op) => op.output_dtype(input) == Some(output),
            PointwiseOp::Where | PointwiseOp::Fill => input == output,
            PointwiseOp::Clamp => input == output && input != Dtype::Bool,
            PointwiseOp::Copy => true,
        }
    }

    /// The (input, output) dtype pairs PyTorch supports the operator on.
    pub fn signatures(self) -> Vec<(Dtype, Dtype)> {
        let mut pairs = Vec::new();
        for input in Dtype::ALL {
            for output in Dtype::ALL {
                if self.supports(input, output) {
                    pairs.push((input, output));
                }
            }
        }
        pairs
    }
}

/// One pointwise instantiation.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PointwiseKernel {
    /// What it computes.
    pub op: PointwiseOp,
    /// The inputs' dtype (for `where`, of `x` and `y`; for `fill`, the
    /// output's).
    pub input: Dtype,
    /// The output's dtype.
    pub output: Dtype,
    /// How it walks its operands.
    pub layout: Layout,
}

impl PointwiseKernel {
    /// An instantiation, checked against the operator's supported dtypes
    /// and the layout's dimension limit.
    pub fn new(op: PointwiseOp, input: Dtype, output: Dtype, layout: Layout) -> Result<Self> {
        if !op.supports(input, output) {
            return Err(Error::not_implemented(format!(
                "\"{}\" has no CUDA kernel from {} to {}",
                op.name(),
                input.scalar_type(),
                output.scalar_type()
            )));
        }
        if let Layout::Strided { ndim } = layout {
            if ndim == 0 || ndim > MAX_STRIDED_DIMS {
                return Err(Error::runtime(format!(
                    "strided CUDA kernels take 1 to {MAX_STRIDED_DIMS} dimensions, got {ndim}"
                )));
            }
        }
        Ok(PointwiseKernel {
            op,
            input,
            output,
            layout,
        })
    }

    /// Every pointwise instantiation a backend uses: each operator, each
    /// supported dtype pair, each layout.
    pub fn all() -> Vec<PointwiseKernel> {
        let layouts = Layout::all();
        let mut kernels = Vec::new();
        for op in PointwiseOp::all() {
            for (input, output) in op.signatures() {
                for &layout in &layouts {
                    kernels.push(PointwiseKernel {
                        op,
                        input,
                        output,
                        layout,
                    });
                }
            }
        }
        kernels
    }

    /// The `extern "C"` entry point's name, e.g. `at_pw_exp_i32_f32_contig`.
    pub fn entry_point(&self) -> String {
        format!(
            "{}_{}",
            super::entry_name("pw", self.op.name(), self.input, self.output),
            self.layout.suffix()
        )
    }

    /// The compute type the operator runs in: the input's for predicates
    /// and the copy, the output's otherwise (so promoted integer inputs
    /// compute in float), widened by `opmath`.
    fn compute_type(&self) -> &'static str {
        match self.op {
            PointwiseOp::Copy => self.input.cuda_type(),
            PointwiseOp::Binary(op) if op.is_predicate() => self.input.opmath().cuda_type(),
            PointwiseOp::Unary(UnaryOp::LogicalNot) => self.input.opmath().cuda_type(),
            _ => self.output.opmath().cuda_type(),
        }
    }

    /// The entry point's definition (the rendered source is the prelude,
    /// `pointwise.cu` and this).
    pub(super) fn render_entry(&self) -> String {
        let out = self.output.cuda_type();
        let inp = self.input.cuda_type();
        let c = self.compute_type();
        let name = self.entry_point();
        // Parameters between the pointers and the scalars: the count, and
        // for strided layouts the offset calculator's parameters.
        let (count, layout_params, layout_args, loop_prefix, ndim_arg) = match self.layout {
            Layout::Contiguous => ("long long n", "", "", "contig", String::new()),
            Layout::Strided { ndim } => (
                "unsigned int n",
                ", at_strided_params p",
                ", p",
                "strided",
                format!("{ndim}, "),
            ),
        };
        let mut src = String::new();
        match self.op {
            PointwiseOp::Unary(_) | PointwiseOp::Clamp | PointwiseOp::Copy => {
                let (scalars, functor) = match self.op {
                    PointwiseOp::Clamp => (
                        format!(", {c} lo, {c} hi"),
                        format!("op_clamp<{c}>{{lo, hi}}"),
                    ),
                    PointwiseOp::Copy => (String::new(), format!("op_identity<{c}>()")),
                    _ => (String::new(), format!("op_{}<{c}>()", self.op.name())),
                };
                let _ = write!(
                    src,
                    "extern \"C\" __global__ void {name}({out}* __restrict__ out, const {inp}* __restrict__ in, \
                     {count}{layout_params}{scalars}) {{\n  at_unary_{loop_prefix}<{ndim_arg}{out}, {c}, {inp}>(out, in, n{layout_args}, {functor});\n}}\n"
                );
            }
            PointwiseOp::Binary(op) => {
                let (scalars, functor) = if op.takes_alpha() {
                    (
                        format!(", {c} alpha"),
                        format!("op_{}<{c}>{{alpha}}", op.name()),
                    )
                } else {
                    (String::new(), format!("op_{}<{c}>()", op.name()))
                };
                let _ = write!(
                    src,
                    "extern \"C\" __global__ void {name}({out}* __restrict__ out, const {inp}* __restrict__ a, \
                     const {inp}* __restrict__ b, {count}{layout_params}{scalars}) {{\n  at_binary_{loop_prefix}<{ndim_arg}{out}, {c}, {inp}>(out, a, b, n{layout_args}, {functor});\n}}\n"
                );
            }
            PointwiseOp::Where => {
                let _ = write!(
                    src,
                    "extern \"C\" __global__ void {name}({out}* __restrict__ out, const bool* __restrict__ cond, \
                     const {out}* __restrict__ x, const {out}* __restrict__ y, {count}{layout_params}) {{\n  at_where_{loop_prefix}<{ndim_arg}{out}>(out, cond, x, y, n{layout_args});\n}}\n"
                );
            }
            PointwiseOp::Fill => {
                let _ = write!(
                    src,
                    "extern \"C\" __global__ void {name}({out}* __restrict__ out, {count}{layout_params}, {out} value) {{\n  at_fill_{loop_prefix}<{ndim_arg}{out}>(out, n{layout_args}, value);\n}}\n"
                );
            }
        }
        src
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtype_support_follows_pytorch() {
        let neg = PointwiseOp::Unary(UnaryOp::Neg);
        assert!(!neg.supports(Dtype::Bool, Dtype::Bool));
        assert_eq!(neg.signatures().len(), 9);
        let exp = PointwiseOp::Unary(UnaryOp::Exp);
        assert!(exp.supports(Dtype::Int32, Dtype::Float32));
        assert!(!exp.supports(Dtype::Int32, Dtype::Int32));
        assert_eq!(PointwiseOp::Unary(UnaryOp::Silu).signatures().len(), 4);
        assert_eq!(
            PointwiseOp::Unary(UnaryOp::BitwiseNot).signatures().len(),
            6
        );
        assert!(PointwiseOp::Binary(BinaryOp::Lt).supports(Dtype::Float16, Dtype::Bool));
        assert!(!PointwiseOp::Binary(BinaryOp::Sub).supports(Dtype::Bool, Dtype::Bool));
        assert_eq!(PointwiseOp::Copy.signatures().len(), 100);
    }

    #[test]
    fn new_checks_dtypes_and_layout() {
        let relu = PointwiseOp::Unary(UnaryOp::Relu);
        assert!(PointwiseKernel::new(relu, Dtype::Bool, Dtype::Bool, Layout::Contiguous).is_err());
        assert!(
            PointwiseKernel::new(relu, Dtype::Int8, Dtype::Int8, Layout::Strided { ndim: 9 })
                .is_err()
        );
        assert!(
            PointwiseKernel::new(relu, Dtype::Int8, Dtype::Int8, Layout::Strided { ndim: 0 })
                .is_err()
        );
        let k = PointwiseKernel::new(relu, Dtype::Int8, Dtype::Int8, Layout::Strided { ndim: 3 })
            .unwrap();
        assert_eq!(k.entry_point(), "at_pw_relu_i8_i8_strided3");
    }

    #[test]
    fn entry_renders_the_loop_and_the_functor() {
        let k = PointwiseKernel::new(
            PointwiseOp::Binary(BinaryOp::Add),
            Dtype::Float16,
            Dtype::Float16,
            Layout::Contiguous,
        )
        .unwrap();
        let src = k.render_entry();
        assert!(src.contains("void at_pw_add_f16_f16_contig(__half* __restrict__ out"));
        assert!(src.contains(
            "at_binary_contig<__half, float, __half>(out, a, b, n, op_add<float>{alpha})"
        ));
        let k = PointwiseKernel::new(
            PointwiseOp::Fill,
            Dtype::Int64,
            Dtype::Int64,
            Layout::Strided { ndim: 2 },
        )
        .unwrap();
        assert!(k
            .render_entry()
            .contains("at_fill_strided<2, long long>(out, n, p, value)"));
    }
}
