//! The Agent Skills panel: import SKILL.md packages (folder picker, file
//! input fallback, .zip/.skill archives, drag and drop), see what each
//! import found, and manage the installed packages — their warnings,
//! files, tools and resources, on/off, export, remove with undo — plus the
//! editor for skills written in Hearth.

use hearth_core::agent_skills::package::FileKind;
use hearth_core::agent_skills::virtual_skill::{
    EditorField, VirtualSkillDraft, VirtualToolDraft, build_virtual_skill, editor_field,
};
use hearth_core::agent_skills::{Problem, ScriptLanguage, Severity};
use leptos::ev::DragEvent;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::agent_skills::{
    self as adapter, ImportReport, Installed, PackageOrigin, StoredPackage, import_problem,
};
use crate::runtime::use_runtime;
use crate::shared::modal::Modal;
use crate::skill_import::{self, Incoming};

fn format_bytes(n: usize) -> String {
    if n < 1024 {
        format!("{n} B")
    } else if n < 1024 * 1024 {
        format!("{:.1} KB", n as f64 / 1024.0)
    } else {
        format!("{:.1} MB", n as f64 / (1024.0 * 1024.0))
    }
}

fn problem_line(p: &Problem) -> impl IntoView + use<> {
    let class = match p.severity {
        Severity::Error => "problem error",
        Severity::Warning => "problem warning",
    };
    view! {
        <li class=class>
            <span class="severity">{p.severity.as_str()}</span>
            " "
            <span>{p.to_string()}</span>
        </li>
    }
}

/// Something the person did that can be taken back.
#[derive(Clone, Debug, PartialEq)]
struct Notice {
    message: String,
    restore: Option<Installed>,
    error: bool,
}

#[component]
pub fn AgentSkillsPanel() -> impl IntoView {
    let rt = use_runtime();
    let version = rt.agent_skills().version;
    let report: RwSignal<Option<ImportReport>> = RwSignal::new(None);
    let busy = RwSignal::new(false);
    let dragging = RwSignal::new(false);
    let notice: RwSignal<Option<Notice>> = RwSignal::new(None);
    let editor: RwSignal<Option<(VirtualSkillDraft, Option<String>)>> = RwSignal::new(None);
    let folder_input = NodeRef::<leptos::html::Input>::new();
    // The fallback folder input: `webkitdirectory` makes it pick folders.
    Effect::new(move |_| {
        if let Some(input) = folder_input.get() {
            input.set_webkitdirectory(true);
        }
    });

    let run_import = {
        let rt = rt.clone();
        move |batches: futures::future::LocalBoxFuture<'static, Vec<Incoming>>| {
            let rt = rt.clone();
            busy.set(true);
            report.set(None);
            spawn_local(async move {
                let batches = batches.await;
                report.set(Some(skill_import::import(&rt, batches).await));
                busy.set(false);
            });
        }
    };

    let choose_folder = {
        let run_import = run_import.clone();
        move |_| {
            if !adapter::has_directory_picker() {
                if let Some(input) = folder_input.get() {
                    input.click();
                }
                return;
            }
            let run_import = run_import.clone();
            spawn_local(async move {
                match adapter::pick_directory().await {
                    Ok(handle) => run_import(Box::pin(async move {
                        skill_import::from_directory(&handle).await
                    })),
                    Err(adapter::ImportError::Cancelled) => {}
                    Err(e) => report.set(Some(ImportReport {
                        imported: Vec::new(),
                        rejected: vec![import_problem("", e.to_string())],
                    })),
                }
            });
        }
    };

    let on_files = {
        let run_import = run_import.clone();
        move |ev: leptos::ev::Event, folder: bool| {
            let input: web_sys::HtmlInputElement = event_target(&ev);
            let Some(list) = input.files() else { return };
            let list = adapter::list_files(&list);
            if list.is_empty() {
                return;
            }
            run_import(Box::pin(skill_import::from_input(list, folder)));
            // Reset later so choosing the same folder again re-imports it;
            // the FileList above is already held.
            input.set_value("");
        }
    };
    let on_folder = {
        let on_files = on_files.clone();
        move |ev| on_files(ev, true)
    };
    let on_archive = move |ev| on_files(ev, false);

    let on_drop = {
        let run_import = run_import.clone();
        move |ev: DragEvent| {
            ev.prevent_default();
            dragging.set(false);
            let dropped = skill_import::take_drop(&ev);
            if dropped.is_empty() {
                return;
            }
            run_import(Box::pin(skill_import::from_drop(dropped)));
        }
    };

    let packages = {
        let rt = rt.clone();
        move || {
            version.track();
            rt.agent_skills().installed()
        }
    };

    view! {
        <section
            class="agent-skills"
            class:dragging=move || dragging.get()
            aria-labelledby="agent-skills-title"
            on:dragover=move |ev: DragEvent| {
                ev.prevent_default();
                dragging.set(true);
            }
            on:dragleave=move |_| dragging.set(false)
            on:drop=on_drop
        >
            <div class="tier-head">
                <h2 id="agent-skills-title">
                    "Agent Skills packages"
                    <span class="count">{
                        let packages = packages.clone();
                        move || packages().len()
                    }</span>
                </h2>
                <div class="agent-skills-actions">
                    <button class="primary" on:click=choose_folder disabled=move || busy.get()>"Import folder"</button>
                    <label class="button" class:disabled=move || busy.get()>
                        "Import .zip"
                        <input
                            type="file"
                            class="visually-hidden"
                            accept=".zip,.skill"
                            multiple
                            aria-label="Import a skill archive"
                            on:change=on_archive
                        />
                    </label>
                    <button on:click=move |_| editor.set(Some((VirtualSkillDraft::default(), None)))>"New skill"</button>
                    <input
                        node_ref=folder_input
                        type="file"
                        class="visually-hidden"
                        multiple
                        aria-label="Import a skill folder"
                        on:change=on_folder
                    />
                </div>
            </div>
            <p class="tier-explanation">
                "SKILL.md packages (agentskills.io): instructions the assistant loads when a task matches, with their reference files, and tools that run in the sandbox. Drop a folder or a .zip here, or use the buttons. Files are kept in this browser, so skills work offline."
            </p>
            <Show when=move || busy.get()>
                <p class="import-progress" role="status"><span class="spinner" aria-hidden="true"></span>"Reading and checking the skills…"</p>
            </Show>
            {move || report.get().map(|r| view! { <ImportResult report=r on_close=Callback::new(move |_| report.set(None))/> })}
            {
                let packages = packages.clone();
                move || {
                    let list = packages();
                    if list.is_empty() {
                        view! {
                            <div class="drop-hint empty muted">
                                <p>"No skill packages yet. Drop a skill folder or a .zip here."</p>
                            </div>
                        }
                            .into_any()
                    } else {
                        view! {
                            <ul class="package-list">
                                {list
                                    .into_iter()
                                    .map(|item| view! { <PackageRow item=item notice=notice editor=editor/> })
                                    .collect_view()}
                            </ul>
                        }
                            .into_any()
                    }
                }
            }
            {move || notice.get().map(|n| view! { <NoticeBar notice=n target=notice/> })}
            {move || editor.get().map(|(draft, editing)| view! { <SkillEditor draft=draft editing=editing editor=editor notice=notice/> })}
        </section>
    }
}

#[component]
fn ImportResult(report: ImportReport, on_close: Callback<()>) -> impl IntoView {
    let imported = report.imported.len();
    let rejected = report
        .rejected
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .count();
    let summary = match (imported, rejected) {
        (0, _) => "Nothing was imported.".to_string(),
        (n, 0) => format!("Imported {n} skill{}.", if n == 1 { "" } else { "s" }),
        (n, r) => format!(
            "Imported {n} skill{}; {r} problem{} blocked the rest.",
            if n == 1 { "" } else { "s" },
            if r == 1 { "" } else { "s" }
        ),
    };
    view! {
        <div class="import-result" role="status" aria-label="Import result">
            <div class="import-result-head">
                <strong>{summary}</strong>
                <button class="icon-button" aria-label="Dismiss import result" on:click=move |_| on_close.run(())>"×"</button>
            </div>
            <ul class="import-packages">
                {report
                    .imported
                    .into_iter()
                    .map(|(name, replaced, problems)| {
                        let key = name.clone();
                        view! {
                            <li class="import-package" data-package=key>
                                <span class="ok">"✓"</span>
                                " "
                                <strong>{name}</strong>
                                {if replaced { " updated" } else { " added" }}
                                {(!problems.is_empty()).then(|| view! {
                                    <ul class="problems">{problems.iter().map(problem_line).collect_view()}</ul>
                                })}
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
            {(!report.rejected.is_empty()).then(|| view! {
                <div class="import-rejected">
                    <p>"Not imported:"</p>
                    <ul class="problems">{report.rejected.iter().map(problem_line).collect_view()}</ul>
                </div>
            })}
        </div>
    }
}

#[component]
fn NoticeBar(notice: Notice, target: RwSignal<Option<Notice>>) -> impl IntoView {
    let rt = use_runtime();
    let class = if notice.error { "toast error" } else { "toast" };
    view! {
        <div class=class role="status">
            <span>{notice.message.clone()}</span>
            {notice.restore.clone().map(|item| {
                let rt = rt.clone();
                view! {
                    <button class="small" on:click=move |_| {
                        let rt = rt.clone();
                        let item = item.clone();
                        spawn_local(async move {
                            let name = item.record.name.clone();
                            match rt.agent_skills().save(&rt.db(), vec![item]).await {
                                Ok(()) => {
                                    rt.sync_agent_skills();
                                    target.set(Some(Notice { message: format!("Restored {name}."), restore: None, error: false }));
                                }
                                Err(e) => target.set(Some(Notice { message: format!("Could not restore {name}: {e}"), restore: None, error: true })),
                            }
                        });
                    }>"Undo"</button>
                }
            })}
            <button class="icon-button" aria-label="Dismiss" on:click=move |_| target.set(None)>"×"</button>
        </div>
    }
}

#[component]
fn PackageRow(
    item: Installed,
    notice: RwSignal<Option<Notice>>,
    editor: RwSignal<Option<(VirtualSkillDraft, Option<String>)>>,
) -> impl IntoView {
    let rt = use_runtime();
    let Installed { record, package } = item;
    let StoredPackage {
        name,
        enabled,
        origin,
        problems,
        ..
    } = record;
    let warnings = problems.len();
    let total = package.total_bytes();
    let file_count = package.files.len();
    let props = package.properties.clone();
    let draft = match &origin {
        PackageOrigin::Editor { draft } => Some(draft.clone()),
        PackageOrigin::Folder { .. } | PackageOrigin::Archive { .. } => None,
    };
    let set_enabled = {
        let rt = rt.clone();
        let name = name.clone();
        move |on: bool| {
            let rt = rt.clone();
            let name = name.clone();
            spawn_local(async move {
                if let Err(e) = rt.agent_skills().set_enabled(&rt.db(), &name, on).await {
                    notice.set(Some(Notice {
                        message: format!("The change was not saved: {e}"),
                        restore: None,
                        error: true,
                    }));
                }
                rt.sync_agent_skills();
            });
        }
    };
    let remove = {
        let rt = rt.clone();
        let name = name.clone();
        move |_| {
            let rt = rt.clone();
            let name = name.clone();
            spawn_local(async move {
                match rt.agent_skills().remove(&rt.db(), &name).await {
                    Ok(removed) => {
                        rt.sync_agent_skills();
                        // Its tools' permission settings go with it, so a
                        // later package with a tool of the same name starts
                        // from the defaults, not from what was set here.
                        let tools: Vec<String> = removed
                            .iter()
                            .flat_map(|r| r.package.tools.iter().map(|t| t.name.clone()))
                            .collect();
                        let _ = rt
                            .update_permissions(move |p| p.skills.retain(|k, _| !tools.contains(k)))
                            .await;
                        notice.set(Some(Notice {
                            message: format!("Removed {name}."),
                            restore: removed,
                            error: false,
                        }));
                    }
                    Err(e) => notice.set(Some(Notice {
                        message: format!("{name} was not removed: {e}"),
                        restore: None,
                        error: true,
                    })),
                }
            });
        }
    };
    let export = {
        let package = package.clone();
        move |_| {
            if let Err(e) = skill_import::export_zip(&package) {
                notice.set(Some(Notice {
                    message: format!("Export failed: {e}"),
                    restore: None,
                    error: true,
                }));
            }
        }
    };
    let label = name.clone();
    let edit_name = name.clone();
    view! {
        <li class="package" data-package=name.clone() class:disabled=!enabled>
            <div class="package-main">
                <div class="skill-title">
                    <strong>{name.clone()}</strong>
                    <code class="muted">{format!("/activate_skill {name}")}</code>
                    {(warnings > 0).then(|| view! {
                        <span class="badge warning">{format!("{warnings} warning{}", if warnings == 1 { "" } else { "s" })}</span>
                    })}
                    {(!props.model_invocable()).then(|| view! { <span class="badge">"only by you"</span> })}
                </div>
                <p class="skill-description">{props.description.clone()}</p>
                <p class="muted small">
                    {format!("{} · {file_count} file{} · {}", origin.describe(), if file_count == 1 { "" } else { "s" }, format_bytes(total))}
                    {props.license.clone().map(|l| format!(" · license {l}"))}
                </p>
                {(warnings > 0).then(|| view! {
                    <ul class="problems">{problems.iter().map(problem_line).collect_view()}</ul>
                })}
                <details class="skill-more">
                    <summary>{format!("Files ({file_count})")}</summary>
                    <ul class="file-list">
                        {package.files.iter().map(|f| {
                            let kind = match f.kind { FileKind::Text => "text", FileKind::Binary => "binary, never sent to a model" };
                            view! { <li><code>{f.path.clone()}</code>" "<span class="muted">{format!("{} · {kind}", format_bytes(f.bytes.len()))}</span></li> }
                        }).collect_view()}
                    </ul>
                </details>
                {(!package.tools.is_empty()).then(|| view! {
                    <details class="skill-more" open>
                        <summary>{format!("Tools ({})", package.tools.len())}</summary>
                        <ul class="tool-list">
                            {package.tools.iter().map(|t| view! {
                                <li><code>{t.name.clone()}</code>" "<span>{t.description.clone()}</span>" "<span class="muted">{format!("({} · {})", t.language.as_str(), t.script)}</span></li>
                            }).collect_view()}
                        </ul>
                    </details>
                })}
                {(!package.resources.is_empty()).then(|| view! {
                    <details class="skill-more" open>
                        <summary>{format!("Resources ({})", package.resources.len())}</summary>
                        <ul class="tool-list">
                            {package.resources.iter().map(|r| view! {
                                <li><code>{r.uri.clone()}</code>" "<span>{r.description.clone()}</span></li>
                            }).collect_view()}
                        </ul>
                    </details>
                })}
            </div>
            <div class="skill-controls">
                <label class="switch">
                    <input
                        type="checkbox"
                        role="switch"
                        aria-label=format!("Enable skill package {label}")
                        prop:checked=enabled
                        on:change=move |ev| set_enabled(event_target_checked(&ev))
                    />
                    <span>"Enabled"</span>
                </label>
                {draft.map(|d| view! {
                    <button class="small" on:click=move |_| editor.set(Some((d.clone(), Some(edit_name.clone()))))>"Edit"</button>
                })}
                <button class="small" on:click=export>"Export .zip"</button>
                <button class="small danger" aria-label=format!("Remove {name}") on:click=remove>"Remove"</button>
            </div>
        </li>
    }
}

fn field_problems(problems: &[Problem], field: EditorField) -> Vec<Problem> {
    problems
        .iter()
        .filter(|p| editor_field(p) == Some(field))
        .cloned()
        .collect()
}

fn problems_view(list: Vec<Problem>) -> impl IntoView {
    (!list.is_empty())
        .then(|| view! { <ul class="problems field-problems">{list.iter().map(problem_line).collect_view()}</ul> })
}

#[component]
fn SkillEditor(
    draft: VirtualSkillDraft,
    editing: Option<String>,
    editor: RwSignal<Option<(VirtualSkillDraft, Option<String>)>>,
    notice: RwSignal<Option<Notice>>,
) -> impl IntoView {
    let rt = use_runtime();
    let draft = RwSignal::new(draft);
    let outcome = Memo::new(move |_| {
        let d = draft.get();
        let o = build_virtual_skill(&d);
        (o.is_valid(), o.problems)
    });
    let saving = RwSignal::new(false);
    let close = Callback::new(move |_| editor.set(None));
    let problems_for =
        move |field: EditorField| move || problems_view(field_problems(&outcome.get().1, field));
    let other_problems = move || {
        let list: Vec<Problem> = outcome
            .get()
            .1
            .into_iter()
            .filter(|p| editor_field(p).is_none())
            .collect();
        problems_view(list)
    };
    let save = {
        let editing = editing.clone();
        move |_| {
            let d = draft.get_untracked();
            let built = build_virtual_skill(&d);
            if !built.is_valid() {
                return;
            }
            let Some(package) = built.package else { return };
            let rt = rt.clone();
            let editing = editing.clone();
            saving.set(true);
            spawn_local(async move {
                let skills = rt.agent_skills();
                let name = package.name().to_string();
                let item = Installed {
                    record: StoredPackage {
                        name: name.clone(),
                        folder: package.folder.clone(),
                        enabled: true,
                        origin: PackageOrigin::Editor { draft: d },
                        imported_ms: js_sys::Date::now(),
                        problems: built.problems,
                        files: package.files.iter().map(|f| f.path.clone()).collect(),
                    },
                    package,
                };
                let mut result = skills.save(&rt.db(), vec![item]).await;
                // A renamed skill replaces the one it was.
                if result.is_ok()
                    && let Some(old) = editing.filter(|old| *old != name)
                {
                    result = skills.remove(&rt.db(), &old).await.map(|_| ());
                }
                rt.sync_agent_skills();
                saving.set(false);
                match result {
                    Ok(()) => {
                        editor.set(None);
                        notice.set(Some(Notice {
                            message: format!("Saved {name}."),
                            restore: None,
                            error: false,
                        }));
                    }
                    Err(e) => notice.set(Some(Notice {
                        message: format!("{name} was not saved: {e}"),
                        restore: None,
                        error: true,
                    })),
                }
            });
        }
    };
    let title = if editing.is_some() {
        "Edit skill"
    } else {
        "New skill"
    };
    view! {
        <Modal labelledby="skill-editor-title" class="skill-editor" on_escape=close dismissable=false>
            <h2 id="skill-editor-title">{title}</h2>
            <p class="muted">"Written as a SKILL.md package, checked against the Agent Skills rules as you type."</p>
            <label class="field">
                <span>"Name"</span>
                <input
                    data-autofocus
                    aria-label="Skill name"
                    placeholder="lowercase-with-hyphens"
                    prop:value=move || draft.with(|d| d.name.clone())
                    on:input=move |ev| draft.update(|d| d.name = event_target_value(&ev))
                />
            </label>
            {problems_for(EditorField::Name)}
            <label class="field">
                <span>"Description"</span>
                <textarea
                    rows="2"
                    aria-label="Skill description"
                    placeholder="What the skill does and when to use it"
                    prop:value=move || draft.with(|d| d.description.clone())
                    on:input=move |ev| draft.update(|d| d.description = event_target_value(&ev))
                ></textarea>
            </label>
            {problems_for(EditorField::Description)}
            <label class="field">
                <span>"Instructions (Markdown)"</span>
                <textarea
                    rows="8"
                    aria-label="Skill instructions"
                    prop:value=move || draft.with(|d| d.body.clone())
                    on:input=move |ev| draft.update(|d| d.body = event_target_value(&ev))
                ></textarea>
            </label>
            {problems_for(EditorField::Body)}
            <h3>"Tools"</h3>
            <p class="muted small">"Optional. Each tool is a script that reads its JSON input and prints its result; it runs in the sandbox."</p>
            {move || {
                let count = draft.with(|d| d.tools.len());
                (0..count).map(|i| view! { <ToolEditor index=i draft=draft outcome=outcome/> }).collect_view()
            }}
            <button class="small" on:click=move |_| draft.update(|d| d.tools.push(VirtualToolDraft {
                name: String::new(),
                description: String::new(),
                language: ScriptLanguage::Python,
                source: "import json, sys\ndata = json.load(sys.stdin)\nprint(json.dumps(data))\n".into(),
                input_schema: serde_json::json!({"type": "object", "properties": {}}),
            }))>"Add tool"</button>
            {other_problems}
            <div class="modal-actions">
                <span class="muted" role="status">{move || {
                    let (valid, problems) = outcome.get();
                    let errors = problems.iter().filter(|p| p.severity == Severity::Error).count();
                    if valid { "Valid skill".to_string() } else { format!("{errors} problem{} to fix", if errors == 1 { "" } else { "s" }) }
                }}</span>
                <button on:click=move |_| close.run(())>"Cancel"</button>
                <button class="primary" disabled=move || !outcome.get().0 || saving.get() on:click=save>"Save skill"</button>
            </div>
        </Modal>
    }
}

#[component]
fn ToolEditor(
    index: usize,
    draft: RwSignal<VirtualSkillDraft>,
    outcome: Memo<(bool, Vec<Problem>)>,
) -> impl IntoView {
    let schema_text = RwSignal::new(draft.with_untracked(|d| {
        d.tools
            .get(index)
            .map(|t| serde_json::to_string_pretty(&t.input_schema).unwrap_or_default())
            .unwrap_or_default()
    }));
    let schema_error: RwSignal<Option<String>> = RwSignal::new(None);
    let get = move |f: fn(&VirtualToolDraft) -> String| {
        move || draft.with(|d| d.tools.get(index).map(f).unwrap_or_default())
    };
    let set = move |f: fn(&mut VirtualToolDraft, String)| {
        move |ev: leptos::ev::Event| {
            let v = event_target_value(&ev);
            draft.update(|d| {
                if let Some(t) = d.tools.get_mut(index) {
                    f(t, v)
                }
            })
        }
    };
    let tool_problems = move || {
        let list: Vec<Problem> = outcome
            .get()
            .1
            .into_iter()
            .filter(|p| matches!(editor_field(p), Some(EditorField::Tool(i, _)) if i == index))
            .collect();
        problems_view(list)
    };
    view! {
        <fieldset class="tool-editor">
            <legend>{format!("Tool {}", index + 1)}</legend>
            <label class="field"><span>"Name"</span>
                <input aria-label=format!("Tool {} name", index + 1) prop:value=get(|t| t.name.clone()) on:input=set(|t, v| t.name = v)/>
            </label>
            <label class="field"><span>"Description"</span>
                <input aria-label=format!("Tool {} description", index + 1) prop:value=get(|t| t.description.clone()) on:input=set(|t, v| t.description = v)/>
            </label>
            <label class="field"><span>"Language"</span>
                <select
                    aria-label=format!("Tool {} language", index + 1)
                    prop:value=get(|t| t.language.as_str().to_string())
                    on:change=set(|t, v| t.language = if v == ScriptLanguage::JavaScript.as_str() { ScriptLanguage::JavaScript } else { ScriptLanguage::Python })
                >
                    {ScriptLanguage::ALL.iter().map(|l| view! { <option value=l.as_str()>{l.as_str()}</option> }).collect_view()}
                </select>
            </label>
            <label class="field"><span>"Script"</span>
                <textarea class="code" rows="5" aria-label=format!("Tool {} script", index + 1) prop:value=get(|t| t.source.clone()) on:input=set(|t, v| t.source = v)></textarea>
            </label>
            <label class="field"><span>"Input schema (JSON)"</span>
                <textarea
                    class="code"
                    rows="4"
                    aria-label=format!("Tool {} input schema", index + 1)
                    prop:value=move || schema_text.get()
                    on:input=move |ev| {
                        let text = event_target_value(&ev);
                        match serde_json::from_str::<serde_json::Value>(&text) {
                            Ok(v) => {
                                schema_error.set(None);
                                draft.update(|d| if let Some(t) = d.tools.get_mut(index) { t.input_schema = v });
                            }
                            Err(e) => schema_error.set(Some(format!("not JSON yet: {e}"))),
                        }
                        schema_text.set(text);
                    }
                ></textarea>
            </label>
            {move || schema_error.get().map(|e| view! { <p class="inline-error">{e}</p> })}
            {tool_problems}
            <button class="small danger" on:click=move |_| draft.update(|d| { if index < d.tools.len() { d.tools.remove(index); } })>"Remove tool"</button>
        </fieldset>
    }
}
