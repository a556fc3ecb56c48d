//! What a profiled run records of each node ([`NodeProfile`]): its wall
//! time, and the work its call did, so that a profile can give each
//! operator's rate against the machine's peaks: the floating-point
//! operations of the calls that multiply matrices (convolutions, matrix
//! products, attention; a multiply-add counts two), and for every call the
//! bytes of the tensors it was given and returned.

use std::time::Duration;

use aten_boxing::IValue;
use c10_core::TensorBase;

/// Per node of a graph (indexed as
/// [`Interpreter::node_names`](super::Interpreter::node_names)): the wall
/// time, floating-point operations and bytes summed over the profiled
/// runs.
#[derive(Clone, Debug, Default)]
pub struct NodeProfile {
    /// Wall time of each node.
    pub time: Vec<Duration>,
    /// Floating-point operations of each node's call (0 for a call that
    /// multiplies no matrices).
    pub flops: Vec<f64>,
    /// Bytes of the tensors each node's call read and wrote (each operand
    /// and result counted whole, once per appearance).
    pub bytes: Vec<f64>,
}

impl NodeProfile {
    /// An empty profile of `nodes` nodes.
    pub fn new(nodes: usize) -> NodeProfile {
        NodeProfile {
            time: vec![Duration::ZERO; nodes],
            flops: vec![0.0; nodes],
            bytes: vec![0.0; nodes],
        }
    }

    /// Adds a run of node `i`: its time, and the work of a call of
    /// `target` on `operands` (in the schema's order) that gave `result`.
    pub(super) fn add(
        &mut self,
        i: usize,
        time: Duration,
        target: Option<&str>,
        operands: &[IValue],
        result: &IValue,
    ) {
        if let Some(t) = self.time.get_mut(i) {
            *t += time;
        }
        if let Some(f) = self.flops.get_mut(i) {
            *f += target.map_or(0.0, |t| flops(t, operands, result));
        }
        if let Some(b) = self.bytes.get_mut(i) {
            *b += operands.iter().chain([result]).map(bytes).sum::<f64>();
        }
    }
}

/// The bytes of the tensors in `v`.
fn bytes(v: &IValue) -> f64 {
    let of = |t: &TensorBase| {
        let size = t.dtype().map_or(0, |d| d.element_size());
        t.numel() as f64 * size as f64
    };
    match v {
        IValue::Tensor(t) if t.defined() => of(t),
        IValue::TensorList(ts) => ts.iter().filter(|t| t.defined()).map(of).sum(),
        IValue::OptionalTensorList(ts) => ts.iter().flatten().filter(|t| t.defined()).map(of).sum(),
        IValue::Tuple(items) | IValue::GenericList(items) => items.iter().map(bytes).sum(),
        _ => 0.0,
    }
}

/// The floating-point operations of a call of `target` (an operator's
/// qualified name and overload, `aten::addmm` or `aten::add.Tensor`).
fn flops(target: &str, operands: &[IValue], result: &IValue) -> f64 {
    let tensor = |k: usize| match operands.get(k) {
        Some(IValue::Tensor(t)) if t.defined() => Some(t),
        _ => None,
    };
    let out = match result {
        IValue::Tensor(t) => Some(t),
        IValue::Tuple(items) => match items.first() {
            Some(IValue::Tensor(t)) => Some(t),
            _ => None,
        },
        _ => None,
    };
    let last = |t: &TensorBase| t.sizes().last().copied().unwrap_or(1) as f64;
    // The operator's name without its overload.
    let name = target.split('.').next().unwrap_or(target);
    let count = || -> Option<f64> {
        match name {
            "aten::convolution" | "aten::_convolution" | "aten::conv1d" | "aten::conv2d"
            | "aten::conv3d" => {
                // Each output element of a convolution sums over one filter
                // (`C_in / groups * kernel`); each input element of a
                // transposed one spreads over one.
                let (input, weight) = (tensor(0)?, tensor(1)?);
                let filter = weight.numel() as f64 / weight.sizes().first().copied()?.max(1) as f64;
                let transposed = name == "aten::convolution" || name == "aten::_convolution";
                let transposed =
                    transposed && operands.get(6).and_then(|v| v.to_bool().ok()) == Some(true);
                let outputs = if transposed {
                    input.numel() as f64
                } else {
                    out?.numel() as f64
                };
                Some(2.0 * outputs * filter)
            }
            "aten::mm" | "aten::bmm" | "aten::matmul" | "aten::linear" => {
                Some(2.0 * out?.numel() as f64 * last(tensor(0)?))
            }
            "aten::addmm" | "aten::baddbmm" => Some(2.0 * out?.numel() as f64 * last(tensor(1)?)),
            "aten::scaled_dot_product_attention" => {
                // `q @ k^T` (L x S by E) and its weights times `v` (by Ev).
                let (q, k, v) = (tensor(0)?, tensor(1)?, tensor(2)?);
                let (l, e) = (q.sizes().iter().rev().nth(1).copied()? as f64, last(q));
                let s = k.sizes().iter().rev().nth(1).copied()? as f64;
                let batch = q.numel() as f64 / (l * e).max(1.0);
                Some(2.0 * batch * l * s * (e + last(v)))
            }
            _ => None,
        }
    };
    count().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zeros(sizes: &[i64]) -> IValue {
        let numel = sizes.iter().product::<i64>() as usize;
        IValue::Tensor(TensorBase::from_vec(vec![0f32; numel], sizes).unwrap())
    }

    #[test]
    fn matrix_products_count_two_operations_per_multiply_add() {
        let mut p = NodeProfile::new(3);
        let (x, w) = (zeros(&[4, 8]), zeros(&[8, 16]));
        p.add(
            0,
            Duration::from_micros(5),
            Some("aten::mm"),
            &[x.clone(), w],
            &zeros(&[4, 16]),
        );
        assert_eq!(p.flops[0], 2.0 * 4.0 * 16.0 * 8.0);
        // Each operand and the result, whole: (32 + 128 + 64) floats.
        assert_eq!(p.bytes[0], 4.0 * (32.0 + 128.0 + 64.0));
        assert_eq!(p.time[0], Duration::from_micros(5));
        let bias = zeros(&[16]);
        let wt = zeros(&[16, 8]);
        p.add(
            1,
            Duration::ZERO,
            Some("aten::addmm"),
            &[bias, x.clone(), wt],
            &zeros(&[4, 16]),
        );
        assert_eq!(p.flops[1], 2.0 * 4.0 * 16.0 * 8.0);
        p.add(
            2,
            Duration::ZERO,
            Some("aten::relu"),
            std::slice::from_ref(&x),
            &x,
        );
        assert_eq!(p.flops[2], 0.0);
        assert_eq!(p.bytes[2], 4.0 * 64.0);
    }

    #[test]
    fn a_convolution_counts_one_filter_per_output_element() {
        let mut p = NodeProfile::new(2);
        // 3x3 filters over 4 of 8 channels (2 groups), 6 output channels.
        let (x, w) = (zeros(&[1, 8, 5, 5]), zeros(&[6, 4, 3, 3]));
        let out = zeros(&[1, 6, 3, 3]);
        p.add(
            0,
            Duration::ZERO,
            Some("aten::conv2d"),
            &[x.clone(), w.clone()],
            &out,
        );
        assert_eq!(p.flops[0], 2.0 * 54.0 * 36.0);
        // Transposed: each input element spreads over one filter.
        let args = [
            x,
            w,
            IValue::None,
            IValue::None,
            IValue::None,
            IValue::None,
            IValue::bool(true),
        ];
        p.add(1, Duration::ZERO, Some("aten::convolution"), &args, &out);
        assert_eq!(p.flops[1], 2.0 * 200.0 * 36.0);
    }
}
