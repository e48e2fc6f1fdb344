//! The app's places and shared components. Components render and dispatch;
//! the logic they call lives in hearth-core.

pub mod activity;
pub mod agent_skills;
pub mod approval;
pub mod attach;
pub mod card;
pub mod chat;
pub mod code;
pub mod confirm;
pub mod conversations;
pub mod files;
pub mod focus;
pub mod memory;
pub mod modal;
pub mod notes;
pub mod offline;
pub mod providers;
pub mod reply;
pub mod servers;
pub mod settings;
pub mod skill_form;
pub mod skills;
pub mod storage;
pub mod tabmodel;
pub mod tasks;
pub mod toast;
pub mod web;
