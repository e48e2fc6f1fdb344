//! `hearth web read <url|file> [--json]`: a page as `web_fetch` gives it to
//! the model, through the same guarded client, limits and reader the proxy
//! uses, so people can check a page before a model reads it.
//!
//! A URL is fetched exactly as `POST /api/fetch` fetches it (public
//! addresses only unless `--allow-private-fetch` or the config file's
//! `[fetch] allow_private` names the destination; the size and time limits
//! of the config file). A file is read as a saved page: its size is held to
//! the same byte limit and its reading to the same time limit.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Subcommand};
use hearth_core::api::domains::DomainPolicy;
use hearth_core::api::web::FetchResponse;
use hearth_core::builtin::web::{MODEL_TEXT_MAX_CHARS, fetch_model_text};
use url::Url;

use crate::client::resolve::SystemResolver;
use crate::client::{ClientConfig, FetchError, GuardedClient};
use crate::web::config::{NetConfig, default_config_dir};
use crate::web::fetch::{self, FetchLimits};

#[derive(Subcommand)]
pub enum WebCommand {
    /// Print what web_fetch returns for a page: the text the model reads,
    /// or with --json the whole result (title, content, links, sizes).
    Read(ReadArgs),
}

#[derive(Args)]
pub struct ReadArgs {
    /// An http(s) URL, or the path of a saved page (HTML, JSON or text).
    target: String,
    /// Print the whole result as JSON, as the app's result card gets it.
    #[arg(long)]
    json: bool,
    /// The most bytes to read (default: the config file's
    /// [fetch] default_max_bytes, 2 MiB unless set).
    #[arg(long = "max-bytes", value_name = "N")]
    max_bytes: Option<u64>,
    /// A non-public destination that may be fetched anyway, as IP:PORT
    /// ([IPv6]:PORT), as for `hearth serve`. Repeatable.
    #[arg(long = "allow-private-fetch", value_name = "IP:PORT")]
    allow_private_fetch: Vec<String>,
    /// Hearth's config directory, holding config.toml (default: your
    /// platform's config dir + /hearth).
    #[arg(long = "config-dir", env = "HEARTH_CONFIG_DIR")]
    config_dir: Option<PathBuf>,
    /// The config file, if not config.toml in the config directory.
    #[arg(long = "config", env = "HEARTH_CONFIG")]
    config: Option<PathBuf>,
}

pub fn run(command: WebCommand) -> ExitCode {
    match command {
        WebCommand::Read(args) => match read(&args) {
            Ok(page) => {
                if args.json {
                    match serde_json::to_string_pretty(&page) {
                        Ok(json) => println!("{json}"),
                        Err(e) => {
                            eprintln!("error: cannot print the result: {e}");
                            return ExitCode::FAILURE;
                        }
                    }
                } else {
                    println!("{}", fetch_model_text(&page, MODEL_TEXT_MAX_CHARS));
                }
                ExitCode::SUCCESS
            }
            Err(message) => {
                eprintln!("error: {message}");
                ExitCode::FAILURE
            }
        },
    }
}

fn read(args: &ReadArgs) -> Result<FetchResponse, String> {
    let config_dir = match args.config_dir.clone().or_else(default_config_dir) {
        Some(dir) => dir,
        None => {
            return Err(
                "cannot tell where your config directory is; pass --config-dir or set HEARTH_CONFIG_DIR"
                    .into(),
            );
        }
    };
    let mut config = NetConfig::load(&config_dir, args.config.as_deref(), &|name| {
        std::env::var(name).ok()
    })
    .map_err(|e| e.to_string())?;
    config.allow_private_from_flags(&args.allow_private_fetch)?;
    let max_bytes = args.max_bytes.unwrap_or(config.limits.default_max_bytes);
    if max_bytes == 0 || max_bytes > config.limits.max_bytes {
        return Err(format!(
            "--max-bytes must be between 1 and {} (the config file's [fetch] max_bytes)",
            config.limits.max_bytes
        ));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let result = if is_url(&args.target) {
        let client = GuardedClient::new(ClientConfig {
            connect_timeout: config.connect_timeout,
            allow_private: config.allow_private.clone(),
            resolver: Arc::new(SystemResolver),
            tls: ClientConfig::default_tls(),
            user_agent: hyper::header::HeaderValue::from_static(crate::web::USER_AGENT),
        });
        rt.block_on(fetch::fetch(
            &client,
            &args.target,
            max_bytes,
            &DomainPolicy::default(),
            &config.limits,
        ))
    } else {
        rt.block_on(read_file(
            Path::new(&args.target),
            max_bytes,
            &config.limits,
        ))
    };
    result.map_err(|e| e.to_string())
}

/// Whether `target` names a URL rather than a file: anything with a scheme
/// other than `file:` goes to the fetcher, which refuses what it cannot
/// fetch with its usual message.
fn is_url(target: &str) -> bool {
    match target.split_once("://") {
        Some((scheme, _)) => {
            !scheme.eq_ignore_ascii_case("file")
                && !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// The media type a saved page is read as, from its extension; `None`
/// leaves it to sniffing, as for an unlabelled response.
fn content_type_of(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "html" | "htm" | "xhtml" => Some("text/html"),
        "json" => Some("application/json"),
        "txt" | "text" => Some("text/plain"),
        "md" | "markdown" => Some("text/markdown"),
        "csv" => Some("text/csv"),
        _ => None,
    }
}

/// Reads a saved page within the fetch limits, as if a server had sent it.
async fn read_file(
    path: &Path,
    max_bytes: u64,
    limits: &FetchLimits,
) -> Result<FetchResponse, FetchError> {
    let path = match path.to_str().and_then(|s| s.strip_prefix("file://")) {
        Some(rest) => PathBuf::from(rest),
        None => path.to_path_buf(),
    };
    let unreadable = |detail: String| FetchError::UpstreamFailed {
        host: path.display().to_string(),
        detail,
    };
    let absolute = std::fs::canonicalize(&path).map_err(|e| unreadable(e.to_string()))?;
    let meta = std::fs::metadata(&absolute).map_err(|e| unreadable(e.to_string()))?;
    if !meta.is_file() {
        return Err(unreadable("not a file".into()));
    }
    if meta.len() > max_bytes {
        return Err(FetchError::ResponseTooLarge {
            limit: max_bytes,
            declared: Some(meta.len()),
        });
    }
    let body = std::fs::read(&absolute).map_err(|e| unreadable(e.to_string()))?;
    if body.len() as u64 > max_bytes {
        return Err(FetchError::ResponseTooLarge {
            limit: max_bytes,
            declared: None,
        });
    }
    let url = Url::from_file_path(&absolute)
        .map_err(|()| unreadable("the path cannot be written as a file: URL".into()))?;
    let bytes = body.len() as u64;
    let doc = fetch::read_within(&url, content_type_of(&absolute), body, limits).await?;
    Ok(FetchResponse {
        url: url.to_string(),
        requested_url: url.to_string(),
        host: String::new(),
        status: 200,
        kind: doc.kind,
        content_type: doc.content_type,
        charset: doc.charset,
        lossy: doc.lossy,
        title: doc.title,
        content: doc.content,
        links: doc.links,
        bytes,
        redirects: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_files_are_told_apart() {
        let cases = [
            ("https://example.com/", true),
            ("HTTP://example.com/", true),
            ("ftp://example.com/x", true),
            ("file:///tmp/page.html", false),
            ("page.html", false),
            ("./dir/page.html", false),
            ("/tmp/a://b", false),
            ("C:\\pages\\a.html", false),
        ];
        for (target, want) in cases {
            assert_eq!(is_url(target), want, "{target}");
        }
    }

    #[test]
    fn saved_pages_are_typed_by_extension() {
        let cases = [
            ("a.HTML", Some("text/html")),
            ("a.htm", Some("text/html")),
            ("a.json", Some("application/json")),
            ("a.md", Some("text/markdown")),
            ("a.txt", Some("text/plain")),
            ("a", None),
            ("a.bin", None),
        ];
        for (name, want) in cases {
            assert_eq!(content_type_of(Path::new(name)), want, "{name}");
        }
    }
}
