//! SKILL.md frontmatter: the fields, and every rule the agentskills.io
//! specification sets on them, checked strictly (as `validate` does) or
//! leniently (as a client loading other people's skills should).

use std::collections::HashMap;
use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::frontmatter::{self, SplitError};
use super::yaml::{self, Node, ScalarKind, Value};
use super::{Problem, Severity, ValidationMode};

pub const MAX_NAME_CHARS: usize = 64;
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
pub const MAX_COMPATIBILITY_CHARS: usize = 500;
/// The specification recommends keeping SKILL.md under this many lines.
pub const RECOMMENDED_MAX_LINES: usize = 500;

/// The fields the specification defines.
pub const SPEC_FIELDS: [&str; 6] = [
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// Fields Claude Code adds. Lenient loading accepts them without a word;
/// strict validation reports them as outside the specification.
pub const CLAUDE_CODE_FIELDS: [&str; 12] = [
    "when_to_use",
    "argument-hint",
    "arguments",
    "disable-model-invocation",
    "user-invocable",
    "model",
    "effort",
    "context",
    "agent",
    "hooks",
    "paths",
    "shell",
];

/// What a SKILL.md's frontmatter says about its skill.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkillProperties {
    pub name: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compatibility: Option<String>,
    #[serde(
        default,
        rename = "allowed-tools",
        skip_serializing_if = "Option::is_none"
    )]
    pub allowed_tools: Option<AllowedTools>,
    #[serde(default, skip_serializing_if = "Metadata::is_empty")]
    pub metadata: Metadata,
    /// Claude Code: more on when to use the skill; the catalog appends it to
    /// the description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_to_use: Option<String>,
    /// Claude Code: shown after `/name` in the command bar.
    #[serde(
        default,
        rename = "argument-hint",
        skip_serializing_if = "Option::is_none"
    )]
    pub argument_hint: Option<String>,
    /// Claude Code: `true` keeps the skill out of the catalog and out of the
    /// model's reach; the person can still run `/name`.
    #[serde(
        default,
        rename = "disable-model-invocation",
        skip_serializing_if = "is_false"
    )]
    pub disable_model_invocation: bool,
    /// Claude Code: `false` hides the skill from the person's `/` menu.
    #[serde(
        default = "yes",
        rename = "user-invocable",
        skip_serializing_if = "is_true"
    )]
    pub user_invocable: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}
fn is_true(b: &bool) -> bool {
    *b
}
fn yes() -> bool {
    true
}

impl SkillProperties {
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            license: None,
            compatibility: None,
            allowed_tools: None,
            metadata: Metadata::default(),
            when_to_use: None,
            argument_hint: None,
            disable_model_invocation: false,
            user_invocable: true,
        }
    }

    /// May the model see and activate this skill?
    pub fn model_invocable(&self) -> bool {
        !self.disable_model_invocation
    }

    /// The text the catalog shows: the description, plus Claude Code's
    /// `when_to_use` when present.
    pub fn catalog_description(&self) -> String {
        match self.when_to_use.as_deref().map(str::trim) {
            Some(extra) if !extra.is_empty() => format!("{} {}", self.description, extra),
            _ => self.description.clone(),
        }
    }

    /// The properties as the reference tool's `read-properties` prints them:
    /// name, description, then the optional fields that are set.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// `allowed-tools` as written: the specification's space-separated string,
/// or the list Claude Code also accepts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AllowedTools {
    Text(String),
    List(Vec<String>),
}

impl AllowedTools {
    /// The individual tool patterns. Strings split on spaces and commas,
    /// except inside parentheses: `Bash(git log:*) Read` is two tools.
    pub fn patterns(&self) -> Vec<String> {
        match self {
            AllowedTools::List(items) => items
                .iter()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
            AllowedTools::Text(text) => {
                let mut out = Vec::new();
                let mut current = String::new();
                let mut depth = 0usize;
                for c in text.chars() {
                    match c {
                        '(' => {
                            depth += 1;
                            current.push(c);
                        }
                        ')' => {
                            depth = depth.saturating_sub(1);
                            current.push(c);
                        }
                        c if depth == 0 && (c.is_whitespace() || c == ',') => {
                            if !current.is_empty() {
                                out.push(std::mem::take(&mut current));
                            }
                        }
                        c => current.push(c),
                    }
                }
                if !current.is_empty() {
                    out.push(current);
                }
                out
            }
        }
    }
}

/// `metadata`: string keys to values, in the order written. The
/// specification wants string values; nested values that real skills carry
/// are kept as JSON.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Metadata(pub Vec<(String, serde_json::Value)>);

impl Metadata {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, key: &str) -> Option<&serde_json::Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

impl Serialize for Metadata {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Metadata {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Metadata;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Metadata, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = m.next_entry()? {
                    out.push(entry);
                }
                Ok(Metadata(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// A SKILL.md to read, and where it sits.
#[derive(Clone, Copy, Debug)]
pub struct SkillMdSource<'a> {
    pub text: &'a str,
    /// The file's path as problems should name it, e.g. `pdf-tools/SKILL.md`.
    pub file: &'a str,
    /// The name of the folder holding the file, when known; `name` must
    /// match it.
    pub folder: Option<&'a str>,
}

/// The outcome of reading one SKILL.md.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedSkillMd {
    /// `None` when the skill cannot be used: lenient loading skips it, and
    /// strict validation could not find a name and a description.
    pub properties: Option<SkillProperties>,
    /// The Markdown after the frontmatter, trimmed.
    pub body: String,
    pub problems: Vec<Problem>,
}

impl ParsedSkillMd {
    pub fn has_errors(&self) -> bool {
        self.problems.iter().any(|p| p.severity == Severity::Error)
    }
}

/// Reads a SKILL.md and checks it in `mode`. Never panics, whatever the
/// input.
pub fn parse_skill_md(source: SkillMdSource<'_>, mode: ValidationMode) -> ParsedSkillMd {
    let mut cx = Checker {
        file: source.file,
        mode,
        problems: Vec::new(),
        line_offset: 0,
    };
    let properties = cx.run(source);
    let (properties, body) = match properties {
        Some((p, body)) => (p, body),
        None => (None, String::new()),
    };
    ParsedSkillMd {
        properties,
        body,
        problems: cx.problems,
    }
}

struct Checker<'a> {
    file: &'a str,
    mode: ValidationMode,
    problems: Vec<Problem>,
    line_offset: u32,
}

/// The fields as found, before the rules run.
#[derive(Default)]
struct Found {
    name: Option<(Node, u32)>,
    description: Option<(Node, u32)>,
    license: Option<(Node, u32)>,
    compatibility: Option<(Node, u32)>,
    metadata: Option<(Node, u32)>,
    allowed_tools: Option<(Node, u32)>,
    when_to_use: Option<(Node, u32)>,
    argument_hint: Option<(Node, u32)>,
    disable_model_invocation: Option<(Node, u32)>,
    user_invocable: Option<(Node, u32)>,
}

impl<'a> Checker<'a> {
    fn problem(
        &mut self,
        severity: Severity,
        line: Option<u32>,
        field: Option<&str>,
        message: String,
    ) {
        self.problems.push(Problem {
            severity,
            file: self.file.to_string(),
            line,
            field: field.map(str::to_string),
            message,
        });
    }

    fn error(&mut self, line: Option<u32>, field: Option<&str>, message: String) {
        self.problem(Severity::Error, line, field, message);
    }

    /// An error in strict mode, a warning when loading.
    fn rule(&mut self, line: Option<u32>, field: Option<&str>, message: String) {
        let severity = match self.mode {
            ValidationMode::Strict => Severity::Error,
            ValidationMode::Lenient => Severity::Warning,
        };
        self.problem(severity, line, field, message);
    }

    fn file_line(&self, yaml_line: u32) -> Option<u32> {
        (yaml_line > 0).then(|| yaml_line.saturating_add(self.line_offset))
    }

    fn run(&mut self, source: SkillMdSource<'_>) -> Option<(Option<SkillProperties>, String)> {
        let text = source.text.strip_prefix('\u{feff}').unwrap_or(source.text);
        let lenient = self.mode == ValidationMode::Lenient;
        let split = match frontmatter::split(text, lenient) {
            Ok(s) => s,
            Err(SplitError::NoOpening) => {
                self.error(
                    Some(1),
                    None,
                    "must start with YAML frontmatter: the first line must be '---'".into(),
                );
                return None;
            }
            Err(SplitError::NotClosed { opened_on }) => {
                self.error(
                    Some(opened_on),
                    None,
                    format!(
                        "the frontmatter opened with '---' on line {opened_on} is never closed by another '---' line"
                    ),
                );
                return None;
            }
        };
        if split.leading_blank_lines > 0 {
            self.problem(
                Severity::Warning,
                Some(1),
                None,
                format!(
                    "{} blank line(s) before the opening '---'; other tools may not find the frontmatter",
                    split.leading_blank_lines
                ),
            );
        }
        self.line_offset = split.line_offset;
        let body = split.body.to_string();
        if self.mode == ValidationMode::Strict {
            let lines = text.lines().count();
            if lines > RECOMMENDED_MAX_LINES {
                self.problem(
                    Severity::Warning,
                    None,
                    None,
                    format!(
                        "the file has {lines} lines; the specification recommends under {RECOMMENDED_MAX_LINES} and moving detail to referenced files"
                    ),
                );
            }
        }

        let root = match yaml::parse(split.yaml) {
            Ok(node) => node,
            Err(first) => {
                // The client guide's retry: quote unquoted values holding
                // ": " and parse again.
                let repaired = frontmatter::quote_colon_values(split.yaml)
                    .and_then(|(text, repairs)| Some((yaml::parse(&text).ok()?, repairs)));
                match (repaired, self.mode) {
                    (Some((_, repairs)), ValidationMode::Strict) => {
                        let keys: Vec<String> =
                            repairs.iter().map(|r| format!("'{}'", r.key)).collect();
                        self.error(
                            first.line.and_then(|l| self.file_line(l)),
                            None,
                            format!(
                                "invalid YAML: {}; the value of {} contains ': ' and must be quoted",
                                first.message,
                                keys.join(", ")
                            ),
                        );
                        return Some((None, body));
                    }
                    (Some((node, repairs)), ValidationMode::Lenient) => {
                        for r in &repairs {
                            let line = self.file_line(r.line);
                            self.problem(
                                Severity::Warning,
                                line,
                                Some(&r.key),
                                "the value contains ': ' but is not quoted; read it as if it were quoted"
                                    .into(),
                            );
                        }
                        node
                    }
                    (None, ValidationMode::Strict | ValidationMode::Lenient) => {
                        self.error(
                            first.line.and_then(|l| self.file_line(l)),
                            None,
                            format!("invalid YAML in the frontmatter: {}", first.message),
                        );
                        return None;
                    }
                }
            }
        };

        let entries = match root.value {
            Value::Map(entries) => entries,
            Value::Null => Vec::new(),
            other => {
                self.error(
                    self.file_line(root.line),
                    None,
                    format!(
                        "the frontmatter must be a mapping of fields, not {}",
                        other.describe()
                    ),
                );
                return None;
            }
        };

        let found = self.collect(entries);
        let properties = self.check(found, source.folder);
        Some((properties, body))
    }

    /// Sorts entries into fields, reporting unknown and repeated ones.
    fn collect(&mut self, entries: Vec<(Node, Node)>) -> Found {
        let mut found = Found::default();
        let mut seen: HashMap<String, u32> = HashMap::new();
        for (key, value) in entries {
            let key_line = self.file_line(key.line).unwrap_or(0);
            let key_text = match &key.value {
                Value::Scalar { text, .. } => text.clone(),
                other => {
                    self.error(
                        Some(key_line),
                        None,
                        format!("a field name must be text, not {}", other.describe()),
                    );
                    continue;
                }
            };
            if let Some(first_line) = seen.get(&key_text) {
                let message = format!(
                    "the field appears more than once (lines {first_line} and {key_line}); the last one is used"
                );
                self.rule(Some(key_line), Some(&key_text), message);
            } else {
                seen.insert(key_text.clone(), key_line);
            }
            let slot = match key_text.as_str() {
                "name" => &mut found.name,
                "description" => &mut found.description,
                "license" => &mut found.license,
                "compatibility" => &mut found.compatibility,
                "metadata" => &mut found.metadata,
                "allowed-tools" => &mut found.allowed_tools,
                other => {
                    let claude = CLAUDE_CODE_FIELDS.contains(&other);
                    match (self.mode, claude) {
                        (ValidationMode::Strict, true) => self.error(
                            Some(key_line),
                            Some(other),
                            format!(
                                "unknown field: '{other}' is a Claude Code extension, not part of the Agent Skills specification (allowed: {})",
                                SPEC_FIELDS.join(", ")
                            ),
                        ),
                        (ValidationMode::Strict, false) => self.error(
                            Some(key_line),
                            Some(other),
                            format!(
                                "unknown field '{}' (allowed: {})",
                                other.escape_debug(),
                                SPEC_FIELDS.join(", ")
                            ),
                        ),
                        (ValidationMode::Lenient, true) => {}
                        (ValidationMode::Lenient, false) => self.problem(
                            Severity::Warning,
                            Some(key_line),
                            Some(other),
                            format!("unknown field '{}' is ignored", other.escape_debug()),
                        ),
                    }
                    match other {
                        "when_to_use" => &mut found.when_to_use,
                        "argument-hint" => &mut found.argument_hint,
                        "disable-model-invocation" => &mut found.disable_model_invocation,
                        "user-invocable" => &mut found.user_invocable,
                        _ => continue,
                    }
                }
            };
            *slot = Some((value, key_line));
        }
        found
    }

    /// Applies the rules; returns the properties when the skill is usable.
    fn check(&mut self, found: Found, folder: Option<&str>) -> Option<SkillProperties> {
        let lenient = self.mode == ValidationMode::Lenient;

        // name
        let mut name = match found.name {
            None => None,
            Some((node, line)) => match self.text_of(&node, line, "name") {
                Some(text) if text.trim().is_empty() => {
                    self.rule(Some(line), Some("name"), "must not be empty".into());
                    None
                }
                Some(text) => {
                    let name = text.trim().to_string();
                    self.check_name(&name, line, folder);
                    Some(name)
                }
                None => None,
            },
        };
        let name_given = name.is_some();
        if name.is_none() {
            match (self.mode, folder) {
                (ValidationMode::Lenient, Some(folder)) => {
                    self.problem(
                        Severity::Warning,
                        None,
                        Some("name"),
                        format!("no usable name; using the folder name '{folder}'"),
                    );
                    name = Some(folder.to_string());
                }
                (ValidationMode::Lenient, None) => {
                    self.error(
                        None,
                        Some("name"),
                        "no usable name, and no folder name to use instead; the skill is skipped"
                            .into(),
                    );
                }
                (ValidationMode::Strict, _) => {
                    if found_missing(&self.problems, "name") {
                        self.error(None, Some("name"), "missing required field".into());
                    }
                }
            }
        }

        // description
        let description = match found.description {
            None => {
                let suffix = if lenient {
                    "; the skill is skipped"
                } else {
                    ""
                };
                self.error(
                    None,
                    Some("description"),
                    format!("missing required field{suffix}"),
                );
                None
            }
            Some((node, line)) => match self.text_of(&node, line, "description") {
                Some(text) if text.trim().is_empty() => {
                    let suffix = if lenient {
                        "; the skill is skipped"
                    } else {
                        ""
                    };
                    self.error(
                        Some(line),
                        Some("description"),
                        format!("must not be empty{suffix}"),
                    );
                    None
                }
                Some(text) => {
                    let text = text.trim().to_string();
                    let n = text.chars().count();
                    if n > MAX_DESCRIPTION_CHARS {
                        self.rule(
                            Some(line),
                            Some("description"),
                            format!(
                                "has {n} characters; at most {MAX_DESCRIPTION_CHARS} are allowed"
                            ),
                        );
                    }
                    Some(text)
                }
                None => None,
            },
        };

        let license = found.license.and_then(|(node, line)| {
            let text = self.optional_text(&node, line, "license")?;
            Some(text)
        });

        let compatibility = found.compatibility.and_then(|(node, line)| {
            let text = self.optional_text(&node, line, "compatibility")?;
            let n = text.chars().count();
            if n > MAX_COMPATIBILITY_CHARS {
                self.rule(
                    Some(line),
                    Some("compatibility"),
                    format!("has {n} characters; at most {MAX_COMPATIBILITY_CHARS} are allowed"),
                );
            }
            Some(text)
        });

        let metadata = match found.metadata {
            None => Metadata::default(),
            Some((node, line)) => self.metadata(node, line),
        };

        let allowed_tools = found
            .allowed_tools
            .and_then(|(node, line)| self.allowed_tools(node, line));

        let when_to_use = found
            .when_to_use
            .and_then(|(node, line)| self.optional_text(&node, line, "when_to_use"));
        let argument_hint = found
            .argument_hint
            .and_then(|(node, line)| self.optional_text(&node, line, "argument-hint"));
        let disable_model_invocation = found
            .disable_model_invocation
            .and_then(|(node, line)| self.flag(&node, line, "disable-model-invocation"))
            .unwrap_or(false);
        let user_invocable = found
            .user_invocable
            .and_then(|(node, line)| self.flag(&node, line, "user-invocable"))
            .unwrap_or(true);

        if self.mode == ValidationMode::Strict && !name_given {
            // Strict mode still hands back what it could read when both
            // required fields exist, so tools can show them.
            return None;
        }
        let (name, description) = (name?, description?);
        Some(SkillProperties {
            name,
            description,
            license,
            compatibility,
            allowed_tools,
            metadata,
            when_to_use,
            argument_hint,
            disable_model_invocation,
            user_invocable,
        })
    }

    /// The text of a scalar field; reports and returns `None` otherwise.
    fn text_of(&mut self, node: &Node, line: u32, field: &str) -> Option<String> {
        match &node.value {
            Value::Scalar { text, .. } => Some(text.clone()),
            Value::Null => Some(String::new()),
            other => {
                let message = format!("must be text, not {}", other.describe());
                match (field, self.mode) {
                    ("description", ValidationMode::Lenient) => self.error(
                        Some(line),
                        Some(field),
                        format!("{message}; the skill is skipped"),
                    ),
                    ("description", ValidationMode::Strict) => {
                        self.error(Some(line), Some(field), message)
                    }
                    _ => self.rule(Some(line), Some(field), message),
                }
                None
            }
        }
    }

    /// An optional text field: present but empty is a mistake worth naming.
    fn optional_text(&mut self, node: &Node, line: u32, field: &str) -> Option<String> {
        let text = self.text_of(node, line, field)?;
        let text = text.trim().to_string();
        if text.is_empty() {
            self.rule(
                Some(line),
                Some(field),
                "is empty; give it a value or remove it".into(),
            );
            return None;
        }
        Some(text)
    }

    fn check_name(&mut self, name: &str, line: u32, folder: Option<&str>) {
        let field = Some("name");
        let n = name.chars().count();
        if n > MAX_NAME_CHARS {
            self.rule(
                Some(line),
                field,
                format!("'{name}' has {n} characters; at most {MAX_NAME_CHARS} are allowed"),
            );
        }
        if name
            .chars()
            .any(|c| c.to_lowercase().ne(std::iter::once(c)))
        {
            self.rule(Some(line), field, format!("'{name}' must be lowercase"));
        }
        if name.starts_with('-') || name.ends_with('-') {
            self.rule(
                Some(line),
                field,
                format!("'{name}' must not start or end with a hyphen"),
            );
        }
        if name.contains("--") {
            self.rule(
                Some(line),
                field,
                format!("'{name}' must not contain consecutive hyphens"),
            );
        }
        let mut bad: Vec<char> = name
            .chars()
            .filter(|c| !(c.is_alphanumeric() || *c == '-'))
            .collect();
        bad.dedup();
        if !bad.is_empty() {
            let list: Vec<String> = bad.iter().map(|c| describe_char(*c)).collect();
            self.rule(
                Some(line),
                field,
                format!(
                    "'{}' may contain only lowercase letters, digits and hyphens, not {}",
                    name.escape_debug(),
                    list.join(", ")
                ),
            );
        }
        if let Some(folder) = folder
            && folder != name
        {
            self.rule(
                Some(line),
                field,
                format!(
                    "'{}' does not match the folder name '{}'",
                    name.escape_debug(),
                    folder.escape_debug()
                ),
            );
        }
    }

    fn metadata(&mut self, node: Node, line: u32) -> Metadata {
        let entries = match node.value {
            Value::Map(entries) => entries,
            Value::Null => {
                self.rule(
                    Some(line),
                    Some("metadata"),
                    "is empty; give it key-value pairs or remove it".into(),
                );
                return Metadata::default();
            }
            other => {
                self.rule(
                    Some(line),
                    Some("metadata"),
                    format!(
                        "must be a mapping of keys to strings, not {}",
                        other.describe()
                    ),
                );
                return Metadata::default();
            }
        };
        let mut out: Vec<(String, serde_json::Value)> = Vec::new();
        for (key, value) in entries {
            let key_line = self.file_line(key.line);
            let key = match key.value {
                Value::Scalar { text, .. } => text,
                other => {
                    self.rule(
                        key_line,
                        Some("metadata"),
                        format!("keys must be text, not {}", other.describe()),
                    );
                    continue;
                }
            };
            let field = format!("metadata.{key}");
            let json = match value.value {
                Value::Scalar { text, .. } => serde_json::Value::String(text),
                Value::Null => {
                    if self.mode == ValidationMode::Strict {
                        self.problem(
                            Severity::Warning,
                            key_line,
                            Some(&field),
                            "has no value; the specification expects a string".into(),
                        );
                    }
                    serde_json::Value::String(String::new())
                }
                nested @ (Value::Seq(_) | Value::Map(_)) => {
                    if self.mode == ValidationMode::Strict {
                        self.problem(
                            Severity::Warning,
                            key_line,
                            Some(&field),
                            format!(
                                "is {}; the specification expects string values (kept as is)",
                                nested.describe()
                            ),
                        );
                    }
                    to_json(nested)
                }
            };
            // A repeated key keeps its first position and its last value.
            match out.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = json,
                None => out.push((key, json)),
            }
        }
        Metadata(out)
    }

    fn allowed_tools(&mut self, node: Node, line: u32) -> Option<AllowedTools> {
        let field = Some("allowed-tools");
        match node.value {
            Value::Scalar { text, .. } => {
                let text = text.trim().to_string();
                if text.is_empty() {
                    self.rule(
                        Some(line),
                        field,
                        "is empty; give it a value or remove it".into(),
                    );
                    return None;
                }
                Some(AllowedTools::Text(text))
            }
            Value::Seq(items) => {
                if self.mode == ValidationMode::Strict {
                    self.error(
                        Some(line),
                        field,
                        "must be a space-separated string; a list is a Claude Code form".into(),
                    );
                }
                let mut tools = Vec::new();
                for item in items {
                    match item.value {
                        Value::Scalar { text, .. } => tools.push(text),
                        other => self.rule(
                            self.file_line(item.line),
                            field,
                            format!("list items must be text, not {}", other.describe()),
                        ),
                    }
                }
                Some(AllowedTools::List(tools))
            }
            Value::Null => {
                self.rule(
                    Some(line),
                    field,
                    "is empty; give it a value or remove it".into(),
                );
                None
            }
            Value::Map(_) => {
                self.rule(
                    Some(line),
                    field,
                    "must be a space-separated string of tool names, not a mapping".into(),
                );
                None
            }
        }
    }

    fn flag(&mut self, node: &Node, line: u32, field: &str) -> Option<bool> {
        match &node.value {
            Value::Scalar { text, kind } => {
                let parsed = match kind {
                    // Quoted "true" counts too: the intent is plain.
                    ScalarKind::Bool | ScalarKind::Text => match text.trim() {
                        "true" | "True" | "TRUE" => Some(true),
                        "false" | "False" | "FALSE" => Some(false),
                        _ => None,
                    },
                    ScalarKind::Number => None,
                };
                if parsed.is_none() {
                    self.problem(
                        Severity::Warning,
                        Some(line),
                        Some(field),
                        format!(
                            "must be true or false, not '{}'; ignored",
                            text.escape_debug()
                        ),
                    );
                }
                parsed
            }
            other => {
                self.problem(
                    Severity::Warning,
                    Some(line),
                    Some(field),
                    format!("must be true or false, not {}; ignored", other.describe()),
                );
                None
            }
        }
    }
}

/// True when no problem about `field` has been reported yet, so "missing"
/// is not said on top of "must be text".
fn found_missing(problems: &[Problem], field: &str) -> bool {
    !problems.iter().any(|p| p.field.as_deref() == Some(field))
}

fn to_json(value: Value) -> serde_json::Value {
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Scalar { text, kind } => match kind {
            ScalarKind::Text => serde_json::Value::String(text),
            ScalarKind::Bool => serde_json::Value::Bool(text.trim().eq_ignore_ascii_case("true")),
            ScalarKind::Number => match serde_json::from_str::<serde_json::Number>(text.trim()) {
                Ok(n) => serde_json::Value::Number(n),
                Err(_) => serde_json::Value::String(text),
            },
        },
        Value::Seq(items) => {
            serde_json::Value::Array(items.into_iter().map(|n| to_json(n.value)).collect())
        }
        Value::Map(entries) => {
            let mut map = serde_json::Map::new();
            for (k, v) in entries {
                let key = match k.value {
                    Value::Scalar { text, .. } => text,
                    other => to_json(other).to_string(),
                };
                map.insert(key, to_json(v.value));
            }
            serde_json::Value::Object(map)
        }
    }
}

fn describe_char(c: char) -> String {
    match c {
        '\u{0300}'..='\u{036F}' => format!(
            "the combining accent U+{:04X} (write accented letters as single characters)",
            c as u32
        ),
        ' ' => "spaces".into(),
        '_' => "'_'".into(),
        c if c.is_control() || c.is_whitespace() => format!("U+{:04X}", c as u32),
        c if c.is_ascii() => format!("'{c}'"),
        c => format!("'{c}' (U+{:04X})", c as u32),
    }
}
