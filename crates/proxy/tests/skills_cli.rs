//! `hearth skills validate | read-properties | to-prompt`, run as the built
//! binary against fixture folders and temporary ones: exit codes, stdout
//! and stderr compared as whole text, in the shapes `skills-ref` prints.

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../agent-skills/tests/fixtures")
}

/// (exit code, stdout, stderr)
fn hearth(args: &[&str], cwd: Option<&Path>) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hearth"));
    cmd.arg("skills").args(args);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let out = cmd.output().expect("run hearth");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn write_skill(root: &Path, folder: &str, skill_md: &str) -> PathBuf {
    let dir = root.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), skill_md).unwrap();
    dir
}

#[test]
fn validate_accepts_a_valid_skill() {
    let dir = fixtures().join("rules/valid-all-spec-fields/pdf-processing");
    let shown = dir.display().to_string();
    assert_eq!(
        hearth(&["validate", &shown], None),
        (0, format!("Valid skill: {shown}\n"), String::new())
    );
    // Its SKILL.md stands for the folder.
    let file = dir.join("SKILL.md").display().to_string();
    assert_eq!(
        hearth(&["validate", &file], None),
        (0, format!("Valid skill: {shown}\n"), String::new())
    );
}

#[test]
fn validate_lists_every_problem_and_exits_1() {
    let dir = fixtures().join("rules/name-uppercase/MySkill");
    let shown = dir.display().to_string();
    assert_eq!(
        hearth(&["validate", &shown], None),
        (
            1,
            String::new(),
            format!(
                "Validation failed for {shown}:\n  - SKILL.md:2: name: 'MySkill' must be lowercase\n"
            )
        )
    );

    let tmp = tempfile::tempdir().unwrap();
    let dir = write_skill(
        tmp.path(),
        "wrong-folder",
        "---\nname: -Bad--name\ndescription: Use when: things\ncompatibility:\n---\n",
    );
    let shown = dir.display().to_string();
    assert_eq!(
        hearth(&["validate", &shown], None),
        (
            1,
            String::new(),
            format!(
                "Validation failed for {shown}:\n  - SKILL.md:3: invalid YAML: mapping values are not allowed in this context; the value of 'description' contains ': ' and must be quoted\n"
            )
        )
    );
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: -Bad--name\ndescription: ok\ncompatibility:\nextra: 1\n---\n",
    )
    .unwrap();
    assert_eq!(
        hearth(&["validate", &shown], None),
        (
            1,
            String::new(),
            format!(
                "Validation failed for {shown}:\n\
                 \x20 - SKILL.md:5: extra: unknown field 'extra' (allowed: name, description, license, compatibility, metadata, allowed-tools)\n\
                 \x20 - SKILL.md:2: name: '-Bad--name' must be lowercase\n\
                 \x20 - SKILL.md:2: name: '-Bad--name' must not start or end with a hyphen\n\
                 \x20 - SKILL.md:2: name: '-Bad--name' must not contain consecutive hyphens\n\
                 \x20 - SKILL.md:2: name: '-Bad--name' does not match the folder name 'wrong-folder'\n\
                 \x20 - SKILL.md:4: compatibility: is empty; give it a value or remove it\n"
            )
        )
    );
}

#[test]
fn validate_reports_missing_paths_files_and_skill_md() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nope").display().to_string();
    assert_eq!(
        hearth(&["validate", &missing], None),
        (
            1,
            String::new(),
            format!("Validation failed for {missing}:\n  - Path does not exist: {missing}\n")
        )
    );
    let file = tmp.path().join("notes.txt");
    std::fs::write(&file, "x").unwrap();
    let file = file.display().to_string();
    assert_eq!(
        hearth(&["validate", &file], None),
        (
            1,
            String::new(),
            format!("Validation failed for {file}:\n  - Not a directory: {file}\n")
        )
    );
    let empty = tmp.path().join("empty-skill");
    std::fs::create_dir(&empty).unwrap();
    let empty = empty.display().to_string();
    assert_eq!(
        hearth(&["validate", &empty], None),
        (
            1,
            String::new(),
            format!(
                "Validation failed for {empty}:\n  - SKILL.md: missing required file: SKILL.md\n"
            )
        )
    );
}

#[test]
fn validate_dot_uses_the_folders_real_name_and_prints_warnings() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_skill(
        tmp.path(),
        "my-skill",
        "---\nname: my-skill\ndescription: Nested metadata is kept.\nmetadata:\n  tags: [a, b]\n---\nBody\n",
    );
    assert_eq!(
        hearth(&["validate", "."], Some(&dir)),
        (
            0,
            "Valid skill: .\n".into(),
            "warning: SKILL.md:5: metadata.tags: is a list; the specification expects string values (kept as is)\n".into()
        )
    );
}

#[test]
fn validate_checks_tools_json_too() {
    let dir = fixtures().join("rules/tools-invalid-json/data-tools");
    let shown = dir.display().to_string();
    assert_eq!(
        hearth(&["validate", &shown], None),
        (
            1,
            String::new(),
            format!(
                "Validation failed for {shown}:\n  - tools.json:3: invalid JSON: trailing comma (column 18)\n"
            )
        )
    );
}

#[test]
fn read_properties_prints_json_in_the_reference_order() {
    let dir = fixtures().join("rules/valid-all-spec-fields/pdf-processing");
    let (code, stdout, stderr) = hearth(&["read-properties", &dir.display().to_string()], None);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(
        stdout,
        r#"{
  "name": "pdf-processing",
  "description": "Extract PDF text, fill forms, merge files. Use when handling PDFs.",
  "license": "Apache-2.0",
  "compatibility": "Requires Python 3.12+ and network access",
  "allowed-tools": "Bash(git log:*) Bash(jq:*) Read",
  "metadata": {
    "author": "example-org",
    "version": "1.0"
  }
}
"#
    );
}

#[test]
fn read_properties_loads_leniently_and_fails_only_where_a_client_would_skip() {
    let dir = fixtures().join("rules/unquoted-colon/pdf-helper");
    assert_eq!(
        hearth(&["read-properties", &dir.display().to_string()], None),
        (
            0,
            "{\n  \"name\": \"pdf-helper\",\n  \"description\": \"Use this skill when: the user asks about PDFs\"\n}\n".into(),
            "warning: SKILL.md:3: description: the value contains ': ' but is not quoted; read it as if it were quoted\n".into()
        )
    );
    let dir = fixtures().join("rules/description-missing/my-skill");
    assert_eq!(
        hearth(&["read-properties", &dir.display().to_string()], None),
        (
            1,
            String::new(),
            "Error: SKILL.md: description: missing required field; the skill is skipped\n".into()
        )
    );
}

#[test]
fn to_prompt_prints_the_catalog_with_locations() {
    let tmp = tempfile::tempdir().unwrap();
    let a = write_skill(
        tmp.path(),
        "skill-a",
        "---\nname: skill-a\ndescription: Use <foo> & <bar> tags\n---\nBody\n",
    );
    let b = write_skill(
        tmp.path(),
        "skill-b",
        "---\nname: skill-b\ndescription: Second skill\n---\n",
    );
    let loc = |d: &Path| {
        std::fs::canonicalize(d.join("SKILL.md"))
            .unwrap()
            .display()
            .to_string()
    };
    let b_file = b.join("SKILL.md").display().to_string();
    assert_eq!(
        hearth(&["to-prompt", &a.display().to_string(), &b_file], None),
        (
            0,
            format!(
                "<available_skills>\n<skill>\n<name>\nskill-a\n</name>\n<description>\nUse &lt;foo&gt; &amp; &lt;bar&gt; tags\n</description>\n<location>\n{}\n</location>\n</skill>\n<skill>\n<name>\nskill-b\n</name>\n<description>\nSecond skill\n</description>\n<location>\n{}\n</location>\n</skill>\n</available_skills>\n",
                loc(&a),
                loc(&b)
            ),
            String::new()
        )
    );
    let missing = tmp.path().join("missing").display().to_string();
    assert_eq!(
        hearth(&["to-prompt", &a.display().to_string(), &missing], None),
        (
            1,
            String::new(),
            format!("Error: Path does not exist: {missing}\n")
        )
    );
}
