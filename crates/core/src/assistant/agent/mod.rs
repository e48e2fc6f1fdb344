//! The assistant's core half: conversations, what each request carries
//! (and how it is fitted into the model's context window), and the agent loop that drives a provider and hands tool calls out to
//! the permission layer, and the Markdown export. The browser supplies all
//! I/O.

pub mod conversation;
pub mod export;
mod machine;
pub mod prompt;
pub mod window;

pub use conversation::{
    CallState, Conversation, ConversationError, ConversationSettings, Message, MessageStatus, Role,
    SearchHit, SkillUsage, ToolCallRecord, always_loaded_suggestion, search,
    title_from_first_message,
};
pub use machine::{
    Action, AgentLoop, Event, LoopConfig, LoopEnv, LoopError, LoopState, RequestId, TurnOutcome,
};
pub use window::ContextNote;

pub use crate::assistant::providers::ModelLimits;
