//! Network-tier benchmark: prints figures, asserts nothing.
//!
//! 1. Proxy overhead: median latency of fetching a loopback page through
//!    `POST /api/fetch` against fetching it directly (ratio of medians).
//! 2. Sustained load: requests per second and p50/p99 latency with N
//!    concurrent clients for a fixed time.
//!
//! It runs the real `hearth serve` (built with this bench's profile) and
//! an upstream page server in this process, all on 127.0.0.1. Figures depend
//! on the build profile: the workspace's release profile is tuned for the
//! wasm bundle's size (`opt-level = "z"`), so `cargo xtask bench` runs this
//! with the `native` profile the `hearth` binary is built with.
//! Run: `cargo bench --profile native -p hearth-proxy --bench net` (env
//! `NET_BENCH_N`, `NET_BENCH_SECS` override the request count and load
//! duration).

use std::io::BufRead;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::header;
use axum::routing::get;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};

#[path = "../../core/benches/support/figure.rs"]
mod figure;
use figure::figure;

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A page of about 20 KB, shaped like an article.
fn article() -> String {
    let mut html = String::from(
        "<!doctype html><html><head><title>Benchmark article</title><style>p{margin:0}</style></head><body><nav><a href='/'>Home</a></nav><main><h1>Benchmark article</h1>",
    );
    for i in 0..60 {
        html.push_str(&format!(
            "<h2>Section {i}</h2><p>Paragraph {i} with <b>bold</b>, <i>italic</i> and a <a href='/link/{i}'>link number {i}</a>. \
             Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt.</p><ul><li>item a</li><li>item b</li></ul>"
        ));
    }
    html.push_str("</main><footer>© bench</footer></body></html>");
    html
}

/// Serves the page as HTML at `/page` and the same bytes as plain text at
/// `/page.txt`, so the difference shows what reading HTML costs.
async fn upstream(page: Arc<String>) -> SocketAddr {
    let serve_as = |ct: &'static str, page: Arc<String>| {
        get(move || {
            let page = page.clone();
            async move { ([(header::CONTENT_TYPE, ct)], (*page).clone()) }
        })
    };
    let app = Router::new()
        .route("/page", serve_as("text/html; charset=utf-8", page.clone()))
        .route("/page.txt", serve_as("text/plain; charset=utf-8", page));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
}

fn start_hearth(
    up: SocketAddr,
    dist: &std::path::Path,
    conf: &std::path::Path,
) -> (Server, SocketAddr, String) {
    std::fs::write(
        dist.join("index.html"),
        "<!doctype html><title>bench</title>",
    )
    .unwrap();
    std::fs::write(
        conf.join("config.toml"),
        "[fetch]\nmax_concurrent = 256\n\n[rate_limit.web_fetch]\nper_minute = 1e9\nburst = 1000000\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(["serve", "--port", "0", "--dist"])
        .arg(dist)
        .arg("--config-dir")
        .arg(conf)
        .args(["--allow-private-fetch", &up.to_string()])
        .env_remove("HEARTH_CONFIG")
        .env_remove("HEARTH_CONFIG_DIR")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("cannot start hearth");
    let stdout = child.stdout.take().unwrap();
    let mut lines = std::io::BufReader::new(stdout).lines();
    let first = lines.next().expect("hearth printed nothing").unwrap();
    std::thread::spawn(move || for _ in lines {});
    // The launch link: `http://ADDR/#token=KEY`.
    let (addr, key) = first
        .strip_prefix("Hearth is running at http://")
        .and_then(|rest| rest.split_once("/#token="))
        .expect("unexpected first line");
    (Server(child), addr.parse().unwrap(), key.to_string())
}

async fn connect(addr: SocketAddr) -> SendRequest<Full<Bytes>> {
    let stream = TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    sender
}

/// Sends one request on `sender` and reads the whole body; returns its size.
async fn send(
    sender: &mut SendRequest<Full<Bytes>>,
    req: Request<Full<Bytes>>,
) -> Result<usize, String> {
    sender.ready().await.map_err(|e| e.to_string())?;
    let res = sender.send_request(req).await.map_err(|e| e.to_string())?;
    let ok = res.status().is_success();
    let status = res.status();
    let body = res
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    if ok {
        Ok(body.len())
    } else {
        Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&body)))
    }
}

fn direct_request(up: SocketAddr) -> Request<Full<Bytes>> {
    Request::get("/page")
        .header(header::HOST, up.to_string())
        .body(Full::new(Bytes::new()))
        .unwrap()
}

struct Api {
    addr: SocketAddr,
    token: String,
    html_url: String,
    text_url: String,
}

impl Api {
    fn fetch_request(&self, url: &str) -> Request<Full<Bytes>> {
        Request::builder()
            .method(Method::POST)
            .uri("/api/fetch")
            .header(header::HOST, self.addr.to_string())
            .header(header::ORIGIN, format!("http://{}", self.addr))
            .header("sec-fetch-site", "same-origin")
            .header("x-hearth-token", &self.token)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(
                serde_json::json!({ "url": url }).to_string(),
            )))
            .unwrap()
    }

    fn html(&self) -> Request<Full<Bytes>> {
        self.fetch_request(&self.html_url)
    }

    fn text(&self) -> Request<Full<Bytes>> {
        self.fetch_request(&self.text_url)
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse.
    let n = env_or("NET_BENCH_N", 2000) as usize;
    let secs = env_or("NET_BENCH_SECS", 5);
    let page = Arc::new(article());
    let up = upstream(page.clone()).await;
    let dist = tempfile::tempdir().unwrap();
    let conf = tempfile::tempdir().unwrap();
    let (_server, addr, key) = start_hearth(up, dist.path(), conf.path());

    let api = Arc::new(Api {
        addr,
        token: key,
        html_url: format!("http://{up}/page"),
        text_url: format!("http://{up}/page.txt"),
    });

    println!(
        "network-tier benchmark (loopback, {} CPUs)",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    );
    println!("page: {} bytes of HTML", page.len());
    let mut conn = connect(addr).await;
    let probe = send(&mut conn, api.html())
        .await
        .expect("the proxy must fetch the page");
    println!("proxy answer: {probe} bytes of JSON (Markdown, title, links)\n");

    // Warm up all three paths.
    for _ in 0..100 {
        let mut c = connect(up).await;
        send(&mut c, direct_request(up)).await.unwrap();
        send(&mut conn, api.html()).await.unwrap();
    }

    // 1. Overhead: sequential requests, median and p99 of each path.
    let mut direct_fresh = Vec::with_capacity(n);
    let mut direct_keep = Vec::with_capacity(n);
    let mut proxied = Vec::with_capacity(n);
    let mut proxied_text = Vec::with_capacity(n);
    let mut keep = connect(up).await;
    for _ in 0..n {
        let t = Instant::now();
        let mut c = connect(up).await;
        send(&mut c, direct_request(up)).await.unwrap();
        direct_fresh.push(t.elapsed());

        let t = Instant::now();
        send(&mut keep, direct_request(up)).await.unwrap();
        direct_keep.push(t.elapsed());

        let t = Instant::now();
        send(&mut conn, api.html()).await.unwrap();
        proxied.push(t.elapsed());

        let t = Instant::now();
        send(&mut conn, api.text()).await.unwrap();
        proxied_text.push(t.elapsed());
    }
    for v in [
        &mut direct_fresh,
        &mut direct_keep,
        &mut proxied,
        &mut proxied_text,
    ] {
        v.sort();
    }
    println!("1. latency over {n} sequential requests (interleaved)");
    println!("   {:<44} {:>9} {:>9}", "path", "median", "p99");
    for (name, v) in [
        ("direct GET, new connection each", &direct_fresh),
        ("direct GET, keep-alive", &direct_keep),
        ("POST /api/fetch, HTML to Markdown", &proxied),
        ("POST /api/fetch, same bytes as text/plain", &proxied_text),
    ] {
        println!(
            "   {:<44} {:>7.3}ms {:>7.3}ms",
            name,
            ms(percentile(v, 0.5)),
            ms(percentile(v, 0.99))
        );
    }
    let ratio = |a: &[Duration], b: &[Duration]| ms(percentile(a, 0.5)) / ms(percentile(b, 0.5));
    println!(
        "   ratio of medians, proxy (HTML) / direct: {:.2}x (new connection), {:.2}x (keep-alive)",
        ratio(&proxied, &direct_fresh),
        ratio(&proxied, &direct_keep)
    );
    println!(
        "   ratio of medians, proxy (text) / direct, new connection: {:.2}x; reading the HTML adds {:.3}ms\n",
        ratio(&proxied_text, &direct_fresh),
        ms(percentile(&proxied, 0.5)) - ms(percentile(&proxied_text, 0.5))
    );
    let each = format!("median of {n} sequential requests, interleaved");
    figure(
        "direct GET of the page, keep-alive",
        ms(percentile(&direct_keep, 0.5)),
        "ms",
        None,
        &each,
    );
    figure(
        "POST /api/fetch of the page (HTML to Markdown), keep-alive",
        ms(percentile(&proxied, 0.5)),
        "ms",
        None,
        &each,
    );
    println!(
        "BENCH {}",
        serde_json::json!({"figure": "proxy fetch vs direct GET", "value": ratio(&proxied, &direct_keep),
            "unit": "×", "anchor": "direct GET of the page, keep-alive"})
    );

    // 2. Sustained load.
    println!(
        "2. sustained load: POST /api/fetch, each client on its own keep-alive connection, {secs} s per run"
    );
    println!(
        "   {:>7} {:>10} {:>9} {:>9} {:>9} {:>7}",
        "clients", "requests", "req/s", "p50", "p99", "errors"
    );
    for clients in [1usize, 8, 32] {
        let stop = Arc::new(AtomicBool::new(false));
        let mut tasks = Vec::new();
        let started = Instant::now();
        for _ in 0..clients {
            let api = api.clone();
            let stop = stop.clone();
            tasks.push(tokio::spawn(async move {
                let mut conn = connect(api.addr).await;
                let mut lat = Vec::new();
                let mut errors = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    match send(&mut conn, api.html()).await {
                        Ok(_) => lat.push(t.elapsed()),
                        Err(_) => {
                            errors += 1;
                            conn = connect(api.addr).await;
                        }
                    }
                }
                (lat, errors)
            }));
        }
        tokio::time::sleep(Duration::from_secs(secs)).await;
        stop.store(true, Ordering::Relaxed);
        let mut all = Vec::new();
        let mut errors = 0;
        for t in tasks {
            let (lat, e) = t.await.unwrap();
            all.extend(lat);
            errors += e;
        }
        let elapsed = started.elapsed().as_secs_f64();
        all.sort();
        println!(
            "   {:>7} {:>10} {:>9.0} {:>7.2}ms {:>7.2}ms {:>7}",
            clients,
            all.len(),
            all.len() as f64 / elapsed,
            ms(percentile(&all, 0.5)),
            ms(percentile(&all, 0.99)),
            errors
        );
        figure(
            &format!("proxy sustained load, {clients} client(s)"),
            all.len() as f64 / elapsed,
            "req/s",
            None,
            &format!(
                "{secs} s; p50 {:.2} ms, p99 {:.2} ms, {errors} errors",
                ms(percentile(&all, 0.5)),
                ms(percentile(&all, 0.99))
            ),
        );
    }
}
