//! The local file listing stdio MCP servers. Only the person at this
//! machine edits it; nothing in the browser can add to it, so a web page
//! can never make Hearth start a program.
//!
//! The format is the `mcpServers` JSON many MCP clients share, so a
//! server's README snippet can be pasted in:
//!
//! ```json
//! { "mcpServers": {
//!     "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
//!                 "env": { "MEMORY_FILE_PATH": "/home/me/memory.jsonl" } } } }
//! ```
//!
//! Optional per server: `cwd`, and `idleTimeoutSecs` (default 600).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hearth_core::mcp::skills::ServerId;
use serde::Deserialize;

pub const DEFAULT_IDLE_SECS: u64 = 600;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerSpec {
    pub command: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
    pub idle_timeout_secs: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawSpec {
    command: String,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    cwd: Option<PathBuf>,
    #[serde(default)]
    idle_timeout_secs: Option<u64>,
    /// Other clients' keys for remote servers; not for this file.
    #[serde(default)]
    #[allow(dead_code)]
    r#type: Option<String>,
}

#[derive(Deserialize)]
struct RawFile {
    #[serde(rename = "mcpServers", default)]
    servers: BTreeMap<String, serde_json::Value>,
}

/// A problem with one entry; the others still load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigProblem {
    pub server: String,
    pub message: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid JSON with an \"mcpServers\" object: {message}")]
    Parse { path: PathBuf, message: String },
}

/// The servers in the file, and what was wrong with the rest.
pub struct StdioConfig {
    pub servers: Vec<(ServerId, ServerSpec)>,
    pub problems: Vec<ConfigProblem>,
}

/// `$XDG_CONFIG_HOME/hearth/mcp-servers.json`, else
/// `~/.config/hearth/mcp-servers.json`.
pub fn default_path() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .map(|d| d.join("hearth").join("mcp-servers.json"))
}

pub fn load(path: &Path) -> Result<StdioConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.into(),
        source,
    })?;
    parse(&text).map_err(|message| ConfigError::Parse {
        path: path.into(),
        message,
    })
}

pub fn parse(text: &str) -> Result<StdioConfig, String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if !value.is_object() {
        return Err("the file must hold a JSON object".into());
    }
    let raw: RawFile = serde_json::from_value(value).map_err(|e| e.to_string())?;
    let mut servers = Vec::new();
    let mut problems = Vec::new();
    for (name, value) in raw.servers {
        let problem = |message: String| ConfigProblem {
            server: name.clone(),
            message,
        };
        let id = match ServerId::new(name.clone()) {
            Ok(id) => id,
            Err(e) => {
                problems.push(problem(e.to_string()));
                continue;
            }
        };
        let spec: RawSpec = match serde_json::from_value(value) {
            Ok(s) => s,
            Err(e) => {
                problems.push(problem(e.to_string()));
                continue;
            }
        };
        if spec.command.trim().is_empty() {
            problems.push(problem("the command is empty".into()));
            continue;
        }
        servers.push((
            id,
            ServerSpec {
                command: spec.command,
                args: spec.args,
                env: spec.env,
                cwd: spec.cwd,
                idle_timeout_secs: spec.idle_timeout_secs.unwrap_or(DEFAULT_IDLE_SECS).max(1),
            },
        ));
    }
    Ok(StdioConfig { servers, problems })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_load_with_partial_success() {
        let cfg = parse(
            r#"{"mcpServers": {
                "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
                           "env": {"MEMORY_FILE_PATH": "/tmp/m.jsonl"}, "idleTimeoutSecs": 30},
                "Bad Name": {"command": "x"},
                "empty": {"command": " "},
                "typo": {"comand": "x"}
            }}"#,
        )
        .unwrap();
        assert_eq!(
            cfg.servers,
            vec![(
                ServerId::new("memory").unwrap(),
                ServerSpec {
                    command: "npx".into(),
                    args: vec!["-y".into(), "@modelcontextprotocol/server-memory".into()],
                    env: [("MEMORY_FILE_PATH".to_string(), "/tmp/m.jsonl".to_string())].into(),
                    cwd: None,
                    idle_timeout_secs: 30,
                }
            )]
        );
        let names: Vec<&str> = cfg.problems.iter().map(|p| p.server.as_str()).collect();
        assert_eq!(names, ["Bad Name", "empty", "typo"]);
        assert_eq!(cfg.problems[1].message, "the command is empty");
        assert!(parse("[]").is_err());
        assert_eq!(parse("{}").unwrap().servers, vec![]);
    }
}
