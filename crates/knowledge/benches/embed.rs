//! Native figures for all-MiniLM-L6-v2 on candle over the CLI's fixture
//! folder (`crates/proxy/tests/fixtures/knowledge/`): the median time to
//! embed one passage alone, and the time to build the whole index (read,
//! chunk, embed in batches). Run with
//! `cargo bench -p hearth-knowledge --bench embed`; it needs the model
//! (`cargo xtask embedding-model`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use hearth_knowledge::{
    ChunkBudget, Embedder, KnowledgeIndex, MODEL_FILES, MiniLm, ModelFiles, chunk, content_hash,
    source,
};

fn files(dir: &Path, prefix: &str, out: &mut Vec<(String, Vec<u8>)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = format!("{prefix}{}", e.file_name().to_string_lossy());
        if e.file_type().unwrap().is_dir() {
            files(&e.path(), &format!("{name}/"), out);
        } else {
            out.push((name, std::fs::read(e.path()).unwrap()));
        }
    }
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = root.join(".test-fixtures/models/all-MiniLM-L6-v2");
    let read = |name: &str| {
        std::fs::read(dir.join(name))
            .unwrap_or_else(|e| panic!("{e}: install the model with `cargo xtask embedding-model`"))
    };
    let load = Instant::now();
    let [weights, config, tokenizer, pooling] = MODEL_FILES;
    let model = MiniLm::from_bytes(ModelFiles {
        safetensors: read(weights),
        config: &read(config),
        tokenizer: &read(tokenizer),
        pooling: &read(pooling),
    })
    .expect("the model loads");
    println!("model load: {:.1} ms", load.elapsed().as_secs_f64() * 1e3);

    let mut found = Vec::new();
    files(
        &root.join("crates/proxy/tests/fixtures/knowledge"),
        "",
        &mut found,
    );
    let budget = ChunkBudget::MINILM;
    // Warm up once, so the first figure is not the allocator's.
    model.embed(&["warm up"]).unwrap();

    let build = Instant::now();
    let mut index = KnowledgeIndex::new(model.model_id(), model.dimension(), budget);
    let mut texts = Vec::new();
    for (path, bytes) in &found {
        let Ok((kind, text)) = source::read(path, bytes) else {
            continue;
        };
        let chunks = chunk::chunk(kind, text, budget);
        let embed: Vec<String> = chunks.iter().map(|c| c.embed_text()).collect();
        let refs: Vec<&str> = embed.iter().map(String::as_str).collect();
        let vectors = model.embed(&refs).unwrap();
        index
            .insert(path, &content_hash(bytes), chunks, vectors)
            .unwrap();
        texts.extend(embed);
    }
    let build = build.elapsed();
    println!(
        "index build: {} files, {} passages in {:.1} ms",
        index.files().count(),
        index.chunk_count(),
        build.as_secs_f64() * 1e3
    );

    let mut times: Vec<f64> = texts
        .iter()
        .map(|t| {
            let start = Instant::now();
            model.embed(&[t.as_str()]).unwrap();
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let tokens: Vec<usize> = texts
        .iter()
        .map(|t| model.count_tokens(t).unwrap())
        .collect();
    println!(
        "one passage alone: median {:.2} ms, min {:.2} ms, max {:.2} ms over {} passages ({}–{} tokens)",
        times[times.len() / 2],
        times[0],
        times[times.len() - 1],
        times.len(),
        tokens.iter().min().unwrap(),
        tokens.iter().max().unwrap(),
    );
    let query = Instant::now();
    let q = model
        .embed(&["how long before I go do I need to let the property owner know?"])
        .unwrap();
    let hits = index.search("how long before I go", Some(&q[0]), 5);
    println!(
        "one question (embed + rank): {:.2} ms; first: {} ({})",
        query.elapsed().as_secs_f64() * 1e3,
        hits[0].path,
        hits[0].chunk.heading_line()
    );
}
