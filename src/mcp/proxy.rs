//! Talking to `hearth serve` for MCP: the key from the launch link
//! (`crate::launch`) on every call, the list of stdio servers, and the
//! CORS relay's registrations. Same origin only.

use hearth_core::mcp::hosted::{
    RelayDescription, RelayRegistration, STDIO_LIST_PATH, StdioListing, relay_registration_path,
};
use hearth_core::mcp::skills::ServerId;
use hearth_core::web::{ApiErrorCode, TOKEN_HEADER, WebFailure};
use serde::Serialize;
use serde::de::DeserializeOwned;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Headers, RequestCache, RequestCredentials, RequestInit, Response};

/// The token and the header it goes in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub header: String,
    pub token: String,
}

/// `hearth serve`, seen from the app.
#[derive(Default)]
pub struct HearthProxy;

/// The app's origin, e.g. `http://127.0.0.1:8080`.
pub fn app_origin() -> String {
    web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default()
}

fn failure_text(f: &WebFailure) -> String {
    match f {
        WebFailure::Offline | WebFailure::ProxyUnreachable => {
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

async fn send(
    method: &str,
    path: &str,
    token: Option<&Token>,
    body: Option<String>,
) -> Result<(u16, String), String> {
    let init = RequestInit::new();
    init.set_method(method);
    init.set_credentials(RequestCredentials::SameOrigin);
    init.set_cache(RequestCache::NoStore);
    let headers = Headers::new().map_err(|e| format!("{e:?}"))?;
    if let Some(t) = token {
        headers
            .set(&t.header, &t.token)
            .map_err(|e| format!("{e:?}"))?;
    }
    if let Some(b) = &body {
        headers
            .set("Content-Type", "application/json")
            .map_err(|e| format!("{e:?}"))?;
        init.set_body(&b.into());
    }
    init.set_headers(&headers);
    let window = web_sys::window().ok_or("no window")?;
    let response: Response = JsFuture::from(window.fetch_with_str_and_init(path, &init))
        .await
        .map_err(|_| failure_text(&WebFailure::ProxyUnreachable))?
        .dyn_into()
        .map_err(|e| format!("{e:?}"))?;
    let status = response.status();
    let text = JsFuture::from(response.text().map_err(|e| format!("{e:?}"))?)
        .await
        .map_err(|e| format!("{e:?}"))?
        .as_string()
        .unwrap_or_default();
    Ok((status, text))
}

impl HearthProxy {
    pub fn new() -> Self {
        Self
    }

    /// The key, when this browser was opened from a launch link. Without
    /// it calls still go out, so `hearth serve` can say what to do (and a
    /// static host that it is not there).
    pub fn token(&self) -> Option<Token> {
        crate::launch::stored().map(|token| Token {
            header: TOKEN_HEADER.to_string(),
            token,
        })
    }

    async fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        path: &str,
        body: Option<String>,
    ) -> Result<T, String> {
        let token = self.token();
        let (status, text) = send(method, path, token.as_ref(), body.clone()).await?;
        match hearth_core::web::read_answer::<T>(status, &text) {
            Ok(v) => Ok(v),
            Err(f)
                if matches!(
                    f.code(),
                    Some(ApiErrorCode::MissingToken | ApiErrorCode::BadToken)
                ) && self.token() != token =>
            {
                // Another tab stored a newer key meanwhile: once more.
                let (status, text) = send(method, path, self.token().as_ref(), body).await?;
                hearth_core::web::read_answer::<T>(status, &text).map_err(|f| failure_text(&f))
            }
            Err(f) => Err(failure_text(&f)),
        }
    }

    async fn call_json<T: DeserializeOwned, B: Serialize>(
        &self,
        method: &str,
        path: &str,
        body: &B,
    ) -> Result<T, String> {
        let text = serde_json::to_string(body).map_err(|e| e.to_string())?;
        self.call(method, path, Some(text)).await
    }

    /// The stdio servers of the local config file.
    pub async fn stdio_servers(&self) -> Result<StdioListing, String> {
        self.call("GET", STDIO_LIST_PATH, None).await
    }

    /// Points server `id`'s relay at `url`.
    pub async fn register_relay(
        &self,
        id: &ServerId,
        url: &str,
        local: bool,
    ) -> Result<RelayDescription, String> {
        self.call_json(
            "PUT",
            &relay_registration_path(id),
            &RelayRegistration {
                url: url.into(),
                local,
            },
        )
        .await
    }

    /// Forgets server `id`'s relay.
    pub async fn remove_relay(&self, id: &ServerId) -> Result<(), String> {
        self.call::<serde_json::Value>("DELETE", &relay_registration_path(id), None)
            .await
            .map(|_| ())
    }
}
