//! What MCP servers add to the composer: their prompts as `/` commands
//! (`/server:prompt`), whose `prompts/get` answer becomes message text, and
//! their resources as attachments to a message. Pure: the app lists,
//! fetches and shows; this decides names, arguments and text.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::mcp::model::{
    ContentBlock, GetPromptResult, Prompt, ReadResourceResult, ResourceBody, Role,
};
use crate::mcp::skills::ServerId;
use crate::ui::command::CommandInput;

/// Attached text beyond this many characters is cut, with a note.
pub const MAX_ATTACHMENT_CHARS: usize = 100_000;

/// One server prompt, offered as `/server:prompt`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptCommand {
    pub server: ServerId,
    /// The prompt's name on the server.
    pub prompt: String,
    /// What is typed after the slash.
    pub command: String,
    pub title: String,
    pub description: Option<String>,
    pub arguments: Vec<PromptParameter>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptParameter {
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
}

/// The command that runs `prompt` of `server`. `:` never occurs in skill
/// ids, so a prompt command cannot shadow a skill.
pub fn command_name(server: &ServerId, prompt: &str) -> String {
    let clean: String = prompt
        .chars()
        .map(|c| if c.is_whitespace() { '-' } else { c })
        .collect();
    format!("{server}:{clean}")
}

/// A server's prompts as commands.
pub fn prompt_commands(server: &ServerId, prompts: &[Prompt]) -> Vec<PromptCommand> {
    prompts
        .iter()
        .map(|p| PromptCommand {
            server: server.clone(),
            prompt: p.name.clone(),
            command: command_name(server, &p.name),
            title: p.title.clone().unwrap_or_else(|| p.name.clone()),
            description: p.description.clone(),
            arguments: p
                .arguments
                .iter()
                .map(|a| PromptParameter {
                    name: a.name.clone(),
                    description: a.description.clone(),
                    required: a.required == Some(true),
                })
                .collect(),
        })
        .collect()
}

/// Commands whose name starts with `partial` (after the slash).
pub fn matching<'a>(commands: &'a [PromptCommand], partial: &str) -> Vec<&'a PromptCommand> {
    let partial = partial.to_lowercase();
    commands
        .iter()
        .filter(|c| {
            c.command.to_lowercase().starts_with(&partial)
                || c.prompt.to_lowercase().starts_with(&partial)
        })
        .collect()
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    #[error("/{command} needs {}; e.g. /{command} {example}", names(.missing))]
    Missing {
        command: String,
        missing: Vec<String>,
        example: String,
    },
    #[error("/{command} has no argument {name:?}; it takes {}", if .known.is_empty() { "none".to_string() } else { .known.join(", ") })]
    Unknown {
        command: String,
        name: String,
        known: Vec<String>,
    },
    #[error("/{command} takes several arguments; pass them as JSON, e.g. /{command} {example}")]
    NeedsJson { command: String, example: String },
    #[error("/{command} takes no arguments")]
    TakesNone { command: String },
    #[error("arguments must be a JSON object like {{\"name\": \"value\"}}")]
    NotObject,
}

fn names(list: &[String]) -> String {
    list.join(" and ")
}

fn example(cmd: &PromptCommand) -> String {
    let mut m = Map::new();
    for a in &cmd.arguments {
        if a.required || cmd.arguments.len() == 1 {
            m.insert(a.name.clone(), Value::String("…".into()));
        }
    }
    Value::Object(m).to_string()
}

/// The `arguments` of `prompts/get` from what was typed after the command:
/// JSON names them; plain text fills the one argument (or the one required
/// argument). Values are strings, as the protocol wants.
pub fn prompt_arguments(
    cmd: &PromptCommand,
    input: &CommandInput,
) -> Result<Map<String, Value>, PromptError> {
    let mut args = Map::new();
    match input {
        CommandInput::Empty => {}
        CommandInput::Json(Value::Object(given)) => {
            for (k, v) in given {
                if !cmd.arguments.iter().any(|a| &a.name == k) {
                    return Err(PromptError::Unknown {
                        command: cmd.command.clone(),
                        name: k.clone(),
                        known: cmd.arguments.iter().map(|a| a.name.clone()).collect(),
                    });
                }
                let text = match v {
                    Value::String(s) => s.clone(),
                    Value::Null => continue,
                    other => other.to_string(),
                };
                args.insert(k.clone(), Value::String(text));
            }
        }
        CommandInput::Json(_) => return Err(PromptError::NotObject),
        CommandInput::Text(text) => {
            let required: Vec<&PromptParameter> =
                cmd.arguments.iter().filter(|a| a.required).collect();
            let target = match (cmd.arguments.as_slice(), required.as_slice()) {
                ([], _) => {
                    return Err(PromptError::TakesNone {
                        command: cmd.command.clone(),
                    });
                }
                ([only], _) => only,
                (_, [only]) => *only,
                _ => {
                    return Err(PromptError::NeedsJson {
                        command: cmd.command.clone(),
                        example: example(cmd),
                    });
                }
            };
            args.insert(target.name.clone(), Value::String(text.clone()));
        }
    }
    let missing: Vec<String> = cmd
        .arguments
        .iter()
        .filter(|a| a.required && !args.contains_key(&a.name))
        .map(|a| a.name.clone())
        .collect();
    if !missing.is_empty() {
        return Err(PromptError::Missing {
            command: cmd.command.clone(),
            missing,
            example: example(cmd),
        });
    }
    Ok(args)
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text { text, .. } => text.clone(),
        ContentBlock::Image { mime_type, .. } => format!("[image {mime_type}]"),
        ContentBlock::Audio { mime_type, .. } => format!("[audio {mime_type}]"),
        ContentBlock::ResourceLink(r) => {
            format!("[{}]({})", r.title.as_ref().unwrap_or(&r.name), r.uri)
        }
        ContentBlock::Resource { resource, .. } => match &resource.body {
            ResourceBody::Text(t) => {
                format!("<resource uri=\"{}\">\n{t}\n</resource>", resource.uri)
            }
            ResourceBody::Blob(_) => format!("[binary resource {}]", resource.uri),
        },
        ContentBlock::Unknown(v) => v.to_string(),
    }
}

/// The message text a prompt produced. One user message is its text; a
/// conversation keeps its turns apart and names who speaks.
pub fn prompt_text(result: &GetPromptResult) -> String {
    let single_speaker = result.messages.iter().all(|m| m.role == Role::User);
    let parts: Vec<String> = result
        .messages
        .iter()
        .map(|m| {
            let text = block_text(&m.content);
            if single_speaker {
                text
            } else {
                let who = match m.role {
                    Role::User => "User",
                    Role::Assistant => "Assistant",
                };
                format!("{who}: {text}")
            }
        })
        .collect();
    parts.join("\n\n")
}

/// A server resource attached to a message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attachment {
    pub server: ServerId,
    pub uri: String,
    pub name: String,
    pub mime_type: Option<String>,
    /// The text, cut at [`MAX_ATTACHMENT_CHARS`]; `None` for binary.
    pub text: Option<String>,
    /// Bytes of binary content, which is not sent as text.
    pub binary_bytes: Option<usize>,
    pub truncated: bool,
}

impl Attachment {
    /// What the composer shows on the attachment's chip.
    pub fn size_label(&self) -> String {
        match (&self.text, self.binary_bytes) {
            (Some(t), _) => crate::util::display::bytes(t.len() as f64),
            (None, Some(n)) => crate::util::display::bytes(n as f64),
            (None, None) => String::new(),
        }
    }
}

/// Reads what `resources/read` returned into one attachment (the first
/// content; text is joined when a resource has several parts).
pub fn attachment(
    server: &ServerId,
    uri: &str,
    name: &str,
    result: &ReadResourceResult,
) -> Attachment {
    let mut text = String::new();
    let mut binary = 0usize;
    let mut has_text = false;
    for c in &result.contents {
        match &c.body {
            ResourceBody::Text(t) => {
                if has_text {
                    text.push('\n');
                }
                text.push_str(t);
                has_text = true;
            }
            ResourceBody::Blob(b) => binary += b.trim().len() / 4 * 3,
        }
    }
    let truncated = text.chars().count() > MAX_ATTACHMENT_CHARS;
    if truncated {
        text = text.chars().take(MAX_ATTACHMENT_CHARS).collect();
    }
    Attachment {
        server: server.clone(),
        uri: uri.into(),
        name: name.into(),
        mime_type: result.contents.first().and_then(|c| c.mime_type.clone()),
        text: has_text.then_some(text),
        binary_bytes: (!has_text).then_some(binary),
        truncated,
    }
}

/// How an attachment starts in a message ([`attachments_text`]).
pub const ATTACHMENT_OPEN: &str = "<attachment server=";

/// A person's message as (what they wrote, the attachments after it,
/// with the blank line before them).
pub fn split_attachments(content: &str) -> (&str, &str) {
    match content.find(&format!("\n\n{ATTACHMENT_OPEN}")) {
        Some(i) => content.split_at(i),
        None => (content, ""),
    }
}

/// How many server resources went with a message.
pub fn attached_count(content: &str) -> usize {
    split_attachments(content)
        .1
        .matches(ATTACHMENT_OPEN)
        .count()
}

/// The attachments as the text that goes with a message to the model.
pub fn attachments_text(attachments: &[Attachment]) -> String {
    attachments
        .iter()
        .map(|a| {
            let mime = a
                .mime_type
                .as_deref()
                .map(|m| format!(" type=\"{m}\""))
                .unwrap_or_default();
            let body = match (&a.text, a.binary_bytes) {
                (Some(t), _) if a.truncated => {
                    format!("{t}\n[cut at {MAX_ATTACHMENT_CHARS} characters]")
                }
                (Some(t), _) => t.clone(),
                (None, n) => format!("[binary content, {} bytes, not included]", n.unwrap_or(0)),
            };
            format!(
                "<attachment server=\"{}\" uri=\"{}\" name=\"{}\"{mime}>\n{body}\n</attachment>",
                a.server, a.uri, a.name
            )
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::model::{PromptMessage, ResourceContents};
    use serde_json::json;

    fn sid() -> ServerId {
        ServerId::new("everything").unwrap()
    }

    fn prompts() -> Vec<Prompt> {
        serde_json::from_value(json!([
            {"name": "simple-prompt", "description": "A prompt without arguments"},
            {"name": "args-prompt", "arguments": [
                {"name": "city", "required": true}, {"name": "state", "required": false}
            ]},
            {"name": "two", "arguments": [{"name": "a", "required": true}, {"name": "b", "required": true}]},
            {"name": "one", "title": "One thing", "arguments": [{"name": "topic"}]}
        ]))
        .unwrap()
    }

    #[test]
    fn prompts_become_commands_that_match_by_prefix() {
        let cmds = prompt_commands(&sid(), &prompts());
        assert_eq!(
            cmds.iter().map(|c| c.command.as_str()).collect::<Vec<_>>(),
            [
                "everything:simple-prompt",
                "everything:args-prompt",
                "everything:two",
                "everything:one"
            ]
        );
        assert_eq!(cmds[3].title, "One thing");
        assert_eq!(
            matching(&cmds, "everything:a")
                .iter()
                .map(|c| c.prompt.as_str())
                .collect::<Vec<_>>(),
            ["args-prompt"]
        );
        assert_eq!(
            matching(&cmds, "simp").len(),
            1,
            "the prompt's own name matches too"
        );
        assert_eq!(command_name(&sid(), "two words"), "everything:two-words");
    }

    #[test]
    fn arguments_come_from_json_or_text() {
        let cmds = prompt_commands(&sid(), &prompts());
        let (simple, args, two, one) = (&cmds[0], &cmds[1], &cmds[2], &cmds[3]);
        let obj = |v: Value| v.as_object().unwrap().clone();
        type Case<'a> = (
            &'a PromptCommand,
            CommandInput,
            Result<Map<String, Value>, PromptError>,
        );
        let table: Vec<Case> = vec![
            (simple, CommandInput::Empty, Ok(Map::new())),
            (
                simple,
                CommandInput::Text("x".into()),
                Err(PromptError::TakesNone {
                    command: "everything:simple-prompt".into(),
                }),
            ),
            (
                args,
                CommandInput::Text("Paris".into()),
                Ok(obj(json!({"city": "Paris"}))),
            ),
            (
                args,
                CommandInput::Json(json!({"city": "Oslo", "state": 7})),
                Ok(obj(json!({"city": "Oslo", "state": "7"}))),
            ),
            (
                args,
                CommandInput::Empty,
                Err(PromptError::Missing {
                    command: "everything:args-prompt".into(),
                    missing: vec!["city".into()],
                    example: r#"{"city":"…"}"#.into(),
                }),
            ),
            (
                args,
                CommandInput::Json(json!({"country": "NO"})),
                Err(PromptError::Unknown {
                    command: "everything:args-prompt".into(),
                    name: "country".into(),
                    known: vec!["city".into(), "state".into()],
                }),
            ),
            (
                two,
                CommandInput::Text("x".into()),
                Err(PromptError::NeedsJson {
                    command: "everything:two".into(),
                    example: r#"{"a":"…","b":"…"}"#.into(),
                }),
            ),
            (
                one,
                CommandInput::Text("rust".into()),
                Ok(obj(json!({"topic": "rust"}))),
            ),
            (
                one,
                CommandInput::Json(json!([1])),
                Err(PromptError::NotObject),
            ),
        ];
        for (cmd, input, want) in table {
            assert_eq!(
                prompt_arguments(cmd, &input),
                want,
                "{} {input:?}",
                cmd.command
            );
        }
        assert_eq!(
            prompt_arguments(args, &CommandInput::Empty)
                .unwrap_err()
                .to_string(),
            "/everything:args-prompt needs city; e.g. /everything:args-prompt {\"city\":\"…\"}"
        );
    }

    #[test]
    fn prompt_answers_become_message_text() {
        let one: GetPromptResult = serde_json::from_value(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "Say hello."}}]
        }))
        .unwrap();
        assert_eq!(prompt_text(&one), "Say hello.");
        let talk = GetPromptResult {
            description: None,
            messages: vec![
                PromptMessage {
                    role: Role::User,
                    content: ContentBlock::Text {
                        text: "Hi".into(),
                        annotations: None,
                    },
                },
                PromptMessage {
                    role: Role::Assistant,
                    content: ContentBlock::Resource {
                        resource: ResourceContents {
                            uri: "test://doc".into(),
                            mime_type: None,
                            body: ResourceBody::Text("body".into()),
                            meta: None,
                        },
                        annotations: None,
                    },
                },
            ],
        };
        assert_eq!(
            prompt_text(&talk),
            "User: Hi\n\nAssistant: <resource uri=\"test://doc\">\nbody\n</resource>"
        );
    }

    #[test]
    fn resources_attach_as_text_and_binary_is_only_named() {
        let text: ReadResourceResult = serde_json::from_value(json!({
            "contents": [{"uri": "test://static/hello", "mimeType": "text/plain", "text": "Hello, world"}]
        }))
        .unwrap();
        let blob: ReadResourceResult = serde_json::from_value(json!({
            "contents": [{"uri": "test://static/blob", "blob": "AAEC"}]
        }))
        .unwrap();
        let a = attachment(&sid(), "test://static/hello", "hello", &text);
        let b = attachment(&sid(), "test://static/blob", "blob", &blob);
        assert_eq!(
            a,
            Attachment {
                server: sid(),
                uri: "test://static/hello".into(),
                name: "hello".into(),
                mime_type: Some("text/plain".into()),
                text: Some("Hello, world".into()),
                binary_bytes: None,
                truncated: false,
            }
        );
        assert_eq!((b.text.clone(), b.binary_bytes), (None, Some(3)));
        assert_eq!(
            attachments_text(&[a, b]),
            "<attachment server=\"everything\" uri=\"test://static/hello\" name=\"hello\" type=\"text/plain\">\nHello, world\n</attachment>\n\n\
             <attachment server=\"everything\" uri=\"test://static/blob\" name=\"blob\">\n[binary content, 3 bytes, not included]\n</attachment>"
        );
        let long: ReadResourceResult = serde_json::from_value(json!({
            "contents": [{"uri": "test://long", "text": "x".repeat(MAX_ATTACHMENT_CHARS + 5)}]
        }))
        .unwrap();
        let cut = attachment(&sid(), "test://long", "long", &long);
        assert!(cut.truncated);
        assert_eq!(cut.text.unwrap().len(), MAX_ATTACHMENT_CHARS);
    }

    #[test]
    fn a_message_splits_from_the_attachments_after_it() {
        let hello: ReadResourceResult = serde_json::from_value(json!({
            "contents": [{"uri": "test://static/hello", "text": "Hello"}]
        }))
        .unwrap();
        let a = attachment(&sid(), "test://static/hello", "hello", &hello);
        let message = format!("Summarize\n\n{}", attachments_text(&[a.clone(), a]));
        let (text, tail) = split_attachments(&message);
        assert_eq!(text, "Summarize");
        assert!(tail.starts_with("\n\n<attachment server="));
        assert_eq!(attached_count(&message), 2);
        assert_eq!(split_attachments("no attachment"), ("no attachment", ""));
        assert_eq!(attached_count("a <attachment server= typed inline"), 0);
    }
}
