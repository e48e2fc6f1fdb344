//! The GGUF header reader on the real test model (SmolLM2-135M-Instruct,
//! Q4_1), which `cargo xtask test` installs into `.test-fixtures/` (or
//! `HEARTH_TEST_MODEL` names); read in growing prefixes as the app does.

use std::io::Read;
use std::path::PathBuf;

use hearth_core::assistant::gguf::{GgufError, read_header};
use hearth_core::assistant::providers::in_tab::{DEFAULT_CONTEXT_CAP, context_to_load};

fn model_path() -> PathBuf {
    std::env::var_os("HEARTH_TEST_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../.test-fixtures/models/SmolLM2-135M-Instruct.Q4_1.gguf")
        })
}

#[test]
fn the_test_model_reads_as_the_list_shows_it() {
    let path = model_path();
    let mut file = std::fs::File::open(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}. `cargo xtask test` installs it (or `cargo xtask test-model`)",
            path.display()
        )
    });
    let len = file.metadata().unwrap().len();
    assert_eq!(len, 98_362_432);
    let mut prefix = Vec::new();
    let mut want = 64 * 1024u64;
    let mut rounds = 0;
    let info = loop {
        rounds += 1;
        let need = want.min(len) as usize;
        if prefix.len() < need {
            let mut more = vec![0u8; need - prefix.len()];
            file.read_exact(&mut more).unwrap();
            prefix.extend(more);
        }
        match read_header(&prefix, len) {
            Err(GgufError::Truncated { need, .. }) => want = need,
            other => break other.unwrap(),
        }
    };
    assert!(
        rounds > 1,
        "the vocabulary makes the header longer than 64 KB"
    );
    assert_eq!(info.version, 3);
    assert_eq!(info.tensor_count, 272);
    assert_eq!(info.architecture.as_deref(), Some("llama"));
    assert_eq!(info.size_label.as_deref(), Some("135M"));
    assert_eq!(info.quantisation(), Some("Q4_1"));
    assert_eq!(info.context_length, Some(8192));
    assert!(info.has_chat_template);
    // Its ChatML template has no tools: Hearth offers it none.
    assert!(!info.template_tools);
    assert_eq!(info.header_len, 1_769_507);
    assert_eq!(
        context_to_load(info.context_length, None),
        DEFAULT_CONTEXT_CAP
    );
}
