//! The script a fake model plays: rules matched against each incoming
//! request, first match wins, each answering with text and/or tool calls
//! or with a simulated failure.
//!
//! ```json
//! {
//!   "models": ["hearth-fake"],
//!   "api_key": "optional: requests must carry it",
//!   "turns": [
//!     {
//!       "name": "discover",
//!       "when": {"last_user_contains": "15%", "no_tool_results": true},
//!       "reply": {"tool_calls": [{"name": "discover_skills",
//!                                 "arguments": {"query": "percentage calculation"}}]}
//!     },
//!     {
//!       "when": {"last_tool_result_for": "calculator"},
//!       "reply": {"text": "15% of 847 is {{tool_result}}."}
//!     }
//!   ],
//!   "fallback": {"text": "No scripted reply matched."}
//! }
//! ```
//!
//! `{{tool_result}}` in a reply's text is replaced by the first line of the
//! last tool result the request carries, so an answer shows a number only
//! if the skill really computed it. A tool call's string argument
//! `{{word_after:TEXT}}` becomes the word that follows `TEXT` in the newest
//! tool result of the whole conversation that has it (an id the app made,
//! say), so a later turn can name what an earlier call created.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The whole script.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// Served by `GET /v1/models`; requests for another model get the
    /// provider's 404. Empty: any model is accepted.
    #[serde(default)]
    pub models: Vec<String>,
    /// When set, requests must carry it (`Authorization: Bearer` or
    /// `x-api-key`), else they get the provider's 401.
    #[serde(default)]
    pub api_key: Option<String>,
    #[serde(default)]
    pub turns: Vec<Turn>,
    /// The reply when no turn matches.
    #[serde(default)]
    pub fallback: Option<Reply>,
}

/// One rule.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// For logs and the request record.
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub when: When,
    pub reply: Reply,
    /// How many times the rule may answer; unlimited when absent.
    #[serde(default)]
    pub times: Option<u32>,
}

/// Conditions on a request; all present ones must hold.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct When {
    /// The last user message contains this (case-insensitive).
    #[serde(default)]
    pub last_user_contains: Option<String>,
    /// No tool results since the last user message (a fresh question).
    #[serde(default)]
    pub no_tool_results: Option<bool>,
    /// The request ends with a tool result for this tool.
    #[serde(default)]
    pub last_tool_result_for: Option<String>,
    /// The last tool result contains this (case-insensitive).
    #[serde(default)]
    pub last_tool_result_contains: Option<String>,
    /// The request offers this tool.
    #[serde(default)]
    pub has_tool: Option<String>,
    /// "openai" or "anthropic".
    #[serde(default)]
    pub provider: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
}

/// A tool call to make.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    /// Generated when absent (`call_…` or `toolu_…`).
    #[serde(default)]
    pub id: Option<String>,
    pub name: String,
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// A failure to simulate, in the provider's own shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    /// 401.
    Auth,
    /// 404 for the requested model.
    ModelNotFound,
    /// 429, with `retry_after` if given.
    RateLimit,
    /// 500.
    Server,
    /// 529 (Anthropic) / 503 (OpenAI-compatible).
    Overloaded,
    /// 400 with the provider's context-length error.
    ContextTooLong,
}

/// What a matching rule answers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub tool_calls: Vec<ScriptedCall>,
    /// Text and argument JSON are streamed in pieces of this many
    /// characters (default 8), as real servers split them.
    #[serde(default)]
    pub chunk_chars: Option<usize>,
    /// Milliseconds between stream events (slow tokens, for Stop tests).
    #[serde(default)]
    pub delay_ms: Option<u64>,
    /// Answer with this HTTP error instead.
    #[serde(default)]
    pub error: Option<Failure>,
    /// `retry-after` header value for errors (seconds or an HTTP date).
    #[serde(default)]
    pub retry_after: Option<String>,
    /// Send this many stream events, then the provider's mid-stream error
    /// (`error` must be set) instead of the rest.
    #[serde(default)]
    pub error_after_events: Option<usize>,
    /// Close the stream after this many events, without its end marker.
    #[serde(default)]
    pub truncate_after_events: Option<usize>,
    /// Put a line that is not JSON after the first event.
    #[serde(default)]
    pub malformed: bool,
}

/// A script that does not load.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("cannot read the script {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("the script {path} is not valid: {source}")]
    Parse {
        path: String,
        source: serde_json::Error,
    },
    #[error("turn {index}: error_after_events needs an error to send")]
    MidStreamWithoutError { index: usize },
}

impl Script {
    pub fn from_json(text: &str, path: &str) -> Result<Script, ScriptError> {
        let script: Script = serde_json::from_str(text).map_err(|source| ScriptError::Parse {
            path: path.to_string(),
            source,
        })?;
        for (index, t) in script.turns.iter().enumerate() {
            if t.reply.error_after_events.is_some() && t.reply.error.is_none() {
                return Err(ScriptError::MidStreamWithoutError { index });
            }
        }
        Ok(script)
    }

    pub fn load(path: &std::path::Path) -> Result<Script, ScriptError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Read {
            path: shown.clone(),
            source,
        })?;
        Self::from_json(&text, &shown)
    }
}

/// A request reduced to what rules look at, whichever protocol sent it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Seen {
    pub provider: &'static str,
    pub model: String,
    pub last_user: String,
    /// Tool results after the last user message, as (tool name, content).
    pub results_since_user: Vec<(String, String)>,
    /// Every tool result's content in the request, oldest first.
    pub all_results: Vec<String>,
    /// Whether the request ends with a tool result.
    pub ends_with_result: bool,
    pub tools: Vec<String>,
}

impl Seen {
    pub fn last_result(&self) -> Option<&(String, String)> {
        if self.ends_with_result {
            self.results_since_user.last()
        } else {
            None
        }
    }
}

fn contains(haystack: &str, needle: &str) -> bool {
    haystack.to_lowercase().contains(&needle.to_lowercase())
}

impl When {
    pub fn matches(&self, seen: &Seen) -> bool {
        let opt =
            |cond: &Option<String>, test: &dyn Fn(&str) -> bool| cond.as_deref().is_none_or(test);
        opt(&self.last_user_contains, &|c| contains(&seen.last_user, c))
            && self
                .no_tool_results
                .is_none_or(|want| seen.results_since_user.is_empty() == want)
            && opt(&self.last_tool_result_for, &|c| {
                seen.last_result().is_some_and(|(name, _)| name == c)
            })
            && opt(&self.last_tool_result_contains, &|c| {
                seen.last_result()
                    .is_some_and(|(_, content)| contains(content, c))
            })
            && opt(&self.has_tool, &|c| seen.tools.iter().any(|t| t == c))
            && opt(&self.provider, &|c| seen.provider == c)
            && opt(&self.model, &|c| seen.model == c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen() -> Seen {
        Seen {
            provider: "openai",
            model: "m".into(),
            last_user: "What's 15% of 847?".into(),
            results_since_user: vec![(
                "discover_skills".into(),
                "{\"skills\":[{\"id\":\"calculator\"}]}".into(),
            )],
            all_results: vec!["{\"skills\":[{\"id\":\"calculator\"}]}".into()],
            ends_with_result: true,
            tools: vec!["discover_skills".into()],
        }
    }

    #[test]
    fn conditions_all_have_to_hold() {
        let cases = [
            (When::default(), true),
            (
                When {
                    last_user_contains: Some("15%".into()),
                    ..When::default()
                },
                true,
            ),
            (
                When {
                    last_user_contains: Some("weather".into()),
                    ..When::default()
                },
                false,
            ),
            (
                When {
                    no_tool_results: Some(true),
                    ..When::default()
                },
                false,
            ),
            (
                When {
                    last_tool_result_for: Some("discover_skills".into()),
                    last_tool_result_contains: Some("CALCULATOR".into()),
                    ..When::default()
                },
                true,
            ),
            (
                When {
                    last_tool_result_for: Some("calculator".into()),
                    ..When::default()
                },
                false,
            ),
            (
                When {
                    has_tool: Some("calculator".into()),
                    ..When::default()
                },
                false,
            ),
            (
                When {
                    provider: Some("anthropic".into()),
                    ..When::default()
                },
                false,
            ),
        ];
        for (when, want) in cases {
            assert_eq!(when.matches(&seen()), want, "{when:?}");
        }
    }

    #[test]
    fn scripts_are_checked_on_load() {
        let bad = r#"{"turns": [{"reply": {"error_after_events": 2}}]}"#;
        assert!(matches!(
            Script::from_json(bad, "x"),
            Err(ScriptError::MidStreamWithoutError { index: 0 })
        ));
        let typo = r#"{"turns": [{"reply": {"txt": "hi"}}]}"#;
        assert!(matches!(
            Script::from_json(typo, "x"),
            Err(ScriptError::Parse { .. })
        ));
    }
}
