//! MCP's calls to `hearth serve`: the list of stdio servers and the CORS
//! relay's registrations. They go through the app's one API client
//! ([`crate::web::ProxyClient`]: one session, one key, one retry); this
//! module only puts its failures in MCP's words.

use std::rc::Rc;

use hearth_core::builtin::web::WebFailure;
use hearth_core::mcp::hosted::{
    RelayDescription, RelayRegistration, STDIO_LIST_PATH, StdioListing, relay_registration_path,
};
use hearth_core::mcp::skills::ServerId;

use crate::web::ProxyClient;

/// `hearth serve`, seen from MCP.
pub struct HearthProxy {
    client: Rc<ProxyClient>,
}

/// The app's origin, e.g. `http://127.0.0.1:8080`.
pub fn app_origin() -> String {
    web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default()
}

/// What stdio servers and the relay are called in a failure's words.
pub const SUBJECT: &str = "stdio servers and the relay";

/// A failure of the API in MCP's words: offline, the words every
/// network-tier call uses; no answer means the stdio servers and the relay
/// are not there at all.
pub fn failure_text(f: &WebFailure) -> String {
    match f {
        WebFailure::Offline => f.message(SUBJECT),
        WebFailure::ProxyUnreachable => {
            "Hearth's local server is not answering. stdio servers and the relay work only when \
             Hearth is opened from `hearth serve`"
                .into()
        }
        WebFailure::Proxy { message, .. } => message.clone(),
        WebFailure::UnexpectedAnswer { status } => {
            format!("Hearth's local server answered HTTP {status} unexpectedly")
        }
    }
}

impl HearthProxy {
    /// MCP's side of `client`, the client the web skills use too.
    pub fn new(client: Rc<ProxyClient>) -> Self {
        Self { client }
    }

    /// The key header and the key, when this browser was opened from a
    /// launch link, for the relay's streamed requests. Without it calls
    /// still go out, so `hearth serve` can say what to do (and a static
    /// host that it is not there).
    pub fn key_header(&self) -> Option<(String, String)> {
        self.client.key_header()
    }

    /// The stdio servers of the local config file.
    pub async fn stdio_servers(&self) -> Result<StdioListing, String> {
        self.client
            .get(STDIO_LIST_PATH)
            .await
            .map_err(|f| failure_text(&f))
    }

    /// Points server `id`'s relay at `url`.
    pub async fn register_relay(
        &self,
        id: &ServerId,
        url: &str,
        local: bool,
    ) -> Result<RelayDescription, String> {
        let registration = RelayRegistration {
            url: url.into(),
            local,
        };
        self.client
            .put(relay_registration_path(id), &registration)
            .await
            .map_err(|f| failure_text(&f))
    }

    /// Forgets server `id`'s relay.
    pub async fn remove_relay(&self, id: &ServerId) -> Result<(), String> {
        self.client
            .delete::<serde_json::Value>(relay_registration_path(id))
            .await
            .map(|_| ())
            .map_err(|f| failure_text(&f))
    }
}
