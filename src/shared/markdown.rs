//! What every place that shows rendered Markdown shares.

use leptos::task::spawn_local;
use wasm_bindgen::JsCast;

/// The copy buttons hearth-markdown puts on code blocks, answered by one
/// handler on whatever holds the rendered Markdown.
pub fn copy_code(ev: leptos::ev::MouseEvent) {
    let Some(target) = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
    else {
        return;
    };
    let Some(button) = target.closest(".copy-code").ok().flatten() else {
        return;
    };
    let code = button
        .closest(".code-block")
        .ok()
        .flatten()
        .and_then(|b| b.query_selector("code").ok().flatten())
        .and_then(|c| c.text_content())
        .unwrap_or_default();
    let Some(window) = web_sys::window() else {
        return;
    };
    let promise = window.navigator().clipboard().write_text(&code);
    spawn_local(async move {
        let label = match wasm_bindgen_futures::JsFuture::from(promise).await {
            Ok(_) => "Copied",
            Err(_) => "Copy failed",
        };
        button.set_text_content(Some(label));
        gloo_timers::future::TimeoutFuture::new(1_500).await;
        button.set_text_content(Some("Copy"));
    });
}
