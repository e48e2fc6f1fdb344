//! Hearth's build and test driver.
//!
//! - `cargo xtask run [--port P]`: install what is missing, build the app in
//!   release mode, and start `hearth serve`.
//! - `cargo xtask test`: install what the tests need, then fmt, clippy,
//!   native tests, the core purity check, wasm-bindgen-test in headless
//!   Chromium, the release build and Playwright; ends with `N passed, N failed`.
//! - `cargo xtask build`: the release build into dist/.
//! - `cargo xtask bench`: print size and speed figures.
//! - `cargo xtask skill-collections [--from DIR]`: install the real Agent
//!   Skills collections discovery's quality test ranks, into
//!   target/skill-collections/ (the test run does this itself).
//! - `cargo xtask precache [DIR]`: write the service worker's file list
//!   (trunk runs this after every build).
//! - `cargo xtask pyodide`: copy the Python runtime into public/pyodide/ (the
//!   build does this itself; run it before a hand-made `trunk build`).

mod bench;
mod collections;
mod pwa;
mod setup;
mod test;
mod util;

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use util::{Failure, repo_root, run, step};

/// trunk's release build into dist/, with wasm-opt from npm's binaryen and
/// the Python runtime copied in from npm's pyodide.
pub fn build_release() -> Result<(), Failure> {
    let root = repo_root();
    step(
        "Python runtime into public/pyodide/",
        setup::pyodide_runtime,
    )?;
    step(
        "highlighter and math converter into public/vendor/",
        setup::vendor_files,
    )?;
    run(Command::new("trunk")
        .args(["build", "--release"])
        .current_dir(&root))?;
    if !root.join("dist/index.html").exists() {
        return Err(Failure::new(
            "trunk finished but dist/index.html is missing",
        ));
    }
    Ok(())
}

/// The `hearth` binary built with the `native` profile (opt-level 3; the
/// workspace's release profile is tuned for the wasm bundle's size).
pub fn build_native_hearth() -> Result<PathBuf, Failure> {
    let root = repo_root();
    run(Command::new("cargo")
        .args(["build", "--profile", "native", "-p", "hearth-proxy"])
        .current_dir(&root))?;
    Ok(root.join("target/native/hearth"))
}

fn run_app(args: &[String]) -> Result<(), Failure> {
    let mut port = "8080".to_string();
    let mut host = "127.0.0.1".to_string();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--port" => {
                port = it
                    .next()
                    .cloned()
                    .ok_or_else(|| Failure::new("--port needs a value"))?
            }
            "--host" => {
                host = it
                    .next()
                    .cloned()
                    .ok_or_else(|| Failure::new("--host needs a value"))?
            }
            other => {
                return Err(Failure::new(format!(
                    "unknown option {other}; use --port P or --host H"
                )));
            }
        }
    }
    let root = repo_root();
    setup::build_tools()?;
    step("release build of the app", build_release)?;
    let hearth = step("native build of hearth", build_native_hearth)?;
    println!();
    run(Command::new(hearth)
        .args(["serve", "--host", &host, "--port", &port, "--dist"])
        .arg(root.join("dist"))
        .current_dir(&root))
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("{message}");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((cmd, rest)) = args.split_first() else {
        eprintln!("usage: cargo xtask <run|test|build|bench|precache|pyodide|skill-collections>");
        return ExitCode::FAILURE;
    };
    let result = match cmd.as_str() {
        "run" => run_app(rest),
        "build" => setup::build_tools().and_then(|()| step("release build", build_release)),
        "bench" => bench::run(rest),
        "precache" => pwa::run(rest),
        "pyodide" => step(
            "Python runtime into public/pyodide/",
            setup::pyodide_runtime,
        ),
        "skill-collections" => {
            let from = match rest {
                [flag, dir] if flag == "--from" => Some(PathBuf::from(dir)),
                [] => None,
                _ => {
                    return usage_error("usage: cargo xtask skill-collections [--from DIR]");
                }
            };
            step(
                "Agent Skills collections into target/skill-collections/",
                || collections::install(from.as_deref()),
            )
        }
        "test" => match test::run_all() {
            Ok(t) => {
                println!("\n{} passed, {} failed", t.passed, t.failed);
                return if t.failed == 0 {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                };
            }
            Err(e) => Err(e),
        },
        other => Err(Failure::new(format!(
            "unknown command '{other}'; use run, test, build, bench, precache, pyodide or skill-collections"
        ))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("\nerror: {e}");
            if cmd == "test" {
                println!("\n0 passed, 1 failed");
            }
            ExitCode::FAILURE
        }
    }
}
