//! JSON-RPC 2.0 framing as MCP uses it: ids, requests, notifications,
//! responses and errors, and the classification of whatever a server sends.
//!
//! MCP sends one message per HTTP body or SSE event. JSON-RPC batches were
//! dropped from MCP in 2025-06-18, so Hearth never sends one; a server that
//! still answers with a JSON array has each element read as its own message.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The version string every message carries.
pub const JSONRPC_VERSION: &str = "2.0";

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// 2026-07-28: the HTTP headers disagree with the body.
pub const HEADER_MISMATCH: i64 = -32020;
/// 2026-07-28: the request needs a client capability it did not declare.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// 2026-07-28: the server does not speak the requested protocol version.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// 2025-11-25 and earlier: resource not found (now -32602).
pub const LEGACY_RESOURCE_NOT_FOUND: i64 = -32002;

/// A request id. MCP forbids `null`, so only numbers and strings exist.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    Number(i64),
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => f.write_str(s),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

/// The `error` member of an error response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{message} (code {code})")]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Whether this is one of the errors only a 2026-07-28 (or later)
    /// server sends, which tells era detection the server is modern.
    pub fn is_modern_only(&self) -> bool {
        matches!(
            self.code,
            HEADER_MISMATCH | MISSING_REQUIRED_CLIENT_CAPABILITY | UNSUPPORTED_PROTOCOL_VERSION
        )
    }

    /// For `UnsupportedProtocolVersion`: the versions the server offers.
    pub fn supported_versions(&self) -> Vec<String> {
        self.data
            .as_ref()
            .and_then(|d| d.get("supported"))
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Anything that can arrive from a server, sorted by shape.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// A server-to-client request (2025-11-25 and earlier only): it wants a
    /// response.
    Request {
        id: RequestId,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    Result {
        id: RequestId,
        result: Value,
    },
    /// An error response; `id` is absent when the server could not read ours.
    Error {
        id: Option<RequestId>,
        error: RpcError,
    },
}

/// Why a server's message could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FramingError {
    #[error("the server sent something that is not JSON: {0}")]
    NotJson(String),
    #[error("the server sent a JSON value that is not a JSON-RPC message: {0}")]
    NotAMessage(String),
}

impl Message {
    /// Reads one message from a JSON value.
    pub fn from_value(value: Value) -> Result<Message, FramingError> {
        let Value::Object(mut obj) = value else {
            return Err(FramingError::NotAMessage(truncate(&value.to_string())));
        };
        if obj.get("jsonrpc").and_then(Value::as_str) != Some(JSONRPC_VERSION) {
            return Err(FramingError::NotAMessage(
                "missing \"jsonrpc\": \"2.0\"".into(),
            ));
        }
        let id = match obj.remove("id") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => match n.as_i64() {
                Some(i) => Some(RequestId::Number(i)),
                None => {
                    return Err(FramingError::NotAMessage(format!(
                        "a request id must be an integer or a string, not {n}"
                    )));
                }
            },
            Some(Value::String(s)) => Some(RequestId::String(s)),
            Some(other) => {
                return Err(FramingError::NotAMessage(format!(
                    "a request id must be an integer or a string, not {}",
                    truncate(&other.to_string())
                )));
            }
        };
        if let Some(method) = obj.remove("method") {
            let Value::String(method) = method else {
                return Err(FramingError::NotAMessage(
                    "\"method\" is not a string".into(),
                ));
            };
            let params = obj.remove("params").unwrap_or(Value::Null);
            return Ok(match id {
                Some(id) => Message::Request { id, method, params },
                None => Message::Notification { method, params },
            });
        }
        if let Some(error) = obj.remove("error") {
            let error: RpcError = serde_json::from_value(error).map_err(|e| {
                FramingError::NotAMessage(format!("the \"error\" member is malformed: {e}"))
            })?;
            return Ok(Message::Error { id, error });
        }
        if let Some(result) = obj.remove("result") {
            let Some(id) = id else {
                return Err(FramingError::NotAMessage("a result without an id".into()));
            };
            return Ok(Message::Result { id, result });
        }
        Err(FramingError::NotAMessage(
            "neither a request, a notification nor a response".into(),
        ))
    }

    /// Reads one body or SSE event: a message, or (leniently) an array of
    /// messages from a server that still batches.
    pub fn parse_all(text: &str) -> Result<Vec<Message>, FramingError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| FramingError::NotJson(e.to_string()))?;
        match value {
            Value::Array(items) => items.into_iter().map(Message::from_value).collect(),
            other => Ok(vec![Message::from_value(other)?]),
        }
    }

    /// The id this message answers, for responses.
    pub fn response_id(&self) -> Option<&RequestId> {
        match self {
            Message::Result { id, .. } => Some(id),
            Message::Error { id, .. } => id.as_ref(),
            Message::Request { .. } | Message::Notification { .. } => None,
        }
    }
}

/// A request as sent.
pub fn request(id: &RequestId, method: &str, params: Option<Value>) -> Value {
    let mut obj = Map::new();
    obj.insert("jsonrpc".into(), JSONRPC_VERSION.into());
    obj.insert("id".into(), json!(id));
    obj.insert("method".into(), method.into());
    if let Some(params) = params {
        obj.insert("params".into(), params);
    }
    Value::Object(obj)
}

/// A notification as sent.
pub fn notification(method: &str, params: Option<Value>) -> Value {
    let mut obj = Map::new();
    obj.insert("jsonrpc".into(), JSONRPC_VERSION.into());
    obj.insert("method".into(), method.into());
    if let Some(params) = params {
        obj.insert("params".into(), params);
    }
    Value::Object(obj)
}

/// A result response, for answering a server's request.
pub fn result_response(id: &RequestId, result: Value) -> Value {
    json!({"jsonrpc": JSONRPC_VERSION, "id": id, "result": result})
}

/// An error response, for answering a server's request.
pub fn error_response(id: &RequestId, error: &RpcError) -> Value {
    json!({"jsonrpc": JSONRPC_VERSION, "id": id, "error": error})
}

pub(crate) fn truncate(s: &str) -> String {
    const MAX: usize = 200;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Message>, FramingError> {
        Message::parse_all(text)
    }

    #[test]
    fn messages_are_classified_by_shape() {
        let table: Vec<(&str, Result<Vec<Message>, FramingError>)> = vec![
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#,
                Ok(vec![Message::Result {
                    id: RequestId::Number(1),
                    result: json!({"tools": []}),
                }]),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"nope"}}"#,
                Ok(vec![Message::Error {
                    id: Some(RequestId::String("a".into())),
                    error: RpcError::new(METHOD_NOT_FOUND, "nope"),
                }]),
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad"}}"#,
                Ok(vec![Message::Error {
                    id: None,
                    error: RpcError::new(-32000, "Bad"),
                }]),
            ),
            (
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
                Ok(vec![Message::Notification {
                    method: "notifications/progress".into(),
                    params: json!({"progress": 1}),
                }]),
            ),
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#,
                Ok(vec![Message::Request {
                    id: RequestId::Number(7),
                    method: "ping".into(),
                    params: Value::Null,
                }]),
            ),
            (
                r#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":2,"result":{}}]"#,
                Ok(vec![
                    Message::Notification {
                        method: "a".into(),
                        params: Value::Null,
                    },
                    Message::Result {
                        id: RequestId::Number(2),
                        result: json!({}),
                    },
                ]),
            ),
            (
                "not json",
                Err(FramingError::NotJson(
                    "expected ident at line 1 column 2".into(),
                )),
            ),
            (
                r#"{"id":1,"result":{}}"#,
                Err(FramingError::NotAMessage(
                    "missing \"jsonrpc\": \"2.0\"".into(),
                )),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
                Err(FramingError::NotAMessage(
                    "a request id must be an integer or a string, not 1.5".into(),
                )),
            ),
            (
                r#"{"jsonrpc":"2.0","result":{}}"#,
                Err(FramingError::NotAMessage("a result without an id".into())),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}"#,
                Err(FramingError::NotAMessage(
                    "the \"error\" member is malformed: invalid type: string \"x\", expected i64"
                        .into(),
                )),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1}"#,
                Err(FramingError::NotAMessage(
                    "neither a request, a notification nor a response".into(),
                )),
            ),
            ("42", Err(FramingError::NotAMessage("42".into()))),
        ];
        for (input, want) in table {
            assert_eq!(parse(input), want, "input: {input}");
        }
    }

    #[test]
    fn outgoing_messages_have_the_standard_shape() {
        assert_eq!(
            request(
                &RequestId::Number(3),
                "tools/list",
                Some(json!({"cursor": "c"}))
            ),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": "c"}})
        );
        assert_eq!(
            notification("notifications/initialized", None),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        );
        assert_eq!(
            error_response(&RequestId::String("x".into()), &RpcError::new(-1, "m")),
            json!({"jsonrpc": "2.0", "id": "x", "error": {"code": -1, "message": "m"}})
        );
    }

    #[test]
    fn modern_errors_are_recognised() {
        let unsupported = RpcError {
            code: UNSUPPORTED_PROTOCOL_VERSION,
            message: "Unsupported protocol version".into(),
            data: Some(json!({"supported": ["2026-07-28", "2025-11-25"], "requested": "x"})),
        };
        assert!(unsupported.is_modern_only());
        assert_eq!(
            unsupported.supported_versions(),
            vec!["2026-07-28".to_string(), "2025-11-25".to_string()]
        );
        assert!(!RpcError::new(-32000, "Server not initialized").is_modern_only());
        assert!(!RpcError::new(METHOD_NOT_FOUND, "x").is_modern_only());
    }
}
