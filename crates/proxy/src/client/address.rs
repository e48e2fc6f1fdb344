//! Which IP addresses the network tier may connect to. The rules live in
//! `hearth_base::address`, shared with the app, which holds the hosts an
//! MCP App's view may reach to them too.

pub use hearth_core::address::*;
