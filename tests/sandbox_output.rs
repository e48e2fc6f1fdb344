//! Code runs in a real browser: the sandbox starts from the app alone (this
//! page is served by the test runner, with no headers for it and no
//! sandbox page) and keeps a snippet off the network; whatever a snippet
//! printed or returned is shown on its card as text, never as markup, and
//! the files it wrote are offered for download.
#![cfg(target_arch = "wasm32")]

use hearth::views::cards::ResultCard;
use hearth_core::builtin::code::output::skill_result;
use hearth_core::builtin::code::protocol::{ArtifactRef, Language, RunOutcome, RunStatus};
use hearth_core::skill::activity::ActivityRecord;
use hearth_core::{CallOrigin, SkillId, ToolCall, ToolResult, ToolStatus};
use leptos::prelude::*;
use serde_json::json;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const MARKUP: &str = "<img src=x onerror=\"document.body.dataset.owned='yes'\"><script>document.body.dataset.owned='yes'</script><b>bold</b>";

fn host() -> web_sys::HtmlElement {
    let document = web_sys::window().unwrap().document().unwrap();
    let div = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&div).unwrap();
    div.unchecked_into()
}

fn record() -> ActivityRecord {
    let call = ToolCall {
        id: "c".into(),
        skill_id: SkillId::new("run_python").unwrap(),
        arguments: json!({"code": "print('<b>')\nx = 1", "files": ["project/data.csv"], "input": {"a": 1}}),
        conversation_id: None,
        origin: CallOrigin::User,
    };
    let outcome = RunOutcome {
        status: RunStatus::Completed,
        stdout: format!("{MARKUP}\n"),
        stdout_dropped: 2048,
        stderr: MARKUP.into(),
        stderr_dropped: 0,
        value: Some(json!(MARKUP)),
        value_repr: Some(format!("'{MARKUP}'")),
        error: None,
        artifacts: vec![ArtifactRef {
            name: "page.html".into(),
            size: 5,
            buffer: 0,
        }],
        artifacts_dropped: vec![],
        duration_ms: 1.0,
        stopped: None,
    };
    let out = skill_result(Language::Python, &outcome, &[b"<p>x".to_vec()], 1000).unwrap();
    let mut result = ToolResult::for_call(&call, ToolStatus::Completed);
    result.content = out.content;
    ActivityRecord::new(&call, None, &result)
}

#[wasm_bindgen_test]
async fn the_sandbox_starts_from_the_app_alone_and_has_no_network() {
    use hearth::sandbox::{CodeRun, Sandbox};
    let sandbox = Sandbox::new();
    let r = sandbox
        .run(CodeRun::new(Language::Javascript, "6 * 7"))
        .await
        .unwrap();
    assert_eq!(
        (r.outcome.status, r.outcome.value),
        (RunStatus::Completed, Some(json!(42)))
    );
    // The runner's own server, which serves this page, is one request away.
    let origin = web_sys::window().unwrap().location().origin().unwrap();
    let r = sandbox
        .run(CodeRun::new(
            Language::Javascript,
            format!("await fetch('{origin}/')"),
        ))
        .await
        .unwrap();
    assert_eq!(r.outcome.status, RunStatus::Error);
    let error = r.outcome.error.unwrap();
    assert_eq!(
        (error.name.as_str(), error.message.as_str()),
        ("TypeError", "Failed to fetch")
    );
}

#[wasm_bindgen_test]
fn what_a_run_prints_is_text_never_markup() {
    let el = host();
    let _handle = leptos::mount::mount_to(el.clone(), || view! { <ResultCard record=record()/> });
    let text = |sel: &str| {
        el.query_selector(sel)
            .unwrap()
            .unwrap_or_else(|| panic!("{sel} rendered"))
            .text_content()
            .unwrap()
    };
    assert_eq!(text(".code-stdout"), format!("{MARKUP}\n"));
    assert_eq!(text(".code-stderr"), MARKUP);
    assert_eq!(text(".code-value"), format!("'{MARKUP}'"));
    assert_eq!(
        text(".code-truncated"),
        "[… output truncated: 2.0 KB more not shown]"
    );
    // Nothing the run printed became an element.
    for tag in ["img", "script", "b"] {
        assert!(
            el.query_selector(&format!(".code-output {tag}"))
                .unwrap()
                .is_none(),
            "a <{tag}> was created"
        );
    }
    let owned = web_sys::window()
        .unwrap()
        .document()
        .unwrap()
        .body()
        .unwrap()
        .get_attribute("data-owned");
    assert_eq!(owned, None);
    // The HTML file is offered for download, not shown.
    assert_eq!(text(".code-file-name"), "page.html");
    assert!(el.query_selector("iframe").unwrap().is_none());
    // The input shows the code as written, with what it was handed.
    assert_eq!(text(".code-source"), "print('<b>')\nx = 1");
    let meta: Vec<String> = {
        let list = el.query_selector_all(".code-meta").unwrap();
        (0..list.length())
            .map(|i| list.item(i).unwrap().text_content().unwrap())
            .collect()
    };
    assert_eq!(meta, vec!["Files project/data.csv", "Input {\"a\":1}"]);
}

#[wasm_bindgen_test]
fn the_code_panel_says_why_python_cannot_be_interrupted() {
    use hearth::views::settings::code::{InterruptNote, interrupt_note};
    let no_headers = "this host sends no cross-origin isolation headers (COOP and COEP)";
    // (sandbox isolated, page isolated, worker controls, worker possible)
    let cases = [
        ((None, false, false, true), "unknown"),
        ((Some(true), true, true, true), "available"),
        (
            (Some(false), true, true, true),
            "the browser did not give the sandbox",
        ),
        ((Some(false), false, true, true), "after reload"),
        ((Some(false), false, false, true), "not active yet"),
        (
            (Some(false), false, false, false),
            "needs https or localhost",
        ),
    ];
    for ((sandbox, page, controls, possible), want) in cases {
        let note = interrupt_note(sandbox, page, controls, possible);
        let said = match &note {
            InterruptNote::Unknown => "unknown".to_string(),
            InterruptNote::Available => "available".to_string(),
            InterruptNote::AfterReload => "after reload".to_string(),
            InterruptNote::Unavailable(why) => why.to_string(),
        };
        assert!(said.contains(want), "{note:?}");
        if matches!(note, InterruptNote::Unavailable(_)) && !page {
            assert!(said.starts_with(no_headers), "{said}");
        }
    }
}

/// Every code call is in the Activity log, committed, by the time its
/// result comes back — a value, a thrown error, a run stopped at its time
/// limit, and input the skill refuses alike: a second connection to the
/// database, opened only after the call returned, reads each record with
/// its input, result, duration and permission decision.
#[wasm_bindgen_test]
async fn every_code_call_is_committed_to_the_log_before_its_result_returns() {
    use hearth::runtime::Runtime;
    use hearth::storage::Db;
    use hearth_core::stores::{ACTIVITY, current_schema};
    const NAME: &str = "sandbox-calls-committed";
    let _ = Db::delete_database(NAME).await;
    let rt = Runtime::start(Db::open_with(NAME, current_schema()).await.unwrap())
        .await
        .unwrap();
    let id = SkillId::new("run_javascript").unwrap();
    let cases = [
        (json!({"code": "6 * 7"}), ToolStatus::Completed, "42"),
        (
            json!({"code": "throw new RangeError('out of range')"}),
            ToolStatus::Failed,
            "out of range",
        ),
        (
            json!({"code": "while (true) {}", "timeout_ms": 300}),
            ToolStatus::Failed,
            "",
        ),
        (json!({"code": 5}), ToolStatus::Failed, "invalid input"),
    ];
    for (args, status, says) in cases {
        let (call, result) = rt.invoke(id.clone(), args.clone(), CallOrigin::User).await;
        assert_eq!(result.status, status, "{args}: {:?}", result.error);
        let other = Db::open_with(NAME, current_schema()).await.unwrap();
        let record: ActivityRecord = other
            .get(ACTIVITY, &call.id)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{args}: no committed record"));
        other.close();
        assert_eq!(record.arguments, args);
        assert_eq!(record.result, result, "{args}: the record is the result");
        assert!(record.result.decision.is_some(), "{args}: no decision");
        assert!(record.result.duration_ms >= 0.0);
        let shown = format!("{:?} {:?}", record.result.content, record.result.error);
        assert!(shown.contains(says), "{args}: {shown}");
    }
}
