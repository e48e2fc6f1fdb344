//! On a result refused because its skill is switched off: a way to switch
//! it on right there. The button changes the same setting as the skill's
//! switch in Skills and nothing else: the skill's approval setting stays
//! as it is, so a network skill still asks before every call. Only the
//! person can press it; nothing the model or a skill sends reaches it.

use hearth_core::{SkillId, ToolStatus};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::runtime::use_runtime;

/// Where the offer stands.
#[derive(Clone, Debug, PartialEq)]
enum Offer {
    /// The skill is off: Enable.
    Switch,
    /// Its whole tier is switched off, which only Skills undoes.
    TierOff(String),
    /// Switched on here.
    Done(String),
    Failed(String),
}

#[component]
pub fn EnableOffer(skill_id: SkillId, status: ToolStatus) -> impl IntoView {
    let rt = use_runtime();
    let done: RwSignal<Option<Offer>> = RwSignal::new(None);
    let version = rt.versions().permissions;
    let offer = {
        let rt = rt.clone();
        let skill_id = skill_id.clone();
        move || {
            if let Some(d) = done.get() {
                return Some(d);
            }
            if status != ToolStatus::Denied {
                return None;
            }
            version.track();
            let skill = rt.registry().get(&skill_id).cloned()?;
            let permissions = rt.data().permissions.borrow().clone();
            if permissions.is_enabled(&skill) {
                return None;
            }
            if !permissions.tier_enabled(skill.tier) {
                return Some(Offer::TierOff(skill.tier.label().to_lowercase()));
            }
            Some(Offer::Switch)
        }
    };
    let name = rt
        .registry()
        .get(&skill_id)
        .map(|s| s.name.clone())
        .unwrap_or_else(|| skill_id.to_string());
    let enable = {
        let rt = rt.clone();
        let name = name.clone();
        move |_| {
            let Some(skill) = rt.registry().get(&skill_id).cloned() else {
                return;
            };
            let rt = rt.clone();
            let name = name.clone();
            spawn_local(async move {
                let id = skill.id.to_string();
                let default = skill.default_enabled;
                let asks = skill.requires_approval
                    || matches!(
                        skill.tier,
                        hearth_core::Tier::Network | hearth_core::Tier::Integration
                    );
                let result = rt
                    .update_permissions(move |p| p.set_enabled(&id, (!default).then_some(true)))
                    .await;
                done.set(Some(match result {
                    Ok(()) if asks => Offer::Done(format!(
                        "{name} is on. It still asks before each call; run the command again."
                    )),
                    Ok(()) => Offer::Done(format!("{name} is on; run the command again.")),
                    Err(e) => Offer::Failed(format!("{name} was not switched on: {e}")),
                }));
            });
        }
    };
    view! {
        {move || offer().map(|o| match o {
            Offer::Switch => view! {
                <div class="card-actions enable-offer">
                    <button type="button" class="small primary" on:click=enable.clone()>
                        {format!("Enable {name}")}
                    </button>
                    <span class="muted">"Switches it on as in Skills; its approval setting stays."</span>
                </div>
            }.into_any(),
            Offer::TierOff(tier) => view! {
                <p class="card-actions enable-offer muted">
                    {format!("All {tier} skills are switched off. ")}
                    <a href="#/skills">"Turn them on in Skills"</a>
                </p>
            }.into_any(),
            Offer::Done(text) => view! {
                <p class="card-actions enable-offer notice" role="status">{text}</p>
            }.into_any(),
            Offer::Failed(text) => view! {
                <p class="card-actions enable-offer inline-error" role="alert">{text}</p>
            }.into_any(),
        })}
    }
}
