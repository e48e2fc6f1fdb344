//! The API's errors, converted at the edge into
//! `{"error": {"code": "...", "message": "..."}}` with a stable code and
//! status per variant (each variant's doc comment says which).

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hearth_core::web::{ApiErrorBody, ApiErrorCode, ApiErrorDetail};

use super::client::FetchError;
use super::guard::GuardError;
use super::search::SearchError;

/// Everything an API call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 403 with the guard's code: the caller is not the app.
    #[error(transparent)]
    Guard(#[from] GuardError),
    /// The status and code of the [`FetchError`] variant.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// The status and code of the [`SearchError`] variant.
    #[error(transparent)]
    Search(#[from] SearchError),
    /// 400 `invalid_request`: the body is not the JSON this endpoint takes.
    #[error("{0}")]
    InvalidRequest(String),
    /// 429 `rate_limited`, with `Retry-After`.
    #[error("{skill} was called too often; try again in {retry_after_secs} s")]
    RateLimited {
        skill: String,
        retry_after_secs: u64,
    },
    /// 404 `not_found`: no such API.
    #[error("there is no API at {0}")]
    NotFound(String),
    /// 405 `method_not_allowed`.
    #[error("this API does not take that method")]
    MethodNotAllowed,
    /// 500 `settings_failed`: the settings file could not be written.
    #[error("cannot save the setting: {0}")]
    Settings(String),
    /// 500 `internal`: a bug; the detail is logged, not sent.
    #[error("internal error")]
    Internal(String),
}

impl ApiError {
    pub fn code(&self) -> ApiErrorCode {
        match self {
            ApiError::Guard(e) => e.code(),
            ApiError::Fetch(e) => e.code(),
            ApiError::Search(e) => e.code(),
            ApiError::InvalidRequest(_) => ApiErrorCode::InvalidRequest,
            ApiError::RateLimited { .. } => ApiErrorCode::RateLimited,
            ApiError::NotFound(_) => ApiErrorCode::NotFound,
            ApiError::MethodNotAllowed => ApiErrorCode::MethodNotAllowed,
            ApiError::Settings(_) => ApiErrorCode::SettingsFailed,
            ApiError::Internal(_) => ApiErrorCode::Internal,
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Guard(_) => StatusCode::FORBIDDEN,
            ApiError::Fetch(e) => e.status(),
            ApiError::Search(e) => e.status(),
            ApiError::InvalidRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Settings(_) | ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl FetchError {
    pub fn code(&self) -> ApiErrorCode {
        match self {
            FetchError::InvalidUrl { .. } => ApiErrorCode::InvalidUrl,
            FetchError::UnsupportedScheme(_) => ApiErrorCode::UnsupportedScheme,
            FetchError::UrlHasCredentials => ApiErrorCode::UrlHasCredentials,
            FetchError::BlockedPort(_) => ApiErrorCode::BlockedPort,
            FetchError::BlockedAddress { .. } => ApiErrorCode::BlockedAddress,
            FetchError::BlockedDomain(_) => ApiErrorCode::BlockedDomain,
            FetchError::DnsFailed { .. } => ApiErrorCode::DnsFailed,
            FetchError::ConnectFailed { .. } => ApiErrorCode::ConnectFailed,
            FetchError::TlsFailed { .. } => ApiErrorCode::TlsFailed,
            FetchError::Timeout { .. } => ApiErrorCode::Timeout,
            FetchError::TooManyRedirects(_) => ApiErrorCode::TooManyRedirects,
            FetchError::BadRedirect(_) => ApiErrorCode::BadRedirect,
            FetchError::UpstreamStatus { .. } => ApiErrorCode::UpstreamStatus,
            FetchError::UpstreamFailed { .. } => ApiErrorCode::UpstreamFailed,
            FetchError::ResponseTooLarge { .. } => ApiErrorCode::ResponseTooLarge,
            FetchError::UnsupportedContentType(_) => ApiErrorCode::UnsupportedContentType,
            FetchError::UnsupportedContentEncoding(_) => ApiErrorCode::UnsupportedContentEncoding,
            FetchError::InvalidJson(_) => ApiErrorCode::InvalidJson,
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            FetchError::InvalidUrl { .. }
            | FetchError::UnsupportedScheme(_)
            | FetchError::UrlHasCredentials => StatusCode::BAD_REQUEST,
            FetchError::BlockedPort(_)
            | FetchError::BlockedAddress { .. }
            | FetchError::BlockedDomain(_) => StatusCode::FORBIDDEN,
            FetchError::UnsupportedContentType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            FetchError::Timeout { .. } => StatusCode::GATEWAY_TIMEOUT,
            FetchError::DnsFailed { .. }
            | FetchError::ConnectFailed { .. }
            | FetchError::TlsFailed { .. }
            | FetchError::TooManyRedirects(_)
            | FetchError::BadRedirect(_)
            | FetchError::UpstreamStatus { .. }
            | FetchError::UpstreamFailed { .. }
            | FetchError::ResponseTooLarge { .. }
            | FetchError::UnsupportedContentEncoding(_)
            | FetchError::InvalidJson(_) => StatusCode::BAD_GATEWAY,
        }
    }
}

/// The JSON error response for `code`, `status` and `message`.
pub fn error_response(status: StatusCode, code: ApiErrorCode, message: String) -> Response {
    let body = ApiErrorBody {
        error: ApiErrorDetail {
            code: code.as_str().to_string(),
            message,
        },
    };
    let mut res = (status, Json(body)).into_response();
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// A refusal by the guard answers as the API's error of that kind.
impl IntoResponse for GuardError {
    fn into_response(self) -> Response {
        ApiError::Guard(self).into_response()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let ApiError::Internal(detail) = &self {
            tracing::error!(target: "hearth::net", %detail, "internal error in the network-tier API");
        }
        let mut res = error_response(self.status(), self.code(), self.to_string());
        if let ApiError::RateLimited {
            retry_after_secs, ..
        } = &self
            && let Ok(v) = HeaderValue::from_str(&retry_after_secs.to_string())
        {
            res.headers_mut().insert(header::RETRY_AFTER, v);
        }
        res
    }
}
