//! The API's errors, converted at the edge into
//! `{"error": {"code": "...", "message": "..."}}` with a stable code and
//! status per variant (each variant's doc comment says which).

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hearth_core::api::error::{ApiErrorBody, ApiErrorCode, ApiErrorDetail};

use super::guard::GuardError;

/// A failure that knows its own status and code: the client's and the
/// features' errors implement it, so this layer answers them without
/// knowing them.
pub trait Refusal: std::error::Error + Send + Sync + 'static {
    /// The stable code of the JSON error.
    fn code(&self) -> ApiErrorCode;
    /// The HTTP status of the answer.
    fn status(&self) -> StatusCode;
}

/// Everything an API call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 403 with the guard's code: the caller is not the app.
    #[error(transparent)]
    Guard(#[from] GuardError),
    /// A failure of a layer above this one (the outbound client, a
    /// feature), with the status and code it chose for itself.
    #[error("{0}")]
    Refused(Box<dyn Refusal>),
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

impl<E: Refusal> From<E> for ApiError {
    fn from(e: E) -> Self {
        ApiError::Refused(Box::new(e))
    }
}

impl ApiError {
    pub fn code(&self) -> ApiErrorCode {
        match self {
            ApiError::Guard(e) => e.code(),
            ApiError::Refused(e) => e.code(),
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
            ApiError::Refused(e) => e.status(),
            ApiError::InvalidRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Settings(_) | ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
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
