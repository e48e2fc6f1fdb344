//! The allowlist and denylist editor of a web skill in the Skills place.

use hearth_core::SkillDefinition;
use hearth_core::api::domains::{DomainLists, PatternLineError};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::runtime::use_runtime;

fn line_errors(errors: &[PatternLineError]) -> Vec<(usize, String)> {
    errors
        .iter()
        .map(|e| (e.line, e.error.to_string()))
        .collect()
}

/// The allowlist and denylist of one web skill, one pattern per line,
/// checked as they are typed and stored when saved.
#[component]
pub fn DomainListsEditor(skill: SkillDefinition) -> impl IntoView {
    let rt = use_runtime();
    let id = skill.id.to_string();
    let version = rt.web().version;
    let saved = {
        let rt = rt.clone();
        let id = id.clone();
        Memo::new(move |_| {
            version.track();
            rt.web().lists(&id)
        })
    };
    let initial = saved.get_untracked();
    let allow = RwSignal::new(initial.allow);
    let deny = RwSignal::new(initial.deny);
    let draft = Memo::new(move |_| DomainLists {
        allow: allow.get(),
        deny: deny.get(),
    });
    let errors = Memo::new(move |_| draft.get().policy().err().unwrap_or_default());
    let dirty = Memo::new(move |_| draft.get() != saved.get());
    let status: RwSignal<Option<(bool, String)>> = RwSignal::new(None);
    let summary = Memo::new(move |_| match saved.get().policy() {
        Ok(p) if p.is_empty() => "any domain".to_string(),
        Ok(p) => {
            let mut parts = Vec::new();
            if !p.allow.is_empty() {
                parts.push(format!("{} allowed", p.allow.len()));
            }
            if !p.deny.is_empty() {
                parts.push(format!("{} denied", p.deny.len()));
            }
            parts.join(" · ")
        }
        Err(_) => "needs fixing".to_string(),
    });
    let save = {
        let id = id.clone();
        move || {
            if !errors.get_untracked().is_empty() {
                return;
            }
            let web = rt.web();
            let id = id.clone();
            let lists = draft.get_untracked();
            spawn_local(async move {
                match web.save_lists(&id, lists).await {
                    Ok(()) => status.set(Some((
                        true,
                        "Saved. The next call uses these lists.".into(),
                    ))),
                    Err(e) => status.set(Some((false, format!("Not saved: {e}")))),
                }
            });
        }
    };
    let name = skill.name.clone();
    let list = move |which: &'static str,
                     label: &'static str,
                     help: &'static str,
                     value: RwSignal<String>| {
        let field_id = format!("{id}-{which}");
        let errors_id = format!("{field_id}-errors");
        let these = move || {
            let e = errors.get();
            line_errors(if which == "allow" { &e.allow } else { &e.deny })
        };
        let invalid = move || (!these().is_empty()).to_string();
        view! {
            <div class="domain-list">
                <label for=field_id.clone()>
                    <strong>{label}</strong>
                    <span class="muted">{help}</span>
                </label>
                <textarea
                    id=field_id.clone()
                    class="domain-input"
                    rows="4"
                    spellcheck="false"
                    autocomplete="off"
                    placeholder=if which == "allow" { "docs.rs\n*.wikipedia.org" } else { "ads.example.com\n=tracker.example" }
                    aria-label=format!("{label} for {name}")
                    aria-invalid=invalid
                    aria-describedby=errors_id.clone()
                    prop:value=move || value.get()
                    on:input=move |ev| {
                        value.set(event_target_value(&ev));
                        status.set(None);
                    }
                ></textarea>
                {move || {
                    let forms = hearth_core::api::domains::ascii_forms(&value.get());
                    (!forms.is_empty()).then(|| view! {
                        <ul class="ascii-forms muted" role="list" aria-label="Compared as">
                            {forms.into_iter().map(|(typed, ascii)| view! {
                                <li>{typed}" is compared as "<code>{ascii}</code></li>
                            }).collect_view()}
                        </ul>
                    })
                }}
                <ul class="line-errors" id=errors_id role="list">
                    {move || these().into_iter().map(|(line, message)| view! {
                        <li class="error"><span class="line-no">{format!("Line {line}")}</span>" "{message}</li>
                    }).collect_view()}
                </ul>
            </div>
        }
    };
    let save_click = save.clone();
    view! {
        <details class="domain-lists" data-skill=skill.id.to_string()>
            <summary>
                "Domain lists"
                <span class="chip">{move || summary.get()}</span>
            </summary>
            <p class="muted domain-help">
                "One per line. "<code>"example.com"</code>" covers its subdomains, "
                <code>"*.example.com"</code>" only the subdomains, "<code>"=example.com"</code>
                " only that host. International names may be typed as they read. Lines starting with "<code>"#"</code>" are comments. The denylist wins; with an allowlist, nothing else is reached."
            </p>
            <div class="domain-grid">
                {list("allow", "Allowlist", "Only these (empty: any domain)", allow)}
                {list("deny", "Denylist", "Never these", deny)}
            </div>
            <div class="domain-actions">
                <button
                    class="primary small"
                    disabled=move || !dirty.get() || !errors.get().is_empty()
                    on:click=move |_| save_click()
                >"Save lists"</button>
                <button
                    class="small"
                    disabled=move || !dirty.get()
                    on:click=move |_| {
                        let s = saved.get_untracked();
                        allow.set(s.allow);
                        deny.set(s.deny);
                        status.set(None);
                    }
                >"Revert"</button>
                {move || match status.get() {
                    Some((true, m)) => view! { <span class="saved" role="status">{m}</span> }.into_any(),
                    Some((false, m)) => view! { <span class="error" role="alert">{m}</span> }.into_any(),
                    None => {
                        let count = errors.get();
                        let n = count.allow.len() + count.deny.len();
                        (n > 0)
                            .then(|| view! { <span class="error">{format!("{n} line{} to fix before saving", if n == 1 { "" } else { "s" })}</span> })
                            .into_any()
                    }
                }}
            </div>
        </details>
    }
}
