//! The server side of MCP over Streamable HTTP, for both eras the client
//! speaks, as pure functions: what a POST body is, which era it opens
//! (the versioning page's rules for a dual-era server: modern `_meta`
//! means stateless 2026-07-28, `initialize` means a legacy session), the
//! header checks a modern request must pass, and the shapes of the
//! answers (discovery, the legacy handshake, results stamped with
//! `resultType` and `serverInfo`, SSE events).
//!
//! Nothing here moves bytes; `hearth serve` does, and keeps the sessions.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use super::headers::{METHOD, NAME, PROTOCOL_VERSION, SESSION_ID, name_source};
use super::jsonrpc::{
    HEADER_MISMATCH, INVALID_PARAMS, INVALID_REQUEST, JSONRPC_VERSION, METHOD_NOT_FOUND, Message,
    PARSE_ERROR, RequestId, RpcError, UNSUPPORTED_PROTOCOL_VERSION,
};
use super::model::{Implementation, ServerCapabilities};
use super::version::{LEGACY, LEGACY_VERSIONS, MODERN, MODERN_VERSIONS, era_of};

pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
pub const META_SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";

/// Every version this server answers, modern first.
pub fn supported_versions() -> Vec<String> {
    MODERN_VERSIONS
        .iter()
        .chain(LEGACY_VERSIONS)
        .map(|v| v.to_string())
        .collect()
}

/// A request or notification a client POSTed.
#[derive(Clone, Debug, PartialEq)]
pub enum Incoming {
    Request {
        id: RequestId,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
}

impl Incoming {
    pub fn method(&self) -> &str {
        match self {
            Incoming::Request { method, .. } | Incoming::Notification { method, .. } => method,
        }
    }

    pub fn params(&self) -> &Value {
        match self {
            Incoming::Request { params, .. } | Incoming::Notification { params, .. } => params,
        }
    }

    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Incoming::Request { id, .. } => Some(id),
            Incoming::Notification { .. } => None,
        }
    }
}

/// A request turned away before it reached a method: the HTTP status and
/// the JSON-RPC error (with the request's id when it could be read).
#[derive(Clone, Debug, PartialEq)]
pub struct Rejection {
    pub status: u16,
    pub id: Option<RequestId>,
    /// Boxed: rejections are rare, and the `Result`s that carry one stay
    /// small on the success path.
    pub error: Box<RpcError>,
}

impl Rejection {
    pub fn new(status: u16, id: Option<RequestId>, code: i64, message: impl Into<String>) -> Self {
        Self {
            status,
            id,
            error: Box::new(RpcError::new(code, message)),
        }
    }

    /// The JSON-RPC error response to send.
    pub fn body(&self) -> Value {
        error_message(self.id.as_ref(), &self.error)
    }
}

/// An error response; `id` absent when the request's could not be read.
pub fn error_message(id: Option<&RequestId>, error: &RpcError) -> Value {
    json!({"jsonrpc": JSONRPC_VERSION, "id": id, "error": error})
}

/// A result response.
pub fn result_message(id: &RequestId, result: Value) -> Value {
    json!({"jsonrpc": JSONRPC_VERSION, "id": id, "result": result})
}

/// A notification.
pub fn notification_message(method: &str, params: Value) -> Value {
    json!({"jsonrpc": JSONRPC_VERSION, "method": method, "params": params})
}

/// Reads one POST body: exactly one JSON-RPC request or notification.
/// Batches were dropped from MCP, and clients never send responses to a
/// server that asks nothing of them.
pub fn parse_body(body: &[u8]) -> Result<Incoming, Rejection> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| Rejection::new(400, None, PARSE_ERROR, format!("Parse error: {e}")))?;
    if value.is_array() {
        return Err(Rejection::new(
            400,
            None,
            INVALID_REQUEST,
            "Invalid Request: JSON-RPC batches are not part of MCP; send one message per request",
        ));
    }
    let id_of = |v: &Value| match v.get("id") {
        Some(Value::Number(n)) => n.as_i64().map(RequestId::Number),
        Some(Value::String(s)) => Some(RequestId::String(s.clone())),
        _ => None,
    };
    let id = id_of(&value);
    match Message::from_value(value) {
        Ok(Message::Request { id, method, params }) => Ok(Incoming::Request { id, method, params }),
        Ok(Message::Notification { method, params }) => {
            Ok(Incoming::Notification { method, params })
        }
        Ok(Message::Result { .. } | Message::Error { .. }) => Err(Rejection::new(
            400,
            id,
            INVALID_REQUEST,
            "Invalid Request: this server sends no requests, so it takes no responses",
        )),
        Err(e) => Err(Rejection::new(
            400,
            id,
            INVALID_REQUEST,
            format!("Invalid Request: {e}"),
        )),
    }
}

/// How a request is to be served.
#[derive(Clone, Debug, PartialEq)]
pub enum Route {
    /// 2026-07-28: stateless, its metadata checked.
    Modern { version: String },
    /// The legacy handshake, offering this version.
    Initialize { offered: String },
    /// A request in a legacy session.
    Legacy { session: String },
}

/// Decodes a header value in the Base64 sentinel form (`=?base64?…?=`),
/// or takes it as it is.
pub fn decode_value(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        Some(encoded) => STANDARD
            .decode(encoded)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok()),
        None => Some(value.to_string()),
    }
}

fn mismatch(id: Option<&RequestId>, message: String) -> Rejection {
    Rejection::new(
        400,
        id.cloned(),
        HEADER_MISMATCH,
        format!("Header mismatch: {message}"),
    )
}

/// The `UnsupportedProtocolVersionError` for `requested`.
pub fn unsupported_version(requested: &str) -> RpcError {
    RpcError {
        code: UNSUPPORTED_PROTOCOL_VERSION,
        message: "Unsupported protocol version".into(),
        data: Some(json!({"supported": supported_versions(), "requested": requested})),
    }
}

/// Which era `incoming` opens, checking what the era requires:
/// - `initialize` opens a legacy session, unless its `_meta` names a
///   protocol version: the modern era removed `initialize`, so that is a
///   method not found (404);
/// - a request whose `_meta` names a protocol version is modern:
///   `MCP-Protocol-Version` must agree with it (checked first, so a
///   header that disagrees is a mismatch whatever the body says), the
///   version must be one this server speaks, `Mcp-Method` and `Mcp-Name`
///   must agree with the body (names decoded from the Base64 form first),
///   and the client's capabilities must be there;
/// - anything else must belong to a legacy session (`Mcp-Session-Id`).
///
/// `header` reads a request header by name (any case).
pub fn route(
    incoming: &Incoming,
    header: &dyn Fn(&str) -> Option<String>,
) -> Result<Route, Rejection> {
    let id = incoming.id();
    let method = incoming.method();
    let params = incoming.params();
    let meta = params.get("_meta").and_then(Value::as_object);
    if method == "initialize" {
        if meta.is_some_and(|m| m.contains_key(META_VERSION)) {
            return Err(Rejection::new(
                404,
                id.cloned(),
                METHOD_NOT_FOUND,
                "Method not found: initialize (this protocol version has no initialize)",
            ));
        }
        let offered = params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or(LEGACY)
            .to_string();
        return Ok(Route::Initialize { offered });
    }
    if let Some(version) = meta.and_then(|m| m.get(META_VERSION)) {
        let Some(version) = version.as_str() else {
            return Err(Rejection::new(
                400,
                id.cloned(),
                INVALID_PARAMS,
                format!("Invalid params: _meta.{META_VERSION} must be a string"),
            ));
        };
        match header(PROTOCOL_VERSION) {
            Some(h) if h == version => {}
            Some(h) => {
                return Err(mismatch(
                    id,
                    format!("{PROTOCOL_VERSION} is {h:?} but the body's _meta says {version:?}"),
                ));
            }
            None => {
                return Err(mismatch(
                    id,
                    format!("the {PROTOCOL_VERSION} header is missing"),
                ));
            }
        }
        if era_of(version) != Some(super::version::Era::Modern) {
            return Err(Rejection {
                status: 400,
                id: id.cloned(),
                error: Box::new(unsupported_version(version)),
            });
        }
        match header(METHOD) {
            Some(h) if h == method => {}
            Some(h) => {
                return Err(mismatch(
                    id,
                    format!("{METHOD} is {h:?} but the body's method is {method:?}"),
                ));
            }
            None => return Err(mismatch(id, format!("the {METHOD} header is missing"))),
        }
        if let Some(name) = name_source(method, params) {
            match header(NAME).map(|h| decode_value(&h)) {
                Some(Some(h)) if h == name => {}
                Some(Some(h)) => {
                    return Err(mismatch(
                        id,
                        format!("{NAME} is {h:?} but the body names {name:?}"),
                    ));
                }
                Some(None) => {
                    return Err(mismatch(
                        id,
                        format!("the {NAME} header is not valid Base64"),
                    ));
                }
                None => return Err(mismatch(id, format!("the {NAME} header is missing"))),
            }
        }
        if !meta.is_some_and(|m| m.get(META_CAPABILITIES).is_some_and(Value::is_object)) {
            return Err(Rejection::new(
                400,
                id.cloned(),
                INVALID_PARAMS,
                format!("Invalid params: _meta.{META_CAPABILITIES} is required"),
            ));
        }
        return Ok(Route::Modern {
            version: version.to_string(),
        });
    }
    if let Some(session) = header(SESSION_ID) {
        if let Some(v) = header(PROTOCOL_VERSION)
            && era_of(&v) != Some(super::version::Era::Legacy)
        {
            return Err(Rejection {
                status: 400,
                id: id.cloned(),
                error: Box::new(unsupported_version(&v)),
            });
        }
        return Ok(Route::Legacy { session });
    }
    Err(Rejection::new(
        400,
        id.cloned(),
        INVALID_PARAMS,
        format!(
            "Bad Request: send initialize first (2025-11-25 and earlier), or name the protocol version in _meta.{META_VERSION} ({MODERN})"
        ),
    ))
}

/// The legacy version to agree on when a client offers `offered`: its
/// own if this server speaks it, else the newest legacy one.
pub fn negotiate_legacy(offered: &str) -> &'static str {
    LEGACY_VERSIONS
        .iter()
        .copied()
        .find(|v| *v == offered)
        .unwrap_or(LEGACY)
}

/// The params with the protocol's own `_meta` keys taken out (the
/// progress token is read apart); other `_meta` keys stay.
pub fn strip_protocol_meta(params: &Value) -> Value {
    let mut params = match params {
        Value::Object(o) => o.clone(),
        _ => Map::new(),
    };
    if let Some(Value::Object(mut meta)) = params.remove("_meta") {
        meta.retain(|k, _| !k.starts_with("io.modelcontextprotocol/") && k != "progressToken");
        if !meta.is_empty() {
            params.insert("_meta".into(), Value::Object(meta));
        }
    }
    Value::Object(params)
}

/// The progress token a request carries, if it asked for progress.
pub fn progress_token(params: &Value) -> Option<Value> {
    params
        .get("_meta")
        .and_then(|m| m.get("progressToken"))
        .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
        .cloned()
}

/// A modern result: `resultType` and the server's identity stamped on.
pub fn modern_result(result: Value, server: &Implementation) -> Value {
    let mut obj = match result {
        Value::Object(o) => o,
        other => {
            let mut o = Map::new();
            o.insert("value".into(), other);
            o
        }
    };
    obj.entry("resultType").or_insert_with(|| "complete".into());
    let meta = obj
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.insert(
            META_SERVER_INFO.into(),
            serde_json::to_value(server).unwrap_or(Value::Null),
        );
    }
    Value::Object(obj)
}

/// Marks a list or read result as cacheable: fresh for `ttl_ms`, and
/// private to this client (it depends on the client's credential).
pub fn cacheable(mut result: Value, ttl_ms: u64) -> Value {
    if let Value::Object(obj) = &mut result {
        obj.insert("ttlMs".into(), ttl_ms.into());
        obj.insert("cacheScope".into(), "private".into());
    }
    result
}

/// `server/discover`'s result.
pub fn discover_result(
    capabilities: &ServerCapabilities,
    server: &Implementation,
    instructions: Option<&str>,
) -> Value {
    let mut result = json!({
        "supportedVersions": supported_versions(),
        "capabilities": capabilities,
    });
    if let Some(text) = instructions {
        result["instructions"] = text.into();
    }
    cacheable(modern_result(result, server), 60_000)
}

/// `initialize`'s result for a client offering `offered`.
pub fn initialize_result(
    offered: &str,
    capabilities: &ServerCapabilities,
    server: &Implementation,
    instructions: Option<&str>,
) -> Value {
    let mut result = json!({
        "protocolVersion": negotiate_legacy(offered),
        "capabilities": capabilities,
        "serverInfo": server,
    });
    if let Some(text) = instructions {
        result["instructions"] = text.into();
    }
    result
}

/// One message as an SSE event.
pub fn sse_event(message: &Value) -> String {
    format!("event: message\ndata: {message}\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::headers::encode_value;
    use std::collections::HashMap;

    fn headers(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
            .collect();
        move |name: &str| map.get(&name.to_ascii_lowercase()).cloned()
    }

    fn modern(method: &str, extra: Value) -> Incoming {
        let mut params = json!({"_meta": {
            META_VERSION: MODERN,
            META_CAPABILITIES: {},
            META_CLIENT_INFO: {"name": "t", "version": "1"}
        }});
        if let (Value::Object(p), Value::Object(e)) = (&mut params, extra) {
            p.extend(e);
        }
        Incoming::Request {
            id: RequestId::Number(7),
            method: method.into(),
            params,
        }
    }

    /// What a body should parse to: its kind, or the status and code of
    /// its rejection.
    type Parsed = Result<&'static str, (u16, i64)>;

    #[test]
    fn bodies_are_one_request_or_notification() {
        let table: Vec<(&str, Parsed)> = vec![
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
                Ok("request"),
            ),
            (
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                Ok("notification"),
            ),
            ("{not json", Err((400, PARSE_ERROR))),
            (
                r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
                Err((400, INVALID_REQUEST)),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
                Err((400, INVALID_REQUEST)),
            ),
            (
                r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
                Err((400, INVALID_REQUEST)),
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":5}"#,
                Err((400, INVALID_REQUEST)),
            ),
            ("42", Err((400, INVALID_REQUEST))),
        ];
        for (body, want) in table {
            let got = parse_body(body.as_bytes());
            match (got, want) {
                (Ok(Incoming::Request { .. }), Ok("request"))
                | (Ok(Incoming::Notification { .. }), Ok("notification")) => {}
                (Err(r), Err((status, code))) => {
                    assert_eq!((r.status, r.error.code), (status, code), "{body}")
                }
                (got, want) => panic!("{body}: {got:?} vs {want:?}"),
            }
        }
        // A request id is echoed even when the rest is wrong.
        let r = parse_body(br#"{"jsonrpc":"2.0","id":"x","result":1}"#).unwrap_err();
        assert_eq!(r.body()["id"], "x");
    }

    #[test]
    fn eras_and_modern_headers_follow_the_versioning_rules() {
        let good = [(PROTOCOL_VERSION, MODERN), (METHOD, "tools/list")];
        let call_headers = |name: &str| {
            vec![
                (PROTOCOL_VERSION.to_string(), MODERN.to_string()),
                (METHOD.to_string(), "tools/call".to_string()),
                (NAME.to_string(), name.to_string()),
            ]
        };
        let call = modern("tools/call", json!({"name": "notes", "arguments": {}}));
        let unicode = modern("tools/call", json!({"name": "nötes", "arguments": {}}));
        type Case = (
            &'static str,
            Incoming,
            Vec<(String, String)>,
            Result<&'static str, i64>,
        );
        let owned = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        let table: Vec<Case> = vec![
            (
                "a modern request",
                modern("tools/list", json!({})),
                owned(&good),
                Ok("modern"),
            ),
            (
                "a modern call with its name",
                call.clone(),
                call_headers("notes"),
                Ok("modern"),
            ),
            (
                "a name in the Base64 form",
                unicode.clone(),
                call_headers(&encode_value("nötes")),
                Ok("modern"),
            ),
            (
                "a name that differs",
                call.clone(),
                call_headers("tasks"),
                Err(HEADER_MISMATCH),
            ),
            (
                "a missing name",
                call.clone(),
                owned(&[(PROTOCOL_VERSION, MODERN), (METHOD, "tools/call")]),
                Err(HEADER_MISMATCH),
            ),
            (
                "a missing method header",
                modern("tools/list", json!({})),
                owned(&[(PROTOCOL_VERSION, MODERN)]),
                Err(HEADER_MISMATCH),
            ),
            (
                "a method header that differs",
                modern("tools/list", json!({})),
                owned(&[(PROTOCOL_VERSION, MODERN), (METHOD, "tools/call")]),
                Err(HEADER_MISMATCH),
            ),
            (
                "a version header that differs",
                modern("tools/list", json!({})),
                owned(&[(PROTOCOL_VERSION, "2025-11-25"), (METHOD, "tools/list")]),
                Err(HEADER_MISMATCH),
            ),
            (
                "a modern version Hearth does not speak",
                Incoming::Request {
                    id: RequestId::Number(1),
                    method: "tools/list".into(),
                    params: json!({"_meta": {META_VERSION: "2099-01-01", META_CAPABILITIES: {}}}),
                },
                owned(&[(PROTOCOL_VERSION, "2099-01-01"), (METHOD, "tools/list")]),
                Err(UNSUPPORTED_PROTOCOL_VERSION),
            ),
            (
                "a version header that disagrees with an unknown version",
                Incoming::Request {
                    id: RequestId::Number(1),
                    method: "tools/list".into(),
                    params: json!({"_meta": {META_VERSION: "2099-01-01", META_CAPABILITIES: {}}}),
                },
                owned(&[(PROTOCOL_VERSION, MODERN), (METHOD, "tools/list")]),
                Err(HEADER_MISMATCH),
            ),
            (
                "initialize in the modern era, which removed it",
                Incoming::Request {
                    id: RequestId::Number(1),
                    method: "initialize".into(),
                    params: json!({"_meta": {META_VERSION: MODERN, META_CAPABILITIES: {}}}),
                },
                owned(&[(PROTOCOL_VERSION, MODERN), (METHOD, "initialize")]),
                Err(METHOD_NOT_FOUND),
            ),
            (
                "no client capabilities",
                Incoming::Request {
                    id: RequestId::Number(1),
                    method: "tools/list".into(),
                    params: json!({"_meta": {META_VERSION: MODERN}}),
                },
                owned(&good),
                Err(INVALID_PARAMS),
            ),
            (
                "initialize opens a legacy session",
                Incoming::Request {
                    id: RequestId::Number(1),
                    method: "initialize".into(),
                    params: json!({"protocolVersion": "2025-06-18"}),
                },
                vec![],
                Ok("initialize"),
            ),
            (
                "a request in a session",
                Incoming::Request {
                    id: RequestId::Number(2),
                    method: "tools/list".into(),
                    params: json!({}),
                },
                owned(&[(SESSION_ID, "s1"), (PROTOCOL_VERSION, "2025-11-25")]),
                Ok("legacy"),
            ),
            (
                "a session with a modern version header",
                Incoming::Request {
                    id: RequestId::Number(2),
                    method: "tools/list".into(),
                    params: json!({}),
                },
                owned(&[(SESSION_ID, "s1"), (PROTOCOL_VERSION, MODERN)]),
                Err(UNSUPPORTED_PROTOCOL_VERSION),
            ),
            (
                "neither era",
                Incoming::Request {
                    id: RequestId::Number(2),
                    method: "tools/list".into(),
                    params: json!({}),
                },
                vec![],
                Err(INVALID_PARAMS),
            ),
        ];
        for (what, incoming, hs, want) in table {
            let pairs: Vec<(&str, &str)> =
                hs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
            let got = route(&incoming, &headers(&pairs));
            match (got, want) {
                (Ok(Route::Modern { .. }), Ok("modern"))
                | (Ok(Route::Initialize { .. }), Ok("initialize"))
                | (Ok(Route::Legacy { .. }), Ok("legacy")) => {}
                (Err(r), Err(code)) => {
                    // A method the era does not have is not found; every
                    // other refusal is a bad request.
                    let status = if code == METHOD_NOT_FOUND { 404 } else { 400 };
                    assert_eq!(
                        (r.status, r.error.code),
                        (status, code),
                        "{what}: {}",
                        r.error.message
                    )
                }
                (got, want) => panic!("{what}: {got:?} vs {want:?}"),
            }
        }
    }

    /// Hearth's own client judges this server modern from its answers: the
    /// same detection rules hold in both directions.
    #[test]
    fn hearths_client_reads_these_answers_as_the_right_era() {
        use crate::version::{ProbeOutcome, Verdict, judge_probe};
        let discover = discover_result(
            &ServerCapabilities::default(),
            &Implementation {
                name: "hearth".into(),
                title: None,
                version: "1".into(),
                description: None,
                website_url: None,
            },
            None,
        );
        assert_eq!(
            judge_probe(200, &ProbeOutcome::Result(discover), MODERN),
            Verdict::Modern {
                version: MODERN.into()
            }
        );
        assert_eq!(
            judge_probe(
                400,
                &ProbeOutcome::Error(unsupported_version("2099-01-01")),
                "2099-01-01"
            ),
            Verdict::RetryModern {
                version: MODERN.into()
            }
        );
        assert_eq!(negotiate_legacy("2025-06-18"), "2025-06-18");
        assert_eq!(negotiate_legacy("2024-11-05"), LEGACY);
        assert_eq!(negotiate_legacy(MODERN), LEGACY);
    }

    #[test]
    fn protocol_metadata_is_taken_out_before_relaying() {
        let params = json!({"name": "notes", "_meta": {META_VERSION: MODERN, "progressToken": 3, "com.example/x": 1}});
        assert_eq!(
            strip_protocol_meta(&params),
            json!({"name": "notes", "_meta": {"com.example/x": 1}})
        );
        assert_eq!(progress_token(&params), Some(json!(3)));
        assert_eq!(
            progress_token(&json!({"_meta": {"progressToken": 1.5}})),
            None
        );
        assert_eq!(decode_value("=?base64?bsO2dGVz?="), Some("nötes".into()));
        assert_eq!(decode_value("=?base64?%%?="), None);
    }

    #[test]
    fn modern_results_are_stamped() {
        let server = Implementation {
            name: "hearth".into(),
            title: None,
            version: "1".into(),
            description: None,
            website_url: None,
        };
        assert_eq!(
            modern_result(json!({"tools": []}), &server),
            json!({"tools": [], "resultType": "complete", "_meta": {META_SERVER_INFO: {"name": "hearth", "version": "1"}}})
        );
        assert_eq!(
            sse_event(&json!({"a": 1})),
            "event: message\ndata: {\"a\":1}\n\n"
        );
    }
}
