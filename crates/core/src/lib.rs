//! hearth-core: Hearth's domain in pure Rust.
//!
//! Skills, the registry, permission decisions, the call path and the
//! activity log live here, with no browser, UI framework, async runtime or
//! HTTP client underneath. The app and the `hearth` binary supply those
//! through the traits defined here.

pub mod activity;
pub mod agent;
pub mod agent_skills;
pub mod agents;
pub mod approval;
pub mod backup;
pub mod builtin;
pub mod calculator;
pub mod call;
pub mod code;
pub mod collection;
pub mod command;
pub mod composer;
pub mod date_math;
pub mod dates;
pub mod discovery;
pub mod display;
pub mod form;
pub mod gguf;
pub mod hook;
pub mod invoke;
pub mod mcp;
pub mod memory;
pub mod notes;
pub mod permission;
pub mod provider_form;
pub mod providers;
pub mod registry;
pub use hearth_base::address;
pub use hearth_base::schema;
pub mod seal;
pub use hearth_base::sse;
pub mod server_card;
pub mod skill;
pub mod source;
pub mod tasks;
pub mod text;
pub mod tokens;
pub mod usage;
pub mod web;

pub use call::{
    AgentCaller, CallOrigin, Content, SkillError, SkillOutput, ToolCall, ToolResult, ToolStatus,
};
pub use registry::Registry;
pub use skill::{Category, SkillDefinition, SkillId, SkillKind, SourceKey, Tier};
