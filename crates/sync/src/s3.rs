//! The S3 API, sans I/O: requests to build and sign (Signature Version 4)
//! and responses to read. The app hands the requests to `fetch`, straight
//! to the person's bucket, so sync needs no server of ours; tests hand
//! them to a real SeaweedFS.
//!
//! Only what sync uses: put (plain, or only if absent, or only if
//! unchanged), get, delete, list a prefix, and set the bucket's CORS rule.

use sha2::{Digest, Sha256};

use crate::hex;
use crate::primitives::hmac;

/// Where the bucket is. `endpoint` is the store's base URL, such as
/// `https://s3.us-east-1.amazonaws.com`, `https://<account>.r2.cloudflarestorage.com`
/// or `http://127.0.0.1:8333`; the bucket goes in the path, which every
/// S3-compatible store accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bucket {
    pub endpoint: String,
    pub region: String,
    pub name: String,
}

#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub access_key_id: String,
    pub secret_access_key: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Credentials({}, …)", self.access_key_id)
    }
}

/// How a put may land.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Put {
    /// Whatever is there is replaced.
    Always,
    /// Only where nothing is yet (`If-None-Match: *`): two devices never
    /// overwrite each other's object.
    IfAbsent,
    /// Only over the version with this ETag (`If-Match`).
    IfUnchanged(String),
}

/// An object as the store returned it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fetched {
    pub body: Vec<u8>,
    pub etag: String,
}

/// A request ready for `fetch`: the URL, the method, and the headers,
/// signed. The `host` header is signed but not listed, since browsers set
/// it themselves and refuse a page that tries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub method: &'static str,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// Why the store refused, in words a person can act on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    #[error("the store does not know this access key: check it in Settings → Sync")]
    UnknownAccessKey,
    #[error("the store refused the signature: check the secret key and the region")]
    BadSignature,
    #[error("the access key may not do this in bucket {0}: give it read, write, list and delete")]
    Denied(String),
    #[error("there is no bucket named {0} at this endpoint")]
    NoSuchBucket(String),
    #[error("another device wrote this object first")]
    Conflict,
    #[error("no such object")]
    NotFound,
    #[error(
        "the store did not answer ({0}): check the endpoint, and whether this device is online"
    )]
    Unreachable(String),
    #[error("the store answered {status}: {code} {message}")]
    Other {
        status: u16,
        code: String,
        message: String,
    },
}

const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// Percent-encodes every byte but RFC 3986's unreserved ones; `/` too
/// unless `keep_slash`.
fn encode(s: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b'/' if keep_slash => out.push('/'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The host (with a port that is not the scheme's default) and the path
/// prefix of an endpoint URL.
fn split_endpoint(endpoint: &str) -> (String, String, String) {
    let (scheme, rest) = endpoint.split_once("://").unwrap_or(("https", endpoint));
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    let host = match (scheme, authority.rsplit_once(':')) {
        ("https", Some((h, "443"))) | ("http", Some((h, "80"))) => h.to_string(),
        _ => authority.to_string(),
    };
    (scheme.to_string(), host, path.to_string())
}

/// The date parts SigV4 wants from a Unix time: `YYYYMMDD` and
/// `YYYYMMDDTHHMMSSZ`.
pub fn amz_date(unix_secs: u64) -> (String, String) {
    let days = (unix_secs / 86_400) as i64;
    let secs = unix_secs % 86_400;
    // Howard Hinnant's civil-from-days, for the proleptic Gregorian calendar.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let date = format!("{y:04}{m:02}{d:02}");
    let stamp = format!(
        "{date}T{:02}{:02}{:02}Z",
        secs / 3_600,
        secs / 60 % 60,
        secs % 60
    );
    (date, stamp)
}

/// One request before signing: the path below the endpoint, the query,
/// the headers to sign besides `host` and the `x-amz-*` pair.
struct Unsigned {
    method: &'static str,
    path: String,
    query: Vec<(String, String)>,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// The canonical request and the signed-header list, per SigV4.
fn canonical(
    method: &str,
    path: &str,
    query: &[(String, String)],
    headers: &[(String, String)],
    payload_hash: &str,
) -> (String, String) {
    let mut q: Vec<(String, String)> = query
        .iter()
        .map(|(k, v)| (encode(k, false), encode(v, false)))
        .collect();
    q.sort();
    let query = q
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");
    let mut h: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| {
            (
                k.to_ascii_lowercase(),
                v.split_whitespace().collect::<Vec<_>>().join(" "),
            )
        })
        .collect();
    h.sort();
    let signed = h
        .iter()
        .map(|(k, _)| k.as_str())
        .collect::<Vec<_>>()
        .join(";");
    let lines: String = h.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
    (
        format!(
            "{method}\n{}\n{query}\n{lines}\n{signed}\n{payload_hash}",
            encode(path, true)
        ),
        signed,
    )
}

fn signature(secret: &str, date: &str, region: &str, string_to_sign: &str) -> String {
    let k = hmac(format!("AWS4{secret}").as_bytes(), date.as_bytes());
    let k = hmac(&k, region.as_bytes());
    let k = hmac(&k, b"s3");
    let k = hmac(&k, b"aws4_request");
    hex(&hmac(&k, string_to_sign.as_bytes()))
}

/// The `Authorization` header for a request, from its canonical form
/// (`canonical`, whose headers include `host` and `x-amz-date`).
fn authorization(
    creds: &Credentials,
    region: &str,
    stamp: (&str, &str),
    (canonical, signed): (String, String),
) -> String {
    let (date, amz) = stamp;
    let scope = format!("{date}/{region}/s3/aws4_request");
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz}\n{scope}\n{}",
        hex(&Sha256::digest(canonical.as_bytes()))
    );
    format!(
        "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed}, Signature={}",
        creds.access_key_id,
        signature(&creds.secret_access_key, date, region, &to_sign)
    )
}

impl Bucket {
    fn sign(&self, creds: &Credentials, unix_secs: u64, req: Unsigned) -> Request {
        let (scheme, host, prefix) = split_endpoint(&self.endpoint);
        let (date, amz) = amz_date(unix_secs);
        let payload_hash = if req.body.is_empty() {
            EMPTY_SHA256.to_string()
        } else {
            hex(&Sha256::digest(&req.body))
        };
        let path = format!("{prefix}{}", req.path);
        let mut headers = req.headers;
        headers.push(("x-amz-content-sha256".into(), payload_hash.clone()));
        headers.push(("x-amz-date".into(), amz.clone()));
        let mut to_sign = headers.clone();
        to_sign.push(("host".into(), host.clone()));
        let auth = authorization(
            creds,
            &self.region,
            (&date, &amz),
            canonical(req.method, &path, &req.query, &to_sign, &payload_hash),
        );
        headers.push(("authorization".into(), auth));
        let mut url = format!("{scheme}://{host}{}", encode(&path, true));
        if !req.query.is_empty() {
            let q: Vec<String> = req
                .query
                .iter()
                .map(|(k, v)| format!("{}={}", encode(k, false), encode(v, false)))
                .collect();
            url.push('?');
            url.push_str(&q.join("&"));
        }
        Request {
            method: req.method,
            url,
            headers,
            body: req.body,
        }
    }

    fn object_path(&self, key: &str) -> String {
        format!("/{}/{key}", self.name)
    }

    pub fn put(
        &self,
        creds: &Credentials,
        unix_secs: u64,
        key: &str,
        body: Vec<u8>,
        mode: Put,
    ) -> Request {
        let mut headers = vec![(
            "content-type".to_string(),
            "application/octet-stream".to_string(),
        )];
        match mode {
            Put::Always => {}
            Put::IfAbsent => headers.push(("if-none-match".into(), "*".into())),
            Put::IfUnchanged(etag) => headers.push(("if-match".into(), etag)),
        }
        let req = Unsigned {
            method: "PUT",
            path: self.object_path(key),
            query: vec![],
            headers,
            body,
        };
        self.sign(creds, unix_secs, req)
    }

    pub fn get(&self, creds: &Credentials, unix_secs: u64, key: &str) -> Request {
        let req = Unsigned {
            method: "GET",
            path: self.object_path(key),
            query: vec![],
            headers: vec![],
            body: vec![],
        };
        self.sign(creds, unix_secs, req)
    }

    pub fn delete(&self, creds: &Credentials, unix_secs: u64, key: &str) -> Request {
        let req = Unsigned {
            method: "DELETE",
            path: self.object_path(key),
            query: vec![],
            headers: vec![],
            body: vec![],
        };
        self.sign(creds, unix_secs, req)
    }

    /// One page of the keys under `prefix` (ListObjectsV2), after the page
    /// whose `next` token is `after`.
    pub fn list(
        &self,
        creds: &Credentials,
        unix_secs: u64,
        prefix: &str,
        after: Option<&str>,
    ) -> Request {
        let mut query = vec![
            ("list-type".to_string(), "2".to_string()),
            ("prefix".to_string(), prefix.to_string()),
        ];
        if let Some(token) = after {
            query.push(("continuation-token".into(), token.into()));
        }
        let req = Unsigned {
            method: "GET",
            path: format!("/{}", self.name),
            query,
            headers: vec![],
            body: vec![],
        };
        self.sign(creds, unix_secs, req)
    }

    /// Creates the bucket (for tests and `hearth` setup helpers; people
    /// usually make theirs in the store's console).
    pub fn create(&self, creds: &Credentials, unix_secs: u64) -> Request {
        let req = Unsigned {
            method: "PUT",
            path: format!("/{}", self.name),
            query: vec![],
            headers: vec![],
            body: vec![],
        };
        self.sign(creds, unix_secs, req)
    }

    /// The CORS rule sync needs: the app's origin may get, put, delete and
    /// list, with any header, and may read the ETag.
    pub fn put_cors(&self, creds: &Credentials, unix_secs: u64, origins: &[&str]) -> Request {
        let origins: String = origins
            .iter()
            .map(|o| format!("<AllowedOrigin>{}</AllowedOrigin>", xml_escape(o)))
            .collect();
        let body = format!(
            "<CORSConfiguration><CORSRule>{origins}<AllowedMethod>GET</AllowedMethod><AllowedMethod>PUT</AllowedMethod>\
             <AllowedMethod>DELETE</AllowedMethod><AllowedMethod>HEAD</AllowedMethod><AllowedHeader>*</AllowedHeader>\
             <ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>3600</MaxAgeSeconds></CORSRule></CORSConfiguration>"
        )
        .into_bytes();
        let md5 = content_md5(&body);
        let req = Unsigned {
            method: "PUT",
            path: format!("/{}", self.name),
            query: vec![("cors".into(), String::new())],
            headers: vec![
                ("content-md5".into(), md5),
                ("content-type".into(), "application/xml".into()),
            ],
            body,
        };
        self.sign(creds, unix_secs, req)
    }

    /// A get's answer: the object, `None` when there is none, or why not.
    pub fn got(
        &self,
        status: u16,
        etag: String,
        body: Vec<u8>,
    ) -> Result<Option<Fetched>, StoreError> {
        if status == 200 {
            return Ok(Some(Fetched { body, etag }));
        }
        match self.error(status, &body) {
            StoreError::NotFound => Ok(None),
            e => Err(e),
        }
    }

    /// A put's answer: the new version's ETag, or why it did not land.
    pub fn stored(&self, status: u16, etag: String, body: &[u8]) -> Result<String, StoreError> {
        if status == 200 {
            return Ok(etag);
        }
        Err(self.error(status, body))
    }

    /// A delete's answer; an object already gone counts as deleted.
    pub fn deleted(&self, status: u16, body: &[u8]) -> Result<(), StoreError> {
        match status {
            200..=299 => Ok(()),
            _ => match self.error(status, body) {
                StoreError::NotFound => Ok(()),
                e => Err(e),
            },
        }
    }

    /// What a failed response means, from its status and XML body.
    pub fn error(&self, status: u16, body: &[u8]) -> StoreError {
        let text = String::from_utf8_lossy(body);
        let code = tag(&text, "Code").unwrap_or_default();
        let message = tag(&text, "Message").unwrap_or_default();
        match (status, code.as_str()) {
            (412, _) | (_, "PreconditionFailed") => StoreError::Conflict,
            (_, "InvalidAccessKeyId") => StoreError::UnknownAccessKey,
            (_, "SignatureDoesNotMatch") | (_, "AuthorizationHeaderMalformed") => {
                StoreError::BadSignature
            }
            (_, "NoSuchBucket") => StoreError::NoSuchBucket(self.name.clone()),
            (_, "AccessDenied") => StoreError::Denied(self.name.clone()),
            (404, _) | (_, "NoSuchKey") => StoreError::NotFound,
            _ => StoreError::Other {
                status,
                code,
                message,
            },
        }
    }
}

/// MD5 is what S3 demands for a CORS body's `Content-MD5`; it guards the
/// body in transit and nothing else.
fn content_md5(body: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(md5::Md5::digest(body))
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn xml_unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The `Code` of an S3 error body, such as `BucketAlreadyOwnedByYou`.
pub fn error_code(body: &[u8]) -> Option<String> {
    tag(&String::from_utf8_lossy(body), "Code")
}

/// The text of the first `<name>…</name>` in `xml`.
fn tag(xml: &str, name: &str) -> Option<String> {
    let open = format!("<{name}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&format!("</{name}>"))? + start;
    Some(xml_unescape(&xml[start..end]))
}

/// One object in a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    pub key: String,
    pub size: u64,
    pub etag: String,
}

/// One page of a listing, and the token for the next page if there is one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListPage {
    pub objects: Vec<Listed>,
    pub next: Option<String>,
}

/// Reads a ListObjectsV2 answer.
pub fn parse_list(body: &[u8]) -> Result<ListPage, String> {
    let xml = std::str::from_utf8(body).map_err(|_| "the listing is not UTF-8".to_string())?;
    if !xml.contains("<ListBucketResult") {
        return Err("the store's answer is not a listing".into());
    }
    let mut page = ListPage::default();
    let mut rest = xml;
    while let Some(i) = rest.find("<Contents>") {
        let end = rest[i..]
            .find("</Contents>")
            .ok_or("a listing entry is cut short")?
            + i;
        let entry = &rest[i..end];
        let key = tag(entry, "Key").ok_or("a listing entry has no key")?;
        let size = tag(entry, "Size").and_then(|s| s.parse().ok()).unwrap_or(0);
        let etag = tag(entry, "ETag").unwrap_or_default();
        page.objects.push(Listed { key, size, etag });
        rest = &rest[end..];
    }
    if tag(xml, "IsTruncated").as_deref() == Some("true") {
        page.next = Some(
            tag(xml, "NextContinuationToken")
                .ok_or("a truncated listing has no continuation token")?,
        );
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The examples of AWS's "Signature Calculations for the Authorization
    // Header: Transferring Payload in a Single Chunk" (S3 API reference),
    // with the credentials AWS publishes for them.
    fn aws() -> Credentials {
        Credentials {
            access_key_id: "AKIAIOSFODNN7EXAMPLE".into(),
            secret_access_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
        }
    }
    const HOST: &str = "examplebucket.s3.amazonaws.com";
    const STAMP: (&str, &str) = ("20130524", "20130524T000000Z");

    fn doc(
        method: &str,
        path: &str,
        query: &[(&str, &str)],
        extra: &[(&str, &str)],
        payload: &str,
    ) -> String {
        let mut headers: Vec<(String, String)> = extra
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        headers.push(("Host".into(), HOST.into()));
        headers.push(("x-amz-content-sha256".into(), payload.into()));
        headers.push(("x-amz-date".into(), STAMP.1.into()));
        let query: Vec<(String, String)> = query
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let auth = authorization(
            &aws(),
            "us-east-1",
            STAMP,
            canonical(method, path, &query, &headers, payload),
        );
        auth.rsplit("Signature=").next().unwrap().to_string()
    }

    #[test]
    fn sigv4_matches_the_get_object_example() {
        assert_eq!(
            doc(
                "GET",
                "/test.txt",
                &[],
                &[("Range", "bytes=0-9")],
                EMPTY_SHA256
            ),
            "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
    }

    #[test]
    fn sigv4_matches_the_put_object_example() {
        let payload = hex(&Sha256::digest(b"Welcome to Amazon S3."));
        let extra = [
            ("Date", "Fri, 24 May 2013 00:00:00 GMT"),
            ("x-amz-storage-class", "REDUCED_REDUNDANCY"),
        ];
        assert_eq!(
            doc("PUT", "/test$file.text", &[], &extra, &payload),
            "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"
        );
    }

    #[test]
    fn sigv4_matches_the_lifecycle_and_list_examples() {
        assert_eq!(
            doc("GET", "/", &[("lifecycle", "")], &[], EMPTY_SHA256),
            "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"
        );
        assert_eq!(
            doc(
                "GET",
                "/",
                &[("prefix", "J"), ("max-keys", "2")],
                &[],
                EMPTY_SHA256
            ),
            "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"
        );
    }

    #[test]
    fn amz_dates_follow_the_calendar() {
        assert_eq!(
            amz_date(1_369_353_600),
            ("20130524".to_string(), "20130524T000000Z".to_string())
        );
        assert_eq!(
            amz_date(951_782_400 + 3_723).1,
            "20000229T010203Z",
            "a leap day"
        );
        assert_eq!(amz_date(1_795_910_399).1, "20261128T235959Z");
    }

    #[test]
    fn a_put_only_if_absent_carries_if_none_match_and_no_host_header() {
        let b = Bucket {
            endpoint: "http://127.0.0.1:8333".into(),
            region: "us-east-1".into(),
            name: "hearth".into(),
        };
        let r = b.put(
            &aws(),
            1_369_353_600,
            "v1/c/ab",
            b"x".to_vec(),
            Put::IfAbsent,
        );
        assert_eq!(r.url, "http://127.0.0.1:8333/hearth/v1/c/ab");
        assert!(r.headers.contains(&("if-none-match".into(), "*".into())));
        assert!(r.headers.iter().all(|(k, _)| k != "host"));
        let auth = &r
            .headers
            .iter()
            .find(|(k, _)| k == "authorization")
            .unwrap()
            .1;
        assert!(
            auth.contains(
                "SignedHeaders=content-type;host;if-none-match;x-amz-content-sha256;x-amz-date"
            ),
            "{auth}"
        );
    }

    #[test]
    fn endpoints_drop_default_ports_and_keep_others() {
        assert_eq!(
            split_endpoint("https://s3.example.com:443/"),
            ("https".into(), "s3.example.com".into(), String::new())
        );
        assert_eq!(
            split_endpoint("http://127.0.0.1:8333"),
            ("http".into(), "127.0.0.1:8333".into(), String::new())
        );
        assert_eq!(
            split_endpoint("https://example.com/s3"),
            ("https".into(), "example.com".into(), "/s3".into())
        );
    }

    #[test]
    fn content_md5_is_base64_of_the_digest() {
        // RFC 1321's "message digest" example, 0xf96b697d7cb7938d525a2f31aaf161d0.
        assert_eq!(content_md5(b"message digest"), "+WtpfXy3k41SWi8xqvFh0A==");
    }

    #[test]
    fn listings_are_read_with_their_continuation() {
        let xml = br#"<?xml version="1.0"?><ListBucketResult><IsTruncated>true</IsTruncated>
            <Contents><Key>v1/c/a&amp;b</Key><Size>12</Size><ETag>&quot;e1&quot;</ETag></Contents>
            <Contents><Key>v1/c/c</Key><Size>7</Size><ETag>"e2"</ETag></Contents>
            <NextContinuationToken>tok/1</NextContinuationToken></ListBucketResult>"#;
        let page = parse_list(xml).unwrap();
        assert_eq!(page.objects.len(), 2);
        assert_eq!(
            page.objects[0],
            Listed {
                key: "v1/c/a&b".into(),
                size: 12,
                etag: "\"e1\"".into()
            }
        );
        assert_eq!(page.next.as_deref(), Some("tok/1"));
        assert!(parse_list(b"<Error><Code>AccessDenied</Code></Error>").is_err());
    }

    #[test]
    fn store_errors_say_what_to_fix() {
        let b = Bucket {
            endpoint: "http://127.0.0.1:1".into(),
            region: "us-east-1".into(),
            name: "notes".into(),
        };
        let e = |status, code: &str| {
            b.error(
                status,
                format!("<Error><Code>{code}</Code><Message>m</Message></Error>").as_bytes(),
            )
        };
        assert_eq!(e(412, "PreconditionFailed"), StoreError::Conflict);
        assert_eq!(e(403, "InvalidAccessKeyId"), StoreError::UnknownAccessKey);
        assert_eq!(e(403, "SignatureDoesNotMatch"), StoreError::BadSignature);
        assert_eq!(
            e(404, "NoSuchBucket"),
            StoreError::NoSuchBucket("notes".into())
        );
        assert_eq!(e(404, "NoSuchKey"), StoreError::NotFound);
        assert!(matches!(
            e(500, "InternalError"),
            StoreError::Other { status: 500, .. }
        ));
    }

    #[test]
    fn credentials_never_print_the_secret() {
        assert!(!format!("{:?}", aws()).contains("wJalr"));
    }
}
