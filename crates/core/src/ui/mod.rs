//! What the app's components show and decide, without a component: the
//! [`composer`] and its [`command`] bar, the MCP prompts and resources that
//! go with a message ([`mcp_composer`]), the provider settings form
//! ([`provider_form`]) and a server's card ([`server_card`]).

pub mod command;
pub mod composer;
pub mod mcp_composer;
pub mod provider_form;
pub mod server_card;
