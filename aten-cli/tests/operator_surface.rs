//! The whole operator surface: every function of PyTorch 2.15's
//! `native_functions.yaml` (`conformance/data/pytorch/`) is a registered
//! operator whose schema prints as PyTorch prints it (`schemas.txt`) and
//! whose tags are the yaml's; the library invents no `aten` operator
//! PyTorch lacks; an operator without a kernel for a backend fails with the
//! dispatcher's "Could not run" error.

use std::collections::HashMap;
use std::path::PathBuf;

use aten::boxing::schema::OperatorName;
use aten::boxing::IValue;
use aten_cli::registry;

fn data(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/data")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// PyTorch's printed schemas of its `aten` operators, by name.
fn pytorch_schemas() -> HashMap<String, String> {
    data("schemas.txt")
        .lines()
        .filter(|l| l.starts_with("aten::"))
        .filter_map(|l| Some((l.split_once('(')?.0.to_string(), l.to_string())))
        .collect()
}

#[test]
fn every_function_of_pytorchs_yaml_is_defined_with_its_schema_and_tags() {
    let yaml = data("pytorch/native_functions.yaml");
    let tags = aten_codegen::Tags::parse(&data("pytorch/tags.yaml"), "tags.yaml").unwrap();
    let functions =
        aten_codegen::NativeFunctions::parse(&yaml, "native_functions.yaml", &tags).unwrap();
    assert_eq!(functions.len(), 2590);
    let schemas = pytorch_schemas();
    let mut wrong = Vec::new();
    for f in functions.iter() {
        let name = OperatorName::parse(&format!("aten::{}", f.func.operator_name())).unwrap();
        let Some(handle) = aten::dispatcher().find_op(&name) else {
            wrong.push(format!("{name}: not defined"));
            continue;
        };
        let printed = handle.schema().map(|s| s.to_string()).unwrap_or_default();
        match schemas.get(&name.to_string()) {
            Some(expected) if *expected == printed => {}
            Some(expected) => wrong.push(format!("{name}: {printed}\n   PyTorch: {expected}")),
            None => wrong.push(format!("{name}: not in schemas.txt")),
        }
        if handle.tags() != f.tags {
            wrong.push(format!(
                "{name}: tags {:?}, yaml {:?}",
                handle.tags(),
                f.tags
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let (report, missing) = registry::surface(&yaml, "native_functions.yaml").unwrap();
    assert!(missing.is_empty(), "{missing:?}");
    assert!(
        report.starts_with("2590 functions in native_functions.yaml: 2590 defined\n"),
        "{report}"
    );
    println!("{report}");
}

#[test]
fn every_registered_aten_operator_is_pytorchs() {
    let schemas = pytorch_schemas();
    let mut invented = Vec::new();
    for name in aten::dispatcher().all_op_names() {
        if name.namespace() != Some("aten") {
            continue;
        }
        let handle = aten::dispatcher().find_op(&name).unwrap();
        let printed = handle.schema().map(|s| s.to_string()).unwrap_or_default();
        if schemas.get(&name.to_string()) != Some(&printed) {
            invented.push(format!("{name}: {printed}"));
        }
    }
    assert!(invented.is_empty(), "{}", invented.join("\n"));
}

#[test]
fn an_operator_without_a_cpu_kernel_is_the_dispatchers_error() {
    let name = OperatorName::parse("aten::miopen_convolution").unwrap();
    let kernels = registry::kernels(&name).unwrap();
    assert_eq!(kernels, registry::Kernels::default());
    let op = aten::ops_root()
        .overload("aten::miopen_convolution")
        .unwrap();
    let x = aten::c10::TensorBase::from_vec(vec![1.0f32; 4], &[1, 1, 2, 2]).unwrap();
    let e = op
        .call(
            &[
                IValue::Tensor(x.clone()),
                IValue::Tensor(x),
                IValue::None,
                IValue::IntList(vec![0, 0].into()),
                IValue::IntList(vec![1, 1].into()),
                IValue::IntList(vec![1, 1].into()),
                IValue::Int(1),
                IValue::bool(false),
                IValue::bool(false),
            ],
            &[],
        )
        .unwrap_err();
    assert!(
        e.message().starts_with(
            "Could not run 'aten::miopen_convolution' with arguments from the 'CPU' backend."
        ),
        "{}",
        e.message()
    );
}

/// `aten ops | head`: a reader that closes the pipe early ends the command
/// with a failure status, never a panic.
#[test]
fn a_closed_stdout_ends_the_listing_without_a_panic() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_aten"))
        .arg("ops")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("aten runs");
    let mut first = [0u8; 16];
    child
        .stdout
        .take()
        .expect("piped stdout")
        .read_exact(&mut first)
        .expect("the listing starts");
    // The read end is dropped: the rest of the listing meets a closed pipe.
    let output = child.wait_with_output().expect("aten ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(first.starts_with(b"aten::"), "{first:?}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(output.status.code(), Some(101), "{stderr}");
}
