//! `hearth mcp ...`: talk to an MCP server from the terminal with the same
//! core client the app uses — list its tools (with the skill ids they get),
//! call one, browse resources and prompts, or act as the client the
//! official conformance suite drives.

use std::io::Write;
use std::process::ExitCode;
use std::rc::Rc;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};
use hearth_core::mcp::client::{CallOptions, ClientConfig, McpClient, NoInput, ServerEvent};
use hearth_core::mcp::model::{CallToolResult, ContentBlock, ResourceBody};
use hearth_core::mcp::skills::{ServerId, catalog, skill_id};
use hearth_core::mcp::version::ServerMemory;
use hearth_core::mcp::{McpError, ServerInfo};
use serde_json::{Map, Value, json};

use super::transport::ReqwestTransport;

#[derive(Subcommand)]
pub enum McpCommand {
    /// List a server's tools and the skill ids Hearth gives them.
    Tools {
        /// The server's MCP endpoint, e.g. http://127.0.0.1:3901/mcp
        url: String,
        #[command(flatten)]
        connect: ConnectArgs,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Call a tool and print its result.
    Call {
        /// The server's MCP endpoint
        url: String,
        /// The tool's name as the server lists it
        tool: String,
        /// The arguments, as a JSON object.
        #[arg(default_value = "{}")]
        arguments: String,
        #[command(flatten)]
        connect: ConnectArgs,
        /// Print the raw result as JSON.
        #[arg(long)]
        json: bool,
        /// Ask for progress notifications and print them to stderr.
        #[arg(long)]
        progress: bool,
    },
    /// List a server's resources and resource templates.
    Resources {
        url: String,
        #[command(flatten)]
        connect: ConnectArgs,
    },
    /// Read one resource.
    Read {
        url: String,
        uri: String,
        #[command(flatten)]
        connect: ConnectArgs,
    },
    /// List a server's prompts.
    Prompts {
        url: String,
        #[command(flatten)]
        connect: ConnectArgs,
    },
    /// Get one prompt, with arguments as a JSON object of strings.
    Prompt {
        url: String,
        name: String,
        #[arg(default_value = "{}")]
        arguments: String,
        #[command(flatten)]
        connect: ConnectArgs,
    },
    /// Check the stdio servers in the local config file, through the same
    /// bridge `hearth serve` offers the app (in-process: nothing listens).
    Stdio {
        /// The config file; default ~/.config/hearth/mcp-servers.json.
        #[arg(long)]
        config: Option<std::path::PathBuf>,
        #[command(subcommand)]
        command: StdioCommand,
    },
    /// Offer Hearth's skills to an agent that starts a command (Claude
    /// Desktop, goose, Codex): a stdio bridge to `hearth serve`'s
    /// /mcp/server, with the agent's credential from HEARTH_AGENT_KEY.
    Serve {
        /// Speak MCP over stdin and stdout (the only way offered).
        #[arg(long, required = true)]
        stdio: bool,
        /// Hearth's MCP endpoint, as Settings → Agents shows it.
        #[arg(long, default_value = "http://127.0.0.1:8080/mcp/server")]
        url: String,
        /// The environment variable holding the agent's credential.
        #[arg(long, default_value = hearth_core::agents::wire::KEY_ENV)]
        key_env: String,
    },
    /// Act as the client of the MCP conformance suite: the server URL comes
    /// last; the scenario comes from MCP_CONFORMANCE_SCENARIO.
    Conformance {
        /// HTTPS URL of a client ID metadata document to use as client_id
        /// when an authorization server supports them.
        #[arg(long)]
        client_metadata_url: Option<String>,
        url: String,
    },
}

#[derive(Subcommand)]
pub enum StdioCommand {
    /// Show the configured servers and any problems with the file.
    List,
    /// Start a server and list its tools.
    Tools {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Start a server and call one of its tools.
    Call {
        name: String,
        tool: String,
        #[arg(default_value = "{}")]
        arguments: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args, Clone)]
pub struct ConnectArgs {
    /// An extra header for every request, as "Name: value". Repeatable.
    #[arg(long = "header", short = 'H')]
    headers: Vec<String>,
    /// A bearer token to send.
    #[arg(long)]
    token: Option<String>,
    /// Which protocol era to speak; auto detects it.
    #[arg(long, value_enum, default_value_t = EraChoice::Auto)]
    era: EraChoice,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 120)]
    timeout: u64,
}

#[derive(Clone, Copy, ValueEnum)]
enum EraChoice {
    Auto,
    Modern,
    Legacy,
}

pub fn run(command: McpCommand) -> ExitCode {
    if let McpCommand::Serve { url, key_env, .. } = command {
        return super::bridge::run(url, &key_env);
    }
    let Some(rt) = crate::cli_runtime() else {
        return ExitCode::FAILURE;
    };
    match command {
        McpCommand::Conformance {
            client_metadata_url,
            url,
        } => rt.block_on(super::conformance::run(url, client_metadata_url)),
        other => rt.block_on(run_command(other)),
    }
}

fn connect(url: &str, args: &ConnectArgs, progress: bool) -> Result<McpClient, String> {
    let transport = ReqwestTransport::new().map_err(|e| e.to_string())?;
    let mut config = ClientConfig::new(url);
    for h in &args.headers {
        let (name, value) = h
            .split_once(':')
            .ok_or_else(|| format!("a header must look like \"Name: value\", not {h:?}"))?;
        config
            .headers
            .push((name.trim().into(), value.trim().into()));
    }
    if let Some(token) = &args.token {
        config
            .headers
            .push(("Authorization".into(), format!("Bearer {token}")));
    }
    let memory = match args.era {
        EraChoice::Auto => None,
        EraChoice::Modern => Some(ServerMemory::modern()),
        EraChoice::Legacy => Some(ServerMemory::legacy()),
    };
    let events: Option<hearth_core::mcp::client::EventSink> = progress.then(|| {
        Rc::new(|event: ServerEvent| {
            if let ServerEvent::Progress(p) = event {
                let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
                let message = p.message.map(|m| format!(" {m}")).unwrap_or_default();
                eprintln!("progress {}{total}{message}", p.progress);
            }
        }) as hearth_core::mcp::client::EventSink
    });
    Ok(McpClient::build(
        Rc::new(transport),
        config,
        Rc::new(NoInput),
        None,
        events,
        memory,
    ))
}

fn timeout_of(command: &McpCommand) -> u64 {
    match command {
        McpCommand::Tools { connect, .. }
        | McpCommand::Call { connect, .. }
        | McpCommand::Resources { connect, .. }
        | McpCommand::Read { connect, .. }
        | McpCommand::Prompts { connect, .. }
        | McpCommand::Prompt { connect, .. } => connect.timeout,
        McpCommand::Conformance { .. } | McpCommand::Stdio { .. } | McpCommand::Serve { .. } => 120,
    }
}

async fn run_command(command: McpCommand) -> ExitCode {
    let seconds = timeout_of(&command);
    match tokio::time::timeout(Duration::from_secs(seconds), execute(command)).await {
        Ok(Ok(code)) => code,
        Ok(Err(message)) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!("error: no answer within {seconds} seconds");
            ExitCode::FAILURE
        }
    }
}

fn explain(e: McpError) -> String {
    match e {
        McpError::Unauthorized { .. } => format!(
            "{e}; `hearth mcp` does not sign in interactively, so pass a token with --token"
        ),
        other => other.to_string(),
    }
}

fn out(text: &str) {
    let _ = std::io::stdout().write_all(text.as_bytes());
}

fn describe_server(info: &ServerInfo) {
    let name = info
        .implementation
        .as_ref()
        .map(|i| format!("{} {}", i.title.as_deref().unwrap_or(&i.name), i.version))
        .unwrap_or_else(|| "an unnamed server".into());
    eprintln!(
        "{name} — {} (protocol {})",
        info.era.label(),
        info.protocol_version
    );
}

async fn execute(command: McpCommand) -> Result<ExitCode, String> {
    match command {
        McpCommand::Tools {
            url,
            connect: args,
            json,
        } => {
            let client = connect(&url, &args, false)?;
            show_tools(&client, ServerId::suggest(&url, &[]), json).await?;
            let _ = client.close().await;
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Call {
            url,
            tool,
            arguments,
            connect: args,
            json,
            progress,
        } => {
            let arguments = parse_arguments(&arguments)?;
            let client = connect(&url, &args, progress)?;
            let code = show_call(&client, &tool, arguments, json, progress).await?;
            let _ = client.close().await;
            Ok(code)
        }
        McpCommand::Resources { url, connect: args } => {
            let client = connect(&url, &args, false)?;
            let resources = client.list_resources().await.map_err(explain)?;
            let templates = client.list_resource_templates().await.map_err(explain)?;
            let mut text = String::new();
            for r in &resources {
                text.push_str(&format!(
                    "{}\t{}\t{}\n",
                    r.uri,
                    r.mime_type.as_deref().unwrap_or("-"),
                    r.title.as_deref().unwrap_or(&r.name)
                ));
            }
            for t in &templates {
                text.push_str(&format!("{}\t(template)\t{}\n", t.uri_template, t.name));
            }
            out(&text);
            let _ = client.close().await;
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Read {
            url,
            uri,
            connect: args,
        } => {
            let client = connect(&url, &args, false)?;
            let read = client.read_resource(&uri).await.map_err(explain)?;
            for c in &read.contents {
                match &c.body {
                    ResourceBody::Text(t) => out(&format!("{t}\n")),
                    ResourceBody::Blob(b) => out(&format!(
                        "[{} bytes of {} as base64]\n",
                        b.len() * 3 / 4,
                        c.mime_type.as_deref().unwrap_or("binary data")
                    )),
                }
            }
            let _ = client.close().await;
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Prompts { url, connect: args } => {
            let client = connect(&url, &args, false)?;
            let prompts = client.list_prompts().await.map_err(explain)?;
            let mut text = String::new();
            for p in &prompts {
                let params: Vec<String> = p
                    .arguments
                    .iter()
                    .map(|a| {
                        if a.required == Some(true) {
                            a.name.clone()
                        } else {
                            format!("[{}]", a.name)
                        }
                    })
                    .collect();
                text.push_str(&format!(
                    "/{} {}\t{}\n",
                    p.name,
                    params.join(" "),
                    p.description.as_deref().unwrap_or("")
                ));
            }
            out(&text);
            let _ = client.close().await;
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Prompt {
            url,
            name,
            arguments,
            connect: args,
        } => {
            let arguments: Map<String, Value> = serde_json::from_str(&arguments)
                .map_err(|e| format!("the arguments must be a JSON object of strings: {e}"))?;
            let client = connect(&url, &args, false)?;
            let prompt = client
                .get_prompt(&name, &arguments)
                .await
                .map_err(explain)?;
            for m in &prompt.messages {
                let role = match m.role {
                    hearth_core::mcp::model::Role::User => "user",
                    hearth_core::mcp::model::Role::Assistant => "assistant",
                };
                out(&format!("{role}: {}\n", block_text(&m.content)));
            }
            let _ = client.close().await;
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Stdio { config, command } => run_stdio(config, command).await,
        McpCommand::Conformance { .. } | McpCommand::Serve { .. } => {
            Err("conformance and the stdio bridge run separately".into())
        }
    }
}

fn parse_arguments(text: &str) -> Result<Value, String> {
    let arguments: Value =
        serde_json::from_str(text).map_err(|e| format!("the arguments are not JSON: {e}"))?;
    if !arguments.is_object() {
        return Err("the arguments must be a JSON object".into());
    }
    Ok(arguments)
}

async fn show_tools(client: &McpClient, server: ServerId, json: bool) -> Result<(), String> {
    let info = client.connect().await.map_err(explain)?;
    let listing = client.list_tools().await.map_err(explain)?;
    let cat = catalog(&server, Some(&info), &listing);
    if json {
        let tools: Vec<Value> = listing
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "skill_id": skill_id(&server, &t.name),
                    "model_visible": !cat.app_only.contains(&t.name),
                    "title": t.display_name(),
                    "description": t.description,
                    "input_schema": t.input_schema,
                })
            })
            .collect();
        let doc = json!({
            "server": {
                "id": server,
                "era": info.era.as_str(),
                "protocol_version": info.protocol_version,
                "name": info.implementation.as_ref().map(|i| i.name.clone()),
                "instructions": info.instructions,
            },
            "tools": tools,
            "rejected": cat.rejected.iter().map(|(n, why)| json!({"name": n, "reason": why})).collect::<Vec<_>>(),
        });
        out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        ));
    } else {
        describe_server(&info);
        let mut table = format!("{:<28} {:<36} DESCRIPTION\n", "TOOL", "SKILL ID");
        for t in &listing.tools {
            let mut description = t.description.clone().unwrap_or_default().replace('\n', " ");
            if description.chars().count() > 70 {
                description = description.chars().take(69).collect::<String>() + "…";
            }
            if cat.app_only.contains(&t.name) {
                description = format!("(app only) {description}");
            }
            table.push_str(&format!(
                "{:<28} {:<36} {description}\n",
                t.name,
                skill_id(&server, &t.name).as_str()
            ));
        }
        out(&table);
        for (name, why) in &cat.rejected {
            eprintln!("left out {name}: {why}");
        }
    }
    Ok(())
}

async fn show_call(
    client: &McpClient,
    tool: &str,
    arguments: Value,
    json: bool,
    progress: bool,
) -> Result<ExitCode, String> {
    let result = client
        .call_tool(
            tool,
            arguments,
            CallOptions {
                progress,
                cancel: None,
            },
        )
        .await
        .map_err(explain)?;
    let failed = result.is_error == Some(true);
    if json {
        out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&result).unwrap_or_default()
        ));
    } else {
        print_result(&result);
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

async fn run_stdio(
    config: Option<std::path::PathBuf>,
    command: StdioCommand,
) -> Result<ExitCode, String> {
    use crate::stdio::config::{default_path, load};
    use crate::stdio::http::{Bridge, router};
    use crate::stdio::local::RouterTransport;

    let path = config
        .or_else(default_path)
        .ok_or("no config file: pass --config")?;
    let cfg = load(&path).map_err(|e| e.to_string())?;
    let name = match &command {
        StdioCommand::List => {
            let mut text = String::new();
            for (name, spec) in &cfg.servers {
                text.push_str(&format!(
                    "{name}\t{} {}\t(stops after {} s idle)\n",
                    spec.command,
                    spec.args.join(" "),
                    spec.idle_timeout_secs
                ));
            }
            out(&text);
            for p in &cfg.problems {
                eprintln!("skipped {}: {}", p.server, p.message);
            }
            return Ok(ExitCode::SUCCESS);
        }
        StdioCommand::Tools { name, .. } | StdioCommand::Call { name, .. } => name.clone(),
    };
    let server = ServerId::new(name.clone()).map_err(|e| e.to_string())?;
    let bridge = Bridge::start(cfg);
    let app = axum::Router::new().nest("/mcp/stdio", router(bridge.clone()));
    let client = McpClient::new(
        Rc::new(RouterTransport::new(app)),
        ClientConfig::new(format!("http://hearth.local/mcp/stdio/{name}")),
    );
    let outcome = match command {
        StdioCommand::Tools { json, .. } => show_tools(&client, server, json)
            .await
            .map(|()| ExitCode::SUCCESS),
        StdioCommand::Call {
            tool,
            arguments,
            json,
            ..
        } => match parse_arguments(&arguments) {
            Ok(args) => show_call(&client, &tool, args, json, false).await,
            Err(e) => Err(e),
        },
        StdioCommand::List => Ok(ExitCode::SUCCESS),
    };
    let _ = client.close().await;
    if outcome.is_err()
        && let Some(s) = bridge.server(&name)
    {
        for line in s.status().stderr_tail {
            eprintln!("{name} stderr: {line}");
        }
    }
    bridge.stop_all();
    outcome
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text { text, .. } => text.clone(),
        ContentBlock::Image {
            data, mime_type, ..
        } => {
            format!("[{mime_type} image, {} bytes]", data.len() * 3 / 4)
        }
        ContentBlock::Audio {
            data, mime_type, ..
        } => {
            format!("[{mime_type} audio, {} bytes]", data.len() * 3 / 4)
        }
        ContentBlock::ResourceLink(r) => format!(
            "[resource link] {} <{}>",
            r.title.as_deref().unwrap_or(&r.name),
            r.uri
        ),
        ContentBlock::Resource { resource, .. } => match &resource.body {
            ResourceBody::Text(t) => format!("[resource {}]\n{t}", resource.uri),
            ResourceBody::Blob(b) => format!(
                "[resource {}: {} bytes of {}]",
                resource.uri,
                b.len() * 3 / 4,
                resource.mime_type.as_deref().unwrap_or("binary data")
            ),
        },
        ContentBlock::Unknown(v) => format!("[unknown content] {v}"),
    }
}

fn print_result(result: &CallToolResult) {
    let mut text = String::new();
    for block in &result.content {
        text.push_str(&block_text(block));
        text.push('\n');
    }
    if let Some(s) = &result.structured_content {
        text.push_str("structured content:\n");
        text.push_str(&serde_json::to_string_pretty(s).unwrap_or_default());
        text.push('\n');
    }
    if result.is_error == Some(true) {
        eprintln!("the tool reported an error:");
        let _ = std::io::stderr().write_all(text.as_bytes());
    } else {
        out(&text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::mcp::model::{Resource, ResourceContents};

    #[test]
    fn every_content_type_prints_readably() {
        let table: Vec<(ContentBlock, &str)> = vec![
            (
                ContentBlock::Text {
                    text: "hi".into(),
                    annotations: None,
                },
                "hi",
            ),
            (
                ContentBlock::Image {
                    data: "AAAA".into(),
                    mime_type: "image/png".into(),
                    annotations: None,
                },
                "[image/png image, 3 bytes]",
            ),
            (
                ContentBlock::ResourceLink(Resource {
                    uri: "test://a".into(),
                    name: "a".into(),
                    title: None,
                    description: None,
                    mime_type: None,
                    size: None,
                    annotations: None,
                    meta: None,
                }),
                "[resource link] a <test://a>",
            ),
            (
                ContentBlock::Resource {
                    resource: ResourceContents {
                        uri: "test://b".into(),
                        mime_type: None,
                        body: ResourceBody::Text("body".into()),
                        meta: None,
                    },
                    annotations: None,
                },
                "[resource test://b]\nbody",
            ),
        ];
        for (block, want) in table {
            assert_eq!(block_text(&block), want);
        }
    }
}
