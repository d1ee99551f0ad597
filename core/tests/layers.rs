//! The core's layering, checked: every `crate::…` path in `core/src` (a
//! `use`, or a path written inline) is an edge from its module to the module
//! it names, and those edges must not close a circle. A module is a file of
//! `src/`, or a folder of them (`src/holder/` is `holder`); names that
//! `lib.rs` re-exports count as the module that defines them. Test modules
//! (`#[cfg(test)] mod tests`, always at a file's end) and comments do not count.
//!
//! `cargo test -p zoolock --test layers -- --nocapture` prints the graph, lowest layer first.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a file belongs to: its first segment below `src/`, without `.rs`.
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next().unwrap().as_os_str().to_str().unwrap();
    first.trim_end_matches(".rs").to_owned()
}

/// The code of a file without its test module and comments.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines().map(|line| line.split("//").next().unwrap()).collect::<Vec<_>>().join("\n")
}

/// The identifiers that follow each `crate::` in `code`: the first path segment.
fn crate_paths(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        // `$crate::` and a longer identifier ending in `crate` are not ours.
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap()];
            found.extend(group.split(',').map(|p| p.trim().split("::").next().unwrap().to_owned()));
            continue;
        }
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        found.push(name);
    }
    found.retain(|n| !n.is_empty());
    found
}

/// The names `lib.rs` re-exports, each with the module it comes from.
fn re_exports(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for statement in code(lib).split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else { continue };
        let Some((module, rest)) = path.split_once("::") else { continue };
        let rest = rest.trim();
        let items: Vec<&str> = match rest.strip_prefix('{') {
            Some(group) => group.trim_end_matches('}').split(',').collect(),
            None => vec![rest],
        };
        for item in items {
            let item = item.trim();
            let name = item.rsplit(" as ").next().unwrap().rsplit("::").next().unwrap().trim();
            if !name.is_empty() {
                names.insert(name.to_owned(), module.to_owned());
            }
        }
    }
    names
}

/// The module graph of `core/src`: module -> the modules it names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let modules: BTreeSet<String> =
        files.iter().map(|f| module_of(&src, f)).filter(|m| m != "lib" && m != "main").collect();
    let exported = re_exports(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut graph: BTreeMap<String, BTreeSet<String>> = modules.iter().map(|m| (m.clone(), BTreeSet::new())).collect();
    for file in &files {
        let from = module_of(&src, file);
        if from == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for name in crate_paths(&code(&text)) {
            let to = if modules.contains(&name) {
                name
            } else {
                match exported.get(&name) {
                    Some(module) if modules.contains(module) => module.clone(),
                    // A dependency's name re-exported as is (`zookeeper_client::Acl`).
                    Some(_) => continue,
                    None => panic!("{}: crate::{name} names no module and no re-export", file.display()),
                }
            };
            if to != from {
                graph.get_mut(&from).unwrap().insert(to);
            }
        }
    }
    graph
}

/// The circles of `graph` (strongly connected components of more than one module).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reaches = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_owned()];
        while let Some(m) = todo.pop() {
            for next in &graph[&m] {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&String, BTreeSet<String>> = graph.keys().map(|m| (m, reaches(m))).collect();
    let mut circles: Vec<BTreeSet<String>> = Vec::new();
    for m in graph.keys() {
        let circle: BTreeSet<String> =
            graph.keys().filter(|o| *o == m || (reach[m].contains(*o) && reach[*o].contains(m))).cloned().collect();
        if circle.len() > 1 && !circles.contains(&circle) {
            circles.push(circle);
        }
    }
    circles
}

/// Each module's layer: 0 for a module that names none, else one above the highest it names.
fn layers(graph: &BTreeMap<String, BTreeSet<String>>) -> BTreeMap<String, usize> {
    let mut layer: BTreeMap<String, usize> = BTreeMap::new();
    while layer.len() < graph.len() {
        let before = layer.len();
        for (m, uses) in graph {
            if !layer.contains_key(m) && uses.iter().all(|u| layer.contains_key(u)) {
                let l = uses.iter().map(|u| layer[u] + 1).max().unwrap_or(0);
                layer.insert(m.clone(), l);
            }
        }
        assert!(layer.len() > before, "a circle: no layering");
    }
    layer
}

#[test]
fn the_core_s_modules_import_each_other_without_a_circle() {
    let graph = graph();
    for (m, uses) in &graph {
        println!("{m} -> {}", uses.iter().cloned().collect::<Vec<_>>().join(", "));
    }
    let circles = circles(&graph);
    assert!(circles.is_empty(), "import circles in core/src: {circles:?}");
    let layers = layers(&graph);
    let top = layers.values().copied().max().unwrap_or(0);
    println!();
    for l in 0..=top {
        let at: Vec<&str> = layers.iter().filter(|(_, n)| **n == l).map(|(m, _)| m.as_str()).collect();
        println!("layer {l}: {}", at.join(", "));
    }
}
