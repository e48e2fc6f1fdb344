//! The skill model and the one call path: what a skill is
//! ([`SkillDefinition`], its tier and kind), how it is typed
//! ([`command_forms`]) and filled in without a model ([`form`]), the
//! [`registry`] that holds every skill, the [`source`]s that bring and run
//! them, and a call's way through [`invoke`]: [`hook`]s and guards, the
//! [`permission`] decision, [`approval`], the result ([`call`]), its
//! sealed undo ([`seal`]) and the [`activity`] record.

mod definition;

pub mod activity;
pub mod approval;
pub mod call;
pub mod command_forms;
pub mod form;
pub mod hook;
pub mod invoke;
pub mod permission;
pub mod registry;
pub mod seal;
pub mod source;

pub use definition::{
    Category, SkillDefinition, SkillId, SkillIdError, SkillKind, SourceKey, Tier,
};
