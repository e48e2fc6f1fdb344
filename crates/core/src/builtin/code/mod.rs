//! The enhanced tier's skills: running JavaScript and Python in the browser
//! sandbox, and reading files the person granted.
//!
//! Everything here is pure: the skills' definitions, the protocol spoken
//! with the sandbox page ([`protocol`]), the rules for paths inside grants
//! ([`grant`]), text decoding ([`encoding`]), and how results read
//! ([`output`], [`files`]). The app supplies the sandbox iframe, the
//! workers and the File System Access handles.

pub mod encoding;
pub mod files;
pub mod grant;
pub mod output;
pub mod protocol;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::skill::command_forms::{CommandForm, TextShape};
use crate::skill::{Category, SkillDefinition, SkillId, Tier};
use protocol::Language;

/// The longest snippet accepted, in characters.
pub const MAX_CODE_CHARS: u64 = 200_000;
/// The most files or folders one run may be handed.
pub const MAX_RUN_FILES: u64 = 100;
/// The most bytes of files one run may be handed.
pub const MAX_RUN_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// The Pyodide files the sandbox needs to start Python, all served by the
/// app and handed to the sandbox as bytes.
pub const PYTHON_RUNTIME_FILES: [&str; 5] = [
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
];

/// Timeouts: a default and a cap per language, and a floor for both.
pub const MIN_TIMEOUT_MS: u64 = 100;
pub const JS_DEFAULT_TIMEOUT_MS: u32 = 10_000;
pub const JS_MAX_TIMEOUT_MS: u64 = 60_000;
pub const PY_DEFAULT_TIMEOUT_MS: u32 = 30_000;
pub const PY_MAX_TIMEOUT_MS: u64 = 300_000;
/// After an interrupt, how long Python gets to stop before its worker is
/// terminated. Generous, because a starved worker on a busy machine (or a
/// phone) can take seconds to reach its next interrupt check, and stopping
/// it there keeps the conversation's variables. The sandbox page holds the
/// same figure as `GRACE_MS`.
pub const INTERRUPT_GRACE_MS: u32 = 5_000;

impl Language {
    pub fn skill_id(self) -> &'static str {
        match self {
            Language::Javascript => "run_javascript",
            Language::Python => "run_python",
        }
    }

    pub fn from_skill_id(id: &str) -> Option<Language> {
        [Language::Javascript, Language::Python]
            .into_iter()
            .find(|l| l.skill_id() == id)
    }

    pub fn default_timeout_ms(self) -> u32 {
        match self {
            Language::Javascript => JS_DEFAULT_TIMEOUT_MS,
            Language::Python => PY_DEFAULT_TIMEOUT_MS,
        }
    }

    pub fn max_timeout_ms(self) -> u64 {
        match self {
            Language::Javascript => JS_MAX_TIMEOUT_MS,
            Language::Python => PY_MAX_TIMEOUT_MS,
        }
    }
}

fn id(s: &str) -> SkillId {
    SkillId::new(s).unwrap_or_else(|e| panic!("enhanced skill id {s:?}: {e}"))
}

fn run_schema(language: Language) -> Value {
    let (code_help, input_help, files_help) = match language {
        Language::Javascript => (
            "JavaScript to run in a sandboxed worker with no network. The value of the last expression is the result (with top-level await or return, what the code returns). console output is captured.",
            "Any JSON, available to the code as the global `input`.",
            "Granted files or folders to hand to the code, e.g. [\"reports/q3.csv\"]. Read them with readTextFile('/mnt/data/reports/q3.csv') or readFile(...) for bytes; listFiles() lists them. writeFile('/mnt/out/name', data) returns a file to the person.",
        ),
        Language::Python => (
            "Python 3 (Pyodide, standard library only) to run in a sandboxed worker with no network. stdout and stderr are captured and the value of the last expression is the result.",
            "Any JSON, given to the code on stdin: json.load(sys.stdin).",
            "Granted files or folders to hand to the code, e.g. [\"reports/q3.csv\"]. They appear read-only under /mnt/data/, e.g. /mnt/data/reports/q3.csv. Files the code writes under /mnt/out/ are returned to the person as downloads.",
        ),
    };
    json!({
        "type": "object",
        "properties": {
            "code": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_CODE_CHARS,
                "description": code_help
            },
            "input": {"description": input_help},
            "files": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": grant::MAX_PATH_BYTES},
                "maxItems": MAX_RUN_FILES,
                "description": files_help
            },
            "timeout_ms": {
                "type": "integer",
                "minimum": MIN_TIMEOUT_MS,
                "maximum": language.max_timeout_ms(),
                "description": format!(
                    "Wall-clock limit in milliseconds; without it, the limit the person set in Settings ({} unless changed)",
                    language.default_timeout_ms()
                )
            }
        },
        "required": ["code"],
        "additionalProperties": false
    })
}

pub fn run_javascript() -> SkillDefinition {
    SkillDefinition::new(
        id("run_javascript"),
        "Run JavaScript",
        Tier::Enhanced,
        Category::Developer,
    )
    .with_icon("code")
    .with_description(
        "Run a JavaScript snippet in a sandboxed worker with no network and no access to \
         Hearth's data. Returns console output, the value of the last expression, and errors \
         with line numbers. An OffscreenCanvas as the last value comes back as a PNG \
         picture, for charts and drawings. Stopped after a time limit (default 10 s).",
    )
    .with_tags([
        "javascript",
        "js",
        "code",
        "run",
        "compute",
        "sandbox",
        "json",
    ])
    .with_examples([
        "Run [1,2,3].map(x => x * 2) in JavaScript",
        "Parse this JSON and count the keys",
        "Compute the SHA-256 of a string with crypto.subtle",
    ])
    .with_commands([CommandForm::new(
        "run_javascript",
        TextShape::Whole {
            param: "code".into(),
        },
        "Run a JavaScript snippet in the sandbox; the last value is shown",
    )
    .examples(["/run_javascript [1, 2, 3].map(n => n * 2)"])])
    .with_input_schema(run_schema(Language::Javascript))
    .with_output_schema(output::report_schema())
}

pub fn run_python() -> SkillDefinition {
    SkillDefinition::new(
        id("run_python"),
        "Run Python",
        Tier::Enhanced,
        Category::Developer,
    )
    .with_icon("python")
    .with_description(
        "Run Python 3 (Pyodide, standard library) in a sandboxed worker with no network. \
         Granted files can be read under /mnt/data; files written to /mnt/out come back as \
         downloads. Returns stdout, stderr, the last expression's value and tracebacks. \
         Stopped after a time limit (default 30 s).",
    )
    .with_tags([
        "python",
        "code",
        "run",
        "compute",
        "data",
        "csv",
        "analysis",
        "statistics",
        "sandbox",
    ])
    .with_examples([
        "print(sum(range(10)))",
        "Read the CSV I granted and compute the average of each column",
        "Write a report to /mnt/out/summary.txt",
    ])
    .with_commands([CommandForm::new(
        "run_python",
        TextShape::Whole {
            param: "code".into(),
        },
        "Run Python in the sandbox",
    )
    .examples(["/run_python print(6 * 7)"])])
    .with_input_schema(run_schema(Language::Python))
    .with_output_schema(output::report_schema())
}

pub fn read_file() -> SkillDefinition {
    SkillDefinition::new(
        id("read_file"),
        "Read file",
        Tier::Enhanced,
        Category::Developer,
    )
    .with_icon("file")
    .with_description(
        "Read a text file the person granted, e.g. 'notes/todo.md'. The encoding is detected; \
         big files are read in ranges (offset, length in bytes). Binary files are refused.",
    )
    .with_tags(["file", "read", "open", "text", "document", "grant"])
    .with_examples([
        "What does notes/todo.md say?",
        "Show me the first lines of data.csv",
    ])
    .with_commands([CommandForm::new(
        "read_file",
        TextShape::Whole {
            param: "path".into(),
        },
        "Read a file you granted",
    )
    .examples(["/read_file notes/todo.md"])])
    .with_input_schema(json!({
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "minLength": 1,
                "maxLength": grant::MAX_PATH_BYTES,
                "description": "A granted file, e.g. 'fixtures/notes.txt'; list_files shows what is granted"
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "description": "The byte to start at; default 0"
            },
            "length": {
                "type": "integer",
                "minimum": 1,
                "maximum": files::READ_MAX_BYTES,
                "description": format!("How many bytes to read; default {}", files::READ_DEFAULT_BYTES)
            }
        },
        "required": ["path"],
        "additionalProperties": false
    }))
    .with_output_schema(json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "encoding": {"type": "string"},
            "size": {"type": "integer", "minimum": 0},
            "start": {"type": "integer", "minimum": 0},
            "end": {"type": "integer", "minimum": 0},
            "text": {"type": "string"}
        },
        "required": ["path", "encoding", "size", "start", "end", "text"]
    }))
}

pub fn list_files() -> SkillDefinition {
    SkillDefinition::new(
        id("list_files"),
        "List files",
        Tier::Enhanced,
        Category::Developer,
    )
    .with_icon("folder")
    .with_description(
        "List the files and folders the person granted, recursively, with sizes. Without a \
         path, lists every grant.",
    )
    .with_tags(["files", "list", "folder", "directory", "ls", "grant"])
    .with_examples(["What files can you see?", "List the reports folder"])
    .with_commands([
        CommandForm::new(
            "list_files",
            TextShape::Nothing,
            "List every file and folder you granted",
        )
        .examples(["/list_files"]),
        CommandForm::new(
            "list_files",
            TextShape::Whole {
                param: "path".into(),
            },
            "List one granted folder",
        )
        .examples(["/list_files reports"]),
        CommandForm::new(
            "read_file",
            TextShape::Nothing,
            "See the files you granted, to pick one to read",
        )
        .examples(["/read_file"]),
    ])
    .with_input_schema(json!({
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "minLength": 1,
                "maxLength": grant::MAX_PATH_BYTES,
                "description": "A granted folder or a folder inside one; omit to list every grant"
            }
        },
        "additionalProperties": false
    }))
    .with_output_schema(json!({
        "type": "object",
        "properties": {
            "entries": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "kind": {"enum": ["file", "directory"]},
                        "size": {"type": "integer", "minimum": 0}
                    },
                    "required": ["path", "kind", "size"]
                }
            },
            "truncated": {"type": "boolean"}
        },
        "required": ["entries", "truncated"]
    }))
}

pub fn search_files() -> SkillDefinition {
    SkillDefinition::new(
        id("search_files"),
        "Search files",
        Tier::Enhanced,
        Category::Developer,
    )
    .with_icon("search")
    .with_description(
        "Search the text of granted files for a word or phrase; returns matching lines as \
         path:line: text. Binary and very large files are skipped.",
    )
    .with_tags(["files", "search", "grep", "find", "text", "grant"])
    .with_examples([
        "Find TODO in my project folder",
        "Which notes mention Lisbon?",
    ])
    .with_commands([CommandForm::new(
        "search_files",
        TextShape::Whole {
            param: "query".into(),
        },
        "Search the text of the files you granted",
    )
    .examples(["/search_files invoice"])])
    .with_input_schema(json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "maxLength": 1000,
                "description": "The text to look for"
            },
            "path": {
                "type": "string",
                "minLength": 1,
                "maxLength": grant::MAX_PATH_BYTES,
                "description": "A granted folder or file to search; omit to search every grant"
            },
            "case_sensitive": {"type": "boolean", "description": "Default false"},
            "max_results": {
                "type": "integer",
                "minimum": 1,
                "maximum": files::SEARCH_MAX_RESULTS,
                "description": format!("Default {}", files::SEARCH_DEFAULT_RESULTS)
            }
        },
        "required": ["query"],
        "additionalProperties": false
    }))
    .with_output_schema(json!({
        "type": "object",
        "properties": {
            "hits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "line": {"type": "integer", "minimum": 1},
                        "text": {"type": "string"}
                    },
                    "required": ["path", "line", "text"]
                }
            },
            "scanned": {"type": "integer", "minimum": 0}
        },
        "required": ["hits", "scanned"]
    }))
}

/// The enhanced tier's skills, in the order the Skills panel lists them.
pub fn definitions() -> Vec<SkillDefinition> {
    vec![
        run_javascript(),
        run_python(),
        read_file(),
        list_files(),
        search_files(),
    ]
}

/// The arguments of `run_javascript` and `run_python`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct RunArgs {
    pub code: String,
    #[serde(default)]
    pub input: Option<Value>,
    #[serde(default)]
    pub files: Vec<String>,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

impl RunArgs {
    pub fn parse(arguments: &Value) -> Result<RunArgs, String> {
        files::parse_args(arguments)
    }

    /// The timeout for this run, within the language's bounds.
    pub fn timeout_ms(&self, language: Language) -> u32 {
        self.timeout_ms_or(language, language.default_timeout_ms())
    }

    /// The timeout for this run: what it asks for, within the language's
    /// bounds, else `default_ms` (the limit the person set in Settings).
    pub fn timeout_ms_or(&self, language: Language, default_ms: u32) -> u32 {
        self.timeout_ms
            .map(|t| t.clamp(MIN_TIMEOUT_MS, language.max_timeout_ms()) as u32)
            .unwrap_or(default_ms)
    }
}

/// Reads the time limit a person typed for runs that name none, in
/// seconds: a whole number from 1 to the language's cap. Returns
/// milliseconds, or what is wrong in words.
pub fn parse_time_limit(language: Language, text: &str) -> Result<u32, String> {
    let max = language.max_timeout_ms() / 1000;
    let wrong = || {
        format!(
            "The {} time limit must be a whole number of seconds from 1 to {max}.",
            language.label()
        )
    };
    let seconds: u64 = text.trim().parse().map_err(|_| wrong())?;
    if (1..=max).contains(&seconds) {
        Ok((seconds * 1000) as u32)
    } else {
        Err(wrong())
    }
}

/// Hands attached files to a code run: the arguments of `skill_id` with
/// `names` added to its `files` (after any it names itself, without
/// repeats). `None` when the skill is not a code run or nothing is
/// attached, so the attachments wait for one.
pub fn with_attached_files(skill_id: &str, arguments: &Value, names: &[String]) -> Option<Value> {
    Language::from_skill_id(skill_id)?;
    let object = arguments.as_object()?;
    if names.is_empty() {
        return None;
    }
    let mut files: Vec<Value> = match object.get("files") {
        None => Vec::new(),
        Some(Value::Array(items)) => items.clone(),
        // A malformed `files` is left for the schema to refuse.
        Some(_) => return None,
    };
    for name in names {
        if !files.iter().any(|f| f.as_str() == Some(name)) {
            files.push(Value::String(name.clone()));
        }
    }
    let mut object = object.clone();
    object.insert("files".into(), Value::Array(files));
    Some(Value::Object(object))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::validate;
    use crate::skill::registry::Registry;

    #[test]
    fn enhanced_skills_register_with_their_tier_defaults() {
        let mut r = Registry::new();
        for def in definitions() {
            let reg = r.register(def.clone()).unwrap();
            assert_eq!(reg.warnings, vec![], "{}", def.id);
            assert_eq!(
                (
                    def.tier,
                    def.category,
                    def.default_enabled,
                    def.requires_approval,
                    def.requires_network
                ),
                (Tier::Enhanced, Category::Developer, true, false, false),
                "{}",
                def.id
            );
        }
        let ids: Vec<&str> = r.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "run_javascript",
                "run_python",
                "read_file",
                "list_files",
                "search_files"
            ]
        );
    }

    #[test]
    fn run_arguments_and_timeouts() {
        let cases: Vec<(Value, Language, Result<u32, String>)> = vec![
            (json!({"code": "1+1"}), Language::Javascript, Ok(10_000)),
            (json!({"code": "1+1"}), Language::Python, Ok(30_000)),
            (
                json!({"code": "1", "timeout_ms": 500}),
                Language::Javascript,
                Ok(500),
            ),
            (
                json!({"code": "1", "timeout_ms": 10}),
                Language::Javascript,
                Ok(100),
            ),
            (
                json!({"code": "1", "timeout_ms": 10_000_000}),
                Language::Javascript,
                Ok(60_000),
            ),
            (
                json!({"code": "1", "timeout_ms": 10_000_000}),
                Language::Python,
                Ok(300_000),
            ),
            (
                json!({"timeout_ms": 1}),
                Language::Python,
                Err("invalid input: missing field `code`".into()),
            ),
        ];
        for (args, language, want) in cases {
            let got = RunArgs::parse(&args).map(|a| a.timeout_ms(language));
            assert_eq!(got, want, "{args}");
        }
    }

    #[test]
    fn a_run_without_a_limit_gets_the_persons_setting() {
        let bare = RunArgs::parse(&json!({"code": "1"})).unwrap();
        assert_eq!(bare.timeout_ms_or(Language::Python, 45_000), 45_000);
        let asked = RunArgs::parse(&json!({"code": "1", "timeout_ms": 2_000})).unwrap();
        assert_eq!(asked.timeout_ms_or(Language::Python, 45_000), 2_000);
    }

    #[test]
    fn time_limits_typed_in_settings() {
        let cases: Vec<(Language, &str, Result<u32, &str>)> = vec![
            (Language::Javascript, "10", Ok(10_000)),
            (Language::Javascript, " 60 ", Ok(60_000)),
            (Language::Python, "300", Ok(300_000)),
            (Language::Python, "1", Ok(1_000)),
            (
                Language::Javascript,
                "61",
                Err("The JavaScript time limit must be a whole number of seconds from 1 to 60."),
            ),
            (
                Language::Python,
                "0",
                Err("The Python time limit must be a whole number of seconds from 1 to 300."),
            ),
            (
                Language::Python,
                "-5",
                Err("The Python time limit must be a whole number of seconds from 1 to 300."),
            ),
            (
                Language::Python,
                "2.5",
                Err("The Python time limit must be a whole number of seconds from 1 to 300."),
            ),
            (
                Language::Python,
                "",
                Err("The Python time limit must be a whole number of seconds from 1 to 300."),
            ),
        ];
        for (language, text, want) in cases {
            assert_eq!(
                parse_time_limit(language, text),
                want.map_err(str::to_string),
                "{text:?}"
            );
        }
    }

    #[test]
    fn schemas_refuse_what_the_sandbox_must_not_get() {
        let js = run_javascript();
        let cases = [
            (json!({"code": "1"}), 0),
            (json!({"code": ""}), 1),
            (json!({"code": "1", "timeout_ms": 99_999_999}), 1),
            (json!({"code": "1", "files": ["a"], "input": {"x": [1]}}), 0),
            (json!({"code": "1", "network": true}), 1),
        ];
        for (args, errors) in cases {
            assert_eq!(validate(&js.input_schema, &args).len(), errors, "{args}");
        }
        assert_eq!(
            Language::from_skill_id("run_python"),
            Some(Language::Python)
        );
        assert_eq!(Language::from_skill_id("read_file"), None);
    }

    #[test]
    fn attached_files_go_to_the_next_code_run_only() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let cases: Vec<(&str, Value, Vec<String>, Option<Value>)> = vec![
            (
                "run_python",
                json!({"code": "1"}),
                names(&["data.csv"]),
                Some(json!({"code": "1", "files": ["data.csv"]})),
            ),
            (
                "run_javascript",
                json!({"code": "1", "files": ["project", "data.csv"]}),
                names(&["data.csv", "b.txt"]),
                Some(json!({"code": "1", "files": ["project", "data.csv", "b.txt"]})),
            ),
            ("run_python", json!({"code": "1"}), names(&[]), None),
            ("read_file", json!({"path": "a"}), names(&["a"]), None),
            (
                "calculator",
                json!({"expression": "1"}),
                names(&["a"]),
                None,
            ),
            (
                "run_python",
                json!({"code": "1", "files": "x"}),
                names(&["a"]),
                None,
            ),
            ("run_python", json!("print(1)"), names(&["a"]), None),
        ];
        for (skill, args, attached, want) in cases {
            assert_eq!(
                with_attached_files(skill, &args, &attached),
                want,
                "{skill} {args}"
            );
        }
    }
}
