//! A modal confirmation for destructive actions. Esc or Cancel backs out;
//! focus starts on Cancel so Enter never destroys by accident.

use leptos::ev::KeyboardEvent;
use leptos::html;
use leptos::prelude::*;

#[component]
pub fn ConfirmDialog(
    title: String,
    message: String,
    confirm_label: String,
    on_confirm: impl Fn() + 'static,
    on_cancel: impl Fn() + Copy + 'static,
) -> impl IntoView {
    let cancel_ref = NodeRef::<html::Button>::new();
    Effect::new(move |_| {
        if let Some(button) = cancel_ref.get() {
            let _ = button.focus();
        }
    });
    view! {
        <div class="modal-backdrop" on:click=move |_| on_cancel()>
            <div
                class="modal"
                role="alertdialog"
                aria-modal="true"
                aria-labelledby="confirm-title"
                aria-describedby="confirm-message"
                on:click=|ev| ev.stop_propagation()
                on:keydown=move |ev: KeyboardEvent| {
                    if ev.key() == "Escape" {
                        ev.prevent_default();
                        on_cancel();
                    }
                }
            >
                <h2 id="confirm-title">{title}</h2>
                <p id="confirm-message">{message}</p>
                <div class="modal-actions">
                    <button node_ref=cancel_ref on:click=move |_| on_cancel()>"Cancel"</button>
                    <button class="danger" on:click=move |_| on_confirm()>{confirm_label}</button>
                </div>
            </div>
        </div>
    }
}
