//! A server's card in the Servers panel without a component: how the
//! server is doing and the label that says so, the line under its name,
//! how many of its tools are skills, which resources the card lists, and
//! what the confirmation says before it is removed. The card renders what
//! these give; the actions behind its buttons are the MCP service's.

use crate::mcp::model::{Implementation, Resource, Tool};
use crate::mcp::servers::ServerSource;
use crate::mcp::skills::visible_to_model;

/// How a server is doing.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    Off,
    Connecting,
    Connected,
    Failed(String),
}

impl Status {
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Off => "off",
            Status::Connecting => "connecting",
            Status::Connected => "connected",
            Status::Failed(_) => "failed",
        }
    }

    pub fn label(&self) -> &'static str {
        match self {
            Status::Off => "Off",
            Status::Connecting => "Connecting…",
            Status::Connected => "Connected",
            Status::Failed(_) => "Not connected",
        }
    }
}

/// The label a card shows for `status` (`None`: the server is gone); a
/// connection that waits for the person's sign-in says so.
pub fn status_label(status: Option<&Status>, signing: bool) -> &'static str {
    match status {
        Some(Status::Connecting) if signing => "Waiting for sign-in",
        Some(s) => s.label(),
        None => "Off",
    }
}

/// The line under a server's name: what it says it is (empty when it has
/// not said) and where it is.
pub fn subtitle(
    source: &ServerSource,
    implementation: Option<&Implementation>,
) -> (String, String) {
    let what = implementation
        .map(|i| {
            format!(
                "{} {}",
                i.title.clone().unwrap_or_else(|| i.name.clone()),
                i.version
            )
        })
        .unwrap_or_default();
    let place = match source {
        ServerSource::Remote { url } => url.clone(),
        ServerSource::Stdio => "stdio, through hearth serve".to_string(),
    };
    (what, place)
}

/// How many of a server's tools are skills (the ones offered to a model;
/// tools only the server's apps call are not).
pub fn skills_count(tools: &[Tool]) -> usize {
    tools.iter().filter(|t| visible_to_model(t)).count()
}

/// The most resources a card lists.
pub const RESOURCES_SHOWN: usize = 50;

/// The resources a card lists, and how many more there are.
pub fn shown_resources(list: &[Resource]) -> (&[Resource], usize) {
    let shown = list.len().min(RESOURCES_SHOWN);
    (&list[..shown], list.len() - shown)
}

/// What the confirmation says before server `id`, with `skills` skills,
/// is removed.
pub fn removal_message(id: &str, skills: usize) -> String {
    format!(
        "Hearth forgets {id}: its connection, its {skills} skills with their settings and approvals, and any sign-in. You can add it again later."
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_label_says_when_a_connection_waits_for_sign_in() {
        let cases = [
            (None, false, "Off"),
            (Some(Status::Off), true, "Off"),
            (Some(Status::Connecting), false, "Connecting…"),
            (Some(Status::Connecting), true, "Waiting for sign-in"),
            (Some(Status::Connected), true, "Connected"),
            (
                Some(Status::Failed("refused".into())),
                false,
                "Not connected",
            ),
        ];
        for (status, signing, want) in cases {
            assert_eq!(
                status_label(status.as_ref(), signing),
                want,
                "{status:?} {signing}"
            );
        }
        assert_eq!(Status::Failed("x".into()).as_str(), "failed");
    }

    #[test]
    fn the_subtitle_names_the_implementation_and_the_place() {
        let implementation: Implementation =
            serde_json::from_value(json!({"name": "everything", "version": "2.0"})).unwrap();
        let remote = ServerSource::Remote {
            url: "http://127.0.0.1:3901/mcp".into(),
        };
        assert_eq!(
            subtitle(&remote, Some(&implementation)),
            (
                "everything 2.0".to_string(),
                "http://127.0.0.1:3901/mcp".to_string()
            )
        );
        let titled: Implementation = serde_json::from_value(
            json!({"name": "everything", "title": "Everything", "version": "2.0"}),
        )
        .unwrap();
        assert_eq!(
            subtitle(&ServerSource::Stdio, Some(&titled)),
            (
                "Everything 2.0".to_string(),
                "stdio, through hearth serve".to_string()
            )
        );
        assert_eq!(subtitle(&ServerSource::Stdio, None).0, "");
    }

    #[test]
    fn app_only_tools_are_not_counted_as_skills() {
        let tools: Vec<Tool> = serde_json::from_value(json!([
            {"name": "a", "inputSchema": {"type": "object"}},
            {"name": "b", "inputSchema": {"type": "object"},
             "_meta": {"ui": {"visibility": ["app"]}}},
            {"name": "c", "inputSchema": {"type": "object"},
             "_meta": {"ui": {"visibility": ["model", "app"]}}},
        ]))
        .unwrap();
        assert_eq!(skills_count(&tools), 2);
    }

    #[test]
    fn a_card_lists_fifty_resources_and_counts_the_rest() {
        let many: Vec<Resource> = (0..53)
            .map(|i| {
                serde_json::from_value(
                    json!({"uri": format!("file:///{i}"), "name": format!("r{i}")}),
                )
                .unwrap()
            })
            .collect();
        let (shown, more) = shown_resources(&many);
        assert_eq!((shown.len(), more), (50, 3));
        assert_eq!(shown[49].name, "r49");
        let (shown, more) = shown_resources(&many[..2]);
        assert_eq!((shown.len(), more), (2, 0));
    }

    #[test]
    fn removing_says_what_goes() {
        assert_eq!(
            removal_message("everything", 3),
            "Hearth forgets everything: its connection, its 3 skills with their settings and approvals, and any sign-in. You can add it again later."
        );
    }
}
