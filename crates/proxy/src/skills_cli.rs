//! `hearth skills ...`: the registry from the same core definitions the app
//! uses, and the Agent Skills author tools (`validate`, `read-properties`,
//! `to-prompt`) mirroring the reference tool `skills-ref`.
//!
//! The disk is read here; everything else is hearth-core, the same code
//! the app runs on files from the browser.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use hearth_core::SkillDefinition;
use hearth_core::agent_skills::catalog::{PromptEntry, render_reference_prompt};
use hearth_core::agent_skills::package::{
    self, MAX_FILE_BYTES, MAX_PACKAGE_FILES, PackageFile, PackageOutcome, PackageSource,
};
use hearth_core::agent_skills::scan::SKIPPED_FOLDERS;
use hearth_core::agent_skills::{Problem, Severity, ValidationMode};

#[derive(Subcommand)]
pub enum SkillsCommand {
    /// List every registered skill, or with --packages the Agent Skills
    /// packages found under the folders.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// List the packages under DIR, as the app's folder import finds
        /// them. Repeatable.
        #[arg(long = "packages", value_name = "DIR")]
        packages: Vec<PathBuf>,
    },
    /// Validate an Agent Skills folder against the specification: exit 0
    /// and "Valid skill: DIR", or exit 1 with one line per problem.
    Validate {
        /// The skill's folder (or its SKILL.md).
        skill_path: PathBuf,
    },
    /// Print a skill's frontmatter properties as JSON.
    ReadProperties {
        /// The skill's folder (or its SKILL.md).
        skill_path: PathBuf,
    },
    /// Print the <available_skills> XML block for agent prompts.
    ToPrompt {
        /// One or more skill folders (or their SKILL.md files).
        #[arg(required = true)]
        skill_paths: Vec<PathBuf>,
    },
    /// Rank skills for a request, as discover_skills does.
    Search(crate::skills_search::SearchArgs),
}

pub fn run(command: SkillsCommand) -> ExitCode {
    match command {
        SkillsCommand::List { json, packages } if !packages.is_empty() => {
            list_packages(&packages, json)
        }
        SkillsCommand::List { json, .. } => list(json),
        SkillsCommand::Validate { skill_path } => validate(&skill_path),
        SkillsCommand::ReadProperties { skill_path } => read_properties(&skill_path),
        SkillsCommand::ToPrompt { skill_paths } => to_prompt(&skill_paths),
        SkillsCommand::Search(args) => match hearth_core::builtin::registry() {
            Ok(registry) => crate::skills_search::run(&registry, args),
            Err(e) => {
                eprintln!("error: the built-in registry is inconsistent: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

fn list(json: bool) -> ExitCode {
    let registry = match hearth_core::builtin::registry() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: the built-in registry is inconsistent: {e}");
            return ExitCode::FAILURE;
        }
    };
    let skills: Vec<&SkillDefinition> = registry.iter().collect();
    let out = if json {
        list_json(&skills)
    } else {
        list_table(&skills)
    };
    let _ = std::io::stdout().write_all(out.as_bytes());
    ExitCode::SUCCESS
}

/// `hearth skills list --packages DIR...`: the packages the folders hold,
/// with the problems found on stderr. Exit 1 when none loaded.
fn list_packages(dirs: &[PathBuf], json: bool) -> ExitCode {
    let found = match crate::skills_packages::load_folders(dirs) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    for p in &found.problems {
        eprintln!("warning: {p}");
    }
    let out = packages_text(&found.packages, json);
    let _ = std::io::stdout().write_all(out.as_bytes());
    if found.packages.is_empty() {
        eprintln!(
            "no package found under {}",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn packages_text(packages: &[hearth_core::agent_skills::SkillPackage], json: bool) -> String {
    if json {
        let items: Vec<serde_json::Value> = packages
            .iter()
            .map(|p| {
                serde_json::json!({
                    "name": p.name(),
                    "description": p.properties.catalog_description(),
                    "folder": p.folder,
                    "files": p.files.len(),
                    "model_invocable": p.properties.model_invocable(),
                })
            })
            .collect();
        let mut text = serde_json::to_string_pretty(&items).unwrap_or_default();
        text.push('\n');
        return text;
    }
    let mut out = format!("{:<32} {:>5}  DESCRIPTION\n", "NAME", "FILES");
    for p in packages {
        let description: String = p.properties.description.chars().take(80).collect();
        out.push_str(&format!(
            "{:<32} {:>5}  {}\n",
            p.name(),
            p.files.len(),
            description.replace('\n', " ")
        ));
    }
    out
}

/// A path given on the command line that names a SKILL.md stands for its
/// folder, as in `skills-ref`.
fn skill_dir(path: &Path) -> PathBuf {
    let is_skill_file = path.is_file()
        && path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().eq_ignore_ascii_case("skill.md"));
    match (is_skill_file, path.parent()) {
        (true, Some(parent)) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        (true, _) => PathBuf::from("."),
        (false, _) => path.to_path_buf(),
    }
}

/// Why a folder could not be read as a package.
#[derive(Debug, thiserror::Error)]
enum ReadError {
    #[error("Path does not exist: {0}")]
    Missing(String),
    #[error("Not a directory: {0}")]
    NotDirectory(String),
    #[error("cannot read {0}: {1}")]
    Io(String, std::io::Error),
}

/// The files of a skill folder, read from disk, with what was skipped.
/// Symbolic links are not followed, so nothing outside the folder is read.
fn read_package_dir(dir: &Path) -> Result<(Vec<PackageFile>, Vec<String>), ReadError> {
    let shown = dir.display().to_string();
    let meta = std::fs::metadata(dir).map_err(|_| ReadError::Missing(shown.clone()))?;
    if !meta.is_dir() {
        return Err(ReadError::NotDirectory(shown));
    }
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let mut stack: Vec<(PathBuf, String)> = vec![(dir.to_path_buf(), String::new())];
    while let Some((here, prefix)) = stack.pop() {
        let entries =
            std::fs::read_dir(&here).map_err(|e| ReadError::Io(here.display().to_string(), e))?;
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                skipped.push(format!(
                    "{prefix}{}: skipped: the name is not UTF-8",
                    name.to_string_lossy()
                ));
                continue;
            };
            let rel = format!("{prefix}{name}");
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                skipped.push(format!("{rel}: skipped: symbolic links are not followed"));
            } else if kind.is_dir() {
                if !SKIPPED_FOLDERS.contains(&name) {
                    stack.push((entry.path(), format!("{rel}/")));
                }
            } else if kind.is_file() {
                if files.len() > MAX_PACKAGE_FILES {
                    // load_package reports the count; stop reading here.
                    continue;
                }
                let len = entry.metadata().map(|m| m.len()).unwrap_or(0);
                if len > MAX_FILE_BYTES as u64 {
                    skipped.push(format!(
                        "{rel}: skipped: the file is {len} bytes; at most {MAX_FILE_BYTES} are kept"
                    ));
                    continue;
                }
                let bytes = std::fs::read(entry.path())
                    .map_err(|e| ReadError::Io(entry.path().display().to_string(), e))?;
                files.push(PackageFile::new(rel, bytes));
            }
        }
    }
    Ok((files, skipped))
}

/// The folder's own name, even for `.` or a path ending in `..`.
fn folder_name(dir: &Path) -> Option<String> {
    let canonical = std::fs::canonicalize(dir).ok()?;
    canonical
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
}

fn load(dir: &Path, mode: ValidationMode) -> Result<(PackageOutcome, Vec<String>), ReadError> {
    let (files, skipped) = read_package_dir(dir)?;
    let folder = folder_name(dir);
    let outcome = package::load_package(
        files,
        PackageSource {
            folder: folder.as_deref(),
            display_prefix: "",
        },
        mode,
    );
    Ok((outcome, skipped))
}

fn print_warnings(problems: &[Problem], skipped: &[String]) {
    for s in skipped {
        eprintln!("warning: {s}");
    }
    for p in problems.iter().filter(|p| p.severity == Severity::Warning) {
        eprintln!("warning: {p}");
    }
}

fn validate(path: &Path) -> ExitCode {
    let dir = skill_dir(path);
    let shown = dir.display().to_string();
    let (errors, warnings, skipped) = match load(&dir, ValidationMode::Strict) {
        Ok((outcome, skipped)) => {
            let (errors, warnings): (Vec<Problem>, Vec<Problem>) = outcome
                .problems
                .into_iter()
                .partition(|p| p.severity == Severity::Error);
            (
                errors.iter().map(ToString::to_string).collect(),
                warnings,
                skipped,
            )
        }
        Err(e) => (vec![e.to_string()], Vec::new(), Vec::new()),
    };
    if errors.is_empty() {
        println!("Valid skill: {shown}");
        print_warnings(&warnings, &skipped);
        ExitCode::SUCCESS
    } else {
        let mut text = format!("Validation failed for {shown}:\n");
        for e in &errors {
            text.push_str(&format!("  - {e}\n"));
        }
        let _ = std::io::stderr().write_all(text.as_bytes());
        print_warnings(&warnings, &skipped);
        ExitCode::FAILURE
    }
}

/// Loads a skill leniently, as `read-properties` and `to-prompt` do: it
/// fails only where a client would skip the skill.
fn load_lenient(path: &Path) -> Result<(PathBuf, hearth_core::agent_skills::SkillPackage), String> {
    let dir = skill_dir(path);
    let (outcome, skipped) = load(&dir, ValidationMode::Lenient).map_err(|e| e.to_string())?;
    print_warnings(&outcome.problems, &skipped);
    match outcome.package {
        Some(p) => Ok((dir, p)),
        None => Err(outcome
            .problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")),
    }
}

fn read_properties(path: &Path) -> ExitCode {
    match load_lenient(path) {
        Ok((_, package)) => {
            println!("{}", package.properties.to_json_pretty());
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("Error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn to_prompt(paths: &[PathBuf]) -> ExitCode {
    let mut entries = Vec::new();
    for path in paths {
        match load_lenient(path) {
            Ok((dir, package)) => {
                let skill_file = dir.join(package.skill_file());
                let location = std::fs::canonicalize(&skill_file).unwrap_or(skill_file);
                entries.push(PromptEntry {
                    name: package.properties.name.clone(),
                    description: package.properties.description.clone(),
                    location: location.display().to_string(),
                });
            }
            Err(message) => {
                eprintln!("Error: {message}");
                return ExitCode::FAILURE;
            }
        }
    }
    println!("{}", render_reference_prompt(&entries));
    ExitCode::SUCCESS
}

fn list_json(skills: &[&SkillDefinition]) -> String {
    let items: Vec<serde_json::Value> = skills
        .iter()
        .map(|s| {
            serde_json::json!({
                "id": s.id,
                "name": s.name,
                "tier": s.tier,
                "category": s.category,
                "default_enabled": s.default_enabled,
                "requires_approval": s.requires_approval,
                "requires_network": s.requires_network,
                "tags": s.tags,
                "examples": s.examples,
                "input_schema": s.input_schema,
            })
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&items).unwrap_or_default();
    text.push('\n');
    text
}

fn list_table(skills: &[&SkillDefinition]) -> String {
    let mut out = format!(
        "{:<16} {:<14} {:<12} {:<9} {:<9} TAGS\n",
        "ID", "NAME", "TIER", "ENABLED", "APPROVAL"
    );
    for s in skills {
        out.push_str(&format!(
            "{:<16} {:<14} {:<12} {:<9} {:<9} {}\n",
            s.id.as_str(),
            s.name,
            s.tier.as_str(),
            if s.default_enabled { "on" } else { "off" },
            if s.requires_approval { "asks" } else { "no" },
            s.tags.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lists_the_core_definitions() {
        let registry = hearth_core::builtin::registry().unwrap();
        let skills: Vec<&SkillDefinition> = registry.iter().collect();
        let v: serde_json::Value = serde_json::from_str(&list_json(&skills)).unwrap();
        // discover_skills comes first in the registry; find the calculator.
        let calc = v
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == "calculator")
            .unwrap();
        assert_eq!(v[0]["id"], "discover_skills");
        assert_eq!(calc["id"], "calculator");
        assert_eq!(calc["tier"], "core");
        assert_eq!(calc["default_enabled"], true);
        assert_eq!(calc["input_schema"]["required"][0], "expression");
        assert!(!calc["examples"].as_array().unwrap().is_empty());
    }

    #[test]
    fn table_has_a_row_per_skill() {
        let registry = hearth_core::builtin::registry().unwrap();
        let skills: Vec<&SkillDefinition> = registry.iter().collect();
        let table = list_table(&skills);
        assert_eq!(table.lines().count(), 1 + skills.len());
        assert!(table.lines().nth(1).unwrap().starts_with("discover_skills"));
        assert!(table.lines().any(|l| l.starts_with("calculator ")));
    }

    #[test]
    fn packages_are_listed_by_name() {
        let dir = tempfile::tempdir().unwrap();
        for (name, description) in [("b-pack", "Second."), ("a-pack", "First.")] {
            let pkg = dir.path().join(name);
            std::fs::create_dir_all(&pkg).unwrap();
            std::fs::write(
                pkg.join("SKILL.md"),
                format!("---\nname: {name}\ndescription: {description}\n---\n"),
            )
            .unwrap();
        }
        let found = crate::skills_packages::load_folders(&[dir.path()]).unwrap();
        let table = packages_text(&found.packages, false);
        let rows: Vec<&str> = table
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        assert_eq!(rows, ["a-pack", "b-pack"]);
        let v: serde_json::Value =
            serde_json::from_str(&packages_text(&found.packages, true)).unwrap();
        assert_eq!(v[0]["name"], "a-pack");
        assert_eq!(v[0]["description"], "First.");
        assert_eq!(v[1]["model_invocable"], true);
    }

    #[test]
    fn a_skill_md_path_stands_for_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        let skill = dir.path().join("my-skill");
        std::fs::create_dir(&skill).unwrap();
        std::fs::write(skill.join("SKILL.md"), "x").unwrap();
        assert_eq!(skill_dir(&skill.join("SKILL.md")), skill);
        assert_eq!(skill_dir(&skill), skill);
        assert_eq!(
            skill_dir(Path::new("missing/SKILL.md")),
            Path::new("missing/SKILL.md")
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_out_of_the_folder_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("secret.txt");
        std::fs::write(&outside, "secret").unwrap();
        let skill = dir.path().join("my-skill");
        std::fs::create_dir_all(skill.join("node_modules/x")).unwrap();
        std::fs::write(skill.join("SKILL.md"), "x").unwrap();
        std::fs::write(skill.join("node_modules/x/a.js"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, skill.join("link.txt")).unwrap();
        let (files, skipped) = read_package_dir(&skill).unwrap();
        assert_eq!(
            files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
            vec!["SKILL.md"]
        );
        assert_eq!(
            skipped,
            vec!["link.txt: skipped: symbolic links are not followed"]
        );
    }
}
