//! The source tree's layers import downward only.
//!
//! Each top-level module of `src/` has a rank (see `docs/architecture.md`);
//! its non-test code may name (`crate::module`) only modules of a lower
//! rank, so no two top-level modules import each other, directly or through
//! others. Test code (after a `#[cfg(test)]`, and the `test_util` files)
//! may build its inputs with any front end.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Top-level modules from the bottom up: each may import those before it.
const LAYERS: &[&str] = &[
    "error",
    "memory",
    "config",
    "expr",
    "kernels",
    "functions",
    "physical_expr",
    "io",
    "plan",
    "optimizer",
    "physical",
    "gpu",
    "exec",
    "profile",
    "frame",
    "sql",
    "interop",
    "queries",
    "datagen",
];

/// The layer of a name at the crate root: a module, or one of `lib.rs`'s
/// re-exports (which hide the module they come from).
fn layer_of(name: &str) -> usize {
    let module = match name {
        "prelude" | "LazyFrame" | "DataFrame" => "frame",
        "Result" | "SlothError" => "error",
        "SessionConfig" => "config",
        other => other,
    };
    LAYERS
        .iter()
        .position(|l| *l == module)
        .unwrap_or_else(|| panic!("crate::{name} has no layer in tests/layers.rs"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules that `source`'s non-test code names.
fn imports(source: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in source.lines() {
        let line = line.trim_start();
        if line.starts_with("#[cfg(test)]") {
            break;
        }
        if line.starts_with("//") {
            continue;
        }
        for (at, _) in line.match_indices("crate::") {
            let rest = &line[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            // `use crate::{a, b}` would hide its modules from this scan.
            assert!(!rest.starts_with('{'), "name one module per path: {line}");
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

#[test]
fn top_level_modules_import_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut upward = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap();
        let first = relative.components().next().unwrap();
        let module = first.as_os_str().to_str().unwrap().trim_end_matches(".rs");
        if module == "lib" || module == "bin" || file.ends_with("test_util.rs") {
            continue;
        }
        let own = layer_of(module);
        for name in imports(&fs::read_to_string(&file).unwrap()) {
            if layer_of(&name) > own {
                upward.push(format!("{} imports crate::{name}", relative.display()));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports that point up a layer:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_import_scanner_sees_names_and_skips_comments_and_tests() {
    let source = "use crate::plan::LogicalPlan;\n// crate::frame in a comment\n\
                  fn f() { crate::io::read(); }\n#[cfg(test)]\nmod tests { use crate::sql; }\n";
    let expected: BTreeSet<String> = ["io", "plan"].iter().map(|s| s.to_string()).collect();
    assert_eq!(imports(source), expected);
}
