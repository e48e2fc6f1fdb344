//! Running commands and reporting steps.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

/// Why a step failed, in words for the person at the terminal.
#[derive(Debug)]
pub struct Failure(pub String);

impl Failure {
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The workspace root (xtask lives one level below it).
pub fn repo_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

/// PATH with the project's npm binaries (wasm-opt, playwright) and cargo's
/// install dir in front, so tools installed here are found.
pub fn tool_path() -> String {
    let root = repo_root();
    let mut parts = vec![root.join("node_modules/.bin").display().to_string()];
    if let Some(home) = std::env::var_os("CARGO_HOME") {
        parts.push(PathBuf::from(home).join("bin").display().to_string());
    } else if let Some(home) = std::env::var_os("HOME") {
        parts.push(PathBuf::from(home).join(".cargo/bin").display().to_string());
    }
    if let Ok(path) = std::env::var("PATH") {
        parts.push(path);
    }
    parts.join(":")
}

fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().to_string();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Runs `cmd` with inherited output; fails on a non-zero exit.
pub fn run(cmd: &mut Command) -> Result<(), Failure> {
    cmd.env("PATH", tool_path());
    let shown = describe(cmd);
    println!("  $ {shown}");
    let status = cmd
        .status()
        .map_err(|e| Failure::new(format!("cannot start `{shown}`: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(Failure::new(format!("`{shown}` failed ({status})")))
    }
}

/// Runs `cmd` and returns its stdout; fails on a non-zero exit.
pub fn capture(cmd: &mut Command) -> Result<String, Failure> {
    cmd.env("PATH", tool_path());
    let shown = describe(cmd);
    let out = cmd
        .stderr(Stdio::null())
        .output()
        .map_err(|e| Failure::new(format!("cannot start `{shown}`: {e}")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(Failure::new(format!("`{shown}` failed ({})", out.status)))
    }
}

/// Runs `cmd`, echoing its output live while also keeping it, for parsing
/// test counts. Returns the exit success and everything printed.
pub fn run_tee(cmd: &mut Command) -> Result<(bool, String), Failure> {
    use std::io::{BufRead, BufReader, Write};
    cmd.env("PATH", tool_path());
    let shown = describe(cmd);
    println!("  $ {shown}");
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Failure::new(format!("cannot start `{shown}`: {e}")))?;
    let stderr = child.stderr.take();
    let err_thread = std::thread::spawn(move || {
        let mut kept = String::new();
        if let Some(err) = stderr {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                eprintln!("{line}");
                kept.push_str(&line);
                kept.push('\n');
            }
        }
        kept
    });
    let mut kept = String::new();
    if let Some(out) = child.stdout.take() {
        let mut stdout = std::io::stdout();
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = writeln!(stdout, "{line}");
            kept.push_str(&line);
            kept.push('\n');
        }
    }
    let status = child
        .wait()
        .map_err(|e| Failure::new(format!("`{shown}` did not finish: {e}")))?;
    kept.push_str(&err_thread.join().unwrap_or_default());
    Ok((status.success(), kept))
}

/// Prints a heading, runs `f`, and prints how long it took.
pub fn step<T>(name: &str, f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    step_said(name, f, |_| "ok".to_string())
}

/// Like [`step`], but the closing line says what `said` makes of the
/// result: a test level that ran is not "ok" when some of its tests failed.
pub fn step_said<T>(
    name: &str,
    f: impl FnOnce() -> Result<T, Failure>,
    said: impl FnOnce(&T) -> String,
) -> Result<T, Failure> {
    println!("\n==> {name}");
    let t = Instant::now();
    let r = f();
    let secs = t.elapsed().as_secs_f64();
    match &r {
        Ok(v) => println!("<== {name}: {} ({secs:.1} s)", said(v)),
        Err(e) => println!("<== {name}: FAILED ({secs:.1} s): {e}"),
    }
    r
}

/// Hearth's cache outside the repository, for slow builds and large
/// downloads kept across clones: `$HEARTH_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/hearth`, else `~/.cache/hearth`.
pub fn cache_base() -> std::path::PathBuf {
    std::env::var_os("HEARTH_CACHE_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME").map(|d| std::path::PathBuf::from(d).join("hearth"))
        })
        .or_else(|| {
            std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache/hearth"))
        })
        .unwrap_or_else(|| repo_root().join("target/cache"))
}
