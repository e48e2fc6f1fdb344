//! `.zip` and `.skill` archives: unpacking an upload into files for
//! [`scan`](super::scan::scan), and packing a skill back into a zip.
//!
//! Unpacking is defensive: entry names go through the same path gate as
//! everything else, symlinks and macOS `__MACOSX` forks are dropped, and
//! sizes are checked against what was actually inflated, not what the
//! archive claims, so a zip bomb stops at the limit.

use std::io::{Cursor, Read, Write};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipArchive, ZipWriter};

use super::package::{MAX_FILE_BYTES, SkillPackage};
use super::scan::{self, LoadOutcome, ScanOptions, SourceFile};
use super::{Problem, Severity, ValidationMode, paths};

/// The most entries read from one archive.
pub const MAX_ARCHIVE_ENTRIES: usize = 10_000;
/// The most bytes inflated from one archive in all.
pub const MAX_ARCHIVE_BYTES: u64 = 128 * 1024 * 1024;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArchiveError {
    #[error("not a readable zip archive: {0}")]
    NotZip(String),
    #[error("the archive has {0} entries; at most {MAX_ARCHIVE_ENTRIES} are read")]
    TooManyEntries(usize),
    #[error("the archive inflates to more than {MAX_ARCHIVE_BYTES} bytes")]
    TooLarge,
    #[error("could not write the archive: {0}")]
    Write(String),
}

/// The files of an archive, with the problems met on the way (skipped
/// entries). Fails only when the archive as a whole is unusable.
pub fn read_archive(bytes: &[u8]) -> Result<(Vec<SourceFile>, Vec<Problem>), ArchiveError> {
    let mut archive =
        ZipArchive::new(Cursor::new(bytes)).map_err(|e| ArchiveError::NotZip(e.to_string()))?;
    if archive.len() > MAX_ARCHIVE_ENTRIES {
        return Err(ArchiveError::TooManyEntries(archive.len()));
    }
    let mut files = Vec::new();
    let mut problems = Vec::new();
    let mut total: u64 = 0;
    for i in 0..archive.len() {
        let mut entry = match archive.by_index(i) {
            Ok(e) => e,
            Err(e) => {
                problems.push(Problem::new(
                    Severity::Warning,
                    format!("entry {i}"),
                    format!("skipped: {e}"),
                ));
                continue;
            }
        };
        let raw_name = entry.name().to_string();
        let shown = raw_name.escape_debug().to_string();
        if entry.is_dir() {
            continue;
        }
        if raw_name.starts_with("__MACOSX/") || paths::file_name(&raw_name) == ".DS_Store" {
            continue;
        }
        if entry.is_symlink() {
            problems.push(Problem::new(
                Severity::Warning,
                shown,
                "skipped: symbolic links are not imported",
            ));
            continue;
        }
        let path = match paths::normalize_import(&raw_name) {
            Ok(p) => p,
            Err(e) => {
                problems.push(Problem::new(
                    Severity::Warning,
                    shown,
                    format!("skipped: {e}"),
                ));
                continue;
            }
        };
        // Read one byte past the limit to learn whether the entry is over it.
        let mut data = Vec::new();
        let limit = MAX_FILE_BYTES as u64 + 1;
        if let Err(e) = (&mut entry).take(limit).read_to_end(&mut data) {
            problems.push(Problem::new(
                Severity::Warning,
                path,
                format!("skipped: {e}"),
            ));
            continue;
        }
        total += data.len() as u64;
        if total > MAX_ARCHIVE_BYTES {
            return Err(ArchiveError::TooLarge);
        }
        if data.len() as u64 >= limit {
            problems.push(Problem::new(
                Severity::Warning,
                path,
                format!("skipped: the file is larger than {MAX_FILE_BYTES} bytes"),
            ));
            continue;
        }
        files.push(SourceFile { path, bytes: data });
    }
    Ok((files, problems))
}

/// Unpacks an archive and loads every skill in it. `archive_name` (e.g.
/// `pdf-tools.skill`) names the skill when SKILL.md sits at the top of the
/// archive rather than in a folder.
pub fn import_archive(bytes: &[u8], archive_name: &str, mode: ValidationMode) -> LoadOutcome {
    let (files, mut problems) = match read_archive(bytes) {
        Ok(x) => x,
        Err(e) => {
            return LoadOutcome {
                packages: Vec::new(),
                problems: vec![Problem::new(Severity::Error, archive_name, e.to_string())],
            };
        }
    };
    let stem = paths::file_name(archive_name);
    let stem = stem
        .strip_suffix(".zip")
        .or_else(|| stem.strip_suffix(".skill"))
        .unwrap_or(stem);
    let mut outcome = scan::scan(
        files,
        &ScanOptions {
            mode,
            root_name: (!stem.is_empty()).then(|| stem.to_string()),
        },
    );
    problems.append(&mut outcome.problems);
    outcome.problems = problems;
    outcome
}

/// Packs a skill into a zip holding one folder named after the skill, the
/// layout `.skill` files and folder uploads share. Entries are deflated
/// and dated 1980-01-01, so the same package always gives the same bytes.
pub fn write_package_zip(package: &SkillPackage) -> Result<Vec<u8>, ArchiveError> {
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .last_modified_time(DateTime::default())
        .unix_permissions(0o644);
    let folder = if package.folder.is_empty() {
        package.name()
    } else {
        &package.folder
    };
    for file in &package.files {
        writer
            .start_file(format!("{folder}/{}", file.path), options)
            .map_err(|e| ArchiveError::Write(e.to_string()))?;
        writer
            .write_all(&file.bytes)
            .map_err(|e| ArchiveError::Write(e.to_string()))?;
    }
    let cursor = writer
        .finish()
        .map_err(|e| ArchiveError::Write(e.to_string()))?;
    Ok(cursor.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zip with the given raw entry names and contents, stored.
    fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut w = ZipWriter::new(Cursor::new(Vec::new()));
        for (name, data) in entries {
            w.start_file(*name, SimpleFileOptions::default()).unwrap();
            w.write_all(data).unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    #[test]
    fn hostile_entry_names_are_skipped_with_a_reason() {
        let bytes = zip_of(&[
            ("ok/SKILL.md", b"x"),
            ("../evil.md", b"x"),
            ("/abs/ok.md", b"x"),
            ("ok/..\\..\\evil.md", b"x"),
            ("C:/evil.md", b"x"),
            ("__MACOSX/ok/._SKILL.md", b"x"),
            ("ok/.DS_Store", b"x"),
        ]);
        let (files, problems) = read_archive(&bytes).unwrap();
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["ok/SKILL.md", "abs/ok.md"]);
        let messages: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            messages,
            vec![
                "../evil.md: skipped: '..' is not allowed: paths must stay inside the skill's folder",
                "ok/..\\\\..\\\\evil.md: skipped: '..' is not allowed: paths must stay inside the skill's folder",
                "C:/evil.md: skipped: ':' is not allowed (it could be a drive letter, a URL scheme or a stream name)",
            ]
        );
    }

    #[test]
    fn garbage_is_not_a_zip() {
        assert!(matches!(
            read_archive(b"definitely not a zip"),
            Err(ArchiveError::NotZip(_))
        ));
    }

    #[test]
    fn a_zip_bomb_stops_at_the_file_limit() {
        // 20 MiB of zeros deflate to a few KiB.
        let mut w = ZipWriter::new(Cursor::new(Vec::new()));
        let opts = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
        w.start_file("bomb/SKILL.md", opts).unwrap();
        let zeros = vec![0u8; 1024 * 1024];
        for _ in 0..20 {
            w.write_all(&zeros).unwrap();
        }
        let bytes = w.finish().unwrap().into_inner();
        assert!(bytes.len() < 200_000, "compressed to {}", bytes.len());
        let (files, problems) = read_archive(&bytes).unwrap();
        assert_eq!(files, vec![]);
        assert_eq!(
            problems.iter().map(ToString::to_string).collect::<Vec<_>>(),
            vec![format!(
                "bomb/SKILL.md: skipped: the file is larger than {MAX_FILE_BYTES} bytes"
            )]
        );
    }
}
