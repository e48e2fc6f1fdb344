//! A confirmation for destructive actions. Esc or Cancel backs out; focus
//! starts on Cancel so Enter never destroys by accident.

use leptos::prelude::*;

use crate::shared::modal::Modal;

#[component]
pub fn ConfirmDialog(
    title: String,
    message: String,
    confirm_label: String,
    on_confirm: impl Fn() + Send + Sync + 'static,
    on_cancel: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    view! {
        <Modal labelledby="confirm-title" role="alertdialog" on_escape=Callback::new(move |_| on_cancel())>
            <h2 id="confirm-title">{title}</h2>
            <p id="confirm-message">{message}</p>
            <div class="modal-actions">
                <button data-autofocus on:click=move |_| on_cancel()>"Cancel"</button>
                <button class="danger" on:click=move |_| on_confirm()>{confirm_label}</button>
            </div>
        </Modal>
    }
}
