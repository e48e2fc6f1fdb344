//! hearth-base: the few things every layer of Hearth shares, with almost no
//! dependencies: the platform's clock ([`TimeSource`]) and the incremental
//! SSE parser ([`sse`]) that model providers and MCP both stream through.

pub mod sse;

/// Wall time and a monotonic clock, given by the platform.
pub trait TimeSource {
    fn now_unix_ms(&self) -> f64;
    /// Milliseconds from an arbitrary origin; only differences matter.
    fn monotonic_ms(&self) -> f64;
}
