//! `cargo xtask test`: every check at every level, in order, then one line
//! `N passed, N failed`.

use std::process::Command;

use crate::setup;
use crate::util::{Failure, capture, repo_root, run, run_tee, step};

/// Crates hearth-core must never depend on.
pub const FORBIDDEN_IN_CORE: [&str; 8] = [
    "web-sys",
    "js-sys",
    "wasm-bindgen",
    "leptos",
    "tokio",
    "axum",
    "reqwest",
    "rexie",
];

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub passed: u64,
    pub failed: u64,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.passed += other.passed;
        self.failed += other.failed;
    }

    fn check(ok: bool) -> Tally {
        if ok {
            Tally {
                passed: 1,
                failed: 0,
            }
        } else {
            Tally {
                passed: 0,
                failed: 1,
            }
        }
    }
}

/// Sums `test result: ok. 5 passed; 1 failed; ...` lines (cargo test and
/// wasm-bindgen-test-runner print the same shape).
pub fn parse_cargo_counts(output: &str) -> Option<Tally> {
    let mut tally = Tally::default();
    let mut seen = false;
    for line in output.lines() {
        let Some(rest) = line.trim().strip_prefix("test result: ") else {
            continue;
        };
        seen = true;
        for part in rest.split([';', '.']) {
            let mut words = part.split_whitespace();
            if let (Some(n), Some(kind)) = (words.next(), words.next())
                && let Ok(n) = n.parse::<u64>()
            {
                match kind {
                    "passed" => tally.passed += n,
                    "failed" => tally.failed += n,
                    _ => {}
                }
            }
        }
    }
    seen.then_some(tally)
}

/// A command that reports test counts: a build failure with no counts
/// counts as one failure.
fn counted(cmd: &mut Command) -> Result<Tally, Failure> {
    let (ok, output) = run_tee(cmd)?;
    let mut tally = parse_cargo_counts(&output).unwrap_or_default();
    if !ok && tally.failed == 0 {
        tally.failed += 1;
    }
    Ok(tally)
}

pub fn wasm_test_env(cmd: &mut Command) -> &mut Command {
    cmd.env(
        "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER",
        "wasm-bindgen-test-runner",
    )
    .env("CHROMEDRIVER", setup::CHROMEDRIVER)
    .env("WASM_BINDGEN_TEST_TIMEOUT", "120")
}

/// The Playwright suite's counts from its JSON report.
fn playwright_counts(report: &std::path::Path) -> Option<Tally> {
    let text = std::fs::read_to_string(report).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let stats = v.get("stats")?;
    let n = |k: &str| {
        stats
            .get(k)
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0)
    };
    Some(Tally {
        passed: n("expected") + n("flaky"),
        failed: n("unexpected"),
    })
}

pub fn run_all() -> Result<Tally, Failure> {
    let root = repo_root();
    setup::build_tools()?;
    setup::browser()?;

    let mut total = Tally::default();
    let mut record = |name: &str, t: Tally| {
        println!("  [{name}] {} passed, {} failed", t.passed, t.failed);
        total.add(t);
    };

    let fmt = step("1. cargo fmt --check", || {
        run(Command::new("cargo")
            .args(["fmt", "--all", "--check"])
            .current_dir(&root))
    });
    record("fmt", Tally::check(fmt.is_ok()));

    let clippy_native = step("2a. clippy (native crates)", || {
        run(Command::new("cargo")
            .args([
                "clippy",
                "--workspace",
                "--exclude",
                "hearth",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ])
            .current_dir(&root))
    });
    record("clippy native", Tally::check(clippy_native.is_ok()));
    let clippy_wasm = step("2b. clippy (the app, wasm32)", || {
        run(Command::new("cargo")
            .args([
                "clippy",
                "-p",
                "hearth",
                "--target",
                "wasm32-unknown-unknown",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ])
            .current_dir(&root))
    });
    record("clippy wasm", Tally::check(clippy_wasm.is_ok()));

    // Discovery's quality test ranks real Agent Skills collections.
    step(
        "Agent Skills collections into target/skill-collections/",
        || crate::collections::install(None),
    )?;
    let native = step("3. native tests", || {
        counted(
            Command::new("cargo")
                .args(["test", "--workspace", "--exclude", "hearth"])
                .current_dir(&root),
        )
    });
    record(
        "native",
        native.unwrap_or(Tally {
            passed: 0,
            failed: 1,
        }),
    );

    let purity = step("4. core purity: hearth-core's dependency tree", || {
        let tree = capture(
            Command::new("cargo")
                .args([
                    "tree",
                    "-p",
                    "hearth-core",
                    "-e",
                    "normal",
                    "--prefix",
                    "none",
                ])
                .current_dir(&root),
        )?;
        let found: Vec<&str> = FORBIDDEN_IN_CORE
            .iter()
            .copied()
            .filter(|bad| {
                tree.lines()
                    .any(|l| l.split_whitespace().next() == Some(*bad))
            })
            .collect();
        if found.is_empty() {
            println!("  none of {} in the tree", FORBIDDEN_IN_CORE.join(", "));
            Ok(())
        } else {
            Err(Failure::new(format!(
                "hearth-core depends on {}",
                found.join(", ")
            )))
        }
    });
    record("purity", Tally::check(purity.is_ok()));

    let wasm = step("5. wasm-bindgen-test in headless Chromium", || {
        let mut cmd = Command::new("cargo");
        cmd.args(["test", "-p", "hearth", "--target", "wasm32-unknown-unknown"])
            .current_dir(&root);
        counted(wasm_test_env(&mut cmd))
    });
    record(
        "wasm",
        wasm.unwrap_or(Tally {
            passed: 0,
            failed: 1,
        }),
    );

    let build = step("6. release build", crate::build_release);
    record("release build", Tally::check(build.is_ok()));

    let e2e = step("7. Playwright against hearth serve", || {
        if build.is_err() {
            return Err(Failure::new("skipped: the release build failed"));
        }
        // The assistant's journeys start the scripted fake model server.
        run(Command::new("cargo")
            .args(["build", "-p", "hearth-proxy", "-p", "hearth-testkit"])
            .current_dir(&root))?;
        let report = root.join("e2e/test-results/results.json");
        let _ = std::fs::remove_file(&report);
        let (ok, _) = run_tee(
            Command::new("npx")
                .args([
                    "playwright",
                    "test",
                    "-c",
                    "e2e/playwright.config.mjs",
                    "--reporter=list,json",
                ])
                .env("PLAYWRIGHT_JSON_OUTPUT_NAME", &report)
                .env("HEARTH_BIN", root.join("target/debug/hearth"))
                .env("HEARTH_DIST", root.join("dist"))
                .env(
                    "HEARTH_FAKE_MODEL",
                    root.join("target/debug/hearth-fake-model"),
                )
                .current_dir(&root),
        )?;
        let mut tally = playwright_counts(&report).unwrap_or_default();
        if !ok && tally.failed == 0 {
            tally.failed = 1;
        }
        Ok(tally)
    });
    record(
        "e2e",
        e2e.unwrap_or(Tally {
            passed: 0,
            failed: 1,
        }),
    );

    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_sum_over_every_test_binary() {
        let out = "\
running 3 tests
test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s
test result: FAILED. 10 passed; 2 failed; 1 ignored; 0 measured; 0 filtered out; finished in 1.2s
   Doc-tests hearth_core
test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
        assert_eq!(
            parse_cargo_counts(out),
            Some(Tally {
                passed: 13,
                failed: 2
            })
        );
        assert_eq!(parse_cargo_counts("error[E0425]: cannot find value"), None);
    }
}
