//! OAuth 2.1 for MCP servers, as pure functions: parsing `WWW-Authenticate`,
//! building and checking the discovery URLs and metadata documents
//! (RFC 9728, RFC 8414, OpenID Discovery), PKCE S256, choosing how to
//! register (pre-registered, client ID metadata document, dynamic
//! registration), the `resource` parameter (RFC 8707), the authorization
//! response's `state` and `iss` checks (RFC 9207), token requests and
//! responses, scope selection and step-up, and when to refresh.
//!
//! Nothing here does I/O or draws random numbers: randomness comes in as
//! bytes, time as milliseconds. `authorize.rs` drives these over a
//! transport.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::url::{HttpUrl, UrlError, form_decode, form_encode, with_query};

/// Why authorization could not go on. Shown to the person as is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("invalid URL: {0}")]
    BadUrl(#[from] UrlError),
    #[error("{0} must use HTTPS")]
    Insecure(String),
    #[error(
        "the server publishes no protected resource metadata, so Hearth cannot find where to sign in"
    )]
    NoResourceMetadata,
    #[error(
        "the server's metadata names the resource {resource}, not {server}; refusing to sign in for another resource"
    )]
    ResourceMismatch { resource: String, server: String },
    #[error("the server's metadata names no authorization server")]
    NoAuthorizationServer,
    #[error("no metadata could be found for the authorization server {0}")]
    NoAuthorizationServerMetadata(String),
    #[error(
        "the authorization server's metadata claims to be {found}, but was fetched for {expected}"
    )]
    IssuerMismatch { expected: String, found: String },
    #[error("malformed {what}: {detail}")]
    Malformed { what: String, detail: String },
    #[error(
        "the authorization server does not support PKCE with S256, so signing in would be unsafe"
    )]
    PkceUnsupported,
    #[error(
        "the authorization server offers no way to register Hearth; enter a client ID for it in the server's settings"
    )]
    NoRegistration,
    #[error("registering with the authorization server failed: {0}")]
    RegistrationFailed(String),
    #[error("the sign-in answer does not belong to this sign-in (state mismatch)")]
    StateMismatch,
    #[error("the sign-in answer lacks the issuer the authorization server promised to send")]
    IssMissing,
    #[error("the sign-in answer came from {found}, not from {expected}")]
    IssMismatch { expected: String, found: String },
    #[error("sign-in was refused: {error}{}", .description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Denied {
        error: String,
        description: Option<String>,
    },
    #[error("the sign-in answer carries no authorization code")]
    NoCode,
    #[error("the token request failed: {0}")]
    TokenRequestFailed(String),
    #[error("the server keeps refusing the token after {0} attempts")]
    RetryLimit(u32),
    #[error("sign-in was cancelled")]
    Cancelled,
    #[error("could not reach the authorization server: {0}")]
    Unreachable(String),
}

/// A `Bearer` challenge from `WWW-Authenticate` (RFC 6750, RFC 9728).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BearerChallenge {
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
    pub realm: Option<String>,
}

impl BearerChallenge {
    /// A 403 that more scope would fix.
    pub fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// One challenge of any scheme.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenge {
    pub scheme: String,
    pub params: Vec<(String, String)>,
}

/// Parses every challenge in one or more `WWW-Authenticate` values.
pub fn parse_challenges(values: &[&str]) -> Vec<Challenge> {
    let mut out = Vec::new();
    for value in values {
        let mut p = Cursor {
            s: value.as_bytes(),
            i: 0,
        };
        loop {
            p.skip(|b| b == b' ' || b == b'\t' || b == b',');
            let Some(scheme) = p.token() else { break };
            let mut challenge = Challenge {
                scheme,
                params: Vec::new(),
            };
            loop {
                let save = p.i;
                p.skip(|b| b == b' ' || b == b'\t');
                let Some(name) = p.token() else {
                    p.i = save;
                    break;
                };
                p.skip(|b| b == b' ' || b == b'\t');
                if p.peek() != Some(b'=') {
                    p.i = save;
                    break;
                }
                p.i += 1;
                p.skip(|b| b == b' ' || b == b'\t');
                let value = if p.peek() == Some(b'"') {
                    p.quoted()
                } else {
                    p.token().unwrap_or_default()
                };
                challenge.params.push((name.to_ascii_lowercase(), value));
                p.skip(|b| b == b' ' || b == b'\t');
                if p.peek() == Some(b',') {
                    p.i += 1;
                } else {
                    break;
                }
            }
            out.push(challenge);
            if p.i >= p.s.len() {
                break;
            }
            // Skip anything unparseable up to the next comma.
            if p.peek().is_some_and(|b| b != b',' && b != b' ') {
                while p.peek().is_some_and(|b| b != b',') {
                    p.i += 1;
                }
            }
        }
    }
    out
}

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn skip(&mut self, f: impl Fn(u8) -> bool) {
        while self.peek().is_some_and(&f) {
            self.i += 1;
        }
    }
    fn token(&mut self) -> Option<String> {
        let start = self.i;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~/:".contains(&b))
        {
            self.i += 1;
        }
        (self.i > start).then(|| String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }
    fn quoted(&mut self) -> String {
        self.i += 1;
        let mut out = Vec::new();
        while let Some(b) = self.peek() {
            self.i += 1;
            match b {
                b'"' => break,
                b'\\' => {
                    if let Some(n) = self.peek() {
                        out.push(n);
                        self.i += 1;
                    }
                }
                b => out.push(b),
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// The `Bearer` challenge among `WWW-Authenticate` values, if any.
pub fn bearer_challenge(values: &[&str]) -> Option<BearerChallenge> {
    let c = parse_challenges(values)
        .into_iter()
        .find(|c| c.scheme.eq_ignore_ascii_case("bearer"))?;
    let get = |k: &str| {
        c.params
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    Some(BearerChallenge {
        resource_metadata: get("resource_metadata"),
        scope: get("scope"),
        error: get("error"),
        error_description: get("error_description"),
        realm: get("realm"),
    })
}

/// Where to look for the protected resource metadata, in order: the URL
/// from the challenge if there is one; otherwise the path-specific
/// well-known URL, then the root one.
pub fn resource_metadata_urls(
    server_url: &str,
    from_challenge: Option<&str>,
) -> Result<Vec<String>, AuthError> {
    if let Some(url) = from_challenge {
        let parsed = HttpUrl::parse(url)?;
        let server = HttpUrl::parse(server_url)?;
        // A metadata URL on another origin could point Hearth at an
        // attacker's authorization server; only follow it on the server's
        // own origin, or over HTTPS.
        if parsed.origin() != server.origin() && parsed.scheme != "https" {
            return Err(AuthError::Insecure(url.into()));
        }
        return Ok(vec![url.to_string()]);
    }
    let server = HttpUrl::parse(server_url)?;
    let origin = server.origin();
    let path = server.trimmed_path();
    let mut urls = Vec::new();
    if !path.is_empty() {
        urls.push(format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ));
    }
    urls.push(format!("{origin}/.well-known/oauth-protected-resource"));
    Ok(urls)
}

/// RFC 9728 protected resource metadata.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResourceMetadata {
    pub resource: String,
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
}

pub fn parse_resource_metadata(body: &[u8]) -> Result<ResourceMetadata, AuthError> {
    serde_json::from_slice(body).map_err(|e| AuthError::Malformed {
        what: "protected resource metadata".into(),
        detail: e.to_string(),
    })
}

/// Checks that the metadata is about the server being signed in to: same
/// origin, and the server's URL at or under the named resource. Returns the
/// `resource` value to send in authorization and token requests.
pub fn check_resource(metadata: &ResourceMetadata, server_url: &str) -> Result<String, AuthError> {
    let server = HttpUrl::parse(server_url)?;
    let mismatch = || AuthError::ResourceMismatch {
        resource: metadata.resource.clone(),
        server: server.canonical_resource(),
    };
    let resource = HttpUrl::parse(&metadata.resource).map_err(|_| mismatch())?;
    if resource.origin() != server.origin() || resource.fragment.is_some() {
        return Err(mismatch());
    }
    let base = format!("{}/", resource.trimmed_path());
    let path = format!("{}/", server.trimmed_path());
    if !path.starts_with(&base) {
        return Err(mismatch());
    }
    Ok(resource.canonical_resource())
}

/// Whether tokens issued for `resource` may be sent to `server_url`: the
/// server is that resource or under it (same origin, path inside). Tokens
/// kept for one server never go to another, however the saved state and
/// the server's address came to disagree (a restored backup, an edit).
pub fn resource_covers(resource: &str, server_url: &str) -> bool {
    let (Ok(resource), Ok(server)) = (HttpUrl::parse(resource), HttpUrl::parse(server_url)) else {
        return false;
    };
    let base = format!("{}/", resource.trimmed_path());
    let path = format!("{}/", server.trimmed_path());
    resource.origin() == server.origin() && resource.fragment.is_none() && path.starts_with(&base)
}

/// Where to look for an authorization server's metadata, in the order the
/// MCP spec gives (RFC 8414 path insertion, then OpenID Discovery).
pub fn authorization_server_metadata_urls(issuer: &str) -> Result<Vec<String>, AuthError> {
    let url = HttpUrl::parse(issuer)?;
    let origin = url.origin();
    let path = url.trimmed_path();
    Ok(if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    })
}

/// RFC 8414 / OpenID provider metadata: the fields MCP uses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuthorizationServerMetadata {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
}

/// Parses and validates metadata fetched for `issuer`: the document must
/// name exactly that issuer (RFC 8414 §3.3), use secure endpoints, and
/// support PKCE with S256.
pub fn parse_authorization_server_metadata(
    body: &[u8],
    issuer: &str,
) -> Result<AuthorizationServerMetadata, AuthError> {
    let meta: AuthorizationServerMetadata =
        serde_json::from_slice(body).map_err(|e| AuthError::Malformed {
            what: "authorization server metadata".into(),
            detail: e.to_string(),
        })?;
    if meta.issuer != issuer {
        return Err(AuthError::IssuerMismatch {
            expected: issuer.into(),
            found: meta.issuer,
        });
    }
    for endpoint in [&meta.authorization_endpoint, &meta.token_endpoint]
        .into_iter()
        .chain(meta.registration_endpoint.as_ref())
    {
        if !HttpUrl::parse(endpoint)?.is_secure_or_loopback() {
            return Err(AuthError::Insecure(endpoint.clone()));
        }
    }
    let s256 = meta
        .code_challenge_methods_supported
        .as_ref()
        .is_some_and(|m| m.iter().any(|x| x == "S256"));
    if !s256 {
        return Err(AuthError::PkceUnsupported);
    }
    Ok(meta)
}

/// The endpoints a 2025-03-26 server without any metadata is assumed to
/// have, under its own origin. That revision required PKCE of every client,
/// so S256 is assumed too.
pub fn default_metadata(origin: &str) -> AuthorizationServerMetadata {
    AuthorizationServerMetadata {
        issuer: origin.into(),
        authorization_endpoint: format!("{origin}/authorize"),
        token_endpoint: format!("{origin}/token"),
        registration_endpoint: Some(format!("{origin}/register")),
        scopes_supported: None,
        grant_types_supported: None,
        token_endpoint_auth_methods_supported: None,
        code_challenge_methods_supported: Some(vec!["S256".into()]),
        client_id_metadata_document_supported: false,
        authorization_response_iss_parameter_supported: false,
    }
}

/// A PKCE verifier and its S256 challenge.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pkce {
    pub verifier: String,
    pub challenge: String,
}

impl Pkce {
    /// From 32 random bytes: a 43-character verifier (RFC 7636 §4.1).
    pub fn from_random(bytes: &[u8; 32]) -> Pkce {
        let verifier = URL_SAFE_NO_PAD.encode(bytes);
        let challenge = s256(&verifier);
        Pkce {
            verifier,
            challenge,
        }
    }
}

/// `BASE64URL(SHA256(ASCII(verifier)))`.
pub fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// A `state` value from 16 random bytes.
pub fn state_from_random(bytes: &[u8; 16]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Scopes for a first authorization: the challenge's, else everything the
/// resource lists, else none (the parameter is omitted). `offline_access`
/// is added when the authorization server offers it and a refresh token is
/// wanted.
pub fn initial_scope(
    challenge: Option<&BearerChallenge>,
    resource: Option<&ResourceMetadata>,
    server: &AuthorizationServerMetadata,
    want_refresh: bool,
) -> Option<String> {
    let mut scopes: Vec<String> = match challenge.and_then(|c| c.scope.as_deref()) {
        Some(s) => split_scope(s),
        None => resource
            .and_then(|r| r.scopes_supported.clone())
            .unwrap_or_default(),
    };
    let offers_offline = server
        .scopes_supported
        .as_ref()
        .is_some_and(|s| s.iter().any(|x| x == "offline_access"));
    if want_refresh
        && offers_offline
        && !scopes.is_empty()
        && !scopes.iter().any(|s| s == "offline_access")
    {
        scopes.push("offline_access".into());
    }
    join_scope(scopes)
}

/// Scopes for step-up: what was asked before plus what the challenge asks
/// now, so earlier permissions are kept.
pub fn step_up_scope(previous: Option<&str>, challenged: Option<&str>) -> Option<String> {
    let mut scopes = previous.map(split_scope).unwrap_or_default();
    for s in challenged.map(split_scope).unwrap_or_default() {
        if !scopes.contains(&s) {
            scopes.push(s);
        }
    }
    join_scope(scopes)
}

/// Whether `wanted` asks for anything `have` lacks.
pub fn scope_grows(have: Option<&str>, wanted: Option<&str>) -> bool {
    let have = have.map(split_scope).unwrap_or_default();
    wanted
        .map(split_scope)
        .unwrap_or_default()
        .iter()
        .any(|s| !have.contains(s))
}

fn split_scope(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in s.split_whitespace() {
        if !out.iter().any(|p| p == part) {
            out.push(part.to_string());
        }
    }
    out
}

fn join_scope(scopes: Vec<String>) -> Option<String> {
    (!scopes.is_empty()).then(|| scopes.join(" "))
}

/// A registered client, bound to the authorization server that issued it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientCredentials {
    /// The authorization server's issuer identifier these belong to.
    pub issuer: String,
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// `none`, `client_secret_basic` or `client_secret_post`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
}

/// How to get a client ID from this authorization server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegistrationPlan {
    /// Credentials the person entered for this issuer.
    Preregistered(ClientCredentials),
    /// Use the metadata document URL as the client ID.
    MetadataDocument { client_id: String },
    /// Register at this endpoint (RFC 7591; deprecated, the fallback).
    Dynamic { endpoint: String },
}

/// The spec's order: pre-registered, then a client ID metadata document if
/// the server supports it, then dynamic registration.
pub fn plan_registration(
    server: &AuthorizationServerMetadata,
    preregistered: Option<&ClientCredentials>,
    metadata_document_url: Option<&str>,
) -> Result<RegistrationPlan, AuthError> {
    // Credentials entered without an issuer bind to the first server they
    // are used with (the caller keeps them from a second one).
    if let Some(c) = preregistered.filter(|c| c.issuer == server.issuer || c.issuer.is_empty()) {
        return Ok(RegistrationPlan::Preregistered(ClientCredentials {
            issuer: server.issuer.clone(),
            ..c.clone()
        }));
    }
    if let Some(url) =
        metadata_document_url.filter(|_| server.client_id_metadata_document_supported)
    {
        return Ok(RegistrationPlan::MetadataDocument {
            client_id: url.into(),
        });
    }
    match &server.registration_endpoint {
        Some(endpoint) => Ok(RegistrationPlan::Dynamic {
            endpoint: endpoint.clone(),
        }),
        None => Err(AuthError::NoRegistration),
    }
}

/// What Hearth says about itself when registering or in its metadata
/// document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientMetadata {
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    /// `native` for loopback-hosted apps and CLIs, `web` otherwise.
    pub application_type: String,
    pub want_refresh: bool,
}

impl ClientMetadata {
    /// The RFC 7591 registration body (and the metadata document body,
    /// given a `client_id`). A public client: no secret is asked for.
    pub fn to_json(&self, client_id: Option<&str>, scope: Option<&str>) -> Value {
        let mut grant_types = vec!["authorization_code"];
        if self.want_refresh {
            grant_types.push("refresh_token");
        }
        let mut body = json!({
            "client_name": self.client_name,
            "redirect_uris": self.redirect_uris,
            "grant_types": grant_types,
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": self.application_type,
        });
        if let Some(id) = client_id {
            body["client_id"] = id.into();
        }
        if let Some(scope) = scope {
            body["scope"] = scope.into();
        }
        body
    }
}

/// Reads a dynamic registration response into credentials for `issuer`.
pub fn parse_registration(body: &[u8], issuer: &str) -> Result<ClientCredentials, AuthError> {
    #[derive(Deserialize)]
    struct Raw {
        client_id: String,
        #[serde(default)]
        client_secret: Option<String>,
        #[serde(default)]
        token_endpoint_auth_method: Option<String>,
    }
    let raw: Raw = serde_json::from_slice(body).map_err(|e| AuthError::Malformed {
        what: "registration response".into(),
        detail: e.to_string(),
    })?;
    Ok(ClientCredentials {
        issuer: issuer.into(),
        client_id: raw.client_id,
        client_secret: raw.client_secret,
        token_endpoint_auth_method: raw.token_endpoint_auth_method,
    })
}

/// Everything needed to finish a sign-in once the browser comes back.
/// Plain data, so the app can keep it across a popup.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingAuthorization {
    pub issuer: String,
    pub iss_parameter_supported: bool,
    pub token_endpoint: String,
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    pub client: ClientCredentials,
    pub redirect_uri: String,
    pub resource: String,
    pub scope: Option<String>,
    pub state: String,
    pub pkce: Pkce,
}

impl PendingAuthorization {
    /// The URL to open in the browser.
    pub fn authorization_url(&self, authorization_endpoint: &str) -> String {
        let mut pairs: Vec<(&str, &str)> = vec![
            ("response_type", "code"),
            ("client_id", &self.client.client_id),
            ("redirect_uri", &self.redirect_uri),
            ("code_challenge", &self.pkce.challenge),
            ("code_challenge_method", "S256"),
            ("state", &self.state),
            ("resource", &self.resource),
        ];
        if let Some(scope) = &self.scope {
            pairs.push(("scope", scope));
        }
        with_query(authorization_endpoint, &pairs)
    }

    /// Checks the redirect's query (or whole URL) and returns the code.
    /// Order matters: the issuer is checked before anything in the answer
    /// — even an error — is believed (RFC 9207 §2.4).
    pub fn accept_callback(&self, callback: &str) -> Result<String, AuthError> {
        let query = match callback.split_once('?') {
            Some((_, q)) => q.split('#').next().unwrap_or(""),
            None => callback.trim_start_matches('?'),
        };
        let params = form_decode(query);
        let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        match (self.iss_parameter_supported, get("iss")) {
            (_, Some(iss)) if iss != self.issuer => {
                return Err(AuthError::IssMismatch {
                    expected: self.issuer.clone(),
                    found: iss,
                });
            }
            (true, None) => return Err(AuthError::IssMissing),
            _ => {}
        }
        if get("state").as_deref() != Some(self.state.as_str()) {
            return Err(AuthError::StateMismatch);
        }
        if let Some(error) = get("error") {
            return Err(AuthError::Denied {
                error,
                description: get("error_description"),
            });
        }
        get("code")
            .filter(|c| !c.is_empty())
            .ok_or(AuthError::NoCode)
    }
}

/// A token request: extra headers and the form body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenRequest {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// The grant being redeemed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Grant<'a> {
    AuthorizationCode {
        code: &'a str,
        verifier: &'a str,
        redirect_uri: &'a str,
    },
    Refresh {
        refresh_token: &'a str,
    },
}

/// How the client authenticates at the token endpoint: what it registered
/// with if known, else the best the server supports for what it holds.
pub fn token_auth_method(client: &ClientCredentials, supported: Option<&[String]>) -> &'static str {
    let has = |m: &str| supported.is_none_or(|s| s.iter().any(|x| x == m));
    match (
        client.token_endpoint_auth_method.as_deref(),
        &client.client_secret,
    ) {
        (Some("client_secret_basic"), Some(_)) => "client_secret_basic",
        (Some("client_secret_post"), Some(_)) => "client_secret_post",
        (Some("none"), _) | (_, None) => "none",
        (_, Some(_)) if has("client_secret_basic") => "client_secret_basic",
        (_, Some(_)) if has("client_secret_post") => "client_secret_post",
        (_, Some(_)) => "none",
    }
}

pub fn token_request(
    token_endpoint: &str,
    client: &ClientCredentials,
    auth_methods_supported: Option<&[String]>,
    grant: &Grant<'_>,
    resource: &str,
    scope: Option<&str>,
) -> TokenRequest {
    let mut pairs: Vec<(String, String)> = Vec::new();
    match grant {
        Grant::AuthorizationCode {
            code,
            verifier,
            redirect_uri,
        } => {
            pairs.push(("grant_type".into(), "authorization_code".into()));
            pairs.push(("code".into(), (*code).into()));
            pairs.push(("code_verifier".into(), (*verifier).into()));
            pairs.push(("redirect_uri".into(), (*redirect_uri).into()));
        }
        Grant::Refresh { refresh_token } => {
            pairs.push(("grant_type".into(), "refresh_token".into()));
            pairs.push(("refresh_token".into(), (*refresh_token).into()));
        }
    }
    pairs.push(("resource".into(), resource.into()));
    if let Some(scope) = scope {
        pairs.push(("scope".into(), scope.into()));
    }
    let mut headers = vec![
        (
            "Content-Type".to_string(),
            "application/x-www-form-urlencoded".to_string(),
        ),
        ("Accept".to_string(), "application/json".to_string()),
    ];
    match token_auth_method(client, auth_methods_supported) {
        "client_secret_basic" => {
            let id = form_encode(&[("", client.client_id.as_str())]);
            let secret = form_encode(&[("", client.client_secret.as_deref().unwrap_or(""))]);
            let pair = format!("{}:{}", &id[1..], &secret[1..]);
            headers.push((
                "Authorization".into(),
                format!("Basic {}", STANDARD.encode(pair)),
            ));
        }
        "client_secret_post" => {
            pairs.push(("client_id".into(), client.client_id.clone()));
            pairs.push((
                "client_secret".into(),
                client.client_secret.clone().unwrap_or_default(),
            ));
        }
        _ => pairs.push(("client_id".into(), client.client_id.clone())),
    }
    TokenRequest {
        url: token_endpoint.into(),
        headers,
        body: form_encode(&pairs),
    }
}

/// Tokens for one server, with their expiry as wall-clock milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TokenSet {
    pub access_token: String,
    pub token_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<f64>,
    /// What was granted: the response's `scope`, else what was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// Reads a token response. `previous_refresh` is kept when a refresh
/// response does not rotate the refresh token.
pub fn parse_token_response(
    status: u16,
    body: &[u8],
    now_ms: f64,
    asked_scope: Option<&str>,
    previous_refresh: Option<&str>,
) -> Result<TokenSet, AuthError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        AuthError::TokenRequestFailed(format!("HTTP {status}, unreadable body: {e}"))
    })?;
    if !(200..300).contains(&status) || value.get("error").is_some() {
        let error = value
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("unknown_error");
        let desc = value
            .get("error_description")
            .and_then(Value::as_str)
            .map(|d| format!(": {d}"))
            .unwrap_or_default();
        return Err(AuthError::TokenRequestFailed(format!(
            "HTTP {status}, {error}{desc}"
        )));
    }
    let access_token = value
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| AuthError::TokenRequestFailed("no access_token in the response".into()))?;
    let token_type = value
        .get("token_type")
        .and_then(Value::as_str)
        .unwrap_or("Bearer");
    if !token_type.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::TokenRequestFailed(format!(
            "unsupported token type {token_type}"
        )));
    }
    let expires_at_ms = value
        .get("expires_in")
        .and_then(Value::as_f64)
        .map(|s| now_ms + s * 1000.0);
    Ok(TokenSet {
        access_token: access_token.into(),
        token_type: "Bearer".into(),
        refresh_token: value
            .get("refresh_token")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| previous_refresh.map(str::to_string)),
        expires_at_ms,
        scope: value
            .get("scope")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| asked_scope.map(str::to_string)),
    })
}

/// What to do with a stored token before using it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenAction {
    Use,
    /// Expired or about to: refresh it first.
    Refresh,
    /// Expired and not refreshable: sign in again.
    Reauthorize,
}

/// Tokens within this margin of expiry are refreshed ahead of time.
pub const REFRESH_MARGIN_MS: f64 = 60_000.0;

pub fn token_action(token: &TokenSet, now_ms: f64) -> TokenAction {
    match token.expires_at_ms {
        Some(at) if now_ms + REFRESH_MARGIN_MS >= at => {
            if token.refresh_token.is_some() {
                TokenAction::Refresh
            } else {
                TokenAction::Reauthorize
            }
        }
        Some(_) | None => TokenAction::Use,
    }
}

/// Everything remembered about authorization for one MCP server: client
/// registrations keyed by issuer (never reused across issuers), and the
/// current tokens with the issuer that minted them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AuthState {
    #[serde(default)]
    pub clients: BTreeMap<String, ClientCredentials>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenSet>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_issuer: Option<String>,
    /// Where tokens are refreshed, from the issuer's metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// The `resource` the tokens were requested for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn www_authenticate_values_are_parsed() {
        let table: Vec<(Vec<&str>, Option<BearerChallenge>)> = vec![
            (
                vec![
                    r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read""#,
                ],
                Some(BearerChallenge {
                    resource_metadata: Some(
                        "https://mcp.example.com/.well-known/oauth-protected-resource".into(),
                    ),
                    scope: Some("files:read".into()),
                    ..Default::default()
                }),
            ),
            (
                vec![
                    r#"Basic realm="x", Bearer error="insufficient_scope", scope="a b", error_description="need \"b\"""#,
                ],
                Some(BearerChallenge {
                    error: Some("insufficient_scope".into()),
                    scope: Some("a b".into()),
                    error_description: Some("need \"b\"".into()),
                    ..Default::default()
                }),
            ),
            (vec!["Basic realm=\"only basic\""], None),
            (
                vec!["bearer realm=mcp,scope=x"],
                Some(BearerChallenge {
                    realm: Some("mcp".into()),
                    scope: Some("x".into()),
                    ..Default::default()
                }),
            ),
            (vec!["Bearer"], Some(BearerChallenge::default())),
            (
                vec!["", "Bearer scope=\"unterminated"],
                Some(BearerChallenge {
                    scope: Some("unterminated".into()),
                    ..Default::default()
                }),
            ),
        ];
        for (input, want) in table {
            assert_eq!(bearer_challenge(&input), want, "input: {input:?}");
        }
    }

    #[test]
    fn discovery_urls_follow_the_spec_order() {
        assert_eq!(
            resource_metadata_urls("https://example.com/public/mcp", None).unwrap(),
            vec![
                "https://example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://example.com/.well-known/oauth-protected-resource",
            ]
        );
        assert_eq!(
            resource_metadata_urls("https://example.com", None).unwrap(),
            vec!["https://example.com/.well-known/oauth-protected-resource"]
        );
        assert_eq!(
            resource_metadata_urls(
                "http://localhost:3000/mcp",
                Some("http://localhost:3000/.well-known/oauth-protected-resource/mcp")
            )
            .unwrap(),
            vec!["http://localhost:3000/.well-known/oauth-protected-resource/mcp"]
        );
        assert_eq!(
            resource_metadata_urls("http://localhost:3000/mcp", Some("http://evil.example/prm")),
            Err(AuthError::Insecure("http://evil.example/prm".into()))
        );
        assert_eq!(
            authorization_server_metadata_urls("https://auth.example.com/tenant1").unwrap(),
            vec![
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            authorization_server_metadata_urls("https://auth.example.com").unwrap(),
            vec![
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn the_resource_must_be_the_server_or_above_it() {
        let meta = |r: &str| ResourceMetadata {
            resource: r.into(),
            authorization_servers: vec![],
            scopes_supported: None,
        };
        let server = "http://localhost:3000/mcp";
        let table: Vec<(&str, Result<String, AuthError>)> = vec![
            (
                "http://localhost:3000/mcp",
                Ok("http://localhost:3000/mcp".into()),
            ),
            (
                "http://LOCALHOST:3000/mcp/",
                Ok("http://localhost:3000/mcp".into()),
            ),
            ("http://localhost:3000", Ok("http://localhost:3000".into())),
            (
                "https://evil.example.com/mcp",
                Err(AuthError::ResourceMismatch {
                    resource: "https://evil.example.com/mcp".into(),
                    server: "http://localhost:3000/mcp".into(),
                }),
            ),
            (
                "http://localhost:3000/mcp-other",
                Err(AuthError::ResourceMismatch {
                    resource: "http://localhost:3000/mcp-other".into(),
                    server: "http://localhost:3000/mcp".into(),
                }),
            ),
            (
                "http://localhost:4000/mcp",
                Err(AuthError::ResourceMismatch {
                    resource: "http://localhost:4000/mcp".into(),
                    server: "http://localhost:3000/mcp".into(),
                }),
            ),
        ];
        for (resource, want) in table {
            assert_eq!(
                check_resource(&meta(resource), server),
                want,
                "resource: {resource}"
            );
        }
    }

    fn as_meta(extra: Value) -> Vec<u8> {
        let mut m = json!({
            "issuer": "https://auth.example.com",
            "authorization_endpoint": "https://auth.example.com/authorize",
            "token_endpoint": "https://auth.example.com/token",
            "code_challenge_methods_supported": ["S256"],
        });
        for (k, v) in extra.as_object().unwrap() {
            if v.is_null() {
                m.as_object_mut().unwrap().remove(k);
            } else {
                m[k] = v.clone();
            }
        }
        serde_json::to_vec(&m).unwrap()
    }

    #[test]
    fn authorization_server_metadata_is_validated() {
        let issuer = "https://auth.example.com";
        assert!(parse_authorization_server_metadata(&as_meta(json!({})), issuer).is_ok());
        let table: Vec<(Value, AuthError)> = vec![
            (
                json!({"issuer": "https://honest.example"}),
                AuthError::IssuerMismatch {
                    expected: issuer.into(),
                    found: "https://honest.example".into(),
                },
            ),
            (
                json!({"issuer": "https://auth.example.com/"}),
                AuthError::IssuerMismatch {
                    expected: issuer.into(),
                    found: "https://auth.example.com/".into(),
                },
            ),
            (
                json!({"code_challenge_methods_supported": null}),
                AuthError::PkceUnsupported,
            ),
            (
                json!({"code_challenge_methods_supported": ["plain"]}),
                AuthError::PkceUnsupported,
            ),
            (
                json!({"token_endpoint": "http://auth.example.com/token"}),
                AuthError::Insecure("http://auth.example.com/token".into()),
            ),
        ];
        for (extra, want) in table {
            assert_eq!(
                parse_authorization_server_metadata(&as_meta(extra.clone()), issuer),
                Err(want),
                "extra: {extra}"
            );
        }
    }

    #[test]
    fn pkce_matches_the_rfc_7636_example() {
        // RFC 7636 Appendix B.
        let bytes: [u8; 32] = [
            116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212,
            37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121,
        ];
        assert_eq!(
            Pkce::from_random(&bytes),
            Pkce {
                verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk".into(),
                challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into(),
            }
        );
    }

    fn server_meta(
        scopes: Option<Vec<&str>>,
        cimd: bool,
        registration: bool,
    ) -> AuthorizationServerMetadata {
        AuthorizationServerMetadata {
            issuer: "https://auth.example.com".into(),
            authorization_endpoint: "https://auth.example.com/authorize".into(),
            token_endpoint: "https://auth.example.com/token".into(),
            registration_endpoint: registration.then(|| "https://auth.example.com/register".into()),
            scopes_supported: scopes.map(|s| s.into_iter().map(String::from).collect()),
            grant_types_supported: None,
            token_endpoint_auth_methods_supported: None,
            code_challenge_methods_supported: Some(vec!["S256".into()]),
            client_id_metadata_document_supported: cimd,
            authorization_response_iss_parameter_supported: true,
        }
    }

    #[test]
    fn scopes_are_selected_and_stepped_up() {
        let challenge = BearerChallenge {
            scope: Some("mcp:basic".into()),
            ..Default::default()
        };
        let prm = ResourceMetadata {
            resource: "https://x".into(),
            authorization_servers: vec![],
            scopes_supported: Some(vec!["mcp:read".into(), "mcp:write".into()]),
        };
        let plain = server_meta(None, false, true);
        let offline = server_meta(Some(vec!["mcp:basic", "offline_access"]), false, true);
        assert_eq!(
            initial_scope(Some(&challenge), Some(&prm), &plain, true),
            Some("mcp:basic".into())
        );
        assert_eq!(
            initial_scope(None, Some(&prm), &plain, true),
            Some("mcp:read mcp:write".into())
        );
        assert_eq!(initial_scope(None, None, &plain, true), None);
        assert_eq!(
            initial_scope(Some(&challenge), None, &offline, true),
            Some("mcp:basic offline_access".into())
        );
        assert_eq!(
            initial_scope(Some(&challenge), None, &offline, false),
            Some("mcp:basic".into())
        );
        assert_eq!(
            step_up_scope(Some("mcp:basic"), Some("mcp:write mcp:basic")),
            Some("mcp:basic mcp:write".into())
        );
        assert!(scope_grows(Some("mcp:basic"), Some("mcp:write")));
        assert!(!scope_grows(Some("mcp:admin x"), Some("mcp:admin")));
    }

    #[test]
    fn registration_follows_the_priority_order() {
        let pre = ClientCredentials {
            issuer: "https://auth.example.com".into(),
            client_id: "pre".into(),
            client_secret: Some("s".into()),
            token_endpoint_auth_method: None,
        };
        let other_issuer = ClientCredentials {
            issuer: "https://old-auth.example.com".into(),
            ..pre.clone()
        };
        let unbound = ClientCredentials {
            issuer: String::new(),
            ..pre.clone()
        };
        let cimd = "https://hearth.example/client.json";
        let table: Vec<(
            AuthorizationServerMetadata,
            Option<&ClientCredentials>,
            Result<RegistrationPlan, AuthError>,
        )> = vec![
            (
                server_meta(None, true, true),
                Some(&pre),
                Ok(RegistrationPlan::Preregistered(pre.clone())),
            ),
            (
                server_meta(None, true, true),
                Some(&other_issuer),
                Ok(RegistrationPlan::MetadataDocument {
                    client_id: cimd.into(),
                }),
            ),
            (
                server_meta(None, true, true),
                Some(&unbound),
                Ok(RegistrationPlan::Preregistered(pre.clone())),
            ),
            (
                server_meta(None, false, true),
                None,
                Ok(RegistrationPlan::Dynamic {
                    endpoint: "https://auth.example.com/register".into(),
                }),
            ),
            (
                server_meta(None, false, false),
                None,
                Err(AuthError::NoRegistration),
            ),
        ];
        for (meta, pre, want) in table {
            assert_eq!(plan_registration(&meta, pre, Some(cimd)), want);
        }
    }

    fn pending(iss_supported: bool) -> PendingAuthorization {
        PendingAuthorization {
            issuer: "http://localhost:4000".into(),
            iss_parameter_supported: iss_supported,
            token_endpoint: "http://localhost:4000/token".into(),
            token_endpoint_auth_methods_supported: None,
            client: ClientCredentials {
                issuer: "http://localhost:4000".into(),
                client_id: "c".into(),
                client_secret: None,
                token_endpoint_auth_method: None,
            },
            redirect_uri: "http://localhost:3000/callback".into(),
            resource: "http://localhost:3000/mcp".into(),
            scope: Some("mcp:basic".into()),
            state: "st".into(),
            pkce: Pkce {
                verifier: "v".into(),
                challenge: "c".into(),
            },
        }
    }

    #[test]
    fn authorization_url_carries_pkce_state_and_resource() {
        assert_eq!(
            pending(true).authorization_url("http://localhost:4000/authorize"),
            "http://localhost:4000/authorize?response_type=code&client_id=c&redirect_uri=http%3A%2F%2Flocalhost%3A3000%2Fcallback&code_challenge=c&code_challenge_method=S256&state=st&resource=http%3A%2F%2Flocalhost%3A3000%2Fmcp&scope=mcp%3Abasic"
        );
    }

    #[test]
    fn callbacks_are_checked_per_rfc_9207() {
        let cb = |q: &str| format!("http://localhost:3000/callback?{q}");
        let iss = "iss=http%3A%2F%2Flocalhost%3A4000";
        let table: Vec<(bool, String, Result<String, AuthError>)> = vec![
            (
                true,
                cb(&format!("code=abc&state=st&{iss}")),
                Ok("abc".into()),
            ),
            (true, cb("code=abc&state=st"), Err(AuthError::IssMissing)),
            (false, cb("code=abc&state=st"), Ok("abc".into())),
            (
                false,
                cb("code=abc&state=st&iss=https%3A%2F%2Fevil.example.com"),
                Err(AuthError::IssMismatch {
                    expected: "http://localhost:4000".into(),
                    found: "https://evil.example.com".into(),
                }),
            ),
            (
                true,
                cb("code=abc&state=st&iss=http%3A%2F%2Flocalhost%3A4000%2F"),
                Err(AuthError::IssMismatch {
                    expected: "http://localhost:4000".into(),
                    found: "http://localhost:4000/".into(),
                }),
            ),
            (
                true,
                cb(
                    "error=access_denied&error_description=evil&state=st&iss=https%3A%2F%2Fevil.example.com",
                ),
                Err(AuthError::IssMismatch {
                    expected: "http://localhost:4000".into(),
                    found: "https://evil.example.com".into(),
                }),
            ),
            (
                true,
                cb(&format!("error=access_denied&state=st&{iss}")),
                Err(AuthError::Denied {
                    error: "access_denied".into(),
                    description: None,
                }),
            ),
            (
                true,
                cb(&format!("code=abc&state=other&{iss}")),
                Err(AuthError::StateMismatch),
            ),
            (true, cb(&format!("state=st&{iss}")), Err(AuthError::NoCode)),
        ];
        for (supported, url, want) in table {
            assert_eq!(pending(supported).accept_callback(&url), want, "{url}");
        }
    }

    #[test]
    fn token_requests_authenticate_as_registered() {
        let client = |secret: Option<&str>, method: Option<&str>| ClientCredentials {
            issuer: "i".into(),
            client_id: "id:1".into(),
            client_secret: secret.map(String::from),
            token_endpoint_auth_method: method.map(String::from),
        };
        let grant = Grant::AuthorizationCode {
            code: "abc",
            verifier: "ver",
            redirect_uri: "http://localhost/cb",
        };
        let basic = token_request(
            "https://t",
            &client(Some("s p"), Some("client_secret_basic")),
            None,
            &grant,
            "https://r",
            None,
        );
        assert_eq!(
            basic.headers[2],
            (
                "Authorization".to_string(),
                format!("Basic {}", STANDARD.encode("id%3A1:s+p"))
            )
        );
        assert_eq!(
            basic.body,
            "grant_type=authorization_code&code=abc&code_verifier=ver&redirect_uri=http%3A%2F%2Flocalhost%2Fcb&resource=https%3A%2F%2Fr"
        );
        let post = token_request(
            "https://t",
            &client(Some("sec"), None),
            Some(&["client_secret_post".to_string()]),
            &Grant::Refresh {
                refresh_token: "rt",
            },
            "https://r",
            Some("a b"),
        );
        assert_eq!(post.headers.len(), 2);
        assert_eq!(
            post.body,
            "grant_type=refresh_token&refresh_token=rt&resource=https%3A%2F%2Fr&scope=a+b&client_id=id%3A1&client_secret=sec"
        );
        let none = token_request(
            "https://t",
            &client(Some("unused"), None),
            Some(&["none".to_string()]),
            &grant,
            "https://r",
            None,
        );
        assert!(none.body.ends_with("&client_id=id%3A1"));
        assert_eq!(none.headers.len(), 2);
    }

    #[test]
    fn token_responses_and_refresh_decisions() {
        let ok = parse_token_response(
            200,
            br#"{"access_token":"at","token_type":"bearer","expires_in":3600}"#,
            1_000.0,
            Some("mcp:basic"),
            Some("old-rt"),
        )
        .unwrap();
        assert_eq!(
            ok,
            TokenSet {
                access_token: "at".into(),
                token_type: "Bearer".into(),
                refresh_token: Some("old-rt".into()),
                expires_at_ms: Some(3_601_000.0),
                scope: Some("mcp:basic".into()),
            }
        );
        assert_eq!(token_action(&ok, 2_000.0), TokenAction::Use);
        assert_eq!(token_action(&ok, 3_550_000.0), TokenAction::Refresh);
        let no_refresh = TokenSet {
            refresh_token: None,
            ..ok.clone()
        };
        assert_eq!(
            token_action(&no_refresh, 3_600_000.0),
            TokenAction::Reauthorize
        );
        assert_eq!(
            parse_token_response(
                400,
                br#"{"error":"invalid_grant","error_description":"expired"}"#,
                0.0,
                None,
                None
            ),
            Err(AuthError::TokenRequestFailed(
                "HTTP 400, invalid_grant: expired".into()
            ))
        );
        assert_eq!(
            parse_token_response(
                200,
                br#"{"access_token":"x","token_type":"DPoP"}"#,
                0.0,
                None,
                None
            ),
            Err(AuthError::TokenRequestFailed(
                "unsupported token type DPoP".into()
            ))
        );
        assert_eq!(
            parse_token_response(200, b"<html>", 0.0, None, None),
            Err(AuthError::TokenRequestFailed(
                "HTTP 200, unreadable body: expected value at line 1 column 1".into()
            ))
        );
    }

    #[test]
    fn registration_bodies_declare_a_public_client() {
        let meta = ClientMetadata {
            client_name: "Hearth".into(),
            redirect_uris: vec!["http://localhost:8080/oauth/callback".into()],
            application_type: "native".into(),
            want_refresh: true,
        };
        assert_eq!(
            meta.to_json(None, Some("mcp:basic")),
            json!({
                "client_name": "Hearth",
                "redirect_uris": ["http://localhost:8080/oauth/callback"],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
                "application_type": "native",
                "scope": "mcp:basic"
            })
        );
        assert_eq!(
            parse_registration(br#"{"client_id":"abc","client_secret":"s"}"#, "iss").unwrap(),
            ClientCredentials {
                issuer: "iss".into(),
                client_id: "abc".into(),
                client_secret: Some("s".into()),
                token_endpoint_auth_method: None
            }
        );
    }
}
