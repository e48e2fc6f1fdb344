//! hearth-agent-skills: Agent Skills (agentskills.io) — reading,
//! validating and packaging SKILL.md skills, with Hearth's scoped tools and
//! resources on top. It knows nothing of Hearth's registry or call path:
//! hearth-core's `agent_skills` module adds the model's skill tools and
//! the prompts above it.
//!
//! Everything here works on files held in memory; nothing touches a disk.
//! The CLI reads folders and hands their files in; the app hands in what
//! the File System Access API, a file input or a zip gave it.
//!
//! - [`properties`]: SKILL.md frontmatter and the specification's rules,
//!   checked strictly ([`ValidationMode::Strict`], like `skills-ref
//!   validate`) or leniently ([`ValidationMode::Lenient`], as the client
//!   guide recommends when loading).
//! - [`package`]: a skill folder as files, with binary files flagged so
//!   they never reach the model, and [`scan`] to find skills in a tree.
//! - [`archive`]: `.zip` / `.skill` archives in and out.
//! - [`extensions`]: Hearth's `tools.json` and `resources.json`.
//! - [`library`] and [`catalog`]: the installed skills, and the
//!   `<available_skills>` catalog that discloses them.
//! - [`virtual_skill`]: skills written in the app's editor.
//!
//! With the `testing` feature, which only dev-dependencies turn on,
//! `testing` reads fixture folders from disk for tests.

pub mod archive;
pub mod catalog;
pub mod extensions;
pub mod file;
mod frontmatter;
pub mod library;
pub mod package;
pub mod paths;
pub mod properties;
pub mod scan;
#[cfg(feature = "testing")]
pub mod testing;
pub mod virtual_skill;
mod yaml;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use catalog::{CatalogPlan, DEFAULT_CATALOG_BUDGET_TOKENS, estimate_tokens};
pub use extensions::ScriptLanguage;
pub use file::{FileKind, PackageFile};
pub use library::SkillLibrary;
pub use package::{SkillPackage, load_package};
pub use properties::{
    AllowedTools, Metadata, ParsedSkillMd, SkillMdSource, SkillProperties, parse_skill_md,
};
pub use scan::{LoadOutcome, SourceFile, scan};

/// How closely to hold a skill to the specification.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValidationMode {
    /// Every violation is an error, as `skills-ref validate` reports them.
    Strict,
    /// Load what can be loaded: cosmetic violations are warnings, and a
    /// skill is skipped only when it has no description or its YAML cannot
    /// be read.
    Lenient,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The skill is invalid (strict) or was skipped (lenient).
    Error,
    /// Worth fixing, but the skill works.
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One thing wrong with a skill, and where.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    pub severity: Severity,
    /// The file, relative to what was scanned, e.g. `pdf-tools/SKILL.md`.
    pub file: String,
    /// 1-based line in `file`, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The frontmatter field (`name`, `metadata.version`) or, in JSON
    /// files, the JSON Pointer (`/tools/0/name`) the problem is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    pub message: String,
}

impl Problem {
    pub(crate) fn new(
        severity: Severity,
        file: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            severity,
            file: file.into(),
            line: None,
            field: None,
            message: message.into(),
        }
    }

    pub(crate) fn at_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    pub(crate) fn at_line(mut self, line: u32) -> Self {
        self.line = Some(line);
        self
    }

    /// The message with its place, but without the file: what the CLI
    /// prints under `Validation failed for DIR:`.
    pub fn describe_in_file(&self) -> String {
        let mut out = String::new();
        if let Some(line) = self.line {
            out.push_str(&format!("line {line}: "));
        }
        if let Some(field) = &self.field {
            out.push_str(&format!("{field}: "));
        }
        out.push_str(&self.message);
        out
    }
}

/// `file:line: field: message`, e.g.
/// `pdf-tools/SKILL.md:2: name: 'PDF' must be lowercase`.
impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        f.write_str(": ")?;
        if let Some(field) = &self.field {
            write!(f, "{field}: ")?;
        }
        f.write_str(&self.message)
    }
}

/// Escapes text for XML element content and attribute values: `& < > " '`.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    out
}
