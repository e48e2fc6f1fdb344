//! MCP natively: the reqwest transport for hearth-core's client, the
//! platform pieces OAuth needs, and the `hearth mcp` commands (including
//! the client mode the official conformance suite drives).

pub mod cli;
pub mod conformance;
pub mod platform;
pub mod stdio;
pub mod transport;
