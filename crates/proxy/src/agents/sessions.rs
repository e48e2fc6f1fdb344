//! What `hearth serve` keeps between an agent's requests: legacy
//! (2025-11-25 and earlier) sessions with the requests in flight in each,
//! so `notifications/cancelled` can stop one; and the changes every
//! notification stream (modern `subscriptions/listen`, the legacy GET
//! stream) listens to.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine;
use tokio::sync::{broadcast, oneshot};

/// Sessions one agent may hold at once; the oldest goes first.
pub const MAX_SESSIONS_PER_AGENT: usize = 32;
/// A session nobody used for this long is forgotten.
pub const SESSION_IDLE: Duration = Duration::from_secs(60 * 60);

/// Something agents' notification streams may need to hear.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// The tools an agent sees may have changed (for `agent`, or all).
    Tools(Option<String>),
    /// Notes or memories changed.
    Resources,
    /// This agent's credential was revoked: its streams end.
    Revoked(String),
}

struct Session {
    agent: String,
    version: String,
    last_seen: Instant,
    /// When it was last used, in the order of uses (ties in `last_seen`
    /// happen), for choosing the oldest.
    touched: u64,
    /// In-flight requests by their JSON-RPC id (as JSON text).
    in_flight: HashMap<String, oneshot::Sender<String>>,
}

/// The legacy sessions and the change feed.
pub struct Sessions {
    map: Mutex<HashMap<String, Session>>,
    uses: std::sync::atomic::AtomicU64,
    changes: broadcast::Sender<Change>,
}

impl Default for Sessions {
    fn default() -> Self {
        Self::new()
    }
}

impl Sessions {
    pub fn new() -> Self {
        let (changes, _) = broadcast::channel(256);
        Self {
            map: Mutex::new(HashMap::new()),
            uses: std::sync::atomic::AtomicU64::new(0),
            changes,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens a session for `agent`, speaking `version`.
    pub fn create(&self, agent: &str, version: &str) -> Result<String, String> {
        let mut bytes = [0u8; 24];
        getrandom::fill(&mut bytes).map_err(|e| e.to_string())?;
        let id = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        let now = Instant::now();
        let touched = self.touch();
        let mut map = self.lock();
        map.retain(|_, s| now.duration_since(s.last_seen) < SESSION_IDLE);
        let mut theirs: Vec<(u64, String)> = map
            .iter()
            .filter(|(_, s)| s.agent == agent)
            .map(|(k, s)| (s.touched, k.clone()))
            .collect();
        if theirs.len() >= MAX_SESSIONS_PER_AGENT {
            theirs.sort();
            for (_, k) in theirs
                .iter()
                .take(theirs.len() + 1 - MAX_SESSIONS_PER_AGENT)
            {
                map.remove(k);
            }
        }
        map.insert(
            id.clone(),
            Session {
                agent: agent.to_string(),
                version: version.to_string(),
                last_seen: now,
                touched,
                in_flight: HashMap::new(),
            },
        );
        Ok(id)
    }

    fn touch(&self) -> u64 {
        self.uses.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// The version of `agent`'s session `id`, if it is theirs and open.
    pub fn check(&self, id: &str, agent: &str) -> Option<String> {
        let touched = self.touch();
        let mut map = self.lock();
        let s = map.get_mut(id).filter(|s| s.agent == agent)?;
        s.last_seen = Instant::now();
        s.touched = touched;
        Some(s.version.clone())
    }

    /// Ends `agent`'s session `id`; whether there was one.
    pub fn end(&self, id: &str, agent: &str) -> bool {
        let mut map = self.lock();
        if map.get(id).is_some_and(|s| s.agent == agent) {
            map.remove(id);
            true
        } else {
            false
        }
    }

    /// Ends every session of `agent` and its streams.
    pub fn revoke(&self, agent: &str) {
        self.lock().retain(|_, s| s.agent != agent);
        let _ = self.changes.send(Change::Revoked(agent.to_string()));
    }

    /// Notes a request in flight, so it can be cancelled by its id.
    pub fn track(&self, session: &str, request: &str) -> Option<oneshot::Receiver<String>> {
        let (tx, rx) = oneshot::channel();
        let mut map = self.lock();
        map.get_mut(session)?
            .in_flight
            .insert(request.to_string(), tx);
        Some(rx)
    }

    pub fn untrack(&self, session: &str, request: &str) {
        if let Some(s) = self.lock().get_mut(session) {
            s.in_flight.remove(request);
        }
    }

    /// `notifications/cancelled` for `request` in `session`.
    pub fn cancel(&self, session: &str, request: &str, reason: &str) -> bool {
        let tx = self
            .lock()
            .get_mut(session)
            .and_then(|s| s.in_flight.remove(request));
        match tx {
            Some(tx) => tx.send(reason.to_string()).is_ok(),
            None => false,
        }
    }

    /// Tells every stream about `change`.
    pub fn publish(&self, change: Change) {
        let _ = self.changes.send(change);
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    #[cfg(test)]
    pub fn count(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_belong_to_one_agent() {
        let s = Sessions::new();
        let id = s.create("a", "2025-11-25").unwrap();
        assert_eq!(s.check(&id, "a").as_deref(), Some("2025-11-25"));
        assert_eq!(
            s.check(&id, "b"),
            None,
            "another agent's session is not found"
        );
        assert!(!s.end(&id, "b"));
        assert!(s.end(&id, "a"));
        assert_eq!(s.check(&id, "a"), None);
    }

    #[tokio::test]
    async fn revoking_ends_sessions_and_tells_streams() {
        let s = Sessions::new();
        let mut feed = s.subscribe();
        let a = s.create("a", "2025-11-25").unwrap();
        let b = s.create("b", "2025-11-25").unwrap();
        s.revoke("a");
        assert_eq!(s.check(&a, "a"), None);
        assert!(s.check(&b, "b").is_some());
        assert_eq!(feed.recv().await.unwrap(), Change::Revoked("a".into()));
    }

    #[tokio::test]
    async fn a_tracked_request_can_be_cancelled_once() {
        let s = Sessions::new();
        let id = s.create("a", "2025-11-25").unwrap();
        let rx = s.track(&id, "7").unwrap();
        assert!(s.cancel(&id, "7", "user pressed stop"));
        assert_eq!(rx.await.unwrap(), "user pressed stop");
        assert!(!s.cancel(&id, "7", "again"));
        assert!(s.track("nope", "1").is_none());
    }

    #[test]
    fn an_agent_holds_a_bounded_number_of_sessions() {
        let s = Sessions::new();
        let first = s.create("a", "2025-11-25").unwrap();
        for _ in 0..MAX_SESSIONS_PER_AGENT {
            s.create("a", "2025-11-25").unwrap();
        }
        assert_eq!(s.count(), MAX_SESSIONS_PER_AGENT);
        assert_eq!(s.check(&first, "a"), None, "the oldest went first");
    }
}
