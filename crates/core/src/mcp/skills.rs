//! MCP tools as skills: one registry for every source. A server's tools
//! become integration-tier skills (off by default, asking before each
//! call), with stable ids that cannot collide across servers; tools meant
//! only for an MCP App's own UI are kept from the model; a server's
//! instructions travel with its catalog; results of every content type map
//! onto `Content` and `SkillOutput`; and an [`Executor`] runs the calls.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

use futures::FutureExt;
use futures::future::LocalBoxFuture;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::client::{CallOptions, McpClient, ServerInfo, ToolListing};
use super::error::McpError;
use super::model::{CallToolResult, ContentBlock, ResourceBody, Tool};
pub use super::server_id::{ServerId, ServerIdError};
use crate::schema::SchemaWarning;
use crate::skill::call::{Content, SkillError, SkillOutput, ToolCall};
use crate::skill::invoke::Executor;
use crate::skill::registry::{Registry, RegistryError};
use crate::skill::{Category, SkillDefinition, SkillId, SkillKind, Tier};

/// The skill id of a server's tool: `{server}__{tool}` when the tool's
/// name is already a valid id and it fits; otherwise the sanitised,
/// shortened form plus 8 hex digits of SHA-256 over server and tool name.
/// Stable across runs, and different servers can never produce the same id.
pub fn skill_id(server: &ServerId, tool: &str) -> SkillId {
    let clean: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let base = format!("{server}{}{clean}", hearth_base::skill_id::MCP_SEPARATOR);
    let id = if clean == tool && base.len() <= SkillId::MAX_LEN {
        base
    } else {
        let mut hasher = Sha256::new();
        hasher.update(server.as_str().as_bytes());
        hasher.update([0]);
        hasher.update(tool.as_bytes());
        let digest = hasher.finalize();
        let hash: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
        let keep = SkillId::MAX_LEN - 1 - hash.len();
        format!("{}_{hash}", &base[..base.len().min(keep)])
    };
    SkillId::new(id).expect("skill_id builds only 1-64 characters of [A-Za-z0-9_-]")
}

/// Whether `_meta.ui.visibility` (MCP Apps) lets `who` ("model" or
/// "app") see a tool. Absent or empty means both.
fn visible_to(tool: &Tool, who: &str) -> bool {
    let Some(visibility) = tool
        .meta
        .as_ref()
        .and_then(|m| m.get("ui"))
        .and_then(|ui| ui.get("visibility"))
        .and_then(Value::as_array)
    else {
        return true;
    };
    visibility.is_empty() || visibility.iter().any(|v| v.as_str() == Some(who))
}

/// Whether the model may see and call a tool.
pub fn visible_to_model(tool: &Tool) -> bool {
    visible_to(tool, "model")
}

/// Whether a server's MCP App may call a tool through Hearth.
pub fn visible_to_app(tool: &Tool) -> bool {
    visible_to(tool, "app")
}

/// The `ui://` resource an MCP Apps tool renders, if any.
pub fn ui_resource(tool: &Tool) -> Option<&str> {
    let meta = tool.meta.as_ref()?;
    meta.get("ui")
        .and_then(|ui| ui.get("resourceUri"))
        .or_else(|| meta.get("ui/resourceUri"))
        .and_then(Value::as_str)
}

/// One tool as a skill, or `None` if it is for the app's UI only.
pub fn tool_to_skill(server: &ServerId, tool: &Tool) -> Option<SkillDefinition> {
    if !visible_to_model(tool) {
        return None;
    }
    let description = match tool.description.as_deref().map(str::trim) {
        Some(d) if !d.is_empty() => d.to_string(),
        _ => format!(
            "{} (a tool of the MCP server {server})",
            tool.display_name()
        ),
    };
    let mut tags = vec!["mcp".to_string(), server.to_string()];
    if let Some(a) = &tool.annotations {
        // Hints only: shown and searchable, never trusted for approval.
        if a.read_only_hint == Some(true) {
            tags.push("read-only".into());
        }
        if a.destructive_hint == Some(true) {
            tags.push("destructive".into());
        }
    }
    Some(
        SkillDefinition::new(
            skill_id(server, &tool.name),
            tool.display_name(),
            Tier::Integration,
            Category::Integrations,
        )
        .with_description(description)
        .with_icon("🔌")
        .with_tags(tags)
        .with_input_schema(tool.input_schema.clone())
        .with_output_schema(
            tool.output_schema
                .clone()
                .unwrap_or_else(|| serde_json::json!({})),
        )
        .with_kind(SkillKind::Mcp {
            server: server.to_string(),
            tool: tool.name.clone(),
        }),
    )
}

/// A server's contribution to the registry.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerCatalog {
    pub server: ServerId,
    /// Shown in the Servers panel; offered to the model when this server's
    /// skills are loaded.
    pub instructions: Option<String>,
    pub skills: Vec<SkillDefinition>,
    /// Tools only the server's MCP App may call.
    pub app_only: Vec<String>,
    /// Tools left out, with why.
    pub rejected: Vec<(String, String)>,
}

/// Why a tool's schemas cannot be checked in bounded time, if they cannot
/// (see [`crate::schema::check_bounded`]): such a tool is left out, for the
/// model and for the server's apps alike.
pub fn unbounded_schema(tool: &Tool) -> Option<String> {
    let input = std::iter::once(("input", &tool.input_schema));
    let output = tool.output_schema.iter().map(|s| ("output", s));
    input.chain(output).find_map(|(which, schema)| {
        crate::schema::check_bounded(schema)
            .err()
            .map(|e| format!("in its {which} schema, {e}"))
    })
}

pub fn catalog(
    server: &ServerId,
    info: Option<&ServerInfo>,
    listing: &ToolListing,
) -> ServerCatalog {
    let mut skills = Vec::new();
    let mut app_only = Vec::new();
    let mut rejected: Vec<(String, String)> = listing
        .rejected
        .iter()
        .map(|(n, e)| (n.clone(), e.to_string()))
        .collect();
    let mut ids: HashMap<SkillId, String> = HashMap::new();
    for tool in &listing.tools {
        if let Some(why) = unbounded_schema(tool) {
            rejected.push((tool.name.clone(), why));
            continue;
        }
        match tool_to_skill(server, tool) {
            None => app_only.push(tool.name.clone()),
            Some(skill) => {
                if let Some(first) = ids.get(&skill.id) {
                    rejected.push((
                        tool.name.clone(),
                        format!(
                            "its skill id {} is already taken by the tool {first}",
                            skill.id
                        ),
                    ));
                    continue;
                }
                ids.insert(skill.id.clone(), tool.name.clone());
                skills.push(skill);
            }
        }
    }
    ServerCatalog {
        server: server.clone(),
        instructions: info.and_then(|i| i.instructions.clone()),
        skills,
        app_only,
        rejected,
    }
}

/// What registering a catalog did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RegisterOutcome {
    pub added: usize,
    pub replaced: usize,
    /// Skills of this server that it no longer offers.
    pub removed: usize,
    pub warnings: Vec<(SkillId, SchemaWarning)>,
    pub errors: Vec<RegistryError>,
}

fn server_of(skill: &SkillDefinition) -> Option<&str> {
    match &skill.kind {
        SkillKind::Mcp { server, .. } => Some(server),
        SkillKind::Builtin | SkillKind::AgentSkill { .. } => None,
    }
}

/// Puts a server's skills into the registry, replacing what it had there
/// before. One bad tool never keeps the others out.
pub fn register(registry: &mut Registry, catalog: &ServerCatalog) -> RegisterOutcome {
    let keep: BTreeSet<&SkillId> = catalog.skills.iter().map(|s| &s.id).collect();
    let before = registry.len();
    registry.retain(|s| server_of(s) != Some(catalog.server.as_str()) || keep.contains(&s.id));
    let mut outcome = RegisterOutcome {
        removed: before - registry.len(),
        ..RegisterOutcome::default()
    };
    for skill in &catalog.skills {
        let id = skill.id.clone();
        match registry.register(skill.clone()) {
            Ok(r) => {
                if r.replaced {
                    outcome.replaced += 1;
                } else {
                    outcome.added += 1;
                }
                outcome
                    .warnings
                    .extend(r.warnings.into_iter().map(|w| (id.clone(), w)));
            }
            Err(e) => outcome.errors.push(e),
        }
    }
    outcome
}

/// Removes every skill of a server (it was disabled or removed).
pub fn unregister(registry: &mut Registry, server: &ServerId) -> usize {
    let before = registry.len();
    registry.retain(|s| server_of(s) != Some(server.as_str()));
    before - registry.len()
}

/// The instructions of the servers whose skills are loaded, for the system
/// prompt.
pub fn instructions_for_loaded(
    catalogs: &[ServerCatalog],
    loaded: &[SkillDefinition],
) -> Option<String> {
    let servers: BTreeSet<&str> = loaded.iter().filter_map(server_of).collect();
    let parts: Vec<String> = catalogs
        .iter()
        .filter(|c| servers.contains(c.server.as_str()))
        .filter_map(|c| {
            c.instructions
                .as_deref()
                .map(str::trim)
                .filter(|i| !i.is_empty())
                .map(|i| format!("Instructions from the MCP server \"{}\":\n{i}", c.server))
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// A tool's result as a skill's: `isError` becomes a failure the model can
/// read; every content type maps across; structured content is kept for
/// output-schema validation and shown as JSON when the tool gave no text.
pub fn to_skill_output(result: CallToolResult) -> Result<SkillOutput, SkillError> {
    let mut content: Vec<Content> = result.content.into_iter().map(to_content).collect();
    if result.is_error == Some(true) {
        let text: Vec<String> = content
            .iter()
            .filter_map(|c| match c {
                Content::Text { text } => Some(text.clone()),
                Content::Json { value } => Some(value.to_string()),
                Content::Image { .. }
                | Content::Audio { .. }
                | Content::ResourceLink { .. }
                | Content::Resource { .. }
                | Content::Artifact { .. } => None,
            })
            .collect();
        let message = if text.is_empty() {
            "the tool reported an error without details".to_string()
        } else {
            text.join("\n")
        };
        return Err(SkillError::new(message));
    }
    let has_text = content.iter().any(|c| matches!(c, Content::Text { .. }));
    if let (Some(v), false) = (&result.structured_content, has_text) {
        content.push(Content::Json { value: v.clone() });
    }
    Ok(SkillOutput {
        content,
        structured: result.structured_content,
        undo: None,
    })
}

fn to_content(block: ContentBlock) -> Content {
    match block {
        ContentBlock::Text { text, .. } => Content::Text { text },
        ContentBlock::Image {
            data, mime_type, ..
        } => Content::Image { mime_type, data },
        ContentBlock::Audio {
            data, mime_type, ..
        } => Content::Audio { mime_type, data },
        ContentBlock::ResourceLink(r) => Content::ResourceLink {
            uri: r.uri,
            name: r.title.unwrap_or(r.name),
            description: r.description,
            mime_type: r.mime_type,
        },
        ContentBlock::Resource { resource, .. } => match resource.body {
            ResourceBody::Text(text) => Content::Resource {
                uri: resource.uri,
                mime_type: resource.mime_type,
                text: Some(text),
                blob: None,
            },
            ResourceBody::Blob(blob) => Content::Resource {
                uri: resource.uri,
                mime_type: resource.mime_type,
                text: None,
                blob: Some(blob),
            },
        },
        ContentBlock::Unknown(value) => Content::Json { value },
    }
}

/// A protocol failure as the skill's failure, naming the server.
pub fn to_skill_error(server: &str, error: McpError) -> SkillError {
    match error {
        McpError::InputRequired(m) => SkillError::input_required(format!("{server}: {m}")),
        other => SkillError::new(format!("MCP server {server}: {other}")),
    }
}

/// How a tool call reaches its server's client: directly, or (in the app)
/// through the lazily loaded chunk that holds the client's request code,
/// which answers `Err` with a message when it could not be loaded.
pub type CallTool = Rc<
    dyn Fn(
        McpClient,
        String,
        Value,
    ) -> LocalBoxFuture<'static, Result<CallToolResult, CallFailure>>,
>;

/// Why a tool call got no answer from its server.
#[derive(Debug)]
pub enum CallFailure {
    /// The server answered with an error, or the exchange failed.
    Mcp(McpError),
    /// The code that makes the call could not be loaded.
    NotLoaded(String),
}

/// Runs MCP skills on the connected servers: the one `tools/call` path,
/// for the app (whose MCP source calls [`McpExecutor::call_tool`]) and
/// for the tests (through its [`Executor`]).
pub struct McpExecutor {
    clients: RefCell<HashMap<String, McpClient>>,
    caller: CallTool,
}

impl Default for McpExecutor {
    fn default() -> Self {
        Self::with_caller(Rc::new(
            |client: McpClient, tool: String, arguments: Value| {
                Box::pin(async move {
                    client
                        .call_tool(&tool, arguments, CALL_OPTIONS)
                        .await
                        .map_err(CallFailure::Mcp)
                }) as LocalBoxFuture<'static, _>
            },
        ))
    }
}

/// Every tool call asks for progress; cancelling is the call path's.
pub const CALL_OPTIONS: CallOptions = CallOptions {
    progress: true,
    cancel: None,
};

impl McpExecutor {
    pub fn new() -> Self {
        Self::default()
    }

    /// An executor whose calls go through `caller`.
    pub fn with_caller(caller: CallTool) -> Self {
        McpExecutor {
            clients: RefCell::default(),
            caller,
        }
    }

    pub fn connect(&self, server: &ServerId, client: McpClient) {
        self.clients.borrow_mut().insert(server.to_string(), client);
    }

    pub fn disconnect(&self, server: &ServerId) -> Option<McpClient> {
        self.clients.borrow_mut().remove(server.as_str())
    }

    pub fn client(&self, server: &str) -> Option<McpClient> {
        self.clients.borrow().get(server).cloned()
    }

    /// Calls the tool behind the MCP skill `skill` with `call`'s
    /// arguments on its connected server, and gives the server's own
    /// answer; every failure is a message a person can act on.
    pub async fn call_tool(
        &self,
        skill: &SkillDefinition,
        call: &ToolCall,
    ) -> Result<CallToolResult, SkillError> {
        let (server, tool) = match &skill.kind {
            SkillKind::Mcp { server, tool } => (server, tool),
            SkillKind::Builtin | SkillKind::AgentSkill { .. } => {
                return Err(SkillError::new(format!("{} is not an MCP skill", skill.id)));
            }
        };
        let client = self.client(server).ok_or_else(|| {
            SkillError::new(format!(
                "the MCP server {server} is not connected; turn it on in the Servers panel"
            ))
        })?;
        (self.caller)(client, tool.clone(), call.arguments.clone())
            .await
            .map_err(|failure| match failure {
                CallFailure::Mcp(e) => to_skill_error(server, e),
                CallFailure::NotLoaded(message) => SkillError::new(message),
            })
    }
}

impl Executor for McpExecutor {
    fn execute<'a>(
        &'a self,
        skill: &'a SkillDefinition,
        call: &'a ToolCall,
    ) -> LocalBoxFuture<'a, Result<SkillOutput, SkillError>> {
        async move { to_skill_output(self.call_tool(skill, call).await?) }.boxed_local()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::model::{Annotations, Resource, ResourceContents, Role, ToolAnnotations};
    use serde_json::json;

    fn sid(s: &str) -> ServerId {
        ServerId::new(s).unwrap()
    }

    fn tool(v: Value) -> Tool {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn skill_ids_are_readable_when_possible_and_always_valid() {
        let long = "x".repeat(80);
        let long_id = format!("s__{}_cbf4205d", "x".repeat(52));
        let table: Vec<(&str, &str, &str)> = vec![
            ("everything", "echo", "everything__echo"),
            ("everything", "get-tiny-image", "everything__get-tiny-image"),
            ("local-3901", "a.b/c", "local-3901__a_b_c_737d8f8a"),
            ("local-3901", "a_b_c", "local-3901__a_b_c"),
            ("s", "日本語", "s______8ddd58b3"),
            ("s", &long, &long_id),
        ];
        for (server, tool, want) in table {
            let id = skill_id(&sid(server), tool);
            assert_eq!(id.as_str(), want, "{server} / {tool}");
            assert!(id.as_str().len() <= SkillId::MAX_LEN);
            assert_eq!(skill_id(&sid(server), tool), id, "stable");
        }
        // Two servers, the same tool: different ids.
        assert_ne!(skill_id(&sid("a"), "t"), skill_id(&sid("b"), "t"));
        // The separator cannot be forged: server names have no '_'.
        assert_eq!(ServerId::new("a__b"), Err(ServerIdError::BadChar('_')));
    }

    #[test]
    fn tools_become_integration_skills() {
        let t = tool(json!({
            "name": "add",
            "title": "Add numbers",
            "description": "Adds two numbers",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]},
            "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}}},
            "annotations": {"readOnlyHint": true}
        }));
        let skill = tool_to_skill(&sid("calc"), &t).unwrap();
        let want = SkillDefinition::new(
            SkillId::new("calc__add").unwrap(),
            "Add numbers",
            Tier::Integration,
            Category::Integrations,
        )
        .with_description("Adds two numbers")
        .with_icon("🔌")
        .with_tags(["mcp", "calc", "read-only"])
        .with_input_schema(t.input_schema.clone())
        .with_output_schema(json!({"type": "object", "properties": {"sum": {"type": "number"}}}))
        .with_kind(SkillKind::Mcp {
            server: "calc".into(),
            tool: "add".into(),
        });
        assert_eq!(skill, want);
        assert!(!skill.default_enabled && skill.requires_approval && skill.requires_network);
        // A destructive hint never lowers the bar; it is only a tag.
        let bare = tool_to_skill(
            &sid("calc"),
            &tool(json!({"name": "wipe", "annotations": {"destructiveHint": true}})),
        )
        .unwrap();
        assert_eq!(bare.description, "wipe (a tool of the MCP server calc)");
        assert_eq!(bare.tags, vec!["mcp", "calc", "destructive"]);
        assert!(bare.requires_approval);
    }

    #[test]
    fn app_only_tools_are_hidden_from_the_model() {
        let table = [
            (json!({"name": "a"}), true),
            (
                json!({"name": "a", "_meta": {"ui": {"resourceUri": "ui://x"}}}),
                true,
            ),
            (
                json!({"name": "a", "_meta": {"ui": {"visibility": []}}}),
                true,
            ),
            (
                json!({"name": "a", "_meta": {"ui": {"visibility": ["model", "app"]}}}),
                true,
            ),
            (
                json!({"name": "a", "_meta": {"ui": {"visibility": ["app"]}}}),
                false,
            ),
        ];
        for (t, visible) in table {
            assert_eq!(visible_to_model(&tool(t.clone())), visible, "{t}");
        }
        assert!(!visible_to_app(&tool(
            json!({"name": "a", "_meta": {"ui": {"visibility": ["model"]}}})
        )));
        assert!(visible_to_app(&tool(
            json!({"name": "a", "_meta": {"ui": {"visibility": ["app"]}}})
        )));
        assert_eq!(
            ui_resource(&tool(
                json!({"name": "a", "_meta": {"ui/resourceUri": "ui://legacy"}})
            )),
            Some("ui://legacy")
        );
    }

    #[test]
    fn a_tool_whose_schema_cannot_be_checked_in_bounded_time_stays_out_by_name() {
        let looping = json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}},
                             "$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "string"}]}}});
        let listing = ToolListing {
            tools: vec![
                tool(json!({"name": "spin", "description": "s", "inputSchema": looping})),
                tool(
                    json!({"name": "spin-app", "description": "s", "inputSchema": {"type": "object"},
                            "outputSchema": {"$ref": "#"}, "_meta": {"ui": {"visibility": ["app"]}}}),
                ),
                tool(json!({"name": "keep", "description": "k"})),
            ],
            rejected: vec![],
        };
        let cat = catalog(&sid("s1"), None, &listing);
        assert_eq!(
            cat.rejected,
            vec![
                (
                    "spin".to_string(),
                    "in its input schema, the schema at /$defs/a refers back to itself without \
                     reading further into the value, so no input could be checked against it"
                        .to_string()
                ),
                (
                    "spin-app".to_string(),
                    "in its output schema, the schema at / refers back to itself without \
                     reading further into the value, so no input could be checked against it"
                        .to_string()
                ),
            ]
        );
        assert_eq!(cat.app_only, Vec::<String>::new());
        assert_eq!(
            cat.skills.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
            ["s1__keep"]
        );
        // The registry refuses such a skill too, whoever offers it.
        let mut registry = Registry::new();
        let mut spin = tool_to_skill(&sid("s1"), &listing.tools[0]).unwrap();
        spin.description = "s".into();
        assert_eq!(
            registry.register(spin).unwrap_err().to_string(),
            "skill 's1__spin' was left out: in its input schema, the schema at /$defs/a refers \
             back to itself without reading further into the value, so no input could be \
             checked against it"
        );
    }

    #[test]
    fn catalogs_register_with_partial_success_and_replace_stale_tools() {
        let server = sid("s1");
        let listing = ToolListing {
            tools: vec![
                tool(json!({"name": "keep", "description": "k"})),
                tool(json!({"name": "ui-only", "_meta": {"ui": {"visibility": ["app"]}}})),
                tool(json!({"name": "bad", "description": "b", "inputSchema": {"type": "string"}})),
            ],
            rejected: vec![],
        };
        let info = ServerInfo {
            era: crate::mcp::Era::Modern,
            protocol_version: "2026-07-28".into(),
            implementation: None,
            capabilities: Default::default(),
            instructions: Some("Use keep wisely.".into()),
        };
        let cat = catalog(&server, Some(&info), &listing);
        assert_eq!(cat.app_only, vec!["ui-only"]);
        let mut registry = crate::builtin::registry().unwrap();
        let builtins = registry.len();
        registry
            .register(
                tool_to_skill(&server, &tool(json!({"name": "gone", "description": "g"}))).unwrap(),
            )
            .unwrap();
        let outcome = register(&mut registry, &cat);
        assert_eq!(
            (outcome.added, outcome.replaced, outcome.removed),
            (1, 0, 1)
        );
        assert_eq!(
            outcome.errors,
            vec![RegistryError::InputNotObject {
                id: SkillId::new("s1__bad").unwrap(),
                found: "string".into()
            }]
        );
        assert_eq!(registry.len(), builtins + 1);
        assert!(registry.get_str("s1__keep").is_some());
        let loaded = vec![registry.get_str("s1__keep").unwrap().clone()];
        assert_eq!(
            instructions_for_loaded(std::slice::from_ref(&cat), &loaded),
            Some("Instructions from the MCP server \"s1\":\nUse keep wisely.".into())
        );
        assert_eq!(instructions_for_loaded(&[cat], &[]), None);
        assert_eq!(unregister(&mut registry, &server), 1);
        assert_eq!(registry.len(), builtins);
    }

    #[test]
    fn every_content_type_maps_to_skill_output() {
        let result = CallToolResult {
            content: vec![
                ContentBlock::Text {
                    text: "hello".into(),
                    annotations: None,
                },
                ContentBlock::Image {
                    data: "iVBO".into(),
                    mime_type: "image/png".into(),
                    annotations: Some(Annotations {
                        audience: Some(vec![Role::User]),
                        priority: None,
                        last_modified: None,
                    }),
                },
                ContentBlock::Audio {
                    data: "UklG".into(),
                    mime_type: "audio/wav".into(),
                    annotations: None,
                },
                ContentBlock::ResourceLink(Resource {
                    uri: "test://1".into(),
                    name: "one".into(),
                    title: Some("One".into()),
                    description: Some("first".into()),
                    mime_type: Some("text/plain".into()),
                    size: None,
                    annotations: None,
                    meta: None,
                }),
                ContentBlock::Resource {
                    resource: ResourceContents {
                        uri: "test://2".into(),
                        mime_type: Some("text/plain".into()),
                        body: ResourceBody::Text("two".into()),
                        meta: None,
                    },
                    annotations: None,
                },
                ContentBlock::Resource {
                    resource: ResourceContents {
                        uri: "test://3".into(),
                        mime_type: None,
                        body: ResourceBody::Blob("AAE=".into()),
                        meta: None,
                    },
                    annotations: None,
                },
                ContentBlock::Unknown(json!({"type": "future", "x": 1})),
            ],
            structured_content: Some(json!({"ok": true})),
            is_error: None,
            meta: None,
        };
        assert_eq!(
            to_skill_output(result),
            Ok(SkillOutput {
                content: vec![
                    Content::Text {
                        text: "hello".into()
                    },
                    Content::Image {
                        mime_type: "image/png".into(),
                        data: "iVBO".into()
                    },
                    Content::Audio {
                        mime_type: "audio/wav".into(),
                        data: "UklG".into()
                    },
                    Content::ResourceLink {
                        uri: "test://1".into(),
                        name: "One".into(),
                        description: Some("first".into()),
                        mime_type: Some("text/plain".into()),
                    },
                    Content::Resource {
                        uri: "test://2".into(),
                        mime_type: Some("text/plain".into()),
                        text: Some("two".into()),
                        blob: None,
                    },
                    Content::Resource {
                        uri: "test://3".into(),
                        mime_type: None,
                        text: None,
                        blob: Some("AAE=".into()),
                    },
                    Content::Json {
                        value: json!({"type": "future", "x": 1})
                    },
                ],
                structured: Some(json!({"ok": true})),
                undo: None,
            })
        );
    }

    #[test]
    fn structured_only_results_show_their_json_and_errors_fail() {
        let structured = CallToolResult {
            structured_content: Some(json!([1, 2])),
            ..CallToolResult::default()
        };
        assert_eq!(
            to_skill_output(structured),
            Ok(SkillOutput {
                content: vec![Content::Json {
                    value: json!([1, 2])
                }],
                structured: Some(json!([1, 2])),
                undo: None
            })
        );
        let failed = CallToolResult {
            content: vec![ContentBlock::Text {
                text: "city not found".into(),
                annotations: None,
            }],
            is_error: Some(true),
            ..CallToolResult::default()
        };
        assert_eq!(
            to_skill_output(failed),
            Err(SkillError::new("city not found"))
        );
        let silent = CallToolResult {
            is_error: Some(true),
            ..CallToolResult::default()
        };
        assert_eq!(
            to_skill_output(silent),
            Err(SkillError::new(
                "the tool reported an error without details"
            ))
        );
        let _ = ToolAnnotations::default();
    }
}
