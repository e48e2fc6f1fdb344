//! Installs what the build and the tests need, skipping what is in place.
//! Every install step of the project lives here, so a fresh machine (or CI
//! on a clean clone) needs nothing but Rust and Node.

use std::path::Path;
use std::process::Command;

use crate::util::{Failure, capture, repo_root, run, step};

pub const TRUNK_VERSION: &str = "0.21.14";

/// The `wasm-bindgen` version in Cargo.lock; the CLI must equal it.
pub fn locked_wasm_bindgen_version() -> Result<String, Failure> {
    let lock = std::fs::read_to_string(repo_root().join("Cargo.lock"))
        .map_err(|e| Failure::new(format!("cannot read Cargo.lock: {e}")))?;
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "name = \"wasm-bindgen\""
            && let Some(v) = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = "))
        {
            return Ok(v.trim_matches('"').to_string());
        }
    }
    Err(Failure::new("Cargo.lock has no wasm-bindgen entry"))
}

fn tool_version(program: &str, arg: &str) -> Option<String> {
    capture(Command::new(program).arg(arg)).ok()
}

/// The wasm target, trunk, wasm-bindgen-cli and the npm packages.
pub fn build_tools() -> Result<(), Failure> {
    step("wasm32 target", || {
        let installed = capture(Command::new("rustup").args(["target", "list", "--installed"]))?;
        if installed
            .lines()
            .any(|l| l.trim() == "wasm32-unknown-unknown")
        {
            println!("  already installed");
            return Ok(());
        }
        run(Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"]))
    })?;

    step("trunk", || {
        match tool_version("trunk", "--version") {
            Some(v) if v.contains(TRUNK_VERSION) => {
                println!("  {} already installed", v.trim());
                return Ok(());
            }
            Some(v) => println!("  found {}, need {TRUNK_VERSION}", v.trim()),
            None => println!("  not installed; this takes about 9 minutes on 2 cores"),
        }
        run(Command::new("cargo").args([
            "install",
            "trunk",
            "--version",
            TRUNK_VERSION,
            "--locked",
        ]))
    })?;

    step("wasm-bindgen-cli", || {
        let want = locked_wasm_bindgen_version()?;
        match tool_version("wasm-bindgen", "--version") {
            Some(v) if v.split_whitespace().nth(1) == Some(want.as_str()) => {
                println!("  {} already installed", v.trim());
                return Ok(());
            }
            Some(v) => println!("  found {}, need {want}", v.trim()),
            None => println!("  not installed"),
        }
        // Not --locked: the CLI's own lock pins a webpki-roots release that
        // the registry no longer has.
        run(Command::new("cargo").args(["install", "wasm-bindgen-cli", "--version", &want]))
    })?;

    step("npm packages", npm_packages)
}

/// `npm ci` unless node_modules already matches package-lock.json.
pub fn npm_packages() -> Result<(), Failure> {
    let root = repo_root();
    let lock = root.join("package-lock.json");
    let installed = root.join("node_modules/.package-lock.json");
    if is_newer_or_same(&installed, &lock) && root.join("node_modules/.bin/wasm-opt").exists() {
        println!("  node_modules is up to date");
        return Ok(());
    }
    run(Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(&root))
}

fn is_newer_or_same(a: &Path, b: &Path) -> bool {
    match (
        std::fs::metadata(a).and_then(|m| m.modified()),
        std::fs::metadata(b).and_then(|m| m.modified()),
    ) {
        (Ok(ma), Ok(mb)) => ma >= mb,
        _ => false,
    }
}

/// The Pyodide files the app serves from /pyodide/ and hands to the
/// sandbox (the same list as `PYTHON_RUNTIME_FILES` in hearth-core's
/// `code` module). They come from npm's `pyodide` package and are copied
/// into `public/pyodide/` (gitignored) before every build, never committed.
pub const PYODIDE_FILES: [&str; 5] = [
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
];

/// Copies the Python runtime from node_modules into public/pyodide/,
/// skipping files that are already there with the same size.
pub fn pyodide_runtime() -> Result<(), Failure> {
    let root = repo_root();
    let from = root.join("node_modules/pyodide");
    let to = root.join("public/pyodide");
    if !from.join("pyodide.mjs").exists() {
        npm_packages()?;
    }
    std::fs::create_dir_all(&to)
        .map_err(|e| Failure::new(format!("cannot create {}: {e}", to.display())))?;
    let mut copied = 0;
    for name in PYODIDE_FILES {
        let src = from.join(name);
        let dst = to.join(name);
        let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).ok();
        let want = size(&src).ok_or_else(|| {
            Failure::new(format!(
                "{} is missing; is pyodide in package.json's devDependencies?",
                src.display()
            ))
        })?;
        if size(&dst) == Some(want) {
            continue;
        }
        std::fs::copy(&src, &dst).map_err(|e| {
            Failure::new(format!(
                "cannot copy {} to {}: {e}",
                src.display(),
                dst.display()
            ))
        })?;
        copied += 1;
    }
    println!(
        "  {copied} of {} Pyodide files copied into public/pyodide/",
        PYODIDE_FILES.len()
    );
    Ok(())
}

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Chromium and chromedriver from Debian, for the browser tests.
pub fn browser() -> Result<(), Failure> {
    step("chromium + chromedriver", || {
        if Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists() {
            let v = tool_version(CHROMIUM, "--version").unwrap_or_default();
            println!("  {} already installed", v.trim());
            return Ok(());
        }
        let is_root = capture(Command::new("id").arg("-u"))
            .map(|s| s.trim() == "0")
            .unwrap_or(false);
        let mut prefix: Vec<&str> = Vec::new();
        if !is_root {
            if Command::new("sudo")
                .args(["-n", "true"])
                .status()
                .map(|s| s.success())
                .unwrap_or(false)
            {
                prefix.push("sudo");
            } else {
                return Err(Failure::new(
                    "Chromium and chromedriver are missing and this user cannot install packages.\n\
                     Install them with: sudo apt-get install -y chromium chromium-driver",
                ));
            }
        }
        let apt = |args: &[&str]| {
            let mut all: Vec<&str> = prefix.clone();
            all.push("apt-get");
            all.extend_from_slice(args);
            let mut cmd = Command::new(all[0]);
            cmd.args(&all[1..]).env("DEBIAN_FRONTEND", "noninteractive");
            run(&mut cmd)
        };
        if apt(&["install", "-y", "chromium", "chromium-driver"]).is_err() {
            apt(&["update"])?;
            apt(&["install", "-y", "chromium", "chromium-driver"])?;
        }
        if !Path::new(CHROMIUM).exists() || !Path::new(CHROMEDRIVER).exists() {
            return Err(Failure::new(
                "apt-get finished but /usr/bin/chromium or /usr/bin/chromedriver is still missing",
            ));
        }
        Ok(())
    })
}

/// The MCP servers and conformance suite the MCP tests and benches run
/// against (npm and PyPI registries only; quick when in place). The tests
/// themselves install nothing: without these they fail with what is
/// missing.
pub fn mcp_peers() -> Result<(), Failure> {
    let script = repo_root().join("crates/proxy/tests/mcp-peers/install.sh");
    run(Command::new("sh").arg(&script))?;
    run(Command::new("sh").arg(&script).arg("--check"))
}
