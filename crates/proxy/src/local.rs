//! `GET /api/local-servers`: which of the model servers Hearth knows how
//! to find on this machine (Ollama, LM Studio, llama.cpp's server) are
//! listening, so the app asks only those for their models. A browser's
//! request to a port where nothing listens fails with a network error in
//! the page's console, on the first start of every new profile; a
//! connection tried from here is silent.
//!
//! Only the fixed ports of those presets are tried, on loopback, and never
//! this server's own port (llama.cpp's default is also `hearth serve`'s).
//! The answer names presets, nothing else about the machine, and the route
//! sits behind the same guard as every other.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use hearth_core::assistant::providers::{
    LOCAL_SERVERS_PATH, LocalServers, local_presets, preset_port,
};
use tokio::net::TcpStream;

use crate::api::guard::{self, AppGuard};

/// How long a port gets to accept: loopback answers at once or never.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(300);

/// What the route tries: an id and a port each, and this server's own
/// port, which is never tried.
#[derive(Clone)]
struct Probe {
    candidates: Arc<Vec<(String, u16)>>,
    own_port: u16,
}

/// The route, behind `guard`; `own_port` is the port this server is bound
/// to. It tries the local presets' ports.
pub fn router(own_port: u16, guard: Arc<AppGuard>) -> Router {
    let candidates = local_presets()
        .filter_map(|p| Some((p.id.to_string(), preset_port(p)?)))
        .collect();
    router_for(candidates, own_port, guard)
}

/// The route over the given `candidates`: the presets' ports in use, and
/// ports the tests choose, since a preset's fixed port may be taken on the
/// machine running them.
fn router_for(candidates: Vec<(String, u16)>, own_port: u16, guard: Arc<AppGuard>) -> Router {
    let probe = Probe {
        candidates: Arc::new(candidates),
        own_port,
    };
    let routes = Router::new()
        .route(LOCAL_SERVERS_PATH, get(answer))
        .with_state(probe);
    guard::protect(routes, guard)
}

async fn answer(State(probe): State<Probe>) -> Json<LocalServers> {
    Json(LocalServers {
        listening: listening_among(&probe.candidates, probe.own_port).await,
    })
}

/// Of `candidates` (an id and a port each), those whose port accepts a
/// connection on 127.0.0.1 or ::1, leaving out `own_port`, in their order.
async fn listening_among(candidates: &[(String, u16)], own_port: u16) -> Vec<String> {
    let checks = candidates
        .iter()
        .filter(|(_, port)| *port != own_port)
        .map(|(id, port)| async move { accepts(*port).await.then(|| id.clone()) });
    futures::future::join_all(checks)
        .await
        .into_iter()
        .flatten()
        .collect()
}

async fn accepts(port: u16) -> bool {
    for ip in [
        IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(Ipv6Addr::LOCALHOST),
    ] {
        let connect = TcpStream::connect(SocketAddr::new(ip, port));
        if let Ok(Ok(_)) = tokio::time::timeout(CONNECT_TIMEOUT, connect).await {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::token::ApiToken;
    use axum::body::Body;
    use axum::extract::ConnectInfo;
    use axum::http::{Request, StatusCode, header};
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    /// A port where nothing listens (bound, then let go).
    async fn closed_port() -> u16 {
        let l = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .unwrap();
        l.local_addr().unwrap().port()
    }

    #[tokio::test]
    async fn only_ports_that_accept_are_listed_and_never_our_own() {
        let open = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .unwrap();
        let open_port = open.local_addr().unwrap().port();
        let closed = closed_port().await;
        let candidates = vec![
            ("open".to_string(), open_port),
            ("closed".to_string(), closed),
        ];
        assert_eq!(listening_among(&candidates, 0).await, ["open"]);
        // What listens on this server's own port is this server.
        assert!(listening_among(&candidates, open_port).await.is_empty());
    }

    fn request(key: Option<&str>, origin: &str) -> Request<Body> {
        let mut b = Request::builder()
            .uri(LOCAL_SERVERS_PATH)
            .header(header::HOST, "127.0.0.1:8080")
            .header(header::ORIGIN, origin)
            .header("sec-fetch-site", "same-origin");
        if let Some(k) = key {
            b = b.header(hearth_core::api::TOKEN_HEADER, k);
        }
        let mut req = b.body(Body::empty()).unwrap();
        req.extensions_mut().insert(ConnectInfo::<SocketAddr>(
            "127.0.0.1:50000".parse().unwrap(),
        ));
        req
    }

    async fn listed(res: axum::response::Response) -> Vec<String> {
        assert_eq!(res.status(), StatusCode::OK);
        let body = res.into_body().collect().await.unwrap().to_bytes();
        serde_json::from_slice::<LocalServers>(&body)
            .unwrap()
            .listening
    }

    #[tokio::test]
    async fn the_route_names_the_listening_presets_to_the_app_only() {
        let dir = tempfile::tempdir().unwrap();
        let token = ApiToken::load_or_create(dir.path()).unwrap();
        let bound: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let guard = Arc::new(AppGuard::for_bound_address(bound, token.clone()));
        let server = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .unwrap();
        let up = server.local_addr().unwrap().port();
        let down = closed_port().await;
        let app = router_for(
            vec![("lmstudio".into(), up), ("ollama".into(), down)],
            bound.port(),
            guard,
        );
        let same_origin = "http://127.0.0.1:8080";

        // Without the key, or from another site's page, nothing is said.
        let refused = app
            .clone()
            .oneshot(request(None, same_origin))
            .await
            .unwrap();
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
        let foreign = app
            .clone()
            .oneshot(request(Some(token.as_str()), "http://evil.example"))
            .await
            .unwrap();
        assert_eq!(foreign.status(), StatusCode::FORBIDDEN);

        let ok = app
            .clone()
            .oneshot(request(Some(token.as_str()), same_origin))
            .await
            .unwrap();
        assert_eq!(listed(ok).await, ["lmstudio"]);

        // The server stopping is seen on the next look.
        drop(server);
        let after = app
            .oneshot(request(Some(token.as_str()), same_origin))
            .await
            .unwrap();
        assert!(listed(after).await.is_empty());
    }

    #[tokio::test]
    async fn the_presets_route_never_lists_this_servers_own_port() {
        let dir = tempfile::tempdir().unwrap();
        let token = ApiToken::load_or_create(dir.path()).unwrap();
        // llama.cpp's default port is also `hearth serve`'s.
        let bound: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let app = router(
            bound.port(),
            Arc::new(AppGuard::for_bound_address(bound, token.clone())),
        );
        let res = app
            .oneshot(request(Some(token.as_str()), "http://127.0.0.1:8080"))
            .await
            .unwrap();
        let names = listed(res).await;
        assert!(!names.contains(&"llamacpp".to_string()), "{names:?}");
        // Whatever else listens here, only preset ids are named.
        for id in &names {
            assert!(local_presets().any(|p| p.id == id), "{id}");
        }
    }
}
