//! MCP wire types: the shapes servers send and Hearth reads, for both
//! protocol eras, and nothing else (no behaviour, no I/O).
//!
//! Field names follow the schema (`camelCase` on the wire). Schemas inside
//! tools are kept as raw JSON so that nothing a server declares is lost or
//! reshaped on its way to the registry and back. Unknown content types are
//! kept whole rather than dropped.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

pub type Meta = Map<String, Value>;

/// A client's or server's name and version.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default)]
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

/// What the client declares it can do. Only capabilities Hearth can honour
/// are ever set: a server must not ask for anything undeclared.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
}

/// What a server offers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListChangedCapability>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListChangedCapability>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListChangedCapability {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// The 2025-11-25 handshake's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    pub protocol_version: String,
    #[serde(default)]
    pub capabilities: ServerCapabilities,
    #[serde(default)]
    pub server_info: Implementation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// The 2026-07-28 `server/discover` answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    pub supported_versions: Vec<String>,
    #[serde(default)]
    pub capabilities: ServerCapabilities,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Hints about a tool. The spec is explicit that they are untrusted, so
/// they never change whether a call asks for approval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Kept verbatim: any JSON Schema 2020-12 keyword may appear.
    #[serde(default = "empty_object_schema")]
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Value>,
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object"})
}

impl Tool {
    /// The name people see: `title`, then `annotations.title`, then `name`.
    pub fn display_name(&self) -> &str {
        self.title
            .as_deref()
            .or_else(|| self.annotations.as_ref().and_then(|a| a.title.as_deref()))
            .unwrap_or(&self.name)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    pub uri: String,
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    pub uri_template: String,
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The body of a resource: text or base64 bytes.
#[derive(Clone, Debug, PartialEq)]
pub enum ResourceBody {
    Text(String),
    /// Base64.
    Blob(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct ResourceContents {
    pub uri: String,
    pub mime_type: Option<String>,
    pub body: ResourceBody,
    pub meta: Option<Meta>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawResourceContents {
    uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    blob: Option<String>,
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Meta>,
}

impl<'de> Deserialize<'de> for ResourceContents {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawResourceContents::deserialize(d)?;
        let body = match (raw.text, raw.blob) {
            (Some(text), None) => ResourceBody::Text(text),
            (None, Some(blob)) => ResourceBody::Blob(blob),
            (Some(_), Some(_)) => {
                return Err(D::Error::custom(format!(
                    "resource {} has both text and blob",
                    raw.uri
                )));
            }
            (None, None) => {
                return Err(D::Error::custom(format!(
                    "resource {} has neither text nor blob",
                    raw.uri
                )));
            }
        };
        Ok(ResourceContents {
            uri: raw.uri,
            mime_type: raw.mime_type,
            body,
            meta: raw.meta,
        })
    }
}

impl Serialize for ResourceContents {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (text, blob) = match &self.body {
            ResourceBody::Text(t) => (Some(t.clone()), None),
            ResourceBody::Blob(b) => (None, Some(b.clone())),
        };
        RawResourceContents {
            uri: self.uri.clone(),
            mime_type: self.mime_type.clone(),
            text,
            blob,
            meta: self.meta.clone(),
        }
        .serialize(s)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceResult {
    pub contents: Vec<ResourceContents>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub arguments: Vec<PromptArgument>,
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    pub role: Role,
    pub content: ContentBlock,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub messages: Vec<PromptMessage>,
}

/// One piece of tool or prompt output.
#[derive(Clone, Debug, PartialEq)]
pub enum ContentBlock {
    Text {
        text: String,
        annotations: Option<Annotations>,
    },
    Image {
        /// Base64.
        data: String,
        mime_type: String,
        annotations: Option<Annotations>,
    },
    Audio {
        /// Base64.
        data: String,
        mime_type: String,
        annotations: Option<Annotations>,
    },
    ResourceLink(Resource),
    Resource {
        resource: ResourceContents,
        annotations: Option<Annotations>,
    },
    /// A content type this client does not know, kept whole.
    Unknown(Value),
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| D::Error::custom("a content block has no \"type\""))?
            .to_string();
        let annotations = match value.get("annotations") {
            Some(a) if !a.is_null() => {
                Some(serde_json::from_value(a.clone()).map_err(D::Error::custom)?)
            }
            _ => None,
        };
        let field = |name: &str| -> Result<String, D::Error> {
            value
                .get(name)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| D::Error::custom(format!("{kind} content has no \"{name}\"")))
        };
        Ok(match kind.as_str() {
            "text" => ContentBlock::Text {
                text: field("text")?,
                annotations,
            },
            "image" => ContentBlock::Image {
                data: field("data")?,
                mime_type: field("mimeType")?,
                annotations,
            },
            "audio" => ContentBlock::Audio {
                data: field("data")?,
                mime_type: field("mimeType")?,
                annotations,
            },
            "resource_link" => {
                ContentBlock::ResourceLink(serde_json::from_value(value).map_err(D::Error::custom)?)
            }
            "resource" => {
                let resource = value
                    .get("resource")
                    .cloned()
                    .ok_or_else(|| D::Error::custom("resource content has no \"resource\""))?;
                ContentBlock::Resource {
                    resource: serde_json::from_value(resource).map_err(D::Error::custom)?,
                    annotations,
                }
            }
            _ => ContentBlock::Unknown(value),
        })
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut obj = Map::new();
        let put_annotations = |obj: &mut Map<String, Value>, a: &Option<Annotations>| {
            if let Some(a) = a {
                obj.insert(
                    "annotations".into(),
                    serde_json::to_value(a).unwrap_or(Value::Null),
                );
            }
        };
        match self {
            ContentBlock::Text { text, annotations } => {
                obj.insert("type".into(), "text".into());
                obj.insert("text".into(), text.clone().into());
                put_annotations(&mut obj, annotations);
            }
            ContentBlock::Image {
                data,
                mime_type,
                annotations,
            }
            | ContentBlock::Audio {
                data,
                mime_type,
                annotations,
            } => {
                let kind = if matches!(self, ContentBlock::Image { .. }) {
                    "image"
                } else {
                    "audio"
                };
                obj.insert("type".into(), kind.into());
                obj.insert("data".into(), data.clone().into());
                obj.insert("mimeType".into(), mime_type.clone().into());
                put_annotations(&mut obj, annotations);
            }
            ContentBlock::ResourceLink(resource) => {
                if let Value::Object(fields) =
                    serde_json::to_value(resource).map_err(serde::ser::Error::custom)?
                {
                    obj = fields;
                }
                obj.insert("type".into(), "resource_link".into());
            }
            ContentBlock::Resource {
                resource,
                annotations,
            } => {
                obj.insert("type".into(), "resource".into());
                obj.insert(
                    "resource".into(),
                    serde_json::to_value(resource).map_err(serde::ser::Error::custom)?,
                );
                put_annotations(&mut obj, annotations);
            }
            ContentBlock::Unknown(value) => return value.serialize(s),
        }
        Value::Object(obj).serialize(s)
    }
}

/// The final answer to `tools/call`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// One page of a paginated list, plus the caching hints of 2026-07-28.
#[derive(Clone, Debug, PartialEq)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next_cursor: Option<String>,
    /// How long the page may be cached, when the server says.
    pub ttl_ms: Option<u64>,
}

/// `notifications/progress` parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressParams {
    pub progress_token: Value,
    pub progress: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// `notifications/message` parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogMessageParams {
    pub level: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    #[serde(default)]
    pub data: Value,
}

/// Which change notifications a `subscriptions/listen` stream carries.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
}

impl SubscriptionFilter {
    /// Every list change the capabilities say the server can report.
    pub fn all_list_changes(caps: &ServerCapabilities) -> Self {
        let flag = |c: Option<bool>| if c == Some(true) { Some(true) } else { None };
        SubscriptionFilter {
            tools_list_changed: flag(caps.tools.as_ref().and_then(|t| t.list_changed)),
            prompts_list_changed: flag(caps.prompts.as_ref().and_then(|p| p.list_changed)),
            resources_list_changed: flag(caps.resources.as_ref().and_then(|r| r.list_changed)),
            resource_subscriptions: None,
        }
    }
}

/// A server's request for more input, inside an `input_required` result
/// (2026-07-28) or sent as its own request (2025-11-25).
#[derive(Clone, Debug, PartialEq)]
pub enum InputRequest {
    Elicit(ElicitRequest),
    /// `sampling/createMessage`: parameters kept raw; Hearth declines it
    /// unless the app provides a model.
    Sample(Value),
    ListRoots,
    /// A method this client does not know.
    Other {
        method: String,
        params: Value,
    },
}

impl InputRequest {
    pub fn from_method(method: &str, params: Value) -> Self {
        match method {
            "elicitation/create" => match serde_json::from_value::<ElicitRequest>(params.clone()) {
                Ok(e) => InputRequest::Elicit(e),
                Err(_) => InputRequest::Other {
                    method: method.into(),
                    params,
                },
            },
            "sampling/createMessage" => InputRequest::Sample(params),
            "roots/list" => InputRequest::ListRoots,
            _ => InputRequest::Other {
                method: method.into(),
                params,
            },
        }
    }

    pub fn method(&self) -> &str {
        match self {
            InputRequest::Elicit(_) => "elicitation/create",
            InputRequest::Sample(_) => "sampling/createMessage",
            InputRequest::ListRoots => "roots/list",
            InputRequest::Other { method, .. } => method,
        }
    }
}

/// `elicitation/create`: a form to fill, or a URL to visit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    Accept,
    Decline,
    Cancel,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    pub action: ElicitAction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
}

/// Fills fields the person left out with the defaults the form declares
/// (SEP-1034), so a server gets complete answers.
pub fn apply_elicitation_defaults(schema: &Value, content: &mut Map<String, Value>) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, prop) in props {
        if content.contains_key(name) {
            continue;
        }
        if let Some(default) = prop.get("default") {
            content.insert(name.clone(), default.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_content_type_round_trips() {
        let blocks = json!([
            {"type": "text", "text": "hi"},
            {"type": "image", "data": "iVBO", "mimeType": "image/png"},
            {"type": "audio", "data": "UklG", "mimeType": "audio/wav",
             "annotations": {"audience": ["user"], "priority": 0.5}},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a", "mimeType": "text/plain"},
            {"type": "resource", "resource": {"uri": "test://b", "mimeType": "text/plain", "text": "body"}},
            {"type": "resource", "resource": {"uri": "test://c", "blob": "AAEC"}},
            {"type": "hologram", "frames": 3}
        ]);
        let parsed: Vec<ContentBlock> = serde_json::from_value(blocks.clone()).unwrap();
        assert_eq!(
            parsed,
            vec![
                ContentBlock::Text {
                    text: "hi".into(),
                    annotations: None
                },
                ContentBlock::Image {
                    data: "iVBO".into(),
                    mime_type: "image/png".into(),
                    annotations: None
                },
                ContentBlock::Audio {
                    data: "UklG".into(),
                    mime_type: "audio/wav".into(),
                    annotations: Some(Annotations {
                        audience: Some(vec![Role::User]),
                        priority: Some(0.5),
                        last_modified: None
                    })
                },
                ContentBlock::ResourceLink(Resource {
                    uri: "file:///a.txt".into(),
                    name: "a".into(),
                    title: None,
                    description: None,
                    mime_type: Some("text/plain".into()),
                    size: None,
                    annotations: None,
                    meta: None
                }),
                ContentBlock::Resource {
                    resource: ResourceContents {
                        uri: "test://b".into(),
                        mime_type: Some("text/plain".into()),
                        body: ResourceBody::Text("body".into()),
                        meta: None
                    },
                    annotations: None
                },
                ContentBlock::Resource {
                    resource: ResourceContents {
                        uri: "test://c".into(),
                        mime_type: None,
                        body: ResourceBody::Blob("AAEC".into()),
                        meta: None
                    },
                    annotations: None
                },
                ContentBlock::Unknown(json!({"type": "hologram", "frames": 3})),
            ]
        );
        assert_eq!(serde_json::to_value(&parsed).unwrap(), blocks);
    }

    #[test]
    fn malformed_content_is_an_error_not_a_panic() {
        let table = [
            (
                json!({"text": "no type"}),
                "a content block has no \"type\"",
            ),
            (
                json!({"type": "image", "data": "x"}),
                "image content has no \"mimeType\"",
            ),
            (
                json!({"type": "resource", "resource": {"uri": "u"}}),
                "resource u has neither text nor blob",
            ),
            (
                json!({"type": "resource", "resource": {"uri": "u", "text": "a", "blob": "b"}}),
                "resource u has both text and blob",
            ),
        ];
        for (input, want) in table {
            let err = serde_json::from_value::<ContentBlock>(input.clone()).unwrap_err();
            assert_eq!(err.to_string(), want, "input: {input}");
        }
    }

    #[test]
    fn tool_display_name_precedence() {
        let mut tool: Tool = serde_json::from_value(json!({"name": "n"})).unwrap();
        assert_eq!(tool.input_schema, json!({"type": "object"}));
        assert_eq!(tool.display_name(), "n");
        tool.annotations = Some(ToolAnnotations {
            title: Some("Annotated".into()),
            ..Default::default()
        });
        assert_eq!(tool.display_name(), "Annotated");
        tool.title = Some("Title".into());
        assert_eq!(tool.display_name(), "Title");
    }

    #[test]
    fn elicitation_defaults_fill_only_missing_fields() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "Ada"},
            "age": {"type": "integer", "default": 36},
            "email": {"type": "string"}
        }});
        let mut content = Map::new();
        content.insert("name".into(), json!("Grace"));
        apply_elicitation_defaults(&schema, &mut content);
        assert_eq!(Value::Object(content), json!({"name": "Grace", "age": 36}));
    }

    #[test]
    fn subscription_filter_follows_capabilities() {
        let caps: ServerCapabilities = serde_json::from_value(json!({
            "tools": {"listChanged": true}, "prompts": {}, "resources": {"listChanged": true}
        }))
        .unwrap();
        assert_eq!(
            serde_json::to_value(SubscriptionFilter::all_list_changes(&caps)).unwrap(),
            json!({"toolsListChanged": true, "resourcesListChanged": true})
        );
    }
}
