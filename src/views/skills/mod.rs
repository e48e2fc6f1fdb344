//! Skills: the registry grouped by tier, with what each tier means. Each
//! skill can be switched on or off and given an approval setting; "always
//! allow" grants show here and can be revoked.

pub mod agent_skills;
pub mod domains;

use hearth_core::skill::permission::ApprovalSetting;
use hearth_core::{SkillDefinition, Tier};
use leptos::ev::KeyboardEvent;
use leptos::html;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;

use crate::icons::Icon;
use crate::runtime::{Runtime, use_runtime};
use crate::shared::offline::OfflineNote;
use crate::views::skills::domains::DomainListsEditor;

fn relative_time(ms: f64) -> String {
    let ago = (js_sys::Date::now() - ms).max(0.0) / 1000.0;
    if ago < 60.0 {
        "just now".into()
    } else if ago < 3600.0 {
        format!("{} min ago", (ago / 60.0) as u64)
    } else if ago < 86_400.0 {
        format!("{} h ago", (ago / 3600.0) as u64)
    } else {
        hearth_core::util::display::count((ago / 86_400.0) as usize, "day ago", "days ago")
    }
}

/// Stores a permission change, reporting failure in `error`.
fn change(
    rt: &Runtime,
    error: RwSignal<Option<String>>,
    f: impl FnOnce(&mut hearth_core::skill::permission::PermissionSettings) + 'static,
) {
    let rt = rt.clone();
    spawn_local(async move {
        if let Err(e) = rt.update_permissions(f).await {
            error.set(Some(format!("The change was not saved: {e}")));
        }
    });
}

/// What can take the keyboard inside a skill's row.
const FOCUSABLE: &str = "a[href], button, input, select, textarea, summary";

/// The rows of a skill list that the filter leaves shown.
fn shown_rows(list: &web_sys::Element) -> Vec<web_sys::Element> {
    let Ok(rows) = list.query_selector_all(":scope > li.skill:not([hidden])") else {
        return Vec::new();
    };
    (0..rows.length())
        .filter_map(|i| rows.item(i))
        .filter_map(|n| n.dyn_into::<web_sys::Element>().ok())
        .collect()
}

/// Roving focus: of `list`'s rows, only `active`'s controls are in the
/// Tab order, so Tab passes a tier's list in one row's stops and the
/// arrow keys move between its skills.
fn rove(list: &web_sys::Element, active: Option<&web_sys::Element>) {
    let Ok(rows) = list.query_selector_all(":scope > li.skill") else {
        return;
    };
    for i in 0..rows.length() {
        let Some(row) = rows
            .item(i)
            .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
        else {
            continue;
        };
        let on = active.is_some_and(|a| a == &row);
        let Ok(controls) = row.query_selector_all(FOCUSABLE) else {
            continue;
        };
        for j in 0..controls.length() {
            if let Some(c) = controls
                .item(j)
                .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
            {
                let _ = if on {
                    c.remove_attribute("tabindex")
                } else {
                    c.set_attribute("tabindex", "-1")
                };
            }
        }
    }
}

/// The controls of a skill's row that the keyboard lands on, in order of
/// preference: the switch, the approval menu, the details.
const LANDING: [&str; 3] = [
    "input[role=switch]:not(:disabled)",
    "select",
    "details.skill-more > summary",
];

/// The first control of `row` to put the keyboard on: the one like
/// `like`, else the first of [`LANDING`] the row has. Each kind is tried
/// in turn, not as one selector list, which would match in document order
/// (a web skill's domain lists come before its switch).
fn control_in(
    row: &web_sys::Element,
    like: Option<&web_sys::Element>,
) -> Option<web_sys::HtmlElement> {
    let kind = like.and_then(|l| {
        LANDING
            .into_iter()
            .find(|sel| l.matches(sel).unwrap_or(false))
    });
    kind.into_iter()
        .chain(LANDING)
        .find_map(|sel| row.query_selector(sel).ok().flatten())
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
}

/// Moves the keyboard to the first shown skill, from the filter box.
fn focus_first_skill() {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(lists) = doc.query_selector_all(".skills .skill-list") else {
        return;
    };
    for i in 0..lists.length() {
        let Some(list) = lists
            .item(i)
            .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
        else {
            continue;
        };
        if let Some(row) = shown_rows(&list).into_iter().next() {
            rove(&list, Some(&row));
            if let Some(c) = control_in(&row, None) {
                let _ = c.focus();
            }
            return;
        }
    }
}

#[component]
pub fn SkillsView() -> impl IntoView {
    let rt = use_runtime();
    let registry_version = rt.versions().registry;
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let filter = RwSignal::new(String::new());
    let none_match = {
        let rt = rt.clone();
        move || {
            registry_version.track();
            let q = filter.get();
            !q.trim().is_empty() && !rt.registry().iter().any(|s| s.matches_filter(&q))
        }
    };
    view! {
        <section class="page skills" aria-labelledby="skills-title">
            <header class="page-head">
                <h1 id="skills-title">"Skills"</h1>
                <p class="muted">"Everything Hearth can do, by how much trust it needs. Switch skills on or off and choose when they ask."</p>
                <div class="skill-filter">
                    <input type="search" class="wide-search" aria-label="Find a skill"
                        aria-describedby="skill-filter-hint"
                        placeholder="Find a skill by name, tag or what it does"
                        prop:value=move || filter.get()
                        on:input=move |ev| filter.set(event_target_value(&ev))
                        on:keydown=move |ev: KeyboardEvent| {
                            if matches!(ev.key().as_str(), "Enter" | "ArrowDown") {
                                ev.prevent_default();
                                focus_first_skill();
                            }
                        }/>
                    <p class="muted field-hint" id="skill-filter-hint">
                        <kbd>"Enter"</kbd>" goes to the first skill found; in a list, "<kbd>"↑"</kbd>" "<kbd>"↓"</kbd>" move between skills and "<kbd>"Tab"</kbd>" to the next list."
                    </p>
                </div>
            </header>
            <Show when=none_match>
                <p class="empty muted" role="status">{move || format!("No skill matches “{}”.", filter.get().trim())}</p>
            </Show>
            <Show when=move || error.get().is_some()>
                <p class="error" role="alert">{move || error.get().unwrap_or_default()}</p>
            </Show>
            // Agent Skills (SKILL.md packages): import and manage them.
            <crate::views::skills::agent_skills::AgentSkillsPanel/>
            {move || {
                registry_version.track();
                let skills: Vec<SkillDefinition> = rt.registry().iter().cloned().collect();
                Tier::ALL
                    .into_iter()
                    .map(|tier| {
                        let in_tier: Vec<SkillDefinition> = skills.iter().filter(|s| s.tier == tier).cloned().collect();
                        view! { <TierGroup tier=tier skills=in_tier error=error filter=filter/> }
                    })
                    .collect_view()
            }}
        </section>
    }
}

#[component]
fn TierGroup(
    tier: Tier,
    skills: Vec<SkillDefinition>,
    error: RwSignal<Option<String>>,
    filter: RwSignal<String>,
) -> impl IntoView {
    let rt = use_runtime();
    let empty = skills.is_empty();
    // Hidden while a filter leaves none of its skills.
    let filtered_out = {
        let skills = skills.clone();
        move || {
            let q = filter.get();
            !q.trim().is_empty() && !skills.iter().any(|s| s.matches_filter(&q))
        }
    };
    let list = NodeRef::<html::Ul>::new();
    // The Tab order follows the filter: the first shown row, unless the
    // keyboard is already in a shown one.
    Effect::new(move |_| {
        filter.track();
        request_animation_frame(move || {
            let Some(list) = list.get_untracked() else {
                return;
            };
            let list: web_sys::Element = list.into();
            let rows = shown_rows(&list);
            let focused = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.active_element())
                .and_then(|e| e.closest("li.skill").ok().flatten());
            let active = focused
                .filter(|f| rows.contains(f))
                .or_else(|| rows.first().cloned());
            rove(&list, active.as_ref());
        });
    });
    let on_keydown = move |ev: KeyboardEvent| {
        let key = ev.key();
        if !matches!(key.as_str(), "ArrowDown" | "ArrowUp" | "Home" | "End") {
            return;
        }
        let Some(target) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        else {
            return;
        };
        // Menus and text fields use these keys themselves.
        let typing = target
            .matches("select, textarea, input:not([type=checkbox])")
            .unwrap_or(false);
        let Some(list) = list.get_untracked() else {
            return;
        };
        let list: web_sys::Element = list.into();
        let Some(row) = target.closest("li.skill").ok().flatten() else {
            return;
        };
        let row_node: &web_sys::Node = &row;
        if typing || !list.contains(Some(row_node)) {
            return;
        }
        let rows = shown_rows(&list);
        let Some(at) = rows.iter().position(|r| r == &row) else {
            return;
        };
        let to = match key.as_str() {
            "ArrowDown" => (at + 1).min(rows.len() - 1),
            "ArrowUp" => at.saturating_sub(1),
            "Home" => 0,
            _ => rows.len() - 1,
        };
        ev.prevent_default();
        rove(&list, Some(&rows[to]));
        if let Some(c) = control_in(&rows[to], Some(&target)) {
            let _ = c.focus();
        }
    };
    let on_focusin = move |ev: leptos::ev::FocusEvent| {
        let (Some(list), Some(row)) = (
            list.get_untracked(),
            ev.target()
                .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                .and_then(|t| t.closest("li.skill").ok().flatten()),
        ) else {
            return;
        };
        let list: web_sys::Element = list.into();
        rove(&list, Some(&row));
    };
    let version = rt.versions().permissions;
    // The switch is on only while one of the tier's skills can run.
    let tier_on = {
        let rt = rt.clone();
        let skills = skills.clone();
        move || {
            version.track();
            rt.data().permissions.borrow().tier_in_use(tier, &skills)
        }
    };
    let has_switch = matches!(tier, Tier::Network | Tier::Integration);
    let toggle_tier = {
        let rt = rt.clone();
        let skills = skills.clone();
        move |on: bool| {
            let skills = skills.clone();
            change(&rt, error, move |p| p.allow_tier(tier, on, &skills))
        }
    };
    view! {
        <section class="tier" data-tier=tier.as_str() aria-labelledby=format!("tier-{}", tier.as_str()) hidden=filtered_out>
            <div class="tier-head">
                <h2 id=format!("tier-{}", tier.as_str())>
                    {tier.label()}
                    <span class="count">{skills.len()}</span>
                </h2>
                {has_switch.then(|| {
                    let tier_on = tier_on.clone();
                    view! {
                        <label class="switch">
                            <input
                                type="checkbox"
                                role="switch"
                                aria-label=format!("Allow {} skills", tier.label().to_lowercase())
                                prop:checked=tier_on
                                on:change=move |ev| toggle_tier(event_target_checked(&ev))
                            />
                            <span>{format!("Allow {} skills", tier.label().to_lowercase())}</span>
                        </label>
                    }
                })}
            </div>
            <p class="tier-explanation">{tier.explanation()}</p>
            {(tier == Tier::Network).then(|| view! { <OfflineNote/> })}
            {if empty {
                view! { <p class="empty muted">"No skills in this tier yet."</p> }.into_any()
            } else {
                view! {
                    <ul class="skill-list" node_ref=list on:keydown=on_keydown on:focusin=on_focusin
                        aria-label=format!("{} skills", tier.label())>
                        {skills.into_iter().map(|s| view! { <SkillRow skill=s error=error filter=filter/> }).collect_view()}
                    </ul>
                }
                    .into_any()
            }}
        </section>
    }
}

#[component]
fn SkillRow(
    skill: SkillDefinition,
    error: RwSignal<Option<String>>,
    filter: RwSignal<String>,
) -> impl IntoView {
    let rt = use_runtime();
    let hidden = {
        let skill = skill.clone();
        move || !skill.matches_filter(&filter.get())
    };
    let id = skill.id.to_string();
    let v = rt.versions();
    let settings = {
        let rt = rt.clone();
        let id = id.clone();
        move || {
            v.permissions.track();
            rt.data().permissions.borrow().skill(&id)
        }
    };
    // Whether the skill can run: its own switch and its tier's.
    let tier_allowed = {
        let rt = rt.clone();
        let tier = skill.tier;
        move || {
            v.permissions.track();
            rt.data().permissions.borrow().tier_enabled(tier)
        }
    };
    let enabled = {
        let settings = settings.clone();
        let tier_allowed = tier_allowed.clone();
        let def = skill.clone();
        move || tier_allowed() && settings().is_enabled(&def)
    };
    let tier_off_hint = format!("{} skills are switched off above", skill.tier.label());
    let approval = {
        let settings = settings.clone();
        move || {
            settings()
                .approval
                .map(|a| a.as_str().to_string())
                .unwrap_or_default()
        }
    };
    let always = {
        let settings = settings.clone();
        move || settings().approval == Some(ApprovalSetting::AlwaysAllow)
    };
    let usage = {
        let rt = rt.clone();
        let id = id.clone();
        move || {
            v.usage.track();
            rt.data().usage.borrow().get(&id).cloned()
        }
    };
    let set_enabled = {
        let rt = rt.clone();
        let id = id.clone();
        let default = skill.default_enabled;
        move |on: bool| {
            let id = id.clone();
            change(&rt, error, move |p| {
                p.set_enabled(&id, (on != default).then_some(on))
            })
        }
    };
    let set_approval = {
        let rt = rt.clone();
        let id = id.clone();
        move |value: String| {
            let id = id.clone();
            change(&rt, error, move |p| {
                p.set_approval(&id, ApprovalSetting::parse(&value))
            })
        }
    };
    let revoke = set_approval.clone();
    let default_approval =
        if skill.requires_approval || matches!(skill.tier, Tier::Network | Tier::Integration) {
            "Default (ask)"
        } else {
            "Default (don't ask)"
        };
    let input_schema = serde_json::to_string_pretty(&skill.input_schema).unwrap_or_default();
    let output_schema = serde_json::to_string_pretty(&skill.output_schema).unwrap_or_default();
    let enabled_for_class = enabled.clone();
    view! {
        <li class="skill" data-skill=id.clone() class:disabled=move || !enabled_for_class() hidden=hidden>
            <span class="skill-icon"><Icon name=skill.icon.clone()/></span>
            <div class="skill-main">
                <div class="skill-title">
                    <strong>{skill.name.clone()}</strong>
                    <code class="muted">"/"{id.clone()}</code>
                    {
                        let always = always.clone();
                        move || always().then(|| view! { <span class="grant">"Always allowed"</span> })
                    }
                </div>
                // MCP: say which server a tool comes from.
                {match &skill.kind {
                    hearth_core::SkillKind::Mcp { server, tool } => Some(view! {
                        <p class="skill-source muted">
                            "Tool "<code>{tool.clone()}</code>" of the MCP server "
                            <a href="#/servers" data-server=server.clone()>{server.clone()}</a>
                        </p>
                    }),
                    hearth_core::SkillKind::Builtin | hearth_core::SkillKind::AgentSkill { .. } => None,
                }}
                <p class="skill-description">{skill.description.clone()}</p>
                <ul class="tags">
                    {skill.tags.iter().map(|t| view! { <li class="tag">{t.clone()}</li> }).collect_view()}
                </ul>
                {crate::web::is_web_skill(&id).then(|| view! { <DomainListsEditor skill=skill.clone()/> })}
                <details class="skill-more">
                    <summary>"Examples and schemas"</summary>
                    <ul class="examples-list">
                        {skill.examples.iter().map(|e| view! { <li>{e.clone()}</li> }).collect_view()}
                    </ul>
                    <h4>"Input schema"</h4>
                    <pre class="schema">{input_schema}</pre>
                    <h4>"Output schema"</h4>
                    <pre class="schema">{output_schema}</pre>
                </details>
                <p class="usage muted">
                    {move || match usage() {
                        Some(u) if u.count > 0 => format!("Used {} time{} · last {}", u.count, if u.count == 1 { "" } else { "s" }, relative_time(u.last_used_ms)),
                        _ => "Not used yet".to_string(),
                    }}
                </p>
            </div>
            <div class="skill-controls">
                <label class="switch">
                    <input
                        type="checkbox"
                        role="switch"
                        aria-label=format!("Enable {}", skill.name)
                        prop:checked=enabled
                        disabled={
                            let tier_allowed = tier_allowed.clone();
                            move || !tier_allowed()
                        }
                        title=move || (!tier_allowed()).then(|| tier_off_hint.clone())
                        on:change=move |ev| set_enabled(event_target_checked(&ev))
                    />
                    <span>"Enabled"</span>
                </label>
                <label class="field">
                    <span class="muted">"Approval"</span>
                    <select
                        aria-label=format!("Approval for {}", skill.name)
                        prop:value=approval
                        on:change=move |ev| set_approval(event_target_value(&ev))
                    >
                        <option value="">{default_approval}</option>
                        <option value="ask">"Ask every time"</option>
                        <option value="always-allow">"Always allow"</option>
                        <option value="never-allow">"Never allow"</option>
                    </select>
                </label>
                {move || always().then(|| {
                    let revoke = revoke.clone();
                    view! { <button class="small" on:click=move |_| revoke(String::new())>"Revoke always allow"</button> }
                })}
            </div>
        </li>
    }
}
