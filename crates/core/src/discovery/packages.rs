//! Agent Skills packages as discovery entries: the text discovery reads
//! from a package (its name, its catalog description, keywords from its
//! metadata and the headings of its SKILL.md body), and keeping the index
//! in step as packages are imported, enabled, disabled and removed, one
//! package at a time.

use super::index::{PackageText, SkillIndex};
use crate::agent_skills::activation::SkillLibrary;
use crate::agent_skills::package::SkillPackage;
use crate::agent_skills::properties::Metadata;

/// The most headings of one SKILL.md that are indexed: a long reference
/// manual should not drown its own description.
pub const MAX_HEADINGS: usize = 40;

/// How many words of a SKILL.md body's opening prose are indexed.
pub const BODY_WORDS: usize = 300;

/// What discovery reads from `package`.
pub fn package_text(package: &SkillPackage) -> PackageText {
    PackageText {
        name: package.name().to_string(),
        description: package.properties.catalog_description(),
        keywords: keywords(&package.properties.metadata),
        headings: headings(&package.body),
        body: prose(&package.body, BODY_WORDS),
    }
}

/// Whether `package` belongs in the index: enabled and visible to the
/// model (`disable-model-invocation` keeps a skill out of its reach).
pub fn is_discoverable(package: &SkillPackage, enabled: bool) -> bool {
    enabled && package.properties.model_invocable()
}

/// Puts one package's entry in step with its state after an import, an
/// edit, or a switch: indexed when discoverable, otherwise removed.
pub fn index_package(index: &mut SkillIndex, package: &SkillPackage, enabled: bool) {
    if is_discoverable(package, enabled) {
        index.upsert_package(&package_text(package));
    } else {
        index.remove_package(package.name());
    }
}

/// Puts one package in step after an import, an edit, a switch or a
/// removal: the library of enabled packages gains, replaces or loses that
/// package alone, and so does the index when there is one. `state` is the
/// package as installed now with whether it is enabled, or `None` once it
/// was removed. Nothing else in the library is copied or re-read.
pub fn sync_package(
    library: &mut SkillLibrary,
    index: Option<&mut SkillIndex>,
    name: &str,
    state: Option<(&SkillPackage, bool)>,
) {
    match state {
        Some((package, true)) => {
            if package.name() != name {
                library.remove(name);
            }
            library.insert(package.clone());
        }
        _ => {
            library.remove(name);
        }
    }
    if let Some(index) = index {
        match state {
            Some((package, enabled)) => {
                if package.name() != name {
                    index.remove_package(name);
                }
                index_package(index, package, enabled);
            }
            None => {
                index.remove_package(name);
            }
        }
    }
}

/// Indexes every discoverable package of `library` (all enabled), e.g.
/// at start-up or after a restore replaced them all. Packages of the
/// index that `library` no longer holds are removed.
pub fn index_library(index: &mut SkillIndex, library: &SkillLibrary) {
    let gone: Vec<String> = index
        .packages()
        .filter(|p| library.get(&p.name).is_none())
        .map(|p| p.name.clone())
        .collect();
    for name in gone {
        index.remove_package(&name);
    }
    for package in library.iter() {
        index_package(index, package, true);
    }
}

/// Metadata values that describe what a skill is for: keys naming
/// keywords, tags, topics or a short description. Authors, versions and
/// licences say nothing about the task.
fn keywords(metadata: &Metadata) -> Vec<String> {
    let mut out = Vec::new();
    for (key, value) in &metadata.0 {
        let key = key.to_ascii_lowercase();
        let describes = ["keyword", "tag", "topic", "short-description", "category"]
            .iter()
            .any(|k| key.contains(k));
        if !describes {
            continue;
        }
        match value {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(items) => out.extend(
                items
                    .iter()
                    .filter_map(serde_json::Value::as_str)
                    .map(str::to_string),
            ),
            _ => {}
        }
    }
    out
}

/// The first `limit` words of a Markdown body's prose: outside fenced
/// code blocks, and without headings, table rows or indented code.
fn prose(body: &str, limit: usize) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut fence: Option<&str> = None;
    for line in body.lines() {
        let trimmed = line.trim_start();
        if let Some(mark) = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m)) {
            fence = match fence {
                Some(open) if open == mark => None,
                None => Some(mark),
                other => other,
            };
            continue;
        }
        if fence.is_some()
            || line.starts_with("    ")
            || line.starts_with('\t')
            || trimmed.starts_with('#')
            || trimmed.starts_with('|')
        {
            continue;
        }
        for w in trimmed.split_whitespace() {
            if out.len() == limit {
                return out.join(" ");
            }
            out.push(w);
        }
    }
    out.join(" ")
}

/// The ATX headings (`#` to `######`) of a Markdown body, outside fenced
/// code blocks, without their marks, at most [`MAX_HEADINGS`].
fn headings(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fence: Option<&str> = None;
    for line in body.lines() {
        let trimmed = line.trim_start();
        for mark in ["```", "~~~"] {
            if trimmed.starts_with(mark) {
                fence = match fence {
                    Some(open) if open == mark => None,
                    None => Some(mark),
                    other => other,
                };
            }
        }
        if fence.is_some() || line.starts_with("    ") {
            continue;
        }
        let level = trimmed.bytes().take_while(|b| *b == b'#').count();
        if !(1..=6).contains(&level) {
            continue;
        }
        let rest = &trimmed[level..];
        if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
            continue;
        }
        let text = rest.trim().trim_end_matches('#').trim();
        if !text.is_empty() {
            out.push(text.to_string());
            if out.len() == MAX_HEADINGS {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_skills::properties::SkillProperties;
    use serde_json::json;

    #[test]
    fn headings_skip_code_and_keep_the_text() {
        let body = "# PDF tools\n\nIntro.\n\n## Merge files ##\n```sh\n# not a heading\n```\n#hashtag\n    # indented code\n### Fill forms\n";
        assert_eq!(headings(body), ["PDF tools", "Merge files", "Fill forms"]);
        let many: String = (0..60).map(|i| format!("## Part {i}\n")).collect();
        assert_eq!(headings(&many).len(), MAX_HEADINGS);
    }

    #[test]
    fn only_describing_metadata_counts_as_keywords() {
        let metadata = Metadata(vec![
            ("author".into(), json!("Ada")),
            ("keywords".into(), json!(["invoice", "receipt"])),
            ("short-description".into(), json!("Read scanned bills")),
            ("version".into(), json!("1.0")),
        ]);
        assert_eq!(
            keywords(&metadata),
            ["invoice", "receipt", "Read scanned bills"]
        );
    }

    fn package(name: &str, description: &str) -> SkillPackage {
        SkillPackage {
            folder: name.into(),
            properties: SkillProperties::new(name, description),
            body: String::new(),
            files: Vec::new(),
            tools: Vec::new(),
            resources: Vec::new(),
        }
    }

    fn names(library: &SkillLibrary) -> Vec<&str> {
        library.iter().map(SkillPackage::name).collect()
    }

    fn found(index: &SkillIndex, query: &str) -> Vec<String> {
        index
            .search(query, None, 5, &|_| true)
            .iter()
            .filter_map(|h| h.package().map(|p| p.name.clone()))
            .collect()
    }

    /// Import, re-import, disable, enable and remove each touch the one
    /// package: the library and the index end as a fresh build of what is
    /// installed and enabled would be.
    #[test]
    fn each_change_keeps_library_and_index_in_step() {
        let invoices = package("invoice-reader", "Read scanned invoices and receipts.");
        let slides = package("slide-maker", "Build presentation slides from an outline.");
        let mut library = SkillLibrary::default();
        let mut index = SkillIndex::new();
        // Import two.
        for p in [&invoices, &slides] {
            sync_package(&mut library, Some(&mut index), p.name(), Some((p, true)));
        }
        assert_eq!(names(&library), ["invoice-reader", "slide-maker"]);
        assert_eq!(found(&index, "receipts"), ["invoice-reader"]);
        // Re-import with new words: replaced in place, old words gone.
        let edited = package("invoice-reader", "Extract totals from supplier bills.");
        sync_package(
            &mut library,
            Some(&mut index),
            "invoice-reader",
            Some((&edited, true)),
        );
        assert_eq!(names(&library), ["invoice-reader", "slide-maker"]);
        assert_eq!(
            library
                .get("invoice-reader")
                .unwrap()
                .properties
                .description,
            "Extract totals from supplier bills."
        );
        assert!(found(&index, "scanned").is_empty());
        assert_eq!(found(&index, "supplier bills"), ["invoice-reader"]);
        // Disable: out of both; enable: back in both.
        sync_package(
            &mut library,
            Some(&mut index),
            "slide-maker",
            Some((&slides, false)),
        );
        assert_eq!(names(&library), ["invoice-reader"]);
        assert!(!index.contains_package("slide-maker"));
        assert!(found(&index, "presentation slides").is_empty());
        sync_package(
            &mut library,
            Some(&mut index),
            "slide-maker",
            Some((&slides, true)),
        );
        assert!(library.get("slide-maker").is_some());
        assert_eq!(found(&index, "presentation slides"), ["slide-maker"]);
        // Remove.
        sync_package(&mut library, Some(&mut index), "invoice-reader", None);
        assert_eq!(names(&library), ["slide-maker"]);
        assert!(!index.contains_package("invoice-reader"));
        assert!(found(&index, "supplier bills").is_empty());
        // The same state as indexing what is left from scratch.
        let mut fresh = SkillIndex::new();
        index_library(&mut fresh, &library);
        for q in ["slides", "invoices", "outline presentation"] {
            assert_eq!(found(&index, q), found(&fresh, q), "{q}");
        }
        // Before the index exists, the library alone follows.
        sync_package(&mut library, None, "slide-maker", None);
        assert!(library.is_empty());
    }

    #[test]
    fn hidden_and_disabled_packages_stay_out() {
        let mut package = SkillPackage {
            folder: "deploy".into(),
            properties: SkillProperties::new("deploy", "Ship the site to production."),
            body: String::new(),
            files: Vec::new(),
            tools: Vec::new(),
            resources: Vec::new(),
        };
        let mut index = SkillIndex::new();
        index_package(&mut index, &package, false);
        assert!(!index.contains_package("deploy"));
        index_package(&mut index, &package, true);
        assert!(index.contains_package("deploy"));
        package.properties.disable_model_invocation = true;
        index_package(&mut index, &package, true);
        assert!(!index.contains_package("deploy"));
    }
}
