//! A picture in the chat (one the person attached, or one a skill gave
//! back): a thumbnail that opens large, with its description and a
//! download of the picture as it is stored.

use base64::Engine as _;
use hearth_core::assistant::providers::ImagePart;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::icons::Icon;
use crate::shared::modal::Modal;

/// A thumbnail; a click, Enter or Space opens it large. With `describe`,
/// the large view lets the person write what the picture shows.
#[component]
pub fn Picture(
    part: ImagePart,
    #[prop(default = "message-picture")] class: &'static str,
    #[prop(optional)] describe: Option<Callback<String>>,
) -> impl IntoView {
    let open = RwSignal::new(false);
    let url = part.data_url();
    let alt = part.alt.clone();
    let shown = StoredValue::new(part);
    view! {
        <button
            type="button"
            class=format!("picture-button {class}")
            aria-label=format!("Open {alt} large")
            title=alt.clone()
            on:click=move |_| open.set(true)
        >
            <img src=url alt=alt.clone() loading="lazy" decoding="async"/>
        </button>
        <Show when=move || open.get()>
            <PictureViewer part=shown.get_value() describe=describe on_close=Callback::new(move |_| open.set(false))/>
        </Show>
    }
}

/// The picture large, over the page: its description, its size, a
/// download, and Esc or Close to go back.
#[component]
fn PictureViewer(
    part: ImagePart,
    describe: Option<Callback<String>>,
    on_close: Callback<()>,
) -> impl IntoView {
    let failed: RwSignal<Option<String>> = RwSignal::new(None);
    let bytes = hearth_core::util::display::bytes(part.byte_len() as f64);
    // A skill's picture comes with no size of its own.
    let size = if part.width > 0 {
        format!("{} × {} · {bytes}", part.width, part.height)
    } else {
        bytes
    };
    let (url, alt) = (part.data_url(), part.alt.clone());
    let download = move |_| {
        let saved = base64::engine::general_purpose::STANDARD
            .decode(part.data.as_bytes())
            .map_err(|e| e.to_string())
            .and_then(|bytes| {
                crate::platform::download_bytes(&part.file_name(), &part.media_type, &bytes)
            });
        failed.set(
            saved
                .err()
                .map(|e| format!("The picture could not be saved: {e}")),
        );
    };
    view! {
        <Modal labelledby="picture-title" class="picture-viewer" on_escape=on_close>
            <h2 id="picture-title" class="picture-title">{alt.clone()}</h2>
            <img class="picture-large" src=url alt=alt.clone()/>
            <p class="muted">{size}</p>
            {describe.map(|describe| view! {
                <label class="field">
                    <span>"Description, for people who cannot see it"</span>
                    <input
                        type="text"
                        prop:value=alt.clone()
                        // Enter saves the words by leaving the field, which
                        // commits them as a change; the viewer may sit in a
                        // form (the composer's), which must not submit.
                        on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                            if ev.key() == "Enter" {
                                ev.prevent_default();
                                if let Some(input) = ev
                                    .target()
                                    .and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok())
                                {
                                    let _ = input.blur();
                                }
                            }
                        }
                        on:change=move |ev| {
                            let text = event_target_value(&ev);
                            if !text.trim().is_empty() {
                                describe.run(text.trim().to_string());
                            }
                        }
                    />
                </label>
            })}
            <Show when=move || failed.with(Option::is_some)>
                <p class="inline-error" role="alert">{move || failed.get().unwrap_or_default()}</p>
            </Show>
            <div class="modal-actions">
                <button type="button" on:click=download><Icon name="download"/>" Download"</button>
                <button type="button" data-autofocus on:click=move |_| on_close.run(())>"Close"</button>
            </div>
        </Modal>
    }
}
