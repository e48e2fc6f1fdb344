//! Hearth's wasm entry point; trunk builds this binary.

fn main() {
    hearth::start();
}
