//! `cargo xtask fuzz [--cases N]`: the property tests of every parser of
//! outside input (SKILL.md and YAML, `tools.json`, the zip reader, SSE,
//! JSON-RPC and MCP messages, OAuth answers, the backup reader, the GGUF
//! header, the schema validator, MCP Apps' hosts and the Markdown
//! renderer) with many more cases than `cargo xtask test` runs, in
//! release. Not a step of the test command: a long run belongs to whoever
//! asks for it.

use std::process::Command;

use crate::util::{Failure, repo_root, run as run_command, step};

/// Cases per property in `cargo xtask test`.
pub const TEST_CASES: u32 = 128;
/// Cases per property in `cargo xtask fuzz` unless `--cases` says.
const FUZZ_CASES: u32 = 20_000;

/// The property test targets: (package, test target).
pub const TARGETS: [(&str, &str); 3] = [
    ("hearth-core", "props"),
    ("hearth-markdown", "props"),
    ("hearth-agent-skills", "agent_skills_props"),
];

pub fn run(args: &[String]) -> Result<(), Failure> {
    let cases = match args {
        [] => FUZZ_CASES,
        [flag, n] if flag == "--cases" => n
            .parse()
            .map_err(|_| Failure::new(format!("--cases needs a number, not {n:?}")))?,
        _ => return Err(Failure::new("usage: cargo xtask fuzz [--cases N]")),
    };
    let root = repo_root();
    for (package, target) in TARGETS {
        step(&format!("{package}: {target}, {cases} cases each"), || {
            run_command(
                Command::new("cargo")
                    .args(["test", "--release", "-p", package, "--test", target])
                    .env("PROPTEST_CASES", cases.to_string())
                    .current_dir(&root),
            )
        })?;
    }
    Ok(())
}
