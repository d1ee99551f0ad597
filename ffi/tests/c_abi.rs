//! The C header from a C compiler's side: `tests/c_abi.c` includes
//! `include/zoolock.h` (C99, every warning an error), links the cdylib this
//! crate builds, and runs. A header that is not valid C, or that declares
//! what the library does not export, fails here.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn a_c_program_compiles_against_the_header_and_runs() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // The test binary is target/<profile>/deps/c_abi-…; the cdylib is in target/<profile>.
    let exe = std::env::current_exe().unwrap();
    let lib_dir = exe.parent().and_then(|deps| deps.parent()).unwrap().to_path_buf();
    // `cargo test` builds the library as an rlib only: build the cdylib (a link, when the rlib is fresh).
    let mut cargo = Command::new(env!("CARGO"));
    cargo.args(["build", "--quiet", "-p", "zoolock-ffi", "--lib", "--target-dir"]).arg(lib_dir.parent().unwrap());
    if lib_dir.ends_with("release") {
        cargo.arg("--release");
    }
    assert!(cargo.status().expect("cargo").success(), "cargo could not build the cdylib");
    let program = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("c_abi");
    let compiled = Command::new("cc")
        .args(["-std=c99", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(crate_dir.join("tests/c_abi.c"))
        .arg("-o")
        .arg(&program)
        .arg("-L")
        .arg(&lib_dir)
        .arg("-lzoolock_ffi")
        .status()
        .expect("a C compiler (cc)");
    assert!(compiled.success(), "cc failed on tests/c_abi.c");
    let output = Command::new(&program).env("LD_LIBRARY_PATH", &lib_dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the C program failed:\n{stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "ok\n", "{stderr}");
}
