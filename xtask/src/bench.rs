//! `cargo xtask bench`: figures, never assertions. Prints the release
//! bundle's size (raw and gzip), the time to first render in headless
//! Chromium (median of 5 cold loads), the sandbox's and file skills'
//! figures (JS and Python round trips, Python's cold start against bare
//! Pyodide, 1,000 granted files), the core and browser benches,
//! `discover_skills` latency at 10,000 skills in the browser, the network
//! tier's proxy overhead and sustained load (`cargo bench -p hearth-proxy
//! --bench net`, built with the `native` profile like the `hearth` people
//! run), web_fetch's reader against Mozilla Readability (word-level F1 on
//! real pages), highlighted code and math (cost per 1,000 lines, size of
//! the parts loaded on demand), and MCP in the browser (connect, tools/call
//! round trips direct and through the stdio bridge, 1,000 tools).
//! Discovery's figures include the opening context with 10/100/1,000 Agent
//! Skills packages, recall on real collections, and `discover_skills` with
//! 1,000 packages + 10,000 tools.

use std::io::Write;
use std::process::Command;

use flate2::Compression;
use flate2::write::GzEncoder;

use crate::setup;
use crate::util::{self, Failure, repo_root, run_tee, step};

fn gzip_len(bytes: &[u8]) -> usize {
    let mut enc = GzEncoder::new(Vec::new(), Compression::best());
    let _ = enc.write_all(bytes);
    enc.finish().map(|v| v.len()).unwrap_or(0)
}

/// Raw and gzip sizes of the first-load files (wasm, js, css) in dist/.
pub fn bundle_sizes() -> Result<Vec<(String, usize, usize)>, Failure> {
    let dist = repo_root().join("dist");
    let mut rows = Vec::new();
    let entries = std::fs::read_dir(&dist)
        .map_err(|e| Failure::new(format!("cannot read dist/: {e}; run cargo xtask build")))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let first_load = name.ends_with(".wasm")
            || (name.ends_with(".js") && name != "sw.js")
            || name.ends_with(".css");
        if first_load {
            let bytes = std::fs::read(entry.path()).map_err(|e| Failure::new(e.to_string()))?;
            rows.push((name, bytes.len(), gzip_len(&bytes)));
        }
    }
    rows.sort();
    Ok(rows)
}

/// Raw and gzip sizes of the parts loaded on demand (dist/vendor/: the
/// highlighter and the math converter).
pub fn lazy_sizes() -> Result<Vec<(String, usize, usize)>, Failure> {
    let dir = repo_root().join("dist/vendor");
    let mut rows = Vec::new();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(rows);
    };
    for entry in entries.flatten() {
        let bytes = std::fs::read(entry.path()).map_err(|e| Failure::new(e.to_string()))?;
        rows.push((
            format!("vendor/{}", entry.file_name().to_string_lossy()),
            bytes.len(),
            gzip_len(&bytes),
        ));
    }
    rows.sort();
    Ok(rows)
}

pub fn run(args: &[String]) -> Result<(), Failure> {
    let root = repo_root();
    let skip_build = args.iter().any(|a| a == "--no-build");
    if !skip_build {
        setup::build_tools()?;
        step("release build", crate::build_release)?;
    }
    setup::browser()?;
    step("bundle size", || {
        let rows = bundle_sizes()?;
        let (mut raw, mut gz) = (0, 0);
        for (name, r, g) in &rows {
            println!("  {name:<48} {:>9} raw {:>9} gzip", kb(*r), kb(*g));
            raw += r;
            gz += g;
        }
        println!(
            "  {:<48} {:>9} raw {:>9} gzip   (goal: <= 600 KB gzip)",
            "first load total",
            kb(raw),
            kb(gz)
        );
        for (name, r, g) in lazy_sizes()? {
            println!(
                "  {name:<48} {:>9} raw {:>9} gzip   (on demand)",
                kb(r),
                kb(g)
            );
        }
        Ok(())
    })?;
    step(
        "time to first render (headless Chromium, median of 5)",
        || {
            let hearth = crate::build_native_hearth()?;
            let (ok, _) = run_tee(
                Command::new("node")
                    .arg("e2e/bench/first-render.mjs")
                    .env("HEARTH_BIN", hearth)
                    .env("HEARTH_DIST", root.join("dist"))
                    .current_dir(&root),
            )?;
            if ok {
                Ok(())
            } else {
                Err(Failure::new("the first-render benchmark failed"))
            }
        },
    )?;
    step("code sandbox and file skills (headless Chromium)", || {
        let (ok, _) = run_tee(
            Command::new("node")
                .arg("e2e/bench/sandbox.mjs")
                .env("HEARTH_BIN", root.join("target/release/hearth"))
                .env("HEARTH_DIST", root.join("dist"))
                .current_dir(&root),
        )?;
        if ok {
            Ok(())
        } else {
            Err(Failure::new("the sandbox benchmark failed"))
        }
    })?;
    // Discovery's figures rank real Agent Skills collections; the native
    // discovery bench also writes the package texts the browser bench reads.
    step(
        "Agent Skills collections into target/skill-collections/",
        || crate::collections::install(None),
    )?;
    step("native benches (hearth-core)", || {
        for bench in [
            "call_path",
            "discovery",
            "tokens",
            "agent_skills",
            "mcp_registry",
            "markdown",
        ] {
            util::run(
                Command::new("cargo")
                    .args(["bench", "-p", "hearth-core", "--bench", bench])
                    .current_dir(&root),
            )?;
        }
        Ok(())
    })?;
    step("browser benches (wasm, headless Chromium)", || {
        let mut cmd = Command::new("cargo");
        cmd.args([
            "test",
            "-p",
            "hearth",
            "--target",
            "wasm32-unknown-unknown",
            "--release",
            "--features",
            "bench",
            "--test",
            "browser_bench",
            "--",
            "--nocapture",
        ])
        .current_dir(&root);
        let (ok, _) = run_tee(crate::test::wasm_test_env(&mut cmd))?;
        if ok {
            Ok(())
        } else {
            Err(Failure::new("the browser benchmarks failed"))
        }
    })?;
    step(
        "network tier: proxy overhead and sustained load (native profile)",
        || {
            let (ok, _) = run_tee(
                Command::new("cargo")
                    .args([
                        "bench",
                        "--profile",
                        "native",
                        "-p",
                        "hearth-proxy",
                        "--bench",
                        "net",
                    ])
                    .current_dir(&root),
            )?;
            if ok {
                Ok(())
            } else {
                Err(Failure::new("the network-tier benchmark failed"))
            }
        },
    )?;
    step(
        "web_fetch's reader against Mozilla Readability (word-level F1)",
        || {
            let corpus = setup::reader_corpus()?;
            let hearth = crate::build_native_hearth()?;
            let (ok, _) = run_tee(
                Command::new("node")
                    .arg("e2e/bench/reader-quality.mjs")
                    .arg("--json")
                    .arg(root.join("target/reader-quality.json"))
                    .env("HEARTH_BIN", hearth)
                    .env("READER_CORPUS", corpus)
                    .current_dir(&root),
            )?;
            if ok {
                Ok(())
            } else {
                Err(Failure::new("the reader comparison failed"))
            }
        },
    )?;
    step(
        "highlighted code and math: cost and size (headless Chromium)",
        || {
            let (ok, _) = run_tee(
                Command::new("node")
                    .arg("e2e/bench/highlight.mjs")
                    .env("HEARTH_DIST", root.join("dist"))
                    .current_dir(&root),
            )?;
            if ok {
                Ok(())
            } else {
                Err(Failure::new("the highlighting benchmark failed"))
            }
        },
    )?;
    // MCP (issue 8): connect, round trips and 1,000 tools in the browser.
    step("MCP in the browser (real servers on 127.0.0.1)", || {
        let (ok, _) = run_tee(
            Command::new("node")
                .arg("e2e/bench/mcp.mjs")
                .env("HEARTH_BIN", root.join("target/release/hearth"))
                .env("HEARTH_DIST", root.join("dist"))
                .current_dir(&root),
        )?;
        if ok {
            Ok(())
        } else {
            Err(Failure::new("the MCP benchmark failed"))
        }
    })?;
    step(
        "discover_skills at 10,000 skills, then with 1,000 packages added, in the browser (headless Chromium)",
        || {
            let mut cmd = Command::new("cargo");
            cmd.args([
                "test",
                "-p",
                "hearth",
                "--release",
                "--features",
                "bench",
                "--target",
                "wasm32-unknown-unknown",
                "--test",
                "bench_discovery",
                "--",
                "--nocapture",
            ])
            .current_dir(&root);
            let (ok, _) = run_tee(crate::test::wasm_test_env(&mut cmd))?;
            if ok {
                Ok(())
            } else {
                Err(Failure::new("the browser discovery benchmark failed"))
            }
        },
    )?;
    Ok(())
}

fn kb(bytes: usize) -> String {
    format!("{:.1} KB", bytes as f64 / 1024.0)
}
