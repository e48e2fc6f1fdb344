//! The stable error codes of `hearth serve`'s API and the body every
//! error answer has.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The stable error codes of the proxy's API. The proxy's error enum maps
/// each of its variants to one of these; the HTTP status of each is
/// documented there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApiErrorCode {
    ForbiddenPeer,
    ForbiddenHost,
    ForbiddenOrigin,
    ForbiddenFetchSite,
    MissingToken,
    BadToken,
    PreflightRefused,
    NotFound,
    MethodNotAllowed,
    InvalidRequest,
    InvalidUrl,
    UnsupportedScheme,
    UrlHasCredentials,
    BlockedPort,
    BlockedAddress,
    BlockedDomain,
    DnsFailed,
    ConnectFailed,
    TlsFailed,
    Timeout,
    TooManyRedirects,
    BadRedirect,
    UpstreamStatus,
    UpstreamFailed,
    ResponseTooLarge,
    UnsupportedContentType,
    UnsupportedContentEncoding,
    InvalidJson,
    RateLimited,
    NoSearchBackend,
    SearchBackendFailed,
    SettingsFailed,
    Internal,
}

impl ApiErrorCode {
    pub const ALL: [ApiErrorCode; 33] = [
        ApiErrorCode::ForbiddenPeer,
        ApiErrorCode::ForbiddenHost,
        ApiErrorCode::ForbiddenOrigin,
        ApiErrorCode::ForbiddenFetchSite,
        ApiErrorCode::MissingToken,
        ApiErrorCode::BadToken,
        ApiErrorCode::PreflightRefused,
        ApiErrorCode::NotFound,
        ApiErrorCode::MethodNotAllowed,
        ApiErrorCode::InvalidRequest,
        ApiErrorCode::InvalidUrl,
        ApiErrorCode::UnsupportedScheme,
        ApiErrorCode::UrlHasCredentials,
        ApiErrorCode::BlockedPort,
        ApiErrorCode::BlockedAddress,
        ApiErrorCode::BlockedDomain,
        ApiErrorCode::DnsFailed,
        ApiErrorCode::ConnectFailed,
        ApiErrorCode::TlsFailed,
        ApiErrorCode::Timeout,
        ApiErrorCode::TooManyRedirects,
        ApiErrorCode::BadRedirect,
        ApiErrorCode::UpstreamStatus,
        ApiErrorCode::UpstreamFailed,
        ApiErrorCode::ResponseTooLarge,
        ApiErrorCode::UnsupportedContentType,
        ApiErrorCode::UnsupportedContentEncoding,
        ApiErrorCode::InvalidJson,
        ApiErrorCode::RateLimited,
        ApiErrorCode::NoSearchBackend,
        ApiErrorCode::SearchBackendFailed,
        ApiErrorCode::SettingsFailed,
        ApiErrorCode::Internal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ApiErrorCode::ForbiddenPeer => "forbidden_peer",
            ApiErrorCode::ForbiddenHost => "forbidden_host",
            ApiErrorCode::ForbiddenOrigin => "forbidden_origin",
            ApiErrorCode::ForbiddenFetchSite => "forbidden_fetch_site",
            ApiErrorCode::MissingToken => "missing_token",
            ApiErrorCode::BadToken => "bad_token",
            ApiErrorCode::PreflightRefused => "preflight_refused",
            ApiErrorCode::NotFound => "not_found",
            ApiErrorCode::MethodNotAllowed => "method_not_allowed",
            ApiErrorCode::InvalidRequest => "invalid_request",
            ApiErrorCode::InvalidUrl => "invalid_url",
            ApiErrorCode::UnsupportedScheme => "unsupported_scheme",
            ApiErrorCode::UrlHasCredentials => "url_has_credentials",
            ApiErrorCode::BlockedPort => "blocked_port",
            ApiErrorCode::BlockedAddress => "blocked_address",
            ApiErrorCode::BlockedDomain => "blocked_domain",
            ApiErrorCode::DnsFailed => "dns_failed",
            ApiErrorCode::ConnectFailed => "connect_failed",
            ApiErrorCode::TlsFailed => "tls_failed",
            ApiErrorCode::Timeout => "timeout",
            ApiErrorCode::TooManyRedirects => "too_many_redirects",
            ApiErrorCode::BadRedirect => "bad_redirect",
            ApiErrorCode::UpstreamStatus => "upstream_status",
            ApiErrorCode::UpstreamFailed => "upstream_failed",
            ApiErrorCode::ResponseTooLarge => "response_too_large",
            ApiErrorCode::UnsupportedContentType => "unsupported_content_type",
            ApiErrorCode::UnsupportedContentEncoding => "unsupported_content_encoding",
            ApiErrorCode::InvalidJson => "invalid_json",
            ApiErrorCode::RateLimited => "rate_limited",
            ApiErrorCode::NoSearchBackend => "no_search_backend",
            ApiErrorCode::SearchBackendFailed => "search_backend_failed",
            ApiErrorCode::SettingsFailed => "settings_failed",
            ApiErrorCode::Internal => "internal",
        }
    }

    pub fn parse(s: &str) -> Option<ApiErrorCode> {
        ApiErrorCode::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// Whether the key was refused: the app reads its stored key again
    /// (another tab may have taken a newer one from a launch link) and
    /// tries once more.
    pub fn needs_new_session(self) -> bool {
        match self {
            ApiErrorCode::MissingToken | ApiErrorCode::BadToken => true,
            ApiErrorCode::ForbiddenPeer
            | ApiErrorCode::ForbiddenHost
            | ApiErrorCode::ForbiddenOrigin
            | ApiErrorCode::ForbiddenFetchSite
            | ApiErrorCode::PreflightRefused
            | ApiErrorCode::NotFound
            | ApiErrorCode::MethodNotAllowed
            | ApiErrorCode::InvalidRequest
            | ApiErrorCode::InvalidUrl
            | ApiErrorCode::UnsupportedScheme
            | ApiErrorCode::UrlHasCredentials
            | ApiErrorCode::BlockedPort
            | ApiErrorCode::BlockedAddress
            | ApiErrorCode::BlockedDomain
            | ApiErrorCode::DnsFailed
            | ApiErrorCode::ConnectFailed
            | ApiErrorCode::TlsFailed
            | ApiErrorCode::Timeout
            | ApiErrorCode::TooManyRedirects
            | ApiErrorCode::BadRedirect
            | ApiErrorCode::UpstreamStatus
            | ApiErrorCode::UpstreamFailed
            | ApiErrorCode::ResponseTooLarge
            | ApiErrorCode::UnsupportedContentType
            | ApiErrorCode::UnsupportedContentEncoding
            | ApiErrorCode::InvalidJson
            | ApiErrorCode::RateLimited
            | ApiErrorCode::NoSearchBackend
            | ApiErrorCode::SearchBackendFailed
            | ApiErrorCode::SettingsFailed
            | ApiErrorCode::Internal => false,
        }
    }
}

impl fmt::Display for ApiErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The body of every error answer: `{"error": {"code": …, "message": …}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiErrorBody {
    pub error: ApiErrorDetail,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiErrorDetail {
    /// One of [`ApiErrorCode`]'s names; kept as a string so an app older
    /// than the proxy still shows the message.
    pub code: String,
    pub message: String,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn error_codes_round_trip() {
        for code in ApiErrorCode::ALL {
            assert_eq!(ApiErrorCode::parse(code.as_str()), Some(code));
            assert_eq!(serde_json::to_value(code).unwrap(), json!(code.as_str()));
        }
        let needs: Vec<ApiErrorCode> = ApiErrorCode::ALL
            .into_iter()
            .filter(|c| c.needs_new_session())
            .collect();
        assert_eq!(
            needs,
            vec![ApiErrorCode::MissingToken, ApiErrorCode::BadToken]
        );
    }
}
