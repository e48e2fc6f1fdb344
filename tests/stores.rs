//! The core skills' stores in IndexedDB, through the running app's call
//! path: every operation persists, upgrades from earlier schemas keep
//! data, and settings survive a restart.
#![cfg(target_arch = "wasm32")]

use hearth::runtime::Runtime;
use hearth::storage::Db;
use hearth_core::builtin::memory::Memory;
use hearth_core::builtin::notes::Note;
use hearth_core::builtin::tasks::{Task, TaskStatus};
use hearth_core::skill::activity::ActivityRecord;
use hearth_core::skill::permission::{ApprovalSetting, PermissionMode};
use hearth_core::stores::{
    ACTIVITY, ARTIFACTS, CONVERSATIONS, GRANTS, MCP_SERVERS, MEMORIES, NOTES, SCHEMA_V1, SCHEMA_V2,
    SCHEMAS, SETTINGS, SKILL_FILES, SKILL_PACKAGES, Schema, TASKS, USAGE, current_schema,
};
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

#[wasm_bindgen_test]
async fn an_undo_runs_only_if_this_browser_made_its_call_and_still_asks_permission() {
    let rt = Runtime::start(fresh("test-undo-origin", current_schema()).await)
        .await
        .unwrap();
    let a = run(&rt, "notes", json!({"action": "create", "title": "A"})).await;
    let b = run(&rt, "notes", json!({"action": "create", "title": "B"})).await;
    let (a, b) = (created_id(&a, "note"), created_id(&b, "note"));
    let deleted = run(&rt, "notes", json!({"action": "delete", "id": a})).await;
    let undo = deleted.undo.clone().unwrap();
    assert!(rt.undo_is_ours(&undo), "this browser's own call sealed it");

    // The Activity record keeps the sealed undo: it is still offered after
    // a reload.
    let (stored, _) = rt.db().all::<ActivityRecord>(ACTIVITY).await.unwrap();
    let kept = stored
        .iter()
        .find(|r| r.result.id == deleted.id)
        .and_then(|r| r.result.undo.clone())
        .unwrap();
    assert!(rt.undo_is_ours(&kept));

    // A record from elsewhere (a restored backup, another device): an undo
    // that says "bring back" but deletes B instead. Unsealed, forged or
    // sealed by another key, it is never offered and never runs.
    let hostile = |seal: Option<String>| hearth_core::skill::call::UndoAction {
        label: "Undo: bring them back".into(),
        skill_id: SkillId::new("notes").unwrap(),
        arguments: json!({"action": "delete", "id": b}),
        seal,
    };
    let mut other_device = hostile(None);
    other_device.seal_with(&[9u8; 32]);
    let mut tampered = undo.clone();
    tampered.arguments = json!({"action": "delete", "id": b});
    for u in [
        hostile(None),
        hostile(Some("00".repeat(32))),
        other_device,
        tampered,
    ] {
        assert!(!rt.undo_is_ours(&u));
        let (_, r) = rt.undo(u).await;
        assert_eq!(r.status, ToolStatus::Denied);
        assert_eq!(
            r.error.as_deref(),
            Some("this undo did not come from a call made in this browser, so it does not run")
        );
    }
    assert_eq!(rt.db().count(NOTES).await.unwrap(), 1, "B is still there");

    // Its own undo still passes the permission layer: with the notes skill
    // switched off, it is denied and the note stays deleted.
    rt.update_permissions(|p| p.set_enabled("notes", Some(false)))
        .await
        .unwrap();
    let (_, r) = rt.undo(undo.clone()).await;
    assert_eq!(r.status, ToolStatus::Denied);
    assert_eq!(rt.db().count(NOTES).await.unwrap(), 1);
    rt.update_permissions(|p| p.set_enabled("notes", None))
        .await
        .unwrap();
    let (_, r) = rt.undo(undo).await;
    assert_eq!(r.status, ToolStatus::Completed);
    assert_eq!(rt.db().count(NOTES).await.unwrap(), 2);
}

/// One record per store that the app cannot read: the key it needs, and
/// the wrong type in a field it reads.
fn unreadable_records() -> Vec<(&'static str, Value)> {
    vec![
        (
            ACTIVITY,
            json!({"id": "bad", "skill_id": 5, "result": "no"}),
        ),
        (NOTES, json!({"id": "bad", "title": 5})),
        (TASKS, json!({"id": "bad", "title": ["x"]})),
        (MEMORIES, json!({"id": "bad", "text": {"a": 1}})),
        (SETTINGS, json!({"key": "permissions", "value": "garbage"})),
        (
            SETTINGS,
            json!({"key": "web.domains.web_fetch", "value": 7}),
        ),
        (SETTINGS, json!({"key": "provider", "value": {"kind": 3}})),
        (USAGE, json!({"skill_id": "calculator", "count": "many"})),
        (
            CONVERSATIONS,
            json!({"id": "bad", "messages": "none", "updated_ms": 1}),
        ),
        (SKILL_PACKAGES, json!({"name": "broken", "skill_md": 5})),
        (SKILL_FILES, json!({"key": "broken/SKILL.md", "package": 5})),
        (MCP_SERVERS, json!({"id": "bad", "source": 12})),
        (GRANTS, json!({"id": "bad", "name": 7})),
        (ARTIFACTS, json!({"id": "bad", "conversation_id": 9})),
    ]
}

#[wasm_bindgen_test]
async fn a_record_that_cannot_be_read_never_locks_the_person_out() {
    // Every store of the schema is covered.
    let covered: std::collections::BTreeSet<&str> =
        unreadable_records().iter().map(|(s, _)| *s).collect();
    let all: std::collections::BTreeSet<&str> =
        current_schema().store_names().into_iter().collect();
    assert_eq!(covered, all);

    for (i, (store, record)) in unreadable_records().into_iter().enumerate() {
        let what = format!("{store} {record}");
        let db = fresh(&format!("test-unreadable-{i}"), current_schema()).await;
        let value = hearth::codec::from_values(std::slice::from_ref(&record))
            .unwrap()
            .get(0);
        db.put_value(store, &value).await.unwrap();

        // The app starts, and everything that reads the store still reads.
        let rt = Runtime::start(db)
            .await
            .unwrap_or_else(|e| panic!("{what}: Hearth could not start: {e}"));
        let db = rt.db();
        rt.activity().newest_first().await.expect(&what);
        hearth::assistant::store::load_all(&db, 1.0)
            .await
            .expect(&what);
        hearth::assistant::store::provider(&db).await.expect(&what);
        hearth::files::grants::list(&db).await.expect(&what);
        db.all::<hearth_core::mcp::servers::ServerEntry>(MCP_SERVERS)
            .await
            .expect(&what);
        // Skills run (unreadable permissions make every call ask, which
        // the next test shows).
        if record["key"] != "permissions" {
            let (_, result) = rt
                .invoke(
                    SkillId::new("calculator").unwrap(),
                    json!({"expression": "1+1"}),
                    CallOrigin::User,
                )
                .await;
            assert_eq!(result.status, ToolStatus::Completed, "{what}");
        }

        // It is reported, and kept: in place, copied aside where its key
        // could be written again, and in every backup.
        let aside = db.set_aside_records();
        let key = record
            .get(current_schema().store(store).unwrap().key_path)
            .and_then(Value::as_str)
            .unwrap()
            .to_string();
        // Artifacts are read only when one is opened, so nothing at start
        // meets that record: it simply stays.
        let read_by_the_app = store != ARTIFACTS;
        assert_eq!(
            aside.iter().any(|s| s.store == store && s.key == key),
            read_by_the_app,
            "{what}: {aside:?}"
        );
        let copy = format!("set-aside/{store}/{key}");
        let copied = db.get::<Value>(SETTINGS, &copy).await.unwrap();
        let reused = [SETTINGS, USAGE, MCP_SERVERS, SKILL_PACKAGES, SKILL_FILES].contains(&store);
        assert_eq!(copied.is_some(), reused, "{what}");
        if let Some(c) = copied {
            assert_eq!(c["value"]["record"], record, "{what}");
        }
        let made = hearth::backup::create(&db, hearth_core::backup::SecretsChoice::Include)
            .await
            .expect(&what);
        let file = hearth::backup::open_file(&made.bytes, &db.schema()).expect(&what);
        let in_place = file.store(store).unwrap().records.contains(&record);
        let aside = file
            .store(SETTINGS)
            .unwrap()
            .records
            .iter()
            .any(|r| r["key"] == copy && r["value"]["record"] == record);
        // Where the app wrote the key again (a skill's usage after a call),
        // the copy is what is left of it.
        assert!(in_place || aside, "{what}: not in the backup");
    }
}

#[wasm_bindgen_test]
async fn unreadable_settings_fall_back_to_what_is_safe() {
    let db = fresh("test-unreadable-safe", current_schema()).await;
    for record in [
        json!({"key": "permissions", "value": {"mode": 5}}),
        json!({"key": "web.domains.web_fetch", "value": {"deny": ["not", "text"]}}),
    ] {
        let value = hearth::codec::from_values(&[record]).unwrap().get(0);
        db.put_value(SETTINGS, &value).await.unwrap();
    }
    let rt = Runtime::start(db).await.unwrap();
    // Every call asks.
    assert_eq!(
        rt.data().permissions.borrow().mode,
        PermissionMode::AskEverything
    );
    // The web skill whose lists cannot be read runs nothing, and says why.
    let refused = rt
        .web()
        .run("web_fetch", &json!({"url": "https://example.com"}))
        .await
        .unwrap_err();
    assert!(
        refused.message.contains("could not be read"),
        "{}",
        refused.message
    );
    // Changing a permission keeps "ask for everything" and stores a record
    // that reads; the unreadable one stays aside.
    rt.update_permissions(|p| p.set_enabled("web_fetch", Some(true)))
        .await
        .unwrap();
    let stored: hearth_core::skill::permission::PermissionSettings =
        rt.db().setting("permissions").await.unwrap().unwrap();
    assert_eq!(stored.mode, PermissionMode::AskEverything);
    let copy: Value = rt
        .db()
        .get(SETTINGS, "set-aside/settings/permissions")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(copy["value"]["record"]["value"], json!({"mode": 5}));
}

#[wasm_bindgen_test]
async fn artifacts_keep_their_versions_and_go_with_their_conversation() {
    use hearth_core::builtin::artifacts::Artifact;
    let rt = Runtime::start(fresh("test-artifacts", current_schema()).await)
        .await
        .unwrap();
    let db = rt.db();
    let call = |skill: &str, args: Value, conversation: &str| {
        let rt = rt.clone();
        let (skill, conversation) = (skill.to_string(), conversation.to_string());
        async move {
            let (_, r) = rt
                .invoke_in(
                    SkillId::new(&skill).unwrap(),
                    args,
                    CallOrigin::Model,
                    Some(conversation),
                )
                .await;
            r
        }
    };
    let made = call(
        "create_artifact",
        json!({"title": "Hello", "kind": "html", "source": "<p>one</p>"}),
        "c1",
    )
    .await;
    assert_eq!(made.status, ToolStatus::Completed, "{made:?}");
    let id = made.json().unwrap()["artifact"]["id"]
        .as_str()
        .unwrap()
        .to_string();

    let updated = call(
        "update_artifact",
        json!({"id": id, "source": "<p>two</p>"}),
        "c1",
    )
    .await;
    assert_eq!(updated.status, ToolStatus::Completed, "{updated:?}");
    // Another conversation cannot reach it.
    let elsewhere = call(
        "update_artifact",
        json!({"id": id, "source": "<p>three</p>"}),
        "c2",
    )
    .await;
    assert_eq!(elsewhere.status, ToolStatus::Failed, "{elsewhere:?}");

    let stored: Artifact = db.get(ARTIFACTS, &id).await.unwrap().unwrap();
    let sources: Vec<&str> = stored.versions.iter().map(|v| v.source.as_str()).collect();
    assert_eq!(sources, ["<p>one</p>", "<p>two</p>"]);
    let listed: Vec<Artifact> = db.by_index(ARTIFACTS, "conversation", "c1").await.unwrap();
    assert_eq!(listed, vec![stored.clone()]);

    // Deleting the conversation deletes its artifacts and hands them back
    // for an undo.
    let removed = hearth::assistant::store::delete(&db, "c1").await.unwrap();
    let read: Vec<Artifact> = removed
        .iter()
        .map(|v| serde_wasm_bindgen::from_value(v.clone()).unwrap())
        .collect();
    assert_eq!(read, vec![stored.clone()]);
    assert_eq!(db.get::<Artifact>(ARTIFACTS, &id).await.unwrap(), None);
    hearth::assistant::store::restore_artifacts(&db, removed.clone())
        .await
        .unwrap();
    assert_eq!(db.get(ARTIFACTS, &id).await.unwrap(), Some(stored));
}
