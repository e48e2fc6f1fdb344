//! What a test level ran, read from its own output, and the judgement on
//! it: every level reports passed, failed and skipped tests by name; a skip
//! that is not on the allow-list (`xtask/allowed-skips.txt`) fails, and so
//! does a level that ran fewer tests than its floor.

use std::fmt;

/// One test that did not run, and why its level said so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// How the allow-list names it: `binary test::path` for cargo levels,
    /// `file.spec.mjs > describe > title` for Playwright.
    pub id: String,
    pub reason: String,
}

/// What one level ran, as its runner reported it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LevelRun {
    pub passed: u64,
    pub failed: u64,
    /// Ids of the tests that failed (as many as the output names).
    pub failures: Vec<String>,
    pub skipped: Vec<Skipped>,
    /// Things that went wrong outside any one test, in words.
    pub problems: Vec<String>,
    /// The id of every test the output names, whatever its outcome.
    pub ran: Vec<String>,
}

/// The sums a level adds to the closing line.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
}

impl Tally {
    pub fn add(&mut self, other: Tally) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.skipped += other.skipped;
    }
}

impl fmt::Display for Tally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} passed, {} failed", self.passed, self.failed)?;
        if self.skipped > 0 {
            write!(f, ", {} skipped", self.skipped)?;
        }
        Ok(())
    }
}

/// A level judged: its sums, and every reason it failed, in words.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub tally: Tally,
    pub reasons: Vec<String>,
}

/// Judges `run` of `level`: unallowed skips count as failures, and a level
/// that ran fewer than `floor` tests (passed + failed + skipped) gets one
/// more failure saying so.
pub fn judge(level: &str, run: &LevelRun, floor: u64, allowed: &AllowList) -> Verdict {
    let mut v = Verdict {
        tally: Tally {
            passed: run.passed,
            failed: run.failed,
            skipped: 0,
        },
        reasons: Vec::new(),
    };
    for id in &run.failures {
        v.reasons.push(format!("[{level}] failed: {id}"));
    }
    // Each problem counted one failure where it was found.
    let named = (run.failures.len() + run.problems.len()) as u64;
    if run.failed > named {
        v.reasons.push(format!(
            "[{level}] {} failure(s) without a test name; see the log above",
            run.failed - named
        ));
    }
    for p in &run.problems {
        v.reasons.push(format!("[{level}] {p}"));
    }
    for s in &run.skipped {
        if allowed.allows(level, &s.id) {
            v.tally.skipped += 1;
        } else {
            v.tally.failed += 1;
            v.reasons.push(format!(
                "[{level}] skipped but not on the allow-list ({ALLOW_LIST_PATH}): {} ({})",
                s.id, s.reason
            ));
        }
    }
    let ran = run.passed + run.failed + run.skipped.len() as u64;
    if ran < floor {
        v.tally.failed += 1;
        v.reasons.push(format!(
            "[{level}] ran {ran} tests, fewer than its floor of {floor}: a test binary or spec \
             file was left out or could not start (floors are in xtask/src/test.rs)"
        ));
    }
    v
}

pub const ALLOW_LIST_PATH: &str = "xtask/allowed-skips.txt";

/// The skips that do not fail the run. Each entry is `<level> <test id>` on
/// its own line, right below a comment saying why it is allowed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct AllowList {
    pub entries: Vec<(String, String)>,
}

impl AllowList {
    /// Reads the list; an entry without a comment right above it is an
    /// error, so every allowed skip says why.
    pub fn parse(text: &str) -> Result<AllowList, String> {
        let mut entries = Vec::new();
        let mut commented = false;
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                commented = false;
                continue;
            }
            if line.starts_with('#') {
                commented = true;
                continue;
            }
            let Some((level, id)) = line.split_once(char::is_whitespace) else {
                return Err(format!(
                    "{ALLOW_LIST_PATH} line {}: expected `<level> <test id>`, got `{line}`",
                    n + 1
                ));
            };
            if !commented {
                return Err(format!(
                    "{ALLOW_LIST_PATH} line {}: `{line}` has no comment above it saying why the \
                     skip is allowed",
                    n + 1
                ));
            }
            entries.push((level.to_string(), id.trim().to_string()));
        }
        Ok(AllowList { entries })
    }

    pub fn allows(&self, level: &str, id: &str) -> bool {
        self.entries.iter().any(|(l, i)| l == level && i == id)
    }

    /// Entries of `level` that match no skip of `run`, although their
    /// test binary or spec file ran: a test that was fixed (or renamed)
    /// must leave the list too. (A partial run that left the file out says
    /// nothing about its entries.)
    pub fn stale(&self, level: &str, run: &LevelRun) -> Vec<String> {
        let group = |id: &str| {
            id.split(" > ")
                .next()
                .and_then(|g| g.split(' ').next())
                .unwrap_or(id)
                .to_string()
        };
        self.entries
            .iter()
            .filter(|(l, i)| l == level && !run.skipped.iter().any(|s| &s.id == i))
            .filter(|(_, i)| run.ran.iter().any(|r| group(r) == group(i)))
            .map(|(_, i)| i.clone())
            .collect()
    }
}

/// Reads `cargo test` output (native, or wasm-bindgen-test-runner's, which
/// has the same shape): the counts of every `test result:` line, and the
/// names of failed and ignored tests, prefixed with their test binary.
/// `None` when the output holds no result line at all.
pub fn parse_cargo(output: &str) -> Option<LevelRun> {
    let mut run = LevelRun::default();
    let mut seen = false;
    let mut binary = String::new();
    let mut ignored_total = 0u64;
    for line in output.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("Running ") {
            binary = binary_name(rest);
            continue;
        }
        if let Some(rest) = line.strip_prefix("Doc-tests ") {
            binary = format!("doc {}", rest.trim());
            continue;
        }
        if let Some(rest) = line.strip_prefix("test result: ") {
            seen = true;
            for part in rest.split([';', '.']) {
                let mut words = part.split_whitespace();
                if let (Some(n), Some(kind)) = (words.next(), words.next())
                    && let Ok(n) = n.parse::<u64>()
                {
                    match kind {
                        "passed" => run.passed += n,
                        "failed" => run.failed += n,
                        "ignored" => ignored_total += n,
                        _ => {}
                    }
                }
            }
            continue;
        }
        let Some(rest) = line.strip_prefix("test ") else {
            continue;
        };
        let Some((name, status)) = rest.rsplit_once(" ... ") else {
            continue;
        };
        let id = if binary.is_empty() {
            name.to_string()
        } else {
            format!("{binary} {name}")
        };
        run.ran.push(id.clone());
        if status == "FAILED" {
            run.failures.push(id);
        } else if let Some(why) = status.strip_prefix("ignored") {
            let why = why.trim_start_matches(',').trim();
            run.skipped.push(Skipped {
                id,
                reason: if why.is_empty() {
                    "#[ignore]".to_string()
                } else {
                    why.to_string()
                },
            });
        }
    }
    // A count without a name still counts: it cannot pass unseen.
    for n in run.skipped.len() as u64..ignored_total {
        run.skipped.push(Skipped {
            id: format!("an unnamed ignored test #{}", n + 1),
            reason: "counted as ignored, name not printed".to_string(),
        });
    }
    seen.then_some(run)
}

/// `tests/mcp_cli.rs (target/debug/deps/mcp_cli-1a2b)` → `mcp_cli`;
/// `unittests src/lib.rs (target/debug/deps/hearth_core-1a2b)` → `hearth_core`.
fn binary_name(running: &str) -> String {
    let inside = running
        .rsplit_once('(')
        .and_then(|(_, p)| p.strip_suffix(')'))
        .unwrap_or(running);
    let file = inside.rsplit('/').next().unwrap_or(inside);
    let file = file.strip_suffix(".wasm").unwrap_or(file);
    match file.rsplit_once('-') {
        Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_string(),
        _ => file.to_string(),
    }
}

/// Cargo's closing list of test targets that failed (`error: 2 targets
/// failed:` then one `` `-p x --test y` `` per line), kept for the
/// summary: a crashed binary has no failing test line of its own.
pub fn cargo_failed_targets(output: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in output.lines() {
        let t = line.trim();
        if t.starts_with("error:") && (t.contains("targets failed") || t.contains("target failed"))
        {
            inside = true;
            continue;
        }
        if inside {
            if let Some(target) = t.strip_prefix('`').and_then(|s| s.strip_suffix('`')) {
                out.push(target.to_string());
            } else {
                inside = false;
            }
        }
    }
    out
}

/// Reads Playwright's JSON report: every test by `file > describe > title`,
/// with why each skipped one did not run.
pub fn parse_playwright(report: &serde_json::Value) -> LevelRun {
    let mut run = LevelRun::default();
    if let Some(suites) = report.get("suites").and_then(|s| s.as_array()) {
        for suite in suites {
            walk_suite(suite, &mut Vec::new(), &mut run);
        }
    }
    if let Some(errors) = report.get("errors").and_then(|e| e.as_array()) {
        for e in errors {
            let message = e
                .get("message")
                .and_then(|m| m.as_str())
                .unwrap_or("an error outside any test");
            // One failure each: a spec that did not load ran none of its
            // tests, and the closing line must not say 0 failed.
            run.failed += 1;
            run.problems.push(format!(
                "Playwright reported an error outside any test: {}",
                first_line(message)
            ));
        }
    }
    run
}

fn first_line(s: &str) -> &str {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

fn str_of<'a>(v: &'a serde_json::Value, key: &str) -> &'a str {
    v.get(key).and_then(|s| s.as_str()).unwrap_or("")
}

fn walk_suite(suite: &serde_json::Value, path: &mut Vec<String>, run: &mut LevelRun) {
    let title = str_of(suite, "title");
    let pushed = !title.is_empty();
    if pushed {
        path.push(title.to_string());
    }
    for spec in suite
        .get("specs")
        .and_then(|s| s.as_array())
        .into_iter()
        .flatten()
    {
        let mut id = path.clone();
        id.push(str_of(spec, "title").to_string());
        let id = id.join(" > ");
        for test in spec
            .get("tests")
            .and_then(|t| t.as_array())
            .into_iter()
            .flatten()
        {
            run.ran.push(id.clone());
            match str_of(test, "status") {
                "expected" => run.passed += 1,
                "skipped" => run.skipped.push(Skipped {
                    id: id.clone(),
                    reason: skip_reason(test),
                }),
                // Retries are off; a test that needed one is not a pass.
                "flaky" => {
                    run.failed += 1;
                    run.failures
                        .push(format!("{id} (flaky: failed, then passed on a retry)"));
                }
                _ => {
                    run.failed += 1;
                    run.failures.push(format!("{id}{}", failure_hint(test)));
                }
            }
        }
    }
    for child in suite
        .get("suites")
        .and_then(|s| s.as_array())
        .into_iter()
        .flatten()
    {
        walk_suite(child, path, run);
    }
    if pushed {
        path.pop();
    }
}

/// Why Playwright skipped a test: its `test.skip`/`test.fixme` annotation,
/// or, with none, that it never ran (an earlier test of its serial group
/// failed, or the run stopped).
fn skip_reason(test: &serde_json::Value) -> String {
    let annotations: Vec<&serde_json::Value> = test
        .get("annotations")
        .and_then(|a| a.as_array())
        .into_iter()
        .flatten()
        .collect();
    for a in &annotations {
        let kind = str_of(a, "type");
        if kind == "skip" || kind == "fixme" {
            let why = str_of(a, "description");
            return if why.is_empty() {
                format!("test.{kind}")
            } else {
                format!("test.{kind}: {why}")
            };
        }
    }
    if annotations.iter().any(|a| str_of(a, "type") == "serial") {
        "never ran: an earlier test of its serial group failed".to_string()
    } else {
        "never ran: the run stopped before it".to_string()
    }
}

/// A failed test's first error line, and where a screen comparison left its
/// picture of the difference.
fn failure_hint(test: &serde_json::Value) -> String {
    let results = test.get("results").and_then(|r| r.as_array());
    let Some(last) = results.and_then(|r| r.last()) else {
        return String::new();
    };
    let message = last
        .get("error")
        .and_then(|e| e.get("message"))
        .and_then(|m| m.as_str())
        .map(strip_ansi)
        .unwrap_or_default();
    let diff = last
        .get("attachments")
        .and_then(|a| a.as_array())
        .into_iter()
        .flatten()
        .find(|a| str_of(a, "name").ends_with("-diff.png"))
        .map(|a| str_of(a, "path").to_string());
    let mut hint = String::new();
    let line = first_line(&message);
    if !line.is_empty() {
        hint.push_str(&format!(": {line}"));
    }
    if let Some(diff) = diff {
        hint.push_str(&format!(
            "\n      the screen differs from its baseline; the difference is drawn in {diff}\n      \
             if the change is intended: cargo xtask baselines (then look at the new PNG before committing)"
        ));
    }
    hint
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CARGO: &str = "\
     Running unittests src/lib.rs (target/debug/deps/hearth_core-0123abcd)
running 3 tests
test a::one ... ok
test a::two ... ignored
test a::three ... FAILED
test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s
     Running tests/mcp_cli.rs (target/debug/deps/mcp_cli-89ef0123)
running 2 tests
test slow_one ... ignored, needs a GPU
test fast_one ... ok
test result: ok. 1 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 1.2s
   Doc-tests hearth_core
test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
error: 1 target failed:
    `-p hearth-core --lib`
";

    #[test]
    fn cargo_output_gives_counts_and_names_per_binary() {
        let run = parse_cargo(CARGO).unwrap();
        assert_eq!((run.passed, run.failed), (2, 1));
        assert_eq!(run.failures, vec!["hearth_core a::three"]);
        assert_eq!(
            run.skipped,
            vec![
                Skipped {
                    id: "hearth_core a::two".into(),
                    reason: "#[ignore]".into()
                },
                Skipped {
                    id: "mcp_cli slow_one".into(),
                    reason: "needs a GPU".into()
                },
            ]
        );
        assert_eq!(cargo_failed_targets(CARGO), vec!["-p hearth-core --lib"]);
        assert_eq!(parse_cargo("error[E0425]: cannot find value"), None);
    }

    #[test]
    fn an_ignored_count_without_names_still_counts() {
        let out = "test result: ok. 4 passed; 0 failed; 2 ignored; 0 measured";
        let run = parse_cargo(out).unwrap();
        assert_eq!(run.skipped.len(), 2);
    }

    #[test]
    fn wasm_binaries_are_named_without_hash_or_extension() {
        assert_eq!(
            binary_name(
                "tests/storage.rs (target/wasm32-unknown-unknown/debug/deps/storage-0a1b2c3d.wasm)"
            ),
            "storage"
        );
    }

    fn list(text: &str) -> AllowList {
        AllowList::parse(text).unwrap()
    }

    #[test]
    fn every_allowed_skip_needs_a_comment_saying_why() {
        let ok = "# why this one may skip\ne2e pwa.spec.mjs > Python runs offline too\n";
        assert_eq!(
            list(ok).entries,
            vec![(
                "e2e".to_string(),
                "pwa.spec.mjs > Python runs offline too".to_string()
            )]
        );
        let bare = "# about another\ne2e a.spec.mjs > x\n\ne2e b.spec.mjs > y\n";
        let err = AllowList::parse(bare).unwrap_err();
        assert!(
            err.contains("line 4") && err.contains("no comment"),
            "{err}"
        );
        assert!(AllowList::parse("# c\nlonely\n").is_err());
    }

    #[test]
    fn unallowed_skips_and_short_levels_fail_with_reasons() {
        let allow = list("# known gap\ne2e a.spec.mjs > allowed\n");
        let run = LevelRun {
            passed: 5,
            failed: 0,
            skipped: vec![
                Skipped {
                    id: "a.spec.mjs > allowed".into(),
                    reason: "test.fixme".into(),
                },
                Skipped {
                    id: "a.spec.mjs > sneaky".into(),
                    reason: "test.skip: port taken".into(),
                },
            ],
            ..LevelRun::default()
        };
        let v = judge("e2e", &run, 7, &allow);
        assert_eq!(
            v.tally,
            Tally {
                passed: 5,
                failed: 1,
                skipped: 1
            }
        );
        assert_eq!(v.reasons.len(), 1);
        assert!(v.reasons[0].contains("a.spec.mjs > sneaky"));

        let v = judge("e2e", &run, 8, &allow);
        assert_eq!(v.tally.failed, 2);
        assert!(v.reasons[1].contains("fewer than its floor of 8"), "{v:?}");

        // The allow-list is per level.
        let v = judge("native", &run, 0, &allow);
        assert_eq!(v.tally.skipped, 0);
        assert_eq!(v.tally.failed, 2);
    }

    #[test]
    fn an_empty_level_cannot_pass() {
        let v = judge("e2e", &LevelRun::default(), 100, &AllowList::default());
        assert_eq!(v.tally.failed, 1);
    }

    #[test]
    fn stale_entries_are_found_when_their_file_ran() {
        let allow = list("# gone\ne2e a.spec.mjs > fixed now\n\n# kept\nnative mcp_cli slow\n");
        let ran = |ids: &[&str]| LevelRun {
            ran: ids.iter().map(|s| s.to_string()).collect(),
            ..LevelRun::default()
        };
        assert_eq!(
            allow.stale(
                "e2e",
                &ran(&["a.spec.mjs > fixed now", "a.spec.mjs > other"])
            ),
            vec!["a.spec.mjs > fixed now"]
        );
        // A run without a.spec.mjs (a partial run) says nothing about it.
        assert!(allow.stale("e2e", &ran(&["b.spec.mjs > x"])).is_empty());
        assert_eq!(
            allow.stale("native", &ran(&["mcp_cli fast"])),
            vec!["mcp_cli slow"]
        );
    }

    #[test]
    fn playwright_report_names_skips_and_their_reasons() {
        let report = json!({
            "suites": [{
                "title": "pwa.spec.mjs",
                "specs": [
                    {"title": "installs", "tests": [{"status": "expected", "annotations": []}]},
                    {"title": "breaks", "tests": [{"status": "unexpected", "annotations": [],
                        "results": [{"error": {"message": "\u{1b}[31mError: expect(page).toHaveScreenshot(expected)\u{1b}[39m\n\nmore"},
                        "attachments": [{"name": "skills-diff.png", "path": "/x/skills-diff.png"}]}]}]},
                    {"title": "after it", "tests": [{"status": "skipped", "annotations": [{"type": "serial"}], "results": [{"status": "skipped"}]}]},
                    {"title": "interrupted", "tests": [{"status": "skipped", "annotations": [], "results": []}]},
                    {"title": "known gap", "tests": [{"status": "skipped",
                        "annotations": [{"type": "fixme", "description": "no sandbox offline"}]}]},
                ],
                "suites": [{
                    "title": "inner",
                    "specs": [{"title": "deep", "tests": [{"status": "flaky"}]}],
                }],
            }],
            "errors": [{"message": "SyntaxError: bad spec\n at x"}],
        });
        let run = parse_playwright(&report);
        // Two failed tests, and the error outside any test counts too.
        assert_eq!((run.passed, run.failed), (1, 3));
        assert!(
            run.failures[0].starts_with(
                "pwa.spec.mjs > breaks: Error: expect(page).toHaveScreenshot(expected)"
            )
        );
        assert!(run.failures[0].contains("/x/skills-diff.png"));
        assert!(run.failures[0].contains("cargo xtask baselines"));
        assert!(run.failures[1].starts_with("pwa.spec.mjs > inner > deep (flaky"));
        assert_eq!(run.skipped[0].id, "pwa.spec.mjs > after it");
        assert_eq!(
            run.skipped[0].reason,
            "never ran: an earlier test of its serial group failed"
        );
        assert_eq!(
            run.skipped[1].reason,
            "never ran: the run stopped before it"
        );
        assert_eq!(run.skipped[2].reason, "test.fixme: no sandbox offline");
        assert_eq!(
            run.problems,
            vec!["Playwright reported an error outside any test: SyntaxError: bad spec"]
        );
        let v = judge("e2e", &run, 0, &AllowList::default());
        assert_eq!(
            v.tally.failed,
            3 + 3,
            "three failures and three unallowed skips"
        );
        assert!(!v.reasons.iter().any(|r| r.contains("without a test name")));
    }
}
