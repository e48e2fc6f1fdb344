//! MCP Apps (`io.modelcontextprotocol/ui`, revision 2026-01-26) from the
//! host's side, as pure logic the app drives:
//!
//! - [`read_view`] checks a `ui://` resource (`text/html;profile=mcp-app`)
//!   and builds its Content-Security-Policy from the domains it declares
//!   ([`policy`]): nothing declared means no network at all, and a declared
//!   domain that is not a plain origin is refused, never passed through.
//! - [`AppHost`] is one rendered view's side of the JSON-RPC conversation
//!   over `postMessage`: `ui/initialize` with the host context, the tool's
//!   input and result as notifications once the view says it is
//!   initialized, `tools/call` only for tools visible to the app on the
//!   view's own server, `resources/read`, size changes, links, logs.
//!   It answers with [`HostAction`]s; the app posts, calls and resizes.

use base64::Engine;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::model::{ReadResourceResult, ResourceBody, Tool};
use crate::skill::call::{Content, ToolResult, ToolStatus};

/// The extension's identifier in capabilities.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The MIME type of an MCP App's HTML.
pub const MIME: &str = "text/html;profile=mcp-app";
/// The revision of the Apps protocol Hearth speaks with views.
pub const PROTOCOL_VERSION: &str = "2026-01-26";
/// Views larger than this are cut off (and scroll inside).
pub const MAX_HEIGHT: f64 = 2000.0;
/// Views report no smaller height than this.
pub const MIN_HEIGHT: f64 = 24.0;
/// HTML larger than this is not rendered.
pub const MAX_HTML_BYTES: usize = 2 * 1024 * 1024;

/// What Hearth declares in its client capabilities' `extensions`.
pub fn client_extension() -> (String, Value) {
    (EXTENSION.to_string(), json!({ "mimeTypes": [MIME] }))
}

/// The domains a view asks to reach, from `_meta.ui.csp`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DeclaredCsp {
    pub connect_domains: Vec<String>,
    pub resource_domains: Vec<String>,
    pub frame_domains: Vec<String>,
    pub base_uri_domains: Vec<String>,
}

impl DeclaredCsp {
    pub fn is_empty(&self) -> bool {
        self.connect_domains.is_empty()
            && self.resource_domains.is_empty()
            && self.frame_domains.is_empty()
            && self.base_uri_domains.is_empty()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct UiMeta {
    csp: DeclaredCsp,
    prefers_border: Option<bool>,
}

/// A view ready to render.
#[derive(Clone, Debug, PartialEq)]
pub struct AppView {
    pub uri: String,
    pub html: String,
    /// The policy the view runs under.
    pub csp: String,
    /// The declared domains that made it into the policy.
    pub allowed: DeclaredCsp,
    /// Declared domains left out, each with why; shown with the view.
    pub refused: Vec<(String, String)>,
    pub prefers_border: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AppError {
    #[error("{0} is not a ui:// resource, so it cannot be shown as an app")]
    NotUi(String),
    #[error("the server sent no content for {0}")]
    Missing(String),
    #[error("{uri} is {found}, not an MCP App ({MIME})")]
    WrongType { uri: String, found: String },
    #[error("the app's HTML could not be decoded: {0}")]
    BadBlob(String),
    #[error("the app's HTML is larger than {} MB", MAX_HTML_BYTES / (1024 * 1024))]
    TooLarge,
}

fn is_app_mime(mime: &str) -> bool {
    let mut parts = mime.split(';').map(str::trim);
    let base_is_html = parts
        .next()
        .is_some_and(|t| t.eq_ignore_ascii_case("text/html"));
    base_is_html
        && parts.any(|p| {
            p.split_once('=').is_some_and(|(k, v)| {
                k.trim().eq_ignore_ascii_case("profile")
                    && v.trim().trim_matches('"').eq_ignore_ascii_case("mcp-app")
            })
        })
}

/// Checks what `resources/read` returned for a view's `uri` and builds the
/// view's policy.
pub fn read_view(uri: &str, result: &ReadResourceResult) -> Result<AppView, AppError> {
    if !uri.starts_with("ui://") {
        return Err(AppError::NotUi(uri.into()));
    }
    let contents = result
        .contents
        .iter()
        .find(|c| c.uri == uri)
        .or_else(|| result.contents.first())
        .ok_or_else(|| AppError::Missing(uri.into()))?;
    let mime = contents.mime_type.clone().unwrap_or_default();
    if !is_app_mime(&mime) {
        return Err(AppError::WrongType {
            uri: uri.into(),
            found: if mime.is_empty() {
                "of no declared type".into()
            } else {
                mime
            },
        });
    }
    let html = match &contents.body {
        ResourceBody::Text(t) => t.clone(),
        ResourceBody::Blob(b) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b.trim())
                .map_err(|e| AppError::BadBlob(e.to_string()))?;
            String::from_utf8(bytes).map_err(|e| AppError::BadBlob(e.to_string()))?
        }
    };
    if html.len() > MAX_HTML_BYTES {
        return Err(AppError::TooLarge);
    }
    let meta: UiMeta = contents
        .meta
        .as_ref()
        .and_then(|m| m.get("ui"))
        .and_then(|ui| serde_json::from_value(ui.clone()).ok())
        .unwrap_or_default();
    let (allowed, refused) = vet(&meta.csp);
    Ok(AppView {
        uri: uri.into(),
        html,
        csp: policy(&allowed),
        allowed,
        refused,
        prefers_border: meta.prefers_border,
    })
}

/// Keeps the declared sources that are plain origins of public hosts.
fn vet(declared: &DeclaredCsp) -> (DeclaredCsp, Vec<(String, String)>) {
    let mut refused = Vec::new();
    let mut keep = |list: &[String]| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for d in list {
            match source(d) {
                Ok(s) => {
                    if !out.contains(&s) {
                        out.push(s)
                    }
                }
                Err(why) => refused.push((d.clone(), why)),
            }
        }
        out
    };
    let allowed = DeclaredCsp {
        connect_domains: keep(&declared.connect_domains),
        resource_domains: keep(&declared.resource_domains),
        frame_domains: keep(&declared.frame_domains),
        base_uri_domains: keep(&declared.base_uri_domains),
    };
    (allowed, refused)
}

/// A declared domain as a CSP source: `scheme://host[:port]`, where the
/// scheme is https, wss, http or ws and the host may start with one `*.`.
/// Keywords, bare schemes, wildcards, paths and anything that could end
/// the directive are refused, and so is every host that is not on the
/// public internet by the proxy's address rules: loopback, private,
/// link-local and the like in any spelling, `localhost`, `.local` and
/// other local-network names ([`crate::address::local_host`]).
pub fn source(declared: &str) -> Result<String, String> {
    let d = declared.trim().trim_end_matches('/');
    if d.chars()
        .any(|c| c.is_whitespace() || c.is_control() || matches!(c, ';' | ',' | '\'' | '"'))
    {
        return Err("it holds characters a policy cannot take".into());
    }
    let (scheme, rest) = d
        .split_once("://")
        .ok_or_else(|| "it is not an origin such as https://api.example.com".to_string())?;
    let scheme = scheme.to_ascii_lowercase();
    if !matches!(scheme.as_str(), "https" | "wss" | "http" | "ws") {
        return Err(format!("the scheme {scheme}: is not allowed"));
    }
    if rest.contains(['/', '?', '#', '@', '\\']) {
        return Err("only an origin is allowed, without a path, query or user".into());
    }
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, _)) if !h.ends_with(']') && h.contains(':') => (rest, None),
        Some((h, p)) => (h, Some(p)),
        None => (rest, None),
    };
    if let Some(p) = port
        && (p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) || p.parse::<u16>().is_err())
    {
        return Err(format!("the port {p:?} is not a number"));
    }
    let host = host.to_ascii_lowercase();
    let bare = host.strip_prefix("*.").unwrap_or(&host);
    let ipv6 = bare.starts_with('[')
        && bare.ends_with(']')
        && bare[1..bare.len() - 1]
            .bytes()
            .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.');
    let labels_ok = !bare.is_empty()
        && bare.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        });
    if !(ipv6 || labels_ok) || (ipv6 && host.starts_with("*.")) {
        return Err(format!("{host:?} is not a host name"));
    }
    if host.starts_with("*.") && !bare.contains('.') {
        return Err("a wildcard must leave at least two labels, as in *.example.com".into());
    }
    // The app's page is served from this machine, so the browser's own
    // guard for private networks does not stand between a view and the
    // person's machine or network: the proxy's address rules do.
    if let Some(why) = crate::address::local_host(bare) {
        return Err(format!(
            "{why}; an app's view may only reach hosts on the public internet"
        ));
    }
    Ok(match port {
        Some(p) => format!("{scheme}://{host}:{p}"),
        None => format!("{scheme}://{host}"),
    })
}

/// The policy a view runs under. Nothing declared: no network, no
/// frames, no plugins, no forms, inline script and style only.
pub fn policy(allowed: &DeclaredCsp) -> String {
    fn list(base: &[&str], extra: &[String]) -> String {
        let mut parts: Vec<String> = base.iter().map(|s| s.to_string()).collect();
        parts.extend(extra.iter().cloned());
        if parts.is_empty() {
            "'none'".into()
        } else {
            parts.join(" ")
        }
    }
    let r = &allowed.resource_domains;
    [
        "default-src 'none'".to_string(),
        format!("script-src {}", list(&["'unsafe-inline'"], r)),
        format!("style-src {}", list(&["'unsafe-inline'"], r)),
        format!("img-src {}", list(&["data:", "blob:"], r)),
        format!("font-src {}", list(&["data:"], r)),
        format!("media-src {}", list(&["data:", "blob:"], r)),
        format!("connect-src {}", list(&[], &allowed.connect_domains)),
        format!("frame-src {}", list(&[], &allowed.frame_domains)),
        format!("base-uri {}", list(&[], &allowed.base_uri_domains)),
        "object-src 'none'".to_string(),
        "form-action 'none'".to_string(),
    ]
    .join("; ")
}

/// The view's HTML with its policy as the first thing the parser meets, so
/// nothing of the view runs before it: right after a leading doctype,
/// else at the very start.
pub fn with_policy(html: &str, csp: &str) -> String {
    let meta = format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
        csp.replace('&', "&amp;").replace('"', "&quot;")
    );
    let trimmed = html.trim_start();
    let lead = html.len() - trimmed.len();
    if trimmed
        .get(..9)
        .is_some_and(|d| d.eq_ignore_ascii_case("<!doctype"))
        && let Some(end) = trimmed.find('>')
    {
        let at = lead + end + 1;
        return format!("{}{meta}{}", &html[..at], &html[at..]);
    }
    format!("{meta}{html}")
}

/// A skill result as the `CallToolResult` a view expects, for results that
/// were stored without the server's original answer (after a reload).
pub fn result_for_view(result: &ToolResult) -> Value {
    let mut content = Vec::new();
    let mut structured: Option<Value> = None;
    for c in &result.content {
        match c {
            Content::Text { text } => content.push(json!({"type": "text", "text": text})),
            Content::Json { value } => {
                if structured.is_none() {
                    structured = Some(value.clone());
                }
                content.push(json!({"type": "text", "text": value.to_string()}));
            }
            Content::Image { mime_type, data } => {
                content.push(json!({"type": "image", "data": data, "mimeType": mime_type}))
            }
            Content::Audio { mime_type, data } => {
                content.push(json!({"type": "audio", "data": data, "mimeType": mime_type}))
            }
            Content::ResourceLink {
                uri,
                name,
                description,
                mime_type,
            } => {
                let mut link = json!({"type": "resource_link", "uri": uri, "name": name});
                if let Some(d) = description {
                    link["description"] = d.clone().into();
                }
                if let Some(m) = mime_type {
                    link["mimeType"] = m.clone().into();
                }
                content.push(link);
            }
            Content::Resource {
                uri,
                mime_type,
                text,
                blob,
            } => {
                let mut r = json!({"uri": uri});
                if let Some(m) = mime_type {
                    r["mimeType"] = m.clone().into();
                }
                if let Some(t) = text {
                    r["text"] = t.clone().into();
                }
                if let Some(b) = blob {
                    r["blob"] = b.clone().into();
                }
                content.push(json!({"type": "resource", "resource": r}));
            }
            Content::Artifact { .. } => {}
        }
    }
    let mut out = Map::new();
    match result.status {
        ToolStatus::Completed => {}
        ToolStatus::Failed | ToolStatus::Denied | ToolStatus::InputRequired => {
            content =
                vec![json!({"type": "text", "text": result.error.clone().unwrap_or_default()})];
            out.insert("isError".into(), true.into());
        }
    }
    out.insert("content".into(), Value::Array(content));
    if let Some(s) = structured {
        out.insert("structuredContent".into(), s);
    }
    Value::Object(out)
}

/// What the host knows about where a view is shown.
#[derive(Clone, Debug, PartialEq)]
pub struct HostContext {
    /// "light" or "dark".
    pub theme: String,
    pub locale: String,
    pub time_zone: String,
    /// The width the view gets, in CSS pixels.
    pub width: f64,
}

/// Something the app must do for a view.
#[derive(Clone, Debug, PartialEq)]
pub enum HostAction {
    /// Post this JSON-RPC message to the view.
    Post(Value),
    /// Call `name` on the view's server; answer with
    /// [`AppHost::answer`] and `request`.
    CallTool {
        request: Value,
        name: String,
        arguments: Value,
    },
    /// Read `uri` from the view's server; answer the same way.
    ReadResource { request: Value, uri: String },
    /// The view's content is this tall (clamped to the limits).
    Resize { height: f64 },
    /// Open this http(s) URL in a new tab, away from the app.
    OpenLink { url: String },
    /// The view logged something.
    Log { level: String, data: Value },
}

/// JSON-RPC errors a view can get.
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const REFUSED: i64 = -32000;

fn response(id: &Value, result: Value) -> HostAction {
    HostAction::Post(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

fn error(id: &Value, code: i64, message: impl Into<String>) -> HostAction {
    HostAction::Post(
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}}),
    )
}

fn notification(method: &str, params: Value) -> HostAction {
    HostAction::Post(json!({"jsonrpc": "2.0", "method": method, "params": params}))
}

/// One view's conversation with the host.
#[derive(Clone, Debug)]
pub struct AppHost {
    tool: Tool,
    arguments: Value,
    result: Option<Value>,
    /// Tools of the view's server it may call.
    app_tools: Vec<String>,
    context: HostContext,
    host_version: String,
    asked_to_initialize: bool,
    initialized: bool,
    sent_result: bool,
    model_context: Option<Value>,
}

impl AppHost {
    /// `app_tools`: the names of the tools on the view's server whose
    /// visibility includes the app.
    pub fn new(
        tool: Tool,
        arguments: Value,
        app_tools: Vec<String>,
        context: HostContext,
        host_version: &str,
    ) -> Self {
        Self {
            tool,
            arguments,
            result: None,
            app_tools,
            context,
            host_version: host_version.into(),
            asked_to_initialize: false,
            initialized: false,
            sent_result: false,
            model_context: None,
        }
    }

    pub fn is_initialized(&self) -> bool {
        self.initialized
    }

    /// What the view last asked to add to the model's context.
    pub fn model_context(&self) -> Option<&Value> {
        self.model_context.as_ref()
    }

    /// The tool's result (a `CallToolResult`). Sent now if the view is
    /// ready, else once it is.
    pub fn set_result(&mut self, result: Value) -> Vec<HostAction> {
        self.result = Some(result);
        self.flush_result()
    }

    fn flush_result(&mut self) -> Vec<HostAction> {
        match (&self.result, self.initialized, self.sent_result) {
            (Some(r), true, false) => {
                self.sent_result = true;
                vec![notification("ui/notifications/tool-result", r.clone())]
            }
            _ => Vec::new(),
        }
    }

    fn initialize_result(&self) -> Value {
        json!({
            "protocolVersion": PROTOCOL_VERSION,
            "hostInfo": {"name": "hearth", "title": "Hearth", "version": self.host_version},
            "hostCapabilities": {
                "openLinks": {},
                "serverTools": {},
                "serverResources": {},
                "logging": {},
                "sandbox": {"permissions": {}},
            },
            "hostContext": {
                "toolInfo": {"tool": self.tool},
                "theme": self.context.theme,
                "displayMode": "inline",
                "availableDisplayModes": ["inline"],
                "containerDimensions": {"width": self.context.width, "maxHeight": MAX_HEIGHT},
                "locale": self.context.locale,
                "timeZone": self.context.time_zone,
                "platform": "web",
                "userAgent": format!("hearth/{}", self.host_version),
            },
        })
    }

    /// Handles one message from the view.
    pub fn receive(&mut self, message: &Value) -> Vec<HostAction> {
        let Some(obj) = message.as_object() else {
            return Vec::new();
        };
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Vec::new();
        }
        let method = obj.get("method").and_then(Value::as_str);
        let params = obj.get("params").cloned().unwrap_or(Value::Null);
        match (method, obj.get("id")) {
            (Some(m), Some(id)) => self.request(m, id, &params),
            (Some(m), None) => self.notification(m, &params),
            // Answers to the host's own requests need nothing more.
            (None, _) => Vec::new(),
        }
    }

    fn request(&mut self, method: &str, id: &Value, params: &Value) -> Vec<HostAction> {
        if method == "ui/initialize" {
            self.asked_to_initialize = true;
            return vec![response(id, self.initialize_result())];
        }
        if method == "ping" {
            return vec![response(id, json!({}))];
        }
        if !self.asked_to_initialize {
            return vec![error(id, REFUSED, "send ui/initialize first")];
        }
        match method {
            "tools/call" => {
                let Some(name) = params.get("name").and_then(Value::as_str) else {
                    return vec![error(id, INVALID_PARAMS, "tools/call needs a tool name")];
                };
                if !self.app_tools.iter().any(|t| t == name) {
                    return vec![error(
                        id,
                        INVALID_PARAMS,
                        format!("the tool {name} is not available to this app"),
                    )];
                }
                let arguments = match params.get("arguments") {
                    None | Some(Value::Null) => json!({}),
                    Some(a @ Value::Object(_)) => a.clone(),
                    Some(_) => {
                        return vec![error(id, INVALID_PARAMS, "arguments must be an object")];
                    }
                };
                vec![HostAction::CallTool {
                    request: id.clone(),
                    name: name.into(),
                    arguments,
                }]
            }
            "resources/read" => match params.get("uri").and_then(Value::as_str) {
                Some(uri) => vec![HostAction::ReadResource {
                    request: id.clone(),
                    uri: uri.into(),
                }],
                None => vec![error(id, INVALID_PARAMS, "resources/read needs a uri")],
            },
            "ui/open-link" => match params.get("url").and_then(Value::as_str) {
                Some(url) if url.starts_with("https://") || url.starts_with("http://") => {
                    vec![
                        HostAction::OpenLink { url: url.into() },
                        response(id, json!({})),
                    ]
                }
                _ => vec![error(id, INVALID_PARAMS, "only http and https links open")],
            },
            "ui/request-display-mode" => vec![response(id, json!({"mode": "inline"}))],
            "ui/update-model-context" => {
                self.model_context = Some(params.clone());
                vec![response(id, json!({}))]
            }
            "ui/message" => vec![error(
                id,
                REFUSED,
                "Hearth does not take chat messages from apps",
            )],
            other => vec![error(
                id,
                METHOD_NOT_FOUND,
                format!("Hearth does not offer {other} to apps"),
            )],
        }
    }

    fn notification(&mut self, method: &str, params: &Value) -> Vec<HostAction> {
        match method {
            "ui/notifications/initialized" if self.asked_to_initialize && !self.initialized => {
                self.initialized = true;
                let mut out = vec![notification(
                    "ui/notifications/tool-input",
                    json!({"arguments": self.arguments}),
                )];
                out.extend(self.flush_result());
                out
            }
            "ui/notifications/size-changed" => match params.get("height").and_then(Value::as_f64) {
                Some(h) if h.is_finite() => vec![HostAction::Resize {
                    height: h.clamp(MIN_HEIGHT, MAX_HEIGHT),
                }],
                _ => Vec::new(),
            },
            "notifications/message" => vec![HostAction::Log {
                level: params
                    .get("level")
                    .and_then(Value::as_str)
                    .unwrap_or("info")
                    .chars()
                    .take(16)
                    .collect(),
                data: params.get("data").cloned().unwrap_or(Value::Null),
            }],
            _ => Vec::new(),
        }
    }

    /// The answer to a `tools/call` or `resources/read` the view asked for.
    pub fn answer(&self, request: &Value, outcome: Result<Value, String>) -> HostAction {
        match outcome {
            Ok(v) => response(request, v),
            Err(message) => error(request, REFUSED, message),
        }
    }

    /// Tells the view the tool call ended without a result.
    pub fn cancelled(&mut self, reason: &str) -> Vec<HostAction> {
        if self.initialized && !self.sent_result {
            self.sent_result = true;
            vec![notification(
                "ui/notifications/tool-cancelled",
                json!({"reason": reason}),
            )]
        } else {
            Vec::new()
        }
    }
}

/// How many `tools/call`s the MCP Apps of one server may make in a span of
/// time. A view is the server's code running in the chat, not the person:
/// it must not flood the person with approval questions, nor run an
/// allowed tool in a loop. Times come from the caller (core has no clock).
#[derive(Clone, Debug, PartialEq)]
pub struct CallBudget {
    max: usize,
    window_ms: f64,
    /// When the calls still inside the window were made.
    times: std::collections::VecDeque<f64>,
}

impl Default for CallBudget {
    fn default() -> Self {
        Self::new(APP_CALLS_PER_WINDOW, APP_CALL_WINDOW_MS)
    }
}

/// Calls one server's apps may make per [`APP_CALL_WINDOW_MS`].
pub const APP_CALLS_PER_WINDOW: usize = 5;
pub const APP_CALL_WINDOW_MS: f64 = 10_000.0;

impl CallBudget {
    pub fn new(max: usize, window_ms: f64) -> Self {
        Self {
            max,
            window_ms,
            times: std::collections::VecDeque::new(),
        }
    }

    /// Takes one call made at `now_ms`; or, when the budget is spent, says
    /// how many milliseconds until the next call may be made.
    pub fn take(&mut self, now_ms: f64) -> Result<(), f64> {
        while self
            .times
            .front()
            .is_some_and(|t| now_ms - *t >= self.window_ms)
        {
            self.times.pop_front();
        }
        if self.times.len() >= self.max {
            let oldest = self.times.front().copied().unwrap_or(now_ms);
            return Err((oldest + self.window_ms - now_ms).max(0.0));
        }
        self.times.push_back(now_ms);
        Ok(())
    }
}

/// What an app is told when its budget is spent.
pub fn too_many_calls(wait_ms: f64) -> String {
    let seconds = (wait_ms / 1000.0).ceil().max(1.0);
    format!("too many tool calls from this app; Hearth takes the next one in {seconds} s")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::model::ResourceContents;
    use crate::skill::SkillId;

    fn read(mime: Option<&str>, body: ResourceBody, meta: Option<Value>) -> ReadResourceResult {
        ReadResourceResult {
            contents: vec![ResourceContents {
                uri: "ui://charts/view.html".into(),
                mime_type: mime.map(str::to_string),
                body,
                meta: meta.map(|m| serde_json::from_value(m).unwrap()),
            }],
        }
    }

    #[test]
    fn sources_are_plain_origins() {
        let table: Vec<(&str, Result<&str, ()>)> = vec![
            ("https://api.example.com", Ok("https://api.example.com")),
            ("https://API.Example.com/", Ok("https://api.example.com")),
            ("wss://rt.example.com:8443", Ok("wss://rt.example.com:8443")),
            ("https://*.cdn.example.com", Ok("https://*.cdn.example.com")),
            (
                "https://203.0.113.7.example.net",
                Ok("https://203.0.113.7.example.net"),
            ),
            ("https://[2606:4700::1111]", Ok("https://[2606:4700::1111]")),
            ("http://8.8.8.8:3000", Ok("http://8.8.8.8:3000")),
            // Nothing on this machine or the local network, however it is
            // spelled.
            ("http://localhost:3000", Err(())),
            ("http://LOCALHOST.:3000", Err(())),
            ("http://[::1]:3000", Err(())),
            ("http://[::ffff:7f00:1]", Err(())),
            ("http://127.0.0.1:3000", Err(())),
            ("http://127.1", Err(())),
            ("http://2130706433", Err(())),
            ("http://0x7f.0.0.1", Err(())),
            ("http://10.0.0.1", Err(())),
            ("http://192.168.1.20", Err(())),
            ("http://169.254.169.254", Err(())),
            ("http://[fe80::1]", Err(())),
            ("http://printer.local", Err(())),
            ("https://*.local", Err(())),
            ("https://*.office.local", Err(())),
            ("http://nas.home.arpa", Err(())),
            ("http://router", Err(())),
            ("ws://app.localhost:9000", Err(())),
            ("*", Err(())),
            ("https:", Err(())),
            ("data:", Err(())),
            ("'unsafe-eval'", Err(())),
            ("https://a.example; script-src *", Err(())),
            ("https://a.example 'unsafe-eval'", Err(())),
            ("https://*", Err(())),
            ("https://*.com", Err(())),
            ("javascript://x.example", Err(())),
            ("https://user@x.example", Err(())),
            ("https://x.example/path", Err(())),
            ("https://x.example:99999", Err(())),
            ("https://x.example:", Err(())),
            ("https://-x.example", Err(())),
            ("https://x.exa\"mple", Err(())),
        ];
        for (input, want) in table {
            assert_eq!(
                source(input).map_err(|_| ()),
                want.map(str::to_string),
                "{input}"
            );
        }
    }

    #[test]
    fn nothing_declared_means_no_network() {
        let view = read_view(
            "ui://charts/view.html",
            &read(Some(MIME), ResourceBody::Text("<p>hi</p>".into()), None),
        )
        .unwrap();
        assert_eq!(
            view.csp,
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
             img-src data: blob:; font-src data:; media-src data: blob:; connect-src 'none'; \
             frame-src 'none'; base-uri 'none'; object-src 'none'; form-action 'none'"
        );
        assert_eq!(view.refused, vec![]);
    }

    #[test]
    fn declared_domains_widen_only_their_directives_and_bad_ones_are_refused() {
        let meta = json!({"ui": {"csp": {
            "connectDomains": ["https://api.example.com", "*"],
            "resourceDomains": ["https://cdn.example.com", "https://cdn.example.com/"],
            "frameDomains": ["https://www.youtube.com; script-src *"]
        }, "prefersBorder": false}});
        let view = read_view(
            "ui://charts/view.html",
            &read(
                Some("text/html; profile=\"mcp-app\""),
                ResourceBody::Text("<p>hi</p>".into()),
                Some(meta),
            ),
        )
        .unwrap();
        assert_eq!(
            view.csp,
            "default-src 'none'; script-src 'unsafe-inline' https://cdn.example.com; \
             style-src 'unsafe-inline' https://cdn.example.com; img-src data: blob: https://cdn.example.com; \
             font-src data: https://cdn.example.com; media-src data: blob: https://cdn.example.com; \
             connect-src https://api.example.com; frame-src 'none'; base-uri 'none'; \
             object-src 'none'; form-action 'none'"
        );
        assert_eq!(
            view.refused
                .iter()
                .map(|(d, _)| d.as_str())
                .collect::<Vec<_>>(),
            vec!["*", "https://www.youtube.com; script-src *"]
        );
        assert_eq!(view.prefers_border, Some(false));
    }

    #[test]
    fn views_must_be_ui_html_of_the_app_profile() {
        /// (uri, MIME type, body, the HTML or why not)
        type Case<'a> = (
            &'a str,
            Option<&'a str>,
            ResourceBody,
            Result<&'a str, AppError>,
        );
        let table: Vec<Case> = vec![
            (
                "ui://v",
                Some(MIME),
                ResourceBody::Blob("PGI+aGk8L2I+".into()),
                Ok("<b>hi</b>"),
            ),
            (
                "ui://v",
                Some("text/html"),
                ResourceBody::Text("<b>".into()),
                Err(AppError::WrongType {
                    uri: "ui://v".into(),
                    found: "text/html".into(),
                }),
            ),
            (
                "ui://v",
                None,
                ResourceBody::Text("<b>".into()),
                Err(AppError::WrongType {
                    uri: "ui://v".into(),
                    found: "of no declared type".into(),
                }),
            ),
            (
                "https://x.example/app.html",
                Some(MIME),
                ResourceBody::Text("<b>".into()),
                Err(AppError::NotUi("https://x.example/app.html".into())),
            ),
            (
                "ui://v",
                Some(MIME),
                ResourceBody::Blob("!!".into()),
                Err(AppError::BadBlob("Invalid symbol 33, offset 0.".into())),
            ),
        ];
        for (uri, mime, body, want) in table {
            let got = read_view(uri, &read(mime, body, None)).map(|v| v.html);
            assert_eq!(got, want.map(str::to_string), "{uri} {mime:?}");
        }
    }

    #[test]
    fn the_policy_comes_before_anything_of_the_view() {
        let csp = "default-src 'none'";
        let table = [
            (
                "<!DOCTYPE html><html><head><script>x()</script>",
                "<!DOCTYPE html><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\"><html><head><script>x()</script>",
            ),
            (
                "  <!doctype html>\n<p>",
                "  <!doctype html><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\">\n<p>",
            ),
            (
                "<!doctyé>",
                "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\"><!doctyé>",
            ),
            (
                "<script>x()</script><!DOCTYPE html>",
                "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\"><script>x()</script><!DOCTYPE html>",
            ),
        ];
        for (html, want) in table {
            assert_eq!(with_policy(html, csp), want);
        }
        assert_eq!(
            with_policy("<p>", "a \"b\" &c"),
            "<meta http-equiv=\"Content-Security-Policy\" content=\"a &quot;b&quot; &amp;c\"><p>"
        );
    }

    fn host() -> AppHost {
        let tool: Tool = serde_json::from_value(json!({
            "name": "show_chart",
            "inputSchema": {"type": "object"},
            "_meta": {"ui": {"resourceUri": "ui://charts/view.html"}}
        }))
        .unwrap();
        AppHost::new(
            tool,
            json!({"city": "Oslo"}),
            vec!["show_chart".into(), "refresh_chart".into()],
            HostContext {
                theme: "dark".into(),
                locale: "en-GB".into(),
                time_zone: "Europe/Oslo".into(),
                width: 640.0,
            },
            "0.1.0",
        )
    }

    fn post(v: Value) -> HostAction {
        HostAction::Post(v)
    }

    #[test]
    fn the_handshake_then_input_then_result() {
        let mut h = host();
        // Nothing but initialize (and ping) before initialize.
        assert_eq!(
            h.receive(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "refresh_chart"}})),
            vec![post(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": REFUSED, "message": "send ui/initialize first"}}))]
        );
        // A result that arrives early waits for the view.
        assert_eq!(h.set_result(json!({"content": []})), vec![]);
        let init = h.receive(&json!({"jsonrpc": "2.0", "id": 2, "method": "ui/initialize", "params": {
            "protocolVersion": PROTOCOL_VERSION, "appInfo": {"name": "chart", "version": "1"}, "appCapabilities": {}
        }}));
        let HostAction::Post(answer) = &init[0] else {
            panic!("{init:?}")
        };
        assert_eq!(answer["id"], 2);
        assert_eq!(answer["result"]["protocolVersion"], PROTOCOL_VERSION);
        assert_eq!(
            answer["result"]["hostContext"]["toolInfo"]["tool"]["name"],
            "show_chart"
        );
        assert_eq!(answer["result"]["hostContext"]["theme"], "dark");
        assert_eq!(
            answer["result"]["hostContext"]["containerDimensions"],
            json!({"width": 640.0, "maxHeight": MAX_HEIGHT})
        );
        assert!(!h.is_initialized());
        assert_eq!(
            h.receive(&json!({"jsonrpc": "2.0", "method": "ui/notifications/initialized"})),
            vec![
                post(
                    json!({"jsonrpc": "2.0", "method": "ui/notifications/tool-input", "params": {"arguments": {"city": "Oslo"}}})
                ),
                post(
                    json!({"jsonrpc": "2.0", "method": "ui/notifications/tool-result", "params": {"content": []}})
                ),
            ]
        );
        // Sent once only.
        assert_eq!(h.set_result(json!({"content": [1]})), vec![]);
        assert_eq!(h.cancelled("stopped"), vec![]);
    }

    #[test]
    fn views_call_only_their_app_tools_and_get_plain_answers() {
        let mut h = host();
        h.receive(&json!({"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {}}));
        let table: Vec<(Value, Vec<HostAction>)> = vec![
            (
                json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "refresh_chart"}}),
                vec![HostAction::CallTool {
                    request: json!(5),
                    name: "refresh_chart".into(),
                    arguments: json!({}),
                }],
            ),
            (
                json!({"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "delete_everything", "arguments": {}}}),
                vec![post(
                    json!({"jsonrpc": "2.0", "id": "a", "error": {"code": INVALID_PARAMS, "message": "the tool delete_everything is not available to this app"}}),
                )],
            ),
            (
                json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "show_chart", "arguments": [1]}}),
                vec![post(
                    json!({"jsonrpc": "2.0", "id": 6, "error": {"code": INVALID_PARAMS, "message": "arguments must be an object"}}),
                )],
            ),
            (
                json!({"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {"uri": "ui://charts/data.json"}}),
                vec![HostAction::ReadResource {
                    request: json!(7),
                    uri: "ui://charts/data.json".into(),
                }],
            ),
            (
                json!({"jsonrpc": "2.0", "id": 8, "method": "ui/open-link", "params": {"url": "javascript:alert(1)"}}),
                vec![post(
                    json!({"jsonrpc": "2.0", "id": 8, "error": {"code": INVALID_PARAMS, "message": "only http and https links open"}}),
                )],
            ),
            (
                json!({"jsonrpc": "2.0", "id": 9, "method": "ui/open-link", "params": {"url": "https://example.com/"}}),
                vec![
                    HostAction::OpenLink {
                        url: "https://example.com/".into(),
                    },
                    post(json!({"jsonrpc": "2.0", "id": 9, "result": {}})),
                ],
            ),
            (
                json!({"jsonrpc": "2.0", "id": 10, "method": "sampling/createMessage", "params": {}}),
                vec![post(
                    json!({"jsonrpc": "2.0", "id": 10, "error": {"code": METHOD_NOT_FOUND, "message": "Hearth does not offer sampling/createMessage to apps"}}),
                )],
            ),
            (
                json!({"jsonrpc": "2.0", "method": "ui/notifications/size-changed", "params": {"width": 300, "height": 99999}}),
                vec![HostAction::Resize { height: MAX_HEIGHT }],
            ),
            (
                json!({"jsonrpc": "2.0", "method": "ui/notifications/size-changed", "params": {"height": "tall"}}),
                vec![],
            ),
            (
                json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "warning", "data": "x"}}),
                vec![HostAction::Log {
                    level: "warning".into(),
                    data: json!("x"),
                }],
            ),
            (
                json!({"jsonrpc": "1.0", "id": 11, "method": "ping"}),
                vec![],
            ),
            (json!("not an object"), vec![]),
            (json!({"jsonrpc": "2.0", "id": 12, "result": {}}), vec![]),
            (
                json!({"jsonrpc": "2.0", "id": 13, "method": "ping"}),
                vec![post(json!({"jsonrpc": "2.0", "id": 13, "result": {}}))],
            ),
        ];
        for (message, want) in table {
            assert_eq!(h.receive(&message), want, "{message}");
        }
        assert_eq!(
            h.answer(&json!(5), Err("the server is not connected".into())),
            post(
                json!({"jsonrpc": "2.0", "id": 5, "error": {"code": REFUSED, "message": "the server is not connected"}})
            )
        );
    }

    #[test]
    fn stored_results_are_rebuilt_for_views() {
        let call = crate::skill::call::ToolCall {
            id: "c1".into(),
            skill_id: SkillId::new("s__t").unwrap(),
            arguments: json!({}),
            conversation_id: None,
            origin: crate::skill::call::CallOrigin::User,
        };
        let mut ok = ToolResult::for_call(&call, ToolStatus::Completed);
        ok.content = vec![
            Content::Text { text: "hi".into() },
            Content::Json {
                value: json!({"n": 1}),
            },
            Content::Image {
                mime_type: "image/png".into(),
                data: "AA==".into(),
            },
            Content::ResourceLink {
                uri: "test://1".into(),
                name: "one".into(),
                description: None,
                mime_type: None,
            },
        ];
        assert_eq!(
            result_for_view(&ok),
            json!({
                "content": [
                    {"type": "text", "text": "hi"},
                    {"type": "text", "text": "{\"n\":1}"},
                    {"type": "image", "data": "AA==", "mimeType": "image/png"},
                    {"type": "resource_link", "uri": "test://1", "name": "one"}
                ],
                "structuredContent": {"n": 1}
            })
        );
        let failed = ToolResult::failed(&call, "no such city");
        assert_eq!(
            result_for_view(&failed),
            json!({"content": [{"type": "text", "text": "no such city"}], "isError": true})
        );
    }

    #[test]
    fn an_app_gets_a_few_calls_per_window_and_no_more() {
        let mut b = CallBudget::new(3, 1000.0);
        let got: Vec<Result<(), f64>> =
            [0.0, 10.0, 20.0, 30.0, 500.0, 1000.0, 1005.0, 1010.0, 1020.0]
                .into_iter()
                .map(|t| b.take(t))
                .collect();
        assert_eq!(
            got,
            vec![
                Ok(()),
                Ok(()),
                Ok(()),
                Err(970.0),
                Err(500.0),
                Ok(()),
                Err(5.0),
                Ok(()),
                Ok(())
            ]
        );
        assert_eq!(
            too_many_calls(4200.0),
            "too many tool calls from this app; Hearth takes the next one in 5 s"
        );
    }
}
