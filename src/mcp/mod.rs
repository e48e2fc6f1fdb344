//! MCP in the app: the servers the person connected (kept in the
//! `mcp_servers` store), one client each over the browser transport, their
//! tools registered as integration-tier skills (off until enabled in
//! Skills, asking before each call), list changes followed, prompts and
//! resources offered to the composer, MCP Apps rendered, OAuth sign-ins
//! run as popups. Protocol, skills, apps and composer logic are core's
//! (`hearth_core::mcp`); this module wires them to the browser.

pub mod apps;
pub mod oauth;
pub mod proxy;
pub mod transport;

use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::rc::{Rc, Weak};

use futures::channel::oneshot;
use futures::future::{LocalBoxFuture, select};
use hearth_core::mcp::authorize::{OAuthConfig, OAuthFlow};
use hearth_core::mcp::client::{AuthProvider, ClientConfig, EventSink, ServerEvent, ServerInfo};
use hearth_core::mcp::hosted::StdioListing;
use hearth_core::mcp::model::{
    Prompt, ReadResourceResult, Resource, ResourceTemplate, SubscriptionFilter, Tool,
};
use hearth_core::mcp::oauth::{AuthError, AuthState};
use hearth_core::mcp::servers::{NewServer, ServerEntry, ServerSource};
use hearth_core::mcp::skills::{
    ServerCatalog, ServerId, catalog, skill_id, tool_to_skill, visible_to_app,
};
use hearth_core::mcp::{
    HttpTransport, McpClient, McpError, NoInput, TransportError, apps as core_apps,
};
use hearth_core::skill::call::{CallOrigin, ToolResult};
use hearth_core::ui::command::CommandInput;
use hearth_core::ui::mcp_composer::{self as prompts, Attachment, PromptCommand};
use hearth_core::{SkillDefinition, SkillId, SkillKind, SourceKey};
use leptos::prelude::*;
use leptos::task::spawn_local;
use send_wrapper::SendWrapper;
use serde_json::Value;

use self::oauth::{PopupAuthorizer, SignIns, WebRandomness, client_metadata};
use self::proxy::{HearthProxy, app_origin};
use self::transport::FetchTransport;
use crate::mcp_skills::{McpSkills, not_loaded};
use crate::platform::BrowserTime;
use crate::runtime::Runtime;
use crate::split::{LoadError, enter, split_point};
use crate::version::bump;
use hearth_core::stores::MCP_SERVERS;

/// How a server is doing, for the Servers panel.
pub use hearth_core::ui::server_card::Status;

/// One server as the panel shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerView {
    pub entry: ServerEntry,
    pub status: Status,
    pub info: Option<ServerInfo>,
    pub tools: Vec<Tool>,
    pub catalog: Option<ServerCatalog>,
    pub resources: Vec<Resource>,
    pub templates: Vec<ResourceTemplate>,
    pub prompts: Vec<Prompt>,
    /// Things that went wrong without stopping the connection.
    pub problems: Vec<String>,
    /// The server's last log messages.
    pub log: Vec<String>,
}

impl ServerView {
    fn new(entry: ServerEntry) -> Self {
        let status = if entry.enabled {
            Status::Connecting
        } else {
            Status::Off
        };
        Self {
            entry,
            status,
            info: None,
            tools: Vec::new(),
            catalog: None,
            resources: Vec::new(),
            templates: Vec::new(),
            prompts: Vec::new(),
            problems: Vec::new(),
            log: Vec::new(),
        }
    }

    /// Tools the server's MCP Apps may call.
    pub fn app_tools(&self) -> Vec<String> {
        self.tools
            .iter()
            .filter(|t| visible_to_app(t))
            .map(|t| t.name.clone())
            .collect()
    }
}

struct Server {
    view: ServerView,
    client: Option<McpClient>,
    /// Bumped on every (re)connect and disconnect; late answers of an older
    /// attempt are dropped.
    generation: u64,
    stop_listening: Option<oneshot::Sender<()>>,
    /// Tools only the server's apps call, as skills for the permission
    /// layer (never registered, so the model cannot find them).
    app_only: Vec<SkillDefinition>,
}

pub struct McpInner {
    rt: Runtime,
    skills: Rc<McpSkills>,
    proxy: Rc<HearthProxy>,
    pub sign_ins: Rc<SignIns>,
    servers: RefCell<BTreeMap<ServerId, Server>>,
    /// Bumped whenever anything the panel shows changes.
    pub version: RwSignal<u64>,
    /// The stdio servers `hearth serve` offers (`None` until asked).
    pub stdio: RwSignal<Option<Result<StdioListing, String>>>,
    /// The latest progress a server reported, as text.
    pub progress: RwSignal<Option<String>>,
    pub loaded: RwSignal<bool>,
    /// How many more calls each server's MCP Apps may make just now.
    app_budgets: RefCell<BTreeMap<ServerId, core_apps::CallBudget>>,
    /// How many more times each server may have its lists read again on
    /// its change notifications just now.
    relist_budgets: RefCell<BTreeMap<ServerId, core_apps::CallBudget>>,
}

/// The handle components get from context.
#[derive(Clone)]
pub struct Mcp(SendWrapper<Rc<McpInner>>);

pub fn use_mcp() -> Mcp {
    expect_context::<Mcp>()
}

fn sentence(s: String) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => s,
    }
}

/// A failure in words that say what to do.
pub fn describe(error: &McpError) -> String {
    match error {
        McpError::Unauthorized { .. } => {
            "The server requires authorization. If it gave you a token or API key, remove the \
             server and add it again with the token; otherwise it should offer a sign-in"
                .into()
        }
        McpError::Auth(AuthError::Cancelled) => {
            "Sign-in was cancelled. Press Reconnect to sign in again".into()
        }
        McpError::Http { status: 404, .. } => {
            format!("{error}. Check the URL: MCP endpoints usually end in /mcp")
        }
        McpError::Transport(TransportError::Unreachable(_)) => sentence(error.to_string()),
        other => sentence(other.to_string()),
    }
}

/// How many times a server's lists are read again on its change
/// notifications per [`RELIST_WINDOW_MS`] before Hearth drops it.
const RELISTS_PER_WINDOW: usize = 20;
const RELIST_WINDOW_MS: f64 = 60_000.0;

/// A cap a server went past, as the reason it was dropped.
fn describe_limit(error: &McpError) -> String {
    match error {
        McpError::TooLarge(what) => format!("it offers more than Hearth keeps ({what})"),
        other => other.to_string(),
    }
}

fn oauth_key(id: &ServerId) -> String {
    format!("mcp.oauth.{id}")
}

fn server_of(skill: &SkillDefinition) -> Option<&str> {
    match &skill.kind {
        SkillKind::Mcp { server, .. } => Some(server),
        SkillKind::Builtin | SkillKind::AgentSkill { .. } => None,
    }
}

/// App-only tools as skills the permission layer can ask about: on (there
/// is nowhere to switch them on), asking before each call.
fn app_only_skills(server: &ServerId, tools: &[Tool]) -> Vec<SkillDefinition> {
    tools
        .iter()
        .filter(|t| !hearth_core::mcp::skills::visible_to_model(t))
        // Left out of the catalog with the reason already.
        .filter(|t| hearth_core::mcp::skills::unbounded_schema(t).is_none())
        .filter_map(|t| {
            let mut visible = t.clone();
            if let Some(ui) = visible
                .meta
                .as_mut()
                .and_then(|m| m.get_mut("ui"))
                .and_then(Value::as_object_mut)
            {
                ui.remove("visibility");
            }
            let mut def = tool_to_skill(server, &visible)?;
            def.default_enabled = true;
            def.requires_approval = true;
            def.tags.push("app-only".into());
            Some(def.with_source(SourceKey::Mcp))
        })
        .collect()
}

/// What opening a connection produced.
struct Opened {
    client: McpClient,
    info: ServerInfo,
    tools: Vec<Tool>,
    catalog: ServerCatalog,
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
    prompts: Vec<Prompt>,
    problems: Vec<String>,
}

impl Mcp {
    /// Loads the stored servers and connects the enabled ones.
    pub fn start(rt: Runtime) -> Mcp {
        let skills = rt.services().mcp.clone();
        let inner = Rc::new(McpInner {
            rt: rt.clone(),
            skills,
            proxy: Rc::new(HearthProxy::new(rt.web().client.clone())),
            sign_ins: SignIns::new(),
            servers: RefCell::new(BTreeMap::new()),
            version: RwSignal::new(0),
            stdio: RwSignal::new(None),
            progress: RwSignal::new(None),
            loaded: RwSignal::new(false),
            app_budgets: RefCell::new(BTreeMap::new()),
            relist_budgets: RefCell::new(BTreeMap::new()),
        });
        // App-only tools are no skills of the registry (the model must never
        // see them), but their calls take the app's one call path.
        let weak = Rc::downgrade(&inner);
        rt.set_unlisted(Rc::new(move |id: &SkillId| -> Option<SkillDefinition> {
            let inner = weak.upgrade()?;
            let servers = inner.servers.borrow();
            servers
                .values()
                .flat_map(|s| s.app_only.iter())
                .find(|d| &d.id == id)
                .cloned()
        }));
        let mcp = Mcp(SendWrapper::new(inner));
        let this = mcp.clone();
        spawn_local(async move {
            let (entries, _) = this
                .0
                .rt
                .db()
                .all::<ServerEntry>(MCP_SERVERS)
                .await
                .unwrap_or_default();
            {
                let mut servers = this.0.servers.borrow_mut();
                for entry in &entries {
                    servers.insert(
                        entry.id.clone(),
                        Server {
                            view: ServerView::new(entry.clone()),
                            client: None,
                            generation: 0,
                            stop_listening: None,
                            app_only: Vec::new(),
                        },
                    );
                }
            }
            this.0.loaded.set(true);
            this.touch();
            for entry in entries.into_iter().filter(|e| e.enabled) {
                let this = this.clone();
                spawn_local(async move { this.connect(entry.id).await });
            }
        });
        mcp.refresh_stdio();
        mcp
    }

    fn touch(&self) {
        bump(self.0.version);
    }

    /// Whether the stored servers have been read.
    pub fn loaded(&self) -> RwSignal<bool> {
        self.0.loaded
    }

    /// What `hearth serve` said about its stdio servers.
    pub fn stdio(&self) -> RwSignal<Option<Result<StdioListing, String>>> {
        self.0.stdio
    }

    /// The latest progress a server reported.
    pub fn progress(&self) -> RwSignal<Option<String>> {
        self.0.progress
    }

    pub fn sign_ins(&self) -> Rc<SignIns> {
        self.0.sign_ins.clone()
    }

    /// Every server, in name order (tracks changes).
    pub fn servers(&self) -> Vec<ServerView> {
        self.0.version.track();
        self.0
            .servers
            .borrow()
            .values()
            .map(|s| s.view.clone())
            .collect()
    }

    pub fn server(&self, id: &str) -> Option<ServerView> {
        self.0.version.track();
        self.0
            .servers
            .borrow()
            .iter()
            .find(|(k, _)| k.as_str() == id)
            .map(|(_, s)| s.view.clone())
    }

    fn with_server<T>(&self, id: &ServerId, f: impl FnOnce(&mut Server) -> T) -> Option<T> {
        self.0.servers.borrow_mut().get_mut(id).map(f)
    }

    fn taken(&self) -> Vec<ServerId> {
        self.0.servers.borrow().keys().cloned().collect()
    }

    async fn save(&self, entry: &ServerEntry) -> Result<(), String> {
        self.0
            .rt
            .db()
            .put(MCP_SERVERS, entry)
            .await
            .map_err(|e| e.to_string())
    }

    /// Adds a server from the form and connects it.
    pub async fn add(&self, form: NewServer) -> Result<ServerId, String> {
        let entry = ServerEntry::from_form(&form, &self.taken(), js_sys::Date::now())
            .map_err(|e| sentence(e.to_string()))?;
        self.insert(entry).await
    }

    /// Switches on a stdio server of `hearth serve`'s list.
    pub async fn use_stdio(&self, name: ServerId) -> Result<ServerId, String> {
        if self.taken().contains(&name) {
            return Err(format!(
                "A server named {name} is already connected; remove it first"
            ));
        }
        self.insert(ServerEntry::stdio(name, js_sys::Date::now()))
            .await
    }

    async fn insert(&self, entry: ServerEntry) -> Result<ServerId, String> {
        self.save(&entry).await?;
        let id = entry.id.clone();
        self.0.servers.borrow_mut().insert(
            id.clone(),
            Server {
                view: ServerView::new(entry),
                client: None,
                generation: 0,
                stop_listening: None,
                app_only: Vec::new(),
            },
        );
        self.touch();
        let this = self.clone();
        let connecting = id.clone();
        spawn_local(async move { this.connect(connecting).await });
        Ok(id)
    }

    /// Drops the connection and the server's skills.
    fn disconnect(&self, id: &ServerId) -> u64 {
        let old = self.with_server(id, |s| {
            s.generation += 1;
            if let Some(stop) = s.stop_listening.take() {
                let _ = stop.send(());
            }
            s.app_only.clear();
            (s.generation, s.client.take())
        });
        self.0.skills.clients().disconnect(id);
        self.0.skills.set_catalog(id, None);
        self.0.rt.unregister(|s| server_of(s) == Some(id.as_str()));
        let Some((generation, client)) = old else {
            return 0;
        };
        if let Some(c) = client {
            // Ends a legacy session politely; nobody waits for it.
            spawn_local(async move {
                if let Ok(closing) = close_in_chunk(c).await {
                    closing.await;
                }
            });
        }
        generation
    }

    /// (Re)connects a server and refreshes everything it offers. The
    /// client's code arrives with the first connection (see
    /// [`connect_in_chunk`]); when it cannot, the server shows why.
    pub async fn connect(&self, id: ServerId) {
        match connect_in_chunk(self.clone(), id.clone()).await {
            Ok(connecting) => connecting.await,
            Err(LoadError) => {
                self.with_server(&id, |s| {
                    s.view.status = Status::Failed(not_loaded());
                });
                self.touch();
            }
        }
    }

    async fn connect_here(&self, id: ServerId) {
        let generation = self.disconnect(&id);
        let Some(entry) = self.with_server(&id, |s| {
            s.view.status = Status::Connecting;
            s.view.problems.clear();
            s.view.entry.clone()
        }) else {
            return;
        };
        self.touch();
        let opened = self.open(&entry).await;
        let current = self.with_server(&id, |s| s.generation) == Some(generation);
        if !current {
            if let Ok(o) = opened {
                let _ = o.client.close().await;
            }
            return;
        }
        match opened {
            Err(message) => {
                self.with_server(&id, |s| {
                    s.view.status = Status::Failed(message);
                    s.view.tools.clear();
                    s.view.catalog = None;
                });
                self.0.skills.set_catalog(&id, None);
            }
            Ok(o) => {
                let memory = o.client.memory();
                let problems = self.install(&id, &o.catalog);
                self.0.skills.clients().connect(&id, o.client.clone());
                let listen = o.info.capabilities.clone();
                let app_only = app_only_skills(&id, &o.tools);
                let changed_memory = self.with_server(&id, |s| {
                    s.client = Some(o.client.clone());
                    s.app_only = app_only;
                    s.view.status = Status::Connected;
                    s.view.info = Some(o.info);
                    s.view.tools = o.tools;
                    s.view.catalog = Some(o.catalog);
                    s.view.resources = o.resources;
                    s.view.templates = o.templates;
                    s.view.prompts = o.prompts;
                    s.view.problems = o.problems.into_iter().chain(problems).collect();
                    if s.view.entry.memory != memory {
                        s.view.entry.memory = memory;
                        Some(s.view.entry.clone())
                    } else {
                        None
                    }
                });
                if let Some(Some(entry)) = changed_memory {
                    let _ = self.save(&entry).await;
                }
                let filter = SubscriptionFilter::all_list_changes(&listen);
                if filter != SubscriptionFilter::default() {
                    self.follow(&id, generation, o.client, filter);
                }
            }
        }
        self.touch();
    }

    /// Puts a server's catalog into the registry (and its instructions
    /// where the assistant's prompt finds them); returns what went wrong.
    fn install(&self, id: &ServerId, catalog: &ServerCatalog) -> Vec<String> {
        self.0.skills.set_catalog(id, Some(catalog.clone()));
        let keep: HashSet<SkillId> = catalog.skills.iter().map(|s| s.id.clone()).collect();
        self.0
            .rt
            .unregister(|s| server_of(s) == Some(id.as_str()) && !keep.contains(&s.id));
        let mut problems: Vec<String> = self
            .0
            .rt
            .register(SourceKey::Mcp, catalog.skills.clone())
            .into_iter()
            .filter_map(|(sid, r)| r.err().map(|e| format!("The tool {sid} was left out: {e}")))
            .collect();
        problems.extend(
            catalog
                .rejected
                .iter()
                .map(|(tool, why)| format!("The tool {tool} was left out: {why}")),
        );
        problems
    }

    fn transport_for(&self, entry: &ServerEntry) -> Rc<dyn HttpTransport> {
        if entry.through_hearth() {
            Rc::new(FetchTransport::through(self.0.proxy.clone()))
        } else {
            Rc::new(FetchTransport::direct())
        }
    }

    async fn oauth(&self, entry: &ServerEntry, url: &str) -> Rc<dyn AuthProvider> {
        let key = oauth_key(&entry.id);
        let db = self.0.rt.db();
        let saved: AuthState = db.setting(&key).await.ok().flatten().unwrap_or_default();
        let origin = app_origin();
        let flow = OAuthFlow::new(
            // Sign-in requests go to the servers themselves, never with
            // Hearth's token.
            Rc::new(FetchTransport::direct()),
            Rc::new(PopupAuthorizer {
                server: entry.id.clone(),
                center: SendWrapper::new(self.0.sign_ins.clone()),
            }),
            Rc::new(WebRandomness),
            Rc::new(BrowserTime),
            OAuthConfig {
                server_url: url.to_string(),
                client: client_metadata(&origin),
                metadata_document_url: None,
                preregistered: Vec::new(),
            },
            saved,
        )
        .with_persistence(Rc::new(move |state: &AuthState| {
            let (db, key, state) = (db.clone(), key.clone(), state.clone());
            spawn_local(async move {
                if let Err(e) = db.set_setting(&key, &state).await {
                    web_sys::console::warn_1(&format!("the sign-in was not saved: {e}").into());
                }
            });
        }));
        Rc::new(flow)
    }

    fn events(&self, id: &ServerId) -> EventSink {
        let weak: Weak<McpInner> = Rc::downgrade(&self.0);
        let id = id.clone();
        Rc::new(move |event: ServerEvent| {
            if let Some(inner) = weak.upgrade() {
                Mcp(SendWrapper::new(inner)).on_event(&id, event);
            }
        })
    }

    fn on_event(&self, id: &ServerId, event: ServerEvent) {
        match event {
            ServerEvent::Progress(p) => {
                let amount = match p.total {
                    Some(t) if t > 0.0 => format!("{} of {}", p.progress, t),
                    _ => format!("{}", p.progress),
                };
                let text = match p.message {
                    Some(m) => format!("{id}: {m} ({amount})"),
                    None => format!("{id}: {amount}"),
                };
                self.0.progress.set(Some(text));
            }
            ServerEvent::Log(l) => {
                let line = match &l.data {
                    Value::String(s) => format!("{}: {s}", l.level),
                    other => format!("{}: {other}", l.level),
                };
                self.with_server(id, |s| {
                    s.view.log.push(line);
                    let extra = s.view.log.len().saturating_sub(20);
                    s.view.log.drain(..extra);
                });
                self.touch();
            }
            ServerEvent::ToolsChanged
            | ServerEvent::PromptsChanged
            | ServerEvent::ResourcesChanged => {
                let this = self.clone();
                let id = id.clone();
                spawn_local(async move { this.refresh_lists(&id, &event).await });
            }
            ServerEvent::ResourceUpdated { .. }
            | ServerEvent::Subscribed(_)
            | ServerEvent::Other { .. } => {}
        }
    }

    /// Disconnects a server that asks more of Hearth than it gives any
    /// server (lists past the caps, change notifications without end), and
    /// says why on its card. Reconnecting is the person's choice.
    fn drop_server(&self, id: &ServerId, why: String) {
        self.disconnect(id);
        self.with_server(id, |s| {
            s.view.status = Status::Failed(format!(
                "Hearth disconnected this server: {why}. Reconnect it if you trust it to behave"
            ));
            s.view.tools.clear();
            s.view.catalog = None;
        });
        self.touch();
    }

    /// Lists again what the server said changed.
    async fn refresh_lists(&self, id: &ServerId, what: &ServerEvent) {
        let Some((client, info)) =
            self.with_server(id, |s| (s.client.clone(), s.view.info.clone()))
        else {
            return;
        };
        let Some(client) = client else { return };
        let spent = self
            .0
            .relist_budgets
            .borrow_mut()
            .entry(id.clone())
            .or_insert_with(|| core_apps::CallBudget::new(RELISTS_PER_WINDOW, RELIST_WINDOW_MS))
            .take(js_sys::Date::now())
            .is_err();
        if spent {
            self.drop_server(
                id,
                format!(
                    "it announced changes to its lists more than {RELISTS_PER_WINDOW} times in a minute"
                ),
            );
            return;
        }
        match what {
            ServerEvent::ToolsChanged => match client.list_tools().await {
                Ok(listing) => {
                    let cat = catalog(id, info.as_ref(), &listing);
                    let problems = self.install(id, &cat);
                    let app_only = app_only_skills(id, &listing.tools);
                    self.with_server(id, |s| {
                        s.view.tools = listing.tools;
                        s.view.catalog = Some(cat);
                        s.view.problems = problems;
                        s.app_only = app_only;
                    });
                }
                Err(e @ McpError::TooLarge(_)) => {
                    self.drop_server(id, describe_limit(&e));
                    return;
                }
                Err(e) => {
                    self.with_server(id, |s| {
                        s.view.problems.push(format!(
                            "The tools could not be listed again: {}",
                            describe(&e)
                        ))
                    });
                }
            },
            ServerEvent::PromptsChanged => match client.list_prompts().await {
                Ok(p) => {
                    self.with_server(id, |s| s.view.prompts = p);
                }
                Err(e @ McpError::TooLarge(_)) => {
                    self.drop_server(id, describe_limit(&e));
                    return;
                }
                Err(_) => {}
            },
            ServerEvent::ResourcesChanged => match client.list_resources().await {
                Ok(r) => {
                    self.with_server(id, |s| s.view.resources = r);
                }
                Err(e @ McpError::TooLarge(_)) => {
                    self.drop_server(id, describe_limit(&e));
                    return;
                }
                Err(_) => {}
            },
            _ => {}
        }
        self.touch();
    }

    /// Follows list changes until the server is disconnected.
    fn follow(
        &self,
        id: &ServerId,
        generation: u64,
        client: McpClient,
        filter: SubscriptionFilter,
    ) {
        let (tx, rx) = oneshot::channel::<()>();
        let stale = self
            .with_server(id, |s| {
                if s.generation == generation {
                    s.stop_listening = Some(tx);
                    false
                } else {
                    true
                }
            })
            .unwrap_or(true);
        if stale {
            return;
        }
        let this = self.clone();
        let id = id.clone();
        spawn_local(async move {
            let work = async {
                let mut sub = match client.listen(filter).await {
                    Ok(s) => s,
                    Err(e) => {
                        this.with_server(&id, |s| {
                            s.view.problems.push(format!(
                                "Changes to its lists will not show until you reconnect: {}",
                                describe(&e)
                            ))
                        });
                        this.touch();
                        return;
                    }
                };
                while let Some(event) = sub.next().await {
                    match event {
                        Ok(e) => this.on_event(&id, e),
                        Err(_) => break,
                    }
                }
            };
            // Dropping the subscription closes its stream.
            let _ = select(Box::pin(work), rx).await;
        });
    }

    /// Switches a server on (connecting) or off (its skills leave).
    pub async fn set_enabled(&self, id: &ServerId, on: bool) -> Result<(), String> {
        let entry = self.with_server(id, |s| {
            s.view.entry.enabled = on;
            s.view.entry.clone()
        });
        let Some(entry) = entry else { return Ok(()) };
        self.save(&entry).await?;
        if on {
            self.connect(id.clone()).await;
        } else {
            self.disconnect(id);
            self.with_server(id, |s| {
                s.view.status = Status::Off;
                s.view.problems.clear();
            });
            self.touch();
        }
        Ok(())
    }

    /// Turns the CORS relay on or off for a server, and reconnects.
    pub async fn set_relay(&self, id: &ServerId, on: bool) -> Result<(), String> {
        let entry = self.with_server(id, |s| {
            s.view.entry.relay = on;
            s.view.entry.clone()
        });
        let Some(entry) = entry else { return Ok(()) };
        self.save(&entry).await?;
        if !on {
            let _ = self.0.proxy.remove_relay(id).await;
        }
        if entry.enabled {
            self.connect(id.clone()).await;
        }
        Ok(())
    }

    /// Removes a server: its connection, skills, stored sign-in, relay and
    /// permission settings (so a later server of the same name starts
    /// fresh).
    pub async fn remove(&self, id: &ServerId) -> Result<(), String> {
        self.disconnect(id);
        let db = self.0.rt.db();
        db.delete(MCP_SERVERS, id.as_str())
            .await
            .map_err(|e| e.to_string())?;
        let relay = self
            .with_server(id, |s| s.view.entry.relay)
            .unwrap_or(false);
        self.0.servers.borrow_mut().remove(id);
        self.touch();
        let _ = db
            .delete(hearth_core::stores::SETTINGS, &oauth_key(id))
            .await;
        if relay {
            let _ = self.0.proxy.remove_relay(id).await;
        }
        let prefix = format!("{id}__");
        self.0
            .rt
            .update_permissions(move |p| p.skills.retain(|k, _| !k.starts_with(&prefix)))
            .await
    }

    /// Asks `hearth serve` again which stdio servers it has.
    pub fn refresh_stdio(&self) {
        let this = self.clone();
        spawn_local(async move {
            let listing = this.0.proxy.stdio_servers().await;
            this.0.stdio.set(Some(listing));
        });
    }

    /// The connected servers' prompts as `/` commands (tracks changes).
    pub fn prompt_commands(&self) -> Vec<PromptCommand> {
        self.0.version.track();
        self.0
            .servers
            .borrow()
            .iter()
            .filter(|(_, s)| s.view.status == Status::Connected)
            .flat_map(|(id, s)| prompts::prompt_commands(id, &s.view.prompts))
            .collect()
    }

    fn client(&self, id: &ServerId) -> Result<McpClient, String> {
        self.with_server(id, |s| s.client.clone())
            .flatten()
            .ok_or_else(|| format!("the MCP server {id} is not connected"))
    }

    /// Runs a prompt command: `prompts/get`, as message text.
    pub async fn run_prompt(
        &self,
        cmd: &PromptCommand,
        input: &CommandInput,
    ) -> Result<String, String> {
        let args = prompts::prompt_arguments(cmd, input).map_err(|e| e.to_string())?;
        let client = self.client(&cmd.server)?;
        enter(
            get_prompt_in_chunk(client, cmd.prompt.clone(), args),
            not_loaded,
        )
        .await
    }

    /// The resources of every connected server, for the picker.
    pub fn resources(&self) -> Vec<(ServerId, Resource)> {
        self.0.version.track();
        self.0
            .servers
            .borrow()
            .iter()
            .filter(|(_, s)| s.view.status == Status::Connected)
            .flat_map(|(id, s)| s.view.resources.iter().map(|r| (id.clone(), r.clone())))
            .collect()
    }

    /// Reads a resource into an attachment.
    pub async fn attach(
        &self,
        server: &ServerId,
        resource: &Resource,
    ) -> Result<Attachment, String> {
        let client = self.client(server)?;
        let read = read_resource(client, &resource.uri).await?;
        let name = resource
            .title
            .clone()
            .unwrap_or_else(|| resource.name.clone());
        Ok(prompts::attachment(server, &resource.uri, &name, &read))
    }

    /// The tool `name` of `server`, if connected.
    pub fn tool(&self, server: &str, name: &str) -> Option<Tool> {
        self.0.version.track();
        self.0
            .servers
            .borrow()
            .iter()
            .find(|(k, _)| k.as_str() == server)
            .and_then(|(_, s)| s.view.tools.iter().find(|t| t.name == name).cloned())
    }

    /// The original answer to a call, if still kept.
    pub fn answer(&self, call_id: &str) -> Option<Value> {
        self.0
            .skills
            .answer(call_id)
            .and_then(|r| serde_json::to_value(r).ok())
    }

    /// Reads a resource for an MCP App.
    pub async fn read_for_app(&self, server: &ServerId, uri: &str) -> Result<Value, String> {
        let client = self.client(server)?;
        let read = read_resource(client, uri).await?;
        serde_json::to_value(read).map_err(|e| e.to_string())
    }

    /// Reads and checks an MCP App's view.
    pub async fn view(&self, server: &ServerId, uri: &str) -> Result<core_apps::AppView, String> {
        let client = self.client(server)?;
        let read = read_resource(client, uri).await?;
        core_apps::read_view(uri, &read).map_err(|e| e.to_string())
    }

    /// A `tools/call` from a server's MCP App: on the app's one call path
    /// (offline, permission, usage, Activity) like any call, marked as the
    /// app's own so the question and the log say who asked, and within the
    /// server's budget of app calls. Tools the model may also call are its
    /// skills; app-only ones ask on their own.
    pub async fn call_from_app(
        &self,
        server: &ServerId,
        name: &str,
        arguments: Value,
    ) -> Result<Value, String> {
        let allowed = self
            .with_server(server, |s| s.view.app_tools())
            .unwrap_or_default();
        if !allowed.iter().any(|t| t == name) {
            return Err(format!("the tool {name} is not available to this app"));
        }
        self.0
            .app_budgets
            .borrow_mut()
            .entry(server.clone())
            .or_default()
            .take(js_sys::Date::now())
            .map_err(core_apps::too_many_calls)?;
        let (_, result): (_, ToolResult) = self
            .0
            .rt
            .invoke(skill_id(server, name), arguments, CallOrigin::App)
            .await;
        Ok(self
            .answer(&result.id)
            .unwrap_or_else(|| core_apps::result_for_view(&result)))
    }

    async fn open(&self, entry: &ServerEntry) -> Result<Opened, String> {
        let origin = app_origin();
        if let (ServerSource::Remote { url }, true) = (&entry.source, entry.relay) {
            self.0
                .proxy
                .register_relay(&entry.id, url, entry.local)
                .await
                .map_err(|e| format!("The relay through Hearth could not be set up: {e}"))?;
        }
        let has_authorization = entry
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("authorization"));
        let auth = match &entry.source {
            ServerSource::Remote { url } if !has_authorization => {
                Some(self.oauth(entry, url).await)
            }
            ServerSource::Remote { .. } | ServerSource::Stdio => None,
        };
        let mut config = ClientConfig::new(entry.endpoint(&origin));
        config.headers = entry.headers.clone();
        // Through the relay, every request names the URL this tab set up:
        // if another tab points the server elsewhere, the relay refuses
        // this tab's requests rather than send its token there.
        if let (ServerSource::Remote { url }, true) = (&entry.source, entry.relay) {
            config.headers.push((
                hearth_core::mcp::hosted::RELAY_TARGET_HEADER.to_string(),
                url.clone(),
            ));
        }
        let (name, value) = core_apps::client_extension();
        config.extensions.insert(name, value);
        let client = McpClient::build(
            self.transport_for(entry),
            config,
            Rc::new(NoInput),
            auth,
            Some(self.events(&entry.id)),
            entry.memory.clone(),
        );
        let info = client.connect().await.map_err(|e| describe(&e))?;
        // A list past Hearth's caps drops the server, whichever list it is.
        let too_large = |e: McpError| match e {
            McpError::TooLarge(_) => Err(format!(
                "Hearth did not keep this server: {}",
                describe_limit(&e)
            )),
            other => Ok(other),
        };
        let listing = match client.list_tools().await {
            Ok(listing) => listing,
            Err(e) => {
                let e = too_large(e)?;
                return Err(format!(
                    "It connected, but its tools could not be listed: {}",
                    describe(&e)
                ));
            }
        };
        let cat = catalog(&entry.id, Some(&info), &listing);
        let mut problems = Vec::new();
        let caps = &info.capabilities;
        let resources = if caps.resources.is_some() {
            match client.list_resources().await {
                Ok(r) => r,
                Err(e) => {
                    let e = too_large(e)?;
                    problems.push(format!(
                        "Its resources could not be listed: {}",
                        describe(&e)
                    ));
                    Vec::new()
                }
            }
        } else {
            Vec::new()
        };
        let templates = if caps.resources.is_some() {
            match client.list_resource_templates().await {
                Ok(t) => t,
                Err(e) => {
                    too_large(e)?;
                    Vec::new()
                }
            }
        } else {
            Vec::new()
        };
        let prompts = if caps.prompts.is_some() {
            match client.list_prompts().await {
                Ok(p) => p,
                Err(e) => {
                    let e = too_large(e)?;
                    problems.push(format!("Its prompts could not be listed: {}", describe(&e)));
                    Vec::new()
                }
            }
        } else {
            Vec::new()
        };
        Ok(Opened {
            client,
            info,
            tools: listing.tools,
            catalog: cat,
            resources,
            templates,
            prompts,
            problems,
        })
    }
}

// The MCP client (connecting, OAuth, requests, streams, list changes) is
// one wasm chunk, fetched the first time a server connects or is asked
// something, so a person with no MCP server never downloads it. These
// split points, and `crate::mcp_skills`'s for tool calls, are the only
// ways into the client's protocol code from the first screen; each hands
// back a future that runs inside the chunk.

split_point!(
    mcp,
    preload warm_mcp,
    fn connect_in_chunk(mcp: Mcp, id: ServerId) -> LocalBoxFuture<'static, ()> {
        Box::pin(async move { mcp.connect_here(id).await })
    }
);

split_point!(
    mcp,
    fn close_in_chunk(client: McpClient) -> LocalBoxFuture<'static, ()> {
        Box::pin(async move {
            let _ = client.close().await;
        })
    }
);

split_point!(
    mcp,
    fn get_prompt_in_chunk(
        client: McpClient,
        prompt: String,
        args: serde_json::Map<String, Value>,
    ) -> LocalBoxFuture<'static, Result<String, String>> {
        Box::pin(async move {
            let result = client
                .get_prompt(&prompt, &args)
                .await
                .map_err(|e| describe(&e))?;
            Ok(prompts::prompt_text(&result))
        })
    }
);

split_point!(
    mcp,
    fn read_resource_in_chunk(
        client: McpClient,
        uri: String,
    ) -> LocalBoxFuture<'static, Result<ReadResourceResult, String>> {
        Box::pin(async move { client.read_resource(&uri).await.map_err(|e| describe(&e)) })
    }
);

/// `resources/read` on `client`, through the chunk.
async fn read_resource(client: McpClient, uri: &str) -> Result<ReadResourceResult, String> {
    enter(read_resource_in_chunk(client, uri.to_string()), not_loaded).await
}
