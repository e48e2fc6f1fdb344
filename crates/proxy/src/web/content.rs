//! From a response body to a readable document: which content types are
//! read, how their bytes are decoded to text, and the HTML, JSON and text
//! conversions. Pure: bytes and headers in, document or refusal out.

use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE};
use hearth_core::api::web::{DocumentKind, Link};
use url::Url;

use super::reader;
use crate::client::FetchError;

/// A body read as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Document {
    pub kind: DocumentKind,
    /// The declared media type without parameters (or what sniffing found).
    pub content_type: String,
    pub charset: String,
    pub lossy: bool,
    pub title: Option<String>,
    pub content: String,
    pub links: Vec<Link>,
}

/// `text/html; charset="utf-8"` → (`text/html`, `Some("utf-8")`).
pub fn parse_content_type(value: &str) -> (String, Option<String>) {
    let mut parts = value.split(';');
    let essence = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let charset = parts.find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches(['"', '\'']).to_string())
            .filter(|v| !v.is_empty())
    });
    (essence, charset)
}

/// Which kind a media type is read as; `None` when it is not read at all.
pub fn kind_of(essence: &str) -> Option<DocumentKind> {
    match essence {
        "text/html" | "application/xhtml+xml" => Some(DocumentKind::Html),
        "application/json" | "text/json" => Some(DocumentKind::Json),
        e if e.starts_with("application/") && e.ends_with("+json") => Some(DocumentKind::Json),
        "text/plain" | "text/markdown" | "text/x-markdown" | "text/csv" => Some(DocumentKind::Text),
        _ => None,
    }
}

/// Guesses the kind of an unlabelled body from its first bytes.
fn sniff(body: &[u8]) -> Option<(DocumentKind, &'static str)> {
    let head = &body[..body.len().min(1024)];
    if head.contains(&0) {
        return None;
    }
    let start = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(head.len());
    let lower: Vec<u8> = head[start..]
        .iter()
        .take(16)
        .map(u8::to_ascii_lowercase)
        .collect();
    let html_starts: [&[u8]; 5] = [b"<!doctype html", b"<html", b"<head", b"<body", b"<!--"];
    if html_starts.iter().any(|p| lower.starts_with(p)) {
        return Some((DocumentKind::Html, "text/html"));
    }
    if (lower.starts_with(b"{") || lower.starts_with(b"["))
        && serde_json::from_slice::<serde_json::Value>(body).is_ok()
    {
        return Some((DocumentKind::Json, "application/json"));
    }
    std::str::from_utf8(head)
        .is_ok()
        .then_some((DocumentKind::Text, "text/plain"))
}

/// The `<meta charset>` of an HTML document, from its first 1024 bytes.
fn meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    let head: Vec<u8> = body[..body.len().min(1024)]
        .iter()
        .map(u8::to_ascii_lowercase)
        .collect();
    let mut i = 0;
    while let Some(pos) = find(&head[i..], b"<meta") {
        let tag_start = i + pos;
        let tag_end = find(&head[tag_start..], b">")
            .map(|p| tag_start + p)
            .unwrap_or(head.len());
        let tag = &head[tag_start..tag_end];
        if let Some(cs) = find(tag, b"charset=") {
            let value: Vec<u8> = tag[cs + 8..]
                .iter()
                .copied()
                .skip_while(|b| *b == b'"' || *b == b'\'' || *b == b' ')
                .take_while(|b| !matches!(b, b'"' | b'\'' | b' ' | b';' | b'/' | b'>'))
                .collect();
            if let Some(enc) = Encoding::for_label(&value) {
                // A page cannot really be UTF-16 if its ASCII meta was readable.
                return Some(if enc == UTF_16LE || enc == UTF_16BE {
                    UTF_8
                } else {
                    enc
                });
            }
        }
        i = tag_end;
    }
    None
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Decodes `body`: a byte-order mark wins, then the declared charset, then
/// (for HTML) `<meta charset>`, then UTF-8. Bytes invalid in the chosen
/// encoding become U+FFFD, and `lossy` says so.
pub fn decode_text(
    body: &[u8],
    declared: Option<&str>,
    kind: DocumentKind,
) -> (String, &'static str, bool) {
    let declared_enc = declared.and_then(|l| Encoding::for_label(l.as_bytes()));
    let encoding = match Encoding::for_bom(body) {
        Some((enc, _)) => enc,
        None => match (declared_enc, kind) {
            (Some(enc), _) => enc,
            (None, DocumentKind::Html) => meta_charset(body).unwrap_or(UTF_8),
            (None, DocumentKind::Json | DocumentKind::Text) => UTF_8,
        },
    };
    let (text, used, had_errors) = encoding.decode(body);
    (text.into_owned(), used.name(), had_errors)
}

/// Reads `body`, served as `content_type` from `url`, as a document.
pub fn read_document(
    url: &Url,
    content_type: Option<&str>,
    body: &[u8],
) -> Result<Document, FetchError> {
    let (essence, charset) = match content_type {
        Some(ct) if !ct.trim().is_empty() => parse_content_type(ct),
        Some(_) | None => (String::new(), None),
    };
    let (kind, essence) = if essence.is_empty() {
        match sniff(body) {
            Some((kind, guessed)) => (kind, guessed.to_string()),
            None => {
                return Err(FetchError::UnsupportedContentType(
                    "unlabelled binary".into(),
                ));
            }
        }
    } else {
        match kind_of(&essence) {
            Some(kind) => (kind, essence),
            None => return Err(FetchError::UnsupportedContentType(essence)),
        }
    };
    if kind == DocumentKind::Text && body[..body.len().min(1024)].contains(&0) {
        return Err(FetchError::UnsupportedContentType(format!(
            "binary data labelled {essence}"
        )));
    }
    let (text, used, lossy) = decode_text(body, charset.as_deref(), kind);
    let (title, content, links) = match kind {
        DocumentKind::Html => {
            let c = reader::to_markdown(&text, url);
            (c.title, c.markdown, c.links)
        }
        DocumentKind::Json => {
            let value: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| FetchError::InvalidJson(e.to_string()))?;
            let pretty = serde_json::to_string_pretty(&value)
                .map_err(|e| FetchError::InvalidJson(e.to_string()))?;
            (None, pretty, Vec::new())
        }
        DocumentKind::Text => (None, text, Vec::new()),
    };
    Ok(Document {
        kind,
        content_type: essence,
        charset: used.to_string(),
        lossy,
        title,
        content,
        links,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url() -> Url {
        Url::parse("https://example.com/").unwrap()
    }

    #[test]
    fn content_types_table() {
        let cases = [
            ("text/html; charset=UTF-8", Some(DocumentKind::Html)),
            ("application/xhtml+xml", Some(DocumentKind::Html)),
            ("application/json", Some(DocumentKind::Json)),
            ("application/problem+json", Some(DocumentKind::Json)),
            ("text/plain", Some(DocumentKind::Text)),
            ("TEXT/Markdown", Some(DocumentKind::Text)),
            ("text/csv", Some(DocumentKind::Text)),
            ("application/pdf", None),
            ("image/png", None),
            ("application/octet-stream", None),
            ("application/javascript", None),
            ("text/xml", None),
        ];
        for (ct, expected) in cases {
            assert_eq!(kind_of(&parse_content_type(ct).0), expected, "{ct}");
        }
        assert_eq!(
            parse_content_type("text/html; Charset=\"ISO-8859-1\"; x=y"),
            ("text/html".to_string(), Some("ISO-8859-1".to_string()))
        );
    }

    #[test]
    fn charsets_bom_declared_meta_default() {
        // (body, declared, kind) -> (text, encoding, lossy)
        let latin1 = b"caf\xe9";
        type Case<'a> = (
            &'a [u8],
            Option<&'a str>,
            DocumentKind,
            (&'a str, &'a str, bool),
        );
        let cases: Vec<Case> = vec![
            (
                b"caf\xc3\xa9",
                None,
                DocumentKind::Text,
                ("café", "UTF-8", false),
            ),
            (
                latin1,
                Some("iso-8859-1"),
                DocumentKind::Text,
                ("café", "windows-1252", false),
            ),
            (
                latin1,
                None,
                DocumentKind::Text,
                ("caf\u{fffd}", "UTF-8", true),
            ),
            (
                b"\xef\xbb\xbfhi",
                Some("iso-8859-1"),
                DocumentKind::Text,
                ("hi", "UTF-8", false),
            ),
            (
                b"\xff\xfeh\x00i\x00",
                None,
                DocumentKind::Text,
                ("hi", "UTF-16LE", false),
            ),
            (
                b"<meta charset=\"windows-1251\"><p>\xcf\xf0\xe8",
                None,
                DocumentKind::Html,
                (
                    "<meta charset=\"windows-1251\"><p>При",
                    "windows-1251",
                    false,
                ),
            ),
            (
                b"<meta http-equiv=Content-Type content='text/html; charset=shift_jis'>\x93\xfa",
                None,
                DocumentKind::Html,
                (
                    "<meta http-equiv=Content-Type content='text/html; charset=shift_jis'>日",
                    "Shift_JIS",
                    false,
                ),
            ),
            (
                b"x",
                Some("no-such-charset"),
                DocumentKind::Text,
                ("x", "UTF-8", false),
            ),
        ];
        for (body, declared, kind, (text, enc, lossy)) in cases {
            let got = decode_text(body, declared, kind);
            assert_eq!(got, (text.to_string(), enc, lossy), "{body:?}");
        }
    }

    #[test]
    fn documents_of_each_kind() {
        let html = read_document(
            &url(),
            Some("text/html"),
            b"<title>Hi</title><h1>Head</h1><p><a href='/a'>A</a></p>",
        )
        .unwrap();
        assert_eq!(
            html,
            Document {
                kind: DocumentKind::Html,
                content_type: "text/html".into(),
                charset: "UTF-8".into(),
                lossy: false,
                title: Some("Hi".into()),
                content: "## Head\n\n[A](https://example.com/a)".into(),
                links: vec![Link {
                    text: "A".into(),
                    url: "https://example.com/a".into()
                }],
            }
        );
        let json = read_document(&url(), Some("application/json"), br#"{"a":[1,2]}"#).unwrap();
        assert_eq!(json.content, "{\n  \"a\": [\n    1,\n    2\n  ]\n}");
        assert_eq!(json.kind, DocumentKind::Json);
        let text = read_document(&url(), Some("text/plain; charset=utf-8"), b"plain\n").unwrap();
        assert_eq!(
            (text.kind, text.content.as_str()),
            (DocumentKind::Text, "plain\n")
        );
    }

    #[test]
    fn refusals_say_what_was_refused() {
        let cases: Vec<(Option<&str>, &[u8], &str)> = vec![
            (
                Some("application/pdf"),
                b"%PDF-1.7",
                "application/pdf content is not supported; web_fetch reads HTML, JSON and plain text",
            ),
            (
                Some("image/png"),
                b"\x89PNG",
                "image/png content is not supported; web_fetch reads HTML, JSON and plain text",
            ),
            (
                None,
                b"\x00\x01\x02binary",
                "unlabelled binary content is not supported; web_fetch reads HTML, JSON and plain text",
            ),
            (
                Some("text/plain"),
                b"ab\x00cd",
                "binary data labelled text/plain content is not supported; web_fetch reads HTML, JSON and plain text",
            ),
            (
                Some("application/json"),
                b"{not json",
                "the server sent invalid JSON: key must be a string at line 1 column 2",
            ),
        ];
        for (ct, body, message) in cases {
            let err = read_document(&url(), ct, body).unwrap_err();
            assert_eq!(err.to_string(), message, "{ct:?}");
        }
    }

    #[test]
    fn unlabelled_bodies_are_sniffed() {
        let cases: Vec<(&[u8], DocumentKind, &str)> = vec![
            (b"  <!DOCTYPE html><p>x", DocumentKind::Html, "text/html"),
            (b"{\"a\": 1}", DocumentKind::Json, "application/json"),
            (b"{not json", DocumentKind::Text, "text/plain"),
            (b"just words", DocumentKind::Text, "text/plain"),
        ];
        for (body, kind, ct) in cases {
            let d = read_document(&url(), None, body).unwrap();
            assert_eq!((d.kind, d.content_type.as_str()), (kind, ct), "{body:?}");
        }
    }
}
