//! Agent Skills in the browser: the installed packages (kept in IndexedDB's
//! `skill_packages` and `skill_files` stores), the ways files come in (a
//! picked or dropped folder, a file input, a `.zip`/`.skill` archive), the
//! registry entries the packages add, and the executor side of
//! `activate_skill`, `read_skill_file`, `read_resource`, `call_skill_tool`
//! and `return_to_general`. Parsing, validation, paths and activation are
//! hearth-core's `agent_skills`; this module only moves bytes and state.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use futures::FutureExt;
use futures::future::LocalBoxFuture;
use hearth_core::agent_skills::activation::{
    self, ConversationSkills, DEFAULT_MAX_READ_BYTES, SkillLibrary, SkillStep,
};
use hearth_core::agent_skills::archive;
use hearth_core::agent_skills::catalog;
use hearth_core::agent_skills::context::{self, PromptConfig};
use hearth_core::agent_skills::package::{PackageFile, PackageSource, load_package};
use hearth_core::agent_skills::scan::{self, ScanOptions, SourceFile};
use hearth_core::agent_skills::virtual_skill::VirtualSkillDraft;
use hearth_core::agent_skills::{
    LoadOutcome, Problem, ScriptRequest, Severity, SkillPackage, ValidationMode, paths,
};
use hearth_core::discovery::SkillIndex;
use hearth_core::discovery::packages::{index_library, sync_package};
use hearth_core::skill::source::{SkillSource, Turn};
use hearth_core::{
    Registry, SkillDefinition, SkillError, SkillKind, SkillOutput, SourceKey, ToolCall,
};
use js_sys::{Reflect, Uint8Array};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};
use wasm_bindgen::{JsCast, JsValue};

use crate::files;
use crate::sandbox::Sandbox;
use crate::split::{enter, not_loaded};
use crate::storage::{Db, StorageError};
use hearth_core::stores::{SKILL_FILES, SKILL_PACKAGES};

/// The settings key of the command bar's active skills.
const COMMAND_SKILLS_KEY: &str = "command_skills";

/// Where a package came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum PackageOrigin {
    /// A folder, picked, dropped or chosen through the file input.
    Folder { name: String },
    /// A `.zip` or `.skill` archive.
    Archive { name: String },
    /// Written in the app's editor; the draft is kept for editing again.
    Editor { draft: VirtualSkillDraft },
}

impl PackageOrigin {
    pub fn describe(&self) -> String {
        match self {
            PackageOrigin::Folder { name } => format!("folder {name}"),
            PackageOrigin::Archive { name } => format!("archive {name}"),
            PackageOrigin::Editor { .. } => "written in Hearth".into(),
        }
    }
}

/// A package's record in `skill_packages`; its files are in `skill_files`
/// under `name/path`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredPackage {
    pub name: String,
    pub folder: String,
    pub enabled: bool,
    pub origin: PackageOrigin,
    pub imported_ms: f64,
    /// The problems found when it was loaded (warnings only: errors block).
    pub problems: Vec<Problem>,
    /// The paths of its files, so replacing it removes the old ones.
    pub files: Vec<String>,
}

/// An installed package: its record and the loaded package.
#[derive(Clone, Debug, PartialEq)]
pub struct Installed {
    pub record: StoredPackage,
    pub package: SkillPackage,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ImportError {
    #[error("{0}")]
    Storage(#[from] StorageError),
    #[error("cannot read '{name}': {reason}")]
    Read { name: String, reason: String },
    #[error("this browser cannot open folders directly; use Choose folder or drop the folder here")]
    NoDirectoryPicker,
    #[error("no folder was chosen")]
    Cancelled,
}

fn js_error(e: JsValue) -> String {
    e.as_string()
        .or_else(|| {
            Reflect::get(&e, &"message".into())
                .ok()
                .and_then(|m| m.as_string())
        })
        .unwrap_or_else(|| format!("{e:?}"))
}

fn file_key(package: &str, path: &str) -> String {
    format!("{package}/{path}")
}

fn file_record(package: &str, file: &PackageFile) -> Result<JsValue, StorageError> {
    let o = js_sys::Object::new();
    let set = |k: &str, v: &JsValue| {
        Reflect::set(&o, &k.into(), v).map_err(|e| StorageError::Write(js_error(e)))
    };
    set("key", &file_key(package, &file.path).into())?;
    set("package", &package.into())?;
    set("path", &file.path.as_str().into())?;
    set("bytes", &Uint8Array::from(file.bytes.as_slice()).into())?;
    Ok(o.into())
}

/// One stored file, as read back.
fn read_file_record(value: &JsValue) -> Option<(String, PackageFile)> {
    let package = Reflect::get(value, &"package".into()).ok()?.as_string()?;
    let path = Reflect::get(value, &"path".into()).ok()?.as_string()?;
    let bytes = Reflect::get(value, &"bytes".into())
        .ok()?
        .dyn_into::<Uint8Array>()
        .ok()?
        .to_vec();
    Some((package, PackageFile::new(path, bytes)))
}

/// Rebuilds a stored package from its files with the lenient rules, as a
/// load from disk would. `None` when it no longer loads.
fn rebuild(record: &StoredPackage, files: Vec<PackageFile>) -> Option<SkillPackage> {
    load_package(
        files,
        PackageSource {
            folder: Some(&record.folder),
            display_prefix: "",
        },
        ValidationMode::Lenient,
    )
    .package
}

crate::split::split_point!(
    packages,
    preload warm_packages,
    fn rebuild_all(
        records: Vec<StoredPackage>,
        files: HashMap<String, Vec<PackageFile>>,
    ) -> (Vec<Installed>, Vec<String>) {
        let mut files = files;
        let mut installed = Vec::new();
        let mut broken = Vec::new();
        for record in records {
            let own = files.remove(&record.name).unwrap_or_default();
            match rebuild(&record, own) {
                Some(package) => installed.push(Installed { record, package }),
                None => broken.push(record.name),
            }
        }
        (installed, broken)
    }
);

/// Every installed package, enabled or not, and the active skills of the
/// command bar. Views re-read when `version` changes.
pub struct AgentSkills {
    installed: RefCell<Vec<Installed>>,
    /// The enabled packages; each change adds, replaces or drops only the
    /// package it touched.
    library: RefCell<SkillLibrary>,
    /// The discovery index the enabled packages are entries of, once the
    /// runtime built it; each change updates only the packages it touched.
    index: RefCell<Option<Rc<RefCell<SkillIndex>>>>,
    /// Active skills per conversation; `""` is the command bar's.
    states: RefCell<HashMap<String, ConversationSkills>>,
    pub version: RwSignal<u64>,
}

impl AgentSkills {
    /// Loads every stored package; a package that no longer loads is
    /// reported in the second value and left in storage untouched.
    pub async fn load(db: &Db) -> Result<(AgentSkills, Vec<String>), StorageError> {
        // The three reads run side by side.
        let ((records, _), raw_files, command) = futures::try_join!(
            db.all::<StoredPackage>(SKILL_PACKAGES),
            db.all_raw(SKILL_FILES),
            db.setting::<ConversationSkills>(COMMAND_SKILLS_KEY),
        )?;
        let mut files: HashMap<String, Vec<PackageFile>> = HashMap::new();
        for v in raw_files {
            match read_file_record(&v) {
                Some((package, file)) => files.entry(package).or_default().push(file),
                None => {
                    db.set_aside(
                        SKILL_FILES,
                        &v,
                        "not a package file (package, path and bytes)",
                    )
                    .await
                }
            }
        }
        // Reading packages (YAML, the spec's checks) is code of its own,
        // fetched only when there are packages to read.
        let (installed, broken) = if records.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            rebuild_all(records, files).await.map_err(|_| {
                StorageError::Read(
                    "the part of Hearth that reads Agent Skills did not load; reload once online"
                        .into(),
                )
            })?
        };
        let command = command.unwrap_or_default();
        let skills = AgentSkills {
            installed: RefCell::new(installed),
            library: RefCell::new(SkillLibrary::default()),
            index: RefCell::new(None),
            states: RefCell::new(HashMap::from([(String::new(), command)])),
            version: RwSignal::new(0),
        };
        skills.rebuild_library();
        Ok((skills, broken))
    }

    /// Makes the enabled packages entries of `index`, and keeps them in
    /// step from now on.
    pub fn attach_index(&self, index: Rc<RefCell<SkillIndex>>) {
        index_library(&mut index.borrow_mut(), &self.library.borrow());
        *self.index.borrow_mut() = Some(index);
    }

    /// Runs `f` on the discovery index, if the runtime attached one.
    fn with_index(&self, f: impl FnOnce(&mut SkillIndex)) {
        if let Some(index) = self.index.borrow().as_ref() {
            f(&mut index.borrow_mut());
        }
    }

    /// Builds the library of enabled packages from scratch: at load, and
    /// when every package may have changed at once (a restore).
    fn rebuild_library(&self) {
        let enabled: Vec<SkillPackage> = self
            .installed
            .borrow()
            .iter()
            .filter(|i| i.record.enabled)
            .map(|i| i.package.clone())
            .collect();
        *self.library.borrow_mut() = SkillLibrary::from_packages(enabled);
        self.changed();
    }

    /// Puts the one package `name` in step in the library and the index
    /// after it was imported, switched or removed; the other packages are
    /// neither copied nor re-indexed.
    fn sync(&self, name: &str) {
        let installed = self.installed.borrow();
        let state = installed
            .iter()
            .find(|i| i.record.name == name)
            .map(|i| (&i.package, i.record.enabled));
        let index = self.index.borrow();
        let mut index = index.as_ref().map(|i| i.borrow_mut());
        sync_package(
            &mut self.library.borrow_mut(),
            index.as_deref_mut(),
            name,
            state,
        );
    }

    /// After the library changed: conversations forget active skills that
    /// are gone, and views re-read.
    fn changed(&self) {
        {
            let library = self.library.borrow();
            for state in self.states.borrow_mut().values_mut() {
                state.retain_installed(&library);
            }
        }
        self.version.update(|n| *n += 1);
    }

    /// Every installed package, sorted by name.
    pub fn installed(&self) -> Vec<Installed> {
        let mut list = self.installed.borrow().clone();
        list.sort_by(|a, b| a.record.name.cmp(&b.record.name));
        list
    }

    pub fn get(&self, name: &str) -> Option<Installed> {
        self.installed
            .borrow()
            .iter()
            .find(|i| i.record.name == name)
            .cloned()
    }

    /// The enabled packages, as core sees them.
    pub fn library(&self) -> std::cell::Ref<'_, SkillLibrary> {
        self.library.borrow()
    }

    /// The active skills of a conversation (`None`: the command bar).
    pub fn state(&self, conversation: Option<&str>) -> ConversationSkills {
        self.states
            .borrow()
            .get(conversation.unwrap_or(""))
            .cloned()
            .unwrap_or_default()
    }

    /// Stores packages (replacing any with the same name in place, files
    /// and all) in one transaction, then takes them into memory.
    pub async fn save(&self, db: &Db, new: Vec<Installed>) -> Result<(), StorageError> {
        let mut puts = Vec::new();
        let mut deletes = Vec::new();
        for item in &new {
            if let Some(old) = self.get(&item.record.name) {
                for path in &old.record.files {
                    deletes.push((SKILL_FILES, file_key(&old.record.name, path)));
                }
            }
            for file in &item.package.files {
                puts.push((SKILL_FILES, file_record(&item.record.name, file)?));
            }
            puts.push((SKILL_PACKAGES, Db::value(&item.record)?));
        }
        db.apply_raw(&puts, &deletes).await?;
        let names: Vec<String> = new.iter().map(|i| i.record.name.clone()).collect();
        {
            let mut installed = self.installed.borrow_mut();
            for item in new {
                match installed
                    .iter()
                    .position(|i| i.record.name == item.record.name)
                {
                    Some(i) => installed[i] = item,
                    None => installed.push(item),
                }
            }
        }
        for name in &names {
            self.sync(name);
        }
        self.changed();
        Ok(())
    }

    /// Removes a package and its files; returns it so it can be put back.
    pub async fn remove(&self, db: &Db, name: &str) -> Result<Option<Installed>, StorageError> {
        let Some(old) = self.get(name) else {
            return Ok(None);
        };
        let mut deletes: Vec<(&str, String)> = old
            .record
            .files
            .iter()
            .map(|p| (SKILL_FILES, file_key(name, p)))
            .collect();
        deletes.push((SKILL_PACKAGES, name.to_string()));
        db.apply_raw(&[], &deletes).await?;
        self.installed
            .borrow_mut()
            .retain(|i| i.record.name != name);
        self.sync(name);
        self.changed();
        Ok(Some(old))
    }

    pub async fn set_enabled(
        &self,
        db: &Db,
        name: &str,
        enabled: bool,
    ) -> Result<(), StorageError> {
        let Some(mut item) = self.get(name) else {
            return Ok(());
        };
        item.record.enabled = enabled;
        db.put(SKILL_PACKAGES, &item.record).await?;
        if let Some(i) = self
            .installed
            .borrow_mut()
            .iter_mut()
            .find(|i| i.record.name == name)
        {
            i.record.enabled = enabled;
        }
        self.sync(name);
        self.changed();
        Ok(())
    }

    /// Re-reads every stored package (after a restore or Clear all); the
    /// names of packages that no longer load are returned.
    pub async fn reload(&self, db: &Db) -> Result<Vec<String>, StorageError> {
        let (fresh, broken) = AgentSkills::load(db).await?;
        *self.installed.borrow_mut() = fresh.installed.take();
        *self.states.borrow_mut() = fresh.states.take();
        self.rebuild_library();
        // Every package may have changed at once (a restore).
        self.with_index(|index| index_library(index, &self.library.borrow()));
        Ok(broken)
    }

    /// Forgets everything in memory (after the stores were cleared).
    pub fn clear(&self) {
        self.installed.borrow_mut().clear();
        self.states.borrow_mut().clear();
        self.rebuild_library();
        self.with_index(|index| index_library(index, &SkillLibrary::default()));
    }

    /// Whether the catalog fits in the prompt (then `activate_skill` lists
    /// the names upfront) or packages are reached through discovery.
    fn catalog_inline(library: &SkillLibrary) -> bool {
        catalog::plan_catalog(library, PromptConfig::default().catalog_budget_tokens).is_inline()
    }

    /// The registry entries of the enabled packages: the shared skill
    /// tools, and each package's scoped tools at the tier core gives them
    /// (enhanced: they run in the sandbox). `taken` are the ids of the
    /// other skills in the registry.
    pub fn definitions(&self, taken: &[&str]) -> Vec<SkillDefinition> {
        let library = self.library.borrow();
        if library.is_empty() {
            return Vec::new();
        }
        let names: Vec<String> = library.iter().map(|p| p.name().to_string()).collect();
        // Every enabled package counts as reachable here; whether it is
        // active is checked per call by core.
        let all = ConversationSkills {
            active: names.clone(),
            specialist: None,
        };
        // Past the catalog threshold the names are not listed: the
        // definition stays the same size however many are installed.
        let activate = if Self::catalog_inline(&library) {
            activation::activate_skill_definition(&names)
        } else {
            Some(activation::activate_skill_definition_by_name())
        };
        let mut defs: Vec<SkillDefinition> = [
            activate,
            activation::read_skill_file_definition(&all),
            activation::read_resource_definition(&library, &all),
            activation::call_skill_tool_definition(&library, &all),
            activation::return_to_general_definition(&all),
        ]
        .into_iter()
        .flatten()
        .collect();
        let scoped = activation::scoped_tool_definitions(&library, &all, taken);
        let mut used: Vec<String> = taken.iter().map(|t| t.to_string()).collect();
        used.extend(defs.iter().map(|d| d.id.to_string()));
        used.extend(scoped.definitions.iter().map(|d| d.id.to_string()));
        defs.extend(scoped.definitions);
        // A tool whose name is taken still gets a skill of its own, under
        // `skill__tool`, so `call_skill_tool` can hand calls on to it and
        // it keeps its own switch, approval setting and Activity record.
        for shadowed in scoped.shadowed {
            let Some(tool) = library
                .get(&shadowed.skill)
                .and_then(|p| p.tool(&shadowed.tool))
            else {
                continue;
            };
            let id = format!("{}__{}", shadowed.skill, shadowed.tool);
            let Ok(skill_id) = hearth_core::SkillId::new(id.as_str()) else {
                continue;
            };
            if used.contains(&id) {
                continue;
            }
            if let Some(mut def) = activation::scoped_tool_definition(&shadowed.skill, tool) {
                def.id = skill_id;
                used.push(id);
                defs.push(def);
            }
        }
        defs
    }

    /// Where a `call_skill_tool` call goes: the registered skill of the
    /// named tool (found by what it is, not by name), with the call's
    /// input, made in the same conversation by the same caller. The call
    /// path then runs it as that skill.
    pub fn redirect(
        &self,
        call: &ToolCall,
        registry: &hearth_core::Registry,
    ) -> Result<ToolCall, SkillError> {
        let state = self.state(call.conversation_id.as_deref());
        let target = {
            let library = self.library.borrow();
            activation::skill_tool_target(&library, &state, call)?
        };
        let skill = registry
            .iter()
            .find(|d| {
                matches!(&d.kind, SkillKind::AgentSkill { package, tool }
                    if *package == target.skill && *tool == target.tool)
            })
            .ok_or_else(|| {
                SkillError::new(format!(
                    "the tool '{}' of skill '{}' is not available: its name is taken by another skill",
                    target.tool, target.skill
                ))
            })?;
        Ok(ToolCall {
            id: crate::platform::new_id(),
            skill_id: skill.id.clone(),
            arguments: target.input,
            conversation_id: call.conversation_id.clone(),
            origin: call.origin.clone(),
        })
    }

    /// What a model's turn in `conversation` gets from Agent Skills: the
    /// skills section of the system prompt (the `<available_skills>`
    /// catalog, the one line pointing to `discover_skills` when the catalog
    /// is past the threshold, or the active skill's specialist context)
    /// and the skill tools to offer. `taken` are the names of the turn's
    /// other tools. Past the threshold `activate_skill` is not offered
    /// here: discovery loads it into the conversation with the first
    /// package it finds.
    pub fn model_turn(&self, conversation: &str, taken: &[&str]) -> ModelTurn {
        let library = self.library.borrow();
        let state = self.state(Some(conversation));
        let prompt = context::skills_prompt(&library, &state, PromptConfig::default());
        let activatable = if Self::catalog_inline(&library) {
            library.model_invocable_names()
        } else {
            Vec::new()
        };
        ModelTurn {
            prompt: prompt.text().to_string(),
            specialist: prompt.specialist().map(str::to_string),
            tools: activation::model_tools(&library, &state, &activatable, taken),
        }
    }

    /// Runs a skill tool call for the executor. Active skills change only
    /// when the call succeeds, and the command bar's are stored.
    pub async fn execute(
        &self,
        db: &Db,
        sandbox: &Rc<Sandbox>,
        skill: &SkillDefinition,
        call: &ToolCall,
    ) -> Result<SkillOutput, SkillError> {
        let key = call.conversation_id.clone().unwrap_or_default();
        let mut state = self.states.borrow().get(&key).cloned().unwrap_or_default();
        let before = state.clone();
        let step = {
            let library = self.library.borrow();
            activation::handle_tool_call(&library, &mut state, skill, call, DEFAULT_MAX_READ_BYTES)
        };
        let step = match step {
            Some(s) => s?,
            None => {
                return Err(SkillError::new(format!(
                    "'{}' is not an Agent Skills tool",
                    skill.id
                )));
            }
        };
        if state != before {
            if key.is_empty() {
                db.set_setting(COMMAND_SKILLS_KEY, &state)
                    .await
                    .map_err(|e| SkillError::new(format!("{e}; the skill was not activated")))?;
            }
            self.states.borrow_mut().insert(key, state);
            self.version.update(|n| *n += 1);
        }
        match step {
            SkillStep::Done(output) => Ok(output),
            SkillStep::RunScript(request) => {
                let files: Vec<(String, Vec<u8>)> = {
                    let library = self.library.borrow();
                    library
                        .get(&request.skill)
                        .map(|package| {
                            request
                                .package_files
                                .iter()
                                .filter_map(|path| {
                                    package
                                        .file(path)
                                        .map(|f| (f.path.clone(), f.bytes.clone()))
                                })
                                .collect()
                        })
                        .unwrap_or_default()
                };
                run_script(sandbox, request, files, call.conversation_id.clone()).await
            }
        }
    }
}

/// The Agent Skills source of skills: the skill tools every package
/// shares and the enabled packages' scoped tools. It stores the command
/// bar's active skills, and hands `call_skill_tool` calls on to the
/// registered skill of the tool they name.
pub struct AgentSkillSource {
    skills: Rc<AgentSkills>,
    db: Rc<Db>,
    registry: Rc<RefCell<Registry>>,
    sandbox: Rc<Sandbox>,
}

impl AgentSkillSource {
    pub fn new(
        skills: Rc<AgentSkills>,
        db: Rc<Db>,
        registry: Rc<RefCell<Registry>>,
        sandbox: Rc<Sandbox>,
    ) -> Self {
        Self {
            skills,
            db,
            registry,
            sandbox,
        }
    }
}

// Running an Agent Skills tool call (activation, reading the package's
// files, its scoped tools and their scripts) is its own chunk, fetched
// with the first such call.
crate::split::split_point!(
    package_tools,
    preload warm_package_tools,
    fn execute_in_chunk(
        skills: Rc<AgentSkills>,
        db: Rc<Db>,
        sandbox: Rc<Sandbox>,
        skill: SkillDefinition,
        call: ToolCall,
    ) -> LocalBoxFuture<'static, Result<SkillOutput, SkillError>> {
        Box::pin(async move { skills.execute(&db, &sandbox, &skill, &call).await })
    }
);

impl SkillSource for AgentSkillSource {
    fn key(&self) -> SourceKey {
        SourceKey::AgentSkills
    }

    fn definitions(&self, registry: &Registry) -> Vec<SkillDefinition> {
        let taken: Vec<&str> = registry.iter().map(|s| s.id.as_str()).collect();
        self.skills.definitions(&taken)
    }

    fn execute<'a>(
        &'a self,
        skill: &'a SkillDefinition,
        call: &'a ToolCall,
    ) -> LocalBoxFuture<'a, Result<SkillOutput, SkillError>> {
        let (skills, db, sandbox) = (self.skills.clone(), self.db.clone(), self.sandbox.clone());
        let (skill, call) = (skill.clone(), call.clone());
        let failed = || SkillError::new(not_loaded("Agent Skills"));
        async move { enter(execute_in_chunk(skills, db, sandbox, skill, call), failed).await }
            .boxed_local()
    }

    /// `call_skill_tool` hands its call on to the package's tool, so the
    /// call path decides and logs that tool as itself.
    fn redirect(
        &self,
        skill: &SkillDefinition,
        call: &ToolCall,
    ) -> Option<Result<ToolCall, SkillError>> {
        let meta =
            skill.kind == SkillKind::Builtin && skill.id.as_str() == activation::CALL_SKILL_TOOL;
        meta.then(|| self.skills.redirect(call, &self.registry.borrow()))
    }

    /// `activate_skill` while the catalog is inline, and the active
    /// skills' `read_skill_file` / `call_skill_tool`.
    fn turn_tools(&self, turn: &Turn) -> Vec<SkillDefinition> {
        self.skills
            .model_turn(&turn.conversation_id, &turn.taken())
            .tools
    }

    /// The skills section: the catalog, or the active skill's context.
    fn turn_prompt(&self, turn: &Turn, _offered: &[SkillDefinition]) -> Option<String> {
        let prompt = self
            .skills
            .model_turn(&turn.conversation_id, &turn.taken())
            .prompt;
        (!prompt.trim().is_empty()).then_some(prompt)
    }
}

/// How long a package's script may run.
const SCRIPT_TIMEOUT_MS: u32 = 30_000;

/// Runs a package's script in the code sandbox (an opaque-origin iframe
/// with no network and no access to Hearth's data): the validated input
/// goes in as JSON, the package's files are offered read-only under
/// `/mnt/data/`, and the answer is checked by core against the tool's
/// output schema. A Python script runs in its conversation's interpreter.
async fn run_script(
    sandbox: &Rc<Sandbox>,
    request: ScriptRequest,
    files: Vec<(String, Vec<u8>)>,
    conversation: Option<String>,
) -> Result<SkillOutput, SkillError> {
    let language = match request.language {
        hearth_core::agent_skills::extensions::ScriptLanguage::Python => {
            hearth_core::builtin::code::protocol::Language::Python
        }
        hearth_core::agent_skills::extensions::ScriptLanguage::JavaScript => {
            hearth_core::builtin::code::protocol::Language::Javascript
        }
    };
    let files = files
        .into_iter()
        .map(|(path, bytes)| crate::files::skills::RunFile {
            path: format!("/mnt/data/{path}"),
            bytes: js_sys::Uint8Array::from(bytes.as_slice()).buffer(),
        })
        .collect();
    let answer = crate::sandbox::run_script(
        sandbox,
        language,
        &request.source,
        request.input.clone(),
        files,
        SCRIPT_TIMEOUT_MS,
        conversation,
    )
    .await
    .map_err(|e| {
        SkillError::new(format!(
            "tool '{}' of skill '{}' ({}): {e}",
            request.tool, request.skill, request.script_path
        ))
    })?;
    let stdout = match &answer {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    activation::script_output(&request, &stdout)
}

/// The Agent Skills part of one model turn.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelTurn {
    /// Added to the system prompt; empty when no skill is visible.
    pub prompt: String,
    /// The skill the conversation shows as active (Level 2), if any.
    pub specialist: Option<String>,
    /// `activate_skill` and, while skills are active, their tools.
    pub tools: Vec<SkillDefinition>,
}

/// What one import did, package by package.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImportReport {
    /// Stored packages, with whether they replaced one of the same name.
    pub imported: Vec<(String, bool, Vec<Problem>)>,
    /// Problems that belong to no imported package: skipped skills and
    /// unreadable files or archives.
    pub rejected: Vec<Problem>,
}

impl ImportReport {
    pub fn is_empty(&self) -> bool {
        self.imported.is_empty() && self.rejected.is_empty()
    }
}

/// Whether `problem` is about the package stored in folder `folder`.
fn belongs_to(problem: &Problem, folder: &str) -> bool {
    let file = problem.file.as_str();
    let prefix = format!("{folder}/");
    file.starts_with(&prefix) || file.contains(&format!("/{prefix}")) || file == folder
}

/// Stores what a scan or an archive gave and reports it per package.
pub async fn store_outcome(
    skills: &AgentSkills,
    db: &Db,
    outcome: LoadOutcome,
    origin: impl Fn(&SkillPackage) -> PackageOrigin,
    now_ms: f64,
) -> Result<ImportReport, StorageError> {
    let mut report = ImportReport::default();
    let mut problems = outcome.problems;
    let mut new = Vec::new();
    let mut packages = outcome.packages;
    // Longer folder names first, so `pdf` does not take `pdf-tools`' problems.
    packages.sort_by_key(|p| std::cmp::Reverse(p.folder.len()));
    for package in packages {
        let (own, rest): (Vec<Problem>, Vec<Problem>) = problems
            .into_iter()
            .partition(|p| belongs_to(p, &package.folder));
        problems = rest;
        let previous = skills.get(package.name());
        let replaced = previous.is_some();
        // Re-importing updates a skill but keeps it on or off as it was.
        let enabled = previous.is_none_or(|p| p.record.enabled);
        report
            .imported
            .push((package.name().to_string(), replaced, own.clone()));
        new.push(Installed {
            record: StoredPackage {
                name: package.name().to_string(),
                folder: package.folder.clone(),
                enabled,
                origin: origin(&package),
                imported_ms: now_ms,
                problems: own,
                files: package.files.iter().map(|f| f.path.clone()).collect(),
            },
            package,
        });
    }
    report.imported.sort_by(|a, b| a.0.cmp(&b.0));
    report.rejected = problems;
    if !new.is_empty() {
        skills.save(db, new).await?;
    }
    Ok(report)
}

/// Loads the skills in a tree of files (a folder) leniently.
pub fn scan_folder(files: Vec<SourceFile>, root_name: Option<String>) -> LoadOutcome {
    scan::scan(
        files,
        &ScanOptions {
            mode: ValidationMode::Lenient,
            root_name,
        },
    )
}

/// Loads the skills in a `.zip` or `.skill` archive leniently.
pub fn scan_archive(bytes: &[u8], name: &str) -> LoadOutcome {
    archive::import_archive(bytes, name, ValidationMode::Lenient)
}

/// Whether a file name looks like a skill archive.
pub fn is_archive(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".zip") || lower.ends_with(".skill")
}

/// A problem for the whole import (no package), e.g. an unreadable file.
pub fn import_problem(file: &str, message: impl Into<String>) -> Problem {
    Problem {
        severity: Severity::Error,
        file: file.to_string(),
        line: None,
        field: None,
        message: message.into(),
    }
}

pub async fn blob_bytes(blob: &web_sys::Blob) -> Result<Vec<u8>, String> {
    files::fs::blob_bytes(blob).await.map_err(js_error)
}

/// Copies a live `FileList` (which empties when its input is reset).
pub use files::picker::list_files;

/// The files of an `<input type=file webkitdirectory>`, by their paths
/// relative to the picked folder's parent (`folder/…`). Files under
/// `node_modules` or `.git` are not read at all.
pub async fn files_from_list(list: Vec<web_sys::File>) -> Result<Vec<SourceFile>, ImportError> {
    let mut out = Vec::new();
    for file in list {
        let relative = files::picker::relative_path(&file);
        if relative
            .split('/')
            .any(|part| scan::SKIPPED_FOLDERS.contains(&part))
        {
            continue;
        }
        let bytes = blob_bytes(&file)
            .await
            .map_err(|reason| ImportError::Read {
                name: relative.clone(),
                reason,
            })?;
        out.push(SourceFile::new(relative, bytes));
        if out.len() > scan::MAX_SCAN_FILES {
            break;
        }
    }
    Ok(out)
}

/// The name of the one top folder all `files` share, if they do.
pub fn common_root(files: &[SourceFile]) -> Option<String> {
    let first = files.first()?.path.split('/').next()?.to_string();
    files
        .iter()
        .all(|f| f.path.starts_with(&format!("{first}/")))
        .then_some(first)
}

/// Reads a File System Access directory handle (from the picker or a
/// drop) into files named `folder/…`, going no deeper than a skill can
/// sit plus the deepest path a package may hold, and skipping
/// `node_modules` and `.git`.
pub async fn files_from_handle(handle: &JsValue) -> Result<Vec<SourceFile>, ImportError> {
    let limits = files::fs::TreeLimits {
        max_depth: scan::MAX_SCAN_DEPTH + paths::MAX_DEPTH,
        skipped: &scan::SKIPPED_FOLDERS,
        max_files: scan::MAX_SCAN_FILES,
    };
    let tree = files::fs::read_tree(handle.unchecked_ref(), &limits)
        .await
        .map_err(|e| ImportError::Read {
            name: e.path,
            reason: js_error(e.error),
        })?;
    Ok(tree
        .into_iter()
        .map(|(path, bytes)| SourceFile::new(path, bytes))
        .collect())
}

/// Opens the File System Access directory picker (Chromium).
pub async fn pick_directory() -> Result<JsValue, ImportError> {
    if !has_directory_picker() {
        return Err(ImportError::NoDirectoryPicker);
    }
    match files::picker::open_directory().await {
        Ok(Some(handle)) => Ok(handle.into()),
        _ => Err(ImportError::Cancelled),
    }
}

/// Whether the directory picker exists in this browser.
pub fn has_directory_picker() -> bool {
    files::picker::has_directory_picker()
}
