//! Fusions chosen per graph at load. A batch normalisation in inference
//! form (`_native_batch_norm_legit_no_training`, or `batch_norm` with
//! `training` false as pre-dispatch graphs have it) whose input is a
//! convolution (`convolution`, `conv1d`, `conv2d`, `conv3d`) that nothing
//! else reads, with the parameters and statistics of both known before any
//! run, is folded into the convolution without touching its weight:
//! with `scale = gamma / sqrt(var + eps)` per output channel, the
//! convolution's bias becomes `bias - mean + beta / scale` and the
//! normalisation a product by `scale` (`mul` by a `[C, 1, ..]` constant),
//! which joins the pointwise chain after it ([`fuse_pointwise`]): a ReLU,
//! a residual sum. A run then makes one pass over the data where it made
//! two, and the weights stay where the archive's mapping put them (ONNX
//! Runtime and inductor fold the scale into a copy of the weight
//! instead). The sums are rounded in another order than PyTorch's,
//! within the corpora's tolerances; [`LoadOptions`]'s `fuse` switch turns
//! it off. A channel whose scale is zero or not finite leaves its
//! normalisation as it is.
//!
//! [`LoadOptions`]: crate::export::LoadOptions
//! [`fuse_pointwise`]: Interpreter::fuse_pointwise

use std::sync::Arc;

use aten_boxing::IValue;
use aten_ops::OpOverload;
use c10_core::{ScalarType, TensorBase};

use super::{Interpreter, Operand, Step};
use crate::graph::Arg;

/// The batch normalisation's statistics and affine parameters.
struct Norm {
    weight: Option<Vec<f64>>,
    bias: Option<Vec<f64>>,
    mean: Vec<f64>,
    var: Vec<f64>,
    eps: f64,
}

impl Interpreter {
    /// Folds every batch normalisation that follows a convolution into it
    /// (see the module docs); `known` as for
    /// [`fold_constants`](Interpreter::fold_constants). Returns how many
    /// were folded.
    pub fn fuse_batch_norms(&mut self, known: &[Option<IValue>]) -> usize {
        if known.len() != self.num_inputs {
            return 0;
        }
        let Ok(mul) = aten_ops::ops().overload("aten::mul.Tensor") else {
            return 0;
        };
        let mut readers = vec![Vec::new(); self.steps.len()];
        for (i, step) in self.steps.iter().enumerate() {
            for j in Interpreter::step_reads(step) {
                readers[j].push(i);
            }
        }
        let mut count = 0;
        for i in 0..self.steps.len() {
            let Some((conv, weight, bias)) = self.foldable_pair(i, known, &readers) else {
                continue;
            };
            let Some(norm) = self.norm_at(i, known) else {
                continue;
            };
            let Some((scale, bias)) = folded_parameters(&weight, bias.as_ref(), &norm) else {
                continue;
            };
            if self.fold_at(i, conv, scale, bias, &mul, &readers).is_some() {
                count += 1;
            }
        }
        if count > 0 {
            self.dead = Interpreter::liveness(&self.steps);
        }
        count
    }

    /// Rewrites the normalisation at `i` of the convolution at `conv`: the
    /// convolution's bias becomes `bias`, and where the normalisation's
    /// result was read (the node itself for `batch_norm`, its first
    /// `getitem` otherwise) stands its product by `scale`. `None` (and
    /// nothing changed) when the product cannot be bound.
    fn fold_at(
        &mut self,
        i: usize,
        conv: usize,
        scale: TensorBase,
        bias: TensorBase,
        mul: &Arc<OpOverload>,
        readers: &[Vec<usize>],
    ) -> Option<()> {
        let product = Interpreter::call_step(
            mul,
            &[Arg::Node(conv), Arg::Const(IValue::Tensor(scale))],
            &[],
        )
        .ok()?;
        let one_result = matches!(
            &self.steps[i],
            Step::Call { op, .. } if op.name() == "aten::batch_norm"
        );
        // The first `getitem` of the first result stands for it.
        let first = readers[i]
            .iter()
            .copied()
            .find(|&r| matches!(self.steps[r], Step::GetItem { index: 0, .. }));
        let at = match (one_result, first) {
            (true, _) => i,
            (false, Some(r)) => r,
            (false, None) => return None,
        };
        if let Step::Call {
            template, slots, ..
        } = &mut self.steps[conv]
        {
            slots.retain(|(pos, _)| *pos != 2);
            template[2] = IValue::Tensor(bias);
        }
        if !one_result {
            // Other readers of the first result read the product; those of
            // the statistics (read by nothing) are no longer made.
            for &r in &readers[i] {
                self.steps[r] = match self.steps[r] {
                    Step::GetItem { index: 0, .. } if r != at => Step::GetItem { of: at, index: 0 },
                    _ => Step::Constant(IValue::None),
                };
            }
            self.steps[i] = Step::Constant(IValue::None);
        }
        self.steps[at] = product;
        Some(())
    }

    /// For a batch normalisation at `i` whose first result alone is read
    /// and whose input is a convolution (not transposed) that only it
    /// reads, with a known float weight: the convolution's step, weight
    /// and bias.
    fn foldable_pair(
        &self,
        i: usize,
        known: &[Option<IValue>],
        readers: &[Vec<usize>],
    ) -> Option<(usize, TensorBase, Option<TensorBase>)> {
        let Step::Call {
            op,
            template,
            slots,
            ..
        } = &self.steps[i]
        else {
            return None;
        };
        match op.name().as_str() {
            "aten::_native_batch_norm_legit_no_training" => {}
            "aten::batch_norm" if template.get(5).map(IValue::to_bool) == Some(Ok(false)) => {}
            _ => return None,
        }
        // Exported graphs take every result with a `getitem`; those of the
        // statistics are read by nothing.
        // `batch_norm` has one result.
        let first_only = op.name() == "aten::batch_norm"
            || readers[i].iter().all(|&r| match self.steps[r] {
                Step::GetItem { index: 0, .. } => true,
                Step::GetItem { .. } => readers[r].is_empty(),
                _ => false,
            });
        let conv = slots.iter().find_map(|(pos, o)| match (pos, o) {
            (0, Operand::Node(c)) => Some(*c),
            _ => None,
        })?;
        if !first_only || readers[conv] != [i] {
            return None;
        }
        let Step::Call {
            op,
            template,
            slots,
            ..
        } = &self.steps[conv]
        else {
            return None;
        };
        let plain = match op.name().as_str() {
            "aten::convolution" => template.get(6).map(IValue::to_bool) == Some(Ok(false)),
            "aten::conv1d" | "aten::conv2d" | "aten::conv3d" => true,
            _ => false,
        };
        if !plain {
            return None;
        }
        let weight = self.known_tensor(template, slots, 1, known)??;
        if !matches!(weight.dtype(), Some(ScalarType::Float | ScalarType::Double)) {
            return None;
        }
        let bias = self.known_tensor(template, slots, 2, known)?;
        Some((conv, weight, bias))
    }

    /// The normalisation's parameters at `i`, when all are known.
    fn norm_at(&self, i: usize, known: &[Option<IValue>]) -> Option<Norm> {
        let Step::Call {
            op,
            template,
            slots,
            ..
        } = &self.steps[i]
        else {
            return None;
        };
        // `batch_norm` has `training` and `momentum` before `eps`.
        let eps_at = if op.name() == "aten::batch_norm" {
            7
        } else {
            6
        };
        let values = |pos: usize| -> Option<Option<Vec<f64>>> {
            match self.known_tensor(template, slots, pos, known)? {
                None => Some(None),
                Some(t) => Some(Some(float_values(&t)?)),
            }
        };
        Some(Norm {
            weight: values(1)?,
            bias: values(2)?,
            mean: values(3)??,
            var: values(4)??,
            eps: template.get(eps_at)?.to_double().ok()?,
        })
    }

    /// The tensor argument at `pos` of a call, when it is known before any
    /// run: `Some(None)` for an absent optional one, `None` when it is
    /// only known at run time.
    fn known_tensor(
        &self,
        template: &[IValue],
        slots: &[(usize, Operand)],
        pos: usize,
        known: &[Option<IValue>],
    ) -> Option<Option<TensorBase>> {
        let value = match slots.iter().find(|(p, _)| *p == pos) {
            None => template.get(pos)?.clone(),
            Some((_, Operand::Const(v))) => v.clone(),
            Some((_, Operand::Node(j))) => match &self.steps[*j] {
                Step::Input(k) => known.get(*k)?.clone()?,
                Step::Constant(v) => v.clone(),
                _ => return None,
            },
            Some(_) => return None,
        };
        match value {
            IValue::None => Some(None),
            IValue::Tensor(t) => Some(Some(t)),
            _ => None,
        }
    }
}

/// A float tensor's elements as `f64`.
fn float_values(t: &TensorBase) -> Option<Vec<f64>> {
    match t.dtype()? {
        ScalarType::Float => Some(t.to_vec::<f32>().ok()?.into_iter().map(f64::from).collect()),
        ScalarType::Double => t.to_vec::<f64>().ok(),
        _ => None,
    }
}

/// The normalisation's scale (`[C, 1, ..]`, broadcasting over the
/// convolution's output planes) and the convolution's new bias, in the
/// weight's dtype, computed in f64 and rounded once; `None` when the sizes
/// do not fit (the call is left as it is, and reports its own error when
/// run) or a scale is zero or not finite.
fn folded_parameters(
    weight: &TensorBase,
    bias: Option<&TensorBase>,
    norm: &Norm,
) -> Option<(TensorBase, TensorBase)> {
    let sizes = weight.sizes().to_vec();
    let channels = usize::try_from(*sizes.first()?).ok()?;
    let b = match bias {
        Some(b) => float_values(b)?,
        None => vec![0.0; channels],
    };
    let per_channel = |v: &Option<Vec<f64>>| v.as_ref().is_none_or(|v| v.len() == channels);
    if channels == 0
        || sizes.len() < 3
        || b.len() != channels
        || norm.mean.len() != channels
        || norm.var.len() != channels
        || !per_channel(&norm.weight)
        || !per_channel(&norm.bias)
    {
        return None;
    }
    let scale: Vec<f64> = (0..channels)
        .map(|c| norm.weight.as_ref().map_or(1.0, |g| g[c]) / (norm.var[c] + norm.eps).sqrt())
        .collect();
    if scale.iter().any(|s| *s == 0.0 || !s.is_finite()) {
        return None;
    }
    let new_b: Vec<f64> = (0..channels)
        .map(|c| b[c] - norm.mean[c] + norm.bias.as_ref().map_or(0.0, |beta| beta[c]) / scale[c])
        .collect();
    // One per output channel, ones over the output's planes.
    let mut scale_sizes = vec![1i64; sizes.len() - 1];
    scale_sizes[0] = channels as i64;
    fn both<T: c10_core::Element>(
        scale: Vec<T>,
        bias: Vec<T>,
        scale_sizes: &[i64],
    ) -> Option<(TensorBase, TensorBase)> {
        let channels = bias.len() as i64;
        Some((
            TensorBase::from_vec(scale, scale_sizes).ok()?,
            TensorBase::from_vec(bias, &[channels]).ok()?,
        ))
    }
    match weight.dtype()? {
        ScalarType::Float => {
            let narrow = |v: Vec<f64>| v.into_iter().map(|x| x as f32).collect::<Vec<f32>>();
            both(narrow(scale), narrow(new_b), &scale_sizes)
        }
        ScalarType::Double => both(scale, new_b, &scale_sizes),
        _ => None,
    }
}
