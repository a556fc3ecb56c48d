//! Tidy: the house rules, checked over the repository's own files.
//!
//! In the style of rust-analyzer's `xtask/src/tidy.rs`: plain `#[test]`s
//! that read the working tree (no network, no `git`), so `cargo test -p
//! xtask` and `cargo test --workspace` keep the codebase honest. Each test
//! collects every offence before failing, so one run lists them all as
//! `path:line: message`.
//!
//! - [`crate_dependencies_follow_architecture_order`]: a crate depends only
//!   on crates listed above it in `ARCHITECTURE.md`'s code map;
//! - [`every_module_starts_with_docs`]: each `.rs` file begins with `//!`
//!   module docs (a generated file: its `// @generated` line, then `//!`);
//! - [`no_issue_numbers`]: comments and docs do not point at the issue
//!   tracker; they say what the code does, the history lives in commits;
//! - [`docs_stay_inside_repository`]: no absolute paths or paths to the
//!   checkout's siblings, and relative Markdown links resolve to files of
//!   the repository;
//! - [`map_paths_exist`]: every crate path the map and the README name
//!   exists.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Component, Path, PathBuf};

/// The repository root: the parent of this crate's directory.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in a directory of the repository")
        .to_path_buf()
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// `path` relative to the repository root, with `/` separators.
fn display(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// Fails with every problem found, one per line, under a heading that
/// says which rule they break.
fn report(rule: &str, problems: &[String]) {
    if problems.is_empty() {
        return;
    }
    let mut message = format!("{rule}: {} problem(s)\n", problems.len());
    for p in problems {
        let _ = writeln!(message, "  {p}");
    }
    panic!("{message}");
}

/// Every file under `dir` whose name satisfies `keep`, in a stable order.
/// Skips build output (`target`, or any directory Cargo marked with a
/// `CACHEDIR.TAG`) and hidden directories (`.git`, ...).
fn files_under(dir: &Path, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                let build_output = name == "target" || path.join("CACHEDIR.TAG").exists();
                if !build_output && !name.starts_with('.') {
                    pending.push(path);
                }
            } else if kind.is_file() && keep(&path) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn has_extension(path: &Path, ext: &str) -> bool {
    path.extension().is_some_and(|e| e == ext)
}

// ---------------------------------------------------------------------------
// The workspace and its manifests
// ---------------------------------------------------------------------------

/// A workspace member: its package name and directory.
struct Member {
    name: String,
    dir: PathBuf,
}

/// The members listed in the root `Cargo.toml`'s `[workspace] members`.
fn workspace_members(root: &Path) -> Vec<Member> {
    let manifest = read(&root.join("Cargo.toml"));
    let start = manifest
        .find("members")
        .expect("the root Cargo.toml lists workspace members");
    let list = &manifest[start..];
    let list = &list[list.find('[').expect("members = [...]") + 1..];
    let list = &list[..list.find(']').expect("members = [...]")];
    list.split(',')
        .map(|m| strip_toml_comment(m).trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty())
        .map(|m| {
            let dir = root.join(&m);
            let name = package_name(&read(&dir.join("Cargo.toml")))
                .unwrap_or_else(|| panic!("{m}/Cargo.toml has no package name"));
            Member { name, dir }
        })
        .collect()
}

/// A TOML line without its `#` comment (a `#` inside a string is kept).
fn strip_toml_comment(line: &str) -> &str {
    toml_comment_start(line).map_or(line, |i| &line[..i])
}

fn toml_comment_start(line: &str) -> Option<usize> {
    let mut in_string = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match in_string {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' && q == '"' {
                    escaped = true;
                } else if c == q {
                    in_string = None;
                }
            }
            None if c == '"' || c == '\'' => in_string = Some(c),
            None if c == '#' => return Some(i),
            None => {}
        }
    }
    None
}

/// The `name` of a manifest's `[package]` table.
fn package_name(manifest: &str) -> Option<String> {
    let mut in_package = false;
    for line in manifest.lines() {
        let line = strip_toml_comment(line).trim();
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package {
            if let Some(value) = line.strip_prefix("name") {
                let value = value.trim_start();
                if let Some(value) = value.strip_prefix('=') {
                    return Some(value.trim().trim_matches('"').to_string());
                }
            }
        }
    }
    None
}

/// One dependency declared in a manifest.
struct Dependency {
    /// The package depended on (after any `package = "..."` rename).
    package: String,
    /// `dependencies`, `dev-dependencies` or `build-dependencies`.
    kind: &'static str,
    /// 1-based line of the declaration.
    line: usize,
}

const DEPENDENCY_KINDS: [&str; 3] = ["dev-dependencies", "build-dependencies", "dependencies"];

/// The dependencies a manifest declares, in every dependency table
/// (`[dependencies]`, `[dev-dependencies]`, `[build-dependencies]`, their
/// `[target.'cfg(..)'.*]` forms, and `[dependencies.NAME]` tables).
///
/// A line-based reader of the TOML the workspace writes, not a full TOML
/// parser: one key per line, inline tables on one line.
fn dependencies(manifest: &str) -> Vec<Dependency> {
    // The table being read: a dependency list, or one dependency's table.
    enum Table {
        Other,
        List(&'static str),
        One(usize),
    }
    let mut deps: Vec<Dependency> = Vec::new();
    let mut table = Table::Other;
    for (i, raw) in manifest.lines().enumerate() {
        let line = strip_toml_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            let header = header.trim_start_matches('[').trim_end_matches(']').trim();
            let header = match header.strip_prefix("target.") {
                Some(rest) => rest.rsplit_once("'.").map_or(rest, |(_, r)| r),
                None => header,
            };
            table = Table::Other;
            for kind in DEPENDENCY_KINDS {
                if header == kind {
                    table = Table::List(kind);
                    break;
                }
                if let Some(name) = header.strip_prefix(kind).and_then(|r| r.strip_prefix('.')) {
                    deps.push(Dependency {
                        package: name.trim_matches('"').to_string(),
                        kind,
                        line: i + 1,
                    });
                    table = Table::One(deps.len() - 1);
                    break;
                }
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        match table {
            Table::Other => {}
            Table::List(kind) => {
                let name = key.split('.').next().unwrap_or(key).trim_matches('"');
                let package = inline_package(value).unwrap_or_else(|| name.to_string());
                deps.push(Dependency {
                    package,
                    kind,
                    line: i + 1,
                });
            }
            Table::One(index) => {
                if key == "package" {
                    deps[index].package = value.trim().trim_matches('"').to_string();
                }
            }
        }
    }
    deps
}

/// The `package = "..."` of an inline dependency table, if it renames.
fn inline_package(value: &str) -> Option<String> {
    let at = value.find("package")?;
    let rest = value[at + "package".len()..]
        .trim_start()
        .strip_prefix('=')?;
    let rest = rest.trim_start().strip_prefix('"')?;
    Some(rest[..rest.find('"')?].to_string())
}

/// The crates of `ARCHITECTURE.md`'s code map, in its order: the
/// `### `name`` headings whose name is a workspace member.
fn architecture_order(root: &Path, members: &[Member]) -> (Vec<String>, Vec<String>) {
    let text = read(&root.join("ARCHITECTURE.md"));
    let mut order = Vec::new();
    let mut problems = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(heading) = line.strip_prefix("### ") else {
            continue;
        };
        let name = heading.trim().trim_matches('`');
        if members.iter().any(|m| m.name == name) {
            if order.iter().any(|o| o == name) {
                problems.push(format!(
                    "ARCHITECTURE.md:{}: `{name}` has a second heading",
                    i + 1
                ));
            }
            order.push(name.to_string());
        }
    }
    for m in members {
        if !order.contains(&m.name) {
            problems.push(format!(
                "ARCHITECTURE.md: workspace member `{}` has no `### `{}`` heading in the code map",
                m.name, m.name
            ));
        }
    }
    (order, problems)
}

/// Each crate depends only on crates above it in `ARCHITECTURE.md`.
///
/// The order is read from `ARCHITECTURE.md`'s `### `crate`` headings, so
/// the map and this test cannot drift apart. A crate's tests may use a
/// crate further down (its `tests/` run it with the backends linked) as a
/// dev-dependency, as long as that crate does not itself depend on the
/// crate under test: a dev-dependency cycle would build the crate under
/// test twice, with two incompatible copies of its types and two sets of
/// its static registrations.
#[test]
fn crate_dependencies_follow_architecture_order() {
    let root = repo_root();
    let members = workspace_members(&root);
    let (order, mut problems) = architecture_order(&root, &members);
    let rank: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let manifests: BTreeMap<&str, (PathBuf, Vec<Dependency>)> = members
        .iter()
        .map(|m| {
            let path = m.dir.join("Cargo.toml");
            let deps = dependencies(&read(&path));
            (m.name.as_str(), (path, deps))
        })
        .collect();
    for (&name, (manifest_path, deps)) in &manifests {
        let Some(&own) = rank.get(name) else {
            continue;
        };
        for dep in deps {
            let Some(&theirs) = rank.get(dep.package.as_str()) else {
                continue;
            };
            if theirs < own {
                continue;
            }
            let why = if dep.kind != "dev-dependencies" {
                "ARCHITECTURE.md lists it below"
            } else if depends_on(&manifests, &dep.package, name) {
                "it depends on the crate under test (a dev-dependency cycle)"
            } else {
                continue;
            };
            problems.push(format!(
                "{}:{}: `{name}` has `{}` in its {}, but {why}",
                display(&root, manifest_path),
                dep.line,
                dep.package,
                dep.kind,
            ));
        }
    }
    report(
        "crates must depend only on crates above them in ARCHITECTURE.md",
        &problems,
    );
}

/// Whether `from` depends on `to` through normal and build dependencies
/// of workspace crates, directly or not.
fn depends_on(
    manifests: &BTreeMap<&str, (PathBuf, Vec<Dependency>)>,
    from: &str,
    to: &str,
) -> bool {
    let mut seen = vec![from.to_string()];
    let mut next = vec![from.to_string()];
    while let Some(name) = next.pop() {
        let Some((_, deps)) = manifests.get(name.as_str()) else {
            continue;
        };
        for dep in deps.iter().filter(|d| d.kind != "dev-dependencies") {
            if dep.package == to {
                return true;
            }
            if !seen.contains(&dep.package) {
                seen.push(dep.package.clone());
                next.push(dep.package.clone());
            }
        }
    }
    false
}

#[test]
fn dev_dependency_cycles_are_found_through_normal_dependencies() {
    let manifest = |text: &str| (PathBuf::new(), dependencies(text));
    let manifests = BTreeMap::from([
        (
            "low",
            manifest("[dev-dependencies]\nhigh.workspace = true\n"),
        ),
        ("mid", manifest("[dependencies]\nlow.workspace = true\n")),
        ("high", manifest("[dependencies]\nmid.workspace = true\n")),
        (
            "backend",
            manifest("[dependencies]\nmid.workspace = true\n"),
        ),
        (
            "tool",
            manifest("[build-dependencies]\nlow.workspace = true\n"),
        ),
    ]);
    assert!(depends_on(&manifests, "high", "low"));
    assert!(depends_on(&manifests, "backend", "low"));
    assert!(depends_on(&manifests, "tool", "low"));
    assert!(!depends_on(&manifests, "backend", "high"));
    // Dev-dependencies are not followed: `low`'s tests use `high`, but
    // `low` itself does not depend on it.
    assert!(!depends_on(&manifests, "low", "high"));
}

#[test]
fn dependency_reader_sees_every_table() {
    let manifest = r#"
[package]
name = "x" # a comment
[dependencies]
a.workspace = true
b = { workspace = true, optional = true }
renamed = { package = "c", path = "../c" }
[dev-dependencies]
d = "1"
[target.'cfg(unix)'.build-dependencies]
e.workspace = true
[dependencies.f]
package = "g"
[features]
h = ["dep:b"]
"#;
    let deps: Vec<(String, &str)> = dependencies(manifest)
        .into_iter()
        .map(|d| (d.package, d.kind))
        .collect();
    let expected = [
        ("a", "dependencies"),
        ("b", "dependencies"),
        ("c", "dependencies"),
        ("d", "dev-dependencies"),
        ("e", "build-dependencies"),
        ("g", "dependencies"),
    ];
    let expected: Vec<(String, &str)> = expected.iter().map(|(p, k)| (p.to_string(), *k)).collect();
    assert_eq!(deps, expected);
    assert_eq!(package_name(manifest).as_deref(), Some("x"));
}

// ---------------------------------------------------------------------------
// Module docs
// ---------------------------------------------------------------------------

/// The Rust sources of every workspace member: `src/`, `tests/`,
/// `examples/`, `benches/` and a `build.rs`.
fn member_sources(members: &[Member]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for m in members {
        for sub in ["src", "tests", "examples", "benches"] {
            out.extend(files_under(&m.dir.join(sub), &|p| has_extension(p, "rs")));
        }
        let build = m.dir.join("build.rs");
        if build.is_file() {
            out.push(build);
        }
    }
    out
}

/// Each `.rs` file starts with `//!` module docs. A generated file starts
/// with the generator's `// @generated` line and has its `//!` docs on the
/// next line, as `aten-codegen` writes them.
#[test]
fn every_module_starts_with_docs() {
    let root = repo_root();
    let mut problems = Vec::new();
    for path in member_sources(&workspace_members(&root)) {
        let text = read(&path);
        let mut lines = text.lines();
        let first = lines.next().unwrap_or("");
        let (line_no, docs) = if first.starts_with("// @generated") {
            (2, lines.next().unwrap_or(""))
        } else {
            (1, first)
        };
        if !docs.starts_with("//!") {
            problems.push(format!(
                "{}:{line_no}: the file does not start with `//!` module docs{}",
                display(&root, &path),
                if line_no == 2 {
                    " after its @generated line (change the generator in aten-codegen, then run `cargo xtask codegen`)"
                } else {
                    ""
                }
            ));
        }
    }
    report("every module starts with `//!` docs", &problems);
}

// ---------------------------------------------------------------------------
// Issue numbers
// ---------------------------------------------------------------------------

/// The comment text of Rust source, line by line: `//` comments (doc
/// comments included) and `/* */` blocks, with string and char literals
/// skipped, so an error message that numbers PyTorch's arguments is not
/// taken for a comment.
fn rust_comments(source: &str) -> Vec<(usize, String)> {
    #[derive(Clone, Copy)]
    enum State {
        Code,
        Str { raw_hashes: Option<usize> },
        Block { depth: usize },
    }
    let mut out = Vec::new();
    let mut state = State::Code;
    for (line_no, line) in source.lines().enumerate() {
        let chars: Vec<char> = line.chars().collect();
        let mut comment = String::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let next = chars.get(i + 1).copied();
            match state {
                State::Code => {
                    if c == '/' && next == Some('/') {
                        comment.extend(&chars[i..]);
                        break;
                    } else if c == '/' && next == Some('*') {
                        state = State::Block { depth: 1 };
                        i += 2;
                        continue;
                    } else if c == '"' {
                        state = State::Str { raw_hashes: None };
                    } else if c == 'r'
                        && (i == 0 || !is_ident_char(chars[i - 1]) || chars[i - 1] == 'b')
                    {
                        let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
                        if chars.get(i + 1 + hashes) == Some(&'"') {
                            state = State::Str {
                                raw_hashes: Some(hashes),
                            };
                            i += hashes + 2;
                            continue;
                        }
                    } else if c == '\'' {
                        // A char literal ('x', '\n', '\u{..}'), else a lifetime.
                        if next == Some('\\') {
                            let close = chars[i + 2..].iter().position(|&q| q == '\'');
                            i += close.map_or(chars.len(), |p| p + 3);
                            continue;
                        } else if chars.get(i + 2) == Some(&'\'') {
                            i += 3;
                            continue;
                        }
                    }
                }
                State::Str { raw_hashes: None } => {
                    if c == '\\' {
                        i += 2;
                        continue;
                    } else if c == '"' {
                        state = State::Code;
                    }
                }
                State::Str {
                    raw_hashes: Some(n),
                } => {
                    if c == '"' && chars[i + 1..].iter().take_while(|&&h| h == '#').count() >= n {
                        state = State::Code;
                        i += n + 1;
                        continue;
                    }
                }
                State::Block { depth } => {
                    if c == '*' && next == Some('/') {
                        state = if depth == 1 {
                            State::Code
                        } else {
                            State::Block { depth: depth - 1 }
                        };
                        i += 2;
                        continue;
                    } else if c == '/' && next == Some('*') {
                        state = State::Block { depth: depth + 1 };
                        i += 2;
                        continue;
                    }
                    comment.push(c);
                }
            }
            i += 1;
        }
        if !comment.is_empty() {
            out.push((line_no + 1, comment));
        }
    }
    out
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// A reference to an issue in `text`: a `#` and digits standing alone
/// (after a space, a bracket or the start of the text), or the word
/// "issue" followed by a number. Attributes (`#[..]`), hex
/// colours and anchors with letters do not match.
fn issue_reference(text: &str) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    let digits_from = |start: usize| -> usize {
        chars[start..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    for i in 0..chars.len() {
        if chars[i] == '#' {
            let before_ok = i == 0 || matches!(chars[i - 1], ' ' | '\t' | '(' | '[' | ',' | '/');
            let n = digits_from(i + 1);
            let after_ok = chars.get(i + 1 + n).is_none_or(|&c| !is_ident_char(c));
            if before_ok && n > 0 && after_ok {
                return Some(chars[i..i + 1 + n].iter().collect());
            }
        }
        let word_start = i == 0 || !is_ident_char(chars[i - 1]);
        let word: String = chars[i..].iter().take(5).collect();
        if word_start && word.eq_ignore_ascii_case("issue") {
            let mut j = i + 5;
            if chars.get(j).is_some_and(|c| *c == 's' || *c == 'S') {
                j += 1;
            }
            let spaces = chars[j..].iter().take_while(|c| c.is_whitespace()).count();
            if spaces == 0 {
                continue;
            }
            j += spaces;
            if chars.get(j) == Some(&'#') {
                j += 1;
            }
            let n = digits_from(j);
            if n > 0 && chars.get(j + n).is_none_or(|&c| !is_ident_char(c)) {
                return Some(chars[i..j + n].iter().collect());
            }
        }
    }
    None
}

/// A pattern with its number filled in at run time (`{n}` becomes `n`), so
/// that this file's own text names no issue.
fn numbered(pattern: &str, n: u32) -> String {
    pattern.replace("{n}", &n.to_string())
}

#[test]
fn issue_reference_patterns() {
    for hit in [
        "see (#{n})",
        "issue {n}",
        "Issues #{n} and",
        "#{n} at the start",
        "fixed in [#{n}]",
    ] {
        let hit = numbered(hit, 7);
        assert!(issue_reference(&hit).is_some(), "{hit}");
    }
    for miss in [
        "#[derive(Debug)]",
        "#![allow(x)]",
        "colour #ff00aa",
        "{:#x}",
        "r#\"raw\"#",
        "tissue {n}",
        "issue tracker",
        "#{n}a",
    ] {
        let miss = numbered(miss, 1);
        assert_eq!(issue_reference(&miss), None, "{miss}");
    }
    let source = numbered(
        "let s = \"argument #{n} 'x'\"; // comment (#{n})\nlet c = '\"'; // ok\n/* block\n issue {n} */\nlet r = r#\"// not (#{n})\"#;\n",
        2,
    );
    let comments = rust_comments(&source);
    let found: Vec<(usize, Option<String>)> = comments
        .iter()
        .map(|(l, t)| (*l, issue_reference(t)))
        .collect();
    assert_eq!(
        found,
        vec![
            (1, Some(numbered("#{n}", 2))),
            (2, None),
            (3, None),
            (4, Some(numbered("issue {n}", 2))),
        ]
    );
}

/// Comments, docs and manifests say what the code does; which issue asked
/// for it belongs in the commit history. Checked: comments in `.rs` files
/// (string literals hold PyTorch's messages, which number arguments),
/// `#` comments in `Cargo.toml`, YAML, Python and shell files (outside
/// the PyTorch data under `conformance/data`), and Markdown files.
#[test]
fn no_issue_numbers() {
    let root = repo_root();
    let mut problems = Vec::new();
    // PyTorch's own files under conformance/data are data, not ours.
    let data = root.join("conformance").join("data");
    let files = files_under(&root, &|p| {
        let hash_commented = ["yaml", "py", "sh"].iter().any(|e| has_extension(p, e));
        has_extension(p, "rs")
            || has_extension(p, "md")
            || p.ends_with("Cargo.toml")
            || (hash_commented && !p.starts_with(&data))
    });
    for path in files {
        let text = read(&path);
        let lines: Vec<(usize, String)> = if has_extension(&path, "rs") {
            rust_comments(&text)
        } else if has_extension(&path, "md") {
            text.lines()
                .enumerate()
                .map(|(i, l)| (i + 1, l.to_string()))
                .collect()
        } else {
            text.lines()
                .enumerate()
                .filter_map(|(i, l)| toml_comment_start(l).map(|at| (i + 1, l[at..].to_string())))
                .collect()
        };
        for (line_no, line) in lines {
            if let Some(found) = issue_reference(&line) {
                problems.push(format!(
                    "{}:{line_no}: `{found}` refers to an issue; say what the code does instead",
                    display(&root, &path)
                ));
            }
        }
    }
    report("no issue numbers in code or docs", &problems);
}

// ---------------------------------------------------------------------------
// Links
// ---------------------------------------------------------------------------

/// Link targets of Markdown `[text](target)` links and `[label]: target`
/// definitions on a line.
fn markdown_links(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let end = after.find(')').unwrap_or(after.len());
        out.push(after[..end].trim().to_string());
        rest = &after[end..];
    }
    let trimmed = line.trim_start_matches(['/', '!', ' ']);
    if trimmed.starts_with('[') {
        if let Some((label, target)) = trimmed.split_once("]:") {
            if !label.contains(']') {
                out.push(target.trim().to_string());
            }
        }
    }
    out
}

/// Where a relative link from `file` points, if it names a file path.
/// URLs, in-page anchors and rustdoc's intra-doc paths are not file links.
fn link_file(root: &Path, file: &Path, target: &str) -> Result<Option<PathBuf>, String> {
    let target = target.split_whitespace().next().unwrap_or("");
    let target = target.split('#').next().unwrap_or("");
    if target.is_empty()
        || target.contains("://")
        || target.starts_with("mailto:")
        || target.contains("::")
    {
        return Ok(None);
    }
    if has_extension(file, "rs") && !target.contains('/') && !target.ends_with(".md") {
        return Ok(None); // an intra-doc link such as `[x](Result)`
    }
    if target.starts_with('/') {
        return Err(format!("`{target}` is an absolute path"));
    }
    let mut resolved = file.parent().unwrap_or(root).to_path_buf();
    for part in Path::new(target).components() {
        match part {
            Component::ParentDir => {
                resolved.pop();
            }
            Component::Normal(p) => resolved.push(p),
            _ => {}
        }
    }
    if !resolved.starts_with(root) {
        return Err(format!("`{target}` leaves the repository"));
    }
    Ok(Some(resolved))
}

/// Docs name only what a reader of the repository can open: no absolute
/// paths of the machine the code was written on, no paths into the
/// checkout's siblings, and relative Markdown links (in `.md` files and in
/// `.rs` doc comments) that resolve to files of the repository.
#[test]
fn docs_stay_inside_repository() {
    let root = repo_root();
    // Built from pieces so that this file does not match itself.
    let forbidden = [format!("..{}shared", '/'), format!("{}work{}", '/', '/')];
    let mut problems = Vec::new();
    let files = files_under(&root, &|p| has_extension(p, "rs") || has_extension(p, "md"));
    for path in files {
        let text = read(&path);
        let is_md = has_extension(&path, "md");
        for (i, line) in text.lines().enumerate() {
            let at = format!("{}:{}", display(&root, &path), i + 1);
            for f in &forbidden {
                if line.contains(f.as_str()) {
                    problems.push(format!(
                        "{at}: `{f}` points outside the repository; link to a file in it, or describe the thing"
                    ));
                }
            }
            let trimmed = line.trim_start();
            let is_doc_comment = trimmed.starts_with("//!") || trimmed.starts_with("///");
            if !is_md && !is_doc_comment {
                continue;
            }
            for target in markdown_links(line) {
                match link_file(&root, &path, &target) {
                    Ok(None) => {}
                    Ok(Some(file)) if file.exists() => {}
                    Ok(Some(_)) => problems.push(format!(
                        "{at}: link `{target}` names no file of the repository"
                    )),
                    Err(why) => problems.push(format!("{at}: link {why}")),
                }
            }
        }
    }
    report("docs stay inside the repository", &problems);
}

/// Every repository path `ARCHITECTURE.md` and `README.md` name in
/// backticks (`aten-core/src/parallel/mod.rs`, a crate's `src/` or
/// `tests/` file or folder) exists, so the map cannot point at code that
/// moved or went.
#[test]
fn map_paths_exist() {
    let root = repo_root();
    let members = workspace_members(&root);
    let mut problems = Vec::new();
    for doc in ["ARCHITECTURE.md", "README.md"] {
        let text = read(&root.join(doc));
        // Text between backticks: the odd pieces of a split at '`'.
        for (line_no, line) in text.lines().enumerate() {
            for quoted in line.split('`').skip(1).step_by(2) {
                let Some((first, _)) = quoted.split_once('/') else {
                    continue;
                };
                let names_a_crate = members.iter().any(|m| m.name == first);
                let looks_like_path = !quoted.contains(' ')
                    && !quoted.contains('*')
                    && !quoted.contains("::")
                    && (quoted.ends_with(".rs") || quoted.ends_with('/'));
                if names_a_crate && looks_like_path && !root.join(quoted).exists() {
                    problems.push(format!("{doc}:{}: `{quoted}` does not exist", line_no + 1));
                }
            }
        }
    }
    report("paths named in the map must exist", &problems);
}
