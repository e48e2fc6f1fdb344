//! The browser's pieces of OAuth 2.1 for MCP servers: secure randomness
//! from `crypto.getRandomValues`, the sign-in as a popup that comes back
//! to `/oauth-callback.html` (which hands the redirect URL back over a
//! same-origin `BroadcastChannel`, and to the opener when it still has
//! one), and the tokens kept in this browser's IndexedDB.
//!
//! A popup may only open from a click, and signing in starts when a server
//! answers 401 — long after any click. So the authorizer does not open it:
//! it puts the sign-in on [`SignIns`], the Servers panel shows a "Sign in"
//! button, and that click opens the popup.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use futures::FutureExt;
use futures::channel::oneshot;
use futures::future::LocalBoxFuture;
use hearth_core::mcp::authorize::{Authorizer, Randomness};
use hearth_core::mcp::oauth::{AuthError, ClientMetadata};
use hearth_core::mcp::skills::ServerId;
use hearth_core::mcp::url::{HttpUrl, form_decode};
use leptos::prelude::*;
use send_wrapper::SendWrapper;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

/// Where the authorization server sends the browser back.
pub const CALLBACK_PATH: &str = "/oauth-callback.html";
/// The channel the callback page posts on.
pub const CHANNEL: &str = "hearth-oauth";
/// The message type the callback page sends.
pub const MESSAGE_TYPE: &str = "hearth-oauth-callback";

/// `crypto.getRandomValues`.
pub struct WebRandomness;

impl Randomness for WebRandomness {
    fn fill(&self, buf: &mut [u8]) {
        let crypto = web_sys::window().and_then(|w| w.crypto().ok());
        // At most 65536 bytes per call; PKCE and state need far fewer.
        let ok = crypto.is_some_and(|c| {
            buf.chunks_mut(65536)
                .all(|chunk| c.get_random_values_with_u8_array(chunk).is_ok())
        });
        // Without secure randomness PKCE and state would be guessable.
        assert!(ok, "the browser's crypto.getRandomValues is unavailable");
    }
}

/// What Hearth says about itself to authorization servers.
pub fn client_metadata(origin: &str) -> ClientMetadata {
    let loopback = HttpUrl::parse(origin).is_ok_and(|u| u.is_loopback());
    ClientMetadata {
        client_name: "Hearth".into(),
        redirect_uris: vec![format!("{origin}{CALLBACK_PATH}")],
        application_type: if loopback { "native" } else { "web" }.into(),
        want_refresh: true,
    }
}

/// The `state` parameter of a URL, which ties a callback to its sign-in.
pub fn state_of(url: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    let query = query.split('#').next().unwrap_or(query);
    form_decode(query)
        .into_iter()
        .find(|(k, _)| k == "state")
        .map(|(_, v)| v)
}

/// A sign-in waiting for the person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingSignIn {
    pub key: u64,
    pub server: ServerId,
    pub url: String,
    /// The popup was opened; waiting for it to come back.
    pub opened: bool,
}

struct Waiting {
    state: String,
    tx: oneshot::Sender<Result<String, AuthError>>,
}

/// The sign-ins in progress, shown in the Servers panel.
pub struct SignIns {
    pub pending: RwSignal<Vec<PendingSignIn>>,
    waiting: RefCell<HashMap<u64, Waiting>>,
    next: Cell<u64>,
}

impl SignIns {
    /// Also starts listening for the callback page.
    pub fn new() -> Rc<SignIns> {
        let center = Rc::new(SignIns {
            pending: RwSignal::new(Vec::new()),
            waiting: RefCell::new(HashMap::new()),
            next: Cell::new(1),
        });
        listen(Rc::downgrade(&center));
        center
    }

    /// Opens the sign-in page in a popup; call from a click.
    pub fn open(&self, key: u64) -> Result<(), String> {
        let Some(p) = self
            .pending
            .with_untracked(|list| list.iter().find(|p| p.key == key).cloned())
        else {
            return Ok(());
        };
        let window = web_sys::window().ok_or("no window")?;
        // Opened blank, cut off from this tab, and only then sent to the
        // sign-in page: the page of another site gets no handle on Hearth's
        // tab (`noopener`), and a blocked popup can still be told apart
        // (with `noopener` in the features, `open` always answers null).
        let popup = window
            .open_with_url_and_target_and_features(
                "about:blank",
                "hearth-sign-in",
                "popup,width=520,height=720",
            )
            .map_err(|e| format!("{e:?}"))?;
        let Some(popup) = popup else {
            return Err(
                "the browser blocked the sign-in window; allow pop-ups for Hearth and try again"
                    .into(),
            );
        };
        popup
            .set_opener(&wasm_bindgen::JsValue::NULL)
            .map_err(|e| {
                let _ = popup.close();
                format!("the sign-in window could not be cut off from Hearth ({e:?})")
            })?;
        popup.location().replace(&p.url).map_err(|e| {
            let _ = popup.close();
            format!("the sign-in page could not be opened ({e:?})")
        })?;
        self.pending.update(|list| {
            if let Some(item) = list.iter_mut().find(|i| i.key == key) {
                item.opened = true;
            }
        });
        Ok(())
    }

    /// The person gave up on a sign-in.
    pub fn cancel(&self, key: u64) {
        if let Some(w) = self.waiting.borrow_mut().remove(&key) {
            let _ = w.tx.send(Err(AuthError::Cancelled));
        }
        self.pending.update(|list| list.retain(|p| p.key != key));
    }

    /// Delivers a callback URL to the sign-in whose `state` it carries.
    pub fn deliver(&self, callback: &str) -> bool {
        let Some(state) = state_of(callback) else {
            return false;
        };
        let key = self
            .waiting
            .borrow()
            .iter()
            .find(|(_, w)| w.state == state)
            .map(|(k, _)| *k);
        let Some(key) = key else {
            return false;
        };
        if let Some(w) = self.waiting.borrow_mut().remove(&key) {
            let _ = w.tx.send(Ok(callback.to_string()));
        }
        self.pending.update(|list| list.retain(|p| p.key != key));
        true
    }

    fn ask(&self, server: &ServerId, url: &str) -> oneshot::Receiver<Result<String, AuthError>> {
        let (tx, rx) = oneshot::channel();
        let key = self.next.get();
        self.next.set(key + 1);
        let Some(state) = state_of(url) else {
            let _ = tx.send(Err(AuthError::Malformed {
                what: "authorization URL".into(),
                detail: "it carries no state".into(),
            }));
            return rx;
        };
        // A new sign-in for the same server replaces an older one.
        let stale: Vec<u64> = self.pending.with_untracked(|l| {
            l.iter()
                .filter(|p| &p.server == server)
                .map(|p| p.key)
                .collect()
        });
        for k in stale {
            self.cancel(k);
        }
        self.waiting.borrow_mut().insert(key, Waiting { state, tx });
        self.pending.update(|list| {
            list.push(PendingSignIn {
                key,
                server: server.clone(),
                url: url.to_string(),
                opened: false,
            })
        });
        rx
    }
}

/// Listens on the channel and for `postMessage` from the popup; only this
/// origin's messages count.
fn listen(center: std::rc::Weak<SignIns>) {
    let origin = super::proxy::app_origin();
    let from_message = {
        let center = center.clone();
        move |data: wasm_bindgen::JsValue| {
            let kind = js_sys::Reflect::get(&data, &"type".into())
                .ok()
                .and_then(|t| t.as_string());
            let url = js_sys::Reflect::get(&data, &"url".into())
                .ok()
                .and_then(|u| u.as_string());
            if let (Some(kind), Some(url), Some(c)) = (kind, url, center.upgrade())
                && kind == MESSAGE_TYPE
            {
                c.deliver(&url);
            }
        }
    };
    if let Ok(channel) = web_sys::BroadcastChannel::new(CHANNEL) {
        let handler = from_message.clone();
        let cb =
            Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
                handler(e.data())
            });
        channel.set_onmessage(Some(cb.as_ref().unchecked_ref()));
        cb.forget();
        // Kept for the life of the page.
        std::mem::forget(channel);
    }
    let cb = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
        if e.origin() == origin {
            from_message(e.data());
        }
    });
    if let Some(w) = web_sys::window() {
        let _ = w.add_event_listener_with_callback("message", cb.as_ref().unchecked_ref());
    }
    cb.forget();
}

/// The `Authorizer` for one server: queues the sign-in and waits.
pub struct PopupAuthorizer {
    pub server: ServerId,
    pub center: SendWrapper<Rc<SignIns>>,
}

impl Authorizer for PopupAuthorizer {
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> LocalBoxFuture<'a, Result<String, AuthError>> {
        let rx = self.center.ask(&self.server, authorization_url);
        async move { rx.await.unwrap_or(Err(AuthError::Cancelled)) }.boxed_local()
    }
}
