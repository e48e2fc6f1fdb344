//! `hearth web read` as a person uses it: a saved page and the same page
//! served on 127.0.0.1 read to the same result, the model's text and the
//! JSON, the private-address guard and its flag, the size limit, and clear
//! errors for what cannot be read.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};
use std::thread::JoinHandle;

use serde_json::Value;

const PAGE: &str = r#"<!doctype html><html><head><meta charset="utf-8"><title>The hearth</title></head>
<body><nav><a href="/">Home</a> <a href="/shop">Shop</a></nav>
<article><h1>The hearth</h1>
<p>A hearth is the place in a home where a fire is kept, for warmth and for cooking. For most
of history it was the centre of the household, where food was made and stories were told.</p>
<p>Read <a href="/history">its history</a> or <a href="javascript:alert(1)">nothing</a>.
Caf&eacute; &amp; b&auml;ckerei &mdash; every entity.</p>
</article><footer>© 2026 <a href="/privacy">Privacy</a></footer></body></html>"#;

fn hearth(config: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hearth"))
        .arg("web")
        .arg("read")
        .args(args)
        .env("HEARTH_CONFIG_DIR", config)
        .env_remove("HEARTH_CONFIG")
        .output()
        .expect("run hearth")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Serves `body` as HTML to `requests` connections on 127.0.0.1.
fn serve(body: &'static str, requests: usize) -> (String, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let handle = std::thread::spawn(move || {
        for stream in listener.incoming().take(requests) {
            let mut stream = stream.unwrap();
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body.as_bytes());
        }
    });
    (addr, handle)
}

#[test]
fn a_saved_page_reads_as_web_fetch_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hearth.html");
    std::fs::write(&file, PAGE).unwrap();
    let file = file.to_str().unwrap();

    let json = hearth(dir.path(), &["--json", file]);
    assert!(json.status.success(), "{}", stderr(&json));
    let page: Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(page["title"], "The hearth");
    assert_eq!(page["kind"], "html");
    assert_eq!(page["status"], 200);
    let content = page["content"].as_str().unwrap();
    // Readability drops the heading that only repeats the title; the title
    // is given on its own.
    assert!(content.starts_with("A hearth is the place"), "{content}");
    assert!(
        content.contains("Café & bäckerei — every entity."),
        "{content}"
    );
    assert!(content.contains("or nothing."), "{content}");
    for chrome in ["Shop", "Privacy", "javascript"] {
        assert!(!content.contains(chrome), "{chrome} in {content}");
    }
    // A saved page's relative links point into its folder.
    assert_eq!(page["links"].as_array().unwrap().len(), 0);

    // Without --json: exactly what the model reads.
    let text = hearth(dir.path(), &[file]);
    assert!(text.status.success(), "{}", stderr(&text));
    let url = page["url"].as_str().unwrap();
    assert!(url.starts_with("file:///"), "{url}");
    assert_eq!(
        stdout(&text),
        format!("# The hearth\nSource: {url}\n\n{content}\n")
    );
}

#[test]
fn a_served_page_needs_the_private_fetch_flag_and_then_reads_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let (addr, server) = serve(PAGE, 1);
    let url = format!("http://{addr}/hearth");

    let refused = hearth(dir.path(), &[&url]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("127.0.0.1 is not on the public internet"),
        "{}",
        stderr(&refused)
    );

    let read = hearth(
        dir.path(),
        &["--json", "--allow-private-fetch", &addr, &url],
    );
    assert!(read.status.success(), "{}", stderr(&read));
    server.join().unwrap();
    let page: Value = serde_json::from_str(&stdout(&read)).unwrap();
    assert_eq!(page["url"], url.as_str());
    assert_eq!(page["title"], "The hearth");
    assert_eq!(
        page["links"],
        serde_json::json!([{"text": "its history", "url": format!("http://{addr}/history")}])
    );

    // The same bytes from a file read to the same Markdown, links aside.
    let file = dir.path().join("hearth.html");
    std::fs::write(&file, PAGE).unwrap();
    let saved = hearth(dir.path(), &["--json", file.to_str().unwrap()]);
    let saved: Value = serde_json::from_str(&stdout(&saved)).unwrap();
    let served = page["content"].as_str().unwrap().replace(
        &format!("[its history](http://{addr}/history)"),
        "its history",
    );
    assert_eq!(served, saved["content"].as_str().unwrap());
}

#[test]
fn limits_and_mistakes_get_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.html");
    std::fs::write(&file, PAGE).unwrap();
    let file = file.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--max-bytes", "100", file],
            "the response is larger than the 100-byte limit",
        ),
        (
            vec!["--max-bytes", "0", file],
            "--max-bytes must be between 1 and",
        ),
        (vec!["/no/such/page.html"], "No such file"),
        (vec!["ftp://example.com/x"], "ftp"),
        (
            vec!["--allow-private-fetch", "nonsense", file],
            "--allow-private-fetch",
        ),
    ];
    for (args, message) in cases {
        let out = hearth(dir.path(), &args);
        assert!(!out.status.success(), "{args:?}");
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), "", "{args:?}");
    }
}
