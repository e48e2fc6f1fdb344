//! The network tier's settings: built-in defaults, overridden by the
//! `config.toml` in the user's config directory (or the file `--config`
//! names), extended by command-line flags.
//!
//! ```toml
//! [fetch]
//! default_max_bytes = 2097152   # when a call does not say
//! max_bytes = 10485760          # the most a call may ask for
//! connect_timeout_secs = 5      # resolve + connect + TLS
//! timeout_secs = 20             # the whole fetch, redirects included
//! max_concurrent = 16           # fetches in flight at once
//! allow_private = ["127.0.0.1:8888"]   # non-public destinations allowed anyway
//!
//! [search]
//! backend = "searxng"
//! url = "https://searxng.example.org"
//! # or: backend = "brave", api_key_env = "BRAVE_API_KEY" (or api_key = "…")
//!
//! [rate_limit.web_fetch]
//! per_minute = 60
//! burst = 10
//! ```
//!
//! Other top-level tables belong to other parts of Hearth and are ignored
//! here; unknown keys inside `[fetch]`, `[search]` and `[rate_limit.*]` are
//! errors, so a typo never silently falls back to a default.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::fetch::FetchLimits;
use super::search::SearchBackend;
use crate::api::ratelimit::BucketConfig;
use crate::client::PrivateAllow;

/// The config file's name in the config directory.
pub const CONFIG_FILE: &str = "config.toml";
/// Where a backend chosen in the app's Settings is kept.
pub const SEARCH_SETTINGS_FILE: &str = "search-backend.json";
/// No call may ask for more than this, whatever the file says.
pub const HARD_MAX_BYTES: u64 = 100 * 1024 * 1024;

/// `~/.config/hearth` on Linux, the platform's equivalent elsewhere.
pub fn default_config_dir() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("hearth"))
}

/// Why the configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid: {message}")]
    Invalid { path: PathBuf, message: String },
}

#[derive(Debug, Default, Deserialize)]
struct FileConfig {
    #[serde(default)]
    fetch: FetchSection,
    #[serde(default)]
    search: Option<SearchSection>,
    #[serde(default)]
    rate_limit: BTreeMap<String, BucketConfig>,
    /// Sections of other parts of Hearth.
    #[serde(flatten)]
    _other: BTreeMap<String, toml::Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FetchSection {
    default_max_bytes: Option<u64>,
    max_bytes: Option<u64>,
    connect_timeout_secs: Option<f64>,
    timeout_secs: Option<f64>,
    max_concurrent: Option<usize>,
    #[serde(default)]
    allow_private: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "backend", rename_all = "lowercase", deny_unknown_fields)]
enum SearchSection {
    Searxng {
        url: String,
    },
    Brave {
        api_key: Option<String>,
        api_key_env: Option<String>,
        url: Option<String>,
    },
}

/// Everything the network tier runs with.
#[derive(Clone, Debug)]
pub struct NetConfig {
    pub limits: FetchLimits,
    pub connect_timeout: Duration,
    pub max_concurrent: usize,
    pub allow_private: Vec<PrivateAllow>,
    /// The backend from the config file.
    pub search: Option<SearchBackend>,
    /// Why the file's `[search]` could not be used, if it could not.
    pub search_problem: Option<String>,
    pub rate_limits: HashMap<String, BucketConfig>,
    /// The config file's path, for messages that say where to change things.
    pub config_path: PathBuf,
    /// Where the token and the app-chosen search backend are kept.
    pub state_dir: PathBuf,
}

/// The limits of each web skill when the file does not set them.
pub fn default_rate_limits() -> HashMap<String, BucketConfig> {
    HashMap::from([
        (
            hearth_core::builtin::web::WEB_FETCH.to_string(),
            BucketConfig {
                per_minute: 60.0,
                burst: 10,
            },
        ),
        (
            hearth_core::builtin::web::WEB_SEARCH.to_string(),
            BucketConfig {
                per_minute: 30.0,
                burst: 5,
            },
        ),
    ])
}

/// The bucket of a skill that has none configured.
pub const FALLBACK_RATE_LIMIT: BucketConfig = BucketConfig {
    per_minute: 30.0,
    burst: 5,
};

impl NetConfig {
    /// The built-in defaults, keeping state in `state_dir`.
    pub fn defaults(state_dir: PathBuf) -> Self {
        Self {
            limits: FetchLimits::default(),
            connect_timeout: Duration::from_secs(5),
            max_concurrent: 16,
            allow_private: Vec::new(),
            search: None,
            search_problem: None,
            rate_limits: default_rate_limits(),
            config_path: state_dir.join(CONFIG_FILE),
            state_dir,
        }
    }

    /// Reads the configuration. `file` is an explicit `--config` path, which
    /// must exist; otherwise `state_dir/config.toml` is read if present.
    /// `env` looks up environment variables (for `api_key_env`).
    pub fn load(
        state_dir: &Path,
        file: Option<&Path>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let mut config = Self::defaults(state_dir.to_path_buf());
        let path = file
            .map(Path::to_path_buf)
            .unwrap_or_else(|| state_dir.join(CONFIG_FILE));
        config.config_path = path.clone();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && file.is_none() => {
                return Ok(config);
            }
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        let invalid = |message: String| ConfigError::Invalid {
            path: path.clone(),
            message,
        };
        let parsed: FileConfig = toml::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        config.apply(parsed, env).map_err(invalid)?;
        Ok(config)
    }

    fn apply(
        &mut self,
        file: FileConfig,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(), String> {
        let f = file.fetch;
        if let Some(n) = f.max_bytes {
            self.limits.max_bytes = n;
        }
        if let Some(n) = f.default_max_bytes {
            self.limits.default_max_bytes = n;
        }
        if self.limits.max_bytes == 0 || self.limits.max_bytes > HARD_MAX_BYTES {
            return Err(format!(
                "[fetch] max_bytes must be between 1 and {HARD_MAX_BYTES}"
            ));
        }
        if self.limits.default_max_bytes == 0
            || self.limits.default_max_bytes > self.limits.max_bytes
        {
            return Err(format!(
                "[fetch] default_max_bytes must be between 1 and max_bytes ({})",
                self.limits.max_bytes
            ));
        }
        if let Some(secs) = f.connect_timeout_secs {
            self.connect_timeout = seconds("connect_timeout_secs", secs)?;
        }
        if let Some(secs) = f.timeout_secs {
            self.limits.total_timeout = seconds("timeout_secs", secs)?;
        }
        if let Some(n) = f.max_concurrent {
            if !(1..=256).contains(&n) {
                return Err("[fetch] max_concurrent must be between 1 and 256".into());
            }
            self.max_concurrent = n;
        }
        for entry in &f.allow_private {
            let allow =
                PrivateAllow::parse(entry).map_err(|e| format!("[fetch] allow_private: {e}"))?;
            if !self.allow_private.contains(&allow) {
                self.allow_private.push(allow);
            }
        }
        for (skill, bucket) in file.rate_limit {
            bucket
                .validate()
                .map_err(|e| format!("[rate_limit.{skill}]: {e}"))?;
            self.rate_limits.insert(skill, bucket);
        }
        match file.search {
            None => {}
            Some(SearchSection::Searxng { url }) => {
                self.search =
                    Some(SearchBackend::searxng(&url).map_err(|e| format!("[search] url: {e}"))?);
            }
            Some(SearchSection::Brave {
                api_key,
                api_key_env,
                url,
            }) => {
                let key = match (api_key, api_key_env) {
                    (Some(_), Some(_)) => {
                        return Err("[search] set api_key or api_key_env, not both".into());
                    }
                    (Some(key), None) => Some(key),
                    (None, Some(var)) => {
                        let value = env(&var).filter(|v| !v.trim().is_empty());
                        if value.is_none() {
                            // Not fatal: everything but search still works.
                            self.search_problem = Some(format!(
                                "the environment variable {var} named by api_key_env is not set"
                            ));
                        }
                        value
                    }
                    (None, None) => {
                        return Err(
                            "[search] the brave backend needs api_key or api_key_env".into()
                        );
                    }
                };
                if let Some(key) = key {
                    self.search = Some(
                        SearchBackend::brave(&key, url.as_deref())
                            .map_err(|e| format!("[search]: {e}"))?,
                    );
                }
            }
        }
        Ok(())
    }

    /// Adds `--allow-private-fetch` entries.
    pub fn allow_private_from_flags(&mut self, entries: &[String]) -> Result<(), String> {
        for entry in entries {
            let allow =
                PrivateAllow::parse(entry).map_err(|e| format!("--allow-private-fetch: {e}"))?;
            if !self.allow_private.contains(&allow) {
                self.allow_private.push(allow);
            }
        }
        Ok(())
    }
}

fn seconds(name: &str, secs: f64) -> Result<Duration, String> {
    if !(secs.is_finite() && secs > 0.0 && secs <= 300.0) {
        return Err(format!(
            "[fetch] {name} must be more than 0 and at most 300 seconds"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str, env: &[(&str, &str)]) -> Result<NetConfig, String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CONFIG_FILE), text).unwrap();
        let env: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        NetConfig::load(dir.path(), None, &|k| env.get(k).cloned()).map_err(|e| {
            let s = e.to_string();
            // Strip the temp path for stable comparisons.
            s.split_once(" is not valid: ")
                .map(|(_, m)| m.to_string())
                .unwrap_or(s)
        })
    }

    #[test]
    fn no_file_means_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let c = NetConfig::load(dir.path(), None, &|_| None).unwrap();
        assert_eq!(c.limits, FetchLimits::default());
        assert_eq!(c.search, None);
        assert_eq!(c.allow_private, vec![]);
        assert_eq!(c.config_path, dir.path().join(CONFIG_FILE));
        // An explicit --config must exist.
        let missing = dir.path().join("nope.toml");
        assert!(matches!(
            NetConfig::load(dir.path(), Some(&missing), &|_| None),
            Err(ConfigError::Read { .. })
        ));
    }

    #[test]
    fn a_full_file_is_applied() {
        let c = load(
            r#"
            [fetch]
            default_max_bytes = 1000
            max_bytes = 5000
            connect_timeout_secs = 1.5
            timeout_secs = 3
            max_concurrent = 2
            allow_private = ["127.0.0.1:8888", "[::1]:9000", "10.0.0.5"]

            [search]
            backend = "searxng"
            url = "http://127.0.0.1:8888"

            [rate_limit.web_fetch]
            per_minute = 6
            burst = 2

            [mcp.servers.memory]
            command = "npx"
            "#,
            &[],
        )
        .unwrap();
        assert_eq!(
            c.limits,
            FetchLimits {
                default_max_bytes: 1000,
                max_bytes: 5000,
                total_timeout: Duration::from_secs(3)
            }
        );
        assert_eq!(c.connect_timeout, Duration::from_millis(1500));
        assert_eq!(c.max_concurrent, 2);
        assert_eq!(
            c.allow_private
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            vec!["127.0.0.1:8888", "[::1]:9000", "10.0.0.5"]
        );
        assert_eq!(
            c.search,
            Some(SearchBackend::searxng("http://127.0.0.1:8888").unwrap())
        );
        assert_eq!(
            c.rate_limits["web_fetch"],
            BucketConfig {
                per_minute: 6.0,
                burst: 2
            }
        );
        assert_eq!(
            c.rate_limits["web_search"],
            default_rate_limits()["web_search"]
        );
    }

    #[test]
    fn brave_keys_from_the_file_or_the_environment() {
        let c = load(
            "[search]\nbackend = \"brave\"\napi_key_env = \"K\"\n",
            &[("K", "secret")],
        )
        .unwrap();
        assert_eq!(
            c.search,
            Some(SearchBackend::brave("secret", None).unwrap())
        );
        let c = load("[search]\nbackend = \"brave\"\napi_key_env = \"K\"\n", &[]).unwrap();
        assert_eq!(c.search, None);
        assert_eq!(
            c.search_problem.as_deref(),
            Some("the environment variable K named by api_key_env is not set")
        );
        let c = load(
            "[search]\nbackend = \"brave\"\napi_key = \"x\"\nurl = \"http://127.0.0.1:9/res/v1/web/search\"\n",
            &[],
        )
        .unwrap();
        assert_eq!(
            c.search,
            Some(SearchBackend::brave("x", Some("http://127.0.0.1:9/res/v1/web/search")).unwrap())
        );
    }

    #[test]
    fn mistakes_are_reported_not_defaulted() {
        let cases = [
            ("[fetch]\nmax_byte = 5\n", "unknown field `max_byte`"),
            (
                "[fetch]\nmax_bytes = 0\n",
                "[fetch] max_bytes must be between 1 and 104857600",
            ),
            (
                "[fetch]\nmax_bytes = 10\n",
                "[fetch] default_max_bytes must be between 1 and max_bytes (10)",
            ),
            (
                "[fetch]\ntimeout_secs = 0\n",
                "[fetch] timeout_secs must be more than 0 and at most 300 seconds",
            ),
            (
                "[fetch]\nmax_concurrent = 0\n",
                "[fetch] max_concurrent must be between 1 and 256",
            ),
            (
                "[fetch]\nallow_private = [\"localhost:80\"]\n",
                "[fetch] allow_private: \"localhost:80\" is not an address",
            ),
            (
                "[fetch]\nallow_private = [\"0.0.0.0:80\"]\n",
                "[fetch] allow_private: \"0.0.0.0:80\": the unspecified",
            ),
            ("[search]\nbackend = \"bing\"\n", "unknown variant `bing`"),
            ("[search]\nbackend = \"searxng\"\n", "missing field `url`"),
            (
                "[search]\nbackend = \"searxng\"\nurl = \"ftp://x\"\n",
                "[search] url: \"ftp://x\": the URL must be http or https, not ftp",
            ),
            (
                "[search]\nbackend = \"brave\"\n",
                "[search] the brave backend needs api_key or api_key_env",
            ),
            (
                "[search]\nbackend = \"brave\"\napi_key = \"a\"\napi_key_env = \"B\"\n",
                "[search] set api_key or api_key_env, not both",
            ),
            (
                "[rate_limit.web_fetch]\nper_minute = 0\nburst = 1\n",
                "[rate_limit.web_fetch]: per_minute must be a positive number, not 0",
            ),
            (
                "[rate_limit.web_fetch]\nper_minute = 1\nburst = 1\nextra = 2\n",
                "unknown field `extra`",
            ),
            ("not toml", "expected"),
        ];
        for (text, expected) in cases {
            let err = load(text, &[]).unwrap_err();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
    }
}
