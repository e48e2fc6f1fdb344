//! The file skills in a real browser: grants copied into the origin private
//! file system, read back through checked paths in every encoding, listed,
//! searched, handed to code, refused outside their grants, and revoked.
#![cfg(target_arch = "wasm32")]

use std::rc::Rc;

use hearth::files::Files;
use hearth::files::grants::{self, Access};
use hearth::sandbox;
use hearth::storage::Db;
use hearth_core::builtin::code::grant::{GrantKind, GrantSource};
use hearth_core::skill::source::SkillSource;
use hearth_core::stores::{ACTIVITY, GRANTS, SCHEMA_V1, SCHEMA_V2, SETTINGS, current_schema};
use hearth_core::{CallOrigin, SkillError, SkillId, ToolCall, builtin};
use js_sys::{Array, Uint8Array};
use serde_json::{Value, json};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn file(name: &str, bytes: &[u8]) -> web_sys::File {
    let parts = Array::of1(&Uint8Array::from(bytes));
    web_sys::File::new_with_u8_array_sequence(&parts, name).unwrap()
}

fn segments(path: &str) -> Vec<String> {
    path.split('/').map(str::to_string).collect()
}

/// A fresh database and the files service on it, with no grants.
async fn fresh(name: &str) -> (Rc<Db>, Files) {
    let _ = Db::delete_database(name).await;
    let db = Rc::new(Db::open_with(name, current_schema()).await.unwrap());
    let files = Files::new(db.clone());
    for g in files.grants().await.unwrap() {
        files.revoke(&g.record.id).await.unwrap();
    }
    (db, files)
}

/// Runs a file skill as the call path would, returning its text or error.
async fn call(files: &Files, skill: &str, arguments: Value) -> Result<String, SkillError> {
    let registry = builtin::registry().unwrap();
    let def = registry.get_str(skill).unwrap().clone();
    let call = ToolCall {
        id: "t".into(),
        skill_id: SkillId::new(skill).unwrap(),
        arguments,
        conversation_id: None,
        origin: CallOrigin::User,
    };
    files
        .skills()
        .execute(&def, &call)
        .await
        .map(|out| match &out.content[0] {
            hearth_core::Content::Text { text } => text.clone(),
            other => format!("{other:?}"),
        })
}

async fn project(files: &Files) {
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain("ünï ✓\n".encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let (record, skipped) = files
        .add_copy(
            "project",
            GrantKind::Directory,
            vec![
                (
                    segments("notes.md"),
                    file("notes.md", b"# Notes\nTODO: water the plants\n"),
                ),
                (
                    segments("data.csv"),
                    file("data.csv", b"city,population\nLisbon,545923\n"),
                ),
                (
                    segments("sub/latin1.txt"),
                    file("latin1.txt", b"caf\xE9 \x93ok\x94\n"),
                ),
                (segments("sub/utf16.txt"), file("utf16.txt", &utf16)),
                (
                    segments("sub/pixel.png"),
                    file("pixel.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
                ),
                (segments("evil\u{202e}txt.exe"), file("x", b"hidden")),
            ],
        )
        .await
        .unwrap();
    assert_eq!(
        (
            record.name.as_str(),
            record.kind,
            record.source,
            record.files,
            skipped
        ),
        ("project", GrantKind::Directory, GrantSource::Copy, 5, 1)
    );
}

#[wasm_bindgen_test]
async fn copied_grants_are_read_through_checked_paths() {
    let (_db, files) = fresh("test-files-read").await;
    project(&files).await;
    let cases: Vec<(&str, Value, Result<&str, &str>)> = vec![
        (
            "read_file",
            json!({"path": "project/notes.md"}),
            Ok("project/notes.md (UTF-8, 31 B)\n# Notes\nTODO: water the plants\n"),
        ),
        (
            "read_file",
            json!({"path": "project/sub/latin1.txt"}),
            Ok("project/sub/latin1.txt (Windows-1252, 10 B)\ncafé “ok”\n"),
        ),
        (
            "read_file",
            json!({"path": "/mnt/data/project/sub/utf16.txt"}),
            Ok("project/sub/utf16.txt (UTF-16LE, 14 B)\nünï ✓\n"),
        ),
        (
            "read_file",
            json!({"path": "project/data.csv", "offset": 16, "length": 6}),
            Ok(
                "project/data.csv (UTF-8, bytes 16–22 of 30)\nLisbon\n[… 8 B more; read on with offset 22]",
            ),
        ),
        (
            "read_file",
            json!({"path": "project/sub/pixel.png"}),
            Err(
                "'project/sub/pixel.png' is binary (PNG image, 16 B); read_file returns text only. To work with it, run Python with files: [\"project/sub/pixel.png\"] and open '/mnt/data/project/sub/pixel.png' in binary mode ('rb').",
            ),
        ),
        (
            "read_file",
            json!({"path": "project/../secrets"}),
            Err("'project/../secrets' uses '..'; paths cannot leave the grant they name"),
        ),
        (
            "read_file",
            json!({"path": "project/evil\u{202e}txt.exe"}),
            Err(
                "'project/evil\\u{202e}txt.exe' contains the character U+202E, which is not allowed in a path",
            ),
        ),
        (
            "read_file",
            json!({"path": "elsewhere/x"}),
            Err("'elsewhere/x' is not inside a granted file or folder; granted: project/"),
        ),
        (
            "read_file",
            json!({"path": "project/data.csv", "offset": 99}),
            Err("offset 99 is past the end of 'project/data.csv', which has 30 bytes"),
        ),
        (
            "list_files",
            json!({"path": "project/sub"}),
            Ok(
                "project/sub: 3 files, 40 B\nproject/sub/latin1.txt  10 B\nproject/sub/pixel.png   16 B\nproject/sub/utf16.txt   14 B",
            ),
        ),
        (
            "search_files",
            json!({"query": "TODO"}),
            Ok("1 match for \"TODO\" in 4 files\nproject/notes.md:2: TODO: water the plants"),
        ),
        (
            "search_files",
            json!({"query": "café", "path": "project/sub"}),
            Ok("1 match for \"café\" in 2 files\nproject/sub/latin1.txt:1: café “ok”"),
        ),
    ];
    for (skill, args, want) in cases {
        let got = call(&files, skill, args.clone()).await;
        let got = got.as_deref().map_err(|e| e.message.as_str());
        assert_eq!(got, want, "{skill} {args}");
    }
}

#[wasm_bindgen_test]
async fn code_gets_granted_files_under_mnt_data() {
    let (_db, service) = fresh("test-files-run").await;
    project(&service).await;
    let files = service
        .files_for_run(&["project/sub".into(), "/mnt/data/project/notes.md".into()])
        .await
        .unwrap();
    let got: Vec<(String, u32)> = files
        .iter()
        .map(|f| (f.path.clone(), f.bytes.byte_length()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("/mnt/data/project/sub/latin1.txt".to_string(), 10),
            ("/mnt/data/project/sub/pixel.png".to_string(), 16),
            ("/mnt/data/project/sub/utf16.txt".to_string(), 14),
            ("/mnt/data/project/notes.md".to_string(), 31),
        ]
    );
    let refused = service
        .files_for_run(&["../project".into()])
        .await
        .err()
        .unwrap();
    assert_eq!(
        refused.to_string(),
        "'../project' uses '..'; paths cannot leave the grant they name"
    );
}

#[wasm_bindgen_test]
async fn grants_get_unique_names_survive_reopening_and_revoke_their_copies() {
    let (db, files) = fresh("test-files-grants").await;
    let (a, _) = files
        .add_copy(
            "notes.txt",
            GrantKind::File,
            vec![(segments("notes.txt"), file("notes.txt", b"one"))],
        )
        .await
        .unwrap();
    let (b, _) = files
        .add_copy(
            "notes.txt",
            GrantKind::File,
            vec![(segments("notes.txt"), file("notes.txt", b"two"))],
        )
        .await
        .unwrap();
    assert_eq!(
        (a.name.as_str(), b.name.as_str()),
        ("notes.txt", "notes.txt (2)")
    );
    assert_eq!(
        call(&files, "read_file", json!({"path": "notes.txt (2)"}))
            .await
            .unwrap(),
        "notes.txt (2) (UTF-8, 3 B)\ntwo"
    );

    // A new connection (a reload) sees the same grants, allowed.
    drop((db, files));
    let reopened = Rc::new(
        Db::open_with("test-files-grants", current_schema())
            .await
            .unwrap(),
    );
    let files = Files::new(reopened.clone());
    let listed = files.grants().await.unwrap();
    assert_eq!(
        listed
            .iter()
            .map(|g| g.record.name.clone())
            .collect::<Vec<_>>(),
        vec!["notes.txt", "notes.txt (2)"]
    );
    for g in &listed {
        assert_eq!(grants::access(g).await, Access::Granted);
    }
    files.revoke(&a.id).await.unwrap();
    assert_eq!(
        call(&files, "read_file", json!({"path": "notes.txt"}))
            .await
            .unwrap_err()
            .message,
        "'notes.txt' is not inside a granted file or folder; granted: notes.txt (2)"
    );
    assert_eq!(reopened.count(GRANTS).await.unwrap(), 1);
}

#[wasm_bindgen_test]
async fn upgrading_from_version_1_keeps_the_activity_log_and_adds_the_new_stores() {
    // Grants live in the `grants` store schema v3 added, Python's
    // preferences in the `settings` store v2 added: a database from every
    // earlier version upgrades to both and keeps its activity log.
    for old in [SCHEMA_V1, SCHEMA_V2] {
        let name = format!("test-files-upgrade-from-{}", old.version);
        let _ = Db::delete_database(&name).await;
        let before = Db::open_with(&name, old).await.unwrap();
        before
            .put(
                ACTIVITY,
                &json!({"id": "kept", "result": {"started_at_ms": 1.5}}),
            )
            .await
            .unwrap();
        before.close();
        let now = Db::open_with(&name, current_schema()).await.unwrap();
        let stores = now.store_names();
        for store in [ACTIVITY, GRANTS, SETTINGS] {
            assert!(
                stores.iter().any(|s| s == store),
                "{store} after upgrading from v{}: {stores:?}",
                old.version
            );
        }
        assert_eq!(
            now.get::<Value>(ACTIVITY, "kept").await.unwrap(),
            Some(json!({"id": "kept", "result": {"started_at_ms": 1.5}}))
        );
        assert_eq!(sandbox::load_persist_python(&now).await.unwrap(), None);
        sandbox::save_persist_python(&now, true).await.unwrap();
        assert_eq!(
            sandbox::load_persist_python(&now).await.unwrap(),
            Some(true)
        );
        assert_eq!(now.count(GRANTS).await.unwrap(), 0);
    }
}
