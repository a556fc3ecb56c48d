//! Graph nodes and edges (`torch::autograd::Node`, `Edge`): a node is the
//! backward function of one recorded operation. Its inputs are the
//! gradients of the operation's outputs; its outputs, one per next edge,
//! the gradients of the operation's differentiable inputs.

use std::borrow::Cow;
use std::cell::Cell;
use std::sync::{Arc, Mutex, MutexGuard};

use aten_core::Tensor;
use c10_core::tensor_impl::DimVector;
use c10_core::{Device, Result, ScalarType, SmallVec};

use crate::hooks::Hook;

/// What a node knows of one of its inputs (a forward output): enough to
/// check and shape a gradient flowing into it (`InputMetadata`).
#[derive(Clone, Debug, PartialEq)]
pub struct InputMetadata {
    /// The forward output's sizes.
    pub sizes: DimVector,
    /// Its dtype.
    pub dtype: ScalarType,
    /// Its device.
    pub device: Device,
}

impl Default for InputMetadata {
    fn default() -> Self {
        InputMetadata {
            sizes: DimVector::new(),
            dtype: ScalarType::Float,
            device: Device::CPU,
        }
    }
}

/// A node's next edges: inline up to two (most operators' inputs), so that
/// recording a node allocates less.
pub type EdgeList = SmallVec<Edge, 2>;

/// A node's input metadata: inline for one input (most operators' outputs).
pub type MetadataList = SmallVec<InputMetadata, 1>;

impl InputMetadata {
    /// The metadata of `t`.
    pub fn of(t: &Tensor) -> InputMetadata {
        InputMetadata {
            sizes: t.sizes(),
            dtype: t.dtype().unwrap_or(ScalarType::Float),
            device: t.device().unwrap_or(Device::CPU),
        }
    }
}

/// An edge to input `input_nr` of `function` (`torch::autograd::Edge`);
/// invalid (no function) where no gradient is needed.
#[derive(Clone, Default)]
pub struct Edge {
    /// The node the gradient flows to.
    pub function: Option<Arc<Node>>,
    /// Which of its inputs.
    pub input_nr: usize,
}

impl Edge {
    /// An edge to input `input_nr` of `function`.
    pub fn new(function: Arc<Node>, input_nr: usize) -> Edge {
        Edge {
            function: Some(function),
            input_nr,
        }
    }

    /// The invalid edge.
    pub fn invalid() -> Edge {
        Edge::default()
    }

    /// Whether a gradient flows along it.
    pub fn is_valid(&self) -> bool {
        self.function.is_some()
    }
}

impl std::fmt::Debug for Edge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.function {
            Some(n) => write!(f, "Edge({}, {})", n.name(), self.input_nr),
            None => write!(f, "Edge(None)"),
        }
    }
}

/// What the engine tells a backward function when it runs it.
pub struct ApplyContext<'a> {
    /// The node being run (to rebuild saved outputs pointing at it).
    pub node: &'a Arc<Node>,
    /// Per output (next edge), whether its gradient is wanted
    /// (`should_compute_output`).
    pub needed: &'a [bool],
}

impl ApplyContext<'_> {
    /// Whether output `i`'s gradient is wanted.
    pub fn should_compute_output(&self, i: usize) -> bool {
        self.needed.get(i).copied().unwrap_or(false)
    }

    /// Whether any output in `range` is wanted.
    pub fn should_compute_any(&self, range: std::ops::Range<usize>) -> bool {
        range.into_iter().any(|i| self.should_compute_output(i))
    }
}

/// The computation of a node: gradients of the forward outputs in,
/// gradients of the forward inputs out (one per next edge; undefined where
/// not wanted or zero).
pub trait BackwardFunction: Send {
    /// Runs the backward computation.
    fn apply(&mut self, ctx: &ApplyContext<'_>, grads: Vec<Tensor>) -> Result<Vec<Tensor>>;

    /// Frees what was saved for backward (after a backward without
    /// `retain_graph`).
    fn release_variables(&mut self) {}

    /// For a gradient accumulator, the hooks registered on its leaf: the
    /// engine runs them on the incoming gradient before `apply`, outside
    /// the node's lock (a hook may run a backward pass of its own).
    fn leaf_hooks(&self) -> Vec<Arc<Hook>> {
        Vec::new()
    }
}

thread_local! {
    static SEQUENCE_NR: Cell<u64> = const { Cell::new(0) };
}

/// The next sequence number of this thread (`at::sequence_number::get_and_increment`).
pub(crate) fn next_sequence_nr() -> u64 {
    SEQUENCE_NR.with(|c| {
        let n = c.get();
        c.set(n + 1);
        n
    })
}

/// A node of the graph (`torch::autograd::Node`), holding its backward
/// function `F` inline: nodes are made as `NodeOf<SomeBackward>` and used
/// as [`Node`] (`F = dyn BackwardFunction`), one allocation per node.
pub struct NodeOf<F: ?Sized> {
    name: Cow<'static, str>,
    sequence_nr: u64,
    next_edges: EdgeList,
    input_metadata: MetadataList,
    /// Tensor hooks registered on this node's inputs: `(input_nr, hook)`.
    pub(crate) pre_hooks: Mutex<Vec<(usize, Arc<Hook>)>>,
    function: Mutex<F>,
}

/// A node, whatever its backward function.
pub type Node = NodeOf<dyn BackwardFunction>;

impl Node {
    /// A node named `name` running `function`, whose outputs flow along
    /// `next_edges` and whose inputs are described by `input_metadata`.
    pub fn new<F: BackwardFunction + 'static>(
        name: impl Into<Cow<'static, str>>,
        function: F,
        next_edges: EdgeList,
        input_metadata: MetadataList,
        sequence_nr: u64,
    ) -> Arc<Node> {
        Arc::new(NodeOf {
            name: name.into(),
            sequence_nr,
            next_edges,
            input_metadata,
            pre_hooks: Mutex::new(Vec::new()),
            function: Mutex::new(function),
        })
    }

    /// `name()`: PyTorch's class name of the node (`MulBackward0`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `sequence_nr()`: the order nodes were made in (later runs first).
    pub fn sequence_nr(&self) -> u64 {
        self.sequence_nr
    }

    /// `next_edges()`.
    pub fn next_edges(&self) -> &[Edge] {
        &self.next_edges
    }

    /// `num_inputs()`: how many gradients the node takes.
    pub fn num_inputs(&self) -> usize {
        self.input_metadata.len()
    }

    /// `input_metadata(i)`.
    pub fn input_metadata(&self, i: usize) -> Option<&InputMetadata> {
        self.input_metadata.get(i)
    }

    pub(crate) fn function(&self) -> MutexGuard<'_, dyn BackwardFunction + 'static> {
        self.function.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn hooks(&self) -> MutexGuard<'_, Vec<(usize, Arc<Hook>)>> {
        self.pre_hooks.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<{}>", self.name)
    }
}
