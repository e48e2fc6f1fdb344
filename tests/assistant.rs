//! The assistant's browser adapters in a real browser: the conversation
//! store in IndexedDB, and the streaming fetch adapter reading bodies
//! chunk by chunk (with failures and aborts).
#![cfg(target_arch = "wasm32")]

use hearth::assistant::http::{FetchError, StreamingResponse, send};
use hearth::assistant::store::{self, AssistantSettings};
use hearth::storage::Db;
use hearth_core::assistant::agent::{
    CallState, Conversation, Message, MessageStatus, ToolCallRecord,
};
use hearth_core::assistant::providers::{HttpMethod, HttpRequest, ProviderConfig, preset};
use hearth_core::stores::current_schema;
use hearth_core::{CallOrigin, Content, SkillId, ToolCall, ToolResult, ToolStatus};
use serde_json::json;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen(inline_js = r#"
export function chunked_response(parts, delay_ms, status, fail) {
  const enc = new TextEncoder();
  let i = 0;
  const stream = new ReadableStream({
    async pull(c) {
      await new Promise((r) => setTimeout(r, delay_ms));
      if (i < parts.length) c.enqueue(enc.encode(parts[i++]));
      else if (fail) c.error(new TypeError('network error'));
      else c.close();
    },
  });
  return new Response(stream, {
    status,
    headers: { 'content-type': 'text/event-stream', 'retry-after': '2' },
  });
}
"#)]
extern "C" {
    fn chunked_response(
        parts: Vec<String>,
        delay_ms: u32,
        status: u16,
        fail: bool,
    ) -> web_sys::Response;
}

async fn fresh(name: &str) -> Db {
    let _ = Db::delete_database(name).await;
    Db::open_with(name, current_schema()).await.expect("open")
}

fn conversation(id: &str, updated: f64) -> Conversation {
    let mut c = Conversation::new(id, 1.0);
    c.title = format!("About {id}");
    let mid = c.next_message_id();
    c.messages
        .push(Message::user(mid, "What's 15% of 847?", 2.0));
    let mid = c.next_message_id();
    let mut reply = Message::assistant(mid, 3.0);
    reply.content = "15% of 847 is 127.05.".into();
    reply.status = MessageStatus::Complete;
    let call = ToolCall {
        id: "call_1".into(),
        skill_id: SkillId::new("calculator").unwrap(),
        arguments: json!({"expression": "15% of 847"}),
        conversation_id: Some(id.into()),
        origin: CallOrigin::Model,
    };
    let mut result = ToolResult::for_call(&call, ToolStatus::Completed);
    result.content = vec![Content::Text {
        text: "127.05".into(),
    }];
    result.duration_ms = 1.5;
    reply.tool_calls.push(ToolCallRecord {
        id: "call_1".into(),
        name: "calculator".into(),
        arguments: json!({"expression": "15% of 847"}),
        raw_arguments: None,
        state: CallState::Finished,
        result: Some(result),
        note: None,
        provider_id: None,
    });
    c.messages.push(reply);
    c.load_skills([SkillId::new("calculator").unwrap()]);
    c.updated_at_ms = updated;
    c
}

#[wasm_bindgen_test]
async fn conversations_round_trip_most_recent_first() {
    let db = std::rc::Rc::new(fresh("test-conversations").await);
    let old = conversation("old", 10.0);
    let new = conversation("new", 20.0);
    store::save(&db, &old).await.unwrap();
    store::save(&db, &new).await.unwrap();
    let (list, bad) = store::load_all(&db, 99.0).await.unwrap();
    assert_eq!(list, vec![new.clone(), old.clone()]);
    assert_eq!(bad, 0);

    // A save replaces; a delete removes; a deleted one can be put back.
    let mut renamed = old.clone();
    renamed.rename("Percentages", 30.0).unwrap();
    store::save(&db, &renamed).await.unwrap();
    store::delete(&db, "new").await.unwrap();
    let (list, _) = store::load_all(&db, 99.0).await.unwrap();
    assert_eq!(list, vec![renamed.clone()]);
    store::save(&db, &new).await.unwrap();
    let (list, _) = store::load_all(&db, 99.0).await.unwrap();
    assert_eq!(list, vec![renamed, new]);
    std::rc::Rc::try_unwrap(db)
        .ok()
        .expect("the delete keeps no handle on the database")
        .close();
}

#[wasm_bindgen_test]
async fn a_reply_cut_off_by_a_closed_tab_is_repaired_on_load() {
    let db = fresh("test-conversations-repair").await;
    let mut c = conversation("c", 5.0);
    let mid = c.next_message_id();
    let mut streaming = Message::assistant(mid, 6.0);
    streaming.content = "Half an ans".into();
    c.messages.push(streaming);
    c.messages[1].tool_calls[0].state = CallState::Waiting;
    c.messages[1].tool_calls[0].result = None;
    store::save(&db, &c).await.unwrap();
    let (list, _) = store::load_all(&db, 99.0).await.unwrap();
    let back = &list[0];
    assert_eq!(back.messages[2].status, MessageStatus::Cancelled);
    assert_eq!(back.messages[2].content, "Half an ans");
    assert_eq!(back.messages[1].tool_calls[0].state, CallState::Cancelled);
    db.close();
}

#[wasm_bindgen_test]
async fn provider_and_settings_are_kept_and_removed() {
    let db = fresh("test-provider").await;
    assert_eq!(store::provider(&db).await.unwrap(), None);
    assert_eq!(
        store::settings(&db).await.unwrap(),
        AssistantSettings::default()
    );
    let config =
        ProviderConfig::from_preset(preset("openrouter").unwrap(), "sk-or-secret", "some/model");
    store::save_provider(&db, &config).await.unwrap();
    assert_eq!(store::provider(&db).await.unwrap(), Some(config));
    let settings = AssistantSettings {
        max_steps: 4,
        always_loaded: true,
        context_window: Some(32_768),
    };
    store::save_settings(&db, &settings).await.unwrap();
    assert_eq!(store::settings(&db).await.unwrap(), settings);
    store::remove_provider(&db).await.unwrap();
    assert_eq!(store::provider(&db).await.unwrap(), None);
    db.close();
}

#[wasm_bindgen_test]
async fn a_body_is_read_chunk_by_chunk_as_it_arrives() {
    let parts: Vec<String> = ["data: {\"a\":", "1}\n\n", "data: [DONE]\n\n"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let response = chunked_response(parts.clone(), 20, 200, false);
    let mut stream = StreamingResponse::new(&response).unwrap();
    assert_eq!(stream.status, 200);
    assert!(
        stream
            .headers
            .contains(&("retry-after".to_string(), "2".to_string())),
        "{:?}",
        stream.headers
    );
    let mut got = Vec::new();
    while let Some(chunk) = stream.next_chunk().await.unwrap() {
        got.push(String::from_utf8(chunk).unwrap());
    }
    // Each piece came on its own, in order; none was held back.
    assert_eq!(got, parts);
    assert_eq!(stream.next_chunk().await, Ok(None));
}

#[wasm_bindgen_test]
async fn a_body_that_breaks_off_reports_a_network_error() {
    let response = chunked_response(vec!["data: {\"partial\":".into()], 5, 200, true);
    let mut stream = StreamingResponse::new(&response).unwrap();
    assert_eq!(
        stream.next_chunk().await,
        Ok(Some(b"data: {\"partial\":".to_vec()))
    );
    assert_eq!(
        stream.next_chunk().await,
        Err(FetchError::Network("network error".into()))
    );
}

#[wasm_bindgen_test]
async fn error_bodies_are_read_whole_up_to_a_limit() {
    let body = r#"{"error":{"message":"Rate limit reached","type":"rate_limit"}}"#;
    let response = chunked_response(vec![body[..20].into(), body[20..].into()], 1, 429, false);
    let stream = StreamingResponse::new(&response).unwrap();
    assert_eq!(stream.status, 429);
    assert_eq!(stream.text(1 << 20).await, Ok(body.to_string()));
    let response = chunked_response(vec![body.into()], 1, 429, false);
    let stream = StreamingResponse::new(&response).unwrap();
    assert_eq!(stream.text(8).await, Ok(body[..8].to_string()));
}

#[wasm_bindgen_test]
async fn an_aborted_request_says_so_and_a_bad_url_is_a_network_error() {
    let request = HttpRequest {
        method: HttpMethod::Post,
        url: "http://127.0.0.1:1/v1/chat/completions".into(),
        headers: vec![("content-type".into(), "application/json".into())],
        body: Some(b"{}".to_vec()),
    };
    let controller = web_sys::AbortController::new().unwrap();
    controller.abort();
    assert_eq!(
        send(&request, Some(&controller.signal())).await.err(),
        Some(FetchError::Aborted)
    );
    let bad = HttpRequest {
        url: "http://exa mple.invalid:99999/".into(),
        ..request
    };
    match send(&bad, None).await {
        Err(FetchError::Network(message)) => assert!(!message.is_empty()),
        Err(FetchError::Aborted) => panic!("a bad URL is not an abort"),
        Ok(_) => panic!("a bad URL cannot be fetched"),
    }
}
