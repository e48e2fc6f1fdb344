//! One file of a skill package, and whether it is text a model may read
//! or binary that is only kept.

use serde::{Deserialize, Serialize};

use super::paths;

/// Whether a file may ever be shown to a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    /// UTF-8 text: `read_skill_file` may return it.
    Text,
    /// Images, archives, fonts and anything else that is not UTF-8 text.
    /// Kept with the package (and exported again), never sent to a model.
    Binary,
}

/// One file of a package.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageFile {
    /// Relative to the package folder, `/`-separated, normalised.
    pub path: String,
    pub bytes: Vec<u8>,
    pub kind: FileKind,
}

/// Extensions that are binary whatever their bytes look like.
const BINARY_EXTENSIONS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "webp", "bmp", "ico", "icns", "tif", "tiff", "avif", "heic",
    "psd", "pdf", "zip", "skill", "gz", "tgz", "bz2", "xz", "zst", "7z", "rar", "jar", "whl",
    "wasm", "woff", "woff2", "ttf", "otf", "eot", "mp3", "mp4", "m4a", "wav", "ogg", "flac", "mov",
    "avi", "webm", "mkv", "exe", "dll", "so", "dylib", "class", "pyc", "o", "a", "sqlite", "db",
    "bin", "docx", "xlsx", "pptx", "odt", "ods", "odp", "epub",
];

impl PackageFile {
    /// A file, classified as text or binary from its name and bytes.
    pub fn new(path: impl Into<String>, bytes: Vec<u8>) -> Self {
        let path = path.into();
        let kind = classify(&path, &bytes);
        Self { path, bytes, kind }
    }

    /// The text of a text file (without a UTF-8 BOM); `None` for binary
    /// files.
    pub fn text(&self) -> Option<&str> {
        match self.kind {
            FileKind::Text => std::str::from_utf8(&self.bytes)
                .ok()
                .map(|t| t.strip_prefix('\u{feff}').unwrap_or(t)),
            FileKind::Binary => None,
        }
    }
}

/// Text means valid UTF-8 with no NUL bytes and no binary extension.
pub fn classify(path: &str, bytes: &[u8]) -> FileKind {
    let name = paths::file_name(path);
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    if BINARY_EXTENSIONS.contains(&ext.as_str()) {
        return FileKind::Binary;
    }
    if bytes.contains(&0) || std::str::from_utf8(bytes).is_err() {
        return FileKind::Binary;
    }
    FileKind::Text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_classified_by_name_and_bytes() {
        let cases: Vec<(&str, &[u8], FileKind)> = vec![
            ("notes.md", b"# Notes\n", FileKind::Text),
            ("data.csv", "a,b\n€,1\n".as_bytes(), FileKind::Text),
            ("logo.png", b"not really a png", FileKind::Binary),
            ("LOGO.PNG", b"x", FileKind::Binary),
            ("blob", b"abc\0def", FileKind::Binary),
            ("latin1.txt", b"caf\xe9", FileKind::Binary),
            ("empty.txt", b"", FileKind::Text),
            ("Makefile", b"all:\n\techo hi\n", FileKind::Text),
        ];
        for (path, bytes, kind) in cases {
            assert_eq!(classify(path, bytes), kind, "for {path}");
        }
    }
}
