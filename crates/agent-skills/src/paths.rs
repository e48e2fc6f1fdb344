//! Paths inside a skill package: the one gate every path from a model, a
//! `tools.json`, a `resources.json` or an archive passes before it is used.
//!
//! A path is relative, uses `/` between parts, and cannot name anything
//! outside the package: no absolute paths, no `..`, no backslashes, no
//! percent-encoding, no drive letters or URL schemes, no control
//! characters, and no look-alike characters (fullwidth solidus, one-dot
//! leaders, bidi overrides, zero-width spaces…). Each character must be a
//! letter or digit in any script, or one of a small set of ASCII
//! punctuation. Lookups then match the normalised path exactly against the
//! package's own file list, so even a path that slipped through could only
//! name a file the package holds.

use std::fmt;

/// The longest path accepted, in bytes.
pub const MAX_PATH_BYTES: usize = 1024;
/// The longest single file or folder name, in bytes.
pub const MAX_NAME_BYTES: usize = 255;
/// The most folders a path may go down.
pub const MAX_DEPTH: usize = 32;

/// ASCII punctuation allowed in file and folder names.
const ALLOWED_PUNCTUATION: &str = " -_.,+=@()[]{}!#$&';~";

/// Why a path was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("the path is empty")]
    Empty,
    #[error("the path is {0} bytes long; at most {MAX_PATH_BYTES} are allowed")]
    TooLong(usize),
    #[error("a name in the path is {0} bytes long; at most {MAX_NAME_BYTES} are allowed")]
    NameTooLong(usize),
    #[error("the path goes more than {MAX_DEPTH} folders deep")]
    TooDeep,
    #[error("absolute paths are not allowed; give a path relative to the skill's folder")]
    Absolute,
    #[error("'..' is not allowed: paths must stay inside the skill's folder")]
    ParentFolder,
    #[error("a name made only of dots ('{0}') is not allowed")]
    DotsOnly(String),
    #[error("backslashes are not allowed; use '/' between folders")]
    Backslash,
    #[error("'%' is not allowed: give the path as plain text, not percent-encoded")]
    Percent,
    #[error("':' is not allowed (it could be a drive letter, a URL scheme or a stream name)")]
    Colon,
    #[error("'~' at the start of a name is not allowed")]
    Tilde,
    #[error("control character U+{0:04X} is not allowed")]
    Control(u32),
    #[error("character {0} is not allowed in a path")]
    Disallowed(DisplayChar),
    #[error("names must not start or end with a space")]
    EdgeSpace,
    #[error("the path names a folder, not a file")]
    Folder,
}

/// A character as shown in messages: itself when visible, plus its code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DisplayChar(pub char);

impl fmt::Display for DisplayChar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.0;
        if c.is_alphanumeric() || c.is_ascii_graphic() {
            write!(f, "'{c}' (U+{:04X})", c as u32)
        } else {
            write!(f, "U+{:04X}", c as u32)
        }
    }
}

/// Normalises a path given by a model or a manifest: drops `.` parts and
/// repeated slashes, refuses everything in [`PathError`].
pub fn normalize(path: &str) -> Result<String, PathError> {
    if path.is_empty() {
        return Err(PathError::Empty);
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(PathError::TooLong(path.len()));
    }
    // Character checks come first, so a NUL or a look-alike is named as
    // such even where it would also make the path absolute or odd.
    for c in path.chars() {
        check_char(c)?;
    }
    if path.starts_with('/') {
        return Err(PathError::Absolute);
    }
    if path.ends_with('/') {
        return Err(PathError::Folder);
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => continue,
            ".." => return Err(PathError::ParentFolder),
            p if p.chars().all(|c| c == '.') => return Err(PathError::DotsOnly(p.into())),
            p => {
                if p.len() > MAX_NAME_BYTES {
                    return Err(PathError::NameTooLong(p.len()));
                }
                if p.starts_with(' ') || p.ends_with(' ') {
                    return Err(PathError::EdgeSpace);
                }
                if p.starts_with('~') {
                    return Err(PathError::Tilde);
                }
                parts.push(p);
            }
        }
    }
    if parts.is_empty() {
        return Err(PathError::Empty);
    }
    if parts.len() > MAX_DEPTH {
        return Err(PathError::TooDeep);
    }
    Ok(parts.join("/"))
}

/// Normalises the name of an archive entry or an imported file. Windows
/// tools write `\` between folders in zips, so it is read as `/` here; a
/// leading `./` or `/` is dropped. Everything else follows [`normalize`].
pub fn normalize_import(path: &str) -> Result<String, PathError> {
    let unified = path.replace('\\', "/");
    let trimmed = unified.trim_start_matches("./").trim_start_matches('/');
    normalize(trimmed)
}

fn check_char(c: char) -> Result<(), PathError> {
    match c {
        '\\' => Err(PathError::Backslash),
        '%' => Err(PathError::Percent),
        ':' => Err(PathError::Colon),
        '/' => Ok(()),
        c if c.is_control() => Err(PathError::Control(c as u32)),
        c if c.is_ascii_alphanumeric() || ALLOWED_PUNCTUATION.contains(c) => Ok(()),
        // Letters and digits of every script are fine; none of them
        // normalises to '/', '\' or a name made of dots.
        c if !c.is_ascii() && c.is_alphanumeric() => Ok(()),
        c => Err(PathError::Disallowed(DisplayChar(c))),
    }
}

/// The folder part of a normalised path (`""` for a top-level file).
pub fn parent(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

/// The last part of a normalised path.
pub fn file_name(path: &str) -> &str {
    path.rfind('/').map_or(path, |i| &path[i + 1..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_paths_are_normalised() {
        let cases = [
            ("references/REFERENCE.md", "references/REFERENCE.md"),
            ("./scripts/extract.py", "scripts/extract.py"),
            ("a//b/./c.txt", "a/b/c.txt"),
            ("assets/logo (dark).png", "assets/logo (dark).png"),
            ("docs/résumé-模板.md", "docs/résumé-模板.md"),
            (".hidden/notes.md", ".hidden/notes.md"),
            ("v1.2/file~backup.txt", "v1.2/file~backup.txt"),
        ];
        for (input, expected) in cases {
            assert_eq!(normalize(input).as_deref(), Ok(expected), "for {input:?}");
        }
    }

    #[test]
    fn imports_accept_windows_separators_but_not_escapes() {
        assert_eq!(
            normalize_import("my-skill\\scripts\\run.py").as_deref(),
            Ok("my-skill/scripts/run.py")
        );
        assert_eq!(normalize_import("/abs/file").as_deref(), Ok("abs/file"));
        assert_eq!(
            normalize_import("my-skill\\..\\..\\etc\\passwd"),
            Err(PathError::ParentFolder)
        );
        assert_eq!(normalize_import("C:\\Windows\\x"), Err(PathError::Colon));
    }

    #[test]
    fn helpers_split_paths() {
        assert_eq!(parent("a/b/c.md"), "a/b");
        assert_eq!(parent("c.md"), "");
        assert_eq!(file_name("a/b/c.md"), "c.md");
        assert_eq!(file_name("c.md"), "c.md");
    }
}
