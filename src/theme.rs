//! The colour theme: the system's, or light or dark as the person chose in
//! Settings. The choice is kept in this origin's local storage, which a
//! page can read synchronously: index.html's first script applies it
//! (`data-theme` on the root element) before the stylesheets paint
//! anything, so a dark choice never flashes light. The stylesheets pick
//! every colour with `light-dark()`, which follows the root's
//! `color-scheme`; `data-theme` pins it, and without it the system's
//! preference decides.

use wasm_bindgen::JsCast;

/// Where the choice is kept in local storage; index.html reads the same
/// key.
pub const STORAGE_KEY: &str = "hearth.theme";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Theme {
    System,
    Light,
    Dark,
}

impl Theme {
    pub const ALL: [Theme; 3] = [Theme::System, Theme::Light, Theme::Dark];

    pub fn as_str(self) -> &'static str {
        match self {
            Theme::System => "system",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Theme::System => "System",
            Theme::Light => "Light",
            Theme::Dark => "Dark",
        }
    }

    /// Anything but "light" or "dark" is the system's theme.
    pub fn parse(s: &str) -> Theme {
        match s {
            "light" => Theme::Light,
            "dark" => Theme::Dark,
            _ => Theme::System,
        }
    }
}

fn root() -> Option<web_sys::HtmlElement> {
    web_sys::window()?
        .document()?
        .document_element()?
        .dyn_into::<web_sys::HtmlElement>()
        .ok()
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// The theme in force, as index.html (or [`set`]) applied it.
pub fn current() -> Theme {
    root()
        .and_then(|r| r.get_attribute("data-theme"))
        .map(|t| Theme::parse(&t))
        .unwrap_or(Theme::System)
}

/// Applies `theme` now and keeps it for the next visit. Returns what went
/// wrong when it could not be kept (storage refused); it applies anyway.
pub fn set(theme: Theme) -> Result<(), String> {
    if let Some(root) = root() {
        let _ = match theme {
            Theme::System => root.remove_attribute("data-theme"),
            other => root.set_attribute("data-theme", other.as_str()),
        };
    }
    let storage = storage().ok_or("this browser keeps no local storage for Hearth")?;
    let kept = match theme {
        Theme::System => storage.remove_item(STORAGE_KEY),
        other => storage.set_item(STORAGE_KEY, other.as_str()),
    };
    kept.map_err(|_| "the browser refused to keep it".to_string())
}

/// Whether the page shows dark colours now.
pub fn is_dark() -> bool {
    match current() {
        Theme::Dark => true,
        Theme::Light => false,
        Theme::System => web_sys::window()
            .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
            .is_some_and(|m| m.matches()),
    }
}
