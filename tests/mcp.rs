//! The browser's MCP adapters in a real browser, without any server: the
//! fetch transport reads a streamed body (from a `blob:` URL), exposes its
//! headers, turns fetch's TypeError into an "unreachable" that names CORS
//! and the relay, aborts when the body is dropped, and sleeps; OAuth's
//! callback matching and the sign-in randomness.
#![cfg(target_arch = "wasm32")]

use futures::StreamExt;
use hearth::mcp::oauth::{WebRandomness, client_metadata, state_of};
use hearth::mcp::transport::{FetchTransport, body_stream, fetch_failure};
use hearth_core::mcp::authorize::Randomness;
use hearth_core::mcp::{HttpMethod, HttpRequest, HttpTransport, TransportError};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn blob_url(body: &str, mime: &str) -> String {
    let parts = js_sys::Array::of1(&JsValue::from_str(body));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options).unwrap();
    web_sys::Url::create_object_url_with_blob(&blob).unwrap()
}

#[wasm_bindgen_test]
async fn a_streamed_body_is_read_whole_with_its_headers() {
    let sse = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n".repeat(200);
    let url = blob_url(&sse, "text/event-stream");
    let t = FetchTransport::direct();
    let response = t
        .send(HttpRequest::new(HttpMethod::Get, url.clone()))
        .await
        .unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(response.media_type(), "text/event-stream");
    let body = response.read_to_end(1 << 20).await.unwrap();
    assert_eq!(String::from_utf8(body).unwrap(), sse);
    web_sys::Url::revoke_object_url(&url).unwrap();
}

#[wasm_bindgen_test]
async fn no_answer_is_unreachable_and_says_what_to_do() {
    let t = FetchTransport::direct();
    let err = match t
        .send(
            HttpRequest::new(HttpMethod::Post, "nosuchscheme://mcp.example/").body(b"{}".to_vec()),
        )
        .await
    {
        Err(e) => e,
        Ok(r) => panic!("answered {}", r.status),
    };
    let TransportError::Unreachable(message) = &err else {
        panic!("{err:?}")
    };
    assert!(message.contains("CORS"), "{message}");
    assert!(message.contains("Connect through Hearth"), "{message}");

    let type_error: JsValue = js_sys::TypeError::new("Failed to fetch").into();
    assert_eq!(
        fetch_failure(&type_error, true),
        TransportError::Unreachable(
            "Hearth's local server (hearth serve) is not answering; start it again and reload"
                .into()
        )
    );
    let abort: JsValue = web_sys::DomException::new_with_message_and_name("stopped", "AbortError")
        .unwrap()
        .into();
    assert_eq!(
        fetch_failure(&abort, false),
        TransportError::Other("the request was stopped".into())
    );
}

#[wasm_bindgen_test]
fn dropping_the_body_aborts_the_request() {
    let controller = web_sys::AbortController::new().unwrap();
    let signal = controller.signal();
    let body = body_stream(None, controller);
    assert!(!signal.aborted());
    drop(body);
    assert!(signal.aborted());
}

#[wasm_bindgen_test]
async fn a_body_read_to_its_end_ends_cleanly() {
    let url = blob_url("abc", "application/json");
    let t = FetchTransport::direct();
    let mut response = t
        .send(HttpRequest::new(HttpMethod::Get, url))
        .await
        .unwrap();
    let mut all = Vec::new();
    while let Some(chunk) = response.body.next().await {
        all.extend(chunk.unwrap());
    }
    assert_eq!(all, b"abc");
}

#[wasm_bindgen_test]
async fn sleep_waits() {
    let perf = web_sys::window().unwrap().performance().unwrap();
    let start = perf.now();
    FetchTransport::direct().sleep(40).await;
    assert!(perf.now() - start >= 35.0);
}

#[wasm_bindgen_test]
fn sign_in_callbacks_are_matched_by_state_and_randomness_is_random() {
    assert_eq!(
        state_of("https://as.example/authorize?response_type=code&state=abc%2B1&x=y"),
        Some("abc+1".into())
    );
    assert_eq!(
        state_of("http://127.0.0.1:8080/oauth-callback.html?code=c&state=s1#frag"),
        Some("s1".into())
    );
    assert_eq!(
        state_of("http://127.0.0.1:8080/oauth-callback.html?code=c"),
        None
    );
    let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
    WebRandomness.fill(&mut a);
    WebRandomness.fill(&mut b);
    assert_ne!(a, b);
    assert_ne!(a, [0u8; 32]);
    let meta = client_metadata("http://127.0.0.1:8080");
    assert_eq!(
        (meta.redirect_uris, meta.application_type.as_str()),
        (
            vec!["http://127.0.0.1:8080/oauth-callback.html".to_string()],
            "native"
        )
    );
}
