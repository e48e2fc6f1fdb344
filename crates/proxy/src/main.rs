//! The `hearth` binary: `hearth serve` and the CLI over hearth-core.

mod agents;
mod api;
mod client;
mod knowledge_cli;
mod local;
mod mcp;
mod relay;
mod serve;
mod skills_cli;
mod skills_packages;
mod skills_search;
mod stdio;
mod sync_cli;
mod web;
mod web_cli;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "hearth",
    version,
    about = "Hearth: a local-first AI workspace in your browser"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the built app (and, on the same origin, the network-tier API).
    Serve {
        /// The address to bind. Loopback by default; anything else exposes
        /// Hearth to your network.
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        #[arg(long, default_value_t = 8080)]
        port: u16,
        /// The folder trunk built the app into.
        #[arg(long)]
        dist: Option<PathBuf>,
        /// Another origin the app may connect to, e.g. http://192.168.1.5:11434
        /// for a model server on your LAN. Repeatable.
        #[arg(long = "allow-connect")]
        allow_connect: Vec<String>,
        /// Hearth's config directory, holding config.toml and the API token
        /// (default: your platform's config dir + /hearth, e.g. ~/.config/hearth).
        #[arg(long = "config-dir", env = "HEARTH_CONFIG_DIR")]
        config_dir: Option<PathBuf>,
        /// The config file, if not config.toml in the config directory. It
        /// must exist when given.
        #[arg(long = "config", env = "HEARTH_CONFIG")]
        config: Option<PathBuf>,
        /// A non-public destination web_fetch and web_search may reach anyway,
        /// as IP:PORT ([IPv6]:PORT), e.g. a local SearXNG or a test server.
        /// Repeatable. Loopback and private addresses are refused otherwise.
        #[arg(long = "allow-private-fetch", value_name = "IP:PORT")]
        allow_private_fetch: Vec<String>,
        /// The file listing stdio MCP servers the app may use through this
        /// server (default: mcp-servers.json in the config directory). Only
        /// this file names them; the browser cannot add one.
        #[arg(long = "mcp-servers", value_name = "FILE", env = "HEARTH_MCP_SERVERS")]
        mcp_servers: Option<PathBuf>,
    },
    /// Inspect the skill registry; validate and render Agent Skills folders.
    Skills {
        #[command(subcommand)]
        command: skills_cli::SkillsCommand,
    },
    /// Talk to an MCP server: list its tools, call one, browse resources
    /// and prompts, or act as the conformance suite's client.
    Mcp {
        #[command(subcommand)]
        command: mcp::cli::McpCommand,
    },
    /// Ready a bucket for syncing devices from the tab.
    Sync {
        #[command(subcommand)]
        command: sync_cli::SyncCommand,
    },
    /// Search the files of a folder by words and meaning.
    Knowledge {
        #[command(subcommand)]
        command: knowledge_cli::KnowledgeCommand,
    },
    /// Read a page as web_fetch would, to check it before a model does.
    Web {
        #[command(subcommand)]
        command: web_cli::WebCommand,
    },
}

/// The one-thread runtime a CLI command runs on; `None` after saying why
/// it could not start.
pub(crate) fn cli_runtime() -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            None
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve {
            host,
            port,
            dist,
            allow_connect,
            config_dir,
            config: config_file,
            allow_private_fetch,
            mcp_servers,
        } => {
            tracing_subscriber::fmt()
                .with_env_filter(
                    tracing_subscriber::EnvFilter::try_from_default_env()
                        .unwrap_or_else(|_| "hearth=info,hearth_proxy=info".into()),
                )
                .with_writer(std::io::stderr)
                .init();
            let config = serve::ServeConfig {
                dist: dist.unwrap_or_else(serve::default_dist),
                extra_connect_src: allow_connect,
            };
            let Some(config_dir) = config_dir.or_else(web::config::default_config_dir) else {
                eprintln!(
                    "error: cannot tell where your config directory is; pass --config-dir or set HEARTH_CONFIG_DIR"
                );
                return ExitCode::FAILURE;
            };
            let stdio_config = mcp_servers.unwrap_or_else(|| config_dir.join("mcp-servers.json"));
            let mut net_config =
                match web::config::NetConfig::load(&config_dir, config_file.as_deref(), &|name| {
                    std::env::var(name).ok()
                }) {
                    Ok(c) => c,
                    Err(e) => {
                        eprintln!("error: {e}");
                        return ExitCode::FAILURE;
                    }
                };
            if let Err(e) = net_config.allow_private_from_flags(&allow_private_fetch) {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
            let rt = match tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    eprintln!("error: cannot start the async runtime: {e}");
                    return ExitCode::FAILURE;
                }
            };
            match rt.block_on(serve::run(config, net_config, host, port, stdio_config)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Skills { command } => skills_cli::run(command),
        Command::Mcp { command } => mcp::cli::run(command),
        Command::Sync { command } => sync_cli::run(command),
        Command::Knowledge { command } => knowledge_cli::run(command),
        Command::Web { command } => web_cli::run(command),
    }
}
