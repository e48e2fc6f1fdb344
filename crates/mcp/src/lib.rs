//! hearth-mcp: the Model Context Protocol client, how Hearth talks to MCP
//! servers, with no knowledge of Hearth's skills or registry.
//!
//! Split the way rmcp splits it: [`model`] and [`jsonrpc`] are wire types
//! only; [`client`] is the protocol (both eras, over any transport);
//! [`transport`] is the one trait the platform implements (fetch in the
//! browser, reqwest in `hearth`). Around them: era detection ([`version`]),
//! SSE reading ([`stream`]), mirrored headers ([`headers`]), OAuth 2.1
//! ([`oauth`] pure, [`authorize`] driven), the servers the person added
//! ([`servers`]) and the wire types of what `hearth serve` hosts
//! ([`hosted`]). The bridge into the skill registry lives in hearth-core.

pub mod authorize;
pub mod client;
pub mod error;
#[cfg(test)]
mod exchanges;
pub mod headers;
pub mod hosted;
pub mod jsonrpc;
pub mod model;
pub mod oauth;
pub mod server;
pub mod server_id;
pub mod servers;
pub mod stream;
pub mod transport;
pub mod url;
pub mod version;

pub use client::{
    AuthProvider, CallOptions, ClientConfig, InputHandler, McpClient, NoInput, ServerEvent,
    ServerInfo, Subscription, ToolListing, cancellation,
};
pub use error::McpError;
pub use server_id::{ServerId, ServerIdError};
pub use transport::{HttpMethod, HttpRequest, HttpResponse, HttpTransport, TransportError};
pub use version::{Era, ServerMemory};
