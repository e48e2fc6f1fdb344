//! Hearth as an MCP server for the person's other agents.
//!
//! An agent (Claude Code, Codex, goose…) reaches `POST /mcp/server` on
//! `hearth serve` with its own credential ([`endpoint`]). Hearth's data
//! and skills live in the browser, so `hearth serve` does no skill work
//! itself: it checks who is calling, speaks the transport of both
//! protocol eras (2026-07-28 stateless, 2025-11-25 sessions), answers
//! discovery and subscriptions, and relays each tool or resource request
//! to the open Hearth tab ([`hub`]), which runs it through its one call
//! path, with the person's approval, and answers.
//!
//! The tab and the Agents panel use the app's own API, behind the app's
//! guard and key ([`routes`]); an agent's credential opens none of it,
//! and the app's key opens nothing at `/mcp/server`. The agents and the
//! hashes of their credentials are kept in `agents.json`
//! ([`registry`]); legacy sessions and notification streams in memory
//! ([`sessions`]).
//!
//! An agent whose client supports MCP's authorization spec connects
//! through OAuth 2.1 with PKCE instead of a credential pasted from the
//! panel: `hearth serve` is the authorization server ([`oauth`], its
//! rules in [`authorization`]) and the person consents in the tab.

pub mod authorization;
pub mod endpoint;
pub mod hub;
pub mod oauth;
pub mod registry;
pub mod routes;
pub mod sessions;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hearth_core::mcp::model::{
    Implementation, ListChangedCapability, ResourcesCapability, ServerCapabilities,
};

use self::authorization::{ClientStore, Grants};
use self::hub::Hub;
use self::registry::AgentStore;
use self::sessions::Sessions;
use crate::api::guard::AppGuard;
use crate::api::ratelimit::{BucketConfig, RateLimiter};

/// The largest JSON-RPC message an agent may send (a note's body is at
/// most 200,000 characters; this leaves room for the rest).
pub const MAX_BODY: usize = 1024 * 1024;
/// Calls one agent may have waiting at once.
pub const MAX_IN_FLIGHT: usize = 16;

/// How long things may take, and how often streams show they are alive.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// A call may wait this long for the tab (approval included).
    pub call: Duration,
    /// A listing may wait this long.
    pub list: Duration,
    /// Comments on a call's SSE stream this often, so an agent that hung
    /// up is noticed (and its call cancelled) soon.
    pub call_keepalive: Duration,
    /// Comments on notification streams this often.
    pub stream_keepalive: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            call: Duration::from_secs(15 * 60),
            list: Duration::from_secs(60),
            call_keepalive: Duration::from_secs(1),
            stream_keepalive: Duration::from_secs(15),
        }
    }
}

/// Everything the agents' routes share.
pub struct AgentsState {
    pub store: AgentStore,
    /// The clients registered through OAuth, and their sign-ins under way.
    pub clients: ClientStore,
    pub grants: Grants,
    pub hub: Arc<Hub>,
    pub sessions: Sessions,
    /// The app's guard: its loopback hosts, and its key, which must never
    /// open the MCP endpoint.
    pub guard: Arc<AppGuard>,
    /// Per agent, and one bucket for failed credentials.
    limiter: RateLimiter,
    in_flight: Mutex<HashMap<String, usize>>,
    /// The endpoint's URL and the `hearth` binary, for config snippets.
    pub endpoint: String,
    pub command: String,
    pub timing: Timing,
}

/// The bucket of requests with a wrong or missing credential.
const FAILED_AUTH: &str = "\u{0}failed-credentials";
/// The bucket of OAuth client registrations.
const REGISTRATIONS: &str = "\u{0}registrations";

impl AgentsState {
    pub fn new(
        store: AgentStore,
        clients: ClientStore,
        guard: Arc<AppGuard>,
        endpoint: String,
        command: String,
    ) -> Self {
        let mut buckets = HashMap::new();
        buckets.insert(
            FAILED_AUTH.to_string(),
            BucketConfig {
                per_minute: 30.0,
                burst: 20,
            },
        );
        buckets.insert(
            REGISTRATIONS.to_string(),
            BucketConfig {
                per_minute: 20.0,
                burst: 10,
            },
        );
        Self {
            store,
            clients,
            grants: Grants::default(),
            hub: Hub::new(),
            sessions: Sessions::new(),
            guard,
            limiter: RateLimiter::new(
                buckets,
                BucketConfig {
                    per_minute: 3000.0,
                    burst: 300,
                },
            ),
            in_flight: Mutex::new(HashMap::new()),
            endpoint,
            command,
            timing: Timing::default(),
        }
    }

    /// A failed credential; `Err` holds how long the next must wait.
    pub fn limit_failure(&self) -> Result<(), Duration> {
        self.limiter.check(FAILED_AUTH)
    }

    /// One OAuth client registration; `Err` holds how long to wait.
    pub fn limit_registration(&self) -> Result<(), Duration> {
        self.limiter.check(REGISTRATIONS)
    }

    /// One request of `agent`; `Err` holds how long to wait.
    pub fn limit_agent(&self, agent: &str) -> Result<(), Duration> {
        self.limiter.check(agent)
    }

    /// Counts a call of `agent` in flight until the guard drops; `None`
    /// when it already has [`MAX_IN_FLIGHT`].
    pub fn enter(self: &Arc<Self>, agent: &str) -> Option<InFlight> {
        let mut map = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        let n = map.entry(agent.to_string()).or_insert(0);
        if *n >= MAX_IN_FLIGHT {
            return None;
        }
        *n += 1;
        Some(InFlight {
            state: self.clone(),
            agent: agent.to_string(),
        })
    }

    /// Revokes `agent`: its credential stops working, its requests in the
    /// tab are cancelled, its sessions and streams end.
    pub fn revoke(&self, agent: &str) -> Result<(), registry::RegistryError> {
        self.store.revoke(agent)?;
        self.hub.revoke(agent);
        self.sessions.revoke(agent);
        Ok(())
    }
}

/// A call in flight; dropping it counts it out.
pub struct InFlight {
    state: Arc<AgentsState>,
    agent: String,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut map = self
            .state
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(n) = map.get_mut(&self.agent) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                map.remove(&self.agent);
            }
        }
    }
}

/// Who answers at `/mcp/server`.
pub fn server_info() -> Implementation {
    Implementation {
        name: "hearth".into(),
        title: Some("Hearth".into()),
        version: env!("CARGO_PKG_VERSION").into(),
        description: Some(
            "The person's notes, tasks and memory in Hearth, with their approval in the Hearth tab"
                .into(),
        ),
        website_url: None,
    }
}

/// What `/mcp/server` offers: tools and resources, both of which can
/// change (the person shares more, or writes a note).
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        tools: Some(ListChangedCapability {
            list_changed: Some(true),
        }),
        resources: Some(ResourcesCapability {
            subscribe: None,
            list_changed: Some(true),
        }),
        ..ServerCapabilities::default()
    }
}

/// The instructions agents are given.
pub const INSTRUCTIONS: &str = "Hearth keeps the person's notes, tasks and memory in their browser. \
Tools run in the open Hearth tab: calls that change something wait until the person approves them there, \
so a call may take a while; a denied call comes back as an error that says so. \
Notes and memories are also resources (hearth://note/<id>, hearth://memory/<id>).";
