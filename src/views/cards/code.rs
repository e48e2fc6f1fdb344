//! Code runs on a result card: the code as run, its output (stdout,
//! stderr, the value, files to download), and Stop while it runs.
//!
//! Everything the sandbox returned is shown as text: output goes into
//! `<pre>` as text nodes and files are offered as downloads, so nothing a
//! snippet prints can become markup in the app.

use hearth_core::builtin::code::output::{
    CodeReport, artifact_bytes, is_previewable_image, truncation_notice,
};
use hearth_core::builtin::code::protocol::Language;
use hearth_core::skill::activity::ActivityRecord;
use hearth_core::{Content, ToolStatus};
use leptos::prelude::*;

use crate::runtime::use_runtime;

/// The card's input for a code run: the code as written, then the files
/// and input it was handed; `None` for other records.
pub fn code_input(record: &ActivityRecord) -> Option<AnyView> {
    Language::from_skill_id(record.skill_id.as_str())?;
    let args = hearth_core::builtin::code::RunArgs::parse(&record.arguments).ok()?;
    let files = (!args.files.is_empty()).then(|| args.files.join(", "));
    let input = args
        .input
        .as_ref()
        .map(|v| serde_json::to_string(v).unwrap_or_default());
    let timeout = args
        .timeout_ms
        .map(|t| hearth_core::util::display::duration(t as f64));
    Some(
        view! {
            <div class="code-input">
                <pre class="card-input code-source">{args.code}</pre>
                {files.map(|f| view! { <p class="code-meta"><span class="code-label">"Files"</span>" "{f}</p> })}
                {input.map(|i| view! { <p class="code-meta"><span class="code-label">"Input"</span>" "<code>{i}</code></p> })}
                {timeout.map(|t| view! { <p class="code-meta"><span class="code-label">"Time limit"</span>" "{t}</p> })}
            </div>
        }
        .into_any(),
    )
}

/// The card body for a completed code run, or `None` for other records.
pub fn code_output(record: &ActivityRecord) -> Option<AnyView> {
    Language::from_skill_id(record.skill_id.as_str())?;
    if record.result.status != ToolStatus::Completed {
        return None;
    }
    let report: CodeReport = record.result.content.iter().find_map(|c| match c {
        Content::Json { value } => serde_json::from_value(value.clone()).ok(),
        _ => None,
    })?;
    let files: Vec<ArtifactFile> = record
        .result
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Artifact {
                name,
                mime_type,
                data,
            } => Some(ArtifactFile {
                size: report
                    .artifacts
                    .iter()
                    .find(|a| &a.name == name)
                    .map(|a| a.size)
                    .unwrap_or(0),
                name: name.clone(),
                mime: mime_type.clone(),
                data: data.clone(),
            }),
            _ => None,
        })
        .collect();
    Some(view! { <CodeOutput report=report files=files/> }.into_any())
}

/// A file a run wrote, as kept with its result.
#[derive(Clone, Debug, PartialEq)]
pub struct ArtifactFile {
    pub name: String,
    pub mime: String,
    /// Base64.
    pub data: String,
    pub size: u64,
}

fn blob_url(bytes: &[u8], mime: &str) -> Option<String> {
    let blob = crate::platform::blob(bytes, mime).ok()?;
    web_sys::Url::create_object_url_with_blob(&blob).ok()
}

/// Offers a file a run wrote (base64 `data`) as a download, through the
/// app's one download helper; never opens it in the app.
pub fn download(name: &str, mime: &str, data: &str) -> Result<(), String> {
    let bytes = artifact_bytes(data)?;
    crate::platform::download_bytes(name, mime, &bytes)
}

#[component]
pub fn CodeOutput(report: CodeReport, files: Vec<ArtifactFile>) -> impl IntoView {
    let empty = report.stdout.is_empty()
        && report.stderr.is_empty()
        && report.value_text().is_none()
        && files.is_empty();
    let stdout_notice =
        (report.stdout_dropped > 0).then(|| truncation_notice(report.stdout_dropped));
    let stderr_notice =
        (report.stderr_dropped > 0).then(|| truncation_notice(report.stderr_dropped));
    let value = report.value_text();
    let dropped = report.artifacts_dropped.clone();
    view! {
        <div class="code-output" data-language=format!("{:?}", report.language).to_lowercase()>
            {(!report.stdout.is_empty() || stdout_notice.is_some()).then(|| view! {
                <section class="code-stream" aria-label="Output">
                    <pre class="code-stdout">{report.stdout.clone()}</pre>
                    {stdout_notice.map(|n| view! { <p class="code-truncated">{n}</p> })}
                </section>
            })}
            {(!report.stderr.is_empty() || stderr_notice.is_some()).then(|| view! {
                <section class="code-stream code-stream-err" aria-label="Errors and warnings">
                    <span class="code-label">"stderr"</span>
                    <pre class="code-stderr">{report.stderr.clone()}</pre>
                    {stderr_notice.map(|n| view! { <p class="code-truncated">{n}</p> })}
                </section>
            })}
            {value.map(|v| view! {
                <section class="code-value-row" aria-label="Value">
                    <span class="code-label">"Value"</span>
                    <pre class="code-value">{v}</pre>
                </section>
            })}
            {(!files.is_empty()).then(|| view! {
                <ul class="code-files" aria-label="Files written">
                    {files.into_iter().map(|file| view! { <ArtifactRow file=file/> }).collect_view()}
                </ul>
            })}
            {(!dropped.is_empty()).then(|| view! {
                <p class="code-truncated">"Not returned: "{dropped.join("; ")}</p>
            })}
            {empty.then(|| view! { <p class="muted code-empty">"(no output)"</p> })}
        </div>
    }
}

#[component]
fn ArtifactRow(file: ArtifactFile) -> impl IntoView {
    let ArtifactFile {
        name,
        mime,
        data,
        size,
    } = file;
    let preview = if is_previewable_image(&mime) {
        artifact_bytes(&data).ok().and_then(|b| blob_url(&b, &mime))
    } else {
        None
    };
    if let Some(url) = preview.clone() {
        on_cleanup(move || {
            let _ = web_sys::Url::revoke_object_url(&url);
        });
    }
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let label = format!("Download {name}");
    let (n, m, d) = (name.clone(), mime.clone(), data);
    view! {
        <li class="code-file" data-file=name.clone()>
            {preview.map(|url| view! { <img class="code-preview" src=url alt=name.clone()/> })}
            <span class="code-file-name"><crate::icons::Icon name="file"/>{name.clone()}</span>
            <span class="muted">{hearth_core::util::display::bytes(size as f64)}" · "{mime}</span>
            <button type="button" aria-label=label on:click=move |_| {
                if let Err(e) = download(&n, &m, &d) {
                    error.set(Some(e));
                }
            }>"Download"</button>
            <Show when=move || error.get().is_some()>
                <span class="inline-error">{move || error.get().unwrap_or_default()}</span>
            </Show>
        </li>
    }
}

/// Stop for the code run the call `call_id` started, while it runs: on a
/// tool card whose call is a code run still under way.
#[component]
pub fn StopRun(call_id: String) -> impl IntoView {
    let rt = use_runtime();
    let running = rt.sandbox().running();
    let id = call_id.clone();
    let under_way =
        move || running.with(|r| r.iter().any(|x| x.call_id.as_deref() == Some(id.as_str())));
    view! {
        <Show when=under_way>
            <button type="button" class="small stop" title="Stop this run" on:click={
                let rt = rt.clone();
                let call_id = call_id.clone();
                move |_| {
                    rt.sandbox().stop_call(&call_id);
                }
            }><crate::icons::Icon name="stop"/>" Stop"</button>
        </Show>
    }
}
