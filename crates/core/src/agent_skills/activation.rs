//! Using skills in a conversation: which skills are active (plain data the
//! app stores with the conversation), and the pure functions behind the
//! model's skill tools — `activate_skill`, `read_skill_file`,
//! `read_resource`, `call_skill_tool`, `return_to_general` — plus the
//! scoped tools of the active skills.
//!
//! Nothing here runs a script: a scoped tool call resolves to a
//! [`ScriptRequest`] that the app hands to the sandbox.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use super::extensions::ScriptLanguage;
use super::extensions::{RESERVED_TOOL_NAMES, ScopedTool};
pub use super::library::SkillLibrary;
use super::package::{FileKind, SkillPackage};
use super::paths::{self, PathError};
use super::xml_escape;
use crate::schema;
use crate::skill::call::{CallOrigin, SkillError, SkillOutput, ToolCall};
use crate::skill::{Category, SkillDefinition, SkillId, SkillKind, Tier};

pub const ACTIVATE_SKILL: &str = "activate_skill";
pub const READ_SKILL_FILE: &str = "read_skill_file";
pub const READ_RESOURCE: &str = "read_resource";
pub const CALL_SKILL_TOOL: &str = "call_skill_tool";
pub const RETURN_TO_GENERAL: &str = "return_to_general";

/// The most bytes `read_skill_file` and `read_resource` return by default;
/// longer files are cut with a note saying so.
pub const DEFAULT_MAX_READ_BYTES: usize = 100 * 1024;
/// The most files an activation lists.
pub const MAX_LISTED_FILES: usize = 100;
/// Names listed in "did you mean" messages.
const MAX_SUGGESTIONS: usize = 20;

/// The skills of one conversation. Plain data: the app stores it with the
/// conversation, so activations survive a reload.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversationSkills {
    /// Active skills in activation order. Their scoped tools and resources
    /// are available, and activating one again is deduplicated.
    #[serde(default)]
    pub active: Vec<String>,
    /// The skill whose instructions are the specialist context (Level 2):
    /// the most recently activated one, until the conversation returns to
    /// the general context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub specialist: Option<String>,
}

impl ConversationSkills {
    pub fn is_active(&self, name: &str) -> bool {
        self.active.iter().any(|a| a == name)
    }

    /// Leaves every skill: scoped tools and resources go away and the
    /// conversation is back in the general context. What the model is told.
    pub fn return_to_general(&mut self) -> String {
        if self.active.is_empty() {
            return "No skill was active; the conversation is in the general context.".into();
        }
        let left = self.active.join(", ");
        self.active.clear();
        self.specialist = None;
        format!(
            "Left skill(s) {left}. Back in the general context; their scoped tools are no longer available."
        )
    }

    /// Drops skills that are no longer installed.
    pub fn retain_installed(&mut self, library: &SkillLibrary) {
        self.active.retain(|name| library.get(name).is_some());
        if self
            .specialist
            .as_deref()
            .is_some_and(|s| library.get(s).is_none())
        {
            self.specialist = self.active.last().cloned();
        }
    }
}

/// Why a skill tool call could not be carried out. The message is what the
/// model and the person are told.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DisclosureError {
    #[error(
        "there is no skill called '{name}'{}",
        list_hint("available skills", available)
    )]
    UnknownSkill {
        name: String,
        available: Vec<String>,
    },
    #[error("skill '{0}' is not active in this conversation; call activate_skill first")]
    NotActive(String),
    #[error("skill '{0}' is not offered in the / menu (user-invocable: false)")]
    NotUserInvocable(String),
    #[error("cannot read '{path}': {error}")]
    BadPath { path: String, error: PathError },
    #[error(
        "skill '{skill}' has no file '{path}'{}",
        list_hint("its files", files)
    )]
    NoSuchFile {
        skill: String,
        path: String,
        files: Vec<String>,
    },
    #[error("'{path}' is a binary file ({bytes} bytes); binary files are never sent to the model")]
    BinaryFile { path: String, bytes: usize },
    #[error(
        "no active skill offers resource '{uri}'{}",
        list_hint("available resources", available)
    )]
    UnknownResource { uri: String, available: Vec<String> },
    #[error(
        "skill '{skill}' has no tool '{tool}'{}",
        list_hint("its tools", available)
    )]
    UnknownTool {
        skill: String,
        tool: String,
        available: Vec<String>,
    },
    #[error("invalid input for tool '{tool}': {}", errors.join("; "))]
    InvalidInput { tool: String, errors: Vec<String> },
    #[error("the script '{path}' of skill '{skill}' is missing or not text")]
    MissingScript { skill: String, path: String },
    #[error("'{0}' needs {1}")]
    BadArguments(String, &'static str),
}

fn list_hint(label: &str, items: &[String]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let shown: Vec<&str> = items
        .iter()
        .take(MAX_SUGGESTIONS)
        .map(String::as_str)
        .collect();
    let more = items.len().saturating_sub(MAX_SUGGESTIONS);
    if more > 0 {
        format!("; {label}: {} and {more} more", shown.join(", "))
    } else {
        format!("; {label}: {}", shown.join(", "))
    }
}

impl From<DisclosureError> for SkillError {
    fn from(e: DisclosureError) -> Self {
        SkillError::new(e.to_string())
    }
}

/// What `activate_skill` gives back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ActivationOutcome {
    /// The skill is now active; `content` is its instructions wrapped in
    /// `<skill_content>`, for the tool result.
    Activated { name: String, content: String },
    /// The skill was already active; its instructions are not repeated.
    AlreadyActive { name: String, message: String },
}

impl ActivationOutcome {
    /// The text for the tool result.
    pub fn text(&self) -> &str {
        match self {
            ActivationOutcome::Activated { content, .. } => content,
            ActivationOutcome::AlreadyActive { message, .. } => message,
        }
    }
}

fn lookup<'a>(
    library: &'a SkillLibrary,
    name: &str,
    origin: &CallOrigin,
) -> Result<&'a SkillPackage, DisclosureError> {
    let unknown = || DisclosureError::UnknownSkill {
        name: name.to_string(),
        available: match origin {
            CallOrigin::Model | CallOrigin::App | CallOrigin::Agent(_) => {
                library.model_invocable_names()
            }
            CallOrigin::User => library.iter().map(|p| p.name().to_string()).collect(),
        },
    };
    let package = library.get(name).ok_or_else(unknown)?;
    // A skill hidden from the model is, to the model (and to anything that
    // is not the person), not there at all.
    if *origin != CallOrigin::User && !package.properties.model_invocable() {
        return Err(unknown());
    }
    Ok(package)
}

/// Activates a skill: from the model (`activate_skill`) or the person
/// (`/name`). The skill becomes active and the specialist; its instructions
/// come back once per activation.
pub fn activate_skill(
    library: &SkillLibrary,
    state: &mut ConversationSkills,
    name: &str,
    origin: CallOrigin,
) -> Result<ActivationOutcome, DisclosureError> {
    let package = lookup(library, name, &origin)?;
    if origin == CallOrigin::User && !package.properties.user_invocable {
        return Err(DisclosureError::NotUserInvocable(name.to_string()));
    }
    state.specialist = Some(name.to_string());
    if state.is_active(name) {
        return Ok(ActivationOutcome::AlreadyActive {
            name: name.to_string(),
            message: format!(
                "Skill '{name}' is already active in this conversation; its instructions were loaded earlier."
            ),
        });
    }
    state.active.push(name.to_string());
    Ok(ActivationOutcome::Activated {
        name: name.to_string(),
        content: skill_content(package),
    })
}

/// Files an activation lists: everything but SKILL.md and Hearth's own
/// manifests.
fn listed_files(package: &SkillPackage) -> impl Iterator<Item = &super::package::PackageFile> {
    let skill_file = package.skill_file().to_string();
    package.files.iter().filter(move |f| {
        f.path != skill_file
            && f.path != super::extensions::TOOLS_FILE
            && f.path != super::extensions::RESOURCES_FILE
    })
}

/// The body wrapped in `<skill_content>`, with the package's files (names
/// only), resources and tools listed after it.
pub fn skill_content(package: &SkillPackage) -> String {
    let name = xml_escape(package.name());
    let mut out = format!("<skill_content name=\"{name}\">\n");
    if !package.body.is_empty() {
        out.push_str(&package.body);
        out.push('\n');
    }
    let files: Vec<_> = listed_files(package).collect();
    if !files.is_empty() || !package.resources.is_empty() {
        out.push_str(&format!(
            "\nPaths in this skill are relative to its folder. Read its text files with read_skill_file (skill \"{name}\")"
        ));
        if !package.resources.is_empty() {
            out.push_str(" and its resources with read_resource");
        }
        out.push_str(".\n\n<skill_resources>\n");
        for f in files.iter().take(MAX_LISTED_FILES) {
            match f.kind {
                FileKind::Text => {
                    out.push_str(&format!("  <file>{}</file>\n", xml_escape(&f.path)))
                }
                FileKind::Binary => out.push_str(&format!(
                    "  <file binary=\"true\">{}</file>\n",
                    xml_escape(&f.path)
                )),
            }
        }
        if files.len() > MAX_LISTED_FILES {
            out.push_str(&format!(
                "  <!-- {} more files not listed -->\n",
                files.len() - MAX_LISTED_FILES
            ));
        }
        for r in &package.resources {
            out.push_str(&format!(
                "  <resource uri=\"{}\">{}</resource>\n",
                xml_escape(&r.uri),
                xml_escape(&r.description)
            ));
        }
        out.push_str("</skill_resources>\n");
    }
    if !package.tools.is_empty() {
        out.push_str("<skill_tools>\n");
        for t in &package.tools {
            out.push_str(&format!(
                "  <tool name=\"{}\">{}</tool>\n",
                xml_escape(&t.name),
                xml_escape(&t.description)
            ));
        }
        out.push_str("</skill_tools>\n");
    }
    out.push_str("</skill_content>");
    out
}

/// The package of an active skill.
fn active_package<'a>(
    library: &'a SkillLibrary,
    state: &ConversationSkills,
    name: &str,
) -> Result<&'a SkillPackage, DisclosureError> {
    let package = library
        .get(name)
        .ok_or_else(|| DisclosureError::UnknownSkill {
            name: name.to_string(),
            available: state.active.clone(),
        })?;
    if !state.is_active(name) {
        return Err(DisclosureError::NotActive(name.to_string()));
    }
    Ok(package)
}

/// Text up to `max_bytes`, cut at a character boundary with a note.
fn capped(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_string();
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n\n[truncated: showing the first {end} of {} bytes]",
        &text[..end],
        text.len()
    )
}

/// `read_skill_file(skill, path)`: a text file of an active skill.
pub fn read_skill_file(
    library: &SkillLibrary,
    state: &ConversationSkills,
    skill: &str,
    path: &str,
    max_bytes: usize,
) -> Result<String, DisclosureError> {
    let package = active_package(library, state, skill)?;
    let normalized = paths::normalize(path).map_err(|error| DisclosureError::BadPath {
        path: path.escape_debug().to_string(),
        error,
    })?;
    let Some(file) = package.file(&normalized) else {
        return Err(DisclosureError::NoSuchFile {
            skill: skill.to_string(),
            path: normalized,
            files: listed_files(package)
                .filter(|f| f.kind == FileKind::Text)
                .map(|f| f.path.clone())
                .collect(),
        });
    };
    match file.text() {
        Some(text) => Ok(capped(text, max_bytes)),
        None => Err(DisclosureError::BinaryFile {
            path: normalized,
            bytes: file.bytes.len(),
        }),
    }
}

/// `read_resource(uri)`: a scoped resource of any active skill.
pub fn read_resource(
    library: &SkillLibrary,
    state: &ConversationSkills,
    uri: &str,
    max_bytes: usize,
) -> Result<String, DisclosureError> {
    let active = state.active.iter().filter_map(|name| library.get(name));
    let mut available = Vec::new();
    for package in active {
        for r in &package.resources {
            if r.uri == uri {
                let file = package.file(&r.path).and_then(|f| f.text());
                return match file {
                    Some(text) => Ok(capped(text, max_bytes)),
                    None => Err(DisclosureError::MissingScript {
                        skill: package.name().to_string(),
                        path: r.path.clone(),
                    }),
                };
            }
            available.push(r.uri.clone());
        }
    }
    Err(DisclosureError::UnknownResource {
        uri: uri.to_string(),
        available,
    })
}

/// A scoped tool call, resolved and checked, ready for the sandbox: run
/// `source` with `input` as its JSON input; its stdout (or JSON output) is
/// the result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScriptRequest {
    pub skill: String,
    pub tool: String,
    pub language: ScriptLanguage,
    /// The script's path inside the package.
    pub script_path: String,
    pub source: String,
    /// The validated input.
    pub input: Value,
    /// Every file of the package, for the sandbox to offer read-only (the
    /// sandbox is not the model, so binary files are included).
    pub package_files: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
}

impl ScriptRequest {
    pub fn input_json(&self) -> String {
        self.input.to_string()
    }
}

/// `call_skill_tool(skill, tool, input)`, and direct calls of scoped tools:
/// finds the tool of an active skill and validates `input` against its
/// schema.
pub fn call_skill_tool(
    library: &SkillLibrary,
    state: &ConversationSkills,
    skill: &str,
    tool: &str,
    input: &Value,
) -> Result<ScriptRequest, DisclosureError> {
    let package = active_package(library, state, skill)?;
    let Some(t) = package.tool(tool) else {
        return Err(DisclosureError::UnknownTool {
            skill: skill.to_string(),
            tool: tool.to_string(),
            available: package.tools.iter().map(|t| t.name.clone()).collect(),
        });
    };
    let errors = schema::validate(&t.input_schema, input);
    if !errors.is_empty() {
        return Err(DisclosureError::InvalidInput {
            tool: tool.to_string(),
            errors: errors.iter().map(ToString::to_string).collect(),
        });
    }
    let source = package
        .file(&t.script)
        .and_then(|f| f.text())
        .ok_or_else(|| DisclosureError::MissingScript {
            skill: skill.to_string(),
            path: t.script.clone(),
        })?;
    Ok(ScriptRequest {
        skill: skill.to_string(),
        tool: tool.to_string(),
        language: t.language,
        script_path: t.script.clone(),
        source: source.to_string(),
        input: input.clone(),
        package_files: package.files.iter().map(|f| f.path.clone()).collect(),
        output_schema: t.output_schema.clone(),
    })
}

/// Turns what a script printed into the tool's output: JSON when stdout is
/// JSON (checked against the tool's output schema, if any), text otherwise.
pub fn script_output(request: &ScriptRequest, stdout: &str) -> Result<SkillOutput, SkillError> {
    let trimmed = stdout.trim();
    match serde_json::from_str::<Value>(trimmed) {
        Ok(value) if value.is_object() || value.is_array() => {
            if let Some(schema) = &request.output_schema {
                let errors = schema::validate(schema, &value);
                if !errors.is_empty() {
                    let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
                    return Err(SkillError::new(format!(
                        "tool '{}' returned an invalid result: {}",
                        request.tool,
                        list.join("; ")
                    )));
                }
            }
            Ok(SkillOutput::text_and_json(trimmed, value))
        }
        Ok(_) | Err(_) => Ok(SkillOutput::text(trimmed)),
    }
}

fn meta_definition(id: &str, name: &str, description: String, schema: Value) -> SkillDefinition {
    SkillDefinition::new(
        SkillId::new(id).unwrap_or_else(|e| panic!("meta tool id {id:?}: {e}")),
        name,
        Tier::Core,
        Category::Productivity,
    )
    .with_description(description)
    .with_icon("📘")
    .with_tags(["skills", "agent skills", "instructions"])
    .with_examples(["Use the skill that fits this task"])
    .with_input_schema(schema)
}

/// `activate_skill`, with `name` limited to `names`. `None` when there is
/// nothing to activate: then the tool must not be offered at all.
pub fn activate_skill_definition(names: &[String]) -> Option<SkillDefinition> {
    if names.is_empty() {
        return None;
    }
    Some(meta_definition(
        ACTIVATE_SKILL,
        "Activate skill",
        "Load the full instructions of a skill so you can follow them. Call it when a task matches a skill's description.".into(),
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": names, "description": "The skill's name"}
            },
            "required": ["name"],
            "additionalProperties": false
        }),
    ))
}

/// `activate_skill` for a library too large to list (the catalog is not
/// in the prompt): any name is accepted by the schema and checked against
/// the installed skills when called. Its size does not grow with them.
pub fn activate_skill_definition_by_name() -> SkillDefinition {
    meta_definition(
        ACTIVATE_SKILL,
        "Activate skill",
        "Load the full instructions of an installed skill package so you can follow them. Use a name discover_skills returned.".into(),
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "description": "The package's name"}
            },
            "required": ["name"],
            "additionalProperties": false
        }),
    )
}

/// `read_skill_file`, offered while a skill is active.
pub fn read_skill_file_definition(state: &ConversationSkills) -> Option<SkillDefinition> {
    if state.active.is_empty() {
        return None;
    }
    Some(meta_definition(
        READ_SKILL_FILE,
        "Read skill file",
        "Read a text file bundled with an active skill, such as a reference listed in its <skill_resources>.".into(),
        json!({
            "type": "object",
            "properties": {
                "skill": {"type": "string", "enum": state.active, "description": "The active skill"},
                "path": {"type": "string", "minLength": 1, "description": "Path relative to the skill's folder, e.g. references/REFERENCE.md"}
            },
            "required": ["skill", "path"],
            "additionalProperties": false
        }),
    ))
}

/// `read_resource`, offered while an active skill has resources.
pub fn read_resource_definition(
    library: &SkillLibrary,
    state: &ConversationSkills,
) -> Option<SkillDefinition> {
    let uris: Vec<&str> = state
        .active
        .iter()
        .filter_map(|n| library.get(n))
        .flat_map(|p| p.resources.iter().map(|r| r.uri.as_str()))
        .collect();
    if uris.is_empty() {
        return None;
    }
    Some(meta_definition(
        READ_RESOURCE,
        "Read resource",
        "Read a resource offered by an active skill.".into(),
        json!({
            "type": "object",
            "properties": {"uri": {"type": "string", "enum": uris}},
            "required": ["uri"],
            "additionalProperties": false
        }),
    ))
}

/// `call_skill_tool`, offered while an active skill has tools.
pub fn call_skill_tool_definition(
    library: &SkillLibrary,
    state: &ConversationSkills,
) -> Option<SkillDefinition> {
    let skills: Vec<&str> = state
        .active
        .iter()
        .filter(|n| library.get(n).is_some_and(|p| !p.tools.is_empty()))
        .map(String::as_str)
        .collect();
    if skills.is_empty() {
        return None;
    }
    Some(
        meta_definition(
            CALL_SKILL_TOOL,
            "Call skill tool",
            "Call a tool bundled with an active skill (listed in its <skill_tools>).".into(),
            json!({
                "type": "object",
                "properties": {
                    "skill": {"type": "string", "enum": skills},
                    "tool": {"type": "string", "minLength": 1},
                    "input": {"type": "object", "description": "The tool's input, as its schema describes"}
                },
                "required": ["skill", "tool", "input"],
                "additionalProperties": false
            }),
        )
        .with_icon("🧰"),
    )
}

/// `return_to_general`, offered while a skill is active.
pub fn return_to_general_definition(state: &ConversationSkills) -> Option<SkillDefinition> {
    if state.active.is_empty() {
        return None;
    }
    Some(meta_definition(
        RETURN_TO_GENERAL,
        "Return to general context",
        "Leave the active skills when their task is done or the person asks for something else."
            .into(),
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
    ))
}

/// A scoped tool left out of the direct tool list because its name was
/// taken; it stays reachable through `call_skill_tool`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShadowedTool {
    pub skill: String,
    pub tool: String,
    /// The skill whose tool has the name, or `None` for Hearth's own tools.
    pub taken_by: Option<String>,
}

/// The scoped tools of the active skills, as definitions for the model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScopedTools {
    pub definitions: Vec<SkillDefinition>,
    pub shadowed: Vec<ShadowedTool>,
}

/// The scoped tool of a skill as a definition in the one registry: run in
/// the sandbox (enhanced tier), dispatched by `SkillKind::AgentSkill`.
pub fn scoped_tool_definition(skill: &str, tool: &ScopedTool) -> Option<SkillDefinition> {
    let id = SkillId::new(tool.name.as_str()).ok()?;
    Some(
        SkillDefinition::new(id, tool.name.as_str(), Tier::Enhanced, Category::Developer)
            .with_description(format!("{} (from skill '{skill}')", tool.description))
            .with_icon("🧩")
            .with_tags([format!("skill:{skill}"), tool.language.as_str().to_string()])
            .with_input_schema(tool.input_schema.clone())
            .with_output_schema(tool.output_schema.clone().unwrap_or_else(|| json!({})))
            .with_kind(SkillKind::AgentSkill {
                package: skill.to_string(),
                tool: tool.name.clone(),
            }),
    )
}

/// The tools active skills add, in activation order. A name already taken
/// (by Hearth's own tools, `taken`, or an earlier skill) is left out and
/// listed in `shadowed`.
pub fn scoped_tool_definitions(
    library: &SkillLibrary,
    state: &ConversationSkills,
    taken: &[&str],
) -> ScopedTools {
    let mut out = ScopedTools::default();
    let mut owners: Vec<(String, String)> = Vec::new();
    for name in &state.active {
        let Some(package) = library.get(name) else {
            continue;
        };
        for tool in &package.tools {
            let taken_by = if RESERVED_TOOL_NAMES.contains(&tool.name.as_str())
                || taken.contains(&tool.name.as_str())
            {
                Some(None)
            } else {
                owners
                    .iter()
                    .find(|(t, _)| *t == tool.name)
                    .map(|(_, owner)| Some(owner.clone()))
            };
            if let Some(taken_by) = taken_by {
                out.shadowed.push(ShadowedTool {
                    skill: name.clone(),
                    tool: tool.name.clone(),
                    taken_by,
                });
                continue;
            }
            if let Some(def) = scoped_tool_definition(name, tool) {
                owners.push((tool.name.clone(), name.clone()));
                out.definitions.push(def);
            }
        }
    }
    out
}

/// Every skill tool to offer the model this turn: `activate_skill` (over
/// `activatable`), and while skills are active `read_skill_file`,
/// `read_resource`, `return_to_general`, their scoped tools, and
/// `call_skill_tool` when a scoped tool had to be left out for its name.
/// `taken` are the names of the other tools the model gets.
pub fn model_tools(
    library: &SkillLibrary,
    state: &ConversationSkills,
    activatable: &[String],
    taken: &[&str],
) -> Vec<SkillDefinition> {
    let scoped = scoped_tool_definitions(library, state, taken);
    let mut out: Vec<SkillDefinition> = [
        activate_skill_definition(activatable),
        read_skill_file_definition(state),
        read_resource_definition(library, state),
        return_to_general_definition(state),
    ]
    .into_iter()
    .flatten()
    .collect();
    out.extend(scoped.definitions);
    if !scoped.shadowed.is_empty()
        && let Some(def) = call_skill_tool_definition(library, state)
    {
        out.push(def);
    }
    let mut seen = HashSet::new();
    out.retain(|d| seen.insert(d.id.clone()));
    out
}

/// What `call_skill_tool` names: an active skill, one of its tools, and
/// the input. The app hands the call on to that tool's own skill in the
/// registry, so the tool is decided, checked and logged as itself.
#[derive(Clone, Debug, PartialEq)]
pub struct SkillToolTarget {
    pub skill: String,
    pub tool: String,
    pub input: Value,
}

/// Reads and checks a `call_skill_tool` call: the skill is active and has
/// the tool. Its input is checked by the tool's own call.
pub fn skill_tool_target(
    library: &SkillLibrary,
    state: &ConversationSkills,
    call: &ToolCall,
) -> Result<SkillToolTarget, DisclosureError> {
    let skill = string_arg(call, "skill")?;
    let tool = string_arg(call, "tool")?;
    let package = active_package(library, state, skill)?;
    if package.tool(tool).is_none() {
        return Err(DisclosureError::UnknownTool {
            skill: skill.to_string(),
            tool: tool.to_string(),
            available: package.tools.iter().map(|t| t.name.clone()).collect(),
        });
    }
    Ok(SkillToolTarget {
        skill: skill.to_string(),
        tool: tool.to_string(),
        input: call.arguments.get("input").cloned().unwrap_or(json!({})),
    })
}

/// The next step of a skill tool call.
#[derive(Clone, Debug, PartialEq)]
pub enum SkillStep {
    /// Finished: give this output to the model.
    Done(SkillOutput),
    /// Run this script in the sandbox, then pass its stdout to
    /// [`script_output`].
    RunScript(ScriptRequest),
}

fn string_arg<'a>(call: &'a ToolCall, key: &'static str) -> Result<&'a str, DisclosureError> {
    call.arguments
        .get(key)
        .and_then(Value::as_str)
        .ok_or(DisclosureError::BadArguments(
            call.skill_id.to_string(),
            match key {
                "name" => "a string 'name'",
                "skill" => "a string 'skill'",
                "path" => "a string 'path'",
                "uri" => "a string 'uri'",
                _ => "a string 'tool'",
            },
        ))
}

/// Carries out a call of one of the skill tools above, for the app's
/// executor. `None` when `definition` is not a skill tool.
pub fn handle_tool_call(
    library: &SkillLibrary,
    state: &mut ConversationSkills,
    definition: &SkillDefinition,
    call: &ToolCall,
    max_read_bytes: usize,
) -> Option<Result<SkillStep, SkillError>> {
    let result = match &definition.kind {
        SkillKind::AgentSkill { package, tool } => {
            call_skill_tool(library, state, package, tool, &call.arguments)
                .map(SkillStep::RunScript)
        }
        SkillKind::Mcp { .. } => return None,
        SkillKind::Builtin => match definition.id.as_str() {
            ACTIVATE_SKILL => string_arg(call, "name")
                .and_then(|name| activate_skill(library, state, name, call.origin.clone()))
                .map(|o| SkillStep::Done(SkillOutput::text(o.text()))),
            READ_SKILL_FILE => string_arg(call, "skill").and_then(|skill| {
                let path = string_arg(call, "path")?;
                read_skill_file(library, state, skill, path, max_read_bytes)
                    .map(|t| SkillStep::Done(SkillOutput::text(t)))
            }),
            READ_RESOURCE => string_arg(call, "uri").and_then(|uri| {
                read_resource(library, state, uri, max_read_bytes)
                    .map(|t| SkillStep::Done(SkillOutput::text(t)))
            }),
            // The call path hands `call_skill_tool` on to the tool itself
            // (see [`skill_tool_target`]); it never runs a script here.
            CALL_SKILL_TOOL => {
                return Some(Err(SkillError::new(
                    "call_skill_tool hands its call to the skill's tool; it runs nothing itself",
                )));
            }
            RETURN_TO_GENERAL => Ok(SkillStep::Done(SkillOutput::text(
                state.return_to_general(),
            ))),
            _ => return None,
        },
    };
    Some(result.map_err(SkillError::from))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_skills::ValidationMode;
    use crate::agent_skills::package::{PackageFile, PackageSource, load_package};

    /// A package with one scoped Python tool per name in `tools`.
    fn package(
        name: &str,
        tools: &[&str],
        model_invocable: bool,
        user_invocable: bool,
    ) -> SkillPackage {
        let mut front = format!("---\nname: {name}\ndescription: The {name} skill.\n");
        if !model_invocable {
            front.push_str("disable-model-invocation: true\n");
        }
        if !user_invocable {
            front.push_str("user-invocable: false\n");
        }
        front.push_str("---\nDo it.\n");
        let mut files = vec![PackageFile::new("SKILL.md", front.into_bytes())];
        if !tools.is_empty() {
            let list: Vec<Value> = tools
                .iter()
                .map(|t| json!({"name": t, "description": format!("{t} tool"),
                    "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}))
                .collect();
            files.push(PackageFile::new(
                "tools.json",
                json!(list).to_string().into_bytes(),
            ));
            for t in tools {
                files.push(PackageFile::new(
                    format!("scripts/{t}.py"),
                    b"print(1)\n".to_vec(),
                ));
            }
        }
        let out = load_package(
            files,
            PackageSource {
                folder: Some(name),
                display_prefix: "",
            },
            ValidationMode::Lenient,
        );
        assert!(out.problems.is_empty(), "{:?}", out.problems);
        out.package.unwrap()
    }

    fn ids(defs: &[SkillDefinition]) -> Vec<&str> {
        defs.iter().map(|d| d.id.as_str()).collect()
    }

    #[test]
    fn scoped_tools_with_taken_names_fall_back_to_call_skill_tool() {
        let library = SkillLibrary::from_packages(vec![
            package("alpha", &["lookup", "calculator"], true, true),
            package("beta", &["lookup", "summarise"], true, true),
        ]);
        let mut state = ConversationSkills::default();
        activate_skill(&library, &mut state, "alpha", CallOrigin::Model).unwrap();
        activate_skill(&library, &mut state, "beta", CallOrigin::Model).unwrap();

        let scoped = scoped_tool_definitions(&library, &state, &["calculator"]);
        assert_eq!(ids(&scoped.definitions), vec!["lookup", "summarise"]);
        assert_eq!(
            scoped.shadowed,
            vec![
                ShadowedTool {
                    skill: "alpha".into(),
                    tool: "calculator".into(),
                    taken_by: None
                },
                ShadowedTool {
                    skill: "beta".into(),
                    tool: "lookup".into(),
                    taken_by: Some("alpha".into())
                },
            ]
        );
        assert_eq!(
            scoped.definitions[0].kind,
            SkillKind::AgentSkill {
                package: "alpha".into(),
                tool: "lookup".into()
            }
        );
        assert_eq!(scoped.definitions[0].tier, Tier::Enhanced);

        let names = library.model_invocable_names();
        assert_eq!(
            ids(&model_tools(&library, &state, &names, &["calculator"])),
            vec![
                "activate_skill",
                "read_skill_file",
                "return_to_general",
                "lookup",
                "summarise",
                "call_skill_tool",
            ]
        );
        // The shadowed tool is still reachable by skill and name.
        let request =
            call_skill_tool(&library, &state, "beta", "lookup", &json!({"n": 1})).unwrap();
        assert_eq!(
            (request.skill.as_str(), request.script_path.as_str()),
            ("beta", "scripts/lookup.py")
        );
    }

    #[test]
    fn every_skill_tool_registers_cleanly_in_the_one_registry() {
        let library = SkillLibrary::from_packages(vec![
            package("alpha", &["lookup"], true, true),
            package("beta", &["lookup"], true, true),
        ]);
        let mut state = ConversationSkills::default();
        activate_skill(&library, &mut state, "alpha", CallOrigin::Model).unwrap();
        activate_skill(&library, &mut state, "beta", CallOrigin::Model).unwrap();
        let mut registry = crate::skill::registry::Registry::new();
        for def in model_tools(&library, &state, &library.model_invocable_names(), &[]) {
            let id = def.id.clone();
            let registered = registry
                .register(def)
                .unwrap_or_else(|e| panic!("{id}: {e}"));
            assert_eq!(registered.warnings, vec![], "{id}");
        }
        assert_eq!(registry.len(), 5);
    }

    #[test]
    fn invocation_flags_decide_who_may_activate() {
        let library = SkillLibrary::from_packages(vec![
            package("deploy", &[], false, true),
            package("background", &[], true, false),
        ]);
        assert_eq!(library.model_invocable_names(), vec!["background"]);
        assert_eq!(
            library
                .user_invocable()
                .map(|p| p.name())
                .collect::<Vec<_>>(),
            vec!["deploy"]
        );
        let mut state = ConversationSkills::default();
        let cases: Vec<(&str, CallOrigin, Result<&str, String>)> = vec![
            (
                "deploy",
                CallOrigin::Model,
                Err("there is no skill called 'deploy'; available skills: background".into()),
            ),
            ("deploy", CallOrigin::User, Ok("deploy")),
            (
                "background",
                CallOrigin::User,
                Err(
                    "skill 'background' is not offered in the / menu (user-invocable: false)"
                        .into(),
                ),
            ),
            ("background", CallOrigin::Model, Ok("background")),
            (
                "nope",
                CallOrigin::User,
                Err("there is no skill called 'nope'; available skills: deploy, background".into()),
            ),
        ];
        for (name, origin, expected) in cases {
            let got = activate_skill(&library, &mut state, name, origin.clone())
                .map(|o| match o {
                    ActivationOutcome::Activated { name, .. } => name,
                    ActivationOutcome::AlreadyActive { name, .. } => name,
                })
                .map_err(|e| e.to_string());
            assert_eq!(got, expected.map(str::to_string), "{name} by {origin:?}");
        }
        assert_eq!(state.active, vec!["deploy", "background"]);
        assert_eq!(state.specialist.as_deref(), Some("background"));
    }

    #[test]
    fn no_names_means_no_activate_tool() {
        assert_eq!(activate_skill_definition(&[]), None);
        let def = activate_skill_definition(&["a".into(), "b".into()]).unwrap();
        assert_eq!(
            def.input_schema["properties"]["name"]["enum"],
            json!(["a", "b"])
        );
        assert_eq!(
            read_skill_file_definition(&ConversationSkills::default()),
            None
        );
    }

    #[test]
    fn the_executor_helper_dispatches_every_skill_tool() {
        let library = SkillLibrary::from_packages(vec![package("alpha", &["lookup"], true, true)]);
        let mut state = ConversationSkills::default();
        let call = |id: &str, args: Value| ToolCall {
            id: "c1".into(),
            skill_id: SkillId::new(id).unwrap(),
            arguments: args,
            conversation_id: None,
            origin: CallOrigin::Model,
        };
        let names = library.model_invocable_names();
        let activate = activate_skill_definition(&names).unwrap();
        let step = handle_tool_call(
            &library,
            &mut state,
            &activate,
            &call("activate_skill", json!({"name": "alpha"})),
            1000,
        )
        .unwrap()
        .unwrap();
        let SkillStep::Done(out) = step else {
            panic!("expected text")
        };
        assert!(out.content.len() == 1 && state.is_active("alpha"));

        let scoped = scoped_tool_definitions(&library, &state, &[]);
        let step = handle_tool_call(
            &library,
            &mut state,
            &scoped.definitions[0],
            &call("lookup", json!({"n": 2})),
            1000,
        )
        .unwrap()
        .unwrap();
        let SkillStep::RunScript(request) = step else {
            panic!("expected a script")
        };
        assert_eq!(
            (request.tool.as_str(), request.input.clone()),
            ("lookup", json!({"n": 2}))
        );

        let err = handle_tool_call(
            &library,
            &mut state,
            &scoped.definitions[0],
            &call("lookup", json!({"n": "x"})),
            1000,
        )
        .unwrap()
        .unwrap_err();
        assert_eq!(
            err.message,
            "invalid input for tool 'lookup': 'n': expected an integer, got a string (type)"
        );

        let read = read_skill_file_definition(&state).unwrap();
        let err = handle_tool_call(
            &library,
            &mut state,
            &read,
            &call("read_skill_file", json!({"skill": "alpha"})),
            1000,
        )
        .unwrap()
        .unwrap_err();
        assert_eq!(err.message, "'read_skill_file' needs a string 'path'");

        let back = return_to_general_definition(&state).unwrap();
        let step = handle_tool_call(
            &library,
            &mut state,
            &back,
            &call("return_to_general", json!({})),
            1000,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            step,
            SkillStep::Done(SkillOutput::text(
                "Left skill(s) alpha. Back in the general context; their scoped tools are no longer available."
            ))
        );
        assert_eq!(state, ConversationSkills::default());

        let calculator = crate::builtin::calculator();
        assert_eq!(
            handle_tool_call(
                &library,
                &mut state,
                &calculator,
                &call("calculator", json!({})),
                1000
            ),
            None
        );
    }

    #[test]
    fn reimport_replaces_in_place_and_state_forgets_deleted_skills() {
        let mut library = SkillLibrary::from_packages(vec![
            package("a", &[], true, true),
            package("b", &[], true, true),
        ]);
        let mut newer = package("a", &[], true, true);
        newer.body = "New instructions.".into();
        assert!(library.insert(newer).is_some());
        assert_eq!(
            library.iter().map(|p| p.name()).collect::<Vec<_>>(),
            vec!["a", "b"]
        );
        assert_eq!(library.get("a").unwrap().body, "New instructions.");

        let mut state = ConversationSkills {
            active: vec!["a".into(), "b".into()],
            specialist: Some("b".into()),
        };
        library.remove("b");
        state.retain_installed(&library);
        assert_eq!(
            state,
            ConversationSkills {
                active: vec!["a".into()],
                specialist: Some("a".into())
            }
        );
        // The state is plain data that survives a reload.
        let json = serde_json::to_string(&state).unwrap();
        assert_eq!(json, r#"{"active":["a"],"specialist":"a"}"#);
        assert_eq!(
            serde_json::from_str::<ConversationSkills>(&json).unwrap(),
            state
        );
    }

    #[test]
    fn long_files_are_cut_at_a_character_boundary() {
        assert_eq!(capped("héllo", 100), "héllo");
        assert_eq!(
            capped("héllo", 2),
            "h\n\n[truncated: showing the first 1 of 6 bytes]"
        );
    }
}
