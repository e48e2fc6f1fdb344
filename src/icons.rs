//! Inline SVG icons, so the app looks the same on every machine without
//! relying on an emoji font. Skill definitions name their icon; unknown
//! names fall back to a generic glyph.

use leptos::prelude::*;

/// Skill definitions written elsewhere (discovery, web, MCP, Agent Skills)
/// name their icon with an emoji; each maps to the matching drawn icon.
fn alias(name: &str) -> &str {
    match name {
        "🔎" | "🔍" => "search",
        "🌐" => "globe",
        "📘" | "📖" => "book",
        "🔌" => "plug",
        "🧩" | "🧰" => "skills",
        "🧮" => "calculator",
        "📝" => "note",
        other => other,
    }
}

/// The SVG body (24×24, stroked) for an icon name.
fn paths(name: &str) -> &'static str {
    match alias(name) {
        "calculator" => {
            r#"<rect x="5" y="3" width="14" height="18" rx="2"/><rect x="8" y="6" width="8" height="3" rx="0.5"/><path d="M8.5 13h.01M12 13h.01M15.5 13h.01M8.5 16.5h.01M12 16.5h.01M15.5 16.5h.01"/>"#
        }
        "chat" => r#"<path d="M4 5h16v11H9l-5 4z"/>"#,
        "skills" => {
            r#"<rect x="4" y="4" width="7" height="7" rx="1.5"/><rect x="13" y="4" width="7" height="7" rx="1.5"/><rect x="4" y="13" width="7" height="7" rx="1.5"/><path d="M16.5 13v7M13 16.5h7"/>"#
        }
        "settings" => {
            r#"<path d="M4 7h10M18 7h2M4 17h4M12 17h8"/><circle cx="16" cy="7" r="2"/><circle cx="10" cy="17" r="2"/>"#
        }
        "activity" => r#"<path d="M3 12h4l2.5-6 5 12 2.5-6h4"/>"#,
        "note" => r#"<path d="M6 3h9l4 4v14H6z"/><path d="M15 3v4h4M9 11h7M9 14.5h7M9 18h4"/>"#,
        "tasks" => {
            r#"<rect x="4" y="4" width="16" height="16" rx="3"/><path d="M8.5 12.5l2.5 2.5 5-5.5"/>"#
        }
        "memory" => {
            r#"<path d="M9 18h6M10 21h4M12 3a6 6 0 0 0-3.5 10.9c.6.5 1 1.2 1 2.1h5c0-.9.4-1.6 1-2.1A6 6 0 0 0 12 3z"/>"#
        }
        "code" => r#"<path d="M9 7l-5 5 5 5M15 7l5 5-5 5"/>"#,
        "python" => {
            r#"<path d="M12 3c-4 0-4 1.8-4 3v2h4.5v1H6c-2 0-3 1.5-3 4s1 4 3 4h1.5v-2.5c0-1.4 1.1-2.5 2.5-2.5h4.5c1.1 0 2-.9 2-2V6c0-1.6-1.5-3-5-3z"/><path d="M12 21c4 0 4-1.8 4-3v-2h-4.5v-1H18c2 0 3-1.5 3-4s-1-4-3-4h-1.5"/>"#
        }
        "file" => r#"<path d="M7 3h7l5 5v13H7z"/><path d="M14 3v5h5"/>"#,
        "artifact" => {
            r#"<rect x="3.5" y="4.5" width="17" height="15" rx="2"/><path d="M3.5 9h17M13 9v10.5"/><path d="M6.5 12.5l2 1.5-2 1.5"/>"#
        }
        "paperclip" => {
            r#"<path d="M20 11.5l-8 8a5 5 0 0 1-7-7l8.5-8.5a3.3 3.3 0 0 1 4.7 4.7L9.7 17.2a1.7 1.7 0 0 1-2.4-2.4L15 7"/>"#
        }
        "folder" => r#"<path d="M3 6h6l2 2h10v11H3z"/>"#,
        "image" => {
            r#"<rect x="3.5" y="4.5" width="17" height="15" rx="2"/><circle cx="9" cy="10" r="1.8"/><path d="M4 17.5l5-4.5 4 3.5 3-2.5 4 3.5"/>"#
        }
        // The web skills' definitions name emoji; draw them like the rest.
        "globe" | "\u{1f310}" => {
            r#"<circle cx="12" cy="12" r="9"/><path d="M3 12h18M12 3c2.5 3 2.5 15 0 18M12 3c-2.5 3-2.5 15 0 18"/>"#
        }
        "search" | "\u{1f50e}" => r#"<circle cx="11" cy="11" r="6.5"/><path d="M16 16l4.5 4.5"/>"#,
        "plug" => r#"<path d="M9 3v5M15 3v5M6 8h12v3a6 6 0 0 1-12 0zM12 17v4"/>"#,
        "server" => {
            r#"<rect x="4" y="4" width="16" height="6" rx="1.5"/><rect x="4" y="14" width="16" height="6" rx="1.5"/><path d="M8 7h.01M8 17h.01"/>"#
        }
        "flame" => {
            r#"<path d="M12 3c1 3.5 5 5.5 5 10.5a5 5 0 0 1-10 0c0-2.4 1.3-3.9 2.4-4.9.2 1.8 1.2 2.9 2.1 3.1-.8-2.8.1-6.1.5-8.7z"/>"#
        }
        "book" => {
            r#"<path d="M5 4h9a3 3 0 0 1 3 3v13H8a3 3 0 0 1-3-3z"/><path d="M5 17a3 3 0 0 1 3-3h9"/>"#
        }
        "check" => r#"<path d="M5 12.5l4.5 4.5L19 7.5"/>"#,
        "x" => r#"<path d="M6 6l12 12M18 6L6 18"/>"#,
        "offline" => {
            r#"<path d="M3 3l18 18"/><path d="M8.5 8.6A5.5 5.5 0 0 0 7 8.5 4.5 4.5 0 0 0 7 17.5h9.5M13.2 6.2A6 6 0 0 1 18 11.5a3.5 3.5 0 0 1 2.6 4.5"/>"#
        }
        "shield" => r#"<path d="M12 3l7 3v6c0 4.5-3 7.5-7 9-4-1.5-7-4.5-7-9V6z"/>"#,
        // --- assistant ---
        "plus" => r#"<path d="M12 5v14M5 12h14"/>"#,
        "pencil" => r#"<path d="M4 20l4.5-1L19 8.5 15.5 5 5 15.5z"/><path d="M13.5 7l3.5 3.5"/>"#,
        "trash" => r#"<path d="M4 7h16M9 7V4h6v3M6.5 7l1 13h9l1-13"/><path d="M10 11v6M14 11v6"/>"#,
        "stop" => r#"<rect x="6.5" y="6.5" width="11" height="11" rx="2"/>"#,
        "send" => r#"<path d="M4 12l16-8-6 16-2.5-6.5z"/><path d="M11.5 13.5L20 4"/>"#,
        "copy" => {
            r#"<rect x="8" y="8" width="12" height="12" rx="2"/><path d="M16 8V5a1 1 0 0 0-1-1H5a1 1 0 0 0-1 1v10a1 1 0 0 0 1 1h3"/>"#
        }
        "refresh" => r#"<path d="M19 12a7 7 0 1 1-2.1-5"/><path d="M19 4v4h-4"/>"#,
        "sparkle" => r#"<path d="M12 3l2 6 6 2-6 2-2 6-2-6-6-2 6-2z"/>"#,
        "download" => r#"<path d="M12 4v11M7.5 10.5L12 15l4.5-4.5M5 19h14"/>"#,
        "upload" => r#"<path d="M12 15V4M7.5 8.5L12 4l4.5 4.5M5 19h14"/>"#,
        "database" => {
            r#"<ellipse cx="12" cy="6" rx="7" ry="3"/><path d="M5 6v12c0 1.7 3.1 3 7 3s7-1.3 7-3V6M5 12c0 1.7 3.1 3 7 3s7-1.3 7-3"/>"#
        }
        _ => r#"<circle cx="12" cy="12" r="8"/><path d="M12 8v4l2.5 2.5"/>"#,
    }
}

/// An icon by name; decorative unless given a label.
#[component]
pub fn Icon(
    #[prop(into)] name: String,
    #[prop(optional, into)] label: Option<String>,
) -> impl IntoView {
    let hidden = label.is_none().then_some("true");
    view! {
        <svg
            class="icon"
            viewBox="0 0 24 24"
            fill="none"
            stroke="currentColor"
            stroke-width="1.8"
            stroke-linecap="round"
            stroke-linejoin="round"
            aria-hidden=hidden
            role=label.as_ref().map(|_| "img")
            aria-label=label
            inner_html=paths(&name)
        ></svg>
    }
}
