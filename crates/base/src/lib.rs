//! hearth-base: the vocabulary every layer of Hearth shares: the
//! platform's clock ([`TimeSource`]), the incremental SSE parser ([`sse`])
//! that model providers and MCP both stream through, the one HTTP request
//! type they both ask the platform to send ([`http`]), the id a skill is
//! called by ([`skill_id`]), the JSON Schema subset skills declare their
//! inputs and outputs in ([`schema`]), which addresses are not the
//! public internet ([`address`]) and how text is escaped for HTML
//! ([`html`]); with the `testing` feature, the fakes
//! tests share (`testing`).

pub mod address;
pub mod html;
pub mod http;
pub mod schema;
pub mod skill_id;
pub mod sse;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

/// Wall time and a monotonic clock, given by the platform.
pub trait TimeSource {
    fn now_unix_ms(&self) -> f64;
    /// Milliseconds from an arbitrary origin; only differences matter.
    fn monotonic_ms(&self) -> f64;
}
