//! Version counters: a view reads a `RwSignal<u64>` to learn that state
//! kept outside the reactive graph (the runtime's data, the web settings,
//! MCP connections) changed, and a writer bumps it after each change.

use leptos::prelude::*;

/// Marks the state behind `v` as changed.
pub fn bump(v: RwSignal<u64>) {
    v.update(|n| *n += 1);
}
