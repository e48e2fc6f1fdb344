//! What hearth-core's MCP and OAuth code asks of the platform, natively:
//! a clock, secure randomness, and a user agent for the authorization
//! step. The headless one follows the authorization server's redirect
//! without a person, which is only right where no one needs to sign in —
//! the conformance suite's mock servers approve at once.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use futures::FutureExt;
use futures::future::LocalBoxFuture;
use hearth_core::mcp::authorize::{Authorizer, Randomness};
use hearth_core::mcp::oauth::AuthError;
use hearth_core::skill::invoke::TimeSource;

pub struct SystemClock {
    start: Instant,
}

impl SystemClock {
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
        }
    }
}

impl TimeSource for SystemClock {
    fn now_unix_ms(&self) -> f64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64() * 1000.0)
            .unwrap_or(0.0)
    }

    fn monotonic_ms(&self) -> f64 {
        self.start.elapsed().as_secs_f64() * 1000.0
    }
}

/// The operating system's CSPRNG.
pub struct OsRandom;

impl Randomness for OsRandom {
    fn fill(&self, buf: &mut [u8]) {
        // Without randomness PKCE and state would be guessable; there is no
        // safe way to continue.
        getrandom::fill(buf).expect("the operating system's random source failed");
    }
}

/// Fetches the authorization URL without following its redirect and hands
/// back where it points: the redirect URI with the code, state and `iss`.
pub struct HeadlessAuthorizer {
    client: reqwest::Client,
}

impl HeadlessAuthorizer {
    pub fn new() -> Result<Self, AuthError> {
        super::transport::install_crypto();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| AuthError::Unreachable(e.to_string()))?;
        Ok(Self { client })
    }
}

impl Authorizer for HeadlessAuthorizer {
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> LocalBoxFuture<'a, Result<String, AuthError>> {
        async move {
            let response = self
                .client
                .get(authorization_url)
                .send()
                .await
                .map_err(|e| AuthError::Unreachable(e.to_string()))?;
            if !response.status().is_redirection() {
                return Err(AuthError::Denied {
                    error: "interaction_required".into(),
                    description: Some(format!(
                        "the authorization server answered HTTP {} instead of redirecting; signing in needs a person, so use the app",
                        response.status().as_u16()
                    )),
                });
            }
            response
                .headers()
                .get("location")
                .and_then(|l| l.to_str().ok())
                .map(str::to_string)
                .ok_or(AuthError::NoCode)
        }
        .boxed_local()
    }
}
