//! Property tests: the SKILL.md parser, the path gate, the archive reader
//! and the scanner never panic, whatever they are given, and what the path
//! gate lets through is always a safe relative path.
//!
//! `cargo xtask test` runs a fixed number of cases (`PROPTEST_CASES`);
//! `cargo xtask fuzz` runs many more, in release.

use std::io::{Cursor, Write};

use hearth_agent_skills::archive;
use hearth_agent_skills::paths;
use hearth_agent_skills::scan::{ScanOptions, SourceFile, scan};
use hearth_agent_skills::{SkillMdSource, ValidationMode, parse_skill_md};
use proptest::prelude::*;

/// Pieces real frontmatter is made of, plus the usual ways it goes wrong.
fn yaml_line() -> impl Strategy<Value = String> {
    let keys = prop::sample::select(vec![
        "name",
        "description",
        "license",
        "compatibility",
        "metadata",
        "allowed-tools",
        "when_to_use",
        "argument-hint",
        "disable-model-invocation",
        "user-invocable",
        "version",
        "  author",
        "  nested",
        "    deep",
        "- item",
        "? key",
        "",
        "<<",
        "&a x",
        "*a",
    ]);
    let values = prop::sample::select(vec![
        "",
        " my-skill",
        " Use when: the user asks",
        " >",
        " |-",
        " \"quoted: \\\"x\\\"\"",
        " 'it''s'",
        " [a, b",
        " {a: 1}",
        " true",
        " no",
        " 1.0",
        " 0755",
        " ~",
        " &anchor v",
        " *anchor",
        " !!binary aGk=",
        " !custom x",
        " ---",
        " ...",
        " # comment",
        "\t tab",
        " \u{feff}bom",
        " é漢字🙂",
        " - a",
        ": :",
        " %YAML 1.2",
    ]);
    (keys, prop::bool::ANY, values, ".{0,12}")
        .prop_map(|(k, colon, v, noise)| format!("{k}{}{v}{noise}", if colon { ":" } else { "" }))
}

fn frontmatter_doc() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(yaml_line(), 0..24),
        prop::bool::ANY,
        ".{0,40}",
    )
        .prop_map(|(lines, close, body)| {
            let mut doc = String::from("---\n");
            for l in lines {
                doc.push_str(&l);
                doc.push('\n');
            }
            if close {
                doc.push_str("---\n");
            }
            doc.push_str(&body);
            doc
        })
}

fn parse_both_modes(text: &str, folder: Option<&str>) {
    for mode in [ValidationMode::Strict, ValidationMode::Lenient] {
        let parsed = parse_skill_md(
            SkillMdSource {
                text,
                file: "x/SKILL.md",
                folder,
            },
            mode,
        );
        // A usable skill always has a non-empty description.
        if let Some(p) = &parsed.properties {
            assert!(!p.description.trim().is_empty());
        }
        // Lenient mode skips only with an error saying why.
        if mode == ValidationMode::Lenient && parsed.properties.is_none() {
            assert!(parsed.has_errors(), "skipped without an error: {text:?}");
        }
    }
}

proptest! {
    #[test]
    fn the_parser_never_panics_on_any_text(text in ".*", folder in proptest::option::of("[a-z-]{0,10}")) {
        parse_both_modes(&text, folder.as_deref());
    }

    #[test]
    fn the_parser_never_panics_on_frontmatter_shaped_text(doc in frontmatter_doc()) {
        parse_both_modes(&doc, Some("my-skill"));
    }

    #[test]
    fn the_parser_never_panics_on_arbitrary_bytes_as_text(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let text = String::from_utf8_lossy(&bytes);
        parse_both_modes(&format!("---\n{text}\n---\n"), None);
    }

    #[test]
    fn accepted_paths_are_safe_and_normalising_twice_changes_nothing(
        path in prop_oneof![
            ".*",
            "[a-z./\\\\%:~ ]{0,24}",
            prop::collection::vec(prop::sample::select(vec!["..", ".", "", "a", "b.md", "%2e", "\u{FF0E}", "\\", "C:", "~"]), 0..8)
                .prop_map(|parts| parts.join("/")),
        ]
    ) {
        if let Ok(p) = paths::normalize(&path) {
            prop_assert!(!p.is_empty());
            prop_assert!(!p.starts_with('/'));
            prop_assert!(!p.contains('\\') && !p.contains('%') && !p.contains(':') && !p.contains('\0'));
            prop_assert!(p.split('/').all(|part| !part.is_empty() && part != "." && part != ".."));
            prop_assert!(p.len() <= paths::MAX_PATH_BYTES);
            prop_assert_eq!(paths::normalize(&p), Ok(p.clone()));
        }
        let _ = paths::normalize_import(&path);
    }

    #[test]
    fn the_archive_reader_never_panics_on_garbage(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let _ = archive::read_archive(&bytes);
    }

    #[test]
    fn the_archive_reader_never_panics_on_damaged_zips(
        names in prop::collection::vec("[a-zA-Z0-9./\\\\_-]{1,20}", 1..5),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
    ) {
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for name in &names {
            let opts = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated);
            if w.start_file(name.as_str(), opts).is_ok() {
                let _ = w.write_all(b"---\nname: x\ndescription: y\n---\n");
            }
        }
        let mut bytes = w.finish().unwrap().into_inner();
        for (i, b) in flips {
            let at = i.index(bytes.len());
            bytes[at] ^= b;
        }
        let _ = archive::import_archive(&bytes, "x.zip", ValidationMode::Lenient);
    }

    #[test]
    fn the_scanner_never_panics_on_odd_trees(
        files in prop::collection::vec(
            ("[a-zA-Z0-9._/ -]{0,30}", prop_oneof![frontmatter_doc().prop_map(String::into_bytes), prop::collection::vec(any::<u8>(), 0..64)]),
            0..12,
        ),
        skill_dirs in prop::collection::vec("[a-z.]{1,6}(/[a-z]{1,4}){0,7}", 0..4),
    ) {
        let mut tree: Vec<SourceFile> = files.into_iter().map(|(p, b)| SourceFile::new(p, b)).collect();
        for d in skill_dirs {
            tree.push(SourceFile::new(format!("{d}/SKILL.md"), "---\nname: a\ndescription: b\n---\n"));
        }
        for mode in [ValidationMode::Strict, ValidationMode::Lenient] {
            let out = scan(tree.clone(), &ScanOptions { mode, root_name: Some("root".into()) });
            // Names are unique in what a scan returns.
            let mut names: Vec<&str> = out.packages.iter().map(|p| p.name()).collect();
            names.sort();
            let before = names.len();
            names.dedup();
            prop_assert_eq!(before, names.len());
        }
    }
}
