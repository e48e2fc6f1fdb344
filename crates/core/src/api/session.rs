//! What `GET /api/session` answers, and the search backend chosen in
//! Settings (`/api/search/backend`).

use serde::{Deserialize, Serialize};

/// The answer of `GET /api/session` (which needs the key like every other
/// route: the key itself is never handed out over HTTP).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    /// [`TOKEN_HEADER`](super::TOKEN_HEADER).
    pub header: String,
    /// The proxy's version.
    pub version: String,
    pub fetch: SessionFetch,
    pub search: SessionSearch,
}

/// The fetch limits the proxy applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionFetch {
    pub default_max_bytes: u64,
    pub max_bytes: u64,
}

/// Whether web search can run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSearch {
    pub configured: bool,
    /// `searxng` or `brave` when configured.
    pub backend: Option<String>,
}

/// The search backend chosen in the app's Settings: the body of
/// `PUT /api/search/backend`. Deliberately narrower than the config file:
/// no environment variable names, no Brave endpoint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "backend", rename_all = "lowercase", deny_unknown_fields)]
pub enum SearchBackendSetting {
    Searxng { url: String },
    Brave { api_key: String },
}

/// Where the search backend in use was set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendSource {
    /// In the app's Settings (kept by the proxy in its config directory).
    Settings,
    /// In `config.toml`'s `[search]`.
    ConfigFile,
}

/// The answer of `GET | PUT | DELETE /api/search/backend`. Never holds a
/// key, only whether one is set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchBackendState {
    pub configured: bool,
    pub source: Option<BackendSource>,
    /// `searxng` or `brave` when configured.
    pub backend: Option<String>,
    pub url: Option<String>,
    #[serde(default)]
    pub api_key_set: bool,
    /// Why the config file's backend could not be used, when it could not.
    #[serde(default)]
    pub problem: Option<String>,
}

impl SearchBackendState {
    /// One line for the Settings panel.
    pub fn summary(&self) -> String {
        let name = match self.backend.as_deref() {
            Some("searxng") => "SearXNG",
            Some("brave") => "Brave Search",
            Some(other) => other,
            None => "",
        };
        let source = match self.source {
            Some(BackendSource::Settings) => " (chosen here)",
            Some(BackendSource::ConfigFile) => " (from the config file)",
            None => "",
        };
        match (
            self.configured,
            self.backend.as_deref(),
            self.url.as_deref(),
        ) {
            (false, _, _) => match &self.problem {
                Some(p) => {
                    format!("No search backend is set up; the config file's could not be used: {p}")
                }
                None => "No search backend is set up.".to_string(),
            },
            (true, Some("brave"), _) => format!("Using Brave Search with an API key{source}."),
            (true, _, Some(url)) => format!("Using {name} at {url}{source}."),
            (true, _, None) => format!("Using {name}{source}."),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const BRAVE_URL: &str = "https://api.search.brave.com/res/v1/web/search";

    #[test]
    fn backend_settings_and_state_on_the_wire() {
        assert_eq!(
            serde_json::to_value(SearchBackendSetting::Searxng {
                url: "http://127.0.0.1:8888".into()
            })
            .unwrap(),
            json!({"backend": "searxng", "url": "http://127.0.0.1:8888"})
        );
        assert_eq!(
            serde_json::to_value(SearchBackendSetting::Brave {
                api_key: "k".into()
            })
            .unwrap(),
            json!({"backend": "brave", "api_key": "k"})
        );
        let state: SearchBackendState = serde_json::from_value(json!({
            "backend": "searxng", "url": "http://127.0.0.1:8888/", "configured": true,
            "source": "settings", "api_key_set": false, "problem": null
        }))
        .unwrap();
        assert_eq!(
            state,
            SearchBackendState {
                configured: true,
                source: Some(BackendSource::Settings),
                backend: Some("searxng".into()),
                url: Some("http://127.0.0.1:8888/".into()),
                api_key_set: false,
                problem: None,
            }
        );
        let none = SearchBackendState {
            configured: false,
            source: None,
            backend: None,
            url: None,
            api_key_set: false,
            problem: None,
        };
        // (state, summary)
        let cases = [
            (
                state.clone(),
                "Using SearXNG at http://127.0.0.1:8888/ (chosen here).",
            ),
            (
                SearchBackendState {
                    backend: Some("brave".into()),
                    url: Some(BRAVE_URL.into()),
                    api_key_set: true,
                    source: Some(BackendSource::ConfigFile),
                    ..state.clone()
                },
                "Using Brave Search with an API key (from the config file).",
            ),
            (none.clone(), "No search backend is set up."),
            (
                SearchBackendState {
                    problem: Some("BRAVE_API_KEY is not set".into()),
                    ..none
                },
                "No search backend is set up; the config file's could not be used: BRAVE_API_KEY is not set",
            ),
        ];
        for (state, summary) in cases {
            assert_eq!(state.summary(), summary);
        }
    }
}
