//! MCP natively, as a client: the reqwest transport for hearth-core's
//! client, the platform pieces OAuth needs, and the `hearth mcp` commands
//! (including the client mode the official conformance suite drives).
//! What `hearth serve` offers the app over MCP is in the features `stdio`
//! (the bridge) and `relay` (the CORS relay).

pub mod bridge;
pub mod cli;
pub mod conformance;
pub mod platform;
pub mod transport;
