//! Shared by the MCP integration tests: checks the test peers are installed,
//! starts them on free ports on 127.0.0.1, and hands out the native
//! transport. `cargo xtask test` installs the peers; a test that finds
//! them missing fails with what is missing.

#![allow(dead_code)]

use std::cell::RefCell;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use futures::future::LocalBoxFuture;
use hearth_core::mcp::{HttpRequest, HttpResponse, HttpTransport, TransportError};

#[path = "../../src/mcp/transport.rs"]
pub mod transport;

pub use transport::ReqwestTransport;

pub fn peers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp-peers")
}

static CHECKED: OnceLock<Result<(), String>> = OnceLock::new();

/// Whether the peers are installed, checked once per test binary by
/// `install.sh --check` (which installs nothing). `Err` says what is
/// missing; `cargo xtask test` installs them before the tests run.
pub fn check_installed() -> Result<(), String> {
    CHECKED
        .get_or_init(|| {
            let output = Command::new("sh")
                .arg(peers_dir().join("install.sh"))
                .arg("--check")
                .output()
                .map_err(|e| format!("cannot run install.sh --check: {e}"))?;
            if output.status.success() {
                Ok(())
            } else {
                Err(String::from_utf8_lossy(&output.stderr).trim().to_string())
            }
        })
        .clone()
}

/// Fails `test` with the reason when its peers are not installed: a test
/// that needs them never passes without running.
pub fn require_peers(test: &str) {
    if let Err(e) = check_installed() {
        panic!("{test} needs the MCP test peers, which are not installed.\n{e}");
    }
}

pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port on 127.0.0.1");
    listener.local_addr().expect("the port").port()
}

/// A running peer; killed when dropped.
pub struct Peer {
    child: Child,
    pub port: u16,
    pub url: String,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_until_listening(mut child: Child, port: u16, what: &str) -> Peer {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Peer {
                child,
                port,
                url: format!("http://127.0.0.1:{port}/mcp"),
            };
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited before listening: {status}");
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what} did not listen on port {port} within 30 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `@modelcontextprotocol/server-everything`, the 2025-11-25 peer.
pub fn start_everything() -> Peer {
    let port = free_port();
    let dir = peers_dir();
    let child = Command::new(dir.join("node_modules/.bin/node"))
        .arg(dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start server-everything");
    wait_until_listening(child, port, "server-everything")
}

/// The Python SDK server in `modern_server.py`, the 2026-07-28 peer.
pub fn start_modern() -> Peer {
    let port = free_port();
    let dir = peers_dir();
    let child = Command::new(dir.join(".venv/bin/python"))
        .arg(dir.join("modern_server.py"))
        .arg(port.to_string())
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the Python MCP server");
    wait_until_listening(child, port, "the Python MCP server")
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// The native transport, recording the JSON-RPC method (or HTTP method)
/// of every request it sends.
pub struct Recording {
    inner: ReqwestTransport,
    pub sent: RefCell<Vec<String>>,
}

impl Recording {
    pub fn new() -> Rc<Self> {
        Rc::new(Self {
            inner: ReqwestTransport::new().expect("the HTTP client"),
            sent: RefCell::new(Vec::new()),
        })
    }

    pub fn sent(&self) -> Vec<String> {
        self.sent.borrow().clone()
    }
}

impl HttpTransport for Recording {
    fn send(
        &self,
        request: HttpRequest,
    ) -> LocalBoxFuture<'_, Result<HttpResponse, TransportError>> {
        let method = request
            .body
            .as_ref()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(b).ok())
            .and_then(|v| v.get("method").and_then(|m| m.as_str()).map(str::to_string))
            .unwrap_or_else(|| request.method.as_str().to_string());
        self.sent.borrow_mut().push(method);
        self.inner.send(request)
    }

    fn sleep(&self, ms: u64) -> LocalBoxFuture<'_, ()> {
        self.inner.sleep(ms)
    }
}
