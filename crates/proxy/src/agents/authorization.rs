//! The authorization server's state and rules, for agents that connect
//! through MCP's authorization spec (OAuth 2.1 with PKCE): the clients
//! that registered (RFC 7591, kept in `oauth-clients.json`), the consents
//! waiting for the person in the Hearth tab, and the authorization codes
//! issued after Allow.
//!
//! A code is single-use, lives [`CODE_TTL_MS`], and is bound to its
//! client, its `redirect_uri`, its PKCE S256 challenge and the resource.
//! Allow connects an agent; the code carries that agent's credential to
//! the token endpoint, and nothing else ever does. A code that is not
//! exchanged in time, or is presented wrongly, or twice, revokes the agent
//! it was for: no one holds its credential, or someone tried to steal it.
//! The HTTP side is [`super::oauth`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

use base64::Engine;
use hearth_core::agents::consent::ConsentRequest;
use hearth_core::agents::{AgentClient, clean_name};
use hearth_core::mcp::oauth::s256;
use hearth_core::mcp::url::HttpUrl;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::api::token::{create_private_dir, replace_private};

/// The registered clients' file, next to `agents.json`.
pub const CLIENTS_FILE: &str = "oauth-clients.json";
/// How many registered clients are kept; registering one more forgets
/// the one registered longest ago.
pub const MAX_CLIENTS: usize = 100;
/// How long an authorization code may wait for its exchange.
pub const CODE_TTL_MS: u64 = 60_000;
/// How long a consent may wait for the person.
pub const CONSENT_TTL_MS: u64 = 10 * 60_000;
/// Consents waiting at once; more are refused until some finish.
pub const MAX_CONSENTS: usize = 20;
/// The most redirect URIs one client may register.
const MAX_REDIRECTS: usize = 10;
/// The longest redirect URI accepted.
const MAX_URI: usize = 2000;
/// The name a client that gives none is shown as.
const UNNAMED: &str = "An MCP client";

/// A client that registered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Client {
    pub client_id: String,
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    pub created_ms: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct ClientsFile {
    #[serde(default)]
    clients: Vec<Client>,
}

/// An RFC 7591 error: its `error` code and what to fix.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{description}")]
pub struct RegisterError {
    /// `invalid_redirect_uri` or `invalid_client_metadata`.
    pub error: &'static str,
    pub description: String,
}

fn metadata_error(description: impl Into<String>) -> RegisterError {
    RegisterError {
        error: "invalid_client_metadata",
        description: description.into(),
    }
}

/// Whether `uri` may receive authorization codes: `https`, or `http` to
/// this machine (a loopback listener of a native client); never with a
/// fragment. `Err` says why not.
pub fn check_redirect_uri(uri: &str) -> Result<HttpUrl, String> {
    if uri.len() > MAX_URI {
        return Err(format!(
            "a redirect URI may be at most {MAX_URI} characters"
        ));
    }
    let url = HttpUrl::parse(uri).map_err(|e| format!("redirect URI: {e}"))?;
    if url.fragment.is_some() {
        return Err(format!("the redirect URI {uri:?} has a fragment"));
    }
    let loopback = matches!(url.host.as_str(), "127.0.0.1" | "[::1]" | "localhost");
    match (url.scheme.as_str(), loopback) {
        ("https", _) | ("http", true) => Ok(url),
        _ => Err(format!(
            "the redirect URI {uri:?} must be https, or http to 127.0.0.1, [::1] or localhost"
        )),
    }
}

/// Whether `given` is a registered `redirect_uri`: the same string, or,
/// for a loopback IP literal, the same but for the port, which OAuth 2.1
/// (§8.4.2, after RFC 8252 §7.3) lets a native client choose when it
/// starts listening.
pub fn redirect_matches(registered: &str, given: &str) -> bool {
    if registered == given {
        return true;
    }
    let (Ok(r), Ok(g)) = (HttpUrl::parse(registered), HttpUrl::parse(given)) else {
        return false;
    };
    r.scheme == "http"
        && matches!(r.host.as_str(), "127.0.0.1" | "[::1]")
        && HttpUrl { port: g.port, ..r } == g
}

/// Reads an RFC 7591 registration request into a client with `client_id`.
/// Hearth's clients are public (PKCE, no secret): a request for another
/// token endpoint authentication method is answered with `none`, which
/// RFC 7591 §3.2.1 lets a server do.
pub fn read_registration(
    body: &Value,
    client_id: String,
    now_ms: u64,
) -> Result<Client, RegisterError> {
    let obj = body
        .as_object()
        .ok_or_else(|| metadata_error("the registration must be a JSON object"))?;
    let uris = obj
        .get("redirect_uris")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| RegisterError {
            error: "invalid_redirect_uri",
            description: "redirect_uris must list at least one redirect URI".into(),
        })?;
    if uris.len() > MAX_REDIRECTS {
        return Err(RegisterError {
            error: "invalid_redirect_uri",
            description: format!("at most {MAX_REDIRECTS} redirect URIs"),
        });
    }
    let mut redirect_uris = Vec::new();
    for uri in uris {
        let uri = uri.as_str().ok_or_else(|| RegisterError {
            error: "invalid_redirect_uri",
            description: "each redirect URI must be a string".into(),
        })?;
        check_redirect_uri(uri).map_err(|description| RegisterError {
            error: "invalid_redirect_uri",
            description,
        })?;
        redirect_uris.push(uri.to_string());
    }
    let listed = |field: &str, want: &str| -> Result<(), RegisterError> {
        match obj.get(field) {
            None | Some(Value::Null) => Ok(()),
            Some(Value::Array(items)) if items.iter().any(|v| v.as_str() == Some(want)) => Ok(()),
            Some(_) => Err(metadata_error(format!(
                "{field} must include {want:?}: Hearth issues authorization codes only"
            ))),
        }
    };
    listed("grant_types", "authorization_code")?;
    listed("response_types", "code")?;
    let client_name = match obj.get("client_name") {
        None | Some(Value::Null) => UNNAMED.to_string(),
        Some(Value::String(name)) => clean_name(name).ok_or_else(|| {
            metadata_error(format!(
                "client_name must be 1 to {} characters",
                hearth_core::agents::MAX_NAME
            ))
        })?,
        Some(_) => return Err(metadata_error("client_name must be a string")),
    };
    Ok(Client {
        client_id,
        client_name,
        redirect_uris,
        created_ms: now_ms,
    })
}

/// The registered clients.
pub struct ClientStore {
    path: PathBuf,
    clients: RwLock<Vec<Client>>,
}

impl ClientStore {
    /// Reads the clients in `dir` (none when the file is missing).
    pub fn load(dir: &Path) -> Result<Self, String> {
        let path = dir.join(CLIENTS_FILE);
        let file: ClientsFile = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                format!(
                    "{} is not a valid OAuth clients file ({e}); fix or remove it (agents then register again)",
                    path.display()
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => ClientsFile::default(),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        Ok(Self {
            path,
            clients: RwLock::new(file.clients),
        })
    }

    pub fn get(&self, client_id: &str) -> Option<Client> {
        self.clients
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(|c| c.client_id == client_id)
            .cloned()
    }

    pub fn len(&self) -> usize {
        self.clients.read().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Keeps `client`, forgetting the oldest past [`MAX_CLIENTS`].
    pub fn add(&self, client: Client) -> Result<(), String> {
        let mut clients = self.clients.write().unwrap_or_else(|p| p.into_inner());
        let mut next = clients.clone();
        next.push(client);
        if next.len() > MAX_CLIENTS {
            let extra = next.len() - MAX_CLIENTS;
            next.drain(..extra);
        }
        if let Some(dir) = self.path.parent() {
            create_private_dir(dir).map_err(|e| e.to_string())?;
        }
        let text = serde_json::to_string_pretty(&ClientsFile {
            clients: next.clone(),
        })
        .map_err(|e| e.to_string())?;
        replace_private(&self.path, &text).map_err(|e| e.to_string())?;
        *clients = next;
        Ok(())
    }
}

/// An authorization request that passed every check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthorizeRequest {
    pub client: Client,
    pub redirect_uri: String,
    pub state: Option<String>,
    pub code_challenge: String,
}

/// Why an authorization request was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum AuthorizeError {
    /// Shown on the page, never redirected: the client or its redirect
    /// URI cannot be trusted with an answer (RFC 6749 §4.1.2.1).
    #[error("{0}")]
    Page(String),
    /// Sent back to the client's redirect URI as `error`.
    #[error("{description}")]
    Redirect {
        redirect_uri: String,
        state: Option<String>,
        error: &'static str,
        description: String,
    },
}

/// Whether `s` is a PKCE verifier or S256 challenge's alphabet and length
/// (RFC 7636 §4.1: 43 to 128 unreserved characters).
fn pkce_text(s: &str) -> bool {
    (43..=128).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// Whether a `resource` parameter names this server's endpoint
/// (`resource`, canonical): compared canonically, as RFC 8707 asks.
pub fn same_resource(given: &str, resource: &str) -> bool {
    HttpUrl::parse(given).is_ok_and(|g| g.fragment.is_none() && g.canonical_resource() == resource)
}

/// Checks an authorization request's query (RFC 6749 §4.1.1 with OAuth
/// 2.1's PKCE): the client and its exact redirect URI first, so that an
/// error is only ever sent to a URI the client registered; then
/// `response_type=code`, an S256 challenge, and `resource` naming this
/// server when given.
pub fn check_authorize(
    params: &[(String, String)],
    clients: &ClientStore,
    resource: &str,
) -> Result<AuthorizeRequest, AuthorizeError> {
    let mut seen: HashMap<&str, &str> = HashMap::new();
    let mut repeated = None;
    for (k, v) in params {
        if seen.insert(k.as_str(), v.as_str()).is_some() {
            repeated = Some(k.clone());
        }
    }
    let one = |k: &str| seen.get(k).copied().filter(|v| !v.is_empty());
    let client_id = one("client_id").ok_or_else(|| {
        AuthorizeError::Page("the request names no client_id; start again from your agent".into())
    })?;
    let client = clients.get(client_id).ok_or_else(|| {
        AuthorizeError::Page(format!(
            "no client {client_id:?} is registered with this Hearth (it may have been forgotten, or Hearth's settings were reset); start again from your agent"
        ))
    })?;
    let redirect_uri = match one("redirect_uri") {
        Some(uri)
            if client
                .redirect_uris
                .iter()
                .any(|r| redirect_matches(r, uri)) =>
        {
            uri.to_string()
        }
        Some(uri) => {
            return Err(AuthorizeError::Page(format!(
                "the redirect URI {uri:?} is not one {} registered",
                client.client_name
            )));
        }
        // RFC 6749 §3.1.2.3: one registered URI may stand for an absent
        // parameter; OAuth 2.1 requires it whenever there are several.
        None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
        None => {
            return Err(AuthorizeError::Page(
                "the request names no redirect_uri, and the client registered several".into(),
            ));
        }
    };
    let state = one("state").map(str::to_string);
    let refuse = |error: &'static str, description: String| AuthorizeError::Redirect {
        redirect_uri: redirect_uri.clone(),
        state: state.clone(),
        error,
        description,
    };
    if let Some(k) = repeated {
        return Err(refuse(
            "invalid_request",
            format!("the parameter {k} was sent more than once"),
        ));
    }
    match one("response_type") {
        Some("code") => {}
        Some(other) => {
            return Err(refuse(
                "unsupported_response_type",
                format!("response_type {other:?} is not supported; use code"),
            ));
        }
        None => return Err(refuse("invalid_request", "response_type is missing".into())),
    }
    match one("code_challenge_method") {
        Some("S256") => {}
        Some(other) => {
            return Err(refuse(
                "invalid_request",
                format!("code_challenge_method {other:?} is refused: Hearth accepts S256 only"),
            ));
        }
        None => {
            return Err(refuse(
                "invalid_request",
                "code_challenge_method is missing: Hearth requires PKCE with S256".into(),
            ));
        }
    }
    let code_challenge = match one("code_challenge") {
        Some(c) if pkce_text(c) => c.to_string(),
        Some(_) => {
            return Err(refuse(
                "invalid_request",
                "code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~".into(),
            ));
        }
        None => {
            return Err(refuse(
                "invalid_request",
                "code_challenge is missing".into(),
            ));
        }
    };
    if let Some(given) = one("resource")
        && !same_resource(given, resource)
    {
        return Err(refuse(
            "invalid_target",
            format!("this server grants access to {resource} only, not {given:?}"),
        ));
    }
    Ok(AuthorizeRequest {
        client,
        redirect_uri,
        state,
        code_challenge,
    })
}

/// What the person decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Waiting,
    Allowed { code: String },
    Denied,
}

struct Consent {
    request: AuthorizeRequest,
    asked: ConsentRequest,
    /// The tab that was asked, when one was.
    tab: Option<String>,
    decision: Decision,
    created_ms: u64,
}

/// A code and what it was issued for.
struct Code {
    client_id: String,
    redirect_uri: String,
    code_challenge: String,
    agent: String,
    credential: String,
    expires_ms: u64,
}

#[derive(Default)]
struct Inner {
    consents: HashMap<String, Consent>,
    codes: HashMap<String, Code>,
    /// Codes already exchanged (or refused), and whose agent they were,
    /// until they would have expired: a second use revokes that agent.
    spent: HashMap<String, (String, u64)>,
}

/// Where a consent stands, for the page the browser waits on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Unknown, expired, or its answer already delivered.
    Gone,
    /// Waiting for the person; the tab asked, if any.
    Waiting {
        asked: Box<ConsentRequest>,
        tab: Option<String>,
    },
    /// Decided: where to send the browser now (the consent is over).
    Done { location: String },
}

/// Why a code was not exchanged.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// `invalid_grant`; the agent in the second field, if the code was
    /// issued, is revoked.
    #[error("{0}")]
    Grant(String, Option<String>),
}

/// Why a tab's answer was not taken.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// 404
    #[error("no connection request {0} is waiting; it may have expired or been answered")]
    Unknown(String),
    /// 409
    #[error("connection request {0} was sent to another Hearth tab")]
    OtherTab(String),
}

fn random(bytes: usize) -> Result<String, String> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| e.to_string())?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf))
}

/// A fresh, unguessable identifier (a client id, a consent id, a code).
pub fn new_id(prefix: &str) -> Result<String, String> {
    Ok(format!("{prefix}{}", random(24)?))
}

/// Consents and codes, in memory: a restart of `hearth serve` ends every
/// sign-in under way, and the agent starts again.
#[derive(Default)]
pub struct Grants {
    inner: Mutex<Inner>,
}

/// Equal in time independent of where the first difference is.
fn same_text(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

impl Grants {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Drops what expired; returns the agents whose code expired unused,
    /// to revoke.
    pub fn sweep(&self, now_ms: u64) -> Vec<String> {
        let mut inner = self.lock();
        inner
            .consents
            .retain(|_, c| now_ms.saturating_sub(c.created_ms) < CONSENT_TTL_MS);
        inner.spent.retain(|_, (_, until)| *until > now_ms);
        let expired: Vec<String> = inner
            .codes
            .iter()
            .filter(|(_, c)| c.expires_ms <= now_ms)
            .map(|(k, _)| k.clone())
            .collect();
        expired
            .into_iter()
            .filter_map(|k| inner.codes.remove(&k).map(|c| c.agent))
            .collect()
    }

    /// Starts a consent for `request`; its id.
    pub fn begin(&self, request: AuthorizeRequest, now_ms: u64) -> Result<String, String> {
        let id = new_id("consent-")?;
        let redirect_host = HttpUrl::parse(&request.redirect_uri)
            .map(|u| match u.port {
                Some(p) => format!("{}:{p}", u.host),
                None => u.host,
            })
            .unwrap_or_default();
        let asked = ConsentRequest {
            consent: id.clone(),
            client_name: request.client.client_name.clone(),
            client: hearth_core::agents::consent::client_kind(&request.client.client_name),
            redirect_host,
            shared: hearth_core::agents::consent::default_shared(),
        };
        let mut inner = self.lock();
        let waiting = inner
            .consents
            .values()
            .filter(|c| c.decision == Decision::Waiting)
            .count();
        if waiting >= MAX_CONSENTS {
            return Err(format!(
                "{MAX_CONSENTS} connection requests are already waiting for the person; answer or let them expire first"
            ));
        }
        inner.consents.insert(
            id.clone(),
            Consent {
                request,
                asked,
                tab: None,
                decision: Decision::Waiting,
                created_ms: now_ms,
            },
        );
        Ok(id)
    }

    /// Notes which tab was asked.
    pub fn asked(&self, consent: &str, tab: &str) {
        if let Some(c) = self.lock().consents.get_mut(consent) {
            c.tab = Some(tab.to_string());
        }
    }

    /// Where `consent` stands; a decided one is handed out once and ends.
    pub fn standing(&self, consent: &str, issuer: &str) -> Standing {
        let mut inner = self.lock();
        let Some(c) = inner.consents.get(consent) else {
            return Standing::Gone;
        };
        let (code, error) = match &c.decision {
            Decision::Waiting => {
                return Standing::Waiting {
                    asked: Box::new(c.asked.clone()),
                    tab: c.tab.clone(),
                };
            }
            Decision::Allowed { code } => (Some(code.clone()), None),
            Decision::Denied => (None, Some("access_denied")),
        };
        let Some(c) = inner.consents.remove(consent) else {
            return Standing::Gone;
        };
        let mut pairs: Vec<(&str, String)> = Vec::new();
        if let Some(code) = code {
            pairs.push(("code", code));
        }
        if let Some(error) = error {
            pairs.push(("error", error.into()));
            pairs.push((
                "error_description",
                "the person denied the connection in Hearth".into(),
            ));
        }
        if let Some(state) = c.request.state {
            pairs.push(("state", state));
        }
        pairs.push(("iss", issuer.to_string()));
        Standing::Done {
            location: hearth_core::mcp::url::with_query(&c.request.redirect_uri, &pairs),
        }
    }

    /// The request and tab of a waiting consent, to take an answer for.
    pub fn waiting(&self, consent: &str, tab: &str) -> Result<AuthorizeRequest, AnswerError> {
        let inner = self.lock();
        let c = inner
            .consents
            .get(consent)
            .filter(|c| c.decision == Decision::Waiting)
            .ok_or_else(|| AnswerError::Unknown(consent.to_string()))?;
        if c.tab.as_deref() != Some(tab) {
            return Err(AnswerError::OtherTab(consent.to_string()));
        }
        Ok(c.request.clone())
    }

    /// The person denied.
    pub fn deny(&self, consent: &str) {
        if let Some(c) = self.lock().consents.get_mut(consent) {
            c.decision = Decision::Denied;
        }
    }

    /// The person allowed, and `agent` was connected with `credential`:
    /// a code for it, bound to the request. `false` when the consent went
    /// away meanwhile (the caller revokes the agent).
    pub fn allow(
        &self,
        consent: &str,
        agent: &str,
        credential: String,
        now_ms: u64,
    ) -> Result<bool, String> {
        let code = new_id("hearth_code_")?;
        let mut inner = self.lock();
        let Some(c) = inner.consents.get_mut(consent) else {
            return Ok(false);
        };
        if c.decision != Decision::Waiting {
            return Ok(false);
        }
        c.decision = Decision::Allowed { code: code.clone() };
        let issued = Code {
            client_id: c.request.client.client_id.clone(),
            redirect_uri: c.request.redirect_uri.clone(),
            code_challenge: c.request.code_challenge.clone(),
            agent: agent.to_string(),
            credential,
            expires_ms: now_ms + CODE_TTL_MS,
        };
        inner.codes.insert(code, issued);
        Ok(true)
    }

    /// Exchanges a code (RFC 6749 §4.1.3 with PKCE, RFC 7636 §4.6): the
    /// code is spent whatever the outcome; the agent's credential when
    /// client, redirect URI and verifier all match.
    pub fn exchange(
        &self,
        code: &str,
        client_id: Option<&str>,
        redirect_uri: Option<&str>,
        verifier: Option<&str>,
        now_ms: u64,
    ) -> Result<(String, String), TokenError> {
        let mut inner = self.lock();
        let Some(issued) = inner.codes.remove(code) else {
            if let Some((agent, _)) = inner.spent.remove(code) {
                return Err(TokenError::Grant(
                    "this authorization code was already used; the agent it was issued for is revoked, start again".into(),
                    Some(agent),
                ));
            }
            return Err(TokenError::Grant(
                "the authorization code is unknown or expired; start again".into(),
                None,
            ));
        };
        inner.spent.insert(
            code.to_string(),
            (issued.agent.clone(), issued.expires_ms + CODE_TTL_MS),
        );
        drop(inner);
        let fail = |why: &str| {
            Err(TokenError::Grant(
                why.to_string(),
                Some(issued.agent.clone()),
            ))
        };
        if issued.expires_ms <= now_ms {
            return fail("the authorization code expired; start again");
        }
        if client_id != Some(issued.client_id.as_str()) {
            return fail("the code was issued to another client");
        }
        if redirect_uri != Some(issued.redirect_uri.as_str()) {
            return fail("redirect_uri is not the one the code was issued for");
        }
        let Some(verifier) = verifier.filter(|v| pkce_text(v)) else {
            return fail(
                "code_verifier is missing or not 43 to 128 characters of A-Z a-z 0-9 - . _ ~",
            );
        };
        if !same_text(&s256(verifier), &issued.code_challenge) {
            return fail("code_verifier does not match the code_challenge");
        }
        Ok((issued.agent, issued.credential))
    }

    /// How many consents are kept, decided or not.
    #[cfg(test)]
    pub fn count(&self) -> usize {
        self.lock().consents.len()
    }
}

/// The agent kind and name Allow connects.
pub fn agent_of(client: &Client) -> (String, AgentClient) {
    (
        client.client_name.clone(),
        hearth_core::agents::consent::client_kind(&client.client_name),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const RESOURCE: &str = "http://127.0.0.1:8080/mcp/server";

    fn store() -> (tempfile::TempDir, ClientStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = ClientStore::load(dir.path()).unwrap();
        store
            .add(Client {
                client_id: "c1".into(),
                client_name: "Claude Code".into(),
                redirect_uris: vec!["http://127.0.0.1:33418/callback".into()],
                created_ms: 1,
            })
            .unwrap();
        (dir, store)
    }

    fn query(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

    fn good() -> Vec<(&'static str, &'static str)> {
        vec![
            ("response_type", "code"),
            ("client_id", "c1"),
            ("redirect_uri", "http://127.0.0.1:33418/callback"),
            ("state", "xyz"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
            ("resource", RESOURCE),
        ]
    }

    fn with(change: (&'static str, &'static str)) -> Vec<(String, String)> {
        let mut q: Vec<_> = good().into_iter().filter(|(k, _)| *k != change.0).collect();
        if !change.1.is_empty() {
            q.push(change);
        }
        query(&q)
    }

    #[test]
    fn redirect_uris_are_https_or_loopback_without_a_fragment() {
        for ok in [
            "http://127.0.0.1:33418/callback",
            "http://localhost:9/cb",
            "http://[::1]/cb",
            "https://claude.ai/api/mcp/auth_callback",
        ] {
            assert!(check_redirect_uri(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://example.com/cb",
            "http://192.168.1.2/cb",
            "https://claude.ai/cb#x",
            "javascript:alert(1)",
            "cursor://callback",
            "http://user@127.0.0.1/cb",
        ] {
            assert!(check_redirect_uri(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_redirect_uri_matches_exactly_but_for_a_loopback_ips_port() {
        let cases = [
            ("http://127.0.0.1:1/cb", "http://127.0.0.1:1/cb", true),
            ("http://127.0.0.1:1/cb", "http://127.0.0.1:2/cb", true),
            ("http://[::1]:1/cb", "http://[::1]:7/cb", true),
            ("http://127.0.0.1:1/cb", "http://127.0.0.1:1/cb/", false),
            ("http://127.0.0.1:1/cb", "http://127.0.0.1:1/cb?x=1", false),
            ("http://127.0.0.1:1/cb", "http://localhost:1/cb", false),
            ("http://localhost:1/cb", "http://localhost:2/cb", false),
            ("https://a.example/cb", "https://a.example:8443/cb", false),
            ("https://a.example/cb", "https://b.example/cb", false),
        ];
        for (registered, given, want) in cases {
            assert_eq!(
                redirect_matches(registered, given),
                want,
                "{registered} {given}"
            );
        }
    }

    #[test]
    fn registration_keeps_what_hearth_needs_and_refuses_the_rest() {
        let c = read_registration(
            &json!({"client_name": " Claude Code ", "redirect_uris": ["http://127.0.0.1:5/cb"],
                    "grant_types": ["authorization_code", "refresh_token"],
                    "token_endpoint_auth_method": "client_secret_basic"}),
            "id".into(),
            7,
        )
        .unwrap();
        assert_eq!(
            c,
            Client {
                client_id: "id".into(),
                client_name: "Claude Code".into(),
                redirect_uris: vec!["http://127.0.0.1:5/cb".into()],
                created_ms: 7
            }
        );
        let refused = [
            (json!([]), "invalid_client_metadata"),
            (json!({}), "invalid_redirect_uri"),
            (json!({"redirect_uris": []}), "invalid_redirect_uri"),
            (
                json!({"redirect_uris": ["http://evil.example/cb"]}),
                "invalid_redirect_uri",
            ),
            (json!({"redirect_uris": [5]}), "invalid_redirect_uri"),
            (
                json!({"redirect_uris": ["http://127.0.0.1/cb"], "grant_types": ["client_credentials"]}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": ["http://127.0.0.1/cb"], "response_types": ["token"]}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": ["http://127.0.0.1/cb"], "client_name": ""}),
                "invalid_client_metadata",
            ),
        ];
        for (body, error) in refused {
            assert_eq!(
                read_registration(&body, "id".into(), 1).unwrap_err().error,
                error,
                "{body}"
            );
        }
    }

    #[test]
    fn authorize_checks_client_and_redirect_before_anything_is_redirected() {
        let (_dir, store) = store();
        let ok = check_authorize(&query(&good()), &store, RESOURCE).unwrap();
        assert_eq!(ok.code_challenge, CHALLENGE);
        assert_eq!(ok.state.as_deref(), Some("xyz"));
        // Never redirected: the client or the URI is not trusted.
        for q in [
            with(("client_id", "nobody")),
            with(("client_id", "")),
            with(("redirect_uri", "http://127.0.0.1:33418/other")),
            with(("redirect_uri", "https://evil.example/callback")),
        ] {
            assert!(
                matches!(
                    check_authorize(&q, &store, RESOURCE),
                    Err(AuthorizeError::Page(_))
                ),
                "{q:?}"
            );
        }
        // Redirected with the error and the state.
        let cases = [
            (with(("code_challenge_method", "plain")), "invalid_request"),
            (with(("code_challenge_method", "")), "invalid_request"),
            (with(("code_challenge", "")), "invalid_request"),
            (with(("code_challenge", "short")), "invalid_request"),
            (
                with(("response_type", "token")),
                "unsupported_response_type",
            ),
            (
                with(("resource", "http://127.0.0.1:8080/other")),
                "invalid_target",
            ),
            (
                with(("resource", "https://evil.example/mcp/server")),
                "invalid_target",
            ),
        ];
        for (q, want) in cases {
            match check_authorize(&q, &store, RESOURCE) {
                Err(AuthorizeError::Redirect { error, state, .. }) => {
                    assert_eq!((error, state.as_deref()), (want, Some("xyz")), "{q:?}")
                }
                other => panic!("{q:?}: {other:?}"),
            }
        }
        let mut twice = query(&good());
        twice.push(("state".into(), "again".into()));
        assert!(matches!(
            check_authorize(&twice, &store, RESOURCE),
            Err(AuthorizeError::Redirect {
                error: "invalid_request",
                ..
            })
        ));
        // Without `resource`, the code is for this server's one resource.
        assert!(check_authorize(&with(("resource", "")), &store, RESOURCE).is_ok());
        // RFC 8707: compared canonically.
        assert!(
            check_authorize(
                &with(("resource", "HTTP://127.0.0.1:8080/mcp/server/")),
                &store,
                RESOURCE
            )
            .is_ok()
        );
    }

    fn issued(grants: &Grants, store: &ClientStore) -> (String, String) {
        let request = check_authorize(&query(&good()), store, RESOURCE).unwrap();
        let consent = grants.begin(request, 0).unwrap();
        grants.asked(&consent, "tab-1");
        assert!(grants.waiting(&consent, "tab-1").is_ok());
        assert_eq!(
            grants.waiting(&consent, "tab-2"),
            Err(AnswerError::OtherTab(consent.clone()))
        );
        assert!(
            grants
                .allow(&consent, "agent-1", "hearth_agent_x".into(), 0)
                .unwrap()
        );
        let Standing::Done { location } = grants.standing(&consent, "http://127.0.0.1:8080/")
        else {
            panic!("not done");
        };
        assert_eq!(
            grants.standing(&consent, "i"),
            Standing::Gone,
            "delivered once"
        );
        let query = form_query(&location);
        assert_eq!(query["state"], "xyz");
        assert_eq!(query["iss"], "http://127.0.0.1:8080/");
        (consent, query["code"].clone())
    }

    fn form_query(location: &str) -> HashMap<String, String> {
        hearth_core::mcp::url::form_decode(location.split_once('?').unwrap().1)
            .into_iter()
            .collect()
    }

    /// A token request's client, redirect URI, verifier and time.
    type Exchange<'a> = (Option<&'a str>, Option<&'a str>, Option<&'a str>, u64);

    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const REDIRECT: &str = "http://127.0.0.1:33418/callback";

    #[test]
    fn a_code_is_exchanged_once_by_its_client_with_its_verifier() {
        let (_dir, store) = store();
        let grants = Grants::default();
        let (_, code) = issued(&grants, &store);
        assert_eq!(
            grants.exchange(&code, Some("c1"), Some(REDIRECT), Some(VERIFIER), 1),
            Ok(("agent-1".into(), "hearth_agent_x".into()))
        );
        // The second use revokes the agent.
        assert!(matches!(
            grants.exchange(&code, Some("c1"), Some(REDIRECT), Some(VERIFIER), 2),
            Err(TokenError::Grant(_, Some(a))) if a == "agent-1"
        ));
        assert!(matches!(
            grants.exchange("made-up", Some("c1"), Some(REDIRECT), Some(VERIFIER), 2),
            Err(TokenError::Grant(_, None))
        ));
    }

    #[test]
    fn a_wrong_client_redirect_verifier_or_late_exchange_fails_and_spends_the_code() {
        let (_dir, store) = store();
        let wrong_verifier = "x".repeat(43);
        let cases: [Exchange; 6] = [
            (Some("c2"), Some(REDIRECT), Some(VERIFIER), 1),
            (
                Some("c1"),
                Some("http://127.0.0.1:33418/other"),
                Some(VERIFIER),
                1,
            ),
            (Some("c1"), None, Some(VERIFIER), 1),
            (Some("c1"), Some(REDIRECT), Some(&wrong_verifier), 1),
            (Some("c1"), Some(REDIRECT), None, 1),
            (Some("c1"), Some(REDIRECT), Some(VERIFIER), CODE_TTL_MS),
        ];
        for (client, redirect, verifier, at) in cases {
            let grants = Grants::default();
            let (_, code) = issued(&grants, &store);
            assert!(
                matches!(
                    grants.exchange(&code, client, redirect, verifier, at),
                    Err(TokenError::Grant(_, Some(_)))
                ),
                "{client:?} {redirect:?} {verifier:?} {at}"
            );
            // Spent: even the right exchange fails now.
            assert!(
                grants
                    .exchange(&code, Some("c1"), Some(REDIRECT), Some(VERIFIER), 1)
                    .is_err()
            );
        }
    }

    #[test]
    fn unexchanged_codes_expire_and_name_their_agent_and_denial_redirects_with_access_denied() {
        let (_dir, store) = store();
        let grants = Grants::default();
        issued(&grants, &store);
        assert_eq!(grants.sweep(CODE_TTL_MS - 1), Vec::<String>::new());
        assert_eq!(grants.sweep(CODE_TTL_MS), vec!["agent-1".to_string()]);
        let request = check_authorize(&query(&good()), &store, RESOURCE).unwrap();
        let consent = grants.begin(request, 0).unwrap();
        grants.deny(&consent);
        let Standing::Done { location } = grants.standing(&consent, "iss") else {
            panic!()
        };
        let q = form_query(&location);
        assert_eq!(
            (q["error"].as_str(), q["state"].as_str()),
            ("access_denied", "xyz")
        );
        assert!(!q.contains_key("code"));
        // A consent nobody answers expires.
        let request = check_authorize(&query(&good()), &store, RESOURCE).unwrap();
        grants.begin(request, 0).unwrap();
        grants.sweep(CONSENT_TTL_MS);
        assert_eq!(grants.count(), 0);
    }
}
