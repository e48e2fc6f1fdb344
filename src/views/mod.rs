//! The app's places, one folder or file each, and the result cards they
//! show. Components render and dispatch; the logic they call lives in
//! hearth-core. A place never names another place: what two places use
//! lives in `cards` (result cards) or in `crate::shared`.

pub mod activity;
pub mod cards;
pub mod chat;
pub mod memory;
pub mod notes;
pub mod servers;
pub mod settings;
pub mod skills;
pub mod tasks;
