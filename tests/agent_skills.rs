//! Agent Skills in the browser: packages stored in IndexedDB survive a
//! restart with their bytes intact, re-importing replaces in place,
//! removal takes every file with it, and the skill tools run through the
//! app's one call path (registry, permission, activity log).
#![cfg(target_arch = "wasm32")]

use hearth::agent_skills::{
    AgentSkills, PackageOrigin, common_root, scan_archive, scan_folder, store_outcome,
};
use hearth::runtime::Runtime;
use hearth::storage::Db;
use hearth_core::agent_skills::archive::write_package_zip;
use hearth_core::agent_skills::package::FileKind;
use hearth_core::agent_skills::scan::SourceFile;
use hearth_core::discovery::SkillIndex;
use hearth_core::stores::{ACTIVITY, SKILL_FILES, SKILL_PACKAGES, current_schema};
use hearth_core::{CallOrigin, SkillId, SkillKind, SourceKey, Tier, ToolStatus};
use serde_json::{Value, json};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

async fn fresh(name: &str) -> Db {
    let _ = Db::delete_database(name).await;
    Db::open_with(name, current_schema()).await.expect("open")
}

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\xff";

fn team_folder(description: &str) -> Vec<SourceFile> {
    vec![
        SourceFile::new(
            "team/pdf-tools/SKILL.md",
            format!(
                "---\nname: pdf-tools\ndescription: {description}\n---\nRead references/REFERENCE.md first.\n"
            ),
        ),
        SourceFile::new(
            "team/pdf-tools/references/REFERENCE.md",
            "# Fields\nUse /Yes.\n",
        ),
        SourceFile::new("team/pdf-tools/assets/logo.png", PNG.to_vec()),
        SourceFile::new(
            "team/pdf-tools/tools.json",
            r#"[{"name": "word_count", "description": "Count words", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}, "script": "scripts/word_count.py"}]"#,
        ),
        SourceFile::new(
            "team/pdf-tools/scripts/word_count.py",
            "import json,sys\nprint(json.dumps({'words': len(json.load(sys.stdin)['text'].split())}))\n",
        ),
        SourceFile::new(
            "team/.curated/notes/SKILL.md",
            "---\nname: release-notes\ndescription: Write release notes.\n---\nGroup by kind.\n",
        ),
        SourceFile::new(
            "team/broken/SKILL.md",
            "---\nname: broken\n---\nNo description.\n",
        ),
    ]
}

async fn invoke(rt: &Runtime, id: &str, args: Value) -> hearth_core::ToolResult {
    rt.invoke(SkillId::new(id).unwrap(), args, CallOrigin::User)
        .await
        .1
}

#[wasm_bindgen_test]
async fn a_folder_import_is_stored_reported_per_package_and_survives_a_restart() {
    let name = "test-agent-skills-folder";
    let db = fresh(name).await;
    let (skills, broken) = AgentSkills::load(&db).await.unwrap();
    assert_eq!(broken, Vec::<String>::new());

    let files = team_folder("Work with PDF files.");
    assert_eq!(common_root(&files).as_deref(), Some("team"));
    let report = store_outcome(
        &skills,
        &db,
        scan_folder(files, None),
        |_| PackageOrigin::Folder {
            name: "team".into(),
        },
        1.0,
    )
    .await
    .unwrap();
    let imported: Vec<(String, bool, Vec<String>)> = report
        .imported
        .iter()
        .map(|(n, replaced, problems)| {
            (
                n.clone(),
                *replaced,
                problems.iter().map(ToString::to_string).collect(),
            )
        })
        .collect();
    assert_eq!(
        imported,
        vec![
            ("pdf-tools".to_string(), false, vec![]),
            (
                "release-notes".to_string(),
                false,
                vec![
                    "team/.curated/notes/SKILL.md:2: name: 'release-notes' does not match the folder name 'notes'"
                        .to_string()
                ]
            ),
        ]
    );
    let rejected: Vec<String> = report.rejected.iter().map(ToString::to_string).collect();
    assert_eq!(rejected.len(), 1, "{rejected:?}");
    assert!(
        rejected[0].starts_with("team/broken/SKILL.md"),
        "{rejected:?}"
    );
    assert_eq!(db.count(SKILL_PACKAGES).await.unwrap(), 2);
    assert_eq!(db.count(SKILL_FILES).await.unwrap(), 6);
    db.close();

    // A restart reads everything back, binary bytes included.
    let db = Db::open_with(name, current_schema()).await.unwrap();
    let (skills, broken) = AgentSkills::load(&db).await.unwrap();
    assert_eq!(broken, Vec::<String>::new());
    let pdf = skills.get("pdf-tools").unwrap();
    let logo = pdf.package.file("assets/logo.png").unwrap();
    assert_eq!((logo.kind, logo.bytes.as_slice()), (FileKind::Binary, PNG));
    assert_eq!(pdf.package.tools.len(), 1);
    assert_eq!(
        pdf.record.origin,
        PackageOrigin::Folder {
            name: "team".into()
        }
    );
    db.close();
}

#[wasm_bindgen_test]
async fn reimport_replaces_in_place_and_remove_takes_every_file() {
    let db = fresh("test-agent-skills-replace").await;
    let (skills, _) = AgentSkills::load(&db).await.unwrap();
    let origin = |_: &_| PackageOrigin::Folder {
        name: "team".into(),
    };
    store_outcome(
        &skills,
        &db,
        scan_folder(team_folder("First."), None),
        origin,
        1.0,
    )
    .await
    .unwrap();
    // The second version drops the logo.
    let mut second = team_folder("Second.");
    second.retain(|f| !f.path.ends_with("logo.png"));
    let report = store_outcome(&skills, &db, scan_folder(second, None), origin, 2.0)
        .await
        .unwrap();
    assert!(report.imported.iter().all(|(_, replaced, _)| *replaced));
    let pdf = skills.get("pdf-tools").unwrap();
    assert_eq!(pdf.package.properties.description, "Second.");
    assert_eq!(pdf.package.file("assets/logo.png"), None);
    assert_eq!(db.count(SKILL_FILES).await.unwrap(), 5);

    let removed = skills.remove(&db, "pdf-tools").await.unwrap().unwrap();
    assert_eq!(db.count(SKILL_FILES).await.unwrap(), 1);
    assert_eq!(db.count(SKILL_PACKAGES).await.unwrap(), 1);
    // Undo puts it back, files and all.
    skills.save(&db, vec![removed]).await.unwrap();
    assert_eq!(db.count(SKILL_FILES).await.unwrap(), 5);
    db.close();
}

/// The packages `discover_skills` finds for `query` in `index`.
fn discovered(index: &RefCell<SkillIndex>, query: &str) -> Vec<String> {
    index
        .borrow()
        .search(query, None, 5, &|_| true)
        .iter()
        .filter_map(|h| h.package().map(|p| p.name.clone()))
        .collect()
}

/// The names in the library of enabled packages the model sees.
fn enabled(skills: &AgentSkills) -> Vec<String> {
    let mut names: Vec<String> = skills
        .library()
        .iter()
        .map(|p| p.name().to_string())
        .collect();
    names.sort();
    names
}

#[wasm_bindgen_test]
async fn the_discovery_index_follows_every_import_switch_and_removal() {
    let db = fresh("test-agent-skills-index").await;
    let (skills, _) = AgentSkills::load(&db).await.unwrap();
    let index = Rc::new(RefCell::new(SkillIndex::new()));
    skills.attach_index(index.clone());
    let origin = |_: &_| PackageOrigin::Folder {
        name: "team".into(),
    };
    store_outcome(
        &skills,
        &db,
        scan_folder(team_folder("Fill in PDF forms."), None),
        origin,
        1.0,
    )
    .await
    .unwrap();
    assert_eq!(enabled(&skills), ["pdf-tools", "release-notes"]);
    assert_eq!(discovered(&index, "fill in forms"), ["pdf-tools"]);
    assert_eq!(discovered(&index, "release notes"), ["release-notes"]);

    // Re-importing replaces the words the package is found by.
    store_outcome(
        &skills,
        &db,
        scan_folder(team_folder("Merge scanned invoices."), None),
        origin,
        2.0,
    )
    .await
    .unwrap();
    assert!(discovered(&index, "fill in forms").is_empty());
    assert_eq!(discovered(&index, "merge invoices"), ["pdf-tools"]);

    // Switched off: neither the model's library nor discovery has it.
    skills.set_enabled(&db, "pdf-tools", false).await.unwrap();
    assert_eq!(enabled(&skills), ["release-notes"]);
    assert!(discovered(&index, "merge invoices").is_empty());
    skills.set_enabled(&db, "pdf-tools", true).await.unwrap();
    assert_eq!(enabled(&skills), ["pdf-tools", "release-notes"]);
    assert_eq!(discovered(&index, "merge invoices"), ["pdf-tools"]);

    // Removed, then put back by undo.
    let removed = skills.remove(&db, "release-notes").await.unwrap().unwrap();
    assert_eq!(enabled(&skills), ["pdf-tools"]);
    assert!(!index.borrow().contains_package("release-notes"));
    skills.save(&db, vec![removed]).await.unwrap();
    assert_eq!(discovered(&index, "release notes"), ["release-notes"]);

    // A restart indexes what was stored, the same way.
    db.close();
    let db = Db::open_with("test-agent-skills-index", current_schema())
        .await
        .unwrap();
    let (again, _) = AgentSkills::load(&db).await.unwrap();
    let fresh_index = Rc::new(RefCell::new(SkillIndex::new()));
    again.attach_index(fresh_index.clone());
    assert_eq!(enabled(&again), enabled(&skills));
    for q in ["merge invoices", "release notes", "fill in forms"] {
        assert_eq!(discovered(&index, q), discovered(&fresh_index, q), "{q}");
    }
    db.close();
}

#[wasm_bindgen_test]
async fn an_exported_zip_imports_again_and_a_zip_slip_archive_stores_nothing() {
    let db = fresh("test-agent-skills-zip").await;
    let (skills, _) = AgentSkills::load(&db).await.unwrap();
    store_outcome(
        &skills,
        &db,
        scan_folder(team_folder("Zipped."), None),
        |_| PackageOrigin::Folder {
            name: "team".into(),
        },
        1.0,
    )
    .await
    .unwrap();
    let zip = write_package_zip(&skills.get("pdf-tools").unwrap().package).unwrap();
    let outcome = scan_archive(&zip, "pdf-tools.zip");
    assert_eq!(outcome.problems, vec![]);
    assert_eq!(
        outcome.packages[0].files,
        skills.get("pdf-tools").unwrap().package.files
    );

    let before = db.count(SKILL_FILES).await.unwrap();
    let slip = include_bytes!("../e2e/fixtures/agent-skills/zip-slip.zip");
    let report = store_outcome(
        &skills,
        &db,
        scan_archive(slip, "zip-slip.zip"),
        |_| PackageOrigin::Archive {
            name: "slip.zip".into(),
        },
        2.0,
    )
    .await
    .unwrap();
    assert_eq!(report.imported, vec![]);
    assert_eq!(
        report
            .rejected
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        vec![
            "../escaped/SKILL.md: skipped: '..' is not allowed: paths must stay inside the skill's folder",
            "../../etc/cron.d/evil: skipped: '..' is not allowed: paths must stay inside the skill's folder",
            "zip-slip: no skill found: no folder holds a SKILL.md",
        ]
    );
    assert_eq!(db.count(SKILL_FILES).await.unwrap(), before);
    assert_eq!(skills.get("escaped"), None);
    db.close();
}

#[wasm_bindgen_test]
async fn skill_tools_run_through_the_call_path_and_activations_persist() {
    let name = "test-agent-skills-runtime";
    let db = fresh(name).await;
    {
        let (skills, _) = AgentSkills::load(&db).await.unwrap();
        store_outcome(
            &skills,
            &db,
            scan_folder(team_folder("PDFs."), None),
            |_| PackageOrigin::Folder {
                name: "team".into(),
            },
            1.0,
        )
        .await
        .unwrap();
    }
    let rt = Runtime::start(db).await.unwrap();
    {
        let registry = rt.registry();
        let tool = registry.get_str("word_count").unwrap();
        assert_eq!(tool.tier, Tier::Enhanced);
        assert_eq!(
            tool.kind,
            SkillKind::AgentSkill {
                package: "pdf-tools".into(),
                tool: "word_count".into()
            }
        );
        for id in ["activate_skill", "read_skill_file", "return_to_general"] {
            assert!(registry.get_str(id).is_some(), "{id} is registered");
        }
        // Every skill is routed by the source that registered it.
        let unowned: Vec<&str> = registry
            .iter()
            .filter(|s| s.source.is_none())
            .map(|s| s.id.as_str())
            .collect();
        assert!(unowned.is_empty(), "skills with no source: {unowned:?}");
        for (id, source) in [
            ("calculator", SourceKey::Core),
            ("discover_skills", SourceKey::Core),
            ("notes", SourceKey::Core),
            ("run_python", SourceKey::Code),
            ("read_file", SourceKey::Files),
            ("web_fetch", SourceKey::Web),
            ("activate_skill", SourceKey::AgentSkills),
            ("call_skill_tool", SourceKey::AgentSkills),
            ("word_count", SourceKey::AgentSkills),
        ] {
            assert_eq!(registry.get_str(id).unwrap().source, Some(source), "{id}");
        }
    }

    // Reading before activating is refused by core.
    let r = invoke(
        &rt,
        "read_skill_file",
        json!({"skill": "pdf-tools", "path": "references/REFERENCE.md"}),
    )
    .await;
    assert_eq!(
        (r.status, r.error.as_deref()),
        (
            ToolStatus::Failed,
            Some("skill 'pdf-tools' is not active in this conversation; call activate_skill first")
        )
    );
    let r = invoke(&rt, "activate_skill", json!({"name": "pdf-tools"})).await;
    assert_eq!(r.status, ToolStatus::Completed);
    assert!(
        r.text()
            .unwrap()
            .starts_with("<skill_content name=\"pdf-tools\">")
    );
    let r = invoke(
        &rt,
        "read_skill_file",
        json!({"skill": "pdf-tools", "path": "references/REFERENCE.md"}),
    )
    .await;
    assert_eq!(r.text(), Some("# Fields\nUse /Yes.\n"));
    let attacks = [
        (
            "../release-notes/SKILL.md",
            "cannot read '../release-notes/SKILL.md': '..' is not allowed: paths must stay inside the skill's folder",
        ),
        (
            "/etc/passwd",
            "cannot read '/etc/passwd': absolute paths are not allowed; give a path relative to the skill's folder",
        ),
        (
            "references%2fREFERENCE.md",
            "cannot read 'references%2fREFERENCE.md': '%' is not allowed: give the path as plain text, not percent-encoded",
        ),
        (
            "assets/logo.png",
            "'assets/logo.png' is a binary file (18 bytes); binary files are never sent to the model",
        ),
    ];
    for (path, expected) in attacks {
        let r = invoke(
            &rt,
            "read_skill_file",
            json!({"skill": "pdf-tools", "path": path}),
        )
        .await;
        assert_eq!(
            (r.status, r.error.as_deref()),
            (ToolStatus::Failed, Some(expected)),
            "{path}"
        );
    }
    // Running the script needs the sandbox page that `hearth serve` serves;
    // that journey is in e2e/tests/agent-skills.spec.mjs.

    // Every call is in the one activity log.
    let (log, _) = rt
        .db()
        .all::<hearth_core::skill::activity::ActivityRecord>(ACTIVITY)
        .await
        .unwrap();
    assert_eq!(log.len(), 7);

    // The command bar's activation is stored: a restart keeps it.
    let db = Db::open_with(name, current_schema()).await.unwrap();
    let rt2 = Runtime::start(db).await.unwrap();
    let r = invoke(&rt2, "activate_skill", json!({"name": "pdf-tools"})).await;
    assert_eq!(
        r.text(),
        Some(
            "Skill 'pdf-tools' is already active in this conversation; its instructions were loaded earlier."
        )
    );

    // Disabling a package takes its tools out of the registry.
    rt2.agent_skills()
        .set_enabled(&rt2.db(), "pdf-tools", false)
        .await
        .unwrap();
    rt2.sync_agent_skills();
    assert!(rt2.registry().get_str("word_count").is_none());
    assert!(rt2.registry().get_str("activate_skill").is_some());
}

/// `call_skill_tool` reaches a package's tool only as that tool: its own
/// switch, its own approval setting and its tier's switch all hold, and
/// the Activity log has the tool's own record.
#[wasm_bindgen_test]
async fn call_skill_tool_passes_the_permission_layer_as_the_tool_itself() {
    use hearth_core::skill::permission::ApprovalSetting;
    let name = "test-agent-skills-meta-tool";
    let db = fresh(name).await;
    {
        let (skills, _) = AgentSkills::load(&db).await.unwrap();
        store_outcome(
            &skills,
            &db,
            scan_folder(team_folder("PDFs."), None),
            |_| PackageOrigin::Folder {
                name: "team".into(),
            },
            1.0,
        )
        .await
        .unwrap();
    }
    let rt = Runtime::start(db).await.unwrap();
    let r = invoke(&rt, "activate_skill", json!({"name": "pdf-tools"})).await;
    assert_eq!(r.status, ToolStatus::Completed);
    let call = json!({"skill": "pdf-tools", "tool": "word_count", "input": {"text": "a b c"}});

    // Set to "never allow".
    rt.update_permissions(|p| p.set_approval("word_count", Some(ApprovalSetting::NeverAllow)))
        .await
        .unwrap();
    let r = invoke(&rt, "call_skill_tool", call.clone()).await;
    assert_eq!(r.status, ToolStatus::Denied, "never allow: {:?}", r.error);

    // Switched off.
    rt.update_permissions(|p| {
        p.set_approval("word_count", None);
        p.set_enabled("word_count", Some(false));
    })
    .await
    .unwrap();
    let r = invoke(&rt, "call_skill_tool", call.clone()).await;
    assert_eq!(r.status, ToolStatus::Denied, "switched off: {:?}", r.error);

    // Its tier switched off.
    rt.update_permissions(|p| {
        p.set_enabled("word_count", None);
        p.tiers.insert(Tier::Enhanced, false);
    })
    .await
    .unwrap();
    let r = invoke(&rt, "call_skill_tool", call.clone()).await;
    assert_eq!(r.status, ToolStatus::Denied, "tier off: {:?}", r.error);

    // Each refusal is the tool's own, in the Activity log.
    let (log, _) = rt
        .db()
        .all::<hearth_core::skill::activity::ActivityRecord>(ACTIVITY)
        .await
        .unwrap();
    let own: Vec<ToolStatus> = log
        .iter()
        .filter(|r| r.skill_id.as_str() == "word_count")
        .map(|r| r.result.status)
        .collect();
    assert_eq!(own, vec![ToolStatus::Denied; 3]);
}

/// The Agent Skills source offers the assistant its tools and its prompt
/// section through the runtime's sources, per conversation: the catalog
/// and `activate_skill` before anything is active, the active skill's
/// tools after, and never a name the turn already uses.
#[wasm_bindgen_test]
async fn the_runtime_sources_offer_the_skill_tools_and_section_of_each_turn() {
    use hearth_core::discovery::DISCOVER_SKILLS_ID;
    use hearth_core::skill::source::Turn;
    let db = fresh("test-agent-skills-turns").await;
    {
        let (skills, _) = AgentSkills::load(&db).await.unwrap();
        store_outcome(
            &skills,
            &db,
            scan_folder(team_folder("PDFs."), None),
            |_| PackageOrigin::Folder {
                name: "team".into(),
            },
            1.0,
        )
        .await
        .unwrap();
    }
    let rt = Runtime::start(db).await.unwrap();
    let turn = Turn::new("conv-x", Vec::new(), &[DISCOVER_SKILLS_ID]);
    let names = |turn: &Turn| -> Vec<String> {
        rt.sources()
            .turn_tools(turn)
            .iter()
            .map(|d| d.id.to_string())
            .collect()
    };
    assert_eq!(names(&turn), ["activate_skill"]);
    let expected = rt.agent_skills().model_turn("conv-x", &turn.taken());
    let sections = rt.sources().turn_prompts(&turn, &[]);
    assert_eq!(sections, std::slice::from_ref(&expected.prompt));
    assert!(expected.prompt.contains("pdf-tools"), "{}", expected.prompt);

    let (_, r) = rt
        .invoke_in(
            SkillId::new("activate_skill").unwrap(),
            json!({"name": "pdf-tools"}),
            CallOrigin::User,
            Some("conv-x".into()),
        )
        .await;
    assert_eq!(r.status, ToolStatus::Completed, "{:?}", r.error);
    assert_eq!(
        names(&turn),
        [
            "activate_skill",
            "read_skill_file",
            "return_to_general",
            "word_count"
        ]
    );
    let expected = rt.agent_skills().model_turn("conv-x", &turn.taken());
    assert_eq!(rt.sources().turn_prompts(&turn, &[]), [expected.prompt]);
    // Another conversation has nothing active.
    let other = Turn::new("conv-y", Vec::new(), &[DISCOVER_SKILLS_ID]);
    assert_eq!(names(&other), ["activate_skill"]);
    // A name the turn already uses is not offered twice.
    let loaded = Turn::new(
        "conv-x",
        vec![SkillId::new("read_skill_file").unwrap()],
        &[DISCOVER_SKILLS_ID],
    );
    assert!(!names(&loaded).iter().any(|n| n == "read_skill_file"));
}
