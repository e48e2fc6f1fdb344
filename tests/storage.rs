//! The IndexedDB adapter in a real browser: records round-trip, the
//! execution log is written by the call path, and clearing empties stores.
#![cfg(target_arch = "wasm32")]

use hearth::storage::Db;
use hearth_core::skill::activity::{ActivityRecord, ActivityStore};
use hearth_core::stores::{ACTIVITY, SCHEMA_V1, current_schema};
use hearth_core::{CallOrigin, Content, SkillId, ToolCall, ToolResult, ToolStatus};
use serde_json::json;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn record(id: &str, text: &str, at: f64) -> ActivityRecord {
    let call = ToolCall {
        id: id.into(),
        skill_id: SkillId::new("calculator").unwrap(),
        arguments: json!({"expression": text, "nested": {"list": [1, 2.5, null, "é😀"]}}),
        conversation_id: None,
        origin: CallOrigin::User,
    };
    let mut result = ToolResult::for_call(&call, ToolStatus::Completed);
    result.content = vec![
        Content::Text {
            text: "127.05".into(),
        },
        Content::Json {
            value: json!({"expression": text, "result": "127.05"}),
        },
    ];
    result.started_at_ms = at;
    result.duration_ms = 0.25;
    ActivityRecord::new(&call, None, &result)
}

async fn fresh(name: &str) -> Db {
    let _ = Db::delete_database(name).await;
    Db::open_with(name, current_schema()).await.expect("open")
}

#[wasm_bindgen_test]
async fn activity_records_round_trip_exactly() {
    let db = fresh("test-roundtrip").await;
    let a = record("a", "15% of 847", 1.0);
    let b = record("b", "2+2", 2.0);
    db.append(&a).await.unwrap();
    db.append(&b).await.unwrap();
    let (mut back, undecodable) = db.all::<ActivityRecord>(ACTIVITY).await.unwrap();
    back.sort_by(|x, y| x.id.cmp(&y.id));
    assert_eq!(back, vec![a.clone(), b]);
    assert_eq!(undecodable, 0);
    assert_eq!(
        db.get::<ActivityRecord>(ACTIVITY, "a").await.unwrap(),
        Some(a)
    );
    assert_eq!(
        db.get::<ActivityRecord>(ACTIVITY, "zzz").await.unwrap(),
        None
    );
    assert_eq!(db.count(ACTIVITY).await.unwrap(), 2);
    db.delete(ACTIVITY, "a").await.unwrap();
    assert_eq!(db.count(ACTIVITY).await.unwrap(), 1);
    db.clear_all().await.unwrap();
    assert_eq!(db.count(ACTIVITY).await.unwrap(), 0);
}

#[wasm_bindgen_test]
async fn data_survives_closing_and_reopening() {
    let name = "test-reopen";
    let db = fresh(name).await;
    db.append(&record("x", "1+1", 5.0)).await.unwrap();
    db.close();
    let again = Db::open_with(name, current_schema()).await.unwrap();
    let (back, _) = again.all::<ActivityRecord>(ACTIVITY).await.unwrap();
    assert_eq!(back, vec![record("x", "1+1", 5.0)]);
}

#[wasm_bindgen_test]
async fn opening_at_the_current_schema_keeps_version_one_data() {
    let name = "test-upgrade-v1";
    let _ = Db::delete_database(name).await;
    let v1 = Db::open_with(name, SCHEMA_V1).await.unwrap();
    v1.append(&record("old", "3*3", 1.0)).await.unwrap();
    v1.close();
    let now = Db::open_with(name, current_schema()).await.unwrap();
    assert_eq!(now.version(), current_schema().version);
    let (back, _) = now.all::<ActivityRecord>(ACTIVITY).await.unwrap();
    assert_eq!(back, vec![record("old", "3*3", 1.0)]);
}

#[wasm_bindgen_test]
async fn the_call_path_writes_the_execution_log() {
    let db = fresh("test-callpath").await;
    let rt = hearth::runtime::Runtime::start(db).await.unwrap();
    let (call, result) = rt
        .invoke(
            SkillId::new("calculator").unwrap(),
            json!({"expression": "15% of 847"}),
            CallOrigin::User,
        )
        .await;
    assert_eq!(result.status, ToolStatus::Completed);
    assert_eq!(result.text(), Some("127.05"));
    let (bad_call, bad) = rt
        .invoke(
            SkillId::new("calculator").unwrap(),
            json!({"expression": 5}),
            CallOrigin::User,
        )
        .await;
    assert_eq!(bad.status, ToolStatus::Failed);
    assert_eq!(
        bad.error.as_deref(),
        Some("invalid input: 'expression': expected a string, got a number (type)")
    );
    let stored = rt
        .db()
        .get::<ActivityRecord>(ACTIVITY, &call.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.result, result);
    let stored_bad = rt
        .db()
        .get::<ActivityRecord>(ACTIVITY, &bad_call.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored_bad.status(), ToolStatus::Failed);
}
