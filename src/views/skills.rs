//! Skills: the registry grouped by tier, with what each tier means. Each
//! skill can be switched on or off and given an approval setting; "always
//! allow" grants show here and can be revoked.

use hearth_core::permission::ApprovalSetting;
use hearth_core::{SkillDefinition, Tier};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::icons::Icon;
use crate::runtime::{Runtime, use_runtime};
use crate::views::web::{DomainListsEditor, OfflineNote};

fn relative_time(ms: f64) -> String {
    let ago = (js_sys::Date::now() - ms).max(0.0) / 1000.0;
    if ago < 60.0 {
        "just now".into()
    } else if ago < 3600.0 {
        format!("{} min ago", (ago / 60.0) as u64)
    } else if ago < 86_400.0 {
        format!("{} h ago", (ago / 3600.0) as u64)
    } else {
        hearth_core::display::count((ago / 86_400.0) as usize, "day ago", "days ago")
    }
}

/// Stores a permission change, reporting failure in `error`.
fn change(
    rt: &Runtime,
    error: RwSignal<Option<String>>,
    f: impl FnOnce(&mut hearth_core::permission::PermissionSettings) + 'static,
) {
    let rt = rt.clone();
    spawn_local(async move {
        if let Err(e) = rt.update_permissions(f).await {
            error.set(Some(format!("The change was not saved: {e}")));
        }
    });
}

#[component]
pub fn SkillsView() -> impl IntoView {
    let rt = use_runtime();
    let registry_version = rt.versions().registry;
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    view! {
        <section class="page skills" aria-labelledby="skills-title">
            <header class="page-head">
                <h1 id="skills-title">"Skills"</h1>
                <p class="muted">"Everything Hearth can do, by how much trust it needs. Switch skills on or off and choose when they ask."</p>
            </header>
            <Show when=move || error.get().is_some()>
                <p class="error" role="alert">{move || error.get().unwrap_or_default()}</p>
            </Show>
            // Agent Skills (SKILL.md packages): import and manage them.
            <crate::views::agent_skills::AgentSkillsPanel/>
            {move || {
                registry_version.track();
                let skills: Vec<SkillDefinition> = rt.registry().iter().cloned().collect();
                Tier::ALL
                    .into_iter()
                    .map(|tier| {
                        let in_tier: Vec<SkillDefinition> = skills.iter().filter(|s| s.tier == tier).cloned().collect();
                        view! { <TierGroup tier=tier skills=in_tier error=error/> }
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
) -> impl IntoView {
    let rt = use_runtime();
    let empty = skills.is_empty();
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
        <section class="tier" data-tier=tier.as_str() aria-labelledby=format!("tier-{}", tier.as_str())>
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
                    <ul class="skill-list">
                        {skills.into_iter().map(|s| view! { <SkillRow skill=s error=error/> }).collect_view()}
                    </ul>
                }
                    .into_any()
            }}
        </section>
    }
}

#[component]
fn SkillRow(skill: SkillDefinition, error: RwSignal<Option<String>>) -> impl IntoView {
    let rt = use_runtime();
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
        <li class="skill" data-skill=id.clone() class:disabled=move || !enabled_for_class()>
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
