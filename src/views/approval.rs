//! The approval dialog: the skill, its tier, why it asks, and the full
//! arguments — never truncated or blurred. Allow once, always allow this
//! skill, or deny; Esc denies. Its buttons are the only source of answers.

use hearth_core::permission::ApprovalAnswer;
use leptos::prelude::*;

use crate::icons::Icon;
use crate::runtime::{Pending, use_runtime};
use crate::views::modal::Modal;

#[component]
pub fn ApprovalDialog() -> impl IntoView {
    let rt = use_runtime();
    let queue = rt.approver().queue;
    let current = Memo::new(move |_| queue.with(|q| q.first().cloned()));
    view! {
        {move || current.get().map(|p| view! { <ApprovalCard pending=p waiting=queue.with(|q| q.len().saturating_sub(1))/> })}
    }
}

#[component]
fn ApprovalCard(pending: Pending, waiting: usize) -> impl IntoView {
    let rt = use_runtime();
    let id = pending.id;
    let req = pending.request;
    let answer = {
        let rt = rt.clone();
        move |a: ApprovalAnswer| rt.approver().answer(id, a)
    };
    let args = serde_json::to_string_pretty(&req.call.arguments).unwrap_or_default();
    let origin = match req.call.origin {
        hearth_core::CallOrigin::Model => "The assistant wants to run",
        hearth_core::CallOrigin::User => "You asked to run",
    };
    let tier = req.skill.tier;
    let (a1, a2, a3) = (answer.clone(), answer.clone(), answer.clone());
    let on_escape = Callback::new(move |_| answer(ApprovalAnswer::Deny));
    view! {
        <Modal labelledby="approval-title" class="approval" on_escape=on_escape dismissable=false>
                <header class="approval-head">
                    <span class="card-icon"><Icon name=req.skill.icon.clone()/></span>
                    <div>
                        <p class="muted approval-origin">{origin}</p>
                        <h2 id="approval-title">{req.skill.name.clone()}</h2>
                    </div>
                    <span class=format!("tier-badge tier-{}", tier.as_str())>{tier.label()}</span>
                </header>
                <p id="approval-reason" class="approval-reason">
                    <Icon name="shield"/>
                    " Asking because "{req.reason.clone()}"."
                </p>
                <h3 class="approval-args-title">"Arguments"</h3>
                <pre class="approval-args" tabindex="0" aria-label="Full arguments">{args}</pre>
                {(waiting > 0).then(|| view! { <p class="muted">{format!("{waiting} more waiting")}</p> })}
                <div class="modal-actions">
                    <button data-autofocus class="deny" on:click=move |_| a1(ApprovalAnswer::Deny)>"Deny"</button>
                    {req.always_offered.then(|| {
                        let a = a2.clone();
                        view! { <button on:click=move |_| a(ApprovalAnswer::AlwaysAllow)>"Always allow this skill"</button> }
                    })}
                    <button class="primary" on:click=move |_| a3(ApprovalAnswer::AllowOnce)>"Allow once"</button>
                </div>
        </Modal>
    }
}
