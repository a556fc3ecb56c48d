//! `aten bench`: the rows it writes for an exported program, at two sizes
//! and two thread counts, and its errors.

use std::path::PathBuf;
use std::process::Command;

fn data(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/data")
        .join(path)
}

fn aten(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_aten"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn every_size_and_thread_count_gets_a_row_of_the_peer_harness_format() {
    let model = data("models3/gpt_neox_dyn.pt2");
    let inputs = data("models3/gpt_neox_dyn.inputs.safetensors");
    let out = aten(&[
        "bench",
        model.to_str().unwrap(),
        "--inputs",
        inputs.to_str().unwrap(),
        "--sizes",
        "base,size2",
        "--threads",
        "1,2",
        "--rounds",
        "2",
        "--iters",
        "1",
        "--warmup-ms",
        "0",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let cells: Vec<(&str, u64)> = rows
        .iter()
        .map(|r| (r["size"].as_str().unwrap(), r["threads"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        cells,
        [("base", 1), ("base", 2), ("size2", 1), ("size2", 2)]
    );
    for r in &rows {
        assert_eq!(r["runtime"], "aten");
        assert_eq!(r["model"], "gpt_neox_dyn");
        assert_eq!(r["ok"], true, "{r}");
        assert_eq!(
            (r["reps"].as_u64(), r["iters_per_rep"].as_u64()),
            (Some(2), Some(1))
        );
        let (min, median, p90) = (
            r["min_us"].as_f64().unwrap(),
            r["median_us"].as_f64().unwrap(),
            r["p90_us"].as_f64().unwrap(),
        );
        assert!(0.0 < min && min <= median && median <= p90, "{r}");
        assert!(r["first_run_s"].as_f64().unwrap() >= r["first_call_s"].as_f64().unwrap());
        // The load's phases are parts of the first run, before its call.
        let phases: f64 = ["load_parse_s", "load_bind_s", "load_prepare_s"]
            .iter()
            .map(|k| r[*k].as_f64().unwrap())
            .inspect(|&s| assert!(s >= 0.0, "{r}"))
            .sum();
        assert!(
            phases + r["first_call_s"].as_f64().unwrap() <= r["first_run_s"].as_f64().unwrap(),
            "{r}"
        );
        assert!(r["max_abs_diff"].as_f64().unwrap() < 1e-4);
        assert_eq!(r["rtol"], 1e-4);
    }
    assert_eq!(rows[0]["input_shapes"], serde_json::json!([[2, 12]]));
    assert_eq!(rows[2]["input_shapes"], serde_json::json!([[1, 5]]));
    // Peak memory is read once, after the first cell.
    assert!(rows[0]["peak_rss_mb"].as_f64().unwrap() > 1.0);
    assert!(rows[1..].iter().all(|r| r["peak_rss_mb"].is_null()));
}

#[test]
fn outputs_that_differ_fail_the_cell_and_the_command() {
    // mlp's inputs against cnn's expected outputs.
    let out = aten(&[
        "bench",
        data("models/mlp.pt2").to_str().unwrap(),
        "--inputs",
        data("models/mlp.inputs.safetensors").to_str().unwrap(),
        "--expected",
        data("models/cnn.expected.safetensors").to_str().unwrap(),
        "--rounds",
        "1",
        "--iters",
        "1",
    ]);
    assert!(!out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("outputs differ from the expected ones"),
        "{text}"
    );
}

#[test]
fn a_missing_size_or_a_zero_thread_count_is_an_error() {
    let model = data("models/mlp.pt2");
    let inputs = data("models/mlp.inputs.safetensors");
    let (model, inputs) = (model.to_str().unwrap(), inputs.to_str().unwrap());
    let out = aten(&["bench", model, "--inputs", inputs, "--sizes", "size7"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--sizes size7: no file"));
    let out = aten(&["bench", model, "--inputs", inputs, "--threads", "0"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 1"));
}
