//! Helpers for tests of this crate and the crates above it (behind the
//! `testing` feature, which only dev-dependencies turn on): reading a
//! fixture folder into the in-memory files everything here works on, and
//! comparing whole outputs with files that `UPDATE_FIXTURES=1` rewrites.

use std::path::Path;

use crate::SourceFile;

/// Every file under `root`, with `/`-separated paths relative to it,
/// sorted.
pub fn read_tree(root: &Path) -> Vec<SourceFile> {
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<SourceFile>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(root, &path, out);
        } else {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            out.push(SourceFile::new(rel, std::fs::read(&path).unwrap()));
        }
    }
}

/// Compares `actual` with the file at `expected_path`; with
/// `UPDATE_FIXTURES=1` writes it instead.
pub fn check_file(expected_path: &Path, actual: &str) {
    if std::env::var_os("UPDATE_FIXTURES").is_some() {
        std::fs::write(expected_path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(expected_path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_FIXTURES=1 to create it)",
            expected_path.display()
        )
    });
    assert_eq!(
        actual,
        expected,
        "output differs from {} (run with UPDATE_FIXTURES=1 to accept)",
        expected_path.display()
    );
}
