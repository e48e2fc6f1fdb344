//! `hearth-fake-model`: the scripted fake model server, for tests that
//! drive the app in a browser.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use hearth_testkit::{FakeModel, Script};

#[derive(Parser)]
#[command(
    name = "hearth-fake-model",
    about = "A scripted fake model server speaking the OpenAI-compatible and Anthropic streaming protocols"
)]
struct Args {
    /// The port; 0 picks a free one (printed on start).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// The address to listen on. Tests keep it on loopback.
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// The script to play (JSON; see crates/testkit/src/script.rs).
    #[arg(long)]
    script: PathBuf,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let script = match Script::load(&args.script) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
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
    rt.block_on(async {
        let server = match FakeModel::start_on(script, SocketAddr::new(args.host, args.port)).await
        {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: cannot listen on {}:{}: {e}", args.host, args.port);
                return ExitCode::FAILURE;
            }
        };
        // The first line is for tests to read the port from.
        println!("hearth-fake-model listening on {}", server.url());
        let _ = tokio::signal::ctrl_c().await;
        server.stop().await;
        ExitCode::SUCCESS
    })
}
