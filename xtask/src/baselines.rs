//! `cargo xtask baselines [--grep TEXT]`: rewrites the screen baselines in
//! `e2e/baselines/` on purpose, after a change to the UI. It runs the
//! journeys tagged `@baseline` (or those matching TEXT) with Playwright's
//! `--update-snapshots=changed`, which rewrites only the pictures that no
//! longer match within the tolerance, then lists what changed so the
//! person looks at each new PNG before committing it.

use std::process::Command;

use crate::util::{Failure, capture, repo_root, run_tee, step};

pub const BASELINES_DIR: &str = "e2e/baselines";

pub fn run(args: &[String]) -> Result<(), Failure> {
    let mut grep = "@baseline".to_string();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--grep" => {
                grep = it
                    .next()
                    .cloned()
                    .ok_or_else(|| Failure::new("--grep needs a value"))?
            }
            other => {
                return Err(Failure::new(format!(
                    "unknown option {other}; use --grep TEXT"
                )));
            }
        }
    }
    let root = repo_root();
    crate::setup::build_tools()?;
    crate::setup::browser()?;
    step("release build of the app", crate::build_release_if_stale)?;
    step("MCP test peers", crate::setup::mcp_peers)?;
    step("hearth and the fake model", crate::test::build_e2e_binaries)?;
    step("journeys that compare screens, updating baselines", || {
        let mut cmd = Command::new("npx");
        cmd.args([
            "playwright",
            "test",
            "-c",
            "e2e/playwright.config.mjs",
            "--grep",
            &grep,
            "--update-snapshots=changed",
        ])
        .current_dir(&root);
        let (ok, _) = run_tee(crate::test::playwright_env(&mut cmd))?;
        if ok {
            Ok(())
        } else {
            Err(Failure::new(
                "some journeys failed (see above); only the baselines of screens they reached were written",
            ))
        }
    })?;
    let changed = capture(
        Command::new("git")
            .args([
                "status",
                "--porcelain",
                "--untracked-files=all",
                "--",
                BASELINES_DIR,
            ])
            .current_dir(&root),
    )?;
    if changed.trim().is_empty() {
        println!("\nNo baseline changed: every screen matches within the tolerance.");
    } else {
        println!("\nBaselines written (look at each before committing):");
        for line in changed.lines() {
            println!("  {line}");
        }
    }
    Ok(())
}
