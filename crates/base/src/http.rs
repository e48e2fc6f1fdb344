//! The one HTTP request type: what the model providers and the MCP client
//! ask the platform to send. Pure data; the app sends it with `fetch`,
//! `hearth` with reqwest, and tests read it as it is.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HttpMethod {
    Get,
    Post,
    Put,
    Delete,
}

impl HttpMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Post => "POST",
            HttpMethod::Put => "PUT",
            HttpMethod::Delete => "DELETE",
        }
    }
}

/// A request for the platform to send.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    pub method: HttpMethod,
    pub url: String,
    /// Header names as sent; comparisons elsewhere ignore case.
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
}

impl HttpRequest {
    pub fn new(method: HttpMethod, url: impl Into<String>) -> Self {
        Self {
            method,
            url: url.into(),
            headers: Vec::new(),
            body: None,
        }
    }

    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// The first value of a header, by case-insensitive name.
    pub fn header_value(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as text, when it is UTF-8.
    pub fn body_text(&self) -> Option<&str> {
        self.body
            .as_deref()
            .and_then(|b| std::str::from_utf8(b).ok())
    }
}

/// Secrets never reach a log through `{:?}`: the credential headers are
/// redacted and the body is shown by its length.
impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, v)| {
                let secret =
                    k.eq_ignore_ascii_case("authorization") || k.eq_ignore_ascii_case("x-api-key");
                (k.as_str(), if secret { "<redacted>" } else { v.as_str() })
            })
            .collect();
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &headers)
            .field("body", &self.body.as_ref().map(|b| b.len()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_found_by_any_case_and_secrets_never_show_in_debug() {
        let r = HttpRequest::new(HttpMethod::Post, "https://example.test/v1")
            .header("Authorization", "Bearer sk-secret")
            .header("X-Api-Key", "sk-other")
            .header("Accept", "text/event-stream")
            .body("{\"a\":1}");
        assert_eq!(r.header_value("accept"), Some("text/event-stream"));
        assert_eq!(r.header_value("missing"), None);
        assert_eq!(r.body_text(), Some("{\"a\":1}"));
        let shown = format!("{r:?}");
        assert!(
            !shown.contains("sk-secret") && !shown.contains("sk-other"),
            "{shown}"
        );
        assert!(
            shown.contains("<redacted>") && shown.contains("Some(7)"),
            "{shown}"
        );
    }
}
