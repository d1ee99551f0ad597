//! The README's first Rust example is `examples/readme.rs`, to the byte,
//! and runs: against the harness's server, named by `ZOOKEEPER` as a user
//! would name theirs.

mod example {
    include!("../examples/readme.rs");

    pub fn run() -> zoolock::Result<()> {
        main()
    }
}

/// The first ```rust block of `markdown`.
fn first_rust_block(markdown: &str) -> &str {
    let start = markdown.find("```rust\n").expect("a ```rust block") + "```rust\n".len();
    let end = markdown[start..].find("```\n").expect("the block's end") + start;
    &markdown[start..end]
}

#[test]
fn the_readme_s_first_rust_example_is_the_example_and_runs_as_pasted() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let example = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/readme.rs")).unwrap();
    assert_eq!(
        first_rust_block(&readme),
        example,
        "README.md's first Rust example differs from core/examples/readme.rs"
    );
    std::env::set_var("ZOOKEEPER", zk_harness::shared().connect_string());
    example::run().expect("the README's example failed");
}
