//! Token accounting with a real BPE tokenizer (o200k_base, natively):
//! the opening context of a conversation with the discovery pattern versus
//! sending every tool upfront, for 10 to 10,000 registered skills, and the
//! error of the cheap estimator the app's meter uses.
//!
//! `cargo bench -p hearth-core --bench tokens`

#[path = "../tests/support/collections.rs"]
mod collections;
#[path = "../tests/support/eval.rs"]
mod eval;
#[path = "../tests/support/scaled.rs"]
mod scaled;

use hearth_core::agent_skills::activation::{self, ConversationSkills, SkillLibrary};
use hearth_core::agent_skills::catalog;
use hearth_core::agent_skills::context::{self, PromptConfig};
use hearth_core::assistant::agent::{Conversation, prompt};
use hearth_core::assistant::providers::{
    ChatRequest, Protocol, Provider, ProviderConfig, ToolSpec, preset,
};
use hearth_core::assistant::tokens::estimate_tokens;

#[path = "support/figure.rs"]
mod figure;
use figure::figure;
use serde_json::Value;
use tiktoken_rs::CoreBPE;

/// The system prompt and tools exactly as a provider receives them.
fn opening_text(kind: &str, request: &ChatRequest) -> String {
    let provider = Provider::new(ProviderConfig::from_preset(preset(kind).unwrap(), "k", "m"));
    let body: Value =
        serde_json::from_slice(provider.chat_request(request).body.as_deref().unwrap()).unwrap();
    let tools = body.get("tools").map(Value::to_string).unwrap_or_default();
    format!("{}\n{}", request.system, tools)
}

fn count(bpe: &CoreBPE, text: &str) -> usize {
    bpe.encode_with_special_tokens(text).len()
}

fn opening_context(bpe: &CoreBPE) {
    let conversation = Conversation::new("bench", 0.0);
    let discovery = prompt::build_request(&conversation, &|_| None, &[], &[]);
    println!("Opening context tokens (system prompt + tools), o200k_base:");
    println!(
        "  {:>7}  {:>18} {:>18}  {:>18} {:>18}",
        "skills", "discovery/OpenAI", "upfront/OpenAI", "discovery/Anthropic", "upfront/Anthropic"
    );
    for n in [10, 100, 1_000, 10_000] {
        let skills = eval::scaled_catalog(n);
        let upfront = ChatRequest {
            system: discovery.system.clone(),
            messages: vec![],
            tools: skills.iter().map(ToolSpec::from_skill).collect(),
        };
        let row: Vec<usize> = [
            ("openai", &discovery),
            ("openai", &upfront),
            ("anthropic", &discovery),
            ("anthropic", &upfront),
        ]
        .iter()
        .map(|(kind, r)| count(bpe, &opening_text(kind, r)))
        .collect();
        println!(
            "  {n:>7}  {:>18} {:>18}  {:>18} {:>18}",
            row[0], row[1], row[2], row[3]
        );
        if n == 10_000 {
            let detail = "system prompt + tools, o200k_base, OpenAI shape";
            figure(
                "opening context at 10,000 skills with discover_skills",
                row[0] as f64,
                "tokens",
                None,
                detail,
            );
            figure(
                "opening context at 10,000 skills with every tool upfront",
                row[1] as f64,
                "tokens",
                None,
                detail,
            );
        }
    }
    let user = "What's 15% of 847?";
    println!(
        "  (the first user message adds {} tokens; system prompt alone: {})",
        count(bpe, user),
        count(bpe, &discovery.system)
    );
}

fn estimator_error(bpe: &CoreBPE) {
    let catalog = eval::catalog();
    let mut samples: Vec<(&str, String)> = Vec::new();
    samples.push(("system prompt", prompt::SYSTEM_PROMPT.to_string()));
    for s in &catalog {
        samples.push(("description", s.description.clone()));
        samples.push((
            "tool JSON",
            serde_json::to_string(&ToolSpec::from_skill(s)).unwrap(),
        ));
    }
    for q in eval::queries().into_iter().chain(eval::holdout_queries()) {
        samples.push(("user message", q.query));
    }
    for name in [
        "openai_text.sse",
        "anthropic_tool_use.sse",
        "openai_parallel_tools.sse",
    ] {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/streams")
            .join(name);
        samples.push(("SSE stream", std::fs::read_to_string(path).unwrap()));
    }
    samples.push(("non-English", "Ich möchte wissen, wie das Wetter morgen in München wird. 明日の東京の天気を教えてください。Погода в Москве завтра?".to_string()));
    samples.push(("code", "fn main() {\n    let xs: Vec<u32> = (0..10).map(|x| x * x).collect();\n    println!(\"{xs:?}\");\n}\n".to_string()));

    println!("\nEstimator vs o200k_base (signed error = estimate/real - 1):");
    let kinds = [
        "system prompt",
        "description",
        "tool JSON",
        "user message",
        "SSE stream",
        "non-English",
        "code",
    ];
    let mut all_abs = Vec::new();
    for kind in kinds {
        let (mut est, mut real, mut abs_sum, mut n, mut worst) =
            (0usize, 0usize, 0.0f64, 0usize, 0.0f64);
        for (_, text) in samples.iter().filter(|(k, _)| *k == kind) {
            let e = estimate_tokens(text);
            let r = count(bpe, text);
            est += e;
            real += r;
            let rel = e as f64 / r.max(1) as f64 - 1.0;
            abs_sum += rel.abs();
            worst = if rel.abs() > worst.abs() { rel } else { worst };
            all_abs.push(rel.abs());
            n += 1;
        }
        println!(
            "  {kind:<14} n={n:>3}  total {est:>6} vs {real:>6} ({:+.1}%)  mean |err| {:.1}%  worst {:+.1}%",
            (est as f64 / real.max(1) as f64 - 1.0) * 100.0,
            abs_sum / n.max(1) as f64 * 100.0,
            worst * 100.0
        );
    }
    all_abs.sort_by(f64::total_cmp);
    println!(
        "  all samples: median |err| {:.1}%, p90 |err| {:.1}%",
        all_abs[all_abs.len() / 2] * 100.0,
        all_abs[all_abs.len() * 9 / 10] * 100.0
    );
    figure(
        "token estimate vs o200k_base, median |error|",
        all_abs[all_abs.len() / 2] * 100.0,
        "%",
        None,
        &format!("p90 {:.1}%", all_abs[all_abs.len() * 9 / 10] * 100.0),
    );
    let all_tools: Vec<ToolSpec> = catalog.iter().map(ToolSpec::from_skill).collect();
    let whole = serde_json::to_string(&all_tools).unwrap();
    println!(
        "  the whole catalog's tools as one JSON: estimate {} vs real {}",
        estimate_tokens(&whole),
        count(bpe, &whole)
    );
}

/// The opening request of a conversation with `n` Agent Skills packages
/// installed, as the app composes it: the skills section the catalog rule
/// picks, `discover_skills`, and `activate_skill` when the catalog is
/// inline (with `budget` as the threshold).
fn opening_with_packages(library: &SkillLibrary, budget: usize, list_names: bool) -> ChatRequest {
    let conversation = Conversation::new("bench", 0.0);
    let state = ConversationSkills::default();
    let section = context::skills_prompt(
        library,
        &state,
        PromptConfig {
            catalog_budget_tokens: budget,
        },
    );
    let inline = catalog::plan_catalog(library, budget).is_inline();
    let activatable = if inline || list_names {
        library.model_invocable_names()
    } else {
        Vec::new()
    };
    let extra = activation::model_tools(library, &state, &activatable, &[]);
    prompt::build_request(
        &conversation,
        &|_| None,
        &extra,
        &[section.text().to_string()],
    )
}

fn opening_context_with_packages(bpe: &CoreBPE) {
    let installed = collections::installed();
    let real = collections::packages(&installed);
    println!(
        "\nOpening context tokens with Agent Skills packages installed ({} real, the rest variants), o200k_base:",
        real.len()
    );
    println!(
        "  {:>9}  {:>14} {:>17}  {:>14} {:>17}",
        "packages", "now/OpenAI", "now/Anthropic", "before/OpenAI", "before/Anthropic"
    );
    for n in [10, 100, 1_000] {
        let library = SkillLibrary::from_packages(collections::scaled_packages(&real, n));
        let now = opening_with_packages(&library, catalog::DEFAULT_CATALOG_BUDGET_TOKENS, false);
        // Before: a 1,500-token catalog budget, and activate_skill always
        // listing every name.
        let before = opening_with_packages(&library, 1_500, true);
        let row: Vec<usize> = [
            ("openai", &now),
            ("anthropic", &now),
            ("openai", &before),
            ("anthropic", &before),
        ]
        .iter()
        .map(|(kind, r)| count(bpe, &opening_text(kind, r)))
        .collect();
        println!(
            "  {n:>9}  {:>14} {:>17}  {:>14} {:>17}   (goal: now <= 300, flat)",
            row[0], row[1], row[2], row[3]
        );
        figure(
            &format!("opening context with {n} Agent Skills packages"),
            row[0] as f64,
            "tokens",
            Some(300.0),
            &format!(
                "system prompt + tools, o200k_base, OpenAI shape; {} with the old 1,500-token catalog",
                row[2]
            ),
        );
    }
    let one = SkillLibrary::from_packages(real.iter().take(1).cloned().collect());
    let inline = opening_with_packages(&one, catalog::DEFAULT_CATALOG_BUDGET_TOKENS, false);
    println!(
        "  (one package, {}: {} tokens with the OpenAI shape; the inline catalog holds up to {} estimated tokens)",
        if catalog::plan_catalog(&one, catalog::DEFAULT_CATALOG_BUDGET_TOKENS).is_inline() {
            "catalog inline"
        } else {
            "one line"
        },
        count(bpe, &opening_text("openai", &inline)),
        catalog::DEFAULT_CATALOG_BUDGET_TOKENS
    );
}

fn main() {
    let bpe = tiktoken_rs::o200k_base().expect("o200k_base is bundled in tiktoken-rs");
    opening_context(&bpe);
    opening_context_with_packages(&bpe);
    estimator_error(&bpe);
}
