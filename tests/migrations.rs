//! Storage upgrades in a real browser: a database opened at every earlier
//! schema version, filled, and upgraded to the current one keeps every
//! record; data migrations run inside the upgrade and, when one fails,
//! leave the old version and its data untouched; a write that fails part
//! way through a transaction leaves the stores as they were.
#![cfg(target_arch = "wasm32")]

use hearth::codec;
use hearth::storage::{DataMigration, Db, StorageError, StoreWrite};
use hearth_core::builtin::notes::Note;
use hearth_core::stores::{
    ACTIVITY, MEMORIES, NOTES, SCHEMAS, SETTINGS, Schema, StoreSpec, TASKS, USAGE, current_schema,
};
use serde_json::{Value, json};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// Records as each store holds them, varied in shape: nesting, unicode,
/// floats, nulls, empty strings.
fn seed(store: &str) -> Vec<Value> {
    match store {
        ACTIVITY => vec![json!({
            "id": "call-1", "skill_id": "calculator", "skill_name": "Calculator", "tier": "core",
            "origin": "user", "arguments": {"expression": "15% of 847", "nested": [1, 2.5, null, "é😀"]},
            "result": {"id": "call-1", "skill_id": "calculator", "status": "completed",
                       "content": [{"type": "text", "text": "127.05"}],
                       "started_at_ms": 1_767_225_600_000.5, "duration_ms": 0.25}
        })],
        NOTES => vec![
            json!({"id": "n1", "title": "Groceries", "body": "oat milk\nbread", "tags": ["home"],
                   "created_ms": 1.0, "updated_ms": 2.0}),
            json!({"id": "n2", "title": "Ünïcödé 😀", "body": "", "tags": [], "created_ms": 3.0, "updated_ms": 3.0}),
        ],
        TASKS => vec![
            json!({"id": "t1", "title": "Call Ümit", "notes": "", "status": "open",
                             "due": [2026, 5, 1], "priority": "high", "tags": [],
                             "created_ms": 1.0, "updated_ms": 1.0, "completed_ms": null}),
        ],
        MEMORIES => vec![
            json!({"id": "m1", "text": "Prefers metric units", "tags": ["units"],
                                "created_ms": 1.0, "updated_ms": 1.0}),
        ],
        SETTINGS => vec![
            json!({"key": "permissions", "value": {"mode": "ask-everything", "skills": {}, "tiers": {}}}),
        ],
        USAGE => vec![json!({"skill_id": "calculator", "count": 3, "last_used_ms": 5.0})],
        other => vec![
            json!({"id": format!("{other}-1"), "name": format!("{other}-1"),
                             "key": format!("{other}/1"), "package": "p", "conversation_id": "c1",
                             "updated_ms": 1.0, "payload": {"deep": [true, false]}}),
        ],
    }
}

async fn fresh(name: &str, schema: Schema) -> Db {
    let _ = Db::delete_database(name).await;
    Db::open_with(name, schema).await.expect("open")
}

/// Every store of `schema` as JSON, store by store.
async fn dump(db: &Db, schema: &Schema) -> Vec<(String, Vec<Value>)> {
    let names = schema.store_names();
    let read = db.read_stores(&names).await.unwrap();
    read.into_iter()
        .map(|(name, values)| (name, codec::to_values(&values).unwrap().0))
        .collect()
}

async fn fill(db: &Db, schema: &Schema) {
    let writes: Vec<StoreWrite> = schema
        .stores
        .iter()
        .map(|s| StoreWrite {
            store: s.name.to_string(),
            clear: false,
            records: codec::from_values(&seed(s.name)).unwrap(),
            keep_browser_only: false,
        })
        .collect();
    db.write_stores(&writes).await.unwrap();
}

#[wasm_bindgen_test]
async fn every_earlier_version_upgrades_with_every_record_intact() {
    let current = current_schema();
    for old in &SCHEMAS[..SCHEMAS.len() - 1] {
        let name = format!("test-upgrade-from-v{}", old.version);
        let db = fresh(&name, *old).await;
        assert_eq!(db.version(), old.version);
        let mut stores = db.store_names();
        stores.sort();
        let mut expected: Vec<String> = old.store_names().iter().map(|s| s.to_string()).collect();
        expected.sort();
        assert_eq!(stores, expected, "v{} has exactly its stores", old.version);
        fill(&db, old).await;
        let before = dump(&db, old).await;
        db.close();

        let db = Db::open_with(&name, current).await.unwrap();
        assert_eq!(db.version(), current.version);
        let after = dump(&db, &current).await;
        for (store, records) in &before {
            let now = after.iter().find(|(n, _)| n == store).map(|(_, r)| r);
            assert_eq!(
                now,
                Some(records),
                "v{} → v{}: {store}",
                old.version,
                current.version
            );
        }
        // Stores the newer versions added start empty and work.
        for (store, records) in &after {
            if !before.iter().any(|(n, _)| n == store) {
                assert_eq!(records, &Vec::<Value>::new(), "{store}");
            }
        }
        fill(&db, &current).await;
        // Typed records still decode after the upgrade.
        let (notes, bad) = db.all::<Note>(NOTES).await.unwrap();
        assert_eq!((notes.len(), bad), (2, 0), "from v{}", old.version);
        db.close();
    }
}

#[wasm_bindgen_test]
async fn a_database_newer_than_the_app_is_reported_and_left_alone() {
    let name = "test-newer-data";
    let db = fresh(name, current_schema()).await;
    db.close();
    let older = Db::open_with(name, SCHEMAS[0]).await.err();
    assert_eq!(older, Some(StorageError::NewerData));
}

// ---- data migrations, with a schema chain of their own

const THINGS: &str = "things";
const T1: Schema = Schema {
    version: 1,
    stores: &[StoreSpec {
        name: THINGS,
        key_path: "id",
        indexes: &[],
    }],
};
const T2: Schema = Schema {
    version: 2,
    stores: &[StoreSpec {
        name: THINGS,
        key_path: "id",
        indexes: &[("by_size", "size")],
    }],
};
static CHAIN: [Schema; 2] = [T1, T2];

fn add_size(mut v: Value, _: &[Value]) -> Result<Option<Value>, String> {
    if v["title"] == "drop me" {
        return Ok(None);
    }
    let size = v["title"].as_str().ok_or("no title")?.chars().count();
    v["size"] = json!(size);
    Ok(Some(v))
}

fn fail_on_bad(v: Value, others: &[Value]) -> Result<Option<Value>, String> {
    if v["title"] == "bad" {
        return Err("a title Hearth cannot read".into());
    }
    add_size(v, others)
}

static GOOD: [DataMigration; 1] = [DataMigration {
    version: 2,
    store: THINGS,
    reads: None,
    what: "sizing things",
    transform: add_size,
}];
static FAILING: [DataMigration; 1] = [DataMigration {
    version: 2,
    store: THINGS,
    reads: None,
    what: "sizing things",
    transform: fail_on_bad,
}];

async fn things_v1(name: &str, titles: &[&str]) -> Vec<Value> {
    let _ = Db::delete_database(name).await;
    let db = Db::open_with_migrations(name, T1, &CHAIN, &[])
        .await
        .unwrap();
    let records: Vec<Value> = titles
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"id": format!("k{i}"), "title": t}))
        .collect();
    db.write_stores(&[StoreWrite {
        store: THINGS.into(),
        clear: false,
        records: codec::from_values(&records).unwrap(),
        keep_browser_only: false,
    }])
    .await
    .unwrap();
    db.close();
    records
}

async fn things(db: &Db) -> Vec<Value> {
    codec::to_values(&db.read_stores(&[THINGS]).await.unwrap()[0].1)
        .unwrap()
        .0
}

#[wasm_bindgen_test]
async fn data_migrations_transform_and_delete_records_inside_the_upgrade() {
    let name = "test-data-migration";
    things_v1(name, &["one", "drop me", "three"]).await;
    let db = Db::open_with_migrations(name, T2, &CHAIN, &GOOD)
        .await
        .unwrap();
    assert_eq!(
        things(&db).await,
        vec![
            json!({"id": "k0", "title": "one", "size": 3}),
            json!({"id": "k2", "title": "three", "size": 5}),
        ]
    );
    db.close();
}

#[wasm_bindgen_test]
async fn a_failing_data_migration_leaves_the_old_version_and_data() {
    let name = "test-failed-migration";
    let original = things_v1(name, &["one", "two", "bad", "four"]).await;
    let err = Db::open_with_migrations(name, T2, &CHAIN, &FAILING)
        .await
        .err();
    assert_eq!(
        err,
        Some(StorageError::Migration {
            from: 1,
            to: 2,
            message: "sizing things: a title Hearth cannot read".into()
        })
    );
    // Still version 1, with the records exactly as they were: the two
    // transformed before the failure were rolled back with it.
    let db = Db::open_with_migrations(name, T1, &CHAIN, &[])
        .await
        .unwrap();
    assert_eq!(db.version(), 1);
    assert_eq!(things(&db).await, original);
    db.close();
    // With the bad record gone, the same upgrade goes through.
    let db = Db::open_with_migrations(name, T1, &CHAIN, &[])
        .await
        .unwrap();
    db.delete(THINGS, "k2").await.unwrap();
    db.close();
    let db = Db::open_with_migrations(name, T2, &CHAIN, &FAILING)
        .await
        .unwrap();
    assert_eq!(things(&db).await.len(), 3);
}

#[wasm_bindgen_test]
fn backups_from_older_versions_go_through_the_same_transforms() {
    let records = vec![
        json!({"id": "a", "title": "abc"}),
        json!({"id": "b", "title": "drop me"}),
    ];
    assert_eq!(
        hearth::storage::migrate_records(&GOOD, 1, 2, THINGS, records.clone(), &|_| Vec::new()),
        Ok(vec![json!({"id": "a", "title": "abc", "size": 3})])
    );
    // Already at version 2, or another store: untouched.
    assert_eq!(
        hearth::storage::migrate_records(&GOOD, 2, 2, THINGS, records.clone(), &|_| Vec::new()),
        Ok(records.clone())
    );
    assert_eq!(
        hearth::storage::migrate_records(&GOOD, 1, 2, "other", records.clone(), &|_| Vec::new()),
        Ok(records)
    );
}

// ---- writes that fail part way

#[wasm_bindgen_test]
async fn a_write_failing_mid_transaction_changes_nothing() {
    let db = fresh("test-mid-failure", current_schema()).await;
    let original = vec![
        json!({"id": "n1", "title": "kept", "body": "", "tags": [], "created_ms": 1.0, "updated_ms": 1.0}),
        json!({"id": "n2", "title": "kept too", "body": "", "tags": [], "created_ms": 1.0, "updated_ms": 1.0}),
    ];
    db.apply(NOTES, &original, &[]).await.unwrap();
    // The second put has no key: IndexedDB refuses it after the first
    // went in, inside the same transaction.
    let batch = vec![
        json!({"id": "n1", "title": "overwritten?", "created_ms": 1.0, "updated_ms": 9.0}),
        json!({"title": "no id"}),
        json!({"id": "n3", "title": "added?", "created_ms": 1.0, "updated_ms": 9.0}),
    ];
    let err = db
        .apply(NOTES, &batch, &["n2".to_string()])
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StorageError::Write(m) if m.starts_with("DataError")),
        "{err:?}"
    );
    assert_eq!(dump_store(&db, NOTES).await, floats_all(original));
}

async fn dump_store(db: &Db, store: &str) -> Vec<Value> {
    codec::to_values(&db.read_stores(&[store]).await.unwrap()[0].1)
        .unwrap()
        .0
        .into_iter()
        .map(floats)
        .collect()
}

fn floats_all(values: Vec<Value>) -> Vec<Value> {
    values.into_iter().map(floats).collect()
}

/// `value` with every number as a float: JavaScript has only those, so a
/// stored `1.0` reads back as `1`; compare numbers, not their spelling.
fn floats(value: Value) -> Value {
    match value {
        Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Value::Array(a) => Value::Array(a.into_iter().map(floats).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, floats(v))).collect()),
        Value::Null | Value::Bool(_) | Value::String(_) => value,
    }
}

#[wasm_bindgen_test]
async fn a_failure_in_one_store_rolls_back_every_store_of_the_transaction() {
    let db = fresh("test-multi-store-failure", current_schema()).await;
    let notes = seed(NOTES);
    let tasks = seed(TASKS);
    db.apply(NOTES, &notes, &[]).await.unwrap();
    db.apply(TASKS, &tasks, &[]).await.unwrap();
    let writes = vec![
        StoreWrite {
            store: NOTES.into(),
            clear: true,
            records: codec::from_values(&[json!({"id": "new", "title": "replacement"})]).unwrap(),
            keep_browser_only: false,
        },
        StoreWrite {
            store: TASKS.into(),
            clear: true,
            records: codec::from_values(&[json!({"title": "no id"})]).unwrap(),
            keep_browser_only: false,
        },
    ];
    assert!(db.write_stores(&writes).await.is_err());
    assert_eq!(
        dump_store(&db, NOTES).await,
        floats_all(notes),
        "cleared and refilled, then rolled back"
    );
    assert_eq!(dump_store(&db, TASKS).await, floats_all(tasks));
}

// ---- conversations take their commands from the log

/// A conversation as schema 3 kept it: its messages only, the commands run
/// in it living in the Activity log.
fn v3_conversation() -> Value {
    json!({
        "id": "c1", "title": "/calc 15% of 847", "title_is_custom": false,
        "created_at_ms": 1000.0, "updated_at_ms": 9000.0, "loaded_skills": [],
        "settings": {}, "next_seq": 1,
        "messages": [{
            "id": "c1-m1", "role": "user", "content": "and the note?",
            "created_at_ms": 2000.0, "updated_at_ms": 2000.0, "status": "complete"
        }]
    })
}

/// A call as the log keeps it.
fn logged(id: &str, conversation: Option<&str>, origin: &str, at: f64, text: &str) -> Value {
    json!({
        "id": id, "skill_id": "calculator", "skill_name": "Calculator", "tier": "core",
        "origin": origin, "arguments": {"expression": "15% of 847"},
        "result": {"id": id, "skill_id": "calculator", "conversation_id": conversation,
                   "status": "completed", "content": [{"type": "text", "text": text}],
                   "started_at_ms": at, "duration_ms": 1.5}
    })
}

fn v3_log() -> Vec<Value> {
    vec![
        logged("run-1", Some("c1"), "user", 1500.0, "127.05"),
        logged("run-2", Some("c1"), "user", 3000.0, "42"),
        // The model's calls are in its own messages already.
        logged("model-1", Some("c1"), "model", 2500.0, "7"),
        logged("gone", Some("deleted-conversation"), "user", 1700.0, "1"),
        logged("no-chat", None, "user", 1800.0, "2"),
    ]
}

fn commands_of(c: &hearth_core::assistant::agent::Conversation) -> Vec<(String, String)> {
    c.messages
        .iter()
        .map(|m| match m.command_call() {
            Some(call) => ("command".to_string(), call.id.clone()),
            None => (format!("{:?}", m.role).to_lowercase(), m.content.clone()),
        })
        .collect()
}

#[wasm_bindgen_test]
async fn an_upgrade_moves_each_conversations_commands_into_it_before_any_clear() {
    use hearth_core::assistant::agent::Conversation;
    use hearth_core::stores::{CONVERSATIONS, SCHEMA_V3};
    let name = "test-commands-into-conversations";
    let db = fresh(name, SCHEMA_V3).await;
    db.write_stores(&[
        StoreWrite {
            store: CONVERSATIONS.into(),
            clear: false,
            records: codec::from_values(&[v3_conversation()]).unwrap(),
            keep_browser_only: false,
        },
        StoreWrite {
            store: ACTIVITY.into(),
            clear: false,
            records: codec::from_values(&v3_log()).unwrap(),
            keep_browser_only: false,
        },
    ])
    .await
    .unwrap();
    db.close();

    let db = Db::open_with(name, current_schema()).await.unwrap();
    let (list, bad) = db.all::<Conversation>(CONVERSATIONS).await.unwrap();
    assert_eq!((list.len(), bad), (1, 0));
    let want = vec![
        ("command".to_string(), "run-1".to_string()),
        ("user".to_string(), "and the note?".to_string()),
        ("command".to_string(), "run-2".to_string()),
    ];
    assert_eq!(commands_of(&list[0]), want);
    let first = list[0].messages[0].command_call().unwrap();
    assert_eq!(
        first.result.as_ref().unwrap().content,
        vec![hearth_core::Content::Text {
            text: "127.05".into()
        }]
    );
    // The log itself is as it was.
    assert_eq!(dump_store(&db, ACTIVITY).await.len(), 5);

    // Clearing the log leaves the conversation whole.
    db.clear(ACTIVITY).await.unwrap();
    let (list, _) = db.all::<Conversation>(CONVERSATIONS).await.unwrap();
    assert_eq!(commands_of(&list[0]), want);
    db.close();
}

#[wasm_bindgen_test]
fn a_backup_from_before_takes_the_same_step() {
    use hearth::storage::DATA_MIGRATIONS;
    use hearth_core::stores::CONVERSATIONS;
    let log = v3_log();
    let others = |store: &str| {
        if store == ACTIVITY {
            log.clone()
        } else {
            Vec::new()
        }
    };
    let moved = hearth::storage::migrate_records(
        DATA_MIGRATIONS,
        3,
        current_schema().version,
        CONVERSATIONS,
        vec![v3_conversation()],
        &others,
    )
    .unwrap();
    let c: hearth_core::assistant::agent::Conversation =
        serde_json::from_value(moved[0].clone()).unwrap();
    assert_eq!(c.messages.len(), 3);
    assert_eq!(
        commands_of(&c)[2],
        ("command".to_string(), "run-2".to_string())
    );
    // A backup already at this version is left alone.
    let same = hearth::storage::migrate_records(
        DATA_MIGRATIONS,
        current_schema().version,
        current_schema().version,
        CONVERSATIONS,
        vec![v3_conversation()],
        &others,
    )
    .unwrap();
    assert_eq!(same, vec![v3_conversation()]);
}
