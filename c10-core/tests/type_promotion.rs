//! Type promotion against PyTorch 2.15 (`type_promotion.json`): every
//! `promote_types` pair and every `result_type` case.

use c10_core::type_promotion::{promote_types, ResultTypeState, WrappedNumber};
use c10_core::ScalarType;
use serde_json::Value;

fn dtype(v: &Value) -> ScalarType {
    v.as_str().unwrap().parse().unwrap()
}

#[test]
fn matches_pytorch() {
    let data: Value =
        serde_json::from_str(include_str!("../../conformance/data/type_promotion.json")).unwrap();
    let mut checked = 0;
    for case in data["promote_types"].as_array().unwrap() {
        let got = promote_types(dtype(&case["a"]), dtype(&case["b"])).unwrap();
        assert_eq!(got, dtype(&case["promote_types"]), "{case}");
        checked += 1;
    }
    for case in data["result_type"].as_array().unwrap() {
        let mut state = ResultTypeState::default();
        state
            .add_tensor(
                dtype(&case["tensor_dtype"]),
                case["tensor_dim"].as_u64().unwrap() as usize,
            )
            .unwrap();
        if let Some(other) = case.get("other_zero_dim_dtype") {
            state.add_tensor(dtype(other), 0).unwrap();
        } else {
            let kind = match case["scalar"].as_str().unwrap() {
                "bool" => WrappedNumber::Bool,
                "int" => WrappedNumber::Int,
                "float" => WrappedNumber::Float,
                _ => WrappedNumber::Complex,
            };
            state.add_number(kind).unwrap();
        }
        assert_eq!(
            state.result().unwrap(),
            Some(dtype(&case["result_type"])),
            "{case}"
        );
        checked += 1;
    }
    assert_eq!(checked, 144 + 384);
}
