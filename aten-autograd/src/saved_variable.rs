//! Tensors saved for backward (`torch::autograd::SavedVariable`).
//!
//! A saved tensor remembers the version of its data when it was saved; if
//! the data was written in place since, unpacking it is PyTorch's "one of
//! the variables needed for gradient computation has been modified by an
//! inplace operation" error. A saved output of the node that saves it is
//! kept without its history (the node would otherwise own itself) and
//! rebuilt pointing at the node when unpacked, so that gradients of
//! gradients (`create_graph`) flow through it. After a backward without
//! `retain_graph` the data is freed and unpacking is PyTorch's "Trying to
//! backward through the graph a second time" error.

use aten_core::native::dims::fmt_list;
use std::sync::Arc;

use aten_core::Tensor;
use c10_core::{Error, Result};

use crate::meta;
use crate::node::Node;

/// A tensor saved for backward.
#[derive(Default)]
pub struct SavedVariable {
    /// The data, detached (for outputs) or the tensor itself (for inputs).
    data: Option<Tensor>,
    /// The version of the data when saved.
    saved_version: u64,
    /// For an input: the edge its gradient flows along, kept so the
    /// rebuilt tensor can be differentiated again. For an output: `None`
    /// (the node being run is its history).
    is_output: bool,
    output_nr: usize,
    /// The name of the node that made it, for the error message.
    grad_fn_name: Option<String>,
    /// Whether an unpacked output gets this node as its history.
    rebuild_history: bool,
    /// Whether something was saved (an undefined tensor saves nothing).
    defined: bool,
    released: bool,
}

impl SavedVariable {
    /// Saves input `t` (`is_output` false), or output `t` of the node
    /// saving it as its output 0 ([`SavedVariable::new_output`] for others).
    pub fn new(t: &Tensor, is_output: bool) -> Result<SavedVariable> {
        SavedVariable::save(t, is_output, 0)
    }

    /// Saves output `output_nr` of the node saving it; `differentiable`
    /// when gradients flow through that output (an output that is not,
    /// such as indices or a layer norm's mean, is rebuilt without history).
    pub fn new_output(t: &Tensor, output_nr: usize, differentiable: bool) -> Result<SavedVariable> {
        let mut saved = SavedVariable::save(t, true, output_nr)?;
        saved.rebuild_history = differentiable;
        Ok(saved)
    }

    fn save(t: &Tensor, is_output: bool, output_nr: usize) -> Result<SavedVariable> {
        if !t.defined() {
            return Ok(SavedVariable::default());
        }
        if t.is_inference() {
            return Err(Error::runtime(
                "Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal tensor and use it in autograd.",
            ));
        }
        let grad_fn = meta::grad_fn(t);
        let data = if is_output {
            // The node saving its own output must not hold the output's
            // history (itself): keep a detached alias.
            meta::detach(t)?
        } else {
            t.clone()
        };
        Ok(SavedVariable {
            saved_version: t.version(),
            is_output,
            output_nr: if is_output {
                output_nr
            } else {
                meta::output_nr(t)
            },
            grad_fn_name: grad_fn.map(|f| f.name().to_string()),
            data: Some(data),
            rebuild_history: is_output,
            defined: true,
            released: false,
        })
    }

    /// Saves an optional tensor.
    pub fn new_opt(t: Option<&Tensor>, is_output: bool) -> Result<SavedVariable> {
        match t {
            Some(t) => SavedVariable::new(t, is_output),
            None => Ok(SavedVariable::default()),
        }
    }

    /// Frees the data (`reset_data`).
    pub fn reset_data(&mut self) {
        if self.defined {
            self.released = true;
        }
        self.data = None;
    }

    /// The saved tensor (undefined if an undefined tensor was saved),
    /// checked against later in-place writes. `node` is the node that saved
    /// it (the history of a saved output).
    pub fn unpack(&self, node: &Arc<Node>) -> Result<Tensor> {
        if self.released {
            return Err(Error::runtime(
                "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.",
            ));
        }
        let Some(data) = &self.data else {
            return Ok(Tensor::undefined());
        };
        let current = data.version();
        if current != self.saved_version {
            let desc = format!("[{} {}]", type_string(data), fmt_list(&data.sizes()));
            let owner = match (&self.grad_fn_name, self.is_output) {
                (_, true) => format!(
                    "{desc}, which is output {} of {},",
                    self.output_nr,
                    node.name()
                ),
                (Some(name), false) => {
                    format!("{desc}, which is output {} of {name},", self.output_nr)
                }
                (None, false) => desc,
            };
            return Err(Error::runtime(format!(
                "one of the variables needed for gradient computation has been modified by an inplace operation: {owner} is at version {current}; expected version {} instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True).",
                self.saved_version
            )));
        }
        if self.is_output
            && self.rebuild_history
            && data.dtype().is_some_and(crate::is_differentiable_type)
        {
            // Rebuild the output with its history: this node.
            let out = meta::detach(data)?;
            meta::set_gradient_edge(&out, node, self.output_nr)?;
            return Ok(out);
        }
        Ok(data.clone())
    }
}

/// PyTorch's legacy type name of a CPU tensor (`torch.FloatTensor`).
fn type_string(t: &Tensor) -> String {
    use c10_core::ScalarType as S;
    let name = match t.dtype() {
        Some(S::Float) => "Float",
        Some(S::Double) => "Double",
        Some(S::Half) => "Half",
        Some(S::BFloat16) => "BFloat16",
        Some(S::Long) => "Long",
        Some(S::Int) => "Int",
        Some(S::Short) => "Short",
        Some(S::Char) => "Char",
        Some(S::Byte) => "Byte",
        Some(S::Bool) => "Bool",
        _ => "",
    };
    format!("torch.{name}Tensor")
}
