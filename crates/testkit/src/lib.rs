//! hearth-testkit: test support that plays the outside world. The fake
//! model server speaks the OpenAI-compatible and Anthropic streaming
//! protocols the way the real services do, playing scripted turns, so the
//! app and the core can be tested end to end without a model.

pub mod script;
pub mod server;
pub mod wire;

pub use script::{Failure, Reply, Script, ScriptError, ScriptedCall, Turn, When};
pub use server::{FakeModel, RecordedRequest, router};
