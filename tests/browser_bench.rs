//! Browser benchmarks, printed as figures (never asserted). Built only
//! with `--features bench`; `cargo xtask bench` runs them and collects the
//! `BENCH` lines:
//! - the call path's overhead per call in the browser — validation, the
//!   permission decision, the hooks and the IndexedDB log write — as the
//!   median time of a calculator call minus the median of the calculator
//!   alone, against its anchor in the same run: a bare IndexedDB put of a
//!   record of the same kind, in its own transaction, until it commits;
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

/// One figure for `cargo xtask bench` (see xtask/src/bench.rs).
fn figure(figure: &str, value: f64, unit: &str, goal_max: Option<f64>, detail: &str) {
    let mut v = json!({"figure": figure, "value": value, "unit": unit, "detail": detail});
    if let Some(max) = goal_max {
        v["goal"] = json!({ "max": max });
    }
    console_log!("BENCH {v}");
}

/// The anchor of the call path: the median time of a bare IndexedDB put
/// (a record shaped like an activity record, one readwrite transaction
/// each, until `complete`), in plain JavaScript.
async fn bare_indexeddb_put_ms(runs: u32) -> f64 {
    let body = r#"
      return (async () => {
        await new Promise((ok, err) => { const d = indexedDB.deleteDatabase('bench-bare-put'); d.onsuccess = ok; d.onerror = () => err(d.error); });
        const db = await new Promise((ok, err) => {
          const o = indexedDB.open('bench-bare-put', 1);
          o.onupgradeneeded = () => o.result.createObjectStore('activity', { keyPath: 'id' });
          o.onsuccess = () => ok(o.result);
          o.onerror = () => err(o.error);
        });
        const put = (i) => new Promise((ok, err) => {
          const tx = db.transaction('activity', 'readwrite');
          tx.objectStore('activity').put({
            id: `call-${i}`, skill: 'calculator', origin: 'user', arguments: { expression: '1+1' },
            result: { status: 'completed', content: [{ type: 'text', text: '2' }, { type: 'json', value: { expression: '1+1', result: '2' } }],
              decision: { outcome: 'allowed', by: 'policy', reason: 'core skills run without asking' }, started_at_ms: Date.now(), duration_ms: 0.1 },
          });
          tx.oncomplete = ok;
          tx.onerror = () => err(tx.error);
        });
        for (let i = 0; i < 20; i++) await put(i);
        const samples = [];
        for (let i = 0; i < RUNS; i++) { const t = performance.now(); await put(100 + i); samples.push(performance.now() - t); }
        db.close();
        samples.sort((a, b) => a - b);
        return samples[Math.floor(samples.length / 2)];
      })();
    "#
    .replace("RUNS", &runs.to_string());
    let f = js_sys::Function::new_no_args(&body);
    let promise: js_sys::Promise = f.call0(&wasm_bindgen::JsValue::NULL).unwrap().into();
    wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .unwrap()
        .as_f64()
        .unwrap()
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
    let put = bare_indexeddb_put_ms(300).await;
    console_log!(
        "call path in the browser: median {full:.3} ms per calculator call, {alone:.3} ms of it the calculator; overhead {:.3} ms; a bare IndexedDB put {put:.3} ms",
        full - alone
    );
    let overhead = full - alone;
    figure(
        "bare IndexedDB put, committed",
        put,
        "ms",
        None,
        "median of 300, one readwrite transaction each",
    );
    figure(
        "call path overhead in the browser",
        overhead,
        "ms",
        None,
        &format!(
            "median calculator call {full:.3} ms minus the calculator alone {alone:.3} ms; 300 calls"
        ),
    );
    console_log!(
        "BENCH {}",
        json!({"figure": "call path overhead vs bare IndexedDB put", "value": overhead / put,
               "unit": "×", "anchor": "bare IndexedDB put, committed"})
    );
    figure(
        "call path overhead beyond one IndexedDB commit",
        overhead - put,
        "ms",
        Some(1.0),
        "call path overhead minus the bare put, same run",
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
    let med = median(samples);
    console_log!(
        "notes search over 10,000 notes in the browser: median {med:.2} ms (goal <= 50 ms); the first search, which builds the index, took {built:.0} ms"
    );
    figure(
        "notes search over 10,000 notes in the browser",
        med,
        "ms",
        Some(50.0),
        &format!("median of 60 queries; the first search, which builds the index, {built:.0} ms"),
    );
}

/// Agent Skills import in the browser: scan and validate a folder of 200
/// packages (SKILL.md, a reference file, a tools.json and a script each),
/// store them in IndexedDB in one transaction, and load them back as the
/// app does at start-up.
#[wasm_bindgen_test]
async fn agent_skills_import_and_reload() {
    use hearth::agent_skills::{AgentSkills, PackageOrigin, scan_folder, store_outcome};
    use hearth_core::agent_skills::scan::SourceFile;
    const N: usize = 200;
    let mut files = Vec::new();
    for i in 0..N {
        let name = format!("skill-{i:04}");
        files.push(SourceFile::new(
            format!("lib/{name}/SKILL.md"),
            format!("---\nname: {name}\ndescription: >-\n  Skill number {i}: does one thing well.\n  Use it when the task mentions thing {i}.\nmetadata:\n  version: \"1.{i}\"\n---\n# Skill {i}\n\nStep one. Step two.\n"),
        ));
        files.push(SourceFile::new(
            format!("lib/{name}/references/REF.md"),
            "# Reference\n".repeat(40),
        ));
        files.push(SourceFile::new(
            format!("lib/{name}/tools.json"),
            format!(r#"[{{"name": "tool_{i}", "description": "Tool {i}", "inputSchema": {{"type": "object", "properties": {{"q": {{"type": "string"}}}}}}, "script": "scripts/t.py"}}]"#),
        ));
        files.push(SourceFile::new(
            format!("lib/{name}/scripts/t.py"),
            "print('{}')\n",
        ));
    }
    let _ = Db::delete_database("bench-agent-skills").await;
    let db = Db::open_with("bench-agent-skills", current_schema())
        .await
        .unwrap();
    let (skills, _) = AgentSkills::load(&db).await.unwrap();
    let t0 = now();
    let outcome = scan_folder(files, None);
    let t1 = now();
    let report = store_outcome(
        &skills,
        &db,
        outcome,
        |_| PackageOrigin::Folder { name: "lib".into() },
        0.0,
    )
    .await
    .unwrap();
    let t2 = now();
    let (reloaded, _) = AgentSkills::load(&db).await.unwrap();
    let t3 = now();
    console_log!(
        "agent skills import of {} packages ({} files): scan+validate {:.1} ms, store {:.1} ms, reload {:.1} ms ({} packages back)",
        report.imported.len(),
        N * 4,
        t1 - t0,
        t2 - t1,
        t3 - t2,
        reloaded.installed().len()
    );
    figure(
        "Agent Skills import of 200 packages in the browser (scan, validate, store)",
        t2 - t0,
        "ms",
        None,
        &format!(
            "scan+validate {:.1} ms, store {:.1} ms; reload {:.1} ms",
            t1 - t0,
            t2 - t1,
            t3 - t2
        ),
    );
}
