//! A corpus of realistic skill folders (quoted and block-scalar
//! descriptions, nested metadata, Claude Code fields, deep and hidden
//! folders, binary assets, loose Markdown at the root, node_modules,
//! tools.json and resources.json) scanned as one upload, then used the way
//! a conversation would use it. Outputs are compared as whole text with
//! `expected/corpus-*`.

mod support;

use std::fmt::Write;

use hearth_core::CallOrigin;
use hearth_core::agent_skills::activation::{self, ConversationSkills, SkillLibrary};
use hearth_core::agent_skills::archive;
use hearth_core::agent_skills::catalog::{self, CatalogPlan};
use hearth_core::agent_skills::context::{self, PromptConfig};
use hearth_core::agent_skills::scan::{LoadOutcome, ScanOptions, scan};
use hearth_core::agent_skills::{FileKind, ValidationMode};
use serde_json::json;

fn load(mode: ValidationMode) -> LoadOutcome {
    let files = support::read_tree(&support::fixtures().join("corpus"));
    scan(
        files,
        &ScanOptions {
            mode,
            root_name: Some("corpus".into()),
        },
    )
}

/// A tool result as the model would see it.
fn shown<T: std::fmt::Display, E: std::fmt::Display>(r: Result<T, E>) -> String {
    match r {
        Ok(v) => v.to_string(),
        Err(e) => format!("error: {e}"),
    }
}

fn expected(name: &str) -> std::path::PathBuf {
    support::fixtures().join("expected").join(name)
}

fn summary(outcome: &LoadOutcome) -> String {
    let mut out = String::new();
    writeln!(out, "{} skills loaded", outcome.packages.len()).unwrap();
    for p in &outcome.packages {
        let binary: Vec<&str> = p
            .files
            .iter()
            .filter(|f| f.kind == FileKind::Binary)
            .map(|f| f.path.as_str())
            .collect();
        let tools: Vec<&str> = p.tools.iter().map(|t| t.name.as_str()).collect();
        let resources: Vec<&str> = p.resources.iter().map(|r| r.uri.as_str()).collect();
        writeln!(
            out,
            "- {} (folder {}): {} files, binary [{}], tools [{}], resources [{}], model {}, user {}",
            p.name(),
            p.folder,
            p.files.len(),
            binary.join(", "),
            tools.join(", "),
            resources.join(", "),
            if p.properties.model_invocable() { "yes" } else { "no" },
            if p.properties.user_invocable { "yes" } else { "no" },
        )
        .unwrap();
    }
    writeln!(out, "problems:").unwrap();
    for p in &outcome.problems {
        writeln!(out, "  {}: {p}", p.severity.as_str()).unwrap();
    }
    out
}

#[test]
fn lenient_scan_loads_every_usable_skill_and_reports_the_rest() {
    let outcome = load(ValidationMode::Lenient);
    assert!(outcome.packages.len() >= 20, "{}", outcome.packages.len());
    support::check_file(&expected("corpus-lenient.txt"), &summary(&outcome));
}

#[test]
fn strict_scan_reports_every_violation() {
    let outcome = load(ValidationMode::Strict);
    support::check_file(&expected("corpus-strict.txt"), &summary(&outcome));
}

/// The corpus's twenty skills are past the default threshold, so the
/// prompt carries the one line; with a budget that fits, the catalog is
/// rendered inline.
#[test]
fn catalog_of_the_corpus_goes_to_discovery_past_the_threshold() {
    let library = SkillLibrary::from_packages(load(ValidationMode::Lenient).packages);
    let plan = catalog::plan_catalog(&library, catalog::DEFAULT_CATALOG_BUDGET_TOKENS);
    let CatalogPlan::Discover { prompt, skills, .. } = plan else {
        panic!("expected discovery for the corpus, got {plan:?}")
    };
    assert_eq!(
        (prompt.as_str(), skills),
        (catalog::DISCOVER_INSTRUCTIONS, 20)
    );
    let plan = catalog::plan_catalog(&library, 1_000);
    let CatalogPlan::Inline { prompt, tokens } = plan else {
        panic!("expected the corpus catalog inline at 1,000 tokens, got {plan:?}")
    };
    support::check_file(
        &expected("corpus-catalog.txt"),
        &format!("{prompt}\n\n(~{tokens} tokens)\n"),
    );
}

/// A conversation using the corpus: what each skill tool returns, step by
/// step, including the refusals.
#[test]
fn a_conversation_activates_reads_calls_and_returns() {
    let library = SkillLibrary::from_packages(load(ValidationMode::Lenient).packages);
    let mut state = ConversationSkills::default();
    let mut log = String::new();
    let names = library.model_invocable_names();
    let tool_names = |state: &ConversationSkills| -> String {
        activation::model_tools(&library, state, &names, &["discover_skills", "calculator"])
            .iter()
            .map(|d| d.id.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let step = |log: &mut String, title: &str, body: String| {
        writeln!(log, "## {title}\n{body}\n").unwrap();
    };

    step(&mut log, "tools before activation", tool_names(&state));
    let r = activation::activate_skill(&library, &mut state, "deploy", CallOrigin::Model);
    step(
        &mut log,
        "model activates deploy (hidden from it)",
        shown(r.map(|o| o.text().to_string())),
    );
    let r = activation::activate_skill(&library, &mut state, "data-analysis", CallOrigin::Model)
        .unwrap();
    step(
        &mut log,
        "model activates data-analysis",
        r.text().to_string(),
    );
    let r = activation::activate_skill(&library, &mut state, "data-analysis", CallOrigin::Model)
        .unwrap();
    step(
        &mut log,
        "model activates data-analysis again",
        r.text().to_string(),
    );
    step(
        &mut log,
        "tools while data-analysis is active",
        tool_names(&state),
    );

    let max = activation::DEFAULT_MAX_READ_BYTES;
    for path in [
        "references/pandas-cheatsheet.md",
        "./scripts//helpers.py",
        "references/missing.md",
        "../pdf-processing/references/FORMS.md",
    ] {
        let r = activation::read_skill_file(&library, &state, "data-analysis", path, max);
        step(
            &mut log,
            &format!("read_skill_file data-analysis {path}"),
            shown(r),
        );
    }
    let r = activation::read_skill_file(
        &library,
        &state,
        "pdf-processing",
        "references/FORMS.md",
        max,
    );
    step(
        &mut log,
        "read_skill_file of a skill that is not active",
        shown(r),
    );
    let r = activation::read_resource(
        &library,
        &state,
        "resource://data-analysis/pandas-cheatsheet",
        40,
    );
    step(&mut log, "read_resource, capped at 40 bytes", shown(r));

    let request = activation::call_skill_tool(
        &library,
        &state,
        "data-analysis",
        "describe_csv",
        &json!({"csv": "a,b\n1,2\n"}),
    )
    .unwrap();
    step(
        &mut log,
        "call_skill_tool describe_csv",
        format!(
            "{} {} input {} files {}",
            request.language.as_str(),
            request.script_path,
            request.input_json(),
            request.package_files.len()
        ),
    );
    let out = activation::script_output(&request, "{\"columns\": [{\"name\": \"a\"}]}\n").unwrap();
    assert_eq!(out.structured, Some(json!({"columns": [{"name": "a"}]})));
    step(&mut log, "its output, JSON", format!("{:?}", out.content));
    let out = activation::script_output(&request, "{\"rows\": 2}");
    step(
        &mut log,
        "an output breaking the output schema",
        shown(out.map(|o| format!("{:?}", o.content))),
    );
    let out = activation::script_output(&request, "done: 3 columns\n").unwrap();
    step(
        &mut log,
        "a plain-text output",
        format!("{:?}", out.content),
    );
    let r = activation::call_skill_tool(
        &library,
        &state,
        "data-analysis",
        "describe_csv",
        &json!({"csv": ""}),
    );
    step(
        &mut log,
        "call_skill_tool with invalid input",
        shown(r.map(|q| q.tool)),
    );
    let r = activation::call_skill_tool(&library, &state, "data-analysis", "nope", &json!({}));
    step(
        &mut log,
        "call_skill_tool of an unknown tool",
        shown(r.map(|q| q.tool)),
    );

    let r = activation::activate_skill(&library, &mut state, "pdf-processing", CallOrigin::Model)
        .unwrap();
    step(
        &mut log,
        "model activates pdf-processing",
        r.text().to_string(),
    );
    let r = activation::read_skill_file(
        &library,
        &state,
        "pdf-processing",
        "assets/sample-form.png",
        max,
    );
    step(&mut log, "read a binary asset", shown(r));
    let prompt = context::skills_prompt(&library, &state, PromptConfig::default());
    step(
        &mut log,
        "system prompt (specialist: pdf-processing)",
        prompt.text().to_string(),
    );

    let r =
        activation::activate_skill(&library, &mut state, "trino-debug", CallOrigin::Model).unwrap();
    step(
        &mut log,
        "model activates trino-debug",
        r.text().to_string(),
    );
    let prompt = context::skills_prompt(&library, &state, PromptConfig::default());
    step(
        &mut log,
        "system prompt (specialist: trino-debug)",
        prompt.text().to_string(),
    );
    step(
        &mut log,
        "tools with three skills active",
        tool_names(&state),
    );

    step(&mut log, "return to general", state.return_to_general());
    step(&mut log, "tools after returning", tool_names(&state));
    let r = activation::activate_skill(&library, &mut state, "deploy", CallOrigin::User).unwrap();
    step(&mut log, "the person runs /deploy", r.text().to_string());

    support::check_file(&expected("corpus-session.txt"), &log);
}

#[test]
fn every_package_survives_a_zip_round_trip() {
    let packages = load(ValidationMode::Lenient).packages;
    for p in &packages {
        let zip = archive::write_package_zip(p).unwrap();
        assert_eq!(zip, archive::write_package_zip(p).unwrap(), "deterministic");
        let back = archive::import_archive(
            &zip,
            &format!("{}.skill", p.name()),
            ValidationMode::Lenient,
        );
        assert_eq!(back.packages.len(), 1, "{}: {:?}", p.name(), back.problems);
        let q = &back.packages[0];
        assert_eq!(
            (&q.properties, &q.body, &q.files, &q.tools, &q.resources),
            (&p.properties, &p.body, &p.files, &p.tools, &p.resources),
            "{}",
            p.name()
        );
    }
}
