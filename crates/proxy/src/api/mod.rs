//! The API layer of `hearth serve`: what every same-origin route shares,
//! whichever feature serves it — the guard that lets only the app in
//! ([`guard`]), the per-install key it checks ([`token`]), the JSON error
//! every route answers with ([`error`]) and the per-skill rate limit
//! ([`ratelimit`]).
//!
//! The layers of the binary, lowest first: this one; the guarded outbound
//! client (`client`), which may use it; then the features (`web`, `relay`,
//! `stdio`), which may use both but not each other. `serve` and the CLI
//! commands wire them together. No layer names one above it.

pub mod error;
pub mod guard;
pub mod ratelimit;
pub mod token;

#[cfg(test)]
mod tests;
