//! The contract between the app and `hearth serve`, one type for both
//! sides: the header that carries the app's key and the launch link that
//! hands it over (here), what `GET /api/session` answers ([`session`]),
//! the web skills' requests and answers ([`web`]) with the domain lists the
//! proxy enforces on them ([`domains`]), and the error body every route
//! answers with ([`error`]). The proxy serialises these and the app reads
//! them, so the two cannot drift apart.

pub mod domains;
pub mod error;
pub mod session;
pub mod web;

/// The header every call to the proxy's API carries the key in. A custom
/// header (not `Authorization`), so the relay can forward a caller's own
/// `Authorization`, and so a cross-origin page setting it must be
/// preflighted, which is refused.
pub const TOKEN_HEADER: &str = "x-hearth-token";

/// The parameter of the launch link's fragment that holds the key:
/// `http://127.0.0.1:8080/#token=…`.
pub const LAUNCH_PARAM: &str = "token";

/// The launch link `hearth serve` prints for the app at `origin`.
pub fn launch_url(origin: &str, token: &str) -> String {
    format!("{}/#{LAUNCH_PARAM}={token}", origin.trim_end_matches('/'))
}

/// The key's length: 32 random bytes in unpadded base64url, as `hearth
/// serve` makes it.
pub const KEY_LEN: usize = 43;

/// Whether `s` has the shape of a key `hearth serve` makes.
pub fn is_key_shaped(s: &str) -> bool {
    s.len() == KEY_LEN
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// An address's fragment split into what the app routes on and the key it
/// carries, if any. Only the launch link's exact shape carries a key: the
/// whole fragment is `#token=` and a key-shaped value. A `token`
/// parameter anywhere else (`#/settings?token=…`, a key of the wrong
/// shape, a second parameter beside it) is taken out of the address but
/// never kept: any page can send the browser to such an address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchFragment {
    /// The fragment without the key, `#` included (empty when nothing is
    /// left).
    pub rest: String,
    pub token: Option<String>,
}

/// Reads the key out of a fragment (`location.hash`, with or without `#`).
pub fn launch_fragment(hash: &str) -> LaunchFragment {
    let body = hash.strip_prefix('#').unwrap_or(hash);
    let (route, query) = match body.split_once('?') {
        Some((route, query)) => (route, query),
        None if body.contains('=') && !body.starts_with('/') => ("", body),
        None => (body, ""),
    };
    let mut token = None;
    let mut kept = Vec::new();
    for part in query.split('&').filter(|p| !p.is_empty()) {
        match part.split_once('=') {
            Some((LAUNCH_PARAM, _)) => {}
            Some(_) | None => kept.push(part),
        }
    }
    if let Some((LAUNCH_PARAM, value)) = body.split_once('=')
        && is_key_shaped(value)
    {
        token = Some(value.to_string());
    }
    let mut rest = route.to_string();
    if !kept.is_empty() {
        rest.push('?');
        rest.push_str(&kept.join("&"));
    }
    LaunchFragment {
        rest: if rest.is_empty() {
            String::new()
        } else {
            format!("#{rest}")
        },
        token,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_read_only_from_the_launch_links_shape() {
        let key = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ_-01234";
        assert!(is_key_shaped(key));
        let other = "ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ";
        let cases: Vec<(String, &str, Option<&str>)> = vec![
            (format!("#token={key}"), "", Some(key)),
            (format!("token={key}"), "", Some(key)),
            // Anything else any page could send the browser to: the
            // parameter leaves the address, the key is not kept.
            (format!("#/settings?token={key}"), "#/settings", None),
            (
                format!("#/chat/c1?x=1&token={other}&y=2"),
                "#/chat/c1?x=1&y=2",
                None,
            ),
            (format!("#token={key}&token={other}"), "", None),
            (format!("#token={key}&x=1"), "#?x=1", None),
            ("#token=abc_DEF-123".to_string(), "", None),
            (format!("#token={key}A"), "", None),
            (format!("#token={}", &key[..42]), "", None),
            (format!("#token={}!", &key[..42]), "", None),
            ("#/chat".to_string(), "#/chat", None),
            (String::new(), "", None),
            ("#".to_string(), "", None),
            ("#token=".to_string(), "", None),
            (
                "#/skills?tokens=abc".to_string(),
                "#/skills?tokens=abc",
                None,
            ),
        ];
        for (hash, rest, token) in cases {
            assert_eq!(
                launch_fragment(&hash),
                LaunchFragment {
                    rest: rest.to_string(),
                    token: token.map(str::to_string)
                },
                "{hash}"
            );
        }
        assert_eq!(
            launch_url("http://127.0.0.1:8080/", "k"),
            "http://127.0.0.1:8080/#token=k"
        );
        let link = launch_url("http://127.0.0.1:8080", key);
        let (_, fragment) = link.split_once('#').unwrap();
        assert_eq!(launch_fragment(fragment).token, Some(key.into()));
    }
}
