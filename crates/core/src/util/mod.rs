//! What every layer above may use: calendar dates as people write them
//! ([`dates`]) and how numbers are shown ([`display`]).

pub mod dates;
pub mod display;
