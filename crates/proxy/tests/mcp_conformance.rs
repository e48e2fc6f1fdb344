//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`)
//! drives `hearth mcp conformance` through every client scenario that the
//! 2025-11-25 and 2026-07-28 revisions require. The suite starts its own
//! mock servers on localhost; a regression in any required scenario fails
//! this test.

mod mcp_support;

use std::process::Command;

use mcp_support::{peers_dir, require_peers};

fn run_requirements(revision: &str) -> (bool, String) {
    let dir = peers_dir();
    let out = tempfile::tempdir().expect("a results folder");
    let command = format!(
        "{} mcp conformance --client-metadata-url https://conformance-test.local/client-metadata.json",
        env!("CARGO_BIN_EXE_hearth")
    );
    let output = Command::new(dir.join("node_modules/.bin/node"))
        .arg(dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"))
        .args([
            "client",
            "--command",
            &command,
            "--requirements",
            revision,
            "-o",
        ])
        .arg(out.path())
        .current_dir(&dir)
        .output()
        .expect("run the conformance suite");
    let text = String::from_utf8_lossy(&output.stderr).into_owned()
        + &String::from_utf8_lossy(&output.stdout);
    let summary = text
        .split("=== SUITE SUMMARY ===")
        .nth(1)
        .unwrap_or(&text)
        .to_string();
    (output.status.success(), summary)
}

#[test]
fn every_required_client_scenario_passes() {
    require_peers("every_required_client_scenario_passes");
    for revision in ["2025-11-25", "2026-07-28"] {
        let (ok, summary) = run_requirements(revision);
        assert!(ok, "conformance {revision} failed:\n{summary}");
        // Only optional extensions (listed as not scored) may fail.
        let failing: Vec<&str> = summary
            .lines()
            .take_while(|l| !l.starts_with("Total:"))
            .filter_map(|l| l.strip_prefix("✗ "))
            .filter_map(|l| l.split(':').next())
            .collect();
        let optional: Vec<&str> = summary
            .lines()
            .skip_while(|l| !l.starts_with("Not scored"))
            .filter_map(|l| l.trim().strip_prefix("✗ "))
            .filter_map(|l| l.strip_suffix(" (extension)"))
            .collect();
        let scored: Vec<&str> = failing
            .into_iter()
            .filter(|f| !optional.contains(f))
            .collect();
        assert_eq!(scored, Vec::<&str>::new(), "{revision}:\n{summary}");
    }
}
