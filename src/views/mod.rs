//! The app's places and shared components. Components render and dispatch;
//! the logic they call lives in hearth-core.

pub mod attach;
pub mod card;
pub mod chat;
pub mod code;
pub mod confirm;
pub mod files;
pub mod settings;
pub mod skills;
