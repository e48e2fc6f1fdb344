//! Components mount and render in a real browser.
#![cfg(target_arch = "wasm32")]

use hearth::views::cards::ResultCard;
use hearth_core::skill::activity::ActivityRecord;
use hearth_core::{CallOrigin, Content, SkillId, ToolCall, ToolResult, ToolStatus};
use leptos::prelude::*;
use serde_json::json;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn host() -> web_sys::HtmlElement {
    let document = web_sys::window().unwrap().document().unwrap();
    let div = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&div).unwrap();
    div.unchecked_into()
}

fn record(status: ToolStatus) -> ActivityRecord {
    let call = ToolCall {
        id: "c".into(),
        skill_id: SkillId::new("calculator").unwrap(),
        arguments: json!({"expression": "15% of 847"}),
        conversation_id: None,
        origin: CallOrigin::User,
    };
    let mut result = ToolResult::for_call(&call, status);
    match status {
        ToolStatus::Completed => {
            result.content = vec![Content::Text {
                text: "127.05".into(),
            }]
        }
        _ => result.error = Some("cannot calculate".into()),
    }
    result.duration_ms = 3.4;
    let mut r = ActivityRecord::new(&call, None, &result);
    r.skill_name = "Calculator".into();
    r
}

#[wasm_bindgen_test]
fn a_result_card_shows_skill_input_output_and_duration() {
    let el = host();
    let handle = leptos::mount::mount_to(
        el.clone(),
        || view! { <ResultCard record=record(ToolStatus::Completed) icon="calculator".to_string()/> },
    );
    let card = el
        .query_selector(".result-card")
        .unwrap()
        .expect("card rendered");
    assert_eq!(
        card.get_attribute("data-status").as_deref(),
        Some("completed")
    );
    let text = |sel: &str| {
        el.query_selector(sel)
            .unwrap()
            .unwrap()
            .text_content()
            .unwrap()
    };
    assert_eq!(text(".card-skill"), "Calculator");
    assert_eq!(text(".card-input"), "15% of 847");
    assert_eq!(text(".card-output"), "127.05");
    assert_eq!(text(".card-duration"), "3 ms");
    assert!(el.query_selector("svg.icon").unwrap().is_some());
    drop(handle);
}

#[wasm_bindgen_test]
fn a_command_card_reads_like_an_answer_to_what_was_typed() {
    let el = host();
    let _typed = leptos::mount::mount_to(el.clone(), || {
        view! { <ResultCard record=record(ToolStatus::Completed) line="what is 15% of 847".to_string()/> }
    });
    let text = |el: &web_sys::HtmlElement, sel: &str| {
        el.query_selector(sel)
            .unwrap()
            .unwrap_or_else(|| panic!("{sel} rendered"))
            .text_content()
            .unwrap()
    };
    assert_eq!(text(&el, ".card-line"), "what is 15% of 847");
    assert_eq!(text(&el, ".card-answer"), "127.05");
    assert!(el.query_selector(".copy-button").unwrap().is_some());
    // From a form, what ran is shown by field, never as JSON.
    let form = host();
    let _form = leptos::mount::mount_to(form.clone(), || {
        let mut r = record(ToolStatus::Completed);
        r.skill_id = SkillId::new("notes").unwrap();
        r.arguments = json!({"action": "create", "title": "Groceries", "tags": ["home", "weekly"]});
        view! { <ResultCard record=r line="make a note called Groceries".to_string() from_form=true/> }
    });
    assert_eq!(
        text(&form, ".card-fields .card-line"),
        "make a note called Groceries"
    );
    let fields: Vec<String> = {
        let list = form
            .query_selector_all(".card-fields dt, .card-fields dd")
            .unwrap();
        (0..list.length())
            .map(|i| list.item(i).unwrap().text_content().unwrap())
            .collect()
    };
    // (Without the registry, the names are the arguments' own, in words.)
    assert_eq!(
        fields,
        [
            "Action",
            "create",
            "Title",
            "Groceries",
            "Tags",
            "home, weekly"
        ]
    );
    assert!(!text(&form, ".card-asked").contains('{'));
}

#[wasm_bindgen_test]
fn a_failed_card_shows_the_message() {
    let el = host();
    let _handle = leptos::mount::mount_to(
        el.clone(),
        || view! { <ResultCard record=record(ToolStatus::Failed)/> },
    );
    let out = el.query_selector(".card-output").unwrap().unwrap();
    assert_eq!(out.text_content().unwrap(), "cannot calculate");
    let status = el.query_selector(".status").unwrap().unwrap();
    assert_eq!(status.text_content().unwrap(), "Failed");
}

// --- assistant: a model's tool calls inline in a reply ---

fn model_call(
    state: hearth_core::assistant::agent::CallState,
) -> hearth_core::assistant::agent::ToolCallRecord {
    let r = record(ToolStatus::Completed);
    hearth_core::assistant::agent::ToolCallRecord {
        id: "call_1".into(),
        name: "calculator".into(),
        arguments: json!({"expression": "15% of 847"}),
        raw_arguments: None,
        state,
        result: matches!(state, hearth_core::assistant::agent::CallState::Finished)
            .then_some(r.result),
        note: matches!(state, hearth_core::assistant::agent::CallState::Refused)
            .then(|| "'calculator' is not a loaded skill in this conversation".to_string()),
        provider_id: None,
    }
}

#[wasm_bindgen_test]
fn a_tool_call_card_shows_where_the_call_stands() {
    use hearth::views::cards::ToolCallCard;
    use hearth_core::assistant::agent::CallState;
    let cases = [
        (
            CallState::Finished,
            false,
            "completed",
            "Completed",
            Some("127.05"),
        ),
        (
            CallState::Waiting,
            true,
            "asking",
            "Waiting for approval",
            None,
        ),
        (CallState::Waiting, false, "running", "Running…", None),
        (
            CallState::Refused,
            false,
            "refused",
            "Not run",
            Some("'calculator' is not a loaded skill in this conversation"),
        ),
        (CallState::Cancelled, false, "cancelled", "Stopped", None),
    ];
    for (state, asking, attr, label, output) in cases {
        let el = host();
        let call = model_call(state);
        let _handle = leptos::mount::mount_to(el.clone(), move || {
            view! { <ToolCallCard call=call skill=("Calculator".to_string(), "calculator".to_string()) asking=asking/> }
        });
        let card = el.query_selector(".tool-card").unwrap().expect("card");
        assert_eq!(
            card.get_attribute("data-state").as_deref(),
            Some(attr),
            "{attr}"
        );
        let text = |sel: &str| {
            el.query_selector(sel)
                .unwrap()
                .and_then(|e| e.text_content())
        };
        assert_eq!(text(".status").as_deref(), Some(label), "{attr}");
        assert_eq!(text(".card-skill").as_deref(), Some("Calculator"));
        assert_eq!(text(".card-input").as_deref(), Some("15% of 847"));
        assert_eq!(text(".card-output").as_deref(), output, "{attr}");
    }
}

/// The emoji icons core's definitions use (discovery, web, MCP, Agent
/// Skills) draw their matching icon, not the generic fallback.
#[wasm_bindgen_test]
fn emoji_icons_draw_the_matching_icon() {
    use hearth::icons::Icon;
    let drawn = |name: &'static str| {
        let el = host();
        let handle = leptos::mount::mount_to(el.clone(), move || view! { <Icon name=name/> });
        let html = el.query_selector("svg").unwrap().unwrap().inner_html();
        drop(handle);
        html
    };
    let cases = [
        ("🔎", "search"),
        ("🌐", "globe"),
        ("📘", "book"),
        ("🔌", "plug"),
        ("🧩", "skills"),
        ("🧰", "skills"),
    ];
    for (emoji, name) in cases {
        assert_eq!(drawn(emoji), drawn(name), "{emoji}");
    }
    assert_ne!(drawn("🔎"), drawn("no-such-icon"));
    // Every icon a core definition names is drawn.
    let fallback = drawn("no-such-icon");
    let defs = hearth_core::builtin::definitions()
        .into_iter()
        .chain([hearth_core::discovery::discover_skills_definition()]);
    for def in defs {
        let icon: &'static str = Box::leak(def.icon.clone().into_boxed_str());
        assert_ne!(drawn(icon), fallback, "{} ({icon})", def.id);
    }
}

/// Resolves after the browser's next animation frame has been painted.
async fn next_frame() {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let _ = web_sys::window().unwrap().request_animation_frame(&resolve);
    });
    wasm_bindgen_futures::JsFuture::from(promise).await.unwrap();
}

/// A streaming reply books a frame to paint its new text; when the reply
/// leaves the page before that frame (a retry replaced it, the
/// conversation closed), the frame finds its signals gone and does nothing.
/// Painting then would read a disposed signal and abort the whole app.
#[wasm_bindgen_test]
async fn a_reply_that_leaves_before_its_frame_paints_nothing() {
    use hearth::views::chat::reply::ReplyText;
    use hearth_core::assistant::agent::{Message, MessageStatus};

    // A panic in a frame callback is not this test's own panic: the
    // browser reports it as an uncaught error on the window.
    let uncaught = std::rc::Rc::new(std::cell::RefCell::new(Vec::<String>::new()));
    let on_error = {
        let uncaught = uncaught.clone();
        wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::ErrorEvent)>::new(
            move |e: web_sys::ErrorEvent| uncaught.borrow_mut().push(e.message()),
        )
    };
    let window = web_sys::window().unwrap();
    window
        .add_event_listener_with_callback("error", on_error.as_ref().unchecked_ref())
        .unwrap();
    let el = host();
    let text = RwSignal::new(String::from("The answer"));
    let kept = std::rc::Rc::new(std::cell::Cell::new(None));
    let handle = leptos::mount::mount_to(el.clone(), {
        let kept = kept.clone();
        move || {
            provide_context(hearth::enhance::Enhancer::new());
            let message = Memo::new(move |_| {
                let mut m = Message::assistant("m1".into(), 0.0);
                m.status = MessageStatus::Streaming;
                m.content = text.get();
                Some(m)
            });
            kept.set(Some(message));
            view! { <ReplyText message/> }
        }
    });
    // The first frame paints what has arrived so far.
    next_frame().await;
    next_frame().await;
    assert_eq!(
        el.query_selector(".message-text")
            .unwrap()
            .unwrap()
            .text_content()
            .unwrap()
            .trim(),
        "The answer"
    );
    // More text books another frame, and the reply goes before it comes.
    text.set(String::from("The answer is 42"));
    // Let the effect run (it books the frame); a zero timeout comes before
    // the next frame.
    gloo_timers::future::TimeoutFuture::new(0).await;
    drop(handle);
    let message = kept.get().unwrap();
    assert!(
        message.try_get_untracked().is_none(),
        "the reply's signals are gone"
    );
    next_frame().await;
    next_frame().await;
    window
        .remove_event_listener_with_callback("error", on_error.as_ref().unchecked_ref())
        .unwrap();
    assert_eq!(*uncaught.borrow(), Vec::<String>::new());
    assert!(el.query_selector(".message-text").unwrap().is_none());
}

/// What the page did with downloads: the anchors clicked and the object
/// URLs revoked, recorded in place of doing them.
fn watch_downloads() {
    js_sys::eval(
        r#"
        window.__downloads = { clicks: [], revoked: [] };
        if (!HTMLAnchorElement.prototype.__realClick) {
          HTMLAnchorElement.prototype.__realClick = HTMLAnchorElement.prototype.click;
          HTMLAnchorElement.prototype.click = function () {
            window.__downloads.clicks.push({ href: this.href, download: this.download });
          };
          URL.__realRevoke = URL.revokeObjectURL;
          URL.revokeObjectURL = (u) => { window.__downloads.revoked.push(u); };
        }
        "#,
    )
    .unwrap();
}

fn seen(path: &str) -> wasm_bindgen::JsValue {
    js_sys::eval(&format!("window.__downloads.{path}")).unwrap()
}

#[wasm_bindgen_test]
async fn every_download_keeps_its_file_until_the_browser_has_read_it() {
    watch_downloads();
    // A file a code run wrote, and a backup: both go through the one helper.
    hearth::views::cards::code::download(
        "out/page.html",
        "text/html",
        "PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    )
    .unwrap();
    hearth::platform::download_bytes("notes.md", "text/markdown", b"# hi").unwrap();
    let clicks = js_sys::Array::from(&seen("clicks"));
    assert_eq!(clicks.length(), 2);
    // Some browsers read the URL after click() returns: nothing is revoked
    // yet.
    assert_eq!(js_sys::Array::from(&seen("revoked")).length(), 0);
    let first = clicks.get(0);
    let name = js_sys::Reflect::get(&first, &"download".into()).unwrap();
    assert_eq!(name.as_string().as_deref(), Some("out_page.html"));
    // The file is there to read, as bytes no browser renders.
    let href = js_sys::Reflect::get(&first, &"href".into())
        .unwrap()
        .as_string()
        .unwrap();
    let response: web_sys::Response =
        wasm_bindgen_futures::JsFuture::from(web_sys::window().unwrap().fetch_with_str(&href))
            .await
            .unwrap()
            .unchecked_into();
    let blob: web_sys::Blob = wasm_bindgen_futures::JsFuture::from(response.blob().unwrap())
        .await
        .unwrap()
        .unchecked_into();
    assert_eq!(blob.type_(), "application/octet-stream");
    assert_eq!(blob.size(), 25.0);
}
