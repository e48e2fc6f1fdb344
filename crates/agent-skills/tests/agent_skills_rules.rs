//! Every SKILL.md rule and every lenient-loading case as a fixture: a skill
//! folder in, the strict and lenient outcomes out, compared as whole text
//! with the case's `expected.txt`.
//!
//! Each case is `rules/<case>/<skill-folder>/…` plus `rules/<case>/expected.txt`.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use hearth_agent_skills::package::{PackageFile, PackageSource, load_package};
use hearth_agent_skills::testing::{check_file, read_tree};
use hearth_agent_skills::{Problem, Severity, ValidationMode};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn render_problems(out: &mut String, problems: &[Problem]) {
    for p in problems {
        writeln!(out, "  {}: {p}", p.severity.as_str()).unwrap();
    }
}

/// The outcome of one case in both modes, as text.
fn run_case(case: &std::path::Path) -> String {
    let folders: Vec<_> = std::fs::read_dir(case)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(
        folders.len(),
        1,
        "{} must hold one skill folder",
        case.display()
    );
    let folder = &folders[0];
    let folder_name = folder.file_name().unwrap().to_string_lossy().into_owned();
    let files: Vec<PackageFile> = read_tree(folder)
        .into_iter()
        .map(|f| PackageFile::new(f.path, f.bytes))
        .collect();
    let prefix = format!("{folder_name}/");
    let source = PackageSource {
        folder: Some(&folder_name),
        display_prefix: &prefix,
    };

    let mut out = String::new();
    let strict = load_package(files.clone(), source, ValidationMode::Strict);
    let valid = !strict
        .problems
        .iter()
        .any(|p| p.severity == Severity::Error);
    writeln!(out, "strict: {}", if valid { "valid" } else { "invalid" }).unwrap();
    render_problems(&mut out, &strict.problems);

    let lenient = load_package(files, source, ValidationMode::Lenient);
    match &lenient.package {
        Some(p) => {
            writeln!(out, "lenient: loaded {:?}", p.name()).unwrap();
        }
        None => writeln!(out, "lenient: skipped").unwrap(),
    }
    render_problems(&mut out, &lenient.problems);
    if let Some(p) = &lenient.package {
        writeln!(
            out,
            "properties: {}",
            serde_json::to_string(&p.properties).unwrap()
        )
        .unwrap();
        for t in &p.tools {
            writeln!(
                out,
                "tool: {} ({} {}) input {}",
                t.name,
                t.language.as_str(),
                t.script,
                t.input_schema
            )
            .unwrap();
        }
        for r in &p.resources {
            writeln!(out, "resource: {} -> {} ({})", r.uri, r.path, r.description).unwrap();
        }
    }
    out
}

#[test]
fn every_rule_has_a_fixture_and_gives_the_expected_messages() {
    let root = fixtures().join("rules");
    let mut cases: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 40, "only {} rule fixtures", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let actual = run_case(case);
        let result = std::panic::catch_unwind(|| {
            check_file(&case.join("expected.txt"), &actual);
        });
        if result.is_err() {
            failures.push(case.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    assert_eq!(failures, Vec::<String>::new(), "cases whose output changed");
}
