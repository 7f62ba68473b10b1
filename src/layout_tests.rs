//! The layout, checked from the source: each room of `src/roll` imports
//! only what its header allows (`src/roll/mod.rs` draws the map), and the
//! files of `src/roll` and `src/cli` never import each other in a circle.
//!
//! "Imports" are what a file names by path: its `use` declarations and the
//! `crate::…` and `super::…` paths in its code, resolved to the file that
//! defines the module named. Test code (test files, and a file's trailing
//! `#[cfg(test)]` module) is left out: a test may reach across rooms. A
//! module's own children importing it (a folder's `mod.rs` re-exports, its
//! files use what it defines) are one room, not a circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path, `crate` first.
type ModulePath = Vec<String>;

/// One source file of the crate, as its imports go.
struct Source {
    /// Relative to the crate's root (`src/roll/engine/runner.rs`).
    file: String,
    module: ModulePath,
    /// Every path it names, made absolute (`crate::…`), or left as it is
    /// when it names another crate (`tokio::…`).
    paths: Vec<ModulePath>,
    /// Its lines, its trailing test module left out.
    lines: usize,
}

fn crate_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `src/`, but `main.rs`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

fn module_of(relative: &Path) -> ModulePath {
    let mut parts: Vec<String> = relative
        .iter()
        .skip(1) // src
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    std::iter::once("crate".to_string()).chain(parts).collect()
}

/// Whether the whole file is test code.
fn is_test_file(relative: &str) -> bool {
    let name = relative.rsplit('/').next().unwrap_or_default();
    name == "tests.rs"
        || name.ends_with("_tests.rs")
        || name == "test_apps.rs"
        || name == "proptests.rs"
        || relative.starts_with("src/roll/tests/")
}

/// The file up to its trailing test module (`#[cfg(test)] mod … {`).
fn before_tests(text: &str) -> &str {
    let mut offset = 0;
    let mut lines = text.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod ") && next.contains('{'))
        {
            return &text[..offset];
        }
        offset += line.len();
    }
    text
}

/// The file's code without its trailing test module and its comments.
fn production_code(text: &str) -> String {
    before_tests(text)
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .map(without_trailing_comment)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `line` without a `// …` comment that follows code (one outside a
/// string: an even number of quotes before it).
fn without_trailing_comment(line: &str) -> &str {
    let mut from = 0;
    while let Some(at) = line[from..].find("//") {
        let at = from + at;
        if line[..at].matches('"').count().is_multiple_of(2) {
            return &line[..at];
        }
        from = at + 2;
    }
    line
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths a use tree names (`a::{b, c::{d as e}}` is `a::b`, `a::c::d`).
fn expand_use(tree: &str) -> Vec<ModulePath> {
    fn parse(tree: &str, prefix: &[String], out: &mut Vec<ModulePath>) {
        let tree = tree.trim();
        if let Some(open) = tree.find('{') {
            let head: Vec<String> = split_path(&tree[..open]);
            let close = tree.rfind('}').expect("a use group closes");
            let inner = &tree[open + 1..close];
            let mut path = prefix.to_vec();
            path.extend(head);
            for part in split_top_level(inner) {
                if part.trim().is_empty() {
                    continue;
                }
                parse(part, &path, out);
            }
        } else {
            let name = tree.split(" as ").next().unwrap_or_default();
            let mut path = prefix.to_vec();
            path.extend(split_path(name));
            if path.last().is_some_and(|s| s == "self" || s == "*") {
                path.pop();
            }
            if !path.is_empty() {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    parse(tree, &[], &mut out);
    out
}

fn split_path(text: &str) -> Vec<String> {
    text.split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// `a, b::{c, d}, e` split at its top-level commas.
fn split_top_level(text: &str) -> Vec<&str> {
    let (mut depth, mut start, mut parts) = (0, 0, Vec::new());
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// The `use` declarations of `code`, and its inline `crate::`/`super::`
/// paths, as written.
fn named_paths(code: &str) -> Vec<ModulePath> {
    let mut out = Vec::new();
    // A use declaration begins a line: `use …;`, `pub use …;`,
    // `pub(crate) use …;`, and may run over several lines.
    let mut offset = 0;
    for line in code.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let visibility = if trimmed.starts_with("pub(") {
            trimmed.find(") ").map_or(0, |i| i + 2)
        } else if trimmed.starts_with("pub ") {
            4
        } else {
            0
        };
        if trimmed[visibility..].starts_with("use ") {
            let start = offset + (line.len() - trimmed.len()) + visibility + 4;
            if let Some(end) = code[start..].find(';') {
                out.extend(expand_use(&code[start..start + end]));
            }
        }
        offset += line.len();
    }
    for anchor in ["crate::", "super::"] {
        let mut rest = code;
        while let Some(at) = rest.find(anchor) {
            let before = rest[..at].chars().last();
            let from = &rest[at..];
            rest = &rest[at + anchor.len()..];
            if before.is_some_and(|c| is_ident(c) || c == ':') {
                continue;
            }
            let end = from
                .find(|c: char| !(is_ident(c) || c == ':'))
                .unwrap_or(from.len());
            let path = split_path(from[..end].trim_end_matches(':'));
            // A bare `super::{…}` is a use group, read above.
            if path.len() > 1 {
                out.push(path);
            }
        }
    }
    out
}

/// `path` as named in `module`, made absolute; `None` for another crate.
fn absolute(
    path: &ModulePath,
    module: &ModulePath,
    modules: &BTreeSet<ModulePath>,
) -> Option<ModulePath> {
    let mut segments = path.iter().peekable();
    let mut base: ModulePath = match segments.peek().map(|s| s.as_str()) {
        Some("crate") => {
            segments.next();
            vec!["crate".to_string()]
        }
        Some("self") => {
            segments.next();
            module.clone()
        }
        Some("super") => {
            let mut base = module.clone();
            while segments.peek().is_some_and(|s| *s == "super") {
                segments.next();
                base.pop();
            }
            base
        }
        Some(first) => {
            let mut child = module.clone();
            child.push(first.to_string());
            if !modules.contains(&child) {
                return None;
            }
            module.clone()
        }
        None => return None,
    };
    base.extend(segments.cloned());
    Some(base)
}

/// The longest prefix of `path` that is a module of the crate.
fn defining_module(path: &ModulePath, modules: &BTreeSet<ModulePath>) -> Option<ModulePath> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|prefix| modules.contains(prefix))
}

fn sources() -> (Vec<Source>, BTreeMap<ModulePath, String>) {
    let root = crate_root();
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut file_of = BTreeMap::new();
    let mut read = Vec::new();
    for path in files {
        let relative = path.strip_prefix(&root).expect("under the crate");
        let name = relative.to_string_lossy().replace('\\', "/");
        if name == "src/main.rs" {
            continue;
        }
        let module = module_of(relative);
        file_of.insert(module.clone(), name.clone());
        read.push((
            name,
            module,
            std::fs::read_to_string(&path).expect("a source"),
        ));
    }
    let modules: BTreeSet<ModulePath> = file_of.keys().cloned().collect();
    let sources = read
        .into_iter()
        .filter(|(name, _, _)| !is_test_file(name))
        .map(|(file, module, text)| {
            let code = production_code(&text);
            let paths: BTreeSet<ModulePath> = named_paths(&code)
                .iter()
                .filter_map(|p| match absolute(p, &module, &modules) {
                    Some(abs) => Some(abs),
                    None => (!p.is_empty()).then(|| p.clone()),
                })
                .collect();
            Source {
                file,
                module,
                paths: paths.into_iter().collect(),
                lines: before_tests(&text).lines().count(),
            }
        })
        .collect();
    (sources, file_of)
}

/// The room of `src/roll` a module is in (`ports`, `record`, `decide`,
/// `engine`), or the entrance or file it is (`run`, `error`, …).
fn room(module: &ModulePath) -> Option<&str> {
    (module.len() > 2 && module[0] == "crate" && module[1] == "roll").then(|| module[2].as_str())
}

fn starts_with(path: &ModulePath, prefix: &[&str]) -> bool {
    path.len() >= prefix.len() && path.iter().zip(prefix).all(|(a, b)| a == b)
}

#[test]
fn each_room_of_the_roll_imports_only_what_its_header_allows() {
    let (sources, _) = sources();
    // What each room may import of the roll (itself included).
    let allowed: BTreeMap<&str, &[&str]> = BTreeMap::from([
        ("ports", &["ports"][..]),
        ("record", &["ports", "record"][..]),
        ("decide", &["ports", "record", "decide"][..]),
        (
            "engine",
            &["ports", "record", "decide", "engine", "error"][..],
        ),
        ("error", &["ports", "record"][..]),
    ]);
    let port_traits = [
        "Ports",
        "AutoScaling",
        "MesosMaster",
        "Marathon",
        "Pager",
        "CheckpointObject",
    ];
    let steps: ModulePath = split_path("crate::roll::engine::steps");
    let mut wrong = Vec::new();
    let mut checked = 0;
    for source in &sources {
        let Some(from) = room(&source.module) else {
            continue;
        };
        let Some(may) = allowed.get(from) else {
            continue;
        };
        checked += 1;
        for path in &source.paths {
            let named = path.join("::");
            if let Some(to) = room(path).filter(|to| !may.contains(to)) {
                wrong.push(format!("{} ({from}) imports {named} ({to})", source.file));
            }
            if source.module.starts_with(&steps)
                && starts_with(path, &["crate", "roll", "engine", "runner"])
            {
                wrong.push(format!(
                    "{} (a step) imports the runner: {named}",
                    source.file
                ));
            }
            if from == "decide" {
                let trait_named = starts_with(path, &["crate", "roll", "ports"])
                    && path
                        .last()
                        .is_some_and(|s| port_traits.contains(&s.as_str()));
                let store = starts_with(path, &["crate", "roll", "record", "checkpoint"])
                    && path.iter().any(|s| s == "store" || s == "CheckpointStore");
                if trait_named || store || path[0] == "tokio" {
                    wrong.push(format!(
                        "{} (decide: no port trait, store or tokio) imports {named}",
                        source.file
                    ));
                }
            }
        }
    }
    assert!(checked > 30, "only {checked} files of src/roll were read");
    assert!(
        wrong.is_empty(),
        "imports against the map:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_files_of_the_roll_or_the_cli_import_each_other_in_a_circle() {
    let (sources, file_of) = sources();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let modules: BTreeSet<ModulePath> = file_of.keys().cloned().collect();
    for source in &sources {
        if !(starts_with(&source.module, &["crate", "roll"])
            || starts_with(&source.module, &["crate", "cli"]))
        {
            continue;
        }
        let targets = edges.entry(source.file.clone()).or_default();
        for path in &source.paths {
            let Some(target) = defining_module(path, &modules) else {
                continue;
            };
            // Itself, or a module it is inside (one room with its root).
            if starts_with(
                &source.module,
                &target.iter().map(String::as_str).collect::<Vec<_>>(),
            ) {
                continue;
            }
            targets.insert(file_of[&target].clone());
        }
    }
    let mut circles = Vec::new();
    for start in edges.keys() {
        // A path back to `start`, searched depth first.
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((file, trail)) = stack.pop() {
            for next in edges.get(&file).into_iter().flatten() {
                if next == start {
                    let mut circle = trail.clone();
                    circle.push(start.clone());
                    circles.push(circle.join(" -> "));
                } else if next > start && seen.insert(next.clone()) {
                    let mut trail = trail.clone();
                    trail.push(next.clone());
                    stack.push((next.clone(), trail));
                }
            }
        }
    }
    assert!(edges.len() > 40, "only {} files were read", edges.len());
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

#[test]
fn no_file_of_the_roll_or_the_cli_is_over_600_lines_outside_its_tests() {
    let (sources, _) = sources();
    let long: Vec<String> = sources
        .iter()
        .filter(|s| s.file.starts_with("src/roll/") || s.file.starts_with("src/cli/"))
        .filter(|s| s.lines > 600)
        .map(|s| format!("{}: {} lines", s.file, s.lines))
        .collect();
    assert!(
        long.is_empty(),
        "split these by what they hold:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_layout_reader_resolves_groups_super_and_children() {
    let modules: BTreeSet<ModulePath> = [
        "crate::roll::engine",
        "crate::roll::engine::steps",
        "crate::roll::engine::steps::prepare",
        "crate::roll::record::env",
        "crate::roll::record::env::value",
    ]
    .iter()
    .map(|m| split_path(m))
    .collect();
    let code = "use super::{StepAction, StepContext as Cx};\nuse value::Raw;\n\
                use tokio::sync::watch;\n// use crate::roll::decide;\n\
                let x = crate::roll::engine::runner::Runner::new(); // super::gone\n\
                #[cfg(test)]\nmod tests {\n    use crate::roll::decide::health;\n}\n";
    let named = named_paths(&production_code(code));
    let prepare = split_path("crate::roll::engine::steps::prepare");
    let resolved: BTreeSet<String> = named
        .iter()
        .filter_map(|p| absolute(p, &prepare, &modules))
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        resolved,
        BTreeSet::from([
            "crate::roll::engine::steps::StepAction".to_string(),
            "crate::roll::engine::steps::StepContext".to_string(),
            "crate::roll::engine::runner::Runner::new".to_string(),
        ])
    );
    let env = split_path("crate::roll::record::env");
    assert_eq!(
        absolute(&split_path("value::Raw"), &env, &modules),
        Some(split_path("crate::roll::record::env::value::Raw"))
    );
    assert_eq!(absolute(&split_path("tokio::sync"), &env, &modules), None);
}
