//! The command bar: `/id <text>` and `/id {json}` typed into the composer.
//!
//! Parsing and resolution are pure; the app then runs the call through the
//! same call path as the model's calls, permission layer included.

use serde_json::{Map, Value};

use crate::registry::Registry;
use crate::skill::SkillDefinition;

/// What follows the command name.
#[derive(Clone, Debug, PartialEq)]
pub enum CommandInput {
    Empty,
    Text(String),
    Json(Value),
}

#[derive(Clone, Debug, PartialEq)]
pub struct ParsedCommand {
    /// The name as typed, without the slash.
    pub name: String,
    pub input: CommandInput,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("type a command name after '/', e.g. /calc 2+2")]
    MissingName,
    #[error("unknown command /{name}{}", suggestion_text(.suggestions))]
    Unknown {
        name: String,
        suggestions: Vec<String>,
    },
    #[error("/{name} could mean {}; type more of the name", .candidates.join(", "))]
    Ambiguous {
        name: String,
        candidates: Vec<String>,
    },
    #[error("the arguments look like JSON but do not parse: {0}")]
    BadJson(String),
    #[error("JSON arguments must be an object like {{\"key\": \"value\"}}")]
    JsonNotObject,
    #[error("/{id} takes no plain text; pass JSON arguments, e.g. /{id} {{...}}")]
    NoTextParameter { id: String },
    #[error("/{id} needs input, e.g. /{id} {example}")]
    NeedsInput { id: String, example: String },
}

fn suggestion_text(suggestions: &[String]) -> String {
    match suggestions {
        [] => ". Type / to see the skills you can run".to_string(),
        [one] => format!(". Did you mean /{one}?"),
        many => format!(
            ". Did you mean {}?",
            many.iter()
                .map(|s| format!("/{s}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Parses a composer line. `Ok(None)` means it is not a command.
pub fn parse(line: &str) -> Result<Option<ParsedCommand>, CommandError> {
    let trimmed = line.trim();
    let Some(rest) = trimmed.strip_prefix('/') else {
        return Ok(None);
    };
    let (name, tail) = match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest, ""),
    };
    if name.is_empty() {
        return Err(CommandError::MissingName);
    }
    let input = if tail.is_empty() {
        CommandInput::Empty
    } else if tail.starts_with('{') {
        let value: Value =
            serde_json::from_str(tail).map_err(|e| CommandError::BadJson(e.to_string()))?;
        CommandInput::Json(value)
    } else {
        CommandInput::Text(tail.to_string())
    };
    Ok(Some(ParsedCommand {
        name: name.to_string(),
        input,
    }))
}

/// Finds the skill a command names: its exact id, else its display name
/// (case-insensitive), else the one id the name is a prefix of.
pub fn resolve<'r>(
    registry: &'r Registry,
    name: &str,
) -> Result<&'r SkillDefinition, CommandError> {
    if let Some(skill) = registry.get_str(name) {
        return Ok(skill);
    }
    let lower = name.to_lowercase();
    if let Some(skill) = registry.iter().find(|s| s.name.to_lowercase() == lower) {
        return Ok(skill);
    }
    let prefixed: Vec<&SkillDefinition> = registry
        .iter()
        .filter(|s| s.id.as_str().to_lowercase().starts_with(&lower))
        .collect();
    match prefixed.as_slice() {
        [one] => Ok(one),
        [] => Err(CommandError::Unknown {
            name: name.to_string(),
            suggestions: closest_ids(registry, &lower),
        }),
        many => Err(CommandError::Ambiguous {
            name: name.to_string(),
            candidates: many.iter().map(|s| format!("/{}", s.id)).collect(),
        }),
    }
}

/// Turns the typed input into the skill's arguments.
pub fn arguments(skill: &SkillDefinition, input: &CommandInput) -> Result<Value, CommandError> {
    match input {
        CommandInput::Json(Value::Object(map)) => Ok(Value::Object(map.clone())),
        CommandInput::Json(_) => Err(CommandError::JsonNotObject),
        CommandInput::Text(text) => match skill.primary_string_param() {
            Some(param) => {
                let mut map = Map::new();
                map.insert(param.to_string(), Value::String(text.clone()));
                Ok(Value::Object(map))
            }
            None => Err(CommandError::NoTextParameter {
                id: skill.id.to_string(),
            }),
        },
        CommandInput::Empty => {
            let required = skill
                .input_schema
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|r| !r.is_empty());
            if required {
                let example = skill
                    .examples
                    .first()
                    .cloned()
                    .unwrap_or_else(|| "{...}".into());
                Err(CommandError::NeedsInput {
                    id: skill.id.to_string(),
                    example,
                })
            } else {
                Ok(Value::Object(Map::new()))
            }
        }
    }
}

/// Up to three ids close to `name` by edit distance.
fn closest_ids(registry: &Registry, name: &str) -> Vec<String> {
    let mut scored: Vec<(usize, &str)> = registry
        .iter()
        .map(|s| {
            let id = s.id.as_str();
            let head: String = id.chars().take(name.chars().count().max(3)).collect();
            (levenshtein(name, &head).min(levenshtein(name, id)), id)
        })
        .filter(|(d, _)| *d <= 2)
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(3)
        .map(|(_, id)| id.to_string())
        .collect()
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin;
    use crate::skill::{Category, SkillId, Tier};
    use serde_json::json;

    fn registry() -> Registry {
        let mut r = builtin::registry().unwrap();
        for id in ["notes", "note_export"] {
            r.register(
                SkillDefinition::new(
                    SkillId::new(id).unwrap(),
                    id,
                    Tier::Core,
                    Category::Productivity,
                )
                .with_description("d")
                .with_tags(["t"])
                .with_examples(["e"]),
            )
            .unwrap();
        }
        r
    }

    /// Runs a composer line end to end: the skill id and arguments, or the
    /// error as the person would read it.
    fn run(line: &str) -> String {
        let r = registry();
        let parsed = match parse(line) {
            Ok(Some(p)) => p,
            Ok(None) => return "not a command".into(),
            Err(e) => return format!("error: {e}"),
        };
        let skill = match resolve(&r, &parsed.name) {
            Ok(s) => s,
            Err(e) => return format!("error: {e}"),
        };
        match arguments(skill, &parsed.input) {
            Ok(args) => format!("{} {args}", skill.id),
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn composer_lines() {
        let cases = [
            (
                "/calc 15% of 847",
                r#"calculator {"expression":"15% of 847"}"#,
            ),
            (
                "  /calculator   2 + 2  ",
                r#"calculator {"expression":"2 + 2"}"#,
            ),
            ("/Calculator 1", r#"calculator {"expression":"1"}"#),
            (
                r#"/calc {"expression": "1+1"}"#,
                r#"calculator {"expression":"1+1"}"#,
            ),
            ("hello there", "not a command"),
            ("/", "error: type a command name after '/', e.g. /calc 2+2"),
            (
                "/calx 1",
                "error: unknown command /calx. Did you mean /calculator?",
            ),
            (
                "/zzzzzz 1",
                "error: unknown command /zzzzzz. Type / to see the skills you can run",
            ),
            (
                "/note x",
                "error: /note could mean /notes, /note_export; type more of the name",
            ),
            (
                "/calc {oops",
                "error: the arguments look like JSON but do not parse: key must be a string at line 1 column 2",
            ),
            (
                "/calc",
                "error: /calculator needs input, e.g. /calculator What's 15% of 847?",
            ),
            (
                "/notes hi",
                "error: /notes takes no plain text; pass JSON arguments, e.g. /notes {...}",
            ),
            ("/notes", "notes {}"),
        ];
        for (line, want) in cases {
            assert_eq!(run(line), want, "{line:?}");
        }
    }

    #[test]
    fn json_that_is_not_an_object_is_refused() {
        let r = registry();
        let skill = resolve(&r, "calculator").unwrap();
        assert_eq!(
            arguments(skill, &CommandInput::Json(json!([1]))),
            Err(CommandError::JsonNotObject)
        );
    }
}
