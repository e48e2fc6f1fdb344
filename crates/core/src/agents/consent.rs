//! The contract for an agent that connects through OAuth (MCP's
//! authorization spec, with `hearth serve` as the authorization server):
//! the person's consent is asked in the Hearth tab, never on a page of
//! its own.
//!
//! `hearth serve` sends a `consent` event ([`ConsentRequest`]) on the
//! tab's agents channel (`wire::CHANNEL_PATH`); the tab shows a dialog
//! naming the client and answers at `POST` [`CONSENT_PATH`]
//! ([`ConsentAnswer`]) → [`ConsentOutcome`], behind the API's guard and
//! key like every `/api/…` route, so neither a web page nor the agent
//! itself can approve. Allow connects an agent exactly as Settings →
//! Agents does; the access token the client receives is that agent's
//! credential, so revoking the agent ends its OAuth sessions too.

use serde::{Deserialize, Serialize};

use super::{AgentClient, DEFAULT_SHARED};

/// Where the tab answers a consent request.
pub const CONSENT_PATH: &str = "/api/agents/consent";

/// One client asking to connect, for the tab's dialog.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsentRequest {
    /// This request's id on the channel.
    pub consent: String,
    /// The name the client registered with, cleaned ("Claude Code").
    pub client_name: String,
    /// The kind of agent the name says it is.
    #[serde(default)]
    pub client: AgentClient,
    /// The host the person's browser is sent back to with the answer
    /// (`127.0.0.1:33418`, `claude.ai`).
    pub redirect_host: String,
    /// The skills the agent will see unless the person changes them: the
    /// same shared set a new bearer agent gets.
    pub shared: Vec<String>,
}

/// The person's answer from the tab.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsentAnswer {
    pub consent: String,
    /// The tab's name from `hello`: only the tab that was asked answers.
    pub tab: String,
    pub allow: bool,
    /// The skills to share, when the person changed them in the dialog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared: Option<Vec<String>>,
}

/// What an answer did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsentOutcome {
    /// The agent Allow connected; `None` after Deny.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<super::AgentRecord>,
}

/// The kind of agent a client's registered name names, so the Agents
/// panel shows the right snippet; `Other` when it names none.
pub fn client_kind(client_name: &str) -> AgentClient {
    let name = client_name.trim().to_ascii_lowercase();
    AgentClient::ALL
        .into_iter()
        .filter(|c| *c != AgentClient::Other)
        .find(|c| name.starts_with(&c.label().to_ascii_lowercase()))
        .unwrap_or(AgentClient::Other)
}

/// The shared set a consent dialog starts from.
pub fn default_shared() -> Vec<String> {
    DEFAULT_SHARED.iter().map(|s| s.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clients_name_picks_its_kind() {
        let cases = [
            ("Claude Code", AgentClient::ClaudeCode),
            ("claude code (mcp-remote)", AgentClient::ClaudeCode),
            ("Codex", AgentClient::Codex),
            ("goose", AgentClient::Goose),
            ("Claude Desktop", AgentClient::ClaudeDesktop),
            ("Claude", AgentClient::Other),
            ("My script", AgentClient::Other),
            ("", AgentClient::Other),
        ];
        for (name, kind) in cases {
            assert_eq!(client_kind(name), kind, "{name}");
        }
    }

    #[test]
    fn answers_read_with_and_without_a_changed_share() {
        let plain: ConsentAnswer =
            serde_json::from_str(r#"{"consent":"c1","tab":"tab-1","allow":false}"#).unwrap();
        assert_eq!(
            plain,
            ConsentAnswer {
                consent: "c1".into(),
                tab: "tab-1".into(),
                allow: false,
                shared: None
            }
        );
        let changed: ConsentAnswer = serde_json::from_str(
            r#"{"consent":"c1","tab":"tab-1","allow":true,"shared":["notes"]}"#,
        )
        .unwrap();
        assert_eq!(changed.shared, Some(vec!["notes".to_string()]));
    }
}
