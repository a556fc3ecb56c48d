//! A chain of elementwise operations run as one pass over the data (a
//! graph runner's pointwise fusion, as inductor's fused loops and ONNX
//! Runtime's fused activations): a [`PointwiseProgram`] names, in order,
//! the operations of the chain, each reading the program's inputs, the
//! results of operations before it and numbers; a backend evaluates it
//! block by block, so the intermediate results stay in its cache and are
//! never written out. `aten-core` declares the program and the stub
//! ([`POINTWISE_PROGRAM_STUB`]); a backend serves the operands it can
//! (the CPU one: float32, contiguous, all of one shape) and declines the
//! rest, which the caller then runs as the separate calls they were.

use aten_dispatch::library::__linkme::distributed_slice;
use c10_core::{Error, Result, TensorBase};

use crate::dispatch_stub::StubKernel;

/// One operation of a program, each with the formula of its operator's
/// kernel (so that a fused chain rounds as the separate calls do).
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum PointwiseOp {
    /// `add` (with `alpha` 1).
    Add,
    /// `sub` (with `alpha` 1).
    Sub,
    /// `mul`.
    Mul,
    /// `div` (true division).
    Div,
    /// `clamp` with number bounds (neither NaN); also `clamp_min`,
    /// `clamp_max` and `hardtanh`.
    Clamp {
        /// The lower bound.
        min: Option<f64>,
        /// The upper bound.
        max: Option<f64>,
    },
    /// `relu`.
    Relu,
    /// `sigmoid`.
    Sigmoid,
    /// `silu`.
    Silu,
    /// `tanh`.
    Tanh,
    /// `hardswish`.
    Hardswish,
    /// `hardsigmoid`.
    Hardsigmoid,
}

impl PointwiseOp {
    /// How many operands the operation reads.
    pub fn arity(self) -> usize {
        match self {
            PointwiseOp::Add | PointwiseOp::Sub | PointwiseOp::Mul | PointwiseOp::Div => 2,
            _ => 1,
        }
    }
}

/// What an operation reads.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum PointwiseOperand {
    /// The program's `k`-th input.
    Input(usize),
    /// The result of the program's `k`-th operation (an earlier one).
    Result(usize),
    /// A number (a Python number of the graph: a wrapped number), taken
    /// in the operands' dtype as PyTorch's kernels take it.
    Number(f64),
}

/// One operation and its operands.
#[derive(Clone, Debug, PartialEq)]
pub struct PointwiseStep {
    /// The operation.
    pub op: PointwiseOp,
    /// Its operands, as many as [`PointwiseOp::arity`].
    pub operands: Vec<PointwiseOperand>,
}

/// A checked chain of operations (see the module docs); its result is its
/// last operation's.
#[derive(Clone, Debug, PartialEq)]
pub struct PointwiseProgram {
    inputs: usize,
    steps: Vec<PointwiseStep>,
}

impl PointwiseProgram {
    /// The program of `steps` over `inputs` inputs. Checks what a backend
    /// relies on: at least one input and one step, each step with as many
    /// operands as its operation reads, each reading an input that exists
    /// or an earlier step, and clamp bounds that are not NaN.
    pub fn new(inputs: usize, steps: Vec<PointwiseStep>) -> Result<PointwiseProgram> {
        if inputs == 0 || steps.is_empty() {
            return Err(Error::runtime(
                "a pointwise program needs at least one input and one step",
            ));
        }
        for (i, step) in steps.iter().enumerate() {
            if step.operands.len() != step.op.arity() {
                return Err(Error::runtime(format!(
                    "pointwise step {i}: {:?} takes {} operands, not {}",
                    step.op,
                    step.op.arity(),
                    step.operands.len()
                )));
            }
            for operand in &step.operands {
                let fits = match *operand {
                    PointwiseOperand::Input(k) => k < inputs,
                    PointwiseOperand::Result(k) => k < i,
                    PointwiseOperand::Number(_) => true,
                };
                if !fits {
                    return Err(Error::runtime(format!(
                        "pointwise step {i} reads {operand:?}, which does not come before it"
                    )));
                }
            }
            if let PointwiseOp::Clamp { min, max } = step.op {
                if min.is_some_and(f64::is_nan) || max.is_some_and(f64::is_nan) {
                    return Err(Error::runtime(format!(
                        "pointwise step {i}: a clamp bound is NaN"
                    )));
                }
            }
        }
        Ok(PointwiseProgram { inputs, steps })
    }

    /// How many inputs the program reads.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// The operations, in order (the last one's result is the program's).
    pub fn steps(&self) -> &[PointwiseStep] {
        &self.steps
    }
}

/// A backend's evaluation of a program on `inputs` (one per program
/// input): the result, or `Ok(None)` when the backend does not serve these
/// operands (their dtype, layout or shapes), which the caller then runs
/// unfused. The caller has checked that nothing but the backend's kernels
/// would see the call (no autograd, no mode). `donated` names an input
/// that nothing else can reach (its value dies with the call): the backend
/// may write the result into it and return it, instead of a new tensor.
pub type PointwiseProgramKernel = fn(
    program: &PointwiseProgram,
    inputs: &[TensorBase],
    donated: Option<usize>,
) -> Result<Option<TensorBase>>;

/// The program evaluators of the linked backends, by device type.
#[distributed_slice]
#[linkme(crate = crate::dispatch_stub::__linkme)]
pub static POINTWISE_PROGRAM_STUB: [StubKernel<PointwiseProgramKernel>];

#[cfg(test)]
mod tests {
    use super::*;

    fn step(op: PointwiseOp, operands: &[PointwiseOperand]) -> PointwiseStep {
        PointwiseStep {
            op,
            operands: operands.to_vec(),
        }
    }

    #[test]
    fn programs_are_checked_where_they_are_built() {
        use PointwiseOperand::*;
        let silu = vec![
            step(PointwiseOp::Sigmoid, &[Input(0)]),
            step(PointwiseOp::Mul, &[Input(0), Result(0)]),
        ];
        assert!(PointwiseProgram::new(1, silu.clone()).is_ok());
        assert!(PointwiseProgram::new(0, silu).is_err());
        assert!(PointwiseProgram::new(1, vec![]).is_err());
        // A step reading itself or a later one, an input past the last,
        // a missing operand, a NaN bound.
        assert!(PointwiseProgram::new(1, vec![step(PointwiseOp::Relu, &[Result(0)])]).is_err());
        assert!(PointwiseProgram::new(1, vec![step(PointwiseOp::Relu, &[Input(1)])]).is_err());
        assert!(PointwiseProgram::new(1, vec![step(PointwiseOp::Add, &[Input(0)])]).is_err());
        let nan = PointwiseOp::Clamp {
            min: Some(f64::NAN),
            max: None,
        };
        assert!(PointwiseProgram::new(1, vec![step(nan, &[Input(0)])]).is_err());
    }
}
