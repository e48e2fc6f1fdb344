//! Benchmark: tools/call round trips with Hearth's native MCP client against
//! the official TypeScript SDK client, on the same local server
//! (server-everything, 2025-11-25, its `echo` tool), plus Hearth's client on
//! the 2026-07-28 Python peer. Prints medians and the ratio of medians.
//!
//! Run: `cargo bench -p hearth-proxy --bench mcp_roundtrip`

#[path = "../tests/mcp_support/mod.rs"]
mod mcp_support;

use std::process::Command;
use std::rc::Rc;
use std::time::Instant;

use hearth_core::mcp::client::{CallOptions, ClientConfig, McpClient};
use mcp_support::{ReqwestTransport, peers_dir, runtime, start_everything, start_modern};
use serde_json::{Value, json};

const WARMUP: usize = 20;
const COUNT: usize = 500;

fn stats(mut samples: Vec<f64>) -> (f64, f64, f64) {
    samples.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.9), at(0.99))
}

fn hearth_samples(url: &str, tool: &str, args: Value) -> Vec<f64> {
    runtime().block_on(async {
        let client = McpClient::new(
            Rc::new(ReqwestTransport::new().unwrap()),
            ClientConfig::new(url),
        );
        client.connect().await.unwrap();
        for _ in 0..WARMUP {
            client
                .call_tool(tool, args.clone(), CallOptions::default())
                .await
                .unwrap();
        }
        let mut samples = Vec::with_capacity(COUNT);
        for _ in 0..COUNT {
            let t0 = Instant::now();
            let r = client
                .call_tool(tool, args.clone(), CallOptions::default())
                .await
                .unwrap();
            samples.push(t0.elapsed().as_secs_f64() * 1000.0);
            assert_ne!(r.is_error, Some(true));
        }
        let _ = client.close().await;
        samples
    })
}

fn typescript_samples(url: &str, tool: &str, args: &Value) -> Vec<f64> {
    let dir = peers_dir();
    let output = Command::new(dir.join("node_modules/.bin/node"))
        .arg(dir.join("bench_client.mjs"))
        .args([url, tool, &args.to_string(), &COUNT.to_string()])
        .current_dir(&dir)
        .output()
        .expect("run the TypeScript SDK client");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let doc: Value = serde_json::from_slice(&output.stdout).expect("the TypeScript client's JSON");
    doc["samples_ms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

fn main() {
    mcp_support::require_peers("mcp_roundtrip");
    let args = json!({"message": "benchmark"});
    let everything = start_everything();
    // Alternate the clients so neither always meets a colder server.
    let ts_first = typescript_samples(&everything.url, "echo", &args);
    let hearth = hearth_samples(&everything.url, "echo", args.clone());
    let ts_second = typescript_samples(&everything.url, "echo", &args);
    let typescript: Vec<f64> = ts_first.into_iter().chain(ts_second).collect();
    let (h50, h90, h99) = stats(hearth);
    let (t50, t90, t99) = stats(typescript);
    println!(
        "tools/call round trip on server-everything (2025-11-25, echo), {COUNT} calls after {WARMUP} warm-up:"
    );
    println!("  hearth native client : median {h50:.3} ms, p90 {h90:.3} ms, p99 {h99:.3} ms");
    println!(
        "  TypeScript SDK 1.32  : median {t50:.3} ms, p90 {t90:.3} ms, p99 {t99:.3} ms  (2 runs of {COUNT})"
    );
    println!(
        "  ratio of medians (hearth / TypeScript SDK): {:.2}",
        h50 / t50
    );
    drop(everything);

    let modern = start_modern();
    let (m50, m90, m99) = stats(hearth_samples(
        &modern.url,
        "echo",
        json!({"message": "benchmark"}),
    ));
    println!("tools/call round trip on the Python SDK server (2026-07-28, echo):");
    println!("  hearth native client : median {m50:.3} ms, p90 {m90:.3} ms, p99 {m99:.3} ms");
    println!(
        "  (the TypeScript SDK 1.x client does not speak 2026-07-28, so there is no pair here)"
    );
}
