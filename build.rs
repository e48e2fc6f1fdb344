//! Build script of the app: with the `split` feature on wasm, the linker
//! keeps its relocations in the binary, which the split step
//! (`cargo xtask precache`) needs to move functions into chunks.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let split = std::env::var_os("CARGO_FEATURE_SPLIT").is_some();
    let wasm =
        std::env::var("CARGO_CFG_TARGET_FAMILY").is_ok_and(|f| f.split(',').any(|f| f == "wasm"));
    if split && wasm {
        println!("cargo::rustc-link-arg-bin=hearth-app=--emit-relocs");
    }
}
