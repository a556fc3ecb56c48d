//! The shared exported programs (copied into
//! `conformance/data/models/`) run by the `.pt2` runner against PyTorch's
//! eager outputs, as `aten conform models` checks them.

use std::path::PathBuf;

use aten_cli::conform::models;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../conformance/data/models")
}

#[test]
fn every_shared_model_matches_pytorch() {
    let outcomes = models::run_dir(&dir()).unwrap();
    let names: Vec<_> = outcomes.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["attention", "cnn", "mlp"]);
    for o in &outcomes {
        match &o.result {
            Ok(worst) => println!("{}: largest difference {worst:.2e}", o.name),
            Err(e) => panic!("{}: {e}", o.name),
        }
    }
}

#[test]
fn the_command_counts_models_and_prints_a_line_each() {
    let (lines, report) = models::run(&dir()).unwrap();
    assert_eq!(lines.len(), 3);
    assert!(
        lines.iter().all(|l| l.contains(": ok (largest difference")),
        "{lines:?}"
    );
    assert_eq!(report.tally.unwrap().to_string(), "3 passed, 0 failed");
}

#[test]
fn a_wrong_output_fails_with_the_values_named() {
    let expected = aten::c10::TensorBase::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
    let close = aten::c10::TensorBase::from_vec(vec![1.00005f32, 2.0, 3.0], &[3]).unwrap();
    let far = aten::c10::TensorBase::from_vec(vec![1.0f32, 2.5, 3.0], &[3]).unwrap();
    let tol = models::DEFAULT_TOLERANCE;
    assert!(models::compare(&close, &expected, tol).is_ok());
    let e = models::compare(&far, &expected, tol).unwrap_err();
    assert!(
        e.contains("1 of 3 values differ") && e.contains("flat index 1"),
        "{e}"
    );
    let ints = aten::c10::TensorBase::from_vec(vec![1i64, 2, 3], &[3]).unwrap();
    let e = models::compare(&ints, &expected, tol).unwrap_err();
    assert!(e.contains("dtype int64 but PyTorch's is float32"), "{e}");
    let shape = aten::c10::TensorBase::from_vec(vec![1.0f32, 2.0, 3.0], &[1, 3]).unwrap();
    let e = models::compare(&shape, &expected, tol).unwrap_err();
    assert!(e.contains("shape [1, 3] but PyTorch's is [3]"), "{e}");
}
