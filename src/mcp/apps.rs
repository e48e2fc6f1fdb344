//! MCP Apps in the chat: when an MCP tool's result comes with a `ui://`
//! view, the view's HTML runs under the policy core built for it
//! (`hearth_core::mcp::apps`), two frames deep:
//!
//! - the outer frame is `/sandbox/mcp-app.html` in an opaque origin, so it
//!   can reach nothing of Hearth's (storage, the token, the DOM). When
//!   Hearth's service worker controls the page, the frame is made without a
//!   sandbox attribute so that the worker serves it (offline too; a worker
//!   never serves a frame that is sandboxed into an opaque origin), and the
//!   worker puts `sandbox allow-scripts` in the page's policy header; else
//!   the frame has `sandbox="allow-scripts"` and loads from the network.
//!   The page does nothing unless its origin is opaque, and this component
//!   listens only to an opaque origin.
//! - The page adds the view's policy to its own before showing anything,
//!   proves it is in force, and loads the view into an inner frame
//!   (`srcdoc`, also sandboxed) with that policy first in its document; it
//!   relays the JSON-RPC messages between the view and this component.
//!   The view's policy applying to the outer page too is what keeps the
//!   view from navigating its own frame anywhere it did not declare.
//!
//! Messages are accepted only from that frame's window; what they may do
//! is [`AppHost`]'s decision.

// Why not a srcdoc, as for the code sandbox: a srcdoc document inherits the
// app page's own policy, whose script-src admits only Hearth's scripts by
// hash, and a view's inline scripts would never run under it.

use std::cell::RefCell;
use std::rc::Rc;

use hearth_core::mcp::apps::{AppHost, AppView, HostAction, HostContext};
use hearth_core::mcp::model::Tool;
use hearth_core::mcp::skills::{ServerId, ui_resource};
use hearth_core::skill::activity::ActivityRecord;
use hearth_core::{SkillKind, ToolStatus};
use leptos::html;
use leptos::prelude::*;
use leptos::task::spawn_local;
use send_wrapper::SendWrapper;
use serde::Serialize;
use serde_json::{Value, json};
use wasm_bindgen::JsValue;

use super::use_mcp;
use crate::icons::Icon;
use crate::runtime::use_runtime;

/// The sandbox page that hosts one view.
pub const SANDBOX_PAGE: &str = "/sandbox/mcp-app.html";

fn to_js(v: &Value) -> JsValue {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap_or(JsValue::NULL)
}

fn context(width: f64) -> HostContext {
    let window = web_sys::window();
    let dark = crate::theme::is_dark();
    let locale = window
        .as_ref()
        .and_then(|w| w.navigator().language())
        .unwrap_or_else(|| "en".into());
    let time_zone =
        js_sys::Intl::DateTimeFormat::new(&js_sys::Array::new(), &js_sys::Object::new())
            .resolved_options();
    let time_zone = js_sys::Reflect::get(&time_zone, &"timeZone".into())
        .ok()
        .and_then(|t| t.as_string())
        .unwrap_or_else(|| "UTC".into());
    HostContext {
        theme: if dark { "dark" } else { "light" }.into(),
        locale,
        time_zone,
        width,
    }
}

/// Under a result card: the tool's MCP App, when it has one and the call
/// completed.
#[component]
pub fn McpAppSlot(record: ActivityRecord) -> impl IntoView {
    let rt = use_runtime();
    let mcp = use_mcp();
    let completed = record.result.status == ToolStatus::Completed;
    let target = {
        let skill_id = record.skill_id.clone();
        let mcp = mcp.clone();
        Memo::new(move |_| {
            rt.versions().registry.track();
            let kind = rt.registry().get(&skill_id).map(|s| s.kind.clone())?;
            let SkillKind::Mcp { server, tool } = kind else {
                return None;
            };
            let tool = mcp.tool(&server, &tool)?;
            let uri = ui_resource(&tool)?.to_string();
            let server = ServerId::new(server).ok()?;
            Some((server, tool, uri))
        })
    };
    let arguments = record.arguments.clone();
    let result = mcp
        .answer(&record.id)
        .unwrap_or_else(|| hearth_core::mcp::apps::result_for_view(&record.result));
    move || {
        if !completed {
            return None;
        }
        target.get().map(|(server, tool, uri)| {
            let (arguments, result) = (arguments.clone(), result.clone());
            Suspend::new(SendWrapper::new(async move {
                match frame_in_chunk(server, tool, uri, arguments, result).await {
                    Ok(view) => view,
                    Err(_) => view! {
                        <p class="inline-error" role="alert">
                            {crate::split::not_loaded("MCP Apps")}
                        </p>
                    }
                    .into_any(),
                }
            }))
        })
    }
}

// An app's frame and its host are shown only for tools with a view: the
// `mcp_app` chunk, fetched the first time one is shown.
crate::split::split_point!(
    mcp_app,
    fn frame_in_chunk(
        server: ServerId,
        tool: Tool,
        uri: String,
        arguments: Value,
        result: Value,
    ) -> AnyView {
        view! {
            <McpAppFrame server=server tool=tool uri=uri arguments=arguments result=result/>
        }
        .into_any()
    }
);

/// The app's host state, shared by the message listener and the calls it
/// starts.
type SharedHost = SendWrapper<Rc<RefCell<Option<AppHost>>>>;

/// The message `e` as JSON when it comes from the sandbox page in `frame`
/// and that page is in an opaque origin; what runs inside the page (a
/// view, a preview) and every other window are not heard.
pub fn from_sandbox_page(frame: NodeRef<html::Iframe>, e: &web_sys::MessageEvent) -> Option<Value> {
    let win = frame.get_untracked()?.content_window()?;
    let win: &JsValue = win.as_ref();
    let from_frame = e
        .source()
        .is_some_and(|s| js_sys::Object::is(s.as_ref(), win));
    if !from_frame || e.origin() != "null" {
        return None;
    }
    serde_wasm_bindgen::from_value(e.data()).ok()
}

/// Posts a message to the sandbox page in `frame`, when it is there.
pub fn post_to(frame: NodeRef<html::Iframe>, message: &Value) {
    if let Some(win) = frame.get_untracked().and_then(|f| f.content_window()) {
        let _ = win.post_message(&to_js(message), "*");
    }
}

/// Carries out what the app's host decided: messages to the app, tool
/// calls and resource reads through the server (answered back to the app
/// when they end), a new height, a link opened outside Hearth, and logs.
fn host_performer(
    host: SharedHost,
    mcp: crate::mcp::Mcp,
    server: ServerId,
    frame: NodeRef<html::Iframe>,
    height: RwSignal<f64>,
) -> impl Fn(Vec<HostAction>) + 'static {
    let post = move |message: &Value| post_to(frame, message);
    move |actions: Vec<HostAction>| {
        for action in actions {
            match action {
                HostAction::Post(m) => post(&m),
                HostAction::CallTool {
                    request,
                    name,
                    arguments,
                } => {
                    let (host, mcp, server) = (host.clone(), mcp.clone(), server.clone());
                    spawn_local(async move {
                        let outcome = mcp.call_from_app(&server, &name, arguments).await;
                        let answer = host.borrow().as_ref().map(|h| h.answer(&request, outcome));
                        if let Some(HostAction::Post(m)) = answer {
                            post(&m);
                        }
                    });
                }
                HostAction::ReadResource { request, uri } => {
                    let (host, mcp, server) = (host.clone(), mcp.clone(), server.clone());
                    spawn_local(async move {
                        let outcome = mcp.read_for_app(&server, &uri).await;
                        let answer = host.borrow().as_ref().map(|h| h.answer(&request, outcome));
                        if let Some(HostAction::Post(m)) = answer {
                            post(&m);
                        }
                    });
                }
                HostAction::Resize { height: h } => height.set(h),
                HostAction::OpenLink { url } => {
                    if let Some(w) = web_sys::window() {
                        let _ = w.open_with_url_and_target_and_features(
                            &url,
                            "_blank",
                            "noopener,noreferrer",
                        );
                    }
                }
                HostAction::Log { level, data } => {
                    web_sys::console::log_1(
                        &format!("MCP App of {server} ({level}): {data}").into(),
                    );
                }
            }
        }
    }
}

/// One view, in its sandbox.
#[component]
pub fn McpAppFrame(
    server: ServerId,
    tool: Tool,
    uri: String,
    arguments: Value,
    result: Value,
) -> impl IntoView {
    let mcp = use_mcp();
    let loaded: RwSignal<Option<Result<AppView, String>>> = RwSignal::new(None);
    {
        let (mcp, server, uri) = (mcp.clone(), server.clone(), uri.clone());
        spawn_local(async move {
            loaded.set(Some(mcp.view(&server, &uri).await));
        });
    }
    let frame = NodeRef::<html::Iframe>::new();
    let height = RwSignal::new(180.0_f64);
    // Why the sandbox page would not show the app, when it would not.
    let refused: RwSignal<Option<String>> = RwSignal::new(None);
    let served_by_worker = crate::pwa::controls_this_page();
    let host: SharedHost = SendWrapper::new(Rc::new(RefCell::new(None)));

    let post = move |message: &Value| post_to(frame, message);
    let perform = host_performer(host.clone(), mcp.clone(), server.clone(), frame, height);

    let title = format!("{} — app from {server}", tool.display_name());
    let listener = {
        let host = host.clone();
        let server_for_tools = server.clone();
        let mcp = mcp.clone();
        window_event_listener(leptos::ev::message, move |e: web_sys::MessageEvent| {
            // Only the sandbox page in an opaque origin speaks for the app.
            let Some(message) = from_sandbox_page(frame, &e) else {
                return;
            };
            let method = message.get("method").and_then(Value::as_str);
            if method == Some("ui/notifications/sandbox-refused") {
                let why = message
                    .pointer("/params/message")
                    .and_then(Value::as_str)
                    .unwrap_or("the sandbox refused it");
                refused.set(Some(why.chars().take(500).collect()));
                return;
            }
            if method == Some("ui/notifications/sandbox-proxy-ready") {
                let Some(Ok(view)) = loaded.get_untracked() else {
                    return;
                };
                let app_tools = mcp
                    .server(server_for_tools.as_str())
                    .map(|s| s.app_tools())
                    .unwrap_or_default();
                let mut h = AppHost::new(
                    tool.clone(),
                    arguments.clone(),
                    app_tools,
                    context(
                        frame
                            .get_untracked()
                            .map_or(320, |f| f.client_width().max(320))
                            as f64,
                    ),
                    env!("CARGO_PKG_VERSION"),
                );
                let queued = h.set_result(result.clone());
                *host.borrow_mut() = Some(h);
                let html = hearth_core::mcp::apps::with_policy(&view.html, &view.csp);
                post(&json!({
                    "jsonrpc": "2.0",
                    "method": "ui/notifications/sandbox-resource-ready",
                    "params": {"html": html, "sandbox": "allow-scripts", "cspPolicy": view.csp},
                }));
                perform(queued);
                return;
            }
            let actions = host
                .borrow_mut()
                .as_mut()
                .map(|h| h.receive(&message))
                .unwrap_or_default();
            perform(actions);
        })
    };
    on_cleanup(move || listener.remove());
    let label = title.clone();

    view! {
        <section class="mcp-app" data-server=server.to_string() data-uri=uri.clone() aria-label=label>
            <header class="mcp-app-head">
                <Icon name="shield"/>
                <span>"App from "<strong>{server.to_string()}</strong></span>
                {move || loaded.get().and_then(|l| l.ok()).map(|v| {
                    let reach = if v.allowed.connect_domains.is_empty() {
                        "sandboxed, no network".to_string()
                    } else {
                        format!("sandboxed, may connect to {}", v.allowed.connect_domains.join(", "))
                    };
                    view! { <span class="muted mcp-app-policy">{reach}</span> }
                })}
            </header>
            {move || match loaded.get() {
                None => view! { <p class="muted mcp-app-loading">"Loading the app…"</p> }.into_any(),
                Some(Err(e)) => view! {
                    <p class="inline-error" role="alert">{format!("The app could not be shown: {e}")}</p>
                }.into_any(),
                Some(Ok(v)) => {
                    let left_out = v.refused.clone();
                    let border = v.prefers_border != Some(false);
                    view! {
                        {move || refused.get().map(|why| view! {
                            <p class="inline-error" role="alert">{format!("The app could not be shown: {why}")}</p>
                        })}
                        {(!left_out.is_empty()).then(|| view! {
                            <p class="muted mcp-app-refused">
                                {format!(
                                    "Left out of the app's permissions: {}",
                                    left_out.iter().map(|(d, why)| format!("{d} ({why})")).collect::<Vec<_>>().join("; ")
                                )}
                            </p>
                        })}
                        <iframe
                            node_ref=frame
                            class="mcp-app-frame"
                            class:borderless=!border
                            sandbox=(!served_by_worker).then_some("allow-scripts")
                            referrerpolicy="no-referrer"
                            src=SANDBOX_PAGE
                            title=title.clone()
                            style:height=move || format!("{}px", height.get())
                        ></iframe>
                    }.into_any()
                }
            }}
        </section>
    }
}
