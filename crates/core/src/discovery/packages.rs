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

/// What discovery reads from `package`.
pub fn package_text(package: &SkillPackage) -> PackageText {
    PackageText {
        name: package.name().to_string(),
        description: package.properties.catalog_description(),
        keywords: keywords(&package.properties.metadata),
        headings: headings(&package.body),
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
