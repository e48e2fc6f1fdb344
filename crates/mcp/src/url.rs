//! Just enough URL handling for MCP endpoints and OAuth: splitting an
//! absolute `http(s)` URL into its parts, origins, the well-known URLs
//! discovery builds, and `application/x-www-form-urlencoded`. A full URL
//! crate (with IDNA tables) would cost the wasm bundle far more than this
//! needs; hosts are compared as given, ASCII-lower-cased.

use std::fmt;

/// An absolute `http` or `https` URL, split.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpUrl {
    /// `http` or `https`, lower-case.
    pub scheme: String,
    /// Lower-case; IPv6 literals keep their brackets.
    pub host: String,
    /// `None` when absent or the scheme's default.
    pub port: Option<u16>,
    /// Empty or starting with `/`, as written (no normalisation).
    pub path: String,
    pub query: Option<String>,
    pub fragment: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("{0:?} is not an http or https URL")]
    NotHttp(String),
    #[error("{0:?} has no host")]
    NoHost(String),
    #[error("{0:?} carries a user name or password, which Hearth refuses")]
    UserInfo(String),
    #[error("{0:?} has an invalid port")]
    BadPort(String),
    #[error("{0:?} contains spaces or control characters")]
    BadCharacters(String),
}

impl HttpUrl {
    pub fn parse(input: &str) -> Result<HttpUrl, UrlError> {
        let s = input.trim();
        if s.chars().any(|c| c.is_control() || c == ' ') {
            return Err(UrlError::BadCharacters(input.into()));
        }
        let (scheme, rest) = s
            .split_once("://")
            .ok_or_else(|| UrlError::NotHttp(input.into()))?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(UrlError::NotHttp(input.into()));
        }
        let (before_fragment, fragment) = match rest.split_once('#') {
            Some((a, f)) => (a, Some(f.to_string())),
            None => (rest, None),
        };
        let (before_query, query) = match before_fragment.split_once('?') {
            Some((a, q)) => (a, Some(q.to_string())),
            None => (before_fragment, None),
        };
        let (authority, path) = match before_query.find('/') {
            Some(i) => (&before_query[..i], before_query[i..].to_string()),
            None => (before_query, String::new()),
        };
        if authority.contains('@') {
            return Err(UrlError::UserInfo(input.into()));
        }
        let (host, port) =
            split_host_port(authority).ok_or_else(|| UrlError::BadPort(input.into()))?;
        if host.is_empty() {
            return Err(UrlError::NoHost(input.into()));
        }
        let default = if scheme == "https" { 443 } else { 80 };
        Ok(HttpUrl {
            host: host.to_ascii_lowercase(),
            port: port.filter(|p| *p != default),
            scheme,
            path,
            query,
            fragment,
        })
    }

    /// `scheme://host[:port]`.
    pub fn origin(&self) -> String {
        match self.port {
            Some(p) => format!("{}://{}:{}", self.scheme, self.host, p),
            None => format!("{}://{}", self.scheme, self.host),
        }
    }

    /// Whether the host is this machine, where plain `http` is acceptable.
    pub fn is_loopback(&self) -> bool {
        matches!(self.host.as_str(), "localhost" | "127.0.0.1" | "[::1]")
            || self.host.starts_with("127.")
            || self.host.ends_with(".localhost")
    }

    /// HTTPS, or HTTP to this machine: what OAuth endpoints must be.
    pub fn is_secure_or_loopback(&self) -> bool {
        self.scheme == "https" || self.is_loopback()
    }

    /// The path without a trailing slash; the root is empty.
    pub fn trimmed_path(&self) -> &str {
        self.path.trim_end_matches('/')
    }

    /// The canonical resource identifier (RFC 8707): lower-case scheme and
    /// host, no default port, no fragment, no trailing slash.
    pub fn canonical_resource(&self) -> String {
        let mut s = format!("{}{}", self.origin(), self.trimmed_path());
        if let Some(q) = &self.query {
            s.push('?');
            s.push_str(q);
        }
        s
    }
}

fn split_host_port(authority: &str) -> Option<(&str, Option<u16>)> {
    if let Some(rest) = authority.strip_prefix('[') {
        let end = rest.find(']')?;
        let host = &authority[..end + 2];
        let after = &rest[end + 1..];
        return match after.strip_prefix(':') {
            Some(p) if !p.is_empty() => Some((host, Some(p.parse().ok()?))),
            Some(_) => Some((host, None)),
            None if after.is_empty() => Some((host, None)),
            None => None,
        };
    }
    match authority.rsplit_once(':') {
        Some((h, p)) if !p.is_empty() => Some((h, Some(p.parse().ok()?))),
        Some((h, _)) => Some((h, None)),
        None => Some((authority, None)),
    }
}

impl fmt::Display for HttpUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.origin(), self.path)?;
        if let Some(q) = &self.query {
            write!(f, "?{q}")?;
        }
        if let Some(fr) = &self.fragment {
            write!(f, "#{fr}")?;
        }
        Ok(())
    }
}

/// `application/x-www-form-urlencoded`, as OAuth forms and query strings use.
pub fn form_encode<K: AsRef<str>, V: AsRef<str>>(pairs: &[(K, V)]) -> String {
    let mut out = String::new();
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        encode_component(k.as_ref(), &mut out);
        out.push('=');
        encode_component(v.as_ref(), &mut out);
    }
    out
}

fn encode_component(s: &str, out: &mut String) {
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
}

/// Decodes a query string or form body into pairs, in order.
pub fn form_decode(input: &str) -> Vec<(String, String)> {
    input
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode_component(k), decode_component(v))
        })
        .collect()
}

fn decode_component(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => match (
                bytes.get(i + 1).and_then(|h| (*h as char).to_digit(16)),
                bytes.get(i + 2).and_then(|l| (*l as char).to_digit(16)),
            ) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Appends query pairs to a URL that may already have a query.
pub fn with_query<K: AsRef<str>, V: AsRef<str>>(url: &str, pairs: &[(K, V)]) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{}", form_encode(pairs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_split_and_normalised_where_safe() {
        let u = HttpUrl::parse("HTTPS://Example.COM:443/Public/mcp/?a=1#frag").unwrap();
        assert_eq!(
            u,
            HttpUrl {
                scheme: "https".into(),
                host: "example.com".into(),
                port: None,
                path: "/Public/mcp/".into(),
                query: Some("a=1".into()),
                fragment: Some("frag".into()),
            }
        );
        assert_eq!(u.origin(), "https://example.com");
        assert_eq!(u.canonical_resource(), "https://example.com/Public/mcp?a=1");
        let local = HttpUrl::parse("http://localhost:3000").unwrap();
        assert_eq!(local.path, "");
        assert_eq!(local.origin(), "http://localhost:3000");
        assert!(local.is_secure_or_loopback());
        let v6 = HttpUrl::parse("http://[::1]:8080/mcp").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("[::1]", Some(8080)));
        assert!(v6.is_loopback());
        assert!(
            !HttpUrl::parse("http://example.com")
                .unwrap()
                .is_secure_or_loopback()
        );
    }

    #[test]
    fn bad_urls_are_refused() {
        let table = [
            ("ftp://x/y", UrlError::NotHttp("ftp://x/y".into())),
            (
                "example.com/mcp",
                UrlError::NotHttp("example.com/mcp".into()),
            ),
            ("https:///mcp", UrlError::NoHost("https:///mcp".into())),
            (
                "https://user:pw@evil.example/",
                UrlError::UserInfo("https://user:pw@evil.example/".into()),
            ),
            (
                "http://h:99999/",
                UrlError::BadPort("http://h:99999/".into()),
            ),
            (
                "http://h/a b",
                UrlError::BadCharacters("http://h/a b".into()),
            ),
        ];
        for (input, want) in table {
            assert_eq!(HttpUrl::parse(input), Err(want), "input: {input}");
        }
    }

    #[test]
    fn forms_round_trip() {
        let pairs = [
            ("redirect_uri", "http://localhost:3000/callback?x=1&y=2"),
            ("scope", "mcp:read mcp:write"),
            ("state", "a/b+c=d"),
        ];
        let encoded = form_encode(&pairs);
        assert_eq!(
            encoded,
            "redirect_uri=http%3A%2F%2Flocalhost%3A3000%2Fcallback%3Fx%3D1%26y%3D2&scope=mcp%3Aread+mcp%3Awrite&state=a%2Fb%2Bc%3Dd"
        );
        let decoded = form_decode(&encoded);
        let want: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(decoded, want);
        assert_eq!(
            form_decode("a=%zz&b=%E4%B8%96&c"),
            vec![
                ("a".to_string(), "%zz".to_string()),
                ("b".to_string(), "世".to_string()),
                ("c".to_string(), String::new())
            ]
        );
        assert_eq!(
            with_query("https://a/b?x=1", &[("y", "2")]),
            "https://a/b?x=1&y=2"
        );
    }
}
