//! The file skills' pure parts: their arguments, and how listings, reads
//! and search results read. The browser side walks the granted handles and
//! hands the bytes and names here.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::encoding::{Decoded, Encoding};
use super::grant::RelPath;
use crate::util::display;

/// How much `read_file` returns when no length is given.
pub const READ_DEFAULT_BYTES: u64 = 64 * 1024;
/// The most one `read_file` call returns.
pub const READ_MAX_BYTES: u64 = 1024 * 1024;
/// The most entries one listing returns.
pub const LIST_MAX_ENTRIES: usize = 2000;
/// Search skips files bigger than this.
pub const SEARCH_MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
pub const SEARCH_DEFAULT_RESULTS: usize = 100;
pub const SEARCH_MAX_RESULTS: usize = 1000;
/// The longest matching line shown, in characters.
const LINE_CHARS: usize = 240;

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ReadArgs {
    pub path: String,
    #[serde(default)]
    pub offset: u64,
    #[serde(default)]
    pub length: Option<u64>,
}

impl ReadArgs {
    pub fn length(&self) -> u64 {
        self.length
            .unwrap_or(READ_DEFAULT_BYTES)
            .clamp(1, READ_MAX_BYTES)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ListArgs {
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct SearchArgs {
    pub query: String,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub case_sensitive: bool,
    #[serde(default)]
    pub max_results: Option<usize>,
}

impl SearchArgs {
    pub fn max_results(&self) -> usize {
        self.max_results
            .unwrap_or(SEARCH_DEFAULT_RESULTS)
            .clamp(1, SEARCH_MAX_RESULTS)
    }
}

/// Parses a skill's arguments, which the schema already checked.
pub fn parse_args<T: for<'de> Deserialize<'de>>(arguments: &Value) -> Result<T, String> {
    serde_json::from_value(arguments.clone()).map_err(|e| format!("invalid input: {e}"))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    File,
    Directory,
}

/// One entry of a listing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub path: String,
    pub kind: EntryKind,
    /// Bytes; for folders, the total of the files listed below them.
    pub size: u64,
}

/// A listing, as the model reads it: one path per line, folders ending in
/// `/`, sizes in a column after the paths.
pub fn listing_text(root: &str, entries: &[Entry], truncated: bool) -> String {
    let width = entries
        .iter()
        .filter(|e| e.kind == EntryKind::File)
        .map(|e| e.path.chars().count())
        .max()
        .unwrap_or(0)
        .min(48);
    let files = entries.iter().filter(|e| e.kind == EntryKind::File).count();
    let total: u64 = entries
        .iter()
        .filter(|e| e.kind == EntryKind::File)
        .map(|e| e.size)
        .sum();
    let mut out = format!(
        "{root}: {files} file{}, {}\n",
        if files == 1 { "" } else { "s" },
        display::bytes(total as f64)
    );
    for e in entries {
        match e.kind {
            EntryKind::Directory => out.push_str(&format!("{}/\n", e.path)),
            EntryKind::File => out.push_str(&format!(
                "{:<width$}  {}\n",
                e.path,
                display::bytes(e.size as f64)
            )),
        }
    }
    if truncated {
        out.push_str(&format!(
            "[… listing stopped at {LIST_MAX_ENTRIES} entries; list a subfolder to see more]\n"
        ));
    }
    out.trim_end().to_string()
}

/// The text of a `read_file` answer: a header line, then the text.
pub fn read_text(path: &RelPath, size: u64, encoding: Encoding, decoded: &Decoded) -> String {
    let whole = decoded.start <= encoding.bom_len() as u64 && decoded.end >= size;
    let mut out = if whole {
        format!(
            "{path} ({}, {})\n",
            encoding.label(),
            display::bytes(size as f64)
        )
    } else {
        format!(
            "{path} ({}, bytes {}–{} of {})\n",
            encoding.label(),
            decoded.start,
            decoded.end,
            size
        )
    };
    out.push_str(&decoded.text);
    if decoded.end < size {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!(
            "[… {} more; read on with offset {}]",
            display::bytes((size - decoded.end) as f64),
            decoded.end
        ));
    }
    if decoded.replaced > 0 {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!(
            "[{} could not be decoded and {} as �]",
            crate::util::display::count(decoded.replaced, "character", "characters"),
            if decoded.replaced == 1 {
                "shows"
            } else {
                "show"
            }
        ));
    }
    out
}

/// The refusal for a binary file.
pub fn binary_refusal(path: &RelPath, kind: &str, size: u64) -> String {
    format!(
        "'{path}' is binary ({kind}, {}); read_file returns text only. To work with it, run Python with files: [\"{path}\"] and open '{}' in binary mode ('rb').",
        display::bytes(size as f64),
        path.mount_path()
    )
}

/// A line that matched a search.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hit {
    pub path: String,
    /// Counted from 1.
    pub line: usize,
    pub text: String,
}

/// Finds the lines of `text` that contain `query`.
pub fn search_text(
    text: &str,
    query: &str,
    case_sensitive: bool,
    max: usize,
) -> Vec<(usize, String)> {
    if query.is_empty() || max == 0 {
        return Vec::new();
    }
    let needle = if case_sensitive {
        query.to_string()
    } else {
        query.to_lowercase()
    };
    let mut hits = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let matched = if case_sensitive {
            line.contains(&needle)
        } else {
            line.to_lowercase().contains(&needle)
        };
        if matched {
            hits.push((i + 1, shorten_line(line, query, case_sensitive)));
            if hits.len() >= max {
                break;
            }
        }
    }
    hits
}

/// A long line cut to a window around the match.
fn shorten_line(line: &str, query: &str, case_sensitive: bool) -> String {
    let line = line.trim_end_matches('\r');
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= LINE_CHARS {
        return line.to_string();
    }
    let position = if case_sensitive {
        line.find(query)
    } else {
        line.to_lowercase().find(&query.to_lowercase())
    };
    // Byte offsets in the lowercased line can differ; count in chars.
    let at = position
        .map(|byte| line[..byte.min(line.len())].chars().count())
        .unwrap_or(0);
    let start = at.saturating_sub(LINE_CHARS / 3);
    let end = (start + LINE_CHARS).min(chars.len());
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.extend(&chars[start..end]);
    if end < chars.len() {
        out.push('…');
    }
    out
}

/// Search results as the model reads them: `path:line: text`.
pub fn search_report(
    query: &str,
    hits: &[Hit],
    scanned: usize,
    skipped: &[String],
    capped: bool,
) -> String {
    let mut out = if hits.is_empty() {
        format!(
            "no matches for {query:?} in {}",
            crate::util::display::count(scanned, "file", "files")
        )
    } else {
        format!(
            "{} match{} for {query:?} in {}",
            hits.len(),
            if hits.len() == 1 { "" } else { "es" },
            crate::util::display::count(scanned, "file", "files")
        )
    };
    for h in hits {
        out.push_str(&format!("\n{}:{}: {}", h.path, h.line, h.text));
    }
    if capped {
        out.push_str("\n[… more matches not shown; narrow the search or raise max_results]");
    }
    if !skipped.is_empty() {
        let shown: Vec<&str> = skipped.iter().take(20).map(String::as_str).collect();
        out.push_str(&format!(
            "\nnot searched: {}{}",
            shown.join("; "),
            if skipped.len() > shown.len() {
                format!("; and {} more", skipped.len() - shown.len())
            } else {
                String::new()
            }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin::code::encoding::decode_range;
    use serde_json::json;

    #[test]
    fn listings_read_as_paths_and_sizes() {
        let entries = vec![
            Entry {
                path: "fixtures/a.txt".into(),
                kind: EntryKind::File,
                size: 12,
            },
            Entry {
                path: "fixtures/sub".into(),
                kind: EntryKind::Directory,
                size: 2000,
            },
            Entry {
                path: "fixtures/sub/b.csv".into(),
                kind: EntryKind::File,
                size: 2000,
            },
        ];
        assert_eq!(
            listing_text("fixtures", &entries, false),
            "fixtures: 2 files, 2.0 KB\nfixtures/a.txt      12 B\nfixtures/sub/\nfixtures/sub/b.csv  2.0 KB"
        );
        assert_eq!(
            listing_text("empty", &[], true),
            "empty: 0 files, 0 B\n[… listing stopped at 2000 entries; list a subfolder to see more]"
        );
    }

    #[test]
    fn reads_say_what_they_cover() {
        let path = RelPath::parse("fixtures/a.txt").unwrap();
        let whole = decode_range(b"hello\n", 0, 6, Encoding::Utf8);
        assert_eq!(
            read_text(&path, 6, Encoding::Utf8, &whole),
            "fixtures/a.txt (UTF-8, 6 B)\nhello\n"
        );
        let part = decode_range(b"hello", 0, 100_000, Encoding::Utf8);
        assert_eq!(
            read_text(&path, 100_000, Encoding::Utf8, &part),
            "fixtures/a.txt (UTF-8, bytes 0–5 of 100000)\nhello\n[… 100.0 KB more; read on with offset 5]"
        );
        let bom = decode_range(b"\xEF\xBB\xBFhi", 0, 5, Encoding::Utf8Bom);
        assert_eq!(
            read_text(&path, 5, Encoding::Utf8Bom, &bom),
            "fixtures/a.txt (UTF-8 (with BOM), 5 B)\nhi"
        );
        assert_eq!(
            binary_refusal(&RelPath::parse("pics/a.png").unwrap(), "PNG image", 2048),
            "'pics/a.png' is binary (PNG image, 2.0 KB); read_file returns text only. To work with it, run Python with files: [\"pics/a.png\"] and open '/mnt/data/pics/a.png' in binary mode ('rb')."
        );
    }

    #[test]
    fn search_finds_lines() {
        let text = "alpha\nBeta gamma\r\ngamma ray\n";
        type Case<'a> = (&'a str, bool, usize, Vec<(usize, &'a str)>);
        let cases: Vec<Case> = vec![
            (
                "gamma",
                false,
                10,
                vec![(2, "Beta gamma"), (3, "gamma ray")],
            ),
            ("beta", false, 10, vec![(2, "Beta gamma")]),
            ("beta", true, 10, vec![]),
            ("gamma", false, 1, vec![(2, "Beta gamma")]),
            ("", false, 10, vec![]),
        ];
        for (query, case, max, want) in cases {
            let got = search_text(text, query, case, max);
            let want: Vec<(usize, String)> =
                want.into_iter().map(|(l, t)| (l, t.to_string())).collect();
            assert_eq!(got, want, "{query} {case} {max}");
        }
        let long = format!("{}needle{}", "x".repeat(500), "y".repeat(500));
        let got = search_text(&long, "NEEDLE", false, 1);
        assert_eq!(got.len(), 1);
        assert!(
            got[0].1.contains("needle") && got[0].1.starts_with('…') && got[0].1.ends_with('…')
        );
        assert_eq!(got[0].1.chars().count(), LINE_CHARS + 2);
    }

    #[test]
    fn search_reports() {
        let hits = vec![Hit {
            path: "f/a.txt".into(),
            line: 3,
            text: "gamma ray".into(),
        }];
        assert_eq!(
            search_report(
                "gamma",
                &hits,
                2,
                &["f/big.log: 9.0 MB, over the 8.4 MB search limit".into()],
                false
            ),
            "1 match for \"gamma\" in 2 files\nf/a.txt:3: gamma ray\nnot searched: f/big.log: 9.0 MB, over the 8.4 MB search limit"
        );
        assert_eq!(
            search_report("x", &[], 0, &[], false),
            "no matches for \"x\" in 0 files"
        );
    }

    #[test]
    fn arguments_have_defaults_and_bounds() {
        let read: ReadArgs = parse_args(&json!({"path": "a"})).unwrap();
        assert_eq!((read.offset, read.length()), (0, READ_DEFAULT_BYTES));
        let read: ReadArgs = parse_args(&json!({"path": "a", "length": 99_999_999})).unwrap();
        assert_eq!(read.length(), READ_MAX_BYTES);
        let search: SearchArgs = parse_args(&json!({"query": "q", "max_results": 0})).unwrap();
        assert_eq!(search.max_results(), 1);
        assert_eq!(
            parse_args::<ReadArgs>(&json!({})),
            Err("invalid input: missing field `path`".to_string())
        );
    }
}
