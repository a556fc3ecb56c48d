//! Broken `native_functions.yaml` (and `tags.yaml`) fixtures, one per
//! validation rule, in `tests/fixtures/`. Each fixture ends with the errors
//! it must give, exactly and in order, as `# expect: FILE:LINE: message`
//! comments (at the end, so they do not move the lines they name). Fixtures
//! named `tags_*` are read as `tags.yaml` files; the others as
//! `native_functions.yaml` files with PyTorch's tags.

use std::path::Path;

use aten_codegen::{NativeFunctions, Tags};

const TAGS: &str = include_str!("../../conformance/data/pytorch/tags.yaml");

/// The `# expect:` lines of a fixture.
fn expected(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# expect: "))
        .map(str::to_string)
        .collect()
}

/// The errors a fixture gives.
fn actual(name: &str, text: &str, tags: &Tags) -> Vec<String> {
    let errors = if name.starts_with("tags_") {
        Tags::parse_lenient(text, name).1
    } else {
        NativeFunctions::parse_lenient(text, name, Some(tags)).1
    };
    errors.iter().map(ToString::to_string).collect()
}

#[test]
fn every_fixture_gives_its_errors() {
    let tags = Tags::parse(TAGS, "tags.yaml").unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".yaml"))
        .collect();
    names.sort();
    assert!(names.len() >= 50, "only {} fixtures", names.len());
    let print = std::env::var_os("PRINT_FIXTURE_ERRORS").is_some();
    let mut failures = Vec::new();
    for name in &names {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let got = actual(name, &text, &tags);
        if print {
            println!("== {name}");
            for line in &got {
                println!("# expect: {line}");
            }
        }
        let want = expected(&text);
        if want.is_empty() {
            failures.push(format!("{name}: no '# expect:' lines"));
        } else if got != want {
            failures.push(format!(
                "{name}:\n  expected:\n    {}\n  got:\n    {}",
                want.join("\n    "),
                got.join("\n    ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
