//! ffi/src as cbindgen and csbindgen must see it: each `async_entry!`,
//! `path_entry!` and `new_entry!` declaration (ffi/src/entry.rs) written as
//! the entry point it expands to.
//! Both read source and do not expand macros; expanding the whole crate
//! (`-Zunpretty=expanded`) would need a nightly flag and a second build of
//! every dependency. The bodies are left out: the generators read signatures.

use std::fs;
use std::path::{Path, PathBuf};

use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{parenthesized, Attribute, FnArg, Ident, Item, Token};

/// Which of ffi/src/entry.rs's macros a declaration is for.
#[derive(Clone, Copy)]
enum Macro {
    /// `fn name(args…) |completion| {…}`: `cancel`, `callback`, `user_data` after the arguments.
    Async,
    /// `fn name(handle: *const ZlX, path, args…) |x, path| {…}`: `path` is `path`, `path_len`.
    Path,
    /// `fn name(session, path, args…) -> out_x: ZlX |session, path| {…}`.
    New,
}

impl Macro {
    fn of(path: &syn::Path) -> Option<Macro> {
        if path.is_ident("async_entry") {
            Some(Macro::Async)
        } else if path.is_ident("path_entry") {
            Some(Macro::Path)
        } else if path.is_ident("new_entry") {
            Some(Macro::New)
        } else {
            None
        }
    }
}

/// One declaration: its docs, name and arguments as the C signature has them.
struct Declaration {
    attrs: Vec<Attribute>,
    name: Ident,
    args: Vec<FnArg>,
}

fn parse(input: ParseStream, kind: Macro) -> syn::Result<Declaration> {
    let attrs = input.call(Attribute::parse_outer)?;
    input.parse::<Token![fn]>()?;
    let name = input.parse()?;
    let content;
    parenthesized!(content in input);
    let mut args = Vec::new();
    match kind {
        Macro::Path => args.push(content.parse::<FnArg>()?),
        Macro::New => {
            word(&content, "session")?;
            args.push(syn::parse_quote!(session: *const ZlSession));
        }
        Macro::Async => {}
    }
    if let Macro::Path | Macro::New = kind {
        content.parse::<Token![,]>()?;
        word(&content, "path")?;
        args.push(syn::parse_quote!(path: *const u8));
        args.push(syn::parse_quote!(path_len: u32));
        if !content.is_empty() {
            content.parse::<Token![,]>()?;
        }
    }
    args.extend(content.parse_terminated(FnArg::parse, Token![,])?);
    if let Macro::New = kind {
        input.parse::<Token![->]>()?;
        let out: Ident = input.parse()?;
        input.parse::<Token![:]>()?;
        let handle: syn::Type = input.parse()?;
        args.push(syn::parse_quote!(#out: *mut *mut #handle));
    }
    input.parse::<syn::ExprClosure>()?; // `|completion| { … }`, read as a closure
    if let Macro::Async = kind {
        args.push(syn::parse_quote!(cancel: *const ZlCancel));
        args.push(syn::parse_quote!(callback: ZlResultCallback));
        args.push(syn::parse_quote!(user_data: *mut c_void));
    }
    Ok(Declaration { attrs, name, args })
}

/// The bare argument `expected` (`session`, `path`) the macros stand for.
fn word(input: ParseStream, expected: &str) -> syn::Result<()> {
    let word: Ident = input.parse()?;
    if word != expected {
        return Err(syn::Error::new(word.span(), format!("expected `{expected}`")));
    }
    Ok(())
}

impl Declaration {
    /// The entry point the macro makes of it, its body empty.
    fn entry_point(&self) -> Item {
        let Declaration { attrs, name, args } = self;
        syn::parse_quote! {
            #(#attrs)*
            #[no_mangle]
            pub unsafe extern "C" fn #name(#(#args),*) -> i32 {}
        }
    }
}

/// Writes every file of `ffi/src` below `into`, declarations expanded, and
/// returns the folder.
pub fn expanded_sources(root: &Path, into: &Path) -> PathBuf {
    let out = into.join("ffi-src");
    let _ = fs::remove_dir_all(&out);
    let src = root.join("ffi/src");
    for source in rust_files(&src) {
        let text = fs::read_to_string(&source).expect("ffi/src");
        let mut file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", source.display()));
        for item in &mut file.items {
            if let Item::Macro(invocation) = item {
                if let Some(kind) = Macro::of(&invocation.mac.path) {
                    let declaration = invocation
                        .mac
                        .parse_body_with(|input: ParseStream| parse(input, kind))
                        .unwrap_or_else(|e| panic!("{}: {e}", source.display()));
                    *item = declaration.entry_point();
                }
            }
        }
        let target = out.join(source.strip_prefix(&src).unwrap());
        fs::create_dir_all(target.parent().unwrap()).expect("could not create the expansion's folder");
        fs::write(target, quote!(#file).to_string()).expect("could not write the expansion");
    }
    out
}

/// The `.rs` files of `folder` and of its folders, sorted.
pub fn rust_files(folder: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(folder).unwrap_or_else(|e| panic!("{}: {e}", folder.display())) {
        let path = entry.expect("a source folder").path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}
