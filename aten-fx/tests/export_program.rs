//! The `.pt2` loader and runner (`aten_fx::export`): the binding rules of
//! the signature on a hand-written archive (tied weights, a tensor
//! constant and a non-persistent buffer between the parameters, keyword
//! arguments, defaults left out, a view of a weight's storage), safetensors
//! round trips, and clear errors for every way an archive can be bad.
//! The shared models against PyTorch's outputs are in `aten-cli`'s
//! `conformance_models` test.

mod support;

use std::io::{Read, Write};
use std::path::PathBuf;

use aten_fx::export::{parse_safetensors, serialize_safetensors, ExportedProgram, SymSize};
use c10_core::TensorBase;
use serde_json::{json, Value};

fn model_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/data/models")
        .join(name)
}

type Entries = Vec<(String, Vec<u8>)>;

fn read_entries(bytes: &[u8]) -> Entries {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    (0..zip.len())
        .map(|i| {
            let mut f = zip.by_index(i).unwrap();
            let mut data = Vec::new();
            f.read_to_end(&mut data).unwrap();
            (f.name().unwrap().to_string(), data)
        })
        .collect()
}

fn write_entries(entries: &Entries) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, data) in entries {
        w.start_file(name.as_str(), options).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// The shared `model` archive with `edit` applied to its entries, loaded.
fn load_edited(model: &str, edit: impl FnOnce(&mut Entries)) -> c10_core::Result<ExportedProgram> {
    let bytes = std::fs::read(model_path(&format!("{model}.pt2"))).unwrap();
    let mut entries = read_entries(&bytes);
    edit(&mut entries);
    ExportedProgram::from_bytes(write_entries(&entries), &format!("{model}.pt2"))
}

fn edit_json(entries: &mut Entries, suffix: &str, edit: impl FnOnce(&mut Value)) {
    let (_, data) = entries
        .iter_mut()
        .find(|(n, _)| n.ends_with(suffix))
        .unwrap();
    let mut doc: Value = serde_json::from_slice(data).unwrap();
    edit(&mut doc);
    *data = serde_json::to_vec(&doc).unwrap();
}

fn replace(entries: &mut Entries, suffix: &str, data: &[u8]) {
    let (_, old) = entries
        .iter_mut()
        .find(|(n, _)| n.ends_with(suffix))
        .unwrap();
    *old = data.to_vec();
}

fn error_of(result: c10_core::Result<ExportedProgram>) -> String {
    match result {
        Ok(_) => panic!("the archive loaded"),
        Err(e) => e.message().to_string(),
    }
}

fn assert_error(result: c10_core::Result<ExportedProgram>, parts: &[&str]) {
    let message = error_of(result);
    for part in parts {
        assert!(message.contains(part), "`{part}` not in: {message}");
    }
}

fn f32_tensor(values: &[f32], sizes: &[i64]) -> TensorBase {
    TensorBase::from_vec(values.to_vec(), sizes).unwrap()
}

fn le_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn meta(sizes: &[i64], strides: &[i64], offset: i64) -> Value {
    json!({
        "dtype": 7,
        "sizes": sizes.iter().map(|s| json!({"as_int": s})).collect::<Vec<_>>(),
        "requires_grad": false,
        "device": {"type": "cpu", "index": null},
        "strides": strides.iter().map(|s| json!({"as_int": s})).collect::<Vec<_>>(),
        "storage_offset": {"as_int": offset},
        "layout": 7
    })
}

fn tensor_arg(name: &str) -> Value {
    json!({"as_tensor": {"name": name}})
}

/// A program written by hand in the archive's format:
///
/// ```text
/// inputs: p_w (parameter `w`: elements 2..8 of the file `weight_0`, as 2x3),
///         c_k (tensor constant `k`), b_s (non-persistent buffer `s`),
///         p_v (parameter `v`, tied to `w`: the same file, all 8 elements,
///         unused), x (user input, 2x3)
/// add = aten.add.Tensor(x, p_w, alpha=2)       # keyword argument
/// mul = aten.mul.Tensor(add, c_k)
/// sum = aten.sum.dim_IntList(mul, [1])          # keepdim, dtype defaulted
/// permute = aten.permute.default(mul, [1, 0])
/// sub = aten.sub.Tensor(sum, b_s)
/// outputs: permute, sub
/// ```
fn hand_written() -> Vec<u8> {
    let node = |name: &str, target: &str, inputs: Value, output: &str| {
        json!({"target": target, "inputs": inputs, "outputs": [tensor_arg(output)],
               "metadata": {}, "is_hop_single_tensor_return": null, "name": name})
    };
    let input = |name: &str, arg: Value, kind: i64| json!({"name": name, "arg": arg, "kind": kind});
    let nodes = json!([
        node(
            "add",
            "torch.ops.aten.add.Tensor",
            json!([
                input("self", tensor_arg("x"), 1),
                input("other", tensor_arg("p_w"), 1),
                input("alpha", json!({"as_int": 2}), 2)
            ]),
            "add"
        ),
        node(
            "mul",
            "torch.ops.aten.mul.Tensor",
            json!([
                input("self", tensor_arg("add"), 1),
                input("other", tensor_arg("c_k"), 1)
            ]),
            "mul"
        ),
        node(
            "sum",
            "torch.ops.aten.sum.dim_IntList",
            json!([
                input("self", tensor_arg("mul"), 1),
                input("dim", json!({"as_ints": [1]}), 1)
            ]),
            "sum"
        ),
        node(
            "permute",
            "torch.ops.aten.permute.default",
            json!([
                input("self", tensor_arg("mul"), 1),
                input("dims", json!({"as_ints": [1, 0]}), 1)
            ]),
            "permute"
        ),
        node(
            "sub",
            "torch.ops.aten.sub.Tensor",
            json!([
                input("self", tensor_arg("sum"), 1),
                input("other", tensor_arg("b_s"), 1)
            ]),
            "sub"
        ),
    ]);
    let values = json!({
        "p_w": meta(&[2, 3], &[3, 1], 2), "c_k": meta(&[3], &[1], 0), "b_s": meta(&[2], &[1], 0),
        "p_v": meta(&[8], &[1], 0), "x": meta(&[2, 3], &[3, 1], 0),
        "add": meta(&[2, 3], &[3, 1], 0), "mul": meta(&[2, 3], &[3, 1], 0),
        "sum": meta(&[2], &[1], 0), "permute": meta(&[3, 2], &[1, 3], 0), "sub": meta(&[2], &[1], 0)
    });
    let model = json!({
        "graph_module": {
            "graph": {
                "inputs": [tensor_arg("p_w"), tensor_arg("c_k"), tensor_arg("b_s"), tensor_arg("p_v"), tensor_arg("x")],
                "outputs": [tensor_arg("permute"), tensor_arg("sub")],
                "nodes": nodes,
                "tensor_values": values,
                "sym_int_values": {}, "sym_bool_values": {}, "sym_float_values": {},
                "custom_obj_values": {}, "is_single_tensor_return": false
            },
            "signature": {
                "input_specs": [
                    {"parameter": {"arg": {"name": "p_w"}, "parameter_name": "w"}},
                    {"tensor_constant": {"arg": {"name": "c_k"}, "tensor_constant_name": "k"}},
                    {"buffer": {"arg": {"name": "b_s"}, "buffer_name": "s", "persistent": false}},
                    {"parameter": {"arg": {"name": "p_v"}, "parameter_name": "v"}},
                    {"user_input": {"arg": tensor_arg("x")}}
                ],
                "output_specs": [
                    {"user_output": {"arg": tensor_arg("permute")}},
                    {"user_output": {"arg": tensor_arg("sub")}}
                ]
            },
            "module_call_graph": [], "metadata": {}, "treespec_namedtuple_fields": {}
        },
        "opset_version": {"aten": 10},
        "range_constraints": {},
        "schema_version": {"major": 8, "minor": 20},
        "verifiers": ["ATEN"],
        "torch_version": "2.15.0",
        "guards_code": []
    });
    let entry = |path: &str, m: Value| json!({"path_name": path, "is_param": true, "use_pickle": false, "tensor_meta": m});
    let weights = json!({"config": {
        "w": entry("weight_0", meta(&[2, 3], &[3, 1], 2)),
        "v": entry("weight_0", meta(&[8], &[1], 0)),
    }});
    let constants = json!({"config": {
        "k": entry("tensor_0", meta(&[3], &[1], 0)),
        "s": entry("tensor_1", meta(&[2], &[1], 0)),
    }});
    let entries: Entries = vec![
        ("hand/archive_format".into(), b"pt2".to_vec()),
        ("hand/archive_version".into(), b"0".to_vec()),
        ("hand/byteorder".into(), b"little".to_vec()),
        (
            "hand/models/model.json".into(),
            serde_json::to_vec(&model).unwrap(),
        ),
        (
            "hand/data/weights/model_weights_config.json".into(),
            serde_json::to_vec(&weights).unwrap(),
        ),
        (
            "hand/data/weights/weight_0".into(),
            le_bytes(&[100.0, 200.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
        ),
        (
            "hand/data/constants/model_constants_config.json".into(),
            serde_json::to_vec(&constants).unwrap(),
        ),
        (
            "hand/data/constants/tensor_0".into(),
            le_bytes(&[1.0, 10.0, 100.0]),
        ),
        (
            "hand/data/constants/tensor_1".into(),
            le_bytes(&[0.5, 0.25]),
        ),
    ];
    write_entries(&entries)
}

#[test]
fn the_signature_binds_each_input_by_its_own_kind() {
    let program = ExportedProgram::from_bytes(hand_written(), "hand.pt2").unwrap();
    assert_eq!(program.num_nodes(), 5);
    let inputs: Vec<_> = program
        .inputs()
        .map(|s| (s.name.clone(), s.sizes.clone()))
        .collect();
    assert_eq!(
        inputs,
        vec![("x".to_string(), vec![SymSize::Int(2), SymSize::Int(3)])]
    );
    assert_eq!(program.outputs().len(), 2);
    let x = f32_tensor(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]);
    let out = program.run(&[x]).unwrap();
    // add = x + 2 * w, w = [[1, 2, 3], [4, 5, 6]] (offset 2 into the file).
    // mul = add * [1, 10, 100].
    let add = [2.0f32, 5.0, 8.0, 11.0, 14.0, 17.0];
    let k = [1.0f32, 10.0, 100.0];
    let mul: Vec<f32> = add.iter().enumerate().map(|(i, a)| a * k[i % 3]).collect();
    let permuted: Vec<f32> = (0..3).flat_map(|j| [mul[j], mul[3 + j]]).collect();
    assert_eq!(&out[0].sizes()[..], &[3, 2]);
    assert_eq!(&out[0].strides()[..], &[1, 3], "a permute stays a view");
    assert_eq!(out[0].to_vec::<f32>().unwrap(), permuted);
    let sums = [
        mul[..3].iter().sum::<f32>() - 0.5,
        mul[3..].iter().sum::<f32>() - 0.25,
    ];
    assert_eq!(out[1].to_vec::<f32>().unwrap(), sums);
}

#[test]
fn runs_repeat_and_run_from_several_threads() {
    let program = ExportedProgram::load(model_path("attention.pt2")).unwrap();
    let inputs: Vec<TensorBase> =
        aten_fx::export::load_safetensors(model_path("attention.inputs.safetensors"))
            .unwrap()
            .into_iter()
            .map(|(_, t)| t)
            .collect();
    let first = program.run(&inputs).unwrap()[0].to_vec::<f32>().unwrap();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| s.spawn(|| program.run(&inputs).unwrap()[0].to_vec::<f32>().unwrap()))
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), first);
        }
    });
}

#[test]
fn safetensors_round_trip_keeps_names_order_dtypes_and_views() {
    let a = f32_tensor(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let a_t = a.as_strided(&[3, 2], &[1, 3], None).unwrap();
    let b = TensorBase::from_vec(vec![7i64, -8], &[2]).unwrap();
    let c = TensorBase::from_vec(vec![true, false, true], &[3]).unwrap();
    let s = TensorBase::from_vec(vec![2.5f64], &[]).unwrap();
    let named = vec![
        ("z_first".to_string(), a_t),
        ("a_second".to_string(), b),
        ("bools".to_string(), c),
        ("scalar".to_string(), s),
    ];
    let bytes = serialize_safetensors(&named).unwrap();
    let back = parse_safetensors(&bytes, "t.safetensors").unwrap();
    let mut names: Vec<_> = back.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["a_second", "bools", "scalar", "z_first"]);
    let find = |n: &str| &back.iter().find(|(m, _)| m == n).unwrap().1;
    assert_eq!(
        find("z_first").to_vec::<f32>().unwrap(),
        [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]
    );
    assert_eq!(&find("z_first").sizes()[..], &[3, 2]);
    assert_eq!(find("a_second").to_vec::<i64>().unwrap(), [7, -8]);
    assert_eq!(find("bools").to_vec::<bool>().unwrap(), [true, false, true]);
    assert!(find("scalar").sizes().is_empty());
    assert_eq!(find("scalar").to_vec::<f64>().unwrap(), [2.5]);

    let err = parse_safetensors(b"not safetensors", "bad.safetensors").unwrap_err();
    assert!(
        err.message()
            .contains("bad.safetensors: not a safetensors file"),
        "{err}"
    );
}

#[test]
fn a_file_that_is_not_an_archive_is_refused() {
    let e = error_of(ExportedProgram::from_bytes(b"hello".to_vec(), "x.pt2"));
    assert!(e.contains("x.pt2: not a zip archive"), "{e}");
    let e = error_of(ExportedProgram::load("/no/such/file.pt2"));
    assert!(e.contains("/no/such/file.pt2: cannot open"), "{e}");
    let no_format = write_entries(&vec![("m/models/model.json".into(), b"{}".to_vec())]);
    let e = error_of(ExportedProgram::from_bytes(no_format, "m.pt2"));
    assert!(
        e.contains("not a .pt2 archive: no `archive_format` entry"),
        "{e}"
    );
}

#[test]
fn unsupported_formats_and_versions_are_named() {
    assert_error(
        load_edited("mlp", |e| replace(e, "/archive_format", b"pt3")),
        &["mlp.pt2", "unsupported archive format `pt3`"],
    );
    assert_error(
        load_edited("mlp", |e| replace(e, "/archive_version", b"7")),
        &["unsupported archive version `7`"],
    );
    assert_error(
        load_edited("mlp", |e| replace(e, "/byteorder", b"big")),
        &["unsupported byte order `big`"],
    );
    assert_error(
        load_edited("mlp", |e| {
            edit_json(e, "models/model.json", |d| {
                d["schema_version"]["major"] = json!(9)
            })
        }),
        &["mlp/models/model.json: schema_version: unsupported schema version 9.20"],
    );
}

#[test]
fn malformed_documents_name_the_file_and_the_path() {
    assert_error(
        load_edited("mlp", |e| {
            replace(e, "models/model.json", b"{\"graph_module\": ")
        }),
        &["mlp.pt2: mlp/models/model.json: malformed JSON"],
    );
    assert_error(
        load_edited("mlp", |e| {
            edit_json(e, "models/model.json", |d| {
                d["graph_module"]["graph"]["nodes"][2]["target"] = json!(17)
            })
        }),
        &["graph_module.graph.nodes[2].target: expected a string"],
    );
    assert_error(
        load_edited("mlp", |e| {
            edit_json(e, "models/model.json", |d| {
                d["graph_module"]["graph"]
                    .as_object_mut()
                    .unwrap()
                    .remove("nodes");
            })
        }),
        &["graph_module.graph: missing field `nodes`"],
    );
    assert_error(
        load_edited("mlp", |e| {
            edit_json(e, "models/model.json", |d| {
                d["graph_module"]["graph"]["nodes"][1]["inputs"][0]["arg"] =
                    json!({"as_tensor": {"name": "nowhere"}})
            })
        }),
        &[
            "graph_module.graph.nodes[1].inputs[0].arg.as_tensor",
            "refers to `nowhere`",
        ],
    );
    assert_error(
        load_edited("mlp", |e| {
            edit_json(e, "models/model.json", |d| {
                d["graph_module"]["graph"]["nodes"][1]["inputs"][0]["arg"] =
                    json!({"as_custom_obj": {}})
            })
        }),
        &["unsupported argument kind `as_custom_obj`"],
    );
    assert_error(
        load_edited("mlp", |e| {
            edit_json(e, "models/model.json", |d| {
                d["graph_module"]["graph"]["nodes"][1]["inputs"][0]["arg"] = json!({"as_graph": {}})
            })
        }),
        &["graph_module.graph.nodes[1].inputs[0].arg.as_graph: missing field `name`"],
    );
}

#[test]
fn unknown_operators_are_named_with_their_node() {
    assert_error(
        load_edited("mlp", |e| {
            edit_json(e, "models/model.json", |d| {
                d["graph_module"]["graph"]["nodes"][0]["target"] =
                    json!("torch.ops.aten.no_such_operator.default")
            })
        }),
        &[
            "nodes[0].target",
            "unknown operator `torch.ops.aten.no_such_operator.default`",
        ],
    );
    assert_error(
        load_edited("mlp", |e| {
            edit_json(e, "models/model.json", |d| {
                d["graph_module"]["graph"]["nodes"][0]["target"] = json!("_operator.getitem")
            })
        }),
        &["unsupported target `_operator.getitem`"],
    );
    // A call the schema refuses: an argument the operator does not have.
    assert_error(
        load_edited("mlp", |e| {
            edit_json(e, "models/model.json", |d| {
                let inputs = d["graph_module"]["graph"]["nodes"][0]["inputs"]
                    .as_array_mut()
                    .unwrap();
                inputs.push(json!({"name": "bogus", "arg": {"as_int": 1}, "kind": 2}));
            })
        }),
        &["has no argument `bogus`"],
    );
}

#[test]
fn missing_or_bad_weights_are_named() {
    assert_error(
        load_edited("mlp", |e| {
            edit_json(e, "model_weights_config.json", |d| {
                d["config"].as_object_mut().unwrap().remove("fc1.weight");
            })
        }),
        &[
            "missing weight: parameter `fc1.weight`",
            "model_weights_config.json",
        ],
    );
    assert_error(
        load_edited("mlp", |e| {
            let path = {
                let bytes = &e
                    .iter()
                    .find(|(n, _)| n.ends_with("model_weights_config.json"))
                    .unwrap()
                    .1;
                let d: Value = serde_json::from_slice(bytes).unwrap();
                d["config"]["fc1.weight"]["path_name"]
                    .as_str()
                    .unwrap()
                    .to_string()
            };
            e.retain(|(n, _)| !n.ends_with(&format!("data/weights/{path}")));
        }),
        &["missing entry `mlp/data/weights/"],
    );
    assert_error(
        load_edited("mlp", |e| {
            let (_, data) = e
                .iter_mut()
                .find(|(n, _)| n.ends_with("data/weights/weight_0"))
                .unwrap();
            data.truncate(12);
        }),
        &["does not fit its file `weight_0`"],
    );
    assert_error(
        load_edited("mlp", |e| {
            edit_json(e, "model_weights_config.json", |d| {
                d["config"]["fc1.weight"]["use_pickle"] = json!(true);
            })
        }),
        &["`fc1.weight` is stored as a pickle"],
    );
    assert_error(
        load_edited("mlp", |e| {
            edit_json(e, "model_weights_config.json", |d| {
                d["config"]["fc1.weight"]["tensor_meta"]["dtype"] = json!(29);
            })
        }),
        &["dtype float8_e4m3fn is not supported"],
    );
}

#[test]
fn inputs_of_the_wrong_count_dtype_or_shape_are_refused() {
    let program = ExportedProgram::load(model_path("mlp.pt2")).unwrap();
    let e = program.run(&[]).unwrap_err();
    assert!(
        e.message()
            .ends_with("mlp.pt2: Unexpected number of inputs (expected 1, got 0)"),
        "{e}"
    );
    let wrong_shape = TensorBase::from_vec(vec![0f32; 4 * 32], &[4, 32]).unwrap();
    let e = program.run(&[wrong_shape]).unwrap_err();
    assert!(
        e.message().ends_with(
            "mlp.pt2: Expected input at *args[0].shape[0] to be equal to 8, but got 4. If you meant for this dimension to be dynamic, please re-export and specify dynamic_shapes (e.g. with Dim.DYNAMIC)"
        ),
        "{e}"
    );
    let wrong_rank = TensorBase::from_vec(vec![0f32; 8 * 32], &[8, 32, 1]).unwrap();
    let e = program.run(&[wrong_rank]).unwrap_err();
    assert!(
        e.message().ends_with(
            "Unexpected number of dimensions in input at *args[0].shape (expected torch.Size([8, 32]), got torch.Size([8, 32, 1]))"
        ),
        "{e}"
    );
    let wrong_dtype = TensorBase::from_vec(vec![0f64; 8 * 32], &[8, 32]).unwrap();
    let e = program.run(&[wrong_dtype]).unwrap_err();
    assert!(e.message().contains("got float64 of shape [8, 32]"), "{e}");
}
