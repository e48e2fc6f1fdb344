//! Chat: the conversation list, the open conversation (messages streamed
//! from the model, its tool calls and their approvals inline, skill
//! chips and the token meter) and the composer. Without a model the
//! composer is a command bar: `/id text`, `/id {json}`, and free text
//! that finds skills to run through a form.

pub mod attachments;
pub mod conversations;
pub mod reply;
pub mod resources;
pub mod skill_form;

use hearth_core::assistant::agent::{Conversation, Message, MessageStatus, Role, ToolCallRecord};
use hearth_core::discovery::{Discovery, IndexedSkill, discover};
use hearth_core::skill::activity::ActivityRecord;
use hearth_core::ui::composer;
use hearth_core::{CallOrigin, SkillDefinition};
use leptos::ev::KeyboardEvent;
use leptos::html;
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::Value;
use wasm_bindgen::JsCast;

use crate::assistant::{Assistant, use_assistant};
use crate::icons::Icon;
// MCP: apps under results, prompts as commands, attachments.
use crate::mcp::apps::McpAppSlot;
use crate::mcp::use_mcp;
use crate::runtime::{Runtime, use_runtime};
use crate::shared::approval::InlineApprovals;
use crate::views::cards::{CopyButton, ResultCard, ToolCallCard};
use crate::views::chat::attachments::{AttachButton, AttachmentList, Attachments, use_attachments};
use crate::views::chat::conversations::ConversationList;
use crate::views::chat::reply::ReplyText;
use crate::views::chat::resources::{AttachmentChips, ResourcePicker};
use crate::views::chat::skill_form::SkillFormDialog;

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
    // Approvals of the conversation on screen are answered inline.
    let (current, visible) = (a.current, a.visible);
    Effect::new(move |_| visible.set(current.get()));
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
        <div class="chat-layout">
            <ConversationList/>
            <section
                class="chat"
                aria-label="Chat"
                class:dragging=move || files.dragging()
                on:dragover=files.on_drag_over()
                on:dragleave=files.on_drag_leave()
                on:drop=files.on_drop()
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
        </div>
    }
}

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

/// One message: the person's (editable when it is the last), or the
/// model's (Markdown, tool cards, errors, Regenerate when it is the last).
#[component]
fn MessageView(
    conversation: Memo<Option<Conversation>>,
    message_id: String,
    on_undo: Callback<hearth_core::skill::call::UndoAction>,
) -> impl IntoView {
    let id = message_id.clone();
    let message = Memo::new(move |_| {
        conversation.with(|c| {
            c.as_ref()
                .and_then(|c| c.messages.iter().find(|m| m.id == id).cloned())
        })
    });
    let role = message.with_untracked(|m| m.as_ref().map(|m| m.role));
    match role {
        Some(Role::User) => {
            view! { <UserMessage conversation=conversation message=message/> }.into_any()
        }
        Some(Role::Assistant) => {
            view! { <AssistantMessage conversation=conversation message=message/> }.into_any()
        }
        Some(Role::Command) => {
            // A stored command does not change, so its card is drawn once.
            let rt = use_runtime();
            message
                .get_untracked()
                .and_then(|m| command_card(&rt, &m))
                .map(|(record, line, from_form)| {
                    let icon = skill_face(&rt, record.skill_id.as_str())
                        .map(|f| f.1)
                        .unwrap_or_default();
                    let app = record.clone();
                    view! {
                        <ResultCard record=record icon=icon line=line from_form=from_form on_undo=on_undo/>
                        <McpAppSlot record=app/>
                    }
                    .into_any()
                })
                .unwrap_or_else(|| ().into_any())
        }
        None => ().into_any(),
    }
}

fn is_last_of(conversation: &Option<Conversation>, message_id: &str, role: Role) -> bool {
    conversation.as_ref().is_some_and(|c| {
        c.messages
            .iter()
            .rev()
            .find(|m| m.role == role)
            .is_some_and(|m| m.id == message_id)
    })
}

#[component]
fn UserMessage(
    conversation: Memo<Option<Conversation>>,
    message: Memo<Option<Message>>,
) -> impl IntoView {
    let a = use_assistant();
    let editing = RwSignal::new(false);
    let draft = RwSignal::new(String::new());
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let full = move || message.with(|m| m.as_ref().map(|m| m.content.clone()).unwrap_or_default());
    // Attached server resources travel in the message after its text; the
    // bubble shows the text and how many went with it.
    let text = move || split_attachments(&full()).0.to_string();
    let attached = move || {
        let content = full();
        let tail = split_attachments(&content).1;
        tail.matches(ATTACHMENT_OPEN).count()
    };
    let edit_box = NodeRef::<html::Textarea>::new();
    Effect::new(move |_| {
        if editing.get()
            && let Some(el) = edit_box.get()
        {
            let _ = el.focus();
        }
    });
    let can_edit = {
        let a = a.clone();
        move || {
            let mid = message.with(|m| m.as_ref().map(|m| m.id.clone()).unwrap_or_default());
            conversation.with(|c| {
                is_last_of(c, &mid, Role::User) && c.as_ref().is_some_and(|c| !a.is_running(&c.id))
            }) && a.provider.with(Option::is_some)
        }
    };
    let resend = {
        let a = a.clone();
        move || {
            let Some(c) = conversation.get_untracked() else {
                return;
            };
            let content = full();
            let tail = split_attachments(&content).1;
            let message = format!("{}{tail}", draft.get_untracked());
            let a = a.clone();
            spawn_local(async move {
                match a.edit_and_resend(&c.id, &message).await {
                    Ok(()) => {
                        editing.set(false);
                        error.set(None);
                    }
                    Err(e) => error.set(Some(e.to_string())),
                }
            });
        }
    };
    view! {
        <div class="message user" data-role="user">
            <Show
                when=move || editing.get()
                fallback=move || view! {
                    <div class="bubble">{text}</div>
                    {move || (attached() > 0).then(|| view! {
                        <p class="muted attached-count"><Icon name="paperclip"/>{match attached() {
                            1 => " 1 resource attached".to_string(),
                            n => format!(" {n} resources attached"),
                        }}</p>
                    })}
                }
            >
                <div class="bubble editing">
                    <textarea
                        node_ref=edit_box
                        class="edit-input"
                        aria-label="Edit message"
                        prop:value=move || draft.get()
                        on:input=move |ev| draft.set(event_target_value(&ev))
                        on:keydown={
                            let resend = resend.clone();
                            move |ev: KeyboardEvent| match ev.key().as_str() {
                                "Enter" if !ev.shift_key() => { ev.prevent_default(); resend(); }
                                "Escape" => { ev.prevent_default(); ev.stop_propagation(); editing.set(false); }
                                _ => {}
                            }
                        }
                    ></textarea>
                    <div class="edit-actions">
                        <button class="small" on:click=move |_| editing.set(false)>"Cancel"</button>
                        <button class="small primary" on:click={
                            let resend = resend.clone();
                            move |_| resend()
                        }>"Send"</button>
                    </div>
                </div>
            </Show>
            <Show when=move || error.get().is_some()>
                <p class="inline-error" role="alert">{move || error.get().unwrap_or_default()}</p>
            </Show>
            <Show when=move || can_edit() && !editing.get()>
                <div class="message-actions">
                    <button class="small ghost" title="Edit and send again" on:click=move |_| {
                        draft.set(text());
                        editing.set(true);
                    }><Icon name="pencil"/>" Edit"</button>
                </div>
            </Show>
        </div>
    }
}

#[component]
fn AssistantMessage(
    conversation: Memo<Option<Conversation>>,
    message: Memo<Option<Message>>,
) -> impl IntoView {
    let a = use_assistant();
    let rt = use_runtime();
    let queue = rt.approver().queue;
    let status = move || message.with(|m| m.as_ref().map(|m| m.status));
    let status_attr = move || match status() {
        Some(MessageStatus::Streaming) => "streaming",
        Some(MessageStatus::Complete) => "complete",
        Some(MessageStatus::Error) => "error",
        Some(MessageStatus::Cancelled) => "cancelled",
        None => "",
    };
    let reasoning = move || {
        message.with(|m| {
            m.as_ref()
                .map(|m| m.reasoning.clone())
                .filter(|r| !r.is_empty())
        })
    };
    let calls =
        move || message.with(|m| m.as_ref().map(|m| m.tool_calls.clone()).unwrap_or_default());
    // The reply as the model wrote it (Markdown), for Copy.
    let reply_text =
        move || message.with(|m| m.as_ref().map(|m| m.content.clone()).unwrap_or_default());
    let error = move || message.with(|m| m.as_ref().and_then(|m| m.error.clone()));
    let usage = move || message.with(|m| m.as_ref().and_then(|m| m.usage));
    let speed = move || message.with(|m| m.as_ref().and_then(|m| m.speed));
    let context_note = move || message.with(|m| m.as_ref().and_then(|m| m.context_note));
    let is_last = {
        let a = a.clone();
        move || {
            let mid = message.with(|m| m.as_ref().map(|m| m.id.clone()).unwrap_or_default());
            conversation.with(|c| {
                c.as_ref().is_some_and(|c| {
                    c.messages
                        .iter()
                        .rev()
                        .find(|m| m.role != Role::Command)
                        .is_some_and(|m| m.id == mid)
                        && !a.is_running(&c.id)
                })
            }) && a.provider.with(Option::is_some)
        }
    };
    let regen_error: RwSignal<Option<String>> = RwSignal::new(None);
    let regenerate = {
        let a = a.clone();
        move || {
            if let Some(c) = conversation.get_untracked() {
                let a = a.clone();
                spawn_local(async move {
                    if let Err(e) = a.regenerate(&c.id).await {
                        regen_error.set(Some(e.to_string()));
                    }
                });
            }
        }
    };
    let asking_ids = move || {
        queue.with(|q| {
            q.iter()
                .map(|p| p.request.call.id.clone())
                .collect::<Vec<_>>()
        })
    };
    let rt2 = rt.clone();
    view! {
        <div class="message assistant" data-role="assistant" data-status=status_attr>
            {move || reasoning().map(|r| view! {
                <details class="reasoning"><summary class="muted">"Reasoning"</summary><p>{r}</p></details>
            })}
            {move || context_note().map(|n| view! {
                <p class="context-note muted" data-testid="context-note">{n.describe()}</p>
            })}
            <ReplyText message=message/>
            <Show when=move || status() == Some(MessageStatus::Streaming) && calls().is_empty()>
                <span class="typing" aria-label="Writing"><span></span><span></span><span></span></span>
            </Show>
            <div class="tool-calls">
                {
                    move || {
                        let asking = asking_ids();
                        calls().into_iter().map(|call| {
                            let face = skill_face(&rt2, &call.name);
                            // The approval's call has the record's id.
                            let waiting = call.state == hearth_core::assistant::agent::CallState::Waiting
                                && asking.contains(&call.id);
                            let app = app_record(&rt2, &call);
                            view! {
                                <ToolCallCard call=call skill=face.unwrap_or_default() asking=waiting/>
                                {app.map(|record| view! { <McpAppSlot record=record/> })}
                            }
                        }).collect_view()
                    }
                }
            </div>
            {move || error().map(|e| {
                let detail = e.detail.clone();
                view! {
                    <div class="provider-error" role="alert" data-kind=e.kind.as_str()>
                        <p class="error-message"><strong>{e.message.clone()}</strong></p>
                        <p class="error-advice">{e.advice.clone()}</p>
                        {detail.map(|d| view! { <details><summary class="muted">"Details"</summary><pre>{d}</pre></details> })}
                    </div>
                }
            })}
            <Show when=move || status() == Some(MessageStatus::Cancelled)>
                <p class="muted stopped">"Stopped."</p>
            </Show>
            <Show when=move || regen_error.get().is_some()>
                <p class="inline-error" role="alert">{move || regen_error.get().unwrap_or_default()}</p>
            </Show>
            <div class="message-actions">
                <Show when=move || status() != Some(MessageStatus::Streaming) && !reply_text().trim().is_empty()>
                    <CopyButton text=Signal::derive(reply_text) label="Copy the reply"/>
                </Show>
                {move || usage().map(|u| {
                    let text = match (u.input_tokens, u.output_tokens) {
                        (Some(i), Some(o)) => format!("{i} in · {o} out tokens"),
                        (Some(i), None) => format!("{i} tokens in"),
                        (None, Some(o)) => format!("{o} tokens out"),
                        (None, None) => String::new(),
                    };
                    view! { <span class="muted usage-line">{text}</span> }
                })}
                {move || speed().filter(|s| s.output_tokens > 0 || s.prompt_tokens > 0).map(|s| {
                    let detail = format!(
                        "Read {} prompt tokens at {:.1} tokens/s; wrote {} tokens at {:.1} tokens/s",
                        s.prompt_tokens, s.prompt_per_second, s.output_tokens, s.output_per_second
                    );
                    view! {
                        <span class="muted speed-line" data-testid="speed" title=detail>
                            {format!("{:.1} tokens/s", s.output_per_second)}
                        </span>
                    }
                })}
                <Show when=is_last.clone()>
                    <button class="small ghost" title="Ask for a new reply" on:click={
                        let regenerate = regenerate.clone();
                        move |_| regenerate()
                    }>
                        <Icon name="refresh"/>
                        {move || if error().is_some() { " Try again" } else { " Regenerate" }}
                    </button>
                </Show>
            </div>
        </div>
    }
}

/// What the person typed in a conversation, oldest first: their messages
/// (without attached resources) and the commands they ran (an undo is
/// not typed, so it is not among them).
fn lines_typed(c: &Conversation) -> Vec<String> {
    c.messages
        .iter()
        .filter(|m| match m.role {
            Role::User => true,
            Role::Command => m.from_form || m.content.starts_with('/'),
            Role::Assistant => false,
        })
        .map(|m| split_attachments(&m.content).0.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// How an attachment starts in a message (core's `attachments_text`).
const ATTACHMENT_OPEN: &str = "<attachment server=";

/// A person's message as (what they wrote, the attachments after it,
/// with the blank line before them).
fn split_attachments(content: &str) -> (&str, &str) {
    match content.find(&format!("\n\n{ATTACHMENT_OPEN}")) {
        Some(i) => content.split_at(i),
        None => (content, ""),
    }
}

/// A finished call of an MCP tool as the activity record its app view
/// reads (under the call's id, which is also its log record's, so the
/// server's original answer is found); `None` for every other call.
fn app_record(
    rt: &Runtime,
    call: &hearth_core::assistant::agent::ToolCallRecord,
) -> Option<ActivityRecord> {
    let result = call.result.clone()?;
    let skill = rt.registry().get_str(&call.name).cloned()?;
    if !matches!(skill.kind, hearth_core::SkillKind::Mcp { .. }) {
        return None;
    }
    Some(ActivityRecord {
        id: call.id.clone(),
        skill_id: skill.id.clone(),
        skill_name: skill.name.clone(),
        tier: Some(skill.tier),
        origin: CallOrigin::Model,
        arguments: call.arguments.clone(),
        result,
    })
}

/// A command message as its result card reads it: the call as a log
/// record (the skill's name as registered now, else its id), the line as
/// typed, and whether a form gave the arguments.
fn command_card(rt: &Runtime, m: &Message) -> Option<(ActivityRecord, String, bool)> {
    let call = m.command_call()?;
    let result = call.result.clone()?;
    let skill_id = hearth_core::SkillId::new(call.name.clone()).ok()?;
    let skill = rt.registry().get(&skill_id).cloned();
    let record = ActivityRecord {
        id: call.id.clone(),
        skill_name: skill
            .as_ref()
            .map(|s| s.name.clone())
            .unwrap_or_else(|| call.name.clone()),
        tier: skill.as_ref().map(|s| s.tier),
        skill_id,
        origin: CallOrigin::User,
        arguments: call.arguments.clone(),
        result,
    };
    Some((record, m.content.clone(), m.from_form))
}

/// Free text in the command bar: the enabled skills discovery finds.
fn discovered(rt: &Runtime, text: &str) -> Option<Discovery> {
    let text = text.trim();
    if text.is_empty() || text.starts_with('/') {
        return None;
    }
    let permissions = rt.data().permissions.borrow().clone();
    let enabled = move |s: &IndexedSkill| permissions.is_indexed_enabled(s);
    let index = rt.services().index.borrow();
    let mut found = discover(&index, text, None, &enabled);
    hearth_core::ui::command::lead_first(&rt.registry(), text, &mut found.skills);
    // Packages are used by name here: say which ones fit.
    if found.skills.is_empty() && !found.packages.is_empty() {
        let names: Vec<String> = found
            .packages
            .iter()
            .map(|p| format!("/{}", p.name))
            .collect();
        found.message = format!("Skill packages that fit: {}", names.join(", "));
    }
    Some(found)
}

/// Runs a skill the person chose, in the open conversation, through the
/// call path; the conversation keeps the line and the result as a message
/// of its own (its card joins the timeline then), and `done` runs at the
/// end.
fn run_skill(
    a: Assistant,
    skill: SkillDefinition,
    args: Value,
    line: String,
    from_form: bool,
    done: impl FnOnce() + 'static,
) {
    let rt = a.runtime().clone();
    let conv = a.commit_current(&line);
    spawn_local(async move {
        let (call, result) = rt
            .invoke_in(skill.id.clone(), args, CallOrigin::User, conv.clone())
            .await;
        if let Some(id) = conv {
            a.record_command(&id, &line, ToolCallRecord::ran(&call, result), from_form);
        }
        done();
    });
}

/// What carries out the effects core's composer returns.
type EffectRunner = Box<dyn Fn(Vec<composer::Effect>)>;

/// The names of the installed Agent Skills packages, for `/name`.
fn package_names(rt: &Runtime) -> Vec<String> {
    rt.agent_skills()
        .library()
        .iter()
        .map(|p| p.name().to_string())
        .collect()
}

/// The composer: a view of core's [`composer::Composer`], which decides
/// what a line means; this component renders it and carries out the
/// effects it asks for (runs, messages, forms, prompt fetches, stops).
#[component]
fn Composer(
    conversation: Memo<Option<Conversation>>,
    has_model: Signal<bool>,
    /// An example line to run, from the empty chat.
    example: RwSignal<Option<String>>,
) -> impl IntoView {
    let rt = use_runtime();
    let a = use_assistant();
    let state = RwSignal::new(composer::Composer::new());
    let text = Memo::new(move |_| state.with(|c| c.text.clone()));
    let form: RwSignal<Option<(SkillDefinition, Value)>> = RwSignal::new(None);
    let registry_version = rt.versions().registry;
    // Prompts of connected MCP servers are `/server:prompt` commands too.
    let mcp = use_mcp();
    let prompt_commands = {
        let mcp = mcp.clone();
        Memo::new(move |_| mcp.prompt_commands())
    };
    // Server resources attached to the next message.
    let attachments = RwSignal::new(Vec::new());
    let picking = RwSignal::new(false);
    let files = use_attachments();
    let progress = mcp.progress();
    let found = {
        let rt = rt.clone();
        let permissions = rt.versions().permissions;
        Memo::new(move |_| {
            permissions.track();
            if has_model.get() {
                return None;
            }
            discovered(&rt, &text.get())
        })
    };
    let replying = {
        let a = a.clone();
        Signal::derive(move || {
            conversation.with(|c| {
                c.as_ref()
                    .is_some_and(|c| a.running.with(|r| r.contains(&c.id)))
            })
        })
    };

    // Builds the context core's composer reads, and hands it to `$body`.
    macro_rules! with_cx {
        ($rt:ident, |$cx:ident| $body:expr) => {{
            let registry = $rt.registry();
            let prompts = prompt_commands.get_untracked();
            let packages = package_names(&$rt);
            let found_now = found.get_untracked();
            let $cx = composer::Context {
                registry: &registry,
                prompts: &prompts,
                packages: &packages,
                has_model: has_model.get_untracked(),
                replying: replying.get_untracked(),
                found: found_now.as_ref(),
            };
            $body
        }};
    }

    let matches = {
        let rt = rt.clone();
        Memo::new(move |_| {
            registry_version.track();
            let line = text.get();
            if !line.starts_with('/') {
                return Vec::new();
            }
            let registry = rt.registry();
            let prompts = prompt_commands.get();
            let cx = composer::Context {
                registry: &registry,
                prompts: &prompts,
                packages: &[],
                has_model: false,
                replying: false,
                found: None,
            };
            state.with_untracked(|c| c.suggestions(&cx))
        })
    };

    // The progress line belongs to the work under way only.
    Effect::new(move |_| {
        let idle = state.with(|c| c.running.is_empty());
        if idle && !replying.get() {
            progress.set(None);
        }
    });

    // Carries out what core's composer asked for; results report back.
    let carry_out: StoredValue<EffectRunner, LocalStorage> =
        StoredValue::new_local(Box::new(|_| {}));
    {
        let rt = rt.clone();
        let a = a.clone();
        let mcp = mcp.clone();
        carry_out.set_value(Box::new(move |effects: Vec<composer::Effect>| {
            for effect in effects {
                match effect {
                    composer::Effect::Run {
                        ticket,
                        skill,
                        arguments,
                        line,
                        from_form,
                    } => {
                        let Some(def) = rt.registry().get(&skill).cloned() else {
                            state.update(|c| {
                                c.finished(ticket);
                                c.error = Some(format!("/{skill} is no longer installed."));
                            });
                            continue;
                        };
                        // Attached files go to the next code run, and only to it.
                        let (arguments, handed) = files.hand_to(def.id.as_str(), arguments);
                        if handed {
                            files.spent();
                        }
                        progress.set(None);
                        run_skill(a.clone(), def, arguments, line, from_form, move || {
                            let _ = state.try_update(|c| c.finished(ticket));
                        });
                    }
                    composer::Effect::Send { message } => {
                        let Some(id) = a.commit_current(&message) else {
                            let e = "There is no conversation to send to.".to_string();
                            state.update(|c| c.send_failed(message, e));
                            continue;
                        };
                        let a = a.clone();
                        spawn_local(async move {
                            if let Err(e) = a.send(&id, &message).await {
                                let _ = state.try_update(|c| c.send_failed(message, e.to_string()));
                            }
                        });
                    }
                    composer::Effect::OpenForm { skill, prefill } => {
                        let def = rt.registry().get(&skill).cloned();
                        form.set(def.map(|d| (d, prefill)));
                    }
                    composer::Effect::FetchPrompt {
                        ticket,
                        command,
                        input,
                    } => {
                        let mcp = mcp.clone();
                        spawn_local(async move {
                            let what =
                                format!("The prompt {} of {}", command.title, command.server);
                            match mcp.run_prompt(&command, &input).await {
                                Ok(prompt) => {
                                    let _ =
                                        state.try_update(|c| c.prompt_ready(ticket, prompt, what));
                                }
                                Err(e) => {
                                    let _ = state.try_update(|c| c.prompt_failed(ticket, e));
                                }
                            }
                        });
                    }
                    composer::Effect::Stop => {
                        if let Some(c) = conversation.get_untracked() {
                            a.stop(&c.id);
                        }
                    }
                }
            }
        }));
    }
    let act = move |effects: Vec<composer::Effect>| carry_out.with_value(|f| f(effects));

    // Up in an empty line brings back the lines run or sent in the
    // conversation that is open, newest first.
    Effect::new(move |before: Option<Option<String>>| {
        let id = conversation.with(|c| c.as_ref().map(|c| c.id.clone()));
        if before.as_ref() != Some(&id) {
            let lines =
                conversation.with_untracked(|c| c.as_ref().map(lines_typed).unwrap_or_default());
            state.update(|c| c.set_history(lines));
        }
        id
    });

    // A reply ended: the oldest queued message goes. Moving to another
    // conversation brings what was queued back into the line, unsent.
    Effect::new(move |before: Option<(Option<String>, bool)>| {
        let id = conversation.with(|c| c.as_ref().map(|c| c.id.clone()));
        let now = replying.get();
        if let Some((was_id, was)) = before {
            if was_id != id {
                state.update(|c| {
                    while !c.queued.is_empty() {
                        c.unqueue(0);
                    }
                });
            } else if was && !now {
                let fx = state.try_update(|c| c.reply_ended()).unwrap_or_default();
                act(fx);
            }
        }
        (id, now)
    });

    let submit = {
        let rt = rt.clone();
        move || {
            state.update(|c| c.attachments = attachments.get_untracked());
            let fx = with_cx!(rt, |cx| state
                .try_update(|c| c.submit(&cx))
                .unwrap_or_default());
            attachments.set(state.with_untracked(|c| c.attachments.clone()));
            act(fx);
        }
    };

    // A code run of this conversation under way: Stop, or Esc in the
    // composer, ends it (a reply's Stop ends its runs too).
    let code_running = {
        let running = rt.sandbox().running();
        Signal::derive(move || {
            let id = conversation.with(|c| c.as_ref().map(|c| c.id.clone()));
            running.with(|r| r.iter().any(|x| x.conversation == id))
        })
    };
    let stop_code = {
        let rt = rt.clone();
        move || {
            let id = conversation.with_untracked(|c| c.as_ref().map(|c| c.id.clone()));
            rt.sandbox().stop_in(id.as_deref());
        }
    };

    // An example from the empty chat runs as if typed, then Enter.
    {
        let submit = submit.clone();
        Effect::new(move |_| {
            if let Some(line) = example.get() {
                example.set(None);
                state.update(|c| c.input(line));
                submit();
                focus_composer();
            }
        });
    }

    let on_keydown = {
        let rt = rt.clone();
        let stop_code = stop_code.clone();
        move |ev: KeyboardEvent| {
            let key = match ev.key().as_str() {
                "ArrowDown" => composer::Key::Down,
                "ArrowUp" => composer::Key::Up,
                "Tab" if !ev.shift_key() => composer::Key::Tab,
                "Enter" if !ev.shift_key() => composer::Key::Enter,
                "Escape" => composer::Key::Escape,
                _ => return,
            };
            state.update(|c| c.attachments = attachments.get_untracked());
            let handled = with_cx!(rt, |cx| state
                .try_update(|c| c.key(key, &cx))
                .unwrap_or_default());
            attachments.set(state.with_untracked(|c| c.attachments.clone()));
            if handled.prevent_default {
                ev.prevent_default();
            } else if key == composer::Key::Escape
                && code_running.get_untracked()
                && !replying.get_untracked()
            {
                ev.prevent_default();
                stop_code();
            }
            act(handled.effects);
        }
    };

    let pick_found = {
        let rt = rt.clone();
        move |id: hearth_core::SkillId| {
            let fx = with_cx!(rt, |cx| state
                .try_update(|c| c.pick_found(&id, &cx))
                .unwrap_or_default());
            act(fx);
        }
    };

    let on_form_run = Callback::new(move |args: Value| {
        if let Some((skill, _)) = form.get_untracked() {
            form.set(None);
            let effect =
                state.try_update(|c| c.form_ran(skill.id.clone(), args, skill.name.clone()));
            act(effect.into_iter().collect());
        }
    });
    let on_form_close = Callback::new(move |_| {
        form.set(None);
        state.update(|c| c.form_closed());
    });

    let error = Memo::new(move |_| state.with(|c| c.error.clone()));
    let notice = Memo::new(move |_| state.with(|c| c.notice.clone()));
    let status = Memo::new(move |_| state.with(|c| c.status()));
    let help = Memo::new(move |_| state.with(|c| c.help.clone()));
    let selected = Memo::new(move |_| state.with(|c| c.selected));
    let working = Memo::new(move |_| !state.with(|c| c.running.is_empty()));

    view! {
        <form class="composer" on:submit={
            let submit = submit.clone();
            move |ev: leptos::ev::SubmitEvent| {
                ev.prevent_default();
                submit();
            }
        }>
            <Show when=move || !matches.with(Vec::is_empty)>
                <ul class="suggestions" role="listbox" aria-label="Skills">
                    {move || {
                        matches
                            .get()
                            .into_iter()
                            .enumerate()
                            .map(|(i, s)| {
                                let pick = s.word.clone();
                                view! {
                                    <li
                                        role="option"
                                        aria-selected=move || (selected.get() == i).to_string()
                                        class:selected=move || selected.get() == i
                                        on:mousedown=move |ev| {
                                            ev.prevent_default();
                                            state.update(|c| c.complete(&pick));
                                        }
                                    >
                                        <Icon name=s.icon.clone()/>
                                        <code>"/"{s.word.clone()}</code>
                                        <span class="muted">{s.label.clone()}</span>
                                    </li>
                                }
                            })
                            .collect_view()
                    }}
                </ul>
            </Show>
            {
                let pick_found = pick_found.clone();
                move || found.get().map(|d| {
                if d.skills.is_empty() {
                    view! {
                        <div class="suggestions discovered" role="status">
                            <p class="muted no-match">{d.message.clone()}</p>
                        </div>
                    }.into_any()
                } else {
                    let registry = use_runtime();
                    view! {
                        <ul class="suggestions discovered" role="listbox" aria-label="Matching skills">
                            <li class="suggestions-title muted" role="presentation">"Skills for this — Enter opens a form"</li>
                            {d.skills.into_iter().enumerate().map(|(i, s)| {
                                let id = s.id.clone();
                                let icon = registry.registry().get(&s.id).map(|x| x.icon.clone()).unwrap_or_default();
                                let pick_found = pick_found.clone();
                                view! {
                                    <li
                                        role="option"
                                        data-skill=id.to_string()
                                        aria-selected=move || (selected.get() == i).to_string()
                                        class:selected=move || selected.get() == i
                                        on:mousedown=move |ev| {
                                            ev.prevent_default();
                                            pick_found(id.clone());
                                        }
                                    >
                                        <Icon name=icon/>
                                        <span class="found-name">{s.name.clone()}</span>
                                        <span class="muted found-description">{s.description.clone()}</span>
                                    </li>
                                }
                            }).collect_view()}
                        </ul>
                    }.into_any()
                }
            })}
            {move || help.get().map(|h| view! {
                // Closing the help (its button, or Esc inside it) hands
                // focus back to the composer rather than to the page.
                <section class="command-help" aria-label=h.title.clone()
                    on:keydown=move |ev: KeyboardEvent| {
                        if ev.key() == "Escape" {
                            ev.prevent_default();
                            state.update(|c| c.help = None);
                            focus_composer();
                        }
                    }
                >
                    <header class="command-help-head">
                        <h2>{h.title.clone()}</h2>
                        <button type="button" class="icon-button" aria-label="Close help"
                            on:click=move |_| {
                                state.update(|c| c.help = None);
                                focus_composer();
                            }
                        ><Icon name="x"/></button>
                    </header>
                    <dl>
                        {h.entries.into_iter().map(|e| view! {
                            <dt><code>{e.usage.clone()}</code></dt>
                            <dd>
                                <span>{e.summary.clone()}</span>
                                {e.examples.into_iter().map(|x| {
                                    let line = x.clone();
                                    view! {
                                        <span class="help-example">
                                            <code>{x}</code>
                                            <button type="button"
                                                title="Put this line in the composer"
                                                on:click=move |_| {
                                                    state.update(|c| c.input(line.clone()));
                                                    focus_composer();
                                                }
                                            >"Try"</button>
                                        </span>
                                    }
                                }).collect_view()}
                            </dd>
                        }).collect_view()}
                    </dl>
                </section>
            })}
            <AttachmentList/>
            <AttachmentChips attachments=attachments/>
            <div class="composer-row">
                <AttachButton/>
                <Show when=move || !mcp.resources().is_empty()>
                    <button
                        type="button"
                        class="icon-button attach-button"
                        aria-label="Attach a resource"
                        title="Attach a resource from an MCP server"
                        on:click=move |_| picking.set(true)
                    ><Icon name="server"/></button>
                </Show>
                <textarea
                    class="composer-input"
                    rows="1"
                    placeholder=move || if has_model.get() {
                        "Message the assistant — or / to run a skill"
                    } else {
                        "Type / to run a skill, e.g. /note Buy milk — or /help"
                    }
                    aria-label="Message or command"
                    prop:value=move || text.get()
                    on:input=move |ev| {
                        state.update(|c| c.input(event_target_value(&ev)));
                    }
                    on:keydown=on_keydown
                ></textarea>
                <Show
                    when=move || replying.get()
                    fallback={
                        let stop_code = stop_code.clone();
                        move || {
                            let stop_code = stop_code.clone();
                            view! {
                                <button type="submit" class="primary">
                                    {move || if has_model.get() { "Send" } else { "Run" }}
                                </button>
                                <Show when=move || code_running.get()>
                                    <button type="button" class="stop" title="Stop the run (Esc)" on:click={
                                        let stop_code = stop_code.clone();
                                        move |_| stop_code()
                                    }><Icon name="stop"/>" Stop"</button>
                                </Show>
                            }
                        }
                    }
                >
                    <button type="submit" class="primary" title="Queued until the reply ends">"Queue"</button>
                    <button type="button" class="stop" on:click={
                        let a = a.clone();
                        move |_| {
                            if let Some(c) = conversation.get_untracked() {
                                a.stop(&c.id);
                            }
                        }
                    } title="Stop (Esc)"><Icon name="stop"/>" Stop"</button>
                </Show>
            </div>
            <Show when=move || error.get().is_some()>
                <p class="inline-error" role="alert">{move || error.get().unwrap_or_default()}</p>
            </Show>
            <Show when=move || notice.get().is_some()>
                <p class="notice" role="status">{move || notice.get().unwrap_or_default()}</p>
            </Show>
            <Show when=move || status.get().is_some()>
                <p class="muted progress-line composer-status" role="status" data-testid="composer-status">
                    {move || status.get().unwrap_or_default()}
                </p>
            </Show>
            <Show when=move || (working.get() || replying.get()) && progress.get().is_some()>
                <p class="muted progress-line" role="status">{move || progress.get().unwrap_or_default()}</p>
            </Show>
            <p class="hint">
                {move || if has_model.get() {
                    view! { <kbd>"Enter"</kbd>" sends · "<kbd>"Shift"</kbd>"+"<kbd>"Enter"</kbd>" new line · "<kbd>"Esc"</kbd>" stops the reply · "<kbd>"/"</kbd>" runs a skill · "<kbd>"/help"</kbd>" lists them" }.into_any()
                } else {
                    view! { <kbd>"Enter"</kbd>" runs · "<kbd>"Shift"</kbd>"+"<kbd>"Enter"</kbd>" new line · "<kbd>"Tab"</kbd>" completes · "<kbd>"/help"</kbd>" lists the commands · "<kbd>"Ctrl"</kbd>"+"<kbd>"Shift"</kbd>"+"<kbd>"O"</kbd>" new chat" }.into_any()
                }}
            </p>
        </form>
        // Outside the form: the picker's buttons must not submit it.
        <Show when=move || picking.get()>
            <ResourcePicker
                on_pick=Callback::new(move |a| attachments.update(|l| l.push(a)))
                on_close=Callback::new(move |_| picking.set(false))
            />
        </Show>
        {move || form.get().map(|(skill, prefill)| view! {
            <SkillFormDialog skill=skill prefill=prefill on_run=on_form_run on_close=on_form_close/>
        })}
    }
}
