//! The shared exported programs (copied into `conformance/data/models/`
//! and `conformance/data/models3/`) run by the `.pt2` runner against
//! PyTorch's eager outputs, as `aten conform models` checks them: fourteen
//! core-ATen programs from torchvision and hand-written architectures, and
//! three in the other export forms (the default export IR, bfloat16, and a
//! dynamic-shape program checked at three sizes).

use std::path::PathBuf;

use aten_cli::conform::models;

fn dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/data")
        .join(name)
}

fn assert_all_match(dir_name: &str, expected: &[&str]) {
    let outcomes = models::run_dir(&dir(dir_name)).unwrap();
    let names: Vec<_> = outcomes.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, expected);
    let failed: Vec<String> = outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().err().map(|e| format!("{}: {e}", o.name)))
        .collect();
    for o in &outcomes {
        if let Ok(worst) = &o.result {
            println!(
                "{}: largest difference {worst:.2e} ({} sizes)",
                o.name, o.sizes
            );
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn every_shared_core_aten_model_matches_pytorch() {
    assert_all_match(
        "models",
        &[
            "attention",
            "cnn",
            "convnext_tiny",
            "efficientnet_b0",
            "gpt",
            "mlp",
            "mobilenet_v3_small",
            "resnet10",
            "shufflenet_v2_x0_5",
            "squeezenet1_1",
            "swin_tiny",
            "tcn1d",
            "uppad",
            "vit_tiny",
        ],
    );
}

#[test]
fn the_ir_bfloat16_and_dynamic_models_match_pytorch_at_every_size() {
    assert_all_match(
        "models3",
        &["distilbert_bf16_core", "gpt_neox_dyn", "mobilenet_v2_ir"],
    );
    let dynamic = models::run_model(
        &dir("models3"),
        "gpt_neox_dyn",
        &models::Tolerances::default(),
    );
    assert_eq!(dynamic.sizes, 3);
}

#[test]
fn the_command_counts_models_and_prints_a_line_each() {
    let (lines, report) = models::run(&dir("models3")).unwrap();
    assert_eq!(lines.len(), 3);
    assert!(
        lines.iter().all(|l| l.contains(": ok (largest difference")),
        "{lines:?}"
    );
    assert!(lines[1].ends_with(", 3 sizes)"), "{lines:?}");
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

/// A fresh directory holding a copy of the shared `mlp` model (its
/// archive, inputs and expected outputs), for tests that add hostile
/// files beside it.
fn scratch_with_mlp(tag: &str) -> PathBuf {
    let scratch = std::env::temp_dir().join(format!("aten-models-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    for suffix in ["pt2", "inputs.safetensors", "expected.safetensors"] {
        let file = format!("mlp.{suffix}");
        std::fs::copy(dir("models").join(&file), scratch.join(&file)).unwrap();
    }
    scratch
}

#[test]
fn an_invalid_models_json_is_an_error_not_a_default() {
    let scratch = scratch_with_mlp("json");
    for (text, says) in [
        ("not json", "not JSON"),
        ("[1, 2]", "expected an object of models"),
        (
            r#"{"mlp": {"tolerance": {"float32": {"rtol": "1e-4", "atol": 1e-4}}}}"#,
            "mlp.tolerance.float32.rtol: expected a non-negative number",
        ),
    ] {
        std::fs::write(scratch.join("models.json"), text).unwrap();
        let e = models::run_dir(&scratch).unwrap_err();
        assert!(e.contains(says), "{text}: {e}");
    }
    std::fs::write(
        scratch.join("models.json"),
        r#"{"mlp": {"tolerance": {"float32": {"rtol": 1e-4, "atol": 1e-4}, "integer": "exact"}}}"#,
    )
    .unwrap();
    let outcomes = models::run_dir(&scratch).unwrap();
    assert!(outcomes[0].result.is_ok(), "{:?}", outcomes[0].result);
    std::fs::remove_dir_all(&scratch).unwrap();
}

#[cfg(unix)]
#[test]
fn odd_directory_entries_are_errors_not_skips_or_hangs() {
    use std::os::unix::ffi::OsStrExt;
    let scratch = scratch_with_mlp("odd");
    // A model whose name is not UTF-8 would be skipped silently.
    let odd = scratch.join(std::ffi::OsStr::from_bytes(b"m\xff.pt2"));
    std::fs::write(&odd, b"").unwrap();
    let e = models::run_dir(&scratch).unwrap_err();
    assert!(e.contains("is not UTF-8"), "{e}");
    std::fs::remove_file(&odd).unwrap();
    // A FIFO named like a model fails that model instead of blocking.
    let fifo = scratch.join("a.pt2");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let outcomes = models::run_dir(&scratch).unwrap();
        let e = outcomes[0].result.as_ref().unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        assert!(outcomes[1].result.is_ok());
    }
    std::fs::remove_dir_all(&scratch).unwrap();
}
