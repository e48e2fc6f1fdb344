//! The config text each kind of agent needs to reach Hearth, ready to
//! copy: Claude Code speaks Streamable HTTP with a header; Codex, goose
//! and Claude Desktop start a command, so they get `hearth mcp serve
//! --stdio`, which reads the credential from its environment.

use serde_json::json;

use super::AgentClient;
use super::wire::KEY_ENV;

/// One snippet: where it goes and what it says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snippet {
    pub client: AgentClient,
    /// Where to put it, in words.
    pub place: &'static str,
    /// `shell`, `toml`, `yaml` or `json`.
    pub language: &'static str,
    pub text: String,
}

/// Quotes a value for a POSIX shell: as is when it is plainly safe,
/// otherwise in single quotes.
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// The snippet for `client`, for the endpoint `endpoint`, the `hearth`
/// binary at `command` and the agent's `credential`.
pub fn snippet(client: AgentClient, endpoint: &str, command: &str, credential: &str) -> Snippet {
    let args = ["mcp", "serve", "--stdio", "--url", endpoint];
    match client {
        AgentClient::ClaudeCode => Snippet {
            client,
            place: "Run this in a terminal",
            language: "shell",
            text: format!(
                "claude mcp add --transport http hearth {} --header {}",
                shell_word(endpoint),
                shell_word(&format!("Authorization: Bearer {credential}"))
            ),
        },
        AgentClient::Codex => {
            let list: Vec<String> = args.iter().map(|a| toml_string(a)).collect();
            Snippet {
                client,
                place: "Add this to ~/.codex/config.toml",
                language: "toml",
                text: format!(
                    "[mcp_servers.hearth]\ncommand = {}\nargs = [{}]\nenv = {{ {KEY_ENV} = {} }}\n",
                    toml_string(command),
                    list.join(", "),
                    toml_string(credential)
                ),
            }
        }
        AgentClient::Goose => {
            // YAML flow style with JSON strings: valid YAML whatever the
            // path or URL holds.
            let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
            let list: Vec<String> = args.iter().map(|a| q(a)).collect();
            Snippet {
                client,
                place: "Add this under extensions: in ~/.config/goose/config.yaml",
                language: "yaml",
                text: format!(
                    "hearth:\n  name: hearth\n  type: stdio\n  enabled: true\n  cmd: {}\n  args: [{}]\n  envs:\n    {KEY_ENV}: {}\n  timeout: 300\n",
                    q(command),
                    list.join(", "),
                    q(credential)
                ),
            }
        }
        AgentClient::ClaudeDesktop => Snippet {
            client,
            place: "Add this to claude_desktop_config.json (Settings → Developer → Edit Config)",
            language: "json",
            text: serde_json::to_string_pretty(&json!({
                "mcpServers": {
                    "hearth": {
                        "command": command,
                        "args": args,
                        "env": {KEY_ENV: credential}
                    }
                }
            }))
            .unwrap_or_default(),
        },
        AgentClient::Other => Snippet {
            client,
            place: "Point any MCP client at this Streamable HTTP endpoint with this header, or start the stdio bridge",
            language: "shell",
            text: format!(
                "URL: {endpoint}\nHeader: Authorization: Bearer {credential}\n\n# or, for clients that start a command:\n{KEY_ENV}={} {} {}",
                shell_word(credential),
                shell_word(command),
                args.iter()
                    .map(|a| shell_word(a))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        },
    }
}

/// Every kind's snippet, in the order the panel offers them.
pub fn all(endpoint: &str, command: &str, credential: &str) -> Vec<Snippet> {
    AgentClient::ALL
        .into_iter()
        .map(|c| snippet(c, endpoint, command, credential))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "http://127.0.0.1:8080/mcp/server";
    const KEY: &str = "hearth_agent_abc";

    #[test]
    fn claude_code_gets_the_http_transport_with_its_header() {
        assert_eq!(
            snippet(AgentClient::ClaudeCode, URL, "/usr/bin/hearth", KEY).text,
            "claude mcp add --transport http hearth http://127.0.0.1:8080/mcp/server --header 'Authorization: Bearer hearth_agent_abc'"
        );
    }

    #[test]
    fn codex_gets_toml_that_parses_to_the_bridge() {
        let s = snippet(AgentClient::Codex, URL, "/opt/my \"apps\"/hearth", KEY);
        assert_eq!(
            s.text,
            "[mcp_servers.hearth]\ncommand = \"/opt/my \\\"apps\\\"/hearth\"\nargs = [\"mcp\", \"serve\", \"--stdio\", \"--url\", \"http://127.0.0.1:8080/mcp/server\"]\nenv = { HEARTH_AGENT_KEY = \"hearth_agent_abc\" }\n"
        );
    }

    #[test]
    fn claude_desktop_gets_json_with_the_command_and_key() {
        let s = snippet(AgentClient::ClaudeDesktop, URL, "/usr/bin/hearth", KEY);
        let v: serde_json::Value = serde_json::from_str(&s.text).unwrap();
        assert_eq!(v["mcpServers"]["hearth"]["command"], "/usr/bin/hearth");
        assert_eq!(v["mcpServers"]["hearth"]["args"][4], URL);
        assert_eq!(v["mcpServers"]["hearth"]["env"][KEY_ENV], KEY);
    }

    #[test]
    fn goose_gets_a_stdio_extension() {
        let s = snippet(AgentClient::Goose, URL, "/usr/bin/hearth", KEY);
        assert!(
            s.text
                .starts_with("hearth:\n  name: hearth\n  type: stdio\n")
        );
        assert!(s.text.contains("  cmd: \"/usr/bin/hearth\"\n"));
        assert!(
            s.text
                .contains("    HEARTH_AGENT_KEY: \"hearth_agent_abc\"\n")
        );
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("/usr/bin/hearth"), "/usr/bin/hearth");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(all(URL, "hearth", KEY).len(), AgentClient::ALL.len());
    }
}
