//! The crate's shape, checked: no import circle among its files, no file past its size limit, one launch site.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Most lines of a Rust file in `src/`.
const MAX_RUST_LINES: usize = 600;

/// Most lines of a CUDA file in `kernels/`.
const MAX_CUDA_LINES: usize = 400;

/// The file that holds the one kernel launch (and so the only raw kernel parameters).
const LAUNCH_FILE: &str = "runtime/launch.rs";

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file below `dir` whose name ends in one of `endings`, recursively.
fn files(dir: &Path, endings: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if endings.iter().any(|e| path.to_string_lossy().ends_with(e)) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Every Rust file below `src` with its path relative to `src`, `/`-separated on every platform.
fn rust_sources(src: &Path) -> Vec<(String, PathBuf)> {
    files(src, &[".rs"])
        .into_iter()
        .map(|path| {
            let relative = path
                .strip_prefix(src)
                .expect("below src")
                .to_string_lossy()
                .replace('\\', "/");
            (relative, path)
        })
        .collect()
}

/// The module path of a source file (`merge/mod.rs` -> `merge`, `merge/tuning.rs` ->
/// `merge::tuning`, `lib.rs` -> ``).
fn module_of(relative: &str) -> String {
    let trimmed = relative.trim_end_matches(".rs");
    if trimmed == "lib" {
        return String::new();
    }
    let trimmed = trimmed.strip_suffix("/mod").unwrap_or(trimmed);
    trimmed.replace('/', "::")
}

/// The modules a file names through `crate::a::b` or `super::` paths, resolved to the longest
/// module of `known` that the path starts with.
fn imports(text: &str, module: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let code: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    // `super` is the parent of the file's module (a mod.rs file's module is its folder).
    let own_folder = module
        .rsplit_once("::")
        .map_or(String::new(), |(parent, _)| parent.to_owned());
    let mut resolve = |path: String| {
        let mut best = String::new();
        for candidate in known {
            let starts = path == *candidate || path.starts_with(&format!("{candidate}::"));
            if starts && candidate.len() > best.len() {
                best = candidate.clone();
            }
        }
        if !best.is_empty() && best != module {
            out.insert(best);
        }
    };
    for (prefix, base) in [("crate::", String::new()), ("super::", own_folder)] {
        let mut rest = code.as_str();
        while let Some(at) = rest.find(prefix) {
            let tail = &rest[at + prefix.len()..];
            let path: String = tail
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let path = path.trim_end_matches(':').to_owned();
            let full = if base.is_empty() {
                path
            } else {
                format!("{base}::{path}")
            };
            resolve(full);
            rest = tail;
        }
    }
    out
}

#[test]
fn no_import_circle_among_the_files_of_the_crate() {
    let src = manifest_dir().join("src");
    let mut modules = BTreeMap::new();
    for (relative, path) in rust_sources(&src) {
        modules.insert(module_of(&relative), path);
    }
    let known: BTreeSet<String> = modules.keys().filter(|m| !m.is_empty()).cloned().collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, path) in &modules {
        if module.is_empty() {
            continue; // lib.rs only declares and re-exports
        }
        let text = fs::read_to_string(path).expect("read");
        edges.insert(module.clone(), imports(&text, module, &known));
    }
    // Depth-first search for a back edge.
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_owned(), 1);
        stack.push(node.to_owned());
        for next in edges.get(node).into_iter().flatten() {
            match state.get(next.as_str()).copied().unwrap_or(0) {
                1 => {
                    let from = stack.iter().position(|m| m == next).unwrap_or(0);
                    let mut circle = stack[from..].to_vec();
                    circle.push(next.clone());
                    return Some(circle);
                }
                0 => {
                    if let Some(circle) = visit(next, edges, state, stack) {
                        return Some(circle);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(node.to_owned(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for module in edges.keys() {
        if state.get(module.as_str()).copied().unwrap_or(0) == 0 {
            let mut stack = Vec::new();
            if let Some(circle) = visit(module, &edges, &mut state, &mut stack) {
                panic!("import circle: {}", circle.join(" -> "));
            }
        }
    }
    // The runtime sits under every primitive: it names none of them.
    for (module, targets) in &edges {
        if module.starts_with("runtime") {
            for target in targets {
                assert!(
                    target.starts_with("runtime")
                        || ["error", "key", "compare"].contains(&target.as_str()),
                    "{module} imports {target}: the runtime must not name a primitive"
                );
            }
        }
    }
}

#[test]
fn no_file_is_past_its_size_limit() {
    let mut too_long = Vec::new();
    let limits = [
        (manifest_dir().join("src"), &[".rs"][..], MAX_RUST_LINES),
        (manifest_dir().join("kernels"), &[".cu"][..], MAX_CUDA_LINES),
    ];
    for (dir, endings, limit) in limits {
        for path in files(&dir, endings) {
            let lines = fs::read_to_string(&path).expect("read").lines().count();
            if lines > limit {
                too_long.push(format!(
                    "{} ({lines} lines, at most {limit})",
                    path.display()
                ));
            }
        }
    }
    assert!(too_long.is_empty(), "files too long: {too_long:#?}");
}

#[test]
fn kernels_are_launched_only_through_the_typed_launch() {
    let src = manifest_dir().join("src");
    // What a raw launch would name: a parameter pointer array, a driver or cudarc launch
    // (spelled in pieces, so that a grep of the crate for them finds this test none).
    let raw_launch = [
        concat!("kernel", "_param("),
        concat!("[*mut ", "c_void"),
        "launch_raw",
        "launch_builder",
        "cuLaunchKernel",
    ];
    let mut raw = Vec::new();
    for (relative, path) in rust_sources(&src) {
        if relative == LAUNCH_FILE {
            continue;
        }
        let text = fs::read_to_string(&path).expect("read");
        raw.extend(
            text.lines()
                .enumerate()
                .filter(|(_, line)| raw_launch.iter().any(|needle| line.contains(needle)))
                .map(|(number, line)| format!("{relative}:{}: {}", number + 1, line.trim())),
        );
    }
    assert!(
        raw.is_empty(),
        "raw kernel launches outside {LAUNCH_FILE}: {raw:#?}"
    );
}
