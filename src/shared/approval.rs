//! The approval dialog: who asks (the person, the assistant or an MCP
//! App), the skill, its tier, why it asks, and the full arguments — never
//! truncated or blurred. Allow once, always allow this skill, or deny.
//! Esc at the question denies this one call, as Deny does, and the
//! question says so; a reply under way goes on without it (Stop, or Esc
//! in the composer, ends the reply). Its buttons are the only source of
//! answers, and the allowing ones wake up only a moment after the
//! question appears. Focus goes back where it was once it is answered.
//!
//! A call made in the conversation the Chat view shows is answered inline,
//! in that conversation; every other call (the command bar outside a
//! chat, a conversation not on screen) in the modal.

use hearth_core::skill::approval::ApprovalAnswer;
use leptos::ev::KeyboardEvent;
use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::assistant::Assistant;
use crate::icons::Icon;
use crate::runtime::{Pending, use_runtime};
use crate::shared::modal::Modal;

/// The conversation whose approvals are shown inline right now.
fn visible_conversation() -> Signal<Option<String>> {
    match use_context::<Assistant>() {
        Some(a) => {
            let v = a.visible;
            Signal::derive(move || v.get())
        }
        None => Signal::derive(|| None),
    }
}

/// How long the allowing buttons stay inactive after a question appears.
pub const ARM_DELAY_MS: u64 = 700;

#[component]
pub fn ApprovalDialog() -> impl IntoView {
    let rt = use_runtime();
    let queue = rt.approver().queue;
    let visible = visible_conversation();
    let modal_queue = Memo::new(move |_| {
        let shown = visible.get();
        queue.with(|q| {
            q.iter()
                .filter(|p| shown.is_none() || p.request.call.conversation_id != shown)
                .cloned()
                .collect::<Vec<_>>()
        })
    });
    let current = Memo::new(move |_| modal_queue.with(|q| q.first().cloned()));
    view! {
        {move || current.get().map(|p| {
            let waiting = modal_queue.with(|q| q.len().saturating_sub(1));
            let id = p.id;
            let rt = rt.clone();
            let on_escape = Callback::new(move |_| rt.approver().answer(id, ApprovalAnswer::Deny));
            view! {
                <Modal labelledby="approval-title" class="approval" on_escape=on_escape dismissable=false>
                    <ApprovalBody pending=p waiting=waiting title_id="approval-title".to_string()/>
                </Modal>
            }
        })}
    }
}

/// The approvals waiting in one conversation, shown in its timeline.
#[component]
pub fn InlineApprovals(#[prop(into)] conversation_id: Signal<Option<String>>) -> impl IntoView {
    let rt = use_runtime();
    let queue = rt.approver().queue;
    let here = Memo::new(move |_| {
        let id = conversation_id.get();
        queue.with(|q| {
            q.iter()
                .filter(|p| id.is_some() && p.request.call.conversation_id == id)
                .cloned()
                .collect::<Vec<_>>()
        })
    });
    view! {
        <For
            each=move || here.get()
            key=|p| p.id
            children=move |p| view! { <InlineApproval pending=p/> }
        />
    }
}

#[component]
fn InlineApproval(pending: Pending) -> impl IntoView {
    let rt = use_runtime();
    let id = pending.id;
    let title_id = format!("approval-title-{id}");
    let body_title = title_id.clone();
    let card = NodeRef::<html::Div>::new();
    crate::shared::focus::return_on_close();
    // Like the modal, focus goes to Deny so Enter never allows by accident.
    Effect::new(move |_| {
        if let Some(el) = card.get()
            && let Some(t) = el
                .query_selector("[data-autofocus]")
                .ok()
                .flatten()
                .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = t.focus();
            el.scroll_into_view_with_bool(false);
        }
    });
    view! {
        <div
            node_ref=card
            class="approval approval-inline card"
            role="dialog"
            aria-labelledby=title_id.clone()
            on:keydown=move |ev: KeyboardEvent| {
                if ev.key() == "Escape" {
                    ev.prevent_default();
                    ev.stop_propagation();
                    rt.approver().answer(id, ApprovalAnswer::Deny);
                }
            }
        >
            <ApprovalBody pending=pending waiting=0 title_id=body_title/>
        </div>
    }
}

#[component]
fn ApprovalBody(pending: Pending, waiting: usize, title_id: String) -> impl IntoView {
    let rt = use_runtime();
    let id = pending.id;
    let req = pending.request;
    let answer = {
        let rt = rt.clone();
        move |a: ApprovalAnswer| rt.approver().answer(id, a)
    };
    let args = serde_json::to_string_pretty(&req.call.arguments).unwrap_or_default();
    let origin = match (&req.call.origin, &req.skill.kind) {
        (hearth_core::CallOrigin::Model, _) => "The assistant wants to run".to_string(),
        (hearth_core::CallOrigin::User, _) => "You asked to run".to_string(),
        (hearth_core::CallOrigin::App, hearth_core::SkillKind::Mcp { server, .. }) => {
            format!("An MCP App of the server {server}, not you, wants to run")
        }
        (hearth_core::CallOrigin::App, _) => "An MCP App, not you, wants to run".to_string(),
        (hearth_core::CallOrigin::Agent(agent), _) => {
            hearth_core::agents::wants_to(&agent.name, &req.skill, &req.call.arguments)
        }
    };
    let from_app = req.call.origin == hearth_core::CallOrigin::App;
    let agent = req.call.origin.agent().map(|a| a.name.clone());
    let reason = match &agent {
        Some(name) => {
            hearth_core::agents::ask_reason(&req.reason, rt.data().permissions.borrow().mode, name)
        }
        None => req.reason.clone(),
    };
    // What Esc does here, in the words of what follows it.
    let esc_hint = match &req.call.origin {
        hearth_core::CallOrigin::Model => {
            " denies this call, like Deny; the assistant is told and its reply goes on. Stop ends the reply.".to_string()
        }
        hearth_core::CallOrigin::App => " denies this call, like Deny; the app is told.".to_string(),
        hearth_core::CallOrigin::User => " denies this call, like Deny; nothing runs.".to_string(),
        hearth_core::CallOrigin::Agent(a) => {
            format!(" denies this call, like Deny; nothing runs and {} is told.", a.name)
        }
    };
    let always_label = match &agent {
        Some(name) => format!("Always allow for {name}"),
        None => "Always allow this skill".to_string(),
    };
    let tier = req.skill.tier;
    // The buttons that allow stay inactive for a moment after the question
    // appears, so a click meant for what was under the pointer (or one a
    // page times to land there) cannot allow anything. Deny works at once.
    let armed = RwSignal::new(false);
    set_timeout(
        move || armed.set(true),
        std::time::Duration::from_millis(ARM_DELAY_MS),
    );
    let (a1, a2, a3) = (answer.clone(), answer.clone(), answer);
    view! {
        <header class="approval-head">
            <span class="card-icon"><Icon name=req.skill.icon.clone()/></span>
            <div>
                <p class="muted approval-origin" class:from-app=from_app class:from-agent=agent.is_some() data-origin=req.call.origin.who().to_string()>{origin}</p>
                <h2 id=title_id>{req.skill.name.clone()}</h2>
            </div>
            <span class=format!("tier-badge tier-{}", tier.as_str())>{tier.label()}</span>
        </header>
        <p class="approval-reason">
            <Icon name="shield"/>
            " Asking because "{reason}"."
        </p>
        <h3 class="approval-args-title">"Arguments"</h3>
        <pre class="approval-args" tabindex="0" aria-label="Full arguments">{args}</pre>
        {(waiting > 0).then(|| view! { <p class="muted">{format!("{waiting} more waiting")}</p> })}
        <p class="hint approval-hint" data-testid="approval-hint">
            <kbd>"Esc"</kbd>{esc_hint}
        </p>
        <div class="modal-actions">
            <button data-autofocus class="deny" title="Deny (Esc)" on:click=move |_| a1(ApprovalAnswer::Deny)>"Deny"</button>
            {req.always_offered.then(|| {
                let a = a2.clone();
                view! {
                    <button disabled=move || !armed.get()
                        on:click=move |_| if armed.get_untracked() { a(ApprovalAnswer::AlwaysAllow) }>
                        {always_label.clone()}
                    </button>
                }
            })}
            <button class="primary" disabled=move || !armed.get()
                on:click=move |_| if armed.get_untracked() { a3(ApprovalAnswer::AllowOnce) }>
                "Allow once"
            </button>
        </div>
    }
}
