//! Whether dist/ is the release build of the current sources, so `cargo
//! xtask run` can serve at once when nothing changed (trunk itself re-runs
//! wasm-bindgen and wasm-opt on every build).
//!
//! The app's inputs are every file trunk's build reads: the app crate
//! (`src/`, `Cargo.toml`) and every workspace crate it links, `index.html`,
//! `Trunk.toml`, `public/` (with the Pyodide copy), `styles/`, the
//! lockfiles (`Cargo.lock`; `package-lock.json` pins wasm-opt and
//! Pyodide), `build.rs`, and xtask's `pwa.rs` and `split.rs` (the
//! `precache` hook that splits the module, writes `sw.js` and stamps
//! `index.html`) with xtask's `Cargo.toml` (the splitter's version);
//! plus the tool versions and `RUSTFLAGS`. After
//! each release build, `target/xtask/app-build.json` records each input's
//! size, modification time and SHA-256, and each dist/ file's size and
//! modification time. dist/ is current when the same inputs exist with the
//! same contents (a file whose time changed is hashed again, so a checkout
//! of the same bytes does not rebuild) and dist/ is untouched since.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::util::{Failure, capture};

/// Files and folders of the repository the app build reads, besides the
/// workspace crates it links (found from `cargo metadata`).
pub const APP_INPUTS: [&str; 13] = [
    "Cargo.toml",
    "Cargo.lock",
    "package-lock.json",
    "index.html",
    "Trunk.toml",
    "src",
    "public",
    "styles",
    "xtask/src/pwa.rs",
    "xtask/src/split.rs",
    "xtask/Cargo.toml",
    "build.rs",
    ".cargo",
];

/// Folders never read as inputs, wherever they sit.
const NOT_INPUTS: [&str; 3] = ["target", "node_modules", ".git"];

const STAMP: &str = "target/xtask/app-build.json";

/// What one file looked like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileState {
    pub size: u64,
    /// Nanoseconds since the epoch.
    pub modified: u128,
    /// Empty when not hashed (dist/ files).
    pub sha256: String,
}

/// Files by path relative to the repository root.
pub type Files = BTreeMap<String, FileState>;

/// The inputs as they were when a build started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inputs {
    pub files: Files,
    /// Tool versions and build-affecting environment.
    pub tools: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Freshness {
    Current,
    /// Why a build is needed, in words.
    Stale(String),
}

fn hash_file(path: &Path) -> Result<String, Failure> {
    let mut file = std::fs::File::open(path)
        .map_err(|e| Failure::new(format!("cannot read {}: {e}", path.display())))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file
            .read(&mut buf)
            .map_err(|e| Failure::new(format!("cannot read {}: {e}", path.display())))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

fn state(path: &Path, hash: bool) -> Result<FileState, Failure> {
    let meta = std::fs::metadata(path)
        .map_err(|e| Failure::new(format!("cannot read {}: {e}", path.display())))?;
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    Ok(FileState {
        size: meta.len(),
        modified,
        sha256: if hash {
            hash_file(path)?
        } else {
            String::new()
        },
    })
}

/// Every file under `entries` (files or folders, relative to `root`;
/// missing ones are skipped), by relative path.
pub fn list_files(root: &Path, entries: &[String]) -> Result<Vec<String>, Failure> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = entries.iter().map(|e| root.join(e)).collect();
    while let Some(path) = stack.pop() {
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if NOT_INPUTS.contains(&name) {
                continue;
            }
            let dir = std::fs::read_dir(&path)
                .map_err(|e| Failure::new(format!("cannot read {}: {e}", path.display())))?;
            for entry in dir.flatten() {
                stack.push(entry.path());
            }
        } else if meta.is_file()
            && let Ok(rel) = path.strip_prefix(root)
        {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The workspace crates the app links on wasm32, as folders relative to
/// `root` (the app's own folder, the root, is covered by APP_INPUTS).
pub fn linked_crates(root: &Path) -> Result<Vec<String>, Failure> {
    // Offline first, so a restart with nothing changed asks no registry.
    // `cargo metadata` reads the manifest of every package in the lockfile,
    // including those only other platforms build, which a fresh machine
    // has not downloaded yet; then it is asked again with the registry.
    let metadata = |offline: bool| {
        let mut cmd = Command::new("cargo");
        cmd.args(["metadata", "--format-version", "1"]);
        if offline {
            cmd.arg("--offline");
        }
        cmd.args(["--filter-platform", "wasm32-unknown-unknown"])
            .current_dir(root);
        capture(&mut cmd)
    };
    let text = metadata(true).or_else(|_| metadata(false))?;
    let meta: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Failure::new(format!("cargo metadata gave no JSON: {e}")))?;
    Ok(workspace_closure(&meta, "hearth", root))
}

/// Folders (relative to `root`) of the workspace packages `package`
/// depends on, directly or not, from `cargo metadata`'s resolve graph.
pub fn workspace_closure(meta: &serde_json::Value, package: &str, root: &Path) -> Vec<String> {
    let members: Vec<&str> = meta["workspace_members"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m.as_str())
        .collect();
    let packages = meta["packages"].as_array().cloned().unwrap_or_default();
    let id_of = |name: &str| {
        packages
            .iter()
            .find(|p| p["name"] == name && members.contains(&p["id"].as_str().unwrap_or("")))
            .and_then(|p| p["id"].as_str())
            .map(str::to_string)
    };
    let nodes = meta["resolve"]["nodes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut seen: Vec<String> = Vec::new();
    let mut todo: Vec<String> = id_of(package).into_iter().collect();
    while let Some(id) = todo.pop() {
        if seen.contains(&id) {
            continue;
        }
        seen.push(id.clone());
        if let Some(node) = nodes.iter().find(|n| n["id"] == id.as_str()) {
            for dep in node["deps"].as_array().into_iter().flatten() {
                let normal = dep["dep_kinds"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|k| k["kind"].is_null() || k["kind"] == "build");
                let dep_id = dep["pkg"].as_str().unwrap_or("");
                if normal && members.contains(&dep_id) {
                    todo.push(dep_id.to_string());
                }
            }
        }
    }
    let mut dirs: Vec<String> = packages
        .iter()
        .filter(|p| seen.iter().any(|s| p["id"] == s.as_str()))
        .filter_map(|p| p["manifest_path"].as_str())
        .filter_map(|m| Path::new(m).parent().map(Path::to_path_buf))
        .filter_map(|d| d.strip_prefix(root).ok().map(Path::to_path_buf))
        .map(|d| d.to_string_lossy().replace('\\', "/"))
        .filter(|d| !d.is_empty())
        .collect();
    dirs.sort();
    dirs
}

/// Versions of the tools the build runs, and the environment that changes
/// what they produce.
fn tools() -> String {
    let mut out = Vec::new();
    for (program, arg) in [
        ("rustc", "-V"),
        ("trunk", "--version"),
        ("wasm-bindgen", "--version"),
    ] {
        let v = capture(Command::new(program).arg(arg)).unwrap_or_else(|_| "missing".into());
        out.push(format!("{program}: {}", v.trim()));
    }
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_PROFILE_RELEASE_OPT_LEVEL",
    ] {
        out.push(format!("{var}={}", std::env::var(var).unwrap_or_default()));
    }
    out.join("\n")
}

fn input_entries(root: &Path) -> Result<Vec<String>, Failure> {
    let mut entries: Vec<String> = APP_INPUTS.iter().map(|s| s.to_string()).collect();
    entries.extend(linked_crates(root)?);
    Ok(entries)
}

/// The app's inputs now, every file hashed.
pub fn snapshot_inputs(root: &Path) -> Result<Inputs, Failure> {
    let mut files = Files::new();
    for rel in list_files(root, &input_entries(root)?)? {
        files.insert(rel.clone(), state(&root.join(&rel), true)?);
    }
    Ok(Inputs {
        files,
        tools: tools(),
    })
}

/// dist/'s files now (sizes and times only).
fn snapshot_dist(root: &Path) -> Result<Files, Failure> {
    let mut files = Files::new();
    for rel in list_files(root, &["dist".to_string()])? {
        files.insert(rel.clone(), state(&root.join(&rel), false)?);
    }
    Ok(files)
}

/// Removes the record, so an interrupted build is never taken as current.
pub fn forget(root: &Path) {
    let _ = std::fs::remove_file(root.join(STAMP));
}

/// Records `inputs` and dist/ as it is now, after a successful build.
pub fn record(root: &Path, inputs: Inputs) -> Result<(), Failure> {
    let dist = snapshot_dist(root)?;
    let to_json = |files: &Files| {
        files
            .iter()
            .map(|(k, f)| (k.clone(), json!([f.size, f.modified.to_string(), f.sha256])))
            .collect::<serde_json::Map<_, _>>()
    };
    let doc = json!({
        "tools": inputs.tools,
        "inputs": to_json(&inputs.files),
        "dist": to_json(&dist),
    });
    let path = root.join(STAMP);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::new(format!("cannot create {}: {e}", dir.display())))?;
    }
    std::fs::write(&path, doc.to_string())
        .map_err(|e| Failure::new(format!("cannot write {}: {e}", path.display())))
}

fn files_from_json(v: &serde_json::Value) -> Files {
    v.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            Some((
                k.clone(),
                FileState {
                    size: v[0].as_u64()?,
                    modified: v[1].as_str()?.parse().ok()?,
                    sha256: v[2].as_str()?.to_string(),
                },
            ))
        })
        .collect()
}

/// Whether dist/ is the build of the current inputs.
pub fn check(root: &Path) -> Result<Freshness, Failure> {
    let Ok(text) = std::fs::read_to_string(root.join(STAMP)) else {
        return Ok(Freshness::Stale(
            "no record of a finished release build".to_string(),
        ));
    };
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Ok(Freshness::Stale("the build record is unreadable".into()));
    };
    let built = Inputs {
        files: files_from_json(&doc["inputs"]),
        tools: doc["tools"].as_str().unwrap_or("").to_string(),
    };
    let built_dist = files_from_json(&doc["dist"]);
    if built.tools != tools() {
        return Ok(Freshness::Stale(
            "a tool version or RUSTFLAGS changed".into(),
        ));
    }
    let mut now = Files::new();
    for rel in list_files(root, &input_entries(root)?)? {
        now.insert(rel.clone(), state(&root.join(&rel), false)?);
    }
    let dist = snapshot_dist(root)?;
    compare(&built.files, &now, &built_dist, &dist, |rel| {
        hash_file(&root.join(rel))
    })
}

/// The staleness rule, on snapshots: `now` holds the inputs' sizes and
/// times, and `hash` reads a file's SHA-256 when its time moved.
pub fn compare(
    built: &Files,
    now: &Files,
    built_dist: &Files,
    dist: &Files,
    hash: impl Fn(&str) -> Result<String, Failure>,
) -> Result<Freshness, Failure> {
    if let Some(added) = now.keys().find(|k| !built.contains_key(*k)) {
        return Ok(Freshness::Stale(format!("{added} is new")));
    }
    if let Some(gone) = built.keys().find(|k| !now.contains_key(*k)) {
        return Ok(Freshness::Stale(format!("{gone} was removed")));
    }
    for (rel, was) in built {
        let is = &now[rel];
        if is.size != was.size {
            return Ok(Freshness::Stale(format!("{rel} changed")));
        }
        if is.modified != was.modified && hash(rel)? != was.sha256 {
            return Ok(Freshness::Stale(format!("{rel} changed")));
        }
    }
    if dist.is_empty() {
        return Ok(Freshness::Stale("dist/ is empty or missing".into()));
    }
    if dist.len() != built_dist.len()
        || dist.iter().any(|(k, f)| {
            built_dist
                .get(k)
                .is_none_or(|b| b.size != f.size || b.modified != f.modified)
        })
    {
        return Ok(Freshness::Stale(
            "dist/ was changed since the last release build".into(),
        ));
    }
    Ok(Freshness::Current)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A scratch repository with a source, a public file and a built dist/.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new() -> Scratch {
            static N: AtomicU32 = AtomicU32::new(0);
            let dir = std::env::temp_dir().join(format!(
                "xtask-fresh-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::SeqCst)
            ));
            let s = Scratch(dir);
            s.write("src/app.rs", "fn main() {}");
            s.write("public/sw.js", "self");
            s.write("target/debug/noise", "x");
            s.write("src/node_modules/dep.js", "ignored");
            s.write("dist/index.html", "<html>");
            s.write("dist/app.wasm", "wasm");
            s
        }

        fn write(&self, rel: &str, text: &str) {
            let p = self.0.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }

        fn snap(&self, hash: bool) -> Files {
            let entries = ["src".to_string(), "public".to_string(), "gone".to_string()];
            list_files(&self.0, &entries)
                .unwrap()
                .into_iter()
                .map(|rel| (rel.clone(), state(&self.0.join(&rel), hash).unwrap()))
                .collect()
        }

        fn dist(&self) -> Files {
            snapshot_dist(&self.0).unwrap()
        }

        fn judge(&self, built: &Files, built_dist: &Files) -> Freshness {
            compare(built, &self.snap(false), built_dist, &self.dist(), |rel| {
                hash_file(&self.0.join(rel))
            })
            .unwrap()
        }

        /// Moves a file's modification time, as a checkout or `touch` does.
        fn touch(&self, rel: &str) {
            let f = std::fs::File::options()
                .append(true)
                .open(self.0.join(rel))
                .unwrap();
            let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
            f.set_modified(later).unwrap();
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn inputs_skip_build_output_and_dependencies() {
        let s = Scratch::new();
        assert_eq!(
            s.snap(false).keys().collect::<Vec<_>>(),
            vec!["public/sw.js", "src/app.rs"]
        );
    }

    #[test]
    fn nothing_changed_is_current() {
        let s = Scratch::new();
        let (built, dist) = (s.snap(true), s.dist());
        assert_eq!(s.judge(&built, &dist), Freshness::Current);
    }

    #[test]
    fn same_bytes_with_a_new_time_is_current() {
        let s = Scratch::new();
        let (built, dist) = (s.snap(true), s.dist());
        s.touch("src/app.rs");
        assert_eq!(s.judge(&built, &dist), Freshness::Current);
    }

    #[test]
    fn an_edit_of_the_same_size_is_stale() {
        let s = Scratch::new();
        let (built, dist) = (s.snap(true), s.dist());
        s.write("src/app.rs", "fn mian() {}");
        s.touch("src/app.rs");
        assert_eq!(
            s.judge(&built, &dist),
            Freshness::Stale("src/app.rs changed".into())
        );
    }

    #[test]
    fn added_and_removed_inputs_are_stale() {
        let s = Scratch::new();
        let (built, dist) = (s.snap(true), s.dist());
        s.write("public/icon.svg", "<svg/>");
        assert_eq!(
            s.judge(&built, &dist),
            Freshness::Stale("public/icon.svg is new".into())
        );
        std::fs::remove_file(s.0.join("public/icon.svg")).unwrap();
        std::fs::remove_file(s.0.join("public/sw.js")).unwrap();
        assert_eq!(
            s.judge(&built, &dist),
            Freshness::Stale("public/sw.js was removed".into())
        );
    }

    #[test]
    fn a_changed_or_missing_dist_is_stale() {
        let s = Scratch::new();
        let (built, dist) = (s.snap(true), s.dist());
        s.write("dist/app.wasm", "a debug build");
        assert!(matches!(s.judge(&built, &dist), Freshness::Stale(w) if w.contains("dist/")));
        std::fs::remove_dir_all(s.0.join("dist")).unwrap();
        assert!(matches!(s.judge(&built, &dist), Freshness::Stale(w) if w.contains("dist/")));
    }

    #[test]
    fn changes_outside_the_inputs_do_not_count() {
        let s = Scratch::new();
        let (built, dist) = (s.snap(true), s.dist());
        s.write("target/debug/noise", "rebuilt");
        s.write("README.md", "docs");
        assert_eq!(s.judge(&built, &dist), Freshness::Current);
    }

    #[test]
    fn the_app_links_core_and_nothing_only_tests_use() {
        let root = crate::util::repo_root();
        let crates = linked_crates(&root).unwrap();
        assert!(crates.contains(&"crates/core".to_string()), "{crates:?}");
        assert!(
            !crates
                .iter()
                .any(|c| c.contains("proxy") || c.contains("testkit"))
        );
    }

    #[test]
    fn every_file_index_html_hands_trunk_is_an_input() {
        let root = crate::util::repo_root();
        let html = std::fs::read_to_string(root.join("index.html")).unwrap();
        let inputs = input_entries(&root).unwrap();
        for tag in html.split('<').filter(|t| t.contains("data-trunk")) {
            let Some(href) = tag
                .split("href=\"")
                .nth(1)
                .and_then(|h| h.split('"').next())
            else {
                continue;
            };
            assert!(
                inputs
                    .iter()
                    .any(|i| href == i || href.starts_with(&format!("{i}/"))),
                "index.html hands trunk {href}, which the staleness rule does not read"
            );
        }
    }
}
