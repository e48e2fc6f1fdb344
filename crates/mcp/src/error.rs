//! What can go wrong talking to an MCP server, in words a person can act
//! on. The Servers panel shows these; a failed tool call carries one.

use super::jsonrpc::RpcError;
use super::oauth::{AuthError, BearerChallenge};
use super::transport::TransportError;
use super::url::UrlError;

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum McpError {
    #[error("the server URL is not usable: {0}")]
    Endpoint(#[from] UrlError),
    #[error("{0}")]
    Transport(#[from] TransportError),
    /// 401: the server wants an access token (or a fresh one).
    #[error("the server requires authorization")]
    Unauthorized { challenge: Option<BearerChallenge> },
    /// 403: the token lacks a scope, or the server refuses this client.
    #[error("the server refused access{}", scope_hint(.challenge))]
    Forbidden { challenge: Option<BearerChallenge> },
    /// Authorization was attempted and failed.
    #[error("authorization failed: {0}")]
    Auth(#[from] AuthError),
    /// An HTTP status the protocol does not expect here.
    #[error("the server answered HTTP {status}{}", body_hint(.body))]
    Http { status: u16, body: String },
    /// The server answered the request with a JSON-RPC error.
    #[error("the server reported an error: {0}")]
    Rpc(RpcError),
    /// The server's answer could not be read.
    #[error("the server sent a malformed answer: {0}")]
    Malformed(String),
    /// The server broke a rule of the protocol.
    #[error("the server broke the MCP protocol: {0}")]
    Protocol(String),
    /// No protocol version in common.
    #[error("the server speaks only MCP {}, which Hearth does not support", .supported.join(", "))]
    Incompatible { supported: Vec<String> },
    /// The server asked for more input than could be given.
    #[error("the server needs input Hearth could not provide: {0}")]
    InputRequired(String),
    #[error("the request was cancelled")]
    Cancelled,
    /// The server offers more than Hearth keeps of it.
    #[error("the server offers more than Hearth keeps: {0}")]
    TooLarge(String),
}

fn scope_hint(challenge: &Option<BearerChallenge>) -> String {
    match challenge.as_ref().and_then(|c| c.scope.as_deref()) {
        Some(scope) => format!(" (it needs the scope \"{scope}\")"),
        None => String::new(),
    }
}

fn body_hint(body: &str) -> String {
    let trimmed = body.trim();
    if trimmed.is_empty() {
        String::new()
    } else {
        format!(": {}", super::jsonrpc::truncate(trimmed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_as_plain_words() {
        let table: Vec<(McpError, &str)> = vec![
            (
                McpError::Http {
                    status: 502,
                    body: " Bad gateway\n".into(),
                },
                "the server answered HTTP 502: Bad gateway",
            ),
            (
                McpError::Http {
                    status: 500,
                    body: String::new(),
                },
                "the server answered HTTP 500",
            ),
            (
                McpError::Forbidden {
                    challenge: Some(BearerChallenge {
                        scope: Some("files:write".into()),
                        ..BearerChallenge::default()
                    }),
                },
                "the server refused access (it needs the scope \"files:write\")",
            ),
            (
                McpError::Incompatible {
                    supported: vec!["2099-01-01".into()],
                },
                "the server speaks only MCP 2099-01-01, which Hearth does not support",
            ),
            (
                McpError::Transport(TransportError::Unreachable("connection refused".into())),
                "could not reach the server: connection refused",
            ),
        ];
        for (error, want) in table {
            assert_eq!(error.to_string(), want);
        }
    }
}
