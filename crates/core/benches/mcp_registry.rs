//! Benchmark: 1,000 MCP tools connected. Parsing a 1,000-tool `tools/list`
//! answer, converting the tools to skills, registering them in the one
//! registry (replacing the server's previous set), and looking skills up.
//!
//! Run: `cargo bench -p hearth-core --bench mcp_registry`

use std::hint::black_box;
use std::time::Instant;

#[path = "support/figure.rs"]
mod figure;
use figure::figure;

use hearth_core::mcp::client::ToolListing;
use hearth_core::mcp::model::Tool;
use hearth_core::mcp::skills::{ServerId, catalog, register, skill_id};
use hearth_core::{Registry, builtin};
use serde_json::{Value, json};

const TOOLS: usize = 1000;
const ROUNDS: usize = 50;

fn tools_list_json() -> String {
    let tools: Vec<Value> = (0..TOOLS)
        .map(|i| {
            json!({
                "name": format!("tool_{i:04}"),
                "title": format!("Tool number {i}"),
                "description": format!("Does thing {i} with a record: looks it up, checks it, and reports what it found."),
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "description": "The record's id"},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                        "verbose": {"type": "boolean", "default": false}
                    },
                    "required": ["id"]
                },
                "annotations": {"readOnlyHint": i % 2 == 0}
            })
        })
        .collect();
    json!({"tools": tools}).to_string()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn time<T>(mut f: impl FnMut() -> T) -> f64 {
    let mut samples = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let t0 = Instant::now();
        black_box(f());
        samples.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    median(samples)
}

fn main() {
    let text = tools_list_json();
    let server = ServerId::new("bench").unwrap();

    let parse = time(|| {
        let v: Value = serde_json::from_str(&text).unwrap();
        let tools: Vec<Tool> = serde_json::from_value(v["tools"].clone()).unwrap();
        tools
    });

    let v: Value = serde_json::from_str(&text).unwrap();
    let listing = ToolListing {
        tools: serde_json::from_value(v["tools"].clone()).unwrap(),
        rejected: vec![],
    };
    let convert = time(|| catalog(&server, None, &listing));

    let cat = catalog(&server, None, &listing);
    assert_eq!(cat.skills.len(), TOOLS);
    let fresh = time(|| {
        let mut registry = builtin::registry().unwrap();
        let outcome = register(&mut registry, &cat);
        assert_eq!(outcome.added, TOOLS);
        registry
    });

    let mut registry: Registry = builtin::registry().unwrap();
    register(&mut registry, &cat);
    let refresh = time(|| {
        let outcome = register(&mut registry, &cat);
        assert_eq!(outcome.replaced, TOOLS);
    });

    let ids: Vec<_> = (0..TOOLS)
        .map(|i| skill_id(&server, &format!("tool_{i:04}")))
        .collect();
    let lookup =
        time(|| ids.iter().filter(|id| registry.get(id).is_some()).count()) * 1000.0 / TOOLS as f64;
    let scan = time(|| {
        registry
            .iter()
            .filter(|s| s.description.contains("record") && s.tags.iter().any(|t| t == "read-only"))
            .count()
    });

    println!("{TOOLS} MCP tools connected (median of {ROUNDS} rounds):");
    println!(
        "  parse the tools/list answer ({} KB)   : {parse:.3} ms",
        text.len() / 1024
    );
    println!("  convert tools to skills (catalog)     : {convert:.3} ms");
    println!("  register into a fresh registry        : {fresh:.3} ms");
    println!("  re-register (server refreshed its list): {refresh:.3} ms");
    println!("  look up one skill by id               : {lookup:.3} µs");
    println!("  scan all skills with a filter          : {scan:.3} ms");
    figure(
        &format!("{TOOLS} MCP tools: parse, convert and register, native"),
        parse + convert + fresh,
        "ms",
        None,
        &format!("median of {ROUNDS} rounds; re-register {refresh:.3} ms"),
    );
}
