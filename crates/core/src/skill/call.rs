//! Calls and results: what goes into a skill and what comes out.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::skill::SkillId;
use crate::skill::permission::DecisionRecord;

/// Who asked for a call. It never changes what the permission layer
/// decides for the person, the model or an app; a call from an agent is
/// decided by that agent's grant (see [`crate::agents`]), which is at
/// least as strict. It is recorded so the approval dialog and the log can
/// say where a call came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CallOrigin {
    /// The person, from the command bar, a form or an undo button.
    User,
    /// The model, through tool calling.
    Model,
    /// An MCP App (a server's view in the chat), through `tools/call`:
    /// code from the server, not the person.
    App,
    /// Another agent the person connected (Claude Code, Codex, goose…),
    /// calling over MCP through `hearth serve`. Named as it was when the
    /// call was made, so the log keeps the name after a rename or revoke.
    Agent(AgentCaller),
}

/// The agent a call came from: its credential's id and its name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AgentCaller {
    pub id: String,
    pub name: String,
}

impl CallOrigin {
    /// Who made the call, in the words of the Activity log.
    pub fn who(&self) -> &str {
        match self {
            CallOrigin::User => "you",
            CallOrigin::Model => "the assistant",
            CallOrigin::App => "an MCP App",
            CallOrigin::Agent(agent) => &agent.name,
        }
    }

    /// The agent behind the call, if it came from one.
    pub fn agent(&self) -> Option<&AgentCaller> {
        match self {
            CallOrigin::Agent(agent) => Some(agent),
            CallOrigin::User | CallOrigin::Model | CallOrigin::App => None,
        }
    }

    /// A short stable word for views and tests (`data-origin`).
    pub fn kind(&self) -> &'static str {
        match self {
            CallOrigin::User => "user",
            CallOrigin::Model => "model",
            CallOrigin::App => "app",
            CallOrigin::Agent(_) => "agent",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub skill_id: SkillId,
    pub arguments: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
    pub origin: CallOrigin,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolStatus {
    Completed,
    Failed,
    Denied,
    InputRequired,
}

impl ToolStatus {
    pub const ALL: [ToolStatus; 4] = [
        ToolStatus::Completed,
        ToolStatus::Failed,
        ToolStatus::Denied,
        ToolStatus::InputRequired,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ToolStatus::Completed => "completed",
            ToolStatus::Failed => "failed",
            ToolStatus::Denied => "denied",
            ToolStatus::InputRequired => "input-required",
        }
    }

    pub fn parse(s: &str) -> Option<ToolStatus> {
        ToolStatus::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// One piece of a result. Skills mostly return text and JSON; MCP tools and
/// code runs can return the richer kinds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    Text {
        text: String,
    },
    Json {
        value: Value,
    },
    Image {
        mime_type: String,
        /// Base64.
        data: String,
    },
    Audio {
        mime_type: String,
        /// Base64.
        data: String,
    },
    ResourceLink {
        uri: String,
        #[serde(default)]
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
    Resource {
        uri: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// Base64, for binary resources.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        blob: Option<String>,
    },
    /// A file the skill produced, offered for download.
    Artifact {
        name: String,
        mime_type: String,
        /// Base64.
        data: String,
    },
}

/// An inverse call that undoes what a skill changed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UndoAction {
    /// Shown on the button, e.g. "Undo: delete note".
    pub label: String,
    pub skill_id: SkillId,
    pub arguments: Value,
    /// Proof that this device made the call the undo came from (see
    /// [`crate::skill::seal`]): set when the result is made, checked before the
    /// undo is offered or run. An undo read from storage without a valid
    /// seal (a restored or synced record) is never offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seal: Option<String>,
}

impl UndoAction {
    /// An undo not sealed yet.
    pub fn new(label: impl Into<String>, skill_id: SkillId, arguments: Value) -> Self {
        Self {
            label: label.into(),
            skill_id,
            arguments,
            seal: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the call this answers.
    pub id: String,
    pub skill_id: SkillId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
    pub status: ToolStatus,
    #[serde(default)]
    pub content: Vec<Content>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A machine-readable code for the failure, when the skill had one
    /// (e.g. the proxy's `no_search_backend`), so views act on it without
    /// reading `error`'s words. Records written before it existed have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Unix milliseconds.
    pub started_at_ms: f64,
    /// How long the skill itself ran. Records written before `wait_ms`
    /// existed counted the approval wait in here too.
    pub duration_ms: f64,
    /// How long the call waited for the person to answer its approval;
    /// `None` when nobody was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<DecisionRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undo: Option<UndoAction>,
}

impl ToolResult {
    /// A result with no content yet, for `call`.
    pub fn for_call(call: &ToolCall, status: ToolStatus) -> Self {
        Self {
            id: call.id.clone(),
            skill_id: call.skill_id.clone(),
            conversation_id: call.conversation_id.clone(),
            status,
            content: Vec::new(),
            error: None,
            error_code: None,
            started_at_ms: 0.0,
            duration_ms: 0.0,
            wait_ms: None,
            decision: None,
            undo: None,
        }
    }

    pub fn failed(call: &ToolCall, message: impl Into<String>) -> Self {
        let mut r = Self::for_call(call, ToolStatus::Failed);
        r.error = Some(message.into());
        r
    }

    /// The result of a skill that returned `error`: failed, or waiting
    /// for input, with the error's words and code.
    pub fn from_error(call: &ToolCall, error: SkillError) -> Self {
        let mut r = Self::failed(call, error.message);
        r.error_code = error.code;
        if error.input_required {
            r.status = ToolStatus::InputRequired;
        }
        r
    }

    pub fn denied(call: &ToolCall, message: impl Into<String>) -> Self {
        let mut r = Self::for_call(call, ToolStatus::Denied);
        r.error = Some(message.into());
        r
    }

    /// The first text part, if any.
    pub fn text(&self) -> Option<&str> {
        self.content.iter().find_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            _ => None,
        })
    }

    /// The first JSON part, if any.
    pub fn json(&self) -> Option<&Value> {
        self.content.iter().find_map(|c| match c {
            Content::Json { value } => Some(value),
            _ => None,
        })
    }

    /// What the model is told: the text, else the JSON, else the error.
    pub fn to_model_text(&self) -> String {
        match self.status {
            ToolStatus::Completed => {
                let mut parts: Vec<String> = Vec::new();
                for c in &self.content {
                    match c {
                        Content::Text { text } => parts.push(text.clone()),
                        Content::Json { value } => parts.push(value.to_string()),
                        Content::Image { mime_type, .. } => {
                            parts.push(format!("[image {mime_type}]"))
                        }
                        Content::Audio { mime_type, .. } => {
                            parts.push(format!("[audio {mime_type}]"))
                        }
                        Content::ResourceLink { uri, name, .. } => {
                            parts.push(format!("[resource {name} {uri}]"))
                        }
                        Content::Resource { uri, text, .. } => match text {
                            Some(t) => parts.push(format!("[resource {uri}]\n{t}")),
                            None => parts.push(format!("[binary resource {uri}]")),
                        },
                        Content::Artifact { name, .. } => parts.push(format!("[file {name}]")),
                    }
                }
                parts.join("\n")
            }
            ToolStatus::Failed | ToolStatus::Denied | ToolStatus::InputRequired => format!(
                "{}: {}",
                self.status.as_str(),
                self.error.as_deref().unwrap_or("no details")
            ),
        }
    }
}

/// What a skill's implementation hands back on success.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkillOutput {
    pub content: Vec<Content>,
    /// The JSON checked against the output schema, when the skill has one.
    pub structured: Option<Value>,
    pub undo: Option<UndoAction>,
}

impl SkillOutput {
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![Content::Text { text: text.into() }],
            ..Self::default()
        }
    }

    /// Text for people and the model, plus the same result as JSON.
    pub fn text_and_json(text: impl Into<String>, value: Value) -> Self {
        Self {
            content: vec![
                Content::Text { text: text.into() },
                Content::Json {
                    value: value.clone(),
                },
            ],
            structured: Some(value),
            undo: None,
        }
    }

    pub fn with_undo(mut self, undo: UndoAction) -> Self {
        self.undo = Some(undo);
        self
    }
}

/// A skill's own failure: the message goes to the user and the model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SkillError {
    pub message: String,
    /// Set when the skill needs more input from the user to go on.
    pub input_required: bool,
    /// A machine-readable code, carried into [`ToolResult::error_code`].
    pub code: Option<String>,
}

impl SkillError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            input_required: false,
            code: None,
        }
    }

    pub fn input_required(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            input_required: true,
            code: None,
        }
    }
}

impl From<String> for SkillError {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

impl From<&str> for SkillError {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_stored_before_error_codes_still_loads() {
        let old = serde_json::json!({
            "id": "c1", "skill_id": "web_search", "status": "failed",
            "error": "No web search backend is set up.",
            "started_at_ms": 1.0, "duration_ms": 2.0
        });
        let r: ToolResult = serde_json::from_value(old).unwrap();
        assert_eq!(r.error.as_deref(), Some("No web search backend is set up."));
        assert_eq!(r.error_code, None);
        // And a result without a code is written as before.
        assert!(
            serde_json::to_value(&r)
                .unwrap()
                .get("error_code")
                .is_none()
        );
    }

    #[test]
    fn a_skill_errors_code_reaches_its_result_and_is_kept() {
        let call = ToolCall {
            id: "c1".into(),
            skill_id: SkillId::new("web_search").unwrap(),
            arguments: serde_json::json!({}),
            conversation_id: None,
            origin: CallOrigin::Model,
        };
        let mut error = SkillError::new("no backend");
        error.code = Some("no_search_backend".into());
        let r = ToolResult::from_error(&call, error);
        assert_eq!(r.status, ToolStatus::Failed);
        assert_eq!(r.error_code.as_deref(), Some("no_search_backend"));
        let back: ToolResult = serde_json::from_value(serde_json::to_value(&r).unwrap()).unwrap();
        assert_eq!(back, r);

        let waiting = ToolResult::from_error(&call, SkillError::input_required("which city?"));
        assert_eq!(waiting.status, ToolStatus::InputRequired);
    }
}
