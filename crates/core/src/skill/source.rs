//! Skill sources: each part of the app that brings skills (Hearth's core
//! skills, the code sandbox, files, web, Agent Skills, MCP) implements
//! [`SkillSource`], and [`Sources`] routes every call to the source that
//! registered its skill.
//!
//! A source stamps its [`SourceKey`] on each skill when it registers it;
//! the router reads that key and nothing else, so no skill id appears in
//! dispatch. Within a source, mapping its own skills to their code is the
//! source's business.
//!
//! Sources also shape the assistant's requests: for each [`Turn`] a
//! source may offer tools besides the conversation's loaded skills and a
//! section of the system prompt, and [`Sources`] asks them in order.

use std::rc::Rc;

use futures::FutureExt;
use futures::future::LocalBoxFuture;

use crate::skill::call::{SkillError, SkillOutput, ToolCall};
use crate::skill::invoke::Executor;
use crate::skill::permission::CallFacts;
use crate::skill::registry::{Registered, Registry, RegistryError};
use crate::skill::{SkillDefinition, SkillId, SourceKey};

/// One request of an assistant conversation, as sources see it when
/// they offer it tools and prompt sections.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Turn {
    /// The conversation the request belongs to.
    pub conversation_id: String,
    /// The skills loaded into the conversation, which the request offers
    /// whatever the sources say.
    pub loaded: Vec<SkillId>,
    /// Tool names the request already uses (discovery and the loaded
    /// skills): a source's tools keep clear of them.
    pub taken: Vec<String>,
}

impl Turn {
    /// A turn of `conversation_id` with `loaded` skills; `always` are the
    /// names every request offers besides them.
    pub fn new(conversation_id: impl Into<String>, loaded: Vec<SkillId>, always: &[&str]) -> Self {
        let taken = always
            .iter()
            .map(|s| s.to_string())
            .chain(loaded.iter().map(|id| id.to_string()))
            .collect();
        Self {
            conversation_id: conversation_id.into(),
            loaded,
            taken,
        }
    }

    /// [`Turn::taken`] as string slices.
    pub fn taken(&self) -> Vec<&str> {
        self.taken.iter().map(String::as_str).collect()
    }
}

/// One source of skills: what it registers, how its skills run, and what
/// it offers the assistant on each request.
pub trait SkillSource {
    /// The key stamped on every skill this source registers.
    fn key(&self) -> SourceKey;

    /// The skills this source registers now. `registry` holds what other
    /// sources registered before it, so a source can keep clear of names
    /// already taken. A source whose skills arrive later (an MCP server
    /// connecting) registers them through [`register_from`] then.
    fn definitions(&self, registry: &Registry) -> Vec<SkillDefinition>;

    /// Runs one call of one of this source's skills.
    fn execute<'a>(
        &'a self,
        skill: &'a SkillDefinition,
        call: &'a ToolCall,
    ) -> LocalBoxFuture<'a, Result<SkillOutput, SkillError>>;

    /// See [`Executor::assess`].
    fn assess(&self, _skill: &SkillDefinition, _call: &ToolCall) -> CallFacts {
        CallFacts::default()
    }

    /// See [`Executor::redirect`].
    fn redirect(
        &self,
        _skill: &SkillDefinition,
        _call: &ToolCall,
    ) -> Option<Result<ToolCall, SkillError>> {
        None
    }

    /// Tools this source offers on `turn`'s request besides the loaded
    /// skills (for example the active Agent Skill's). Only this source's
    /// registered skills make sense here: the assistant offers nothing
    /// the registry and the permission layer do not know.
    fn turn_tools(&self, _turn: &Turn) -> Vec<SkillDefinition> {
        Vec::new()
    }

    /// A section for the system prompt of `turn`'s request (for example
    /// the Agent Skills catalog, or the instructions of the MCP servers
    /// whose tools are offered). `offered` is every tool the request
    /// offers besides discovery, as the assistant decided them.
    fn turn_prompt(&self, _turn: &Turn, _offered: &[SkillDefinition]) -> Option<String> {
        None
    }
}

/// Registers `skills` as `source`'s: each is stamped with the key, then
/// registered. A name another source registered stays that source's
/// ([`RegistryError::Taken`]).
pub fn register_from(
    registry: &mut Registry,
    source: SourceKey,
    skills: Vec<SkillDefinition>,
) -> Vec<(SkillId, Result<Registered, RegistryError>)> {
    skills
        .into_iter()
        .map(|def| {
            let def = def.with_source(source);
            (def.id.clone(), registry.register(def))
        })
        .collect()
}

/// One skill's registration: its source, its id, and how it went.
pub type Registration = (SourceKey, SkillId, Result<Registered, RegistryError>);

/// A source was added twice.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{0} are already a source of skills")]
pub struct SourceTaken(pub SourceKey);

/// Every source of skills, and the router that runs each call at its own.
#[derive(Clone, Default)]
pub struct Sources {
    sources: Vec<Rc<dyn SkillSource>>,
}

impl Sources {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a source; one key has one source, so a second is refused.
    pub fn add(&mut self, source: Rc<dyn SkillSource>) -> Result<(), SourceTaken> {
        if self.get(source.key()).is_some() {
            return Err(SourceTaken(source.key()));
        }
        self.sources.push(source);
        Ok(())
    }

    /// The source with `key`.
    pub fn get(&self, key: SourceKey) -> Option<&Rc<dyn SkillSource>> {
        self.sources.iter().find(|s| s.key() == key)
    }

    /// Registers every source's skills, in the order the sources were
    /// added, and returns each skill's outcome with its source.
    pub fn register_all(&self, registry: &mut Registry) -> Vec<Registration> {
        let mut out = Vec::new();
        for source in &self.sources {
            let key = source.key();
            let defs = source.definitions(registry);
            out.extend(
                register_from(registry, key, defs)
                    .into_iter()
                    .map(|(id, r)| (key, id, r)),
            );
        }
        out
    }

    /// The tools the sources offer on `turn`'s request, in the order the
    /// sources were added: each name once (the first source's), and none
    /// the request already uses.
    pub fn turn_tools(&self, turn: &Turn) -> Vec<SkillDefinition> {
        let mut out: Vec<SkillDefinition> = Vec::new();
        for def in self.sources.iter().flat_map(|s| s.turn_tools(turn)) {
            let name = def.id.as_str();
            if !turn.taken.iter().any(|t| t == name) && !out.iter().any(|d| d.id == def.id) {
                out.push(def);
            }
        }
        out
    }

    /// The system prompt sections the sources add to `turn`'s request, in
    /// the order the sources were added; empty ones are left out.
    pub fn turn_prompts(&self, turn: &Turn, offered: &[SkillDefinition]) -> Vec<String> {
        self.sources
            .iter()
            .filter_map(|s| s.turn_prompt(turn, offered))
            .filter(|section| !section.trim().is_empty())
            .collect()
    }

    /// The source that runs `skill`, or why there is none.
    fn owner(&self, skill: &SkillDefinition) -> Result<&Rc<dyn SkillSource>, SkillError> {
        let key = skill.source.ok_or_else(|| {
            SkillError::new(format!(
                "the skill '{}' was registered by no source, so nothing can run it",
                skill.id
            ))
        })?;
        self.get(key).ok_or_else(|| {
            SkillError::new(format!(
                "the skill '{}' belongs to {key}, which this build does not run",
                skill.id
            ))
        })
    }
}

impl Executor for Sources {
    fn execute<'a>(
        &'a self,
        skill: &'a SkillDefinition,
        call: &'a ToolCall,
    ) -> LocalBoxFuture<'a, Result<SkillOutput, SkillError>> {
        match self.owner(skill) {
            Ok(source) => source.execute(skill, call),
            Err(e) => async move { Err(e) }.boxed_local(),
        }
    }

    fn assess(&self, skill: &SkillDefinition, call: &ToolCall) -> CallFacts {
        self.owner(skill)
            .map(|s| s.assess(skill, call))
            .unwrap_or_default()
    }

    fn redirect(
        &self,
        skill: &SkillDefinition,
        call: &ToolCall,
    ) -> Option<Result<ToolCall, SkillError>> {
        self.owner(skill).ok()?.redirect(skill, call)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::approval::{MemoryPolicy, NobodyToAsk, PermissionHook};
    use crate::skill::call::{CallOrigin, ToolResult, ToolStatus};
    use crate::skill::invoke::Invoker;
    use crate::skill::permission::{CallFacts, PermissionSettings};
    use crate::skill::{Category, Tier};
    use crate::testing::{self, FakeClock};
    use futures::executor::block_on;
    use serde_json::json;
    use std::cell::RefCell;

    fn skill(id: &str) -> SkillDefinition {
        SkillDefinition::new(
            SkillId::new(id).unwrap(),
            id,
            Tier::Core,
            Category::Developer,
        )
        .with_description(format!("The {id} skill"))
        .with_tags(["t"])
        .with_examples(["e"])
    }

    /// A source that answers with its own name and the skill it ran, and
    /// records what it ran; `bulk` is assessed as a bulk delete, and
    /// `hand_on` hands its call on to `target`.
    struct Named {
        key: SourceKey,
        skills: Vec<&'static str>,
        ran: RefCell<Vec<String>>,
    }

    impl Named {
        fn new(key: SourceKey, skills: &[&'static str]) -> Rc<Named> {
            Rc::new(Named {
                key,
                skills: skills.to_vec(),
                ran: RefCell::new(Vec::new()),
            })
        }
    }

    impl SkillSource for Named {
        fn key(&self) -> SourceKey {
            self.key
        }
        fn definitions(&self, _registry: &Registry) -> Vec<SkillDefinition> {
            self.skills.iter().map(|id| skill(id)).collect()
        }
        fn execute<'a>(
            &'a self,
            skill: &'a SkillDefinition,
            _call: &'a ToolCall,
        ) -> LocalBoxFuture<'a, Result<SkillOutput, SkillError>> {
            self.ran.borrow_mut().push(skill.id.to_string());
            let text = format!("{} ran {}", self.key.label(), skill.id);
            async move { Ok(SkillOutput::text(text)) }.boxed_local()
        }
        fn assess(&self, skill: &SkillDefinition, _call: &ToolCall) -> CallFacts {
            CallFacts {
                bulk_destructive: (skill.id.as_str() == "bulk").then(|| "all of them".into()),
            }
        }
        fn redirect(
            &self,
            skill: &SkillDefinition,
            call: &ToolCall,
        ) -> Option<Result<ToolCall, SkillError>> {
            (skill.id.as_str() == "hand_on").then(|| {
                Ok(ToolCall {
                    skill_id: SkillId::new("target").unwrap(),
                    ..call.clone()
                })
            })
        }
    }

    fn call(skill: &str) -> ToolCall {
        testing::call(skill)
            .id("c1")
            .origin(CallOrigin::User)
            .build()
    }

    /// The call path over `sources`, finding skills in `registry`.
    fn invoker(sources: Sources, registry: Registry) -> Invoker {
        Invoker::new(
            move |id| registry.get(id).cloned(),
            Rc::new(sources),
            Rc::new(FakeClock::at(0.0)),
            Rc::new(PermissionHook::new(
                Rc::new(MemoryPolicy::new(PermissionSettings::default())),
                Rc::new(NobodyToAsk),
            )),
        )
    }

    fn outcome(r: &ToolResult) -> String {
        format!(
            "{} {}",
            r.status.as_str(),
            r.error.clone().unwrap_or_else(|| r.to_model_text())
        )
    }

    #[test]
    fn a_call_reaches_the_source_that_registered_its_skill() {
        let core = Named::new(SourceKey::Core, &["calc", "notes"]);
        let web = Named::new(SourceKey::Web, &["fetch"]);
        let mut sources = Sources::new();
        sources.add(core.clone()).unwrap();
        sources.add(web.clone()).unwrap();
        let mut registry = Registry::new();
        let outcomes = sources.register_all(&mut registry);
        assert!(outcomes.iter().all(|(_, _, r)| r.is_ok()), "{outcomes:?}");
        let stamped: Vec<(&str, Option<SourceKey>)> =
            registry.iter().map(|s| (s.id.as_str(), s.source)).collect();
        assert_eq!(
            stamped,
            [
                ("calc", Some(SourceKey::Core)),
                ("notes", Some(SourceKey::Core)),
                ("fetch", Some(SourceKey::Web)),
            ]
        );
        let inv = invoker(sources, registry);
        for (id, want) in [
            ("fetch", "completed the web skills ran fetch"),
            ("notes", "completed Hearth's core skills ran notes"),
            ("calc", "completed Hearth's core skills ran calc"),
        ] {
            assert_eq!(outcome(&block_on(inv.invoke(call(id)))), want);
        }
        assert_eq!(*core.ran.borrow(), ["notes", "calc"]);
        assert_eq!(*web.ran.borrow(), ["fetch"]);
    }

    #[test]
    fn assess_and_redirect_go_to_the_owning_source() {
        let core = Named::new(SourceKey::Core, &["bulk", "hand_on", "target"]);
        let mut sources = Sources::new();
        sources.add(core.clone()).unwrap();
        let mut registry = Registry::new();
        sources.register_all(&mut registry);
        let bulk = registry.get_str("bulk").unwrap().clone();
        assert_eq!(
            sources
                .assess(&bulk, &call("bulk"))
                .bulk_destructive
                .as_deref(),
            Some("all of them")
        );
        let target = registry.get_str("target").unwrap().clone();
        assert_eq!(
            sources.assess(&target, &call("target")),
            CallFacts::default()
        );

        let r = block_on(invoker(sources, registry).invoke(call("hand_on")));
        assert_eq!(outcome(&r), "completed Hearth's core skills ran target");
        assert_eq!(*core.ran.borrow(), ["target"], "hand_on itself never runs");
    }

    #[test]
    fn a_skill_without_a_running_source_fails_with_a_clear_error() {
        let mut sources = Sources::new();
        sources.add(Named::new(SourceKey::Core, &["calc"])).unwrap();
        let mut registry = Registry::new();
        sources.register_all(&mut registry);
        // Registered as the web skills', but no web source runs here.
        register_from(&mut registry, SourceKey::Web, vec![skill("fetch")]);
        // Registered by no source at all.
        registry.register(skill("loose")).unwrap();
        let loose = registry.get_str("loose").unwrap().clone();
        assert_eq!(sources.assess(&loose, &call("loose")), CallFacts::default());
        assert!(sources.redirect(&loose, &call("loose")).is_none());

        let inv = invoker(sources, registry);
        let r = block_on(inv.invoke(call("fetch")));
        assert_eq!(r.status, ToolStatus::Failed);
        assert_eq!(
            outcome(&r),
            "failed the skill 'fetch' belongs to the web skills, which this build does not run"
        );
        let r = block_on(inv.invoke(call("loose")));
        assert_eq!(
            outcome(&r),
            "failed the skill 'loose' was registered by no source, so nothing can run it"
        );
        let r = block_on(inv.invoke(call("calc")));
        assert_eq!(r.status, ToolStatus::Completed, "the others still run");
    }

    #[test]
    fn two_sources_cannot_claim_one_id() {
        let core = Named::new(SourceKey::Core, &["calc", "shared"]);
        let code = Named::new(SourceKey::Code, &["shared", "run"]);
        let mut sources = Sources::new();
        sources.add(core.clone()).unwrap();
        sources.add(code.clone()).unwrap();
        let mut registry = Registry::new();
        let outcomes = sources.register_all(&mut registry);
        let refused: Vec<String> = outcomes
            .iter()
            .filter_map(|(key, id, r)| {
                r.as_ref()
                    .err()
                    .map(|e| format!("{} {id}: {e}", key.label()))
            })
            .collect();
        assert_eq!(
            refused,
            [
                "the code sandbox shared: the name 'shared' is taken by one of Hearth's own skills; \
              a skill can only replace one from its own source"
            ]
        );
        // The first source to register the name keeps it, and its calls.
        assert_eq!(
            registry.get_str("shared").unwrap().source,
            Some(SourceKey::Core)
        );
        let inv = invoker(sources, registry.clone());
        let r = block_on(inv.invoke(call("shared")));
        assert_eq!(outcome(&r), "completed Hearth's core skills ran shared");
        assert!(code.ran.borrow().is_empty());

        // A source may still replace its own skill in place.
        let again = register_from(
            &mut registry,
            SourceKey::Core,
            vec![skill("shared").with_description("newer")],
        );
        assert!(again[0].1.as_ref().unwrap().replaced);

        // And one key has one source.
        let mut sources = Sources::new();
        sources.add(core).unwrap();
        let twin = Named::new(SourceKey::Core, &["other"]);
        assert_eq!(
            sources.add(twin).unwrap_err().to_string(),
            "Hearth's core skills are already a source of skills"
        );
    }

    #[test]
    fn definitions_see_what_earlier_sources_registered() {
        /// Registers `dup` only when the name is free, else `dup_2`.
        struct Polite;
        impl SkillSource for Polite {
            fn key(&self) -> SourceKey {
                SourceKey::AgentSkills
            }
            fn definitions(&self, registry: &Registry) -> Vec<SkillDefinition> {
                let id = if registry.get_str("dup").is_some() {
                    "dup_2"
                } else {
                    "dup"
                };
                vec![skill(id)]
            }
            fn execute<'a>(
                &'a self,
                _skill: &'a SkillDefinition,
                _call: &'a ToolCall,
            ) -> LocalBoxFuture<'a, Result<SkillOutput, SkillError>> {
                async { Ok(SkillOutput::text_and_json("ok", json!({}))) }.boxed_local()
            }
        }
        let mut sources = Sources::new();
        sources.add(Named::new(SourceKey::Core, &["dup"])).unwrap();
        sources.add(Rc::new(Polite)).unwrap();
        let mut registry = Registry::new();
        assert!(
            sources
                .register_all(&mut registry)
                .iter()
                .all(|(_, _, r)| r.is_ok())
        );
        let ids: Vec<&str> = registry.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["dup", "dup_2"]);
    }

    /// Offers `tools` on every turn and a prompt naming the turn and what
    /// it offers, unless `quiet`.
    struct Offering {
        key: SourceKey,
        tools: Vec<&'static str>,
        quiet: bool,
    }

    impl SkillSource for Offering {
        fn key(&self) -> SourceKey {
            self.key
        }
        fn definitions(&self, _registry: &Registry) -> Vec<SkillDefinition> {
            Vec::new()
        }
        fn execute<'a>(
            &'a self,
            _skill: &'a SkillDefinition,
            _call: &'a ToolCall,
        ) -> LocalBoxFuture<'a, Result<SkillOutput, SkillError>> {
            async { Ok(SkillOutput::text("ok")) }.boxed_local()
        }
        fn turn_tools(&self, _turn: &Turn) -> Vec<SkillDefinition> {
            self.tools.iter().map(|id| skill(id)).collect()
        }
        fn turn_prompt(&self, turn: &Turn, offered: &[SkillDefinition]) -> Option<String> {
            if self.quiet {
                return Some("  \n".into());
            }
            let names: Vec<&str> = offered.iter().map(|d| d.id.as_str()).collect();
            Some(format!(
                "{} in {}: {}",
                self.key.label(),
                turn.conversation_id,
                names.join(",")
            ))
        }
    }

    fn offering(key: SourceKey, tools: &[&'static str], quiet: bool) -> Rc<dyn SkillSource> {
        Rc::new(Offering {
            key,
            tools: tools.to_vec(),
            quiet,
        })
    }

    #[test]
    fn a_turn_takes_discovery_and_the_loaded_skills() {
        let turn = Turn::new(
            "c1",
            vec![SkillId::new("calc").unwrap()],
            &["discover_skills"],
        );
        assert_eq!(turn.conversation_id, "c1");
        assert_eq!(turn.taken(), ["discover_skills", "calc"]);
        assert_eq!(turn.loaded, [SkillId::new("calc").unwrap()]);
    }

    #[test]
    fn turn_tools_come_in_source_order_each_once_and_clear_of_taken_names() {
        let mut sources = Sources::new();
        // A source that offers nothing is simply skipped.
        sources.add(Named::new(SourceKey::Core, &["calc"])).unwrap();
        sources
            .add(offering(
                SourceKey::AgentSkills,
                &["activate_skill", "calc", "read_skill_file"],
                false,
            ))
            .unwrap();
        sources
            .add(offering(
                SourceKey::Mcp,
                &["read_skill_file", "mcp_tool", "discover_skills"],
                false,
            ))
            .unwrap();
        let turn = Turn::new(
            "c1",
            vec![SkillId::new("calc").unwrap()],
            &["discover_skills"],
        );
        let ids: Vec<String> = sources
            .turn_tools(&turn)
            .iter()
            .map(|d| d.id.to_string())
            .collect();
        assert_eq!(ids, ["activate_skill", "read_skill_file", "mcp_tool"]);
        assert!(Sources::new().turn_tools(&turn).is_empty());
    }

    #[test]
    fn turn_prompts_come_in_source_order_and_empty_ones_are_left_out() {
        let mut sources = Sources::new();
        sources
            .add(offering(SourceKey::AgentSkills, &[], false))
            .unwrap();
        sources.add(offering(SourceKey::Web, &[], true)).unwrap();
        sources.add(Named::new(SourceKey::Core, &["calc"])).unwrap();
        sources.add(offering(SourceKey::Mcp, &[], false)).unwrap();
        let turn = Turn::new("c7", Vec::new(), &["discover_skills"]);
        let offered = [skill("calc"), skill("mcp_tool")];
        assert_eq!(
            sources.turn_prompts(&turn, &offered),
            [
                format!("{} in c7: calc,mcp_tool", SourceKey::AgentSkills.label()),
                format!("{} in c7: calc,mcp_tool", SourceKey::Mcp.label()),
            ]
        );
    }
}
