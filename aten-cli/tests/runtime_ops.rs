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

#[test]
fn dumping_a_name_without_its_overload_names_the_overloads() {
    aten::ops_root();
    let e = aten_cli::registry::dump("aten::add")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("no operator named aten::add is registered; its overloads are aten::add.")
            && e.contains("aten::add.Tensor")
            && e.ends_with("(name one as NAME.OVERLOAD)"),
        "{e}"
    );
    let e = aten_cli::registry::dump("aten::no_such_op")
        .unwrap_err()
        .to_string();
    assert_eq!(e, "no operator named aten::no_such_op is registered");
}
