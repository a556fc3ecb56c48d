//! `gradcheck` and `gradgradcheck` (PyTorch's
//! `torch.autograd.gradcheck`, slow mode): the Jacobian autograd computes,
//! row by row with one-hot gradients, against central finite differences,
//! in float64, with PyTorch's defaults (`eps` 1e-6, `atol` 1e-5, `rtol`
//! 1e-3). `gradgradcheck` runs the same check on the function that maps
//! inputs and output gradients to input gradients (with `create_graph`), so
//! it checks second derivatives.
//!
//! ```no_run
//! use aten_autograd::gradcheck::{gradcheck, GradcheckOptions};
//! use aten_autograd::TensorAutograd;
//! use aten_core::{ops, Tensor};
//!
//! // With a backend linked in (the `aten` facade does it):
//! let x = Tensor::from_slice(&[0.5f64, -1.0, 2.0], &[3]).unwrap().requires_grad_(true).unwrap();
//! gradcheck(|t| Ok(vec![ops::mul_tensor(&t[0], &ops::exp(&t[0])?)?]), &[x], GradcheckOptions::default())
//!     .unwrap();
//! ```

use aten_core::{ops, Tensor};
use c10_core::{Error, Result, ScalarType};

use crate::engine;
use crate::tensor_ext::TensorAutograd;

/// The tolerances of a check.
#[derive(Copy, Clone, Debug)]
pub struct GradcheckOptions {
    /// The finite-difference step.
    pub eps: f64,
    /// Absolute tolerance.
    pub atol: f64,
    /// Relative tolerance.
    pub rtol: f64,
}

impl Default for GradcheckOptions {
    fn default() -> Self {
        GradcheckOptions {
            eps: 1e-6,
            atol: 1e-5,
            rtol: 1e-3,
        }
    }
}

/// A function under test: tensors in, tensors out.
pub type TestFn<'a> = dyn Fn(&[Tensor]) -> Result<Vec<Tensor>> + 'a;

/// A float64 copy of `t` (contiguous), as a leaf that requires grad when
/// `t` does.
fn leaf_copy(t: &Tensor, values: Vec<f64>) -> Result<Tensor> {
    let out = Tensor::from_vec(values, &t.sizes())?;
    if t.requires_grad() {
        out.requires_grad_(true)?;
    }
    Ok(out)
}

fn values(t: &Tensor) -> Result<Vec<f64>> {
    if !t.defined() {
        return Ok(Vec::new());
    }
    let c = ops::contiguous(&crate::formulas::cast_to(&t.detach()?, ScalarType::Double)?)?;
    c.to_vec::<f64>()
}

/// The outputs' values flattened into one vector.
fn flat_outputs(f: &TestFn<'_>, inputs: &[Tensor]) -> Result<Vec<f64>> {
    let mut out = Vec::new();
    for o in f(inputs)? {
        out.extend(values(&o)?);
    }
    Ok(out)
}

/// The numerical Jacobian: one row per input element, one column per
/// output element (central differences).
fn numerical(f: &TestFn<'_>, inputs: &[Tensor], eps: f64) -> Result<Vec<Vec<Vec<f64>>>> {
    let base: Vec<Vec<f64>> = inputs
        .iter()
        .map(|t| {
            if t.requires_grad() {
                values(t)
            } else {
                Ok(Vec::new())
            }
        })
        .collect::<Result<_>>()?;
    let mut per_input = Vec::with_capacity(inputs.len());
    for (i, t) in inputs.iter().enumerate() {
        let mut rows = Vec::with_capacity(base[i].len());
        if !t.requires_grad() {
            per_input.push(rows);
            continue;
        }
        for j in 0..base[i].len() {
            let eval = |delta: f64| -> Result<Vec<f64>> {
                let perturbed: Vec<Tensor> = inputs
                    .iter()
                    .enumerate()
                    .map(|(k, x)| {
                        if !x.requires_grad() {
                            return Ok(x.clone());
                        }
                        let mut v = base[k].clone();
                        if k == i {
                            v[j] += delta;
                        }
                        leaf_copy(x, v)
                    })
                    .collect::<Result<_>>()?;
                flat_outputs(f, &perturbed)
            };
            let plus = eval(eps)?;
            let minus = eval(-eps)?;
            rows.push(
                plus.iter()
                    .zip(&minus)
                    .map(|(p, m)| (p - m) / (2.0 * eps))
                    .collect(),
            );
        }
        per_input.push(rows);
    }
    Ok(per_input)
}

/// The analytical Jacobian, in the layout of [`numerical`]: a backward
/// pass per output element with a one-hot gradient.
fn analytical(f: &TestFn<'_>, inputs: &[Tensor]) -> Result<Vec<Vec<Vec<f64>>>> {
    let outputs = f(inputs)?;
    let wrt: Vec<Tensor> = inputs
        .iter()
        .filter(|t| t.requires_grad())
        .cloned()
        .collect();
    let sizes: Vec<usize> = inputs.iter().map(|t| t.numel() as usize).collect();
    let total_out: usize = outputs.iter().map(|o| o.numel() as usize).sum();
    let mut jac: Vec<Vec<Vec<f64>>> = inputs
        .iter()
        .zip(&sizes)
        .map(|(t, &n)| {
            if t.requires_grad() {
                vec![vec![0.0; total_out]; n]
            } else {
                Vec::new()
            }
        })
        .collect();
    let mut column = 0;
    for (o_index, o) in outputs.iter().enumerate() {
        let n = o.numel() as usize;
        if !o.requires_grad() {
            column += n;
            continue;
        }
        for k in 0..n {
            let mut onehot = vec![0.0f64; n];
            onehot[k] = 1.0;
            let g = crate::formulas::cast_to(
                &Tensor::from_vec(onehot, &o.sizes())?,
                o.dtype().unwrap_or(ScalarType::Double),
            )?;
            let grads = engine::grad(
                std::slice::from_ref(&outputs[o_index]),
                &wrt,
                &[Some(g)],
                Some(true),
                false,
                true,
            )?;
            let mut w = 0;
            for (i, t) in inputs.iter().enumerate() {
                if !t.requires_grad() {
                    continue;
                }
                if let Some(gi) = &grads[w] {
                    for (row, v) in values(gi)?.into_iter().enumerate() {
                        jac[i][row][column + k] = v;
                    }
                }
                w += 1;
            }
        }
        column += n;
    }
    Ok(jac)
}

/// Checks `f`'s gradients at `inputs` (float64 tensors; those that require
/// grad are checked) against finite differences. `Err` names the first
/// input, element and output element that disagree.
pub fn gradcheck(
    f: impl Fn(&[Tensor]) -> Result<Vec<Tensor>>,
    inputs: &[Tensor],
    options: GradcheckOptions,
) -> Result<()> {
    for t in inputs {
        if t.requires_grad() && t.dtype() != Some(ScalarType::Double) {
            return Err(Error::runtime(
                "gradcheck expects float64 inputs for the tensors that require grad",
            ));
        }
    }
    let numeric = numerical(&f, inputs, options.eps)?;
    let analytic = analytical(&f, inputs)?;
    for (i, (n_rows, a_rows)) in numeric.iter().zip(&analytic).enumerate() {
        for (j, (n_row, a_row)) in n_rows.iter().zip(a_rows).enumerate() {
            for (k, (n, a)) in n_row.iter().zip(a_row).enumerate() {
                let close = (a - n).abs() <= options.atol + options.rtol * n.abs();
                // NaN on either side is a mismatch.
                if !close {
                    return Err(Error::runtime(format!(
                        "Jacobian mismatch for output {k} with respect to input {i} (element {j}),\nnumerical:{n}\nanalytical:{a}"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Checks second derivatives: [`gradcheck`] of `(inputs, v) -> grad(f(inputs),
/// inputs, v, create_graph)` for output gradients `v` of `f`'s output
/// shapes (fixed values, so the check is deterministic).
pub fn gradgradcheck(
    f: impl Fn(&[Tensor]) -> Result<Vec<Tensor>>,
    inputs: &[Tensor],
    options: GradcheckOptions,
) -> Result<()> {
    let outputs = f(inputs)?;
    let mut grad_outputs = Vec::new();
    for (o_index, o) in outputs.iter().enumerate() {
        if !o.requires_grad() {
            continue;
        }
        let n = o.numel() as usize;
        let v: Vec<f64> = (0..n)
            .map(|k| 0.5 + 0.25 * (((k + 3 * o_index) * 7919) % 11) as f64 / 11.0)
            .collect();
        grad_outputs.push((o_index, leaf_copy(&o.detach()?, v)?.requires_grad_(true)?));
    }
    let n_inputs = inputs.len();
    let mut all: Vec<Tensor> = inputs.to_vec();
    all.extend(grad_outputs.iter().map(|(_, v)| v.clone()));
    let g = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        let (x, v) = xs.split_at(n_inputs);
        let y = f(x)?;
        let roots: Vec<Tensor> = grad_outputs.iter().map(|(i, _)| y[*i].clone()).collect();
        let wrt: Vec<Tensor> = x.iter().filter(|t| t.requires_grad()).cloned().collect();
        let gs: Vec<Option<Tensor>> = v.iter().cloned().map(Some).collect();
        let grads = engine::grad(&roots, &wrt, &gs, Some(true), true, true)?;
        grads
            .into_iter()
            .zip(&wrt)
            .map(|(g, w)| match g {
                Some(g) => Ok(g),
                None => ops::zeros_like(w),
            })
            .collect()
    };
    gradcheck(g, &all, options)
}
