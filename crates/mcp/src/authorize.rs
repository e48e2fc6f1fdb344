//! The OAuth 2.1 sign-in for one MCP server, driven over the same
//! [`HttpTransport`] as the protocol: discovery, registration, the
//! authorization request through an [`Authorizer`] (a popup in the app, a
//! headless redirect in conformance runs), the token exchange, refresh and
//! step-up. Every decision is one of the pure functions in `oauth`; this
//! module only sequences them. Randomness and time come from the caller.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures::FutureExt;
use futures::future::LocalBoxFuture;

use super::client::AuthProvider;
use super::oauth::{
    AuthError, AuthState, AuthorizationServerMetadata, BearerChallenge, ClientCredentials,
    ClientMetadata, Grant, PendingAuthorization, Pkce, RegistrationPlan, ResourceMetadata,
    TokenAction, TokenSet, authorization_server_metadata_urls, check_resource, default_metadata,
    initial_scope, parse_authorization_server_metadata, parse_registration,
    parse_resource_metadata, parse_token_response, plan_registration, resource_covers,
    resource_metadata_urls, scope_grows, state_from_random, step_up_scope, token_action,
    token_request,
};
use super::transport::{HttpMethod, HttpRequest, HttpTransport, TransportError};
use super::url::HttpUrl;
use hearth_base::TimeSource;

/// The person's side of the sign-in: show the authorization server's page
/// and come back with the URL it redirected to.
pub trait Authorizer {
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> LocalBoxFuture<'a, Result<String, AuthError>>;
}

/// Cryptographically secure random bytes, from the platform.
pub trait Randomness {
    fn fill(&self, buf: &mut [u8]);
}

#[derive(Clone, Debug)]
pub struct OAuthConfig {
    /// The MCP endpoint being signed in to.
    pub server_url: String,
    pub client: ClientMetadata,
    /// An HTTPS URL where Hearth's client metadata document is served, if
    /// there is one; used when the authorization server supports it.
    pub metadata_document_url: Option<String>,
    /// Client credentials the person entered, each for one issuer.
    pub preregistered: Vec<ClientCredentials>,
}

const MAX_METADATA_BYTES: usize = 256 * 1024;

/// Called with the new state whenever it changes.
pub type StateListener = Rc<dyn Fn(&AuthState)>;

/// OAuth for one server. Implements [`AuthProvider`] for the client.
pub struct OAuthFlow {
    transport: Rc<dyn HttpTransport>,
    authorizer: Rc<dyn Authorizer>,
    random: Rc<dyn Randomness>,
    time: Rc<dyn TimeSource>,
    config: OAuthConfig,
    state: RefCell<AuthState>,
    /// Re-authorizations for a 403 that asked for nothing new.
    stale_step_ups: Cell<u32>,
    on_change: Option<StateListener>,
}

impl OAuthFlow {
    pub fn new(
        transport: Rc<dyn HttpTransport>,
        authorizer: Rc<dyn Authorizer>,
        random: Rc<dyn Randomness>,
        time: Rc<dyn TimeSource>,
        config: OAuthConfig,
        saved: AuthState,
    ) -> Self {
        Self {
            transport,
            authorizer,
            random,
            time,
            config,
            state: RefCell::new(saved),
            stale_step_ups: Cell::new(0),
            on_change: None,
        }
    }

    /// Called with the new state whenever it changes, so the app can store
    /// it (tokens and registrations stay on this device).
    pub fn with_persistence(mut self, on_change: StateListener) -> Self {
        self.on_change = Some(on_change);
        self
    }

    pub fn state(&self) -> AuthState {
        self.state.borrow().clone()
    }

    fn update(&self, f: impl FnOnce(&mut AuthState)) {
        f(&mut self.state.borrow_mut());
        if let Some(cb) = &self.on_change {
            let snapshot = self.state.borrow().clone();
            cb(&snapshot);
        }
    }

    async fn fetch(&self, request: HttpRequest) -> Result<(u16, Vec<u8>), AuthError> {
        let response = self
            .transport
            .send(request)
            .await
            .map_err(|e| AuthError::Unreachable(e.to_string()))?;
        let status = response.status;
        let body = response
            .read_to_end(MAX_METADATA_BYTES)
            .await
            .map_err(|e| match e {
                TransportError::TooLarge(n) => AuthError::Malformed {
                    what: "response".into(),
                    detail: format!("larger than {n} bytes"),
                },
                other => AuthError::Unreachable(other.to_string()),
            })?;
        Ok((status, body))
    }

    async fn get(&self, url: &str) -> Result<(u16, Vec<u8>), AuthError> {
        self.fetch(HttpRequest::new(HttpMethod::Get, url).header("Accept", "application/json"))
            .await
    }

    /// Finds and checks the protected resource metadata.
    async fn discover_resource(
        &self,
        challenge: Option<&BearerChallenge>,
    ) -> Result<(ResourceMetadata, String), AuthError> {
        let urls = resource_metadata_urls(
            &self.config.server_url,
            challenge.and_then(|c| c.resource_metadata.as_deref()),
        )?;
        for url in urls {
            let (status, body) = self.get(&url).await?;
            if status != 200 {
                continue;
            }
            let metadata = parse_resource_metadata(&body)?;
            let resource = check_resource(&metadata, &self.config.server_url)?;
            return Ok((metadata, resource));
        }
        Err(AuthError::NoResourceMetadata)
    }

    async fn discover_server(
        &self,
        issuer: &str,
    ) -> Result<AuthorizationServerMetadata, AuthError> {
        for url in authorization_server_metadata_urls(issuer)? {
            let (status, body) = self.get(&url).await?;
            if status == 200 {
                return parse_authorization_server_metadata(&body, issuer);
            }
        }
        Err(AuthError::NoAuthorizationServerMetadata(issuer.into()))
    }

    async fn client_for(
        &self,
        server: &AuthorizationServerMetadata,
        scope: Option<&str>,
    ) -> Result<ClientCredentials, AuthError> {
        if let Some(c) = self.state.borrow().clients.get(&server.issuer) {
            return Ok(c.clone());
        }
        let pre = {
            let state = self.state.borrow();
            let bound_elsewhere =
                |c: &ClientCredentials| state.clients.values().any(|b| b.client_id == c.client_id);
            self.config
                .preregistered
                .iter()
                .find(|c| c.issuer == server.issuer)
                .or_else(|| {
                    self.config
                        .preregistered
                        .iter()
                        .find(|c| c.issuer.is_empty() && !bound_elsewhere(c))
                })
                .cloned()
        };
        let client = match plan_registration(
            server,
            pre.as_ref(),
            self.config.metadata_document_url.as_deref(),
        )? {
            RegistrationPlan::Preregistered(c) => c,
            RegistrationPlan::MetadataDocument { client_id } => ClientCredentials {
                issuer: server.issuer.clone(),
                client_id,
                client_secret: None,
                token_endpoint_auth_method: Some("none".into()),
            },
            RegistrationPlan::Dynamic { endpoint } => {
                let body = self.config.client.to_json(None, scope);
                let request = HttpRequest::new(HttpMethod::Post, endpoint)
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json")
                    .body(serde_json::to_vec(&body).unwrap_or_default());
                let (status, response) = self.fetch(request).await?;
                if !(200..300).contains(&status) {
                    return Err(AuthError::RegistrationFailed(format!(
                        "HTTP {status}: {}",
                        String::from_utf8_lossy(&response)
                            .chars()
                            .take(200)
                            .collect::<String>()
                    )));
                }
                parse_registration(&response, &server.issuer)?
            }
        };
        let issuer = server.issuer.clone();
        let stored = client.clone();
        self.update(move |s| {
            s.clients.insert(issuer, stored);
        });
        Ok(client)
    }

    /// The whole authorization-code flow. `step_up` keeps the scopes asked
    /// for before and adds the challenge's.
    pub async fn sign_in(
        &self,
        challenge: Option<&BearerChallenge>,
        step_up: bool,
    ) -> Result<TokenSet, AuthError> {
        let (resource_meta, resource, server) = match self.discover_resource(challenge).await {
            Ok((meta, resource)) => {
                let issuer = meta
                    .authorization_servers
                    .first()
                    .cloned()
                    .ok_or(AuthError::NoAuthorizationServer)?;
                let server = self.discover_server(&issuer).await?;
                (Some(meta), resource, server)
            }
            // A 2025-03-26 server has no resource metadata: its own origin
            // is the authorization server, with default endpoints when it
            // publishes no metadata either.
            Err(AuthError::NoResourceMetadata) => {
                let url = HttpUrl::parse(&self.config.server_url)?;
                let origin = url.origin();
                let server = match self.discover_server(&origin).await {
                    Ok(s) => s,
                    Err(AuthError::NoAuthorizationServerMetadata(_)) => default_metadata(&origin),
                    Err(e) => return Err(e),
                };
                (None, url.canonical_resource(), server)
            }
            Err(e) => return Err(e),
        };
        let issuer = server.issuer.clone();
        if self.state.borrow().token_issuer.as_deref() != Some(issuer.as_str()) {
            // Tokens from another authorization server are never sent.
            self.update(|s| s.tokens = None);
        }
        let previous = self
            .state
            .borrow()
            .tokens
            .as_ref()
            .and_then(|t| t.scope.clone());
        let scope = if step_up {
            step_up_scope(
                previous.as_deref(),
                challenge.and_then(|c| c.scope.as_deref()),
            )
        } else {
            initial_scope(
                challenge,
                resource_meta.as_ref(),
                &server,
                self.config.client.want_refresh,
            )
        };
        let client = self.client_for(&server, scope.as_deref()).await?;
        let mut verifier = [0u8; 32];
        self.random.fill(&mut verifier);
        let mut state_bytes = [0u8; 16];
        self.random.fill(&mut state_bytes);
        let redirect_uri = self
            .config
            .client
            .redirect_uris
            .first()
            .cloned()
            .unwrap_or_default();
        let pending = PendingAuthorization {
            issuer: server.issuer.clone(),
            iss_parameter_supported: server.authorization_response_iss_parameter_supported,
            token_endpoint: server.token_endpoint.clone(),
            token_endpoint_auth_methods_supported: server
                .token_endpoint_auth_methods_supported
                .clone(),
            client,
            redirect_uri,
            resource,
            scope,
            state: state_from_random(&state_bytes),
            pkce: Pkce::from_random(&verifier),
        };
        let url = pending.authorization_url(&server.authorization_endpoint);
        let callback = self.authorizer.authorize(&url).await?;
        let code = pending.accept_callback(&callback)?;
        self.redeem(&pending, &code).await
    }

    /// Exchanges a code for tokens (also for an app that ran the redirect
    /// itself and kept the [`PendingAuthorization`]).
    pub async fn redeem(
        &self,
        pending: &PendingAuthorization,
        code: &str,
    ) -> Result<TokenSet, AuthError> {
        let grant = Grant::AuthorizationCode {
            code,
            verifier: &pending.pkce.verifier,
            redirect_uri: &pending.redirect_uri,
        };
        let req = token_request(
            &pending.token_endpoint,
            &pending.client,
            pending.token_endpoint_auth_methods_supported.as_deref(),
            &grant,
            &pending.resource,
            pending.scope.as_deref(),
        );
        let tokens = self.post_token(req, pending.scope.as_deref(), None).await?;
        let (issuer, endpoint, methods, resource) = (
            pending.issuer.clone(),
            pending.token_endpoint.clone(),
            pending.token_endpoint_auth_methods_supported.clone(),
            pending.resource.clone(),
        );
        let stored = tokens.clone();
        self.update(move |s| {
            s.tokens = Some(stored);
            s.token_issuer = Some(issuer);
            s.token_endpoint = Some(endpoint);
            s.token_endpoint_auth_methods_supported = methods;
            s.resource = Some(resource);
        });
        Ok(tokens)
    }

    async fn post_token(
        &self,
        req: super::oauth::TokenRequest,
        scope: Option<&str>,
        previous_refresh: Option<&str>,
    ) -> Result<TokenSet, AuthError> {
        let mut request = HttpRequest::new(HttpMethod::Post, req.url).body(req.body.into_bytes());
        request.headers = req.headers;
        let (status, body) = self.fetch(request).await?;
        parse_token_response(
            status,
            &body,
            self.time.now_unix_ms(),
            scope,
            previous_refresh,
        )
    }

    /// Refreshes the access token; `Ok(false)` when there is nothing to
    /// refresh with.
    pub async fn refresh(&self) -> Result<bool, AuthError> {
        let (tokens, issuer, endpoint, methods, resource) = {
            let s = self.state.borrow();
            (
                s.tokens.clone(),
                s.token_issuer.clone(),
                s.token_endpoint.clone(),
                s.token_endpoint_auth_methods_supported.clone(),
                s.resource.clone(),
            )
        };
        let (Some(tokens), Some(issuer), Some(endpoint), Some(resource)) =
            (tokens, issuer, endpoint, resource)
        else {
            return Ok(false);
        };
        let Some(refresh_token) = tokens.refresh_token.clone() else {
            return Ok(false);
        };
        let Some(client) = self.state.borrow().clients.get(&issuer).cloned() else {
            return Ok(false);
        };
        let req = token_request(
            &endpoint,
            &client,
            methods.as_deref(),
            &Grant::Refresh {
                refresh_token: &refresh_token,
            },
            &resource,
            None,
        );
        match self
            .post_token(req, tokens.scope.as_deref(), Some(&refresh_token))
            .await
        {
            Ok(fresh) => {
                self.update(|s| s.tokens = Some(fresh));
                Ok(true)
            }
            Err(e) => {
                // A refused refresh token is useless; sign in again next.
                self.update(|s| s.tokens = None);
                Err(e)
            }
        }
    }

    /// Forgets tokens (sign out); registrations are kept.
    pub fn sign_out(&self) {
        self.update(|s| s.tokens = None);
    }
}

impl AuthProvider for OAuthFlow {
    fn access_token(&self) -> LocalBoxFuture<'_, Option<String>> {
        async move {
            let (tokens, resource) = {
                let s = self.state.borrow();
                (s.tokens.clone()?, s.resource.clone()?)
            };
            // Tokens go only to the server they were issued for.
            if !resource_covers(&resource, &self.config.server_url) {
                return None;
            }
            match token_action(&tokens, self.time.now_unix_ms()) {
                TokenAction::Use => Some(tokens.access_token),
                TokenAction::Refresh => match self.refresh().await {
                    Ok(true) => self
                        .state
                        .borrow()
                        .tokens
                        .as_ref()
                        .map(|t| t.access_token.clone()),
                    Ok(false) | Err(_) => None,
                },
                TokenAction::Reauthorize => None,
            }
        }
        .boxed_local()
    }

    fn on_challenge(
        &self,
        status: u16,
        challenge: Option<BearerChallenge>,
    ) -> LocalBoxFuture<'_, Result<(), AuthError>> {
        async move {
            let step_up = status == 403;
            if step_up {
                let granted = self
                    .state
                    .borrow()
                    .tokens
                    .as_ref()
                    .and_then(|t| t.scope.clone());
                let wanted = challenge.as_ref().and_then(|c| c.scope.as_deref());
                if !scope_grows(granted.as_deref(), wanted) {
                    // Asking again for what was already granted rarely
                    // helps: allow it once, then stop.
                    let n = self.stale_step_ups.get() + 1;
                    self.stale_step_ups.set(n);
                    if n > 1 {
                        return Err(AuthError::RetryLimit(n));
                    }
                }
            }
            // A 401 despite a live token means it was revoked, or the server
            // now trusts another authorization server: sign in afresh.
            // (Expiring tokens are refreshed before they are sent.)
            self.sign_in(challenge.as_ref(), step_up).await.map(|_| ())
        }
        .boxed_local()
    }
}
