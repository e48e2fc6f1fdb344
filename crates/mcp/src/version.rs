//! Protocol versions, the two eras they fall into, and era detection as the
//! 2026-07-28 backward-compatibility section describes it for Streamable
//! HTTP: try a modern request; a recognised modern error means modern, and
//! any other 4xx means legacy (initialize). The verdict is remembered per
//! server as plain data the app persists.

use serde::{Deserialize, Serialize};

use super::jsonrpc::{METHOD_NOT_FOUND, RpcError, UNSUPPORTED_PROTOCOL_VERSION};
use super::model::DiscoverResult;

/// The current revision: stateless, per-request `_meta`, `server/discover`.
pub const MODERN: &str = "2026-07-28";
/// The previous revision: `initialize`, sessions, the GET stream.
pub const LEGACY: &str = "2025-11-25";

/// Modern versions Hearth speaks, preferred first.
pub const MODERN_VERSIONS: &[&str] = &[MODERN];
/// Legacy versions Hearth speaks over Streamable HTTP, preferred first.
/// (2025-03-26 introduced Streamable HTTP; older servers are HTTP+SSE.)
pub const LEGACY_VERSIONS: &[&str] = &[LEGACY, "2025-06-18", "2025-03-26"];

/// How a server is spoken to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Era {
    /// 2026-07-28 and later: every request stands alone.
    Modern,
    /// 2025-11-25 and earlier: an `initialize` handshake opens a session.
    Legacy,
}

impl Era {
    pub fn as_str(self) -> &'static str {
        match self {
            Era::Modern => "modern",
            Era::Legacy => "legacy",
        }
    }

    /// For the Servers panel.
    pub fn label(self) -> &'static str {
        match self {
            Era::Modern => "MCP 2026-07-28 (stateless)",
            Era::Legacy => "MCP 2025-11-25 (sessions)",
        }
    }
}

/// The era of a protocol version Hearth speaks.
pub fn era_of(version: &str) -> Option<Era> {
    if MODERN_VERSIONS.contains(&version) {
        Some(Era::Modern)
    } else if LEGACY_VERSIONS.contains(&version) {
        Some(Era::Legacy)
    } else {
        None
    }
}

/// What Hearth remembers about how to talk to one server, across reloads.
/// Plain data: the app stores it with the server's entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerMemory {
    pub era: Era,
    /// The version last agreed on.
    pub protocol_version: String,
}

impl ServerMemory {
    pub fn modern() -> Self {
        Self {
            era: Era::Modern,
            protocol_version: MODERN.into(),
        }
    }

    pub fn legacy() -> Self {
        Self {
            era: Era::Legacy,
            protocol_version: LEGACY.into(),
        }
    }
}

/// What a modern probe (`server/discover`) revealed.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// A modern server; use this version.
    Modern { version: String },
    /// Retry the modern probe with this version instead.
    RetryModern { version: String },
    /// Fall back to `initialize`, offering this legacy version.
    Legacy { version: String },
    /// The server speaks only versions Hearth does not.
    Incompatible { supported: Vec<String> },
}

/// How the probe came back.
#[derive(Clone, Debug, PartialEq)]
pub enum ProbeOutcome {
    /// A result object for our request.
    Result(serde_json::Value),
    /// A JSON-RPC error for our request (or with no id).
    Error(RpcError),
    /// No JSON-RPC message could be read from the body.
    Unreadable,
}

/// Judges a `server/discover` answer. `status` is the HTTP status; 401 and
/// 403 are authorization, not era, and 5xx says nothing about the era:
/// both are the caller's to handle before asking here.
pub fn judge_probe(status: u16, outcome: &ProbeOutcome, requested: &str) -> Verdict {
    let legacy = || Verdict::Legacy {
        version: LEGACY.into(),
    };
    match outcome {
        ProbeOutcome::Result(value) => {
            // Some servers answer any unknown method with an empty result; a
            // real discovery names at least one version.
            match serde_json::from_value::<DiscoverResult>(value.clone()) {
                Ok(found) => choose(&found.supported_versions, requested).unwrap_or_else(legacy),
                Err(_) => legacy(),
            }
        }
        ProbeOutcome::Error(error) if error.code == UNSUPPORTED_PROTOCOL_VERSION => {
            let supported = error.supported_versions();
            choose(&supported, requested).unwrap_or(Verdict::Incompatible { supported })
        }
        ProbeOutcome::Error(error) if error.is_modern_only() => Verdict::Modern {
            version: requested.into(),
        },
        // The modern transport answers an unknown method with 404 and a
        // JSON-RPC body, which is how it differs from a legacy 404.
        ProbeOutcome::Error(error) if status == 404 && error.code == METHOD_NOT_FOUND => {
            Verdict::Modern {
                version: requested.into(),
            }
        }
        // A legacy server without the method, or one that wants a session.
        ProbeOutcome::Error(_) => legacy(),
        ProbeOutcome::Unreadable => legacy(),
    }
}

/// Picks the best version from a server's list: ours, modern first.
fn choose(supported: &[String], requested: &str) -> Option<Verdict> {
    let has = |v: &str| supported.iter().any(|s| s == v);
    if has(requested) && era_of(requested) == Some(Era::Modern) {
        return Some(Verdict::Modern {
            version: requested.into(),
        });
    }
    if let Some(v) = MODERN_VERSIONS.iter().find(|v| has(v)) {
        return Some(Verdict::RetryModern {
            version: (*v).into(),
        });
    }
    LEGACY_VERSIONS
        .iter()
        .find(|v| has(v))
        .map(|v| Verdict::Legacy {
            version: (*v).into(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::HEADER_MISMATCH;
    use serde_json::json;

    fn unsupported(supported: &[&str]) -> ProbeOutcome {
        ProbeOutcome::Error(RpcError {
            code: UNSUPPORTED_PROTOCOL_VERSION,
            message: "Unsupported protocol version".into(),
            data: Some(json!({"supported": supported, "requested": MODERN})),
        })
    }

    #[test]
    fn probes_are_judged_per_the_backward_compatibility_rules() {
        let modern = Verdict::Modern {
            version: MODERN.into(),
        };
        let legacy = Verdict::Legacy {
            version: LEGACY.into(),
        };
        let table: Vec<(&str, u16, ProbeOutcome, Verdict)> = vec![
            (
                "a discovery naming our version",
                200,
                ProbeOutcome::Result(
                    json!({"supportedVersions": ["2026-07-28"], "capabilities": {}}),
                ),
                modern.clone(),
            ),
            (
                "an empty result from a server that answers anything",
                200,
                ProbeOutcome::Result(json!({})),
                legacy.clone(),
            ),
            (
                "a discovery naming only a legacy version (dual-era)",
                200,
                ProbeOutcome::Result(
                    json!({"supportedVersions": ["2025-06-18"], "capabilities": {}}),
                ),
                Verdict::Legacy {
                    version: "2025-06-18".into(),
                },
            ),
            (
                "server-everything: 400 'Server not initialized'",
                400,
                ProbeOutcome::Error(RpcError::new(-32000, "Bad Request: Server not initialized")),
                legacy.clone(),
            ),
            (
                "a 404 with no JSON-RPC body",
                404,
                ProbeOutcome::Unreadable,
                legacy.clone(),
            ),
            (
                "405 from a legacy GET-only endpoint",
                405,
                ProbeOutcome::Unreadable,
                legacy.clone(),
            ),
            (
                "404 with a JSON-RPC method-not-found body is the modern transport",
                404,
                ProbeOutcome::Error(RpcError::new(METHOD_NOT_FOUND, "Method not found")),
                modern.clone(),
            ),
            (
                "method not found from a stateless legacy server",
                200,
                ProbeOutcome::Error(RpcError::new(METHOD_NOT_FOUND, "Method not found")),
                legacy.clone(),
            ),
            (
                "unsupported version, ours listed among others",
                400,
                unsupported(&["2026-07-28", "2025-11-25"]),
                modern.clone(),
            ),
            (
                "unsupported version, only legacy ones shared",
                400,
                unsupported(&["2099-01-01", "2025-11-25"]),
                legacy.clone(),
            ),
            (
                "unsupported version, nothing shared",
                400,
                unsupported(&["2099-01-01"]),
                Verdict::Incompatible {
                    supported: vec!["2099-01-01".into()],
                },
            ),
            (
                "header mismatch is a modern error: stay modern",
                400,
                ProbeOutcome::Error(RpcError::new(HEADER_MISMATCH, "Header mismatch")),
                modern.clone(),
            ),
        ];
        for (what, status, outcome, want) in table {
            assert_eq!(judge_probe(status, &outcome, MODERN), want, "{what}");
        }
    }

    #[test]
    fn a_retry_is_proposed_when_the_server_prefers_another_modern_version() {
        assert_eq!(
            judge_probe(400, &unsupported(&["2026-07-28"]), "2099-12-31"),
            Verdict::RetryModern {
                version: MODERN.into()
            }
        );
    }

    #[test]
    fn memory_is_plain_data() {
        let m = ServerMemory::legacy();
        let text = serde_json::to_string(&m).unwrap();
        assert_eq!(text, r#"{"era":"legacy","protocol_version":"2025-11-25"}"#);
        assert_eq!(serde_json::from_str::<ServerMemory>(&text).unwrap(), m);
        assert_eq!(era_of("2025-03-26"), Some(Era::Legacy));
        assert_eq!(era_of("2024-11-05"), None);
    }
}
