//! The skills Hearth brings itself: their definitions (`catalog.rs`, shared
//! by the app and the CLI, re-exported here) and the pure part of each:
//! [`artifacts`] (and their [`artifact_pins`] in notes), the [`calculator`](mod@calculator), [`notes`], [`tasks`] and [`memory`]
//! over one kind of [`collection`] (searched by [`words`]), the [`code`]
//! sandbox's protocol and the [`web`] skills' requests and cards.

mod catalog;

pub mod artifact_pins;
pub mod artifacts;
pub mod calculator;
pub mod code;
pub mod collection;
pub mod memory;
pub mod notes;
pub mod tasks;
pub mod web;
pub mod words;

pub use catalog::{
    calculator, code_skills, core_skills, definitions, file_skills, registry, web_skills,
};
