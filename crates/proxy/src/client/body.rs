//! Reading an outbound response's body within a size limit: the bytes on
//! the wire, and again after undoing the `Content-Encoding`, so a small
//! compressed body cannot unpack past the limit.

use std::io::Read;

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::Incoming;

use super::FetchError;

/// Reads at most `limit` bytes of `body`.
pub async fn read_limited(mut body: Incoming, limit: u64, host: &str) -> Result<Bytes, FetchError> {
    let mut buf = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| FetchError::UpstreamFailed {
            host: host.to_string(),
            detail: e.to_string(),
        })?;
        if let Ok(data) = frame.into_data() {
            if (buf.len() + data.len()) as u64 > limit {
                return Err(FetchError::ResponseTooLarge {
                    limit,
                    declared: None,
                });
            }
            buf.extend_from_slice(&data);
        }
    }
    Ok(buf.freeze())
}

/// Undoes the response's `Content-Encoding`, refusing output over `limit`.
pub fn decode_content_encoding(
    encoding: Option<&str>,
    body: Bytes,
    limit: u64,
) -> Result<Bytes, FetchError> {
    let enc = encoding.map(|e| e.trim().to_ascii_lowercase());
    let read_all = |mut reader: Box<dyn Read + '_>| -> Result<Bytes, FetchError> {
        let mut out = Vec::new();
        (&mut reader)
            .take(limit + 1)
            .read_to_end(&mut out)
            .map_err(|e| FetchError::UpstreamFailed {
                host: "the server".into(),
                detail: format!("cannot decompress the response: {e}"),
            })?;
        if out.len() as u64 > limit {
            return Err(FetchError::ResponseTooLarge {
                limit,
                declared: None,
            });
        }
        Ok(Bytes::from(out))
    };
    match enc.as_deref() {
        None | Some("") | Some("identity") => Ok(body),
        Some("gzip") | Some("x-gzip") => {
            read_all(Box::new(flate2::read::MultiGzDecoder::new(&body[..])))
        }
        Some("deflate") => {
            // "deflate" means zlib-wrapped, but some servers send it raw.
            read_all(Box::new(flate2::read::ZlibDecoder::new(&body[..])))
                .or_else(|_| read_all(Box::new(flate2::read::DeflateDecoder::new(&body[..]))))
        }
        Some(other) => Err(FetchError::UnsupportedContentEncoding(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn content_encodings_are_undone_within_the_limit() {
        let plain = b"hello hello hello hello".to_vec();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&plain).unwrap();
        let gz = Bytes::from(gz.finish().unwrap());
        let mut zl = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        zl.write_all(&plain).unwrap();
        let zl = Bytes::from(zl.finish().unwrap());
        let mut raw =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        raw.write_all(&plain).unwrap();
        let raw = Bytes::from(raw.finish().unwrap());

        let ok: Vec<(Option<&str>, Bytes)> = vec![
            (None, Bytes::from(plain.clone())),
            (Some("identity"), Bytes::from(plain.clone())),
            (Some("gzip"), gz.clone()),
            (Some("X-Gzip"), gz.clone()),
            (Some("deflate"), zl),
            (Some("deflate"), raw),
        ];
        for (enc, body) in ok {
            assert_eq!(
                decode_content_encoding(enc, body, 1000).unwrap(),
                Bytes::from(plain.clone()),
                "{enc:?}"
            );
        }
        // A small bomb: 1 MB of zeros in ~1 KB of gzip, against a 64 KB limit.
        let mut bomb = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        bomb.write_all(&vec![0u8; 1024 * 1024]).unwrap();
        let bomb = Bytes::from(bomb.finish().unwrap());
        assert!(bomb.len() < 4096);
        assert_eq!(
            decode_content_encoding(Some("gzip"), bomb, 64 * 1024)
                .unwrap_err()
                .to_string(),
            "the response is larger than the 65536-byte limit"
        );
        assert_eq!(
            decode_content_encoding(Some("br"), gz, 1000)
                .unwrap_err()
                .to_string(),
            "the server compressed the response with \"br\", which is not supported"
        );
    }
}
