//! The messages of the open conversation: the person's (editable when it
//! is the last), the model's (its reply, tool cards, errors, Regenerate)
//! and the commands run in it, each as its result card.

use hearth_core::CallOrigin;
use hearth_core::assistant::agent::{Conversation, Message, MessageStatus, Role};
use hearth_core::skill::activity::ActivityRecord;
use hearth_core::ui::mcp_composer::{attached_count, split_attachments};
use leptos::ev::KeyboardEvent;
use leptos::html;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::assistant::use_assistant;
use crate::icons::Icon;
use crate::mcp::apps::McpAppSlot;
use crate::runtime::{Runtime, use_runtime};
use crate::shared::picture::Picture;
use crate::views::cards::{CopyButton, ResultCard, ToolCallCard};
use crate::views::chat::reply::ReplyText;

use super::skill_face;

/// One message: the person's (editable when it is the last), or the
/// model's (Markdown, tool cards, errors, Regenerate when it is the last).
#[component]
pub(super) fn MessageView(
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
                    let artifact = (record.result.status == hearth_core::ToolStatus::Completed)
                        .then(|| {
                            hearth_core::builtin::artifacts::artifact_of_result(
                                record.skill_id.as_str(),
                                record.result.json(),
                            )
                        })
                        .flatten();
                    view! {
                        <ResultCard record=record icon=icon line=line from_form=from_form on_undo=on_undo/>
                        <McpAppSlot record=app/>
                        {artifact.map(|id| view! { <OpenArtifact id=id/> }.into_any())}
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
    let attached = move || attached_count(&full());
    // The pictures sent with it: they do not change once sent.
    let pictures =
        message.with_untracked(|m| m.as_ref().map(|m| m.images.clone()).unwrap_or_default());
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
                    {(!pictures.is_empty()).then(|| view! {
                        <div class="message-pictures" aria-label="Pictures sent">
                            {pictures.iter().cloned().map(|part| view! { <Picture part=part/> }).collect_view()}
                        </div>
                    })}
                    <Show when=move || !text().trim().is_empty()>
                        <div class="bubble">{text}</div>
                    </Show>
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
                            let artifact = artifact_of(&call);
                            view! {
                                <ToolCallCard call=call skill=face.unwrap_or_default() asking=waiting/>
                                {app.map(|record| view! { <McpAppSlot record=record/> })}
                                {artifact.map(|id| view! { <OpenArtifact id=id/> }.into_any())}
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

/// A finished call of an MCP tool as the activity record its app view
/// reads (under the call's id, which is also its log record's, so the
/// server's original answer is found); `None` for every other call.
/// The artifact a completed `create_artifact` or `update_artifact` call
/// made or changed.
fn artifact_of(call: &hearth_core::assistant::agent::ToolCallRecord) -> Option<String> {
    let result = call
        .result
        .as_ref()
        .filter(|r| r.status == hearth_core::ToolStatus::Completed)?;
    hearth_core::builtin::artifacts::artifact_of_result(&call.name, result.json())
}

/// Opens an artifact in the panel beside the chat.
#[component]
fn OpenArtifact(id: String) -> impl IntoView {
    let open = use_context::<super::ArtifactOpen>();
    view! {
        <button type="button" class="small artifact-open" data-artifact=id.clone()
            on:click=move |_| {
                if let Some(open) = open {
                    open.0.set(Some(id.clone()));
                }
            }>
            <Icon name="artifact"/>"Open artifact"
        </button>
    }
}

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
