//! MCP natively: the reqwest transport for hearth-core's client, the
//! platform pieces OAuth needs, the `hearth mcp` commands (including the
//! client mode the official conformance suite drives), and what
//! `hearth serve` offers the app: the guarded stdio bridge and CORS relay
//! ([`api`], [`relay`]).

pub mod api;
pub mod cli;
pub mod conformance;
pub mod platform;
pub mod relay;
pub mod stdio;
pub mod transport;
