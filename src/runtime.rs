//! The running app's services: storage, the registry, the skills' data and
//! the call path with its hooks (permission, activity log, usage),
//! assembled once at start-up and shared through Leptos context.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use futures::FutureExt;
use futures::channel::oneshot;
use futures::future::LocalBoxFuture;
use hearth_core::builtin::collection::{Change, Changed, Collection, Record, Stamp, Store};
use hearth_core::builtin::memory::Memories;
use hearth_core::builtin::notes::Notebook;
use hearth_core::builtin::tasks::TaskList;
use hearth_core::discovery::{DISCOVER_SKILLS_ID, IndexedSkill, SkillIndex, discover_output};
use hearth_core::skill::activity::{ActivityHook, Usage};
use hearth_core::skill::approval::{
    ApprovalAnswer, ApprovalRequest, Approver, PermissionHook, PolicySource,
};
use hearth_core::skill::call::UndoAction;
use hearth_core::skill::invoke::{CallContext, Hook, Invoker};
use hearth_core::skill::permission::{CallFacts, PermissionSettings, Policy};
use hearth_core::skill::registry::{Registered, RegistryError};
use hearth_core::skill::source::{SkillSource, Sources, register_from};
use hearth_core::{
    CallOrigin, Registry, SkillDefinition, SkillError, SkillId, SkillKind, SkillOutput, SourceKey,
    ToolCall, ToolResult,
};
use leptos::prelude::*;
use send_wrapper::SendWrapper;
use serde_json::Value;

use crate::activity::Activity;
use crate::agent_skills::{AgentSkillSource, AgentSkills};
use crate::files::Files;
use crate::platform::{BrowserTime, local_clock, new_id};
use crate::sandbox::Sandbox;
use crate::split::{enter, not_loaded};
use crate::storage::{Db, StorageError, Stored};
use crate::version::bump;
use hearth_core::builtin::artifacts;
use hearth_core::stores::{ARTIFACTS, MEMORIES, NOTES, TASKS, USAGE};

/// The settings record key of the permission settings.
const PERMISSIONS_KEY: &str = hearth_core::skill::permission::SETTINGS_KEY;
use crate::web::WebSkills;

/// Bumped whenever a part of the data changes, so views re-read it.
#[derive(Clone, Copy)]
pub struct Versions {
    pub notes: RwSignal<u64>,
    pub tasks: RwSignal<u64>,
    pub memories: RwSignal<u64>,
    /// An artifact was created or given a new version.
    pub artifacts: RwSignal<u64>,
    pub permissions: RwSignal<u64>,
    pub usage: RwSignal<u64>,
    pub activity: RwSignal<u64>,
    /// Skills were added to or removed from the registry.
    pub registry: RwSignal<u64>,
    /// Every store may have changed at once (a restore, Clear all): views
    /// and modules that keep their own copy of stored data re-read it.
    pub data: RwSignal<u64>,
    /// A stored record could not be read and was set aside.
    pub set_aside: RwSignal<u64>,
}

impl Versions {
    fn new() -> Self {
        Self {
            notes: RwSignal::new(0),
            tasks: RwSignal::new(0),
            memories: RwSignal::new(0),
            artifacts: RwSignal::new(0),
            permissions: RwSignal::new(0),
            usage: RwSignal::new(0),
            activity: RwSignal::new(0),
            registry: RwSignal::new(0),
            data: RwSignal::new(0),
            set_aside: RwSignal::new(0),
        }
    }
}

/// The data the core skills work on, loaded once and kept in step with
/// IndexedDB: a change is applied here only after it is stored.
pub struct Data {
    pub notes: RefCell<Notebook>,
    pub tasks: RefCell<TaskList>,
    pub memories: RefCell<Memories>,
    pub permissions: RefCell<PermissionSettings>,
    pub usage: Rc<RefCell<HashMap<String, Usage>>>,
    pub versions: Versions,
}

fn stamp() -> Stamp {
    Stamp {
        now_ms: js_sys::Date::now(),
        new_id: new_id(),
        today: local_clock().local_date(),
    }
}

fn storage_failure(e: StorageError) -> SkillError {
    if e.says_nothing_changed() {
        SkillError::new(e.to_string())
    } else {
        SkillError::new(format!("{e}; nothing was changed"))
    }
}

/// Runs one action of a collection-backed skill: compute the change from
/// the current data, store it in one transaction, and only then apply it
/// in memory. A failed write leaves both copies as they were.
async fn collection_call<T: Record, C: Store<T>, A>(
    db: &Db,
    store: &str,
    collection: &RefCell<C>,
    version: RwSignal<u64>,
    parse: fn(&Value) -> Result<A, SkillError>,
    run: fn(&C, A, &Stamp) -> Changed<T>,
    arguments: &Value,
) -> Result<SkillOutput, SkillError> {
    let action = parse(arguments)?;
    let (output, changes) = run(&collection.borrow(), action, &stamp())?;
    if !changes.is_empty() {
        let mut puts = Vec::new();
        let mut deletes = Vec::new();
        for c in &changes {
            match c {
                Change::Put(item) => puts.push(item.clone()),
                Change::Delete(id) => deletes.push(id.clone()),
            }
        }
        db.apply(store, &puts, &deletes)
            .await
            .map_err(storage_failure)?;
        collection.borrow_mut().apply_changes(&changes);
        bump(version);
    }
    Ok(output)
}

/// One of Hearth's core skills, read once from the skill's id so the
/// core source never compares ids past this point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoreSkill {
    Calculator,
    Discover,
    Notes,
    Tasks,
    Memory,
    CreateArtifact,
    UpdateArtifact,
}

impl CoreSkill {
    /// The core skill with the id `id`, if it is one.
    pub fn of(id: &str) -> Option<CoreSkill> {
        Some(match id {
            "calculator" => CoreSkill::Calculator,
            DISCOVER_SKILLS_ID => CoreSkill::Discover,
            "notes" => CoreSkill::Notes,
            "tasks" => CoreSkill::Tasks,
            "memory" => CoreSkill::Memory,
            artifacts::CREATE_ID => CoreSkill::CreateArtifact,
            artifacts::UPDATE_ID => CoreSkill::UpdateArtifact,
            _ => return None,
        })
    }

    fn parse(id: &str) -> Result<CoreSkill, SkillError> {
        CoreSkill::of(id).ok_or_else(|| {
            SkillError::new(format!(
                "the built-in skill '{id}' has no implementation in this build"
            ))
        })
    }
}

/// The core skills' source: calculator, discovery, and the skills over
/// notes, tasks and memories, whose changes are stored before they apply.
pub struct CoreSkills {
    db: Rc<Db>,
    data: Rc<Data>,
    index: Rc<RefCell<SkillIndex>>,
}

impl CoreSkills {
    async fn run(
        &self,
        skill: CoreSkill,
        arguments: &Value,
        conversation: Option<&str>,
    ) -> Result<SkillOutput, SkillError> {
        let d = &self.data;
        match skill {
            CoreSkill::Calculator => {
                let failed = || SkillError::new(not_loaded("the calculator"));
                enter(calculate_in_chunk(arguments.clone()), failed).await
            }
            CoreSkill::Discover => {
                let permissions = d.permissions.borrow().clone();
                let enabled = move |s: &IndexedSkill| permissions.is_indexed_enabled(s);
                discover_output(&self.index.borrow(), arguments, &enabled)
                    .map_err(|e| SkillError::new(e.to_string()))
            }
            CoreSkill::Notes | CoreSkill::Tasks | CoreSkill::Memory => {
                let (db, data) = (self.db.clone(), self.data.clone());
                let failed = || SkillError::new(not_loaded("notes, tasks and memory"));
                enter(
                    collection_in_chunk(db, data, skill, arguments.clone()),
                    failed,
                )
                .await
            }
            CoreSkill::CreateArtifact | CoreSkill::UpdateArtifact => {
                let (db, data) = (self.db.clone(), self.data.clone());
                let failed = || SkillError::new(not_loaded("artifacts"));
                let conversation = conversation.map(str::to_string);
                enter(
                    artifact_in_chunk(db, data, skill, arguments.clone(), conversation),
                    failed,
                )
                .await
            }
        }
    }
}

// The calculator (its arithmetic, units and dates engine is the biggest
// single part of Hearth's code) is a chunk of its own, fetched first of
// all after the first screen, so a question asked at once still answers
// in a moment and the first load does not carry it.
crate::split::split_point!(
    calculator,
    preload warm_calculator,
    fn calculate_in_chunk(arguments: Value) -> LocalBoxFuture<'static, Result<SkillOutput, SkillError>> {
        Box::pin(async move { hearth_core::builtin::calculator::run(&arguments, local_clock()) })
    }
);

// Discovery answers from the first screen; the actions
// over notes, tasks and memories (reading each action, computing and
// storing its change) are a chunk of their own, fetched with the first.
crate::split::split_point!(
    collections,
    preload warm_collections,
    fn collection_in_chunk(
        db: Rc<Db>,
        data: Rc<Data>,
        skill: CoreSkill,
        arguments: Value,
    ) -> LocalBoxFuture<'static, Result<SkillOutput, SkillError>> {
        Box::pin(async move {
            let (db, d, v) = (&db, &data, data.versions);
            match skill {
                CoreSkill::Notes => {
                    use hearth_core::builtin::notes::{parse, run};
                    collection_call(db, NOTES, &d.notes, v.notes, parse, run, &arguments).await
                }
                CoreSkill::Tasks => {
                    use hearth_core::builtin::tasks::{parse, run};
                    collection_call(db, TASKS, &d.tasks, v.tasks, parse, run, &arguments).await
                }
                CoreSkill::Memory => {
                    use hearth_core::builtin::memory::{parse, run};
                    collection_call(
                        db,
                        MEMORIES,
                        &d.memories,
                        v.memories,
                        parse,
                        run,
                        &arguments,
                    )
                    .await
                }
                CoreSkill::Calculator
                | CoreSkill::Discover
                | CoreSkill::CreateArtifact
                | CoreSkill::UpdateArtifact => Err(SkillError::new(format!(
                    "{skill:?} is not a skill over a collection"
                ))),
            }
        })
    }
);

// Creating and updating artifacts (checking the source, storing the new
// version) is a chunk of its own, fetched with the first artifact.
crate::split::split_point!(
    artifact_skills,
    preload warm_artifact_skills,
    fn artifact_in_chunk(
        db: Rc<Db>,
        data: Rc<Data>,
        skill: CoreSkill,
        arguments: Value,
        conversation: Option<String>,
    ) -> LocalBoxFuture<'static, Result<SkillOutput, SkillError>> {
        Box::pin(async move {
            let conversation = conversation.as_deref();
            let (output, artifact) = match skill {
                CoreSkill::CreateArtifact => {
                    let args = artifacts::parse_create(&arguments)?;
                    artifacts::create(args, conversation, new_id(), js_sys::Date::now())?
                }
                CoreSkill::UpdateArtifact => {
                    let args = artifacts::parse_update(&arguments)?;
                    let existing = db
                        .get::<artifacts::Artifact>(ARTIFACTS, &args.id)
                        .await
                        .map_err(storage_failure)?;
                    artifacts::update(existing, args, conversation, js_sys::Date::now())?
                }
                CoreSkill::Calculator
                | CoreSkill::Discover
                | CoreSkill::Notes
                | CoreSkill::Tasks
                | CoreSkill::Memory => {
                    return Err(SkillError::new(format!(
                        "{skill:?} is not an artifact skill"
                    )));
                }
            };
            db.put(ARTIFACTS, &artifact)
                .await
                .map_err(storage_failure)?;
            bump(data.versions.artifacts);
            Ok(output)
        })
    }
);

impl SkillSource for CoreSkills {
    fn key(&self) -> SourceKey {
        SourceKey::Core
    }

    fn definitions(&self, _registry: &Registry) -> Vec<SkillDefinition> {
        hearth_core::builtin::core_skills()
    }

    fn execute<'a>(
        &'a self,
        skill: &'a SkillDefinition,
        call: &'a ToolCall,
    ) -> LocalBoxFuture<'a, Result<SkillOutput, SkillError>> {
        async move {
            let which = CoreSkill::parse(skill.id.as_str())?;
            self.run(which, &call.arguments, call.conversation_id.as_deref())
                .await
        }
        .boxed_local()
    }

    fn assess(&self, skill: &SkillDefinition, call: &ToolCall) -> CallFacts {
        match CoreSkill::of(skill.id.as_str()) {
            Some(CoreSkill::Notes) => hearth_core::builtin::notes::assess(&call.arguments),
            Some(CoreSkill::Tasks) => hearth_core::builtin::tasks::assess(&call.arguments),
            Some(CoreSkill::Memory) => hearth_core::builtin::memory::assess(&call.arguments),
            Some(
                CoreSkill::Calculator
                | CoreSkill::Discover
                | CoreSkill::CreateArtifact
                | CoreSkill::UpdateArtifact,
            )
            | None => CallFacts::default(),
        }
    }
}

/// How calls from connected agents are decided and what their "always
/// allow" keeps: the agents module installs it when it starts taking
/// agents' requests (`hearth_core::agents::agent_policy` over the grants
/// `hearth serve` holds).
pub trait AgentGrants {
    fn policy(&self, own: &PermissionSettings, skill: &SkillDefinition, call: &ToolCall) -> Policy;
    fn always_allow<'a>(
        &'a self,
        skill: &'a SkillId,
        agent: &'a hearth_core::AgentCaller,
    ) -> LocalBoxFuture<'a, Result<(), String>>;
}

/// Where the agents module puts its [`AgentGrants`].
pub type AgentGrantsSlot = Rc<RefCell<Option<Rc<dyn AgentGrants>>>>;

/// Reads the person's permission settings; stores "always allow". A call
/// from an agent is decided by that agent's grant, and without one (no
/// agents module running) nothing of it runs.
struct BrowserPolicy {
    db: Rc<Db>,
    data: Rc<Data>,
    agents: AgentGrantsSlot,
}

impl PolicySource for BrowserPolicy {
    fn policy(&self, skill: &SkillDefinition, call: &ToolCall) -> Policy {
        let own = self.data.permissions.borrow();
        match (&call.origin, self.agents.borrow().as_ref()) {
            (CallOrigin::Agent(_), Some(grants)) => grants.policy(&own, skill, call),
            (CallOrigin::Agent(_), None) => {
                let mut policy = own.policy(skill);
                policy.settings.enabled = Some(false);
                policy
            }
            (CallOrigin::User | CallOrigin::Model | CallOrigin::App, _) => own.policy(skill),
        }
    }

    fn always_allow<'a>(
        &'a self,
        skill: &'a SkillId,
        call: &'a ToolCall,
    ) -> LocalBoxFuture<'a, Result<(), String>> {
        async move {
            if let CallOrigin::Agent(agent) = &call.origin {
                let grants = self.agents.borrow().clone();
                return match grants {
                    Some(g) => g.always_allow(skill, agent).await,
                    None => Err("the agents module is not running".into()),
                };
            }
            let mut next = self.data.permissions.borrow().clone();
            next.set_approval(
                skill.as_str(),
                Some(hearth_core::skill::permission::ApprovalSetting::AlwaysAllow),
            );
            save_permissions(&self.db, &self.data, next).await
        }
        .boxed_local()
    }
}

async fn save_permissions(db: &Db, data: &Data, next: PermissionSettings) -> Result<(), String> {
    db.set_setting(PERMISSIONS_KEY, &next)
        .await
        .map_err(|e| e.to_string())?;
    *data.permissions.borrow_mut() = next;
    bump(data.versions.permissions);
    Ok(())
}

/// An approval waiting for the person, as the dialog shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Pending {
    pub id: u64,
    pub request: ApprovalRequest,
}

/// Queues approval requests for the dialog; the dialog's buttons are the
/// only way to answer them.
pub struct BrowserApprover {
    pub queue: RwSignal<Vec<Pending>>,
    senders: RefCell<HashMap<u64, oneshot::Sender<ApprovalAnswer>>>,
    next: Cell<u64>,
}

impl BrowserApprover {
    fn new() -> Self {
        Self {
            queue: RwSignal::new(Vec::new()),
            senders: RefCell::new(HashMap::new()),
            next: Cell::new(1),
        }
    }

    /// Delivers the person's answer to the waiting call.
    pub fn answer(&self, id: u64, answer: ApprovalAnswer) {
        if let Some(tx) = self.senders.borrow_mut().remove(&id) {
            let _ = tx.send(answer);
        }
        self.queue.update(|q| q.retain(|p| p.id != id));
    }

    /// Denies everything still waiting, e.g. when the person presses Stop.
    pub fn deny_all(&self) {
        self.deny_where(|_| true);
    }

    // --- assistant: approvals scoped to one conversation ---

    /// Denies what one conversation is still waiting on (its Stop button);
    /// other conversations' and the command bar's approvals stay open.
    pub fn deny_conversation(&self, conversation_id: &str) {
        self.deny_where(|p| p.request.call.conversation_id.as_deref() == Some(conversation_id));
    }

    /// Denies the approval of one call, if it is waiting.
    pub fn deny_call(&self, call_id: &str) {
        self.deny_where(|p| p.request.call.id == call_id);
    }

    fn deny_where(&self, select: impl Fn(&Pending) -> bool) {
        let ids: Vec<u64> = self
            .queue
            .with_untracked(|q| q.iter().filter(|p| select(p)).map(|p| p.id).collect());
        for id in ids {
            self.answer(id, ApprovalAnswer::Deny);
        }
    }
}

impl Approver for BrowserApprover {
    fn ask<'a>(&'a self, request: ApprovalRequest) -> LocalBoxFuture<'a, ApprovalAnswer> {
        let id = self.next.get();
        self.next.set(id + 1);
        let (tx, rx) = oneshot::channel();
        self.senders.borrow_mut().insert(id, tx);
        self.queue.update(|q| q.push(Pending { id, request }));
        // A dropped sender (the app tearing down) counts as a deny.
        async move { rx.await.unwrap_or(ApprovalAnswer::Deny) }.boxed_local()
    }
}

/// Finds a skill by id.
pub type FindSkill = Rc<dyn Fn(&SkillId) -> Option<SkillDefinition>>;

/// Finds skills that are not in the registry (see [`Runtime::set_unlisted`]).
type Unlisted = Rc<RefCell<Option<FindSkill>>>;

pub struct Services {
    pub db: Rc<Db>,
    /// Skills the call path knows besides the registry's.
    unlisted: Unlisted,
    /// MCP servers' clients and their tools' runs.
    pub mcp: Rc<crate::mcp_skills::McpSkills>,
    pub registry: Rc<RefCell<Registry>>,
    /// The discovery index, kept in step with the registry.
    pub index: Rc<RefCell<SkillIndex>>,
    pub invoker: Invoker,
    pub data: Rc<Data>,
    pub approver: Rc<BrowserApprover>,
    /// web_fetch and web_search: the proxy client and the domain lists.
    pub web: Rc<WebSkills>,
    /// Installed Agent Skills packages and the active skills.
    pub agent_skills: Rc<AgentSkills>,
    /// The person's file grants, which the file skills and code runs read.
    pub files: Rc<Files>,
    /// The code sandbox: the opaque-origin iframe runs go to.
    pub sandbox: Rc<Sandbox>,
    /// How agents' calls are decided, once the agents module runs.
    pub agent_grants: AgentGrantsSlot,
    /// The execution log, which views query.
    pub activity: Rc<Activity>,
    /// The core skills' source, which panel edits use directly.
    core: Rc<CoreSkills>,
    /// The Agent Skills source, which registers the packages' tools.
    agent_source: Rc<AgentSkillSource>,
    /// Every source of skills, in order: the call path routes through
    /// them, and the assistant asks them what to offer on each request.
    sources: Sources,
}

/// Seals every result's undo with this browser's key, so only undos of
/// calls made here are ever offered or run (`hearth_core::skill::seal`).
struct UndoSeal(Rc<[u8]>);

impl Hook for UndoSeal {
    fn after<'a>(
        &'a self,
        _cx: &'a CallContext,
        result: &'a mut ToolResult,
    ) -> LocalBoxFuture<'a, ()> {
        if let Some(undo) = result.undo.as_mut() {
            undo.seal_with(&self.0);
        }
        async {}.boxed_local()
    }
}

/// The handle components get from context.
#[derive(Clone)]
pub struct Runtime(SendWrapper<Rc<Services>>);

/// The stored permission settings; the defaults when there are none, and
/// "ask for everything" when they cannot be read (the record is set aside).
fn permissions_or_safe(stored: Stored<PermissionSettings>) -> PermissionSettings {
    match stored {
        Stored::Found(p) => p,
        Stored::Missing => PermissionSettings::default(),
        Stored::SetAside => PermissionSettings::unreadable(),
    }
}

async fn load<T: Record>(db: &Db, store: &str) -> Result<Vec<T>, String> {
    let (items, _) = db.all::<T>(store).await.map_err(|e| e.to_string())?;
    Ok(items)
}

impl Runtime {
    /// Loads the stored data and assembles the call path.
    pub async fn start(db: Db) -> Result<Runtime, String> {
        let db = Rc::new(db);
        // Every stored record start-up needs, read at once: each read is
        // its own read-only transaction, and IndexedDB runs those side by
        // side instead of one round trip after another.
        let (permissions, usage, notes, tasks, memories, (agent_skills, broken), web) = futures::try_join!(
            async {
                db.setting_read::<PermissionSettings>(PERMISSIONS_KEY)
                    .await
                    .map_err(|e| e.to_string())
            },
            async { db.all::<Usage>(USAGE).await.map_err(|e| e.to_string()) },
            load(&db, NOTES),
            load(&db, TASKS),
            load(&db, MEMORIES),
            // Agent Skills: a package that no longer loads stays stored, unused.
            async { AgentSkills::load(&db).await.map_err(|e| e.to_string()) },
            WebSkills::load(db.clone()),
        )?;
        let permissions = permissions_or_safe(permissions);
        let (usage, _) = usage;
        let versions = Versions::new();
        // Records set aside from here on (a conversation, a server) show
        // in the notice as they are met; those met above are read with it.
        db.on_set_aside(move || bump(versions.set_aside));
        let data = Rc::new(Data {
            notes: RefCell::new(Notebook::new(notes)),
            tasks: RefCell::new(Collection::new(tasks)),
            memories: RefCell::new(Collection::new(memories)),
            permissions: RefCell::new(permissions),
            usage: Rc::new(RefCell::new(
                usage.into_iter().map(|u| (u.skill_id.clone(), u)).collect(),
            )),
            versions,
        });
        for name in broken {
            web_sys::console::warn_1(&format!("skill package '{name}' no longer loads").into());
        }
        let agent_skills = Rc::new(agent_skills);
        let web = Rc::new(web);
        // The discovery index is filled once the sources registered.
        let index = Rc::new(RefCell::new(SkillIndex::new()));
        let registry = Rc::new(RefCell::new(Registry::new()));
        let core = Rc::new(CoreSkills {
            db: db.clone(),
            data: data.clone(),
            index: index.clone(),
        });
        // The enhanced tier's adapters: the code sandbox and granted files.
        let sandbox = Sandbox::new();
        let files = Rc::new(Files::new(db.clone()));
        let agent_source = Rc::new(AgentSkillSource::new(
            agent_skills.clone(),
            db.clone(),
            registry.clone(),
            sandbox.clone(),
        ));
        let mcp = Rc::new(crate::mcp_skills::McpSkills::new());
        // Every source of skills, in the order the Skills panel lists
        // theirs: core, the enhanced tier (code sandbox, granted files),
        // network, then the installed packages. MCP servers' tools
        // register as each server connects.
        let mut sources = Sources::new();
        let all: [Rc<dyn SkillSource>; 6] = [
            core.clone(),
            Rc::new(crate::sandbox::skill::CodeSkills {
                sandbox: sandbox.clone(),
                files: files.clone(),
            }),
            Rc::new(files.skills()),
            web.clone(),
            agent_source.clone(),
            mcp.clone(),
        ];
        for source in all {
            sources.add(source).map_err(|e| e.to_string())?;
        }
        for (key, id, outcome) in sources.register_all(&mut registry.borrow_mut()) {
            // A package's tool whose name is taken stays out; Hearth's own
            // skills always register (core's tests check each of them).
            if let Err(e) = outcome
                && key != SourceKey::AgentSkills
            {
                return Err(format!("{id}: {e}"));
            }
        }
        *index.borrow_mut() = SkillIndex::build(registry.borrow().iter());
        // The enabled packages are entries of the same index.
        agent_skills.attach_index(index.clone());
        let approver = Rc::new(BrowserApprover::new());
        // The sandbox reads its stored preferences and starts soon.
        crate::sandbox::install(sandbox.clone(), db.clone());
        // Skills outside the registry that still go through this one call
        // path (MCP tools only a server's apps may call): the model is only
        // ever offered registered skills, so it never reaches these.
        let unlisted: Unlisted = Rc::new(RefCell::new(None));
        let lookup = {
            let registry = registry.clone();
            let unlisted = unlisted.clone();
            move |id: &SkillId| {
                registry.borrow().get(id).cloned().or_else(|| {
                    let find = unlisted.borrow().clone();
                    find.and_then(|f| f(id))
                })
            }
        };
        let activity = Rc::new(Activity::new(
            db.clone(),
            data.usage.clone(),
            data.versions.usage,
            data.versions.activity,
        ));
        let agent_grants: AgentGrantsSlot = Rc::new(RefCell::new(None));
        let policy = Rc::new(BrowserPolicy {
            db: db.clone(),
            data: data.clone(),
            agents: agent_grants.clone(),
        });
        // Order matters: permission before anything runs, so a denied call
        // never runs (the offline check ahead of it only ever ends calls,
        // so nobody is asked about a call that cannot work); after-hooks
        // run in reverse, so the log sees the final result.
        let invoker = Invoker::new(
            lookup,
            Rc::new(sources.clone()),
            Rc::new(BrowserTime),
            Rc::new(PermissionHook::new(policy, approver.clone())),
        )
        .with_guard(Rc::new(crate::online::OfflineHook))
        .with_hook(Rc::new(ActivityHook::new(activity.clone())))
        // Last, so its after-step runs first: the log keeps the sealed undo.
        .with_hook(Rc::new(UndoSeal(crate::platform::device_key())));
        Ok(Runtime(SendWrapper::new(Rc::new(Services {
            db,
            mcp,
            unlisted,
            registry,
            index,
            invoker,
            data,
            approver,
            web,
            agent_skills,
            files,
            sandbox,
            agent_grants,
            activity,
            core,
            agent_source,
            sources,
        }))))
    }

    pub fn services(&self) -> &Services {
        &self.0
    }

    pub fn db(&self) -> Rc<Db> {
        self.0.db.clone()
    }

    pub fn data(&self) -> &Data {
        &self.0.data
    }

    pub fn versions(&self) -> Versions {
        self.0.data.versions
    }

    pub fn approver(&self) -> &BrowserApprover {
        &self.0.approver
    }

    pub fn web(&self) -> Rc<WebSkills> {
        self.0.web.clone()
    }

    pub fn files(&self) -> Rc<Files> {
        self.0.files.clone()
    }

    pub fn sandbox(&self) -> Rc<Sandbox> {
        self.0.sandbox.clone()
    }

    pub fn activity(&self) -> Rc<Activity> {
        self.0.activity.clone()
    }

    pub fn registry(&self) -> std::cell::Ref<'_, Registry> {
        self.0.registry.borrow()
    }

    /// Adds `source`'s skills to the registry (replacing any of its own
    /// with the same id) and to the discovery index; their calls go to
    /// `source`. Each skill's outcome is returned, so schema warnings and
    /// refusals can be shown next to it.
    pub fn register(
        &self,
        source: SourceKey,
        skills: Vec<SkillDefinition>,
    ) -> Vec<(SkillId, Result<Registered, RegistryError>)> {
        let out = {
            let mut registry = self.0.registry.borrow_mut();
            let mut index = self.0.index.borrow_mut();
            let out = register_from(&mut registry, source, skills);
            for (id, result) in &out {
                if result.is_ok()
                    && let Some(def) = registry.get(id)
                {
                    index.upsert(def);
                }
            }
            out
        };
        bump(self.versions().registry);
        out
    }

    /// Removes every skill `remove` selects, e.g. one MCP server's tools.
    pub fn unregister(&self, remove: impl Fn(&SkillDefinition) -> bool) {
        {
            let mut registry = self.0.registry.borrow_mut();
            let mut index = self.0.index.borrow_mut();
            let gone: Vec<SkillId> = registry
                .iter()
                .filter(|s| remove(s))
                .map(|s| s.id.clone())
                .collect();
            for id in &gone {
                index.remove(id);
            }
            registry.retain(|s| !remove(s));
        }
        bump(self.versions().registry);
    }

    /// Every source of skills, in the order they register.
    pub fn sources(&self) -> &Sources {
        &self.0.sources
    }

    pub fn agent_skills(&self) -> Rc<AgentSkills> {
        self.0.agent_skills.clone()
    }

    /// Puts the registry in step with the installed Agent Skills packages:
    /// drops their old entries and registers the current ones.
    pub fn sync_agent_skills(&self) {
        let source = &self.0.agent_source;
        self.unregister(|s| s.source == Some(source.key()));
        let defs = source.definitions(&self.registry());
        for (id, result) in self.register(source.key(), defs) {
            if let Err(e) = result {
                web_sys::console::warn_1(&format!("skill tool {id} not registered: {e}").into());
            }
        }
    }

    /// Lets the call path find skills that are deliberately not in the
    /// registry (MCP tools only a server's apps may call), so they pass the
    /// same hooks — offline, permission, usage, Activity — as every skill.
    pub fn set_unlisted(&self, find: FindSkill) {
        *self.0.unlisted.borrow_mut() = Some(find);
    }

    /// Runs one call through the whole call path.
    pub async fn invoke(
        &self,
        skill_id: SkillId,
        arguments: Value,
        origin: CallOrigin,
    ) -> (ToolCall, ToolResult) {
        self.invoke_in(skill_id, arguments, origin, None).await
    }

    /// Runs one call made in a conversation (`None`: outside any), so its
    /// log entry and approval say where it came from.
    pub async fn invoke_in(
        &self,
        skill_id: SkillId,
        arguments: Value,
        origin: CallOrigin,
        conversation_id: Option<String>,
    ) -> (ToolCall, ToolResult) {
        let call = ToolCall {
            id: new_id(),
            skill_id,
            arguments,
            conversation_id,
            origin,
        };
        let result = self.invoke_call(call.clone()).await;
        (call, result)
    }

    /// Runs a call prepared elsewhere (the agent loop's tool calls) through
    /// the whole call path.
    pub async fn invoke_call(&self, call: ToolCall) -> ToolResult {
        self.0.invoker.invoke(call).await
    }

    /// Whether `undo` came from a call this browser made (its seal holds
    /// under this browser's key). Only such undos are offered.
    pub fn undo_is_ours(&self, undo: &UndoAction) -> bool {
        undo.sealed_by(&crate::platform::device_key())
    }

    /// Runs an undo from a result card: an ordinary call, made by the
    /// person, through the whole call path (its permission decision
    /// included) — but only an undo this browser's own call made. Any
    /// other (a restored or synced record's) is refused without running.
    pub async fn undo_in(
        &self,
        undo: UndoAction,
        conversation_id: Option<String>,
    ) -> (ToolCall, ToolResult) {
        if !self.undo_is_ours(&undo) {
            let call = ToolCall {
                id: new_id(),
                skill_id: undo.skill_id,
                arguments: undo.arguments,
                conversation_id,
                origin: CallOrigin::User,
            };
            let result = ToolResult::denied(
                &call,
                "this undo did not come from a call made in this browser, so it does not run",
            );
            return (call, result);
        }
        self.invoke_in(
            undo.skill_id,
            undo.arguments,
            CallOrigin::User,
            conversation_id,
        )
        .await
    }

    /// [`Runtime::undo_in`] outside any conversation.
    pub async fn undo(&self, undo: UndoAction) -> (ToolCall, ToolResult) {
        self.undo_in(undo, None).await
    }

    /// An edit the person makes in a skill's own panel. It changes the same
    /// data the skill does, without the permission layer (the person is
    /// acting directly, not a skill) and without a log entry.
    pub async fn edit(&self, skill: &str, arguments: Value) -> Result<SkillOutput, SkillError> {
        self.0
            .core
            .run(CoreSkill::parse(skill)?, &arguments, None)
            .await
    }

    /// Changes the permission settings and stores them.
    pub async fn update_permissions(
        &self,
        f: impl FnOnce(&mut PermissionSettings),
    ) -> Result<(), String> {
        let mut next = self.0.data.permissions.borrow().clone();
        f(&mut next);
        save_permissions(&self.0.db, &self.0.data, next).await
    }

    /// Empties every store and the in-memory copies; skills that came from
    /// stored packages or servers leave the registry.
    pub async fn clear_all(&self) -> Result<(), String> {
        self.0.db.clear_all().await.map_err(|e| e.to_string())?;
        // The theme is a setting too, kept outside IndexedDB.
        let _ = crate::theme::set(crate::theme::Theme::System);
        self.unregister(|s| match &s.kind {
            SkillKind::Builtin => false,
            SkillKind::AgentSkill { .. } | SkillKind::Mcp { .. } => true,
        });
        self.0.web.forget_lists();
        self.reload_data().await
    }

    /// Re-reads the stored data the runtime keeps in memory (after a restore
    /// or Clear all) and bumps every version, `data` included, so views and
    /// other modules re-read theirs.
    pub async fn reload_data(&self) -> Result<(), String> {
        let db = &self.0.db;
        let notes = load(db, NOTES).await?;
        let tasks = load(db, TASKS).await?;
        let memories = load(db, MEMORIES).await?;
        let permissions = permissions_or_safe(
            db.setting_read(PERMISSIONS_KEY)
                .await
                .map_err(|e| e.to_string())?,
        );
        let (usage, _) = db.all::<Usage>(USAGE).await.map_err(|e| e.to_string())?;
        // Installed Agent Skills packages come back (restore) or go (Clear
        // all) with the stores, and their tools with them.
        self.0
            .agent_skills
            .reload(db)
            .await
            .map_err(|e| e.to_string())?;
        self.sync_agent_skills();
        let d = &self.0.data;
        *d.notes.borrow_mut() = Notebook::new(notes);
        *d.tasks.borrow_mut() = Collection::new(tasks);
        *d.memories.borrow_mut() = Collection::new(memories);
        *d.permissions.borrow_mut() = permissions;
        *d.usage.borrow_mut() = usage.into_iter().map(|u| (u.skill_id.clone(), u)).collect();
        let v = d.versions;
        for s in [
            v.notes,
            v.tasks,
            v.memories,
            v.permissions,
            v.usage,
            v.activity,
            v.data,
        ] {
            bump(s);
        }
        Ok(())
    }
}

pub fn use_runtime() -> Runtime {
    expect_context::<Runtime>()
}
