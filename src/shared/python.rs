//! Python's loading state: the progress line above the composer while it
//! loads, and the sentence the Code panel in Settings shows.

use leptos::prelude::*;

use crate::runtime::use_runtime;
use crate::sandbox::PythonState;

fn percent(loaded: f64, total: f64) -> f64 {
    if total > 0.0 {
        (loaded / total * 100.0).clamp(0.0, 100.0)
    } else {
        0.0
    }
}

/// Python's loading progress, shown above the composer while it loads.
#[component]
pub fn PythonStatus() -> impl IntoView {
    let state = use_runtime().sandbox().python_state();
    move || {
        match state.get() {
        PythonState::NotLoaded | PythonState::Ready { .. } => ().into_any(),
        PythonState::Downloading { loaded, total } => view! {
            <div class="python-status" role="status" data-testid="python-status">
                <progress max="100" value=percent(loaded, total)></progress>
                <span>{format!(
                    "Loading Python… {:.0}% ({} of {})",
                    percent(loaded, total),
                    hearth_core::util::display::bytes(loaded),
                    hearth_core::util::display::bytes(total)
                )}</span>
            </div>
        }
        .into_any(),
        PythonState::Starting => view! {
            <div class="python-status" role="status" data-testid="python-status">
                <progress></progress>
                <span>"Starting Python…"</span>
            </div>
        }
        .into_any(),
        PythonState::Failed(message) => view! {
            <div class="python-status python-status-failed" role="status" data-testid="python-status">
                <span>"Python could not load: "{message}</span>
            </div>
        }
        .into_any(),
    }
    }
}

/// What the Code panel says Python is doing.
pub fn state_text(state: &PythonState) -> String {
    match state {
        PythonState::NotLoaded => "Not loaded yet; it loads the first time code needs it".into(),
        PythonState::Downloading { loaded, total } => {
            format!("Loading… {:.0}%", percent(*loaded, *total))
        }
        PythonState::Starting => "Starting…".into(),
        PythonState::Ready { version, load_ms } if *load_ms > 0.0 => format!(
            "Ready: Pyodide {version}, started in {}",
            hearth_core::util::display::duration(*load_ms)
        ),
        PythonState::Ready { version, .. } => format!("Ready: Pyodide {version}"),
        PythonState::Failed(message) => format!("Could not load: {message}"),
    }
}
