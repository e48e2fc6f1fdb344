//! `cargo xtask precache [DIR]`: after every trunk build (a post_build hook
//! in Trunk.toml runs it on trunk's staging folder, where it first splits
//! the app's module into lazily loaded chunks, `split.rs`), lists every
//! file of the build with its SHA-256 and size, writes that list into the service worker
//! (`sw.js`), and stamps the build's id into `index.html`. The service
//! worker precaches exactly this list, so it is never maintained by hand.
//!
//! Files under `pyodide/` form the Python runtime group, files under
//! `llama/` the in-tab model engine group, and the chunks of features a
//! person turns on (sync, [`ON_USE_CHUNKS`]) the on-use group; the worker
//! caches each on first use (never at install), so a person who never
//! turns sync on never downloads its code. Everything else is the app
//! shell. `sw.js` itself is never listed.

use std::path::{Path, PathBuf};

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::util::Failure;

/// The line in `sw.js` the list replaces.
pub const SW_MARKER: &str = "self.HEARTH_BUILD = null;";
/// How the list's line starts, before and after it is written, so a build
/// can be listed again after a change (tests make "the next version" so).
const SW_LIST_PREFIX: &str = "self.HEARTH_BUILD = ";
/// The token in `index.html` the build id replaces.
#[cfg(test)]
const BUILD_MARKER: &str = "hearth-build-dev";
const BUILD_META: &str = "name=\"hearth-build\" content=\"";

/// `html` with the build meta's content set to `id` (the dev marker or an
/// earlier id alike); `None` without the meta.
fn stamp_build_id(html: &str, id: &str) -> Option<String> {
    let start = html.find(BUILD_META)? + BUILD_META.len();
    let end = start + html[start..].find('"')?;
    Some(format!("{}{id}{}", &html[..start], &html[end..]))
}
const PYTHON_DIR: &str = "pyodide/";
const TABMODEL_DIR: &str = "llama/";
/// Chunks (by the start of their file name) of features that stay off
/// until the person turns them on.
const ON_USE_CHUNKS: &[&str] = &["split_sync-"];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// `/path/from/the/root`.
    pub url: String,
    pub sha256: String,
    pub size: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Precache {
    pub id: String,
    pub python_id: String,
    pub tabmodel_id: String,
    pub on_use_id: String,
    pub shell: Vec<Listed>,
    pub python: Vec<Listed>,
    pub tabmodel: Vec<Listed>,
    pub on_use: Vec<Listed>,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn files_under(root: &Path) -> Result<Vec<PathBuf>, Failure> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| Failure::new(format!("cannot read {}: {e}", dir.display())))?;
        for entry in entries {
            let entry = entry.map_err(|e| Failure::new(e.to_string()))?;
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().to_string();
            if name.starts_with('.') {
                continue;
            }
            let kind = entry
                .file_type()
                .map_err(|e| Failure::new(format!("{}: {e}", path.display())))?;
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

fn url_of(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    format!("/{}", parts.join("/"))
}

fn listed(root: &Path, path: &Path) -> Result<Listed, Failure> {
    let bytes =
        std::fs::read(path).map_err(|e| Failure::new(format!("{}: {e}", path.display())))?;
    Ok(Listed {
        url: url_of(root, path),
        sha256: hex(&Sha256::digest(&bytes)),
        size: bytes.len() as u64,
    })
}

/// A short id over a list of files: changes when any file does.
fn id_of<'a>(files: impl Iterator<Item = &'a Listed>) -> String {
    let mut h = Sha256::new();
    for f in files {
        h.update(f.url.as_bytes());
        h.update(b" ");
        h.update(f.sha256.as_bytes());
        h.update(b"\n");
    }
    hex(&h.finalize())[..16].to_string()
}

/// Lists `dir`, stamps the build id into index.html and writes the list
/// into sw.js.
pub fn precache(dir: &Path) -> Result<Precache, Failure> {
    let index = dir.join("index.html");
    let sw = dir.join("sw.js");
    for needed in [&index, &sw] {
        if !needed.exists() {
            return Err(Failure::new(format!(
                "{} is missing; run this on a trunk build",
                needed.display()
            )));
        }
    }
    let mut shell = Vec::new();
    let mut python = Vec::new();
    let mut tabmodel = Vec::new();
    let mut on_use = Vec::new();
    for path in files_under(dir)? {
        let url = url_of(dir, &path);
        if url == "/sw.js" || url == "/index.html" {
            continue;
        }
        let file = listed(dir, &path)?;
        if url.starts_with(&format!("/{PYTHON_DIR}")) {
            python.push(file);
        } else if url.starts_with(&format!("/{TABMODEL_DIR}")) {
            tabmodel.push(file);
        } else if ON_USE_CHUNKS
            .iter()
            .any(|c| url.starts_with(&format!("/{c}")))
        {
            on_use.push(file);
        } else {
            shell.push(file);
        }
    }
    let id = id_of(
        shell
            .iter()
            .chain(python.iter())
            .chain(tabmodel.iter())
            .chain(on_use.iter()),
    );
    let python_id = id_of(python.iter());
    let tabmodel_id = id_of(tabmodel.iter());
    let on_use_id = id_of(on_use.iter());

    let html = std::fs::read_to_string(&index)
        .map_err(|e| Failure::new(format!("{}: {e}", index.display())))?;
    let script =
        std::fs::read_to_string(&sw).map_err(|e| Failure::new(format!("{}: {e}", sw.display())))?;
    let list_lines = script
        .lines()
        .filter(|l| l.starts_with(SW_LIST_PREFIX))
        .count();
    if list_lines != 1 {
        return Err(Failure::new(format!(
            "{} must hold the line `{SW_MARKER}` exactly once",
            sw.display()
        )));
    }
    let stamped = stamp_build_id(&html, &id).ok_or_else(|| {
        Failure::new(format!(
            "{} has no <meta name=\"hearth-build\" content=\"…\">; was it built from this repository's index.html?",
            index.display()
        ))
    })?;
    std::fs::write(&index, stamped)
        .map_err(|e| Failure::new(format!("{}: {e}", index.display())))?;
    shell.push(listed(dir, &index)?);
    shell.sort_by(|a, b| a.url.cmp(&b.url));

    let list = |files: &[Listed]| {
        files
            .iter()
            .map(|f| json!({"url": f.url, "sha256": f.sha256, "size": f.size}))
            .collect::<Vec<_>>()
    };
    let build = json!({
        "id": id,
        "python_id": python_id,
        "tabmodel_id": tabmodel_id,
        "on_use_id": on_use_id,
        "shell": list(&shell),
        "python": list(&python),
        "tabmodel": list(&tabmodel),
        "on_use": list(&on_use),
    });
    let script: String = script
        .lines()
        .map(|l| {
            if l.starts_with(SW_LIST_PREFIX) {
                format!("{SW_LIST_PREFIX}{build};\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(&sw, script).map_err(|e| Failure::new(format!("{}: {e}", sw.display())))?;
    Ok(Precache {
        id,
        python_id,
        tabmodel_id,
        on_use_id,
        shell,
        python,
        tabmodel,
        on_use,
    })
}

/// The folder to work on: an argument, else trunk's staging folder (in a
/// hook), else dist/.
pub fn run(args: &[String]) -> Result<(), Failure> {
    let dir = match args.first() {
        Some(d) => PathBuf::from(d),
        None => match std::env::var_os("TRUNK_STAGING_DIR") {
            Some(d) => {
                // In trunk's hook: split the module first, so the list
                // holds the chunks.
                let dir = PathBuf::from(d);
                let release = std::env::var("TRUNK_PROFILE").is_ok_and(|p| p == "release");
                crate::split::split(&dir, release)?;
                dir
            }
            None => crate::util::repo_root().join("dist"),
        },
    };
    let p = precache(&dir)?;
    let sum = |files: &[Listed]| files.iter().map(|f| f.size).sum::<u64>();
    println!(
        "precache: build {} — {} shell files ({:.1} KB), {} Python runtime files ({:.1} MB), {} in-tab model runtime files ({:.1} MB)",
        p.id,
        p.shell.len(),
        sum(&p.shell) as f64 / 1024.0,
        p.python.len(),
        sum(&p.python) as f64 / (1024.0 * 1024.0),
        p.tabmodel.len(),
        sum(&p.tabmodel) as f64 / (1024.0 * 1024.0)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SW: &str = "'use strict';\nself.HEARTH_BUILD = null;\nconst BUILD = self.HEARTH_BUILD;\n";
    const INDEX: &str =
        "<html><head><meta name=\"hearth-build\" content=\"hearth-build-dev\"></head></html>";

    fn build_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("hearth-precache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("icons")).unwrap();
        std::fs::create_dir_all(dir.join("pyodide")).unwrap();
        std::fs::create_dir_all(dir.join("llama")).unwrap();
        std::fs::write(dir.join("index.html"), INDEX).unwrap();
        std::fs::write(dir.join("sw.js"), SW).unwrap();
        std::fs::write(dir.join("hearth-app-0123456789abcdef_bg.wasm"), b"\0asm").unwrap();
        std::fs::write(dir.join("icons/icon-192.png"), b"png").unwrap();
        std::fs::write(dir.join("pyodide/pyodide.mjs"), b"export {}").unwrap();
        std::fs::write(dir.join("llama/hearth-llama.wasm"), b"\0asm1").unwrap();
        std::fs::write(dir.join(".DS_Store"), b"junk").unwrap();
        dir
    }

    fn sha(bytes: &[u8]) -> String {
        hex(&Sha256::digest(bytes))
    }

    #[test]
    fn every_file_is_listed_with_its_hash_and_the_worker_gets_the_list() {
        let dir = build_dir("list");
        let p = precache(&dir).unwrap();
        let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
        assert_eq!(html, INDEX.replace(BUILD_MARKER, &p.id));
        assert_eq!(
            p.shell,
            vec![
                Listed {
                    url: "/hearth-app-0123456789abcdef_bg.wasm".into(),
                    sha256: sha(b"\0asm"),
                    size: 4
                },
                Listed {
                    url: "/icons/icon-192.png".into(),
                    sha256: sha(b"png"),
                    size: 3
                },
                Listed {
                    url: "/index.html".into(),
                    sha256: sha(html.as_bytes()),
                    size: html.len() as u64
                },
            ]
        );
        assert_eq!(
            p.python,
            vec![Listed {
                url: "/pyodide/pyodide.mjs".into(),
                sha256: sha(b"export {}"),
                size: 9
            }]
        );
        let sw = std::fs::read_to_string(dir.join("sw.js")).unwrap();
        let line = sw.lines().nth(1).unwrap();
        let json = line
            .strip_prefix("self.HEARTH_BUILD = ")
            .and_then(|l| l.strip_suffix(';'))
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(v["id"], p.id.as_str());
        assert_eq!(v["shell"].as_array().unwrap().len(), 3);
        assert_eq!(v["python"][0]["url"], "/pyodide/pyodide.mjs");
        assert_eq!(
            p.tabmodel,
            vec![Listed {
                url: "/llama/hearth-llama.wasm".into(),
                sha256: sha(b"\0asm1"),
                size: 5
            }]
        );
        assert_eq!(v["tabmodel"][0]["url"], "/llama/hearth-llama.wasm");
        assert_eq!(v["tabmodel_id"], p.tabmodel_id.as_str());
        // Listing again (after a change) stamps the same build anew.
        let again = precache(&dir).unwrap();
        assert_eq!(again.id, p.id);
        let sw_again = std::fs::read_to_string(dir.join("sw.js")).unwrap();
        assert_eq!(sw_again.lines().count(), SW.lines().count());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_build_id_follows_the_content() {
        let a = precache(&build_dir("a")).unwrap();
        let b = precache(&build_dir("b")).unwrap();
        assert_eq!(a.id, b.id);
        assert_eq!(a.python_id, b.python_id);
        let dir = build_dir("c");
        std::fs::write(dir.join("icons/icon-192.png"), b"png2").unwrap();
        let c = precache(&dir).unwrap();
        assert_ne!(c.id, a.id);
        assert_eq!(c.python_id, a.python_id, "the runtime did not change");
        assert_eq!(c.tabmodel_id, a.tabmodel_id, "nor did the model engine");
        for name in ["a", "b", "c"] {
            std::fs::remove_dir_all(build_dir(name)).unwrap();
        }
    }

    #[test]
    fn a_build_without_markers_is_refused() {
        let dir = build_dir("nomarker");
        std::fs::write(dir.join("sw.js"), "// no marker").unwrap();
        let err = precache(&dir).unwrap_err();
        assert!(err.0.contains("exactly once"), "{err}");
        let dir = build_dir("nometa");
        std::fs::write(dir.join("index.html"), "<html></html>").unwrap();
        assert!(precache(&dir).unwrap_err().0.contains("hearth-build"));
        let dir = build_dir("noindex");
        std::fs::remove_file(dir.join("index.html")).unwrap();
        assert!(
            precache(&dir)
                .unwrap_err()
                .0
                .contains("index.html is missing")
        );
        for name in ["nomarker", "nometa", "noindex"] {
            std::fs::remove_dir_all(build_dir(name)).unwrap();
        }
    }
}
