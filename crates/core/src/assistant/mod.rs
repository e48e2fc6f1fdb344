//! The assistant: the agent loop and its conversation ([`agent`]), the
//! model providers' wire formats ([`providers`]), GGUF model files for the
//! model in the tab ([`gguf`]) and the context meter's token estimate
//! ([`tokens`]).

pub mod agent;
pub mod gguf;
pub mod providers;
pub mod tokens;
