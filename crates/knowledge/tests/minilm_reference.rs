//! candle's all-MiniLM-L6-v2 against the reference implementation: every
//! sentence of the fixture `cargo xtask minilm-reference` recorded with
//! sentence-transformers must embed to a vector with cosine ≥ 0.99 to the
//! recorded one.

use std::path::PathBuf;
use std::time::Instant;

use hearth_knowledge::vector::cosine;
use hearth_knowledge::{Embedder, MODEL_FILES, MiniLm, ModelFiles};

/// The model folder `cargo xtask embedding-model` installs; a test that
/// needs it fails (never skips) when it is missing.
fn model() -> MiniLm {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../.test-fixtures/models/all-MiniLM-L6-v2");
    let read = |name: &str| {
        std::fs::read(dir.join(name)).unwrap_or_else(|e| {
            panic!(
                "the embedding model is missing ({}: {e}); install it with `cargo xtask embedding-model`",
                dir.join(name).display()
            )
        })
    };
    let [weights, config, tokenizer, pooling] = MODEL_FILES;
    MiniLm::from_bytes(ModelFiles {
        safetensors: read(weights),
        config: &read(config),
        tokenizer: &read(tokenizer),
        pooling: &read(pooling),
    })
    .expect("the model loads")
}

struct Reference {
    text: String,
    vector: Vec<f32>,
}

fn reference() -> Vec<Reference> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/minilm-reference.json");
    let text = std::fs::read_to_string(&path).expect("the reference fixture is committed");
    let json: serde_json::Value = serde_json::from_str(&text).expect("the fixture is JSON");
    json["sentences"]
        .as_array()
        .expect("a list of sentences")
        .iter()
        .map(|s| Reference {
            text: s["text"].as_str().expect("text").to_string(),
            vector: s["vector"]
                .as_array()
                .expect("vector")
                .iter()
                .map(|x| x.as_f64().expect("a number") as f32)
                .collect(),
        })
        .collect()
}

#[test]
fn candle_matches_sentence_transformers_on_every_reference_sentence() {
    let model = model();
    let reference = reference();
    assert!(
        reference.len() >= 10,
        "the fixture has {} sentences",
        reference.len()
    );
    let texts: Vec<&str> = reference.iter().map(|r| r.text.as_str()).collect();
    let vectors = model.embed(&texts).expect("the batch embeds");
    let mut worst = (f32::MAX, "");
    for (r, v) in reference.iter().zip(&vectors) {
        assert_eq!(v.len(), 384);
        let c = cosine(&r.vector, v);
        if c < worst.0 {
            worst = (c, r.text.as_str());
        }
        assert!(c >= 0.99, "cosine {c} for {:?}", r.text);
    }
    println!(
        "minimum cosine against sentence-transformers: {:.8} ({:?}), over {} sentences",
        worst.0,
        worst.1,
        reference.len()
    );
    // One at a time (no padding) gives the same vectors as the batch.
    let mut times = Vec::new();
    for (text, batched) in texts.iter().zip(&vectors) {
        let t = Instant::now();
        let alone = model.embed(&[text]).expect("one text embeds").remove(0);
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        assert!(cosine(&alone, batched) > 0.9999, "{text:?}");
    }
    times.sort_by(f64::total_cmp);
    println!(
        "one sentence at a time: median {:.1} ms (this build's profile)",
        times[times.len() / 2]
    );
}

#[test]
fn the_model_cuts_at_256_tokens_not_the_tokenizer_files_128() {
    let model = model();
    let long = "word ".repeat(400);
    assert_eq!(model.count_tokens(&long).unwrap(), MiniLm::MAX_TOKENS);
    assert_eq!(model.count_tokens("hello world").unwrap(), 4);
}
