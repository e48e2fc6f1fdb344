//! The web skills' proxy client in a real browser, over a scripted
//! transport: the key kept from the launch link is sent on every call,
//! read again (once) when refused, and every way of not reaching the proxy
//! ends in a message a person can act on. MCP's calls (stdio servers,
//! relay registrations) go through the same client and are tested here
//! with it.
#![cfg(target_arch = "wasm32")]

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use futures::FutureExt;
use futures::future::LocalBoxFuture;
use hearth::mcp::proxy::{HearthProxy, SUBJECT};
use hearth::web::{ApiAnswer, ApiMethod, ApiRequest, ApiTransport, NoAnswer, ProxyClient};
use hearth_core::api::domains::DomainLists;
use hearth_core::builtin::web::{WEB_FETCH, WEB_SEARCH, WebFailure};
use hearth_core::mcp::hosted::{RelayDescription, StdioListing};
use hearth_core::mcp::skills::ServerId;
use hearth_core::{Content, SkillError};
use serde_json::{Value, json};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// Answers requests from a script, in order, and records what was sent.
#[derive(Default)]
struct Scripted {
    answers: RefCell<VecDeque<Result<ApiAnswer, NoAnswer>>>,
    sent: RefCell<Vec<ApiRequest>>,
}

impl Scripted {
    fn new(answers: Vec<Result<ApiAnswer, NoAnswer>>) -> Rc<Self> {
        Rc::new(Self {
            answers: RefCell::new(answers.into()),
            sent: RefCell::new(Vec::new()),
        })
    }

    fn sent(&self) -> Vec<(ApiMethod, String, Option<String>)> {
        self.sent
            .borrow()
            .iter()
            .map(|r| {
                (
                    r.method,
                    r.path.clone(),
                    r.token.as_ref().map(|(_, t)| t.clone()),
                )
            })
            .collect()
    }
}

impl ApiTransport for Scripted {
    fn send(&self, request: ApiRequest) -> LocalBoxFuture<'_, Result<ApiAnswer, NoAnswer>> {
        self.sent.borrow_mut().push(request);
        let next = self
            .answers
            .borrow_mut()
            .pop_front()
            .unwrap_or_else(|| Err(NoAnswer("the script ran out".into())));
        async move { next }.boxed_local()
    }
}

fn answer(status: u16, body: Value) -> Result<ApiAnswer, NoAnswer> {
    Ok(ApiAnswer {
        status,
        body: body.to_string(),
    })
}

fn session() -> Result<ApiAnswer, NoAnswer> {
    answer(
        200,
        json!({"header": "x-hearth-token", "version": "0.1.0",
               "fetch": {"default_max_bytes": 2097152, "max_bytes": 10485760},
               "search": {"configured": true, "backend": "searxng"}}),
    )
}

fn page() -> Value {
    json!({"url": "https://example.com/", "requested_url": "https://example.com/",
           "host": "example.com", "status": 200, "kind": "html", "content_type": "text/html",
           "charset": "UTF-8", "lossy": false, "title": "Example Domain",
           "content": "# Example Domain\n\nThis domain is for examples.",
           "links": [{"text": "More", "url": "https://www.iana.org/domains/example"}],
           "bytes": 1256, "redirects": 0})
}

fn api_error(status: u16, code: &str, message: &str) -> Result<ApiAnswer, NoAnswer> {
    answer(status, json!({"error": {"code": code, "message": message}}))
}

/// A client whose stored key is `key`.
fn client(t: &Rc<Scripted>, online: bool) -> ProxyClient {
    keyed(t, online, Some("k-1"))
}

fn keyed(t: &Rc<Scripted>, online: bool, key: Option<&str>) -> ProxyClient {
    let key = key.map(str::to_string);
    ProxyClient::new(
        t.clone(),
        Rc::new(move || online),
        Rc::new(move || key.clone()),
    )
}

fn text(out: &hearth_core::SkillOutput) -> String {
    match &out.content[0] {
        Content::Text { text } => text.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

#[wasm_bindgen_test]
async fn the_key_from_the_launch_link_goes_with_every_call() {
    let t = Scripted::new(vec![answer(200, page()), answer(200, page())]);
    let c = client(&t, true);
    let args = json!({"url": "https://example.com/"});
    let out = c
        .run_skill(WEB_FETCH, &args, &DomainLists::default())
        .await
        .unwrap();
    assert_eq!(
        text(&out),
        "# Example Domain\nSource: https://example.com/\n\n# Example Domain\n\nThis domain is for examples."
    );
    c.run_skill(WEB_FETCH, &args, &DomainLists::default())
        .await
        .unwrap();
    assert_eq!(
        t.sent(),
        vec![
            (ApiMethod::Post, "/api/fetch".into(), Some("k-1".into())),
            (ApiMethod::Post, "/api/fetch".into(), Some("k-1".into())),
        ]
    );
    let sent = t.sent.borrow();
    assert_eq!(sent[0].token, Some(("x-hearth-token".into(), "k-1".into())));
    assert_eq!(
        serde_json::from_str::<Value>(sent[0].body.as_deref().unwrap()).unwrap(),
        json!({"url": "https://example.com/"})
    );
}

#[wasm_bindgen_test]
async fn the_domain_lists_travel_with_each_call() {
    let t = Scripted::new(vec![answer(
        200,
        json!({"query": "rust", "backend": "searxng", "results": [], "filtered": 2}),
    )]);
    let lists = DomainLists {
        allow: "# only docs\ndocs.rs".into(),
        deny: "=ads.docs.rs".into(),
    };
    let out = client(&t, true)
        .run_skill(WEB_SEARCH, &json!({"query": "rust", "limit": 3}), &lists)
        .await
        .unwrap();
    assert_eq!(
        text(&out),
        "No results for \"rust\". 2 results were hidden by web_search's domain lists."
    );
    let body: Value = serde_json::from_str(t.sent.borrow()[0].body.as_deref().unwrap()).unwrap();
    assert_eq!(
        body,
        json!({"query": "rust", "limit": 3, "domains": {"allow": ["docs.rs"], "deny": ["=ads.docs.rs"]}})
    );
}

#[wasm_bindgen_test]
async fn a_refused_key_is_read_again_once_and_not_retried_forever() {
    // Another tab took a newer key from a launch link meanwhile.
    let t = Scripted::new(vec![
        api_error(403, "bad_token", "the key does not match"),
        answer(200, page()),
    ]);
    let reads = Rc::new(Cell::new(0));
    let counter = reads.clone();
    let c = ProxyClient::new(
        t.clone(),
        Rc::new(|| true),
        Rc::new(move || {
            counter.set(counter.get() + 1);
            Some(if counter.get() == 1 { "old" } else { "new" }.to_string())
        }),
    );
    c.run_skill(
        WEB_FETCH,
        &json!({"url": "https://example.com/"}),
        &DomainLists::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        t.sent(),
        vec![
            (ApiMethod::Post, "/api/fetch".into(), Some("old".into())),
            (ApiMethod::Post, "/api/fetch".into(), Some("new".into())),
        ]
    );

    // The same key refused again: the proxy's words, sent once, no loop.
    let t = Scripted::new(vec![api_error(
        403,
        "bad_token",
        "the key does not match: open Hearth again from the link",
    )]);
    let err = client(&t, true)
        .run_skill(
            WEB_FETCH,
            &json!({"url": "https://example.com/"}),
            &DomainLists::default(),
        )
        .await
        .unwrap_err();
    let mut expected = SkillError::new("the key does not match: open Hearth again from the link");
    expected.code = Some("bad_token".into());
    assert_eq!(err, expected);
    assert_eq!(t.sent().len(), 1);
}

#[wasm_bindgen_test]
async fn without_a_key_the_call_still_goes_so_the_server_can_say_what_to_do() {
    let t = Scripted::new(vec![api_error(
        403,
        "missing_token",
        "the key to Hearth's local server is missing: open Hearth once from the link `hearth serve` printed",
    )]);
    let err = keyed(&t, true, None)
        .run_skill(
            WEB_FETCH,
            &json!({"url": "https://example.com/"}),
            &DomainLists::default(),
        )
        .await
        .unwrap_err();
    assert!(
        err.message.contains("open Hearth once from the link"),
        "{err:?}"
    );
    assert_eq!(t.sent(), vec![(ApiMethod::Post, "/api/fetch".into(), None)]);
}

#[wasm_bindgen_test]
async fn other_refusals_are_not_retried_and_read_as_the_proxy_said() {
    let t = Scripted::new(vec![api_error(
        403,
        "blocked_domain",
        "evil.example is on web_fetch's denylist (entry 'evil.example'); change the list in the Skills panel to allow it",
    )]);
    let err = client(&t, true)
        .run_skill(
            WEB_FETCH,
            &json!({"url": "https://evil.example/"}),
            &DomainLists::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "evil.example is on web_fetch's denylist (entry 'evil.example'); change the list in the Skills panel to allow it"
    );
    assert_eq!(t.sent().len(), 1);
}

#[wasm_bindgen_test]
async fn no_proxy_behind_the_page_says_how_to_open_hearth() {
    let unreachable = WebFailure::ProxyUnreachable.message(WEB_FETCH);
    // A static server's 404, a dev server's index.html, and nothing listening.
    let cases: Vec<Vec<Result<ApiAnswer, NoAnswer>>> = vec![
        vec![Ok(ApiAnswer {
            status: 404,
            body: "Not Found".into(),
        })],
        vec![Ok(ApiAnswer {
            status: 200,
            body: "<!doctype html><html><body>Hearth</body></html>".into(),
        })],
        vec![Err(NoAnswer("Failed to fetch".into()))],
    ];
    // With or without a stored key: a static host has no API at all.
    for (script, key) in cases
        .iter()
        .flat_map(|s| [(s.clone(), Some("k")), (s.clone(), None)])
    {
        let t = Scripted::new(script);
        let err = keyed(&t, true, key)
            .run_skill(
                WEB_FETCH,
                &json!({"url": "https://example.com/"}),
                &DomainLists::default(),
            )
            .await
            .unwrap_err();
        assert_eq!(err.message, unreachable);
        assert!(err.message.contains("hearth serve"));
    }
}

#[wasm_bindgen_test]
async fn offline_is_said_plainly_and_nothing_is_sent() {
    let t = Scripted::new(vec![session()]);
    let err = client(&t, false)
        .run_skill(
            WEB_SEARCH,
            &json!({"query": "rust"}),
            &DomainLists::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.message, WebFailure::Offline.message(WEB_SEARCH));
    assert!(err.message.contains("offline"));
    assert_eq!(t.sent(), vec![]);

    // Any call of the API made once the browser went offline reads the
    // same, and is not sent either.
    let online = Rc::new(Cell::new(true));
    let flag = online.clone();
    let t = Scripted::new(vec![session()]);
    let c = ProxyClient::new(
        t.clone(),
        Rc::new(move || flag.get()),
        Rc::new(|| Some("k".to_string())),
    );
    c.session().await.unwrap();
    online.set(false);
    let err = c
        .call::<Value>(ApiMethod::Get, "/api/search/backend", None)
        .await
        .unwrap_err();
    assert_eq!(err, WebFailure::Offline);
    assert_eq!(t.sent().len(), 1, "only the session, sent while online");
}

#[wasm_bindgen_test]
async fn lists_that_do_not_read_stop_the_call_before_anything_is_sent() {
    let t = Scripted::new(vec![]);
    let lists = DomainLists {
        allow: String::new(),
        deny: "https://evil.example/".into(),
    };
    let err = client(&t, true)
        .run_skill(WEB_FETCH, &json!({"url": "https://evil.example/"}), &lists)
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "web_fetch's domain lists have lines that cannot be read, so it will not run; fix them in the Skills panel"
    );
    assert_eq!(t.sent(), vec![]);
}

#[wasm_bindgen_test]
async fn the_backend_setting_updates_the_kept_session() {
    let t = Scripted::new(vec![
        session(),
        answer(
            200,
            json!({"configured": false, "source": null, "backend": null, "url": null,
                   "api_key_set": false, "problem": null}),
        ),
    ]);
    let c = client(&t, true);
    c.session().await.unwrap();
    let state = c.clear_search_backend().await.unwrap();
    assert!(!state.configured);
    assert_eq!(
        c.cached_session().unwrap().search,
        hearth_core::api::session::SessionSearch {
            configured: false,
            backend: None
        }
    );
    assert_eq!(
        t.sent(),
        vec![
            (ApiMethod::Get, "/api/session".into(), Some("k-1".into())),
            (
                ApiMethod::Delete,
                "/api/search/backend".into(),
                Some("k-1".into())
            ),
        ]
    );
}

#[wasm_bindgen_test]
async fn the_no_backend_code_reaches_the_skill_error() {
    let t = Scripted::new(vec![api_error(
        503,
        "no_search_backend",
        "No web search backend is set up. Choose one in Hearth's Settings (Web search).",
    )]);
    let err = client(&t, true)
        .run_skill(
            WEB_SEARCH,
            &json!({"query": "rust"}),
            &DomainLists::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code.as_deref(), Some("no_search_backend"));
    assert!(err.message.starts_with("No web search backend"), "{err:?}");
}

#[wasm_bindgen_test]
async fn mcp_calls_share_the_web_skills_client_key_and_retry() {
    // The session the web skills fetched is the one MCP's calls use; a key
    // refused on the stdio listing is read again once, as for web_fetch.
    let t = Scripted::new(vec![
        session(),
        api_error(403, "bad_token", "the key does not match"),
        answer(
            200,
            json!({"config_path": "/home/me/.config/hearth/mcp-servers.json",
                   "servers": [{"name": "memory", "command": "npx", "running": false, "crashes": 0}]}),
        ),
        answer(
            200,
            json!({"id": "docs", "url": "https://mcp.example/mcp", "local": false}),
        ),
        answer(200, json!({"removed": true})),
    ]);
    let reads = Rc::new(Cell::new(0));
    let counter = reads.clone();
    let c = Rc::new(ProxyClient::new(
        t.clone(),
        Rc::new(|| true),
        Rc::new(move || {
            counter.set(counter.get() + 1);
            Some(if counter.get() <= 2 { "old" } else { "new" }.to_string())
        }),
    ));
    c.session().await.unwrap();
    let mcp = HearthProxy::new(c.clone());
    let listing: StdioListing = mcp.stdio_servers().await.unwrap();
    assert_eq!(listing.servers.len(), 1);
    assert_eq!(listing.servers[0].name.as_str(), "memory");
    let docs = ServerId::new("docs").unwrap();
    let relay = mcp
        .register_relay(&docs, "https://mcp.example/mcp", false)
        .await
        .unwrap();
    assert_eq!(
        relay,
        RelayDescription {
            id: docs.clone(),
            url: "https://mcp.example/mcp".into(),
            local: false
        }
    );
    mcp.remove_relay(&docs).await.unwrap();
    assert_eq!(
        t.sent(),
        vec![
            (ApiMethod::Get, "/api/session".into(), Some("old".into())),
            (ApiMethod::Get, "/api/mcp/stdio".into(), Some("old".into())),
            (ApiMethod::Get, "/api/mcp/stdio".into(), Some("new".into())),
            (
                ApiMethod::Put,
                "/api/mcp/relay/docs".into(),
                Some("new".into())
            ),
            (
                ApiMethod::Delete,
                "/api/mcp/relay/docs".into(),
                Some("new".into())
            ),
        ]
    );
    let sent = t.sent.borrow();
    let body: Value = serde_json::from_str(sent[3].body.as_deref().unwrap()).unwrap();
    assert_eq!(
        body,
        json!({"url": "https://mcp.example/mcp", "local": false})
    );
    // The relay's streamed requests take the same key.
    assert_eq!(
        mcp.key_header(),
        Some(("x-hearth-token".to_string(), "new".to_string()))
    );
}

#[wasm_bindgen_test]
async fn mcp_failures_are_said_in_mcps_words() {
    // Nothing listening (a static host): MCP says what stdio and the relay
    // need.
    let t = Scripted::new(vec![Err(NoAnswer("Failed to fetch".into()))]);
    let mcp = HearthProxy::new(Rc::new(client(&t, true)));
    let err = mcp.stdio_servers().await.unwrap_err();
    assert_eq!(
        err,
        "Hearth's local server is not answering. stdio servers and the relay work only when \
         Hearth is opened from `hearth serve`"
    );
    // Offline, nothing is sent, and MCP says so in the words every
    // network-tier call uses.
    let t = Scripted::new(vec![]);
    let mcp = HearthProxy::new(Rc::new(client(&t, false)));
    let err = mcp.stdio_servers().await.unwrap_err();
    assert_eq!(err, WebFailure::Offline.message(SUBJECT));
    assert!(err.starts_with("You are offline"), "{err}");
    assert_eq!(t.sent(), vec![]);
    // A static file server's 404 reads the same.
    let t = Scripted::new(vec![answer(404, json!("not found"))]);
    let err = HearthProxy::new(Rc::new(client(&t, true)))
        .remove_relay(&ServerId::new("docs").unwrap())
        .await
        .unwrap_err();
    assert!(
        err.contains("only when Hearth is opened from `hearth serve`"),
        "{err}"
    );
    // The proxy's own refusal is passed on in its words.
    let t = Scripted::new(vec![api_error(
        400,
        "invalid_url",
        "the relay needs an http(s) URL",
    )]);
    let err = HearthProxy::new(Rc::new(client(&t, true)))
        .register_relay(&ServerId::new("docs").unwrap(), "ftp://x", false)
        .await
        .unwrap_err();
    assert_eq!(err, "the relay needs an http(s) URL");
    assert_eq!(t.sent().len(), 1);
}
