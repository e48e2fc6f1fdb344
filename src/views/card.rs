//! The result card: which skill ran, with what input, what came out, and
//! how long it took.

use hearth_core::activity::ActivityRecord;
use hearth_core::{Content, ToolStatus};
use leptos::prelude::*;
use serde_json::Value;

use crate::icons::Icon;
use crate::platform::format_time;

/// The input as people read it: a lone string argument is shown bare,
/// anything else as formatted JSON.
fn input_text(arguments: &Value) -> String {
    match arguments.as_object() {
        Some(map) if map.len() == 1 => match map.values().next() {
            Some(Value::String(s)) => s.clone(),
            _ => pretty(arguments),
        },
        _ => pretty(arguments),
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn status_label(status: ToolStatus) -> &'static str {
    match status {
        ToolStatus::Completed => "Completed",
        ToolStatus::Failed => "Failed",
        ToolStatus::Denied => "Denied",
        ToolStatus::InputRequired => "Needs input",
    }
}

fn output_text(record: &ActivityRecord) -> String {
    let r = &record.result;
    match r.status {
        ToolStatus::Completed => {
            let texts: Vec<String> = r
                .content
                .iter()
                .filter_map(|c| match c {
                    Content::Text { text } => Some(text.clone()),
                    _ => None,
                })
                .collect();
            if texts.is_empty() {
                r.json().map(pretty).unwrap_or_default()
            } else {
                texts.join("\n")
            }
        }
        ToolStatus::Failed | ToolStatus::Denied | ToolStatus::InputRequired => {
            r.error.clone().unwrap_or_default()
        }
    }
}

#[component]
pub fn ResultCard(record: ActivityRecord, #[prop(optional)] icon: String) -> impl IntoView {
    let status = record.result.status;
    let status_class = format!("status status-{}", status.as_str());
    let input = input_text(&record.arguments);
    let output = output_text(&record);
    let code = crate::views::code::code_output(&record);
    let code_input = crate::views::code::code_input(&record);
    let duration = hearth_core::display::duration(record.result.duration_ms);
    let time = format_time(record.result.started_at_ms);
    view! {
        <article class="card result-card" data-status=status.as_str() data-skill=record.skill_id.to_string()>
            <header class="card-head">
                <span class="card-icon"><Icon name=icon/></span>
                <span class="card-skill">{record.skill_name.clone()}</span>
                <span class=status_class>{status_label(status)}</span>
                <span class="card-meta">
                    <span class="card-duration" title="Duration">{duration}</span>
                    " · "
                    <time>{time}</time>
                </span>
            </header>
            <dl class="card-body">
                <dt>"Input"</dt>
                <dd>{match code_input {
                    Some(view) => view,
                    None => view! { <pre class="card-input">{input}</pre> }.into_any(),
                }}</dd>
                <dt>{if status == ToolStatus::Completed { "Output" } else { "Message" }}</dt>
                <dd>{match code {
                    Some(view) => view,
                    None => view! { <pre class="card-output">{output}</pre> }.into_any(),
                }}</dd>
            </dl>
        </article>
    }
}
