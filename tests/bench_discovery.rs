//! Benchmark, not a test: `discover_skills` latency at 10,000 skills in
//! headless Chromium, on the same fixture catalog and queries as the
//! native bench (crates/core/benches/discovery.rs), then with 1,000 Agent
//! Skills packages added (the texts the native discovery bench wrote from
//! the real collections and their variants). Prints figures and asserts
//! nothing about time.
//!
//! `cargo xtask bench --only discovery-browser` runs it (after `cargo
//! bench -p hearth-core --bench discovery -- write-packages`, which writes
//! the package texts) as
//! `cargo test -p hearth --release --features bench --target wasm32-unknown-unknown --test bench_discovery -- --nocapture`.
#![cfg(all(target_arch = "wasm32", feature = "bench"))]

use hearth_core::discovery::{self, IndexedSkill, PackageText, SkillIndex};
use hearth_core::skill::permission::PermissionSettings;
use serde::Deserialize;
use wasm_bindgen_test::*;

/// The scaled catalog, shared with the native benches.
#[path = "../crates/core/tests/support/scaled.rs"]
mod scaled;
use scaled::scaled_catalog;

wasm_bindgen_test_configure!(run_in_browser);

const QUERIES: &str = include_str!("../crates/core/tests/fixtures/discovery/queries.json");
const HOLDOUT: &str = include_str!("../crates/core/tests/fixtures/discovery/queries_holdout.json");
const PACKAGE_QUERIES: &str =
    include_str!("../crates/core/tests/fixtures/discovery/packages/queries.json");
/// Written by `cargo bench -p hearth-core --bench discovery --
/// write-packages`, which the `discovery-browser` bench step runs first.
const PACKAGES: &str = include_str!("../target/skill-collections/bench-packages.json");

#[derive(Deserialize)]
struct Query {
    query: String,
}

fn now() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or_else(js_sys::Date::now)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn timed(
    index: &SkillIndex,
    queries: &[Query],
    enabled: &dyn Fn(&IndexedSkill) -> bool,
) -> (Vec<f64>, f64) {
    for q in queries {
        std::hint::black_box(discovery::discover(index, &q.query, None, enabled));
    }
    let rounds = 10;
    let mut samples = Vec::with_capacity(queries.len() * rounds);
    for _ in 0..rounds {
        for q in queries {
            let t = now();
            std::hint::black_box(discovery::discover(index, &q.query, None, enabled));
            samples.push(now() - t);
        }
    }
    samples.sort_by(f64::total_cmp);
    let mean = samples.iter().sum::<f64>() / samples.len() as f64;
    (samples, mean)
}

#[wasm_bindgen_test]
fn discover_skills_latency_with_1000_packages_and_10000_tools() {
    let mut index = SkillIndex::build(&scaled_catalog(10_000));
    let packages: Vec<PackageText> = serde_json::from_str(PACKAGES).expect("packages parse");
    let t = now();
    for p in &packages {
        index.upsert_package(p);
    }
    let add_ms = now() - t;
    let mut queries: Vec<Query> = serde_json::from_str(QUERIES).expect("queries parse");
    queries.extend(
        serde_json::from_str::<Vec<Query>>(PACKAGE_QUERIES).expect("package queries parse"),
    );
    let permissions = PermissionSettings::default();
    let enabled = |s: &IndexedSkill| permissions.is_indexed_enabled(s);
    let (samples, mean) = timed(&index, &queries, &enabled);
    let one = &packages[packages.len() / 2];
    let t = now();
    for _ in 0..100 {
        index.remove_package(&one.name);
        index.upsert_package(one);
    }
    let toggle_ms = (now() - t) / 100.0;
    console_log!(
        "  discover_skills in the browser with {} packages + 10,000 tools ({} queries x 10): median {:.3} ms  p95 {:.3} ms  max {:.3} ms  mean {:.3} ms  (adding the packages {add_ms:.0} ms; disable + enable one {toggle_ms:.3} ms; goal: median <= 2 ms)",
        packages.len(),
        queries.len(),
        percentile(&samples, 0.5),
        percentile(&samples, 0.95),
        samples[samples.len() - 1],
        mean,
    );
    console_log!(
        "BENCH {}",
        serde_json::json!({
            "figure": format!("discover_skills with {} packages + 10,000 tools in the browser, median", packages.len()),
            "value": percentile(&samples, 0.5),
            "unit": "ms",
            "goal": {"max": 2.0},
            "detail": format!("{} queries x 10; p95 {:.3} ms, mean {mean:.3} ms; adding the packages {add_ms:.0} ms; disable + enable one {toggle_ms:.3} ms",
                queries.len(), percentile(&samples, 0.95)),
        })
    );
}

#[wasm_bindgen_test]
fn discover_skills_latency_at_10000_skills() {
    let n = 10_000;
    let catalog = scaled_catalog(n);
    let t = now();
    let index = SkillIndex::build(&catalog);
    let build_ms = now() - t;
    let mut queries: Vec<Query> = serde_json::from_str(QUERIES).expect("queries parse");
    queries.extend(serde_json::from_str::<Vec<Query>>(HOLDOUT).expect("holdout parses"));
    // The app's filter: the person's permission settings (defaults here).
    let permissions = PermissionSettings::default();
    let enabled = |s: &IndexedSkill| permissions.is_indexed_enabled(s);
    for q in &queries {
        std::hint::black_box(discovery::discover(&index, &q.query, None, &enabled));
    }
    let rounds = 10;
    let mut samples = Vec::with_capacity(queries.len() * rounds);
    for _ in 0..rounds {
        for q in &queries {
            let t = now();
            std::hint::black_box(discovery::discover(&index, &q.query, None, &enabled));
            samples.push(now() - t);
        }
    }
    samples.sort_by(f64::total_cmp);
    // performance.now() is coarsened in browsers (5 µs here at best), so
    // the mean over all calls is printed too.
    let mean = samples.iter().sum::<f64>() / samples.len() as f64;
    console_log!(
        "  discover_skills in the browser at {} skills ({} queries x {rounds}): median {:.3} ms  p95 {:.3} ms  max {:.3} ms  mean {:.3} ms  (index build {build_ms:.0} ms; goal: median <= 2 ms)",
        index.len(),
        queries.len(),
        percentile(&samples, 0.5),
        percentile(&samples, 0.95),
        samples[samples.len() - 1],
        mean,
    );
    console_log!(
        "BENCH {}",
        serde_json::json!({
            "figure": format!("discover_skills at {} skills in the browser, median", index.len()),
            "value": percentile(&samples, 0.5),
            "unit": "ms",
            "goal": {"max": 2.0},
            "detail": format!("{} queries x {rounds}; p95 {:.3} ms, mean {mean:.3} ms; index build {build_ms:.0} ms",
                queries.len(), percentile(&samples, 0.95)),
        })
    );
}
