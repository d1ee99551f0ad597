//! Generates the C# P/Invoke declarations of the C ABI into
//! `dotnet/src/NativeMethods.g.cs` (not to be edited by hand), in C# that
//! Mono's `mcs` (C# 7.2) accepts: delegates rather than function pointers,
//! `IntPtr` rather than `nint`.

const SOURCES: [&str; 8] = [
    "src/status.rs",
    "src/args.rs",
    "src/dispatch.rs",
    "src/listener.rs",
    "src/recipe.rs",
    "src/session.rs",
    "src/lock.rs",
    "src/semaphore.rs",
];

fn main() {
    let mut builder = csbindgen::Builder::default();
    for source in SOURCES.iter().chain(["src/selftest.rs"].iter()) {
        println!("cargo:rerun-if-changed={source}");
        builder = builder.input_extern_file(source);
    }
    println!("cargo:rerun-if-changed=build.rs");
    builder
        .csharp_dll_name("zoolock_ffi")
        .csharp_namespace("ZooLock.Native")
        .csharp_class_name("NativeMethods")
        .csharp_class_accessibility("internal")
        .csharp_use_function_pointer(false)
        .csharp_use_nint_types(false)
        .csharp_generate_const_filter(|name| name.starts_with("ZL_"))
        .generate_csharp_file("../dotnet/src/NativeMethods.g.cs")
        .expect("csbindgen could not generate dotnet/src/NativeMethods.g.cs");
}
