//! Which files are read as text, how, and why one cannot be: a file that
//! is not indexed is reported with its reason, never passed over in
//! silence.

use sha2::{Digest, Sha256};

use crate::chunk::DocKind;

/// The largest file read, in bytes. Larger files are reported, not read:
/// a file this size is data, not a document a person wrote.
pub const MAX_FILE_BYTES: usize = 8 * 1024 * 1024;

/// Why a file's text cannot be indexed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    #[error("binary file (a NUL byte at offset {offset})")]
    Binary { offset: usize },
    #[error("not UTF-8 text (invalid bytes at offset {offset})")]
    NotUtf8 { offset: usize },
    #[error("too large to index ({size} bytes; the limit is {limit})")]
    TooLarge { size: usize, limit: usize },
    #[error("a PDF: reading PDF text is not supported yet")]
    Pdf,
    #[error("cannot be opened: {0}")]
    Io(String),
    #[error("a folder that cannot be listed: {0}")]
    Folder(String),
    #[error("a link to elsewhere ({0}); links are not followed")]
    Link(String),
}

/// Code files by extension: cut at blank lines rather than read as prose.
const CODE: &[&str] = &[
    "c", "cc", "cpp", "cs", "css", "go", "h", "hpp", "java", "js", "json", "jsx", "kt", "lua",
    "mjs", "php", "pl", "py", "rb", "rs", "scala", "sh", "sql", "swift", "toml", "ts", "tsx",
    "yaml", "yml", "zig",
];

/// How a file is read, from its name: Markdown, HTML and code by their
/// extensions, anything else as plain text.
pub fn kind_of(path: &str) -> DocKind {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "md" | "markdown" | "mdown" | "mkd" => DocKind::Markdown,
        "html" | "htm" | "xhtml" => DocKind::Html,
        e if CODE.contains(&e) => DocKind::Code,
        _ => DocKind::Text,
    }
}

/// A file's text and how to read it, or why it cannot be read. Text is
/// UTF-8 (a byte-order mark is dropped, and chunks' byte ranges count
/// from after it); a NUL byte in the first 8000 bytes marks a binary file,
/// as git decides.
pub fn read<'a>(path: &str, bytes: &'a [u8]) -> Result<(DocKind, &'a str), Unreadable> {
    if bytes.len() > MAX_FILE_BYTES {
        return Err(Unreadable::TooLarge {
            size: bytes.len(),
            limit: MAX_FILE_BYTES,
        });
    }
    if bytes.starts_with(b"%PDF-") || path.to_ascii_lowercase().ends_with(".pdf") {
        return Err(Unreadable::Pdf);
    }
    if let Some(offset) = bytes.iter().take(8000).position(|b| *b == 0) {
        return Err(Unreadable::Binary { offset });
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).map_err(|e| Unreadable::NotUtf8 {
        offset: e.valid_up_to(),
    })?;
    Ok((kind_of(path), text))
}

/// The content hash the index keys a file's chunks by: SHA-256, in hex.
pub fn content_hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_extensions() {
        assert_eq!(kind_of("notes/Trip.MD"), DocKind::Markdown);
        assert_eq!(kind_of("site/index.htm"), DocKind::Html);
        assert_eq!(kind_of("src/main.rs"), DocKind::Code);
        assert_eq!(kind_of("README"), DocKind::Text);
        assert_eq!(kind_of("a.dir/notes.txt"), DocKind::Text);
    }

    #[test]
    fn unreadable_files_say_why() {
        assert_eq!(
            read("x.bin", b"ab\0cd"),
            Err(Unreadable::Binary { offset: 2 })
        );
        assert_eq!(
            read("x.txt", b"caf\xe9 au lait"),
            Err(Unreadable::NotUtf8 { offset: 3 })
        );
        assert_eq!(read("y.txt", b"%PDF-1.7 ..."), Err(Unreadable::Pdf));
        let big = vec![b'a'; MAX_FILE_BYTES + 1];
        assert!(matches!(
            read("big.txt", &big),
            Err(Unreadable::TooLarge { .. })
        ));
        assert_eq!(
            Unreadable::NotUtf8 { offset: 3 }.to_string(),
            "not UTF-8 text (invalid bytes at offset 3)"
        );
    }

    #[test]
    fn text_loses_its_byte_order_mark() {
        assert_eq!(
            read("a.md", b"\xEF\xBB\xBF# Hi"),
            Ok((DocKind::Markdown, "# Hi"))
        );
    }

    #[test]
    fn hashes_are_sha256_hex() {
        assert_eq!(
            content_hash(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
