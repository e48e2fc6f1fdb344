//! What `hearth serve` offers the app for MCP, as wire types both sides
//! share: stdio servers from the local config file, bridged to Streamable
//! HTTP at [`stdio_path`], listed at [`STDIO_LIST_PATH`]; and the CORS
//! relay, registered per server at [`relay_registration_path`] and spoken
//! to at [`relay_path`]. Every one of these routes sits behind the network
//! tier's guard: same origin, and the per-install token.

use serde::{Deserialize, Serialize};

use super::server_id::ServerId;

/// `GET` → [`StdioListing`].
pub const STDIO_LIST_PATH: &str = "/api/mcp/stdio";

/// Set on every response the relay passes through from the MCP server, so
/// the app can tell them from the proxy's own errors.
pub const RELAY_UPSTREAM_HEADER: &str = "x-hearth-relay";
/// The value of [`RELAY_UPSTREAM_HEADER`].
pub const RELAY_UPSTREAM: &str = "upstream";

/// Sent by the app on every request through the relay: the URL the
/// sending tab registered for the server. The relay forwards only when it
/// is still the registered one, so when another tab points the server
/// somewhere else, this tab's requests (and the token they carry) do not
/// follow to the new address.
pub const RELAY_TARGET_HEADER: &str = "x-hearth-relay-target";

/// The Streamable HTTP endpoint of the stdio server `name`.
pub fn stdio_path(name: &ServerId) -> String {
    format!("/mcp/stdio/{name}")
}

/// Where the app registers (`PUT` a [`RelayRegistration`]) or forgets
/// (`DELETE`) the relay for server `id`.
pub fn relay_registration_path(id: &ServerId) -> String {
    format!("/api/mcp/relay/{id}")
}

/// The Streamable HTTP endpoint that forwards to server `id`'s registered
/// URL, and only there.
pub fn relay_path(id: &ServerId) -> String {
    format!("/mcp/relay/{id}")
}

/// The stdio servers `hearth serve` knows, for the Servers panel.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StdioListing {
    /// The file they come from, so the panel can say where to add one.
    pub config_path: String,
    /// Why the file could not be read at all, if it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    pub servers: Vec<StdioServerInfo>,
    /// Entries of the file that were left out, with why.
    #[serde(default)]
    pub skipped: Vec<StdioSkipped>,
}

/// One configured stdio server and how its process is doing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StdioServerInfo {
    pub name: ServerId,
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// The names of the variables the file sets; never their values.
    #[serde(default)]
    pub env_keys: Vec<String>,
    pub running: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    pub crashes: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_exit: Option<String>,
    /// The last lines the process wrote to stderr.
    #[serde(default)]
    pub stderr_tail: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StdioSkipped {
    pub server: String,
    pub message: String,
}

/// The body of `PUT /api/mcp/relay/{id}`: the one URL the relay for that
/// server may forward to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelayRegistration {
    pub url: String,
    /// The person says the server runs on this machine (`127.0.0.1`,
    /// `[::1]` or `localhost`): only then may the relay reach a loopback
    /// address. Any other non-public address stays refused.
    #[serde(default)]
    pub local: bool,
}

/// The answer of the relay registration routes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelayDescription {
    pub id: ServerId,
    pub url: String,
    pub local: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_name_the_server() {
        let id = ServerId::new("memory").unwrap();
        assert_eq!(
            (
                stdio_path(&id),
                relay_path(&id),
                relay_registration_path(&id)
            ),
            (
                "/mcp/stdio/memory".to_string(),
                "/mcp/relay/memory".to_string(),
                "/api/mcp/relay/memory".to_string()
            )
        );
    }

    #[test]
    fn listings_read_with_defaults_and_registrations_refuse_extras() {
        let listing: StdioListing = serde_json::from_value(json!({
            "config_path": "/home/me/.config/hearth/mcp-servers.json",
            "servers": [{"name": "memory", "command": "npx", "running": false, "crashes": 0}]
        }))
        .unwrap();
        assert_eq!(
            listing,
            StdioListing {
                config_path: "/home/me/.config/hearth/mcp-servers.json".into(),
                problem: None,
                servers: vec![StdioServerInfo {
                    name: ServerId::new("memory").unwrap(),
                    command: "npx".into(),
                    args: vec![],
                    env_keys: vec![],
                    running: false,
                    pid: None,
                    crashes: 0,
                    last_exit: None,
                    stderr_tail: vec![],
                }],
                skipped: vec![],
            }
        );
        assert!(
            serde_json::from_value::<RelayRegistration>(
                json!({"url": "https://x.example/mcp", "target": "http://evil"})
            )
            .is_err()
        );
        assert_eq!(
            serde_json::from_value::<RelayRegistration>(json!({"url": "https://x.example/mcp"}))
                .unwrap(),
            RelayRegistration {
                url: "https://x.example/mcp".into(),
                local: false
            }
        );
    }
}
