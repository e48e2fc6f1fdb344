//! The command bar: `/word <text>` and `/word {json}` typed into the
//! composer, and `/help`.
//!
//! A skill declares how its text reads as command forms (`usage`);
//! without forms, `/id <text>` fills its first required string parameter.
//! Parsing and resolution are pure; the app then runs the call through the
//! same call path as the model's calls, permission layer included.

use serde_json::{Map, Value};

use crate::skill::command_forms::{CommandForm, TextShape};
use crate::skill::registry::Registry;
use crate::skill::{SkillDefinition, SkillId};

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
    /// The skill has no way to read plain text; its form asks instead.
    #[error("/{id} does not read plain text; fill in its form, or type /help {id}")]
    NoTextParameter { id: String },
    /// The command needs text; `prefill` holds what its form starts with
    /// (boxed: an object keeping its key order is large to carry in every
    /// `Result`).
    #[error("/{word} needs more, e.g. {example}")]
    NeedsInput {
        id: SkillId,
        word: String,
        example: String,
        prefill: Box<Value>,
    },
    #[error("/{word} takes no text here; try {}", .usages.join(" or "))]
    TakesNoText { word: String, usages: Vec<String> },
}

fn suggestion_text(suggestions: &[String]) -> String {
    match suggestions {
        [] => ". Type / to see the skills you can run, or /help".to_string(),
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
    if let Some(skill) = registry
        .iter()
        .find(|s| s.id.as_str().to_lowercase() == lower || s.name.to_lowercase() == lower)
    {
        return Ok(skill);
    }
    let prefixed: Vec<&SkillDefinition> = registry
        .iter()
        .filter(|s| s.id.as_str().to_lowercase().starts_with(&lower))
        .collect();
    match prefixed.as_slice() {
        [one] => Ok(one),
        [] => {
            // Another name a skill goes by, e.g. `/rem` for `/remember`.
            let mut owners: Vec<&SkillDefinition> = Vec::new();
            for s in registry.iter() {
                if s.commands.iter().any(|f| f.word.starts_with(&lower))
                    && !owners.iter().any(|o| o.id == s.id)
                {
                    owners.push(s);
                }
            }
            match owners.as_slice() {
                [one] => Ok(one),
                [] => Err(CommandError::Unknown {
                    name: name.to_string(),
                    suggestions: closest_words(registry, &lower),
                }),
                many => Err(CommandError::Ambiguous {
                    name: name.to_string(),
                    candidates: many.iter().map(|s| format!("/{}", s.id)).collect(),
                }),
            }
        }
        many => Err(CommandError::Ambiguous {
            name: name.to_string(),
            candidates: many.iter().map(|s| format!("/{}", s.id)).collect(),
        }),
    }
}

/// A command resolved to a call.
#[derive(Clone, Debug, PartialEq)]
pub struct Prepared<'r> {
    pub skill: &'r SkillDefinition,
    pub arguments: Value,
}

/// The forms a command word picks, each with the skill that declares it.
fn forms_named<'r>(
    registry: &'r Registry,
    word: &str,
) -> Vec<(&'r SkillDefinition, &'r CommandForm)> {
    registry
        .iter()
        .flat_map(|s| s.commands.iter().map(move |f| (s, f)))
        .filter(|(_, f)| f.word.eq_ignore_ascii_case(word))
        .collect()
}

/// Turns a parsed line into the skill to call and its arguments, through
/// the forms its word names (another name like `/note`, or the skill's
/// own), else the skill's first required string parameter.
pub fn prepare<'r>(
    registry: &'r Registry,
    parsed: &ParsedCommand,
) -> Result<Prepared<'r>, CommandError> {
    let mut forms = forms_named(registry, &parsed.name);
    let skill = match forms.as_slice() {
        [] => {
            let skill = resolve(registry, &parsed.name)?;
            // The word the name begins, the skill's own id first.
            let lower = parsed.name.to_lowercase();
            let begun: Vec<&CommandForm> = skill
                .commands
                .iter()
                .filter(|f| f.word.starts_with(&lower))
                .collect();
            let word = begun
                .iter()
                .find(|f| f.word == skill.id.as_str())
                .or(begun.first())
                .map(|f| f.word.clone())
                .or_else(|| {
                    skill
                        .commands
                        .iter()
                        .any(|f| f.word == skill.id.as_str())
                        .then(|| skill.id.to_string())
                });
            forms = match word {
                Some(w) => forms_named(registry, &w),
                None => Vec::new(),
            };
            skill
        }
        [(first, _), ..] => forms
            .iter()
            .map(|(s, _)| *s)
            .find(|s| s.id.as_str().eq_ignore_ascii_case(&parsed.name))
            .unwrap_or(first),
    };
    if forms.is_empty() {
        return arguments(skill, &parsed.input).map(|arguments| Prepared { skill, arguments });
    }
    let word = forms[0].1.word.clone();
    let is_alias = !forms.iter().any(|(s, _)| s.id.as_str() == word);
    let plain = |(_, f): &&(&SkillDefinition, &CommandForm)| f.verb.is_none();
    match &parsed.input {
        CommandInput::Json(Value::Object(map)) => {
            // Another name keeps what its form sets: `/note {"title": "x"}`
            // creates a note.
            let mut args = Map::new();
            if is_alias
                && let Some((_, f)) = forms
                    .iter()
                    .filter(plain)
                    .find(|(_, f)| f.text.takes_text())
            {
                args = f.fixed.clone();
            }
            args.extend(map.clone());
            Ok(Prepared {
                skill,
                arguments: Value::Object(args),
            })
        }
        CommandInput::Json(_) => Err(CommandError::JsonNotObject),
        CommandInput::Empty => {
            if let Some((s, f)) = forms
                .iter()
                .filter(plain)
                .find(|(_, f)| !f.text.takes_text())
            {
                return Ok(Prepared {
                    skill: s,
                    arguments: f.arguments(""),
                });
            }
            let (s, f) = forms.iter().find(plain).unwrap_or(&forms[0]);
            Err(needs_input(s, f))
        }
        CommandInput::Text(text) => {
            let (first, rest) = match text.split_once(char::is_whitespace) {
                Some((a, b)) => (a, b.trim()),
                None => (text.as_str(), ""),
            };
            let verb = forms.iter().find(|(_, f)| {
                f.verb
                    .as_deref()
                    .is_some_and(|v| v.eq_ignore_ascii_case(first))
                    && f.text.takes_text() != rest.is_empty()
            });
            if let Some((s, f)) = verb {
                return Ok(Prepared {
                    skill: s,
                    arguments: f.arguments(rest),
                });
            }
            if let Some((s, f)) = forms
                .iter()
                .filter(plain)
                .find(|(_, f)| f.text.takes_text())
            {
                return Ok(Prepared {
                    skill: s,
                    arguments: f.arguments(text),
                });
            }
            if let Some((s, f)) = forms.iter().find(|(_, f)| {
                f.verb
                    .as_deref()
                    .is_some_and(|v| v.eq_ignore_ascii_case(first))
            }) {
                return Err(needs_input(s, f));
            }
            Err(CommandError::TakesNoText {
                word,
                usages: forms.iter().map(|(_, f)| f.usage()).collect(),
            })
        }
    }
}

fn needs_input(skill: &SkillDefinition, form: &CommandForm) -> CommandError {
    CommandError::NeedsInput {
        id: skill.id.clone(),
        word: form.word.clone(),
        example: form
            .examples
            .first()
            .cloned()
            .unwrap_or_else(|| form.usage()),
        prefill: Box::new(Value::Object(form.fixed.clone())),
    }
}

/// Turns the typed input into the arguments of a skill without command
/// forms: text fills its first required string parameter.
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
                let example = match skill.primary_string_param() {
                    Some(p) => format!("/{} <{}>", skill.id, p.replace('_', " ")),
                    None => format!("/{} {{...}}", skill.id),
                };
                Err(CommandError::NeedsInput {
                    id: skill.id.clone(),
                    word: skill.id.to_string(),
                    example,
                    prefill: Box::new(Value::Object(Map::new())),
                })
            } else {
                Ok(Value::Object(Map::new()))
            }
        }
    }
}

/// What a skill's form starts with when it opens on plain words: the
/// words that chose the skill fill the fields they name. When they begin
/// with one of a form's leads ("make a note", "remind me to", "what is"),
/// that form reads what follows: a note's title and body, a task's due
/// date and priority, a fact to remember, a calculation. Otherwise the
/// skill's first text-taking form reads the whole text when it is written
/// content (a note, a task, a fact), or a calculation; text for another
/// formal parameter (code, a URL, a path) is not carried, since the words
/// describe what the person wants rather than the value.
pub fn carry(skill: &SkillDefinition, text: &str) -> Value {
    let text = text.trim();
    let led = skill
        .commands
        .iter()
        .filter(|f| f.text.takes_text())
        .filter_map(|f| f.lead_of(text).map(|(n, rest)| (n, f, rest)))
        .max_by_key(|(n, _, _)| *n);
    if let Some((_, form, rest)) = led {
        return form.plain_arguments(rest);
    }
    match skill
        .commands
        .iter()
        .find(|f| f.verb.is_none() && f.text.takes_text())
    {
        Some(f) if f.text.is_content() || matches!(f.text, TextShape::Expression { .. }) => {
            f.plain_arguments(text)
        }
        Some(f) => Value::Object(f.fixed.clone()),
        None => Value::Object(Map::new()),
    }
}

/// How strongly `text` is led to `skill`: the length of the longest lead
/// of its forms that begins the text ("remember that", "remind me to"),
/// 0 when none does.
pub fn lead_strength(skill: &SkillDefinition, text: &str) -> usize {
    skill
        .commands
        .iter()
        .filter_map(|f| f.lead_of(text.trim()).map(|(n, _)| n))
        .max()
        .unwrap_or(0)
}

/// Puts the skills whose own lead begins `text` first, the longest lead
/// first, keeping the found order otherwise: a sentence that opens with
/// "remember that" is about memory, whatever else its words match.
pub fn lead_first(
    registry: &Registry,
    text: &str,
    found: &mut [crate::discovery::DiscoveredSkill],
) {
    found.sort_by_key(|s| {
        std::cmp::Reverse(
            registry
                .get(&s.id)
                .map_or(0, |skill| lead_strength(skill, text)),
        )
    });
}

/// What `/help` shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Help {
    pub title: String,
    /// The skill the help is about; `None` for the list of commands.
    pub skill: Option<SkillId>,
    pub entries: Vec<HelpEntry>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct HelpEntry {
    /// How it is typed: `/task <task> [when]`.
    pub usage: String,
    pub summary: String,
    /// Whole lines that run as they are.
    pub examples: Vec<String>,
}

/// `/help` (every skill, one line each) or `/help <name>` (the ways to
/// type one skill, with examples).
pub fn help(registry: &Registry, name: Option<&str>) -> Result<Help, CommandError> {
    let Some(name) = name.map(|n| n.trim().trim_start_matches('/')) else {
        let entries = registry
            .iter()
            .map(|s| {
                let first = s.commands.first();
                HelpEntry {
                    usage: first.map_or_else(|| bare_usage(s), CommandForm::usage),
                    summary: s.name.clone(),
                    examples: first
                        .and_then(|f| f.examples.first().cloned())
                        .into_iter()
                        .collect(),
                }
            })
            .collect();
        return Ok(Help {
            title: "Commands".to_string(),
            skill: None,
            entries,
        });
    };
    let named = forms_named(registry, name);
    let skill = match named
        .iter()
        .find(|(s, _)| s.id.as_str().eq_ignore_ascii_case(name))
        .or(named.first())
    {
        Some((s, _)) => *s,
        None => resolve(registry, name)?,
    };
    let mut entries: Vec<HelpEntry> = skill
        .commands
        .iter()
        .map(|f| HelpEntry {
            usage: f.usage(),
            summary: f.summary.clone(),
            examples: f.examples.clone(),
        })
        .collect();
    for (other, f) in &named {
        if other.id != skill.id {
            entries.push(HelpEntry {
                usage: f.usage(),
                summary: format!("{} ({})", f.summary, other.name),
                examples: f.examples.clone(),
            });
        }
    }
    if entries.is_empty() {
        entries.push(HelpEntry {
            usage: bare_usage(skill),
            summary: skill.description.clone(),
            examples: Vec::new(),
        });
    }
    Ok(Help {
        title: format!("Help: {}", skill.name),
        skill: Some(skill.id.clone()),
        entries,
    })
}

/// How a skill without command forms is typed.
fn bare_usage(skill: &SkillDefinition) -> String {
    match skill.primary_string_param() {
        Some(p) => format!("/{} <{}>", skill.id, p.replace('_', " ")),
        None => format!("/{}", skill.id),
    }
}

/// Up to three command words close to `name` by edit distance.
fn closest_words(registry: &Registry, name: &str) -> Vec<String> {
    let mut words: Vec<&str> = Vec::new();
    for s in registry.iter() {
        for w in std::iter::once(s.id.as_str()).chain(s.commands.iter().map(|f| f.word.as_str())) {
            if !words.contains(&w) {
                words.push(w);
            }
        }
    }
    let mut scored: Vec<(usize, &str)> = words
        .into_iter()
        .map(|w| {
            let head: String = w.chars().take(name.chars().count().max(3)).collect();
            (levenshtein(name, &head).min(levenshtein(name, w)), w)
        })
        .filter(|(d, _)| *d <= 2)
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(3)
        .map(|(_, w)| w.to_string())
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
    use crate::builtin::collection::Stamp;
    use crate::schema::validate;
    use crate::skill::{Category, SkillId, Tier};
    use serde_json::json;

    fn registry() -> Registry {
        let mut r = builtin::registry().unwrap();
        r.register(
            SkillDefinition::new(
                SkillId::new("note_export").unwrap(),
                "Note export",
                Tier::Core,
                Category::Productivity,
            )
            .with_description("d")
            .with_tags(["t"])
            .with_examples(["e"]),
        )
        .unwrap();
        r.register(
            SkillDefinition::new(
                SkillId::new("echo_tool").unwrap(),
                "Echo",
                Tier::Integration,
                Category::Integrations,
            )
            .with_description("d")
            .with_tags(["t"])
            .with_examples(["e"])
            .with_input_schema(json!({
                "type": "object",
                "properties": {"n": {"type": "integer"}},
                "required": ["n"]
            })),
        )
        .unwrap();
        r
    }

    /// Runs a composer line end to end: the skill id and arguments, or the
    /// error as the person would read it.
    fn run(r: &Registry, line: &str) -> String {
        let parsed = match parse(line) {
            Ok(Some(p)) => p,
            Ok(None) => return "not a command".into(),
            Err(e) => return format!("error: {e}"),
        };
        match prepare(r, &parsed) {
            Ok(p) => format!("{} {}", p.skill.id, p.arguments),
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn composer_lines() {
        let r = registry();
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
                "error: unknown command /zzzzzz. Type / to see the skills you can run, or /help",
            ),
            (
                "/note Buy milk and eggs",
                r#"notes {"action":"create","title":"Buy milk and eggs"}"#,
            ),
            (
                "/notes Call the bank",
                r#"notes {"action":"create","title":"Call the bank"}"#,
            ),
            ("/notes", r#"notes {"action":"list"}"#),
            (
                "/notes search milk eggs",
                r#"notes {"action":"search","query":"milk eggs"}"#,
            ),
            // A verb that needs text, typed alone, is a note's title.
            (
                "/notes search",
                r#"notes {"action":"create","title":"search"}"#,
            ),
            (
                r#"/note {"title": "From JSON"}"#,
                r#"notes {"action":"create","title":"From JSON"}"#,
            ),
            (
                r#"/notes {"action": "list", "tag": "work"}"#,
                r#"notes {"action":"list","tag":"work"}"#,
            ),
            (
                "/task Renew passport tomorrow !high",
                r#"tasks {"action":"create","title":"Renew passport","due":"tomorrow","priority":"high"}"#,
            ),
            ("/tasks", r#"tasks {"action":"list"}"#),
            ("/tasks done", r#"tasks {"action":"list","status":"done"}"#),
            (
                "/tasks Overdue",
                r#"tasks {"action":"list","overdue":true}"#,
            ),
            (
                "/tasks done the dishes",
                r#"tasks {"action":"create","title":"done the dishes"}"#,
            ),
            (
                "/remember I prefer metric units",
                r#"memory {"action":"remember","text":"I prefer metric units"}"#,
            ),
            (
                "/rem I like tea",
                r#"memory {"action":"remember","text":"I like tea"}"#,
            ),
            (
                "/recall units",
                r#"memory {"action":"recall","query":"units"}"#,
            ),
            ("/memory", r#"memory {"action":"list"}"#),
            ("/read_file", "list_files {}"),
            (
                "/read_file notes/todo.md",
                r#"read_file {"path":"notes/todo.md"}"#,
            ),
            ("/list_files reports", r#"list_files {"path":"reports"}"#),
            (
                "/calc {oops",
                "error: the arguments look like JSON but do not parse: key must be a string at line 1 column 2",
            ),
            (
                "/calc",
                "error: /calculator needs more, e.g. /calc 15% of 847",
            ),
            (
                "/note",
                "error: /note needs more, e.g. /note Buy milk and eggs",
            ),
            (
                "/note_ex x",
                "error: /note_export does not read plain text; fill in its form, or type /help note_export",
            ),
            (
                "/echo_tool hi",
                "error: /echo_tool does not read plain text; fill in its form, or type /help echo_tool",
            ),
            (
                "/echo_tool",
                "error: /echo_tool needs more, e.g. /echo_tool {...}",
            ),
            (r#"/echo_tool {"n": 2}"#, r#"echo_tool {"n":2}"#),
        ];
        for (line, want) in cases {
            assert_eq!(run(&r, line), want, "{line:?}");
        }
    }

    #[test]
    fn a_form_that_needs_text_opens_with_what_it_sets() {
        let r = registry();
        let parsed = parse("/note").unwrap().unwrap();
        assert_eq!(
            prepare(&r, &parsed),
            Err(CommandError::NeedsInput {
                id: SkillId::new("notes").unwrap(),
                word: "note".into(),
                example: "/note Buy milk and eggs".into(),
                prefill: Box::new(json!({"action": "create"})),
            })
        );
        let calc = r.get_str("calculator").unwrap();
        assert_eq!(carry(calc, "work out a percentage"), json!({}));
        let notes = r.get_str("notes").unwrap();
        assert_eq!(
            carry(notes, "jot down an idea #garden"),
            json!({"action": "create", "title": "an idea", "tags": ["garden"]})
        );
        assert_eq!(carry(r.get_str("echo_tool").unwrap(), "hi"), json!({}));
    }

    /// The words that chose a skill fill the fields they name.
    #[test]
    fn a_sentence_that_opens_with_a_skills_lead_puts_that_skill_first() {
        let registry = crate::builtin::registry().unwrap();
        let found = |ids: &[&str]| -> Vec<crate::discovery::DiscoveredSkill> {
            ids.iter()
                .map(|id| {
                    let s = registry.get_str(id).unwrap();
                    crate::discovery::DiscoveredSkill {
                        id: s.id.clone(),
                        name: s.name.clone(),
                        description: s.description.clone(),
                        tier: s.tier,
                    }
                })
                .collect()
        };
        let order = |text: &str, ids: &[&str]| {
            let mut f = found(ids);
            lead_first(&registry, text, &mut f);
            f.iter().map(|s| s.id.to_string()).collect::<Vec<_>>()
        };
        // "units" matches the calculator too; the lead decides.
        assert_eq!(
            order(
                "remember that I prefer metric units",
                &["calculator", "memory"]
            ),
            ["memory", "calculator"]
        );
        // Without a lead the found order stays.
        assert_eq!(
            order("metric units", &["calculator", "memory"]),
            ["calculator", "memory"]
        );
    }

    #[test]
    fn plain_words_fill_the_fields_they_name() {
        let r = builtin::registry().unwrap();
        let carried = |skill: &str, text: &str| carry(r.get_str(skill).unwrap(), text);
        let cases = [
            (
                "calculator",
                "what is 15% of 847",
                json!({"expression": "15% of 847"}),
            ),
            (
                "calculator",
                "What's 15% of 847?",
                json!({"expression": "15% of 847"}),
            ),
            (
                "calculator",
                "convert 5 miles to km",
                json!({"expression": "5 miles to km"}),
            ),
            (
                "calculator",
                "how many days until December 25",
                json!({"expression": "days until December 25"}),
            ),
            (
                "calculator",
                "15% of 847",
                json!({"expression": "15% of 847"}),
            ),
            ("calculator", "work out a percentage", json!({})),
            (
                "notes",
                "make a note called Groceries with milk, eggs and bread",
                json!({"action": "create", "title": "Groceries", "body": "milk, eggs and bread"}),
            ),
            (
                "notes",
                "Save a note called Groceries: milk, eggs, bread",
                json!({"action": "create", "title": "Groceries", "body": "milk, eggs, bread"}),
            ),
            (
                "notes",
                "jot down an idea for the garden",
                json!({"action": "create", "title": "an idea for the garden"}),
            ),
            (
                "notes",
                "new note about the trip #travel",
                json!({"action": "create", "title": "the trip", "tags": ["travel"]}),
            ),
            (
                "notes",
                "find my notes about Lisbon",
                json!({"action": "search", "query": "Lisbon"}),
            ),
            (
                "notes",
                "Groceries",
                json!({"action": "create", "title": "Groceries"}),
            ),
            (
                "tasks",
                "remind me to renew the passport tomorrow with high priority",
                json!({"action": "create", "title": "renew the passport", "due": "tomorrow", "priority": "high"}),
            ),
            (
                "tasks",
                "Add a task to pay rent by March 1, low priority",
                json!({"action": "create", "title": "pay rent", "due": "by March 1", "priority": "low"}),
            ),
            (
                "tasks",
                "I need to call the plumber friday, urgent",
                json!({"action": "create", "title": "call the plumber", "due": "friday", "priority": "high"}),
            ),
            (
                "memory",
                "remember that I prefer metric units",
                json!({"action": "remember", "text": "I prefer metric units"}),
            ),
            (
                "memory",
                "what do you remember about units",
                json!({"action": "recall", "query": "units"}),
            ),
        ];
        for (skill, text, want) in cases {
            assert_eq!(carried(skill, text), want, "{skill}: {text:?}");
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
        let parsed = ParsedCommand {
            name: "note".into(),
            input: CommandInput::Json(json!([1])),
        };
        assert_eq!(prepare(&r, &parsed), Err(CommandError::JsonNotObject));
    }

    /// Every built-in can be typed, and every example `/help` shows is a
    /// line that runs: it picks the skill that declares it, its arguments
    /// pass the skill's schema, and the data skills carry it out.
    #[test]
    fn every_builtin_example_runs() {
        let r = builtin::registry().unwrap();
        let stamp = Stamp {
            now_ms: 1.0,
            new_id: "x1".into(),
            today: (2026, 11, 21),
        };
        // Artifacts are how the model shows its work beside the chat; a
        // person has no line to type for them.
        let model_only = [
            crate::builtin::artifacts::CREATE_ID,
            crate::builtin::artifacts::UPDATE_ID,
        ];
        for skill in builtin::definitions() {
            if model_only.contains(&skill.id.as_str()) {
                assert!(skill.commands.is_empty(), "{}", skill.id);
                continue;
            }
            assert!(
                !skill.commands.is_empty(),
                "{} has no command forms",
                skill.id
            );
            for form in &skill.commands {
                assert!(
                    !form.examples.is_empty(),
                    "{}: {} has no example",
                    skill.id,
                    form.usage()
                );
                for line in &form.examples {
                    let parsed = parse(line).unwrap().unwrap();
                    let p = prepare(&r, &parsed).unwrap_or_else(|e| panic!("{line}: {e}"));
                    assert_eq!(p.skill.id, skill.id, "{line}");
                    assert_eq!(
                        validate(&p.skill.input_schema, &p.arguments),
                        vec![],
                        "{line}"
                    );
                    let ran = match skill.id.as_str() {
                        "notes" => crate::builtin::notes::parse(&p.arguments)
                            .and_then(|a| {
                                crate::builtin::notes::run(&Default::default(), a, &stamp)
                            })
                            .map(|_| ()),
                        "tasks" => crate::builtin::tasks::parse(&p.arguments)
                            .and_then(|a| {
                                crate::builtin::tasks::run(&Default::default(), a, &stamp)
                            })
                            .map(|_| ()),
                        "memory" => crate::builtin::memory::parse(&p.arguments)
                            .and_then(|a| {
                                crate::builtin::memory::run(&Default::default(), a, &stamp)
                            })
                            .map(|_| ()),
                        "calculator" => {
                            let clock = crate::builtin::calculator::Clock {
                                unix_ms: 1_795_262_400_000.0,
                                utc_offset_minutes: 0,
                            };
                            let expr = p.arguments["expression"].as_str().unwrap_or_default();
                            crate::builtin::calculator::evaluate(expr, clock)
                                .map(|_| ())
                                .map_err(|e| e.to_string().into())
                        }
                        _ => Ok(()),
                    };
                    assert_eq!(ran, Ok(()), "{line}");
                }
            }
        }
    }

    #[test]
    fn help_lists_commands_and_shows_a_skill_with_examples() {
        let r = builtin::registry().unwrap();
        let all = help(&r, None).unwrap();
        assert_eq!(all.title, "Commands");
        assert_eq!(all.entries.len(), builtin::definitions().len());
        assert!(
            all.entries
                .iter()
                .any(|e| e.usage == "/note <title>" && e.examples == ["/note Buy milk and eggs"])
        );

        let tasks = help(&r, Some("task")).unwrap();
        assert_eq!(tasks.title, "Help: Tasks");
        let usages: Vec<&str> = tasks.entries.iter().map(|e| e.usage.as_str()).collect();
        assert_eq!(
            usages,
            [
                "/task <task> [when] [!high|!low] [#tag]",
                "/tasks",
                "/tasks done",
                "/tasks overdue",
                "/tasks all",
                "/tasks <task> [when] [!high|!low] [#tag]"
            ]
        );
        // A word several skills answer to shows all of them.
        let read = help(&r, Some("/read_file")).unwrap();
        assert_eq!(read.title, "Help: Read file");
        assert_eq!(
            read.entries.last().unwrap().summary,
            "See the files you granted, to pick one to read (List files)"
        );
        assert!(matches!(
            help(&r, Some("nothing-here")),
            Err(CommandError::Unknown { .. })
        ));
    }
}
