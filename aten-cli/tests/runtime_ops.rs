//! An operator defined at run time through `torch.library` shows in what
//! `aten ops` and `aten dump` print, and leaves with its library.

use aten::dispatch::CppFunction;
use aten::torch_ops::Library;
use aten::Tensor;

#[test]
fn runtime_operators_appear_in_ops_and_dump() {
    aten::ops_root();
    let mut lib = Library::new("clitest", "FRAGMENT", "").unwrap();
    lib.define("echo(Tensor x) -> Tensor", "", &[]).unwrap();
    lib.impl_(
        "echo",
        CppFunction::from_unboxed(|x: &Tensor| Ok(x.clone())),
        "CPU",
    )
    .unwrap();
    lib.impl_(
        "echo",
        CppFunction::from_unboxed(|x: &Tensor| Ok(x.clone())),
        "Meta",
    )
    .unwrap();
    assert!(aten_cli::registry::ops()
        .lines()
        .any(|l| l == "clitest::echo"));
    let dump = aten_cli::registry::dump("clitest::echo").unwrap();
    assert!(
        dump.starts_with("name: clitest::echo\nschema: clitest::echo(Tensor x) -> Tensor\n"),
        "{dump}"
    );
    assert!(
        dump.contains("\nCPU: registered at ") && dump.contains("\nMeta: registered at "),
        "{dump}"
    );
    drop(lib);
    assert!(!aten_cli::registry::ops()
        .lines()
        .any(|l| l == "clitest::echo"));
}
