//! The schema parser never panics, loops or recurses without bound: real
//! schemas from `conformance/data/schemas.txt` with random byte deletions,
//! insertions, swaps and truncations, random token sequences and random
//! strings all give `Ok` or a clean `Err`, and whatever parses also prints.

use aten_boxing::schema::{parse_schema_or_name, FunctionSchema};
use proptest::prelude::*;
use proptest::test_runner::Config;

/// Every schema PyTorch 2.15 registers, one per line.
const SCHEMAS: &str = include_str!("../../conformance/data/schemas.txt");

fn schemas() -> Vec<&'static str> {
    SCHEMAS.lines().collect()
}

/// Bytes worth inserting: the characters schemas are made of, and a few
/// that are not (NUL, control characters, the start of a UTF-8 sequence).
const ALPHABET: &[u8] =
    b"()[]{}<>,.:;=!?*|-+'\"\\#_ \t\n\r\x00\x01\x7fabcdefjnptxyzATNS0123456789\xc3\xa9";

/// Pieces of schema syntax, to build token soups that get deep into the
/// parser.
const TOKENS: &[&str] = &[
    "aten::",
    "f",
    ".out",
    "(",
    ")",
    "[",
    "]",
    "[]",
    "[2]",
    "?",
    "!",
    "(a)",
    "(a!)",
    "(a -> *)",
    "|",
    "*",
    "->",
    "...",
    ",",
    " ",
    "=",
    "-",
    "Tensor",
    "int",
    "SymInt",
    "float",
    "complex",
    "bool",
    "str",
    "Scalar",
    "ScalarType",
    "Device",
    "Dict(",
    "Future(",
    "RRef(",
    "Await(",
    "Union(",
    "(Tensor, int)",
    "__torch__.torch.classes.ns.C",
    "t",
    "None",
    "True",
    "1",
    "-1",
    "1.5",
    "1e-05",
    "0x1p3",
    "1j",
    "\"x\"",
    "'a\\nb'",
    "\"\\777\"",
    "long",
    "contiguous_format",
    "inf",
    "default",
    "__x",
    "\n",
    "  ",
    "#c\n",
    "\\\n",
    "x",
    "out",
];

#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize),
    Insert(usize, u8),
    Swap(usize, usize),
    Truncate(usize),
    Duplicate(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => any::<usize>().prop_map(Mutation::Delete),
        3 => (any::<usize>(), prop::sample::select(ALPHABET)).prop_map(|(i, b)| Mutation::Insert(i, b)),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(i, j)| Mutation::Swap(i, j)),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        1 => (any::<usize>(), 1usize..16).prop_map(|(i, n)| Mutation::Duplicate(i, n)),
    ]
}

fn apply(text: &str, mutations: &[Mutation]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for m in mutations {
        let len = bytes.len();
        match *m {
            Mutation::Delete(i) if len > 0 => {
                bytes.remove(i % len);
            }
            Mutation::Insert(i, b) => bytes.insert(i % (len + 1), b),
            Mutation::Swap(i, j) if len > 0 => bytes.swap(i % len, j % len),
            Mutation::Truncate(i) => bytes.truncate(i % (len + 1)),
            Mutation::Duplicate(i, n) if len > 0 => {
                let start = i % len;
                let piece = bytes[start..(start + n).min(len)].to_vec();
                bytes.splice(start..start, piece);
            }
            _ => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Parses `text` both ways; whatever parses must print (and, printed, parse
/// again or fail cleanly).
fn exercise(text: &str) {
    match FunctionSchema::parse(text) {
        Ok(schema) => {
            let printed = schema.to_string();
            let _ = FunctionSchema::parse(&printed);
            for arg in schema.arguments().iter().chain(schema.returns()) {
                let _ = arg.ty().annotation_str();
                let _ = arg.default_value().map(|d| d.python_repr());
            }
        }
        Err(e) => assert!(!e.message().contains('\0')),
    }
    let _ = parse_schema_or_name(text);
}

fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config(70_000))]
    #[test]
    fn mutated_real_schemas(index in any::<usize>(), mutations in prop::collection::vec(mutation(), 1..8)) {
        let all = schemas();
        let text = apply(all[index % all.len()], &mutations);
        exercise(&text);
    }
}

proptest! {
    #![proptest_config(config(25_000))]
    #[test]
    fn token_soup(tokens in prop::collection::vec(prop::sample::select(TOKENS), 0..40)) {
        exercise(&tokens.concat());
    }
}

proptest! {
    #![proptest_config(config(15_000))]
    #[test]
    fn random_strings(text in "[ -~\t\n\x00\u{e9}]{0,80}") {
        exercise(&text);
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let n = 100_000;
    for text in [
        format!("f(int{} x) -> ()", "[]".repeat(n)),
        format!("f(int{} x) -> ()", "?".repeat(n)),
        format!("f({}int{} x) -> ()", "Future(".repeat(n), ")".repeat(n)),
        format!("f({}x) -> ()", "(".repeat(n)),
        format!(
            "f(Dict(str, {}int{}) x) -> ()",
            "Dict(str, ".repeat(n),
            ")".repeat(n)
        ),
        format!("f(Tensor{} x) -> ()", "[](a)".repeat(n)),
    ] {
        let e = FunctionSchema::parse(&text).unwrap_err();
        assert!(
            e.message().contains("type nesting exceeds"),
            "{}",
            &e.message()[..80]
        );
    }
    // Moderate nesting is fine.
    let ok = format!("f(int{} x) -> ()", "[]".repeat(50));
    assert_eq!(FunctionSchema::parse(&ok).unwrap().to_string(), ok);
}

#[test]
fn huge_sizes_do_not_allocate() {
    let e = FunctionSchema::parse("f(int[2147483647] x=1) -> ()").unwrap_err();
    assert!(e.message().contains("exceeds the supported maximum"));
    let e = FunctionSchema::parse("f(int[2147483648] x=1) -> ()").unwrap_err();
    assert_eq!(
        e.message(),
        "cannot create std::vector larger than max_size()"
    );
    let ok = FunctionSchema::parse("f(int[4294967298] x) -> ()").unwrap();
    assert_eq!(ok.to_string(), "f(int[2] x) -> ()");
}
