//! [`TensorIteratorConfig`]: the operands of an iteration and the
//! switches of its build (PyTorch's `TensorIteratorConfig`), with the
//! configurations of the common operator kinds (binary, unary, comparison).

use c10_core::{Result, ScalarType, SmallVec};

use super::{TensorIterator, TensorRef, UNDEFINED};
use crate::Tensor;

/// How to build a [`TensorIterator`] (`TensorIteratorConfig`). It borrows
/// its operands (PyTorch's `add_borrowed_input`), and so does the
/// iterator it builds.
#[derive(Clone, Debug)]
pub struct TensorIteratorConfig<'a> {
    pub(super) outputs: SmallVec<Option<&'a Tensor>, 2>,
    pub(super) inputs: SmallVec<TensorRef<'a>, 4>,
    /// The inputs the configuration owns, by position in `inputs`: made for
    /// the iteration (a wrapped scalar, a converted copy), so nobody else
    /// lays them out.
    /// (Boxed: most configurations have none, and the configuration is
    /// moved on the hot path.)
    pub(super) owned_inputs: Option<Box<[(usize, Tensor)]>>,
    pub(super) check_all_same_dtype: bool,
    pub(super) promote_inputs_to_common_dtype: bool,
    pub(super) promote_integer_inputs_to_float: bool,
    pub(super) cast_common_dtype_to_outputs: bool,
    pub(super) enforce_safe_casting_to_output: bool,
    pub(super) static_output_dtype: Option<ScalarType>,
    pub(super) allow_cpu_scalars: bool,
    pub(super) resize_outputs: bool,
    pub(super) check_mem_overlap: bool,
}

impl Default for TensorIteratorConfig<'_> {
    #[inline]
    fn default() -> Self {
        TensorIteratorConfig {
            outputs: SmallVec::new(),
            inputs: SmallVec::new(),
            owned_inputs: None,
            check_all_same_dtype: true,
            promote_inputs_to_common_dtype: false,
            promote_integer_inputs_to_float: false,
            cast_common_dtype_to_outputs: false,
            enforce_safe_casting_to_output: false,
            static_output_dtype: None,
            allow_cpu_scalars: true,
            resize_outputs: true,
            check_mem_overlap: true,
        }
    }
}

/// An input a configuration borrows (`&Tensor`: PyTorch's
/// `add_borrowed_input`) or owns (`Tensor`: `add_owned_input`, for a
/// tensor made for the iteration such as a wrapped scalar).
pub trait IntoInput<'a> {
    /// Adds `self` to `config` as its next input.
    fn add_to(self, config: TensorIteratorConfig<'a>) -> TensorIteratorConfig<'a>;
}

impl<'a> IntoInput<'a> for &'a Tensor {
    #[inline]
    fn add_to(self, config: TensorIteratorConfig<'a>) -> TensorIteratorConfig<'a> {
        config.add_input(self)
    }
}

impl<'a> IntoInput<'a> for Tensor {
    #[inline]
    fn add_to(self, config: TensorIteratorConfig<'a>) -> TensorIteratorConfig<'a> {
        config.add_owned_input(self)
    }
}

impl<'a> TensorIteratorConfig<'a> {
    /// The configuration of a binary pointwise operation with type promotion
    /// (`build_borrowing_binary_op`; an owned `b`:
    /// `build_borrowing_except_last_argument_binary_op`): promote inputs,
    /// cast the result to a given output if it can hold it.
    #[inline]
    pub fn binary_op(
        out: Option<&'a Tensor>,
        a: &'a Tensor,
        b: impl IntoInput<'a>,
    ) -> TensorIteratorConfig<'a> {
        b.add_to(TensorIteratorConfig::default().add_output(out).add_input(a))
            .promote_inputs_to_common_dtype(true)
            .cast_common_dtype_to_outputs(true)
            .enforce_safe_casting_to_output(true)
    }

    /// A unary operation that keeps the dtype (`build_borrowing_unary_op`;
    /// an owned input: `build_unary_op` over a converted copy).
    #[inline]
    pub fn unary_op(out: Option<&'a Tensor>, a: impl IntoInput<'a>) -> TensorIteratorConfig<'a> {
        a.add_to(TensorIteratorConfig::default().add_output(out))
            .cast_common_dtype_to_outputs(false)
            .enforce_safe_casting_to_output(false)
            .check_all_same_dtype(true)
    }

    /// A unary floating operation: integer inputs compute in the default
    /// float dtype (`build_borrowing_unary_float_op`).
    #[inline]
    pub fn unary_float_op(out: Option<&'a Tensor>, a: &'a Tensor) -> TensorIteratorConfig<'a> {
        TensorIteratorConfig::default()
            .add_output(out)
            .add_input(a)
            .promote_inputs_to_common_dtype(true)
            .promote_integer_inputs_to_float(true)
            .cast_common_dtype_to_outputs(true)
            .enforce_safe_casting_to_output(true)
    }

    /// A comparison: promoted inputs, a `bool` output
    /// (`build_borrowing_comparison_op`; an owned `b`:
    /// `build_borrowing_except_last_argument_comparison_op`).
    #[inline]
    pub fn comparison_op(
        out: Option<&'a Tensor>,
        a: &'a Tensor,
        b: impl IntoInput<'a>,
    ) -> TensorIteratorConfig<'a> {
        let c = b
            .add_to(TensorIteratorConfig::default().add_output(out).add_input(a))
            .promote_inputs_to_common_dtype(true);
        if out.is_none() {
            c.static_output_dtype(ScalarType::Bool)
        } else {
            c.cast_common_dtype_to_outputs(true)
        }
    }

    /// Adds an output (`None`: allocate one).
    #[inline]
    pub fn add_output(mut self, out: Option<&'a Tensor>) -> Self {
        self.outputs.push(out.filter(|t| t.defined()));
        self
    }

    /// Adds an input.
    #[inline]
    pub fn add_input(mut self, input: &'a Tensor) -> Self {
        self.inputs.push(TensorRef(input));
        self
    }

    /// Adds an input the iteration owns (`add_owned_input`): a tensor made
    /// for it, such as a wrapped scalar, that nobody else resizes.
    #[inline]
    pub fn add_owned_input(mut self, input: Tensor) -> Self {
        let mut owned = self.owned_inputs.take().map_or_else(Vec::new, Vec::from);
        owned.push((self.inputs.len(), input));
        self.owned_inputs = Some(owned.into_boxed_slice());
        self.inputs.push(TensorRef(&UNDEFINED));
        self
    }

    /// Require every operand to have one dtype.
    #[inline]
    pub fn check_all_same_dtype(mut self, on: bool) -> Self {
        self.check_all_same_dtype = on;
        self
    }

    /// Compute in the promoted dtype of the inputs.
    #[inline]
    pub fn promote_inputs_to_common_dtype(mut self, on: bool) -> Self {
        self.promote_inputs_to_common_dtype = on;
        if on {
            self.check_all_same_dtype = false;
        }
        self
    }

    /// Integer and bool inputs compute in the default float dtype.
    #[inline]
    pub fn promote_integer_inputs_to_float(mut self, on: bool) -> Self {
        self.promote_integer_inputs_to_float = on;
        self
    }

    /// Outputs of another dtype than the computation's receive a cast copy.
    #[inline]
    pub fn cast_common_dtype_to_outputs(mut self, on: bool) -> Self {
        self.cast_common_dtype_to_outputs = on;
        if on {
            self.check_all_same_dtype = false;
        }
        self
    }

    /// Refuse outputs that cannot hold the computation's dtype.
    #[inline]
    pub fn enforce_safe_casting_to_output(mut self, on: bool) -> Self {
        self.enforce_safe_casting_to_output = on;
        self
    }

    /// Whether outputs of another shape are resized (`out=`) or refused
    /// (in-place operations: the output is an input).
    #[inline]
    pub fn resize_outputs(mut self, on: bool) -> Self {
        self.resize_outputs = on;
        self
    }

    /// Refuse given outputs whose elements share memory, and inputs that
    /// partially overlap an output (`compute_mem_overlaps`; on by default).
    #[inline]
    pub fn check_mem_overlap(mut self, on: bool) -> Self {
        self.check_mem_overlap = on;
        self
    }

    /// Allocated outputs get this dtype (comparisons: bool).
    #[inline]
    pub fn static_output_dtype(mut self, dtype: ScalarType) -> Self {
        self.static_output_dtype = Some(dtype);
        self.check_all_same_dtype = false;
        self
    }

    /// Builds the iterator.
    #[inline]
    pub fn build(self) -> Result<TensorIterator<'a>> {
        TensorIterator::build(self)
    }
}
