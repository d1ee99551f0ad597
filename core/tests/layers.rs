//! The core's layering, checked. Every file of `core/src` is parsed (syn);
//! every path its code names — `crate::…`, `super::…`, `self::…`, a name
//! brought in by `use`, a child module's — is followed, through re-exports,
//! to the file that defines the item, and is an edge from the file that
//! names it to that file. A re-export alone (`pub use child::Item` in a
//! folder's `mod.rs`) is no edge: whoever names the item depends on the
//! file that defines it. The edges must close no circle: not between the
//! top-level modules (a folder is one module, `src/holder/` is `holder`),
//! whose layers ARCHITECTURE.md lists and this test compares with its list,
//! and not between the files of one folder. A folder's `mod.rs` is its
//! facade: it names its files' items and they name its own (the handle a
//! folder is about, e.g. `HolderState`), so it stands outside that second
//! check. Test modules (`#[cfg(test)]`) do not count.
//!
//! `cargo test -p zoolock --test layers -- --nocapture` prints both graphs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// A module: its path from the crate root (`["contender", "removal"]`).
type Module = Vec<String>;

/// What one file defines and how it names things.
#[derive(Default)]
struct FileInfo {
    /// Items defined here (types, functions, traits, constants, macros, …).
    items: BTreeSet<String>,
    /// Names brought in by `use`: the name → the path it stands for, and
    /// whether it is a re-export (`pub`, `pub(crate)`, `pub(super)`).
    uses: BTreeMap<String, (Vec<String>, bool)>,
    /// Every path the code names (use statements that are no re-export included).
    named: Vec<Vec<String>>,
    /// `use path::*` (not a re-export).
    globs: Vec<Vec<String>>,
}

struct Collect<'a> {
    info: &'a mut FileInfo,
}

fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| a.path().is_ident("cfg") && a.meta.to_token_stream_string().contains("test"))
}

trait TokenString {
    fn to_token_stream_string(&self) -> String;
}

impl TokenString for syn::Meta {
    fn to_token_stream_string(&self) -> String {
        quote_string(self)
    }
}

fn quote_string(meta: &syn::Meta) -> String {
    match meta {
        syn::Meta::List(list) => list.tokens.to_string(),
        syn::Meta::Path(path) => path.segments.iter().map(|s| s.ident.to_string()).collect::<Vec<_>>().join("::"),
        syn::Meta::NameValue(_) => String::new(),
    }
}

fn segments(path: &syn::Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

impl Collect<'_> {
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree, reexport: bool) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree, reexport);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                let mut path = prefix.clone();
                if name != "self" {
                    path.push(name.clone());
                }
                let alias = if name == "self" { prefix.last().cloned().unwrap_or_default() } else { name };
                self.add_use(alias, path, reexport);
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                if r.ident != "self" {
                    path.push(r.ident.to_string());
                }
                self.add_use(r.rename.to_string(), path, reexport);
            }
            syn::UseTree::Glob(_) if !reexport => self.info.globs.push(prefix.clone()),
            syn::UseTree::Glob(_) => {}
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(prefix, tree, reexport);
                }
            }
        }
    }

    fn add_use(&mut self, alias: String, path: Vec<String>, reexport: bool) {
        if !reexport {
            self.info.named.push(path.clone());
        }
        self.info.uses.insert(alias, (path, reexport));
    }
}

impl<'ast> Visit<'ast> for Collect<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Use(u) => &u.attrs,
            _ => return self.visit_item_inner(item),
        };
        if !is_test(attrs) {
            self.visit_item_inner(item);
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let reexport = !matches!(item.vis, syn::Visibility::Inherited);
        self.use_tree(&mut Vec::new(), &item.tree, reexport);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.segments.len() > 1 || path.leading_colon.is_none() {
            self.info.named.push(segments(path));
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.info.named.push(segments(&mac.path));
        // A macro's tokens may name paths too (`crate::x::y` inside `format!`, a `codes!` table).
        let text = mac.tokens.to_string();
        for (at, _) in text.match_indices("crate ::") {
            let rest = &text[at..];
            let path: Vec<String> = rest
                .split("::")
                .map(str::trim)
                .take_while(|s| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_'))
                .map(str::to_owned)
                .collect();
            self.info.named.push(path);
        }
        syn::visit::visit_macro(self, mac);
    }
}

impl Collect<'_> {
    fn visit_item_inner(&mut self, item: &syn::Item) {
        let name = match item {
            syn::Item::Const(i) => Some(i.ident.to_string()),
            syn::Item::Enum(i) => Some(i.ident.to_string()),
            syn::Item::Fn(i) => Some(i.sig.ident.to_string()),
            syn::Item::Macro(i) => i.ident.as_ref().map(|i| i.to_string()),
            syn::Item::Static(i) => Some(i.ident.to_string()),
            syn::Item::Struct(i) => Some(i.ident.to_string()),
            syn::Item::Trait(i) => Some(i.ident.to_string()),
            syn::Item::Type(i) => Some(i.ident.to_string()),
            syn::Item::Union(i) => Some(i.ident.to_string()),
            _ => None,
        };
        if let Some(name) = name {
            self.info.items.insert(name);
        }
        syn::visit::visit_item(self, item);
    }
}

struct Crate {
    src: PathBuf,
    /// Module path → its file.
    files: BTreeMap<Module, PathBuf>,
    info: BTreeMap<Module, FileInfo>,
}

impl Crate {
    fn load() -> Crate {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut paths = Vec::new();
        sources(&src, &mut paths);
        let mut files = BTreeMap::new();
        let mut info = BTreeMap::new();
        for file in paths {
            let relative = file.strip_prefix(&src).unwrap().with_extension("");
            let mut module: Module = relative.iter().map(|c| c.to_str().unwrap().to_owned()).collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            let text = std::fs::read_to_string(&file).unwrap();
            let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let mut collected = FileInfo::default();
            Collect { info: &mut collected }.visit_file(&parsed);
            files.insert(module.clone(), file);
            info.insert(module, collected);
        }
        Crate { src, files, info }
    }

    /// The file defining what `path` (as written in `from`) names, if it is
    /// this crate's; `None` for a dependency's, std's or a local name.
    fn resolve(&self, from: &Module, path: &[String], depth: usize) -> Option<Module> {
        if depth > 16 || path.is_empty() {
            return None;
        }
        let (mut at, rest): (Module, &[String]) = match path[0].as_str() {
            "crate" => (Vec::new(), &path[1..]),
            "self" => (from.clone(), &path[1..]),
            "super" => {
                let mut at = from.clone();
                let mut rest = path;
                while rest.first().map(String::as_str) == Some("super") {
                    at.pop();
                    rest = &rest[1..];
                }
                (at, rest)
            }
            first => {
                if let Some((target, _)) = self.info[from].uses.get(first) {
                    let mut full = target.clone();
                    full.extend(path[1..].iter().cloned());
                    return self.resolve(from, &full, depth + 1);
                }
                let mut child = from.clone();
                child.push(first.to_owned());
                if self.files.contains_key(&child) {
                    (child, &path[1..])
                } else if self.info[from].items.contains(first) {
                    return Some(from.clone());
                } else {
                    // A glob import, else not ours (std, a dependency, a local).
                    return self.info[from].globs.iter().find_map(|glob| {
                        let mut full = glob.clone();
                        full.extend(path.iter().cloned());
                        self.resolve(from, &full, depth + 1)
                    });
                }
            }
        };
        for (i, segment) in rest.iter().enumerate() {
            let mut child = at.clone();
            child.push(segment.clone());
            if self.files.contains_key(&child) {
                at = child;
                continue;
            }
            let module = self.info.get(&at)?;
            if module.items.contains(segment) {
                return Some(at);
            }
            if let Some((target, _)) = module.uses.get(segment) {
                let mut full = target.clone();
                full.extend(rest[i + 1..].iter().cloned());
                return self.resolve(&at, &full, depth + 1);
            }
            // A variant, a method or an associated item of the item before: that file.
            return Some(at);
        }
        self.files.contains_key(&at).then_some(at)
    }

    /// File → the files whose items it names.
    fn file_graph(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut graph = BTreeMap::new();
        for (module, info) in &self.info {
            let from = self.name(module);
            let edges: &mut BTreeSet<String> = graph.entry(from.clone()).or_default();
            for path in &info.named {
                if let Some(to) = self.resolve(module, path, 0) {
                    let to = self.name(&to);
                    if to != from && to != "lib" {
                        edges.insert(to);
                    }
                }
            }
        }
        graph.remove("lib");
        for edges in graph.values_mut() {
            edges.remove("lib");
        }
        graph
    }

    /// A file's name: its path below `src/` without `.rs` (`contender/mod`).
    fn name(&self, module: &Module) -> String {
        let file = &self.files[module];
        file.strip_prefix(&self.src).unwrap().with_extension("").to_str().unwrap().to_owned()
    }
}

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

/// The top-level module of a file name (`contender/removal` → `contender`).
fn top(file: &str) -> String {
    file.split('/').next().unwrap().to_owned()
}

/// The circles of `graph` (strongly connected components of more than one node).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reaches = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_owned()];
        while let Some(m) = todo.pop() {
            for next in graph.get(&m).into_iter().flatten() {
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

/// Each node's layer: 0 for one that names none, else one above the highest it names.
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

fn layer_lines(layers: &BTreeMap<String, usize>) -> Vec<String> {
    let top = layers.values().copied().max().unwrap_or(0);
    (0..=top)
        .map(|l| {
            let at: Vec<&str> = layers.iter().filter(|(_, n)| **n == l).map(|(m, _)| m.as_str()).collect();
            format!("layer {l}: {}", at.join(", "))
        })
        .collect()
}

#[test]
fn the_core_s_files_and_modules_import_each_other_without_a_circle_in_the_layers_architecture_lists() {
    let krate = Crate::load();
    let files = krate.file_graph();
    for (file, uses) in &files {
        println!("{file} -> {}", uses.iter().cloned().collect::<Vec<_>>().join(", "));
    }
    let folder = |file: &str| file.rsplit_once('/').map(|(folder, _)| folder.to_owned());
    let inside: BTreeMap<String, BTreeSet<String>> = files
        .iter()
        .filter(|(file, _)| folder(file).is_some() && !file.ends_with("/mod"))
        .map(|(file, uses)| {
            let siblings = uses.iter().filter(|u| folder(u) == folder(file) && !u.ends_with("/mod")).cloned();
            (file.clone(), siblings.collect())
        })
        .collect();
    let circles_of_files = circles(&inside);
    assert!(
        circles_of_files.is_empty(),
        "import circles between the files of a folder of core/src: {circles_of_files:?}"
    );

    let mut modules: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, uses) in &files {
        let from = top(file);
        let edges = modules.entry(from.clone()).or_default();
        edges.extend(uses.iter().map(|u| top(u)).filter(|u| *u != from));
    }
    let circles_of_modules = circles(&modules);
    assert!(circles_of_modules.is_empty(), "import circles between modules of core/src: {circles_of_modules:?}");
    let lines = layer_lines(&layers(&modules));
    println!();
    for line in &lines {
        println!("{line}");
    }
    let architecture =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../ARCHITECTURE.md")).unwrap();
    let listed: Vec<&str> = architecture.lines().filter(|l| l.starts_with("layer ")).collect();
    assert_eq!(listed, lines, "ARCHITECTURE.md's layer list is not the layering of core/src (printed above)");
}

/// The resolver sees what the old first-segment reader could not: `super::`
/// paths, names re-exported by a folder's facade, and a circle between two
/// files of one folder (contender/removal.rs and persistent.rs had one).
#[test]
fn super_paths_re_exports_and_circles_inside_a_folder_are_seen() {
    let krate = Crate::load();
    let files = krate.file_graph();
    // contender/removal.rs names `super::Nodes` (defined in contender/mod.rs).
    assert!(files["contender/removal"].contains("contender/mod"), "{:?}", files["contender/removal"]);
    // holder/hold.rs names `crate::contender::Won`, which contender/mod.rs re-exports from won.rs.
    assert!(files["holder/hold"].contains("contender/won"), "{:?}", files["holder/hold"]);
    let mut looped = files.clone();
    looped.get_mut("contender/removal").unwrap().insert("contender/persistent".into());
    let found = circles(&looped);
    assert!(found.iter().any(|c| c.contains("contender/removal") && c.contains("contender/persistent")), "{found:?}");
}
