//! Attack tests of the guarded client, through `/api/fetch`: every blocked
//! address class in every spelling, bad URLs, schemes, credentials and
//! ports, the exact allow list, size limits, DNS rebinding, and TLS
//! verified against the host name.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::client::ClientConfig;
use crate::client::resolve::{Resolve, ResolveFuture};
use crate::web::testing::*;

// ---------------------------------------------------------------------------
// What may be fetched

#[test]
fn the_url_parser_normalises_every_ip_literal_form() {
    // The WHATWG parser turns all of these into the address they mean, so
    // the address check sees 127.0.0.1 (or ::1), never a "name".
    let cases = [
        ("http://2130706433/", "127.0.0.1"),
        ("http://0177.0.0.1/", "127.0.0.1"),
        ("http://0x7f.1/", "127.0.0.1"),
        ("http://0x7f000001/", "127.0.0.1"),
        ("http://0x7F.0x0.0x0.0x1/", "127.0.0.1"),
        ("http://017700000001/", "127.0.0.1"),
        ("http://127.1/", "127.0.0.1"),
        ("http://127.0.1/", "127.0.0.1"),
        ("http://127.0.0.1./", "127.0.0.1"),
        ("http://０x7f.1/", "127.0.0.1"),
        ("http://１２７.０.０.１/", "127.0.0.1"),
        ("http://0/", "0.0.0.0"),
        ("http://0x/", "0.0.0.0"),
        ("http://[::1]/", "[::1]"),
        ("http://[0:0:0:0:0:0:0:1]/", "[::1]"),
        ("http://[::ffff:127.0.0.1]/", "[::ffff:7f00:1]"),
        ("http://[::ffff:7f00:1]/", "[::ffff:7f00:1]"),
        (
            "http://[0000:0000:0000:0000:0000:ffff:7f00:0001]/",
            "[::ffff:7f00:1]",
        ),
        ("http://[::127.0.0.1]/", "[::7f00:1]"),
    ];
    for (input, host) in cases {
        let url = url::Url::parse(input).unwrap();
        assert_eq!(url.host_str(), Some(host), "{input}");
        assert!(
            matches!(url.host(), Some(url::Host::Ipv4(_) | url::Host::Ipv6(_))),
            "{input} must be an IP host, not a domain"
        );
    }
    // Forms that look numeric but are not valid IPv4 are refused outright.
    for bad in [
        "http://127.0.0.256/",
        "http://1.2.3.4.5/",
        "http://0x7g.1/",
        "http://foo.0x7f/",
    ] {
        assert!(url::Url::parse(bad).is_err(), "{bad}");
    }
}

#[tokio::test]
async fn every_blocked_address_class_is_refused_in_every_form() {
    let h = harness(|_| {});
    // (url, host as shown, why)
    let cases = [
        (
            "http://127.0.0.1/",
            "127.0.0.1",
            "127.0.0.1 is a loopback address (this machine)",
        ),
        (
            "http://2130706433/",
            "127.0.0.1",
            "127.0.0.1 is a loopback address (this machine)",
        ),
        (
            "http://0177.0.0.1/",
            "127.0.0.1",
            "127.0.0.1 is a loopback address (this machine)",
        ),
        (
            "http://0x7f.1/",
            "127.0.0.1",
            "127.0.0.1 is a loopback address (this machine)",
        ),
        (
            "http://0x7f000001:8080/admin",
            "127.0.0.1",
            "127.0.0.1 is a loopback address (this machine)",
        ),
        (
            "http://127.1/",
            "127.0.0.1",
            "127.0.0.1 is a loopback address (this machine)",
        ),
        (
            "http://１２７.０.０.１/",
            "127.0.0.1",
            "127.0.0.1 is a loopback address (this machine)",
        ),
        (
            "http://127.255.255.254/",
            "127.255.255.254",
            "127.255.255.254 is a loopback address (this machine)",
        ),
        (
            "http://[::1]/",
            "[::1]",
            "::1 is a loopback address (this machine)",
        ),
        (
            "http://[::ffff:127.0.0.1]/",
            "[::ffff:7f00:1]",
            "::ffff:127.0.0.1 carries the IPv4 address 127.0.0.1, which is a loopback address (this machine)",
        ),
        (
            "http://[::127.0.0.1]/",
            "[::7f00:1]",
            "::7f00:1 carries the IPv4 address 127.0.0.1, which is a loopback address (this machine)",
        ),
        (
            "http://[::ffff:10.0.0.1]/",
            "[::ffff:a00:1]",
            "::ffff:10.0.0.1 carries the IPv4 address 10.0.0.1, which is a private network address",
        ),
        (
            "http://[64:ff9b::7f00:1]/",
            "[64:ff9b::7f00:1]",
            "64:ff9b::7f00:1 is a NAT64 address, translated by the local network",
        ),
        (
            "http://[2002:7f00:1::1]/",
            "[2002:7f00:1::1]",
            "2002:7f00:1::1 carries the IPv4 address 127.0.0.1, which is a loopback address (this machine)",
        ),
        (
            "http://0.0.0.0/",
            "0.0.0.0",
            "0.0.0.0 is the unspecified address (this machine)",
        ),
        (
            "http://0/",
            "0.0.0.0",
            "0.0.0.0 is the unspecified address (this machine)",
        ),
        (
            "http://[::]/",
            "[::]",
            ":: is the unspecified address (this machine)",
        ),
        (
            "http://10.0.0.1/",
            "10.0.0.1",
            "10.0.0.1 is a private network address",
        ),
        (
            "http://172.16.5.4/",
            "172.16.5.4",
            "172.16.5.4 is a private network address",
        ),
        (
            "http://192.168.1.1/",
            "192.168.1.1",
            "192.168.1.1 is a private network address",
        ),
        (
            "http://3232235777/",
            "192.168.1.1",
            "192.168.1.1 is a private network address",
        ),
        (
            "http://100.64.0.1/",
            "100.64.0.1",
            "100.64.0.1 is a carrier-grade NAT address (100.64.0.0/10)",
        ),
        (
            "http://169.254.1.1/",
            "169.254.1.1",
            "169.254.1.1 is a link-local address",
        ),
        (
            "http://169.254.169.254/latest/meta-data/",
            "169.254.169.254",
            "169.254.169.254 is a cloud metadata service address",
        ),
        (
            "http://0xa9fea9fe/",
            "169.254.169.254",
            "169.254.169.254 is a cloud metadata service address",
        ),
        (
            "http://[fd00:ec2::254]/",
            "[fd00:ec2::254]",
            "fd00:ec2::254 is a cloud metadata service address",
        ),
        (
            "http://100.100.100.200/",
            "100.100.100.200",
            "100.100.100.200 is a cloud metadata service address",
        ),
        (
            "http://224.0.0.1/",
            "224.0.0.1",
            "224.0.0.1 is a multicast address",
        ),
        (
            "http://255.255.255.255/",
            "255.255.255.255",
            "255.255.255.255 is the broadcast address",
        ),
        (
            "http://240.0.0.1/",
            "240.0.0.1",
            "240.0.0.1 is a reserved address",
        ),
        (
            "http://192.0.2.10/",
            "192.0.2.10",
            "192.0.2.10 is a documentation-only address",
        ),
        (
            "http://198.18.0.1/",
            "198.18.0.1",
            "198.18.0.1 is a benchmarking address (198.18.0.0/15)",
        ),
        (
            "http://[fe80::1]/",
            "[fe80::1]",
            "fe80::1 is a link-local address",
        ),
        (
            "http://[fc00::1]/",
            "[fc00::1]",
            "fc00::1 is a unique local IPv6 address (fc00::/7)",
        ),
        (
            "http://[ff02::1]/",
            "[ff02::1]",
            "ff02::1 is a multicast address",
        ),
        (
            "http://[2001:db8::1]/",
            "[2001:db8::1]",
            "2001:db8::1 is a documentation-only address",
        ),
        (
            "https://[fec0::1]/",
            "[fec0::1]",
            "fec0::1 is a site-local IPv6 address (fec0::/10)",
        ),
        // Names that resolve to such addresses.
        (
            "http://evil.test/",
            "evil.test",
            "127.0.0.1 is a loopback address (this machine)",
        ),
        (
            "http://localhost:3000/",
            "localhost",
            "127.0.0.1 is a loopback address (this machine)",
        ),
        (
            "http://metadata.test/",
            "metadata.test",
            "169.254.169.254 is a cloud metadata service address",
        ),
        (
            "https://mixed.test/",
            "mixed.test",
            "10.0.0.1 is a private network address",
        ),
        (
            "http://ula.test/",
            "ula.test",
            "fd12::1 is a unique local IPv6 address (fc00::/7)",
        ),
    ];
    for (url, host, why) in cases {
        let (status, v) = fetch(&h, json!({"url": url})).await;
        assert_eq!(
            (status, v),
            (
                StatusCode::FORBIDDEN,
                error(
                    "blocked_address",
                    &format!(
                        "{host} is not on the public internet: {why}. Hearth's proxy only fetches public addresses"
                    )
                )
            ),
            "{url}"
        );
    }
}

#[tokio::test]
async fn bad_urls_schemes_credentials_and_ports_are_refused() {
    let h = harness(|_| {});
    let cases: Vec<(&str, StatusCode, Value)> = vec![
        (
            "not a url",
            StatusCode::BAD_REQUEST,
            error(
                "invalid_url",
                "\"not a url\" is not a valid URL: relative URL without a base",
            ),
        ),
        (
            "file:///etc/passwd",
            StatusCode::BAD_REQUEST,
            error(
                "unsupported_scheme",
                "only http and https URLs can be fetched, not file:",
            ),
        ),
        (
            "ftp://example.com/",
            StatusCode::BAD_REQUEST,
            error(
                "unsupported_scheme",
                "only http and https URLs can be fetched, not ftp:",
            ),
        ),
        (
            "gopher://example.com/",
            StatusCode::BAD_REQUEST,
            error(
                "unsupported_scheme",
                "only http and https URLs can be fetched, not gopher:",
            ),
        ),
        (
            "http://user:pw@example.com/",
            StatusCode::BAD_REQUEST,
            error(
                "url_has_credentials",
                "URLs with a user name or password are not fetched; remove the 'user:password@' part",
            ),
        ),
        (
            "http://93.184.215.14:25/",
            StatusCode::FORBIDDEN,
            error(
                "blocked_port",
                "port 25 is used by a non-web service and is not fetched",
            ),
        ),
        (
            "http://93.184.215.14:6379x/",
            StatusCode::BAD_REQUEST,
            error(
                "invalid_url",
                "\"http://93.184.215.14:6379x/\" is not a valid URL: invalid port number",
            ),
        ),
        (
            "http://unknown.test/",
            StatusCode::BAD_GATEWAY,
            error(
                "dns_failed",
                "cannot resolve unknown.test: unknown.test is not in the test resolver",
            ),
        ),
    ];
    for (url, status, expected) in cases {
        assert_eq!(
            fetch(&h, json!({"url": url})).await,
            (status, expected),
            "{url}"
        );
    }
}

#[tokio::test]
async fn the_allowlist_is_exact_and_loopback_stays_refused_by_default() {
    let up = upstream().await;
    let url = format!("http://{up}/text.txt");
    // Default: refused.
    let h = harness(|_| {});
    let (status, v) = fetch(&h, json!({"url": url})).await;
    assert_eq!(
        (status, code_of(&v)),
        (StatusCode::FORBIDDEN, "blocked_address")
    );
    // Another port of the same address: refused.
    let other: SocketAddr = format!("127.0.0.1:{}", up.port() ^ 1).parse().unwrap();
    let h = harness(|c| c.allow_private = vec![allow(other)]);
    let (status, v) = fetch(&h, json!({"url": url})).await;
    assert_eq!(
        (status, code_of(&v)),
        (StatusCode::FORBIDDEN, "blocked_address")
    );
    // A name that resolves to the allowed address and port: fetched.
    let h = harness(|c| c.allow_private = vec![allow(up)]);
    let (status, v) = fetch(
        &h,
        json!({"url": format!("http://evil.test:{}/text.txt", up.port())}),
    )
    .await;
    assert_eq!(
        (status, v["content"].clone()),
        (StatusCode::OK, json!("just text\n"))
    );
}

#[tokio::test]
async fn oversized_bodies_are_refused() {
    let up = upstream().await;
    let chunked = serve_raw(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
            .to_vec(),
        Duration::ZERO,
        {
            let mut body = Vec::new();
            for _ in 0..64 {
                body.extend_from_slice(format!("{:x}\r\n", 1024).as_bytes());
                body.extend_from_slice(&[b'b'; 1024]);
                body.extend_from_slice(b"\r\n");
            }
            body.extend_from_slice(b"0\r\n\r\n");
            body
        },
    )
    .await;
    let h = harness(|c| c.allow_private = vec![allow(up), allow(chunked)]);
    // Declared too large: refused before reading.
    assert_eq!(
        fetch(&h, json!({"url": format!("http://{up}/big")})).await,
        (
            StatusCode::BAD_GATEWAY,
            error(
                "response_too_large",
                "the response is larger than the 2097152-byte limit (it declares 3145728 bytes)"
            )
        )
    );
    // Undeclared, streamed past the limit.
    assert_eq!(
        fetch(
            &h,
            json!({"url": format!("http://{chunked}/"), "max_bytes": 10000})
        )
        .await,
        (
            StatusCode::BAD_GATEWAY,
            error(
                "response_too_large",
                "the response is larger than the 10000-byte limit"
            )
        )
    );
    // Within a larger limit, the same body is read.
    let (status, v) = fetch(
        &h,
        json!({"url": format!("http://{chunked}/"), "max_bytes": 100000}),
    )
    .await;
    assert_eq!((status, v["bytes"].clone()), (StatusCode::OK, json!(65536)));
}

#[tokio::test]
async fn https_to_a_server_that_is_not_tls_fails_cleanly() {
    let up = upstream().await;
    let h = harness(|c| c.allow_private = vec![allow(up)]);
    let (status, v) = fetch(
        &h,
        json!({"url": format!("https://127.0.0.1:{}/text.txt", up.port())}),
    )
    .await;
    assert_eq!(
        (status, code_of(&v)),
        (StatusCode::BAD_GATEWAY, "tls_failed"),
        "{v}"
    );
}

/// Answers `first` on the first lookup and `later` afterwards, counting
/// lookups: a rebinding DNS server.
struct RebindingResolver {
    first: IpAddr,
    later: IpAddr,
    lookups: AtomicUsize,
}

impl Resolve for RebindingResolver {
    fn resolve<'a>(&'a self, _host: &'a str) -> ResolveFuture<'a> {
        let n = self.lookups.fetch_add(1, Ordering::SeqCst);
        let ip = if n == 0 { self.first } else { self.later };
        Box::pin(async move { Ok(vec![ip]) })
    }
}

#[tokio::test]
async fn the_checked_address_is_the_one_connected_to() {
    // The name first resolves to the allowed test server, then to an
    // address that is not allowed. A client that resolved again to connect
    // would reach 127.0.0.2 (nothing listens there) and fail.
    let up = upstream().await;
    let resolver = Arc::new(RebindingResolver {
        first: "127.0.0.1".parse().unwrap(),
        later: "127.0.0.2".parse().unwrap(),
        lookups: AtomicUsize::new(0),
    });
    let h = harness_with(|c| c.allow_private = vec![allow(up)], resolver.clone());
    let (status, v) = fetch(
        &h,
        json!({"url": format!("http://rebind.test:{}/echo-host", up.port())}),
    )
    .await;
    assert_eq!(
        (status, v["content"].clone()),
        (StatusCode::OK, json!(format!("rebind.test:{}", up.port())))
    );
    assert_eq!(resolver.lookups.load(Ordering::SeqCst), 1);
    // A second fetch resolves again and is refused: 127.0.0.2 is loopback.
    let (status, v) = fetch(
        &h,
        json!({"url": format!("http://rebind.test:{}/echo-host", up.port())}),
    )
    .await;
    assert_eq!(
        (status, code_of(&v)),
        (StatusCode::FORBIDDEN, "blocked_address")
    );
}

// ---------------------------------------------------------------------------
// TLS

#[tokio::test]
async fn https_is_verified_against_the_host_name() {
    let (roots, server) = test_pki(&["tls.test"]);
    let tls_up = serve_tls(server).await;
    let port = tls_up.port();
    let h = harness_tls(
        |c| c.allow_private = vec![allow(tls_up)],
        Arc::new(test_resolver()),
        ClientConfig::tls_with_roots(roots),
    );
    // The right name: verified, and sent as SNI.
    let (status, v) = fetch(&h, json!({"url": format!("https://tls.test:{port}/")})).await;
    assert_eq!(
        (status, v["content"].clone()),
        (StatusCode::OK, json!("sni=tls.test")),
        "{v}"
    );
    // Another name for the same address: the certificate does not cover it.
    let (status, v) = fetch(&h, json!({"url": format!("https://other.test:{port}/")})).await;
    assert_eq!(
        (status, code_of(&v)),
        (StatusCode::BAD_GATEWAY, "tls_failed"),
        "{v}"
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("certificate"),
        "{v}"
    );
    // The web PKI does not know the test CA.
    let h = harness(|c| c.allow_private = vec![allow(tls_up)]);
    let (status, v) = fetch(&h, json!({"url": format!("https://tls.test:{port}/")})).await;
    assert_eq!(
        (status, code_of(&v)),
        (StatusCode::BAD_GATEWAY, "tls_failed"),
        "{v}"
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("UnknownIssuer"),
        "{v}"
    );
}
