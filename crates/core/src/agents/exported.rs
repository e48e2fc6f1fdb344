//! Hearth's skills as an MCP server offers them: the skills shared with
//! an agent as tools (with their JSON Schemas), results as `tools/call`
//! results (text and structured content), and the person's notes and
//! memories as resources (`hearth://note/<id>`, `hearth://memory/<id>`).
//!
//! Listing names what exists, as `tools/list` does; reading a resource is
//! a call of the notes or memory skill, so it passes the same permission
//! decision and Activity record as any call.

use serde_json::{Map, Value, json};

use super::AgentRecord;
use crate::builtin::memory::Memory;
use crate::builtin::notes::Note;
use crate::mcp::jsonrpc::{INVALID_PARAMS, RpcError};
use crate::mcp::model::{
    CallToolResult, ContentBlock, ReadResourceResult, Resource, ResourceBody, ResourceContents,
    ResourceTemplate, Tool, ToolAnnotations,
};
use crate::skill::SkillDefinition;
use crate::skill::call::{Content, ToolResult, ToolStatus};

/// Resources per `resources/list` page.
pub const PAGE: usize = 100;
/// The `_meta` key naming how a call ended, for agents that want more
/// than `isError` ("denied", "failed", "input-required").
pub const STATUS_META: &str = "app.hearth/status";

/// A skill as an MCP tool: its id is the name, its JSON Schemas are the
/// tool's.
pub fn tool(skill: &SkillDefinition) -> Tool {
    let output_schema = (skill.output_schema.get("type").and_then(Value::as_str) == Some("object"))
        .then(|| skill.output_schema.clone());
    let read_only = skill.id.as_str() == "calculator";
    Tool {
        name: skill.id.to_string(),
        title: Some(skill.name.clone()),
        description: Some(skill.description.clone()),
        input_schema: skill.input_schema.clone(),
        output_schema,
        annotations: Some(ToolAnnotations {
            title: Some(skill.name.clone()),
            read_only_hint: Some(read_only),
            destructive_hint: None,
            idempotent_hint: None,
            open_world_hint: Some(skill.requires_network),
        }),
        icons: None,
        meta: None,
    }
}

/// The tools `agent` sees, in a stable order (by name).
pub fn tools<'a>(
    skills: impl IntoIterator<Item = &'a SkillDefinition>,
    agent: &AgentRecord,
) -> Vec<Tool> {
    let mut out: Vec<Tool> = skills
        .into_iter()
        .filter(|s| agent.sees(s))
        .map(tool)
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The tool name and arguments of a `tools/call`'s params.
pub fn call_params(params: &Value) -> Result<(String, Value), RpcError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| RpcError::new(INVALID_PARAMS, "tools/call needs the tool's \"name\""))?;
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => json!({}),
        Some(Value::Object(o)) => Value::Object(o.clone()),
        Some(_) => {
            return Err(RpcError::new(
                INVALID_PARAMS,
                "tools/call \"arguments\" must be an object",
            ));
        }
    };
    Ok((name.to_string(), arguments))
}

/// The error for a tool the agent does not have (absent, or not shared
/// with it): to the agent the two are the same.
pub fn unknown_tool(name: &str, agent: &str) -> RpcError {
    RpcError::new(
        INVALID_PARAMS,
        format!(
            "Unknown tool: {name}. Hearth has not shared a skill of that name with {agent}; the person can share it in Hearth's Settings → Agents"
        ),
    )
}

fn content_block(c: &Content) -> ContentBlock {
    match c {
        Content::Text { text } => ContentBlock::Text {
            text: text.clone(),
            annotations: None,
        },
        Content::Json { value } => ContentBlock::Text {
            text: value.to_string(),
            annotations: None,
        },
        Content::Image { mime_type, data } => ContentBlock::Image {
            data: data.clone(),
            mime_type: mime_type.clone(),
            annotations: None,
        },
        Content::Audio { mime_type, data } => ContentBlock::Audio {
            data: data.clone(),
            mime_type: mime_type.clone(),
            annotations: None,
        },
        Content::ResourceLink {
            uri,
            name,
            description,
            mime_type,
        } => ContentBlock::ResourceLink(Resource {
            uri: uri.clone(),
            name: name.clone(),
            title: None,
            description: description.clone(),
            mime_type: mime_type.clone(),
            size: None,
            annotations: None,
            meta: None,
        }),
        Content::Resource {
            uri,
            mime_type,
            text,
            blob,
        } => ContentBlock::Resource {
            resource: ResourceContents {
                uri: uri.clone(),
                mime_type: mime_type.clone(),
                body: match (text, blob) {
                    (_, Some(b)) => ResourceBody::Blob(b.clone()),
                    (Some(t), None) => ResourceBody::Text(t.clone()),
                    (None, None) => ResourceBody::Text(String::new()),
                },
                meta: None,
            },
            annotations: None,
        },
        Content::Artifact {
            name,
            mime_type,
            data,
        } => ContentBlock::Resource {
            resource: ResourceContents {
                uri: format!("hearth://artifact/{}", percent(name)),
                mime_type: Some(mime_type.clone()),
                body: ResourceBody::Blob(data.clone()),
                meta: None,
            },
            annotations: None,
        },
    }
}

/// A result of the call path as a `tools/call` result. A failure, a
/// denial or a call waiting for input is a result with `isError` and a
/// message the agent can read (a tool execution error, in MCP's terms),
/// so the agent can tell the person or try otherwise.
pub fn call_result(result: &ToolResult, skill: &SkillDefinition) -> CallToolResult {
    let mut content: Vec<ContentBlock> = result.content.iter().map(content_block).collect();
    let mut meta = Map::new();
    meta.insert(STATUS_META.into(), result.status.as_str().into());
    let failed = match result.status {
        ToolStatus::Completed => false,
        ToolStatus::Failed | ToolStatus::Denied | ToolStatus::InputRequired => true,
    };
    if failed {
        let why = result
            .error
            .clone()
            .unwrap_or_else(|| "no reason given".into());
        let text = match result.status {
            ToolStatus::Denied => format!("Hearth did not run {}: {why}", skill.name),
            ToolStatus::InputRequired => {
                format!("{} needs more from the person in Hearth: {why}", skill.name)
            }
            ToolStatus::Failed | ToolStatus::Completed => {
                format!("{} failed: {why}", skill.name)
            }
        };
        content.insert(
            0,
            ContentBlock::Text {
                text,
                annotations: None,
            },
        );
    }
    // A tool that declares an output schema must give structured content
    // with every successful result.
    let structured = if failed {
        None
    } else {
        result.json().cloned().or_else(|| {
            (tool(skill).output_schema.is_some())
                .then(|| json!({"text": result.text().unwrap_or_default()}))
        })
    };
    CallToolResult {
        content,
        structured_content: structured,
        is_error: Some(failed),
        meta: Some(meta),
    }
}

/// A resource of Hearth's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HearthUri {
    Note(String),
    Memory(String),
}

impl HearthUri {
    pub fn parse(uri: &str) -> Option<HearthUri> {
        let rest = uri.strip_prefix("hearth://")?;
        let (kind, raw) = rest.split_once('/')?;
        if raw.contains('/') {
            return None;
        }
        let id = unpercent(raw)?;
        if id.is_empty() {
            return None;
        }
        match kind {
            "note" => Some(HearthUri::Note(id)),
            "memory" => Some(HearthUri::Memory(id)),
            _ => None,
        }
    }

    pub fn to_uri(&self) -> String {
        match self {
            HearthUri::Note(id) => format!("hearth://note/{}", percent(id)),
            HearthUri::Memory(id) => format!("hearth://memory/{}", percent(id)),
        }
    }

    /// The skill whose call reads it.
    pub fn skill(&self) -> &'static str {
        match self {
            HearthUri::Note(_) => "notes",
            HearthUri::Memory(_) => "memory",
        }
    }

    /// The call that reads it.
    pub fn read_arguments(&self) -> Value {
        match self {
            HearthUri::Note(id) | HearthUri::Memory(id) => json!({"action": "read", "id": id}),
        }
    }
}

/// Ids are percent-encoded outside a plain safe set, so every id makes a
/// valid URI and reads back the same.
fn percent(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn unpercent(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// An RFC 3339 UTC time from Unix milliseconds, as MCP's
/// `lastModified` takes it.
fn iso(ms: f64) -> String {
    let secs = (ms / 1000.0).floor() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = crate::util::dates::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

pub fn note_resource(note: &Note) -> Resource {
    Resource {
        uri: HearthUri::Note(note.id.clone()).to_uri(),
        name: note.title.clone(),
        title: Some(note.title.clone()),
        description: (!note.tags.is_empty()).then(|| format!("Tags: {}", note.tags.join(", "))),
        mime_type: Some("text/markdown".into()),
        size: Some(note.body.len() as u64),
        annotations: Some(crate::mcp::model::Annotations {
            audience: None,
            priority: None,
            last_modified: Some(iso(note.updated_ms)),
        }),
        meta: None,
    }
}

pub fn memory_resource(memory: &Memory) -> Resource {
    let name: String = memory.text.chars().take(80).collect();
    Resource {
        uri: HearthUri::Memory(memory.id.clone()).to_uri(),
        name,
        title: None,
        description: (!memory.tags.is_empty()).then(|| format!("Tags: {}", memory.tags.join(", "))),
        mime_type: Some("text/plain".into()),
        size: Some(memory.text.len() as u64),
        annotations: Some(crate::mcp::model::Annotations {
            audience: None,
            priority: None,
            last_modified: Some(iso(memory.updated_ms)),
        }),
        meta: None,
    }
}

/// The resources `agent` may list: notes if it has the notes skill,
/// memories if it has memory; newest first.
pub fn resources<'a>(
    notes: impl IntoIterator<Item = &'a Note>,
    memories: impl IntoIterator<Item = &'a Memory>,
    agent: &AgentRecord,
) -> Vec<Resource> {
    let has = |s: &str| agent.shared.iter().any(|x| x == s);
    let mut dated: Vec<(f64, Resource)> = Vec::new();
    if has("notes") {
        dated.extend(notes.into_iter().map(|n| (n.updated_ms, note_resource(n))));
    }
    if has("memory") {
        dated.extend(
            memories
                .into_iter()
                .map(|m| (m.updated_ms, memory_resource(m))),
        );
    }
    dated.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.uri.cmp(&b.1.uri)));
    dated.into_iter().map(|(_, r)| r).collect()
}

/// The templates of the resources `agent` may read.
pub fn templates(agent: &AgentRecord) -> Vec<ResourceTemplate> {
    let has = |s: &str| agent.shared.iter().any(|x| x == s);
    let mut out = Vec::new();
    if has("notes") {
        out.push(ResourceTemplate {
            uri_template: "hearth://note/{id}".into(),
            name: "note".into(),
            title: Some("A note in Hearth".into()),
            description: Some("One of the person's notes, as Markdown".into()),
            mime_type: Some("text/markdown".into()),
            annotations: None,
            meta: None,
        });
    }
    if has("memory") {
        out.push(ResourceTemplate {
            uri_template: "hearth://memory/{id}".into(),
            name: "memory".into(),
            title: Some("A memory in Hearth".into()),
            description: Some("Something Hearth remembers about the person".into()),
            mime_type: Some("text/plain".into()),
            annotations: None,
            meta: None,
        });
    }
    out
}

/// One page of `items` after `cursor` (an offset this server handed out).
pub fn page<T>(
    mut items: Vec<T>,
    cursor: Option<&str>,
    size: usize,
) -> Result<(Vec<T>, Option<String>), RpcError> {
    let start = match cursor {
        None => 0,
        Some(c) => c
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= items.len())
            .ok_or_else(|| RpcError::new(INVALID_PARAMS, format!("invalid cursor {c:?}")))?,
    };
    let total = items.len();
    let end = (start + size).min(total);
    let next = (end < total).then(|| end.to_string());
    Ok((items.drain(start..end).collect(), next))
}

/// The resource `uri` names, for an agent that may read it.
pub fn readable(uri: &str, agent: &AgentRecord) -> Result<HearthUri, RpcError> {
    let parsed = HearthUri::parse(uri).ok_or_else(|| not_found(uri))?;
    if !agent.shared.iter().any(|s| s == parsed.skill()) {
        return Err(not_found(uri));
    }
    Ok(parsed)
}

/// Resource not found, as 2026-07-28 spells it (Invalid params).
pub fn not_found(uri: &str) -> RpcError {
    RpcError {
        code: INVALID_PARAMS,
        message: format!("Resource not found: {uri}"),
        data: Some(json!({"uri": uri})),
    }
}

/// The contents of a resource from the result of its read call.
pub fn read_result(uri: &HearthUri, result: &ToolResult) -> Result<ReadResourceResult, RpcError> {
    match result.status {
        ToolStatus::Completed => {}
        ToolStatus::Denied => {
            return Err(RpcError::new(
                super::wire::codes::CANCELLED,
                format!(
                    "Hearth did not let this read happen: {}",
                    result.error.clone().unwrap_or_default()
                ),
            ));
        }
        ToolStatus::Failed | ToolStatus::InputRequired => {
            return Err(not_found(&uri.to_uri()));
        }
    }
    let json = result.json().cloned().unwrap_or(Value::Null);
    let (mime, text) = match uri {
        HearthUri::Note(_) => {
            let note: Note = serde_json::from_value(json["note"].clone())
                .map_err(|_| not_found(&uri.to_uri()))?;
            let mut text = format!("# {}\n", note.title);
            if !note.tags.is_empty() {
                let tags: Vec<String> = note.tags.iter().map(|t| format!("#{t}")).collect();
                text.push_str(&format!("\n{}\n", tags.join(" ")));
            }
            if !note.body.trim().is_empty() {
                text.push_str(&format!("\n{}\n", note.body));
            }
            ("text/markdown", text)
        }
        HearthUri::Memory(_) => {
            let memory: Memory = serde_json::from_value(json["memory"].clone())
                .map_err(|_| not_found(&uri.to_uri()))?;
            ("text/plain", memory.text)
        }
    };
    Ok(ReadResourceResult {
        contents: vec![ResourceContents {
            uri: uri.to_uri(),
            mime_type: Some(mime.into()),
            body: ResourceBody::Text(text),
            meta: None,
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::{AgentAsk, AgentClient, DEFAULT_SHARED};
    use crate::skill::call::{CallOrigin, ToolCall};
    use crate::skill::{SkillId, SkillKind};

    fn agent(shared: &[&str]) -> AgentRecord {
        AgentRecord {
            id: "a".into(),
            name: "Codex".into(),
            client: AgentClient::Codex,
            created_ms: 0,
            last_used_ms: None,
            shared: shared.iter().map(|s| s.to_string()).collect(),
            always: vec![],
            ask: AgentAsk::Changes,
        }
    }

    fn result(status: ToolStatus, content: Vec<Content>, error: Option<&str>) -> ToolResult {
        let call = ToolCall {
            id: "c".into(),
            skill_id: SkillId::new("notes").unwrap(),
            arguments: json!({}),
            conversation_id: None,
            origin: CallOrigin::Agent(agent(&[]).caller()),
        };
        let mut r = ToolResult::for_call(&call, status);
        r.content = content;
        r.error = error.map(str::to_string);
        r
    }

    #[test]
    fn an_agent_sees_exactly_what_was_shared_with_it_in_a_stable_order() {
        let mut all = crate::builtin::definitions();
        let mut echo = crate::builtin::calculator();
        echo.id = SkillId::new("everything__echo").unwrap();
        echo.kind = SkillKind::Mcp {
            server: "everything".into(),
            tool: "echo".into(),
        };
        all.push(echo);
        let names = |a: &AgentRecord| -> Vec<String> {
            tools(&all, a).into_iter().map(|t| t.name).collect()
        };
        assert_eq!(names(&agent(&DEFAULT_SHARED)), ["memory", "notes", "tasks"]);
        assert_eq!(
            names(&agent(&[
                "tasks",
                "everything__echo",
                "discover_skills",
                "calculator"
            ])),
            ["calculator", "tasks"],
            "tools from MCP servers and discovery are never offered"
        );
        let notes = tools(&all, &agent(&["notes"])).remove(0);
        assert_eq!(
            notes.input_schema,
            crate::builtin::notes::definition().input_schema
        );
        assert_eq!(notes.output_schema, Some(json!({"type": "object"})));
        assert_eq!(notes.title.as_deref(), Some("Notes"));
    }

    #[test]
    fn results_carry_text_and_structured_content() {
        let notes = crate::builtin::notes::definition();
        let done = result(
            ToolStatus::Completed,
            vec![
                Content::Text {
                    text: "Created note \"x\".".into(),
                },
                Content::Json {
                    value: json!({"note": {"id": "n1"}}),
                },
            ],
            None,
        );
        let wire = serde_json::to_value(call_result(&done, &notes)).unwrap();
        assert_eq!(
            wire,
            json!({
                "content": [
                    {"type": "text", "text": "Created note \"x\"."},
                    {"type": "text", "text": "{\"note\":{\"id\":\"n1\"}}"}
                ],
                "structuredContent": {"note": {"id": "n1"}},
                "isError": false,
                "_meta": {"app.hearth/status": "completed"}
            })
        );
        let denied = result(
            ToolStatus::Denied,
            vec![],
            Some("you denied this Notes call"),
        );
        let wire = serde_json::to_value(call_result(&denied, &notes)).unwrap();
        assert_eq!(wire["isError"], true);
        assert_eq!(
            wire["content"][0]["text"],
            "Hearth did not run Notes: you denied this Notes call"
        );
        assert!(wire.get("structuredContent").is_none());
        assert_eq!(wire["_meta"]["app.hearth/status"], "denied");
    }

    #[test]
    fn uris_round_trip_and_refuse_what_is_not_hearths() {
        for id in ["n1", "a b/c", "é%", "x?y#z"] {
            let u = HearthUri::Note(id.into());
            assert_eq!(HearthUri::parse(&u.to_uri()), Some(u.clone()), "{id}");
        }
        assert_eq!(
            HearthUri::Note("a b".into()).to_uri(),
            "hearth://note/a%20b"
        );
        for bad in [
            "hearth://note/",
            "hearth://file/x",
            "file:///etc/passwd",
            "hearth://note/a/b",
            "hearth://note/%zz",
        ] {
            assert_eq!(HearthUri::parse(bad), None, "{bad}");
        }
        let a = agent(&["tasks"]);
        assert!(
            readable("hearth://note/n1", &a).is_err(),
            "notes not shared"
        );
        assert!(readable("hearth://note/n1", &agent(&["notes"])).is_ok());
    }

    #[test]
    fn resources_list_newest_first_and_page() {
        let note = |id: &str, t: f64| Note {
            id: id.into(),
            title: format!("Note {id}"),
            body: "b".into(),
            tags: vec![],
            created_ms: t,
            updated_ms: t,
        };
        let mem = Memory {
            id: "m1".into(),
            text: "Likes tea".into(),
            tags: vec!["food".into()],
            created_ms: 2.0,
            updated_ms: 2.0,
        };
        let notes = [note("n1", 1.0), note("n3", 3.0)];
        let all = resources(&notes, [&mem], &agent(&["notes", "memory"]));
        let uris: Vec<&str> = all.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(
            uris,
            ["hearth://note/n3", "hearth://memory/m1", "hearth://note/n1"]
        );
        assert_eq!(resources(&notes, [&mem], &agent(&["memory"])).len(), 1);
        let (first, next) = page(all.clone(), None, 2).unwrap();
        assert_eq!((first.len(), next.as_deref()), (2, Some("2")));
        let (rest, next) = page(all, Some("2"), 2).unwrap();
        assert_eq!((rest.len(), next), (1, None));
        assert!(page(vec![1, 2], Some("9"), 2).is_err());
    }

    #[test]
    fn a_note_reads_as_markdown() {
        let r = result(
            ToolStatus::Completed,
            vec![Content::Json {
                value: json!({"note": {"id": "n1", "title": "Trip", "body": "Book the tram", "tags": ["travel"], "created_ms": 1.0, "updated_ms": 1.0}}),
            }],
            None,
        );
        let read = read_result(&HearthUri::Note("n1".into()), &r).unwrap();
        assert_eq!(
            serde_json::to_value(read).unwrap(),
            json!({"contents": [{"uri": "hearth://note/n1", "mimeType": "text/markdown", "text": "# Trip\n\n#travel\n\nBook the tram\n"}]})
        );
        let gone = result(ToolStatus::Failed, vec![], Some("there is no note"));
        assert_eq!(
            read_result(&HearthUri::Note("n9".into()), &gone)
                .unwrap_err()
                .code,
            INVALID_PARAMS
        );
    }

    #[test]
    fn times_are_rfc_3339() {
        assert_eq!(iso(0.0), "1970-01-01T00:00:00Z");
        assert_eq!(
            iso(1_767_225_600_000.0 + 3_723_000.0),
            "2026-01-01T01:02:03Z"
        );
    }

    #[test]
    fn call_params_are_checked() {
        assert_eq!(
            call_params(&json!({"name": "notes"})).unwrap(),
            ("notes".to_string(), json!({}))
        );
        assert!(call_params(&json!({"arguments": {}})).is_err());
        assert!(call_params(&json!({"name": "notes", "arguments": [1]})).is_err());
    }
}
