//! Skills: the registry grouped by tier, with what each tier means.

use hearth_core::{SkillDefinition, Tier};
use leptos::prelude::*;

use crate::icons::Icon;
use crate::runtime::use_runtime;

#[component]
pub fn SkillsView() -> impl IntoView {
    let rt = use_runtime();
    let skills: Vec<SkillDefinition> = rt.registry().iter().cloned().collect();
    view! {
        <section class="page skills" aria-labelledby="skills-title">
            <header class="page-head">
                <h1 id="skills-title">"Skills"</h1>
                <p class="muted">"Everything Hearth can do, by how much trust it needs."</p>
            </header>
            {Tier::ALL
                .into_iter()
                .map(|tier| {
                    let in_tier: Vec<SkillDefinition> = skills.iter().filter(|s| s.tier == tier).cloned().collect();
                    view! { <TierGroup tier=tier skills=in_tier/> }
                })
                .collect_view()}
        </section>
    }
}

#[component]
fn TierGroup(tier: Tier, skills: Vec<SkillDefinition>) -> impl IntoView {
    let empty = skills.is_empty();
    view! {
        <section class="tier" data-tier=tier.as_str() aria-labelledby=format!("tier-{}", tier.as_str())>
            <h2 id=format!("tier-{}", tier.as_str())>
                {tier.label()}
                <span class="count">{skills.len()}</span>
            </h2>
            <p class="tier-explanation">{tier.explanation()}</p>
            {if empty {
                view! { <p class="empty muted">"No skills in this tier yet."</p> }.into_any()
            } else {
                view! {
                    <ul class="skill-list">
                        {skills.into_iter().map(|s| view! { <SkillRow skill=s/> }).collect_view()}
                    </ul>
                }
                    .into_any()
            }}
        </section>
    }
}

#[component]
fn SkillRow(skill: SkillDefinition) -> impl IntoView {
    view! {
        <li class="skill" data-skill=skill.id.to_string()>
            <span class="skill-icon"><Icon name=skill.icon.clone()/></span>
            <div class="skill-main">
                <div class="skill-title">
                    <strong>{skill.name.clone()}</strong>
                    <code class="muted">"/"{skill.id.to_string()}</code>
                </div>
                <p class="skill-description">{skill.description.clone()}</p>
                <ul class="tags">
                    {skill.tags.iter().map(|t| view! { <li class="tag">{t.clone()}</li> }).collect_view()}
                </ul>
            </div>
        </li>
    }
}
