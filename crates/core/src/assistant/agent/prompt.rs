//! What each request carries: the system prompt, the history and the
//! tools for this turn (`discover_skills` plus the conversation's loaded
//! skills). Kept small on purpose: the opening context is the same size
//! whether ten skills are registered or ten thousand.

use super::conversation::Conversation;
use super::window::{ContextNote, fit};
use crate::assistant::providers::{ChatRequest, ModelLimits, ToolSpec};
use crate::discovery::discover_skills_definition;
use crate::skill::{SkillDefinition, SkillId};

/// The default system prompt.
pub const SYSTEM_PROMPT: &str = "You are Hearth, a helpful assistant running in the user's browser. Your abilities are skills. To act or to get exact information (math, notes, tasks, files, code, the web, connected services), first call discover_skills with a few words describing the capability, then call the skills it loads. Never guess what a skill would compute. Answer concisely.";

/// The default system prompt for a model that cannot call tools: it is
/// not told about skills it could never use.
pub const SYSTEM_PROMPT_NO_TOOLS: &str =
    "You are Hearth, a helpful assistant running in the user's browser. Answer concisely.";

/// The system prompt for a conversation: its own, else the default.
pub fn system_prompt(conversation: &Conversation) -> String {
    own_prompt(conversation).unwrap_or_else(|| SYSTEM_PROMPT.to_string())
}

fn own_prompt(conversation: &Conversation) -> Option<String> {
    conversation
        .settings
        .system_prompt
        .clone()
        .filter(|s| !s.trim().is_empty())
}

/// The tools offered on the next request: discovery first, then the
/// loaded skills that still exist and are enabled (`lookup` says), then
/// any extra tools (e.g. an active Agent Skill's), without duplicates.
pub fn tools_for_turn(
    conversation: &Conversation,
    lookup: &dyn Fn(&SkillId) -> Option<SkillDefinition>,
    extra: &[SkillDefinition],
) -> Vec<ToolSpec> {
    let mut tools = vec![ToolSpec::from_skill(&discover_skills_definition())];
    let loaded = conversation.loaded_skills.iter().filter_map(lookup);
    for def in loaded.chain(extra.iter().cloned()) {
        if !tools.iter().any(|t| t.name == def.id.as_str()) {
            tools.push(ToolSpec::from_skill(&def));
        }
    }
    tools
}

/// The system prompt with the sections other parts add for this request
/// (empty ones are skipped), each after a blank line.
pub fn system_with(conversation: &Conversation, additions: &[String]) -> String {
    let mut system = system_prompt(conversation);
    for section in additions.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        system.push_str("\n\n");
        system.push_str(section);
    }
    system
}

/// The whole request for the next step.
pub fn build_request(
    conversation: &Conversation,
    lookup: &dyn Fn(&SkillId) -> Option<SkillDefinition>,
    extra: &[SkillDefinition],
    additions: &[String],
) -> ChatRequest {
    ChatRequest {
        system: system_with(conversation, additions),
        messages: conversation.to_wire(),
        tools: tools_for_turn(conversation, lookup, extra),
    }
}

/// The request for the next step as the model in use can take it: with
/// no tools (and no sections about them) for a model that cannot call
/// tools, and fitted into its context window. Returns what was left out.
pub fn build_request_for(
    conversation: &Conversation,
    lookup: &dyn Fn(&SkillId) -> Option<SkillDefinition>,
    extra: &[SkillDefinition],
    additions: &[String],
    limits: &ModelLimits,
) -> (ChatRequest, Option<ContextNote>) {
    let mut request = if limits.tools {
        build_request(conversation, lookup, extra, additions)
    } else {
        ChatRequest {
            system: own_prompt(conversation).unwrap_or_else(|| SYSTEM_PROMPT_NO_TOOLS.to_string()),
            messages: conversation.to_wire(),
            tools: Vec::new(),
        }
    };
    let note = fit(&mut request, limits);
    (request, note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_conversation_offers_only_discovery() {
        let c = Conversation::new("c", 0.0);
        let names: Vec<String> = tools_for_turn(&c, &|_| None, &[])
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["discover_skills"]);
    }

    #[test]
    fn loaded_skills_that_vanished_or_were_disabled_are_not_offered() {
        let mut c = Conversation::new("c", 0.0);
        c.load_skills([
            SkillId::new("calculator").unwrap(),
            SkillId::new("gone").unwrap(),
        ]);
        let lookup = |id: &SkillId| (id.as_str() == "calculator").then(crate::builtin::calculator);
        let names: Vec<String> = tools_for_turn(&c, &lookup, &[crate::builtin::calculator()])
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["discover_skills", "calculator"]);
    }

    #[test]
    fn conversation_prompt_overrides_the_default() {
        let mut c = Conversation::new("c", 0.0);
        assert_eq!(system_prompt(&c), SYSTEM_PROMPT);
        c.settings.system_prompt = Some("Be terse.".into());
        assert_eq!(system_prompt(&c), "Be terse.");
        assert_eq!(
            system_with(
                &c,
                &["".into(), " <available_skills/> ".into(), "MCP".into()]
            ),
            "Be terse.\n\n<available_skills/>\n\nMCP"
        );
    }

    #[test]
    fn a_model_without_tools_gets_none_and_is_not_told_about_them() {
        let mut c = Conversation::new("c", 0.0);
        c.load_skills([SkillId::new("calculator").unwrap()]);
        let lookup = |id: &SkillId| (id.as_str() == "calculator").then(crate::builtin::calculator);
        let no_tools = ModelLimits {
            tools: false,
            ..ModelLimits::default()
        };
        let (r, note) = build_request_for(
            &c,
            &lookup,
            &[crate::builtin::calculator()],
            &["<available_skills/>".into()],
            &no_tools,
        );
        assert_eq!(note, None);
        assert!(r.tools.is_empty());
        assert_eq!(r.system, SYSTEM_PROMPT_NO_TOOLS);
        // The person's own prompt still applies.
        c.settings.system_prompt = Some("Be terse.".into());
        let (r, _) = build_request_for(&c, &lookup, &[], &[], &no_tools);
        assert_eq!(r.system, "Be terse.");
        // With tools, the usual request.
        let (r, _) = build_request_for(&c, &lookup, &[], &[], &ModelLimits::default());
        assert_eq!(r, build_request(&c, &lookup, &[], &[]));
    }
}
