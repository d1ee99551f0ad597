//! ffi/src as cbindgen and csbindgen must see it: each `async_entry!`
//! declaration (ffi/src/entry.rs) written as the entry point it expands to.
//! Both read source and do not expand macros; expanding the whole crate
//! (`-Zunpretty=expanded`) would need a nightly flag and a second build of
//! every dependency. The bodies are left out: the generators read signatures.

use std::fs;
use std::path::{Path, PathBuf};

use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{parenthesized, Attribute, FnArg, Ident, Item, Token};

/// One `async_entry!` declaration: its docs, name and leading arguments.
struct Declaration {
    attrs: Vec<Attribute>,
    name: Ident,
    args: Punctuated<FnArg, Token![,]>,
}

impl Parse for Declaration {
    fn parse(input: ParseStream) -> syn::Result<Declaration> {
        let attrs = input.call(Attribute::parse_outer)?;
        input.parse::<Token![fn]>()?;
        let name = input.parse()?;
        let content;
        parenthesized!(content in input);
        let args = content.parse_terminated(FnArg::parse, Token![,])?;
        input.parse::<syn::ExprClosure>()?; // `|completion| { … }`, read as a closure
        Ok(Declaration { attrs, name, args })
    }
}

impl Declaration {
    /// The entry point `async_entry!` makes of it, its body empty.
    fn entry_point(&self) -> Item {
        let Declaration { attrs, name, args } = self;
        let args = args.iter();
        syn::parse_quote! {
            #(#attrs)*
            #[no_mangle]
            pub unsafe extern "C" fn #name(
                #(#args,)*
                cancel: *const ZlCancel,
                callback: ZlResultCallback,
                user_data: *mut c_void,
            ) -> i32 {}
        }
    }
}

/// Writes every file of `ffi/src` below `into`, declarations expanded, and
/// returns the folder.
pub fn expanded_sources(root: &Path, into: &Path) -> PathBuf {
    let out = into.join("ffi-src");
    let _ = fs::remove_dir_all(&out);
    fs::create_dir_all(&out).expect("could not create the expansion's folder");
    for entry in fs::read_dir(root.join("ffi/src")).expect("ffi/src") {
        let source = entry.expect("ffi/src").path();
        if source.extension().is_none_or(|ext| ext != "rs") {
            continue;
        }
        let text = fs::read_to_string(&source).expect("ffi/src");
        let mut file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", source.display()));
        for item in &mut file.items {
            if let Item::Macro(invocation) = item {
                if invocation.mac.path.is_ident("async_entry") {
                    let declaration: Declaration = invocation
                        .mac
                        .parse_body()
                        .unwrap_or_else(|e| panic!("{}: async_entry!: {e}", source.display()));
                    *item = declaration.entry_point();
                }
            }
        }
        fs::write(out.join(source.file_name().unwrap()), quote!(#file).to_string())
            .expect("could not write the expansion");
    }
    out
}
