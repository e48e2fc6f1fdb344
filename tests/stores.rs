//! The core skills' stores in IndexedDB, through the running app's call
//! path: every operation persists, upgrades from earlier schemas keep
//! data, and settings survive a restart.
#![cfg(target_arch = "wasm32")]

use hearth::runtime::Runtime;
use hearth::storage::{
    ACTIVITY, Db, MEMORIES, NOTES, SCHEMA_V1, SCHEMA_V2, SCHEMAS, Schema, TASKS, current_schema,
};
use hearth_core::activity::ActivityRecord;
use hearth_core::memory::Memory;
use hearth_core::notes::Note;
use hearth_core::permission::{ApprovalSetting, PermissionMode};
use hearth_core::tasks::{Task, TaskStatus};
use hearth_core::{CallOrigin, SkillId, ToolStatus};
use serde_json::{Value, json};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

async fn fresh(name: &str, schema: Schema) -> Db {
    let _ = Db::delete_database(name).await;
    Db::open_with(name, schema).await.expect("open")
}

async fn run(rt: &Runtime, skill: &str, args: Value) -> hearth_core::ToolResult {
    let (_, r) = rt
        .invoke(SkillId::new(skill).unwrap(), args, CallOrigin::User)
        .await;
    r
}

fn created_id(r: &hearth_core::ToolResult, key: &str) -> String {
    r.json().unwrap()[key]["id"].as_str().unwrap().to_string()
}

#[wasm_bindgen_test]
async fn every_notes_tasks_and_memory_operation_persists() {
    let name = "test-core-skills";
    let rt = Runtime::start(fresh(name, current_schema()).await)
        .await
        .unwrap();

    let n = run(
        &rt,
        "notes",
        json!({"action": "create", "title": "Groceries", "body": "milk", "tags": ["home"]}),
    )
    .await;
    let note_id = created_id(&n, "note");
    run(
        &rt,
        "notes",
        json!({"action": "update", "id": note_id, "body": "milk, eggs"}),
    )
    .await;
    let t = run(&rt, "tasks", json!({"action": "create", "title": "Renew passport", "due": "2030-01-01", "priority": "high"})).await;
    let task_id = created_id(&t, "task");
    run(&rt, "tasks", json!({"action": "complete", "id": task_id})).await;
    let m = run(
        &rt,
        "memory",
        json!({"action": "remember", "text": "Prefers trains", "tags": ["travel"]}),
    )
    .await;
    let memory_id = created_id(&m, "memory");
    let gone = run(
        &rt,
        "notes",
        json!({"action": "create", "title": "Temporary"}),
    )
    .await;
    let gone_id = created_id(&gone, "note");
    let del = run(&rt, "notes", json!({"action": "delete", "id": gone_id})).await;
    assert_eq!(del.status, ToolStatus::Completed);

    // What is in IndexedDB, read back directly.
    let db = rt.db();
    let (notes, _) = db.all::<Note>(NOTES).await.unwrap();
    assert_eq!(notes.len(), 1);
    assert_eq!(
        (notes[0].id.as_str(), notes[0].body.as_str()),
        (note_id.as_str(), "milk, eggs")
    );
    let (tasks, _) = db.all::<Task>(TASKS).await.unwrap();
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].status, TaskStatus::Done);
    let (memories, _) = db.all::<Memory>(MEMORIES).await.unwrap();
    assert_eq!(memories.len(), 1);
    assert_eq!(memories[0].id, memory_id);

    // A fresh start loads the same data, and read/list/search/recall see it.
    drop(rt);
    let rt = Runtime::start(Db::open_with(name, current_schema()).await.unwrap())
        .await
        .unwrap();
    let read = run(&rt, "notes", json!({"action": "read", "id": note_id})).await;
    assert_eq!(read.text(), Some("Groceries\n\nmilk, eggs"));
    let search = run(&rt, "notes", json!({"action": "search", "query": "eggs"})).await;
    assert_eq!(search.json().unwrap()["results"][0]["id"], note_id);
    let list = run(&rt, "tasks", json!({"action": "list", "status": "done"})).await;
    assert_eq!(list.json().unwrap()["total"], 1);
    let recall = run(
        &rt,
        "memory",
        json!({"action": "recall", "query": "trains"}),
    )
    .await;
    assert_eq!(recall.json().unwrap()["matches"][0]["id"], memory_id);
    let forget = run(&rt, "memory", json!({"action": "forget", "id": memory_id})).await;
    assert_eq!(forget.status, ToolStatus::Completed);
    assert_eq!(rt.db().count(MEMORIES).await.unwrap(), 0);
    // Undo from the result brings it back, in the store too.
    let (_, undone) = rt.undo(forget.undo.unwrap()).await;
    assert_eq!(undone.status, ToolStatus::Completed);
    assert_eq!(rt.db().count(MEMORIES).await.unwrap(), 1);
}

#[wasm_bindgen_test]
async fn upgrades_from_every_earlier_schema_keep_the_data() {
    let record = |id: &str| {
        let call = hearth_core::ToolCall {
            id: id.into(),
            skill_id: SkillId::new("calculator").unwrap(),
            arguments: json!({"expression": "2+2"}),
            conversation_id: None,
            origin: CallOrigin::User,
        };
        let mut r = hearth_core::ToolResult::for_call(&call, ToolStatus::Completed);
        r.started_at_ms = 5.0;
        ActivityRecord::new(&call, None, &r)
    };
    for (i, old) in SCHEMAS[..SCHEMAS.len() - 1].iter().enumerate() {
        let name = format!("test-upgrade-from-{}", old.version);
        let db = fresh(&name, *old).await;
        db.put(ACTIVITY, &record("old-activity")).await.unwrap();
        if old.version >= SCHEMA_V2.version {
            let note = Note {
                id: "old-note".into(),
                title: "From v2".into(),
                body: "b".into(),
                tags: vec![],
                created_ms: 1.0,
                updated_ms: 1.0,
            };
            db.put(NOTES, &note).await.unwrap();
        }
        db.close();
        let now = Db::open_with(&name, current_schema()).await.unwrap();
        assert_eq!(
            now.version(),
            current_schema().version,
            "from v{}",
            old.version
        );
        let mut names = now.store_names();
        names.sort();
        let mut want: Vec<String> = current_schema()
            .stores
            .iter()
            .map(|s| s.name.to_string())
            .collect();
        want.sort();
        assert_eq!(
            names, want,
            "every store exists after upgrading from v{}",
            old.version
        );
        assert_eq!(
            now.get::<ActivityRecord>(ACTIVITY, "old-activity")
                .await
                .unwrap(),
            Some(record("old-activity"))
        );
        if old.version >= SCHEMA_V2.version {
            assert_eq!(
                now.get::<Note>(NOTES, "old-note")
                    .await
                    .unwrap()
                    .unwrap()
                    .title,
                "From v2"
            );
        }
        // The app starts on the upgraded database and sees the old data.
        let rt = Runtime::start(now).await.unwrap();
        assert_eq!(
            rt.data().notes.borrow().len(),
            usize::from(old.version >= 2),
            "step {i}"
        );
    }
    assert_eq!(SCHEMAS[0].version, SCHEMA_V1.version);
}

#[wasm_bindgen_test]
async fn permission_settings_survive_a_restart() {
    let name = "test-permissions";
    let rt = Runtime::start(fresh(name, current_schema()).await)
        .await
        .unwrap();
    rt.update_permissions(|p| {
        p.mode = PermissionMode::AskEverything;
        p.set_approval("notes", Some(ApprovalSetting::AlwaysAllow));
        p.set_enabled("calculator", Some(false));
    })
    .await
    .unwrap();
    let denied = run(&rt, "calculator", json!({"expression": "1+1"})).await;
    assert_eq!(denied.status, ToolStatus::Denied);
    drop(rt);
    let rt = Runtime::start(Db::open_with(name, current_schema()).await.unwrap())
        .await
        .unwrap();
    let p = rt.data().permissions.borrow().clone();
    assert_eq!(p.mode, PermissionMode::AskEverything);
    assert_eq!(p.always_allowed(), ["notes"]);
    // Always allowed, so no dialog is needed even in ask-everything mode.
    let ok = run(&rt, "notes", json!({"action": "list"})).await;
    assert_eq!(ok.status, ToolStatus::Completed);
    let usage = rt.data().usage.borrow().get("notes").cloned().unwrap();
    assert_eq!(usage.count, 1);
}

#[wasm_bindgen_test]
async fn strange_text_round_trips_through_indexeddb() {
    let rt = Runtime::start(fresh("test-unicode", current_schema()).await)
        .await
        .unwrap();
    let text = "👩🏽‍💻 \u{202E}rtl \u{200B}zw e\u{0301} \u{0000} 𝔘 \r\n";
    let r = run(
        &rt,
        "notes",
        json!({"action": "create", "title": "u", "body": text}),
    )
    .await;
    let id = created_id(&r, "note");
    let stored = rt.db().get::<Note>(NOTES, &id).await.unwrap().unwrap();
    assert_eq!(stored.body, text);
    let big = run(
        &rt,
        "notes",
        json!({"action": "create", "title": "x".repeat(1_000_000)}),
    )
    .await;
    assert_eq!(big.status, ToolStatus::Failed);
    assert_eq!(rt.db().count(NOTES).await.unwrap(), 1);
}
