//! Behaviour and attack tests of the web feature: pages fetched and read,
//! other content refused, redirects and domain lists checked at every hop,
//! the time limit, and search through SearXNG and Brave.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use hearth_core::api::web::{DocumentKind, FetchResponse, Link, SearchHit, SearchResponse};
use serde_json::{Value, json};

use crate::web::search::SearchBackend;
use crate::web::testing::*;

#[tokio::test]
async fn allowlisted_loopback_pages_are_fetched_and_read() {
    let up = upstream().await;
    let h = harness(|c| c.allow_private = vec![allow(up)]);
    let base = format!("http://{up}");
    let (status, v) = fetch(&h, json!({"url": format!("{base}/page.html")})).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let page: FetchResponse = serde_json::from_value(v).unwrap();
    assert_eq!(
        page,
        FetchResponse {
            url: format!("{base}/page.html"),
            requested_url: format!("{base}/page.html"),
            host: "127.0.0.1".into(),
            status: 200,
            kind: DocumentKind::Html,
            content_type: "text/html".into(),
            charset: "UTF-8".into(),
            lossy: false,
            title: Some("Test & Page".into()),
            content: format!(
                "## Welcome\n\nHello **world**. Read [the intro]({base}/docs/intro).\n\n- one\n- two\n\n```sh\necho hi\n```\n\n[Elsewhere](https://example.org/x)"
            ),
            links: vec![
                Link {
                    text: "the intro".into(),
                    url: format!("{base}/docs/intro")
                },
                Link {
                    text: "Elsewhere".into(),
                    url: "https://example.org/x".into()
                },
            ],
            bytes: PAGE.len() as u64,
            redirects: 0,
        }
    );

    // (path, kind, content type, charset, content, title)
    let echo = up.to_string();
    let cases = [
        (
            "/data.json",
            DocumentKind::Json,
            "application/json",
            "UTF-8",
            "{\n  \"name\": \"hearth\",\n  \"tags\": [\n    \"a\",\n    \"b\"\n  ]\n}",
            None,
        ),
        (
            "/text.txt",
            DocumentKind::Text,
            "text/plain",
            "UTF-8",
            "just text\n",
            None,
        ),
        (
            "/latin1",
            DocumentKind::Html,
            "text/html",
            "windows-1252",
            "crème",
            Some("Café"),
        ),
        (
            "/gzip",
            DocumentKind::Html,
            "text/html",
            "UTF-8",
            "## Zipped\n\ninside",
            None,
        ),
        (
            "/echo-host",
            DocumentKind::Text,
            "text/plain",
            "UTF-8",
            echo.as_str(),
            None,
        ),
    ];
    for (path, kind, ct, charset, text, title) in cases {
        let (status, v) = fetch(&h, json!({"url": format!("{base}{path}")})).await;
        assert_eq!(status, StatusCode::OK, "{path}: {v}");
        let page: FetchResponse = serde_json::from_value(v).unwrap();
        assert_eq!(
            (
                page.kind,
                page.content_type.as_str(),
                page.charset.as_str(),
                page.content.as_str(),
                page.title.as_deref()
            ),
            (kind, ct, charset, text, title),
            "{path}"
        );
    }
}

#[tokio::test]
async fn other_content_is_refused_with_a_clear_message() {
    let up = upstream().await;
    let h = harness(|c| c.allow_private = vec![allow(up)]);
    let base = format!("http://{up}");
    let cases = [
        (
            "/doc.pdf",
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            error(
                "unsupported_content_type",
                "application/pdf content is not supported; web_fetch reads HTML, JSON and plain text",
            ),
        ),
        (
            "/blob",
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            error(
                "unsupported_content_type",
                "application/octet-stream content is not supported; web_fetch reads HTML, JSON and plain text",
            ),
        ),
        (
            "/bad.json",
            StatusCode::BAD_GATEWAY,
            error(
                "invalid_json",
                "the server sent invalid JSON: key must be a string at line 1 column 2",
            ),
        ),
        (
            "/error",
            StatusCode::BAD_GATEWAY,
            error("upstream_status", "the server answered HTTP 404 Not Found"),
        ),
    ];
    for (path, status, expected) in cases {
        assert_eq!(
            fetch(&h, json!({"url": format!("{base}{path}")})).await,
            (status, expected),
            "{path}"
        );
    }
}

#[tokio::test]
async fn redirects_are_checked_at_every_hop() {
    let up = upstream().await;
    let h = harness(|c| c.allow_private = vec![allow(up)]);
    let base = format!("http://{up}");
    let redirect = |to: &str| json!({"url": format!("{base}/redirect?to={}", urlencode(to))});
    let other_port = format!("http://127.0.0.1:{}/", up.port() ^ 1);
    let cases: Vec<(String, StatusCode, Value)> = vec![
        (
            "http://10.0.0.1/".into(),
            StatusCode::FORBIDDEN,
            error(
                "blocked_address",
                "10.0.0.1 is not on the public internet: 10.0.0.1 is a private network address. Hearth's proxy only fetches public addresses",
            ),
        ),
        (
            other_port.clone(),
            StatusCode::FORBIDDEN,
            error(
                "blocked_address",
                "127.0.0.1 is not on the public internet: 127.0.0.1 is a loopback address (this machine). Hearth's proxy only fetches public addresses",
            ),
        ),
        (
            "http://[::1]/".into(),
            StatusCode::FORBIDDEN,
            error(
                "blocked_address",
                "[::1] is not on the public internet: ::1 is a loopback address (this machine). Hearth's proxy only fetches public addresses",
            ),
        ),
        (
            "http://169.254.169.254/latest/meta-data/".into(),
            StatusCode::FORBIDDEN,
            error(
                "blocked_address",
                "169.254.169.254 is not on the public internet: 169.254.169.254 is a cloud metadata service address. Hearth's proxy only fetches public addresses",
            ),
        ),
        (
            "http://2130706433/".into(),
            StatusCode::FORBIDDEN,
            error(
                "blocked_address",
                "127.0.0.1 is not on the public internet: 127.0.0.1 is a loopback address (this machine). Hearth's proxy only fetches public addresses",
            ),
        ),
        (
            "file:///etc/passwd".into(),
            StatusCode::BAD_REQUEST,
            error(
                "unsupported_scheme",
                "only http and https URLs can be fetched, not file:",
            ),
        ),
    ];
    for (to, status, expected) in cases {
        assert_eq!(
            fetch(&h, redirect(&to)).await,
            (status, expected),
            "redirect to {to}"
        );
    }
    // Five redirects are followed; the sixth is not.
    let (status, v) = fetch(&h, json!({"url": format!("{base}/chain/5")})).await;
    assert_eq!(
        (
            status,
            v["content"].clone(),
            v["redirects"].clone(),
            v["url"].clone(),
            v["requested_url"].clone()
        ),
        (
            StatusCode::OK,
            json!("end of chain"),
            json!(5),
            json!(format!("{base}/chain/0")),
            json!(format!("{base}/chain/5"))
        )
    );
    assert_eq!(
        fetch(&h, json!({"url": format!("{base}/chain/6")})).await,
        (
            StatusCode::BAD_GATEWAY,
            error(
                "too_many_redirects",
                "more than 5 redirects; stopped following them"
            )
        )
    );
}

fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

#[tokio::test]
async fn domain_lists_hold_on_the_url_and_on_redirects() {
    let up = upstream().await;
    let h = harness(|c| c.allow_private = vec![allow(up)]);
    let port = up.port();
    let deny = json!({"deny": ["blocked.test"]});
    // Straight to a denied host.
    assert_eq!(
        fetch(
            &h,
            json!({"url": format!("http://blocked.test:{port}/text.txt"), "domains": deny})
        )
        .await,
        (
            StatusCode::FORBIDDEN,
            error(
                "blocked_domain",
                "blocked.test is on web_fetch's denylist (entry 'blocked.test'); change the list in the Skills panel to allow it"
            )
        )
    );
    // Through a redirect from an allowed host.
    let to = urlencode(&format!("http://blocked.test:{port}/text.txt"));
    assert_eq!(
        fetch(
            &h,
            json!({"url": format!("http://evil.test:{port}/redirect?to={to}"), "domains": deny})
        )
        .await,
        (
            StatusCode::FORBIDDEN,
            error(
                "blocked_domain",
                "blocked.test is on web_fetch's denylist (entry 'blocked.test'); change the list in the Skills panel to allow it"
            )
        )
    );
    // An allowlist admits only its hosts.
    let only = json!({"allow": ["evil.test"]});
    let (status, _) = fetch(
        &h,
        json!({"url": format!("http://evil.test:{port}/text.txt"), "domains": only}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        fetch(
            &h,
            json!({"url": format!("http://127.0.0.1:{port}/text.txt"), "domains": only})
        )
        .await,
        (
            StatusCode::FORBIDDEN,
            error(
                "blocked_domain",
                "127.0.0.1 is not on web_fetch's allowlist; add it in the Skills panel to allow it"
            )
        )
    );
}

#[tokio::test]
async fn slow_servers_run_into_the_time_limit() {
    let up = upstream().await;
    let dribble = serve_raw(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nhello".to_vec(),
        Duration::from_secs(30),
        b"world".to_vec(),
    )
    .await;
    let h = harness(|c| {
        c.allow_private = vec![allow(up), allow(dribble)];
        c.limits.total_timeout = Duration::from_millis(300);
    });
    let host = "127.0.0.1";
    for url in [format!("http://{up}/slow"), format!("http://{dribble}/")] {
        assert_eq!(
            fetch(&h, json!({"url": url})).await,
            (
                StatusCode::GATEWAY_TIMEOUT,
                error(
                    "timeout",
                    &format!("{host} took longer than 300ms to answer")
                )
            ),
            "{url}"
        );
    }
}

// ---------------------------------------------------------------------------
// Search

fn searxng_server(log: Arc<Mutex<Vec<String>>>) -> Router {
    Router::new().route(
        "/search",
        get(move |uri: axum::http::Uri| {
            let log = log.clone();
            async move {
                log.lock().unwrap().push(uri.query().unwrap_or("").to_string());
                let q: Vec<(String, String)> = url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
                    .into_owned()
                    .collect();
                if !q.contains(&("format".into(), "json".into())) {
                    return (StatusCode::FORBIDDEN, "json format only").into_response();
                }
                let query = q.iter().find(|(k, _)| k == "q").map(|(_, v)| v.clone()).unwrap_or_default();
                axum::Json(json!({
                    "query": query,
                    "number_of_results": 3,
                    "results": [
                        {"url": "https://en.wikipedia.org/wiki/Hearth", "title": "Hearth - Wikipedia", "content": "A hearth is a place for a fire.", "engine": "wikipedia"},
                        {"url": "https://ads.example.com/buy", "title": "Buy hearths", "content": "Sale!", "engine": "x"},
                        {"url": "https://example.org/fire", "title": "Fire & <b>home</b>", "content": "", "engine": "y"}
                    ]
                }))
                .into_response()
            }
        }),
    )
}

#[tokio::test]
async fn searxng_results_come_back_filtered_by_the_domain_lists() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let searx = serve(searxng_server(log.clone())).await;
    let h = harness(|c| {
        c.allow_private = vec![allow(searx)];
        c.search = Some(SearchBackend::searxng(&format!("http://{searx}/")).unwrap());
    });
    let (status, _, v) = Call::post(
        &h,
        "/api/search",
        json!({"query": "hearth fire", "limit": 5, "domains": {"deny": ["ads.example.com"]}}),
    )
    .send(&h)
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let found: SearchResponse = serde_json::from_value(v).unwrap();
    assert_eq!(
        found,
        SearchResponse {
            query: "hearth fire".into(),
            backend: "searxng".into(),
            results: vec![
                SearchHit {
                    title: "Hearth - Wikipedia".into(),
                    url: "https://en.wikipedia.org/wiki/Hearth".into(),
                    host: "en.wikipedia.org".into(),
                    snippet: "A hearth is a place for a fire.".into(),
                },
                SearchHit {
                    title: "Fire & home".into(),
                    url: "https://example.org/fire".into(),
                    host: "example.org".into(),
                    snippet: "".into(),
                },
            ],
            filtered: 1,
        }
    );
    assert_eq!(
        *log.lock().unwrap(),
        vec!["q=hearth+fire&format=json".to_string()]
    );
    // limit cuts the list.
    let (_, _, v) = Call::post(&h, "/api/search", json!({"query": "hearth", "limit": 1}))
        .send(&h)
        .await;
    assert_eq!(v["results"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_local_search_backend_must_be_allowlisted() {
    let searx = serve(searxng_server(Arc::new(Mutex::new(Vec::new())))).await;
    let h =
        harness(|c| c.search = Some(SearchBackend::searxng(&format!("http://{searx}")).unwrap()));
    let (status, _, v) = Call::post(&h, "/api/search", json!({"query": "x"}))
        .send(&h)
        .await;
    let config_path = h.dir.path().join("config.toml").display().to_string();
    assert_eq!(
        (status, v),
        (
            StatusCode::BAD_GATEWAY,
            error(
                "search_backend_failed",
                &format!(
                    "SearXNG at http://{searx}/search could not be reached: 127.0.0.1 is not on the public internet: \
                     127.0.0.1 is a loopback address (this machine). Hearth's proxy only fetches public addresses. \
                     A search backend on this machine or your network must be allowed explicitly: add \
                     allow_private = [\"{searx}\"] under [fetch] in {config_path}, or start hearth serve with \
                     --allow-private-fetch {searx}"
                )
            )
        )
    );
}

#[derive(Clone, Debug, Default, PartialEq)]
struct SeenBrave {
    token: Option<String>,
    accept: Option<String>,
    query: Vec<(String, String)>,
}

#[tokio::test]
async fn brave_requests_carry_the_key_and_results_are_read() {
    let seen: Arc<Mutex<Vec<SeenBrave>>> = Arc::default();
    let log = seen.clone();
    let brave = serve(Router::new().route(
        "/res/v1/web/search",
        get(move |headers: HeaderMap, uri: axum::http::Uri| {
            let log = log.clone();
            async move {
                let h = |n: &str| headers.get(n).map(|v| v.to_str().unwrap().to_string());
                log.lock().unwrap().push(SeenBrave {
                    token: h("x-subscription-token"),
                    accept: h("accept"),
                    query: url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes()).into_owned().collect(),
                });
                if h("x-subscription-token").as_deref() != Some("test-key") {
                    return (StatusCode::UNAUTHORIZED, axum::Json(json!({"type": "ErrorResponse"}))).into_response();
                }
                axum::Json(json!({
                    "type": "search",
                    "web": {"results": [
                        {"title": "The <strong>Rust</strong> Language", "url": "https://www.rust-lang.org/", "description": "A language empowering <strong>everyone</strong>."}
                    ]}
                }))
                .into_response()
            }
        }),
    ))
    .await;
    let endpoint = format!("http://{brave}/res/v1/web/search");
    let h = harness(|c| {
        c.allow_private = vec![allow(brave)];
        c.search = Some(SearchBackend::brave("test-key", Some(&endpoint)).unwrap());
    });
    let (status, _, v) = Call::post(&h, "/api/search", json!({"query": "rust lang", "limit": 3}))
        .send(&h)
        .await;
    assert_eq!(
        (status, v),
        (
            StatusCode::OK,
            json!({
                "query": "rust lang",
                "backend": "brave",
                "results": [{"title": "The Rust Language", "url": "https://www.rust-lang.org/", "host": "www.rust-lang.org", "snippet": "A language empowering everyone."}],
                "filtered": 0
            })
        )
    );
    assert_eq!(
        seen.lock().unwrap().clone(),
        vec![SeenBrave {
            token: Some("test-key".into()),
            accept: Some("application/json".into()),
            query: vec![
                ("q".into(), "rust lang".into()),
                ("count".into(), "3".into())
            ],
        }]
    );
    // A refused key says so.
    let h = harness(|c| {
        c.allow_private = vec![allow(brave)];
        c.search = Some(SearchBackend::brave("wrong", Some(&endpoint)).unwrap());
    });
    let (status, _, v) = Call::post(&h, "/api/search", json!({"query": "x"}))
        .send(&h)
        .await;
    assert_eq!(
        (status, v),
        (
            StatusCode::BAD_GATEWAY,
            error(
                "search_backend_failed",
                "Brave Search answered HTTP 401: the API key was refused; check it in Settings or the config file"
            )
        )
    );
}

#[tokio::test]
async fn without_a_backend_the_error_says_how_to_set_one() {
    let h = harness(|c| {
        c.search_problem = Some("the environment variable K named by api_key_env is not set".into())
    });
    let (status, _, v) = Call::post(&h, "/api/search", json!({"query": "x"}))
        .send(&h)
        .await;
    let path = h.dir.path().join("config.toml").display().to_string();
    assert_eq!(
        (status, v),
        (
            StatusCode::SERVICE_UNAVAILABLE,
            error(
                "no_search_backend",
                &format!(
                    "No web search backend is set up (the environment variable K named by api_key_env is not set). \
                     Choose one in Hearth's Settings (Web search), or add to {path}:\n\n\
                     [search]\nbackend = \"searxng\"\nurl = \"https://searxng.example.org\"\n\n\
                     or\n\n[search]\nbackend = \"brave\"\napi_key_env = \"BRAVE_API_KEY\"\n\n\
                     and restart `hearth serve`. A SearXNG instance must have the json format enabled (search.formats in its settings.yml)."
                )
            )
        )
    );
}

#[tokio::test]
async fn the_app_can_choose_the_backend_and_never_reads_the_key_back() {
    let searx = serve(searxng_server(Arc::new(Mutex::new(Vec::new())))).await;
    let h = harness(|c| c.allow_private = vec![allow(searx)]);
    let get_backend = || Call::new(&h, Method::GET, "/api/search/backend");
    let none = json!({"configured": false, "source": null, "backend": null, "url": null, "api_key_set": false, "problem": null});
    assert_eq!(get_backend().send(&h).await.2, none);

    let mut put = Call::new(&h, Method::PUT, "/api/search/backend");
    put.body = Some(json!({"backend": "brave", "api_key": "sekrit-key"}));
    let (status, _, v) = put.send(&h).await;
    assert_eq!(
        (status, v.clone()),
        (
            StatusCode::OK,
            json!({"configured": true, "source": "settings", "backend": "brave", "url": "https://api.search.brave.com/res/v1/web/search", "api_key_set": true, "problem": null})
        )
    );
    assert!(!v.to_string().contains("sekrit"));
    let file = h.dir.path().join("search-backend.json");
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("sekrit-key")
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    // The session reports it, without the key.
    let mut session = Call::new(&h, Method::GET, "/api/session");
    session.origin = None;
    let (_, _, v) = session.send(&h).await;
    assert_eq!(v["search"], json!({"configured": true, "backend": "brave"}));
    assert!(!v.to_string().contains("sekrit"));

    // The browser cannot name an environment variable or move Brave.
    for body in [
        json!({"backend": "brave", "api_key_env": "HOME"}),
        json!({"backend": "brave", "api_key": "k", "url": "https://evil.example/"}),
    ] {
        put.body = Some(body.clone());
        let (status, _, v) = put.send(&h).await;
        assert_eq!(
            (status, code_of(&v)),
            (StatusCode::BAD_REQUEST, "invalid_request"),
            "{body}"
        );
    }

    // Switch to the local SearXNG, which is used at once.
    put.body = Some(json!({"backend": "searxng", "url": format!("http://{searx}")}));
    assert_eq!(put.send(&h).await.0, StatusCode::OK);
    let (status, _, v) = Call::post(&h, "/api/search", json!({"query": "hearth"}))
        .send(&h)
        .await;
    assert_eq!(
        (status, v["backend"].clone()),
        (StatusCode::OK, json!("searxng"))
    );

    let (status, _, v) = Call::new(&h, Method::DELETE, "/api/search/backend")
        .send(&h)
        .await;
    assert_eq!((status, v), (StatusCode::OK, none));
    assert!(!file.exists());
}

/// The app reads these answers with core's types and sends core's setting,
/// so the two halves of the contract cannot drift apart.
#[tokio::test]
async fn the_app_side_types_read_and_write_the_backend_routes() {
    use hearth_core::api::error::ApiErrorCode;
    use hearth_core::api::session::{BackendSource, SearchBackendSetting, SearchBackendState};
    use hearth_core::builtin::web::WebFailure;
    let h = harness(|_| {});
    let mut put = Call::new(&h, Method::PUT, "/api/search/backend");
    put.body = Some(
        serde_json::to_value(SearchBackendSetting::Searxng {
            url: "http://127.0.0.1:8888/search".into(),
        })
        .unwrap(),
    );
    let (status, _, v) = put.send(&h).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        serde_json::from_value::<SearchBackendState>(v).unwrap(),
        SearchBackendState {
            configured: true,
            source: Some(BackendSource::Settings),
            backend: Some("searxng".into()),
            url: Some("http://127.0.0.1:8888/".into()),
            api_key_set: false,
            problem: None,
        }
    );
    let (_, _, v) = Call::new(&h, Method::DELETE, "/api/search/backend")
        .send(&h)
        .await;
    assert_eq!(
        serde_json::from_value::<SearchBackendState>(v).unwrap(),
        SearchBackendState {
            configured: false,
            source: None,
            backend: None,
            url: None,
            api_key_set: false,
            problem: None,
        }
    );
    let (status, _, v) = Call::post(&h, "/api/search", json!({"query": "x"}))
        .send(&h)
        .await;
    let failure = WebFailure::from_answer(status.as_u16(), &v.to_string());
    assert_eq!(failure.code(), Some(ApiErrorCode::NoSearchBackend), "{v}");
}
