//! A bare Leptos page: mounts one small view and marks when it has, the
//! way the app marks its own first render (`hearth-ready`,
//! `body[data-ready]`), so both are timed alike.

use leptos::prelude::*;

fn main() {
    leptos::mount::mount_to_body(|| {
        view! {
            <main>
                <h1>"Ask anything"</h1>
                <textarea aria-label="Message or command"></textarea>
            </main>
        }
    });
    if let Some(w) = web_sys::window() {
        if let Some(p) = w.performance() {
            let _ = p.mark("hearth-ready");
        }
        if let Some(body) = w.document().and_then(|d| d.body()) {
            let _ = body.set_attribute("data-ready", "true");
        }
    }
}
