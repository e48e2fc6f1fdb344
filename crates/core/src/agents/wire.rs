//! The contract between `hearth serve` and the Hearth tab for agents:
//! the API the Agents panel manages credentials with, and the channel the
//! tab opens to take agents' requests and send back answers.
//!
//! All of it is behind the API's guard and key, like every `/api/…`
//! route; an agent's credential opens none of it.
//!
//! - `GET /api/agents` → [`AgentsListing`]
//! - `POST /api/agents` ([`NewAgent`]) → [`CreatedAgent`]: the credential
//!   is in this answer only; `hearth serve` keeps its hash.
//! - `PUT /api/agents/{id}` ([`AgentUpdate`]) → [`AgentRecord`]
//! - `DELETE /api/agents/{id}` → `{"revoked": true}`: the credential stops
//!   working and the agent's open sessions and streams end at once.
//! - `GET /api/agents/channel` → an SSE stream to the tab: `hello`
//!   ([`TabHello`]) first, then `request` ([`RelayedRequest`]) and
//!   `cancel` ([`RelayCancel`]) events. The newest open channel takes new
//!   requests, so with several tabs exactly one answers each.
//! - `POST /api/agents/reply` ([`RelayReply`]) → `{}`: progress, then one
//!   result or error, for a request the same tab was sent.
//! - `POST /api/agents/notify` ([`ChangeNotice`]) → `{}`: the tab's notes,
//!   memories or skills changed, so agents listening are told.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{AgentAsk, AgentClient, AgentRecord};
use crate::mcp::jsonrpc::RpcError;

pub const AGENTS_PATH: &str = "/api/agents";
pub const CHANNEL_PATH: &str = "/api/agents/channel";
pub const REPLY_PATH: &str = "/api/agents/reply";
pub const NOTIFY_PATH: &str = "/api/agents/notify";
/// The MCP endpoint agents connect to, on `hearth serve`'s address.
pub const ENDPOINT_PATH: &str = "/mcp/server";
/// The environment variable the stdio bridge reads the credential from.
pub const KEY_ENV: &str = "HEARTH_AGENT_KEY";
/// Every credential starts with this, so a person (or a secret scanner)
/// can tell what it is.
pub const CREDENTIAL_PREFIX: &str = "hearth_agent_";

/// The path of one agent's record.
pub fn agent_path(id: &str) -> String {
    format!("{AGENTS_PATH}/{id}")
}

/// What the Agents panel shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentsListing {
    pub agents: Vec<AgentRecord>,
    /// The MCP endpoint's URL, e.g. `http://127.0.0.1:8080/mcp/server`.
    pub endpoint: String,
    /// How to start the stdio bridge: the `hearth` binary's path.
    pub command: String,
    /// How many Hearth tabs have their channel open now.
    pub tabs: usize,
}

/// Connecting an agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewAgent {
    pub name: String,
    #[serde(default)]
    pub client: AgentClient,
}

/// The one answer that carries the credential.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CreatedAgent {
    pub agent: AgentRecord,
    pub credential: String,
}

/// Changes to an agent; what is absent stays.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentUpdate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub always: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask: Option<AgentAsk>,
}

/// The first event on a channel: the name this tab's replies carry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TabHello {
    pub tab: String,
}

/// The MCP methods `hearth serve` hands to the tab; everything else
/// (discovery, sessions, subscriptions) it answers itself.
pub const RELAYED_METHODS: [&str; 5] = [
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
];

/// One request of an agent, for the tab.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RelayedRequest {
    /// This request's id on the channel (not the agent's JSON-RPC id).
    pub relay: String,
    /// The agent as `hearth serve` knows it now (its grant included).
    pub agent: AgentRecord,
    /// One of [`RELAYED_METHODS`].
    pub method: String,
    /// The request's params, protocol metadata removed.
    #[serde(default)]
    pub params: Value,
    /// Whether the agent asked for progress notifications.
    #[serde(default)]
    pub progress: bool,
}

/// `hearth serve` stopped waiting for a request: the agent cancelled it,
/// hung up, or was revoked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RelayCancel {
    pub relay: String,
    pub reason: String,
}

/// What the tab sends back for one request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RelayReply {
    pub relay: String,
    /// The tab's name from [`TabHello`]: only the tab a request was sent
    /// to may answer it.
    pub tab: String,
    #[serde(flatten)]
    pub body: ReplyBody,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplyBody {
    /// Work is under way (sent as `notifications/progress` when asked for).
    Progress {
        progress: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The method's result, as MCP defines it for the method.
    Result(Value),
    /// A JSON-RPC error for the agent.
    Error(RpcError),
}

/// What changed in the tab, so listening agents are told.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeNotice {
    #[serde(default)]
    pub tools: bool,
    #[serde(default)]
    pub resources: bool,
}

/// Application error codes (outside JSON-RPC's reserved range) for what
/// only Hearth says, so agents can tell them apart.
pub mod codes {
    /// No Hearth tab is open to do the work.
    pub const NO_TAB: i64 = -31001;
    /// The tab that was answering closed, or stopped answering.
    pub const TAB_GONE: i64 = -31002;
    /// The agent's credential was revoked while the request waited.
    pub const REVOKED: i64 = -31003;
    /// The person cancelled the call in Hearth.
    pub const CANCELLED: i64 = -31004;
}

/// What an agent is told when no tab is open.
pub const NO_TAB_MESSAGE: &str = "open Hearth to use its skills: Hearth does its work in its browser tab, and no Hearth tab is open (open the link `hearth serve` printed)";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn replies_read_as_their_kind() {
        let cases = [
            (
                json!({"relay": "r1", "tab": "t", "progress": {"progress": 1.0, "message": "Waiting"}}),
                ReplyBody::Progress {
                    progress: 1.0,
                    total: None,
                    message: Some("Waiting".into()),
                },
            ),
            (
                json!({"relay": "r1", "tab": "t", "result": {"tools": []}}),
                ReplyBody::Result(json!({"tools": []})),
            ),
            (
                json!({"relay": "r1", "tab": "t", "error": {"code": -32602, "message": "no"}}),
                ReplyBody::Error(RpcError::new(-32602, "no")),
            ),
        ];
        for (wire, body) in cases {
            let reply: RelayReply = serde_json::from_value(wire.clone()).unwrap();
            assert_eq!(reply.body, body);
            assert_eq!(serde_json::to_value(&reply).unwrap(), wire);
        }
    }

    #[test]
    fn codes_are_outside_json_rpcs_reserved_range() {
        for code in [
            codes::NO_TAB,
            codes::TAB_GONE,
            codes::REVOKED,
            codes::CANCELLED,
        ] {
            assert!(!(-32768..=-32000).contains(&code), "{code}");
        }
    }
}
