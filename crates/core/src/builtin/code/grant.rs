//! Paths inside grants: what the model may name, how it is normalised, and
//! which grant it lands in.
//!
//! A grant is a file or folder the person handed to Hearth. The model sees
//! each grant by a short name (the folder's or file's own name, made unique)
//! and names everything below it with `/`-separated relative paths, e.g.
//! `reports/2026/q3.csv`. A path is checked here, before any browser API sees
//! it: absolute paths, `..`, backslashes, percent-encoding, NUL and control
//! characters, and Unicode look-alikes of `.`, `/` and `\` are refused, so a
//! path can never leave the grant it names. The browser side then walks the
//! checked segments one by one, which cannot escape either.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The longest path accepted, in bytes.
pub const MAX_PATH_BYTES: usize = 1024;
/// The deepest path accepted, in segments.
pub const MAX_DEPTH: usize = 32;
/// The longest single name accepted, in bytes.
pub const MAX_NAME_BYTES: usize = 255;

/// Where code sees granted files.
pub const DATA_MOUNT: &str = "/mnt/data";
/// Where code writes files that come back as artifacts.
pub const OUT_MOUNT: &str = "/mnt/out";

/// Why a path was refused. Each message says what to do instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("the path is empty; name a granted file or folder, e.g. 'reports/q3.csv'")]
    Empty,
    #[error(
        "'{0}' is absolute; paths are relative to a grant, e.g. 'reports/q3.csv' (code sees them under /mnt/data/)"
    )]
    Absolute(String),
    #[error("'{0}' uses '..'; paths cannot leave the grant they name")]
    ParentSegment(String),
    #[error("'{0}' contains a backslash; separate folders with '/'")]
    Backslash(String),
    #[error("'{0}' contains percent-encoding; write the name as it is")]
    PercentEncoded(String),
    #[error("'{path}' contains the character U+{code:04X}, which is not allowed in a path")]
    ForbiddenChar { path: String, code: u32 },
    #[error("'{0}' has a name made only of dots, which is not allowed")]
    DotsOnly(String),
    #[error("the path is longer than {MAX_PATH_BYTES} bytes")]
    TooLong,
    #[error("the path is deeper than {MAX_DEPTH} folders")]
    TooDeep,
    #[error("a name in '{0}' is longer than {MAX_NAME_BYTES} bytes")]
    NameTooLong(String),
}

/// Characters that are refused anywhere in a path: look-alikes of `.`, `/`
/// and `\`, and invisible formatting characters that make a path read
/// differently from what it is.
fn forbidden(c: char) -> bool {
    matches!(
        c,
        '\u{0}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            // Look-alike dots.
            | '\u{2024}' | '\u{2025}' | '\u{2026}' | '\u{fe52}' | '\u{ff0e}' | '\u{3002}' | '\u{ff61}'
            // Look-alike slashes and backslashes.
            | '\u{2044}' | '\u{2215}' | '\u{29f5}' | '\u{29f8}' | '\u{29f9}' | '\u{fe68}' | '\u{ff0f}' | '\u{ff3c}'
            | '\u{2216}' | '\u{3033}' | '\u{3035}'
            // Zero-width and joiner characters, bidi overrides and isolates.
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
    )
}

/// A checked, normalised relative path: one or more names, none of them
/// empty, `.`, `..` or otherwise unsafe.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelPath {
    segments: Vec<String>,
}

impl RelPath {
    /// Checks and normalises `input`: `./` and repeated or trailing slashes
    /// are dropped; everything that could leave the root is refused.
    pub fn parse(input: &str) -> Result<RelPath, PathError> {
        let path = input.trim();
        if path.is_empty() {
            return Err(PathError::Empty);
        }
        if path.len() > MAX_PATH_BYTES {
            return Err(PathError::TooLong);
        }
        if let Some(c) = path.chars().find(|c| forbidden(*c)) {
            return Err(PathError::ForbiddenChar {
                path: printable(path),
                code: c as u32,
            });
        }
        if path.contains('\\') {
            return Err(PathError::Backslash(path.into()));
        }
        if path.starts_with('/') || path.starts_with('~') || looks_like_drive(path) {
            return Err(PathError::Absolute(path.into()));
        }
        if has_percent_escape(path) {
            return Err(PathError::PercentEncoded(path.into()));
        }
        let mut segments = Vec::new();
        for segment in path.split('/') {
            match segment {
                "" | "." => continue,
                ".." => return Err(PathError::ParentSegment(path.into())),
                s if s.chars().all(|c| c == '.') => return Err(PathError::DotsOnly(path.into())),
                s if s.len() > MAX_NAME_BYTES => return Err(PathError::NameTooLong(path.into())),
                s => segments.push(s.to_string()),
            }
        }
        if segments.is_empty() {
            return Err(PathError::Empty);
        }
        if segments.len() > MAX_DEPTH {
            return Err(PathError::TooDeep);
        }
        Ok(RelPath { segments })
    }

    /// A path from names that are already known to be safe, such as the
    /// names a directory listing returned. Unsafe names are refused all the
    /// same.
    pub fn from_segments<I, S>(segments: I) -> Result<RelPath, PathError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let joined: Vec<String> = segments
            .into_iter()
            .map(|s| s.as_ref().to_string())
            .collect();
        if joined.iter().any(|s| s.contains('/') || s.is_empty()) {
            return Err(PathError::ForbiddenChar {
                path: printable(&joined.join("/")),
                code: '/' as u32,
            });
        }
        RelPath::parse(&joined.join("/"))
    }

    pub fn segments(&self) -> &[String] {
        &self.segments
    }

    /// The first name: the grant this path is in.
    pub fn root(&self) -> &str {
        &self.segments[0]
    }

    /// Everything after the first name.
    pub fn rest(&self) -> &[String] {
        &self.segments[1..]
    }

    /// The last name.
    pub fn file_name(&self) -> &str {
        &self.segments[self.segments.len() - 1]
    }

    /// This path followed by `name`.
    pub fn join(&self, name: &str) -> Result<RelPath, PathError> {
        let mut segments = self.segments.clone();
        segments.push(name.to_string());
        RelPath::from_segments(segments)
    }

    /// Whether `self` is `other` or lies below it.
    pub fn starts_with(&self, other: &RelPath) -> bool {
        self.segments.len() >= other.segments.len()
            && self.segments[..other.segments.len()] == other.segments[..]
    }

    /// Where code sees this path: `/mnt/data/<path>`.
    pub fn mount_path(&self) -> String {
        format!("{DATA_MOUNT}/{self}")
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.segments.join("/"))
    }
}

fn looks_like_drive(path: &str) -> bool {
    let b = path.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

fn has_percent_escape(path: &str) -> bool {
    let b = path.as_bytes();
    b.windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
}

/// The path with control characters shown as escapes, for messages.
fn printable(path: &str) -> String {
    path.chars()
        .map(|c| {
            if forbidden(c) {
                format!("\\u{{{:x}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A code path accepts both `reports/q3.csv` and `/mnt/data/reports/q3.csv`.
pub fn strip_data_mount(path: &str) -> &str {
    let trimmed = path.trim();
    trimmed
        .strip_prefix(DATA_MOUNT)
        .and_then(|rest| {
            if rest.is_empty() {
                Some("")
            } else {
                rest.strip_prefix('/')
            }
        })
        .unwrap_or(trimmed)
}

/// Whether a grant holds one file or a whole folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GrantKind {
    File,
    Directory,
}

/// How the browser holds a grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GrantSource {
    /// A live File System Access handle; reads see the current contents,
    /// and after a reload the person must allow access again.
    Handle,
    /// A copy taken through `<input type=file>`, kept in the browser's
    /// private file system so it survives reloads.
    Copy,
}

/// What core needs to know about a grant to resolve paths.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantInfo {
    pub id: String,
    /// The name the model uses for the grant's root. Unique among grants.
    pub name: String,
    pub kind: GrantKind,
}

/// Where a path points: which grant, and the names below its root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved<'g> {
    pub grant: &'g GrantInfo,
    /// Names below the grant's root; empty for the root itself.
    pub inner: Vec<String>,
}

/// Why a checked path does not point into a grant.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error("no files or folders are granted yet; ask the person to grant one in Settings → Files")]
    NoGrants,
    #[error("'{path}' is not inside a granted file or folder; granted: {granted}")]
    NotGranted { path: String, granted: String },
    #[error("'{path}' goes below the granted file '{grant}', which is not a folder")]
    BelowFile { path: String, grant: String },
}

/// Finds the grant `path` is in. The first name of the path must be a
/// grant's name; a file grant admits only its own name.
pub fn resolve<'g>(grants: &'g [GrantInfo], path: &RelPath) -> Result<Resolved<'g>, ResolveError> {
    if grants.is_empty() {
        return Err(ResolveError::NoGrants);
    }
    let Some(grant) = grants.iter().find(|g| g.name == path.root()) else {
        return Err(ResolveError::NotGranted {
            path: path.to_string(),
            granted: granted_list(grants),
        });
    };
    match grant.kind {
        GrantKind::File if !path.rest().is_empty() => Err(ResolveError::BelowFile {
            path: path.to_string(),
            grant: grant.name.clone(),
        }),
        GrantKind::File | GrantKind::Directory => Ok(Resolved {
            grant,
            inner: path.rest().to_vec(),
        }),
    }
}

/// "reports/, notes.txt" — the roots the model may name.
pub fn granted_list(grants: &[GrantInfo]) -> String {
    grants
        .iter()
        .map(|g| match g.kind {
            GrantKind::Directory => format!("{}/", g.name),
            GrantKind::File => g.name.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A name for a new grant that no existing grant uses: the picked file's
/// or folder's own name, made safe, then "name (2)", "name (3)", … when
/// taken.
pub fn unique_name(wanted: &str, taken: &[&str]) -> String {
    let cleaned: String = wanted
        .chars()
        .map(|c| {
            if forbidden(c) || c == '/' || c == '\\' {
                '_'
            } else {
                c
            }
        })
        .collect();
    let cleaned = cleaned.trim();
    let base = if cleaned.is_empty() || cleaned.chars().all(|c| c == '.') {
        "granted".to_string()
    } else {
        truncate_bytes(cleaned, 200).to_string()
    };
    if !taken.contains(&base.as_str()) {
        return base;
    }
    (2..)
        .map(|n| format!("{base} ({n})"))
        .find(|candidate| !taken.contains(&candidate.as_str()))
        .unwrap_or(base)
}

/// The longest prefix of `s` of at most `max` bytes that ends on a char
/// boundary.
pub fn truncate_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str) -> String {
        match RelPath::parse(input) {
            Ok(p) => format!("ok {p}"),
            Err(e) => format!("err {e}"),
        }
    }

    #[test]
    fn paths_are_normalised_or_refused() {
        let cases: &[(&str, &str)] = &[
            ("reports/q3.csv", "ok reports/q3.csv"),
            ("./reports//q3.csv/", "ok reports/q3.csv"),
            ("  notes.txt ", "ok notes.txt"),
            ("a/./b", "ok a/b"),
            (
                "dir with spaces/ünïcødé ✓.txt",
                "ok dir with spaces/ünïcødé ✓.txt",
            ),
            ("100%.txt", "ok 100%.txt"),
            (".hidden/file", "ok .hidden/file"),
            (
                "",
                "err the path is empty; name a granted file or folder, e.g. 'reports/q3.csv'",
            ),
            (
                "./",
                "err the path is empty; name a granted file or folder, e.g. 'reports/q3.csv'",
            ),
            (
                "/etc/passwd",
                "err '/etc/passwd' is absolute; paths are relative to a grant, e.g. 'reports/q3.csv' (code sees them under /mnt/data/)",
            ),
            (
                "~/secrets",
                "err '~/secrets' is absolute; paths are relative to a grant, e.g. 'reports/q3.csv' (code sees them under /mnt/data/)",
            ),
            (
                "C:/Windows",
                "err 'C:/Windows' is absolute; paths are relative to a grant, e.g. 'reports/q3.csv' (code sees them under /mnt/data/)",
            ),
            (
                "reports/../../etc",
                "err 'reports/../../etc' uses '..'; paths cannot leave the grant they name",
            ),
            (
                "..",
                "err '..' uses '..'; paths cannot leave the grant they name",
            ),
            (
                "a/..",
                "err 'a/..' uses '..'; paths cannot leave the grant they name",
            ),
            (
                "a/.../b",
                "err 'a/.../b' has a name made only of dots, which is not allowed",
            ),
            (
                "reports\\..\\x",
                "err 'reports\\..\\x' contains a backslash; separate folders with '/'",
            ),
            (
                "\\\\server\\share",
                "err '\\\\server\\share' contains a backslash; separate folders with '/'",
            ),
            (
                "a/%2e%2e/b",
                "err 'a/%2e%2e/b' contains percent-encoding; write the name as it is",
            ),
            (
                "a/%2F",
                "err 'a/%2F' contains percent-encoding; write the name as it is",
            ),
            (
                "a\u{0}b",
                "err 'a\\u{0}b' contains the character U+0000, which is not allowed in a path",
            ),
            (
                "a\nb",
                "err 'a\\u{a}b' contains the character U+000A, which is not allowed in a path",
            ),
            (
                "a/\u{ff0e}\u{ff0e}/b",
                "err 'a/\\u{ff0e}\\u{ff0e}/b' contains the character U+FF0E, which is not allowed in a path",
            ),
            (
                "a\u{2215}b",
                "err 'a\\u{2215}b' contains the character U+2215, which is not allowed in a path",
            ),
            (
                "a\u{ff0f}b",
                "err 'a\\u{ff0f}b' contains the character U+FF0F, which is not allowed in a path",
            ),
            (
                "report\u{202e}vsc.exe",
                "err 'report\\u{202e}vsc.exe' contains the character U+202E, which is not allowed in a path",
            ),
            (
                "a\u{200b}/b",
                "err 'a\\u{200b}/b' contains the character U+200B, which is not allowed in a path",
            ),
            (
                "\u{2024}\u{2024}/x",
                "err '\\u{2024}\\u{2024}/x' contains the character U+2024, which is not allowed in a path",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(check(input), *want, "{input:?}");
        }
    }

    #[test]
    fn size_limits() {
        let long_name = "x".repeat(MAX_NAME_BYTES + 1);
        let deep = vec!["d"; MAX_DEPTH + 1].join("/");
        let long = "a/".repeat(MAX_PATH_BYTES);
        let got: Vec<String> = [long_name.as_str(), deep.as_str(), long.as_str()]
            .into_iter()
            .map(check)
            .collect();
        assert_eq!(
            got,
            [
                format!("err a name in '{long_name}' is longer than 255 bytes"),
                "err the path is deeper than 32 folders".to_string(),
                "err the path is longer than 1024 bytes".to_string(),
            ]
        );
    }

    fn grants() -> Vec<GrantInfo> {
        vec![
            GrantInfo {
                id: "g1".into(),
                name: "fixtures".into(),
                kind: GrantKind::Directory,
            },
            GrantInfo {
                id: "g2".into(),
                name: "notes.txt".into(),
                kind: GrantKind::File,
            },
        ]
    }

    #[test]
    fn paths_resolve_into_exactly_one_grant() {
        let grants = grants();
        let cases: &[(&str, &str)] = &[
            ("fixtures", "g1 []"),
            ("fixtures/a/b.txt", "g1 [\"a\", \"b.txt\"]"),
            ("notes.txt", "g2 []"),
            (
                "notes.txt/x",
                "err 'notes.txt/x' goes below the granted file 'notes.txt', which is not a folder",
            ),
            (
                "fixture/a.txt",
                "err 'fixture/a.txt' is not inside a granted file or folder; granted: fixtures/, notes.txt",
            ),
            (
                "Fixtures/a.txt",
                "err 'Fixtures/a.txt' is not inside a granted file or folder; granted: fixtures/, notes.txt",
            ),
        ];
        for (input, want) in cases {
            let path = RelPath::parse(input).unwrap();
            let got = match resolve(&grants, &path) {
                Ok(r) => format!("{} {:?}", r.grant.id, r.inner),
                Err(e) => format!("err {e}"),
            };
            assert_eq!(got, *want, "{input}");
        }
        assert_eq!(
            resolve(&[], &RelPath::parse("x").unwrap()),
            Err(ResolveError::NoGrants)
        );
    }

    #[test]
    fn code_paths_may_carry_the_mount() {
        let cases = [
            ("/mnt/data/fixtures/a.csv", "fixtures/a.csv"),
            ("fixtures/a.csv", "fixtures/a.csv"),
            ("/mnt/data", ""),
            ("/mnt/database/x", "/mnt/database/x"),
            ("/mnt/out/x", "/mnt/out/x"),
        ];
        for (input, want) in cases {
            assert_eq!(strip_data_mount(input), want, "{input}");
        }
        assert_eq!(
            RelPath::parse("fixtures/a.csv").unwrap().mount_path(),
            "/mnt/data/fixtures/a.csv"
        );
    }

    #[test]
    fn grant_names_are_unique_and_safe() {
        let cases: &[(&str, &[&str], &str)] = &[
            ("fixtures", &[], "fixtures"),
            ("fixtures", &["fixtures"], "fixtures (2)"),
            ("fixtures", &["fixtures", "fixtures (2)"], "fixtures (3)"),
            ("a/b", &[], "a_b"),
            ("..", &[], "granted"),
            ("  ", &[], "granted"),
            ("evil\u{202e}txt", &[], "evil_txt"),
        ];
        for (wanted, taken, want) in cases {
            assert_eq!(unique_name(wanted, taken), *want, "{wanted}");
            assert!(RelPath::parse(want).is_ok(), "{want} must parse");
        }
    }

    #[test]
    fn joins_and_prefixes() {
        let base = RelPath::parse("fixtures/sub").unwrap();
        assert_eq!(
            base.join("a.txt").unwrap().to_string(),
            "fixtures/sub/a.txt"
        );
        assert!(base.join("..").is_err());
        assert!(base.join("x/y").is_err());
        assert!(RelPath::parse("fixtures/sub/a").unwrap().starts_with(&base));
        assert!(
            !RelPath::parse("fixtures/subway")
                .unwrap()
                .starts_with(&base)
        );
        assert_eq!(truncate_bytes("héllo", 2), "h");
    }
}
