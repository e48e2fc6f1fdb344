//! MCP in Hearth's skill model: the protocol client is `hearth-mcp`,
//! re-exported here whole; these modules are the adapters above it —
//! [`skills`] (tools as integration-tier skills, and running them) and
//! [`apps`] (MCP Apps' calls and budget). Prompts as `/` commands and
//! resources as attachments are the composer's (`crate::ui::mcp_composer`).

pub use hearth_mcp::*;

pub mod apps;
pub mod skills;
