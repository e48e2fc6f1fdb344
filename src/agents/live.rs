//! Agents' calls under way, shown in the tab: which agent, which skill,
//! and whether it waits for the person (then it can be denied from here
//! too) or runs. Also where the tab tells `hearth serve` that notes,
//! memories or skills changed, so agents listening hear of it.

use hearth_core::agents::wire::{ChangeNotice, NOTIFY_PATH};
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::runtime::Runtime;

/// One call under way.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveCall {
    pub relay: String,
    pub agent: String,
    pub skill: String,
    pub call_id: String,
    pub asking: bool,
}

/// The calls under way, and the channel's state.
#[derive(Clone, Copy)]
pub struct Live {
    calls: RwSignal<Vec<LiveCall>>,
    connected: RwSignal<bool>,
}

impl Live {
    /// Shows the calls in a corner of the page, from now on.
    pub fn mount(rt: Runtime) -> Live {
        let live = Live {
            calls: RwSignal::new(Vec::new()),
            connected: RwSignal::new(false),
        };
        let host = web_sys::window().and_then(|w| w.document()).and_then(|d| {
            let el = d.create_element("div").ok()?;
            el.set_id("agent-calls-root");
            d.body()?.append_child(&el).ok()?;
            el.dyn_into::<web_sys::HtmlElement>().ok()
        });
        if let Some(host) = host {
            let handle = leptos::mount::mount_to(host, move || {
                provide_context(rt.clone());
                view! { <LiveCalls live=live/> }
            });
            handle.forget();
        }
        live
    }

    pub fn set_connected(&self, on: bool) {
        self.connected.set(on);
    }

    pub fn started(&self, relay: &str, agent: &str, skill: &str, call_id: &str) {
        let call = LiveCall {
            relay: relay.into(),
            agent: agent.into(),
            skill: skill.into(),
            call_id: call_id.into(),
            asking: false,
        };
        self.calls.update(|c| c.push(call));
    }

    pub fn asking(&self, relay: &str, asking: bool) {
        let changed = self
            .calls
            .with_untracked(|c| c.iter().any(|l| l.relay == relay && l.asking != asking));
        if changed {
            self.calls.update(|c| {
                for l in c.iter_mut().filter(|l| l.relay == relay) {
                    l.asking = asking;
                }
            });
        }
    }

    pub fn finished(&self, relay: &str) {
        self.calls.update(|c| c.retain(|l| l.relay != relay));
    }

    /// The agent stopped waiting for it.
    pub fn cancelled(&self, relay: &str) {
        self.finished(relay);
    }
}

/// The corner list of agents' calls under way, and the change notices.
#[component]
fn LiveCalls(live: Live) -> impl IntoView {
    let rt = crate::runtime::use_runtime();
    notify_changes(rt.clone());
    let calls = live.calls;
    view! {
        <Show when=move || calls.with(|c| !c.is_empty())>
            <section class="agent-calls" aria-label="Agents' calls under way" role="status" aria-live="polite">
                <For
                    each=move || calls.get()
                    key=|l| (l.relay.clone(), l.asking)
                    children={
                        let rt = rt.clone();
                        move |l: LiveCall| {
                            let rt = rt.clone();
                            let call_id = l.call_id.clone();
                            let what = if l.asking {
                                "waiting for your approval"
                            } else {
                                "running"
                            };
                            view! {
                                <div class="agent-call" data-relay=l.relay.clone() data-asking=l.asking.to_string()>
                                    <span class="spinner" aria-hidden="true"></span>
                                    <span class="agent-call-text">
                                        <strong>{l.agent.clone()}</strong>
                                        {format!(" · {} · {what}", l.skill)}
                                    </span>
                                    {l.asking.then(|| view! {
                                        <button class="small" on:click=move |_| rt.approver().deny_call(&call_id)>"Deny"</button>
                                    })}
                                </div>
                            }
                        }
                    }
                />
            </section>
        </Show>
    }
}

/// Tells `hearth serve` when notes, memories or the skills change, a
/// moment after the last change, so agents listening refetch.
fn notify_changes(rt: Runtime) {
    let v = rt.versions();
    let first = std::cell::Cell::new(true);
    let pending = RwSignal::new(0u64);
    Effect::new(move |_| {
        v.notes.track();
        v.memories.track();
        v.registry.track();
        v.data.track();
        if first.replace(false) {
            return;
        }
        let n = pending.get_untracked() + 1;
        pending.set(n);
        let rt = rt.clone();
        leptos::task::spawn_local(async move {
            gloo_timers::future::TimeoutFuture::new(400).await;
            if pending.get_untracked() != n {
                return;
            }
            let notice = ChangeNotice {
                tools: true,
                resources: true,
            };
            let _: Result<serde_json::Value, _> = rt.web().client.post(NOTIFY_PATH, &notice).await;
        });
    });
}
