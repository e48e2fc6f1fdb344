//! `cargo xtask test`: every check at every level, in order, then every
//! reason the run failed and one line `N passed, N failed` (`, N skipped`
//! when allowed skips ran). How each level's output is read and judged is
//! in `report.rs`.

use std::process::Command;

use crate::report::{self, ALLOW_LIST_PATH, AllowList, LevelRun, Tally, Verdict};
use crate::setup;
use crate::util::{Failure, capture, repo_root, run, run_tee, step, step_said};

/// The pure crates: every workspace crate the app links, and those it is
/// is to link (`PURE_NOT_YET_LINKED` in the tests), by package name and folder. None of
/// them may depend on `FORBIDDEN_IN_CORE`, directly or not (the purity
/// step checks all of their trees).
pub const PURE_CRATES: [(&str, &str); 7] = [
    ("hearth-base", "crates/base"),
    ("hearth-markdown", "crates/markdown"),
    ("hearth-mcp", "crates/mcp"),
    ("hearth-agent-skills", "crates/agent-skills"),
    ("hearth-core", "crates/core"),
    ("hearth-sync", "crates/sync"),
    ("hearth-knowledge", "crates/knowledge"),
];

/// Crates the pure crates must never depend on; `gloo` stands for every
/// `gloo-*` crate too (see `forbidden`).
pub const FORBIDDEN_IN_CORE: [&str; 10] = [
    "web-sys",
    "js-sys",
    "wasm-bindgen",
    "leptos",
    "tokio",
    "axum",
    "reqwest",
    "idb",
    "rexie",
    "gloo",
];

/// Which of `FORBIDDEN_IN_CORE` a crate name is, if any: the name itself,
/// or `gloo` for any of gloo's parts (`gloo-timers`, `gloo-net`, …).
pub fn forbidden(name: &str) -> Option<&'static str> {
    FORBIDDEN_IN_CORE
        .iter()
        .copied()
        .find(|bad| name == *bad || (*bad == "gloo" && name.starts_with("gloo-")))
}

/// The fewest tests each level must run (passed + failed + skipped), so a
/// level that quietly ran nothing, or lost a test binary or spec file,
/// cannot pass. Set at the counts of the last full run; raise a floor when
/// you add tests, lower it only with tests removed on purpose.
pub const FLOORS: [(&str, u64); 3] = [("native", 950), ("wasm", 79), ("e2e", 370)];

fn floor(level: &str) -> u64 {
    FLOORS
        .iter()
        .find(|(l, _)| *l == level)
        .map(|(_, n)| *n)
        .unwrap_or(0)
}

/// The whole run: its sums and every reason it failed.
#[derive(Debug, Default)]
pub struct Summary {
    pub tally: Tally,
    pub reasons: Vec<String>,
}

impl Summary {
    fn record(&mut self, name: &str, v: Verdict) {
        println!("  [{name}] {}", v.tally);
        self.tally.add(v.tally);
        self.reasons.extend(v.reasons);
    }

    /// A check that passes or fails as one.
    fn check(&mut self, name: &str, result: Result<(), Failure>) {
        let v = match result {
            Ok(()) => Verdict {
                tally: Tally {
                    passed: 1,
                    ..Tally::default()
                },
                reasons: Vec::new(),
            },
            Err(e) => Verdict {
                tally: Tally {
                    failed: 1,
                    ..Tally::default()
                },
                reasons: vec![format!("[{name}] {e}")],
            },
        };
        self.record(name, v);
    }

    /// A level that reports tests: judged against its floor and the
    /// allow-list; a level with no report at all is one failure with why.
    fn level(
        &mut self,
        name: &str,
        result: Result<LevelRun, Failure>,
        floor: u64,
        allowed: &AllowList,
    ) {
        match result {
            Ok(run) => {
                let mut v = report::judge(name, &run, floor, allowed);
                for id in allowed.stale(name, &run) {
                    v.tally.failed += 1;
                    v.reasons.push(format!(
                        "[{name}] {ALLOW_LIST_PATH} allows `{id}` to skip, but it did not skip: \
                         remove the entry"
                    ));
                }
                for s in run.skipped.iter().filter(|s| allowed.allows(name, &s.id)) {
                    println!("  [{name}] skipped (allowed): {} ({})", s.id, s.reason);
                }
                self.record(name, v);
            }
            Err(e) => self.record(
                name,
                Verdict {
                    tally: Tally {
                        failed: 1,
                        ..Tally::default()
                    },
                    reasons: vec![format!("[{name}] {e}")],
                },
            ),
        }
    }
}

/// Runs a `cargo test`-shaped command with `--no-fail-fast` already in its
/// arguments, and reads what it ran.
fn cargo_level(cmd: &mut Command) -> Result<LevelRun, Failure> {
    let (ok, output) = run_tee(cmd)?;
    let Some(mut run) = report::parse_cargo(&output) else {
        return Err(Failure::new(
            "no test results at all: the tests did not build or did not start (see the log above)",
        ));
    };
    if !ok && run.failed == 0 {
        let targets = report::cargo_failed_targets(&output);
        run.failed += 1;
        run.problems.push(if targets.is_empty() {
            "cargo test failed although no test failed: a build error or a crashed test binary \
             (see the log above)"
                .to_string()
        } else {
            format!(
                "these test binaries failed without a failing test (crashed?): {}",
                targets.join(", ")
            )
        });
    }
    Ok(run)
}

/// The environment Playwright needs: the built app, the debug `hearth`,
/// the fake model server and SeaweedFS (the sync journeys' store).
pub fn playwright_env(cmd: &mut Command) -> &mut Command {
    let root = repo_root();
    cmd.env("HEARTH_BIN", root.join("target/debug/hearth"))
        .env("HEARTH_WEED", crate::setup::weed_path())
        .env("HEARTH_DIST", root.join("dist"))
        .env(
            "HEARTH_FAKE_MODEL",
            root.join("target/debug/hearth-fake-model"),
        )
        .env(
            "HEARTH_LLAMA_COMPLETION",
            crate::llama::native_paths().1.completion,
        )
}

/// Builds what the journeys start themselves: `hearth` and the scripted
/// fake model server.
pub fn build_e2e_binaries() -> Result<(), Failure> {
    run(Command::new("cargo")
        .args(["build", "-p", "hearth-proxy", "-p", "hearth-testkit"])
        .current_dir(repo_root()))
}

fn playwright_level(extra: &[String]) -> Result<LevelRun, Failure> {
    let root = repo_root();
    build_e2e_binaries()?;
    // The sync journeys' store; skipped when already in the cache.
    crate::setup::seaweedfs()?;
    let report_path = root.join("e2e/test-results/results.json");
    let _ = std::fs::remove_file(&report_path);
    let mut cmd = Command::new("npx");
    cmd.args([
        "playwright",
        "test",
        "-c",
        "e2e/playwright.config.mjs",
        "--reporter=list,json",
        // A missing or changed baseline fails; only `cargo xtask
        // baselines` writes them.
        "--update-snapshots=none",
    ])
    .args(extra)
    .env("PLAYWRIGHT_JSON_OUTPUT_NAME", &report_path)
    .current_dir(&root);
    let (ok, _) = run_tee(playwright_env(&mut cmd))?;
    let text = std::fs::read_to_string(&report_path).map_err(|e| {
        Failure::new(format!(
            "Playwright wrote no report at {} ({e}): it did not start or crashed (see the log above)",
            report_path.display()
        ))
    })?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        Failure::new(format!(
            "Playwright's report {} is not JSON ({e})",
            report_path.display()
        ))
    })?;
    let mut run = report::parse_playwright(&json);
    if !ok && run.failed == 0 && run.problems.is_empty() {
        run.failed += 1;
        run.problems.push(
            "Playwright exited with a failure although no test failed (see the log above)"
                .to_string(),
        );
    }
    Ok(run)
}

fn allow_list() -> Result<AllowList, Failure> {
    let path = repo_root().join(ALLOW_LIST_PATH);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Failure::new(format!("cannot read {ALLOW_LIST_PATH}: {e}")))?;
    AllowList::parse(&text).map_err(Failure::new)
}

/// The levels, in the order a full run takes them.
pub const LEVELS: [&str; 9] = [
    "fmt", "clippy", "peers", "native", "purity", "circles", "wasm", "build", "e2e",
];

/// What `cargo xtask test` was asked for: every level, or some (`--level
/// a,b`), and extra arguments for Playwright (after `--`, e.g. one spec
/// file). A partial run is judged the same way: a level that runs is held
/// to its floor, except Playwright given arguments that pick tests.
#[derive(Debug, Default)]
pub struct Options {
    pub levels: Option<Vec<String>>,
    pub playwright_args: Vec<String>,
}

impl Options {
    pub fn parse(args: &[String]) -> Result<Options, Failure> {
        let mut o = Options::default();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match a.as_str() {
                "--level" => {
                    let list = it
                        .next()
                        .ok_or_else(|| Failure::new("--level needs a value, e.g. --level e2e"))?;
                    let levels: Vec<String> = list.split(',').map(str::to_string).collect();
                    if let Some(bad) = levels.iter().find(|l| !LEVELS.contains(&l.as_str())) {
                        return Err(Failure::new(format!(
                            "no level '{bad}'; the levels are {}",
                            LEVELS.join(", ")
                        )));
                    }
                    o.levels = Some(levels);
                }
                "--" => o.playwright_args = it.by_ref().cloned().collect(),
                other => {
                    return Err(Failure::new(format!(
                        "unknown option {other}; use --level L[,L] and -- PLAYWRIGHT ARGS"
                    )));
                }
            }
        }
        Ok(o)
    }

    fn wants(&self, level: &str) -> bool {
        self.levels
            .as_ref()
            .is_none_or(|l| l.iter().any(|x| x == level))
    }
}

pub fn run_all(options: &Options) -> Result<Summary, Failure> {
    let root = repo_root();
    setup::build_tools()?;
    setup::browser()?;
    // The real model the in-tab tests run (native and Playwright find it
    // in .test-fixtures/ by default), converted by llama.cpp's own
    // quantize tool to quantizations with WebAssembly SIMD kernels; the
    // native tools are cached, so this is quick after the first run.
    step("the test model (SmolLM2-135M-Instruct)", setup::test_model)?;
    step(
        "the test model as Q4_0, Q8_0 and Q4_K_M",
        crate::llama::test_models,
    )?;
    // The embedding model knowledge search runs; its tests (the knowledge
    // crate's and `hearth knowledge search`'s) find it in .test-fixtures/.
    step(
        "the embedding model (all-MiniLM-L6-v2)",
        crate::embedding::install_model,
    )?;

    let mut summary = Summary::default();
    let allowed = match allow_list() {
        Ok(list) => list,
        Err(e) => {
            summary.check("allow-list", Err(e));
            AllowList::default()
        }
    };

    if options.wants("fmt") {
        let fmt = step("1. cargo fmt --check", || {
            run(Command::new("cargo")
                .args(["fmt", "--all", "--check"])
                .current_dir(&root))
        });
        summary.check("fmt", fmt);
    }

    if options.wants("clippy") {
        let clippy_native = step("2a. clippy (native crates)", || {
            run(Command::new("cargo")
                .args([
                    "clippy",
                    "--workspace",
                    "--exclude",
                    "hearth",
                    "--exclude",
                    crate::bench::LEPTOS_ANCHOR,
                    "--all-targets",
                    "--",
                    "-D",
                    "warnings",
                ])
                .current_dir(&root))
        });
        summary.check("clippy native", clippy_native);
        let clippy_wasm = step("2b. clippy (the app, wasm32)", || {
            run(Command::new("cargo")
                .args([
                    "clippy",
                    "-p",
                    "hearth",
                    "-p",
                    crate::bench::LEPTOS_ANCHOR,
                    "--target",
                    "wasm32-unknown-unknown",
                    "--all-targets",
                    // The release build's split points (src/places.rs);
                    // the wasm tests build the app without them.
                    "--features",
                    "hearth/split",
                    "--",
                    "-D",
                    "warnings",
                ])
                .current_dir(&root))
        });
        summary.check("clippy wasm", clippy_wasm);
    }

    // The MCP tests (native and Playwright) fail with the reason when their
    // peers are missing; installing them is this step's job.
    if options.wants("peers") {
        let peers = step("MCP test peers", setup::mcp_peers);
        summary.check("peers", peers);
    }

    if options.wants("native") {
        // Discovery's quality test ranks real Agent Skills collections.
        let collections = step(
            "Agent Skills collections into target/skill-collections/",
            || crate::collections::install(None),
        );
        summary.check("skill-collections", collections);
        // The calculator's differential test asks GNU units.
        let units = step("GNU units (the calculator's reference)", setup::units);
        summary.check("units", units);
        // Sync's storage tests start a real SeaweedFS; they fail with the
        // reason when HEARTH_WEED is missing.
        let weed = step(
            "SeaweedFS (the S3 store sync is tested against)",
            setup::seaweedfs,
        );
        let weed = match weed {
            Ok(path) => Some(path),
            Err(e) => {
                summary.check("seaweedfs", Err(e));
                None
            }
        };
        let native = step_said(
            "3. native tests",
            || {
                cargo_level(
                    Command::new("cargo")
                        .args([
                            "test",
                            "--workspace",
                            "--exclude",
                            "hearth",
                            "--exclude",
                            crate::bench::LEPTOS_ANCHOR,
                            "--no-fail-fast",
                        ])
                        // The property tests run a fixed number of cases
                        // here; `cargo xtask fuzz` runs many more.
                        .env("PROPTEST_CASES", crate::fuzz::TEST_CASES.to_string())
                        .envs(weed.iter().map(|w| ("HEARTH_WEED", w)))
                        .current_dir(&root),
                )
            },
            LevelRun::said,
        );
        summary.level("native", native, floor("native"), &allowed);
    }

    if options.wants("purity") {
        let purity = step("4. purity: the pure crates' dependency trees", || {
            let mut args = vec!["tree"];
            for (name, _) in PURE_CRATES {
                args.extend(["-p", name]);
            }
            args.extend(["-e", "normal", "--prefix", "none"]);
            let tree = capture(Command::new("cargo").args(&args).current_dir(&root))?;
            let found: Vec<&str> = tree
                .lines()
                .filter_map(|l| l.split_whitespace().next())
                .filter(|name| forbidden(name).is_some())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            if found.is_empty() {
                println!("  none of {} in the tree", FORBIDDEN_IN_CORE.join(", "));
                Ok(())
            } else {
                Err(Failure::new(format!(
                    "a pure crate ({}) depends on {}",
                    PURE_CRATES.map(|(name, _)| name).join(", "),
                    found.join(", ")
                )))
            }
        });
        summary.check("purity", purity);
    }

    if options.wants("circles") {
        let circles = step(
            "4b. no import circles inside any crate",
            crate::circles::check,
        );
        summary.check("circles", circles);
    }

    if options.wants("wasm") {
        let wasm = step_said(
            "5. wasm-bindgen-test in headless Chromium",
            || {
                let mut cmd = Command::new("cargo");
                cmd.args([
                    "test",
                    "-p",
                    "hearth",
                    "--target",
                    "wasm32-unknown-unknown",
                    "--no-fail-fast",
                ])
                .current_dir(&root);
                cargo_level(setup::wasm_test_env(&mut cmd))
            },
            LevelRun::said,
        );
        summary.level("wasm", wasm, floor("wasm"), &allowed);
    }

    let mut built = true;
    if options.wants("build") {
        let build = step("6. release build", crate::build_release);
        built = build.is_ok();
        summary.check("build", build);
        if built {
            let budget = step("6b. first-load budget (the build's own output)", || {
                crate::bench::check_first_load_budget(&root.join("dist"))
            });
            summary.check("first-load budget", budget);
            // A regression to llama.cpp's scalar kernels, or to 64-bit or
            // unshared memory, fails here rather than only in a benchmark.
            let simd = step(
                "6c. the in-tab engine: SIMD dot products and 32-bit shared memory",
                crate::llama::check_shipped,
            );
            summary.check("engine simd", simd);
        }
    }

    if options.wants("e2e") {
        let e2e = step_said(
            "7. Playwright against hearth serve",
            || {
                if !options.wants("build") {
                    crate::build_release_if_stale()?;
                } else if !built {
                    return Err(Failure::new(
                        "not run: the release build failed, so there is no app to test",
                    ));
                }
                playwright_level(&options.playwright_args)
            },
            LevelRun::said,
        );
        // Playwright arguments pick some tests (a spec file, --grep), so
        // the floor of the whole level does not apply to them.
        let e2e_floor = if options.playwright_args.is_empty() {
            floor("e2e")
        } else {
            0
        };
        summary.level("e2e", e2e, e2e_floor, &allowed);
    }

    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::{PURE_CRATES, forbidden};

    /// Pure crates the app does not link yet: hearth-knowledge is written
    /// for the tab but only the `hearth` CLI runs it so far. Kept pure now
    /// so the tab can take it as it is; take a crate out of here once the
    /// app links it (the test below fails until then).
    const PURE_NOT_YET_LINKED: [&str; 1] = ["crates/knowledge"];

    #[test]
    fn every_crate_the_app_links_is_checked_for_purity() {
        let root = crate::util::repo_root();
        let linked = crate::fresh::linked_crates(&root).unwrap();
        let listed: Vec<&str> = PURE_CRATES.iter().map(|(_, dir)| *dir).collect();
        for dir in linked.iter().filter(|d| d.starts_with("crates/")) {
            assert!(
                listed.contains(&dir.as_str()),
                "{dir} is linked by the app but missing from PURE_CRATES"
            );
        }
        for dir in listed {
            let is_linked = linked.iter().any(|d| d == dir);
            if PURE_NOT_YET_LINKED.contains(&dir) {
                assert!(
                    !is_linked,
                    "{dir} is linked by the app now; take it out of PURE_NOT_YET_LINKED"
                );
            } else {
                assert!(is_linked, "{dir} is not linked");
            }
        }
    }

    #[test]
    fn purity_forbids_idb_and_every_gloo_crate() {
        assert_eq!(forbidden("idb"), Some("idb"));
        assert_eq!(forbidden("rexie"), Some("rexie"));
        assert_eq!(forbidden("gloo"), Some("gloo"));
        assert_eq!(forbidden("gloo-timers"), Some("gloo"));
        assert_eq!(forbidden("gloo-net"), Some("gloo"));
        assert_eq!(forbidden("web-sys"), Some("web-sys"));
        assert_eq!(forbidden("glooper"), None);
        assert_eq!(forbidden("idb-keyval"), None);
        assert_eq!(forbidden("serde"), None);
    }
}
