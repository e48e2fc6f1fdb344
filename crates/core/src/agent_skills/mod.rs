//! Agent Skills in Hearth's skill model: the specification library is
//! `hearth-agent-skills`, re-exported here whole; these modules are the
//! adapters above it — [`activation`] (the model's skill tools and the
//! scoped tools of active skills, as registry skills) and [`context`] (the
//! general and specialist prompts).

pub use hearth_agent_skills::*;

pub mod activation;
pub mod context;

pub use activation::{ActivationOutcome, ConversationSkills, ScriptRequest};
