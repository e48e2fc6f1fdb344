//! Agent Skills figures: how long parsing and validating 1,000 SKILL.md
//! files takes natively (median of several runs), how long scanning them as
//! one uploaded tree takes, and what the catalog costs per skill in tokens.
//!
//! Run with `cargo bench -p hearth-core --bench agent_skills`. Tokens are
//! estimated as characters / 4 (no tokenizer ships in the workspace).

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

#[path = "support/figure.rs"]
mod figure;
use figure::figure;

use hearth_core::agent_skills::activation::SkillLibrary;
use hearth_core::agent_skills::catalog::{
    self, CatalogEntry, CatalogPlan, estimate_tokens, render_catalog,
};
use hearth_core::agent_skills::scan::{ScanOptions, SourceFile, scan};
use hearth_core::agent_skills::{SkillMdSource, ValidationMode, parse_skill_md};

const SKILLS: usize = 1_000;
const RUNS: usize = 21;

/// 1,000 SKILL.md files in the shapes real ones take: plain, folded and
/// literal descriptions, quoted values, metadata (nested too), Claude Code
/// fields, an unquoted colon now and then, and bodies of varied length.
fn generate() -> Vec<(String, String)> {
    let topics = [
        "PDF forms",
        "CSV data",
        "Trino queries",
        "release notes",
        "brand colours",
        "API reference docs",
        "SQL formatting",
        "regular expressions",
        "incident response",
        "spreadsheet formulas",
        "commit messages",
        "code review",
        "meeting notes",
    ];
    (0..SKILLS)
        .map(|i| {
            let name = format!("skill-{i:04}");
            let topic = topics[i % topics.len()];
            let description = match i % 5 {
                0 => format!("description: Work with {topic}. Use when the user mentions {topic} or asks for help with them.\n"),
                1 => format!("description: >\n  Work with {topic}: extract, check and fix.\n  Use when the user mentions {topic}.\n"),
                2 => format!("description: |-\n  Work with {topic}.\n  Use when the user mentions {topic}.\n"),
                3 => format!("description: \"Work with {topic}: the quick way. Use for {topic}.\"\n"),
                _ => format!("description: Use this skill when: the user works with {topic}\n"),
            };
            let extra = match i % 4 {
                0 => "license: Apache-2.0\nmetadata:\n  author: example-org\n  version: \"1.0\"\n".to_string(),
                1 => "compatibility: Requires Python 3.12+\nallowed-tools: Bash(git log:*) Read\n".to_string(),
                2 => "when_to_use: When the user asks for it.\nargument-hint: \"[file]\"\nuser-invocable: true\n".to_string(),
                _ => "metadata:\n  openclaw:\n    requires:\n      bins: [node, jq]\n".to_string(),
            };
            let body: String = (0..(10 + i % 40))
                .map(|l| format!("{l}. Step about {topic}, with `code` and a [link](references/REF.md).\n"))
                .collect();
            let text = format!("---\nname: {name}\n{description}{extra}---\n\n# {topic}\n\n{body}");
            (name, text)
        })
        .collect()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn time_runs(mut f: impl FnMut()) -> (Duration, Duration, Duration) {
    f(); // warm up
    let times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    let min = *times.iter().min().unwrap();
    let max = *times.iter().max().unwrap();
    (median(times), min, max)
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn read_tree(root: &Path, dir: &Path, out: &mut Vec<SourceFile>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            read_tree(root, &p, out);
        } else if let Ok(bytes) = std::fs::read(&p) {
            let rel = p
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.push(SourceFile::new(rel, bytes));
        }
    }
}

fn catalog_figures(label: &str, entries: &[CatalogEntry]) {
    let mut per_skill: Vec<usize> = entries
        .iter()
        .map(|e| {
            estimate_tokens(&render_catalog(std::slice::from_ref(e)))
                - estimate_tokens("<available_skills>\n</available_skills>")
        })
        .collect();
    per_skill.sort();
    let total = estimate_tokens(&render_catalog(entries));
    println!(
        "catalog tokens per skill ({label}, {} skills): mean {:.1}, median {}, min {}, max {}; whole block {} tokens",
        entries.len(),
        total as f64 / entries.len() as f64,
        per_skill[per_skill.len() / 2],
        per_skill[0],
        per_skill[per_skill.len() - 1],
        total
    );
}

fn main() {
    let skills = generate();
    let bytes: usize = skills.iter().map(|(_, t)| t.len()).sum();
    println!(
        "agent skills bench: {SKILLS} SKILL.md files, {} KiB, {RUNS} runs each",
        bytes / 1024
    );

    for mode in [ValidationMode::Strict, ValidationMode::Lenient] {
        let (med, min, max) = time_runs(|| {
            for (name, text) in &skills {
                let file = format!("{name}/SKILL.md");
                black_box(parse_skill_md(
                    SkillMdSource {
                        text,
                        file: &file,
                        folder: Some(name),
                    },
                    mode,
                ));
            }
        });
        println!(
            "parse + validate {SKILLS} SKILL.md ({mode:?}): median {} (min {}, max {}), {:.1} µs per file",
            ms(med),
            ms(min),
            ms(max),
            med.as_secs_f64() * 1e6 / SKILLS as f64
        );
        figure(
            &format!("parse + validate {SKILLS} SKILL.md files ({mode:?}), native"),
            med.as_secs_f64() * 1e3,
            "ms",
            None,
            &format!("median of {RUNS} runs"),
        );
    }

    let tree: Vec<SourceFile> = skills
        .iter()
        .flat_map(|(name, text)| {
            [
                SourceFile::new(format!("skills/{name}/SKILL.md"), text.clone()),
                SourceFile::new(
                    format!("skills/{name}/references/REF.md"),
                    "# Reference\n".repeat(20),
                ),
            ]
        })
        .collect();
    let options = ScanOptions {
        mode: ValidationMode::Lenient,
        root_name: Some("upload".into()),
    };
    let (med, min, max) = time_runs(|| {
        black_box(scan(tree.clone(), &options));
    });
    println!(
        "scan an upload of {SKILLS} skills ({} files) and load them: median {} (min {}, max {})",
        tree.len(),
        ms(med),
        ms(min),
        ms(max)
    );

    let outcome = scan(tree, &options);
    let library = SkillLibrary::from_packages(outcome.packages);
    let entries = catalog::catalog_entries(&library);
    catalog_figures("generated", &entries);
    match catalog::plan_catalog(&library, catalog::DEFAULT_CATALOG_BUDGET_TOKENS) {
        CatalogPlan::Discover { tokens, budget, .. } => println!(
            "catalog of {SKILLS} skills would cost {tokens} tokens > budget {budget}: falls back to discover_skills ({} tokens instead)",
            estimate_tokens(catalog::DISCOVER_INSTRUCTIONS)
        ),
        other => println!("catalog plan for {SKILLS} skills: {other:?}"),
    }

    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agent-skills/corpus");
    let mut files = Vec::new();
    read_tree(&corpus, &corpus, &mut files);
    let outcome = scan(
        files,
        &ScanOptions {
            mode: ValidationMode::Lenient,
            root_name: Some("corpus".into()),
        },
    );
    let library = SkillLibrary::from_packages(outcome.packages);
    catalog_figures("fixture corpus", &catalog::catalog_entries(&library));
    if let CatalogPlan::Inline { tokens, .. } =
        catalog::plan_catalog(&library, catalog::DEFAULT_CATALOG_BUDGET_TOKENS)
    {
        println!(
            "corpus catalog with instructions: {tokens} tokens (budget {})",
            catalog::DEFAULT_CATALOG_BUDGET_TOKENS
        );
    }
}
