//! Agent Skills packages from folders on disk, found the way the app's
//! folder import finds them: the folder's files are read (no symbolic
//! links, no `node_modules` or `.git`, no file over the size limit) under
//! the folder's own name, and core's lenient scan loads every SKILL.md
//! folder in them. One bad package never hides the others.

use std::path::Path;

use hearth_core::agent_skills::package::MAX_FILE_BYTES;
use hearth_core::agent_skills::scan::{
    self, MAX_SCAN_DEPTH, MAX_SCAN_FILES, SKIPPED_FOLDERS, ScanOptions, SourceFile,
};
use hearth_core::agent_skills::{LoadOutcome, SkillPackage, ValidationMode, paths};

/// Why a folder could not be read at all.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum FolderError {
    #[error("{0}: no such folder")]
    Missing(String),
    #[error("{0}: not a folder")]
    NotFolder(String),
    #[error("cannot read {path}: {reason}")]
    Io { path: String, reason: String },
}

/// The packages of one or more folders, and what was wrong on the way.
#[derive(Debug, Default)]
pub struct Found {
    /// Every package that loaded; a later folder's package replaces an
    /// earlier one of the same name, as a later import does in the app.
    pub packages: Vec<SkillPackage>,
    /// Problems as `file: message` lines (skipped files, packages that did
    /// not load, warnings).
    pub problems: Vec<String>,
}

/// The files under `dir`, named `<dir's name>/…` like a picked folder.
fn read_tree(dir: &Path) -> Result<(Vec<SourceFile>, Vec<String>), FolderError> {
    let shown = dir.display().to_string();
    let meta = std::fs::metadata(dir).map_err(|_| FolderError::Missing(shown.clone()))?;
    if !meta.is_dir() {
        return Err(FolderError::NotFolder(shown));
    }
    let root = std::fs::canonicalize(dir)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "skills".to_string());
    let max_depth = MAX_SCAN_DEPTH + paths::MAX_DEPTH;
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), root, 0usize)];
    while let Some((here, prefix, depth)) = stack.pop() {
        let io = |e: std::io::Error| FolderError::Io {
            path: here.display().to_string(),
            reason: e.to_string(),
        };
        let mut entries: Vec<_> = std::fs::read_dir(&here)
            .map_err(io)?
            .filter_map(Result::ok)
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = format!("{prefix}/{name}");
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                skipped.push(format!("{rel}: skipped: symbolic links are not followed"));
            } else if kind.is_dir() {
                if !SKIPPED_FOLDERS.contains(&name.as_str()) && depth < max_depth {
                    stack.push((entry.path(), rel, depth + 1));
                }
            } else if kind.is_file() {
                if files.len() >= MAX_SCAN_FILES {
                    skipped.push(format!(
                        "{rel}: skipped: at most {MAX_SCAN_FILES} files are read from one folder"
                    ));
                    return Ok((files, skipped));
                }
                let len = entry.metadata().map(|m| m.len()).unwrap_or(0);
                if len > MAX_FILE_BYTES as u64 {
                    skipped.push(format!(
                        "{rel}: skipped: the file is {len} bytes; at most {MAX_FILE_BYTES} are kept"
                    ));
                    continue;
                }
                let bytes = std::fs::read(entry.path()).map_err(|e| FolderError::Io {
                    path: entry.path().display().to_string(),
                    reason: e.to_string(),
                })?;
                files.push(SourceFile::new(rel, bytes));
            }
        }
    }
    Ok((files, skipped))
}

/// Loads every package under each of `dirs`, leniently, as the app's
/// folder import does.
pub fn load_folders(dirs: &[impl AsRef<Path>]) -> Result<Found, FolderError> {
    let mut found = Found::default();
    for dir in dirs {
        let (files, skipped) = read_tree(dir.as_ref())?;
        found.problems.extend(skipped);
        let LoadOutcome { packages, problems } = scan::scan(
            files,
            &ScanOptions {
                mode: ValidationMode::Lenient,
                root_name: None,
            },
        );
        found
            .problems
            .extend(problems.iter().map(ToString::to_string));
        for package in packages {
            found.packages.retain(|p| p.name() != package.name());
            found.packages.push(package);
        }
    }
    found.packages.sort_by(|a, b| a.name().cmp(b.name()));
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }

    #[test]
    fn finds_packages_like_the_folder_import_and_reports_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("team");
        write(
            &root,
            "pdf-tools/SKILL.md",
            "---\nname: pdf-tools\ndescription: Fill PDF forms.\n---\n# Forms\n",
        );
        write(
            &root,
            ".curated/deep/notes/SKILL.md",
            "---\nname: notes\ndescription: Keep notes.\n---\n",
        );
        write(
            &root,
            "broken/SKILL.md",
            "---\nname: broken\n---\nno description\n",
        );
        write(
            &root,
            "node_modules/x/SKILL.md",
            "---\nname: x\ndescription: never read\n---\n",
        );
        let found = load_folders(&[&root]).unwrap();
        let names: Vec<&str> = found.packages.iter().map(|p| p.name()).collect();
        assert_eq!(names, ["notes", "pdf-tools"]);
        assert!(
            found
                .problems
                .iter()
                .any(|p| p.starts_with("team/broken/SKILL.md")),
            "{:?}",
            found.problems
        );
        // A later folder's package of the same name replaces the earlier.
        let other = dir.path().join("other");
        write(
            &other,
            "notes/SKILL.md",
            "---\nname: notes\ndescription: Keep better notes.\n---\n",
        );
        let found = load_folders(&[&root, &other]).unwrap();
        let notes = found.packages.iter().find(|p| p.name() == "notes").unwrap();
        assert_eq!(notes.properties.description, "Keep better notes.");
        assert_eq!(
            load_folders(&[dir.path().join("missing")]).unwrap_err(),
            FolderError::Missing(dir.path().join("missing").display().to_string())
        );
    }
}
