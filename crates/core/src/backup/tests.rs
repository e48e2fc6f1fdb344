//! The backup format: round trips, secrets, every way a file is refused,
//! and restore plans.

use std::collections::BTreeMap;
use std::io::{Cursor, Write};

use serde_json::{Value, json};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use super::*;

const KNOWN_STORES: [KnownStore<'static>; 5] = [
    KnownStore {
        name: "notes",
        key_path: "id",
    },
    KnownStore {
        name: "settings",
        key_path: "key",
    },
    KnownStore {
        name: "conversations",
        key_path: "id",
    },
    KnownStore {
        name: "mcp_servers",
        key_path: "id",
    },
    KnownStore {
        name: "usage",
        key_path: "skill_id",
    },
];

fn known() -> Known<'static> {
    Known {
        schema_version: 3,
        stores: &KNOWN_STORES,
    }
}

fn store(name: &str, key_path: &str, records: Vec<Value>) -> StoreRecords {
    StoreRecords {
        name: name.into(),
        key_path: key_path.into(),
        records,
    }
}

fn note(id: &str, title: &str, updated: f64) -> Value {
    json!({"id": id, "title": title, "body": "", "tags": [], "created_ms": 1.0, "updated_ms": updated})
}

fn profile() -> Snapshot {
    Snapshot {
        schema_version: 3,
        stores: vec![
            store(
                "notes",
                "id",
                vec![
                    note("n1", "Groceries: oat milk, bread", 10.0),
                    json!({"id": "n2", "title": "Ünïcödé 😀 \"quotes\" \\ back", "body": "line\nbreak\t`code`",
                           "tags": ["a", "b"], "created_ms": 1.5, "updated_ms": 1_700_000_000_123.25}),
                ],
            ),
            store(
                "settings",
                "key",
                vec![
                    json!({"key": "permissions", "value": {"mode": "ask-sensitive", "skills": {}}}),
                    json!({"key": "provider", "value": {"kind": "anthropic", "base_url": "https://api.anthropic.com",
                           "api_key": "sk-ant-secret", "model": "claude", "max_tokens": 4096}}),
                ],
            ),
            store(
                "conversations",
                "id",
                vec![json!({"id": "c1", "title": "Picnic", "updated_at_ms": 5.0,
                            "messages": [{"role": "user", "content": "hi", "usage": {"input_tokens": 12}}]})],
            ),
            store(
                "mcp_servers",
                "id",
                vec![json!({"id": "docs", "url": "https://mcp.example/mcp",
                            "headers": {"Authorization": "Bearer abc", "X-Trace": "1"},
                            "oauth": {"client": {"client_id": "hearth", "client_secret": "shh"},
                                      "tokens": {"access_token": "at", "refresh_token": "rt", "token_type": "Bearer"}}})],
            ),
            store("usage", "skill_id", vec![]),
        ],
    }
}

fn options(secrets: SecretsChoice) -> WriteOptions {
    WriteOptions {
        app_version: "0.1.0".into(),
        created_at_ms: 1_767_225_600_000.0,
        secrets,
        browser_only_left_out: BTreeMap::new(),
    }
}

fn written(secrets: SecretsChoice) -> Vec<u8> {
    write(profile(), &options(secrets)).unwrap().bytes
}

#[test]
fn a_backup_with_secrets_reads_back_exactly() {
    let file = write(profile(), &options(SecretsChoice::Include)).unwrap();
    let back = read(&file.bytes, &known()).unwrap();
    assert_eq!(back.stores, profile().stores);
    assert_eq!(back.manifest, file.manifest);
    assert_eq!(
        (
            back.manifest.format.as_str(),
            back.manifest.format_version,
            back.manifest.schema_version,
            back.manifest.records(),
            back.manifest.secrets.clone(),
        ),
        (
            FORMAT,
            1,
            3,
            6,
            SecretsInfo {
                included: true,
                left_out: 0
            }
        )
    );
    // The same profile always gives the same bytes.
    assert_eq!(written(SecretsChoice::Include), file.bytes);
}

#[test]
fn secrets_are_left_out_by_default_and_nothing_else_is() {
    let file = write(profile(), &options(SecretsChoice::LeaveOut)).unwrap();
    let back = read(&file.bytes, &known()).unwrap();
    assert_eq!(
        back.manifest.secrets,
        SecretsInfo {
            included: false,
            left_out: 5
        }
    );
    let mut expected = profile();
    expected.stores[1].records[1]["value"]["api_key"] = json!("");
    let server = &mut expected.stores[3].records[0];
    // Every value of a headers field counts: headers are how a server
    // knows who is calling.
    server["headers"]["Authorization"] = json!("");
    server["headers"]["X-Trace"] = json!("");
    server["oauth"]["client"]["client_secret"] = json!("");
    server["oauth"]["tokens"] = Value::Null;
    assert_eq!(back.stores, expected.stores);
    let text = String::from_utf8_lossy(&file.bytes).to_string();
    assert!(!text.contains("sk-ant-secret"));
}

#[test]
fn secret_field_names() {
    let cases = [
        ("api_key", true),
        ("apiKey", true),
        ("x-api-key", true),
        ("Authorization", true),
        ("access_token", true),
        ("refresh_token", true),
        ("client_secret", true),
        ("password", true),
        ("token", true),
        ("key", false),
        ("max_tokens", false),
        ("input_tokens", false),
        ("token_type", false),
        ("client_id", false),
        ("title", false),
        ("skill_id", false),
    ];
    let got: Vec<(&str, bool)> = cases
        .iter()
        .map(|(n, _)| (*n, is_secret_field(n)))
        .collect();
    assert_eq!(got, cases);
}

#[test]
fn stripping_leaves_numbers_and_empty_values_alone() {
    let mut v = json!({"token": 5, "api_key": "", "tokens": 12, "nested": [{"password": "p"}, {"secret": {"a": 1}}]});
    assert_eq!(strip_secrets(&mut v), 2);
    assert_eq!(
        v,
        json!({"token": 5, "api_key": "", "tokens": 12, "nested": [{"password": ""}, {"secret": null}]})
    );
}

// ---------------------------------------------------------------- refusals

fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut z = ZipWriter::new(Cursor::new(Vec::new()));
    let o = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    for (name, body) in entries {
        z.start_file(*name, o).unwrap();
        z.write_all(body).unwrap();
    }
    z.finish().unwrap().into_inner()
}

/// The entries of a real backup, for tampering with.
fn entries() -> Vec<(String, Vec<u8>)> {
    use std::io::Read;
    let bytes = written(SecretsChoice::Include);
    let mut a = zip::ZipArchive::new(Cursor::new(&bytes[..])).unwrap();
    (0..a.len())
        .map(|i| {
            let mut e = a.by_index(i).unwrap();
            let mut body = Vec::new();
            e.read_to_end(&mut body).unwrap();
            (e.name().to_string(), body)
        })
        .collect()
}

fn rezip(entries: &[(String, Vec<u8>)]) -> Vec<u8> {
    let refs: Vec<(&str, &[u8])> = entries
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    zip_of(&refs)
}

fn with_manifest(f: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut e = entries();
    let mut m: Value = serde_json::from_slice(&e[0].1).unwrap();
    f(&mut m);
    e[0].1 = serde_json::to_vec(&m).unwrap();
    rezip(&e)
}

fn with_store(name: &str, f: impl FnOnce(&mut Vec<Value>)) -> Vec<u8> {
    let mut e = entries();
    let path = store_path(name);
    let i = e.iter().position(|(n, _)| *n == path).unwrap();
    let mut records: Vec<Value> = serde_json::from_slice(&e[i].1).unwrap();
    f(&mut records);
    e[i].1 = serde_json::to_vec(&records).unwrap();
    rezip(&e)
}

/// `with_store`, with the manifest's checksum, size and count fixed up, so
/// only the record-level checks can catch the change.
fn with_store_resealed(name: &str, f: impl FnOnce(&mut Vec<Value>)) -> Vec<u8> {
    let mut e = entries();
    let path = store_path(name);
    let i = e.iter().position(|(n, _)| *n == path).unwrap();
    let mut records: Vec<Value> = serde_json::from_slice(&e[i].1).unwrap();
    f(&mut records);
    let body = serde_json::to_vec(&records).unwrap();
    let mut m: Value = serde_json::from_slice(&e[0].1).unwrap();
    for s in m["stores"].as_array_mut().unwrap() {
        if s["name"] == name {
            s["sha256"] = json!(sha256_hex(&body));
            s["bytes"] = json!(body.len());
        }
    }
    e[0].1 = serde_json::to_vec(&m).unwrap();
    e[i].1 = body;
    rezip(&e)
}

/// Pseudo-random bytes, the same every run.
fn noise(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 24) as u8
        })
        .collect()
}

fn damaged(detail: &str) -> BackupError {
    BackupError::Damaged(detail.into())
}

#[test]
fn every_kind_of_bad_file_is_refused_with_its_reason() {
    let notes_body = serde_json::to_vec(&profile().stores[0].records).unwrap();
    let cases: Vec<(&str, Vec<u8>, BackupError)> = vec![
        ("empty", vec![], BackupError::Empty),
        ("random bytes", noise(4096, 7), BackupError::NotZip),
        (
            "a text file",
            b"{\"notes\": []}".to_vec(),
            BackupError::NotZip,
        ),
        (
            "a zip without a manifest",
            zip_of(&[("SKILL.md", b"---\nname: x\n---\n")]),
            BackupError::Foreign("it has no manifest.json".into()),
        ),
        (
            "a manifest that is not JSON",
            zip_of(&[(MANIFEST_PATH, b"not json")]),
            BackupError::Foreign(
                "its manifest.json is not JSON (expected ident at line 1 column 2)".into(),
            ),
        ),
        (
            "another program's manifest",
            zip_of(&[(
                MANIFEST_PATH,
                br#"{"format": "other-backup", "format_version": 1}"#,
            )]),
            BackupError::Foreign("its manifest.json does not describe a Hearth backup".into()),
        ),
        (
            "a newer format",
            with_manifest(|m| m["format_version"] = json!(2)),
            BackupError::NewerFormat {
                found: 2,
                supported: 1,
            },
        ),
        (
            "format version zero",
            with_manifest(|m| m["format_version"] = json!(0)),
            BackupError::Foreign("its manifest.json has no valid format_version".into()),
        ),
        (
            "a newer storage schema",
            with_manifest(|m| m["schema_version"] = json!(9)),
            BackupError::NewerSchema {
                found: 9,
                current: 3,
            },
        ),
        (
            "an unknown store",
            with_manifest(|m| m["stores"][0]["name"] = json!("holograms")),
            BackupError::UnknownStore("holograms".into()),
        ),
        (
            "a store keyed differently",
            with_manifest(|m| m["stores"][0]["key_path"] = json!("uuid")),
            damaged("the notes are keyed by 'uuid', but Hearth keys them by 'id'"),
        ),
        (
            "a store listed twice",
            with_manifest(|m| {
                let first = m["stores"][0].clone();
                m["stores"].as_array_mut().unwrap().push(first);
            }),
            damaged("the manifest lists notes twice"),
        ),
        (
            "a changed record under the old checksum",
            with_store("notes", |r| {
                r[0]["title"] = json!("Groceries: oat milk, wine")
            }),
            BackupError::Checksum {
                store: "notes".into(),
                expected: sha256_hex(&notes_body),
                found: {
                    let mut r = profile().stores[0].records.clone();
                    r[0]["title"] = json!("Groceries: oat milk, wine");
                    sha256_hex(&serde_json::to_vec(&r).unwrap())
                },
            },
        ),
        (
            "a wrong checksum in the manifest",
            with_manifest(|m| m["stores"][0]["sha256"] = json!("00".repeat(32))),
            BackupError::Checksum {
                store: "notes".into(),
                expected: "00".repeat(32),
                found: sha256_hex(&notes_body),
            },
        ),
        (
            "a missing store entry",
            {
                let e: Vec<_> = entries()
                    .into_iter()
                    .filter(|(n, _)| n != "stores/notes.json")
                    .collect();
                rezip(&e)
            },
            damaged("stores/notes.json is missing"),
        ),
        (
            "an extra file",
            {
                let mut e = entries();
                e.push(("stores/extra.json".into(), b"[]".to_vec()));
                rezip(&e)
            },
            damaged("it holds a file the manifest does not list (stores/extra.json)"),
        ),
        (
            "a record without its key",
            with_store_resealed("notes", |r| {
                r[1].as_object_mut().unwrap().remove("id");
            }),
            damaged("record 2 of the notes has no 'id'"),
        ),
        (
            "two records with one key",
            with_store_resealed("notes", |r| r[1]["id"] = json!("n1")),
            damaged("two notes share the same 'id'"),
        ),
        (
            "a store that is not a list",
            {
                let mut e = entries();
                let body = br#"{"id": "n1"}"#.to_vec();
                let mut m: Value = serde_json::from_slice(&e[0].1).unwrap();
                m["stores"][0]["sha256"] = json!(sha256_hex(&body));
                m["stores"][0]["bytes"] = json!(body.len());
                e[0].1 = serde_json::to_vec(&m).unwrap();
                e[1].1 = body;
                rezip(&e)
            },
            damaged(
                "stores/notes.json is not a list of records (invalid type: map, expected a sequence at line 1 column 0)",
            ),
        ),
        (
            "a record count that does not match",
            with_manifest(|m| m["stores"][0]["records"] = json!(3)),
            damaged("stores/notes.json holds 2 records, the manifest says 3"),
        ),
    ];
    for (name, bytes, expected) in cases {
        assert_eq!(read(&bytes, &known()), Err(expected), "{name}");
    }
}

#[test]
fn a_truncated_file_is_refused_at_every_length() {
    let bytes = written(SecretsChoice::Include);
    for len in 0..bytes.len() {
        let got = read(&bytes[..len], &known());
        assert!(got.is_err(), "a file cut to {len} bytes was accepted");
    }
}

#[test]
fn a_flipped_byte_anywhere_is_refused_or_changes_nothing() {
    let bytes = written(SecretsChoice::Include);
    let original = profile().stores;
    for i in 0..bytes.len() {
        let mut copy = bytes.clone();
        copy[i] ^= 0x20;
        if let Ok(back) = read(&copy, &known()) {
            // Only bytes nothing depends on (timestamps, attributes) may
            // change without a refusal.
            assert_eq!(back.stores, original, "byte {i}");
        }
    }
}

#[test]
fn damaged_zips_are_reported_as_damaged() {
    let bytes = written(SecretsChoice::Include);
    let kind = |r: Result<Backup, BackupError>| match r {
        Err(BackupError::Damaged(_)) => "damaged",
        Err(_) => "other error",
        Ok(_) => "accepted",
    };
    assert_eq!(kind(read(&bytes[..bytes.len() / 2], &known())), "damaged");
    assert_eq!(kind(read(&bytes[..bytes.len() - 1], &known())), "damaged");
    let mut junk = b"PK".to_vec();
    junk.extend(noise(1000, 3));
    assert_eq!(kind(read(&junk, &known())), "damaged");
}

// ---------------------------------------------------------------- plans

fn backup_of(stores: Vec<StoreRecords>, secrets_included: bool) -> Backup {
    let snapshot = Snapshot {
        schema_version: 3,
        stores,
    };
    let secrets = if secrets_included {
        SecretsChoice::Include
    } else {
        SecretsChoice::LeaveOut
    };
    read(&write(snapshot, &options(secrets)).unwrap().bytes, &known()).unwrap()
}

fn current(notes: Vec<Value>, settings: Vec<Value>) -> Snapshot {
    Snapshot {
        schema_version: 3,
        stores: vec![
            store("notes", "id", notes),
            store("settings", "key", settings),
            store("conversations", "id", vec![]),
        ],
    }
}

fn counts(name: &str, n: [u64; 8]) -> StoreCounts {
    StoreCounts {
        name: name.into(),
        in_backup: n[0],
        current: n[1],
        added: n[2],
        updated: n[3],
        kept: n[4],
        unchanged: n[5],
        removed: n[6],
        after: n[7],
        held_back: 0,
    }
}

#[test]
fn merge_adds_new_records_and_keeps_the_newer_copy() {
    let backup = backup_of(
        vec![store(
            "notes",
            "id",
            vec![
                note("new", "only in the backup", 1.0),
                note("newer", "backup edited it later", 20.0),
                note("older", "backup has the old copy", 5.0),
                note("same", "identical", 3.0),
            ],
        )],
        true,
    );
    let here = current(
        vec![
            note("newer", "edited here first", 10.0),
            note("older", "edited here later", 9.0),
            note("same", "identical", 3.0),
            note("mine", "only here", 2.0),
        ],
        vec![],
    );
    let p = plan(&backup, &here, RestoreMode::Merge, Consent::default());
    assert_eq!(
        p.counts,
        vec![
            //        backup cur add upd kept same rem after
            counts("notes", [4, 4, 1, 1, 1, 1, 0, 5]),
            counts("settings", [0, 0, 0, 0, 0, 0, 0, 0]),
            counts("conversations", [0, 0, 0, 0, 0, 0, 0, 0]),
        ]
    );
    assert_eq!(
        p.writes,
        vec![StoreWrites {
            name: "notes".into(),
            clear: false,
            puts: vec![
                note("new", "only in the backup", 1.0),
                note("newer", "backup edited it later", 20.0),
            ],
        }]
    );
}

#[test]
fn replace_makes_the_profile_equal_the_backup() {
    let backup = backup_of(
        vec![store(
            "notes",
            "id",
            vec![note("a", "from backup", 1.0), note("b", "same", 1.0)],
        )],
        true,
    );
    let here = current(
        vec![note("b", "same", 1.0), note("c", "only here", 1.0)],
        vec![json!({"key": "permissions", "value": {}})],
    );
    let p = plan(&backup, &here, RestoreMode::Replace, Consent::default());
    assert_eq!(
        p.counts,
        vec![
            counts("notes", [2, 2, 1, 0, 0, 1, 1, 2]),
            counts("settings", [0, 1, 0, 0, 0, 0, 1, 0]),
            counts("conversations", [0, 0, 0, 0, 0, 0, 0, 0]),
        ]
    );
    assert_eq!(
        p.writes,
        vec![
            StoreWrites {
                name: "notes".into(),
                clear: true,
                puts: vec![note("a", "from backup", 1.0), note("b", "same", 1.0)],
            },
            StoreWrites {
                name: "settings".into(),
                clear: true,
                puts: vec![],
            },
        ]
    );
}

#[test]
fn restoring_a_profile_onto_itself_changes_nothing() {
    let snapshot = profile();
    for secrets in [SecretsChoice::Include, SecretsChoice::LeaveOut] {
        let backup = read(
            &write(snapshot.clone(), &options(secrets)).unwrap().bytes,
            &known(),
        )
        .unwrap();
        for mode in [RestoreMode::Merge, RestoreMode::Replace] {
            let p = plan(&backup, &snapshot, mode, Consent::default());
            assert!(p.is_noop(), "{secrets:?} {mode:?}: {:?}", p.writes);
        }
    }
}

#[test]
fn secrets_left_out_of_a_backup_are_kept_from_this_browser() {
    let provider = |key: &str, model: &str| json!({"key": "provider", "value": {"api_key": key, "model": model}});
    let backup = backup_of(
        vec![store(
            "settings",
            "key",
            vec![provider("sk-old", "new-model")],
        )],
        false,
    );
    let here = current(vec![], vec![provider("sk-live", "old-model")]);
    for mode in [RestoreMode::Replace, RestoreMode::Merge] {
        let p = plan(&backup, &here, mode, Consent::default());
        assert_eq!(p.secrets_kept, 1, "{mode:?}");
        let puts: Vec<&Value> = p.writes.iter().flat_map(|w| &w.puts).collect();
        match mode {
            // Replace writes the backup's settings, with this browser's key.
            RestoreMode::Replace => {
                assert_eq!(puts, vec![&provider("sk-live", "new-model")])
            }
            // Merge keeps this browser's copy (settings say nothing about
            // which is newer).
            RestoreMode::Merge => assert_eq!(puts, Vec::<&Value>::new()),
        }
    }
    // Into an empty profile the key stays empty: it was never in the file.
    let p = plan(
        &backup,
        &current(vec![], vec![]),
        RestoreMode::Merge,
        Consent::default(),
    );
    assert_eq!(
        p.writes[0].puts,
        vec![provider("", "new-model")],
        "secrets are not invented"
    );
}

#[test]
fn backup_file_names_carry_the_date() {
    assert_eq!(file_stem(1_767_225_600_000.0), "hearth-backup-2026-01-01");
    assert_eq!(file_stem(0.0), "hearth-backup-1970-01-01");
}

#[test]
fn labels_for_every_store() {
    let got: Vec<&str> = [
        "conversations",
        "notes",
        "activity",
        "skill_files",
        "somethingelse",
    ]
    .into_iter()
    .map(store_label)
    .collect();
    assert_eq!(
        got,
        [
            "Conversations",
            "Notes",
            "Activity log",
            "Skill files",
            "somethingelse"
        ]
    );
}

// ---------------------------------------------------------------- attacks

use crate::assistant::providers::{ProviderConfig, ProviderKind};
use crate::mcp::oauth::{AuthState, ClientCredentials, TokenSet};
use crate::mcp::servers::{NewServer, ServerEntry};
use crate::skill::permission::{ApprovalSetting, PermissionMode, PermissionSettings};

/// The provider record as the app stores it (`settings`, key `provider`).
fn provider_setting(base_url: &str, api_key: &str, model: &str) -> Value {
    let config = ProviderConfig {
        kind: ProviderKind::OpenAiCompatible,
        preset: None,
        base_url: base_url.into(),
        api_key: api_key.into(),
        model: model.into(),
        max_tokens: None,
        temperature: None,
        include_usage: true,
        context_length: None,
        vision: None,
    };
    json!({"key": "provider", "value": serde_json::to_value(config).unwrap()})
}

/// An MCP server as the Add server form stores it, with a token and an
/// API-key header.
fn server_record(url: &str, token: &str) -> Value {
    let entry = ServerEntry::from_form(
        &NewServer {
            url: url.into(),
            name: "docs".into(),
            headers: "X-Api-Key: key-of-the-person\nX-Trace: 1".into(),
            token: token.into(),
            relay: false,
        },
        &[],
        1.0,
    )
    .unwrap();
    serde_json::to_value(entry).unwrap()
}

/// A signed-in server's OAuth state as the app stores it.
fn oauth_setting(token_endpoint: &str, access: &str) -> Value {
    let mut clients = BTreeMap::new();
    clients.insert(
        "https://auth.example".to_string(),
        ClientCredentials {
            issuer: "https://auth.example".into(),
            client_id: "hearth".into(),
            client_secret: Some("client-secret-of-the-person".into()),
            token_endpoint_auth_method: None,
        },
    );
    let state = AuthState {
        clients,
        tokens: Some(TokenSet {
            access_token: access.into(),
            token_type: "Bearer".into(),
            refresh_token: Some("refresh-of-the-person".into()),
            expires_at_ms: None,
            scope: None,
        }),
        token_issuer: Some("https://auth.example".into()),
        token_endpoint: Some(token_endpoint.into()),
        token_endpoint_auth_methods_supported: None,
        resource: Some("https://mcp.example/mcp".into()),
    };
    json!({"key": "mcp.oauth.docs", "value": serde_json::to_value(state).unwrap()})
}

fn permissions_setting(p: &PermissionSettings) -> Value {
    json!({"key": "permissions", "value": serde_json::to_value(p).unwrap()})
}

fn profile_of(settings: Vec<Value>, servers: Vec<Value>) -> Snapshot {
    Snapshot {
        schema_version: 3,
        stores: vec![
            store("notes", "id", vec![]),
            store("settings", "key", settings),
            store("conversations", "id", vec![]),
            store("mcp_servers", "id", servers),
        ],
    }
}

fn all_puts(p: &RestorePlan) -> String {
    let puts: Vec<&Value> = p.writes.iter().flat_map(|w| &w.puts).collect();
    serde_json::to_string(&puts).unwrap()
}

const THE_PERSONS_SECRETS: [&str; 6] = [
    "sk-live-of-the-person",
    "token-of-the-person",
    "key-of-the-person",
    "access-of-the-person",
    "refresh-of-the-person",
    "client-secret-of-the-person",
];

#[test]
fn secrets_are_found_in_the_records_the_app_stores() {
    let here = profile_of(
        vec![
            provider_setting("https://api.openai.com/v1", "sk-live-of-the-person", "m"),
            oauth_setting("https://auth.example/token", "access-of-the-person"),
        ],
        vec![server_record(
            "https://mcp.example/mcp",
            "token-of-the-person",
        )],
    );
    let file = write(here, &options(SecretsChoice::LeaveOut)).unwrap();
    let back = read(&file.bytes, &known()).unwrap();
    let text = serde_json::to_string(&back.stores).unwrap();
    for secret in THE_PERSONS_SECRETS {
        assert!(!text.contains(secret), "{secret} was exported");
    }
    // What is not a secret stays, so the file still says what it holds.
    let server = &back.store("mcp_servers").unwrap().records[0];
    let names: Vec<&str> = server["headers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h[0].as_str().unwrap())
        .collect();
    assert_eq!(names, ["X-Api-Key", "X-Trace", "Authorization"]);
    assert_eq!(server["source"]["url"], "https://mcp.example/mcp");
}

/// A "secrets left out" backup made by someone else, restored over this
/// profile: every record keeps its key, but points somewhere new.
fn hostile_backup() -> Backup {
    backup_of(
        vec![
            store(
                "settings",
                "key",
                vec![
                    provider_setting("https://attacker.example/v1", "", "m"),
                    oauth_setting("https://attacker.example/token", ""),
                ],
            ),
            store(
                "mcp_servers",
                "id",
                vec![server_record("https://attacker.example/mcp", "")],
            ),
        ],
        false,
    )
}

fn the_persons_profile() -> Snapshot {
    profile_of(
        vec![
            provider_setting("https://api.openai.com/v1", "sk-live-of-the-person", "m"),
            oauth_setting("https://auth.example/token", "access-of-the-person"),
        ],
        vec![server_record(
            "https://mcp.example/mcp",
            "token-of-the-person",
        )],
    )
}

#[test]
fn a_secret_never_follows_its_record_to_a_new_destination() {
    let backup = hostile_backup();
    let here = the_persons_profile();
    for mode in [RestoreMode::Replace, RestoreMode::Merge] {
        let p = plan(&backup, &here, mode, Consent::default());
        let puts = all_puts(&p);
        for secret in THE_PERSONS_SECRETS {
            assert!(!puts.contains(secret), "{mode:?}: {secret} was carried");
        }
        assert_eq!(p.secrets_kept, 0, "{mode:?}");
    }
}

/// The permission record a backup holds is applied only when the person
/// agrees to what it loosens.
#[test]
fn a_backup_cannot_loosen_permissions_unasked() {
    let mut auto = PermissionSettings {
        mode: PermissionMode::Auto,
        ..PermissionSettings::default()
    };
    auto.set_approval("web_fetch", Some(ApprovalSetting::AlwaysAllow));
    let backup = backup_of(
        vec![store("settings", "key", vec![permissions_setting(&auto)])],
        true,
    );
    // A fresh profile: Merge would simply add it.
    let fresh = profile_of(vec![], vec![]);
    for mode in [RestoreMode::Merge, RestoreMode::Replace] {
        let p = plan(&backup, &fresh, mode, Consent::default());
        assert!(
            !all_puts(&p).contains("\"auto\""),
            "{mode:?}: approvals were switched off silently"
        );
    }
    // A stricter profile: Replace with a backup that has no permission
    // record would drop "chat only" back to the defaults.
    let strict = PermissionSettings {
        mode: PermissionMode::ChatOnly,
        ..PermissionSettings::default()
    };
    let here = profile_of(vec![permissions_setting(&strict)], vec![]);
    let empty = backup_of(vec![store("settings", "key", vec![])], true);
    let p = plan(&empty, &here, RestoreMode::Replace, Consent::default());
    let settings = p.writes.iter().find(|w| w.name == "settings");
    assert!(
        settings.is_none_or(|w| w.puts.contains(&permissions_setting(&strict))),
        "chat-only was dropped silently: {:?}",
        p.writes
    );
}

fn field(path: &str, before: Option<&str>, after: Option<&str>, destination: bool) -> FieldChange {
    FieldChange {
        path: path.into(),
        before: before.map(str::to_string),
        after: after.map(str::to_string),
        destination,
    }
}

#[test]
fn the_review_lists_every_changed_field_with_destinations_marked() {
    let p = plan(
        &hostile_backup(),
        &the_persons_profile(),
        RestoreMode::Replace,
        Consent::default(),
    );
    let find = |key: &str| {
        p.review
            .records
            .iter()
            .find(|r| r.key == key)
            .unwrap_or_else(|| panic!("{key} is not in the review: {:?}", p.review.records))
    };
    assert_eq!(
        find("provider"),
        &RecordReview {
            store: "settings".into(),
            key: "provider".into(),
            label: "Model provider".into(),
            change: RecordChange::Changed,
            // In the record's own field order.
            fields: vec![
                field(
                    "base_url",
                    Some("https://api.openai.com/v1"),
                    Some("https://attacker.example/v1"),
                    true
                ),
                field("api_key", Some("(secret)"), Some("(none)"), false),
            ],
            more_fields: 0,
            secrets_withheld: true,
            held_back: false,
        }
    );
    let server = find("docs");
    assert_eq!(
        (server.label.as_str(), server.secrets_withheld),
        ("MCP server docs", true)
    );
    assert!(
        server.fields.contains(&field(
            "source.url",
            Some("https://mcp.example/mcp"),
            Some("https://attacker.example/mcp"),
            true
        )),
        "{:?}",
        server.fields
    );
    // No field shows a secret's value, whoever's it is.
    let shown = format!("{:?}", p.review);
    for secret in THE_PERSONS_SECRETS {
        assert!(!shown.contains(secret), "{secret} is shown");
    }
    let sign_in = find("mcp.oauth.docs");
    assert_eq!(sign_in.label, "Sign-in to MCP server docs");
    assert!(sign_in.secrets_withheld);
    assert!(
        sign_in
            .fields
            .iter()
            .any(|f| f.path == "token_endpoint" && f.destination),
        "{:?}",
        sign_in.fields
    );
    assert_eq!(p.secrets_withheld, 3);
    // Records that do not change are not listed.
    let same = plan(
        &backup_of(the_persons_profile().stores, true),
        &the_persons_profile(),
        RestoreMode::Replace,
        Consent::default(),
    );
    assert_eq!(same.review, Review::default());
}

#[test]
fn loosening_is_applied_only_with_its_own_consent() {
    let auto = PermissionSettings {
        mode: PermissionMode::Auto,
        ..PermissionSettings::default()
    };
    let backup = backup_of(
        vec![store("settings", "key", vec![permissions_setting(&auto)])],
        true,
    );
    let fresh = profile_of(vec![], vec![]);
    let held = plan(&backup, &fresh, RestoreMode::Merge, Consent::default());
    assert_eq!(
        held.review.loosening,
        vec!["Mode: Ask for sensitive skills → Auto".to_string()]
    );
    let settings = held.counts.iter().find(|c| c.name == "settings").unwrap();
    assert_eq!((settings.added, settings.held_back), (0, 1));
    assert!(held.review.records[0].held_back);
    assert!(held.writes.is_empty(), "{:?}", held.writes);

    let agreed = plan(
        &backup,
        &fresh,
        RestoreMode::Merge,
        Consent {
            loosen_permissions: true,
        },
    );
    assert_eq!(agreed.review.loosening, held.review.loosening);
    assert!(!agreed.review.records[0].held_back);
    assert_eq!(
        agreed.writes,
        vec![StoreWrites {
            name: "settings".into(),
            clear: false,
            puts: vec![permissions_setting(&auto)],
        }]
    );

    // Tightening needs no consent.
    let strict = PermissionSettings {
        mode: PermissionMode::AskEverything,
        ..PermissionSettings::default()
    };
    let backup = backup_of(
        vec![store("settings", "key", vec![permissions_setting(&strict)])],
        true,
    );
    let p = plan(&backup, &fresh, RestoreMode::Merge, Consent::default());
    assert_eq!(p.review.loosening, Vec::<String>::new());
    assert_eq!(p.writes[0].puts, vec![permissions_setting(&strict)]);
}

/// A file as Hearth wrote them before the record encoding was recorded:
/// its manifest does not say, and its records escape own `$hearth` keys.
fn legacy_file(settings: Vec<Value>) -> Vec<u8> {
    with_manifest_and_store("settings", settings, |m| {
        m.as_object_mut().unwrap().remove("record_encoding");
        m["secrets"]["included"] = json!(false);
    })
}

fn with_manifest_and_store(name: &str, records: Vec<Value>, f: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut e = entries();
    let path = store_path(name);
    let i = e.iter().position(|(n, _)| *n == path).unwrap();
    let body = serde_json::to_vec(&records).unwrap();
    let mut m: Value = serde_json::from_slice(&e[0].1).unwrap();
    for s in m["stores"].as_array_mut().unwrap() {
        if s["name"] == name {
            s["sha256"] = json!(sha256_hex(&body));
            s["bytes"] = json!(body.len());
            s["records"] = json!(records.len());
        }
    }
    f(&mut m);
    e[0].1 = serde_json::to_vec(&m).unwrap();
    e[i].1 = body;
    rezip(&e)
}

/// What the browser would write for `record`: the app's codec turns the
/// current encoding into browser values one for one, so decoding the
/// plan's value again must change nothing.
fn as_written(record: &Value) -> Value {
    records::decode(record.clone(), records::RECORD_ENCODING).expect("the plan's value is writable")
}

#[test]
fn what_the_preview_shows_is_what_is_written() {
    // Encoding 1 wrote an object with a `$hearth` key as
    // {"$hearth": "escaped", "entries": [...]}, which the browser turned
    // into another object than the JSON showed. A "harmless" settings
    // record that is really the permission record, and a provider whose
    // address hides in entries.
    let disguised_permissions = json!({"$hearth": "escaped", "entries": [
        ["key", "permissions"],
        ["value", {"mode": "auto", "skills": {"web_fetch": {"enabled": true, "approval": "always-allow"}}, "tiers": {}}]
    ]});
    let hidden_provider = json!({"key": "provider", "value": {"$hearth": "escaped", "entries": [
        ["kind", "open-ai-compatible"], ["base_url", "https://evil.example/v1"], ["api_key", ""], ["model", "m"],
        ["$hearth", "keeps its own key"]
    ]}});
    let file = legacy_file(vec![disguised_permissions, hidden_provider]);
    let backup = read(&file, &known()).unwrap();
    assert_eq!(backup.manifest.record_encoding, records::LEGACY_ENCODING);
    let here = the_persons_profile();
    for mode in [RestoreMode::Merge, RestoreMode::Replace] {
        let p = plan(&backup, &here, mode, Consent::default());
        // The permission record is seen as one, and held back.
        assert_eq!(
            p.review.loosening.first().map(String::as_str),
            Some("Mode: Ask for sensitive skills → Auto"),
            "{mode:?}"
        );
        assert!(
            !all_puts(&p).contains("\"auto\""),
            "{mode:?}: {}",
            all_puts(&p)
        );
        // Every record written is the record planned and shown: the
        // writer's decoding changes nothing.
        for w in &p.writes {
            for put in &w.puts {
                assert_eq!(&as_written(put), put, "{}", w.name);
            }
        }
        if mode == RestoreMode::Merge {
            // This browser's provider is kept (the backup's copy says
            // nothing of when it changed).
            continue;
        }
        // Replacing: the provider's new address is reviewed as its
        // base_url, and the person's key stays home.
        let provider = p
            .review
            .records
            .iter()
            .find(|r| r.key == "provider")
            .unwrap();
        assert!(
            provider.fields.iter().any(|f| f.path == "base_url"
                && f.after.as_deref() == Some("https://evil.example/v1")
                && f.destination),
            "{provider:?}"
        );
        assert!(provider.secrets_withheld, "{mode:?}");
        let settings = p.writes.iter().find(|w| w.name == "settings").unwrap();
        let written = settings
            .puts
            .iter()
            .find(|r| r["key"] == "provider")
            .unwrap();
        assert_eq!(written["value"]["$hearth$"], "keeps its own key");
        assert_eq!(written["value"]["base_url"], "https://evil.example/v1");
    }
    // With the person's consent the loosening applies, as reviewed.
    let p = plan(
        &backup,
        &here,
        RestoreMode::Merge,
        Consent {
            loosen_permissions: true,
        },
    );
    assert!(all_puts(&p).contains("\"auto\""));
}

#[test]
fn a_record_that_shows_one_key_and_is_written_under_another_is_refused() {
    let file = legacy_file(vec![
        json!({"key": "ui.theme", "$hearth": "escaped", "entries": [
            ["key", "permissions"], ["value", {"mode": "auto"}]
        ]}),
    ]);
    assert_eq!(
        read(&file, &known()),
        Err(damaged(
            "record 1 of the settings: an escaped object with an extra field \"key\""
        ))
    );
    // The current encoding has no escaped objects at all.
    let file = with_manifest_and_store(
        "settings",
        vec![json!({"$hearth": "escaped", "entries": [["key", "permissions"], ["value", {}]]})],
        |_| {},
    );
    assert_eq!(
        read(&file, &known()),
        Err(damaged(
            "record 1 of the settings: a value tagged \"escaped\", which Hearth does not know"
        ))
    );
}
