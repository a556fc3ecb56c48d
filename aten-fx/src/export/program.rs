//! [`ExportedProgram`]: a `.pt2` archive loaded (graph compiled, weights
//! bound to the graph's inputs as its signature says) and run.

use std::collections::HashMap;
use std::path::Path;

use aten_boxing::IValue;
use c10_core::{Error, InferenceMode, Result, ScalarType, TensorBase};
use serde_json::Value;

use super::archive::Archive;
use super::json::{self, At};
use super::plan::{NodePlan, Plan, ValueId, Values};
use super::{codes, raw};

/// The schema versions (`schema_version.major`) this loader reads.
const SCHEMA_MAJOR: i64 = 8;

/// A tensor's dtype and shape, as the exported graph records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSpec {
    /// The value's name in the graph (`x`, `addmm_2`).
    pub name: String,
    /// The dtype.
    pub dtype: ScalarType,
    /// The sizes.
    pub sizes: Vec<i64>,
}

/// A serialized `TensorMeta`.
struct TensorMeta {
    dtype: ScalarType,
    sizes: Vec<i64>,
    strides: Vec<i64>,
    storage_offset: i64,
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
        let sizes = at.field("sizes")?.sym_ints()?;
        let strides = match at.opt("strides")? {
            Some(s) => s.sym_ints()?,
            None => c10_core::tensor_layout::contiguous_strides(&sizes).to_vec(),
        };
        let storage_offset = match at.opt("storage_offset")? {
            Some(o) => o.sym_int()?,
            None => 0,
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
    plan: Plan,
    /// Parameters, buffers and constants, by the graph input they bind.
    lifted: Vec<(ValueId, TensorBase)>,
    inputs: Vec<(ValueId, TensorSpec)>,
    outputs: Vec<(ValueId, TensorSpec)>,
}

impl std::fmt::Debug for ExportedProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExportedProgram")
            .field("archive", &self.label)
            .field("nodes", &self.plan.nodes.len())
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
    fn parse(doc: Option<&'a Value>, file: &'a str, folder: &'static str) -> Result<Payloads<'a>> {
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
        let view = storage
            .as_strided(&meta.sizes, &meta.strides, Some(meta.storage_offset))
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

fn spec_for(name: &str, metas: &HashMap<&str, At<'_>>, at: &At<'_>) -> Result<TensorSpec> {
    let meta = metas
        .get(name)
        .ok_or_else(|| at.error(format!("no `tensor_values` entry for `{name}`")))?;
    let meta = TensorMeta::parse(meta)?;
    Ok(TensorSpec {
        name: name.to_string(),
        dtype: meta.dtype,
        sizes: meta.sizes,
    })
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

impl ExportedProgram {
    /// Loads the `.pt2` archive at `path` (`torch.export.load`).
    pub fn load(path: impl AsRef<Path>) -> Result<ExportedProgram> {
        ExportedProgram::read(Archive::open(path.as_ref())?)
    }

    /// Loads a `.pt2` archive held in memory; `label` names it in errors.
    pub fn from_bytes(bytes: Vec<u8>, label: &str) -> Result<ExportedProgram> {
        ExportedProgram::read(Archive::from_bytes(bytes, label)?)
    }

    fn read(mut archive: Archive) -> Result<ExportedProgram> {
        if archive.has("archive_version") {
            let version = archive.read_text("archive_version")?;
            if version.trim() != "0" {
                return Err(archive.error(format!(
                    "unsupported archive version `{}` (this loader reads version 0)",
                    version.trim()
                )));
            }
        }
        let models: Vec<String> = archive
            .files_in("models")
            .into_iter()
            .filter(|f| f.ends_with(".json"))
            .collect();
        let model = if models.iter().any(|m| m == "model.json") {
            "model".to_string()
        } else {
            match models.as_slice() {
                [one] => one.trim_end_matches(".json").to_string(),
                [] => return Err(archive.error("no program: missing entry `models/model.json`")),
                _ => {
                    return Err(archive.error(format!(
                        "several programs ({}) and none named `model`",
                        models.join(", ")
                    )))
                }
            }
        };
        let weights_path = format!("data/weights/{model}_weights_config.json");
        let constants_path = format!("data/constants/{model}_constants_config.json");
        let in_archive =
            |entry: &str| format!("{}: {}", archive.label(), archive.entry_name(entry));
        let model_file = in_archive(&format!("models/{model}.json"));
        let weights_file = in_archive(&weights_path);
        let constants_file = in_archive(&constants_path);
        let doc = json::parse(&archive.read(&format!("models/{model}.json"))?, &model_file)?;
        let weights_doc = if archive.has(&weights_path) {
            Some(json::parse(&archive.read(&weights_path)?, &weights_file)?)
        } else {
            None
        };
        let constants_doc = if archive.has(&constants_path) {
            Some(json::parse(
                &archive.read(&constants_path)?,
                &constants_file,
            )?)
        } else {
            None
        };
        let mut weights = Payloads::parse(weights_doc.as_ref(), &weights_file, "data/weights")?;
        let mut constants =
            Payloads::parse(constants_doc.as_ref(), &constants_file, "data/constants")?;

        let root = At::root(&doc, &model_file);
        check_version(&root)?;
        let module = root.field("graph_module")?;
        let graph = module.field("graph")?;
        let signature = module.field("signature")?;
        let metas: HashMap<&str, At<'_>> = graph
            .field("tensor_values")?
            .entries()?
            .into_iter()
            .collect();

        // Graph inputs, bound as the signature says.
        let mut values = Values::default();
        let graph_inputs = graph.field("inputs")?.items()?;
        let specs = signature.field("input_specs")?.items()?;
        if graph_inputs.len() != specs.len() {
            return Err(signature.error(format!(
                "{} input specs for {} graph inputs",
                specs.len(),
                graph_inputs.len()
            )));
        }
        let mut lifted = Vec::new();
        let mut inputs = Vec::new();
        for (input, spec) in graph_inputs.iter().zip(&specs) {
            let (kind, body) = spec.variant()?;
            let name = match input.variant()? {
                ("as_tensor", t) => t.field("name")?.str()?,
                (other, _) => {
                    return Err(input.error(format!(
                        "unsupported graph input kind `{other}` (only tensors)"
                    )))
                }
            };
            let id = values.define(name, input)?;
            let (fqn, payloads, what) = match kind {
                "user_input" => {
                    inputs.push((id, spec_for(name, &metas, input)?));
                    continue;
                }
                "parameter" => (
                    body.field("parameter_name")?.str()?,
                    &mut weights,
                    "parameter",
                ),
                "buffer" => {
                    let persistent = body
                        .opt("persistent")?
                        .map(|p| p.bool())
                        .transpose()?
                        .unwrap_or(true);
                    let payloads = if persistent {
                        &mut weights
                    } else {
                        &mut constants
                    };
                    (body.field("buffer_name")?.str()?, payloads, "buffer")
                }
                "tensor_constant" => (
                    body.field("tensor_constant_name")?.str()?,
                    &mut constants,
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
            let tensor = payloads.tensor(&mut archive, fqn)?.ok_or_else(|| {
                archive.error(format!(
                    "missing weight: {what} `{fqn}` (graph input `{name}`) is not in `{}`",
                    archive.entry_name(&format!(
                        "{}/{model}_{}_config.json",
                        payloads.folder,
                        if payloads.folder == "data/weights" {
                            "weights"
                        } else {
                            "constants"
                        }
                    ))
                ))
            })?;
            if let Some(meta) = metas.get(name) {
                let expected = TensorMeta::parse(meta)?;
                if Some(expected.dtype) != tensor.dtype()
                    || expected.sizes[..] != tensor.sizes()[..]
                {
                    return Err(spec.error(format!(
                        "{what} `{fqn}` is {} {:?} but the graph expects {} {:?}",
                        tensor.dtype().map_or("?", |d| d.python_name()),
                        &tensor.sizes()[..],
                        expected.dtype.python_name(),
                        expected.sizes
                    )));
                }
            }
            lifted.push((id, tensor));
        }

        let nodes = graph
            .field("nodes")?
            .items()?
            .iter()
            .map(|node| NodePlan::compile(node, &mut values))
            .collect::<Result<Vec<_>>>()?;

        let mut outputs = Vec::new();
        let graph_outputs = graph.field("outputs")?.items()?;
        let output_specs = signature.field("output_specs")?.items()?;
        if graph_outputs.len() != output_specs.len() {
            return Err(signature.error(format!(
                "{} output specs for {} graph outputs",
                output_specs.len(),
                graph_outputs.len()
            )));
        }
        for spec in &output_specs {
            let (kind, body) = spec.variant()?;
            if kind != "user_output" && kind != "loss_output" {
                return Err(spec.error(format!(
                    "unsupported output spec kind `{kind}` (inference programs return user outputs)"
                )));
            }
            let arg = body.field("arg")?;
            let name = match arg.variant()? {
                ("as_tensor", t) => t.field("name")?.str()?,
                (other, _) => {
                    return Err(
                        arg.error(format!("unsupported output kind `{other}` (only tensors)"))
                    )
                }
            };
            let id = values.get(name, &arg)?;
            outputs.push((id, spec_for(name, &metas, &arg)?));
        }

        let keep: Vec<ValueId> = outputs.iter().map(|(id, _)| *id).collect();
        Ok(ExportedProgram {
            label: archive.label().to_string(),
            plan: Plan::new(values.len(), nodes, &keep),
            lifted,
            inputs,
            outputs,
        })
    }

    /// The user inputs `run` takes, in order.
    pub fn inputs(&self) -> impl ExactSizeIterator<Item = &TensorSpec> {
        self.inputs.iter().map(|(_, s)| s)
    }

    /// The outputs `run` returns, in order.
    pub fn outputs(&self) -> impl ExactSizeIterator<Item = &TensorSpec> {
        self.outputs.iter().map(|(_, s)| s)
    }

    /// The number of operator calls in the graph.
    pub fn num_nodes(&self) -> usize {
        self.plan.nodes.len()
    }

    /// The operators the graph calls (`aten::convolution`), one per node.
    pub fn targets(&self) -> Vec<String> {
        self.plan.targets().collect()
    }

    /// Runs the program on its user inputs (`ep.module()(*inputs)` under
    /// `torch.inference_mode()`): each input must have the dtype and shape
    /// the graph was exported with. Returns the user outputs.
    pub fn run(&self, inputs: &[TensorBase]) -> Result<Vec<TensorBase>> {
        if inputs.len() != self.inputs.len() {
            return Err(Error::runtime(format!(
                "{}: the program takes {} inputs, got {}",
                self.label,
                self.inputs.len(),
                inputs.len()
            )));
        }
        let mut values: Vec<Option<IValue>> = vec![None; self.plan.num_values];
        for (i, ((id, spec), given)) in self.inputs.iter().zip(inputs).enumerate() {
            if given.dtype() != Some(spec.dtype) || given.sizes()[..] != spec.sizes[..] {
                return Err(Error::runtime(format!(
                    "{}: input {i} (`{}`): expected a {} tensor of shape {:?}, got {}",
                    self.label,
                    spec.name,
                    spec.dtype.python_name(),
                    spec.sizes,
                    match given.dtype() {
                        Some(d) => format!("{} of shape {:?}", d.python_name(), &given.sizes()[..]),
                        None => "an undefined tensor".into(),
                    }
                )));
            }
            values[*id] = Some(IValue::Tensor(given.clone()));
        }
        for (id, tensor) in &self.lifted {
            values[*id] = Some(IValue::Tensor(tensor.clone()));
        }
        {
            let _inference = InferenceMode::new(true);
            self.plan.run(&mut values)?;
        }
        self.outputs
            .iter()
            .map(|(id, spec)| match values[*id].clone() {
                Some(IValue::Tensor(t)) => Ok(t),
                Some(other) => Err(Error::runtime(format!(
                    "{}: output `{}` is a {}, not a tensor",
                    self.label,
                    spec.name,
                    other.type_name()
                ))),
                None => Err(Error::internal(format!(
                    "{}: output `{}` was not computed",
                    self.label, spec.name
                ))),
            })
            .collect()
    }
}
