//! Browser benchmarks, printed as figures (never asserted). Built only
//! with `--features bench`; `cargo xtask bench` runs them and collects the
//! `BENCH` lines:
//! - the call path's overhead per call in the browser — validation, the
//!   permission decision, the hooks and the IndexedDB log write — as the
//!   median time of a calculator call minus the median of the calculator
//!   alone, against its anchor in the same run: a bare IndexedDB put of a
//!   record of the same kind, in its own transaction, until it commits;
//! - the warm JavaScript round trip through the app's real call path
//!   (`Runtime::invoke` of `run_javascript`), layer by layer, against a
//!   bare Worker's `postMessage`, a bare sandboxed iframe relaying to a
//!   Worker and a bare IndexedDB put, in the same run;
//! - notes search over 10,000 notes.
#![cfg(all(target_arch = "wasm32", feature = "bench"))]

use hearth::runtime::Runtime;
use hearth::storage::Db;
use hearth_core::builtin::notes::{Notebook, sample_notes, search};
use hearth_core::stores::{ACTIVITY, USAGE, current_schema};
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
/// each, until `complete`), in plain JavaScript, with `pause_ms` between
/// puts as the figure it anchors has between calls. The pause matters: a
/// commit after the page sat idle for 40 ms takes about twice as long as
/// one straight after the last, so an anchor taken back to back would
/// charge that difference to the call path.
async fn bare_indexeddb_put_ms(runs: u32, pause_ms: u32) -> f64 {
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
        const pause = () => new Promise((ok) => setTimeout(ok, PAUSE));
        for (let i = 0; i < RUNS; i++) {
          if (PAUSE > 0) await pause();
          const t = performance.now(); await put(100 + i); samples.push(performance.now() - t);
        }
        db.close();
        samples.sort((a, b) => a - b);
        return samples[Math.floor(samples.length / 2)];
      })();
    "#
    .replace("RUNS", &runs.to_string())
    .replace("PAUSE", &pause_ms.to_string());
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
        let _ = hearth_core::builtin::calculator::run(&args, clock);
        alone.push(now() - t);
    }
    let (full, alone) = (median(full), median(alone));
    let put = bare_indexeddb_put_ms(300, 0).await;
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

/// Runs `body` (the body of an async JavaScript function) and returns the
/// list of numbers it resolves to.
async fn js_samples(body: &str) -> Vec<f64> {
    let f = js_sys::Function::new_no_args(&format!("return (async () => {{ {body} }})();"));
    let promise: js_sys::Promise = f.call0(&wasm_bindgen::JsValue::NULL).unwrap().into();
    let list: js_sys::Array = wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .unwrap()
        .into();
    list.iter().map(|v| v.as_f64().unwrap()).collect()
}

/// How long a call waits between warm runs: a person, or a model's next
/// step, never calls back to back, and the sandbox readies the next run's
/// worker in that time.
const IDLE_BETWEEN_RUNS_MS: u32 = 40;

/// The warm JavaScript round trip, layer by layer, against its anchors in
/// the same run: a bare Worker's `postMessage` round trip, a bare
/// sandboxed iframe relaying to a Worker (the shape of the sandbox with
/// none of its checks), a bare IndexedDB put until it commits; then the
/// app's sandbox alone (`Sandbox::run`), and the whole call path
/// (`Runtime::invoke` of `run_javascript`: lookup, input checks,
/// permission, the sandbox, output checks and the Activity record
/// committed).
#[wasm_bindgen_test]
async fn warm_javascript_round_trip_in_the_browser() {
    use gloo_timers::future::TimeoutFuture;
    use hearth::sandbox::CodeRun;
    use hearth_core::builtin::code::protocol::Language;
    const RUNS: usize = 60;
    let idle = IDLE_BETWEEN_RUNS_MS;

    // Anchors: a running Worker answering postMessage, and a fresh Worker
    // per run as the sandbox starts one for each snippet.
    let bare = js_samples(&format!(
        r#"
        const src = 'onmessage = (m) => postMessage(String(eval(m.data)));';
        const url = URL.createObjectURL(new Blob([src], {{ type: 'text/javascript' }}));
        const w = new Worker(url);
        const ping = () => new Promise((ok) => {{ const t = performance.now(); w.onmessage = () => ok(performance.now() - t); w.postMessage('1+1'); }});
        const pause = () => new Promise((ok) => setTimeout(ok, {idle}));
        for (let i = 0; i < 10; i++) await ping();
        const out = [];
        for (let i = 0; i < {RUNS}; i++) {{ await pause(); out.push(await ping()); }}
        w.terminate();
        return out;
    "#
    ))
    .await;
    // A bare opaque-origin iframe (srcdoc, sandbox="allow-scripts") that
    // keeps a Worker ready and relays each request to it over a
    // MessagePort: the sandbox's shape without its checks or policy proof.
    let relay = js_samples(&format!(
        r#"
        const page = `<script>
          const src = 'onmessage = (m) => postMessage(String(eval(m.data)));';
          const url = URL.createObjectURL(new Blob([src], {{ type: 'text/javascript' }}));
          let w = new Worker(url);
          onmessage = (e) => {{
            const port = e.ports[0];
            port.onmessage = (m) => {{
              const cur = w;
              cur.onmessage = (r) => {{ port.postMessage(r.data); cur.terminate(); w = new Worker(url); }};
              cur.postMessage(m.data);
            }};
            port.postMessage('ready');
          }};
          parent.postMessage('hello', '*');
        <\/script>`;
        const frame = document.createElement('iframe');
        frame.setAttribute('sandbox', 'allow-scripts');
        frame.srcdoc = page;
        const hello = new Promise((ok) => addEventListener('message', (e) => {{ if (e.source === frame.contentWindow) ok(); }}));
        document.body.appendChild(frame);
        await hello;
        const ch = new MessageChannel();
        const port = ch.port1;
        const ready = new Promise((ok) => {{ port.onmessage = ok; }});
        frame.contentWindow.postMessage('connect', '*', [ch.port2]);
        await ready;
        const once = () => new Promise((ok) => {{ const t = performance.now(); port.onmessage = () => ok(performance.now() - t); port.postMessage('1+1'); }});
        const pause = () => new Promise((ok) => setTimeout(ok, {idle}));
        for (let i = 0; i < 10; i++) {{ await pause(); await once(); }}
        const out = [];
        for (let i = 0; i < {RUNS}; i++) {{ await pause(); out.push(await once()); }}
        frame.remove();
        return out;
    "#
    ))
    .await;
    let put = bare_indexeddb_put_ms(RUNS as u32, idle).await;

    let _ = Db::delete_database("bench-round-trip").await;
    let rt = Runtime::start(
        Db::open_with("bench-round-trip", current_schema())
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    let sandbox = rt.sandbox();
    sandbox.warm_up().await.unwrap();

    // The app's sandbox alone: its host, the page's checks, the Worker.
    let mut alone = Vec::new();
    let mut alone_inner = Vec::new();
    for i in 0..RUNS + 10 {
        TimeoutFuture::new(idle).await;
        let t = now();
        let r = sandbox
            .run(CodeRun::new(Language::Javascript, "1+1"))
            .await
            .unwrap();
        if i >= 10 {
            alone.push(now() - t);
            alone_inner.push(r.outcome.duration_ms);
        }
    }

    // The whole call path.
    let id = SkillId::new("run_javascript").unwrap();
    let args = json!({"code": "1+1"});
    let mut whole = Vec::new();
    let mut ran = Vec::new();
    let mut inner = Vec::new();
    for i in 0..RUNS + 10 {
        TimeoutFuture::new(idle).await;
        let t = now();
        let (_, result) = rt.invoke(id.clone(), args.clone(), CallOrigin::User).await;
        let elapsed = now() - t;
        assert_eq!(
            result.status,
            hearth_core::ToolStatus::Completed,
            "{:?}",
            result.error
        );
        if i >= 10 {
            whole.push(elapsed);
            ran.push(result.duration_ms);
            inner.push(
                result
                    .content
                    .iter()
                    .find_map(|c| match c {
                        hearth_core::Content::Json { value } => value["run_ms"].as_f64(),
                        _ => None,
                    })
                    .unwrap_or(f64::NAN),
            );
        }
    }
    // The log's write alone, as the call path makes it (the call's record
    // and its skill's usage count in one transaction), against the same
    // write with each put awaited before the next and the transaction left
    // to commit by itself, interleaved.
    let (mut at_once, mut one_by_one) = (Vec::new(), Vec::new());
    let db = rt.db();
    for i in 0..RUNS + 10 {
        let record = json!({"id": format!("bench-{i}"), "skill_id": "run_javascript", "skill_name": "Run JavaScript",
            "origin": "user", "arguments": {"code": "1+1"},
            "result": {"id": format!("bench-{i}"), "skill_id": "run_javascript", "status": "completed",
                "content": [{"type": "text", "text": "2"}], "started_at_ms": 0.0, "duration_ms": 1.0}});
        let usage = json!({"skill_id": "run_javascript", "count": i, "last_used_ms": 0.0});
        let entries = [
            (ACTIVITY, Db::value(&record).unwrap()),
            (USAGE, Db::value(&usage).unwrap()),
        ];
        TimeoutFuture::new(idle).await;
        let t = now();
        db.put_across(&entries).await.unwrap();
        let a = now() - t;
        TimeoutFuture::new(idle).await;
        let t = now();
        db.apply_raw(&entries, &[]).await.unwrap();
        let b = now() - t;
        if i >= 10 {
            at_once.push(a);
            one_by_one.push(b);
        }
    }
    let (at_once, one_by_one) = (median(at_once), median(one_by_one));
    figure(
        "the log's write: a call's record and usage count, committed",
        at_once,
        "ms",
        None,
        &format!(
            "median of {RUNS}; both puts placed at once, commit asked at once; the same write with each put awaited and no commit asked: {one_by_one:.3} ms, interleaved"
        ),
    );
    let (bare, relay) = (median(bare), median(relay));
    let (alone, alone_inner) = (median(alone), median(alone_inner));
    let (whole, ran, inner) = (median(whole), median(ran), median(inner));
    console_log!(
        "the log's write: {at_once:.3} ms placed at once, {one_by_one:.3} ms one put at a time"
    );
    console_log!(
        "warm JS 1+1 (median of {RUNS}, {idle} ms apart): bare Worker postMessage {bare:.3} ms; bare sandboxed iframe relaying to a fresh Worker {relay:.3} ms; bare IndexedDB put {put:.3} ms; \
         Sandbox::run {alone:.3} ms ({alone_inner:.3} ms inside the page); Runtime::invoke {whole:.3} ms, of which the run (duration_ms) {ran:.3} ms, inside the page {inner:.3} ms; \
         hooks and the log commit {:.3} ms",
        whole - ran
    );
    figure(
        "bare Worker: postMessage round trip to a running Worker",
        bare,
        "ms",
        None,
        &format!("median of {RUNS}, {idle} ms apart"),
    );
    figure(
        "bare sandboxed iframe relaying to a fresh Worker",
        relay,
        "ms",
        None,
        &format!("median of {RUNS}: srcdoc iframe, MessagePort, a Worker kept ready per run"),
    );
    figure(
        "bare IndexedDB put, committed, with the calls' pause between puts",
        put,
        "ms",
        None,
        &format!("median of {RUNS}, {idle} ms apart, one readwrite transaction each"),
    );
    figure(
        "warm JS 1+1 through the app's sandbox (Sandbox::run)",
        alone,
        "ms",
        None,
        &format!("median of {RUNS}; {alone_inner:.3} ms inside the sandbox page"),
    );
    figure(
        "warm JS 1+1 through the whole call path, log committed (Runtime::invoke)",
        whole,
        "ms",
        Some(5.0),
        &format!(
            "median of {RUNS}; the run {ran:.3} ms, inside the page {inner:.3} ms; hooks and log {:.3} ms",
            whole - ran
        ),
    );
    console_log!(
        "BENCH {}",
        json!({"figure": "warm JS call path vs bare Worker postMessage", "value": whole / bare,
               "unit": "×", "goal": {"max": 3.0}, "anchor": "bare Worker: postMessage round trip to a running Worker"})
    );
    figure(
        "warm JS call path beyond the sandbox run and one IndexedDB commit",
        whole - alone - put,
        "ms",
        Some(1.0),
        "Runtime::invoke minus Sandbox::run minus the bare put with the same pause, same run",
    );
}
