//! The bridge without a socket: an `HttpTransport` that hands requests
//! straight to the bridge's router in this process. `hearth mcp stdio`
//! uses it to check configured servers from the terminal, with the same
//! client and the same bridge the app gets through `hearth serve`, but
//! with nothing listening on the network.

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use futures::future::LocalBoxFuture;
use futures::{FutureExt, StreamExt, TryStreamExt};
use hearth_core::mcp::{HttpMethod, HttpRequest, HttpResponse, HttpTransport, TransportError};
use tower::ServiceExt;

pub struct RouterTransport {
    router: Router,
}

impl RouterTransport {
    pub fn new(router: Router) -> Self {
        Self { router }
    }
}

impl HttpTransport for RouterTransport {
    fn send(
        &self,
        request: HttpRequest,
    ) -> LocalBoxFuture<'_, Result<HttpResponse, TransportError>> {
        async move {
            let path = request
                .url
                .split_once("://")
                .and_then(|(_, rest)| rest.find('/').map(|i| rest[i..].to_string()))
                .unwrap_or_else(|| "/".into());
            let method = match request.method {
                HttpMethod::Get => axum::http::Method::GET,
                HttpMethod::Post => axum::http::Method::POST,
                HttpMethod::Put => axum::http::Method::PUT,
                HttpMethod::Delete => axum::http::Method::DELETE,
            };
            let mut builder = axum::http::Request::builder().method(method).uri(path);
            for (name, value) in &request.headers {
                builder = builder.header(name.as_str(), value.as_str());
            }
            let req = builder
                .body(Body::from(request.body.unwrap_or_default()))
                .map_err(|e| TransportError::Other(e.to_string()))?;
            let response = self
                .router
                .clone()
                .oneshot(req)
                .await
                .map_err(|e| TransportError::Other(e.to_string()))?;
            let status = response.status().as_u16();
            let headers = response
                .headers()
                .iter()
                .map(|(n, v)| {
                    (
                        n.as_str().to_string(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect();
            let body = response
                .into_body()
                .into_data_stream()
                .map_ok(|b| b.to_vec())
                .map_err(|e| TransportError::Interrupted(e.to_string()))
                .boxed_local();
            Ok(HttpResponse {
                status,
                headers,
                body,
            })
        }
        .boxed_local()
    }

    fn sleep(&self, ms: u64) -> LocalBoxFuture<'_, ()> {
        tokio::time::sleep(Duration::from_millis(ms)).boxed_local()
    }
}
