//! Attacks on `read_skill_file`: every path that could leave the package's
//! folder, hide a separator or dot in look-alike Unicode, or smuggle an
//! escape through encoding is refused with a message that says why. The
//! library holds a second skill with a secret, which no path reaches.

use hearth_core::CallOrigin;
use hearth_core::agent_skills::ValidationMode;
use hearth_core::agent_skills::activation::{self, ConversationSkills, SkillLibrary};
use hearth_core::agent_skills::package::{PackageFile, PackageSource, load_package};

fn package(name: &str, files: &[(&str, &[u8])]) -> hearth_core::agent_skills::SkillPackage {
    let mut all = vec![PackageFile::new(
        "SKILL.md",
        format!("---\nname: {name}\ndescription: The {name} skill.\n---\nBody\n").into_bytes(),
    )];
    all.extend(files.iter().map(|(p, b)| PackageFile::new(*p, b.to_vec())));
    load_package(
        all,
        PackageSource {
            folder: Some(name),
            display_prefix: "",
        },
        ValidationMode::Strict,
    )
    .package
    .unwrap()
}

#[test]
fn hostile_paths_are_refused_with_the_reason() {
    let library = SkillLibrary::from_packages(vec![
        package(
            "reader",
            &[
                ("references/FORMS.md", b"# Forms\n"),
                ("assets/logo.png", b"\x89PNG\r\n\x1a\n"),
            ],
        ),
        package("victim", &[("secret.md", b"the secret\n")]),
    ]);
    let mut state = ConversationSkills::default();
    activation::activate_skill(&library, &mut state, "reader", CallOrigin::Model).unwrap();

    let deep = "a/".repeat(40) + "x.md";
    let long_name = "x".repeat(300);
    let long_path = "ab/".repeat(400);
    let deep_message = format!("cannot read '{deep}': the path goes more than 32 folders deep");
    let long_name_message = format!(
        "cannot read '{long_name}': a name in the path is 300 bytes long; at most 255 are allowed"
    );
    let long_path_message =
        format!("cannot read '{long_path}': the path is 1200 bytes long; at most 1024 are allowed");
    let cases: Vec<(&str, &str)> = vec![
        (
            "../victim/secret.md",
            "cannot read '../victim/secret.md': '..' is not allowed: paths must stay inside the skill's folder",
        ),
        (
            "references/../../victim/secret.md",
            "cannot read 'references/../../victim/secret.md': '..' is not allowed: paths must stay inside the skill's folder",
        ),
        (
            "references/./../..",
            "cannot read 'references/./../..': '..' is not allowed: paths must stay inside the skill's folder",
        ),
        (
            "/etc/passwd",
            "cannot read '/etc/passwd': absolute paths are not allowed; give a path relative to the skill's folder",
        ),
        (
            "//server/share/secret.md",
            "cannot read '//server/share/secret.md': absolute paths are not allowed; give a path relative to the skill's folder",
        ),
        (
            "C:\\Windows\\win.ini",
            "cannot read 'C:\\\\Windows\\\\win.ini': ':' is not allowed (it could be a drive letter, a URL scheme or a stream name)",
        ),
        (
            "references\\..\\..\\victim\\secret.md",
            "cannot read 'references\\\\..\\\\..\\\\victim\\\\secret.md': backslashes are not allowed; use '/' between folders",
        ),
        (
            "\\u002e\\u002e/victim/secret.md",
            "cannot read '\\\\u002e\\\\u002e/victim/secret.md': backslashes are not allowed; use '/' between folders",
        ),
        (
            "%2e%2e/victim/secret.md",
            "cannot read '%2e%2e/victim/secret.md': '%' is not allowed: give the path as plain text, not percent-encoded",
        ),
        (
            "..%2fvictim%2fsecret.md",
            "cannot read '..%2fvictim%2fsecret.md': '%' is not allowed: give the path as plain text, not percent-encoded",
        ),
        (
            "references%00.md",
            "cannot read 'references%00.md': '%' is not allowed: give the path as plain text, not percent-encoded",
        ),
        (
            "references/FORMS.md\0.png",
            "cannot read 'references/FORMS.md\\0.png': control character U+0000 is not allowed",
        ),
        (
            "references/FORMS.md\n",
            "cannot read 'references/FORMS.md\\n': control character U+000A is not allowed",
        ),
        (
            "\u{FF0E}\u{FF0E}/victim/secret.md",
            "cannot read '．．/victim/secret.md': character U+FF0E is not allowed in a path",
        ),
        (
            "..\u{FF0F}victim\u{FF0F}secret.md",
            "cannot read '..／victim／secret.md': character U+FF0F is not allowed in a path",
        ),
        (
            "..\u{FF3C}victim\u{FF3C}secret.md",
            "cannot read '..＼victim＼secret.md': character U+FF3C is not allowed in a path",
        ),
        (
            "\u{2024}\u{2024}/victim/secret.md",
            "cannot read '․․/victim/secret.md': character U+2024 is not allowed in a path",
        ),
        (
            "\u{2025}/victim/secret.md",
            "cannot read '‥/victim/secret.md': character U+2025 is not allowed in a path",
        ),
        (
            "\u{FE52}\u{FE52}/victim/secret.md",
            "cannot read '﹒﹒/victim/secret.md': character U+FE52 is not allowed in a path",
        ),
        (
            "references\u{2215}..\u{2215}secret.md",
            "cannot read 'references∕..∕secret.md': character U+2215 is not allowed in a path",
        ),
        (
            "references\u{2044}..\u{2044}secret.md",
            "cannot read 'references⁄..⁄secret.md': character U+2044 is not allowed in a path",
        ),
        (
            "references/\u{202E}dm.SMROF",
            "cannot read 'references/\\u{202e}dm.SMROF': character U+202E is not allowed in a path",
        ),
        (
            "references/\u{200B}FORMS.md",
            "cannot read 'references/\\u{200b}FORMS.md': character U+200B is not allowed in a path",
        ),
        (
            "\u{FEFF}references/FORMS.md",
            "cannot read '\\u{feff}references/FORMS.md': character U+FEFF is not allowed in a path",
        ),
        (
            "references/FORMS\u{3000}.md",
            "cannot read 'references/FORMS\\u{3000}.md': character U+3000 is not allowed in a path",
        ),
        (
            "~/.ssh/id_rsa",
            "cannot read '~/.ssh/id_rsa': '~' at the start of a name is not allowed",
        ),
        (
            "file:///etc/passwd",
            "cannot read 'file:///etc/passwd': ':' is not allowed (it could be a drive letter, a URL scheme or a stream name)",
        ),
        (
            "https://example.com/x.md",
            "cannot read 'https://example.com/x.md': ':' is not allowed (it could be a drive letter, a URL scheme or a stream name)",
        ),
        (
            "references/FORMS.md:$DATA",
            "cannot read 'references/FORMS.md:$DATA': ':' is not allowed (it could be a drive letter, a URL scheme or a stream name)",
        ),
        (
            "...",
            "cannot read '...': a name made only of dots ('...') is not allowed",
        ),
        (
            "references/ FORMS.md",
            "cannot read 'references/ FORMS.md': names must not start or end with a space",
        ),
        ("", "cannot read '': the path is empty"),
        (".", "cannot read '.': the path is empty"),
        (
            "references/",
            "cannot read 'references/': the path names a folder, not a file",
        ),
        (&deep, &deep_message),
        (&long_name, &long_name_message),
        (&long_path, &long_path_message),
        // Look-alike letters and other spellings are simply other names.
        (
            "\u{FF52}eferences/FORMS.md",
            "skill 'reader' has no file 'ｒeferences/FORMS.md'; its files: references/FORMS.md",
        ),
        (
            "REFERENCES/forms.md",
            "skill 'reader' has no file 'REFERENCES/forms.md'; its files: references/FORMS.md",
        ),
        (
            "secret.md",
            "skill 'reader' has no file 'secret.md'; its files: references/FORMS.md",
        ),
        // Binary files never reach the model.
        (
            "assets/logo.png",
            "'assets/logo.png' is a binary file (8 bytes); binary files are never sent to the model",
        ),
    ];
    assert!(cases.len() >= 20);
    let max = activation::DEFAULT_MAX_READ_BYTES;
    let got: Vec<(String, String)> = cases
        .iter()
        .map(|(path, _)| {
            let message = match activation::read_skill_file(&library, &state, "reader", path, max) {
                Ok(text) => format!("READ: {text}"),
                Err(e) => e.to_string(),
            };
            (path.to_string(), message)
        })
        .collect();
    let want: Vec<(String, String)> = cases
        .iter()
        .map(|(p, m)| (p.to_string(), m.to_string()))
        .collect();
    assert_eq!(got, want);

    // The other skill's secret is out of reach even by name: it is not active.
    assert_eq!(
        activation::read_skill_file(&library, &state, "victim", "secret.md", max)
            .unwrap_err()
            .to_string(),
        "skill 'victim' is not active in this conversation; call activate_skill first"
    );
    // Ordinary spellings of a real file still work.
    for ok in [
        "references/FORMS.md",
        "./references/FORMS.md",
        "references//FORMS.md",
    ] {
        assert_eq!(
            activation::read_skill_file(&library, &state, "reader", ok, max).as_deref(),
            Ok("# Forms\n"),
            "{ok}"
        );
    }
}
