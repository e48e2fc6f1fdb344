//! `hearth serve`: serves the built app with the headers it needs.
//!
//! Every response carries COOP/COEP (so Pyodide can be interrupted through
//! a SharedArrayBuffer), `nosniff`, and a strict Content-Security-Policy.
//! The app shell's CSP allows its own inline bootstrap script by hash, which
//! is computed from `index.html` when the server starts. It also admits
//! what the code sandbox runs: the sandbox frame is the shell's `srcdoc`,
//! so it inherits the shell's policy on top of its own (both are enforced),
//! and its script (by hash), its workers' blob: scripts and the snippets
//! they evaluate must pass both. The sandbox's own policy is what keeps it
//! off the network; everything here only adds to it.
//!
//! Pages under `/sandbox/` get a CSP of their own: `sandbox allow-scripts`
//! (an opaque origin even when opened directly or framed without the
//! attribute), no network of any kind (`connect-src 'none'`), scripts only
//! from the page's inline host script (by hash) and the blob: URLs it makes
//! for its workers, and framing only by the app.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine;
use sha2::{Digest, Sha256};
use tower_http::services::ServeDir;

use crate::api::guard::AppGuard;
use crate::api::token::ApiToken;
use crate::client::ClientConfig;
use crate::client::resolve::SystemResolver;
use crate::web::NetState;
use crate::web::config::NetConfig;

/// Why the server cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(
        "no built app at {0}: it has no index.html.\n\
         Build it first with `cargo xtask build` (or start everything with `cargo xtask run`),\n\
         or point --dist at a folder that holds trunk's output."
    )]
    MissingDist(PathBuf),
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What the server needs to know, fixed at start-up.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    pub dist: PathBuf,
    /// Extra origins the app may connect to (LLM providers or MCP servers
    /// on other hosts), added to the CSP's connect-src.
    pub extra_connect_src: Vec<String>,
}

struct AppState {
    index: PathBuf,
    /// The code sandbox page, whose script the shell's policy admits.
    sandbox_page: PathBuf,
    extra_connect_src: Vec<String>,
    /// The shell's CSP and the index.html modification time it was built
    /// from: a rebuild while serving changes the bootstrap script's hash.
    csp: std::sync::RwLock<(Option<std::time::SystemTime>, HeaderValue)>,
    /// The sandbox pages' CSP (sandbox/host.html's script by hash).
    sandbox_csp: HeaderValue,
}

impl AppState {
    /// The shell's CSP for `html`, admitting the inline scripts of the
    /// sandbox page at `sandbox_page` too (none when it is missing).
    fn csp_for(html: &str, sandbox_page: &Path, extra: &[String]) -> HeaderValue {
        let mut hashes = inline_script_hashes(html);
        if let Ok(page) = std::fs::read_to_string(sandbox_page) {
            hashes.extend(inline_script_hashes(&page));
        }
        HeaderValue::from_str(&app_csp(&hashes, extra))
            .unwrap_or_else(|_| HeaderValue::from_static("default-src 'self'"))
    }

    /// The current CSP, rebuilt if index.html changed since it was made.
    fn csp(&self) -> HeaderValue {
        let modified = std::fs::metadata(&self.index)
            .and_then(|m| m.modified())
            .ok();
        if let Ok(cached) = self.csp.read()
            && cached.0 == modified
        {
            return cached.1.clone();
        }
        let Ok(html) = std::fs::read_to_string(&self.index) else {
            return self
                .csp
                .read()
                .map(|c| c.1.clone())
                .unwrap_or_else(|_| HeaderValue::from_static("default-src 'self'"));
        };
        let fresh = Self::csp_for(&html, &self.sandbox_page, &self.extra_connect_src);
        if let Ok(mut cached) = self.csp.write() {
            *cached = (modified, fresh.clone());
        }
        fresh
    }
}

/// The sandbox host page, whose inline script the sandbox CSP allows.
pub const SANDBOX_PAGE: &str = "sandbox/host.html";

/// Builds the router that serves `config.dist` alone, without the API.
#[cfg_attr(not(test), allow(dead_code))]
pub fn router(config: &ServeConfig) -> Result<Router, ServeError> {
    router_with(config, Router::new())
}

/// Builds the router that serves `config.dist` plus `api` (routes under
/// `/api/`, each with its own guard), all with the security headers.
pub fn router_with(config: &ServeConfig, api: Router) -> Result<Router, ServeError> {
    let index = config.dist.join("index.html");
    let html = match std::fs::read_to_string(&index) {
        Ok(html) => html,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ServeError::MissingDist(config.dist.clone()));
        }
        Err(source) => {
            return Err(ServeError::Read {
                path: index,
                source,
            });
        }
    };
    if html.trim().is_empty() {
        return Err(ServeError::MissingDist(config.dist.clone()));
    }
    // A build without the sandbox page still serves; its sandbox CSP then
    // allows no script at all.
    let sandbox_hashes = match std::fs::read_to_string(config.dist.join(SANDBOX_PAGE)) {
        Ok(page) => inline_script_hashes(&page),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(source) => {
            return Err(ServeError::Read {
                path: config.dist.join(SANDBOX_PAGE),
                source,
            });
        }
    };
    let modified = std::fs::metadata(&index).and_then(|m| m.modified()).ok();
    let state = Arc::new(AppState {
        csp: std::sync::RwLock::new((
            modified,
            AppState::csp_for(
                &html,
                &config.dist.join(SANDBOX_PAGE),
                &config.extra_connect_src,
            ),
        )),
        index,
        sandbox_page: config.dist.join(SANDBOX_PAGE),
        extra_connect_src: config.extra_connect_src.clone(),
        sandbox_csp: HeaderValue::from_str(&sandbox_csp(&sandbox_hashes))
            .unwrap_or_else(|_| HeaderValue::from_static("sandbox; default-src 'none'")),
    });
    let files = ServeDir::new(&config.dist).append_index_html_on_directories(true);
    Ok(Router::new()
        .route("/healthz", get(healthz))
        .merge(api)
        .fallback_service(files)
        .layer(middleware::from_fn_with_state(state, security_headers)))
}

async fn healthz() -> impl IntoResponse {
    (
        [(header::CACHE_CONTROL, "no-store")],
        axum::Json(serde_json::json!({
            "status": "ok",
            "version": env!("CARGO_PKG_VERSION"),
        })),
    )
}

async fn security_headers(
    State(state): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response {
    // Headers follow the file actually served, however its path is spelled.
    let raw = req.uri().path().to_string();
    let path = served_path(&raw).unwrap_or(raw);
    let mut res = next.run(req).await;
    let status = res.status();
    let h = res.headers_mut();
    set(h, "x-content-type-options", "nosniff");
    set(h, "referrer-policy", "no-referrer");
    set(h, "cross-origin-opener-policy", "same-origin");
    set(h, "cross-origin-embedder-policy", "require-corp");
    // Links in replies are not looked up in DNS before anyone clicks: the
    // lookup alone would tell a name server what the page shows.
    set(h, "x-dns-prefetch-control", "off");
    if is_sandbox_path(&path) {
        // Sandbox pages load in opaque-origin iframes; to them our files
        // are cross-origin, so they must opt in to being embedded.
        set(h, "cross-origin-resource-policy", "cross-origin");
    } else {
        set(h, "cross-origin-resource-policy", "same-origin");
        set(h, "x-frame-options", "DENY");
    }
    if path == format!("/{SANDBOX_PAGE}") {
        h.insert(header::CONTENT_SECURITY_POLICY, state.sandbox_csp.clone());
        set(h, "permissions-policy", SANDBOX_PERMISSIONS);
    } else if is_sandbox_path(&path) {
        // Other sandbox pages (the MCP Apps host) carry their own fetch
        // policy in a meta tag, built for the app they hold; the header
        // still makes them an opaque origin even when opened directly.
        set(h, "content-security-policy", FRAME_SANDBOX_CSP);
        set(h, "permissions-policy", SANDBOX_PERMISSIONS);
    } else if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(header::CONTENT_SECURITY_POLICY, state.csp());
    }
    if is_api_path(&path) {
        // Answers of the API hold tokens and fetched pages: never cached.
        set(h, "cache-control", "no-store");
    } else if status.is_success() || status == StatusCode::NOT_MODIFIED {
        let cache = if is_hashed_asset(&path) {
            "public, max-age=31536000, immutable"
        } else {
            // The shell, the service worker and the manifest must be
            // revalidated so updates are seen.
            "no-cache"
        };
        set(h, "cache-control", cache);
    }
    if status == StatusCode::NOT_FOUND && res.headers().get(header::CONTENT_TYPE).is_none() {
        return not_found(&path);
    }
    res
}

/// The path of the file a request names, as the file service resolves it:
/// percent-decoded, repeated slashes and `.` parts dropped, a trailing
/// slash kept. `None` when it could not name a file (`..`, not UTF-8).
/// Policies are chosen on this, so `//sandbox/host.html` or
/// `/%73andbox/host.html` get the headers of `/sandbox/host.html`.
pub fn served_path(raw: &str) -> Option<String> {
    let decoded = percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .ok()?;
    let mut parts = Vec::new();
    for part in decoded.split('/') {
        match part {
            "" | "." => {}
            ".." => return None,
            p if p.contains('\\') || p.contains('\0') => return None,
            p => parts.push(p),
        }
    }
    let mut path = format!("/{}", parts.join("/"));
    if decoded.ends_with('/') && !parts.is_empty() {
        path.push('/');
    }
    Some(path)
}

fn not_found(path: &str) -> Response {
    let mut res = (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("Not found: {path}\n"),
    )
        .into_response();
    let h = res.headers_mut();
    set(h, "x-content-type-options", "nosniff");
    set(h, "cross-origin-opener-policy", "same-origin");
    set(h, "cross-origin-embedder-policy", "require-corp");
    set(h, "cross-origin-resource-policy", "same-origin");
    set(h, "x-dns-prefetch-control", "off");
    set(h, "cache-control", "no-store");
    res
}

fn set(h: &mut HeaderMap, name: &'static str, value: &'static str) {
    h.insert(name, HeaderValue::from_static(value));
}

fn is_api_path(path: &str) -> bool {
    // The MCP bridge and relay carry live sessions and tool results.
    path == "/api" || path.starts_with("/api/") || path.starts_with("/mcp/")
}

/// Pages under /sandbox/ get the sandbox's CSP and are meant to be framed
/// by the app.
fn is_sandbox_path(path: &str) -> bool {
    path.starts_with("/sandbox/")
}

/// The header policy of sandbox pages other than the code sandbox: an
/// opaque origin, framed only by Hearth.
pub const FRAME_SANDBOX_CSP: &str = "sandbox allow-scripts; frame-ancestors 'self'";

/// Powerful features the sandbox never needs.
const SANDBOX_PERMISSIONS: &str = "camera=(), microphone=(), geolocation=(), usb=(), serial=(), hid=(), payment=(), display-capture=()";

/// The CSP of sandbox pages. `'unsafe-eval'` lets the JavaScript runner
/// evaluate snippets and `'wasm-unsafe-eval'` lets Pyodide compile; both
/// only ever run inside this opaque origin, which has nothing to reach.
pub fn sandbox_csp(script_hashes: &[String]) -> String {
    let hashes: String = script_hashes.iter().map(|h| format!(" '{h}'")).collect();
    format!(
        "sandbox allow-scripts; \
         default-src 'none'; \
         script-src{hashes} blob: 'unsafe-eval' 'wasm-unsafe-eval'; \
         worker-src blob:; \
         connect-src 'none'; \
         img-src 'none'; \
         style-src 'none'; \
         font-src 'none'; \
         media-src 'none'; \
         object-src 'none'; \
         frame-src 'none'; \
         manifest-src 'none'; \
         base-uri 'none'; \
         form-action 'none'; \
         frame-ancestors 'self'"
    )
}

/// trunk names built assets `name-<hex hash>.ext` (or `_bg.wasm`), the hash
/// being a u64 in hex without leading zeros; such files never change, so
/// they can be cached forever.
pub fn is_hashed_asset(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    let stem = stem.strip_suffix("_bg").unwrap_or(stem);
    match stem.rsplit_once('-') {
        Some((_, hash)) => {
            (12..=16).contains(&hash.len()) && hash.bytes().all(|b| b.is_ascii_hexdigit())
        }
        None => false,
    }
}

/// The CSP of the app shell. `script_hashes` are the shell's inline
/// scripts and the code sandbox page's. `blob:` and `'unsafe-eval'` are
/// there for the sandbox, which inherits this policy: its workers are blob:
/// scripts that import blob: modules and evaluate snippets. The app itself
/// evaluates no strings, and markup injected into it still runs nothing
/// (no `'unsafe-inline'`, scripts only from the app or by hash).
/// `connect-src blob:` lets the model in this tab's workers load wllama's
/// WebAssembly from bytes the app fetched itself (a blob: URL only this
/// origin's code can make), so no worker needs the network once the
/// runtime is cached.
pub fn app_csp(script_hashes: &[String], extra_connect: &[String]) -> String {
    let hashes: String = script_hashes.iter().map(|h| format!(" '{h}'")).collect();
    let extra: String = extra_connect.iter().map(|o| format!(" {o}")).collect();
    format!(
        "default-src 'self'; \
         script-src 'self' 'wasm-unsafe-eval'{hashes} blob: 'unsafe-eval'; \
         style-src 'self' 'unsafe-inline'; \
         img-src 'self' data: blob:; \
         font-src 'self'; \
         connect-src 'self' blob: https: http://localhost:* http://127.0.0.1:*{extra}; \
         worker-src 'self' blob:; \
         frame-src 'self'; \
         manifest-src 'self'; \
         object-src 'none'; \
         base-uri 'none'; \
         form-action 'none'; \
         frame-ancestors 'none'"
    )
}

/// `sha256-…` sources for every inline `<script>` in `html`.
pub fn inline_script_hashes(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(open) = rest.find("<script") {
        let after_open = &rest[open..];
        let Some(tag_end) = after_open.find('>') else {
            break;
        };
        let tag = &after_open[..tag_end];
        let body_start = &after_open[tag_end + 1..];
        let Some(close) = body_start.find("</script>") else {
            break;
        };
        let body = &body_start[..close];
        if !tag.contains(" src=") && !body.trim().is_empty() {
            let digest = Sha256::digest(body.as_bytes());
            out.push(format!(
                "sha256-{}",
                base64::engine::general_purpose::STANDARD.encode(digest)
            ));
        }
        rest = &body_start[close..];
    }
    out
}

/// The default dist folder: `./dist` when it exists.
pub fn default_dist() -> PathBuf {
    Path::new("dist").to_path_buf()
}

/// Serves until Ctrl-C: the app, the network-tier API configured by `net`
/// (guarded for the address actually bound), and the MCP routes: the stdio
/// servers listed in `stdio_config` and the CORS relay, behind the same
/// guard.
pub async fn run(
    config: ServeConfig,
    net: NetConfig,
    host: String,
    port: u16,
    stdio_config: PathBuf,
) -> Result<(), Box<dyn std::error::Error>> {
    let token = ApiToken::load_or_create(&net.state_dir)?;
    let agents_dir = net.state_dir.clone();
    let listener = tokio::net::TcpListener::bind((host.as_str(), port)).await?;
    let addr = listener.local_addr()?;
    let token_for_link = token.clone();
    let guard = AppGuard::for_bound_address(addr, token);
    if !addr.ip().is_loopback() && !addr.ip().is_unspecified() {
        eprintln!(
            "note: the network-tier API answers only loopback connections, so it is off on {}",
            addr.ip()
        );
    }
    for allow in &net.allow_private {
        tracing::warn!(target: "hearth::net", destination = %allow, "fetching this non-public destination is allowed");
    }
    // The MCP relay connects under the same rules as web_fetch.
    let relay_client = ClientConfig {
        connect_timeout: net.connect_timeout,
        allow_private: net.allow_private.clone(),
        resolver: Arc::new(SystemResolver),
        tls: ClientConfig::default_tls(),
        user_agent: axum::http::HeaderValue::from_static(concat!(
            "Hearth/",
            env!("CARGO_PKG_VERSION"),
            " (MCP relay)"
        )),
    };
    let state = Arc::new(NetState::new(
        net,
        guard,
        Arc::new(SystemResolver),
        ClientConfig::default_tls(),
    ));
    let stdio = crate::stdio::routes::StdioState::start(&stdio_config);
    let relays = Arc::new(crate::relay::Relays::new(relay_client));
    let shown_host = if addr.ip().is_loopback() || addr.ip().is_unspecified() {
        "127.0.0.1".to_string()
    } else {
        addr.ip().to_string()
    };
    let origin = format!("http://{shown_host}:{}", addr.port());
    // Agents reach Hearth's skills at /mcp/server with their own
    // credentials; the tab does the work over its channel.
    let agents = Arc::new(crate::agents::AgentsState::new(
        crate::agents::registry::AgentStore::load(&agents_dir)?,
        crate::agents::authorization::ClientStore::load(&agents_dir)?,
        state.guard(),
        format!("{origin}{}", hearth_core::agents::wire::ENDPOINT_PATH),
        std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "hearth".into()),
    ));
    let api = crate::web::router(state.clone())
        .merge(crate::stdio::routes::router(stdio.clone(), state.guard()))
        .merge(crate::relay::routes::router(relays, state.guard()))
        .merge(crate::local::router(addr.port(), state.guard()))
        .merge(crate::agents::routes::router(agents.clone(), state.guard()))
        .merge(crate::agents::oauth::app_router(
            agents.clone(),
            state.guard(),
        ))
        .merge(crate::agents::oauth::router(agents.clone()))
        .merge(crate::agents::endpoint::router(agents));
    let app = router_with(&config, api)?;
    println!(
        "Hearth is running at {}",
        hearth_core::api::launch_url(&origin, token_for_link.as_str())
    );
    println!(
        "Open that link: it carries the key to this server. The browser keeps it, so {origin}/ is enough afterwards."
    );
    println!("Serving {}. Press Ctrl-C to stop.", config.dist.display());
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<std::net::SocketAddr>(),
    )
    .with_graceful_shutdown(async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await?;
    stdio.stop();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::Request;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    const INDEX: &str = "<!doctype html><html><head><link rel=stylesheet href=/style-0123456789abcdef.css>\
        <script type=\"module\">import init from '/hearth-0123456789abcdef.js';init();</script>\
        </head><body></body></html>";

    const SANDBOX_HTML: &str = "<!doctype html><script>parent.postMessage(1, '*')</script>";

    fn dist() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("index.html"), INDEX).unwrap();
        std::fs::write(
            dir.path().join("hearth-0123456789abcdef_bg.wasm"),
            b"\0asm\x01\0\0\0",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("hearth-0123456789abcdef.js"),
            "export default 1",
        )
        .unwrap();
        std::fs::write(dir.path().join("style-0123456789abcdef.css"), "body{}").unwrap();
        std::fs::write(dir.path().join("manifest.webmanifest"), "{}").unwrap();
        std::fs::create_dir(dir.path().join("sandbox")).unwrap();
        std::fs::write(dir.path().join("sandbox/runner.html"), "<p>").unwrap();
        std::fs::write(dir.path().join(SANDBOX_PAGE), SANDBOX_HTML).unwrap();
        dir
    }

    fn app(dir: &tempfile::TempDir) -> Router {
        router(&ServeConfig {
            dist: dir.path().to_path_buf(),
            extra_connect_src: vec![],
        })
        .unwrap()
    }

    async fn get(app: &Router, path: &str) -> Response {
        app.clone()
            .oneshot(Request::get(path).body(Body::empty()).unwrap())
            .await
            .unwrap()
    }

    fn header<'a>(res: &'a Response, name: &str) -> &'a str {
        res.headers()
            .get(name)
            .map(|v| v.to_str().unwrap())
            .unwrap_or("")
    }

    #[tokio::test]
    async fn mime_types_and_caching() {
        let dir = dist();
        let app = app(&dir);
        let cases = [
            ("/", "text/html", "no-cache"),
            ("/index.html", "text/html", "no-cache"),
            (
                "/hearth-0123456789abcdef_bg.wasm",
                "application/wasm",
                "public, max-age=31536000, immutable",
            ),
            (
                "/hearth-0123456789abcdef.js",
                "text/javascript",
                "public, max-age=31536000, immutable",
            ),
            (
                "/style-0123456789abcdef.css",
                "text/css",
                "public, max-age=31536000, immutable",
            ),
            (
                "/manifest.webmanifest",
                "application/manifest+json",
                "no-cache",
            ),
        ];
        for (path, mime, cache) in cases {
            let res = get(&app, path).await;
            assert_eq!(res.status(), StatusCode::OK, "{path}");
            assert!(
                header(&res, "content-type").starts_with(mime),
                "{path}: {}",
                header(&res, "content-type")
            );
            assert_eq!(header(&res, "cache-control"), cache, "{path}");
        }
    }

    #[tokio::test]
    async fn security_headers_on_every_response() {
        let dir = dist();
        let app = app(&dir);
        for path in [
            "/",
            "/hearth-0123456789abcdef_bg.wasm",
            "/healthz",
            "/missing.js",
        ] {
            let res = get(&app, path).await;
            assert_eq!(
                header(&res, "cross-origin-opener-policy"),
                "same-origin",
                "{path}"
            );
            assert_eq!(
                header(&res, "cross-origin-embedder-policy"),
                "require-corp",
                "{path}"
            );
            assert_eq!(header(&res, "x-content-type-options"), "nosniff", "{path}");
            assert_eq!(header(&res, "x-dns-prefetch-control"), "off", "{path}");
        }
        let res = get(&app, "/").await;
        let csp = header(&res, "content-security-policy");
        let shell_hash = inline_script_hashes(INDEX).remove(0);
        let sandbox_hash = inline_script_hashes(SANDBOX_HTML).remove(0);
        // The shell's bootstrap and the sandbox page's script by hash, and
        // what the sandbox's workers need, which the sandbox inherits.
        assert!(
            csp.contains(&format!(
                "script-src 'self' 'wasm-unsafe-eval' '{shell_hash}' '{sandbox_hash}' blob: 'unsafe-eval';"
            )),
            "{csp}"
        );
        // Injected markup still runs nothing: no inline script but by hash.
        let script_src = csp
            .split(';')
            .map(str::trim)
            .find(|d| d.starts_with("script-src "))
            .unwrap();
        assert!(!script_src.contains("'unsafe-inline'") && !script_src.contains('*'));
        assert!(csp.contains("object-src 'none'"));
        assert!(csp.contains("frame-ancestors 'none'"));
        assert_eq!(header(&res, "x-frame-options"), "DENY");

        let sandbox = get(&app, "/sandbox/runner.html").await;
        assert_eq!(
            header(&sandbox, "cross-origin-resource-policy"),
            "cross-origin"
        );
        assert_eq!(header(&sandbox, "x-frame-options"), "");
        // Not the code sandbox: an opaque origin framed only by Hearth, its
        // fetch policy left to the page's own meta tag.
        assert_eq!(
            header(&sandbox, "content-security-policy"),
            FRAME_SANDBOX_CSP
        );
    }

    #[tokio::test]
    async fn sandbox_pages_get_the_sandbox_policy() {
        let dir = dist();
        let app = app(&dir);
        let res = get(&app, "/sandbox/host.html").await;
        assert_eq!(res.status(), StatusCode::OK);
        let csp = header(&res, "content-security-policy").to_string();
        let hash = inline_script_hashes(SANDBOX_HTML).remove(0);
        let directives: Vec<&str> = csp.split(';').map(str::trim).collect();
        assert_eq!(
            directives,
            [
                "sandbox allow-scripts",
                "default-src 'none'",
                &format!("script-src '{hash}' blob: 'unsafe-eval' 'wasm-unsafe-eval'"),
                "worker-src blob:",
                "connect-src 'none'",
                "img-src 'none'",
                "style-src 'none'",
                "font-src 'none'",
                "media-src 'none'",
                "object-src 'none'",
                "frame-src 'none'",
                "manifest-src 'none'",
                "base-uri 'none'",
                "form-action 'none'",
                "frame-ancestors 'self'",
            ]
        );
        assert!(!csp.contains("allow-same-origin"));
        assert_eq!(header(&res, "cross-origin-embedder-policy"), "require-corp");
        assert!(header(&res, "permissions-policy").contains("camera=()"));

        // The app itself keeps its own policy.
        let app_csp = header(&get(&app, "/").await, "content-security-policy").to_string();
        assert!(app_csp.contains("frame-src 'self'"), "{app_csp}");
        assert!(!app_csp.contains("sandbox"), "{app_csp}");
    }

    #[tokio::test]
    async fn the_policy_follows_the_file_served_whatever_the_spelling() {
        let dir = dist();
        let app = app(&dir);
        let policy = |res: &Response| {
            (
                header(res, "content-security-policy").to_string(),
                header(res, "permissions-policy").to_string(),
                header(res, "x-frame-options").to_string(),
            )
        };
        let code_sandbox = policy(&get(&app, "/sandbox/host.html").await);
        let frame_sandbox = policy(&get(&app, "/sandbox/runner.html").await);
        assert!(code_sandbox.0.contains("connect-src 'none'"));
        // Every spelling that reaches the same file gets that file's policy,
        // or is not served at all.
        let cases = [
            ("//sandbox/host.html", &code_sandbox),
            ("/sandbox//host.html", &code_sandbox),
            ("/./sandbox/host.html", &code_sandbox),
            ("/sandbox/./host.html", &code_sandbox),
            ("/sandbox/%68ost.html", &code_sandbox),
            ("/%73andbox/host.html", &code_sandbox),
            ("/sandbox%2Fhost.html", &code_sandbox),
            ("/sandbox%2fhost.html", &code_sandbox),
            ("//sandbox/runner.html", &frame_sandbox),
            ("/%73andbox/runner.html", &frame_sandbox),
            ("/x/../sandbox/host.html", &code_sandbox),
            ("/sandbox/x/../host.html", &code_sandbox),
            ("/x/%2e%2e/sandbox/host.html", &code_sandbox),
            ("/sandbox%5chost.html", &code_sandbox),
        ];
        for (path, want) in cases {
            let res = get(&app, path).await;
            match res.status() {
                StatusCode::OK => assert_eq!(&policy(&res), want, "{path}"),
                StatusCode::NOT_FOUND => {}
                other => panic!("{path}: {other}"),
            }
        }
    }

    #[test]
    fn served_paths_are_what_the_file_service_resolves() {
        let cases = [
            ("/", Some("/")),
            ("/sandbox/host.html", Some("/sandbox/host.html")),
            ("//sandbox//host.html", Some("/sandbox/host.html")),
            ("/./sandbox/./host.html", Some("/sandbox/host.html")),
            ("/sandbox%2Fhost.html", Some("/sandbox/host.html")),
            ("/sandbox/", Some("/sandbox/")),
            ("/a/../sandbox/host.html", None),
            ("/%2e%2e/x", None),
            ("/%ff", None),
        ];
        for (raw, want) in cases {
            assert_eq!(served_path(raw).as_deref(), want, "{raw}");
        }
    }

    #[test]
    fn a_build_without_the_sandbox_page_allows_no_sandbox_script() {
        assert!(sandbox_csp(&[]).contains("script-src blob: 'unsafe-eval'"));
    }

    /// The sandbox page carries its policy in a meta tag that admits its one
    /// inline script by hash: edit the script and this says what the tag
    /// must now say. The policy is the header policy of sandbox pages,
    /// less what a meta tag cannot carry (sandbox, frame-ancestors: the
    /// frame's attribute and its being the app's srcdoc stand for those).
    #[test]
    fn the_sandbox_page_carries_the_sandbox_policy_for_its_own_script() {
        let page = include_str!("../../../public/sandbox/host.html");
        let hashes = inline_script_hashes(page);
        assert_eq!(hashes.len(), 1, "one inline script");
        let expected: Vec<String> = sandbox_csp(&hashes)
            .split(';')
            .map(str::trim)
            .filter(|d| !d.starts_with("sandbox") && !d.starts_with("frame-ancestors"))
            .map(str::to_string)
            .collect();
        let meta = format!(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
            expected.join("; ")
        );
        assert!(
            page.contains(&meta),
            "public/sandbox/host.html must carry\n{meta}\nbefore its script"
        );
        assert!(page.find(&meta) < page.find("<script>"));
        // The script checks the policy it finds against this same text.
        let template = expected.join("; ").replace(&hashes[0], "POLICY_HASH");
        assert!(
            page.contains(&format!("const POLICY_TEMPLATE = \"{template}\";")),
            "the script's POLICY_TEMPLATE must be\n{template}"
        );
    }

    #[tokio::test]
    async fn unknown_files_are_404_and_healthz_answers() {
        let dir = dist();
        let app = app(&dir);
        let res = get(&app, "/nope.wasm").await;
        assert_eq!(res.status(), StatusCode::NOT_FOUND);
        assert_eq!(header(&res, "cache-control"), "no-store");
        let body = res.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(&body[..], b"Not found: /nope.wasm\n");

        let res = get(&app, "/healthz").await;
        assert_eq!(res.status(), StatusCode::OK);
        let body = res.into_body().collect().await.unwrap().to_bytes();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["status"], "ok");
    }

    #[tokio::test]
    async fn a_rebuild_while_serving_refreshes_the_csp_hash() {
        let dir = dist();
        let app = app(&dir);
        let before = header(&get(&app, "/").await, "content-security-policy").to_string();
        // Make sure the file system records a different modification time.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let rebuilt = INDEX.replace("init();", "init(); /* new build */");
        std::fs::write(dir.path().join("index.html"), &rebuilt).unwrap();
        let file = std::fs::File::options()
            .write(true)
            .open(dir.path().join("index.html"))
            .unwrap();
        file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
            .unwrap();
        let after = header(&get(&app, "/").await, "content-security-policy").to_string();
        assert_ne!(before, after);
        assert!(
            after.contains(&inline_script_hashes(&rebuilt)[0]),
            "{after}"
        );
    }

    #[test]
    fn missing_or_empty_dist_says_how_to_build() {
        let empty = tempfile::tempdir().unwrap();
        let cfg = ServeConfig {
            dist: empty.path().to_path_buf(),
            extra_connect_src: vec![],
        };
        let err = router(&cfg).expect_err("must refuse");
        assert!(matches!(err, ServeError::MissingDist(_)));
        assert!(err.to_string().contains("cargo xtask build"), "{err}");

        std::fs::write(empty.path().join("index.html"), "  \n").unwrap();
        assert!(matches!(router(&cfg), Err(ServeError::MissingDist(_))));

        let cfg = ServeConfig {
            dist: empty.path().join("nope"),
            extra_connect_src: vec![],
        };
        assert!(matches!(router(&cfg), Err(ServeError::MissingDist(_))));
    }

    #[test]
    fn hashed_asset_names() {
        assert!(is_hashed_asset("/hearth-0123456789abcdef_bg.wasm"));
        assert!(is_hashed_asset("/style-deadbeefdeadbeef.css"));
        assert!(
            is_hashed_asset("/hearth-app-58b9da57418c420.js"),
            "15 digits: no leading zero"
        );
        assert!(!is_hashed_asset("/index.html"));
        assert!(!is_hashed_asset("/sw.js"));
        assert!(!is_hashed_asset("/icons/icon-192.png"));
        assert!(!is_hashed_asset("/hearth-xyz.js"));
    }

    #[tokio::test]
    async fn the_api_is_served_beside_the_app_with_its_headers() {
        use crate::web::testing::{Call, Harness, harness};
        use axum::http::Method;
        use serde_json::json;

        let dist = tempfile::tempdir().unwrap();
        std::fs::write(dist.path().join("index.html"), "<!doctype html><p>app</p>").unwrap();
        let h = harness(|_| {});
        let app = crate::serve::router_with(
            &crate::serve::ServeConfig {
                dist: dist.path().to_path_buf(),
                extra_connect_src: vec![],
            },
            h.app.clone(),
        )
        .unwrap();
        let served = Harness {
            app,
            token: h.token.clone(),
            dir: tempfile::tempdir().unwrap(),
        };
        let mut session = Call::new(&served, Method::GET, "/api/session");
        session.origin = None;
        let (status, headers, _) = session.send(&served).await;
        assert_eq!(status, StatusCode::OK);
        for (name, value) in [
            ("cache-control", "no-store"),
            ("cross-origin-resource-policy", "same-origin"),
            ("cross-origin-opener-policy", "same-origin"),
            ("x-content-type-options", "nosniff"),
        ] {
            assert_eq!(headers[name], value, "{name}");
        }
        let mut index = Call::new(&served, Method::GET, "/");
        index.token = None;
        let (status, headers, body) = index.send(&served).await;
        assert_eq!(
            (status, headers["cache-control"].to_str().unwrap()),
            (StatusCode::OK, "no-cache")
        );
        assert_eq!(body, json!("<!doctype html><p>app</p>"));
    }
}
