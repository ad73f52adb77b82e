//! Computes the code hash (see `src/code_hash.rs`) into `FABRICLB_CODE_HASH`, read by
//! `api::code_hash()`. Cargo reruns this script when any hashed input changes.

#[path = "src/code_hash.rs"]
mod code_hash;

use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for rel in code_hash::INPUTS {
        println!("cargo:rerun-if-changed=../../{rel}");
    }
    let files = code_hash::input_files(&root).expect("reading the code-hash inputs");
    println!(
        "cargo:rustc-env=FABRICLB_CODE_HASH={}",
        code_hash::digest(&files)
    );
}
