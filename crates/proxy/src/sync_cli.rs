//! `hearth sync bucket`: readies a bucket for sync from the tab. It makes
//! the bucket if asked, and sets the CORS rule that lets the app's origin
//! get, put and delete objects and read their ETags. Browsers refuse a
//! bucket without that rule, and most stores' consoles hide the setting,
//! so one command does it with the same signed requests the tab sends.
//!
//! The keys come from `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`, so
//! the secret never sits in the shell's history.

use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use clap::{Args, Subcommand};
use hearth_sync::s3::{Bucket, Credentials, Request, StoreError};

#[derive(Subcommand)]
pub enum SyncCommand {
    /// Let the app's origin use a bucket for sync (its CORS rule); with
    /// --create, make the bucket first.
    Bucket(BucketArgs),
}

#[derive(Args)]
pub struct BucketArgs {
    /// The store's base URL, e.g. https://s3.us-east-1.amazonaws.com,
    /// https://<account>.r2.cloudflarestorage.com or http://127.0.0.1:8333.
    #[arg(long)]
    endpoint: String,
    #[arg(long, default_value = "us-east-1")]
    region: String,
    #[arg(long)]
    bucket: String,
    /// Where the app is opened from, e.g. http://127.0.0.1:8080 or
    /// https://hearth.example.org. Repeatable.
    #[arg(long = "origin", required = true)]
    origins: Vec<String>,
    /// Make the bucket first (an existing one of yours is fine).
    #[arg(long)]
    create: bool,
}

pub fn run(command: SyncCommand) -> ExitCode {
    let SyncCommand::Bucket(args) = command;
    let creds = match credentials(&|name| std::env::var(name).ok()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    crate::mcp::transport::install_crypto();
    let Some(rt) = crate::cli_runtime() else {
        return ExitCode::FAILURE;
    };
    match rt.block_on(prepare(&args, &creds)) {
        Ok(()) => {
            println!(
                "Bucket {} at {} is ready for sync from {}.",
                args.bucket,
                args.endpoint,
                args.origins.join(", ")
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn credentials(env: &dyn Fn(&str) -> Option<String>) -> Result<Credentials, String> {
    let get = |name: &str| {
        env(name)
            .filter(|v| !v.trim().is_empty())
            .ok_or_else(|| format!("set {name} to the bucket's access key"))
    };
    Ok(Credentials {
        access_key_id: get("AWS_ACCESS_KEY_ID")?,
        secret_access_key: get("AWS_SECRET_ACCESS_KEY")?,
    })
}

async fn prepare(args: &BucketArgs, creds: &Credentials) -> Result<(), String> {
    for origin in &args.origins {
        let ok = url::Url::parse(origin).is_ok_and(|u| {
            matches!(u.scheme(), "http" | "https") && u.path() == "/" && !origin.ends_with('/')
        });
        if !ok {
            return Err(format!(
                "{origin} is not an origin: give the scheme, host and port only, e.g. http://127.0.0.1:8080"
            ));
        }
    }
    let bucket = Bucket {
        endpoint: args.endpoint.trim_end_matches('/').to_string(),
        region: args.region.clone(),
        name: args.bucket.clone(),
    };
    let client = reqwest::Client::builder()
        .build()
        .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
    let now = || {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    };
    if args.create {
        let (status, body) = send(&client, bucket.create(creds, now())).await?;
        let made = (200..300).contains(&status);
        let code = hearth_sync::s3::error_code(&body);
        // A bucket this key already owns is what was asked for.
        if !made && !matches!(code.as_deref(), Some("BucketAlreadyOwnedByYou")) {
            return Err(bucket.error(status, &body).to_string());
        }
    }
    let origins: Vec<&str> = args.origins.iter().map(String::as_str).collect();
    let (status, body) = send(&client, bucket.put_cors(creds, now(), &origins)).await?;
    if !(200..300).contains(&status) {
        return Err(format!(
            "the store refused the CORS rule: {}",
            bucket.error(status, &body)
        ));
    }
    Ok(())
}

async fn send(client: &reqwest::Client, req: Request) -> Result<(u16, Vec<u8>), String> {
    let method = reqwest::Method::from_bytes(req.method.as_bytes()).map_err(|e| e.to_string())?;
    let mut builder = client.request(method, &req.url).body(req.body);
    for (k, v) in &req.headers {
        builder = builder.header(k.as_str(), v.as_str());
    }
    let res = builder
        .send()
        .await
        .map_err(|e| StoreError::Unreachable(e.to_string()).to_string())?;
    let status = res.status().as_u16();
    let body = res.bytes().await.map_err(|e| e.to_string())?.to_vec();
    Ok((status, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_from_the_environment_and_a_missing_one_is_named() {
        let env = |name: &str| match name {
            "AWS_ACCESS_KEY_ID" => Some("AKID".to_string()),
            _ => None,
        };
        let err = credentials(&env).unwrap_err();
        assert!(err.contains("AWS_SECRET_ACCESS_KEY"), "{err}");
        let both = |name: &str| Some(format!("{name}-value"));
        let c = credentials(&both).unwrap();
        assert_eq!(c.access_key_id, "AWS_ACCESS_KEY_ID-value");
    }
}
