//! Discovery benchmark: ranking quality (recall@1 and recall@3 on the
//! labelled queries, with ablations) and latency at 10,000 skills.
//!
//! `cargo bench -p hearth-core --bench discovery`

#[path = "../tests/support/collections.rs"]
mod collections;
#[path = "../tests/support/eval.rs"]
mod eval;
#[path = "../tests/support/scaled.rs"]
mod scaled;

use std::time::Instant;

#[path = "support/figure.rs"]
mod figure;
use figure::figure;

use eval::LabelledQuery;
use hearth_core::discovery::packages::package_text;
use hearth_core::discovery::{self, Expansions, PackageText, SkillIndex, Weights};

fn recall_line(label: &str, index: &SkillIndex, queries: &[LabelledQuery]) {
    let (r1, _) = eval::recall_at(index, queries, 1);
    let (r3, _) = eval::recall_at(index, queries, 3);
    println!(
        "  {label:<28} n={:>3}  recall@1 {r1:.3}  recall@3 {r3:.3}",
        queries.len()
    );
    if !label.starts_with(' ') {
        let n = format!("{} labelled queries", queries.len());
        figure(&format!("discovery recall@1, {label}"), r1, "", None, &n);
        figure(&format!("discovery recall@3, {label}"), r3, "", None, &n);
    }
}

fn quality() {
    let catalog = eval::catalog();
    let dev = eval::queries();
    let holdout = eval::holdout_queries();
    let index = SkillIndex::build(&catalog);
    println!("Discovery quality: {} skills in the catalog", catalog.len());
    recall_line("development set", &index, &dev);
    for kind in ["paraphrase", "typo", "terse", "wordy", "model"] {
        let subset: Vec<LabelledQuery> = dev.iter().filter(|q| q.kind == kind).cloned().collect();
        recall_line(&format!("  {kind}"), &index, &subset);
    }
    recall_line("holdout (written after tuning)", &index, &holdout);

    let (_, misses) = eval::recall_at(&index, &dev, 3);
    println!("  development misses at 3:");
    for (q, got) in misses {
        println!("    {q:?} -> {got:?}");
    }

    println!("\nAblations (development set | holdout):");
    let none = Expansions {
        fuzzy: false,
        prefix: false,
        compound: false,
        synonyms: false,
    };
    let variants: Vec<(&str, Expansions, Weights)> = vec![
        (
            "BM25F only",
            none,
            Weights {
                coordination: 0.0,
                ..Weights::default()
            },
        ),
        ("+ coordination", none, Weights::default()),
        (
            "+ typo correction",
            Expansions {
                fuzzy: true,
                ..none
            },
            Weights::default(),
        ),
        (
            "+ prefixes",
            Expansions {
                prefix: true,
                ..none
            },
            Weights::default(),
        ),
        (
            "+ compounds",
            Expansions {
                compound: true,
                ..none
            },
            Weights::default(),
        ),
        (
            "+ synonyms",
            Expansions {
                synonyms: true,
                ..none
            },
            Weights::default(),
        ),
        ("all", Expansions::default(), Weights::default()),
        (
            "all, no coordination",
            Expansions::default(),
            Weights {
                coordination: 0.0,
                ..Weights::default()
            },
        ),
    ];
    for (label, expansions, weights) in variants {
        let index = SkillIndex::build(&catalog)
            .with_expansions(expansions)
            .with_weights(weights);
        let (d1, _) = eval::recall_at(&index, &dev, 1);
        let (d3, _) = eval::recall_at(&index, &dev, 3);
        let (h1, _) = eval::recall_at(&index, &holdout, 1);
        let (h3, _) = eval::recall_at(&index, &holdout, 3);
        println!("  {label:<22} r@1 {d1:.3}  r@3 {d3:.3}  |  r@1 {h1:.3}  r@3 {h3:.3}");
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn latency() {
    let n = 10_000;
    let catalog = eval::scaled_catalog(n);
    let t = Instant::now();
    let mut index = SkillIndex::build(&catalog);
    let build_ms = t.elapsed().as_secs_f64() * 1e3;
    let queries: Vec<String> = eval::queries()
        .into_iter()
        .chain(eval::holdout_queries())
        .map(|q| q.query)
        .collect();
    let enabled =
        |s: &discovery::IndexedSkill| s.default_enabled || s.tier == hearth_core::Tier::Network;
    // Warm up, then time every query several times.
    for q in &queries {
        std::hint::black_box(discovery::discover(&index, q, None, &enabled));
    }
    let mut samples = Vec::new();
    let mut per_query: Vec<Vec<f64>> = vec![Vec::new(); queries.len()];
    for _ in 0..20 {
        for (i, q) in queries.iter().enumerate() {
            let t = Instant::now();
            std::hint::black_box(discovery::discover(&index, q, None, &enabled));
            let ms = t.elapsed().as_secs_f64() * 1e3;
            per_query[i].push(ms);
            samples.push(ms);
        }
    }
    samples.sort_by(f64::total_cmp);
    // Per-query medians, so a scheduler hiccup does not name a query slow.
    let medians = per_query.into_iter().map(|mut v| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    });
    let mut slowest: Vec<(f64, &String)> = medians.zip(&queries).collect();
    slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!(
        "\nLatency at {} skills ({} queries × 20):",
        index.len(),
        queries.len()
    );
    println!("  index build            {build_ms:.1} ms");
    figure(
        &format!("discover_skills at {} skills, native, median", index.len()),
        percentile(&samples, 0.5),
        "ms",
        None,
        &format!(
            "{} queries x 20; p95 {:.3} ms; index build {build_ms:.1} ms",
            queries.len(),
            percentile(&samples, 0.95)
        ),
    );
    println!(
        "  discover_skills        median {:.3} ms  p95 {:.3} ms  max {:.3} ms",
        percentile(&samples, 0.5),
        percentile(&samples, 0.95),
        samples[samples.len() - 1]
    );
    for (ms, q) in slowest.iter().take(3) {
        println!("  slowest (median)       {ms:.3} ms  {q:?}");
    }
    // Updates: an MCP server with 20 tools connecting and disconnecting.
    let extra: Vec<_> = catalog
        .iter()
        .take(20)
        .map(|s| {
            let mut s = s.clone();
            s.id = hearth_core::SkillId::new(format!("{}_new", s.id))
                .unwrap_or_else(|e| panic!("{e}"));
            s
        })
        .collect();
    let t = Instant::now();
    for s in &extra {
        index.upsert(s);
    }
    let add_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    for s in &extra {
        index.remove(&s.id);
    }
    let remove_ms = t.elapsed().as_secs_f64() * 1e3;
    println!("  add 20 skills          {add_ms:.2} ms   remove 20 skills {remove_ms:.2} ms");
    latency_with_packages(&mut index, &queries);
}

/// `discover_skills` over 10,000 tools and 1,000 Agent Skills packages
/// (the real collections installed, then variants), and what one package
/// import, switch or removal costs. The package texts are written to
/// target/skill-collections/bench-packages.json for the browser bench.
fn latency_with_packages(index: &mut SkillIndex, queries: &[String]) {
    let texts = write_packages();
    let real = collections::packages(&collections::installed()).len();
    let t = Instant::now();
    for p in &texts {
        index.upsert_package(p);
    }
    let build_ms = t.elapsed().as_secs_f64() * 1e3;
    let mut all: Vec<String> = queries.to_vec();
    all.extend(
        collections::development()
            .into_iter()
            .chain(collections::set_aside())
            .map(|q| q.query),
    );
    let enabled =
        |s: &discovery::IndexedSkill| s.default_enabled || s.tier == hearth_core::Tier::Network;
    for q in &all {
        std::hint::black_box(discovery::discover(index, q, None, &enabled));
    }
    let mut samples = Vec::new();
    for _ in 0..10 {
        for q in &all {
            let t = Instant::now();
            std::hint::black_box(discovery::discover(index, q, None, &enabled));
            samples.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    samples.sort_by(f64::total_cmp);
    println!(
        "\nLatency at {} entries ({} packages, {} real; {} queries x 10):",
        index.len(),
        texts.len(),
        real,
        all.len()
    );
    println!("  add 1,000 packages     {build_ms:.1} ms");
    println!(
        "  discover_skills        median {:.3} ms  p95 {:.3} ms  max {:.3} ms",
        percentile(&samples, 0.5),
        percentile(&samples, 0.95),
        samples[samples.len() - 1]
    );
    // One package switched off and on, and one removed and re-imported:
    // only its own postings move.
    let one = &texts[texts.len() / 2];
    let t = Instant::now();
    for _ in 0..100 {
        index.remove_package(&one.name);
        index.upsert_package(one);
    }
    let toggle_us = t.elapsed().as_secs_f64() * 1e6 / 100.0;
    println!("  disable + enable one package  {toggle_us:.0} µs");
    figure(
        &format!(
            "discover_skills with {} packages + 10,000 tools, native, median",
            texts.len()
        ),
        percentile(&samples, 0.5),
        "ms",
        None,
        &format!(
            "{} queries x 10; p95 {:.3} ms; adding the packages {build_ms:.1} ms; disable + enable one {toggle_us:.0} µs",
            all.len(),
            percentile(&samples, 0.95)
        ),
    );
}

/// Recall on the real Agent Skills collections installed under
/// target/skill-collections, development set and set-aside queries; only
/// the development misses are listed, since the set-aside ones must not
/// steer the tuning.
fn package_quality() {
    let installed = collections::installed();
    let packages = collections::packages(&installed);
    let index = collections::index(&packages);
    let names: Vec<String> = installed
        .iter()
        .map(|c| format!("{} ({})", c.name, c.packages.len()))
        .collect();
    println!(
        "\nDiscovery quality on real Agent Skills collections: {} packages + {} built-ins",
        packages.len(),
        hearth_core::builtin::definitions().len()
    );
    println!("  collections: {}", names.join(", "));
    let dev = collections::answerable(collections::development(), &installed);
    let held = collections::answerable(collections::set_aside(), &installed);
    for (label, queries) in [("development", &dev), ("set aside", &held)] {
        let (r1, _) = collections::recall_at(&index, queries, 1);
        let (r3, _) = collections::recall_at(&index, queries, 3);
        println!(
            "  {label:<12} n={:>3}  recall@1 {r1:.3}  recall@3 {r3:.3}",
            queries.len()
        );
        let n = format!("{} labelled queries on real collections", queries.len());
        figure(
            &format!("package discovery recall@1, {label}"),
            r1,
            "",
            None,
            &n,
        );
        figure(
            &format!("package discovery recall@3, {label}"),
            r3,
            "",
            None,
            &n,
        );
    }
    let registry: Vec<collections::Collection> = installed
        .iter()
        .filter(|c| collections::FROM_REGISTRIES.contains(&c.name.as_str()))
        .map(|c| collections::Collection {
            name: c.name.clone(),
            packages: c.packages.clone(),
        })
        .collect();
    let registry_index = collections::index(&collections::packages(&registry));
    for (label, queries) in [
        (
            "development",
            collections::answerable(collections::development(), &registry),
        ),
        (
            "set aside",
            collections::answerable(collections::set_aside(), &registry),
        ),
    ] {
        let (r1, _) = collections::recall_at(&registry_index, &queries, 1);
        let (r3, _) = collections::recall_at(&registry_index, &queries, 3);
        println!(
            "  registry collections only, {label:<12} n={:>3}  recall@1 {r1:.3}  recall@3 {r3:.3}",
            queries.len()
        );
    }
    // Ranking variants are compared on the development queries only
    // (`-- tune`): printing them on the set aside would invite tuning on it.
    let (_, misses) = collections::recall_at(&index, &dev, 3);
    println!("  development misses at 3:");
    for (q, got) in misses {
        println!("    {q:?} -> {got:?}");
    }
}

/// Mean reciprocal rank of the first expected package in the top 10: a
/// finer signal than recall when comparing ranking variants.
fn mrr(index: &SkillIndex, queries: &[collections::LabelledQuery]) -> f64 {
    let total: f64 = queries
        .iter()
        .map(|q| {
            collections::ranked(index, &q.query, 10)
                .iter()
                .position(|g| q.expected.contains(g))
                .map_or(0.0, |i| 1.0 / (i + 1) as f64)
        })
        .sum();
    total / queries.len().max(1) as f64
}

/// Ranking variants on the development queries only (the packages' and
/// the tool catalog's): what tuning may look at. The set-aside queries
/// are not read here.
fn tune() {
    let installed = collections::installed();
    let packages = collections::packages(&installed);
    let dev = collections::answerable(collections::development(), &installed);
    let catalog = eval::catalog();
    let tools_dev = eval::queries();
    let base = Weights::default();
    let mut variants: Vec<(String, Weights)> = vec![("default".into(), base)];
    let mut add = |label: String, f: &dyn Fn(&mut Weights)| {
        let mut w = base;
        f(&mut w);
        variants.push((label, w));
    };
    for v in [0.6f32, 0.8, 1.0, 1.6, 2.0, 2.5, 3.0] {
        add(format!("k1 {v}"), &|w| w.k1 = v);
    }
    for v in [0.5f32, 0.6, 0.9, 1.0] {
        add(format!("description b {v}"), &|w| w.b[3] = v);
    }
    for v in [0.8f32, 1.2, 1.5, 2.0] {
        add(format!("description weight {v}"), &|w| w.field[3] = v);
    }
    for v in [1.0f32, 2.0, 4.0] {
        add(format!("name weight {v}"), &|w| w.field[1] = v);
    }
    for v in [1.0f32, 3.0] {
        add(format!("id weight {v}"), &|w| w.field[0] = v);
    }
    for v in [0.1f32, 0.3, 0.4] {
        add(format!("headings weight {v}"), &|w| w.field[6] = v);
    }
    for v in [0.03f32, 0.05, 0.1, 0.2] {
        add(format!("body weight {v}"), &|w| w.field[7] = v);
    }
    for v in [0.5f32, 0.9] {
        add(format!("body b {v}"), &|w| w.b[7] = v);
    }
    for v in [0.5f32, 0.75, 0.9] {
        add(format!("headings b {v}"), &|w| w.b[6] = v);
    }
    for v in [0.5f32, 1.0, 1.25] {
        add(format!("coordination {v}"), &|w| w.coordination = v);
    }
    for v in [0.5f32, 0.6, 0.8, 0.9] {
        add(format!("synonym {v}"), &|w| w.synonym = v);
    }
    for v in [1.0f32, 3.0] {
        add(format!("tags weight {v}"), &|w| w.field[2] = v);
    }
    for v in [0.0f32, 0.5] {
        add(format!("name b {v}"), &|w| {
            w.b[0] = v;
            w.b[1] = v;
        });
    }
    // Pairs of the single changes that came closest on their own.
    for v in [1.4f32, 1.6, 2.0, 2.5] {
        add(format!("k1 {v} + description b 1"), &|w| {
            w.k1 = v;
            w.b[3] = 1.0;
        });
    }
    for v in [0.75f32, 0.9] {
        add(format!("k1 1.6 + description b {v}"), &|w| {
            w.k1 = 1.6;
            w.b[3] = v;
        });
    }
    for v in [0.07f32, 0.1] {
        add(format!("k1 1.6 + body weight {v}"), &|w| {
            w.k1 = 1.6;
            w.field[7] = v;
        });
    }
    // The name weight and description b the ranking had before the body
    // field was added, for comparison.
    add("name 3 + description b 0.75".into(), &|w| {
        w.field[1] = 3.0;
        w.b[3] = 0.75;
    });
    // The general-English lexicon's discount (0: no lexicon).
    for v in [0.0f32, 0.2, 0.25, 0.35, 0.4, 0.5, 0.7] {
        add(format!("lexicon {v}"), &|w| w.lexicon = v);
    }
    let extra: Vec<(String, Weights)> = std::env::var("TUNE_ONLY")
        .ok()
        .map(|only| {
            variants
                .iter()
                .filter(|(l, _)| l == "default" || l.contains(&only))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let variants = if extra.is_empty() { variants } else { extra };
    println!(
        "Development queries only: {} on packages ({} packages), {} on the tool catalog",
        dev.len(),
        packages.len(),
        tools_dev.len()
    );
    for (label, w) in variants {
        let mut index = SkillIndex::build(&hearth_core::builtin::definitions()).with_weights(w);
        for p in &packages {
            hearth_core::discovery::packages::index_package(&mut index, p, true);
        }
        let (p1, _) = collections::recall_at(&index, &dev, 1);
        let (p3, _) = collections::recall_at(&index, &dev, 3);
        let pm = mrr(&index, &dev);
        let tools = SkillIndex::build(&catalog).with_weights(w);
        let (t1, _) = eval::recall_at(&tools, &tools_dev, 1);
        let (t3, _) = eval::recall_at(&tools, &tools_dev, 3);
        println!(
            "  {label:<24} packages r@1 {p1:.3} r@3 {p3:.3} mrr {pm:.3} | tools r@1 {t1:.3} r@3 {t3:.3}"
        );
    }
    if std::env::var("TUNE_MISSES").is_ok() {
        let index = collections::index(&packages);
        let (_, misses) = collections::recall_at(&index, &dev, 3);
        println!("  development misses at 3:");
        for (q, got) in misses {
            println!("    {q:?} -> {got:?}");
        }
        let (_, misses) = collections::recall_at(&index, &dev, 1);
        println!("  development misses at 1:");
        for (q, got) in misses {
            println!("    {q:?} -> {got:?}");
        }
    }
}

/// Writes the package texts the browser bench reads
/// (target/skill-collections/bench-packages.json): the real collections
/// installed, then variants of them up to 1,000.
fn write_packages() -> Vec<PackageText> {
    let installed = collections::installed();
    let real = collections::packages(&installed);
    let packages = collections::scaled_packages(&real, 1_000);
    let texts: Vec<PackageText> = packages.iter().map(package_text).collect();
    let out = collections::root().join("bench-packages.json");
    std::fs::write(&out, serde_json::to_string(&texts).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    println!(
        "{} package texts ({} real) written to {}",
        texts.len(),
        real.len(),
        out.display()
    );
    texts
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` does not run us.
    // A word after `--` picks one part: `packages` (quality on the real
    // collections), `tune` (ranking variants, development queries only),
    // `write-packages` (the browser bench's input, nothing measured).
    if std::env::args().any(|a| a == "packages") {
        package_quality();
        return;
    }
    if std::env::args().any(|a| a == "tune") {
        tune();
        return;
    }
    if std::env::args().any(|a| a == "write-packages") {
        write_packages();
        return;
    }
    quality();
    package_quality();
    latency();
}
