//! A web skill's domain lists as data with a pure decision: the person
//! edits them in the Skills panel, the app sends them with every call, and
//! the proxy applies them to the first URL, every redirect and every
//! search result.

use std::fmt;

use serde::{Deserialize, Serialize};

/// One entry of a skill's allowlist or denylist.
///
/// The three forms, and what each matches (hosts are compared
/// case-insensitively, with any trailing dot removed):
///
/// | written          | matches                                   | does not match          |
/// |------------------|-------------------------------------------|-------------------------|
/// | `example.com`    | `example.com`, `www.example.com`, `a.b.example.com` | `notexample.com` |
/// | `*.example.com`  | `www.example.com`, `a.b.example.com`      | `example.com`           |
/// | `=example.com`   | `example.com` only                        | `www.example.com`       |
///
/// An IP address (`93.184.215.14`, `[2001:db8::1]`) matches only itself.
/// Internationalised names may be written either way (`bücher.example` or
/// `xn--bcher-kva.example`): they are kept and compared in their ASCII
/// (`xn--`) form, which is what URLs carry, converted as browsers convert a
/// URL's host (UTS #46 through the `idna` crate).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct DomainPattern {
    kind: PatternKind,
    /// Lower-case, without a trailing dot or the `*.` / `=` marker.
    name: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum PatternKind {
    /// The domain and every subdomain.
    DomainAndSubdomains,
    /// Subdomains only.
    SubdomainsOnly,
    /// Exactly this host.
    Exact,
}

/// Why a domain pattern was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DomainPatternError {
    #[error("a domain cannot be empty")]
    Empty,
    #[error("write just the domain, like example.com, not a URL ({0:?})")]
    LooksLikeUrl(String),
    #[error(
        "{0:?}: only a leading '*.' is allowed as a wildcard, as in *.example.com (use = for an exact host, as in =example.com)"
    )]
    BadWildcard(String),
    #[error("{0:?} is not a valid internationalised domain name")]
    BadInternationalName(String),
    #[error(
        "{0:?} is not a valid domain: labels hold letters, digits, '-' and '_', 1–63 characters each"
    )]
    BadLabel(String),
    #[error("{0:?} is longer than the 253 characters a domain may have")]
    TooLong(String),
}

impl DomainPattern {
    pub fn parse(input: &str) -> Result<Self, DomainPatternError> {
        let raw = input.trim();
        if raw.is_empty() {
            return Err(DomainPatternError::Empty);
        }
        if raw.contains("://") || raw.contains('/') || raw.contains('@') {
            return Err(DomainPatternError::LooksLikeUrl(raw.to_string()));
        }
        let lower = raw.to_ascii_lowercase();
        let (kind, rest) = if let Some(rest) = lower.strip_prefix("*.") {
            (PatternKind::SubdomainsOnly, rest)
        } else if let Some(rest) = lower.strip_prefix('=') {
            (PatternKind::Exact, rest)
        } else {
            (PatternKind::DomainAndSubdomains, lower.as_str())
        };
        let ascii;
        let rest = if rest.is_ascii() {
            rest
        } else {
            ascii = to_ascii_name(rest)
                .ok_or_else(|| DomainPatternError::BadInternationalName(raw.to_string()))?;
            ascii.as_str()
        };
        if rest.contains('*') {
            return Err(DomainPatternError::BadWildcard(raw.to_string()));
        }
        if let Some(ip) = normalize_ip(rest) {
            // An address has no subdomains; every form means "this address".
            return match kind {
                PatternKind::SubdomainsOnly => {
                    Err(DomainPatternError::BadWildcard(raw.to_string()))
                }
                PatternKind::DomainAndSubdomains | PatternKind::Exact => Ok(Self {
                    kind: PatternKind::Exact,
                    name: ip,
                }),
            };
        }
        let name = rest.strip_suffix('.').unwrap_or(rest);
        if name.contains(':') || name.contains('[') || name.contains(']') {
            return Err(DomainPatternError::LooksLikeUrl(raw.to_string()));
        }
        if name.len() > 253 {
            return Err(DomainPatternError::TooLong(raw.to_string()));
        }
        let labels_ok = name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
        if !labels_ok {
            return Err(DomainPatternError::BadLabel(raw.to_string()));
        }
        Ok(Self {
            kind,
            name: name.to_string(),
        })
    }

    /// Whether `host` (as a URL carries it: a name, `1.2.3.4` or `[v6]`)
    /// matches this pattern.
    pub fn matches(&self, host: &str) -> bool {
        let Some(host) = normalize_host(host) else {
            return false;
        };
        match self.kind {
            PatternKind::Exact => host == self.name,
            PatternKind::DomainAndSubdomains => {
                host == self.name || is_subdomain_of(&host, &self.name)
            }
            PatternKind::SubdomainsOnly => is_subdomain_of(&host, &self.name),
        }
    }
}

fn is_subdomain_of(host: &str, domain: &str) -> bool {
    host.len() > domain.len() + 1
        && host.ends_with(domain)
        && host.as_bytes()[host.len() - domain.len() - 1] == b'.'
}

/// `1.2.3.4` as is, and IPv6 in brackets, both as URLs print them; `None`
/// when `s` is not an address in one of those forms.
fn normalize_ip(s: &str) -> Option<String> {
    if let Ok(v4) = s.parse::<std::net::Ipv4Addr>() {
        return Some(v4.to_string());
    }
    let inner = s.strip_prefix('[').and_then(|r| r.strip_suffix(']'));
    let v6 = inner.unwrap_or(s).parse::<std::net::Ipv6Addr>().ok()?;
    Some(format!("[{v6}]"))
}

/// `name` in its ASCII form (`bücher.example` → `xn--bcher-kva.example`),
/// as a browser converts a URL's host; `None` when it cannot be one.
fn to_ascii_name(name: &str) -> Option<String> {
    idna::domain_to_ascii(name)
        .ok()
        .filter(|a| !a.is_empty() && a.is_ascii())
}

/// A host as compared by patterns: lower case, ASCII (`xn--`) form, no
/// trailing dot, addresses in canonical form. `None` for an empty host or
/// a name that has no ASCII form.
pub fn normalize_host(host: &str) -> Option<String> {
    let host = host.trim();
    if host.is_empty() {
        return None;
    }
    if let Some(ip) = normalize_ip(host) {
        return Some(ip);
    }
    let converted;
    let host = if host.is_ascii() {
        host
    } else {
        converted = to_ascii_name(host)?;
        converted.as_str()
    };
    let lower = host.to_ascii_lowercase();
    let name = lower.strip_suffix('.').unwrap_or(&lower);
    if name.is_empty() {
        return None;
    }
    Some(name.to_string())
}

impl fmt::Display for DomainPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            PatternKind::DomainAndSubdomains => write!(f, "{}", self.name),
            PatternKind::SubdomainsOnly => write!(f, "*.{}", self.name),
            PatternKind::Exact if self.name.starts_with('[') || is_ipv4(&self.name) => {
                write!(f, "{}", self.name)
            }
            PatternKind::Exact => write!(f, "={}", self.name),
        }
    }
}

fn is_ipv4(s: &str) -> bool {
    s.parse::<std::net::Ipv4Addr>().is_ok()
}

impl TryFrom<String> for DomainPattern {
    type Error = DomainPatternError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<DomainPattern> for String {
    fn from(value: DomainPattern) -> Self {
        value.to_string()
    }
}

/// A skill's domain lists, edited in the Skills panel and sent with every
/// call to the proxy.
///
/// The decision, in this order:
/// 1. a host matching any `deny` entry is denied (deny wins over allow);
/// 2. when `allow` is not empty, a host matching none of its entries is
///    refused as not allowlisted;
/// 3. everything else is allowed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DomainPolicy {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<DomainPattern>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<DomainPattern>,
}

/// What a [`DomainPolicy`] says about one host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DomainDecision {
    Allowed,
    /// The host matches this denylist entry.
    Denied {
        pattern: DomainPattern,
    },
    /// The allowlist is in use and the host is not on it.
    NotAllowlisted,
}

impl DomainDecision {
    pub fn is_allowed(&self) -> bool {
        match self {
            DomainDecision::Allowed => true,
            DomainDecision::Denied { .. } | DomainDecision::NotAllowlisted => false,
        }
    }

    /// Why `host` was refused, for the person and the model; `None` when
    /// allowed.
    pub fn refusal(&self, skill: &str, host: &str) -> Option<String> {
        match self {
            DomainDecision::Allowed => None,
            DomainDecision::Denied { pattern } => Some(format!(
                "{host} is on {skill}'s denylist (entry '{pattern}'); change the list in the Skills panel to allow it"
            )),
            DomainDecision::NotAllowlisted => Some(format!(
                "{host} is not on {skill}'s allowlist; add it in the Skills panel to allow it"
            )),
        }
    }
}

/// One line that could not be read as a domain pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatternLineError {
    /// 1-based line number.
    pub line: usize,
    pub error: DomainPatternError,
}

impl DomainPolicy {
    /// The decision for `host`; see the type's documentation for the order.
    pub fn decide(&self, host: &str) -> DomainDecision {
        if let Some(pattern) = self.deny.iter().find(|p| p.matches(host)) {
            return DomainDecision::Denied {
                pattern: pattern.clone(),
            };
        }
        if !self.allow.is_empty() && !self.allow.iter().any(|p| p.matches(host)) {
            return DomainDecision::NotAllowlisted;
        }
        DomainDecision::Allowed
    }

    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty()
    }

    /// Reads one pattern per line (blank lines and `#` comments skipped), as
    /// typed into the Skills panel. Every bad line is reported, not only the
    /// first.
    pub fn parse_lines(text: &str) -> Result<Vec<DomainPattern>, Vec<PatternLineError>> {
        let mut patterns = Vec::new();
        let mut errors = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            match DomainPattern::parse(line) {
                Ok(p) => {
                    if !patterns.contains(&p) {
                        patterns.push(p);
                    }
                }
                Err(error) => errors.push(PatternLineError { line: i + 1, error }),
            }
        }
        if errors.is_empty() {
            Ok(patterns)
        } else {
            Err(errors)
        }
    }
}

/// The lines of a list written with international characters, each beside
/// the ASCII (`xn--`) form it is kept and compared in, so the editor can
/// show what `bücher.example` becomes. Lines that do not parse are left to
/// [`DomainPolicy::parse_lines`]'s errors.
pub fn ascii_forms(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(|line| line.split('#').next().unwrap_or("").trim())
        .filter(|line| !line.is_ascii())
        .filter_map(|line| {
            DomainPattern::parse(line)
                .ok()
                .map(|p| (line.to_string(), p.to_string()))
        })
        .collect()
}

/// A skill's domain lists as the person typed them in the Skills panel:
/// one pattern per line, `#` comments allowed. Stored as typed (so comments
/// survive) under [`DomainLists::settings_key`], and read into a
/// [`DomainPolicy`] before every call.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DomainLists {
    #[serde(default)]
    pub allow: String,
    #[serde(default)]
    pub deny: String,
}

/// The bad lines of each list; empty lists mean no errors.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DomainListErrors {
    pub allow: Vec<PatternLineError>,
    pub deny: Vec<PatternLineError>,
}

impl DomainListErrors {
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty()
    }
}

impl DomainLists {
    /// The key of `skill`'s lists in the app's settings store.
    pub fn settings_key(skill: &str) -> String {
        format!("web.domains.{skill}")
    }

    /// Both lists read into a policy; every bad line of either list is
    /// reported.
    pub fn policy(&self) -> Result<DomainPolicy, DomainListErrors> {
        match (
            DomainPolicy::parse_lines(&self.allow),
            DomainPolicy::parse_lines(&self.deny),
        ) {
            (Ok(allow), Ok(deny)) => Ok(DomainPolicy { allow, deny }),
            (allow, deny) => Err(DomainListErrors {
                allow: allow.err().unwrap_or_default(),
                deny: deny.err().unwrap_or_default(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::api::web::FetchRequest;
    use crate::builtin::web::WEB_FETCH;

    fn p(s: &str) -> DomainPattern {
        DomainPattern::parse(s).unwrap()
    }

    #[test]
    fn pattern_parsing() {
        type E = DomainPatternError;
        let cases: Vec<(&str, Result<&str, E>)> = vec![
            ("example.com", Ok("example.com")),
            ("  Example.COM.  ", Ok("example.com")),
            ("*.example.com", Ok("*.example.com")),
            ("=example.com", Ok("=example.com")),
            ("=WWW.Example.com.", Ok("=www.example.com")),
            ("localhost", Ok("localhost")),
            ("xn--bcher-kva.example", Ok("xn--bcher-kva.example")),
            ("_dmarc.example.com", Ok("_dmarc.example.com")),
            ("93.184.215.14", Ok("93.184.215.14")),
            ("=93.184.215.14", Ok("93.184.215.14")),
            ("[2001:DB8::1]", Ok("[2001:db8::1]")),
            ("2001:db8::1", Ok("[2001:db8::1]")),
            ("", Err(E::Empty)),
            ("   ", Err(E::Empty)),
            (
                "https://example.com",
                Err(E::LooksLikeUrl("https://example.com".into())),
            ),
            (
                "example.com/path",
                Err(E::LooksLikeUrl("example.com/path".into())),
            ),
            (
                "user@example.com",
                Err(E::LooksLikeUrl("user@example.com".into())),
            ),
            (
                "example.com:443",
                Err(E::LooksLikeUrl("example.com:443".into())),
            ),
            ("*", Err(E::BadWildcard("*".into()))),
            ("*example.com", Err(E::BadWildcard("*example.com".into()))),
            (
                "a.*.example.com",
                Err(E::BadWildcard("a.*.example.com".into())),
            ),
            (
                "*.*.example.com",
                Err(E::BadWildcard("*.*.example.com".into())),
            ),
            ("*.1.2.3.4", Err(E::BadWildcard("*.1.2.3.4".into()))),
            ("bücher.example", Ok("xn--bcher-kva.example")),
            ("*.BÜCHER.example", Ok("*.xn--bcher-kva.example")),
            ("=münchen.de", Ok("=xn--mnchen-3ya.de")),
            ("例え.テスト", Ok("xn--r8jz45g.xn--zckzah")),
            ("faß.de", Ok("xn--fa-hia.de")),
            ("bücher\u{3002}example", Ok("xn--bcher-kva.example")),
            (
                "ex\u{fffd}mple.com",
                Err(E::BadInternationalName("ex\u{fffd}mple.com".into())),
            ),
            ("exa mple.com", Err(E::BadLabel("exa mple.com".into()))),
            ("example..com", Err(E::BadLabel("example..com".into()))),
            (".example.com", Err(E::BadLabel(".example.com".into()))),
            ("=", Err(E::BadLabel("=".into()))),
        ];
        for (input, expected) in cases {
            let got = DomainPattern::parse(input).map(|p| p.to_string());
            assert_eq!(got, expected.map(str::to_string), "{input:?}");
        }
        let long_label = format!("{}.com", "a".repeat(64));
        assert_eq!(
            DomainPattern::parse(&long_label),
            Err(E::BadLabel(long_label.clone()))
        );
        let long_name = format!("{}a", "a.".repeat(127));
        assert_eq!(
            DomainPattern::parse(&long_name),
            Err(E::TooLong(long_name.clone()))
        );
    }

    #[test]
    fn pattern_matching_table() {
        // (pattern, host, matches)
        let cases = [
            ("example.com", "example.com", true),
            ("example.com", "EXAMPLE.com", true),
            ("example.com", "example.com.", true),
            ("example.com", "www.example.com", true),
            ("example.com", "a.b.example.com", true),
            ("example.com", "notexample.com", false),
            ("example.com", "example.com.evil.net", false),
            ("example.com", "example.co", false),
            ("example.com", "com", false),
            ("example.com", "", false),
            ("*.example.com", "example.com", false),
            ("*.example.com", "www.example.com", true),
            ("*.example.com", "a.b.example.com", true),
            ("*.example.com", "wwwexample.com", false),
            ("=example.com", "example.com", true),
            ("=example.com", "www.example.com", false),
            ("=example.com", "Example.Com.", true),
            ("93.184.215.14", "93.184.215.14", true),
            ("93.184.215.14", "93.184.215.140", false),
            ("93.184.215.14", "1.93.184.215.14", false),
            ("[2001:db8::1]", "[2001:0db8:0:0::1]", true),
            ("[2001:db8::1]", "[2001:db8::2]", false),
            ("com", "example.com", true),
        ];
        for (pattern, host, expected) in cases {
            assert_eq!(p(pattern).matches(host), expected, "{pattern} vs {host:?}");
        }
    }

    #[test]
    fn policy_decisions_table() {
        let policy = |allow: &[&str], deny: &[&str]| DomainPolicy {
            allow: allow.iter().map(|s| p(s)).collect(),
            deny: deny.iter().map(|s| p(s)).collect(),
        };
        let allowed = DomainDecision::Allowed;
        let not_listed = DomainDecision::NotAllowlisted;
        let denied = |s: &str| DomainDecision::Denied { pattern: p(s) };
        // (allow, deny, host, decision)
        let cases: Vec<(&[&str], &[&str], &str, DomainDecision)> = vec![
            (&[], &[], "anything.example", allowed.clone()),
            (&[], &["evil.com"], "evil.com", denied("evil.com")),
            (&[], &["evil.com"], "www.evil.com", denied("evil.com")),
            (&[], &["evil.com"], "notevil.com", allowed.clone()),
            (&[], &["=evil.com"], "cdn.evil.com", allowed.clone()),
            (&["docs.rs"], &[], "docs.rs", allowed.clone()),
            (&["docs.rs"], &[], "crates.io", not_listed.clone()),
            (
                &["*.wikipedia.org"],
                &[],
                "en.wikipedia.org",
                allowed.clone(),
            ),
            (
                &["*.wikipedia.org"],
                &[],
                "wikipedia.org",
                not_listed.clone(),
            ),
            // Deny wins over allow, whichever is more specific.
            (
                &["example.com"],
                &["ads.example.com"],
                "ads.example.com",
                denied("ads.example.com"),
            ),
            (
                &["=ads.example.com"],
                &["example.com"],
                "ads.example.com",
                denied("example.com"),
            ),
            (
                &["example.com"],
                &["ads.example.com"],
                "www.example.com",
                allowed.clone(),
            ),
        ];
        for (allow, deny, host, expected) in cases {
            assert_eq!(
                policy(allow, deny).decide(host),
                expected,
                "allow {allow:?} deny {deny:?} host {host}"
            );
        }
    }

    #[test]
    fn refusals_name_the_entry_and_the_fix() {
        let d = DomainDecision::Denied {
            pattern: p("*.evil.com"),
        };
        assert_eq!(
            d.refusal(WEB_FETCH, "x.evil.com").unwrap(),
            "x.evil.com is on web_fetch's denylist (entry '*.evil.com'); change the list in the Skills panel to allow it"
        );
        assert_eq!(DomainDecision::Allowed.refusal(WEB_FETCH, "a"), None);
    }

    #[test]
    fn lines_parse_with_every_error_reported() {
        assert_eq!(
            DomainPolicy::parse_lines(
                "example.com\n\n# comment\n*.docs.rs # trailing\nexample.com\n"
            ),
            Ok(vec![p("example.com"), p("*.docs.rs")])
        );
        assert_eq!(
            DomainPolicy::parse_lines("ok.com\nhttp://x\nbad..com"),
            Err(vec![
                PatternLineError {
                    line: 2,
                    error: DomainPatternError::LooksLikeUrl("http://x".into())
                },
                PatternLineError {
                    line: 3,
                    error: DomainPatternError::BadLabel("bad..com".into())
                },
            ])
        );
    }

    #[test]
    fn policy_serde_round_trips_as_strings() {
        let policy = DomainPolicy {
            allow: vec![p("example.com"), p("=a.b.c")],
            deny: vec![p("*.ads.example.com")],
        };
        let v = serde_json::to_value(&policy).unwrap();
        assert_eq!(
            v,
            json!({"allow": ["example.com", "=a.b.c"], "deny": ["*.ads.example.com"]})
        );
        assert_eq!(serde_json::from_value::<DomainPolicy>(v).unwrap(), policy);
        let bad = serde_json::from_value::<DomainPolicy>(json!({"allow": ["http://x"]}));
        assert!(bad.unwrap_err().to_string().contains("not a URL"));
        let empty: FetchRequest = serde_json::from_value(json!({"url": "https://e.com"})).unwrap();
        assert_eq!(empty.domains, DomainPolicy::default());
    }

    #[test]
    fn domain_lists_read_both_lists_and_report_each_bad_line() {
        let lists = DomainLists {
            allow: "# docs only\ndocs.rs\n*.rust-lang.org".into(),
            deny: "ads.docs.rs".into(),
        };
        assert_eq!(
            lists.policy(),
            Ok(DomainPolicy {
                allow: vec![p("docs.rs"), p("*.rust-lang.org")],
                deny: vec![p("ads.docs.rs")],
            })
        );
        assert_eq!(DomainLists::default().policy(), Ok(DomainPolicy::default()));
        let bad = DomainLists {
            allow: "ok.com\nhttps://x.com".into(),
            deny: "*\nfine.org\nbad..org".into(),
        };
        assert_eq!(
            bad.policy(),
            Err(DomainListErrors {
                allow: vec![PatternLineError {
                    line: 2,
                    error: DomainPatternError::LooksLikeUrl("https://x.com".into())
                }],
                deny: vec![
                    PatternLineError {
                        line: 1,
                        error: DomainPatternError::BadWildcard("*".into())
                    },
                    PatternLineError {
                        line: 3,
                        error: DomainPatternError::BadLabel("bad..org".into())
                    },
                ],
            })
        );
        assert_eq!(
            DomainLists::settings_key(WEB_FETCH),
            "web.domains.web_fetch"
        );
        // Stored as typed, comments included.
        assert_eq!(
            serde_json::to_value(&lists).unwrap(),
            json!({"allow": "# docs only\ndocs.rs\n*.rust-lang.org", "deny": "ads.docs.rs"})
        );
        assert_eq!(
            serde_json::from_value::<DomainLists>(json!({"deny": "x.com"})).unwrap(),
            DomainLists {
                allow: String::new(),
                deny: "x.com".into()
            }
        );
    }

    #[test]
    fn internationalised_names_match_the_hosts_urls_carry() {
        let policy = DomainLists {
            allow: "bücher.example\n=münchen.de\n".into(),
            deny: "*.shop.bücher.example".into(),
        }
        .policy()
        .unwrap();
        // (host as it reaches the policy, decision)
        let cases = [
            ("xn--bcher-kva.example", true),
            ("www.xn--bcher-kva.example", true),
            ("BÜCHER.example", true),
            ("a.shop.xn--bcher-kva.example", false),
            ("xn--mnchen-3ya.de", true),
            ("www.xn--mnchen-3ya.de", false),
            ("bucher.example", false),
        ];
        for (host, allowed) in cases {
            assert_eq!(policy.decide(host).is_allowed(), allowed, "{host}");
        }
        assert_eq!(
            serde_json::to_value(&policy).unwrap(),
            json!({"allow": ["xn--bcher-kva.example", "=xn--mnchen-3ya.de"], "deny": ["*.shop.xn--bcher-kva.example"]})
        );
        assert_eq!(
            ascii_forms(
                "# shops\nbücher.example # books\nexample.com\nb\u{fffd}d.example\n=münchen.de"
            ),
            vec![
                (
                    "bücher.example".to_string(),
                    "xn--bcher-kva.example".to_string()
                ),
                ("=münchen.de".to_string(), "=xn--mnchen-3ya.de".to_string()),
            ]
        );
    }
}
