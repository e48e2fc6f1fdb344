//! The tab's end of the agents channel: a streamed `fetch` of
//! `GET /api/agents/channel` (with the app's key, like every API call),
//! read as SSE. Each `request` goes to the answerer `run` is given
//! ([`super::answer`], which sits above this transport), each
//! `cancel` withdraws a call that still waits for the person, each
//! `consent` asks the person about an agent signing in
//! ([`super::consent`]). A channel
//! that breaks (the server restarted, the network blinked) is opened
//! again, waiting longer each time; when the page goes away it tells the
//! server at once, so an agent hears "open Hearth" without delay.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use hearth_core::agents::consent::{CONSENT_PATH, ConsentAnswer, ConsentOutcome, ConsentRequest};
use hearth_core::agents::wire::{
    CHANNEL_PATH, RelayCancel, RelayReply, RelayedRequest, ReplyBody, TabHello,
};
use hearth_core::agents::{AgentRecord, agent_policy};
use hearth_core::skill::permission::{PermissionSettings, Policy};
use hearth_core::sse::SseParser;
use hearth_core::{AgentCaller, SkillDefinition, SkillId, ToolCall};
use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::prelude::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, Headers, ReadableStreamDefaultReader, RequestCache, RequestInit};

use futures::future::LocalBoxFuture;

use super::live::Live;
use crate::runtime::{AgentGrants, Runtime};

/// Waits before opening the channel again, in milliseconds: doubling up
/// to half a minute.
const RETRY_MS: [u32; 6] = [500, 1_000, 2_000, 5_000, 10_000, 30_000];

/// The grants of the agents this tab has heard of, as `hearth serve` sent
/// them with each request: what decides their calls.
pub struct Grants {
    rt: Runtime,
    pub agents: RefCell<HashMap<String, AgentRecord>>,
}

impl Grants {
    pub fn remember(&self, agent: &AgentRecord) {
        self.agents
            .borrow_mut()
            .insert(agent.id.clone(), agent.clone());
    }
}

impl AgentGrants for Grants {
    fn policy(&self, own: &PermissionSettings, skill: &SkillDefinition, call: &ToolCall) -> Policy {
        let agents = self.agents.borrow();
        match call.origin.agent().and_then(|a| agents.get(&a.id)) {
            Some(agent) => agent_policy(own, agent, skill, call),
            None => {
                let mut p = own.policy(skill);
                p.settings.enabled = Some(false);
                p
            }
        }
    }

    fn always_allow<'a>(
        &'a self,
        skill: &'a SkillId,
        agent: &'a AgentCaller,
    ) -> futures::future::LocalBoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let mut always = self
                .agents
                .borrow()
                .get(&agent.id)
                .map(|a| a.always.clone())
                .unwrap_or_default();
            if !always.iter().any(|s| s == skill.as_str()) {
                always.push(skill.to_string());
            }
            let update = hearth_core::agents::wire::AgentUpdate {
                always: Some(always),
                ..Default::default()
            };
            let saved: AgentRecord = self
                .rt
                .web()
                .client
                .put(hearth_core::agents::wire::agent_path(&agent.id), &update)
                .await
                .map_err(|f| crate::mcp::proxy::failure_text(&f))?;
            self.remember(&saved);
            crate::version::bump(self.rt.versions().permissions);
            Ok(())
        })
    }
}

/// Answers one relayed request on its channel.
pub type Answerer = fn(Rc<Channel>, RelayedRequest) -> LocalBoxFuture<'static, ()>;

/// What a running channel shares with the calls it answers.
pub struct Channel {
    pub rt: Runtime,
    answerer: Answerer,
    pub grants: Rc<Grants>,
    pub live: Live,
    /// This tab's name on the channel, from `hello`.
    pub tab: RefCell<String>,
    /// Calls still waiting, by relay id: the call's id, to withdraw it.
    pub waiting: RefCell<HashMap<String, String>>,
    /// The OAuth consents waiting for the person, once mounted.
    pub consents: RefCell<Option<super::consent::Consents>>,
}

impl Channel {
    /// Sends one reply for `relay`; a reply nobody waits for any more is
    /// dropped by the server, which is fine.
    pub async fn reply(&self, relay: &str, body: ReplyBody) {
        let reply = RelayReply {
            relay: relay.to_string(),
            tab: self.tab.borrow().clone(),
            body,
        };
        let _: Result<serde_json::Value, _> = self
            .rt
            .web()
            .client
            .post(hearth_core::agents::wire::REPLY_PATH, &reply)
            .await;
    }
}

fn js_text(e: &JsValue) -> String {
    Reflect::get(e, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}

/// Reads the channel once, until it ends. `Ok(true)`: it was open for a
/// while (so the next wait starts short again).
async fn read_once(channel: &Rc<Channel>) -> Result<bool, String> {
    let Some((name, key)) = channel.rt.web().client.key_header() else {
        return Err("this browser has no key to Hearth's server".into());
    };
    let init = RequestInit::new();
    init.set_method("GET");
    init.set_cache(RequestCache::NoStore);
    let headers = Headers::new().map_err(|e| js_text(&e))?;
    headers.set(&name, &key).map_err(|e| js_text(&e))?;
    init.set_headers(&headers);
    let controller = AbortController::new().map_err(|e| js_text(&e))?;
    init.set_signal(Some(&controller.signal()));
    let window = web_sys::window().ok_or("no window")?;
    let response: web_sys::Response =
        JsFuture::from(window.fetch_with_str_and_init(CHANNEL_PATH, &init))
            .await
            .map_err(|e| js_text(&e))?
            .unchecked_into();
    if !response.ok() {
        return Err(format!(
            "the channel was refused (HTTP {})",
            response.status()
        ));
    }
    let reader: ReadableStreamDefaultReader = response
        .body()
        .ok_or("the channel has no body")?
        .get_reader()
        .unchecked_into();
    let mut parser = SseParser::new();
    let mut heard = false;
    loop {
        let step = JsFuture::from(reader.read())
            .await
            .map_err(|e| js_text(&e))?;
        let done = Reflect::get(&step, &"done".into())
            .ok()
            .and_then(|d| d.as_bool())
            .unwrap_or(true);
        if done {
            return Ok(heard);
        }
        let bytes = Reflect::get(&step, &"value".into())
            .ok()
            .and_then(|v| v.dyn_into::<Uint8Array>().ok())
            .map(|a| a.to_vec())
            .unwrap_or_default();
        for event in parser.feed(&bytes).map_err(|e| e.to_string())? {
            match event.event_type() {
                "hello" => {
                    if let Ok(hello) = serde_json::from_str::<TabHello>(&event.data) {
                        *channel.tab.borrow_mut() = hello.tab;
                        heard = true;
                    }
                }
                "request" => {
                    if let Ok(request) = serde_json::from_str::<RelayedRequest>(&event.data) {
                        channel.grants.remember(&request.agent);
                        leptos::task::spawn_local((channel.answerer)(channel.clone(), request));
                    }
                }
                "cancel" => {
                    if let Ok(cancel) = serde_json::from_str::<RelayCancel>(&event.data) {
                        withdraw(channel, &cancel.relay);
                    }
                }
                "consent" => {
                    if let Ok(request) = serde_json::from_str::<ConsentRequest>(&event.data)
                        && let Some(consents) = *channel.consents.borrow()
                    {
                        consents.ask(request);
                    }
                }
                _ => {}
            }
        }
    }
}

/// The agent stopped waiting: a call still waiting for the person is
/// denied (its question goes away); one already running finishes, its
/// answer unheard.
fn withdraw(channel: &Channel, relay: &str) {
    let call = channel.waiting.borrow_mut().remove(relay);
    if let Some(call) = call {
        channel.rt.approver().deny_call(&call);
    }
    channel.live.cancelled(relay);
}

/// Tells the server this tab is going away, so its requests go elsewhere
/// (or fail with "open Hearth") at once.
fn on_page_hide(channel: Rc<Channel>) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let closure = Closure::<dyn FnMut()>::new(move || {
        let tab = channel.tab.borrow().clone();
        let Some((name, key)) = channel.rt.web().client.key_header() else {
            return;
        };
        if tab.is_empty() {
            return;
        }
        let init = RequestInit::new();
        init.set_method("DELETE");
        // `keepalive` lets the request outlive the page.
        let _ = Reflect::set(&init, &"keepalive".into(), &JsValue::TRUE);
        if let Ok(headers) = Headers::new() {
            let _ = headers.set(&name, &key);
            init.set_headers(&headers);
        }
        if let Some(w) = web_sys::window() {
            let _ = w.fetch_with_str_and_init(&format!("{CHANNEL_PATH}/{tab}"), &init);
        }
    });
    let _ = window.add_event_listener_with_callback("pagehide", closure.as_ref().unchecked_ref());
    closure.forget();
}

/// Runs the channel for as long as the tab lives, each request answered
/// by `answerer`.
pub async fn run(rt: Runtime, answerer: Answerer) {
    let grants = Rc::new(Grants {
        rt: rt.clone(),
        agents: RefCell::new(HashMap::new()),
    });
    *rt.services().agent_grants.borrow_mut() = Some(grants.clone());
    let channel = Rc::new(Channel {
        answerer,
        live: Live::mount(rt.clone()),
        rt,
        grants,
        tab: RefCell::new(String::new()),
        waiting: RefCell::new(HashMap::new()),
        consents: RefCell::new(None),
    });
    let answering = channel.clone();
    *channel.consents.borrow_mut() = Some(super::consent::Consents::mount(Rc::new(
        move |request, allow, shared| {
            let channel = answering.clone();
            leptos::task::spawn_local(async move {
                answer_consent(&channel, request, allow, shared).await;
            });
        },
    )));
    on_page_hide(channel.clone());
    let mut failures = 0usize;
    loop {
        channel.live.set_connected(true);
        match read_once(&channel).await {
            Ok(true) => failures = 0,
            Ok(false) => failures += 1,
            Err(e) => {
                web_sys::console::warn_1(&format!("agents channel: {e}").into());
                failures += 1;
            }
        }
        channel.live.set_connected(false);
        channel.tab.borrow_mut().clear();
        let wait = RETRY_MS[failures.min(RETRY_MS.len() - 1)];
        gloo_timers::future::TimeoutFuture::new(wait).await;
    }
}

/// Sends the person's answer to an OAuth consent to `hearth serve`, with
/// the app's key; an allowed agent's grant is remembered here.
async fn answer_consent(
    channel: &Channel,
    request: ConsentRequest,
    allow: bool,
    shared: Vec<String>,
) {
    let changed = shared != request.shared;
    let body = ConsentAnswer {
        consent: request.consent.clone(),
        tab: channel.tab.borrow().clone(),
        allow,
        shared: (allow && changed).then_some(shared),
    };
    let sent: Result<ConsentOutcome, _> = channel.rt.web().client.post(CONSENT_PATH, &body).await;
    match sent {
        Ok(outcome) => {
            if let Some(agent) = outcome.agent {
                channel.grants.remember(&agent);
            }
        }
        Err(e) => web_sys::console::warn_1(
            &format!(
                "agents: the answer to {} was not taken: {}",
                request.client_name,
                crate::mcp::proxy::failure_text(&e)
            )
            .into(),
        ),
    }
}
