//! The browser side of the network-tier skills `web_fetch` and
//! `web_search`: a client of `hearth serve`'s same-origin API (see
//! `crates/proxy/src/web/mod.rs` for the contract) that sends the key from
//! the launch link (`crate::launch`) on every call, the skills' domain
//! lists kept in IndexedDB, and the search backend chosen in Settings.
//!
//! Reading the proxy's answers, building its requests and formatting
//! results all happen in `hearth_core::builtin::web`; this module only moves bytes
//! and keeps state. The client talks through [`ApiTransport`], so its token
//! and failure handling is tested without a server.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use futures::FutureExt;
use futures::future::LocalBoxFuture;
use hearth_core::api::TOKEN_HEADER;
use hearth_core::api::domains::DomainLists;
use hearth_core::api::session::{SearchBackendSetting, SearchBackendState, Session, SessionSearch};
use hearth_core::api::web::{FetchResponse, SearchResponse};
use hearth_core::builtin::web::{
    WEB_FETCH, WEB_SEARCH, WebFailure, fetch_output, fetch_request, read_answer, search_output,
    search_request,
};
use hearth_core::skill::source::SkillSource;
use hearth_core::{Registry, SkillDefinition, SkillError, SkillOutput, SourceKey, ToolCall};
use leptos::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::split::{enter, not_loaded, split_point};
use crate::storage::{Db, Stored};
use crate::version::bump;

/// The web skills, in the order the Skills panel shows them.
pub const WEB_SKILLS: [&str; 2] = [WEB_FETCH, WEB_SEARCH];

/// Whether `skill` is one of the web skills this module runs.
pub fn is_web_skill(skill: &str) -> bool {
    WEB_SKILLS.contains(&skill)
}

/// The methods the API uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApiMethod {
    Get,
    Post,
    Put,
    Delete,
}

impl ApiMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            ApiMethod::Get => "GET",
            ApiMethod::Post => "POST",
            ApiMethod::Put => "PUT",
            ApiMethod::Delete => "DELETE",
        }
    }
}

/// One request to the proxy's API, on the app's own origin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiRequest {
    pub method: ApiMethod,
    /// `/api/…`
    pub path: String,
    /// The key header's name and value; absent when this browser has no
    /// key (then `hearth serve` refuses, and a static host has no API).
    pub token: Option<(String, String)>,
    /// JSON, sent as `application/json`.
    pub body: Option<String>,
}

/// An answer, whatever its status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiAnswer {
    pub status: u16,
    pub body: String,
}

/// No answer at all: the connection failed (nothing listening, the proxy
/// stopped, or no network).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoAnswer(pub String);

/// Moves one request to the API and back.
pub trait ApiTransport {
    fn send(&self, request: ApiRequest) -> LocalBoxFuture<'_, Result<ApiAnswer, NoAnswer>>;
}

/// `fetch()` on the page's own origin. The browser adds `Origin`, `Host`
/// and `Sec-Fetch-Site: same-origin`, which the proxy's guard checks.
pub struct BrowserTransport;

fn js_text(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}

impl BrowserTransport {
    async fn exchange(request: ApiRequest) -> Result<ApiAnswer, NoAnswer> {
        let no_answer = |e: JsValue| NoAnswer(js_text(&e));
        let init = web_sys::RequestInit::new();
        init.set_method(request.method.as_str());
        init.set_cache(web_sys::RequestCache::NoStore);
        let headers = web_sys::Headers::new().map_err(no_answer)?;
        if let Some((name, value)) = &request.token {
            headers.set(name, value).map_err(no_answer)?;
        }
        if let Some(body) = &request.body {
            headers
                .set("Content-Type", "application/json")
                .map_err(no_answer)?;
            init.set_body(&JsValue::from_str(body));
        }
        init.set_headers(&headers);
        let window = web_sys::window().ok_or_else(|| NoAnswer("no window".into()))?;
        let response: web_sys::Response =
            JsFuture::from(window.fetch_with_str_and_init(&request.path, &init))
                .await
                .map_err(no_answer)?
                .unchecked_into();
        let text = JsFuture::from(response.text().map_err(no_answer)?)
            .await
            .map_err(no_answer)?;
        Ok(ApiAnswer {
            status: response.status(),
            body: text.as_string().unwrap_or_default(),
        })
    }
}

impl ApiTransport for BrowserTransport {
    fn send(&self, request: ApiRequest) -> LocalBoxFuture<'_, Result<ApiAnswer, NoAnswer>> {
        Self::exchange(request).boxed_local()
    }
}

/// The app's one client of the proxy's API, shared by the web skills,
/// Settings and MCP (stdio servers, relay registrations): the key sent on
/// every call, read again (once) when the proxy refuses it, since another
/// tab may have taken a newer one from a launch link; the session fetched
/// once; nothing sent while the device is offline. Callers get a
/// [`WebFailure`] and put it in their own words.
pub struct ProxyClient {
    transport: Rc<dyn ApiTransport>,
    online: Rc<dyn Fn() -> bool>,
    key: Rc<dyn Fn() -> Option<String>>,
    session: RefCell<Option<Session>>,
}

impl ProxyClient {
    /// A client over `transport`; `online` says whether the device has a
    /// network connection, `key` gives the stored key.
    pub fn new(
        transport: Rc<dyn ApiTransport>,
        online: Rc<dyn Fn() -> bool>,
        key: Rc<dyn Fn() -> Option<String>>,
    ) -> Self {
        Self {
            transport,
            online,
            key,
            session: RefCell::new(None),
        }
    }

    /// The client the app uses: `fetch()`, `navigator.onLine` and the key
    /// kept from the launch link.
    pub fn browser() -> Self {
        Self::new(
            Rc::new(BrowserTransport),
            Rc::new(crate::online::is_online),
            Rc::new(crate::launch::stored),
        )
    }

    /// The session the last call used, if any.
    pub fn cached_session(&self) -> Option<Session> {
        self.session.borrow().clone()
    }

    /// Sends one request: the client's only offline check. Offline, nothing
    /// is sent and every caller gets [`WebFailure::Offline`] (one wording,
    /// [`WebFailure::message`]). The call path's `OfflineHook` checks the
    /// same thing earlier for every network-tier skill, before the approval
    /// prompt; this check is still needed for what does not come through
    /// the call path (MCP's stdio listing and relay registrations,
    /// Settings) and for a direct [`ProxyClient::run_skill`]. Online, a
    /// request that gets no answer means the local server is not there.
    async fn exchange(&self, request: ApiRequest) -> Result<ApiAnswer, WebFailure> {
        if !(self.online)() {
            return Err(WebFailure::Offline);
        }
        self.transport
            .send(request)
            .await
            .map_err(|_| WebFailure::ProxyUnreachable)
    }

    fn token(key: &Option<String>) -> Option<(String, String)> {
        key.as_ref().map(|k| (TOKEN_HEADER.to_string(), k.clone()))
    }

    /// The key header's name and the stored key, for requests that cannot
    /// go through [`ApiTransport`] (the MCP relay streams its answers).
    /// Absent when this browser was not opened from a launch link.
    pub fn key_header(&self) -> Option<(String, String)> {
        Self::token(&(self.key)())
    }

    /// The session: fetched from `GET /api/session` once, then kept.
    pub async fn session(&self) -> Result<Session, WebFailure> {
        if let Some(s) = self.cached_session() {
            return Ok(s);
        }
        let session: Session = self.call(ApiMethod::Get, "/api/session", None).await?;
        *self.session.borrow_mut() = Some(session.clone());
        Ok(session)
    }

    /// Calls an API route with the key. When the proxy refuses the key,
    /// the stored key is read again and, if it changed, the call made once
    /// more; otherwise the proxy's words (open the launch link) stand.
    pub async fn call<T: DeserializeOwned>(
        &self,
        method: ApiMethod,
        path: impl Into<String>,
        body: Option<String>,
    ) -> Result<T, WebFailure> {
        let path = path.into();
        let request = |key: &Option<String>| ApiRequest {
            method,
            path: path.clone(),
            token: Self::token(key),
            body: body.clone(),
        };
        let key = (self.key)();
        let answer = self.exchange(request(&key)).await?;
        match read_answer::<T>(answer.status, &answer.body) {
            Err(failure) if failure.code().is_some_and(|c| c.needs_new_session()) => {
                let fresh = (self.key)();
                if fresh == key {
                    return Err(failure);
                }
                self.session.borrow_mut().take();
                let answer = self.exchange(request(&fresh)).await?;
                read_answer(answer.status, &answer.body)
            }
            other => other,
        }
    }

    /// `GET path`, read as JSON.
    pub async fn get<T: DeserializeOwned>(&self, path: impl Into<String>) -> Result<T, WebFailure> {
        self.call(ApiMethod::Get, path, None).await
    }

    /// `POST path` with `body` as JSON.
    pub async fn post<B: Serialize, T: DeserializeOwned>(
        &self,
        path: impl Into<String>,
        body: &B,
    ) -> Result<T, WebFailure> {
        self.call(ApiMethod::Post, path, Some(json_body(body)))
            .await
    }

    /// `PUT path` with `body` as JSON.
    pub async fn put<B: Serialize, T: DeserializeOwned>(
        &self,
        path: impl Into<String>,
        body: &B,
    ) -> Result<T, WebFailure> {
        self.call(ApiMethod::Put, path, Some(json_body(body))).await
    }

    /// `DELETE path`, read as JSON.
    pub async fn delete<T: DeserializeOwned>(
        &self,
        path: impl Into<String>,
    ) -> Result<T, WebFailure> {
        self.call(ApiMethod::Delete, path, None).await
    }

    /// Runs `web_fetch` or `web_search` with the skill's domain lists.
    pub async fn run_skill(
        &self,
        skill: &str,
        arguments: &Value,
        lists: &DomainLists,
    ) -> Result<SkillOutput, SkillError> {
        let policy = lists.policy().map_err(|_| {
            SkillError::new(format!(
                "{skill}'s domain lists have lines that cannot be read, so it will not run; fix them in the Skills panel"
            ))
        })?;
        let fail = |f: WebFailure| f.into_skill_error(skill);
        match skill {
            WEB_FETCH => {
                let request = fetch_request(arguments, &policy)?;
                let page: FetchResponse = self.post("/api/fetch", &request).await.map_err(fail)?;
                Ok(fetch_output(&page))
            }
            WEB_SEARCH => {
                let request = search_request(arguments, &policy)?;
                let found: SearchResponse =
                    self.post("/api/search", &request).await.map_err(fail)?;
                Ok(search_output(&found))
            }
            other => Err(SkillError::new(format!("'{other}' is not a web skill"))),
        }
    }

    /// The search backend in use, as `GET /api/search/backend` reports it.
    pub async fn search_backend(&self) -> Result<SearchBackendState, WebFailure> {
        self.get("/api/search/backend").await
    }

    /// Chooses the search backend (kept by the proxy, used at once).
    pub async fn set_search_backend(
        &self,
        setting: &SearchBackendSetting,
    ) -> Result<SearchBackendState, WebFailure> {
        let state = self.put("/api/search/backend", setting).await?;
        self.remember_search(&state);
        Ok(state)
    }

    /// Forgets the backend chosen in Settings (the config file's, if any,
    /// applies again).
    pub async fn clear_search_backend(&self) -> Result<SearchBackendState, WebFailure> {
        let state = self.delete("/api/search/backend").await?;
        self.remember_search(&state);
        Ok(state)
    }

    fn remember_search(&self, state: &SearchBackendState) {
        if let Some(s) = self.session.borrow_mut().as_mut() {
            s.search = SessionSearch {
                configured: state.configured,
                backend: state.backend.clone(),
            };
        }
    }
}

/// A request body as JSON. The API's bodies are plain structs with string
/// keys, so serialising cannot fail.
fn json_body<B: Serialize>(body: &B) -> String {
    serde_json::to_string(body).unwrap_or_default()
}

/// The web skills as the app runs them: the proxy client plus each skill's
/// domain lists, loaded from the settings store at start.
pub struct WebSkills {
    db: Rc<Db>,
    /// The app's one API client; MCP uses it too.
    pub client: Rc<ProxyClient>,
    lists: RefCell<HashMap<String, DomainLists>>,
    /// Skills whose stored lists could not be read (they are set aside):
    /// such a skill runs nothing until its lists are saved again, since
    /// any lists in their place could let through what the person blocked.
    unreadable: RefCell<std::collections::HashSet<String>>,
    /// Bumped when a skill's domain lists change.
    pub version: RwSignal<u64>,
}

impl WebSkills {
    pub async fn load(db: Rc<Db>) -> Result<WebSkills, String> {
        // One read per skill, side by side.
        let stored = futures::future::try_join_all(WEB_SKILLS.iter().map(|skill| {
            let db = db.clone();
            async move {
                db.setting_read::<DomainLists>(&DomainLists::settings_key(skill))
                    .await
                    .map(|l| (skill.to_string(), l))
                    .map_err(|e| e.to_string())
            }
        }))
        .await?;
        let mut lists = HashMap::new();
        let mut unreadable = std::collections::HashSet::new();
        for (skill, read) in stored {
            match read {
                Stored::Found(l) => {
                    lists.insert(skill, l);
                }
                Stored::SetAside => {
                    unreadable.insert(skill);
                }
                Stored::Missing => {}
            }
        }
        Ok(WebSkills {
            db,
            client: Rc::new(ProxyClient::browser()),
            lists: RefCell::new(lists),
            unreadable: RefCell::new(unreadable),
            version: RwSignal::new(0),
        })
    }

    /// `skill`'s domain lists as last saved (empty when never set).
    pub fn lists(&self, skill: &str) -> DomainLists {
        self.lists.borrow().get(skill).cloned().unwrap_or_default()
    }

    /// Stores `skill`'s lists; refused unless every line reads.
    pub async fn save_lists(&self, skill: &str, lists: DomainLists) -> Result<(), String> {
        if lists.policy().is_err() {
            return Err("some lines are not domains; fix the lines marked and save again".into());
        }
        self.db
            .set_setting(&DomainLists::settings_key(skill), &lists)
            .await
            .map_err(|e| e.to_string())?;
        self.lists.borrow_mut().insert(skill.to_string(), lists);
        self.unreadable.borrow_mut().remove(skill);
        bump(self.version);
        Ok(())
    }

    /// Why `skill` may not run now, if its stored lists could not be read.
    fn refusal(&self, skill: &str) -> Option<SkillError> {
        self.unreadable.borrow().contains(skill).then(|| {
            SkillError::new(format!(
                "the domain lists of {skill} could not be read, so it runs nothing until they are saved again: open the Skills panel, check its lists and save them"
            ))
        })
    }

    /// Forgets the lists in memory, after all data was cleared.
    pub fn forget_lists(&self) {
        self.lists.borrow_mut().clear();
        self.unreadable.borrow_mut().clear();
        bump(self.version);
    }

    /// Runs a web skill call.
    pub async fn run(&self, skill: &str, arguments: &Value) -> Result<SkillOutput, SkillError> {
        if let Some(refused) = self.refusal(skill) {
            return Err(refused);
        }
        let lists = self.lists(skill);
        self.client.run_skill(skill, arguments, &lists).await
    }
}

/// The web skills are a source of their own: each call runs through the
/// proxy client with that skill's domain lists.
impl SkillSource for WebSkills {
    fn key(&self) -> SourceKey {
        SourceKey::Web
    }

    fn definitions(&self, _registry: &Registry) -> Vec<SkillDefinition> {
        hearth_core::builtin::web_skills()
    }

    fn execute<'a>(
        &'a self,
        skill: &'a SkillDefinition,
        call: &'a ToolCall,
    ) -> LocalBoxFuture<'a, Result<SkillOutput, SkillError>> {
        let client = self.client.clone();
        let id = skill.id.as_str().to_string();
        if let Some(refused) = self.refusal(&id) {
            return async move { Err(refused) }.boxed_local();
        }
        let lists = self.lists(&id);
        let arguments = call.arguments.clone();
        let failed = || SkillError::new(not_loaded("the web skills"));
        async move { enter(run_in_chunk(client, id, arguments, lists), failed).await }.boxed_local()
    }
}

// A web skill's call (its checks, the proxy's API, shaping the page or the
// results) is its own chunk, fetched with the first web call.
split_point!(
    web_run,
    preload warm_web,
    fn run_in_chunk(
        client: Rc<ProxyClient>,
        skill: String,
        arguments: Value,
        lists: DomainLists,
    ) -> LocalBoxFuture<'static, Result<SkillOutput, SkillError>> {
        Box::pin(async move { client.run_skill(&skill, &arguments, &lists).await })
    }
);
