//! The real `hearth serve` binary, started for one test: on a free
//! loopback port, over a throwaway app and config directory, and killed
//! when the test ends however it ends.

use std::io::BufRead;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running `hearth serve`.
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
    /// The first line it printed: the launch link.
    pub line: String,
}

impl Server {
    /// The app's key, read from the launch link.
    #[allow(dead_code)]
    pub fn key(&self) -> String {
        let (_, key) = self
            .line
            .split_once("#token=")
            .unwrap_or_else(|| panic!("no key in the launch link: {}", self.line));
        key.to_string()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A one-page app in `dir`, enough for `hearth serve --dist`.
pub fn fake_dist(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("index.html"),
        "<!doctype html><title>Hearth</title>",
    )
    .unwrap();
    dir.to_path_buf()
}

/// Starts `hearth serve` with `args` on a free port, serving `dist` with
/// `config_dir` as its configuration (none from the environment), and
/// waits for its "running at" line.
pub fn start(args: &[&str], dist: &Path, config_dir: &Path) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .arg("serve")
        .args(["--port", "0", "--dist"])
        .arg(dist)
        .arg("--config-dir")
        .arg(config_dir)
        .args(args)
        .env_remove("HEARTH_CONFIG")
        .env_remove("HEARTH_CONFIG_DIR")
        .env_remove("HEARTH_MCP_SERVERS")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    // Reads the first line for us, then keeps draining so the server never
    // blocks on a full pipe.
    std::thread::spawn(move || {
        let mut lines = std::io::BufReader::new(stdout).lines();
        if let Some(Ok(first)) = lines.next() {
            let _ = tx.send(first);
        }
        for _ in lines {}
    });
    let mut server = Server {
        child,
        addr: "127.0.0.1:0".parse().unwrap(),
        line: String::new(),
    };
    let line = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("hearth serve did not start within 30 s");
    let url = line
        .strip_prefix("Hearth is running at http://")
        .unwrap_or_else(|| panic!("unexpected first line: {line}"));
    let (authority, _) = url.split_once('/').unwrap_or((url, ""));
    server.addr = authority.parse().unwrap();
    server.line = line;
    server
}
