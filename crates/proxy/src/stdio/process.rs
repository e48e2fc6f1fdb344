//! One stdio MCP server process, supervised: started on demand, restarted
//! after a crash with exponential backoff, stopped when idle, its stderr
//! sent to the log (and kept, the last lines, for the Servers panel).
//!
//! Messages are newline-delimited JSON-RPC. Several HTTP clients (tabs,
//! reloads) share one process, so request ids are rewritten to ids the
//! bridge owns and mapped back on the way out; progress tokens and
//! subscription ids are rewritten the same way so notifications reach the
//! stream of the request they belong to. A process is initialised once;
//! later `initialize` requests are answered from its cached result.

use std::collections::{HashMap, HashSet, VecDeque};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use hearth_core::mcp::skills::ServerId;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::{mpsc, oneshot};

use super::config::ServerSpec;

/// Environment variables a server inherits; everything else it gets only
/// if the config file names it, so keys in the person's shell stay there.
const INHERITED_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "TEMP",
    "TMP",
    "SHELL",
    "TERM",
    "SYSTEMROOT",
    "APPDATA",
    "LOCALAPPDATA",
    "USERPROFILE",
];
const STDERR_LINES_KEPT: usize = 50;
const MAX_BACKOFF_SECS: u64 = 60;
/// A process that ran this long before crashing starts the backoff afresh.
const STABLE_AFTER: Duration = Duration::from_secs(60);

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BridgeError {
    #[error("the stdio server {name} crashed ({why}); it restarts in {secs} s")]
    Restarting {
        name: String,
        why: String,
        secs: u64,
    },
    #[error("the stdio server {name} could not be started: {why}")]
    SpawnFailed { name: String, why: String },
    #[error("this session of {0} has ended; initialize again")]
    UnknownSession(String),
    #[error("the stdio server {0} is not running")]
    NotRunning(String),
}

/// What the Servers panel can show about a stdio server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    pub running: bool,
    pub pid: Option<u32>,
    pub crashes: u32,
    pub last_exit: Option<String>,
    pub stderr_tail: Vec<String>,
}

struct Pending {
    tx: mpsc::UnboundedSender<Value>,
    client_id: Value,
    session: String,
    progress_token: Option<Value>,
    initialize: bool,
    modern: bool,
}

struct Running {
    generation: u64,
    pid: Option<u32>,
    started: Instant,
    stdin: mpsc::UnboundedSender<String>,
    kill: Option<oneshot::Sender<()>>,
    pending: HashMap<u64, Pending>,
    by_client: HashMap<(String, String), u64>,
    listeners: Vec<mpsc::UnboundedSender<Value>>,
    init: Option<Value>,
    initialized_sent: bool,
    sessions: HashSet<String>,
    last_activity: Instant,
}

enum Proc {
    Stopped,
    Running(Box<Running>),
}

struct State {
    proc: Proc,
    generation: u64,
    crashes: u32,
    retry_at: Option<Instant>,
    last_exit: Option<String>,
    stderr: VecDeque<String>,
}

pub struct StdioServer {
    name: ServerId,
    spec: ServerSpec,
    state: Mutex<State>,
    next_id: AtomicU64,
}

/// What `initialize` produced.
pub enum Initialized {
    /// The process was already initialised: its answer, for this client.
    Cached(Value),
    /// Forwarded; the answer arrives on the stream.
    Forwarded(Forwarded),
}

/// A forwarded request: the bridge's id for it and the stream of messages
/// for the client, ending with the response.
pub struct Forwarded {
    pub id: u64,
    pub messages: mpsc::UnboundedReceiver<Value>,
}

fn backoff_secs(crashes: u32) -> u64 {
    (1u64 << crashes.saturating_sub(1).min(6)).min(MAX_BACKOFF_SECS)
}

impl StdioServer {
    pub fn new(name: ServerId, spec: ServerSpec) -> Arc<Self> {
        Arc::new(Self {
            name,
            spec,
            state: Mutex::new(State {
                proc: Proc::Stopped,
                generation: 0,
                crashes: 0,
                retry_at: None,
                last_exit: None,
                stderr: VecDeque::new(),
            }),
            next_id: AtomicU64::new(1),
        })
    }

    pub fn name(&self) -> &ServerId {
        &self.name
    }

    /// How it is started, as the config file says.
    pub fn spec(&self) -> &ServerSpec {
        &self.spec
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves consistent-enough data
        // (maps of channels); keep serving rather than poisoning forever.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn status(&self) -> Status {
        let s = self.lock();
        let (running, pid) = match &s.proc {
            Proc::Running(r) => (true, r.pid),
            Proc::Stopped => (false, None),
        };
        Status {
            running,
            pid,
            crashes: s.crashes,
            last_exit: s.last_exit.clone(),
            stderr_tail: s.stderr.iter().cloned().collect(),
        }
    }

    /// Starts the process unless it runs, or is waiting out a backoff.
    fn ensure_running<'a>(
        self: &Arc<Self>,
        state: &mut MutexGuard<'a, State>,
    ) -> Result<(), BridgeError> {
        if matches!(state.proc, Proc::Running(_)) {
            return Ok(());
        }
        if let Some(at) = state.retry_at {
            let now = Instant::now();
            if at > now {
                return Err(BridgeError::Restarting {
                    name: self.name.to_string(),
                    why: state
                        .last_exit
                        .clone()
                        .unwrap_or_else(|| "it exited".into()),
                    secs: (at - now).as_secs().max(1),
                });
            }
        }
        let mut cmd = Command::new(&self.spec.command);
        cmd.args(&self.spec.args)
            .env_clear()
            .envs(
                INHERITED_ENV
                    .iter()
                    .filter_map(|k| std::env::var_os(k).map(|v| (*k, v))),
            )
            .envs(&self.spec.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(cwd) = &self.spec.cwd {
            cmd.current_dir(cwd);
        }
        let mut child = cmd.spawn().map_err(|e| BridgeError::SpawnFailed {
            name: self.name.to_string(),
            why: format!("{}: {e}", self.spec.command),
        })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(BridgeError::SpawnFailed {
                name: self.name.to_string(),
                why: "its standard streams could not be opened".into(),
            });
        };
        state.generation += 1;
        let generation = state.generation;
        let (line_tx, mut line_rx) = mpsc::unbounded_channel::<String>();
        let (kill_tx, kill_rx) = oneshot::channel();
        let pid = child.id();
        tracing::info!(server = %self.name, pid, "started stdio MCP server");

        tokio::spawn(async move {
            let mut stdin = stdin;
            while let Some(mut line) = line_rx.recv().await {
                line.push('\n');
                if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
            }
            // Dropping stdin closes it: well-behaved servers exit on EOF.
        });
        let reader = self.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if line.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<Value>(&line) {
                    Ok(msg) => reader.route_from_server(generation, msg),
                    Err(_) => tracing::warn!(server = %reader.name, "not JSON on stdout: {line}"),
                }
            }
        });
        let logger = self.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::info!(target: "hearth::mcp::stdio", server = %logger.name, "{line}");
                let mut s = logger.lock();
                if s.stderr.len() == STDERR_LINES_KEPT {
                    s.stderr.pop_front();
                }
                s.stderr.push_back(line);
            }
        });
        let waiter = self.clone();
        tokio::spawn(async move {
            let status = tokio::select! {
                status = child.wait() => status,
                _ = kill_rx => {
                    // Give it a moment to exit on EOF, then insist.
                    match tokio::time::timeout(Duration::from_secs(2), child.wait()).await {
                        Ok(status) => status,
                        Err(_) => {
                            let _ = child.start_kill();
                            child.wait().await
                        }
                    }
                }
            };
            let why = match status {
                Ok(s) => s.to_string(),
                Err(e) => e.to_string(),
            };
            waiter.exited(generation, why);
        });

        let now = Instant::now();
        state.proc = Proc::Running(Box::new(Running {
            generation,
            pid,
            started: now,
            stdin: line_tx,
            kill: Some(kill_tx),
            pending: HashMap::new(),
            by_client: HashMap::new(),
            listeners: Vec::new(),
            init: None,
            initialized_sent: false,
            sessions: HashSet::new(),
            last_activity: now,
        }));
        Ok(())
    }

    /// The process ended. If it was not stopped on purpose, that is a crash.
    fn exited(&self, generation: u64, why: String) {
        let mut s = self.lock();
        let Proc::Running(running) = &mut s.proc else {
            return;
        };
        if running.generation != generation {
            return;
        }
        let ran = running.started.elapsed();
        for (_, p) in running.pending.drain() {
            let _ = p.tx.send(json!({"jsonrpc": "2.0", "id": p.client_id, "error": {
                "code": -32603,
                "message": format!("the stdio server {} exited ({why}) before answering", self.name)}}));
        }
        s.proc = Proc::Stopped;
        s.crashes = if ran > STABLE_AFTER { 1 } else { s.crashes + 1 };
        let secs = backoff_secs(s.crashes);
        s.retry_at = Some(Instant::now() + Duration::from_secs(secs));
        s.last_exit = Some(why.clone());
        tracing::warn!(server = %self.name, "stdio MCP server exited ({why}); restarting on demand after {secs} s");
    }

    /// Stops the process on purpose (idle, or hearth shutting down).
    pub fn stop(&self, why: &str) {
        let mut s = self.lock();
        if let Proc::Running(running) = &mut s.proc {
            if let Some(kill) = running.kill.take() {
                let _ = kill.send(());
            }
            tracing::info!(server = %self.name, "stopped stdio MCP server: {why}");
            s.proc = Proc::Stopped;
            s.retry_at = None;
        }
    }

    /// Stops the process if nothing has used it for its idle time.
    pub fn reap_if_idle(&self) -> bool {
        let idle = Duration::from_secs(self.spec.idle_timeout_secs);
        let quiet = {
            let mut s = self.lock();
            match &mut s.proc {
                Proc::Running(r) => {
                    r.listeners.retain(|l| !l.is_closed());
                    r.pending.retain(|_, p| !p.tx.is_closed() || p.initialize);
                    r.pending.is_empty()
                        && r.listeners.is_empty()
                        && r.last_activity.elapsed() >= idle
                }
                Proc::Stopped => false,
            }
        };
        if quiet {
            self.stop("idle");
        }
        quiet
    }

    pub fn idle_timeout(&self) -> Duration {
        Duration::from_secs(self.spec.idle_timeout_secs)
    }

    fn running<'a>(&self, s: &'a mut State) -> Result<&'a mut Running, BridgeError> {
        match &mut s.proc {
            Proc::Running(r) => Ok(r),
            Proc::Stopped => Err(BridgeError::NotRunning(self.name.to_string())),
        }
    }

    fn send_line(running: &mut Running, msg: &Value) {
        running.last_activity = Instant::now();
        let _ = running.stdin.send(msg.to_string());
    }

    /// `initialize` from a client opening `session`.
    pub fn initialize(
        self: &Arc<Self>,
        session: &str,
        msg: Map<String, Value>,
    ) -> Result<Initialized, BridgeError> {
        let mut s = self.lock();
        self.ensure_running(&mut s)?;
        let running = self.running(&mut s)?;
        running.sessions.insert(session.to_string());
        if let Some(init) = &running.init {
            running.last_activity = Instant::now();
            return Ok(Initialized::Cached(json!({
                "jsonrpc": "2.0", "id": msg.get("id").cloned().unwrap_or(Value::Null), "result": init
            })));
        }
        drop(s);
        self.forward(Some(session), msg, true)
            .map(Initialized::Forwarded)
    }

    /// Forwards a client request.
    pub fn request(
        self: &Arc<Self>,
        session: Option<&str>,
        msg: Map<String, Value>,
    ) -> Result<Forwarded, BridgeError> {
        self.forward(session, msg, false)
    }

    fn forward(
        self: &Arc<Self>,
        session: Option<&str>,
        mut msg: Map<String, Value>,
        initialize: bool,
    ) -> Result<Forwarded, BridgeError> {
        let mut s = self.lock();
        self.ensure_running(&mut s)?;
        let running = self.running(&mut s)?;
        if let Some(session) = session
            && !running.sessions.contains(session)
        {
            return Err(BridgeError::UnknownSession(self.name.to_string()));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let client_id = msg.insert("id".into(), json!(id)).unwrap_or(Value::Null);
        let meta = msg
            .get_mut("params")
            .and_then(Value::as_object_mut)
            .and_then(|p| p.get_mut("_meta"))
            .and_then(Value::as_object_mut);
        let (progress_token, modern) = match meta {
            Some(meta) => {
                let token = meta.get("progressToken").cloned();
                if token.is_some() {
                    meta.insert("progressToken".into(), json!(format!("hearth-{id}")));
                }
                (
                    token,
                    meta.contains_key("io.modelcontextprotocol/protocolVersion"),
                )
            }
            None => (None, false),
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let session = session.unwrap_or_default().to_string();
        running
            .by_client
            .insert((session.clone(), client_id.to_string()), id);
        running.pending.insert(
            id,
            Pending {
                tx,
                client_id,
                session,
                progress_token,
                initialize,
                modern,
            },
        );
        Self::send_line(running, &Value::Object(msg));
        Ok(Forwarded { id, messages: rx })
    }

    /// A client notification: `initialized` goes through once per process;
    /// `cancelled` is mapped to the bridge's id.
    pub fn notify(
        self: &Arc<Self>,
        session: Option<&str>,
        mut msg: Map<String, Value>,
    ) -> Result<(), BridgeError> {
        let mut s = self.lock();
        let Ok(running) = self.running(&mut s) else {
            // Nothing to tell a process that is not running.
            return Ok(());
        };
        match msg.get("method").and_then(Value::as_str) {
            Some("notifications/initialized") => {
                if running.initialized_sent {
                    return Ok(());
                }
                running.initialized_sent = true;
            }
            Some("notifications/cancelled") => {
                let key = (
                    session.unwrap_or_default().to_string(),
                    msg.get("params")
                        .and_then(|p| p.get("requestId"))
                        .map(Value::to_string)
                        .unwrap_or_default(),
                );
                let Some(id) = running.by_client.get(&key).copied() else {
                    return Ok(());
                };
                if let Some(params) = msg.get_mut("params").and_then(Value::as_object_mut) {
                    params.insert("requestId".into(), json!(id));
                }
            }
            _ => {}
        }
        Self::send_line(running, &Value::Object(msg));
        Ok(())
    }

    /// A client's answer to a request the server made.
    pub fn respond(&self, msg: Value) {
        let mut s = self.lock();
        if let Ok(running) = self.running(&mut s) {
            Self::send_line(running, &msg);
        }
    }

    /// The client hung up before the answer: on 2026-07-28 that cancels.
    pub fn abandon(&self, id: u64) {
        let mut s = self.lock();
        let Ok(running) = self.running(&mut s) else {
            return;
        };
        if let Some(p) = running.pending.remove(&id) {
            running
                .by_client
                .remove(&(p.session.clone(), p.client_id.to_string()));
            if p.modern {
                let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": id, "reason": "the client closed the stream"}});
                Self::send_line(running, &cancel);
            }
        }
    }

    /// The stream of server-initiated messages for a session (legacy GET).
    pub fn listen(
        self: &Arc<Self>,
        session: &str,
    ) -> Result<mpsc::UnboundedReceiver<Value>, BridgeError> {
        let mut s = self.lock();
        self.ensure_running(&mut s)?;
        let running = self.running(&mut s)?;
        if !running.sessions.contains(session) {
            return Err(BridgeError::UnknownSession(self.name.to_string()));
        }
        let (tx, rx) = mpsc::unbounded_channel();
        running.listeners.push(tx);
        Ok(rx)
    }

    pub fn has_session(&self, session: &str) -> bool {
        let mut s = self.lock();
        self.running(&mut s)
            .map(|r| r.sessions.contains(session))
            .unwrap_or(false)
    }

    pub fn end_session(&self, session: &str) -> bool {
        let mut s = self.lock();
        self.running(&mut s)
            .map(|r| r.sessions.remove(session))
            .unwrap_or(false)
    }

    /// Routes one message from the process to the client it belongs to.
    fn route_from_server(&self, generation: u64, mut msg: Value) {
        let mut s = self.lock();
        let Proc::Running(running) = &mut s.proc else {
            return;
        };
        if running.generation != generation {
            return;
        }
        running.last_activity = Instant::now();
        let has_method = msg.get("method").is_some();
        let id = msg.get("id").cloned();
        match (has_method, id) {
            // A response to one of ours.
            (false, Some(id)) => {
                let Some(n) = id.as_u64() else {
                    return;
                };
                let Some(p) = running.pending.remove(&n) else {
                    return;
                };
                running
                    .by_client
                    .remove(&(p.session.clone(), p.client_id.to_string()));
                msg["id"] = p.client_id.clone();
                if p.initialize
                    && let Some(result) = msg.get("result")
                {
                    running.init = Some(result.clone());
                }
                let _ = p.tx.send(msg);
            }
            // A request from the server.
            (true, Some(id)) => {
                if msg.get("method").and_then(Value::as_str) == Some("ping") {
                    let pong = json!({"jsonrpc": "2.0", "id": id, "result": {}});
                    Self::send_line(running, &pong);
                    return;
                }
                running.listeners.retain(|l| !l.is_closed());
                let delivered = running
                    .listeners
                    .iter()
                    .any(|l| l.send(msg.clone()).is_ok())
                    || running
                        .pending
                        .values()
                        .filter(|p| !p.initialize)
                        .any(|p| p.tx.send(msg.clone()).is_ok());
                if !delivered {
                    let refusal = json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": -32603, "message": "no client is connected to answer this request"}});
                    Self::send_line(running, &refusal);
                }
            }
            // A notification.
            (true, None) => {
                let params = msg.get_mut("params").and_then(Value::as_object_mut);
                let mut target: Option<u64> = None;
                if let Some(params) = params {
                    if let Some(n) = params
                        .get("progressToken")
                        .and_then(Value::as_str)
                        .and_then(|t| t.strip_prefix("hearth-"))
                        .and_then(|t| t.parse::<u64>().ok())
                        && let Some(p) = running.pending.get(&n)
                    {
                        params.insert(
                            "progressToken".into(),
                            p.progress_token.clone().unwrap_or(Value::Null),
                        );
                        target = Some(n);
                    } else if let Some(meta) =
                        params.get_mut("_meta").and_then(Value::as_object_mut)
                        && let Some(n) = meta
                            .get("io.modelcontextprotocol/subscriptionId")
                            .and_then(Value::as_u64)
                        && let Some(p) = running.pending.get(&n)
                    {
                        meta.insert(
                            "io.modelcontextprotocol/subscriptionId".into(),
                            p.client_id.clone(),
                        );
                        target = Some(n);
                    }
                }
                match target.and_then(|n| running.pending.get(&n)) {
                    Some(p) => {
                        let _ = p.tx.send(msg);
                    }
                    None => {
                        running.listeners.retain(|l| l.send(msg.clone()).is_ok());
                    }
                }
            }
            (false, None) => {
                tracing::warn!(server = %self.name, "ignored a message that is neither request, response nor notification");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_a_minute() {
        let table: Vec<(u32, u64)> =
            vec![(1, 1), (2, 2), (3, 4), (4, 8), (6, 32), (7, 60), (20, 60)];
        for (crashes, secs) in table {
            assert_eq!(backoff_secs(crashes), secs, "{crashes} crashes");
        }
    }
}
