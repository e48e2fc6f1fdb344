//! `hearth mcp ...` as a person uses it, against both test peers started on
//! 127.0.0.1: listing tools with their skill ids, calling tools, and the
//! errors for bad input and unreachable servers.

mod mcp_support;

use std::process::{Command, Output};

use mcp_support::{free_port, require_peers, start_everything, start_modern};
use serde_json::Value;

fn hearth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(args)
        .output()
        .expect("run hearth")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn tools_are_listed_with_skill_ids_in_both_eras() {
    require_peers("tools_are_listed_with_skill_ids_in_both_eras");
    let legacy = start_everything();
    let modern = start_modern();
    for (peer, era, tool) in [(&legacy, "legacy", "echo"), (&modern, "modern", "echo")] {
        let o = hearth(&["mcp", "tools", "--json", &peer.url]);
        assert!(o.status.success(), "{}", stderr(&o));
        let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(doc["server"]["era"], era);
        let server_id = format!("local-{}", peer.port);
        assert_eq!(doc["server"]["id"], server_id.as_str());
        let echo = doc["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == tool)
            .unwrap();
        assert_eq!(echo["skill_id"], format!("{server_id}__echo").as_str());
        assert_eq!(echo["model_visible"], true);
    }
    let table = hearth(&["mcp", "tools", &modern.url]);
    let text = stdout(&table);
    assert!(text.starts_with("TOOL "), "{text}");
    assert!(text.contains("(app only) Refreshes the chart"), "{text}");
    assert!(stderr(&table).contains("MCP 2026-07-28"));
}

#[test]
fn tools_are_called_and_results_printed() {
    require_peers("tools_are_called_and_results_printed");
    let legacy = start_everything();
    let modern = start_modern();
    let o = hearth(&[
        "mcp",
        "call",
        &legacy.url,
        "echo",
        r#"{"message":"hi there"}"#,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "Echo: hi there\n");

    let o = hearth(&["mcp", "call", &modern.url, "every_content"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "some text\n[image/png image, 72 bytes]\n[audio/wav audio, 45 bytes]\n[resource link] hello <test://static/hello>\n[resource test://static/hello]\nHello, world\nstructured content:\n{\n  \"kinds\": 5\n}\n"
    );

    let o = hearth(&[
        "mcp",
        "call",
        "--progress",
        &legacy.url,
        "trigger-long-running-operation",
        r#"{"duration":1,"steps":2}"#,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "progress 1/2\nprogress 2/2\n");

    let o = hearth(&[
        "mcp",
        "call",
        "--json",
        &modern.url,
        "add",
        r#"{"a":1,"b":2}"#,
    ]);
    let result: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(result["structuredContent"]["sum"], 3.0);

    // A tool's own failure: exit status 1, the message on stderr.
    let o = hearth(&["mcp", "call", &modern.url, "fail"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "the tool reported an error:\nfailed because it was asked to\n"
    );
}

#[test]
fn mistakes_get_clear_errors() {
    require_peers("mistakes_get_clear_errors");
    let modern = start_modern();
    let table: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "call".into(),
                modern.url.clone(),
                "echo".into(),
                "{not json".into(),
            ],
            "error: the arguments are not JSON: key must be a string at line 1 column 2\n",
        ),
        (
            vec![
                "call".into(),
                modern.url.clone(),
                "echo".into(),
                "[1]".into(),
            ],
            "error: the arguments must be a JSON object\n",
        ),
        (
            vec!["call".into(), modern.url.clone(), "no_such_tool".into()],
            "the tool reported an error:\nUnknown tool: no_such_tool\n",
        ),
        (
            vec!["tools".into(), "ftp://example.com".into()],
            "error: the server URL is not usable: \"ftp://example.com\" is not an http or https URL\n",
        ),
    ];
    for (args, want) in table {
        let mut full = vec!["mcp"];
        full.extend(args.iter().map(String::as_str));
        let o = hearth(&full);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(stderr(&o), want, "{args:?}");
    }
    let closed = format!("http://127.0.0.1:{}/mcp", free_port());
    let o = hearth(&["mcp", "tools", &closed]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with("error: could not reach the server:"),
        "{}",
        stderr(&o)
    );
}
