//! A modal dialog: a backdrop, focus moved inside on open (to the element
//! marked `data-autofocus`, else the dialog) and given back to where it
//! was on close, Esc to close, and clicks on the backdrop closing it when
//! allowed.

use leptos::ev::KeyboardEvent;
use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

#[component]
pub fn Modal(
    /// The id of the element that names the dialog.
    #[prop(into)]
    labelledby: String,
    /// `dialog`, or `alertdialog` for confirmations.
    #[prop(default = "dialog")]
    role: &'static str,
    #[prop(optional, into)] class: String,
    /// Called on Esc, and on a backdrop click when `dismissable`.
    on_escape: Callback<()>,
    #[prop(default = true)] dismissable: bool,
    children: Children,
) -> impl IntoView {
    let dialog = NodeRef::<html::Div>::new();
    crate::shared::focus::return_on_close();
    Effect::new(move |_| {
        if let Some(el) = dialog.get() {
            let target = el
                .query_selector("[data-autofocus]")
                .ok()
                .flatten()
                .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
            match target {
                Some(t) => {
                    let _ = t.focus();
                }
                None => {
                    let _ = el.focus();
                }
            }
        }
    });
    view! {
        <div class="modal-backdrop" on:click=move |_| if dismissable { on_escape.run(()) }>
            <div
                node_ref=dialog
                class=format!("modal {class}")
                role=role
                aria-modal="true"
                aria-labelledby=labelledby
                tabindex="-1"
                on:click=|ev| ev.stop_propagation()
                on:keydown=move |ev: KeyboardEvent| {
                    if ev.key() == "Escape" {
                        ev.prevent_default();
                        ev.stop_propagation();
                        on_escape.run(());
                    }
                }
            >
                {children()}
            </div>
        </div>
    }
}
