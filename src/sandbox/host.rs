//! The app's end of the sandbox: the hidden iframe, the handshake that
//! hands it a `MessagePort`, and requests matched to their replies.
//!
//! The iframe's document is `public/sandbox/host.html`, compiled into the
//! app and handed over as its `srcdoc`: nothing is fetched to start the
//! sandbox, so it starts offline and from any static host alike. The page
//! carries its own no-network policy (a `<meta>` Content-Security-Policy)
//! and proves it is in force before it accepts a run. The iframe is
//! `sandbox="allow-scripts"` (never `allow-same-origin`), so its document
//! has an opaque origin and cannot touch the app's storage, cookies or
//! DOM; `allow="cross-origin-isolated"` gives it SharedArrayBuffer for
//! Python interrupts when the app itself is isolated. The handshake
//! accepts only a hello whose source is this iframe's window and whose
//! origin is `"null"`; after it, everything flows over a private
//! `MessagePort`, and every message is checked by hearth-core's
//! `parse_sandbox_message` before it is believed. A message that fails the
//! check, or a request that outlives its deadline, ends the connection: the
//! iframe is removed (which stops all its workers) and the next request
//! starts a fresh one.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use futures::FutureExt;
use futures::channel::oneshot;
use gloo_timers::future::TimeoutFuture;
use hearth_core::builtin::code::protocol::{
    HostMessage, MAX_MESSAGE_BYTES, SandboxMessage, parse_sandbox_message,
};
use js_sys::{Array, ArrayBuffer, JsString, Object, Reflect};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{HtmlIFrameElement, MessageChannel, MessageEvent, MessagePort};

use super::SandboxError;

/// The sandbox page, handed to the iframe as its `srcdoc`. The same file is
/// in the build as `/sandbox/host.html`, where `hearth serve` reads its
/// script's hash for the app's own policy, which the frame inherits.
pub const SANDBOX_PAGE: &str = include_str!("../../public/sandbox/host.html");
/// How long the page gets to load and say hello.
const START_DEADLINE_MS: u32 = 30_000;
/// Where replies that answer no request id (only `ready`) are matched.
const READY_KEY: &str = "@ready";
/// While a request waits, the sandbox is pinged this often…
const HEARTBEAT_MS: u32 = 1_000;
/// …and declared dead when a ping goes unanswered this long. Its page's
/// thread never runs untrusted code, so only a dead process is silent (for
/// example after a run exhausted its memory and took the process down).
const SILENCE_MS: u32 = 5_000;

const JAVASCRIPT_RUNNER: &str = include_str!("runners/javascript.js");
const PYTHON_RUNNER: &str = include_str!("runners/python.js");

/// A reply: the checked message and the buffers that came with it.
pub type Reply = Result<(SandboxMessage, Vec<ArrayBuffer>), SandboxError>;

type Pending = Rc<RefCell<HashMap<String, oneshot::Sender<Reply>>>>;

/// One live sandbox iframe.
pub struct Connection {
    iframe: HtmlIFrameElement,
    port: MessagePort,
    pending: Pending,
    alive: Rc<Cell<bool>>,
    /// Whether the iframe (and so its workers) is cross-origin isolated,
    /// which Python interrupts need.
    pub cross_origin_isolated: bool,
    /// Whether Python was loaded into this iframe.
    pub python_loaded: Cell<bool>,
    pings: Cell<u64>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
}

fn browser(e: JsValue) -> SandboxError {
    SandboxError::Browser(
        e.as_string()
            .or_else(|| {
                e.dyn_ref::<js_sys::Error>()
                    .map(|err| String::from(err.message()))
            })
            .unwrap_or_else(|| format!("{e:?}")),
    )
}

impl Connection {
    /// Creates the iframe, waits for its hello, hands it a port and the
    /// runners' sources, and waits until it is ready.
    pub async fn open() -> Result<Connection, SandboxError> {
        let window = web_sys::window().ok_or_else(|| SandboxError::Start("no window".into()))?;
        let document = window
            .document()
            .ok_or_else(|| SandboxError::Start("no document".into()))?;
        let body = document
            .body()
            .ok_or_else(|| SandboxError::Start("no document body".into()))?;
        let iframe: HtmlIFrameElement = document
            .create_element("iframe")
            .map_err(browser)?
            .unchecked_into();
        iframe
            .set_attribute("sandbox", "allow-scripts")
            .map_err(browser)?;
        iframe
            .set_attribute("allow", "cross-origin-isolated")
            .map_err(browser)?;
        iframe
            .set_attribute("referrerpolicy", "no-referrer")
            .map_err(browser)?;
        iframe
            .set_attribute("title", "Hearth code sandbox")
            .map_err(browser)?;
        iframe
            .set_attribute("aria-hidden", "true")
            .map_err(browser)?;
        iframe.set_attribute("tabindex", "-1").map_err(browser)?;
        iframe
            .set_attribute("class", "sandbox-frame")
            .map_err(browser)?;
        iframe
            .set_attribute("srcdoc", SANDBOX_PAGE)
            .map_err(browser)?;

        // The hello: only from this iframe's window, only from an opaque
        // origin, only once.
        let (hello_tx, hello_rx) = oneshot::channel::<()>();
        let hello_tx = Rc::new(RefCell::new(Some(hello_tx)));
        let on_hello = {
            let iframe = iframe.clone();
            let hello_tx = hello_tx.clone();
            Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
                let from_frame = match (ev.source(), iframe.content_window()) {
                    (Some(source), Some(frame)) => Object::is(&source, &frame),
                    _ => false,
                };
                let data = ev.data();
                let is_hello = Reflect::get(&data, &"hearth".into())
                    .ok()
                    .and_then(|v| v.as_string())
                    .as_deref()
                    == Some("sandbox-hello")
                    && Reflect::get(&data, &"v".into())
                        .ok()
                        .and_then(|v| v.as_f64())
                        == Some(1.0);
                if from_frame
                    && ev.origin() == "null"
                    && is_hello
                    && let Some(tx) = hello_tx.borrow_mut().take()
                {
                    let _ = tx.send(());
                }
            })
        };
        window
            .add_event_listener_with_callback("message", on_hello.as_ref().unchecked_ref())
            .map_err(browser)?;
        body.append_child(&iframe).map_err(browser)?;

        let said_hello = futures::select! {
            r = hello_rx.fuse() => r.is_ok(),
            _ = TimeoutFuture::new(START_DEADLINE_MS).fuse() => false,
        };
        let _ = window
            .remove_event_listener_with_callback("message", on_hello.as_ref().unchecked_ref());
        if !said_hello {
            iframe.remove();
            return Err(SandboxError::Start(
                "the sandbox page did not start (its script may have been refused by the page's security policy)"
                    .into(),
            ));
        }

        let channel = MessageChannel::new().map_err(browser)?;
        let port = channel.port1();
        let pending: Pending = Rc::new(RefCell::new(HashMap::new()));
        let alive = Rc::new(Cell::new(true));
        let on_message = {
            let pending = pending.clone();
            let alive = alive.clone();
            let iframe = iframe.clone();
            Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
                match read_message(&ev.data()) {
                    Ok((message, buffers)) => {
                        let key = message.request_id().unwrap_or(READY_KEY).to_string();
                        if let Some(tx) = pending.borrow_mut().remove(&key) {
                            let _ = tx.send(Ok((message, buffers)));
                        }
                    }
                    Err(e) => {
                        // The sandbox broke the protocol: believe nothing
                        // more from it.
                        web_sys::console::warn_1(&format!("sandbox: {e}").into());
                        alive.set(false);
                        iframe.remove();
                        fail_all(&pending, &SandboxError::Protocol(e));
                    }
                }
            })
        };
        port.set_onmessage(Some(on_message.as_ref().unchecked_ref()));

        let frame = iframe
            .content_window()
            .ok_or_else(|| SandboxError::Start("the sandbox frame has no window".into()))?;
        let connect = Object::new();
        Reflect::set(&connect, &"hearth".into(), &"connect".into()).map_err(browser)?;
        frame
            .post_message_with_transfer(&connect, "*", &Array::of1(&channel.port2()))
            .map_err(browser)?;

        let mut connection = Connection {
            iframe,
            port,
            pending,
            alive,
            cross_origin_isolated: false,
            python_loaded: Cell::new(false),
            pings: Cell::new(0),
            _on_message: on_message,
        };
        let init = HostMessage::Init {
            javascript_runner: JAVASCRIPT_RUNNER.to_string(),
            python_runner: PYTHON_RUNNER.to_string(),
        };
        match connection
            .request(READY_KEY, &init, Vec::new(), START_DEADLINE_MS)
            .await?
        {
            (
                SandboxMessage::Ready {
                    cross_origin_isolated,
                },
                _,
            ) => {
                connection.cross_origin_isolated = cross_origin_isolated;
                Ok(connection)
            }
            (SandboxMessage::Refused { message, .. }, _) => {
                // The page would not take code, e.g. because its no-network
                // policy is not in force: say why, and run nothing.
                connection.close(&SandboxError::Start(message.clone()));
                Err(SandboxError::Start(message))
            }
            (other, _) => {
                connection.close(&SandboxError::Protocol(format!(
                    "expected ready, got {other:?}"
                )));
                Err(SandboxError::Start("the sandbox did not get ready".into()))
            }
        }
    }

    pub fn is_alive(&self) -> bool {
        self.alive.get()
    }

    /// Sends `message` (answered under `id`) with `buffers` transferred,
    /// and waits at most `deadline_ms` for the reply, pinging the sandbox
    /// meanwhile. Past the deadline, or when the sandbox falls silent, the
    /// whole sandbox is torn down.
    pub async fn request(
        &self,
        id: &str,
        message: &HostMessage,
        buffers: Vec<ArrayBuffer>,
        deadline_ms: u32,
    ) -> Reply {
        let rx = self.send(id, message, buffers)?;
        futures::select! {
            reply = rx.fuse() => reply.unwrap_or(Err(SandboxError::Unresponsive)),
            _ = TimeoutFuture::new(deadline_ms).fuse() => {
                self.pending.borrow_mut().remove(id);
                self.close(&SandboxError::Unresponsive);
                Err(SandboxError::Unresponsive)
            }
            _ = self.heartbeat().fuse() => {
                self.pending.borrow_mut().remove(id);
                self.close(&SandboxError::Crashed);
                Err(SandboxError::Crashed)
            }
        }
    }

    /// Pings until a ping goes unanswered; returns only then.
    async fn heartbeat(&self) {
        loop {
            TimeoutFuture::new(HEARTBEAT_MS).await;
            let n = self.pings.get() + 1;
            self.pings.set(n);
            let id = format!("ping-{n}");
            let Ok(rx) = self.send(&id, &HostMessage::Ping { id: id.clone() }, Vec::new()) else {
                return;
            };
            let answered = futures::select! {
                reply = rx.fuse() => matches!(reply, Ok(Ok((SandboxMessage::Pong { .. }, _)))),
                _ = TimeoutFuture::new(SILENCE_MS).fuse() => false,
            };
            if !answered {
                self.pending.borrow_mut().remove(&id);
                return;
            }
        }
    }

    /// Posts `message` and returns where its reply will arrive.
    fn send(
        &self,
        id: &str,
        message: &HostMessage,
        buffers: Vec<ArrayBuffer>,
    ) -> Result<oneshot::Receiver<Reply>, SandboxError> {
        if !self.is_alive() {
            return Err(SandboxError::Unresponsive);
        }
        let (tx, rx) = oneshot::channel();
        self.pending.borrow_mut().insert(id.to_string(), tx);
        if let Err(e) = self.post(message, buffers) {
            self.pending.borrow_mut().remove(id);
            return Err(e);
        }
        Ok(rx)
    }

    /// Posts `message` with `buffers` transferred, waiting for nothing
    /// (a stop is answered by the run it stops, not by a reply of its own).
    pub fn post(
        &self,
        message: &HostMessage,
        buffers: Vec<ArrayBuffer>,
    ) -> Result<(), SandboxError> {
        if !self.is_alive() {
            return Err(SandboxError::Unresponsive);
        }
        let list = Array::new();
        for b in &buffers {
            list.push(b);
        }
        let envelope = Object::new();
        Reflect::set(&envelope, &"json".into(), &message.to_json().into()).map_err(browser)?;
        Reflect::set(&envelope, &"buffers".into(), &list).map_err(browser)?;
        self.port
            .post_message_with_transferable(&envelope, &list)
            .map_err(browser)
    }

    /// Removes the iframe (stopping every worker in it) and fails whatever
    /// was waiting.
    pub fn close(&self, why: &SandboxError) {
        self.alive.set(false);
        self.port.set_onmessage(None);
        self.port.close();
        self.iframe.remove();
        fail_all(&self.pending, why);
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if self.is_alive() {
            self.close(&SandboxError::Unresponsive);
        }
    }
}

fn fail_all(pending: &Pending, why: &SandboxError) {
    let waiting: Vec<_> = pending.borrow_mut().drain().collect();
    for (_, tx) in waiting {
        let _ = tx.send(Err(why.clone()));
    }
}

/// Checks a port message's envelope, then its JSON with core's rules.
fn read_message(data: &JsValue) -> Result<(SandboxMessage, Vec<ArrayBuffer>), String> {
    if !data.is_object() {
        return Err("a message that is not an object".into());
    }
    let json = Reflect::get(data, &"json".into()).map_err(|_| "no json field".to_string())?;
    let json: JsString = json
        .dyn_into()
        .map_err(|_| "the json field is not a string".to_string())?;
    // UTF-16 length bounds the UTF-8 length from below: refuse before
    // copying anything huge into wasm memory.
    if json.length() as usize > MAX_MESSAGE_BYTES {
        return Err(format!(
            "a message of {} characters, over the limit",
            json.length()
        ));
    }
    let json = String::from(json);
    let list = Reflect::get(data, &"buffers".into()).map_err(|_| "no buffers field".to_string())?;
    let list: Array = list
        .dyn_into()
        .map_err(|_| "the buffers field is not a list".to_string())?;
    let mut buffers = Vec::with_capacity(list.length() as usize);
    for item in list.iter() {
        let buffer: ArrayBuffer = item
            .dyn_into()
            .map_err(|_| "a buffer that is not an ArrayBuffer".to_string())?;
        buffers.push(buffer);
    }
    let sizes: Vec<u64> = buffers.iter().map(|b| b.byte_length() as u64).collect();
    let message = parse_sandbox_message(&json, &sizes).map_err(|e| e.to_string())?;
    Ok((message, buffers))
}
