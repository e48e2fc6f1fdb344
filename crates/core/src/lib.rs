//! hearth-core: Hearth's domain in pure Rust.
//!
//! Skills, the registry, permission decisions, the call path and the
//! activity log live here, with no browser, UI framework, async runtime or
//! HTTP client underneath. The app and the `hearth` binary supply those
//! through the traits defined here.

pub mod agent_skills;
pub mod agents;
pub mod api;
pub mod assistant;
pub mod backup;
pub mod builtin;
pub mod discovery;
pub mod mcp;
pub mod skill;
pub mod stores;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod ui;
pub mod util;

pub use hearth_base::address;
pub use hearth_base::http;
pub use hearth_base::schema;
pub use hearth_base::sse;

pub use skill::call::{
    AgentCaller, CallOrigin, Content, SkillError, SkillOutput, ToolCall, ToolResult, ToolStatus,
};
pub use skill::registry::Registry;
pub use skill::{Category, SkillDefinition, SkillId, SkillKind, SourceKey, Tier};
