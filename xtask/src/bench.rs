//! `cargo xtask bench`: figures, never assertions. It builds what the
//! steps use (the release app, the native `hearth`, the bare Leptos anchor,
//! the MCP peers, the Agent Skills collections, the reader's comparison
//! corpus, the test model and native llama.cpp for the model in the tab,
//! the scripted model server), runs each step, collects the figures the steps print,
//! writes `target/bench/results.json`, prints a table, and keeps that table
//! in `docs/benchmarks.md` with the dates and the machine.
//!
//! **Adding a figure.** A step is a command (a node script, a `cargo
//! bench`, a wasm test with `--nocapture`) that prints one line per figure:
//!
//! ```text
//! BENCH {"figure": "warm JS round trip", "value": 13.7, "unit": "ms",
//!        "goal": {"max": 5}, "detail": "median of 30"}
//! ```
//!
//! (`e2e/bench/figures.mjs` prints these for node scripts.) Anything else
//! the command prints stays in its log, `target/bench/logs/<step>.log`.
//! Add the step to `STEPS`, naming what it needs built. A comparison is a
//! ratio against an anchor measured in the same run: print both figures,
//! then the ratio with `"unit": "×"` and `"anchor": "<the anchor's figure>"`.
//! `cargo xtask bench --only <step>[,<step>]` runs some steps alone
//! (in results.json and docs/benchmarks.md its steps replace those of the
//! earlier run and the other steps stay, each dated).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use flate2::Compression;
use flate2::write::GzEncoder;
use serde_json::json;

use crate::setup;
use crate::util::{self, Failure, capture, repo_root, run_tee, step};

/// The workspace package of the bare Leptos page, the first render's anchor.
pub const LEPTOS_ANCHOR: &str = "hearth-bench-bare-leptos";
const LEPTOS_ANCHOR_DIR: &str = "e2e/bench/bare-leptos";
const LEPTOS_ANCHOR_DIST: &str = "target/bench/bare-leptos";
const RESULTS: &str = "target/bench/results.json";
const DOC: &str = "docs/benchmarks.md";

/// Goal for the first-load transfer of wasm, JS and CSS, gzip.
pub const FIRST_LOAD_GOAL_KB: f64 = 600.0;

/// The most the first load may transfer (wasm, JS and CSS, gzip) before
/// `cargo xtask test` fails: a ratchet at the size the split build reached
/// (BUDGET_MEASURED_KB) plus a small margin for ordinary growth. It moves
/// down towards FIRST_LOAD_GOAL_KB (600 KB) as more of the app loads on
/// demand, and never up without a reason in the commit.
pub const FIRST_LOAD_BUDGET_KB: f64 = BUDGET_MEASURED_KB + 40.0;
const BUDGET_MEASURED_KB: f64 = 1048.0;

/// Fails when the first load of the build in `dist` transfers more than
/// FIRST_LOAD_BUDGET_KB, naming its biggest files.
pub fn check_first_load_budget(dist: &Path) -> Result<(), Failure> {
    let rows = first_load_files(dist)?;
    over_budget(&rows, FIRST_LOAD_BUDGET_KB)
}

fn over_budget(rows: &[(String, usize, usize)], budget_kb: f64) -> Result<(), Failure> {
    let gz: usize = rows.iter().map(|(_, _, g)| g).sum();
    let kb = gz as f64 / 1024.0;
    if rows.is_empty() {
        return Err(Failure::new(
            "the build's index.html loads no wasm, JS or CSS",
        ));
    }
    if kb <= budget_kb {
        println!(
            "  first load: {kb:.1} KB gzip in {} files, within the {budget_kb:.0} KB budget (goal {FIRST_LOAD_GOAL_KB:.0} KB)",
            rows.len()
        );
        return Ok(());
    }
    let mut biggest: Vec<&(String, usize, usize)> = rows.iter().collect();
    biggest.sort_by_key(|(_, _, g)| std::cmp::Reverse(*g));
    let named: Vec<String> = biggest
        .iter()
        .take(3)
        .map(|(n, _, g)| format!("{n} {:.1} KB", *g as f64 / 1024.0))
        .collect();
    Err(Failure::new(format!(
        "the first load transfers {kb:.1} KB gzip, over the {budget_kb:.0} KB budget (biggest: {})",
        named.join(", ")
    )))
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Goal {
    Max(f64),
    Min(f64),
}

impl Goal {
    pub fn met(self, value: f64) -> bool {
        match self {
            Goal::Max(g) => value <= g,
            Goal::Min(g) => value >= g,
        }
    }

    fn show(self, unit: &str) -> String {
        match self {
            Goal::Max(g) => format!("≤ {}", number(g, unit)),
            Goal::Min(g) => format!("≥ {}", number(g, unit)),
        }
    }
}

/// One measured figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub figure: String,
    pub value: f64,
    pub unit: String,
    pub goal: Option<Goal>,
    /// The figure this one is a ratio against, measured in the same run.
    pub anchor: Option<String>,
    pub detail: Option<String>,
    /// Filled in by the harness: the step, and the machine's 1-minute load
    /// average when the figure arrived.
    pub step: String,
    pub load: f64,
}

impl Figure {
    pub fn new(figure: impl Into<String>, value: f64, unit: &str) -> Figure {
        Figure {
            figure: figure.into(),
            value,
            unit: unit.to_string(),
            goal: None,
            anchor: None,
            detail: None,
            step: String::new(),
            load: 0.0,
        }
    }

    fn goal(mut self, goal: Goal) -> Figure {
        self.goal = Some(goal);
        self
    }

    fn detail(mut self, detail: impl Into<String>) -> Figure {
        self.detail = Some(detail.into());
        self
    }

    fn to_json(&self) -> serde_json::Value {
        let mut v = json!({
            "figure": self.figure,
            "value": self.value,
            "unit": self.unit,
            "step": self.step,
            "load": self.load,
        });
        if let Some(g) = self.goal {
            v["goal"] = match g {
                Goal::Max(n) => json!({"max": n}),
                Goal::Min(n) => json!({"min": n}),
            };
            v["met"] = json!(g.met(self.value));
        }
        if let Some(a) = &self.anchor {
            v["anchor"] = json!(a);
        }
        if let Some(d) = &self.detail {
            v["detail"] = json!(d);
        }
        v
    }
}

/// The figure a `BENCH {json}` line carries (anywhere in the line, so
/// prefixes a runner adds do not matter); `Some(Err)` for a malformed one.
pub fn parse_figure(line: &str) -> Option<Result<Figure, String>> {
    let at = line.find("BENCH {")?;
    let text = &line[at + "BENCH ".len()..];
    let Ok(v) = serde_json::from_str::<serde_json::Value>(text.trim()) else {
        return Some(Err(format!("not JSON: {text}")));
    };
    Some(figure_from_value(&v).map_err(|why| format!("{why}: {text}")))
}

/// A figure from its JSON form: a `BENCH` line's, or one saved in
/// results.json (which also carries its step and load).
fn figure_from_value(v: &serde_json::Value) -> Result<Figure, String> {
    let (Some(name), Some(value), Some(unit)) = (
        v["figure"].as_str(),
        v["value"].as_f64(),
        v["unit"].as_str(),
    ) else {
        return Err("a figure needs \"figure\", a numeric \"value\" and \"unit\"".into());
    };
    if !value.is_finite() {
        return Err("the value is not a finite number".into());
    }
    let mut f = Figure::new(name, value, unit);
    f.goal = match (v["goal"]["max"].as_f64(), v["goal"]["min"].as_f64()) {
        (Some(m), _) => Some(Goal::Max(m)),
        (None, Some(m)) => Some(Goal::Min(m)),
        _ if v.get("goal").is_some() => return Err("a goal is {\"max\": n} or {\"min\": n}".into()),
        _ => None,
    };
    f.anchor = v["anchor"].as_str().map(str::to_string);
    f.detail = v["detail"].as_str().map(str::to_string);
    f.step = v["step"].as_str().unwrap_or_default().to_string();
    f.load = v["load"].as_f64().unwrap_or_default();
    Ok(f)
}

/// What a step needs built or installed before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    App,
    NativeHearth,
    LeptosAnchor,
    McpPeers,
    Browser,
    /// The real Agent Skills collections discovery's figures rank.
    Collections,
    /// The test model in three quantizations, native llama.cpp's
    /// llama-bench (the in-tab engine's anchor) and wllama 3.13.0.
    TabModel,
    /// The pages the reader is compared on against Mozilla Readability.
    ReaderCorpus,
    /// The scripted model server (`hearth-fake-model`).
    FakeModel,
}

enum Kind {
    /// A command whose `BENCH` lines are the figures.
    Command(fn(&Path) -> Command),
    /// Measured by xtask itself.
    Internal(fn(&Path) -> Result<Vec<Figure>, Failure>),
}

struct Step {
    id: &'static str,
    title: &'static str,
    needs: &'static [Need],
    kind: Kind,
}

fn node(script: &str) -> impl Fn(&Path) -> Command {
    move |root: &Path| {
        let mut cmd = Command::new("node");
        cmd.arg(script)
            .env("HEARTH_BIN", root.join("target/native/hearth"))
            .env("HEARTH_DIST", root.join("dist"))
            .env("HEARTH_BARE_DIST", root.join(LEPTOS_ANCHOR_DIST))
            .current_dir(root);
        cmd
    }
}

/// [`node`], with the fake model server the native build made.
fn with_fake_model(script: &str) -> impl Fn(&Path) -> Command {
    move |root: &Path| {
        let mut cmd = node(script)(root);
        cmd.env(
            "HEARTH_FAKE_MODEL",
            root.join("target/native/hearth-fake-model"),
        );
        cmd
    }
}

fn wasm_bench(test: &'static str) -> impl Fn(&Path) -> Command {
    move |root: &Path| {
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
            test,
            "--",
            "--nocapture",
        ])
        .current_dir(root);
        crate::setup::wasm_test_env(&mut cmd);
        cmd
    }
}

/// The steps of a full run, in order.
fn steps() -> Vec<Step> {
    vec![
        Step {
            id: "bundle",
            title: "first-load transfer (the build's own output)",
            needs: &[Need::App],
            kind: Kind::Internal(first_load),
        },
        Step {
            id: "first-render",
            title: "time to first render against a bare Leptos page",
            needs: &[
                Need::App,
                Need::NativeHearth,
                Need::LeptosAnchor,
                Need::Browser,
            ],
            kind: Kind::Command(|r| node("e2e/bench/first-render.mjs")(r)),
        },
        Step {
            id: "restart",
            title: "`cargo xtask run` with nothing changed, until it serves",
            needs: &[Need::App, Need::NativeHearth],
            kind: Kind::Internal(restart),
        },
        Step {
            id: "sandbox",
            title: "code sandbox and file skills (headless Chromium)",
            needs: &[Need::App, Need::NativeHearth, Need::Browser],
            kind: Kind::Command(|r| node("e2e/bench/sandbox.mjs")(r)),
        },
        Step {
            id: "browser",
            title: "call path, notes search and Agent Skills import in the browser (wasm)",
            needs: &[Need::Browser],
            kind: Kind::Command(|r| wasm_bench("browser_bench")(r)),
        },
        Step {
            id: "core",
            title: "hearth-core and hearth-markdown, native",
            needs: &[Need::Collections],
            kind: Kind::Command(|root| {
                // One command for every core bench, so they share a build.
                let mut cmd = Command::new("sh");
                cmd.arg("-c")
                    .arg(
                        "set -e; for b in call_path discovery tokens agent_skills mcp_registry; do \
                         cargo bench -p hearth-core --bench $b; done; \
                         for b in markdown streaming; do cargo bench -p hearth-markdown --bench $b; done",
                    )
                    .current_dir(root);
                cmd
            }),
        },
        Step {
            id: "discovery-browser",
            title: "discover_skills at 10,000 skills, then with 1,000 packages added, in the browser (wasm)",
            needs: &[Need::Browser, Need::Collections],
            kind: Kind::Command(|root| {
                // The wasm bench compiles in the 1,000 package texts, which
                // the native discovery bench writes from the installed
                // collections (the same build the core step uses), so the
                // step also runs alone (`--only discovery-browser`).
                let mut cmd = Command::new("sh");
                cmd.arg("-c")
                    .arg(
                        "set -e; cargo bench -p hearth-core --bench discovery -- write-packages; \
                         exec cargo test -p hearth --target wasm32-unknown-unknown --release \
                         --features bench --test bench_discovery -- --nocapture",
                    )
                    .current_dir(root);
                crate::setup::wasm_test_env(&mut cmd);
                cmd
            }),
        },
        Step {
            id: "net",
            title: "network tier: proxy overhead and sustained load (native profile)",
            needs: &[],
            kind: Kind::Command(|root| {
                let mut cmd = Command::new("cargo");
                cmd.args([
                    "bench",
                    "--profile",
                    "native",
                    "-p",
                    "hearth-proxy",
                    "--bench",
                    "net",
                ])
                .current_dir(root);
                cmd
            }),
        },
        Step {
            id: "reader",
            title: "web_fetch's reader against Mozilla Readability (word-level F1 on real pages)",
            needs: &[Need::NativeHearth, Need::ReaderCorpus],
            kind: Kind::Command(|r| {
                let mut cmd = node("e2e/bench/reader-quality.mjs")(r);
                cmd.arg("--json")
                    .arg(r.join("target/reader-quality.json"))
                    .env("READER_CORPUS", r.join(setup::READER_CORPUS_DIR));
                cmd
            }),
        },
        Step {
            id: "highlight",
            title: "highlighted code and math: cost and size (headless Chromium)",
            needs: &[Need::App, Need::Browser],
            kind: Kind::Command(|r| node("e2e/bench/highlight.mjs")(r)),
        },
        Step {
            id: "mcp",
            title: "MCP in the browser (real servers on 127.0.0.1)",
            needs: &[Need::App, Need::NativeHearth, Need::McpPeers, Need::Browser],
            kind: Kind::Command(|r| node("e2e/bench/mcp.mjs")(r)),
        },
        Step {
            id: "agents",
            title: "Hearth as an MCP server: agents' calls through hearth serve and the tab",
            needs: &[Need::App, Need::NativeHearth, Need::McpPeers, Need::Browser],
            kind: Kind::Command(|r| node("e2e/bench/agents.mjs")(r)),
        },
        Step {
            id: "pictures",
            title: "pictures in the composer: a 12 MP photo pasted, drawn again and sent (headless Chromium)",
            needs: &[
                Need::App,
                Need::NativeHearth,
                Need::Browser,
                Need::FakeModel,
            ],
            kind: Kind::Command(|r| with_fake_model("e2e/bench/pictures.mjs")(r)),
        },
        Step {
            id: "artifacts",
            title: "artifacts: a 500-line page opened and updated in the preview (headless Chromium)",
            needs: &[
                Need::App,
                Need::NativeHearth,
                Need::Browser,
                Need::FakeModel,
            ],
            kind: Kind::Command(|r| with_fake_model("e2e/bench/artifacts.mjs")(r)),
        },
        Step {
            id: "tabmodel",
            title: "the model in the tab against native llama.cpp and wllama (same files, threads and prompt)",
            needs: &[Need::App, Need::NativeHearth, Need::Browser, Need::TabModel],
            kind: Kind::Command(|r| {
                let mut cmd = node("e2e/bench/tabmodel.mjs")(r);
                let models = crate::llama::test_model_path("Q4_0");
                cmd.env("HEARTH_BENCH_MODELS", models.parent().unwrap_or(r))
                    .env("HEARTH_LLAMA_BENCH", crate::llama::native_paths().1.bench)
                    .env("HEARTH_WLLAMA_DIR", r.join(setup::WLLAMA_BENCH_DIR));
                cmd
            }),
        },
    ]
}

/// The 1-minute load average, from /proc/loadavg.
fn load_now() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|n| n.parse().ok()))
        .unwrap_or(f64::NAN)
}

fn machine() -> serde_json::Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| "unknown CPU".into());
    let mem_gb = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map(|kb| kb / 1024.0 / 1024.0)
        .unwrap_or(f64::NAN);
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        })
        .unwrap_or_else(|| std::env::consts::OS.to_string());
    let version = |program: &str, arg: &str| {
        capture(Command::new(program).arg(arg))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into())
    };
    json!({
        "cpu": cpu,
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "memory_gb": (mem_gb * 10.0).round() / 10.0,
        "os": os,
        "rustc": version("rustc", "-V"),
        "chromium": version(setup::CHROMIUM, "--version"),
        "node": version("node", "--version"),
    })
}

fn today() -> String {
    capture(Command::new("date").args(["-u", "+%Y-%m-%d %H:%M UTC"]))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown date".into())
}

fn gzip_len(bytes: &[u8]) -> usize {
    let mut enc = GzEncoder::new(Vec::new(), Compression::best());
    let _ = enc.write_all(bytes);
    enc.finish().map(|v| v.len()).unwrap_or(0)
}

/// Relative references to .wasm, .js and .css files in `text` (HTML
/// attributes, JS imports), without a query or fragment.
fn references(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for quote in ['"', '\''] {
        for piece in text.split(quote).skip(1).step_by(2) {
            let path = piece.split(['?', '#']).next().unwrap_or("");
            let local = path.starts_with('/') || path.starts_with("./") || path.starts_with("../");
            let kind = path.ends_with(".wasm") || path.ends_with(".js") || path.ends_with(".css");
            if local && kind && !path.contains(char::is_whitespace) {
                out.push(path.to_string());
            }
        }
    }
    out
}

/// The modules `js` imports statically (`import … from "x"`, `import "x"`,
/// `export … from "x"`): what loads with it. A dynamic `import("x")` or
/// a fetched `new URL("x", import.meta.url)` (the split loader's chunks)
/// loads later, on demand, and is not one.
fn static_imports(js: &str) -> Vec<String> {
    let mut out = Vec::new();
    for keyword in ["from", "import"] {
        for (at, _) in js.match_indices(keyword) {
            let before = js[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == '.') {
                continue;
            }
            let after = js[at + keyword.len()..].trim_start();
            let Some(q) = after.chars().next().filter(|c| *c == '"' || *c == '\'') else {
                continue;
            };
            let Some(end) = after[1..].find(q) else {
                continue;
            };
            let path = &after[1..1 + end];
            if references(&format!("\"{path}\"")).len() == 1 {
                out.push(path.to_string());
            }
        }
    }
    out
}

/// The files a first visit loads before the app renders: what
/// `index.html` links (wasm, JS, CSS), and what that JS imports in turn.
/// Raw and gzip sizes, by path under `dist`.
pub fn first_load_files(dist: &Path) -> Result<Vec<(String, usize, usize)>, Failure> {
    let html = std::fs::read_to_string(dist.join("index.html")).map_err(|e| {
        Failure::new(format!(
            "cannot read {}/index.html: {e}; build first",
            dist.display()
        ))
    })?;
    let mut todo: Vec<(PathBuf, String)> = references(&html)
        .into_iter()
        .map(|r| (PathBuf::from("/"), r))
        .collect();
    let mut rows: Vec<(String, usize, usize)> = Vec::new();
    while let Some((base, reference)) = todo.pop() {
        let joined = if let Some(abs) = reference.strip_prefix('/') {
            PathBuf::from(abs)
        } else {
            base.strip_prefix("/").unwrap_or(&base).join(&reference)
        };
        let mut clean = PathBuf::new();
        for part in joined.components() {
            match part {
                std::path::Component::ParentDir => {
                    clean.pop();
                }
                std::path::Component::Normal(p) => clean.push(p),
                _ => {}
            }
        }
        let rel = clean.to_string_lossy().to_string();
        // The service worker is fetched after the first render.
        if rel == "sw.js" || rows.iter().any(|(r, _, _)| *r == rel) {
            continue;
        }
        let Ok(bytes) = std::fs::read(dist.join(&clean)) else {
            continue;
        };
        if rel.ends_with(".js") {
            let dir = Path::new("/").join(clean.parent().unwrap_or(Path::new("")));
            for r in static_imports(&String::from_utf8_lossy(&bytes)) {
                todo.push((dir.clone(), r));
            }
        }
        rows.push((rel, bytes.len(), gzip_len(&bytes)));
    }
    rows.sort();
    Ok(rows)
}

fn first_load(root: &Path) -> Result<Vec<Figure>, Failure> {
    let rows = first_load_files(&root.join("dist"))?;
    let kb = |n: usize| n as f64 / 1024.0;
    let mut figures = Vec::new();
    for (ext, what) in [("wasm", "wasm"), ("js", "JS"), ("css", "CSS")] {
        let (n, raw, gz) = rows
            .iter()
            .filter(|(r, _, _)| r.ends_with(&format!(".{ext}")))
            .fold((0, 0, 0), |(n, a, b), (_, r, g)| (n + 1, a + r, b + g));
        figures.push(
            Figure::new(format!("first-load {what}, gzip"), kb(gz), "KB")
                .detail(format!("{n} file(s), {:.1} KB raw", kb(raw))),
        );
    }
    let gz: usize = rows.iter().map(|(_, _, g)| g).sum();
    let raw: usize = rows.iter().map(|(_, r, _)| r).sum();
    figures.push(
        Figure::new("first-load transfer (wasm + JS + CSS, gzip)", kb(gz), "KB")
            .goal(Goal::Max(FIRST_LOAD_GOAL_KB))
            .detail(format!(
                "{} files from index.html and their imports, {:.1} KB raw",
                rows.len(),
                kb(raw)
            )),
    );
    for (name, r, g) in &rows {
        println!(
            "  {name:<56} {:>9.1} KB raw {:>9.1} KB gzip",
            kb(*r),
            kb(*g)
        );
    }
    Ok(figures)
}

/// Answers whether `hearth serve` on `port` says it is healthy.
fn healthy(port: u16) -> bool {
    use std::io::Read;
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let request =
        format!("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if s.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200")
}

fn free_port() -> Result<u16, Failure> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| Failure::new(format!("no free port on 127.0.0.1: {e}")))?;
    l.local_addr()
        .map(|a| a.port())
        .map_err(|e| Failure::new(e.to_string()))
}

/// `cargo xtask run` from the command line, with dist/ and the native
/// `hearth` current, timed until `/healthz` answers; median of 3.
fn restart(root: &Path) -> Result<Vec<Figure>, Failure> {
    use std::os::unix::process::CommandExt;
    let mut samples = Vec::new();
    for _ in 0..3 {
        let port = free_port()?;
        let t0 = Instant::now();
        let mut child = Command::new("cargo")
            .args(["xtask", "run", "--port", &port.to_string()])
            .current_dir(root)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            // Its own process group, so `hearth serve` under it stops too.
            .process_group(0)
            .spawn()
            .map_err(|e| Failure::new(format!("cannot start cargo xtask run: {e}")))?;
        let pid = child.id();
        let mut served = None;
        while t0.elapsed() < Duration::from_secs(600) {
            if healthy(port) {
                served = Some(t0.elapsed());
                break;
            }
            if let Ok(Some(status)) = child.try_wait() {
                return Err(Failure::new(format!(
                    "cargo xtask run exited ({status}) before it served"
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = Command::new("kill")
            .args(["-TERM", "--", &format!("-{pid}")])
            .status();
        let _ = child.wait();
        let served =
            served.ok_or_else(|| Failure::new("cargo xtask run did not serve within 600 s"))?;
        println!("  served after {:.2} s", served.as_secs_f64());
        samples.push(served.as_secs_f64());
    }
    samples.sort_by(f64::total_cmp);
    Ok(vec![
        Figure::new(
            "`cargo xtask run` with nothing changed, until it serves",
            samples[samples.len() / 2],
            "s",
        )
        .goal(Goal::Max(3.0))
        .detail(format!(
            "median of 3: {}",
            samples
                .iter()
                .map(|s| format!("{s:.2} s"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    ])
}

/// The bare Leptos page, built like the app, into target/bench/bare-leptos.
fn build_leptos_anchor(root: &Path) -> Result<(), Failure> {
    util::run(
        Command::new("trunk")
            .args(["build", "--release", "--dist"])
            .arg(root.join(LEPTOS_ANCHOR_DIST))
            .current_dir(root.join(LEPTOS_ANCHOR_DIR)),
    )
}

/// One step's outcome.
struct StepRun {
    id: &'static str,
    ok: bool,
    seconds: f64,
    load_start: f64,
    load_end: f64,
    error: Option<String>,
}

fn run_step(root: &Path, s: &Step, figures: &mut Vec<Figure>) -> StepRun {
    let load_start = load_now();
    let t0 = Instant::now();
    let mut problems = Vec::new();
    let mut got = Vec::new();
    let result = step(s.title, || match &s.kind {
        Kind::Internal(f) => {
            got = f(root)?;
            Ok(())
        }
        Kind::Command(make) => {
            let (ok, output) = run_tee(&mut make(root))?;
            let logs = root.join("target/bench/logs");
            let _ = std::fs::create_dir_all(&logs);
            let _ = std::fs::write(logs.join(format!("{}.log", s.id)), &output);
            for line in output.lines() {
                match parse_figure(line) {
                    Some(Ok(f)) => got.push(f),
                    Some(Err(e)) => problems.push(e),
                    None => {}
                }
            }
            if ok {
                Ok(())
            } else {
                Err(Failure::new(format!("the {} bench failed", s.id)))
            }
        }
    });
    let load = load_now();
    for mut f in got {
        f.step = s.id.to_string();
        f.load = load;
        figures.push(f);
    }
    let mut error = result.err().map(|e| e.to_string());
    if !problems.is_empty() {
        let p = format!("malformed BENCH lines: {}", problems.join("; "));
        error = Some(match error {
            Some(e) => format!("{e}; {p}"),
            None => p,
        });
    }
    StepRun {
        id: s.id,
        ok: error.is_none(),
        seconds: t0.elapsed().as_secs_f64(),
        load_start,
        load_end: load,
        error,
    }
}

fn build_needs(root: &Path, needs: &[Need], no_build: bool) -> Result<(), Failure> {
    let has = |n: Need| needs.contains(&n);
    if !no_build {
        setup::build_tools()?;
        if has(Need::App) {
            step("release build of the app", crate::build_release_if_stale)?;
        }
        if has(Need::NativeHearth) {
            step("native build of hearth", crate::build_native_hearth)?;
        }
        if has(Need::FakeModel) {
            step("native build of hearth-fake-model", || {
                util::run(
                    Command::new("cargo")
                        .args(["build", "--profile", "native", "-p", "hearth-testkit"])
                        .current_dir(root),
                )
            })?;
        }
        if has(Need::LeptosAnchor) {
            step("the bare Leptos page (anchor)", || {
                build_leptos_anchor(root)
            })?;
        }
    }
    if has(Need::McpPeers) {
        step("MCP test peers", setup::mcp_peers)?;
    }
    if has(Need::Browser) {
        setup::browser()?;
    }
    if has(Need::TabModel) {
        step(
            "the test model as Q4_0, Q8_0 and Q4_K_M (and native llama-bench)",
            crate::llama::test_models,
        )?;
        step(
            "wllama 3.13.0 into target/bench/wllama/",
            setup::wllama_for_bench,
        )?;
    }
    if has(Need::ReaderCorpus) {
        step(
            "the reader's comparison corpus (Debian docs, saved pages)",
            || setup::reader_corpus().map(|_| ()),
        )?;
    }
    if has(Need::Collections) {
        step(
            "Agent Skills collections into target/skill-collections/",
            || crate::collections::install(None),
        )?;
    }
    Ok(())
}

pub fn run(args: &[String]) -> Result<(), Failure> {
    let root = repo_root();
    let mut only: Option<Vec<String>> = None;
    let mut no_build = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--no-build" => no_build = true,
            "--only" => {
                let list = it
                    .next()
                    .ok_or_else(|| Failure::new("--only needs a step, e.g. --only sandbox"))?;
                only = Some(list.split(',').map(str::to_string).collect());
            }
            other => {
                return Err(Failure::new(format!(
                    "unknown option {other}; use --only STEP[,STEP] or --no-build"
                )));
            }
        }
    }
    let all = steps();
    if let Some(only) = &only
        && let Some(unknown) = only
            .iter()
            .find(|o| !all.iter().any(|s| s.id == o.as_str()))
    {
        return Err(Failure::new(format!(
            "no bench step '{unknown}'; the steps are {}",
            all.iter().map(|s| s.id).collect::<Vec<_>>().join(", ")
        )));
    }
    let chosen: Vec<&Step> = all
        .iter()
        .filter(|s| only.as_ref().is_none_or(|o| o.iter().any(|x| x == s.id)))
        .collect();
    let needs: Vec<Need> = chosen
        .iter()
        .flat_map(|s| s.needs.iter().copied())
        .collect();
    build_needs(&root, &needs, no_build)?;

    let started = today();
    let machine = machine();
    let mut figures = Vec::new();
    let mut runs = Vec::new();
    for s in &chosen {
        runs.push(run_step(&root, s, &mut figures));
    }

    let partial = only.is_some();
    let doc = json!({
        "date": started,
        "machine": machine,
        "partial": partial,
        "steps": runs.iter().map(|r| json!({
            "step": r.id,
            "date": started,
            "ok": r.ok,
            "seconds": (r.seconds * 10.0).round() / 10.0,
            "load_start": r.load_start,
            "load_end": r.load_end,
            "error": r.error,
        })).collect::<Vec<_>>(),
        "figures": figures.iter().map(Figure::to_json).collect::<Vec<_>>(),
    });
    let results = root.join(RESULTS);
    if let Some(dir) = results.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    // A partial run replaces its own steps' figures and keeps the others'.
    let saved = if partial {
        let earlier = std::fs::read_to_string(&results)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        merge_partial(earlier, &doc, &all)
    } else {
        doc.clone()
    };
    std::fs::write(
        &results,
        serde_json::to_string_pretty(&saved).unwrap_or_default(),
    )
    .map_err(|e| Failure::new(format!("cannot write {}: {e}", results.display())))?;

    // The table shows the saved results, so after a partial run it holds
    // the steps just run and, from earlier runs, the others, each dated.
    let table = markdown(&saved, &all);
    println!("\n{table}");
    println!("figures written to {RESULTS}");
    let existing = std::fs::read_to_string(root.join(DOC)).unwrap_or_default();
    let text = splice_doc(&existing, &format!("{DOC_HEAD}{table}"));
    std::fs::write(root.join(DOC), text)
        .map_err(|e| Failure::new(format!("cannot write {DOC}: {e}")))?;
    println!("table written to {DOC}");
    let failed: Vec<String> = runs
        .iter()
        .filter(|r| !r.ok)
        .map(|r| format!("{}: {}", r.id, r.error.clone().unwrap_or_default()))
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Failure::new(format!(
            "some bench steps failed (their figures are missing): {}",
            failed.join("; ")
        )))
    }
}

/// `partial` (a run of some steps) laid over `earlier` results: the steps
/// `partial` ran, and their figures, replace the earlier ones; the other
/// steps and figures stay, each step with the date it ran. Steps keep the
/// order of a full run.
fn merge_partial(
    earlier: Option<serde_json::Value>,
    partial: &serde_json::Value,
    all: &[Step],
) -> serde_json::Value {
    let Some(earlier) = earlier else {
        return partial.clone();
    };
    let list = |v: &serde_json::Value, key: &str| v[key].as_array().cloned().unwrap_or_default();
    let ran: Vec<serde_json::Value> = list(partial, "steps")
        .iter()
        .map(|s| s["step"].clone())
        .collect();
    let kept = |items: Vec<serde_json::Value>| -> Vec<serde_json::Value> {
        items
            .into_iter()
            .filter(|i| !ran.contains(&i["step"]))
            .collect()
    };
    let mut steps = kept(list(&earlier, "steps"));
    for s in &mut steps {
        if s.get("date").is_none() {
            s["date"] = earlier["date"].clone();
        }
    }
    steps.extend(list(partial, "steps"));
    let order = |s: &serde_json::Value| all.iter().position(|a| s["step"] == a.id);
    steps.sort_by_key(order);
    let mut figures = kept(list(&earlier, "figures"));
    figures.extend(list(partial, "figures"));
    figures.sort_by_key(order);
    let mut merged = partial.clone();
    merged["steps"] = steps.into();
    merged["figures"] = figures.into();
    merged
}

const DOC_START: &str = "<!-- cargo xtask bench: start -->";
const DOC_END: &str = "<!-- cargo xtask bench: end -->";

/// `doc` with the part between the markers replaced by `section` (the
/// prose around it stays as written); with no markers yet, the section is
/// added at the end, and a new file gets a title.
pub fn splice_doc(doc: &str, section: &str) -> String {
    let block = format!("{DOC_START}\n{section}{DOC_END}\n");
    if let (Some(a), Some(b)) = (doc.find(DOC_START), doc.find(DOC_END))
        && a < b
    {
        return format!(
            "{}{block}{}",
            &doc[..a],
            doc[b + DOC_END.len()..].trim_start_matches('\n')
        );
    }
    if doc.trim().is_empty() {
        return format!("# Benchmarks\n\n{block}");
    }
    format!("{}\n\n{block}", doc.trim_end())
}

const DOC_HEAD: &str = "## Latest figures of `cargo xtask bench`\n\n\
Written by `cargo xtask bench` between the markers (edit the prose outside\n\
them; run the bench again for this part). A run with `--only` replaces its\n\
own steps here and keeps the others, so each step says when it ran. Figures,\n\
not assertions: each is the median of several runs unless its detail says\n\
otherwise, and every comparison is a ratio against its anchor measured in the\n\
same run on the same machine, so a busy machine moves both. `load` is the\n\
machine's 1-minute load average when the figure was taken. All figures, with\n\
their units and goals, are in `target/bench/results.json`; each step's full\n\
output is in `target/bench/logs/`. How to add a figure: see\n\
`xtask/src/bench.rs` and [testing.md](testing.md). The first-load budget is\n\
also checked by `cargo xtask test` (step 6b), which fails when it grows.\n\n";

/// A value with a sensible number of digits for its unit.
fn number(v: f64, unit: &str) -> String {
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else if v.abs() >= 1.0 || v == 0.0 {
        2
    } else {
        3
    };
    match unit {
        "×" => format!("{v:.digits$}×"),
        "" => format!("{v:.digits$}"),
        u => format!("{v:.digits$} {u}"),
    }
}

/// The table of saved results (`results.json`'s shape): the goals first,
/// then each step in the order of a full run, with the figures it gave.
fn markdown(saved: &serde_json::Value, all: &[Step]) -> String {
    let m = &saved["machine"];
    let mut out = format!(
        "Machine: {} ({} cores, {} GB), {}; {}, {}.\n",
        m["cpu"].as_str().unwrap_or(""),
        m["cores"],
        m["memory_gb"],
        m["os"].as_str().unwrap_or(""),
        m["chromium"].as_str().unwrap_or(""),
        m["rustc"].as_str().unwrap_or(""),
    );
    let figures: Vec<Figure> = saved["figures"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| figure_from_value(v).ok())
        .collect();
    let with_goal: Vec<&Figure> = figures.iter().filter(|f| f.goal.is_some()).collect();
    if !with_goal.is_empty() {
        out.push_str("\n## Goals\n\n| figure | value | goal | met | anchor | step | load |\n|---|---|---|---|---|---|---|\n");
        for f in with_goal {
            let g = f.goal.expect("filtered on goals");
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | `{}` | {:.1} |\n",
                f.figure,
                number(f.value, &f.unit),
                g.show(&f.unit),
                if g.met(f.value) { "yes" } else { "**no**" },
                f.anchor.as_deref().unwrap_or(""),
                f.step,
                f.load
            ));
        }
    }
    let runs: Vec<&serde_json::Value> = saved["steps"].as_array().into_iter().flatten().collect();
    for s in all {
        let Some(r) = runs.iter().find(|r| r["step"] == s.id) else {
            out.push_str(&format!("\n## {}\n\n`{}`: not run yet.\n", s.title, s.id));
            continue;
        };
        let error = r["error"].as_str().unwrap_or("");
        out.push_str(&format!(
            "\n## {}\n\n`{}`, {}, {:.0} s, load {:.1} → {:.1}{}\n\n",
            s.title,
            s.id,
            r["date"]
                .as_str()
                .unwrap_or(saved["date"].as_str().unwrap_or("")),
            r["seconds"].as_f64().unwrap_or_default(),
            r["load_start"].as_f64().unwrap_or_default(),
            r["load_end"].as_f64().unwrap_or_default(),
            if r["ok"].as_bool().unwrap_or(false) {
                String::new()
            } else {
                format!(" — **failed**: {error}")
            }
        ));
        let mine: Vec<&Figure> = figures.iter().filter(|f| f.step == s.id).collect();
        if mine.is_empty() {
            out.push_str("No figures.\n");
            continue;
        }
        out.push_str("| figure | value | goal | detail |\n|---|---|---|---|\n");
        for f in mine {
            out.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                f.figure,
                number(f.value, &f.unit),
                f.goal.map(|g| g.show(&f.unit)).unwrap_or_default(),
                f.detail.as_deref().unwrap_or("").replace('|', "\\|")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_run_replaces_its_steps_and_keeps_the_others() {
        let earlier = json!({
            "date": "monday",
            "steps": [{"step": "core", "ok": true}, {"step": "reader", "ok": false}],
            "figures": [
                {"figure": "a", "step": "core", "value": 1},
                {"figure": "old F1", "step": "reader", "value": 0.5},
            ],
        });
        let partial = json!({
            "date": "tuesday",
            "partial": true,
            "steps": [{"step": "reader", "date": "tuesday", "ok": true},
                      {"step": "bundle", "date": "tuesday", "ok": true}],
            "figures": [{"figure": "F1", "step": "reader", "value": 0.9},
                        {"figure": "size", "step": "bundle", "value": 3}],
        });
        let merged = merge_partial(Some(earlier), &partial, &steps());
        let ids: Vec<&str> = merged["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["step"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["bundle", "core", "reader"]);
        assert_eq!(merged["steps"][1]["date"], "monday");
        assert_eq!(merged["steps"][2]["date"], "tuesday");
        let figures: Vec<&str> = merged["figures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["figure"].as_str().unwrap())
            .collect();
        assert_eq!(figures, ["size", "a", "F1"]);
        assert_eq!(merge_partial(None, &partial, &steps()), partial);
    }

    #[test]
    fn the_table_shows_every_step_with_its_own_date_and_goals_met_or_not() {
        let saved = json!({
            "date": "tuesday",
            "machine": {"cpu": "EPYC", "cores": 2},
            "steps": [
                {"step": "bundle", "date": "tuesday", "ok": true, "seconds": 3.0},
                {"step": "core", "date": "monday", "ok": false, "error": "it broke"},
            ],
            "figures": [
                {"figure": "first load", "step": "bundle", "value": 700.0, "unit": "KB",
                 "goal": {"max": 600.0}, "load": 2.0},
                {"figure": "ranking", "step": "core", "value": 0.9, "unit": "",
                 "goal": {"min": 0.85}, "detail": "a | b"},
            ],
        });
        let md = markdown(&saved, &steps());
        assert!(
            md.contains("| first load | 700 KB | ≤ 600 KB | **no** |"),
            "{md}"
        );
        assert!(md.contains("| ranking | 0.900 | ≥ 0.850 | yes |"), "{md}");
        assert!(md.contains("`bundle`, tuesday, 3 s"), "{md}");
        assert!(
            md.contains("`core`, monday") && md.contains("**failed**: it broke"),
            "{md}"
        );
        assert!(md.contains("a \\| b"), "{md}");
        assert!(md.contains("`tabmodel`: not run yet."), "{md}");
    }

    #[test]
    fn figures_are_read_from_bench_lines_wherever_they_sit() {
        let f = parse_figure(
            r#"console.log: BENCH {"figure": "warm JS round trip", "value": 13.7, "unit": "ms", "goal": {"max": 5}, "detail": "n=30"}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(f.figure, "warm JS round trip");
        assert_eq!(f.goal, Some(Goal::Max(5.0)));
        assert!(!f.goal.unwrap().met(f.value));
        assert_eq!(f.detail.as_deref(), Some("n=30"));
        assert!(parse_figure("test result: ok").is_none());
        assert!(
            parse_figure(r#"BENCH {"figure": "x", "unit": "ms"}"#)
                .unwrap()
                .is_err()
        );
        assert!(
            parse_figure(r#"BENCH {"figure": "x", "value": 1, "unit": "ms", "goal": 3}"#)
                .unwrap()
                .is_err()
        );
        assert!(parse_figure("BENCH {not json").unwrap().is_err());
    }

    #[test]
    fn a_first_load_over_the_budget_fails_and_names_its_biggest_files() {
        let rows = vec![
            ("app_bg.wasm".to_string(), 900_000, 400 * 1024),
            ("app.js".to_string(), 90_000, 20 * 1024),
            ("main.css".to_string(), 40_000, 10 * 1024),
        ];
        assert!(over_budget(&rows, 430.0).is_ok());
        let err = over_budget(&rows, 429.0).unwrap_err();
        assert!(err.0.contains("430.0 KB gzip"), "{err}");
        assert!(err.0.contains("app_bg.wasm 400.0 KB"), "{err}");
        assert!(over_budget(&[], 600.0).is_err(), "an empty load is no pass");
    }

    #[test]
    fn first_load_follows_index_html_and_js_imports() {
        let dir = std::env::temp_dir().join(format!("xtask-bundle-{}", std::process::id()));
        let w = |rel: &str, text: &str| {
            let p = dir.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        w(
            "index.html",
            r#"<link rel="modulepreload" href="/app-1.js"><link rel="preload" href="/app-1_bg.wasm" as="fetch"><link rel="stylesheet" href="/main-2.css"><script>navigator.serviceWorker.register('/sw.js')</script>"#,
        );
        w(
            "app-1.js",
            "import { a } from './snippets/x/codec.js'; import * as l from \"./__wasm_split-1.js\"; export {};",
        );
        // The split loader: its chunks are fetched on demand, not first.
        w(
            "__wasm_split-1.js",
            "import { initSync } from \"./app-1.js\";\nconst c = () => fetch(new URL(\"./split_skills-1.wasm\", import.meta.url)); const d = () => import('./later.js');",
        );
        w("split_skills-1.wasm", "chunk");
        w("later.js", "");
        w("snippets/x/codec.js", "import '../y/deep.js';");
        w("snippets/y/deep.js", "");
        w("app-1_bg.wasm", "wasm");
        w("main-2.css", "body{}");
        w("sw.js", "self");
        w("sandbox/runner.js", "not loaded first");
        let names: Vec<String> = first_load_files(&dir)
            .unwrap()
            .into_iter()
            .map(|(n, _, _)| n)
            .collect();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            names,
            vec![
                "__wasm_split-1.js",
                "app-1.js",
                "app-1_bg.wasm",
                "main-2.css",
                "snippets/x/codec.js",
                "snippets/y/deep.js"
            ]
        );
    }

    #[test]
    fn the_doc_keeps_its_prose_and_replaces_only_the_run() {
        let first = splice_doc("# Benchmarks\n\nProse.\n", "table one\n");
        assert!(first.starts_with("# Benchmarks\n\nProse.\n\n<!-- cargo xtask bench: start -->\n"));
        assert!(first.contains("table one\n<!-- cargo xtask bench: end -->\n"));
        let second = splice_doc(&format!("{first}\nMore prose.\n"), "table two\n");
        assert!(second.contains("Prose.") && second.contains("More prose."));
        assert!(second.contains("table two") && !second.contains("table one"));
        assert_eq!(second.matches("bench: start").count(), 1);
        assert!(splice_doc("", "t\n").starts_with("# Benchmarks\n\n<!--"));
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(number(1234.4, "KB"), "1234 KB");
        assert_eq!(number(1.456, "×"), "1.46×");
        assert_eq!(number(0.1234, "ms"), "0.123 ms");
        assert_eq!(Goal::Max(600.0).show("KB"), "≤ 600 KB");
    }
}
