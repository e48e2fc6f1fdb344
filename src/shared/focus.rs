//! Where focus goes when a dialog closes: back to the element that had it
//! when the dialog opened, else the composer, else the page's heading —
//! never the document body, where a keyboard user would have to start
//! over from the top.

use leptos::prelude::*;
use send_wrapper::SendWrapper;
use wasm_bindgen::JsCast;
use web_sys::HtmlElement;

fn document() -> Option<web_sys::Document> {
    web_sys::window().and_then(|w| w.document())
}

/// The focused element, unless focus is on nothing in particular.
fn focused() -> Option<HtmlElement> {
    let doc = document()?;
    let el = doc.active_element()?;
    let body: Option<web_sys::Element> = doc.body().map(Into::into);
    if body.as_ref() == Some(&el) {
        return None;
    }
    el.dyn_into::<HtmlElement>().ok()
}

fn took(el: &HtmlElement) -> bool {
    el.is_connected() && {
        let _ = el.focus();
        focused().as_ref() == Some(el)
    }
}

fn first(selector: &str) -> Option<HtmlElement> {
    document()?
        .query_selector(selector)
        .ok()
        .flatten()?
        .dyn_into::<HtmlElement>()
        .ok()
}

/// Gives focus back after a dialog closed, unless something else (the
/// next dialog, the composer) has taken it already. Runs after the
/// dialog's nodes are gone, so an opener removed with it is skipped.
fn give_back(opener: Option<HtmlElement>) {
    request_animation_frame(move || {
        if focused().is_some() {
            return;
        }
        if opener.as_ref().is_some_and(took) {
            return;
        }
        if first(".composer-input").as_ref().is_some_and(took) {
            return;
        }
        // A page without a composer: its heading, which takes focus only
        // from script so it never becomes a Tab stop.
        if let Some(h) = first("main h1") {
            let _ = h.set_attribute("tabindex", "-1");
            let _ = h.focus();
        }
    });
}

/// Call when a dialog opens, before it moves focus inside: when the
/// component is removed, focus returns to where it was.
pub fn return_on_close() {
    let opener = SendWrapper::new(focused());
    on_cleanup(move || give_back(opener.take()));
}
