//! The agent loop driven natively: each case is a text script in
//! `agent_loop/NAME.txt`, played against the loop with a scripted model,
//! the real call path, calculator and discovery, and checked against the
//! transcript of what the loop did written below it (the runner and the
//! script format are in `agent_loop/script.rs`). Assertions a transcript
//! cannot express stay in code beside their case.

#[path = "agent_loop/script.rs"]
mod script;

use hearth_core::assistant::agent::{LoopConfig, LoopError};
use hearth_core::assistant::providers::{Protocol, Provider, ProviderConfig, preset};
use serde_json::Value;

use script::{App, check, new_loop};

#[test]
fn percent_question_discovers_the_calculator_then_answers() {
    check("percent_question_discovers_the_calculator_then_answers");
}

#[test]
fn parallel_calls_are_all_handed_out_and_may_finish_in_any_order() {
    check("parallel_calls_are_all_handed_out_and_may_finish_in_any_order");
}

#[test]
fn calls_to_unloaded_unknown_or_malformed_tools_are_refused_without_running() {
    check("calls_to_unloaded_unknown_or_malformed_tools_are_refused_without_running");
}

#[test]
fn disabled_loaded_skills_are_not_offered_or_run() {
    check("disabled_loaded_skills_are_not_offered_or_run");
}

#[test]
fn the_permission_layer_decides_and_a_denial_reaches_the_model() {
    // The model tries to approve its own call; nothing in the loop reads it.
    check("the_permission_layer_decides_and_a_denial_reaches_the_model");
}

#[test]
fn the_step_limit_stops_the_turn_and_continue_resumes_it() {
    check("the_step_limit_stops_the_turn_and_continue_resumes_it");
    let app = App::new();
    let (mut fresh, _) = new_loop(LoopConfig::default());
    assert_eq!(
        fresh.continue_after_limit(&app),
        Err(LoopError::NothingToContinue)
    );
}

#[test]
fn sending_while_busy_or_empty_is_refused() {
    let mut run = check("sending_while_busy_or_empty_is_refused");
    assert!(run.lp.conversation_mut().is_none());
}

#[test]
fn cancel_while_waiting_for_the_response() {
    // The late response is ignored.
    check("cancel_while_waiting_for_the_response");
}

#[test]
fn cancel_mid_stream_keeps_the_text_and_drops_unfinished_calls() {
    // The stopped reply keeps the token counts it had.
    check("cancel_mid_stream_keeps_the_text_and_drops_unfinished_calls");
}

#[test]
fn cancel_while_tools_run_gives_every_call_a_result() {
    // The call had already run; its real result is kept when it arrives.
    check("cancel_while_tools_run_gives_every_call_a_result");
}

#[test]
fn cancel_while_waiting_to_retry() {
    check("cancel_while_waiting_to_retry");
}

#[test]
fn rate_limits_wait_as_told_then_other_errors_end_the_turn_intact() {
    check("rate_limits_wait_as_told_then_other_errors_end_the_turn_intact");
}

#[test]
fn a_long_retry_after_is_not_waited_out_automatically() {
    check("a_long_retry_after_is_not_waited_out_automatically");
}

#[test]
fn network_failures_back_off_then_give_up() {
    // The next turn (e.g. "Try again" once the server is back) gets its
    // own quiet retries; the last turn's count does not carry over.
    check("network_failures_back_off_then_give_up");
}

#[test]
fn a_stream_cut_after_text_keeps_the_text_and_is_not_retried() {
    check("a_stream_cut_after_text_keeps_the_text_and_is_not_retried");
}

#[test]
fn stale_and_unknown_events_are_ignored() {
    check("stale_and_unknown_events_are_ignored");
}

#[test]
fn real_protocols_drive_the_loop() {
    // Real recorded streams through the real protocols. Each call runs
    // under the id Hearth minted; the model's own id stays on its record,
    // for the transcript. Claude calls the calculator before discovering
    // it: refused.
    check("real_protocols_drive_the_loop_openai");
    check("real_protocols_drive_the_loop_anthropic");
}

#[test]
fn each_accepted_call_gets_one_minted_id_and_the_model_gets_its_own_back() {
    // Local servers reuse ids like "call_0" within one reply. The refused
    // call has a minted id too: every record has one. The results come
    // back under Hearth's ids, in any order.
    let run = check("each_accepted_call_gets_one_minted_id_and_the_model_gets_its_own_back");
    // The next request echoes the model's ids, never Hearth's, in both
    // real protocols' bodies.
    let request = run.log.borrow()[1].clone();
    let openai = Provider::new(ProviderConfig::from_preset(
        preset("openai").unwrap(),
        "k",
        "m",
    ));
    let body: Value =
        serde_json::from_slice(openai.chat_request(&request).body.as_deref().unwrap()).unwrap();
    let messages = body["messages"].as_array().unwrap();
    let asked: Vec<&str> = messages
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let answered: Vec<&str> = messages
        .iter()
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    assert_eq!(asked, ["call_0", "call_0_1", "call_9"]);
    assert_eq!(answered, ["call_0", "call_0_1", "call_9"]);
    let anthropic = Provider::new(ProviderConfig::from_preset(
        preset("anthropic").unwrap(),
        "k",
        "m",
    ));
    let body: Value =
        serde_json::from_slice(anthropic.chat_request(&request).body.as_deref().unwrap()).unwrap();
    let blocks: Vec<&Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .collect();
    let uses: Vec<&str> = blocks
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    let results: Vec<&str> = blocks
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(uses, ["call_0", "call_0_1", "call_9"]);
    assert_eq!(results, ["call_0", "call_0_1", "call_9"]);
    assert!(!body.to_string().contains("hearth-"));
}

#[test]
fn a_repeated_or_missing_id_from_the_environment_is_made_unique() {
    // The next reply's calls are unique against the whole conversation,
    // and an environment that gives no id still yields one.
    check("a_repeated_or_missing_id_from_the_environment_is_made_unique");
}
