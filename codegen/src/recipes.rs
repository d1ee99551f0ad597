//! Where a recipe is registered, written from the recipe folders, so that a
//! new recipe is its own files and nothing else: each crate's `mod` list
//! (the core's `recipe/mod.rs`, `recipe.rs` in the Python module and the C
//! ABI), the Python module's classes and their names in `__all__`, and its
//! stub. A recipe's Python classes are the ones its binding's stub (the
//! ```` ```pyi ```` block of its module doc) declares.
//!
//! Each list sits between a `codegen: <title>` line and a `codegen: end`
//! line of a file that is otherwise hand-written.

use std::fs;
use std::path::Path;

/// The files rewritten here, below the workspace.
pub const FILES: [&str; 5] = [
    "core/src/recipe/mod.rs",
    "ffi/src/recipe.rs",
    "python/src/recipe.rs",
    "python/python/zoolock/_zoolock.pyi",
    "python/python/zoolock/__init__.py",
];

/// One recipe's Python binding: its module and the stub of its classes.
struct Binding {
    module: String,
    stub: String,
    classes: Vec<String>,
}

/// Rewrites each file of [`FILES`] from `root` into `out`.
pub fn write(root: &Path, out: &Path) {
    let bindings = python_bindings(root);
    let names: Vec<&str> = bindings.iter().flat_map(|b| b.classes.iter().map(String::as_str)).collect();

    let core = modules(&root.join("core/src/recipe"));
    let mut text = String::new();
    text += &lines(&core, |m| format!("mod {m};"));
    text += "\n";
    text += &lines(&core, |m| format!("pub use {m}::*;"));
    update(root, out, FILES[0], &[("//", "the recipes", text)]);

    let ffi = modules(&root.join("ffi/src/recipe"));
    let mut text = String::new();
    text += &lines(&ffi, |m| format!("mod {m};"));
    text += "\n";
    text += &lines(&ffi, |m| format!("pub use {m}::*;"));
    update(root, out, FILES[1], &[("//", "the recipes", text)]);

    let mut text = lines(&bindings, |b| format!("pub(crate) mod {};", b.module));
    text += "\n/// Adds every recipe class to the module: their names, the module's\n\
             /// `__all__`, are what `zoolock` exports and binds to `KazooClient`.\n\
             pub fn add_all<'py>(m: &Bound<'py, PyModule>) -> PyResult<Vec<Bound<'py, PyString>>> {\n    \
             let mut names = Vec::new();\n";
    for binding in &bindings {
        text += &lines(&binding.classes, |c| format!("    add::<{}::{c}>(m, &mut names)?;", binding.module));
    }
    text += "    Ok(names)\n}\n";
    update(root, out, FILES[2], &[("//", "the recipes", text)]);

    let quoted = lines(&names, |n| format!("    \"{n}\","));
    let stubs: Vec<&str> = bindings.iter().map(|b| b.stub.as_str()).collect();
    let classes = format!("\n{}\n\n", stubs.join("\n\n"));
    update(root, out, FILES[3], &[("#", "the recipes' names", quoted.clone()), ("#", "the recipes' classes", classes)]);
    update(root, out, FILES[4], &[("    #", "the recipes", quoted)]);
}

/// One line per item.
fn lines<T>(items: &[T], line: impl Fn(&T) -> String) -> String {
    items.iter().map(|item| line(item) + "\n").collect()
}

/// The modules of a folder: its `.rs` files and its folders with a `mod.rs`, sorted.
fn modules(folder: &Path) -> Vec<String> {
    let mut modules: Vec<String> = fs::read_dir(folder)
        .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
        .map(|entry| entry.expect("a recipe folder").path())
        .filter_map(|path| {
            let name = path.file_stem()?.to_str()?.to_owned();
            let module = if path.is_dir() { path.join("mod.rs").is_file() } else { path.extension()? == "rs" };
            (module && name != "mod").then_some(name)
        })
        .collect();
    modules.sort();
    modules
}

/// Each module of `python/src/recipe`, with the stub its module doc
/// declares; a `#[pyclass]` of the module that its stub leaves out (it
/// would never be added) or renames (`name = …`) fails here.
fn python_bindings(root: &Path) -> Vec<Binding> {
    let folder = root.join("python/src/recipe");
    modules(&folder)
        .into_iter()
        .map(|module| {
            let file = folder.join(format!("{module}.rs"));
            let path = if file.is_file() { file } else { folder.join(&module).join("mod.rs") };
            let source = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let stub = stub(&source).unwrap_or_else(|| panic!("{}: no ```pyi block in its module doc", path.display()));
            let classes: Vec<String> = stub
                .lines()
                .filter_map(|l| l.strip_prefix("class "))
                .map(|l| l.split(|c: char| c == '(' || c == ':').next().unwrap().to_owned())
                .collect();
            for class in pyclasses(&source) {
                assert!(
                    classes.contains(&class),
                    "{}: #[pyclass] {class} is not in its stub (a recipe's classes are the ones its stub declares)",
                    path.display()
                );
            }
            Binding { module, stub, classes }
        })
        .collect()
}

/// The structs a source declares `#[pyclass]` as written (not those a macro makes).
fn pyclasses(source: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut lines = source.lines().map(str::trim);
    while let Some(line) = lines.next() {
        if !line.starts_with("#[pyclass") {
            continue;
        }
        assert!(!line.contains("name ="), "a recipe class's Python name is its Rust name: {line}");
        let Some(declaration) = lines.find(|l| l.contains("struct ")) else { break };
        let name = declaration.split("struct ").nth(1).unwrap();
        let name: String = name.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$').collect();
        if !name.starts_with('$') {
            found.push(name);
        }
    }
    found
}

/// The ```` ```pyi ```` block of a module doc (`//!` lines), without the prefix.
fn stub(source: &str) -> Option<String> {
    let doc = source.lines().take_while(|l| l.starts_with("//!")).map(|l| l.strip_prefix("//! ").unwrap_or(&l[3..]));
    let mut block = doc.skip_while(|l| *l != "```pyi").skip(1);
    let lines: Vec<&str> = block.by_ref().take_while(|l| *l != "```").collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// Writes `file` from `root` into `out` with each region's lines replaced:
/// (comment, title, text) for the lines between the line that begins
/// `<comment> codegen: <title>` and the next line `<comment> codegen: end`.
fn update(root: &Path, out: &Path, file: &str, regions: &[(&str, &str, String)]) {
    let source = root.join(file);
    let text = fs::read_to_string(&source).unwrap_or_else(|e| panic!("{}: {e}", source.display()));
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    for (comment, title, body) in regions {
        let (begin, end) = (format!("{} codegen: {title}", comment.trim()), format!("{} codegen: end", comment.trim()));
        let starts: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].trim().starts_with(&begin)).collect();
        let [start] = starts[..] else { panic!("{file}: {} lines `{begin}`, not one", starts.len()) };
        let stop = (start + 1..lines.len())
            .find(|&i| lines[i].trim() == end)
            .unwrap_or_else(|| panic!("{file}: no line `{end}` after `{begin}`"));
        lines.splice(start + 1..stop, body.lines().map(str::to_owned));
    }
    let target = out.join(file);
    fs::create_dir_all(target.parent().unwrap()).expect("could not create the output folders");
    fs::write(&target, lines.join("\n") + "\n").unwrap_or_else(|e| panic!("could not write {}: {e}", target.display()));
}
