//! hearth-core: Hearth's domain in pure Rust.
//!
//! Skills, the registry, permission decisions, the call path and the
//! activity log live here, with no browser, UI framework, async runtime or
//! HTTP client underneath. The app and the `hearth` binary supply those
//! through the traits defined here.

pub mod activity;
pub mod builtin;
pub mod calculator;
pub mod call;
pub mod code;
pub mod command;
pub mod display;
pub mod invoke;
pub mod permission;
pub mod registry;
pub mod schema;
pub mod skill;
pub mod sse;

pub use call::{CallOrigin, Content, SkillError, SkillOutput, ToolCall, ToolResult, ToolStatus};
pub use registry::Registry;
pub use skill::{Category, SkillDefinition, SkillId, SkillKind, Tier};
