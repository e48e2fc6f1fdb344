//! Virtual skills: skills written in the app's editor (name, description,
//! Markdown instructions, and optional scoped tools as Python or
//! JavaScript snippets). The draft becomes an ordinary package — SKILL.md,
//! tools.json and scripts — checked with the strict rules on every
//! keystroke, saved like an imported skill and exported as a folder zip.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::extensions::{ScriptLanguage, TOOLS_FILE};
use super::package::{self, PackageFile, PackageSource, SkillPackage};
use super::{Problem, ValidationMode};
use hearth_base::skill_id::SkillId;

/// What the editor holds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VirtualSkillDraft {
    pub name: String,
    pub description: String,
    /// The Markdown instructions.
    pub body: String,
    #[serde(default)]
    pub tools: Vec<VirtualToolDraft>,
}

/// A scoped tool written as a snippet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VirtualToolDraft {
    pub name: String,
    pub description: String,
    pub language: ScriptLanguage,
    /// The script; it reads its JSON input and prints its result.
    pub source: String,
    /// The input's JSON Schema; an object schema.
    #[serde(default = "empty_object_schema")]
    pub input_schema: Value,
}

fn empty_object_schema() -> Value {
    json!({"type": "object", "properties": {}})
}

/// The package built from a draft, and everything wrong with it.
#[derive(Clone, Debug, PartialEq)]
pub struct VirtualSkillOutcome {
    /// `None` until the draft has a name and a description.
    pub package: Option<SkillPackage>,
    /// Strict-mode problems; file paths are `SKILL.md`, `tools.json` and
    /// `scripts/…`. [`editor_field`] maps each to the input it is about.
    pub problems: Vec<Problem>,
}

impl VirtualSkillOutcome {
    /// Ready to save: a package and no errors.
    pub fn is_valid(&self) -> bool {
        self.package.is_some()
            && !self
                .problems
                .iter()
                .any(|p| p.severity == super::Severity::Error)
    }
}

/// The editor input a problem belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EditorField {
    Name,
    Description,
    Body,
    /// The tool at this index in the draft, and which of its inputs.
    Tool(usize, ToolField),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolField {
    Name,
    Description,
    Source,
    InputSchema,
    Other,
}

/// The editor input `problem` is about, when one fits.
pub fn editor_field(problem: &Problem) -> Option<EditorField> {
    let field = problem.field.as_deref();
    if problem.file == "SKILL.md" {
        return match field {
            Some("name") => Some(EditorField::Name),
            Some("description") => Some(EditorField::Description),
            None => Some(EditorField::Body),
            Some(_) => None,
        };
    }
    if problem.file == TOOLS_FILE {
        let pointer = field?;
        let mut parts = pointer.trim_start_matches('/').split('/');
        let (Some("tools"), Some(index)) = (parts.next(), parts.next()) else {
            return None;
        };
        let index: usize = index.parse().ok()?;
        let which = match parts.next() {
            Some("name") => ToolField::Name,
            Some("description") => ToolField::Description,
            Some("script") => ToolField::Source,
            Some("inputSchema") => ToolField::InputSchema,
            _ => ToolField::Other,
        };
        return Some(EditorField::Tool(index, which));
    }
    None
}

/// Renders a SKILL.md: frontmatter with `name` and `description`, then the
/// body.
pub fn render_skill_md(name: &str, description: &str, body: &str) -> String {
    format!(
        "---\nname: {}\ndescription: {}\n---\n\n{}\n",
        yaml_scalar(name),
        yaml_scalar(description),
        body.trim()
    )
}

/// A YAML scalar: plain when it is a simple skill name, double-quoted (with
/// JSON's escapes, which YAML shares) otherwise.
fn yaml_scalar(text: &str) -> String {
    let simple = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && text.chars().any(|c| c.is_ascii_lowercase())
        && !matches!(text, "true" | "false" | "null");
    if simple {
        text.to_string()
    } else {
        serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
    }
}

/// The script path a draft tool gets.
fn script_path(index: usize, tool: &VirtualToolDraft) -> String {
    let stem = if SkillId::new(tool.name.as_str()).is_ok() {
        tool.name.clone()
    } else {
        format!("tool-{}", index + 1)
    };
    format!("scripts/{stem}.{}", tool.language.extension())
}

/// The files a draft stands for.
pub fn draft_files(draft: &VirtualSkillDraft) -> Vec<PackageFile> {
    let mut files = vec![PackageFile::new(
        "SKILL.md",
        render_skill_md(&draft.name, &draft.description, &draft.body).into_bytes(),
    )];
    if !draft.tools.is_empty() {
        let tools: Vec<Value> = draft
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "inputSchema": t.input_schema,
                    "script": script_path(i, t),
                })
            })
            .collect();
        let text = serde_json::to_string_pretty(&json!({ "tools": tools })).unwrap_or_default();
        files.push(PackageFile::new(TOOLS_FILE, text.into_bytes()));
        for (i, t) in draft.tools.iter().enumerate() {
            files.push(PackageFile::new(
                script_path(i, t),
                t.source.clone().into_bytes(),
            ));
        }
    }
    files
}

/// Builds and checks a draft, strictly: what the editor calls as the
/// person types.
pub fn build_virtual_skill(draft: &VirtualSkillDraft) -> VirtualSkillOutcome {
    let name = draft.name.trim();
    let outcome = package::load_package(
        draft_files(draft),
        PackageSource {
            folder: (!name.is_empty()).then_some(name),
            display_prefix: "",
        },
        ValidationMode::Strict,
    );
    VirtualSkillOutcome {
        package: outcome.package,
        problems: outcome.problems,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive;

    fn draft() -> VirtualSkillDraft {
        VirtualSkillDraft {
            name: "greeter".into(),
            description: "Greet people: politely, by name.".into(),
            body: "# Greeter\n\nCall `greet` with the person's name.".into(),
            tools: vec![VirtualToolDraft {
                name: "greet".into(),
                description: "Say hello".into(),
                language: ScriptLanguage::Python,
                source: "import json, sys\nprint('Hello, ' + json.load(sys.stdin)['who'])\n".into(),
                input_schema: json!({"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}),
            }],
        }
    }

    #[test]
    fn a_good_draft_becomes_a_valid_package() {
        let outcome = build_virtual_skill(&draft());
        assert_eq!(outcome.problems, vec![]);
        assert!(outcome.is_valid());
        let package = outcome.package.unwrap();
        assert_eq!(
            package
                .files
                .iter()
                .map(|f| f.path.as_str())
                .collect::<Vec<_>>(),
            vec!["SKILL.md", "scripts/greet.py", "tools.json"]
        );
        assert_eq!(
            package.file("SKILL.md").unwrap().text().unwrap(),
            "---\nname: greeter\ndescription: \"Greet people: politely, by name.\"\n---\n\n# Greeter\n\nCall `greet` with the person's name.\n"
        );
        assert_eq!(package.tools[0].script, "scripts/greet.py");

        // Exported as a folder zip, it imports back as the same skill.
        let zip = archive::write_package_zip(&package).unwrap();
        let back = archive::import_archive(&zip, "greeter.zip", ValidationMode::Strict);
        assert_eq!(back.problems, vec![]);
        assert_eq!(back.packages, vec![package]);
    }

    #[test]
    fn problems_point_at_the_editor_input_they_are_about() {
        let mut d = draft();
        d.name = "Greeter Bot".into();
        d.description = String::new();
        d.tools[0].name = "say hello".into();
        d.tools[0].input_schema = json!({"type": "string"});
        let outcome = build_virtual_skill(&d);
        assert!(!outcome.is_valid());
        let located: Vec<(Option<EditorField>, String)> = outcome
            .problems
            .iter()
            .map(|p| (editor_field(p), p.message.clone()))
            .collect();
        assert_eq!(
            located,
            vec![
                (Some(EditorField::Name), "'Greeter Bot' must be lowercase".into()),
                (
                    Some(EditorField::Name),
                    "'Greeter Bot' may contain only lowercase letters, digits and hyphens, not spaces".into()
                ),
                (Some(EditorField::Description), "must not be empty".into()),
                (
                    Some(EditorField::Tool(0, ToolField::Name)),
                    "'say hello': a tool name may hold only ASCII letters, digits, '_' and '-', not ' '".into()
                ),
                (
                    Some(EditorField::Tool(0, ToolField::InputSchema)),
                    "a tool's input must be an object, so type must be \"object\", not \"string\"".into()
                ),
            ]
        );
    }

    #[test]
    fn scalars_are_quoted_only_when_needed() {
        let cases = [
            ("greeter", "greeter"),
            ("v2-tool", "v2-tool"),
            ("true", "\"true\""),
            ("2048", "\"2048\""),
            ("a: b", "\"a: b\""),
            ("line\nbreak", "\"line\\nbreak\""),
            ("", "\"\""),
        ];
        for (input, expected) in cases {
            assert_eq!(yaml_scalar(input), expected, "for {input:?}");
        }
    }
}
