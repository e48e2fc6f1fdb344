//! Settings → Agents: connect another agent (Claude Code, Codex, goose,
//! Claude Desktop…) to Hearth's skills, with a named credential shown
//! once and the config snippet for it ready to copy; per agent, what it
//! may see, when its calls ask, what it is always allowed; revoke it.
//! `hearth serve` keeps the agents (`hearth_core::agents::wire`).

use hearth_core::agents::snippets::{Snippet, snippet};
use hearth_core::agents::wire::{
    AGENTS_PATH, AgentUpdate, AgentsListing, CreatedAgent, NewAgent, agent_path,
};
use hearth_core::agents::{AgentAsk, AgentClient, AgentRecord, opt_in_tier, shareable};
use hearth_core::{SkillDefinition, Tier};
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::Value;

use crate::runtime::{Runtime, use_runtime};
use crate::shared::confirm::ConfirmDialog;

/// The panel's state: the agents as `hearth serve` reports them, or why
/// they cannot be reached.
type Loaded = Option<Result<AgentsListing, String>>;

fn failure(f: hearth_core::builtin::web::WebFailure) -> String {
    crate::mcp::proxy::failure_text(&f)
}

async fn load(rt: &Runtime) -> Result<AgentsListing, String> {
    rt.web().client.get(AGENTS_PATH).await.map_err(failure)
}

fn reload(rt: Runtime, state: RwSignal<Loaded>) {
    spawn_local(async move {
        state.set(Some(load(&rt).await));
    });
}

/// The skills an agent could be given, in the registry's order.
fn shareable_skills(rt: &Runtime) -> Vec<SkillDefinition> {
    rt.registry()
        .iter()
        .filter(|s| shareable(s))
        .cloned()
        .collect()
}

fn when(ms: u64) -> String {
    js_sys::Date::new(&(ms as f64).into())
        .to_locale_string("default", &wasm_bindgen::JsValue::UNDEFINED)
        .as_string()
        .unwrap_or_default()
}

#[component]
pub fn AgentsPanel() -> impl IntoView {
    let rt = use_runtime();
    let state: RwSignal<Loaded> = RwSignal::new(None);
    let created: RwSignal<Option<CreatedAgent>> = RwSignal::new(None);
    // Read again whenever permissions change, an agent's "always allow"
    // answered in the tab included, so the cards show what holds now.
    let permissions = rt.versions().permissions;
    Effect::new({
        let rt = rt.clone();
        move |_| {
            permissions.track();
            reload(rt.clone(), state);
        }
    });
    let on_change = {
        let rt = rt.clone();
        Callback::new(move |_: ()| reload(rt.clone(), state))
    };
    view! {
        <section class="panel agents-panel" aria-labelledby="agents-title">
            <h2 id="agents-title">"Agents"</h2>
            <p class="muted">
                "Let your other agents — Claude Code, Codex, goose, Claude Desktop — use Hearth's notes, tasks and memory over MCP. "
                "Their calls run in this tab, ask you before they change anything, and show in Activity under the agent's name."
            </p>
            {move || match state.get() {
                None => view! { <p class="muted" role="status">"Looking for agents…"</p> }.into_any(),
                Some(Err(e)) => view! {
                    <p class="notice" data-testid="agents-unavailable">
                        "Agents reach Hearth through its local server. Open Hearth from the link `hearth serve` printed to connect one. "
                        <span class="muted">{format!("({e})")}</span>
                    </p>
                }.into_any(),
                Some(Ok(listing)) => {
                    let endpoint = listing.endpoint.clone();
                    let command = listing.command.clone();
                    view! {
                        <TabState tabs=listing.tabs/>
                        <p class="muted">"Endpoint: " <code data-testid="agents-endpoint">{endpoint.clone()}</code></p>
                        {move || created.get().map(|c| view! {
                            <NewCredential created=c endpoint=endpoint.clone() command=command.clone() on_done=Callback::new(move |_| created.set(None))/>
                        })}
                        <ConnectForm state=state created=created/>
                        {if listing.agents.is_empty() {
                            view! { <p class="empty-state small" data-testid="agents-empty">"No agents connected yet."</p> }.into_any()
                        } else {
                            view! {
                                <ul class="agent-list">
                                    {listing.agents.into_iter().map(|a| view! { <AgentCard agent=a on_change=on_change/> }).collect_view()}
                                </ul>
                            }.into_any()
                        }}
                    }.into_any()
                }
            }}
        </section>
    }
}

/// Whether a tab is taking agents' calls: this one, another, or none.
#[component]
fn TabState(tabs: usize) -> impl IntoView {
    let here = crate::agents::is_open();
    let text = match (here, tabs) {
        (true, _) => "This tab answers your agents' calls.".to_string(),
        (false, 0) => {
            "No Hearth tab answers agents yet: connect one below and this tab will.".to_string()
        }
        (false, n) => format!("{n} other Hearth tab(s) answer your agents' calls."),
    };
    view! { <p class="agents-tab-state" data-answering=here.to_string()>{text}</p> }
}

#[component]
fn ConnectForm(state: RwSignal<Loaded>, created: RwSignal<Option<CreatedAgent>>) -> impl IntoView {
    let rt = use_runtime();
    let client = RwSignal::new(AgentClient::ClaudeCode);
    let name = RwSignal::new(AgentClient::ClaudeCode.label().to_string());
    let busy = RwSignal::new(false);
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let connect = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let rt = rt.clone();
        let new = NewAgent {
            name: name.get_untracked(),
            client: client.get_untracked(),
        };
        busy.set(true);
        error.set(None);
        spawn_local(async move {
            let made: Result<CreatedAgent, String> = rt
                .web()
                .client
                .post(AGENTS_PATH, &new)
                .await
                .map_err(failure);
            match made {
                Ok(c) => {
                    created.set(Some(c));
                    state.set(Some(load(&rt).await));
                    // From now on this tab answers agents.
                    spawn_local(crate::agents::open(rt));
                }
                Err(e) => error.set(Some(e)),
            }
            busy.set(false);
        });
    };
    view! {
        <form class="agent-connect" on:submit=connect>
            <h3>"Connect an agent"</h3>
            <div class="row">
                <label>
                    <span>"Agent"</span>
                    <select aria-label="Agent" on:change=move |ev| {
                        let picked = AgentClient::parse(&event_target_value(&ev)).unwrap_or_default();
                        // Keep a name the person typed; follow the pick otherwise.
                        if AgentClient::ALL.iter().any(|c| c.label() == name.get_untracked()) {
                            name.set(picked.label().to_string());
                        }
                        client.set(picked);
                    }>
                        {AgentClient::ALL.into_iter().map(|c| view! {
                            <option value=c.as_str() selected=move || client.get() == c>{c.label()}</option>
                        }).collect_view()}
                    </select>
                </label>
                <label>
                    <span>"Name"</span>
                    <input type="text" aria-label="Agent name" maxlength="60" required
                        prop:value=move || name.get()
                        on:input=move |ev| name.set(event_target_value(&ev))/>
                </label>
                <button class="primary" type="submit" disabled=move || busy.get()>"Connect"</button>
            </div>
            <Show when=move || error.get().is_some()>
                <p class="error" role="alert">{move || error.get().unwrap_or_default()}</p>
            </Show>
        </form>
    }
}

/// Copies `text`, saying so on the button.
fn copy(text: String, label: RwSignal<&'static str>) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let promise = window.navigator().clipboard().write_text(&text);
    spawn_local(async move {
        let done = wasm_bindgen_futures::JsFuture::from(promise).await.is_ok();
        label.set(if done { "Copied" } else { "Copy failed" });
        gloo_timers::future::TimeoutFuture::new(1_500).await;
        label.set("Copy");
    });
}

/// The credential, shown once, and how to give it to each kind of agent.
#[component]
fn NewCredential(
    created: CreatedAgent,
    endpoint: String,
    command: String,
    on_done: Callback<()>,
) -> impl IntoView {
    let shown = RwSignal::new(created.agent.client);
    let credential = created.credential.clone();
    let name = created.agent.name.clone();
    let snippets: Vec<Snippet> = AgentClient::ALL
        .into_iter()
        .map(|c| snippet(c, &endpoint, &command, &credential))
        .collect();
    let key_label = RwSignal::new("Copy");
    let snippet_label = RwSignal::new("Copy");
    let current = {
        let snippets = snippets.clone();
        move || {
            snippets
                .iter()
                .find(|s| s.client == shown.get())
                .cloned()
                .unwrap_or_else(|| snippets[0].clone())
        }
    };
    let current_text = current.clone();
    let current_copy = current.clone();
    view! {
        <div class="agent-credential card" role="region" aria-label="New agent credential" data-testid="agent-credential">
            <h3>{format!("{name} is connected")}</h3>
            <p>"Its credential is shown only now. Copy it, or the snippet for your agent, before you close this."</p>
            <div class="credential-row">
                <code class="credential" data-testid="agent-key">{credential.clone()}</code>
                <button class="small" on:click={
                    let credential = credential.clone();
                    move |_| copy(credential.clone(), key_label)
                }>{move || key_label.get()}</button>
            </div>
            <div class="snippet-tabs" role="tablist" aria-label="Config for">
                {AgentClient::ALL.into_iter().map(|c| view! {
                    <button role="tab" class="tab" aria-selected=move || (shown.get() == c).to_string()
                        on:click=move |_| shown.set(c)>{c.label()}</button>
                }).collect_view()}
            </div>
            <p class="muted">{move || current().place}</p>
            <pre class="agent-snippet" data-testid="agent-snippet" data-client=move || shown.get().as_str()>{move || current_text().text}</pre>
            <div class="modal-actions">
                <button on:click=move |_| copy(current_copy().text, snippet_label)>{move || snippet_label.get()}</button>
                <button class="primary" on:click=move |_| on_done.run(())>"Done"</button>
            </div>
        </div>
    }
}

/// One connected agent: what it sees, when it asks, what it is always
/// allowed; rename and revoke.
#[component]
fn AgentCard(agent: AgentRecord, on_change: Callback<()>) -> impl IntoView {
    let rt = use_runtime();
    let skills = shareable_skills(&rt);
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let confirming = RwSignal::new(false);
    let id = agent.id.clone();
    let save = {
        let rt = rt.clone();
        let id = id.clone();
        move |update: AgentUpdate| {
            let rt = rt.clone();
            let id = id.clone();
            spawn_local(async move {
                let saved: Result<AgentRecord, String> = rt
                    .web()
                    .client
                    .put(agent_path(&id), &update)
                    .await
                    .map_err(failure);
                match saved {
                    Ok(_) => on_change.run(()),
                    Err(e) => error.set(Some(format!("Not saved: {e}"))),
                }
            });
        }
    };
    let revoke = {
        let rt = rt.clone();
        let id = id.clone();
        move || {
            confirming.set(false);
            let rt = rt.clone();
            let id = id.clone();
            spawn_local(async move {
                let done: Result<Value, String> = rt
                    .web()
                    .client
                    .delete(agent_path(&id))
                    .await
                    .map_err(failure);
                match done {
                    Ok(_) => on_change.run(()),
                    Err(e) => error.set(Some(format!("Not revoked: {e}"))),
                }
            });
        }
    };
    let (everyday, opt_in): (Vec<SkillDefinition>, Vec<SkillDefinition>) =
        skills.into_iter().partition(|s| !opt_in_tier(s.tier));
    let shared = agent.shared.clone();
    let checkbox = {
        let save = save.clone();
        let shared = shared.clone();
        move |s: SkillDefinition| {
            let on = shared.iter().any(|x| x == s.id.as_str());
            let save = save.clone();
            let shared = shared.clone();
            let sid = s.id.to_string();
            let network = matches!(s.tier, Tier::Network | Tier::Integration);
            view! {
                <li>
                    <label>
                        <input type="checkbox" prop:checked=on data-skill=sid.clone()
                            on:change=move |ev| {
                                let mut next: Vec<String> = shared.iter().filter(|x| **x != sid).cloned().collect();
                                if event_target_checked(&ev) {
                                    next.push(sid.clone());
                                }
                                save(AgentUpdate { shared: Some(next), ..AgentUpdate::default() });
                            }/>
                        <span>{s.name.clone()}</span>
                        {network.then(|| view! { <span class=format!("tier-badge tier-{}", s.tier.as_str())>{s.tier.label()}</span> })}
                    </label>
                </li>
            }
        }
    };
    let always = agent.always.clone();
    let ask = agent.ask;
    let last = agent
        .last_used_ms
        .map(|t| format!("last used {}", when(t)))
        .unwrap_or_else(|| "not used yet".into());
    let name = agent.name.clone();
    view! {
        <li class="agent-card card" data-agent=agent.name.clone()>
            <header class="agent-head">
                <div>
                    <h3>{agent.name.clone()}</h3>
                    <p class="muted">{format!("{} · connected {} · {last}", agent.client.label(), when(agent.created_ms))}</p>
                </div>
                <button class="danger small" on:click=move |_| confirming.set(true)>"Revoke…"</button>
            </header>
            <fieldset>
                <legend>"May use"</legend>
                <ul class="agent-skills">{everyday.into_iter().map(checkbox.clone()).collect_view()}</ul>
                {(!opt_in.is_empty()).then(|| view! {
                    <details class="agent-opt-in">
                        <summary>"Network skills (off unless you choose them)"</summary>
                        <ul class="agent-skills">{opt_in.into_iter().map(checkbox.clone()).collect_view()}</ul>
                    </details>
                })}
                <p class="hint">"Tools from MCP servers you added are never shared: an agent can connect to those servers itself."</p>
            </fieldset>
            <fieldset class="modes">
                <legend>"Asks you"</legend>
                {AgentAsk::ALL.into_iter().map(|a| {
                    let save = save.clone();
                    let group = format!("ask-{}", agent.id);
                    view! {
                        <label class="mode">
                            <input type="radio" name=group value=a.as_str() prop:checked=ask == a
                                on:change=move |_| save(AgentUpdate { ask: Some(a), ..AgentUpdate::default() })/>
                            <span><strong>{a.label()}</strong></span>
                        </label>
                    }
                }).collect_view()}
            </fieldset>
            {(!always.is_empty()).then(|| {
                let save = save.clone();
                view! {
                    <div class="agent-always">
                        <h4>"Always allowed for this agent"</h4>
                        <ul>
                            {always.iter().map(|s| {
                                let save = save.clone();
                                let rest: Vec<String> = always.iter().filter(|x| *x != s).cloned().collect();
                                view! {
                                    <li>
                                        <code>{s.clone()}</code>
                                        <button class="small" on:click=move |_| save(AgentUpdate { always: Some(rest.clone()), ..AgentUpdate::default() })>"Ask again"</button>
                                    </li>
                                }
                            }).collect_view()}
                        </ul>
                    </div>
                }
            })}
            <Show when=move || error.get().is_some()>
                <p class="error" role="alert">{move || error.get().unwrap_or_default()}</p>
            </Show>
            <Show when=move || confirming.get()>
                <ConfirmDialog
                    title=format!("Revoke {name}?")
                    message="Its credential stops working at once and its open sessions end. Its past calls stay in Activity.".to_string()
                    confirm_label="Revoke".to_string()
                    on_confirm={
                        let revoke = revoke.clone();
                        move || revoke()
                    }
                    on_cancel=move || confirming.set(false)
                />
            </Show>
        </li>
    }
}
