//! Attack tests of the API layer, through the web routes it guards: who
//! may call (loopback peer, Host, Sec-Fetch-Site, Origin, the key), CORS
//! never opened, JSON errors for bad requests, and the per-skill rate
//! limit.

use axum::http::{Method, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::api::ratelimit::BucketConfig;
use crate::web::testing::*;

// ---------------------------------------------------------------------------
// Who may call

#[tokio::test]
async fn the_session_needs_the_key_and_never_repeats_it() {
    let h = harness(|_| {});
    let mut c = Call::new(&h, Method::GET, "/api/session");
    c.origin = None;
    // Every header a browser on the app sends, but no key: nothing.
    let mut keyless = c.clone();
    keyless.token = None;
    let (status, _, v) = keyless.send(&h).await;
    assert_eq!(
        (status, code_of(&v)),
        (StatusCode::FORBIDDEN, "missing_token")
    );
    assert!(!v.to_string().contains(&h.token));
    let (status, headers, v) = c.send(&h).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        v,
        json!({
            "header": "x-hearth-token",
            "version": env!("CARGO_PKG_VERSION"),
            "fetch": {"default_max_bytes": 2097152, "max_bytes": 10485760},
            "search": {"configured": false, "backend": null},
        })
    );
    assert_eq!(headers[header::CACHE_CONTROL], "no-store");
    assert!(headers.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());

    let mut cross = c.clone();
    cross.site = Some("cross-site".into());
    cross.origin = Some("https://evil.example".into());
    let (status, headers, v) = cross.send(&h).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(code_of(&v), "forbidden_fetch_site");
    assert!(headers.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
    assert!(!v.to_string().contains(&h.token));

    let mut rebound = c.clone();
    rebound.host = Some("evil.example:8080".into());
    let (status, _, v) = rebound.send(&h).await;
    assert_eq!(
        (status, v),
        (
            StatusCode::FORBIDDEN,
            error(
                "forbidden_host",
                "the Host \"evil.example:8080\" is not the address Hearth serves; open the app at http://127.0.0.1:8080"
            )
        )
    );
}

#[tokio::test]
async fn strangers_are_refused_on_every_route() {
    let h = harness(|_| {});
    let routes: Vec<(Method, &str, Option<Value>)> = vec![
        (
            Method::POST,
            "/api/fetch",
            Some(json!({"url": "https://example.com/"})),
        ),
        (Method::POST, "/api/search", Some(json!({"query": "x"}))),
        (Method::GET, "/api/search/backend", None),
        (
            Method::PUT,
            "/api/search/backend",
            Some(json!({"backend": "searxng", "url": "https://s.example"})),
        ),
        (Method::DELETE, "/api/search/backend", None),
        (Method::GET, "/api/unknown", None),
    ];
    type Change = fn(&mut Call);
    let attacks: Vec<(&str, Change, &str)> = vec![
        (
            "wrong origin",
            |c| c.origin = Some("https://evil.example".into()),
            "forbidden_origin",
        ),
        (
            "null origin",
            |c| c.origin = Some("null".into()),
            "forbidden_origin",
        ),
        (
            "look-alike origin",
            |c| c.origin = Some("http://127.0.0.1:8080.evil.example".into()),
            "forbidden_origin",
        ),
        (
            "other port origin",
            |c| c.origin = Some("http://127.0.0.1:3000".into()),
            "forbidden_origin",
        ),
        (
            "wrong host",
            |c| c.host = Some("evil.example:8080".into()),
            "forbidden_host",
        ),
        ("no host", |c| c.host = None, "forbidden_host"),
        ("missing token", |c| c.token = None, "missing_token"),
        (
            "wrong token",
            |c| c.token = Some("A".repeat(43)),
            "bad_token",
        ),
        (
            "empty token",
            |c| c.token = Some(String::new()),
            "bad_token",
        ),
        (
            "cross-site",
            |c| c.site = Some("cross-site".into()),
            "forbidden_fetch_site",
        ),
        (
            "same-site",
            |c| c.site = Some("same-site".into()),
            "forbidden_fetch_site",
        ),
        (
            "typed in the address bar",
            |c| c.site = Some("none".into()),
            "forbidden_fetch_site",
        ),
        (
            "no sec-fetch-site",
            |c| c.site = None,
            "forbidden_fetch_site",
        ),
        (
            "from the LAN",
            |c| c.peer = Some("192.168.1.20:4000".parse().unwrap()),
            "forbidden_peer",
        ),
        ("no peer", |c| c.peer = None, "forbidden_peer"),
    ];
    for (method, path, body) in &routes {
        for (name, change, code) in &attacks {
            let mut c = Call::new(&h, method.clone(), path);
            c.body = body.clone();
            change(&mut c);
            let (status, headers, v) = c.send(&h).await;
            assert_eq!(
                (status, code_of(&v)),
                (StatusCode::FORBIDDEN, *code),
                "{method} {path}: {name}: {v}"
            );
            assert!(headers.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
        }
        // A POST without Origin is not what a browser sends.
        if *method != Method::GET {
            let mut c = Call::new(&h, method.clone(), path);
            c.body = body.clone();
            c.origin = None;
            let (status, _, v) = c.send(&h).await;
            assert_eq!(
                (status, code_of(&v)),
                (StatusCode::FORBIDDEN, "forbidden_origin"),
                "{method} {path}"
            );
        }
    }
}

#[tokio::test]
async fn cors_preflights_are_refused_and_never_allowed() {
    let h = harness(|_| {});
    for path in ["/api/fetch", "/api/session", "/api/search", "/api/nothing"] {
        let mut c = Call::new(&h, Method::OPTIONS, path);
        c.origin = Some("https://evil.example".into());
        c.site = Some("cross-site".into());
        c.token = None;
        let mut req = c.request();
        req.headers_mut()
            .insert("access-control-request-method", "POST".parse().unwrap());
        req.headers_mut().insert(
            "access-control-request-headers",
            "x-hearth-token,content-type".parse().unwrap(),
        );
        req.headers_mut().insert(
            "access-control-request-private-network",
            "true".parse().unwrap(),
        );
        let res = h.app.clone().oneshot(req).await.unwrap();
        assert_eq!(res.status(), StatusCode::FORBIDDEN, "{path}");
        for name in [
            "access-control-allow-origin",
            "access-control-allow-headers",
            "access-control-allow-methods",
            "access-control-allow-private-network",
        ] {
            assert!(res.headers().get(name).is_none(), "{path} {name}");
        }
        let body = res.into_body().collect().await.unwrap().to_bytes();
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            v,
            error(
                "preflight_refused",
                "cross-origin requests are not allowed (CORS preflight refused)"
            )
        );
    }
}

#[tokio::test]
async fn the_app_gets_json_errors_for_bad_requests() {
    let h = harness(|_| {});
    let cases: Vec<(Call, StatusCode, Value)> = vec![
        (
            Call::new(&h, Method::GET, "/api/nope"),
            StatusCode::NOT_FOUND,
            error("not_found", "there is no API at /api/nope"),
        ),
        (
            Call::new(&h, Method::GET, "/api/fetch"),
            StatusCode::METHOD_NOT_ALLOWED,
            error("method_not_allowed", "this API does not take that method"),
        ),
        (
            Call::post(
                &h,
                "/api/fetch",
                json!({"url": "https://example.com/", "headers": {}}),
            ),
            StatusCode::BAD_REQUEST,
            error(
                "invalid_request",
                "Failed to deserialize the JSON body into the target type: headers: unknown field `headers`, expected one of `url`, `max_bytes`, `domains` at line 1 column 39",
            ),
        ),
        (
            Call::post(
                &h,
                "/api/fetch",
                json!({"url": "https://example.com/", "max_bytes": 0}),
            ),
            StatusCode::BAD_REQUEST,
            error(
                "invalid_request",
                "max_bytes must be between 1 and 10485760",
            ),
        ),
        (
            Call::post(
                &h,
                "/api/fetch",
                json!({"url": "https://example.com/", "max_bytes": 10485761}),
            ),
            StatusCode::BAD_REQUEST,
            error(
                "invalid_request",
                "max_bytes must be between 1 and 10485760",
            ),
        ),
        (
            Call::post(
                &h,
                "/api/fetch",
                json!({"url": "https://e.com/", "domains": {"deny": ["http://x"]}}),
            ),
            StatusCode::BAD_REQUEST,
            error(
                "invalid_request",
                "Failed to deserialize the JSON body into the target type: domains.deny[0]: write just the domain, like example.com, not a URL (\"http://x\") at line 1 column 54",
            ),
        ),
        (
            Call::post(&h, "/api/search", json!({"query": "  "})),
            StatusCode::BAD_REQUEST,
            error("invalid_request", "query must hold 1 to 400 characters"),
        ),
        (
            Call::post(&h, "/api/search", json!({"query": "x", "limit": 21})),
            StatusCode::BAD_REQUEST,
            error("invalid_request", "limit must be between 1 and 20"),
        ),
    ];
    for (call, status, expected) in cases {
        let (s, _, v) = call.send(&h).await;
        assert_eq!((s, v), (status, expected), "{} {}", call.method, call.path);
    }
    // A form post (what a cross-site <form> could send) is not JSON.
    let mut form = Call::post(&h, "/api/fetch", json!({}));
    form.content_type = Some("application/x-www-form-urlencoded".into());
    let (s, _, v) = form.send(&h).await;
    assert_eq!(
        (s, code_of(&v)),
        (StatusCode::BAD_REQUEST, "invalid_request")
    );
}

#[tokio::test]
async fn the_rate_limit_holds_per_skill_and_strangers_cannot_spend_it() {
    let up = upstream().await;
    let h = harness(|c| {
        c.allow_private = vec![allow(up)];
        c.rate_limits.insert(
            "web_fetch".into(),
            BucketConfig {
                per_minute: 1.0,
                burst: 2,
            },
        );
    });
    let url = json!({"url": format!("http://{up}/text.txt")});
    // Refused callers do not use up the bucket.
    for _ in 0..5 {
        let mut c = Call::post(&h, "/api/fetch", url.clone());
        c.token = None;
        assert_eq!(c.send(&h).await.0, StatusCode::FORBIDDEN);
    }
    assert_eq!(fetch(&h, url.clone()).await.0, StatusCode::OK);
    assert_eq!(fetch(&h, url.clone()).await.0, StatusCode::OK);
    let (status, headers, v) = Call::post(&h, "/api/fetch", url.clone()).send(&h).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    let retry: u64 = headers[header::RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((59..=60).contains(&retry), "{retry}");
    assert_eq!(
        v,
        error(
            "rate_limited",
            &format!("web_fetch was called too often; try again in {retry} s")
        )
    );
    // web_search has its own bucket: it gets past the limiter to the
    // missing-backend answer.
    let (status, _, v) = Call::post(&h, "/api/search", json!({"query": "x"}))
        .send(&h)
        .await;
    assert_eq!(
        (status, code_of(&v)),
        (StatusCode::SERVICE_UNAVAILABLE, "no_search_backend")
    );
}
