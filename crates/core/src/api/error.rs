//! The stable error codes of `hearth serve`'s API and the body every
//! error answer has.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Defines [`ApiErrorCode`] from one list of variants and their names on
/// the wire: the enum, [`ApiErrorCode::ALL`], [`ApiErrorCode::as_str`] and
/// its serde form all come from it, so a name is spelled once.
macro_rules! api_error_codes {
    ($(#[$meta:meta])* pub enum ApiErrorCode {
        $($(#[$doc:meta])* $variant:ident => $name:literal,)+
    }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ApiErrorCode {
            $($(#[$doc])* $variant,)+
        }

        impl ApiErrorCode {
            pub const ALL: [ApiErrorCode; [$(ApiErrorCode::$variant),+].len()] =
                [$(ApiErrorCode::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(ApiErrorCode::$variant => $name,)+
                }
            }
        }
    };
}

api_error_codes! {
    /// The stable error codes of the proxy's API. The proxy's error enum
    /// maps each of its variants to one of these; the HTTP status of each
    /// is documented there.
    pub enum ApiErrorCode {
        ForbiddenPeer => "forbidden_peer",
        ForbiddenHost => "forbidden_host",
        ForbiddenOrigin => "forbidden_origin",
        ForbiddenFetchSite => "forbidden_fetch_site",
        MissingToken => "missing_token",
        BadToken => "bad_token",
        PreflightRefused => "preflight_refused",
        NotFound => "not_found",
        MethodNotAllowed => "method_not_allowed",
        InvalidRequest => "invalid_request",
        InvalidUrl => "invalid_url",
        UnsupportedScheme => "unsupported_scheme",
        UrlHasCredentials => "url_has_credentials",
        BlockedPort => "blocked_port",
        BlockedAddress => "blocked_address",
        BlockedDomain => "blocked_domain",
        DnsFailed => "dns_failed",
        ConnectFailed => "connect_failed",
        TlsFailed => "tls_failed",
        Timeout => "timeout",
        TooManyRedirects => "too_many_redirects",
        BadRedirect => "bad_redirect",
        UpstreamStatus => "upstream_status",
        UpstreamFailed => "upstream_failed",
        ResponseTooLarge => "response_too_large",
        UnsupportedContentType => "unsupported_content_type",
        UnsupportedContentEncoding => "unsupported_content_encoding",
        InvalidJson => "invalid_json",
        RateLimited => "rate_limited",
        NoSearchBackend => "no_search_backend",
        SearchBackendFailed => "search_backend_failed",
        SettingsFailed => "settings_failed",
        Internal => "internal",
    }
}

impl ApiErrorCode {
    pub fn parse(s: &str) -> Option<ApiErrorCode> {
        ApiErrorCode::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// Whether the key was refused: the app reads its stored key again
    /// (another tab may have taken a newer one from a launch link) and
    /// tries once more.
    pub fn needs_new_session(self) -> bool {
        matches!(self, ApiErrorCode::MissingToken | ApiErrorCode::BadToken)
    }
}

impl Serialize for ApiErrorCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ApiErrorCode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        ApiErrorCode::parse(&name).ok_or_else(|| {
            serde::de::Error::custom(format!("{name:?} is not an error code of the API"))
        })
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
            let read: ApiErrorCode = serde_json::from_value(json!(code.as_str())).unwrap();
            assert_eq!(read, code);
        }
        assert!(serde_json::from_value::<ApiErrorCode>(json!("ForbiddenPeer")).is_err());
        assert!(serde_json::from_value::<ApiErrorCode>(json!("no_such_code")).is_err());
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
