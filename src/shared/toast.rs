//! A small notice at the bottom of a panel, with Undo when the change can
//! be reversed. Panel edits change the skills' data directly, so their undo
//! does too.

use hearth_core::skill::call::UndoAction;
use hearth_core::{Content, SkillOutput};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::runtime::use_runtime;

#[derive(Clone, Debug, PartialEq)]
pub struct Toast {
    pub message: String,
    pub undo: Option<UndoAction>,
    pub error: bool,
}

impl Toast {
    pub fn from_output(output: &SkillOutput) -> Toast {
        let message = output
            .content
            .iter()
            .find_map(|c| match c {
                Content::Text { text } => Some(text.clone()),
                _ => None,
            })
            .unwrap_or_else(|| "Done.".into());
        Toast {
            message,
            undo: output.undo.clone(),
            error: false,
        }
    }

    pub fn error(message: impl Into<String>) -> Toast {
        Toast {
            message: message.into(),
            undo: None,
            error: true,
        }
    }
}

/// Runs a panel edit and reports it in `toast`.
pub fn edit(
    skill: &'static str,
    args: serde_json::Value,
    toast: RwSignal<Option<Toast>>,
    then: impl FnOnce(&SkillOutput) + 'static,
) {
    let rt = use_runtime();
    spawn_local(async move {
        match rt.edit(skill, args).await {
            Ok(out) => {
                then(&out);
                toast.set(Some(Toast::from_output(&out)));
            }
            Err(e) => toast.set(Some(Toast::error(e.message))),
        }
    });
}

#[component]
pub fn ToastBar(toast: RwSignal<Option<Toast>>) -> impl IntoView {
    let rt = use_runtime();
    view! {
        {move || toast.get().map(|t| {
            let rt = rt.clone();
            let class = if t.error { "toast error" } else { "toast" };
            let undo = t.undo.clone();
            view! {
                <div class=class role="status">
                    <span>{t.message.clone()}</span>
                    {undo.map(|u| {
                        let rt = rt.clone();
                        view! {
                            <button class="small" on:click=move |_| {
                                let rt = rt.clone();
                                let u = u.clone();
                                spawn_local(async move {
                                    match rt.edit(u.skill_id.as_str(), u.arguments.clone()).await {
                                        Ok(out) => toast.set(Some(Toast { undo: None, ..Toast::from_output(&out) })),
                                        Err(e) => toast.set(Some(Toast::error(e.message))),
                                    }
                                });
                            }>"Undo"</button>
                        }
                    })}
                    <button class="icon-button" aria-label="Dismiss" on:click=move |_| toast.set(None)>"×"</button>
                </div>
            }
        })}
    }
}
