//! Finding skills in a tree of files: a picked folder, a dropped folder, or
//! an unpacked archive, given as relative paths and bytes.
//!
//! A folder is a skill when it holds `SKILL.md` (or `skill.md`). Folders
//! are searched up to [`MAX_SCAN_DEPTH`] deep; `node_modules` and `.git` are
//! skipped, hidden folders such as `.curated` are not. A skill folder inside
//! another skill folder is a skill of its own, and its files do not belong
//! to the outer one. One bad skill never hides the others: the outcome
//! holds every package that loaded and every problem found.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::package::{self, PackageFile, PackageSource, SKILL_FILE_NAMES, SkillPackage};
use super::{Problem, Severity, ValidationMode, paths};

/// How many folders below the scanned root a SKILL.md may sit.
pub const MAX_SCAN_DEPTH: usize = 6;
/// The most files one scan looks at.
pub const MAX_SCAN_FILES: usize = 20_000;
/// Folders that never hold skills.
pub const SKIPPED_FOLDERS: [&str; 2] = ["node_modules", ".git"];

/// A file handed in for scanning.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceFile {
    /// Relative to the scanned root, `/`-separated.
    pub path: String,
    pub bytes: Vec<u8>,
}

impl SourceFile {
    pub fn new(path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        Self {
            path: path.into(),
            bytes: bytes.into(),
        }
    }
}

/// Every skill that loaded, and every problem, in path order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadOutcome {
    pub packages: Vec<SkillPackage>,
    pub problems: Vec<Problem>,
}

impl LoadOutcome {
    pub fn errors(&self) -> impl Iterator<Item = &Problem> {
        self.problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
    }
}

/// Options for [`scan`].
#[derive(Clone, Debug)]
pub struct ScanOptions {
    pub mode: ValidationMode,
    /// The name of the scanned folder itself (or the archive's stem), used
    /// when SKILL.md sits at the root.
    pub root_name: Option<String>,
}

/// Finds and loads every skill in `files`.
pub fn scan(files: Vec<SourceFile>, options: &ScanOptions) -> LoadOutcome {
    let mut problems = Vec::new();
    if files.len() > MAX_SCAN_FILES {
        problems.push(Problem::new(
            Severity::Error,
            "",
            format!(
                "{} files were given; at most {MAX_SCAN_FILES} are scanned",
                files.len()
            ),
        ));
        return LoadOutcome {
            packages: Vec::new(),
            problems,
        };
    }

    // Normalise every path once; drop what cannot be a package file.
    let mut tree: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for file in files {
        let path = match paths::normalize_import(&file.path) {
            Ok(p) => p,
            Err(e) => {
                problems.push(Problem::new(
                    Severity::Warning,
                    file.path.escape_debug().to_string(),
                    format!("skipped: {e}"),
                ));
                continue;
            }
        };
        if path.split('/').any(|part| SKIPPED_FOLDERS.contains(&part)) {
            continue;
        }
        if file.bytes.len() > package::MAX_FILE_BYTES {
            problems.push(Problem::new(
                Severity::Warning,
                path,
                format!(
                    "skipped: the file is {} bytes; at most {} are kept",
                    file.bytes.len(),
                    package::MAX_FILE_BYTES
                ),
            ));
            continue;
        }
        tree.insert(path, file.bytes);
    }

    // Skill folders: those holding SKILL.md, or skill.md without SKILL.md.
    let mut skill_dirs: Vec<String> = Vec::new();
    for path in tree.keys() {
        let name = paths::file_name(path);
        let dir = paths::parent(path);
        let is_skill_file = name == SKILL_FILE_NAMES[0]
            || (name == SKILL_FILE_NAMES[1] && !tree.contains_key(&join(dir, SKILL_FILE_NAMES[0])));
        if !is_skill_file {
            continue;
        }
        let depth = if dir.is_empty() {
            0
        } else {
            dir.split('/').count()
        };
        if depth > MAX_SCAN_DEPTH {
            problems.push(Problem::new(
                Severity::Warning,
                path.clone(),
                format!(
                    "not loaded: the skill is {depth} folders deep; skills are looked for at most {MAX_SCAN_DEPTH} deep"
                ),
            ));
            continue;
        }
        skill_dirs.push(dir.to_string());
    }
    skill_dirs.sort();
    skill_dirs.dedup();

    if skill_dirs.is_empty() {
        problems.push(Problem::new(
            Severity::Error,
            options.root_name.clone().unwrap_or_default(),
            "no skill found: no folder holds a SKILL.md",
        ));
        return LoadOutcome {
            packages: Vec::new(),
            problems,
        };
    }

    let mut packages: Vec<SkillPackage> = Vec::new();
    // The folder each loaded package came from, for collision messages.
    let mut origins: Vec<String> = Vec::new();
    for dir in &skill_dirs {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        // Nested skill folders own their own files.
        let nested: Vec<String> = skill_dirs
            .iter()
            .filter(|other| *other != dir && (dir.is_empty() || other.starts_with(&prefix)))
            .map(|other| format!("{other}/"))
            .collect();
        // Each file belongs to one package, so it is moved out, not copied.
        let paths: Vec<String> = tree
            .range(prefix.clone()..)
            .take_while(|(path, _)| path.starts_with(&prefix))
            .filter(|(path, _)| !nested.iter().any(|n| path.starts_with(n.as_str())))
            .map(|(path, _)| path.clone())
            .collect();
        let files: Vec<PackageFile> = paths
            .into_iter()
            .filter_map(|path| tree.remove_entry(&path))
            .map(|(path, bytes)| PackageFile::new(&path[prefix.len()..], bytes))
            .collect();
        let folder = if dir.is_empty() {
            options.root_name.clone()
        } else {
            Some(paths::file_name(dir).to_string())
        };
        let outcome = package::load_package(
            files,
            PackageSource {
                folder: folder.as_deref(),
                display_prefix: &prefix,
            },
            options.mode,
        );
        problems.extend(outcome.problems);
        let Some(pkg) = outcome.package else {
            continue;
        };
        if let Some(i) = packages.iter().position(|p| p.name() == pkg.name()) {
            let first_dir = if origins[i].is_empty() {
                "."
            } else {
                origins[i].as_str()
            };
            problems.push(Problem::new(
                Severity::Warning,
                format!("{prefix}{}", pkg.skill_file()),
                format!(
                    "not loaded: a skill named '{}' was already loaded from '{first_dir}'",
                    pkg.name(),
                ),
            ));
            continue;
        }
        origins.push(dir.clone());
        packages.push(pkg);
    }
    LoadOutcome { packages, problems }
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(path: &str, name: &str) -> SourceFile {
        SourceFile::new(
            path,
            format!("---\nname: {name}\ndescription: The {name} skill.\n---\nBody\n"),
        )
    }

    fn scan_names(files: Vec<SourceFile>, root: Option<&str>) -> (Vec<String>, Vec<String>) {
        let out = scan(
            files,
            &ScanOptions {
                mode: ValidationMode::Lenient,
                root_name: root.map(str::to_string),
            },
        );
        (
            out.packages
                .iter()
                .map(|p| format!("{} {}", p.name(), p.files.len()))
                .collect(),
            out.problems.iter().map(ToString::to_string).collect(),
        )
    }

    #[test]
    fn git_and_node_modules_are_skipped_hidden_folders_are_not() {
        let (names, problems) = scan_names(
            vec![
                skill(".git/hooks/a/SKILL.md", "a"),
                skill("x/node_modules/b/SKILL.md", "b"),
                skill(".curated/c/SKILL.md", "c"),
                SourceFile::new(".curated/c/.env.example", "KEY=\n"),
                SourceFile::new("c/.git/config", "[core]\n"),
            ],
            None,
        );
        assert_eq!(names, vec!["c 2"]);
        assert_eq!(problems, Vec::<String>::new());
    }

    #[test]
    fn a_skill_at_the_root_takes_the_root_name() {
        let (names, problems) = scan_names(
            vec![
                skill("SKILL.md", "my-skill"),
                SourceFile::new("notes.md", "n"),
            ],
            Some("my-skill"),
        );
        assert_eq!((names, problems), (vec!["my-skill 2".to_string()], vec![]));
        let (_, problems) = scan_names(vec![skill("SKILL.md", "my-skill")], Some("other"));
        assert_eq!(
            problems,
            vec!["SKILL.md:2: name: 'my-skill' does not match the folder name 'other'"]
        );
    }

    #[test]
    fn nothing_to_load_is_an_error_and_bad_paths_are_skipped() {
        let (names, problems) = scan_names(
            vec![
                SourceFile::new("README.md", "# hi"),
                SourceFile::new("../x/SKILL.md", ""),
            ],
            Some("upload"),
        );
        assert_eq!(names, Vec::<String>::new());
        assert_eq!(
            problems,
            vec![
                "../x/SKILL.md: skipped: '..' is not allowed: paths must stay inside the skill's folder",
                "upload: no skill found: no folder holds a SKILL.md",
            ]
        );
    }
}
