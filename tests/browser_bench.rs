//! Browser benchmarks, printed as figures (never asserted). Built only
//! with `--features bench`; `cargo xtask bench` runs them:
//! - the call path's overhead per call in the browser — validation, the
//!   permission decision, the hooks and the IndexedDB log write — as the
//!   median time of a calculator call minus the median of the calculator
//!   alone;
//! - notes search over 10,000 notes.
#![cfg(all(target_arch = "wasm32", feature = "bench"))]

use hearth::runtime::Runtime;
use hearth::storage::{Db, current_schema};
use hearth_core::notes::{Notebook, sample_notes, search};
use hearth_core::{CallOrigin, SkillId};
use serde_json::json;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn now() -> f64 {
    web_sys::window().unwrap().performance().unwrap().now()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[wasm_bindgen_test]
async fn call_path_overhead_in_the_browser() {
    let _ = Db::delete_database("bench-call-path").await;
    let rt = Runtime::start(
        Db::open_with("bench-call-path", current_schema())
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    let id = SkillId::new("calculator").unwrap();
    let args = json!({"expression": "1+1"});
    for _ in 0..20 {
        rt.invoke(id.clone(), args.clone(), CallOrigin::User).await;
    }
    let mut full = Vec::new();
    for _ in 0..300 {
        let t = now();
        rt.invoke(id.clone(), args.clone(), CallOrigin::User).await;
        full.push(now() - t);
    }
    let clock = hearth::platform::local_clock();
    let mut alone = Vec::new();
    for _ in 0..300 {
        let t = now();
        let _ = hearth_core::calculator::run(&args, clock);
        alone.push(now() - t);
    }
    let (full, alone) = (median(full), median(alone));
    console_log!(
        "call path in the browser: median {full:.3} ms per calculator call, {alone:.3} ms of it the calculator; overhead {:.3} ms (goal <= 1 ms)",
        full - alone
    );
}

#[wasm_bindgen_test]
fn notes_search_over_ten_thousand_notes_in_the_browser() {
    let book = Notebook::new(sample_notes(10_000));
    let t = now();
    search(&book, "warm up", 1);
    let built = now() - t;
    let queries = [
        "garden budget",
        "lisbon",
        "tram museum",
        "meeting notes",
        "recipe",
        "kalbo",
    ];
    let mut samples = Vec::new();
    for i in 0..60 {
        let t = now();
        let hits = search(&book, queries[i % queries.len()], 10);
        samples.push(now() - t);
        assert!(hits.len() <= 10);
    }
    console_log!(
        "notes search over 10,000 notes in the browser: median {:.2} ms (goal <= 50 ms); the first search, which builds the index, took {built:.0} ms",
        median(samples)
    );
}
