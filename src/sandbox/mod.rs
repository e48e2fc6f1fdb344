//! The code sandbox: JavaScript and Python run in Workers inside an
//! opaque-origin iframe with no network, and come back as checked data.
//!
//! Other code runs snippets through [`sandbox`]`().run(`[`CodeRun`]`)`, or
//! [`run_script`] for a script that takes JSON input (Agent Skills tools).
//! The iframe is made on first use and replaced whenever it stops
//! answering or breaks the protocol; Python loads on its first run, with
//! its progress in [`Sandbox::python_state`], and then stays warm.

pub mod host;
pub mod python;
pub mod skill;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures::FutureExt;
use futures::future::{LocalBoxFuture, Shared};
use hearth_core::builtin::code::protocol::{
    HostMessage, Language, Limits, NamedBuffer, RunOutcome, RunRequest, SandboxMessage,
};
use hearth_core::builtin::code::{INTERRUPT_GRACE_MS, output};
use js_sys::{ArrayBuffer, Uint8Array};
use leptos::prelude::*;
use serde_json::Value;

use crate::files::skills::RunFile;
use crate::platform::new_id;
use crate::storage::{Db, StorageError};
use host::Connection;

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SandboxError {
    #[error("the sandbox could not start: {0}")]
    Start(String),
    #[error("the sandbox stopped answering, so it was restarted; run the code again")]
    Unresponsive,
    #[error(
        "the sandbox crashed (a run may have used more memory than the browser allows), so it was restarted; any Python variables are gone"
    )]
    Crashed,
    #[error("the sandbox sent a message Hearth refuses ({0}), so it was restarted")]
    Protocol(String),
    #[error("the sandbox refused the run: {0}")]
    Refused(String),
    #[error("Python could not be loaded: {0}")]
    Python(String),
    #[error("the browser refused: {0}")]
    Browser(String),
}

/// Where Python is, for the progress indicator and Settings.
#[derive(Clone, Debug, PartialEq)]
pub enum PythonState {
    NotLoaded,
    Downloading { loaded: f64, total: f64 },
    Starting,
    Ready { version: String, load_ms: f64 },
    Failed(String),
}

/// One snippet to run.
pub struct CodeRun {
    pub language: Language,
    pub code: String,
    /// JSON for the code: `input` in JavaScript, stdin in Python.
    pub input: Option<Value>,
    pub files: Vec<RunFile>,
    pub timeout_ms: u32,
    /// Python: runs with the same session share variables; `None` runs
    /// with fresh ones.
    pub session: Option<String>,
    /// The call that asked for the run (the id its approval, log record
    /// and card share), so its card's Stop finds it.
    pub call_id: Option<String>,
    /// Python: the conversation the run belongs to. Each conversation has
    /// an interpreter of its own, so its variables, modules and files are
    /// never seen by another conversation's code; `None` is the command
    /// bar's.
    pub conversation: Option<String>,
    pub limits: Limits,
}

impl CodeRun {
    /// A run with default limits, no files, no input and fresh state.
    pub fn new(language: Language, code: impl Into<String>) -> CodeRun {
        CodeRun {
            language,
            code: code.into(),
            input: None,
            files: Vec::new(),
            timeout_ms: language.default_timeout_ms(),
            session: None,
            call_id: None,
            conversation: None,
            limits: Limits::default(),
        }
    }
}

/// A run under way, for the Stop buttons.
#[derive(Clone, Debug, PartialEq)]
pub struct RunningCode {
    /// The request's id, which a stop names.
    request: String,
    pub call_id: Option<String>,
    pub conversation: Option<String>,
    pub language: Language,
}

/// Takes a run off the list of those under way when it ends, however it
/// ends (an answer, an error, or its future dropped).
struct Registered {
    running: ArcRwSignal<Vec<RunningCode>>,
    request: String,
}

impl Drop for Registered {
    fn drop(&mut self) {
        let request = &self.request;
        self.running
            .try_update(|r| r.retain(|x| &x.request != request));
    }
}

/// What came back: the checked outcome and the bytes of each artifact, in
/// the order the outcome lists them.
#[derive(Clone, Debug, PartialEq)]
pub struct CodeResult {
    pub outcome: RunOutcome,
    pub artifacts: Vec<Vec<u8>>,
}

type Starting = Shared<LocalBoxFuture<'static, Result<Rc<Connection>, SandboxError>>>;
type Loading = Shared<LocalBoxFuture<'static, Result<(), SandboxError>>>;

/// The app's one sandbox.
pub struct Sandbox {
    connection: RefCell<Option<Rc<Connection>>>,
    starting: RefCell<Option<Starting>>,
    loading: RefCell<Option<Loading>>,
    python: ArcRwSignal<PythonState>,
    persist_python: Cell<bool>,
    /// Whether the live sandbox is cross-origin isolated (so Python can be
    /// interrupted); `None` until it has started.
    isolated: ArcRwSignal<Option<bool>>,
    /// The runs under way, oldest first.
    running: ArcRwSignal<Vec<RunningCode>>,
    /// The time limits of runs that name none, as set in Settings.
    javascript_limit_ms: Cell<u32>,
    python_limit_ms: Cell<u32>,
}

impl Sandbox {
    /// The app's sandbox, not started yet: the iframe is made on first use
    /// (or by [`Sandbox::start`]). One is made at start-up, next to the
    /// other services.
    pub fn new() -> Rc<Sandbox> {
        Rc::new(Sandbox {
            connection: RefCell::new(None),
            starting: RefCell::new(None),
            loading: RefCell::new(None),
            python: ArcRwSignal::new(PythonState::NotLoaded),
            persist_python: Cell::new(true),
            isolated: ArcRwSignal::new(None),
            running: ArcRwSignal::new(Vec::new()),
            javascript_limit_ms: Cell::new(Language::Javascript.default_timeout_ms()),
            python_limit_ms: Cell::new(Language::Python.default_timeout_ms()),
        })
    }

    /// The runs under way, for views to follow.
    pub fn running(&self) -> ArcRwSignal<Vec<RunningCode>> {
        self.running.clone()
    }

    /// The time limit of a run in `language` that names none.
    pub fn time_limit_ms(&self, language: Language) -> u32 {
        match language {
            Language::Javascript => self.javascript_limit_ms.get(),
            Language::Python => self.python_limit_ms.get(),
        }
    }

    pub fn set_time_limit_ms(&self, language: Language, ms: u32) {
        match language {
            Language::Javascript => self.javascript_limit_ms.set(ms),
            Language::Python => self.python_limit_ms.set(ms),
        }
    }

    /// Stops the run the call `call_id` started, if it is still under way.
    /// Returns whether there was one to stop.
    pub fn stop_call(&self, call_id: &str) -> bool {
        self.stop_where(|r| r.call_id.as_deref() == Some(call_id))
    }

    /// Stops every run under way in `conversation` (`None`: the command
    /// bar outside any). Returns whether there was one to stop.
    pub fn stop_in(&self, conversation: Option<&str>) -> bool {
        self.stop_where(|r| r.conversation.as_deref() == conversation)
    }

    /// Asks the sandbox to stop the matching runs; each then answers as
    /// stopped (see `HostMessage::Stop`).
    fn stop_where(&self, matches: impl Fn(&RunningCode) -> bool) -> bool {
        let requests: Vec<String> = self.running.with_untracked(|r| {
            r.iter()
                .filter(|r| matches(r))
                .map(|r| r.request.clone())
                .collect()
        });
        let Some(connection) = self.connection.borrow().clone() else {
            return false;
        };
        for id in &requests {
            if let Err(e) = connection.post(&HostMessage::Stop { id: id.clone() }, Vec::new()) {
                web_sys::console::warn_1(&format!("the run could not be stopped: {e}").into());
            }
        }
        !requests.is_empty()
    }

    /// Python's state, for views to follow.
    pub fn python_state(&self) -> ArcRwSignal<PythonState> {
        self.python.clone()
    }

    /// Whether Python runs in a conversation share their variables.
    pub fn persist_python(&self) -> bool {
        self.persist_python.get()
    }

    pub fn set_persist_python(&self, on: bool) {
        self.persist_python.set(on);
    }

    /// Whether the sandbox can interrupt Python (it is cross-origin
    /// isolated), for views to follow; `None` before it has started.
    pub fn can_interrupt(&self) -> ArcRwSignal<Option<bool>> {
        self.isolated.clone()
    }

    async fn connection(self: &Rc<Self>) -> Result<Rc<Connection>, SandboxError> {
        if let Some(c) = self.connection.borrow().as_ref()
            && c.is_alive()
        {
            return Ok(c.clone());
        }
        let starting = {
            let mut slot = self.starting.borrow_mut();
            slot.get_or_insert_with(|| {
                async { Connection::open().await.map(Rc::new) }
                    .boxed_local()
                    .shared()
            })
            .clone()
        };
        let result = starting.await;
        self.starting.borrow_mut().take();
        let c = result?;
        let replaced = match self.connection.borrow().as_ref() {
            Some(old) => !Rc::ptr_eq(old, &c),
            None => true,
        };
        if replaced {
            *self.connection.borrow_mut() = Some(c.clone());
            self.isolated.set(Some(c.cross_origin_isolated));
            // A new iframe has no Python yet.
            if matches!(self.python.get_untracked(), PythonState::Ready { .. }) {
                self.python.set(PythonState::NotLoaded);
            }
        }
        Ok(c)
    }

    /// Starts the sandbox now, so the first run does not wait for it.
    pub async fn warm_up(self: &Rc<Self>) -> Result<(), SandboxError> {
        self.connection().await.map(|_| ())
    }

    /// Loads Python into the sandbox unless it is there.
    pub async fn ensure_python(self: &Rc<Self>) -> Result<(), SandboxError> {
        let connection = self.connection().await?;
        if connection.python_loaded.get() {
            return Ok(());
        }
        let loading = {
            let mut slot = self.loading.borrow_mut();
            slot.get_or_insert_with(|| {
                let this = self.clone();
                let connection = connection.clone();
                async move { this.load_python(&connection).await }
                    .boxed_local()
                    .shared()
            })
            .clone()
        };
        let result = loading.await;
        self.loading.borrow_mut().take();
        result
    }

    async fn load_python(&self, connection: &Connection) -> Result<(), SandboxError> {
        let state = self.python.clone();
        state.set(PythonState::Downloading {
            loaded: 0.0,
            total: 0.0,
        });
        let progress = {
            let state = state.clone();
            move |loaded, total| state.set(PythonState::Downloading { loaded, total })
        };
        let files = match python::fetch_runtime(progress).await {
            Ok(files) => files,
            Err(e) => {
                state.set(PythonState::Failed(e.to_string()));
                return Err(e);
            }
        };
        state.set(PythonState::Starting);
        let names: Vec<NamedBuffer> = files
            .iter()
            .enumerate()
            .map(|(i, (name, _))| NamedBuffer {
                name: name.clone(),
                buffer: i as u32,
            })
            .collect();
        let buffers: Vec<ArrayBuffer> = files.into_iter().map(|(_, b)| b).collect();
        let id = new_request_id();
        let message = HostMessage::LoadPython {
            id: id.clone(),
            files: names,
        };
        let reply = connection.request(&id, &message, buffers, 180_000).await;
        match reply {
            Ok((
                SandboxMessage::PythonReady {
                    version, load_ms, ..
                },
                _,
            )) => {
                connection.python_loaded.set(true);
                state.set(PythonState::Ready { version, load_ms });
                Ok(())
            }
            Ok((SandboxMessage::PythonFailed { message, .. }, _)) => {
                state.set(PythonState::Failed(message.clone()));
                Err(SandboxError::Python(message))
            }
            Ok((other, _)) => {
                let e = SandboxError::Protocol(format!("unexpected reply {other:?}"));
                state.set(PythonState::Failed(e.to_string()));
                Err(e)
            }
            Err(e) => {
                state.set(PythonState::Failed(e.to_string()));
                Err(e)
            }
        }
    }

    /// Throws Python's state away and starts a fresh interpreter.
    pub async fn restart_python(self: &Rc<Self>) -> Result<(), SandboxError> {
        let connection = self.connection().await?;
        if !connection.python_loaded.get() {
            return self.ensure_python().await;
        }
        self.python.set(PythonState::Starting);
        let id = new_request_id();
        let message = HostMessage::RestartPython { id: id.clone() };
        match connection.request(&id, &message, Vec::new(), 180_000).await {
            Ok((
                SandboxMessage::PythonReady {
                    version, load_ms, ..
                },
                _,
            )) => {
                self.python.set(PythonState::Ready { version, load_ms });
                Ok(())
            }
            Ok((SandboxMessage::PythonFailed { message, .. }, _)) => {
                self.python.set(PythonState::Failed(message.clone()));
                Err(SandboxError::Python(message))
            }
            Ok((other, _)) => Err(SandboxError::Protocol(format!(
                "unexpected reply {other:?}"
            ))),
            Err(e) => {
                self.python.set(PythonState::Failed(e.to_string()));
                Err(e)
            }
        }
    }

    /// Runs one snippet.
    pub async fn run(self: &Rc<Self>, run: CodeRun) -> Result<CodeResult, SandboxError> {
        let connection = self.connection().await?;
        if run.language == Language::Python {
            self.ensure_python().await?;
        }
        let id = new_request_id();
        let mut buffers = Vec::with_capacity(run.files.len());
        let mut files = Vec::with_capacity(run.files.len());
        for (i, f) in run.files.into_iter().enumerate() {
            files.push(NamedBuffer {
                name: f.path,
                buffer: i as u32,
            });
            buffers.push(f.bytes);
        }
        // The sandbox enforces the timeout itself; this deadline only
        // catches a sandbox that stopped answering altogether. Python may
        // have to restart (after an earlier run overran) before it starts.
        let deadline = run.timeout_ms.saturating_add(match run.language {
            Language::Javascript => 10_000,
            Language::Python => INTERRUPT_GRACE_MS + 180_000,
        });
        self.running.update(|r| {
            r.push(RunningCode {
                request: id.clone(),
                call_id: run.call_id.clone(),
                conversation: run.conversation.clone(),
                language: run.language,
            })
        });
        let _registered = Registered {
            running: self.running.clone(),
            request: id.clone(),
        };
        let message = HostMessage::Run(RunRequest {
            id: id.clone(),
            language: run.language,
            code: run.code,
            input: run.input,
            files,
            timeout_ms: run.timeout_ms,
            session: run.session,
            conversation: run.conversation,
            limits: run.limits,
        });
        match connection.request(&id, &message, buffers, deadline).await? {
            (SandboxMessage::Result { outcome, .. }, buffers) => {
                let artifacts = outcome
                    .artifacts
                    .iter()
                    .map(|a| {
                        buffers
                            .get(a.buffer as usize)
                            .map(|b| Uint8Array::new(b).to_vec())
                            .unwrap_or_default()
                    })
                    .collect();
                Ok(CodeResult {
                    outcome: *outcome,
                    artifacts,
                })
            }
            (SandboxMessage::Refused { message, .. }, _) => Err(SandboxError::Refused(message)),
            (other, _) => {
                let e = SandboxError::Protocol(format!("unexpected reply {other:?}"));
                connection.close(&e);
                Err(e)
            }
        }
    }
}

/// The settings-store key of the sandbox's preferences.
pub const PYTHON_PREFS_KEY: &str = "sandbox.python";

/// The sandbox's stored preferences, kept in the settings store: whether
/// Python keeps variables, and the time limits of runs that name none
/// (absent: the built-in defaults).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct SandboxPrefs {
    persist_state: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    javascript_limit_ms: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    python_limit_ms: Option<u32>,
}

impl Default for SandboxPrefs {
    fn default() -> Self {
        SandboxPrefs {
            persist_state: true,
            javascript_limit_ms: None,
            python_limit_ms: None,
        }
    }
}

/// How long after start-up the sandbox is started, once the app has
/// rendered: code runs are on by default, and starting the sandbox (a page
/// in a process of its own, and a worker) would otherwise fall on the first
/// run.
const WARM_UP_AFTER_MS: u32 = 1_500;

/// Reads the stored preferences into `sandbox` and starts it shortly
/// after start-up; called once.
pub fn install(sandbox: Rc<Sandbox>, db: Rc<Db>) {
    wasm_bindgen_futures::spawn_local(async move {
        if let Ok(Some(prefs)) = db.setting::<SandboxPrefs>(PYTHON_PREFS_KEY).await {
            sandbox.set_persist_python(prefs.persist_state);
            for (language, limit) in [
                (Language::Javascript, prefs.javascript_limit_ms),
                (Language::Python, prefs.python_limit_ms),
            ] {
                if let Some(ms) = limit {
                    sandbox.set_time_limit_ms(language, ms);
                }
            }
        }
        gloo_timers::future::TimeoutFuture::new(WARM_UP_AFTER_MS).await;
        if let Err(e) = sandbox.warm_up().await {
            web_sys::console::warn_1(&format!("the code sandbox did not start: {e}").into());
        }
    });
}

/// Changes the stored preferences, keeping what `change` leaves alone.
async fn update_prefs(db: &Db, change: impl FnOnce(&mut SandboxPrefs)) -> Result<(), StorageError> {
    let mut prefs = db
        .setting::<SandboxPrefs>(PYTHON_PREFS_KEY)
        .await?
        .unwrap_or_default();
    change(&mut prefs);
    db.set_setting(PYTHON_PREFS_KEY, &prefs).await
}

/// Stores whether Python keeps variables between runs.
pub async fn save_persist_python(db: &Db, on: bool) -> Result<(), StorageError> {
    update_prefs(db, |p| p.persist_state = on).await
}

/// Whether Python keeps variables between runs, if the person chose.
pub async fn load_persist_python(db: &Db) -> Result<Option<bool>, StorageError> {
    Ok(db
        .setting::<SandboxPrefs>(PYTHON_PREFS_KEY)
        .await?
        .map(|p| p.persist_state))
}

/// Stores the time limit of `language`'s runs that name none; the
/// built-in default is stored as no choice at all.
pub async fn save_time_limit(db: &Db, language: Language, ms: u32) -> Result<(), StorageError> {
    let chosen = (ms != language.default_timeout_ms()).then_some(ms);
    update_prefs(db, |p| match language {
        Language::Javascript => p.javascript_limit_ms = chosen,
        Language::Python => p.python_limit_ms = chosen,
    })
    .await
}

/// A fresh request id: letters, digits and '-', as the protocol wants.
fn new_request_id() -> String {
    new_id()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(64)
        .collect()
}

/// Runs a script that takes JSON input and answers with JSON (or text) on
/// stdout, as Agent Skills tools do: the input is stdin in Python and
/// `input` in JavaScript; nothing persists between calls. The answer is
/// the script's JSON output when stdout parses as JSON, else the value of
/// its last expression, else its stdout as a string. A Python script runs
/// in the interpreter of `conversation`, with fresh variables.
pub async fn run_script(
    sandbox: &Rc<Sandbox>,
    language: Language,
    source: &str,
    input: Value,
    files: Vec<RunFile>,
    timeout_ms: u32,
    conversation: Option<String>,
) -> Result<Value, String> {
    let mut run = CodeRun::new(language, source);
    run.input = Some(input);
    run.files = files;
    run.timeout_ms = timeout_ms;
    run.conversation = conversation;
    let result = sandbox.run(run).await.map_err(|e| e.to_string())?;
    output::script_output(language, &result.outcome, timeout_ms)
}
