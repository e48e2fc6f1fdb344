//! Hearth's build and test driver.
//!
//! - `cargo xtask run [--port P]`: install what is missing, build the app in
//!   release mode unless dist/ is already the build of the current sources,
//!   and start `hearth serve`.
//! - `cargo xtask test [--level L[,L]] [-- PLAYWRIGHT ARGS]`: install what
//!   the tests need, then fmt, clippy,
//!   native tests, the core purity check, the import-circle check,
//!   wasm-bindgen-test in headless
//!   Chromium, the release build and Playwright; ends with `N passed, N
//!   failed` after every reason it failed.
//! - `cargo xtask build`: the release build into dist/, always.
//! - `cargo xtask bench [--only STEP] [--no-build]`: size and speed figures
//!   into target/bench/results.json, a table, and docs/benchmarks.md.
//! - `cargo xtask circles`: the check that no crate's modules import each
//!   other in a circle (a level of `cargo xtask test` too).
//! - `cargo xtask baselines [--grep TEXT]`: rewrite the screen baselines
//!   the journeys compare against, on purpose.
//! - `cargo xtask skill-collections [--from DIR]`: install the real Agent
//!   Skills collections discovery's quality test ranks, into
//!   target/skill-collections/ (the test run does this itself).
//! - `cargo xtask precache [DIR]`: write the service worker's file list
//!   (trunk runs this after every build, first splitting the app's wasm
//!   into its lazily loaded chunks).
//! - `cargo xtask pyodide`: copy the Python runtime into public/pyodide/ and
//!   the in-tab model engine into public/llama/, building it if needed (the
//!   build does this itself; run it before a hand-made `trunk build`).
//! - `cargo xtask llama`: build Hearth's llama.cpp engine for the tab and
//!   the native tools (cached under ~/.cache/hearth/llama/), check the
//!   engine's SIMD, and convert the test model to the quantizations the
//!   tests and the bench run.
//! - `cargo xtask test-model`: install the small model the tests run.
//! - `cargo xtask seaweedfs`: install the S3 store sync's tests start
//!   (`HEARTH_WEED=<the path it prints>` for a hand-run `cargo test`).
//! - `cargo xtask fuzz [--cases N]`: the property tests of every parser of
//!   outside input, with many more cases than `cargo xtask test` runs, in
//!   release (not part of the test command).

mod baselines;
mod bench;
mod circles;
mod collections;
mod embedding;
mod fresh;
mod fuzz;
mod lexicon;
mod llama;
mod pwa;
mod report;
mod setup;
mod split;
mod test;
mod util;

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use util::{Failure, repo_root, run, step};

/// trunk's release build into dist/, with wasm-opt from npm's binaryen and
/// the Python runtime copied in from npm's pyodide. Records what it was
/// built from, so `cargo xtask run` can tell when dist/ is current.
pub fn build_release() -> Result<(), Failure> {
    let root = repo_root();
    step(
        "Python runtime into public/pyodide/",
        setup::pyodide_runtime,
    )?;
    step(
        "highlighter, math converter and charts into public/vendor/",
        setup::vendor_files,
    )?;
    step(
        "the in-tab model engine (llama.cpp) into public/llama/",
        llama::install_engine,
    )?;
    trunk_release(&root)
}

fn trunk_release(root: &std::path::Path) -> Result<(), Failure> {
    // Taken before the build: a source edited while trunk runs makes the
    // next `run` build again.
    let inputs = fresh::snapshot_inputs(root)?;
    fresh::forget(root);
    run(Command::new("trunk")
        .args(["build", "--release"])
        .current_dir(root))?;
    if !root.join("dist/index.html").exists() {
        return Err(Failure::new(
            "trunk finished but dist/index.html is missing",
        ));
    }
    fresh::record(root, inputs)
}

/// The release build, unless dist/ is already the build of the current
/// sources (see `fresh`).
pub fn build_release_if_stale() -> Result<(), Failure> {
    let root = repo_root();
    step(
        "Python runtime into public/pyodide/",
        setup::pyodide_runtime,
    )?;
    step(
        "highlighter, math converter and charts into public/vendor/",
        setup::vendor_files,
    )?;
    step(
        "the in-tab model engine (llama.cpp) into public/llama/",
        llama::install_engine,
    )?;
    match fresh::check(&root)? {
        fresh::Freshness::Current => {
            println!("  dist/ is the build of the current sources; not building");
            Ok(())
        }
        fresh::Freshness::Stale(why) => {
            println!("  building: {why}");
            trunk_release(&root)
        }
    }
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
    step("release build of the app", build_release_if_stale)?;
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
        eprintln!(
            "usage: cargo xtask <run|test|build|bench|baselines|circles|precache|pyodide|llama|test-model|embedding-model|minilm-reference|skill-collections|lexicon|fuzz>"
        );
        return ExitCode::FAILURE;
    };
    let result = match cmd.as_str() {
        "run" => run_app(rest),
        "build" => setup::build_tools().and_then(|()| step("release build", build_release)),
        "bench" => bench::run(rest),
        "baselines" => baselines::run(rest),
        "circles" => step("no import circles inside any crate", circles::check),
        "precache" => pwa::run(rest),
        "pyodide" => step(
            "Python runtime into public/pyodide/",
            setup::pyodide_runtime,
        )
        .and_then(|()| {
            step(
                "the in-tab model engine into public/llama/",
                llama::install_engine,
            )
        }),
        "llama" => llama::install_engine()
            .and_then(|()| step("the engine's SIMD check", llama::check_shipped))
            .and_then(|()| {
                step("test models (Q4_0, Q8_0, Q4_K_M)", llama::test_models).map(|_| ())
            }),
        "test-model" => step("the test model", setup::test_model).map(|_| ()),
        "embedding-model" => step(
            "the embedding model (all-MiniLM-L6-v2) into .test-fixtures/",
            embedding::install_model,
        )
        .map(|_| ()),
        "minilm-reference" => step(
            "all-MiniLM-L6-v2 reference vectors from sentence-transformers",
            embedding::record_reference,
        ),
        "seaweedfs" => step("SeaweedFS into the cache", setup::seaweedfs).map(|_| ()),
        "fuzz" => fuzz::run(rest),
        "lexicon" => step(
            "discovery's lexicon into crates/core/src/discovery/lexicon.txt",
            lexicon::write,
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
        "test" => match test::Options::parse(rest).and_then(|o| test::run_all(&o)) {
            Ok(summary) => {
                if !summary.reasons.is_empty() {
                    println!("\nWhy the run failed:");
                    for reason in &summary.reasons {
                        println!("  - {reason}");
                    }
                }
                println!("\n{}", summary.tally);
                return if summary.tally.failed == 0 && summary.reasons.is_empty() {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                };
            }
            Err(e) => Err(e),
        },
        other => Err(Failure::new(format!(
            "unknown command '{other}'; use run, test, build, bench, baselines, circles, precache, pyodide, llama, test-model, skill-collections, lexicon or fuzz"
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
