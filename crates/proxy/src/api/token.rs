//! The per-install API token: 32 random bytes, generated once and kept in
//! the user's config directory with owner-only permissions (0600 in a 0700
//! directory on Unix).
//!
//! No route hands it out: `hearth serve` prints it in the fragment of its
//! launch link, and the app keeps it in its origin's storage. Web pages
//! and other users of the machine cannot get it (no route, no CORS, an
//! owner-only file). Programs running as the same user can read the file,
//! as they can read the browser's own storage: the key keeps web pages
//! and other users out, not the user's own processes.

use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use base64::Engine;

/// The file name inside the config directory.
pub const TOKEN_FILE: &str = "api-token";
/// 32 bytes in unpadded base64url.
const TOKEN_LEN: usize = 43;

/// Why the token could not be loaded or created.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("cannot create the config directory {path}: {source}")]
    CreateDir { path: PathBuf, source: io::Error },
    #[error("cannot read the API token {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("cannot write the API token {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error("the operating system's random number generator failed: {0}")]
    Random(String),
}

/// The token. Its `Debug` never shows the value.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiToken(String);

impl fmt::Debug for ApiToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiToken(…)")
    }
}

impl ApiToken {
    /// A fresh random token.
    pub fn generate() -> Result<Self, TokenError> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| TokenError::Random(e.to_string()))?;
        Ok(Self(
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes),
        ))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Compares in time independent of where the first difference is.
    pub fn matches(&self, candidate: &[u8]) -> bool {
        let mine = self.0.as_bytes();
        if candidate.len() != mine.len() {
            return false;
        }
        mine.iter()
            .zip(candidate)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
    }

    fn is_well_formed(s: &str) -> bool {
        s.len() == TOKEN_LEN
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    }

    /// Reads the token in `dir`, creating the directory and the token the
    /// first time. A malformed file is replaced; loose permissions are
    /// tightened.
    pub fn load_or_create(dir: &Path) -> Result<Self, TokenError> {
        create_private_dir(dir)?;
        let path = dir.join(TOKEN_FILE);
        match fs::read_to_string(&path) {
            Ok(text) => {
                tighten(&path)?;
                let text = text.trim();
                if Self::is_well_formed(text) {
                    return Ok(Self(text.to_string()));
                }
                tracing::warn!(path = %path.display(), "the API token file is malformed; writing a new one");
                let token = Self::generate()?;
                replace_private(&path, token.as_str())?;
                Ok(token)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let token = Self::generate()?;
                match write_new_private(&path, token.as_str()) {
                    Ok(()) => Ok(token),
                    // Another `hearth serve` created it first: use theirs.
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Self::load_or_create(dir),
                    Err(source) => Err(TokenError::Write { path, source }),
                }
            }
            Err(source) => Err(TokenError::Read { path, source }),
        }
    }
}

/// Creates `dir` (owner-only on Unix) if it is missing.
pub fn create_private_dir(dir: &Path) -> Result<(), TokenError> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|source| TokenError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })
}

fn open_options() -> fs::OpenOptions {
    let mut o = fs::OpenOptions::new();
    o.write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o
}

fn write_new_private(path: &Path, contents: &str) -> io::Result<()> {
    let mut f = open_options().create_new(true).open(path)?;
    f.write_all(contents.as_bytes())?;
    f.write_all(b"\n")?;
    f.sync_all()
}

/// Writes `contents` to `path` with owner-only permissions, atomically.
pub fn replace_private(path: &Path, contents: &str) -> Result<(), TokenError> {
    let tmp = path.with_extension("tmp");
    let _ = fs::remove_file(&tmp);
    let write = || -> io::Result<()> {
        let mut f = open_options().create_new(true).open(&tmp)?;
        f.write_all(contents.as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    };
    write().map_err(|source| TokenError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Makes `path` owner-only if anyone else may read it.
fn tighten(path: &Path) -> Result<(), TokenError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = fs::metadata(path).map_err(|source| TokenError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        if meta.permissions().mode() & 0o077 != 0 {
            tracing::warn!(path = %path.display(), "the API token was readable by others; restricting it to you");
            fs::set_permissions(path, fs::Permissions::from_mode(0o600)).map_err(|source| {
                TokenError::Write {
                    path: path.to_path_buf(),
                    source,
                }
            })?;
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_once_then_reused() {
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("hearth");
        let a = ApiToken::load_or_create(&conf).unwrap();
        let b = ApiToken::load_or_create(&conf).unwrap();
        assert_eq!(a, b);
        assert!(ApiToken::is_well_formed(a.as_str()));
        assert_ne!(a, ApiToken::generate().unwrap());
        assert_eq!(format!("{a:?}"), "ApiToken(…)");
    }

    #[cfg(unix)]
    #[test]
    fn stored_owner_only_and_loose_files_tightened() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("hearth");
        ApiToken::load_or_create(&conf).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&conf.join(TOKEN_FILE)), 0o600);
        assert_eq!(mode(&conf), 0o700);
        fs::set_permissions(conf.join(TOKEN_FILE), fs::Permissions::from_mode(0o644)).unwrap();
        ApiToken::load_or_create(&conf).unwrap();
        assert_eq!(mode(&conf.join(TOKEN_FILE)), 0o600);
    }

    #[test]
    fn malformed_files_are_replaced() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(TOKEN_FILE), "short").unwrap();
        let t = ApiToken::load_or_create(dir.path()).unwrap();
        assert!(ApiToken::is_well_formed(t.as_str()));
        assert_eq!(
            fs::read_to_string(dir.path().join(TOKEN_FILE))
                .unwrap()
                .trim(),
            t.as_str()
        );
    }

    #[test]
    fn comparison_needs_the_exact_token() {
        let t = ApiToken("a".repeat(TOKEN_LEN));
        let cases: Vec<(Vec<u8>, bool)> = vec![
            ("a".repeat(TOKEN_LEN).into_bytes(), true),
            (
                format!("{}b", "a".repeat(TOKEN_LEN - 1)).into_bytes(),
                false,
            ),
            ("a".repeat(TOKEN_LEN - 1).into_bytes(), false),
            ("a".repeat(TOKEN_LEN + 1).into_bytes(), false),
            (Vec::new(), false),
        ];
        for (candidate, ok) in cases {
            assert_eq!(t.matches(&candidate), ok);
        }
    }
}
