//! Hearth's skills for the person's other agents (Claude Code, Codex,
//! goose, Claude Desktop…), reached over MCP through `hearth serve`.
//!
//! `hearth serve` keeps one [`AgentRecord`] per connected agent (its name,
//! what it may see, what the person always allows it) next to a hash of
//! its credential, and relays each request to the open Hearth tab
//! ([`wire`]). The tab answers through the one call path: the skills an
//! agent may see become MCP tools and its notes and memories resources
//! ([`exported`]); every call is a [`ToolCall`] whose origin names the
//! agent, decided by [`agent_policy`], which is never looser than what
//! the person set for their own model. [`snippets`] are the config texts
//! the Settings panel shows for each kind of agent.

pub mod consent;
pub mod exported;
pub mod snippets;
pub mod wire;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agent_skills::activation::{
    ACTIVATE_SKILL, CALL_SKILL_TOOL, READ_RESOURCE, READ_SKILL_FILE, RETURN_TO_GENERAL,
};
use crate::discovery::DISCOVER_SKILLS_ID;
use crate::skill::call::{AgentCaller, ToolCall};
use crate::skill::permission::{ApprovalSetting, PermissionMode, PermissionSettings, Policy};
use crate::skill::{SkillDefinition, SkillKind, Tier};

/// What a newly connected agent may see: the person's notes, tasks and
/// memory. Nothing from the network or integration tiers.
pub const DEFAULT_SHARED: [&str; 3] = ["notes", "tasks", "memory"];

/// The longest name an agent may have.
pub const MAX_NAME: usize = 60;

/// When an agent's calls ask the person first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AgentAsk {
    /// Calls that change something (create, update, delete…) ask; reads
    /// run as they would for the person's own model.
    #[default]
    Changes,
    /// Every call asks.
    Everything,
}

impl AgentAsk {
    pub const ALL: [AgentAsk; 2] = [AgentAsk::Changes, AgentAsk::Everything];

    pub fn as_str(self) -> &'static str {
        match self {
            AgentAsk::Changes => "changes",
            AgentAsk::Everything => "everything",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            AgentAsk::Changes => "Ask before it changes anything",
            AgentAsk::Everything => "Ask before every call",
        }
    }
}

/// The kinds of agent Hearth has a config snippet for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AgentClient {
    ClaudeCode,
    Codex,
    Goose,
    ClaudeDesktop,
    #[default]
    Other,
}

impl AgentClient {
    pub const ALL: [AgentClient; 5] = [
        AgentClient::ClaudeCode,
        AgentClient::Codex,
        AgentClient::Goose,
        AgentClient::ClaudeDesktop,
        AgentClient::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AgentClient::ClaudeCode => "claude-code",
            AgentClient::Codex => "codex",
            AgentClient::Goose => "goose",
            AgentClient::ClaudeDesktop => "claude-desktop",
            AgentClient::Other => "other",
        }
    }

    /// The agent's usual name, the default name of its credential.
    pub fn label(self) -> &'static str {
        match self {
            AgentClient::ClaudeCode => "Claude Code",
            AgentClient::Codex => "Codex",
            AgentClient::Goose => "goose",
            AgentClient::ClaudeDesktop => "Claude Desktop",
            AgentClient::Other => "Another MCP client",
        }
    }

    pub fn parse(s: &str) -> Option<AgentClient> {
        AgentClient::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// One connected agent as `hearth serve` keeps it and the app sees it:
/// everything but its credential.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentRecord {
    /// Stable, random, never the credential.
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub client: AgentClient,
    /// Unix milliseconds.
    pub created_ms: u64,
    /// When the agent last called, Unix milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_ms: Option<u64>,
    /// The skill ids the agent may see and call.
    #[serde(default)]
    pub shared: Vec<String>,
    /// Skills the person chose "always allow" for, for this agent only.
    #[serde(default)]
    pub always: Vec<String>,
    #[serde(default)]
    pub ask: AgentAsk,
}

impl AgentRecord {
    /// Who its calls come from.
    pub fn caller(&self) -> AgentCaller {
        AgentCaller {
            id: self.id.clone(),
            name: self.name.clone(),
        }
    }

    /// Whether the agent may see and call `skill`: shared with it, and of a
    /// kind that may be shared at all.
    pub fn sees(&self, skill: &SkillDefinition) -> bool {
        shareable(skill) && self.shared.iter().any(|s| s == skill.id.as_str())
    }

    /// Whether the person chose "always allow" for `skill` for this agent.
    pub fn always_allows(&self, skill: &str) -> bool {
        self.always.iter().any(|s| s == skill)
    }
}

/// Whether a skill can be shared with an agent at all. Tools that MCP
/// servers gave Hearth are never re-exported (the agent can reach those
/// servers itself, with its own consent), and the skills that only serve
/// the model's progressive disclosure mean nothing to another agent.
pub fn shareable(skill: &SkillDefinition) -> bool {
    match &skill.kind {
        SkillKind::Mcp { .. } => false,
        SkillKind::Builtin | SkillKind::AgentSkill { .. } => !matches!(
            skill.id.as_str(),
            DISCOVER_SKILLS_ID
                | ACTIVATE_SKILL
                | READ_SKILL_FILE
                | READ_RESOURCE
                | CALL_SKILL_TOOL
                | RETURN_TO_GENERAL
        ),
    }
}

/// Whether a tier is shared only when the person picks its skills one by
/// one (the Agents panel shows them apart, off unless chosen).
pub fn opt_in_tier(tier: Tier) -> bool {
    match tier {
        Tier::Network | Tier::Integration => true,
        Tier::Core | Tier::Enhanced => false,
    }
}

/// The action a call of a built-in skill names, e.g. `"create"`.
fn action(arguments: &Value) -> Option<&str> {
    arguments.get("action").and_then(Value::as_str)
}

/// Whether a call only reads: the actions of notes, tasks and memory that
/// change nothing, and the calculator. Anything else counts as a change,
/// so what this does not know asks.
pub fn reads_only(skill: &str, arguments: &Value) -> bool {
    matches!(
        (skill, action(arguments)),
        ("calculator", _)
            | ("notes", Some("read" | "list" | "search"))
            | ("tasks", Some("list"))
            | ("memory", Some("recall" | "read" | "list"))
    )
}

/// The policy one call from `agent` is decided by. It is never looser
/// than the person's own:
/// - chat-only stops agents as it stops the model;
/// - a skill not shared with the agent is off, whatever else is set;
/// - the person's "never allow" and "ask every time" hold for agents too,
///   their "always allow" does not (it was said to their own model): only
///   the agent's own "always allow" lets a call through without asking;
/// - calls that change something ask (every call, if the agent is set to
///   ask for everything, or Hearth is); reads run as the mode says.
pub fn agent_policy(
    global: &PermissionSettings,
    agent: &AgentRecord,
    skill: &SkillDefinition,
    call: &ToolCall,
) -> Policy {
    let own = global.policy(skill);
    let mut settings = own.settings;
    if !agent.sees(skill) {
        settings.enabled = Some(false);
    }
    settings.approval = match own.settings.approval {
        Some(ApprovalSetting::NeverAllow) => Some(ApprovalSetting::NeverAllow),
        Some(ApprovalSetting::Ask) => Some(ApprovalSetting::Ask),
        Some(ApprovalSetting::AlwaysAllow) | None => agent
            .always_allows(skill.id.as_str())
            .then_some(ApprovalSetting::AlwaysAllow),
    };
    let reads = reads_only(skill.id.as_str(), &call.arguments);
    let mode = match own.mode {
        PermissionMode::ChatOnly => PermissionMode::ChatOnly,
        PermissionMode::AskEverything => PermissionMode::AskEverything,
        PermissionMode::AskSensitive | PermissionMode::Auto => {
            if agent.ask == AgentAsk::Everything || !reads {
                PermissionMode::AskEverything
            } else {
                PermissionMode::AskSensitive
            }
        }
    };
    Policy {
        mode,
        settings,
        tier_enabled: own.tier_enabled,
    }
}

/// What a call does, in a few words after "wants to": "create a note",
/// "search your notes", "run Calculator".
pub fn action_words(skill: &SkillDefinition, arguments: &Value) -> String {
    let words = match (skill.id.as_str(), action(arguments)) {
        ("notes", Some("create")) => "create a note",
        ("notes", Some("read")) => "read a note",
        ("notes", Some("update")) => "change a note",
        ("notes", Some("delete")) => "delete notes",
        ("notes", Some("list")) => "list your notes",
        ("notes", Some("search")) => "search your notes",
        ("notes", Some("restore")) => "restore notes",
        ("tasks", Some("create")) => "add a task",
        ("tasks", Some("update")) => "change a task",
        ("tasks", Some("complete")) => "complete a task",
        ("tasks", Some("reopen")) => "reopen a task",
        ("tasks", Some("delete")) => "delete tasks",
        ("tasks", Some("list")) => "list your tasks",
        ("tasks", Some("restore")) => "restore tasks",
        ("memory", Some("remember")) => "remember something about you",
        ("memory", Some("recall")) => "recall what Hearth remembers",
        ("memory", Some("read")) => "read a memory",
        ("memory", Some("update")) => "change a memory",
        ("memory", Some("forget")) => "forget memories",
        ("memory", Some("list")) => "list what Hearth remembers",
        ("memory", Some("restore")) => "restore memories",
        ("calculator", _) => "work something out",
        _ => return format!("run {}", skill.name),
    };
    words.to_string()
}

/// The approval dialog's question for a call from `agent`:
/// "Claude Code wants to create a note".
pub fn wants_to(agent: &str, skill: &SkillDefinition, arguments: &Value) -> String {
    format!("{agent} wants to {}", action_words(skill, arguments))
}

/// What `decide` says when the mode asks for every call.
const MODE_ASKS: &str = "Hearth is set to ask before every skill";

/// Why a call from an agent asks, for the approval dialog: when it asks
/// only because it came from an agent (the person's own mode would let
/// it run), the reason says that instead of naming the mode.
pub fn ask_reason(reason: &str, global: PermissionMode, agent: &str) -> String {
    if reason == MODE_ASKS && global != PermissionMode::AskEverything {
        format!(
            "{agent} is an agent you connected, and an agent's calls ask unless you always allow that skill for it"
        )
    } else {
        reason.to_string()
    }
}

/// A name the person typed for an agent, trimmed; `None` when empty or
/// too long.
pub fn clean_name(name: &str) -> Option<String> {
    let name: String = name.trim().chars().filter(|c| !c.is_control()).collect();
    (!name.is_empty() && name.chars().count() <= MAX_NAME).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::SkillId;
    use crate::skill::call::CallOrigin;
    use crate::skill::permission::{CallFacts, DecidedBy, Decision, decide};
    use serde_json::json;

    fn agent(shared: &[&str], always: &[&str], ask: AgentAsk) -> AgentRecord {
        AgentRecord {
            id: "a1".into(),
            name: "Claude Code".into(),
            client: AgentClient::ClaudeCode,
            created_ms: 1,
            last_used_ms: None,
            shared: shared.iter().map(|s| s.to_string()).collect(),
            always: always.iter().map(|s| s.to_string()).collect(),
            ask,
        }
    }

    fn call(skill: &str, args: Value, agent: &AgentRecord) -> ToolCall {
        ToolCall {
            id: "c".into(),
            skill_id: SkillId::new(skill).unwrap(),
            arguments: args,
            conversation_id: None,
            origin: CallOrigin::Agent(agent.caller()),
        }
    }

    fn skill(id: &str) -> SkillDefinition {
        crate::builtin::definitions()
            .into_iter()
            .find(|s| s.id.as_str() == id)
            .unwrap()
    }

    /// (what, global settings, agent, skill, arguments) → decision kind
    #[test]
    fn an_agent_is_never_decided_more_loosely_than_the_persons_model() {
        let shared = agent(&DEFAULT_SHARED, &[], AgentAsk::Changes);
        let mut always_notes = PermissionSettings::default();
        always_notes.set_approval("notes", Some(ApprovalSetting::AlwaysAllow));
        let mut never_notes = PermissionSettings::default();
        never_notes.set_approval("notes", Some(ApprovalSetting::NeverAllow));
        let auto = PermissionSettings {
            mode: PermissionMode::Auto,
            ..PermissionSettings::default()
        };
        let chat_only = PermissionSettings {
            mode: PermissionMode::ChatOnly,
            ..PermissionSettings::default()
        };
        let ask_all = PermissionSettings {
            mode: PermissionMode::AskEverything,
            ..PermissionSettings::default()
        };
        let mut web_on = PermissionSettings::default();
        web_on.set_enabled("web_fetch", Some(true));
        let create = json!({"action": "create", "title": "x"});
        let search = json!({"action": "search", "query": "x"});
        let defaults = PermissionSettings::default();
        let table: Vec<(&str, &PermissionSettings, AgentRecord, &str, Value, &str)> = vec![
            (
                "a read runs",
                &defaults,
                shared.clone(),
                "notes",
                search.clone(),
                "allow",
            ),
            (
                "a change asks",
                &defaults,
                shared.clone(),
                "notes",
                create.clone(),
                "ask",
            ),
            (
                "auto mode does not carry over to changes",
                &auto,
                shared.clone(),
                "notes",
                create.clone(),
                "ask",
            ),
            (
                "the person's always-allow does not carry over",
                &always_notes,
                shared.clone(),
                "notes",
                create.clone(),
                "ask",
            ),
            (
                "the agent's own always-allow does",
                &defaults,
                agent(&DEFAULT_SHARED, &["notes"], AgentAsk::Changes),
                "notes",
                create.clone(),
                "allow",
            ),
            (
                "never-allow holds for agents",
                &never_notes,
                agent(&DEFAULT_SHARED, &["notes"], AgentAsk::Changes),
                "notes",
                search.clone(),
                "deny",
            ),
            (
                "chat-only stops agents",
                &chat_only,
                shared.clone(),
                "notes",
                search.clone(),
                "deny",
            ),
            (
                "ask-everything asks reads too",
                &ask_all,
                shared.clone(),
                "notes",
                search.clone(),
                "ask",
            ),
            (
                "an agent set to ask everything asks reads",
                &defaults,
                agent(&DEFAULT_SHARED, &[], AgentAsk::Everything),
                "notes",
                search.clone(),
                "ask",
            ),
            (
                "a skill not shared is off",
                &defaults,
                shared.clone(),
                "calculator",
                json!({"expression": "1+1"}),
                "deny",
            ),
            (
                "a shared calculator runs",
                &defaults,
                agent(&["calculator"], &[], AgentAsk::Changes),
                "calculator",
                json!({"expression": "1+1"}),
                "allow",
            ),
            (
                "a network skill the person keeps off stays off",
                &defaults,
                agent(&["web_fetch"], &[], AgentAsk::Changes),
                "web_fetch",
                json!({"url": "https://example.com"}),
                "deny",
            ),
            (
                "the agent's always-allow lets a network call run",
                &web_on,
                agent(&["web_fetch"], &["web_fetch"], AgentAsk::Changes),
                "web_fetch",
                json!({"url": "https://example.com"}),
                "allow",
            ),
            (
                "a network skill asks when on and shared",
                &web_on,
                agent(&["web_fetch"], &[], AgentAsk::Changes),
                "web_fetch",
                json!({"url": "https://example.com"}),
                "ask",
            ),
        ];
        for (what, global, agent, id, args, want) in table {
            let s = skill(id);
            let c = call(id, args, &agent);
            let got = match decide(
                &s,
                &agent_policy(global, &agent, &s, &c),
                &CallFacts::default(),
            ) {
                Decision::Allow { .. } => "allow",
                Decision::Ask { .. } => "ask",
                Decision::Deny { .. } => "deny",
            };
            assert_eq!(got, want, "{what}");
        }
    }

    #[test]
    fn a_bulk_delete_from_an_agent_always_asks() {
        let a = agent(&DEFAULT_SHARED, &["notes"], AgentAsk::Changes);
        let s = skill("notes");
        let c = call("notes", json!({"action": "delete", "ids": ["a", "b"]}), &a);
        let facts = CallFacts {
            bulk_destructive: Some("delete 2 notes".into()),
        };
        assert!(matches!(
            decide(
                &s,
                &agent_policy(&PermissionSettings::default(), &a, &s, &c),
                &facts
            ),
            Decision::Ask {
                by: DecidedBy::Policy,
                ..
            }
        ));
    }

    #[test]
    fn mcp_tools_and_the_models_own_skills_are_never_shareable() {
        let mut from_server = skill("notes");
        from_server.kind = SkillKind::Mcp {
            server: "everything".into(),
            tool: "echo".into(),
        };
        assert!(!shareable(&from_server));
        assert!(!shareable(&skill(DISCOVER_SKILLS_ID)));
        assert!(shareable(&skill("notes")));
        assert!(shareable(&skill("web_fetch")));
        // Shared by name is not enough for a tool a server gave Hearth.
        let a = agent(&["notes"], &[], AgentAsk::Changes);
        assert!(!a.sees(&from_server));
        assert!(a.sees(&skill("notes")));
    }

    #[test]
    fn the_dialog_says_what_the_agent_wants() {
        let table = [
            (
                "notes",
                json!({"action": "create", "title": "x"}),
                "Claude Code wants to create a note",
            ),
            (
                "tasks",
                json!({"action": "complete", "id": "t"}),
                "Claude Code wants to complete a task",
            ),
            (
                "memory",
                json!({"action": "remember", "text": "x"}),
                "Claude Code wants to remember something about you",
            ),
            (
                "web_fetch",
                json!({"url": "https://example.com"}),
                "Claude Code wants to run Web fetch",
            ),
        ];
        for (id, args, want) in table {
            assert_eq!(wants_to("Claude Code", &skill(id), &args), want);
        }
    }

    #[test]
    fn the_dialog_says_an_agent_asks_because_it_is_an_agent() {
        let a = agent(&DEFAULT_SHARED, &[], AgentAsk::Changes);
        let s = skill("notes");
        let c = call("notes", json!({"action": "create", "title": "x"}), &a);
        let Decision::Ask { reason, .. } = decide(
            &s,
            &agent_policy(&PermissionSettings::default(), &a, &s, &c),
            &CallFacts::default(),
        ) else {
            panic!("a change from an agent asks");
        };
        assert_eq!(
            ask_reason(&reason, PermissionMode::AskSensitive, "Codex"),
            "Codex is an agent you connected, and an agent's calls ask unless you always allow that skill for it"
        );
        assert_eq!(
            ask_reason(&reason, PermissionMode::AskEverything, "Codex"),
            reason,
            "when the person asks for everything, that is the reason"
        );
        assert_eq!(
            ask_reason(
                "x reaches the internet",
                PermissionMode::AskSensitive,
                "Codex"
            ),
            "x reaches the internet"
        );
    }

    #[test]
    fn what_counts_as_a_read() {
        assert!(reads_only(
            "notes",
            &json!({"action": "search", "query": "x"})
        ));
        assert!(reads_only("memory", &json!({"action": "read", "id": "m"})));
        assert!(!reads_only("notes", &json!({"action": "create"})));
        assert!(!reads_only("notes", &json!({})));
        assert!(!reads_only("run_javascript", &json!({"code": "1"})));
    }

    #[test]
    fn names_are_trimmed_and_bounded() {
        assert_eq!(clean_name("  Claude Code \n"), Some("Claude Code".into()));
        assert_eq!(clean_name("   "), None);
        assert_eq!(clean_name(&"x".repeat(MAX_NAME + 1)), None);
        assert_eq!(clean_name("a\u{7}b"), Some("ab".into()));
    }

    #[test]
    fn records_read_back_from_older_files() {
        let r: AgentRecord =
            serde_json::from_value(json!({"id": "a", "name": "n", "created_ms": 5})).unwrap();
        assert_eq!(r.ask, AgentAsk::Changes);
        assert_eq!(r.client, AgentClient::Other);
        assert!(r.shared.is_empty());
    }
}
