//! A skill package: SKILL.md and every other file in its folder, held in
//! memory, with binary files flagged so they are never sent to a model.

use serde::{Deserialize, Serialize};

use super::extensions::{self, ScopedResource, ScopedTool};
pub use super::file::{FileKind, PackageFile, classify};
use super::properties::{self, SkillMdSource, SkillProperties};
use super::{Problem, Severity, ValidationMode, paths};

/// The most files one package may hold.
pub const MAX_PACKAGE_FILES: usize = 2_000;
/// The largest single file kept, in bytes.
pub const MAX_FILE_BYTES: usize = 16 * 1024 * 1024;
/// The most bytes one package may hold in all.
pub const MAX_PACKAGE_BYTES: usize = 64 * 1024 * 1024;
/// The largest SKILL.md read, in bytes.
pub const MAX_SKILL_MD_BYTES: usize = 1024 * 1024;

/// File names that make a folder a skill, in order of preference. The
/// reference tool accepts the lowercase spelling too.
pub const SKILL_FILE_NAMES: [&str; 2] = ["SKILL.md", "skill.md"];

/// A loaded skill: its properties, instructions, files and Hearth
/// extensions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkillPackage {
    /// The folder's name: what `name` must match, and the top folder of an
    /// exported zip.
    pub folder: String,
    pub properties: SkillProperties,
    /// The Markdown instructions after the frontmatter.
    pub body: String,
    /// Every file, SKILL.md included, sorted by path.
    pub files: Vec<PackageFile>,
    /// Scoped tools from `tools.json`.
    pub tools: Vec<ScopedTool>,
    /// Scoped resources from `resources.json`.
    pub resources: Vec<ScopedResource>,
}

impl SkillPackage {
    pub fn name(&self) -> &str {
        &self.properties.name
    }

    pub fn file(&self, path: &str) -> Option<&PackageFile> {
        self.files
            .binary_search_by(|f| f.path.as_str().cmp(path))
            .ok()
            .map(|i| &self.files[i])
    }

    /// The path of the SKILL.md inside the package.
    pub fn skill_file(&self) -> &str {
        SKILL_FILE_NAMES
            .iter()
            .find(|n| self.file(n).is_some())
            .copied()
            .unwrap_or("SKILL.md")
    }

    pub fn tool(&self, name: &str) -> Option<&ScopedTool> {
        self.tools.iter().find(|t| t.name == name)
    }

    pub fn total_bytes(&self) -> usize {
        self.files.iter().map(|f| f.bytes.len()).sum()
    }
}

/// What loading one package gave.
#[derive(Clone, Debug, PartialEq)]
pub struct PackageOutcome {
    /// `None` when the package cannot be used (see `problems`).
    pub package: Option<SkillPackage>,
    pub problems: Vec<Problem>,
}

/// Where a package's files came from, for messages and the name check.
#[derive(Clone, Copy, Debug)]
pub struct PackageSource<'a> {
    /// The folder's name; `None` when unknown (a bare SKILL.md at the root
    /// of an unnamed upload), which skips the name-matches-folder rule.
    pub folder: Option<&'a str>,
    /// Prefixed to file paths in problems, e.g. `skills/pdf-tools/`.
    pub display_prefix: &'a str,
}

/// Builds a package from its files (paths relative to the package
/// folder). Strict mode reports every violation; lenient mode loads what
/// the client guide says clients should load. In both modes the package is
/// returned whenever a name and a description could be read, so strict
/// callers (the validator, the editor) must look at `problems` too.
pub fn load_package(
    files: Vec<PackageFile>,
    source: PackageSource<'_>,
    mode: ValidationMode,
) -> PackageOutcome {
    let mut problems = Vec::new();
    let display = |path: &str| format!("{}{}", source.display_prefix, path);

    let mut files = files;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files.dedup_by(|later, earlier| later.path == earlier.path);

    // Every path passes the one gate, whoever made the list: a scan, an
    // archive, the editor, or records restored from a backup.
    let before = problems.len();
    for f in &files {
        let shown = f.path.escape_debug().to_string();
        match paths::normalize(&f.path) {
            Ok(plain) if plain == f.path => {}
            Ok(plain) => problems.push(Problem::new(
                Severity::Error,
                display(&shown),
                format!("the file path is not in its plain form ('{plain}'); a package holds plain paths only"),
            )),
            Err(e) => problems.push(Problem::new(
                Severity::Error,
                display(&shown),
                format!("the file path is refused: {e}"),
            )),
        }
    }
    if problems.len() > before {
        return PackageOutcome {
            package: None,
            problems,
        };
    }

    let Some(skill_md) = SKILL_FILE_NAMES
        .iter()
        .find_map(|n| files.iter().find(|f| f.path == *n))
    else {
        problems.push(Problem::new(
            Severity::Error,
            display("SKILL.md"),
            "missing required file: SKILL.md",
        ));
        return PackageOutcome {
            package: None,
            problems,
        };
    };
    let skill_md_display = display(&skill_md.path);
    if skill_md.bytes.len() > MAX_SKILL_MD_BYTES {
        problems.push(Problem::new(
            Severity::Error,
            skill_md_display,
            format!(
                "the file is {} bytes; at most {MAX_SKILL_MD_BYTES} are read",
                skill_md.bytes.len()
            ),
        ));
        return PackageOutcome {
            package: None,
            problems,
        };
    }
    let Ok(text) = std::str::from_utf8(&skill_md.bytes) else {
        problems.push(Problem::new(
            Severity::Error,
            skill_md_display,
            "the file is not UTF-8 text",
        ));
        return PackageOutcome {
            package: None,
            problems,
        };
    };
    let parsed = properties::parse_skill_md(
        SkillMdSource {
            text,
            file: &skill_md_display,
            folder: source.folder,
        },
        mode,
    );
    problems.extend(parsed.problems);

    let total: usize = files.iter().map(|f| f.bytes.len()).sum();
    if files.len() > MAX_PACKAGE_FILES {
        problems.push(Problem::new(
            Severity::Error,
            display(""),
            format!(
                "the package has {} files; at most {MAX_PACKAGE_FILES} are allowed",
                files.len()
            ),
        ));
        return PackageOutcome {
            package: None,
            problems,
        };
    }
    if total > MAX_PACKAGE_BYTES {
        problems.push(Problem::new(
            Severity::Error,
            display(""),
            format!("the package holds {total} bytes; at most {MAX_PACKAGE_BYTES} are allowed"),
        ));
        return PackageOutcome {
            package: None,
            problems,
        };
    }

    let (tools, tool_problems) = extensions::load_tools(&files, source.display_prefix, mode);
    problems.extend(tool_problems);
    let (resources, resource_problems) =
        extensions::load_resources(&files, source.display_prefix, mode);
    problems.extend(resource_problems);

    let package = parsed.properties.map(|properties| SkillPackage {
        folder: source
            .folder
            .map(str::to_string)
            .unwrap_or_else(|| properties.name.clone()),
        properties,
        body: parsed.body,
        files,
        tools,
        resources,
    });
    PackageOutcome { package, problems }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Files that come from storage (a restored backup) rather than a scan
    /// or an archive pass the same path gate: a package holding a path
    /// that is not plain, normal and inside the package does not load.
    #[test]
    fn every_file_path_passes_the_gate_whoever_loads_the_package() {
        let skill_md = || {
            PackageFile::new(
                "SKILL.md",
                b"---\nname: reader\ndescription: Reads.\n---\nRead.\n".to_vec(),
            )
        };
        let load = |path: &str| {
            load_package(
                vec![skill_md(), PackageFile::new(path, b"print(1)".to_vec())],
                PackageSource {
                    folder: Some("reader"),
                    display_prefix: "",
                },
                ValidationMode::Lenient,
            )
        };
        for bad in [
            "../../escape.py",
            "scripts/../../escape.py",
            "/etc/passwd",
            "scripts\\run.py",
            "%2e%2e/escape.py",
            "C:/Windows/run.py",
            "scripts//run.py",
            "./scripts/run.py",
            "scripts/./run.py",
            "scripts/run.py/",
            "scripts/\u{202e}yp.run",
            "",
        ] {
            let out = load(bad);
            assert_eq!(out.package, None, "{bad:?} was let in");
            assert!(
                out.problems
                    .iter()
                    .any(|p| p.severity == Severity::Error && p.message.contains("path")),
                "{bad:?}: {:?}",
                out.problems
            );
        }
        let fine = load("scripts/run.py");
        assert!(fine.package.is_some(), "{:?}", fine.problems);
    }
}
