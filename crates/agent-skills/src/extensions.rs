//! Hearth's package extensions: `tools.json` (scoped tools, each run by a
//! Python or JavaScript script in the package) and `resources.json`
//! (scoped resources, read by URI). Both are available to the model only
//! while their skill is active.
//!
//! `tools.json` is a list of MCP-style tool definitions, either bare or as
//! `{"tools": [...]}`:
//!
//! ```json
//! {"tools": [{
//!   "name": "get_explain_plan",
//!   "description": "Explain a Trino query plan",
//!   "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}},
//!                   "required": ["query"]},
//!   "script": "scripts/explain.py"
//! }]}
//! ```
//!
//! `script` may be left out when `scripts/<name>.py`, `.js` or `.mjs`
//! exists (exactly one of them). `resources.json` lists
//! `{"uri", "description", "path", "name"?, "mimeType"?}`, where `path` is a
//! text file of the package that holds the resource's content.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::file::{FileKind, PackageFile};
use super::{Problem, Severity, ValidationMode, paths};
use hearth_base::schema::{check_bounded, check_schema};
use hearth_base::skill_id::{MCP_SEPARATOR, SkillId};

pub const TOOLS_FILE: &str = "tools.json";
pub const RESOURCES_FILE: &str = "resources.json";

/// Tool names Hearth itself uses for progressive disclosure; a scoped tool
/// may not take them.
pub const RESERVED_TOOL_NAMES: [&str; 6] = [
    "activate_skill",
    "read_skill_file",
    "call_skill_tool",
    "read_resource",
    "return_to_general",
    "discover_skills",
];

/// The most characters a resource URI may have.
pub const MAX_URI_CHARS: usize = 2048;

/// The language a scoped tool's script is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScriptLanguage {
    /// Runs in Pyodide inside the sandbox.
    Python,
    /// Runs in a sandboxed Worker.
    JavaScript,
}

impl ScriptLanguage {
    pub const ALL: [ScriptLanguage; 2] = [ScriptLanguage::Python, ScriptLanguage::JavaScript];

    pub fn as_str(self) -> &'static str {
        match self {
            ScriptLanguage::Python => "python",
            ScriptLanguage::JavaScript => "javascript",
        }
    }

    /// The extension new scripts get.
    pub fn extension(self) -> &'static str {
        match self {
            ScriptLanguage::Python => "py",
            ScriptLanguage::JavaScript => "js",
        }
    }

    /// The language of a script path, from its extension.
    pub fn from_path(path: &str) -> Option<ScriptLanguage> {
        let ext = paths::file_name(path).rsplit_once('.')?.1;
        match ext {
            "py" => Some(ScriptLanguage::Python),
            "js" | "mjs" => Some(ScriptLanguage::JavaScript),
            _ => None,
        }
    }
}

/// A tool a skill brings, available only while the skill is active.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScopedTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// The script's path inside the package.
    pub script: String,
    pub language: ScriptLanguage,
}

/// A resource a skill brings, read with `read_resource(uri)` while the
/// skill is active.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopedResource {
    pub uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The package file holding the content.
    pub path: String,
}

/// Reads one of the JSON manifests: the JSON Pointer of its list and the
/// list's items; `None` when the package has no such file or it is unusable.
fn read_manifest(
    files: &[PackageFile],
    name: &str,
    list_key: &str,
    out: &mut Reporter,
) -> Option<(String, Vec<Value>)> {
    let file = files.iter().find(|f| f.path == name)?;
    let Some(text) = file.text() else {
        out.error("", None, "the file is not UTF-8 text".into());
        return None;
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let line = u32::try_from(e.line()).ok().filter(|&l| l > 0);
            // serde_json ends its message with " at line L column C"; the
            // line is the problem's own, so only the column is kept.
            let text = e.to_string();
            let text = match text.rfind(" at line ") {
                Some(i) => format!("{} (column {})", &text[..i], e.column()),
                None => text,
            };
            out.error("", line, format!("invalid JSON: {text}"));
            return None;
        }
    };
    match value {
        Value::Array(items) => Some((String::new(), items)),
        Value::Object(mut obj) => {
            let items = match obj.remove(list_key) {
                Some(Value::Array(items)) => items,
                Some(other) => {
                    out.error(
                        &format!("/{list_key}"),
                        None,
                        format!("must be a list, not {}", describe(&other)),
                    );
                    return None;
                }
                None => {
                    out.error(
                        "",
                        None,
                        format!("expected a list, or an object with a \"{list_key}\" list"),
                    );
                    return None;
                }
            };
            for key in obj.keys() {
                out.warning(
                    &format!("/{key}"),
                    format!("unknown field '{key}' is ignored"),
                );
            }
            Some((format!("/{list_key}"), items))
        }
        other => {
            out.error(
                "",
                None,
                format!(
                    "expected a list, or an object with a \"{list_key}\" list, not {}",
                    describe(&other)
                ),
            );
            None
        }
    }
}

/// Collects problems for one manifest file.
struct Reporter {
    file: String,
    problems: Vec<Problem>,
}

impl Reporter {
    fn push(&mut self, severity: Severity, pointer: &str, line: Option<u32>, message: String) {
        let mut p = Problem::new(severity, self.file.clone(), message);
        if !pointer.is_empty() {
            p = p.at_field(pointer);
        }
        if let Some(line) = line {
            p = p.at_line(line);
        }
        self.problems.push(p);
    }
    fn error(&mut self, pointer: &str, line: Option<u32>, message: String) {
        self.push(Severity::Error, pointer, line, message);
    }
    fn warning(&mut self, pointer: &str, message: String) {
        self.push(Severity::Warning, pointer, None, message);
    }
}

fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A required, non-empty string field of `obj`.
fn required_string(
    obj: &Map<String, Value>,
    key: &str,
    at: &str,
    out: &mut Reporter,
) -> Option<String> {
    match obj.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Some(Value::String(_)) => {
            out.error(&format!("{at}/{key}"), None, "must not be empty".into());
            None
        }
        Some(other) => {
            out.error(
                &format!("{at}/{key}"),
                None,
                format!("must be a string, not {}", describe(other)),
            );
            None
        }
        None => {
            out.error(
                &format!("{at}/{key}"),
                None,
                "missing required field".into(),
            );
            None
        }
    }
}

fn optional_string(
    obj: &Map<String, Value>,
    key: &str,
    at: &str,
    out: &mut Reporter,
) -> Option<String> {
    match obj.get(key)? {
        Value::String(s) => Some(s.clone()),
        other => {
            out.warning(
                &format!("{at}/{key}"),
                format!("must be a string, not {}; ignored", describe(other)),
            );
            None
        }
    }
}

/// A field that may be spelt the MCP way (`inputSchema`) or in snake case.
fn either<'a>(
    obj: &'a Map<String, Value>,
    camel: &str,
    snake: &str,
    at: &str,
    out: &mut Reporter,
) -> Option<(&'a Value, String)> {
    match (obj.get(camel), obj.get(snake)) {
        (Some(v), None) => Some((v, format!("{at}/{camel}"))),
        (None, Some(v)) => Some((v, format!("{at}/{snake}"))),
        (Some(v), Some(_)) => {
            out.warning(
                &format!("{at}/{snake}"),
                format!("both '{camel}' and '{snake}' are given; '{camel}' is used"),
            );
            Some((v, format!("{at}/{camel}")))
        }
        (None, None) => None,
    }
}

fn check_tool_schema(
    schema: &Value,
    at: &str,
    input: bool,
    tool: Option<&str>,
    out: &mut Reporter,
) -> bool {
    let Value::Object(obj) = schema else {
        out.error(
            at,
            None,
            format!("must be a JSON Schema object, not {}", describe(schema)),
        );
        return false;
    };
    if input {
        match obj.get("type") {
            None => {}
            Some(Value::String(t)) if t == "object" => {}
            Some(other) => {
                out.error(
                    &format!("{at}/type"),
                    None,
                    format!(
                        "a tool's input must be an object, so type must be \"object\", not {other}"
                    ),
                );
                return false;
            }
        }
    }
    // A schema no check could finish on would freeze the tab on the tool's
    // first call, before anyone is asked: the tool stays out.
    if let Err(e) = check_bounded(schema) {
        let which = if input { "input" } else { "output" };
        let named = tool
            .map(|t| format!("tool '{t}' is left out: "))
            .unwrap_or_default();
        out.error(at, None, format!("{named}in its {which} schema, {e}"));
        return false;
    }
    for w in check_schema(schema) {
        out.warning(at, w.to_string());
    }
    true
}

/// Loads `tools.json`, if the package has one. A tool with a problem is
/// left out (an error); the rest load.
pub(crate) fn load_tools(
    files: &[PackageFile],
    prefix: &str,
    _mode: ValidationMode,
) -> (Vec<ScopedTool>, Vec<Problem>) {
    let mut out = Reporter {
        file: format!("{prefix}{TOOLS_FILE}"),
        problems: Vec::new(),
    };
    let Some((base, items)) = read_manifest(files, TOOLS_FILE, "tools", &mut out) else {
        return (Vec::new(), out.problems);
    };
    let mut tools: Vec<ScopedTool> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("{base}/{i}");
        let Value::Object(obj) = item else {
            out.error(
                &at,
                None,
                format!("a tool must be an object, not {}", describe(item)),
            );
            continue;
        };
        if let Some(tool) = load_tool(obj, &at, files, &tools, &mut out) {
            tools.push(tool);
        }
    }
    (tools, out.problems)
}

fn load_tool(
    obj: &Map<String, Value>,
    at: &str,
    files: &[PackageFile],
    earlier: &[ScopedTool],
    out: &mut Reporter,
) -> Option<ScopedTool> {
    const KNOWN: [&str; 9] = [
        "name",
        "description",
        "inputSchema",
        "input_schema",
        "outputSchema",
        "output_schema",
        "script",
        "title",
        "annotations",
    ];
    for key in obj.keys() {
        if !KNOWN.contains(&key.as_str()) {
            out.warning(
                &format!("{at}/{key}"),
                format!("unknown field '{key}' is ignored"),
            );
        }
    }
    let errors_before = out
        .problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .count();

    let name = required_string(obj, "name", at, out);
    let name_errors = out.problems.len();
    if let Some(name) = &name {
        if let Err(e) = SkillId::new(name.as_str()) {
            out.error(
                &format!("{at}/name"),
                None,
                format!("'{name}': {}", tool_name_error(&e)),
            );
        } else if name.contains(MCP_SEPARATOR) {
            out.error(
                &format!("{at}/name"),
                None,
                format!(
                    "'{name}': a tool name cannot contain '{MCP_SEPARATOR}', which only MCP servers' tools have"
                ),
            );
        } else if RESERVED_TOOL_NAMES.contains(&name.as_str()) {
            out.error(
                &format!("{at}/name"),
                None,
                format!("'{name}' is reserved for Hearth's own skill tools"),
            );
        } else if earlier.iter().any(|t| t.name == *name) {
            out.error(
                &format!("{at}/name"),
                None,
                format!("a tool named '{name}' is already defined in this file"),
            );
        }
    }
    let description = required_string(obj, "description", at, out);

    let input_schema = match either(obj, "inputSchema", "input_schema", at, out) {
        Some((schema, where_)) => {
            check_tool_schema(schema, &where_, true, name.as_deref(), out);
            schema.clone()
        }
        None => serde_json::json!({"type": "object", "properties": {}}),
    };
    let output_schema =
        either(obj, "outputSchema", "output_schema", at, out).map(|(schema, where_)| {
            check_tool_schema(schema, &where_, false, name.as_deref(), out);
            schema.clone()
        });

    let script = match (obj.get("script"), &name) {
        (Some(Value::String(path)), _) => {
            explicit_script(path, &format!("{at}/script"), files, out)
        }
        (Some(other), _) => {
            out.error(
                &format!("{at}/script"),
                None,
                format!("must be a string, not {}", describe(other)),
            );
            None
        }
        // A bad name is reported once, not again as a missing script.
        (None, Some(_))
            if out.problems[name_errors..].iter().any(|p| {
                p.field.as_deref() == Some(&format!("{at}/name")) && p.severity == Severity::Error
            }) =>
        {
            None
        }
        (None, Some(name)) => default_script(name, at, files, out),
        (None, None) => None,
    };

    let errors_after = out
        .problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .count();
    if errors_after > errors_before {
        return None;
    }
    let (script, language) = script?;
    Some(ScopedTool {
        name: name?,
        description: description?,
        input_schema,
        output_schema,
        script,
        language,
    })
}

fn tool_name_error(e: &hearth_base::skill_id::SkillIdError) -> String {
    match e {
        hearth_base::skill_id::SkillIdError::Empty => "a tool name cannot be empty".into(),
        hearth_base::skill_id::SkillIdError::TooLong(n) => {
            format!("a tool name has at most 64 characters, this one has {n}")
        }
        hearth_base::skill_id::SkillIdError::BadChar(c) => {
            format!("a tool name may hold only ASCII letters, digits, '_' and '-', not {c:?}")
        }
    }
}

/// The script a tool names, checked to be a text file of a known language.
fn explicit_script(
    path: &str,
    at: &str,
    files: &[PackageFile],
    out: &mut Reporter,
) -> Option<(String, ScriptLanguage)> {
    let path = match paths::normalize(path) {
        Ok(p) => p,
        Err(e) => {
            out.error(at, None, format!("'{}': {e}", path.escape_debug()));
            return None;
        }
    };
    let Some(language) = ScriptLanguage::from_path(&path) else {
        out.error(
            at,
            None,
            format!("'{path}': scripts must be Python (.py) or JavaScript (.js, .mjs)"),
        );
        return None;
    };
    match files.iter().find(|f| f.path == path) {
        None => {
            out.error(at, None, format!("'{path}' is not in the package"));
            None
        }
        Some(f) if f.kind == FileKind::Binary => {
            out.error(at, None, format!("'{path}' is not UTF-8 text"));
            None
        }
        Some(_) => Some((path, language)),
    }
}

/// `scripts/<name>.py`, `.js` or `.mjs`, when exactly one exists.
fn default_script(
    name: &str,
    at: &str,
    files: &[PackageFile],
    out: &mut Reporter,
) -> Option<(String, ScriptLanguage)> {
    let candidates: Vec<String> = ["py", "js", "mjs"]
        .iter()
        .map(|ext| format!("scripts/{name}.{ext}"))
        .filter(|p| files.iter().any(|f| f.path == *p))
        .collect();
    match candidates.as_slice() {
        [] => {
            out.error(
                &format!("{at}/script"),
                None,
                format!(
                    "no script for tool '{name}': add scripts/{name}.py or scripts/{name}.js, or name one with \"script\""
                ),
            );
            None
        }
        [one] => explicit_script(one, &format!("{at}/script"), files, out),
        many => {
            out.error(
                &format!("{at}/script"),
                None,
                format!(
                    "several scripts could implement tool '{name}' ({}); name one with \"script\"",
                    many.join(", ")
                ),
            );
            None
        }
    }
}

/// Loads `resources.json`, if the package has one.
pub(crate) fn load_resources(
    files: &[PackageFile],
    prefix: &str,
    _mode: ValidationMode,
) -> (Vec<ScopedResource>, Vec<Problem>) {
    let mut out = Reporter {
        file: format!("{prefix}{RESOURCES_FILE}"),
        problems: Vec::new(),
    };
    let Some((base, items)) = read_manifest(files, RESOURCES_FILE, "resources", &mut out) else {
        return (Vec::new(), out.problems);
    };
    let mut resources: Vec<ScopedResource> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("{base}/{i}");
        let Value::Object(obj) = item else {
            out.error(
                &at,
                None,
                format!("a resource must be an object, not {}", describe(item)),
            );
            continue;
        };
        const KNOWN: [&str; 6] = [
            "uri",
            "name",
            "description",
            "mimeType",
            "mime_type",
            "path",
        ];
        for key in obj.keys() {
            if !KNOWN.contains(&key.as_str()) {
                out.warning(
                    &format!("{at}/{key}"),
                    format!("unknown field '{key}' is ignored"),
                );
            }
        }
        let errors_before = out
            .problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .count();
        let uri = required_string(obj, "uri", &at, &mut out);
        if let Some(uri) = &uri {
            if let Err(message) = check_uri(uri) {
                out.error(&format!("{at}/uri"), None, message);
            } else if resources.iter().any(|r| r.uri == *uri) {
                out.error(
                    &format!("{at}/uri"),
                    None,
                    format!("'{uri}' is already listed in this file"),
                );
            }
        }
        let description = required_string(obj, "description", &at, &mut out);
        let name = optional_string(obj, "name", &at, &mut out);
        let mime_type = match either(obj, "mimeType", "mime_type", &at, &mut out) {
            Some((Value::String(s), _)) => Some(s.clone()),
            Some((other, where_)) => {
                out.warning(
                    &where_,
                    format!("must be a string, not {}; ignored", describe(other)),
                );
                None
            }
            None => None,
        };
        let path = required_string(obj, "path", &at, &mut out).and_then(|raw| {
            let here = format!("{at}/path");
            let path = match paths::normalize(&raw) {
                Ok(p) => p,
                Err(e) => {
                    out.error(&here, None, format!("'{}': {e}", raw.escape_debug()));
                    return None;
                }
            };
            match files.iter().find(|f| f.path == path) {
                None => {
                    out.error(&here, None, format!("'{path}' is not in the package"));
                    None
                }
                Some(f) if f.kind == FileKind::Binary => {
                    out.error(
                        &here,
                        None,
                        format!("'{path}' is a binary file; binary files are never sent to a model, so they cannot be resources"),
                    );
                    None
                }
                Some(_) => Some(path),
            }
        });
        let errors_after = out
            .problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .count();
        if errors_after > errors_before {
            continue;
        }
        if let (Some(uri), Some(description), Some(path)) = (uri, description, path) {
            resources.push(ScopedResource {
                uri,
                name,
                description,
                mime_type,
                path,
            });
        }
    }
    (resources, out.problems)
}

/// A URI has a scheme, something after it, and no spaces or control
/// characters.
fn check_uri(uri: &str) -> Result<(), String> {
    let n = uri.chars().count();
    if n > MAX_URI_CHARS {
        return Err(format!(
            "has {n} characters; at most {MAX_URI_CHARS} are allowed"
        ));
    }
    if let Some(c) = uri.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "'{}' contains U+{:04X}; URIs have no spaces or control characters",
            uri.escape_debug(),
            c as u32
        ));
    }
    let Some((scheme, rest)) = uri.split_once(':') else {
        return Err(format!(
            "'{uri}' has no scheme, e.g. resource://skill/notes.md"
        ));
    };
    let scheme_ok = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'));
    if !scheme_ok {
        return Err(format!("'{uri}' has an invalid scheme '{scheme}'"));
    }
    if rest.is_empty() {
        return Err(format!("'{uri}' has nothing after its scheme"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_languages_come_from_extensions() {
        let cases = [
            ("scripts/a.py", Some(ScriptLanguage::Python)),
            ("scripts/a.js", Some(ScriptLanguage::JavaScript)),
            ("scripts/a.mjs", Some(ScriptLanguage::JavaScript)),
            ("scripts/a.sh", None),
            ("scripts/py", None),
        ];
        for (path, expected) in cases {
            assert_eq!(ScriptLanguage::from_path(path), expected, "for {path}");
        }
    }

    #[test]
    fn uris_need_a_scheme_and_no_spaces() {
        let cases: Vec<(&str, Result<(), &str>)> = vec![
            ("resource://trino/rules.md", Ok(())),
            ("skill:notes", Ok(())),
            (
                "no-scheme",
                Err("'no-scheme' has no scheme, e.g. resource://skill/notes.md"),
            ),
            ("1x://a", Err("'1x://a' has an invalid scheme '1x'")),
            (
                "a b://c",
                Err("'a b://c' contains U+0020; URIs have no spaces or control characters"),
            ),
            ("x:", Err("'x:' has nothing after its scheme")),
        ];
        for (uri, expected) in cases {
            assert_eq!(
                check_uri(uri),
                expected.map_err(str::to_string),
                "for {uri}"
            );
        }
    }
}
