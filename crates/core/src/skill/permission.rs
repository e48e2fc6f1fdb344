//! The permission decision: one pure function from policy data to
//! allow, ask or deny. The browser only shows the question and returns the
//! person's answer; nothing here can be answered by the model.
//!
//! The checks run in a fixed order, and anything they leave undecided asks:
//! 1. chat-only mode denies every call;
//! 2. a disabled skill, or a switched-off tier, is denied;
//! 3. a "never allow" setting denies;
//! 4. a bulk destructive call asks, whatever else is set;
//! 5. an "ask" setting asks;
//! 6. an "always allow" setting allows: the person answered this question
//!    before, and asking again would make "always" a lie;
//! 7. the mode decides: ask-everything asks, auto allows, and
//!    ask-sensitive asks for network and integration skills and skills that
//!    require approval, and allows the rest.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::skill::{SkillDefinition, Tier};

/// The global mode, chosen in Settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionMode {
    /// Network and integration tiers and skills that require approval ask.
    #[default]
    AskSensitive,
    /// Every call asks, unless the person always allowed that skill.
    AskEverything,
    /// Nothing asks unless a skill is set to ask.
    Auto,
    /// No skill runs.
    ChatOnly,
}

impl PermissionMode {
    pub const ALL: [PermissionMode; 4] = [
        PermissionMode::AskSensitive,
        PermissionMode::AskEverything,
        PermissionMode::Auto,
        PermissionMode::ChatOnly,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::AskSensitive => "ask-sensitive",
            PermissionMode::AskEverything => "ask-everything",
            PermissionMode::Auto => "auto",
            PermissionMode::ChatOnly => "chat-only",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            PermissionMode::AskSensitive => "Ask for sensitive skills",
            PermissionMode::AskEverything => "Ask for everything",
            PermissionMode::Auto => "Auto",
            PermissionMode::ChatOnly => "Chat only",
        }
    }

    pub fn parse(s: &str) -> Option<PermissionMode> {
        PermissionMode::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

/// What the person chose for one skill.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalSetting {
    Ask,
    AlwaysAllow,
    NeverAllow,
}

impl ApprovalSetting {
    pub const ALL: [ApprovalSetting; 3] = [
        ApprovalSetting::Ask,
        ApprovalSetting::AlwaysAllow,
        ApprovalSetting::NeverAllow,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalSetting::Ask => "ask",
            ApprovalSetting::AlwaysAllow => "always-allow",
            ApprovalSetting::NeverAllow => "never-allow",
        }
    }

    pub fn parse(s: &str) -> Option<ApprovalSetting> {
        ApprovalSetting::ALL.into_iter().find(|a| a.as_str() == s)
    }
}

/// The stored settings of one skill; `None` means "the default".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillSettings {
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub approval: Option<ApprovalSetting>,
}

impl SkillSettings {
    pub fn is_enabled(&self, skill: &SkillDefinition) -> bool {
        self.enabled.unwrap_or(skill.default_enabled)
    }
}

/// Everything the person set about permissions, stored as one record.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PermissionSettings {
    #[serde(default)]
    pub mode: PermissionMode,
    /// Per-skill settings; a missing entry means the defaults.
    #[serde(default)]
    pub skills: BTreeMap<String, SkillSettings>,
    /// Tier-level switches; a missing entry means on.
    #[serde(default)]
    pub tiers: BTreeMap<Tier, bool>,
}

impl PermissionSettings {
    /// What applies while the stored settings cannot be read: every call
    /// asks (and skills that are off until switched on stay off). Safe
    /// whatever the person had set; the unreadable record is kept.
    pub fn unreadable() -> Self {
        Self {
            mode: PermissionMode::AskEverything,
            ..Self::default()
        }
    }

    pub fn skill(&self, id: &str) -> SkillSettings {
        self.skills.get(id).copied().unwrap_or_default()
    }

    pub fn tier_enabled(&self, tier: Tier) -> bool {
        self.tiers.get(&tier).copied().unwrap_or(true)
    }

    pub fn policy(&self, skill: &SkillDefinition) -> Policy {
        Policy {
            mode: self.mode,
            settings: self.skill(skill.id.as_str()),
            tier_enabled: self.tier_enabled(skill.tier),
        }
    }

    /// Whether `skill` is enabled, counting its tier's switch.
    pub fn is_enabled(&self, skill: &SkillDefinition) -> bool {
        self.tier_enabled(skill.tier) && self.skill(skill.id.as_str()).is_enabled(skill)
    }

    pub fn set_enabled(&mut self, id: &str, enabled: Option<bool>) {
        self.edit(id, |s| s.enabled = enabled);
    }

    pub fn set_approval(&mut self, id: &str, approval: Option<ApprovalSetting>) {
        self.edit(id, |s| s.approval = approval);
    }

    fn edit(&mut self, id: &str, f: impl FnOnce(&mut SkillSettings)) {
        let mut s = self.skill(id);
        f(&mut s);
        if s == SkillSettings::default() {
            self.skills.remove(id);
        } else {
            self.skills.insert(id.to_string(), s);
        }
    }

    /// Whether a tier's switch reads as on: the tier is allowed and at
    /// least one of `skills` (the tier's skills) is enabled. A tier with
    /// no skills reads as its own switch.
    pub fn tier_in_use(&self, tier: Tier, skills: &[SkillDefinition]) -> bool {
        let in_tier: Vec<&SkillDefinition> = skills.iter().filter(|s| s.tier == tier).collect();
        if in_tier.is_empty() {
            // No skill to go by: the switch reads as the person left it,
            // else as the tier's default (network and integration: off).
            return self
                .tiers
                .get(&tier)
                .copied()
                .unwrap_or(tier.default_enabled());
        }
        self.tier_enabled(tier)
            && in_tier
                .iter()
                .any(|s| self.skill(s.id.as_str()).is_enabled(s))
    }

    /// What the tier's switch does. Off blocks the whole tier and keeps
    /// each skill's own setting. On allows the tier and, when none of its
    /// skills is enabled, enables them all, so that the switch is on after
    /// being turned on.
    pub fn allow_tier(&mut self, tier: Tier, on: bool, skills: &[SkillDefinition]) {
        if !on {
            self.tiers.insert(tier, false);
            return;
        }
        // Turned on, a tier that is off by default keeps the choice, so
        // its switch reads on even while it has no skills.
        if tier.default_enabled() {
            self.tiers.remove(&tier);
        } else {
            self.tiers.insert(tier, true);
        }
        if !self.tier_in_use(tier, skills) {
            for s in skills.iter().filter(|s| s.tier == tier) {
                self.set_enabled(s.id.as_str(), (!s.default_enabled).then_some(true));
            }
        }
    }

    /// Skills the person chose to always allow, for the Skills panel.
    pub fn always_allowed(&self) -> Vec<&str> {
        self.skills
            .iter()
            .filter(|(_, s)| s.approval == Some(ApprovalSetting::AlwaysAllow))
            .map(|(id, _)| id.as_str())
            .collect()
    }
}

/// The settings record key the app keeps [`PermissionSettings`] under.
pub const SETTINGS_KEY: &str = "permissions";

/// How strict a mode is: higher lets more run without asking.
fn mode_looseness(mode: PermissionMode) -> u8 {
    match mode {
        PermissionMode::ChatOnly => 0,
        PermissionMode::AskEverything => 1,
        PermissionMode::AskSensitive => 2,
        PermissionMode::Auto => 3,
    }
}

/// How strict a skill's approval setting is: "never" < "ask" < the
/// mode's default < "always".
fn approval_looseness(a: Option<ApprovalSetting>) -> u8 {
    match a {
        Some(ApprovalSetting::NeverAllow) => 0,
        Some(ApprovalSetting::Ask) => 1,
        None => 2,
        Some(ApprovalSetting::AlwaysAllow) => 3,
    }
}

fn approval_words(a: Option<ApprovalSetting>) -> &'static str {
    match a {
        Some(ApprovalSetting::NeverAllow) => "never allow",
        Some(ApprovalSetting::Ask) => "ask every time",
        None => "as the mode says",
        Some(ApprovalSetting::AlwaysAllow) => "always allow",
    }
}

fn enabled_words(e: Option<bool>) -> &'static str {
    match e {
        Some(true) => "on",
        Some(false) => "off",
        None => "its default",
    }
}

/// Every way `after` lets more run, or run without asking, than `before`,
/// in words: what a restore must not do without the person's say-so.
/// A per-skill switch moving from "off" to its default counts, since the
/// default may be on.
pub fn loosenings(before: &PermissionSettings, after: &PermissionSettings) -> Vec<String> {
    let mut out = Vec::new();
    if mode_looseness(after.mode) > mode_looseness(before.mode) {
        out.push(format!(
            "Mode: {} → {}",
            before.mode.label(),
            after.mode.label()
        ));
    }
    for tier in Tier::ALL {
        if !before.tier_enabled(tier) && after.tier_enabled(tier) {
            out.push(format!("{} tier: off → on", tier.label()));
        }
    }
    let ids: std::collections::BTreeSet<&String> =
        before.skills.keys().chain(after.skills.keys()).collect();
    for id in ids {
        let (b, a) = (before.skill(id), after.skill(id));
        let switched_on = match (b.enabled, a.enabled) {
            (Some(false), Some(true) | None) | (None, Some(true)) => true,
            (Some(false), Some(false)) | (Some(true), _) | (None, Some(false)) | (None, None) => {
                false
            }
        };
        if switched_on {
            out.push(format!(
                "{id}: switched {} → {}",
                enabled_words(b.enabled),
                enabled_words(a.enabled)
            ));
        }
        if approval_looseness(a.approval) > approval_looseness(b.approval) {
            out.push(format!(
                "{id}: {} → {}",
                approval_words(b.approval),
                approval_words(a.approval)
            ));
        }
    }
    out
}

/// Facts about one call that can change the decision.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallFacts {
    /// Set when the call destroys many records at once, e.g. deleting
    /// several notes. Such calls always ask.
    pub bulk_destructive: Option<String>,
}

/// Everything [`decide`] looks at besides the skill and the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    pub mode: PermissionMode,
    pub settings: SkillSettings,
    /// The tier-level switch of the skill's tier.
    pub tier_enabled: bool,
}

/// Who or what made a decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DecidedBy {
    /// The person answered the approval dialog.
    User,
    /// The skill's own setting (enabled, always/never allow).
    Setting,
    /// The global mode.
    Mode,
    /// The tier's defaults, or its tier-level switch.
    Tier,
    /// A rule no setting overrides, such as bulk deletes asking.
    Policy,
}

impl DecidedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            DecidedBy::User => "user",
            DecidedBy::Setting => "setting",
            DecidedBy::Mode => "mode",
            DecidedBy::Tier => "tier",
            DecidedBy::Policy => "policy",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "kebab-case")]
pub enum Decision {
    Allow { by: DecidedBy },
    Ask { reason: String, by: DecidedBy },
    Deny { reason: String, by: DecidedBy },
}

/// Decides whether `skill` may run now, with `facts` about this call.
pub fn decide(skill: &SkillDefinition, policy: &Policy, facts: &CallFacts) -> Decision {
    let name = &skill.name;
    if policy.mode == PermissionMode::ChatOnly {
        return Decision::Deny {
            reason: "Hearth is in chat-only mode, so no skill runs".into(),
            by: DecidedBy::Mode,
        };
    }
    if !policy.settings.is_enabled(skill) {
        let by = if policy.settings.enabled.is_some() {
            DecidedBy::Setting
        } else {
            DecidedBy::Tier
        };
        return Decision::Deny {
            reason: format!("{name} is disabled; enable it in the Skills panel"),
            by,
        };
    }
    if !policy.tier_enabled {
        return Decision::Deny {
            reason: format!(
                "{} skills are switched off in the Skills panel",
                skill.tier.label()
            ),
            by: DecidedBy::Tier,
        };
    }
    if policy.settings.approval == Some(ApprovalSetting::NeverAllow) {
        return Decision::Deny {
            reason: format!("{name} is set to never allow"),
            by: DecidedBy::Setting,
        };
    }
    if let Some(what) = &facts.bulk_destructive {
        return Decision::Ask {
            reason: format!("this call would {what}; bulk changes always ask"),
            by: DecidedBy::Policy,
        };
    }
    if policy.settings.approval == Some(ApprovalSetting::Ask) {
        return Decision::Ask {
            reason: format!("you asked to approve every {name} call"),
            by: DecidedBy::Setting,
        };
    }
    if policy.settings.approval == Some(ApprovalSetting::AlwaysAllow) {
        return Decision::Allow {
            by: DecidedBy::Setting,
        };
    }
    match policy.mode {
        PermissionMode::AskEverything => Decision::Ask {
            reason: "Hearth is set to ask before every skill".into(),
            by: DecidedBy::Mode,
        },
        PermissionMode::Auto => Decision::Allow {
            by: DecidedBy::Mode,
        },
        PermissionMode::AskSensitive => match skill.tier {
            Tier::Network => Decision::Ask {
                reason: format!("{name} reaches the internet"),
                by: DecidedBy::Tier,
            },
            Tier::Integration => Decision::Ask {
                reason: format!("{name} talks to an external service"),
                by: DecidedBy::Tier,
            },
            Tier::Core | Tier::Enhanced if skill.requires_approval => Decision::Ask {
                reason: format!("{name} requires approval"),
                by: DecidedBy::Tier,
            },
            Tier::Core | Tier::Enhanced => Decision::Allow {
                by: DecidedBy::Tier,
            },
        },
        PermissionMode::ChatOnly => Decision::Deny {
            reason: "Hearth is in chat-only mode, so no skill runs".into(),
            by: DecidedBy::Mode,
        },
    }
}

/// How a call's permission was settled, kept with its result and log entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionRecord {
    pub outcome: Verdict,
    pub by: DecidedBy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What the permission layer said about a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Allowed,
    Denied,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::{Category, SkillId};
    use ApprovalSetting::*;
    use PermissionMode::*;

    fn skill(tier: Tier, requires_approval: bool) -> SkillDefinition {
        let mut s = SkillDefinition::new(
            SkillId::new("s").unwrap(),
            "S",
            tier,
            Category::Productivity,
        );
        s.requires_approval = requires_approval;
        s.default_enabled = true;
        s
    }

    /// One letter per decision, so the table reads at a glance:
    /// A allow, ? ask, D deny.
    fn letter(d: &Decision) -> char {
        match d {
            Decision::Allow { .. } => 'A',
            Decision::Ask { .. } => '?',
            Decision::Deny { .. } => 'D',
        }
    }

    /// Every tier × setting × mode. Columns are the modes in the order
    /// ask-sensitive, ask-everything, auto, chat-only.
    #[test]
    fn decision_table() {
        let settings: [(&str, Option<ApprovalSetting>); 4] = [
            ("default", None),
            ("ask", Some(Ask)),
            ("always", Some(AlwaysAllow)),
            ("never", Some(NeverAllow)),
        ];
        let tiers = [
            ("core", Tier::Core, false),
            ("core+approval", Tier::Core, true),
            ("enhanced", Tier::Enhanced, false),
            ("network", Tier::Network, true),
            ("integration", Tier::Integration, true),
        ];
        let mut table = String::new();
        for (tname, tier, approval) in tiers {
            for (sname, setting) in settings {
                let s = skill(tier, approval);
                let row: String = PermissionMode::ALL
                    .iter()
                    .map(|mode| {
                        let policy = Policy {
                            mode: *mode,
                            settings: SkillSettings {
                                enabled: None,
                                approval: setting,
                            },
                            tier_enabled: true,
                        };
                        letter(&decide(&s, &policy, &CallFacts::default()))
                    })
                    .collect();
                table.push_str(&format!("{tname:<14}{sname:<8}{row}\n"));
            }
        }
        let expected = "\
core          default A?AD
core          ask     ???D
core          always  AAAD
core          never   DDDD
core+approval default ??AD
core+approval ask     ???D
core+approval always  AAAD
core+approval never   DDDD
enhanced      default A?AD
enhanced      ask     ???D
enhanced      always  AAAD
enhanced      never   DDDD
network       default ??AD
network       ask     ???D
network       always  AAAD
network       never   DDDD
integration   default ??AD
integration   ask     ???D
integration   always  AAAD
integration   never   DDDD
";
        assert_eq!(table, expected);
    }

    #[test]
    fn disabled_skills_and_tiers_are_denied_in_every_mode() {
        let s = skill(Tier::Core, false);
        for mode in PermissionMode::ALL {
            for approval in [None, Some(AlwaysAllow)] {
                let off = Policy {
                    mode,
                    settings: SkillSettings {
                        enabled: Some(false),
                        approval,
                    },
                    tier_enabled: true,
                };
                assert_eq!(letter(&decide(&s, &off, &CallFacts::default())), 'D');
                let tier_off = Policy {
                    mode,
                    settings: SkillSettings {
                        enabled: Some(true),
                        approval,
                    },
                    tier_enabled: false,
                };
                assert_eq!(letter(&decide(&s, &tier_off, &CallFacts::default())), 'D');
            }
        }
    }

    fn named(id: &str, tier: Tier, default_enabled: bool) -> SkillDefinition {
        let mut s = SkillDefinition::new(SkillId::new(id).unwrap(), id, tier, Category::Network);
        s.default_enabled = default_enabled;
        s
    }

    #[test]
    fn a_tier_switch_is_on_only_while_one_of_its_skills_can_run() {
        let skills = [
            named("web_fetch", Tier::Network, false),
            named("web_search", Tier::Network, false),
            named("calc", Tier::Core, true),
        ];
        let mut p = PermissionSettings::default();
        // Both network skills are off by default: the switch reads off,
        // though the tier itself is not blocked.
        assert!(p.tier_enabled(Tier::Network));
        assert!(!p.tier_in_use(Tier::Network, &skills));
        assert!(p.tier_in_use(Tier::Core, &skills));
        // A tier without skills reads as its own switch: off by default
        // for integration, as its text says, on once turned on.
        assert!(!p.tier_in_use(Tier::Integration, &skills));
        assert!(p.tier_in_use(Tier::Core, &[]));
        p.allow_tier(Tier::Integration, true, &skills);
        assert!(p.tier_in_use(Tier::Integration, &skills));
        p.allow_tier(Tier::Integration, false, &skills);
        assert!(!p.tier_in_use(Tier::Integration, &skills));
        // A choice stored earlier reads as it was made.
        let stored: PermissionSettings =
            serde_json::from_value(serde_json::json!({"tiers": {"integration": true}})).unwrap();
        assert!(stored.tier_in_use(Tier::Integration, &skills));

        // One skill on: the switch reads on.
        p.set_enabled("web_search", Some(true));
        assert!(p.tier_in_use(Tier::Network, &skills));
        // Blocking the tier turns it off and keeps the skill's setting.
        p.allow_tier(Tier::Network, false, &skills);
        assert!(!p.tier_in_use(Tier::Network, &skills));
        assert_eq!(p.skill("web_search").enabled, Some(true));
        assert!(!p.is_enabled(&skills[1]));
        // Allowing it again brings back what was on, and only that.
        p.allow_tier(Tier::Network, true, &skills);
        assert!(p.tier_in_use(Tier::Network, &skills));
        assert!(p.is_enabled(&skills[1]));
        assert!(!p.is_enabled(&skills[0]));
    }

    #[test]
    fn turning_on_a_tier_with_every_skill_off_enables_them_all() {
        let skills = [
            named("web_fetch", Tier::Network, false),
            named("web_search", Tier::Network, false),
            named("calc", Tier::Core, true),
        ];
        let mut p = PermissionSettings::default();
        p.allow_tier(Tier::Network, true, &skills);
        assert!(p.tier_in_use(Tier::Network, &skills));
        assert!(p.is_enabled(&skills[0]) && p.is_enabled(&skills[1]));
        // Skills of other tiers are left alone.
        assert_eq!(p.skill("calc"), SkillSettings::default());
        // A skill on by default that was switched off is switched back to
        // its default, which leaves no entry behind.
        let on_by_default = [named("web_fetch", Tier::Network, true)];
        let mut q = PermissionSettings::default();
        q.set_enabled("web_fetch", Some(false));
        q.allow_tier(Tier::Network, true, &on_by_default);
        assert!(q.skills.is_empty());
        assert!(q.tier_in_use(Tier::Network, &on_by_default));
    }

    #[test]
    fn settings_records_round_trip_and_drop_defaults() {
        let mut p = PermissionSettings::default();
        p.set_approval("web_fetch", Some(AlwaysAllow));
        p.set_enabled("web_fetch", Some(true));
        p.tiers.insert(Tier::Integration, false);
        assert_eq!(p.always_allowed(), ["web_fetch"]);
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "mode": "ask-sensitive",
                "skills": {"web_fetch": {"enabled": true, "approval": "always-allow"}},
                "tiers": {"integration": false}
            })
        );
        assert_eq!(
            serde_json::from_value::<PermissionSettings>(json).unwrap(),
            p
        );
        // Revoking back to the defaults removes the entry entirely.
        p.set_approval("web_fetch", None);
        p.set_enabled("web_fetch", None);
        assert!(p.skills.is_empty());
        // An empty or partial record reads as the defaults.
        assert_eq!(
            serde_json::from_str::<PermissionSettings>("{}").unwrap(),
            PermissionSettings::default()
        );
        let mut s = skill(Tier::Integration, true);
        assert!(!p.is_enabled(&s), "the integration tier is switched off");
        s.tier = Tier::Core;
        assert!(p.is_enabled(&s));
    }

    #[test]
    fn network_skills_start_disabled() {
        let mut s = skill(Tier::Network, true);
        s.default_enabled = false;
        let policy = Policy {
            mode: Auto,
            settings: SkillSettings::default(),
            tier_enabled: true,
        };
        assert_eq!(
            decide(&s, &policy, &CallFacts::default()),
            Decision::Deny {
                reason: "S is disabled; enable it in the Skills panel".into(),
                by: DecidedBy::Tier
            }
        );
    }

    #[test]
    fn bulk_destructive_calls_ask_whatever_the_settings() {
        let s = skill(Tier::Core, false);
        let facts = CallFacts {
            bulk_destructive: Some("delete 12 notes".into()),
        };
        for mode in [AskSensitive, AskEverything, Auto] {
            for approval in [None, Some(Ask), Some(AlwaysAllow)] {
                let policy = Policy {
                    mode,
                    settings: SkillSettings {
                        enabled: None,
                        approval,
                    },
                    tier_enabled: true,
                };
                assert_eq!(
                    decide(&s, &policy, &facts),
                    Decision::Ask {
                        reason: "this call would delete 12 notes; bulk changes always ask".into(),
                        by: DecidedBy::Policy
                    }
                );
            }
        }
        // ...but "never" and chat-only still deny outright.
        let never = Policy {
            mode: Auto,
            settings: SkillSettings {
                enabled: None,
                approval: Some(NeverAllow),
            },
            tier_enabled: true,
        };
        assert_eq!(letter(&decide(&s, &never, &facts)), 'D');
    }

    #[test]
    fn loosening_is_anything_that_lets_more_run_unasked() {
        let base = PermissionSettings::default();
        let with = |f: &dyn Fn(&mut PermissionSettings)| {
            let mut p = PermissionSettings::default();
            f(&mut p);
            p
        };
        let cases: Vec<(PermissionSettings, PermissionSettings, Vec<&str>)> = vec![
            (base.clone(), base.clone(), vec![]),
            (
                base.clone(),
                with(&|p| p.mode = Auto),
                vec!["Mode: Ask for sensitive skills → Auto"],
            ),
            (with(&|p| p.mode = Auto), base.clone(), vec![]),
            (
                with(&|p| p.mode = ChatOnly),
                base.clone(),
                vec!["Mode: Chat only → Ask for sensitive skills"],
            ),
            (
                base.clone(),
                with(&|p| p.set_approval("web_fetch", Some(AlwaysAllow))),
                vec!["web_fetch: as the mode says → always allow"],
            ),
            (
                with(&|p| p.set_approval("notes", Some(NeverAllow))),
                base.clone(),
                vec!["notes: never allow → as the mode says"],
            ),
            (
                base.clone(),
                with(&|p| p.set_approval("notes", Some(NeverAllow))),
                vec![],
            ),
            (
                with(&|p| p.set_enabled("web_search", Some(false))),
                with(&|p| p.set_enabled("web_search", Some(true))),
                vec!["web_search: switched off → on"],
            ),
            (
                base.clone(),
                with(&|p| p.set_enabled("docs__delete", Some(true))),
                vec!["docs__delete: switched its default → on"],
            ),
            (
                with(&|p| {
                    p.tiers.insert(Tier::Integration, false);
                }),
                base.clone(),
                vec!["Integration tier: off → on"],
            ),
        ];
        for (i, (before, after, want)) in cases.into_iter().enumerate() {
            assert_eq!(loosenings(&before, &after), want, "case {i}");
        }
    }
}
