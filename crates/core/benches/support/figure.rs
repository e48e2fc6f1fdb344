//! One figure for `cargo xtask bench`: a `BENCH {json}` line, which the
//! harness collects into target/bench/results.json and docs/benchmarks.md
//! (the fields are described in xtask/src/bench.rs).

/// Prints `name` = `value` `unit`, with an upper goal when there is one.
pub fn figure(name: &str, value: f64, unit: &str, goal_max: Option<f64>, detail: &str) {
    let mut v = serde_json::json!({"figure": name, "value": value, "unit": unit, "detail": detail});
    if let Some(max) = goal_max {
        v["goal"] = serde_json::json!({ "max": max });
    }
    println!("BENCH {v}");
}
