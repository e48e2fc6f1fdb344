//! MCP in Hearth's skill model: the protocol client is `hearth-mcp`,
//! re-exported here whole; these modules are the adapters above it —
//! [`skills`] (tools as integration-tier skills, and running them),
//! [`apps`] (MCP Apps' calls and budget) and [`composer`] (prompts as
//! `/` commands, resources as attachments).

pub use hearth_mcp::*;

pub mod apps;
pub mod composer;
pub mod skills;
