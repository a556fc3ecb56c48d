//! Fusions chosen per graph at load. A batch normalisation in inference
//! form (`_native_batch_norm_legit_no_training`, or `batch_norm` with
//! `training` false as pre-dispatch graphs have it) whose input is a
//! convolution (`convolution`, `conv1d`, `conv2d`, `conv3d`) that nothing
//! else reads, with the weights, biases and
//! statistics of both known before any run, is folded into the
//! convolution: its weight is scaled per output channel by
//! `gamma / sqrt(var + eps)` and its bias becomes
//! `(bias - mean) * gamma / sqrt(var + eps) + beta`, so a run makes one
//! pass over the data where it made two (ONNX Runtime and inductor fold it
//! the same way). The sums are then rounded in another order than
//! PyTorch's, within the corpora's tolerances; [`LoadOptions`]'s
//! `fuse` switch turns it off.
//!
//! [`LoadOptions`]: crate::export::LoadOptions

use aten_boxing::IValue;
use c10_core::{Device, ScalarType, TensorBase};

use super::{Interpreter, Operand, Step};

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
            let Some((weight, bias)) = folded_parameters(&weight, bias.as_ref(), &norm) else {
                continue;
            };
            if let Step::Call {
                template, slots, ..
            } = &mut self.steps[conv]
            {
                slots.retain(|(pos, _)| *pos != 1 && *pos != 2);
                template[1] = IValue::Tensor(weight);
                template[2] = IValue::Tensor(bias);
            }
            // The normalisation's first result is now the convolution's;
            // its unread statistics are no longer made.
            let statistics = !matches!(
                &self.steps[i],
                Step::Call { op, .. } if op.name() == "aten::batch_norm"
            );
            self.steps[i] = Step::GetItem { of: conv, index: 0 };
            for &r in readers[i].iter().filter(|_| statistics) {
                if !matches!(self.steps[r], Step::GetItem { index: 0, .. }) {
                    self.steps[r] = Step::Constant(IValue::None);
                }
            }
            count += 1;
        }
        count
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

/// The convolution's new weight and bias, in the weight's dtype; `None`
/// when the sizes do not fit (the call is left as it is, and reports its
/// own error when run). One pass over the weight: each element times its
/// channel's scale in f64, rounded once to the weight's dtype.
fn folded_parameters(
    weight: &TensorBase,
    bias: Option<&TensorBase>,
    norm: &Norm,
) -> Option<(TensorBase, TensorBase)> {
    let sizes = weight.sizes().to_vec();
    let channels = usize::try_from(*sizes.first()?).ok()?;
    let numel = usize::try_from(weight.numel()).ok()?;
    let b = match bias {
        Some(b) => float_values(b)?,
        None => vec![0.0; channels],
    };
    let per_channel = |v: &Option<Vec<f64>>| v.as_ref().is_none_or(|v| v.len() == channels);
    if channels == 0
        || numel % channels != 0
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
    let inner = numel / channels;
    let new_b: Vec<f64> = (0..channels)
        .map(|c| (b[c] - norm.mean[c]) * scale[c] + norm.bias.as_ref().map_or(0.0, |beta| beta[c]))
        .collect();
    match weight.dtype()? {
        ScalarType::Float => {
            let b: Vec<f32> = new_b.into_iter().map(|x| x as f32).collect();
            Some((
                scaled::<f32>(weight, &scale, inner, f64::from, |x| x as f32)?,
                TensorBase::from_vec(b, &[channels as i64]).ok()?,
            ))
        }
        ScalarType::Double => Some((
            scaled::<f64>(weight, &scale, inner, |x| x, |x| x)?,
            TensorBase::from_vec(new_b, &[channels as i64]).ok()?,
        )),
        _ => None,
    }
}

/// Each row of `inner` elements of `weight` times its scale, written
/// straight into a new tensor of the weight's sizes (one pass over fresh
/// memory: the folded weights of a large network are most of its load).
fn scaled<T: c10_core::Element + Copy>(
    weight: &TensorBase,
    scale: &[f64],
    inner: usize,
    widen: impl Fn(T) -> f64,
    narrow: impl Fn(f64) -> T,
) -> Option<TensorBase> {
    let out = TensorBase::empty(&weight.sizes(), T::DTYPE, Device::CPU).ok()?;
    let written = weight
        .with_values::<T, _>(|w| {
            out.with_data_mut::<T, _>(|dst| {
                if dst.len() != w.len() || inner == 0 || w.len() != inner * scale.len() {
                    return false;
                }
                for ((src, dst), &s) in w
                    .chunks_exact(inner)
                    .zip(dst.chunks_exact_mut(inner))
                    .zip(scale)
                {
                    for (d, &x) in dst.iter_mut().zip(src) {
                        *d = narrow(widen(x) * s);
                    }
                }
                true
            })
        })
        .ok()?
        .ok()?;
    written.then_some(out)
}
