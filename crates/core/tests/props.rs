//! Property tests for the parsers of outside input core holds or reaches:
//! the SSE parser, JSON-RPC and MCP messages (and the stream reader that
//! frames them), OAuth answers, `tools.json` and `resources.json`, the
//! backup reader and its restore plan, the GGUF header, the JSON Schema
//! validator and the host rules for MCP Apps. Whatever bytes they get,
//! they never panic, and where an answer has a shape that must hold, it
//! holds. (SKILL.md, YAML and the zip reader are in
//! `crates/agent-skills/tests/agent_skills_props.rs`; the Markdown
//! renderer in `crates/markdown/tests/props.rs`.)
//!
//! `cargo xtask test` runs a fixed number of cases (`PROPTEST_CASES`);
//! `cargo xtask fuzz` runs many more, in release.

use std::collections::BTreeMap;
use std::io::{Cursor, Write};

use futures::executor::block_on;
use futures::stream;
use hearth_base::schema::{check_bounded, check_schema, validate};
use hearth_base::sse::SseParser;
use hearth_core::agent_skills::SourceFile;
use hearth_core::agent_skills::ValidationMode;
use hearth_core::agent_skills::scan::{ScanOptions, scan};
use hearth_core::backup::{
    self, Consent, Known, KnownStore, RestoreMode, SecretsChoice, Snapshot, StoreRecords,
    WriteOptions,
};
use hearth_core::mcp::jsonrpc::Message;
use hearth_core::mcp::model::{CallToolResult, GetPromptResult, ReadResourceResult, Tool};
use hearth_core::mcp::stream::MessageReader;
use hearth_core::mcp::{HttpResponse, oauth};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn config() -> ProptestConfig {
    ProptestConfig {
        // Failures print their smallest input; nothing is written into the
        // source tree.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Keys the parsers look for, and some they do not.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "jsonrpc", "id", "method", "params", "result", "error", "code", "message", "data",
            "tools", "name", "description", "inputSchema", "outputSchema", "content", "type",
            "text", "uri", "mimeType", "blob", "contents", "messages", "role", "_meta",
            "structuredContent", "isError", "nextCursor", "key", "value", "$hearth", "entries",
            "bytes", "mime", "$ref", "#", "properties", "items", "anyOf", "allOf", "oneOf",
            "not", "required", "enum", "const", "additionalProperties", "$defs", "minimum",
            "maxLength", "uniqueItems", "access_token", "token_type", "expires_in", "issuer",
            "authorization_endpoint", "token_endpoint", "resource", "authorization_servers",
        ]).prop_map(str::to_string),
        1 => ".{0,8}",
    ]
}

/// Any JSON value, shaped like the messages and records parsers meet.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop::sample::select(vec![
            "2.0",
            "tools/list",
            "text",
            "image",
            "resource",
            "bytes",
            "blob",
            "escaped",
            "Uint8Array",
            "ArrayBuffer",
            "QUJD",
            "QQ==",
            "#",
            "#/$defs/a",
            "#/properties/x",
            "object",
            "string",
            "array",
            "https://a.example",
            "http://127.0.0.1",
            "Bearer",
        ])
        .prop_map(|s| Value::String(s.to_string())),
        ".{0,24}".prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 96, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..8)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Bytes as they come off a wire: some random, some text, split anywhere.
fn chunks(text: impl Strategy<Value = String>) -> impl Strategy<Value = Vec<Vec<u8>>> {
    (
        text,
        prop::collection::vec(any::<prop::sample::Index>(), 0..6),
    )
        .prop_map(|(t, cuts)| {
            let bytes = t.into_bytes();
            let mut at: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
            at.sort_unstable();
            let mut out = Vec::new();
            let mut from = 0;
            for a in at {
                out.push(bytes[from..a].to_vec());
                from = a;
            }
            out.push(bytes[from..].to_vec());
            out
        })
}

fn sse_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            prop::sample::select(vec![
                "data: ",
                "data:",
                "event: ",
                "id: ",
                "retry: ",
                ": comment",
                "\n",
                "\r\n",
                "\r",
                "\n\n",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
                "{\"jsonrpc\":\"2.0\"",
                "\u{0}",
                "\u{feff}",
                "é",
            ])
            .prop_map(str::to_string),
            ".{0,16}",
        ],
        0..40,
    )
    .prop_map(|parts| parts.concat())
}

fn response(media: &str, chunks: Vec<Vec<u8>>) -> HttpResponse {
    HttpResponse {
        status: 200,
        headers: vec![("Content-Type".into(), media.into())],
        body: Box::pin(stream::iter(chunks.into_iter().map(Ok))),
    }
}

const KNOWN: [KnownStore<'static>; 3] = [
    KnownStore {
        name: "notes",
        key_path: "id",
    },
    KnownStore {
        name: "settings",
        key_path: "key",
    },
    KnownStore {
        name: "mcp_servers",
        key_path: "id",
    },
];

fn known() -> Known<'static> {
    Known {
        schema_version: 3,
        stores: &KNOWN,
    }
}

/// A backup whose records are whatever `records` says, written the way
/// Hearth writes them, manifest and checksums right: only the records can
/// be wrong.
fn backup_with(records: Vec<Value>, settings: Vec<Value>, legacy: bool) -> Vec<u8> {
    let written = backup::write(
        Snapshot {
            schema_version: 3,
            stores: vec![
                StoreRecords {
                    name: "notes".into(),
                    key_path: "id".into(),
                    records,
                },
                StoreRecords {
                    name: "settings".into(),
                    key_path: "key".into(),
                    records: settings,
                },
            ],
        },
        &WriteOptions {
            app_version: "0".into(),
            created_at_ms: 0.0,
            secrets: SecretsChoice::Include,
            browser_only_left_out: BTreeMap::new(),
        },
    )
    .unwrap();
    if !legacy {
        return written.bytes;
    }
    // The same file in the older record encoding (no encoding named).
    use std::io::Read;
    let mut a = zip::ZipArchive::new(Cursor::new(&written.bytes[..])).unwrap();
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for i in 0..a.len() {
        let mut e = a.by_index(i).unwrap();
        let mut body = Vec::new();
        e.read_to_end(&mut body).unwrap();
        if e.name() == "manifest.json" {
            let mut m: Value = serde_json::from_slice(&body).unwrap();
            m.as_object_mut().unwrap().remove("record_encoding");
            body = serde_json::to_vec(&m).unwrap();
        }
        out.start_file(e.name(), zip::write::SimpleFileOptions::default())
            .unwrap();
        out.write_all(&body).unwrap();
    }
    out.finish().unwrap().into_inner()
}

/// A schema object made of the keywords the validator checks, references
/// included (to the root, to definitions, to nowhere).
fn schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!(true)),
        Just(json!(false)),
        Just(json!({"type": "string", "maxLength": 5})),
        Just(json!({"type": ["integer", "null"], "minimum": 0})),
        Just(json!({"enum": [1, "a", null, [1, 2]]})),
        Just(json!({"$ref": "#"})),
        Just(json!({"$ref": "#/$defs/a"})),
        Just(json!({"$ref": "#/$defs/b"})),
        Just(json!({"$ref": "#/nowhere"})),
        Just(json!({"type": "array", "uniqueItems": true})),
        Just(json!({"const": {"a": 1}})),
        Just(json!({"multipleOf": 0.1})),
    ];
    let node = leaf.prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..4).prop_map(|v| json!({"anyOf": v})),
            prop::collection::vec(inner.clone(), 1..4).prop_map(|v| json!({"allOf": v})),
            prop::collection::vec(inner.clone(), 1..4).prop_map(|v| json!({"oneOf": v})),
            inner.clone().prop_map(|v| json!({"not": v})),
            inner.clone().prop_map(|v| json!({"type": "array", "items": v})),
            (inner.clone(), inner.clone()).prop_map(
                |(a, b)| json!({"type": "object", "properties": {"a": a}, "additionalProperties": b, "required": ["a"]})
            ),
        ]
    });
    (node.clone(), node.clone(), node).prop_map(|(root, a, b)| {
        let mut root = match root {
            Value::Object(m) => m,
            other => {
                let mut m = Map::new();
                m.insert("allOf".into(), json!([other]));
                m
            }
        };
        root.insert("$defs".into(), json!({"a": a, "b": b}));
        Value::Object(root)
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_sse_parser_never_panics_and_keeps_its_limit(
        parts in chunks(sse_text()),
        limit in 1usize..64,
    ) {
        let mut whole = SseParser::new();
        let mut capped = SseParser::with_limit(limit);
        for part in &parts {
            if let Ok(events) = whole.feed(part) {
                for e in events {
                    let _ = e.event_type();
                }
            }
            if let Ok(events) = capped.feed(part) {
                for e in events {
                    prop_assert!(e.data.len() <= limit, "{} > {limit}", e.data.len());
                }
            }
        }
        let _ = whole.finish();
        let _ = capped.finish();
    }

    #[test]
    fn the_sse_parser_sees_the_same_events_however_the_bytes_are_cut(parts in chunks(sse_text())) {
        let whole: Vec<u8> = parts.concat();
        let mut one = SseParser::new();
        let mut many = SseParser::new();
        let at_once = one.feed(&whole);
        let mut in_parts = Vec::new();
        let mut failed = false;
        for p in &parts {
            match many.feed(p) {
                Ok(e) => in_parts.extend(e),
                Err(_) => failed = true,
            }
        }
        if let (Ok(at_once), false) = (at_once, failed) {
            prop_assert_eq!(at_once, in_parts);
        }
    }

    #[test]
    fn json_rpc_messages_are_read_or_refused_never_panicked_on(
        text in prop_oneof![".{0,64}", json_value().prop_map(|v| v.to_string())],
        value in json_value(),
    ) {
        let _ = Message::parse_all(&text);
        if let Ok(m) = Message::from_value(value.clone()) {
            let _ = m.response_id();
        }
        let _ = Message::parse_all(&Value::Array(vec![value.clone(), value.clone()]).to_string());
        // The MCP result types, from whatever a server sends.
        let _ = serde_json::from_value::<Tool>(value.clone());
        let _ = serde_json::from_value::<CallToolResult>(value.clone());
        let _ = serde_json::from_value::<ReadResourceResult>(value.clone());
        let _ = serde_json::from_value::<GetPromptResult>(value.clone());
        if let Ok(tool) = serde_json::from_value::<Tool>(value.clone()) {
            let _ = hearth_core::mcp::skills::unbounded_schema(&tool);
            let _ = hearth_core::mcp::headers::param_headers(&tool.input_schema);
            let _ = hearth_core::mcp::skills::visible_to_model(&tool);
        }
    }

    #[test]
    fn the_stream_reader_frames_json_and_sse_bodies_whatever_they_hold(
        parts in chunks(prop_oneof![sse_text(), json_value().prop_map(|v| v.to_string())]),
        sse in any::<bool>(),
    ) {
        let media = if sse { "text/event-stream" } else { "application/json" };
        let mut reader = MessageReader::new(response(media, parts));
        let mut n = 0;
        block_on(async {
            while let Some(m) = reader.next().await {
                let _ = m;
                n += 1;
                if n > 10_000 {
                    break;
                }
            }
        });
        prop_assert!(n <= 10_000, "the reader kept producing messages");
        prop_assert!(reader.end().is_some());
    }

    #[test]
    fn oauth_answers_are_read_or_refused(
        body in prop_oneof![json_value().prop_map(|v| v.to_string().into_bytes()), prop::collection::vec(any::<u8>(), 0..64)],
        header in ".{0,80}",
        status in 100u16..600,
    ) {
        let _ = oauth::parse_challenges(&[header.as_str()]);
        let _ = oauth::bearer_challenge(&[header.as_str(), "Bearer realm=\"x\", scope=\"a b\""]);
        let _ = oauth::parse_resource_metadata(&body);
        let _ = oauth::parse_authorization_server_metadata(&body, "https://a.example");
        let _ = oauth::parse_registration(&body, "https://a.example");
        let _ = oauth::parse_token_response(status, &body, 0.0, Some("read"), Some("r"));
    }

    #[test]
    fn tools_json_and_resources_json_never_stop_a_scan(
        tools in prop_oneof![
            json_value().prop_map(|v| json!({"tools": [v]}).to_string()),
            json_value().prop_map(|v| json!({"tools": v}).to_string()),
            (json_value(), schema()).prop_map(|(d, s)| json!({"tools": [{"name": "t", "description": d, "inputSchema": s, "script": "scripts/t.py"}]}).to_string()),
            ".{0,64}",
        ],
        resources in prop_oneof![json_value().prop_map(|v| json!({"resources": [v]}).to_string()), ".{0,32}"],
    ) {
        let files = vec![
            SourceFile::new("SKILL.md", b"---\nname: s\ndescription: A skill.\n---\nBody\n".to_vec()),
            SourceFile::new("tools.json", tools.into_bytes()),
            SourceFile::new("resources.json", resources.into_bytes()),
            SourceFile::new("scripts/t.py", b"print(1)\n".to_vec()),
        ];
        for mode in [ValidationMode::Strict, ValidationMode::Lenient] {
            let out = scan(files.clone(), &ScanOptions { mode, root_name: Some("s".into()) });
            for p in &out.packages {
                for t in &p.tools {
                    // Whatever loads can be checked in bounded time, and
                    // never takes an MCP tool's name.
                    prop_assert!(check_bounded(&t.input_schema).is_ok());
                    prop_assert!(!t.name.contains("__"));
                }
            }
        }
    }

    #[test]
    fn the_backup_reader_refuses_garbage_and_damaged_files(
        bytes in prop::collection::vec(any::<u8>(), 0..512),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let _ = backup::read(&bytes, &known());
        let mut zipped = b"PK".to_vec();
        zipped.extend(&bytes);
        let _ = backup::read(&zipped, &known());
        let mut file = backup_with(vec![json!({"id": "n", "title": "t"})], vec![], false);
        for (i, b) in flips {
            let at = i.index(file.len());
            file[at] ^= b.max(1);
        }
        let _ = backup::read(&file, &known());
    }

    #[test]
    fn every_record_a_backup_holds_is_read_once_and_planned_as_read(
        notes in prop::collection::vec(json_value(), 0..6),
        settings in prop::collection::vec(json_value(), 0..4),
        legacy in any::<bool>(),
        replace in any::<bool>(),
        consent in any::<bool>(),
    ) {
        // Records with the keys their stores need, and whatever else.
        let notes: Vec<Value> = notes.into_iter().enumerate().map(|(i, v)| match v {
            Value::Object(mut m) => { m.insert("id".into(), json!(format!("n{i}"))); Value::Object(m) }
            other => json!({"id": format!("n{i}"), "body": other}),
        }).collect();
        let settings: Vec<Value> = settings.into_iter().enumerate().map(|(i, v)| {
            let key = ["permissions", "provider", "web.domains.web_fetch", "x"][i % 4];
            json!({"key": key, "value": v})
        }).collect();
        let file = backup_with(notes, settings, legacy);
        let Ok(read) = backup::read(&file, &known()) else { return Ok(()) };
        let current = Snapshot {
            schema_version: 3,
            stores: KNOWN.iter().map(|k| StoreRecords { name: k.name.into(), key_path: k.key_path.into(), records: vec![] }).collect(),
        };
        let mode = if replace { RestoreMode::Replace } else { RestoreMode::Merge };
        let plan = backup::plan(&read, &current, mode, Consent { loosen_permissions: consent });
        // What the plan writes is what the writer's decoding leaves as it is.
        for w in &plan.writes {
            for put in &w.puts {
                let again = backup::records::decode(put.clone(), backup::records::RECORD_ENCODING);
                prop_assert_eq!(again.as_ref(), Ok(put));
            }
        }
        // Nothing loosens permissions without the person's consent.
        if !consent {
            for w in plan.writes.iter().filter(|w| w.name == "settings") {
                for put in w.puts.iter().filter(|p| p["key"] == "permissions") {
                    let p: hearth_core::skill::permission::PermissionSettings =
                        serde_json::from_value(put["value"].clone()).unwrap_or_else(|_| hearth_core::skill::permission::PermissionSettings::unreadable());
                    prop_assert!(hearth_core::skill::permission::loosenings(&Default::default(), &p).is_empty(), "{put}");
                }
            }
        }
    }

    #[test]
    fn the_gguf_header_reader_never_panics(
        bytes in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..256),
            (prop::collection::vec(any::<u8>(), 0..256)).prop_map(|mut tail| {
                let mut b = b"GGUF".to_vec();
                b.extend([3, 0, 0, 0]);
                b.append(&mut tail);
                b
            }),
        ],
        claimed in any::<u64>(),
    ) {
        let _ = hearth_core::assistant::gguf::read_header(&bytes, claimed);
        let _ = hearth_core::assistant::gguf::read_header(&bytes, bytes.len() as u64);
    }

    #[test]
    fn the_schema_validator_finishes_on_any_schema_and_input(
        schema in schema(),
        value in json_value(),
    ) {
        let _ = check_schema(&schema);
        let bounded = check_bounded(&schema);
        let errors = validate(&schema, &value);
        prop_assert!(errors.len() <= 20);
        // A schema that passes the load-time check never loops.
        if bounded.is_ok() {
            prop_assert!(
                !errors.iter().any(|e| e.message.contains("refers to itself")),
                "{schema} {errors:?}"
            );
        }
    }

    #[test]
    fn app_hosts_are_judged_without_panicking(host in ".{0,40}", scheme in prop::sample::select(vec!["https", "http", "wss", "ws", "ftp"])) {
        let _ = hearth_core::address::local_host(&host);
        if let Ok(source) = hearth_core::mcp::apps::source(&format!("{scheme}://{host}")) {
            // What is let through names a host that is not local.
            let rest = source.split_once("://").unwrap().1;
            let bare = rest.trim_start_matches("*.");
            let host_only = if bare.starts_with('[') {
                bare.split_inclusive(']').next().unwrap().to_string()
            } else {
                bare.rsplit_once(':').map_or(bare, |(h, _)| h).to_string()
            };
            prop_assert_eq!(hearth_core::address::local_host(&host_only), None, "{}", source);
        }
    }
}
