//! Chat: the conversation list, the open conversation (messages streamed
//! from the model, its tool calls and their approvals inline, skill
//! chips and the token meter) and the composer. Without a model the
//! composer is a command bar: `/id text`, `/id {json}`, and free text
//! that finds skills to run through a form.

pub mod attachments;
mod composer;
pub mod conversations;
mod messages;
pub mod pictures;
pub mod reply;
pub mod resources;
pub mod skill_form;

use hearth_core::assistant::agent::{Conversation, ToolCallRecord};
use leptos::ev::KeyboardEvent;
use leptos::html;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;

use crate::assistant::use_assistant;
use crate::icons::Icon;
use crate::runtime::{Runtime, use_runtime};
use crate::shared::approval::InlineApprovals;
use crate::views::cards::{ArtifactSlot, ArtifactSource};
use crate::views::chat::attachments::Attachments;
use crate::views::chat::conversations::ConversationList;
use composer::Composer;
use messages::MessageView;

const EXAMPLES: [&str; 3] = [
    "/calc 15% of 847",
    "/calc 5 miles to km",
    "/calc today + 90 days",
];

/// The skills' display names and icons, by id.
fn skill_face(rt: &Runtime, id: &str) -> Option<(String, String)> {
    rt.registry()
        .get_str(id)
        .map(|s| (s.name.clone(), s.icon.clone()))
}

#[component]
pub fn ChatView() -> impl IntoView {
    let rt = use_runtime();
    let a = use_assistant();
    // Files attached or dropped here go to the next code run.
    let files = Attachments::new(rt.files());
    provide_context(files);
    // Pictures pasted, dropped or picked go to the model with the next
    // message.
    let pictures = pictures::Pictures::new(a.provider);
    provide_context(pictures);
    // The artifact open beside the chat, if any; it belongs to the
    // conversation on screen, so opening another closes it.
    let open_artifact = ArtifactOpen(RwSignal::new(None));
    provide_context(open_artifact);
    // Approvals of the conversation on screen are answered inline.
    let (current, visible) = (a.current, a.visible);
    Effect::new(move |_| visible.set(current.get()));
    Effect::new(move |_| {
        current.track();
        open_artifact.0.set(None);
    });
    on_cleanup(move || visible.set(None));

    // Ctrl+Shift+O starts a new chat; Esc stops the reply.
    let keys = {
        let a = a.clone();
        window_event_listener(leptos::ev::keydown, move |ev: KeyboardEvent| {
            let modifier = ev.ctrl_key() || ev.meta_key();
            if modifier && ev.shift_key() && ev.key().eq_ignore_ascii_case("o") {
                ev.prevent_default();
                a.new_conversation();
                focus_composer();
            } else if ev.key() == "Escape"
                && !ev.default_prevented()
                && let Some(id) = a.current.get_untracked()
                && a.running_now(&id)
            {
                a.stop(&id);
            }
        })
    };
    on_cleanup(move || keys.remove());
    // Focus starts in the composer once the page is drawn.
    request_animation_frame(focus_composer);

    let conversation = {
        let a = a.clone();
        Memo::new(move |_| a.current_conversation())
    };
    // The conversation's messages in order: what was said, the replies,
    // and the commands run, each as it was stored.
    let items = Memo::new(move |_| {
        conversation.with(|c| {
            c.as_ref()
                .map(|c| c.messages.iter().map(|m| m.id.clone()).collect::<Vec<_>>())
                .unwrap_or_default()
        })
    });
    let has_model = {
        let p = a.provider;
        Signal::derive(move || p.with(Option::is_some))
    };
    let ready = {
        let loaded = a.loaded;
        move || loaded.get()
    };

    // Keep the newest content in view while it streams, unless the
    // person scrolled up to read.
    let scroller = NodeRef::<html::Div>::new();
    let pinned = RwSignal::new(true);
    Effect::new(move |_| {
        conversation.track();
        items.track();
        if pinned.get_untracked()
            && let Some(el) = scroller.get_untracked()
        {
            el.set_scroll_top(el.scroll_height() as f64);
        }
    });

    // Undo runs as a command of its own, kept in the conversation too.
    let on_undo = {
        let rt = rt.clone();
        let a = a.clone();
        Callback::new(move |undo: hearth_core::skill::call::UndoAction| {
            let rt = rt.clone();
            let a = a.clone();
            let conv = a.current.get_untracked();
            spawn_local(async move {
                let label = undo.label.clone();
                let (call, result) = rt.undo_in(undo, conv.clone()).await;
                if let Some(id) = conv {
                    a.record_command(&id, &label, ToolCallRecord::ran(&call, result), false);
                }
            });
        })
    };

    let conv_id = Signal::derive(move || current.get());
    // An example on the empty chat, clicked: the composer runs it.
    let example: RwSignal<Option<String>> = RwSignal::new(None);
    view! {
        <div class="chat-layout" class:with-artifact=move || open_artifact.0.with(Option::is_some)>
            <ConversationList/>
            <section
                class="chat"
                aria-label="Chat"
                class:dragging=move || files.dragging()
                on:dragover=files.on_drag_over()
                on:dragleave=files.on_drag_leave()
                on:drop=files.on_drop(pictures)
            >
                <ChatHeader conversation=conversation has_model=has_model/>
                <OfferBanner/>
                <div
                    class="timeline"
                    aria-live="polite"
                    node_ref=scroller
                    on:scroll=move |ev| {
                        if let Some(el) = ev.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) {
                            let gap = el.scroll_height() as f64 - el.scroll_top() - el.client_height() as f64;
                            pinned.set(gap < 80.0);
                        }
                    }
                    on:click=crate::shared::markdown::copy_code
                >
                    <SaveError/>
                    <Show when=move || ready() && items.with(Vec::is_empty)>
                        {move || if has_model.get() { view! { <EmptyConversation/> }.into_any() } else { view! { <EmptyChat example=example/> }.into_any() }}
                    </Show>
                    <For
                        each=move || items.get()
                        key=|id| id.clone()
                        children=move |id| view! { <MessageView conversation=conversation message_id=id on_undo=on_undo/> }
                    />
                    <InlineApprovals conversation_id=conv_id/>
                    <TurnStatus conversation=conversation/>
                </div>
                <crate::shared::python::PythonStatus/>
                <Composer conversation=conversation has_model=has_model example=example/>
                <DeletedToast/>
            </section>
            <ArtifactSlot
                source=Signal::derive(move || open_artifact.0.get().map(ArtifactSource::Stored))
                close=Callback::new(move |()| open_artifact.0.set(None))
            />
        </div>
    }
}

/// Which artifact the panel beside the chat shows, if any: set by a tool
/// card's "Open artifact".
#[derive(Clone, Copy)]
pub struct ArtifactOpen(pub RwSignal<Option<String>>);

/// Puts the keyboard in the composer, when one is on the page.
pub fn focus_composer() {
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector(".composer-input").ok().flatten())
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = el.focus();
    }
}

#[component]
fn SaveError() -> impl IntoView {
    let a = use_assistant();
    let e = a.save_error;
    view! {
        <Show when=move || e.get().is_some()>
            <div class="banner error-banner" role="alert">
                <span>{move || e.get().unwrap_or_default()}</span>
                <button class="icon-button" aria-label="Dismiss" on:click=move |_| e.set(None)>"×"</button>
            </div>
        </Show>
    }
}

/// The title, the loaded skills as removable chips, and the token meter.
#[component]
fn ChatHeader(conversation: Memo<Option<Conversation>>, has_model: Signal<bool>) -> impl IntoView {
    let a = use_assistant();
    let rt = use_runtime();
    let chip_error: RwSignal<Option<String>> = RwSignal::new(None);
    let title = move || {
        conversation.with(|c| {
            c.as_ref().map(|c| c.title.clone()).unwrap_or_else(|| {
                hearth_core::assistant::agent::conversation::UNTITLED.to_string()
            })
        })
    };
    let chips = {
        let rt = rt.clone();
        move || {
            conversation.with(|c| {
                c.as_ref()
                    .map(|c| {
                        c.loaded_skills
                            .iter()
                            .map(|id| {
                                let face = skill_face(&rt, id.as_str());
                                (id.clone(), face)
                            })
                            .collect::<Vec<_>>()
                    })
                    .unwrap_or_default()
            })
        }
    };
    let estimate = {
        let a = a.clone();
        let registry = rt.versions().registry;
        let permissions = rt.versions().permissions;
        Memo::new(move |_| {
            registry.track();
            permissions.track();
            conversation.with(|c| c.as_ref().and_then(|c| a.context_estimate(c)))
        })
    };
    // The Agent Skill the conversation works as (a specialist), if any.
    let specialist = {
        let rt = rt.clone();
        move || {
            let skills = rt.agent_skills();
            skills.version.track();
            conversation.with(|c| {
                c.as_ref()
                    .and_then(|c| skills.model_turn(&c.id, &[]).specialist)
            })
        }
    };
    let window = {
        let a = a.clone();
        Signal::derive(move || a.context_window())
    };
    // A model in this tab whose chat template has no tools only chats.
    let tools_off = {
        let a = a.clone();
        move || has_model.get() && !a.tools_available()
    };
    view! {
        <header class="chat-head">
            <h1 class="chat-title">{title}</h1>
            {move || specialist().map(|name| view! {
                <span class="active-skill" data-active-skill=name.clone() title="The Agent Skill this conversation works with: its instructions are in the system prompt">
                    <Icon name="sparkle"/>
                    <span>{format!("Skill: {name}")}</span>
                </span>
            })}
            <ul class="skill-chips" aria-label="Loaded skills">
                <For
                    each=chips
                    key=|(id, _)| id.clone()
                    children=move |(id, face)| {
                        let a = a.clone();
                        let (name, icon) = face.unwrap_or_else(|| (id.to_string(), String::new()));
                        let label = format!("Remove {name}");
                        let conv = conversation;
                        let shown_id = id.to_string();
                        view! {
                            <li class="skill-chip" data-skill=shown_id title="Loaded in this conversation: sent to the model as a tool">
                                <Icon name=icon/>
                                <span>{name}</span>
                                <button class="chip-remove" aria-label=label on:click=move |_| {
                                    if let Some(c) = conv.get_untracked()
                                        && let Err(e) = a.unload_skill(&c.id, &id)
                                    {
                                        chip_error.set(Some(e.to_string()));
                                    }
                                }>"×"</button>
                            </li>
                        }
                    }
                />
            </ul>
            <Show when=move || has_model.get() && estimate.get().is_some()>
                {move || estimate.get().map(|e| {
                    let total = e.total();
                    let max = window.get().unwrap_or(8_192).max(1);
                    let pct = ((total as f64 / max as f64) * 100.0).min(100.0);
                    let of = window.get().map(|w| format!(" of {w}")).unwrap_or_default();
                    let detail = format!(
                        "Estimated context of the next request: system prompt {} (skills and servers add {}) + {} {} + history {} tokens",
                        e.system,
                        e.added,
                        hearth_core::util::display::count(e.tool_count, "tool", "tools"),
                        e.tools,
                        e.history
                    );
                    view! {
                        <div class="token-meter" title=detail.clone() aria-label=detail data-tokens=total.to_string() data-system=e.system.to_string() data-added=e.added.to_string() data-tools=e.tools.to_string() data-tool-count=e.tool_count.to_string()>
                            <span class="meter-bar"><span class="meter-fill" style=format!("width: {pct:.1}%")></span></span>
                            <span class="meter-text">{format!("≈ {total}{of} tokens")}</span>
                        </div>
                    }
                })}
            </Show>
            <Show when=tools_off.clone()>
                <span class="tools-off" data-testid="tools-off" title="Its chat template has no tool calling, so the assistant offers it no skills. Commands in the composer still run skills.">
                    "Tools off for this model"
                </span>
            </Show>
            <Show when=move || chip_error.get().is_some()>
                <p class="inline-error" role="alert">{move || chip_error.get().unwrap_or_default()}</p>
            </Show>
        </header>
    }
}

/// The first-start offer of a model server found on this machine.
#[component]
fn OfferBanner() -> impl IntoView {
    let a = use_assistant();
    let offers = a.offers;
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    view! {
        {move || offers.get().into_iter().next().map(|offer| {
            let a = a.clone();
            let dismiss = a.clone();
            let count = offer.models.len();
            let first = offer.models.first().map(|m| m.id.clone()).unwrap_or_default();
            let what = match count {
                0 => "no models yet".to_string(),
                1 => format!("model {first}"),
                n => format!("{first} and {} more models", n - 1),
            };
            let preset = offer.preset;
            view! {
                <div class="banner offer" role="region" aria-label="Local model found">
                    <Icon name="sparkle"/>
                    <span>{format!("{} is running on this machine with {what}. Chat with it?", preset.label)}</span>
                    <button class="primary small" disabled=count == 0 on:click=move |_| {
                        let a = a.clone();
                        let config = hearth_core::assistant::providers::ProviderConfig::from_preset(preset, "", first.clone());
                        spawn_local(async move {
                            if let Err(e) = a.save_provider(config).await {
                                error.set(Some(e.to_string()));
                            }
                        });
                    }>{format!("Use {}", preset.label)}</button>
                    <button class="icon-button" aria-label="Not now" title="Not now (won't ask again)" on:click=move |_| dismiss.dismiss_offers()>"×"</button>
                    {move || error.get().map(|e| view! { <span class="error">{e}</span> })}
                </div>
            }
        })}
    }
}

#[component]
fn DeletedToast() -> impl IntoView {
    let a = use_assistant();
    let deleted = a.deleted;
    // The Undo offer goes away by itself after a while.
    Effect::new(move |_| {
        if let Some(d) = deleted.get() {
            let id = d.conversation.id.clone();
            spawn_local(async move {
                gloo_timers::future::TimeoutFuture::new(10_000).await;
                let _ = deleted.try_update(|x| {
                    if x.as_ref().is_some_and(|x| x.conversation.id == id) {
                        *x = None;
                    }
                });
            });
        }
    });
    view! {
        {move || deleted.get().map(|d| {
            let a = a.clone();
            view! {
                <div class="toast" role="status">
                    <span>{format!("Deleted “{}”.", d.conversation.title)}</span>
                    <button class="small" on:click=move |_| a.undo_delete()>"Undo"</button>
                    <button class="icon-button" aria-label="Dismiss" on:click=move |_| deleted.set(None)>"×"</button>
                </div>
            }
        })}
    }
}

#[component]
fn EmptyChat(example: RwSignal<Option<String>>) -> impl IntoView {
    let a = use_assistant();
    view! {
        <div class="empty-state">
            <h2>"Run a skill"</h2>
            <p>"No model is set up yet, so the composer works as a command bar. Type "<kbd>"/"</kbd>" and a skill's name, then its input — or describe what you want to do and pick a skill. Or try one:"</p>
            <ul class="examples" aria-label="Examples">
                {EXAMPLES.iter().map(|e| view! {
                    <li>
                        <button type="button" class="example" title="Run this command"
                            on:click=move |_| example.set(Some(e.to_string()))
                        ><code>{*e}</code></button>
                    </li>
                }).collect_view()}
            </ul>
            <p class="muted"><a href="#/settings">"Set up a model provider"</a>" to chat with the assistant."</p>
            <p class="muted">
                <button type="button" class="small" data-testid="try-in-tab" on:click=move |_| {
                    a.tab.wanted.set(true);
                    if let Some(w) = web_sys::window() {
                        let _ = w.location().set_hash("#/settings");
                    }
                }>"Run a small model in this tab"</button>
                " — no server and no key: download one (a few hundred MB) and it answers offline."
            </p>
        </div>
    }
}

#[component]
fn EmptyConversation() -> impl IntoView {
    let a = use_assistant();
    let model = {
        let a = a.clone();
        move || a.model_label().unwrap_or_default()
    };
    // A model whose chat template has no tool calling only chats: say so
    // here instead of promising skills.
    let tools = move || a.tools_available();
    view! {
        <div class="empty-state">
            <h2>"Ask anything"</h2>
            {move || if tools() {
                view! {
                    <p>"The assistant finds the skills it needs as it goes. Every call passes the permission layer and is written to Activity."</p>
                }.into_any()
            } else {
                view! {
                    <p data-testid="chat-only">"This model only chats: its chat template has no tool calling, so the assistant offers it no skills. Skills still run from the composer: type "<kbd>"/"</kbd>" and a skill's name."</p>
                }.into_any()
            }}
            <p class="muted model-name">{model}</p>
        </div>
    }
}

/// A retry countdown, or the Continue offer after the step limit.
#[component]
fn TurnStatus(conversation: Memo<Option<Conversation>>) -> impl IntoView {
    let a = use_assistant();
    let id = move || conversation.with(|c| c.as_ref().map(|c| c.id.clone()));
    let retry = {
        let a = a.clone();
        move || id().and_then(|id| a.retrying.with(|r| r.get(&id).cloned()))
    };
    let paused = {
        let a = a.clone();
        move || id().is_some_and(|id| a.paused.with(|p| p.contains(&id)))
    };
    let tick = RwSignal::new(0u32);
    let handle = set_interval_with_handle(
        move || tick.update(|t| *t += 1),
        std::time::Duration::from_millis(500),
    )
    .ok();
    on_cleanup(move || {
        if let Some(h) = handle {
            h.clear();
        }
    });
    let steps = a.settings;
    // The model in this tab loading for this conversation's turn.
    let loading = {
        let a = a.clone();
        move || {
            let running = id().is_some_and(|id| a.is_running(&id));
            match a.tab.runtime.get() {
                crate::tabmodel::Runtime::Loading {
                    phase,
                    loaded,
                    total,
                    ..
                } if running => Some((phase, loaded, total)),
                _ => None,
            }
        }
    };
    // The model reading this turn's prompt, before its answer starts.
    let reading = {
        let a = a.clone();
        move || {
            let running = id().is_some_and(|id| a.is_running(&id));
            a.tab.reading.get().filter(|_| running)
        }
    };
    view! {
        {move || loading().map(|(phase, loaded, total)| {
            let what = match phase.as_str() {
                "runtime" => "Loading the model engine",
                "threads" => "Measuring how many threads run fastest here",
                _ => "Loading the model into this tab",
            };
            let pct = (total > 0.0).then(|| (loaded / total * 100.0).clamp(0.0, 100.0));
            view! {
                <div class="turn-status loading-model" role="status" data-testid="model-loading" data-phase=phase>
                    <progress max="100" value=pct.map(|p| p.to_string())></progress>
                    <span>{format!("{what}… {}", pct.map(|p| format!("{p:.0}%")).unwrap_or_default())}</span>
                </div>
            }
        })}
        {move || reading().map(|r| {
            let pct = (r.total > 0.0).then(|| (r.tokens / r.total * 100.0).clamp(0.0, 100.0));
            view! {
                <div class="turn-status reading-prompt" role="status" data-testid="model-reading">
                    <progress max="100" value=pct.map(|p| p.to_string())></progress>
                    <span>{format!(
                        "Reading the conversation: {} of {} tokens",
                        r.tokens as u64,
                        r.total as u64
                    )}</span>
                </div>
            }
        })}
        {move || retry().map(|r| {
            tick.track();
            let left = ((r.at_ms - js_sys::Date::now()) / 1000.0).ceil().max(0.0);
            view! {
                <p class="turn-status retrying" role="status">
                    {format!("{} Trying again in {left:.0} s…", r.error.message)}
                </p>
            }
        })}
        {
            let a = a.clone();
            move || paused().then(|| {
                let a = a.clone();
                let max = steps.with(|s| s.max_steps);
                view! {
                    <div class="turn-status paused" role="status">
                        <span>{format!("The assistant used its {max} steps for this turn.")}</span>
                        <button class="small" on:click=move |_| {
                            if let Some(id) = id() {
                                // Only shown after a turn ran, so the
                                // engine is in and this answers at once.
                                let a = a.clone();
                                spawn_local(async move {
                                    let _ = a.continue_turn(&id).await;
                                });
                            }
                        }>"Continue"</button>
                    </div>
                }
            })
        }
    }
}
