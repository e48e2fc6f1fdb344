//! The relay between agents and the Hearth tabs: each open tab holds a
//! channel; each agent request goes to exactly one tab (the newest open),
//! and only that tab's replies are taken for it. A request whose waiter
//! leaves (the agent hung up, cancelled, was revoked) is cancelled in the
//! tab; a tab that closes fails what it held, in words that say to open
//! Hearth.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use hearth_core::agents::AgentRecord;
use hearth_core::agents::consent::ConsentRequest;
use hearth_core::agents::wire::{
    NO_TAB_MESSAGE, RelayCancel, RelayReply, RelayedRequest, ReplyBody, codes,
};
use hearth_core::mcp::jsonrpc::RpcError;
use serde_json::Value;
use tokio::sync::mpsc;

/// What a tab's channel carries.
#[derive(Clone, Debug, PartialEq)]
pub enum TabEvent {
    /// Boxed: a request is large next to a cancellation.
    Request(Box<RelayedRequest>),
    Cancel(RelayCancel),
    /// A client asks to connect through OAuth: the tab asks the person.
    Consent(Box<ConsentRequest>),
}

struct Tab {
    id: String,
    tx: mpsc::UnboundedSender<TabEvent>,
}

struct Pending {
    tab: String,
    agent: String,
    tx: mpsc::UnboundedSender<ReplyBody>,
}

/// Why a tab's reply was not taken.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    /// 404: the request is over (answered, cancelled) or never was.
    #[error("no agent request {0} is waiting; it may have been cancelled")]
    Unknown(String),
    /// 403: another tab was sent this request.
    #[error("request {0} was sent to another Hearth tab")]
    OtherTab(String),
}

#[derive(Default)]
struct Inner {
    /// Oldest first; the last one takes new requests.
    tabs: Vec<Tab>,
    pending: HashMap<String, Pending>,
}

/// The tabs and the requests they hold.
#[derive(Default)]
pub struct Hub {
    inner: Mutex<Inner>,
    next: AtomicU64,
}

/// The error an agent gets when no tab can answer.
pub fn no_tab() -> RpcError {
    RpcError::new(codes::NO_TAB, NO_TAB_MESSAGE)
}

fn tab_gone() -> RpcError {
    RpcError::new(
        codes::TAB_GONE,
        "open Hearth to use its skills: the Hearth tab that was answering this request closed before it finished",
    )
}

impl Hub {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn next_id(&self, prefix: &str) -> String {
        format!("{prefix}{}", self.next.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// A tab opened its channel: it takes new requests from now on.
    pub fn open_tab(self: &Arc<Self>) -> (TabHandle, mpsc::UnboundedReceiver<TabEvent>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let id = self.next_id("tab-");
        self.lock().tabs.push(Tab { id: id.clone(), tx });
        (
            TabHandle {
                hub: self.clone(),
                id,
            },
            rx,
        )
    }

    /// A tab's channel ended: what it held fails, in words that say to
    /// open Hearth.
    pub fn close_tab(&self, id: &str) {
        let mut inner = self.lock();
        inner.tabs.retain(|t| t.id != id);
        let held: Vec<String> = inner
            .pending
            .iter()
            .filter(|(_, p)| p.tab == id)
            .map(|(k, _)| k.clone())
            .collect();
        for relay in held {
            if let Some(p) = inner.pending.remove(&relay) {
                let _ = p.tx.send(ReplyBody::Error(tab_gone()));
            }
        }
    }

    /// How many tabs have their channel open.
    pub fn tabs(&self) -> usize {
        let mut inner = self.lock();
        inner.tabs.retain(|t| !t.tx.is_closed());
        inner.tabs.len()
    }

    /// Whether the tab named `id` still has its channel open.
    pub fn has_tab(&self, id: &str) -> bool {
        self.lock()
            .tabs
            .iter()
            .any(|t| t.id == id && !t.tx.is_closed())
    }

    /// Asks the newest open tab for the person's consent; the tab's name,
    /// or `None` when no tab is open.
    pub fn ask_consent(&self, request: &ConsentRequest) -> Option<String> {
        let mut inner = self.lock();
        loop {
            let tab = inner.tabs.last()?;
            if tab
                .tx
                .send(TabEvent::Consent(Box::new(request.clone())))
                .is_ok()
            {
                return Some(tab.id.clone());
            }
            inner.tabs.pop();
        }
    }

    /// Sends one request of `agent` to the newest open tab.
    pub fn send(
        self: &Arc<Self>,
        agent: &AgentRecord,
        method: &str,
        params: Value,
        progress: bool,
    ) -> Result<Relay, RpcError> {
        let relay = self.next_id("r");
        let (tx, rx) = mpsc::unbounded_channel();
        let mut inner = self.lock();
        inner.tabs.retain(|t| !t.tx.is_closed());
        let request = RelayedRequest {
            relay: relay.clone(),
            agent: agent.clone(),
            method: method.to_string(),
            params,
            progress,
        };
        let tab = loop {
            let Some(tab) = inner.tabs.last() else {
                return Err(no_tab());
            };
            if tab
                .tx
                .send(TabEvent::Request(Box::new(request.clone())))
                .is_ok()
            {
                break tab.id.clone();
            }
            inner.tabs.pop();
        };
        inner.pending.insert(
            relay.clone(),
            Pending {
                tab,
                agent: agent.id.clone(),
                tx,
            },
        );
        Ok(Relay {
            hub: self.clone(),
            id: relay,
            rx,
            finished: false,
        })
    }

    /// A tab's reply. Progress leaves the request waiting; a result or an
    /// error ends it.
    pub fn reply(&self, reply: RelayReply) -> Result<(), ReplyError> {
        let mut inner = self.lock();
        let pending = inner
            .pending
            .get(&reply.relay)
            .ok_or_else(|| ReplyError::Unknown(reply.relay.clone()))?;
        if pending.tab != reply.tab {
            return Err(ReplyError::OtherTab(reply.relay.clone()));
        }
        let last = !matches!(reply.body, ReplyBody::Progress { .. });
        let _ = pending.tx.send(reply.body);
        if last {
            inner.pending.remove(&reply.relay);
        }
        Ok(())
    }

    /// Stops one request: the tab is told, the waiter gets nothing more.
    fn cancel(&self, relay: &str, reason: &str) {
        let mut inner = self.lock();
        let Some(p) = inner.pending.remove(relay) else {
            return;
        };
        if let Some(tab) = inner.tabs.iter().find(|t| t.id == p.tab) {
            let _ = tab.tx.send(TabEvent::Cancel(RelayCancel {
                relay: relay.to_string(),
                reason: reason.to_string(),
            }));
        }
    }

    /// An agent was revoked: its requests end now, in the tab and for the
    /// agent.
    pub fn revoke(&self, agent: &str) {
        let mut inner = self.lock();
        let theirs: Vec<String> = inner
            .pending
            .iter()
            .filter(|(_, p)| p.agent == agent)
            .map(|(k, _)| k.clone())
            .collect();
        for relay in theirs {
            if let Some(p) = inner.pending.remove(&relay) {
                let _ = p.tx.send(ReplyBody::Error(RpcError::new(
                    codes::REVOKED,
                    "this agent's access to Hearth was revoked",
                )));
                if let Some(tab) = inner.tabs.iter().find(|t| t.id == p.tab) {
                    let _ = tab.tx.send(TabEvent::Cancel(RelayCancel {
                        relay,
                        reason: "the agent's access was revoked".into(),
                    }));
                }
            }
        }
    }

    /// How many requests are waiting on tabs.
    #[cfg(test)]
    pub fn waiting(&self) -> usize {
        self.lock().pending.len()
    }
}

/// A tab's place in the hub; dropping it closes the tab.
pub struct TabHandle {
    hub: Arc<Hub>,
    pub id: String,
}

impl Drop for TabHandle {
    fn drop(&mut self) {
        self.hub.close_tab(&self.id);
    }
}

/// One request in a tab. Dropping it before the last reply cancels it.
pub struct Relay {
    hub: Arc<Hub>,
    pub id: String,
    rx: mpsc::UnboundedReceiver<ReplyBody>,
    finished: bool,
}

impl Relay {
    /// The next reply: progress, then one result or error. `None` only
    /// if the hub dropped the request without a word (it does not).
    pub async fn next(&mut self) -> Option<ReplyBody> {
        let body = self.rx.recv().await?;
        if !matches!(body, ReplyBody::Progress { .. }) {
            self.finished = true;
        }
        Some(body)
    }

    /// Gives up on the request with `reason` for the tab.
    pub fn cancel(&mut self, reason: &str) {
        if !self.finished {
            self.finished = true;
            self.hub.cancel(&self.id, reason);
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        if !self.finished {
            self.hub.cancel(
                &self.id,
                "the agent stopped waiting (it cancelled or hung up)",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::agents::{AgentAsk, AgentClient};
    use serde_json::json;

    fn agent(id: &str) -> AgentRecord {
        AgentRecord {
            id: id.into(),
            name: id.into(),
            client: AgentClient::Other,
            created_ms: 0,
            last_used_ms: None,
            shared: vec![],
            always: vec![],
            ask: AgentAsk::Changes,
        }
    }

    fn request_of(event: Option<TabEvent>) -> RelayedRequest {
        match event {
            Some(TabEvent::Request(r)) => *r,
            other => panic!("expected a request, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn without_a_tab_the_agent_is_told_to_open_hearth() {
        let hub = Hub::new();
        let err = hub
            .send(&agent("a"), "tools/list", json!({}), false)
            .err()
            .unwrap();
        assert_eq!(err.code, codes::NO_TAB);
        assert!(err.message.starts_with("open Hearth to use its skills"));
    }

    #[tokio::test]
    async fn of_several_tabs_exactly_the_newest_answers() {
        let hub = Hub::new();
        let (old, mut old_rx) = hub.open_tab();
        let (new, mut new_rx) = hub.open_tab();
        assert_eq!(hub.tabs(), 2);
        let mut relay = hub
            .send(&agent("a"), "tools/list", json!({}), false)
            .unwrap();
        let req = request_of(new_rx.recv().await);
        assert!(old_rx.try_recv().is_err(), "the older tab got nothing");
        // The older tab cannot answer what it was not sent.
        let from_old = RelayReply {
            relay: req.relay.clone(),
            tab: old.id.clone(),
            body: ReplyBody::Result(json!({"tools": ["x"]})),
        };
        assert_eq!(
            hub.reply(from_old),
            Err(ReplyError::OtherTab(req.relay.clone()))
        );
        hub.reply(RelayReply {
            relay: req.relay.clone(),
            tab: new.id.clone(),
            body: ReplyBody::Progress {
                progress: 1.0,
                total: None,
                message: None,
            },
        })
        .unwrap();
        hub.reply(RelayReply {
            relay: req.relay.clone(),
            tab: new.id.clone(),
            body: ReplyBody::Result(json!({"tools": []})),
        })
        .unwrap();
        assert!(matches!(
            relay.next().await,
            Some(ReplyBody::Progress { .. })
        ));
        assert_eq!(
            relay.next().await,
            Some(ReplyBody::Result(json!({"tools": []})))
        );
        // Answered once; a second answer has nothing to go to.
        let again = hub.reply(RelayReply {
            relay: req.relay.clone(),
            tab: new.id.clone(),
            body: ReplyBody::Result(json!({})),
        });
        assert_eq!(again, Err(ReplyError::Unknown(req.relay)));
        // The newest tab closes: the older one takes over.
        drop(new);
        let _relay = hub
            .send(&agent("a"), "tools/list", json!({}), false)
            .unwrap();
        request_of(old_rx.recv().await);
        drop(old);
        assert_eq!(hub.tabs(), 0);
    }

    #[tokio::test]
    async fn a_tab_that_closes_fails_what_it_held_and_a_waiter_that_leaves_cancels() {
        let hub = Hub::new();
        let (tab, mut rx) = hub.open_tab();
        let mut held = hub
            .send(&agent("a"), "tools/call", json!({}), true)
            .unwrap();
        request_of(rx.recv().await);
        let left = hub
            .send(&agent("a"), "tools/call", json!({}), true)
            .unwrap();
        let second = request_of(rx.recv().await);
        drop(left);
        assert_eq!(
            rx.recv().await,
            Some(TabEvent::Cancel(RelayCancel {
                relay: second.relay,
                reason: "the agent stopped waiting (it cancelled or hung up)".into()
            }))
        );
        drop(tab);
        match held.next().await {
            Some(ReplyBody::Error(e)) => {
                assert_eq!(e.code, codes::TAB_GONE);
                assert!(e.message.starts_with("open Hearth"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(hub.waiting(), 0);
    }

    #[tokio::test]
    async fn revoking_ends_only_that_agents_requests() {
        let hub = Hub::new();
        let (_tab, mut rx) = hub.open_tab();
        let mut a = hub
            .send(&agent("a"), "tools/call", json!({}), false)
            .unwrap();
        let _b = hub
            .send(&agent("b"), "tools/call", json!({}), false)
            .unwrap();
        let first = request_of(rx.recv().await);
        request_of(rx.recv().await);
        hub.revoke("a");
        assert!(matches!(a.next().await, Some(ReplyBody::Error(e)) if e.code == codes::REVOKED));
        assert!(matches!(rx.recv().await, Some(TabEvent::Cancel(c)) if c.relay == first.relay));
        assert_eq!(hub.waiting(), 1);
    }
}
