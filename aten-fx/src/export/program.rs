//! [`ExportedProgram`]: a `.pt2` archive loaded (its graph deserialized
//! into a [`Graph`] and compiled by the [`Interpreter`], weights bound to
//! the graph's inputs as its signature says, the sizes its inputs may
//! have) and run.

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use aten_boxing::IValue;
use c10_core::{Error, InferenceMode, Result, ScalarType, TensorBase};

use super::archive::Archive;
use super::json::{self, At};
use super::json_document::Document;
use super::shapes::{ShapeEnv, Size, SymSize};
use super::{codes, deserialize, raw};
use crate::graph::{Graph, NodeKind};
use crate::interpreter::{Interpreter, NodeProfile};

/// The schema versions (`schema_version.major`) this loader reads.
const SCHEMA_MAJOR: i64 = 8;

/// A tensor's dtype and shape, as the exported graph records it.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorSpec {
    /// The value's name in the graph (`x`, `addmm_2`).
    pub name: String,
    /// The dtype.
    pub dtype: ScalarType,
    /// The sizes: numbers, or expressions over the size symbols of a
    /// program exported with dynamic shapes.
    pub sizes: Vec<SymSize>,
}

/// A serialized `TensorMeta`.
struct TensorMeta {
    dtype: ScalarType,
    sizes: Vec<Size>,
    strides: Vec<Size>,
    storage_offset: Size,
}

impl TensorMeta {
    /// The sizes, strides and offset when none is symbolic (weights).
    fn concrete(&self, at: &At<'_>) -> Result<(Vec<i64>, Vec<i64>, i64)> {
        let int = |s: &Size| match s {
            Size::Int(i) => Ok(*i),
            Size::Expr(e) => Err(at.error(format!(
                "a symbolic size `{e}` where a static one is needed"
            ))),
        };
        Ok((
            self.sizes.iter().map(int).collect::<Result<_>>()?,
            self.strides.iter().map(int).collect::<Result<_>>()?,
            int(&self.storage_offset)?,
        ))
    }
}

impl TensorMeta {
    fn parse(at: &At<'_>) -> Result<TensorMeta> {
        let code_at = at.field("dtype")?;
        let code = code_at.int()?;
        let dtype = codes::scalar_type(code).ok_or_else(|| {
            code_at.error(format!(
                "dtype {} is not supported",
                codes::scalar_type_name(code)
            ))
        })?;
        if let Some(layout) = at.opt("layout")? {
            let code = layout.int()?;
            if codes::layout(code) != Some(c10_core::Layout::Strided) {
                return Err(layout.error(format!(
                    "layout code {code} is not supported (only strided tensors)"
                )));
            }
        }
        let sizes: Vec<Size> = at
            .field("sizes")?
            .items()?
            .iter()
            .map(Size::parse)
            .collect::<Result<_>>()?;
        let strides: Vec<Size> = match at.opt("strides")? {
            Some(s) => s.items()?.iter().map(Size::parse).collect::<Result<_>>()?,
            None => {
                let ints: Option<Vec<i64>> = sizes
                    .iter()
                    .map(|s| match s {
                        Size::Int(i) => Some(*i),
                        Size::Expr(_) => None,
                    })
                    .collect();
                let ints = ints.ok_or_else(|| at.error("symbolic sizes without strides"))?;
                c10_core::tensor_layout::contiguous_strides(&ints)
                    .iter()
                    .map(|s| Size::Int(*s))
                    .collect()
            }
        };
        let storage_offset = match at.opt("storage_offset")? {
            Some(o) => Size::parse(&o)?,
            None => Size::Int(0),
        };
        if sizes.len() != strides.len() {
            return Err(at.error(format!(
                "{} sizes but {} strides",
                sizes.len(),
                strides.len()
            )));
        }
        Ok(TensorMeta {
            dtype,
            sizes,
            strides,
            storage_offset,
        })
    }
}

/// A program exported by `torch.export` and saved with
/// `torch.export.save`, ready to run on the CPU.
///
/// ```no_run
/// use aten_fx::export::{load_safetensors, ExportedProgram};
/// let program = ExportedProgram::load("model.pt2")?;
/// let inputs: Vec<_> = load_safetensors("inputs.safetensors")?
///     .into_iter()
///     .map(|(_, t)| t)
///     .collect();
/// let outputs = program.run(&inputs)?;
/// # Ok::<(), c10_core::Error>(())
/// ```
pub struct ExportedProgram {
    label: String,
    graph: Graph,
    interpreter: Interpreter,
    /// Parameters, buffers and constants, by the placeholder they bind.
    lifted: Vec<(usize, TensorBase)>,
    /// The user inputs: the placeholder each binds, and its sizes.
    inputs: Vec<(usize, TensorSpec, Vec<Size>)>,
    /// The user outputs: their position among the graph's outputs.
    outputs: Vec<(usize, TensorSpec)>,
    /// Outputs that are new values of buffers or user inputs: their
    /// position among the graph's outputs, and what is written.
    mutations: Vec<(usize, Mutated)>,
    shapes: ShapeEnv,
    /// How many calls were folded into constants at load.
    folded: usize,
    /// How many calls were fused into others at load: batch
    /// normalisations into convolutions, pointwise calls into chains.
    fused: Fused,
    /// How long the load's phases took.
    load_phases: LoadPhases,
}

/// How long each phase of a load took, in seconds: what `aten bench`
/// reports beside the first run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LoadPhases {
    /// Opening the archive and parsing its JSON documents.
    pub parse_s: f64,
    /// Building the graph and binding its inputs to the archive's payloads
    /// and its outputs to the signature.
    pub bind_s: f64,
    /// Fusing and folding calls ([`LoadOptions`]).
    pub prepare_s: f64,
}

/// The calls a load fused, by kind.
#[derive(Clone, Copy, Debug, Default)]
struct Fused {
    norms: usize,
    pointwise: usize,
}

/// What a mutation output writes back to.
#[derive(Clone, Copy, Debug)]
enum Mutated {
    /// The lifted tensor (a buffer) at this index of `lifted`.
    Lifted(usize),
    /// The user input at this index.
    Input(usize),
}

impl std::fmt::Debug for ExportedProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExportedProgram")
            .field("archive", &self.label)
            .field("nodes", &self.num_nodes())
            .field("inputs", &self.inputs.len())
            .field("outputs", &self.outputs.len())
            .finish()
    }
}

/// A payload config (`model_weights_config.json`,
/// `model_constants_config.json`): FQN to its file and layout, the files'
/// storages read once each (tied weights share one).
struct Payloads<'a> {
    folder: &'static str,
    config: HashMap<String, (String, TensorMeta, At<'a>)>,
    storages: HashMap<String, TensorBase>,
}

impl<'a> Payloads<'a> {
    fn parse(
        doc: Option<&'a Document>,
        file: &'a str,
        folder: &'static str,
    ) -> Result<Payloads<'a>> {
        let mut config = HashMap::new();
        if let Some(doc) = doc {
            let root = At::root(doc, file);
            for (fqn, entry) in root.field("config")?.entries()? {
                if entry.opt("use_pickle")?.map(|p| p.bool()).transpose()? == Some(true) {
                    return Err(entry.error(format!(
                        "`{fqn}` is stored as a pickle, which this loader does not read"
                    )));
                }
                let path = entry.field("path_name")?.str()?.to_string();
                if path.contains('/') || path.contains("..") || path.is_empty() {
                    return Err(entry.error(format!("bad payload file name `{path}`")));
                }
                let meta = TensorMeta::parse(&entry.field("tensor_meta")?)?;
                config.insert(fqn.to_string(), (path, meta, entry));
            }
        }
        Ok(Payloads {
            folder,
            config,
            storages: HashMap::new(),
        })
    }

    /// The tensor named `fqn`, or `None` when the config lacks it.
    fn tensor(&mut self, archive: &mut Archive, fqn: &str) -> Result<Option<TensorBase>> {
        let Some((path, meta, entry)) = self.config.get(fqn) else {
            return Ok(None);
        };
        if !self.storages.contains_key(path) {
            let entry = format!("{}/{path}", self.folder);
            let storage = payload_storage(archive, &entry, meta.dtype).map_err(|e| {
                archive.error(format!(
                    "entry `{}`: {}",
                    archive.entry_name(&entry),
                    e.message()
                ))
            })?;
            self.storages.insert(path.clone(), storage);
        }
        let storage = &self.storages[path];
        if storage.dtype() != Some(meta.dtype) {
            return Err(entry.error(format!(
                "`{fqn}` is {} but its file `{path}` was read as {}",
                meta.dtype.python_name(),
                storage.dtype().map_or("?", |d| d.python_name())
            )));
        }
        let (sizes, strides, offset) = meta.concrete(entry)?;
        let view = storage
            .as_strided(&sizes, &strides, Some(offset))
            .map_err(|e| {
                entry.error(format!(
                    "`{fqn}` does not fit its file `{path}`: {}",
                    e.message()
                ))
            })?;
        Ok(Some(view))
    }
}

/// The whole storage of a payload file as a one-dimensional tensor of
/// `dtype`: its bytes in place where the archive can lend them, else a
/// copy (bools are always copied, as their bytes must be checked).
fn payload_storage(archive: &mut Archive, entry: &str, dtype: ScalarType) -> Result<TensorBase> {
    if dtype != ScalarType::Bool {
        if let Some(storage) = archive.lend(entry)? {
            let width = dtype.element_size();
            let nbytes = storage.nbytes();
            if !nbytes.is_multiple_of(width) {
                return Err(Error::runtime(format!(
                    "{nbytes} bytes is not a whole number of {} elements ({width} bytes each)",
                    dtype.python_name()
                )));
            }
            let numel = i64::try_from(nbytes / width)
                .map_err(|_| Error::runtime("tensor data too large"))?;
            return TensorBase::from_storage(storage, dtype, &[numel], &[1], 0);
        }
    }
    raw::storage_from_bytes(archive.read(entry)?, dtype)
}

fn spec_for(
    name: &str,
    metas: &HashMap<&str, At<'_>>,
    at: &At<'_>,
) -> Result<(TensorSpec, Vec<Size>)> {
    let meta = metas
        .get(name)
        .ok_or_else(|| at.error(format!("no `tensor_values` entry for `{name}`")))?;
    let meta = TensorMeta::parse(meta)?;
    Ok((
        TensorSpec {
            name: name.to_string(),
            dtype: meta.dtype,
            sizes: meta.sizes.iter().map(Size::public).collect(),
        },
        meta.sizes,
    ))
}

/// `torch.Size([2, s70])`, as PyTorch prints a shape.
fn torch_size(sizes: impl IntoIterator<Item = String>) -> String {
    format!(
        "torch.Size([{}])",
        sizes.into_iter().collect::<Vec<_>>().join(", ")
    )
}

fn check_version(at: &At<'_>) -> Result<()> {
    let version = at.field("schema_version")?;
    let major = version.field("major")?.int()?;
    let minor = version
        .opt("minor")?
        .map(|m| m.int())
        .transpose()?
        .unwrap_or(0);
    if major != SCHEMA_MAJOR {
        return Err(version.error(format!(
            "unsupported schema version {major}.{minor} (this loader reads {SCHEMA_MAJOR}.x)"
        )));
    }
    Ok(())
}

/// Refuses an archive of another format version than 0.
fn check_archive_version(archive: &Archive) -> Result<()> {
    if archive.has("archive_version") {
        let version = archive.read_text("archive_version")?;
        if version.trim() != "0" {
            return Err(archive.error(format!(
                "unsupported archive version `{}` (this loader reads version 0)",
                version.trim()
            )));
        }
    }
    Ok(())
}

/// The name of the archive's program: `model`, or the only one there is.
fn program_name(archive: &Archive) -> Result<String> {
    let models: Vec<String> = archive
        .files_in("models")
        .into_iter()
        .filter(|f| f.ends_with(".json"))
        .collect();
    if models.iter().any(|m| m == "model.json") {
        return Ok("model".to_string());
    }
    match models.as_slice() {
        [one] => Ok(one.trim_end_matches(".json").to_string()),
        [] => Err(archive.error("no program: missing entry `models/model.json`")),
        _ => Err(archive.error(format!(
            "several programs ({}) and none named `model`",
            models.join(", ")
        ))),
    }
}

/// A program's JSON entries, parsed, with the names errors give them.
struct ProgramDocs {
    model: Document,
    model_file: String,
    weights: Option<Document>,
    weights_file: String,
    constants: Option<Document>,
    constants_file: String,
}

impl ProgramDocs {
    /// The entries of program `model`: its graph, and the configurations
    /// of its weights and constants where the archive has them.
    fn read(archive: &Archive, model: &str) -> Result<ProgramDocs> {
        let in_archive =
            |entry: &str| format!("{}: {}", archive.label(), archive.entry_name(entry));
        let optional = |entry: &str, file: &str| -> Result<Option<Document>> {
            if archive.has(entry) {
                Ok(Some(json::parse(archive.read(entry)?, file)?))
            } else {
                Ok(None)
            }
        };
        let model_path = format!("models/{model}.json");
        let weights_path = weights_config(model, "data/weights");
        let constants_path = weights_config(model, "data/constants");
        let model_file = in_archive(&model_path);
        let weights_file = in_archive(&weights_path);
        let constants_file = in_archive(&constants_path);
        Ok(ProgramDocs {
            model: json::parse(archive.read(&model_path)?, &model_file)?,
            weights: optional(&weights_path, &weights_file)?,
            constants: optional(&constants_path, &constants_file)?,
            model_file,
            weights_file,
            constants_file,
        })
    }
}

/// The configuration entry of program `model`'s payloads in `folder`
/// (`data/weights` or `data/constants`).
fn weights_config(model: &str, folder: &str) -> String {
    let kind = if folder == "data/weights" {
        "weights"
    } else {
        "constants"
    };
    format!("{folder}/{model}_{kind}_config.json")
}

/// The graph's inputs, bound as the signature says: parameters, buffers
/// and constants to their payloads (`payloads`: the weights', then the
/// constants'), user inputs to their specs.
#[allow(clippy::type_complexity)]
fn bind_inputs(
    archive: &mut Archive,
    model: &str,
    graph_at: &At<'_>,
    signature: &At<'_>,
    specs: &[At<'_>],
    metas: &HashMap<&str, At<'_>>,
    payloads: [&mut Payloads<'_>; 2],
) -> Result<(
    Vec<(usize, TensorBase)>,
    Vec<(usize, TensorSpec, Vec<Size>)>,
)> {
    let [weights, constants] = payloads;
    let graph_inputs = graph_at.field("inputs")?.items()?;
    if graph_inputs.len() != specs.len() {
        return Err(signature.error(format!(
            "{} input specs for {} graph inputs",
            specs.len(),
            graph_inputs.len()
        )));
    }
    let mut lifted = Vec::new();
    let mut inputs = Vec::new();
    for (ordinal, (input, spec)) in graph_inputs.iter().zip(specs).enumerate() {
        let (kind, body) = spec.variant()?;
        let name = match input.variant()? {
            ("as_tensor", t) => t.field("name")?.str()?,
            (other, _) => {
                return Err(input.error(format!(
                    "unsupported graph input kind `{other}` (only tensors)"
                )))
            }
        };
        let (fqn, payloads, what) = match kind {
            "user_input" => {
                let (spec, sizes) = spec_for(name, metas, input)?;
                inputs.push((ordinal, spec, sizes));
                continue;
            }
            "parameter" => (
                body.field("parameter_name")?.str()?,
                &mut *weights,
                "parameter",
            ),
            "buffer" => {
                let persistent = body
                    .opt("persistent")?
                    .map(|p| p.bool())
                    .transpose()?
                    .unwrap_or(true);
                let payloads = if persistent {
                    &mut *weights
                } else {
                    &mut *constants
                };
                (body.field("buffer_name")?.str()?, payloads, "buffer")
            }
            "tensor_constant" => (
                body.field("tensor_constant_name")?.str()?,
                &mut *constants,
                "tensor constant",
            ),
            other => {
                return Err(spec.error(format!("unsupported input spec kind `{other}`")));
            }
        };
        let arg_name = body.field("arg")?.field("name")?.str()?;
        if arg_name != name {
            return Err(spec.error(format!(
                "names `{arg_name}` but the graph input in its place is `{name}`"
            )));
        }
        let tensor = payloads.tensor(archive, fqn)?.ok_or_else(|| {
            archive.error(format!(
                "missing weight: {what} `{fqn}` (graph input `{name}`) is not in `{}`",
                archive.entry_name(&weights_config(model, payloads.folder))
            ))
        })?;
        if let Some(meta) = metas.get(name) {
            let expected = TensorMeta::parse(meta)?;
            let (sizes, _, _) = expected.concrete(meta)?;
            if Some(expected.dtype) != tensor.dtype() || sizes[..] != tensor.sizes()[..] {
                return Err(spec.error(format!(
                    "{what} `{fqn}` is {} {:?} but the graph expects {} {:?}",
                    tensor.dtype().map_or("?", |d| d.python_name()),
                    &tensor.sizes()[..],
                    expected.dtype.python_name(),
                    sizes
                )));
            }
        }
        lifted.push((ordinal, tensor));
    }
    Ok((lifted, inputs))
}

/// The graph's outputs: the user's, and the new values of mutated buffers
/// and user inputs (found among `lifted` and `inputs` by the input spec
/// that names them).
#[allow(clippy::type_complexity)]
fn bind_outputs(
    graph_at: &At<'_>,
    signature: &At<'_>,
    specs: &[At<'_>],
    metas: &HashMap<&str, At<'_>>,
    lifted: &[(usize, TensorBase)],
    inputs: &[(usize, TensorSpec, Vec<Size>)],
) -> Result<(Vec<(usize, TensorSpec)>, Vec<(usize, Mutated)>)> {
    let graph_outputs = graph_at.field("outputs")?.items()?;
    let output_specs = signature.field("output_specs")?.items()?;
    if graph_outputs.len() != output_specs.len() {
        return Err(signature.error(format!(
            "{} output specs for {} graph outputs",
            output_specs.len(),
            graph_outputs.len()
        )));
    }
    let mut outputs = Vec::new();
    let mut mutations = Vec::new();
    for (position, spec) in output_specs.iter().enumerate() {
        let (kind, body) = spec.variant()?;
        let arg = body.field("arg")?;
        let name = match arg.variant()? {
            ("as_tensor", t) => t.field("name")?.str()?,
            (other, _) => {
                return Err(arg.error(format!("unsupported output kind `{other}` (only tensors)")))
            }
        };
        match kind {
            "user_output" | "loss_output" => {
                outputs.push((position, spec_for(name, metas, &arg)?.0));
            }
            "buffer_mutation" | "user_input_mutation" => {
                let target = body.field("target")?.str()?;
                let target_at = body.field("target")?;
                let mutated = if kind == "buffer_mutation" {
                    let at = specs
                        .iter()
                        .position(|s| {
                            s.variant().ok().and_then(|(k, b)| {
                                (k == "buffer").then(|| b.field("buffer_name").ok()?.str().ok())?
                            }) == Some(target)
                        })
                        .and_then(|ordinal| lifted.iter().position(|(o, _)| *o == ordinal))
                        .ok_or_else(|| {
                            target_at.error(format!("no buffer `{target}` among the inputs"))
                        })?;
                    Mutated::Lifted(at)
                } else {
                    let at = inputs
                        .iter()
                        .position(|(_, s, _)| s.name == target)
                        .ok_or_else(|| target_at.error(format!("no user input `{target}`")))?;
                    Mutated::Input(at)
                };
                mutations.push((position, mutated));
            }
            other => {
                return Err(spec.error(format!(
                    "unsupported output spec kind `{other}` (inference programs return user outputs)"
                )));
            }
        }
    }
    Ok((outputs, mutations))
}

/// How a program is prepared when it is loaded.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// Evaluate once, at load, the calls that read only weights, buffers
    /// and constants (the transposed weight of a linear layer), as
    /// [`Interpreter::fold_constants`] says; on by default. Off, every
    /// call runs on every run, as in `ep.module()`.
    pub fold_constants: bool,
    /// Fuse calls where it pays: a batch normalisation into the
    /// convolution before it ([`Interpreter::fuse_batch_norms`]), chains of
    /// pointwise calls into one pass ([`Interpreter::fuse_pointwise`]); on
    /// by default. The results then differ from PyTorch's in rounding only.
    pub fuse: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            fold_constants: true,
            fuse: true,
        }
    }
}

/// The placeholders' values known before any run: the lifted tensors the
/// program never mutates.
fn known_lifted(
    interpreter: &Interpreter,
    lifted: &[(usize, TensorBase)],
    mutations: &[(usize, Mutated)],
) -> Vec<Option<IValue>> {
    let mut known = vec![None; interpreter.num_inputs()];
    for (k, (ordinal, tensor)) in lifted.iter().enumerate() {
        let mutated = mutations
            .iter()
            .any(|(_, m)| matches!(m, Mutated::Lifted(i) if *i == k));
        if !mutated {
            if let Some(slot) = known.get_mut(*ordinal) {
                *slot = Some(IValue::Tensor(tensor.clone()));
            }
        }
    }
    known
}

/// Prepares `interpreter` as `options` say (under inference mode, as runs
/// are); how many calls were folded and how many fused.
fn prepare(
    interpreter: &mut Interpreter,
    lifted: &[(usize, TensorBase)],
    mutations: &[(usize, Mutated)],
    options: &LoadOptions,
) -> (usize, Fused) {
    if !options.fold_constants && !options.fuse {
        return (0, Fused::default());
    }
    let known = known_lifted(interpreter, lifted, mutations);
    let _inference = InferenceMode::new(true);
    let norms = if options.fuse {
        interpreter.fuse_batch_norms(&known)
    } else {
        0
    };
    let folded = if options.fold_constants {
        interpreter.fold_constants(&known)
    } else {
        0
    };
    // Last: the chains are made of the calls that remain.
    let pointwise = if options.fuse {
        interpreter.fuse_pointwise()
    } else {
        0
    };
    (folded, Fused { norms, pointwise })
}

impl ExportedProgram {
    /// Loads the `.pt2` archive at `path` (`torch.export.load`), with the
    /// default [`LoadOptions`].
    pub fn load(path: impl AsRef<Path>) -> Result<ExportedProgram> {
        ExportedProgram::load_with(path, &LoadOptions::default())
    }

    /// Loads the `.pt2` archive at `path`, prepared as `options` say.
    pub fn load_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<ExportedProgram> {
        let start = Instant::now();
        ExportedProgram::read(Archive::open(path.as_ref())?, options, start)
    }

    /// Loads a `.pt2` archive held in memory; `label` names it in errors.
    pub fn from_bytes(bytes: Vec<u8>, label: &str) -> Result<ExportedProgram> {
        let start = Instant::now();
        ExportedProgram::read(
            Archive::from_bytes(bytes, label)?,
            &LoadOptions::default(),
            start,
        )
    }

    /// Reads the archive's program: its entries parsed, the graph built,
    /// its inputs bound to weights or user inputs, its outputs sorted into
    /// user outputs and mutations.
    /// `start` is when the load began (the archive's opening included).
    fn read(
        mut archive: Archive,
        options: &LoadOptions,
        start: Instant,
    ) -> Result<ExportedProgram> {
        check_archive_version(&archive)?;
        let model = program_name(&archive)?;
        let docs = ProgramDocs::read(&archive, &model)?;
        let mut weights =
            Payloads::parse(docs.weights.as_ref(), &docs.weights_file, "data/weights")?;
        let mut constants = Payloads::parse(
            docs.constants.as_ref(),
            &docs.constants_file,
            "data/constants",
        )?;

        let parsed = Instant::now();
        let root = At::root(&docs.model, &docs.model_file);
        check_version(&root)?;
        let module = root.field("graph_module")?;
        let graph_at = module.field("graph")?;
        let signature = module.field("signature")?;
        let shapes = ShapeEnv::parse(root.opt("range_constraints")?)?;
        let metas: HashMap<&str, At<'_>> = graph_at
            .field("tensor_values")?
            .entries()?
            .into_iter()
            .collect();
        let graph = deserialize::graph(&graph_at)?;
        let specs = signature.field("input_specs")?.items()?;
        let (lifted, inputs) = bind_inputs(
            &mut archive,
            &model,
            &graph_at,
            &signature,
            &specs,
            &metas,
            [&mut weights, &mut constants],
        )?;
        let (outputs, mutations) =
            bind_outputs(&graph_at, &signature, &specs, &metas, &lifted, &inputs)?;
        let mut interpreter = Interpreter::new(&graph).map_err(|e| graph_at.error(e.message()))?;
        let bound = Instant::now();
        let (folded, fused) = prepare(&mut interpreter, &lifted, &mutations, options);
        let load_phases = LoadPhases {
            parse_s: (parsed - start).as_secs_f64(),
            bind_s: (bound - parsed).as_secs_f64(),
            prepare_s: bound.elapsed().as_secs_f64(),
        };
        Ok(ExportedProgram {
            label: archive.label().to_string(),
            graph,
            interpreter,
            lifted,
            inputs,
            outputs,
            mutations,
            shapes,
            folded,
            fused,
            load_phases,
        })
    }

    /// The user inputs `run` takes, in order.
    pub fn inputs(&self) -> impl ExactSizeIterator<Item = &TensorSpec> {
        self.inputs.iter().map(|(_, s, _)| s)
    }

    /// The outputs `run` returns, in order.
    pub fn outputs(&self) -> impl ExactSizeIterator<Item = &TensorSpec> {
        self.outputs.iter().map(|(_, s)| s)
    }

    /// The program's graph: placeholders (lifted weights first, as the
    /// signature orders them), calls, output; the same representation as
    /// [`make_fx`](crate::make_fx())'s.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The number of calls in the graph (operators, higher-order operators
    /// and functions of sizes).
    pub fn num_nodes(&self) -> usize {
        self.graph
            .nodes
            .iter()
            .filter(|n| {
                matches!(
                    n.kind,
                    NodeKind::CallFunction { .. }
                        | NodeKind::CallHigherOrder { .. }
                        | NodeKind::CallBuiltin { .. }
                )
            })
            .count()
    }

    /// How many of the graph's calls were folded into constants when the
    /// program was loaded ([`LoadOptions::fold_constants`]).
    pub fn folded_calls(&self) -> usize {
        self.folded
    }

    /// How many of the graph's calls were fused into others when the
    /// program was loaded ([`LoadOptions::fuse`]).
    pub fn fused_calls(&self) -> usize {
        self.fused.norms + self.fused.pointwise
    }

    /// How long the load's phases took.
    pub fn load_phases(&self) -> LoadPhases {
        self.load_phases
    }

    /// How many of [`fused_calls`](Self::fused_calls) were pointwise calls
    /// fused into the chain of their reader
    /// ([`Interpreter::fuse_pointwise`]).
    pub fn fused_pointwise_calls(&self) -> usize {
        self.fused.pointwise
    }

    /// The graph's node names, in order.
    pub fn node_names(&self) -> &[String] {
        self.interpreter.node_names()
    }

    /// What node `i` of the graph calls, if it is a call.
    pub fn node_target(&self, i: usize) -> Option<String> {
        self.interpreter.node_target(i)
    }

    /// What the graph calls (`aten::convolution`), one per call.
    pub fn targets(&self) -> Vec<String> {
        self.interpreter.targets()
    }

    /// Runs the program on its user inputs (`ep.module()(*inputs)` under
    /// `torch.inference_mode()`): each input must have the dtype the graph
    /// was exported with and sizes it accepts (the sizes of a program
    /// exported with dynamic shapes bind its symbols, checked against its
    /// `range_constraints` and against each other). Returns the user
    /// outputs; new values of buffers the graph mutates are written back.
    pub fn run(&self, inputs: &[TensorBase]) -> Result<Vec<TensorBase>> {
        self.run_timed(inputs, None)
    }

    /// As [`run`](Self::run), adding each graph node's wall time and work
    /// to `profile` when it is given (indexed as
    /// [`node_names`](Self::node_names)).
    pub fn run_timed(
        &self,
        inputs: &[TensorBase],
        profile: Option<&mut NodeProfile>,
    ) -> Result<Vec<TensorBase>> {
        let error = |message: String| Error::runtime(format!("{}: {message}", self.label));
        if inputs.len() != self.inputs.len() {
            return Err(error(format!(
                "Unexpected number of inputs (expected {}, got {})",
                self.inputs.len(),
                inputs.len()
            )));
        }
        let mut values: Vec<IValue> = vec![IValue::None; self.interpreter.num_inputs()];
        let mut env = HashMap::new();
        for (i, ((ordinal, spec, sizes), given)) in self.inputs.iter().zip(inputs).enumerate() {
            let Some(dtype) = given.dtype() else {
                return Err(error(format!(
                    "input {i} (`{}`): expected a {} tensor, got an undefined tensor",
                    spec.name,
                    spec.dtype.python_name()
                )));
            };
            if dtype != spec.dtype {
                return Err(error(format!(
                    "input {i} (`{}`): expected a {} tensor, got {} of shape {:?}",
                    spec.name,
                    spec.dtype.python_name(),
                    dtype.python_name(),
                    &given.sizes()[..]
                )));
            }
            let given_sizes = given.sizes();
            let path = format!("*args[{i}]");
            if given_sizes.len() != sizes.len() {
                return Err(error(format!(
                    "Unexpected number of dimensions in input at {path}.shape (expected {}, got {})",
                    torch_size(spec.sizes.iter().map(|s| s.to_string())),
                    torch_size(given_sizes.iter().map(|s| s.to_string()))
                )));
            }
            for (j, (size, &arg)) in sizes.iter().zip(given_sizes.iter()).enumerate() {
                self.shapes
                    .check(size, arg, &mut env, &format!("{path}.shape[{j}]"))
                    .map_err(|e| error(e.message().to_string()))?;
            }
            values[*ordinal] = IValue::Tensor(given.clone());
        }
        for (ordinal, tensor) in &self.lifted {
            values[*ordinal] = IValue::Tensor(tensor.clone());
        }
        let results = {
            let _inference = InferenceMode::new(true);
            self.interpreter.run_timed(&values, profile)?
        };
        let tensor = |position: usize, name: &str| match results.get(position) {
            Some(IValue::Tensor(t)) => Ok(t.clone()),
            Some(other) => Err(error(format!(
                "output `{name}` is a {}, not a tensor",
                other.type_name()
            ))),
            None => Err(Error::internal(format!(
                "{}: output `{name}` was not computed",
                self.label
            ))),
        };
        for (position, mutated) in &self.mutations {
            let (target, name) = match mutated {
                Mutated::Lifted(k) => (&self.lifted[*k].1, "a buffer"),
                Mutated::Input(k) => (&inputs[*k], "a user input"),
            };
            let value = tensor(*position, name)?;
            let _inference = InferenceMode::new(true);
            aten_ops::ops().overload("aten::copy_")?.call(
                &[IValue::Tensor(target.clone()), IValue::Tensor(value)],
                &[],
            )?;
        }
        self.outputs
            .iter()
            .map(|(position, spec)| tensor(*position, &spec.name))
            .collect()
    }
}
