//! Telling text from binary, and decoding text whatever its encoding.
//!
//! Detection looks at the first bytes of a file: a byte-order mark decides
//! outright; otherwise UTF-8 that validates is UTF-8, NUL-heavy content is
//! UTF-16 when its zeros fall on one side or binary when they do not, known
//! binary signatures (PNG, PDF, ZIP, …) are binary, and anything else with
//! few control characters is read as Windows-1252, the usual encoding of
//! old Western text files. Big files are read in ranges; a range that cuts a
//! UTF-8 or UTF-16 character is trimmed to whole characters and says which
//! bytes it covered, so the next range starts exactly where it left off.

use serde::{Deserialize, Serialize};

/// How many leading bytes detection looks at.
pub const SNIFF_BYTES: usize = 8192;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Encoding {
    Utf8,
    /// UTF-8 with a byte-order mark.
    Utf8Bom,
    Utf16Le,
    Utf16Be,
    Windows1252,
}

impl Encoding {
    pub fn label(self) -> &'static str {
        match self {
            Encoding::Utf8 => "UTF-8",
            Encoding::Utf8Bom => "UTF-8 (with BOM)",
            Encoding::Utf16Le => "UTF-16LE",
            Encoding::Utf16Be => "UTF-16BE",
            Encoding::Windows1252 => "Windows-1252",
        }
    }

    /// The length of the byte-order mark at the start of the file.
    pub fn bom_len(self) -> usize {
        match self {
            Encoding::Utf8Bom => 3,
            Encoding::Utf16Le | Encoding::Utf16Be => 2,
            Encoding::Utf8 | Encoding::Windows1252 => 0,
        }
    }

    fn unit(self) -> usize {
        match self {
            Encoding::Utf16Le | Encoding::Utf16Be => 2,
            Encoding::Utf8 | Encoding::Utf8Bom | Encoding::Windows1252 => 1,
        }
    }
}

/// What the first bytes of a file say it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sniffed {
    Text(Encoding),
    /// Binary; the string names the format when it is a known one.
    Binary(&'static str),
}

/// Looks at the head of a file. `complete` is true when `head` is the
/// whole file, so a truncated UTF-8 sequence at its end is an error rather
/// than the cut of the sniffing window.
pub fn sniff(head: &[u8], complete: bool) -> Sniffed {
    if head.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Sniffed::Text(Encoding::Utf8Bom);
    }
    if head.starts_with(&[0xFF, 0xFE]) && !head.starts_with(&[0xFF, 0xFE, 0, 0]) {
        return Sniffed::Text(Encoding::Utf16Le);
    }
    if head.starts_with(&[0xFE, 0xFF]) {
        return Sniffed::Text(Encoding::Utf16Be);
    }
    if let Some(kind) = signature(head) {
        return Sniffed::Binary(kind);
    }
    let window = &head[..head.len().min(SNIFF_BYTES)];
    let complete = complete && window.len() == head.len();
    if window.contains(&0) {
        return utf16_without_bom(window).map_or(Sniffed::Binary("binary data"), Sniffed::Text);
    }
    if valid_utf8_prefix(window, complete) {
        return if control_ratio_too_high(window) {
            Sniffed::Binary("binary data")
        } else {
            Sniffed::Text(Encoding::Utf8)
        };
    }
    if control_ratio_too_high(window) {
        Sniffed::Binary("binary data")
    } else {
        Sniffed::Text(Encoding::Windows1252)
    }
}

/// Known binary formats by their magic bytes.
fn signature(head: &[u8]) -> Option<&'static str> {
    const SIGNATURES: &[(&[u8], &str)] = &[
        (b"\x89PNG\r\n\x1a\n", "PNG image"),
        (b"\xFF\xD8\xFF", "JPEG image"),
        (b"GIF87a", "GIF image"),
        (b"GIF89a", "GIF image"),
        (b"%PDF-", "PDF document"),
        (b"PK\x03\x04", "ZIP archive (or an Office document)"),
        (b"\x1F\x8B", "gzip archive"),
        (b"7z\xBC\xAF\x27\x1C", "7-Zip archive"),
        (b"\x00asm", "WebAssembly module"),
        (b"\x7FELF", "ELF executable"),
        (b"MZ", "Windows executable"),
        (b"SQLite format 3\0", "SQLite database"),
        (b"OggS", "Ogg media"),
        (b"fLaC", "FLAC audio"),
        (b"ID3", "MP3 audio"),
        (b"RIFF", "RIFF media (WAV, AVI or WebP)"),
        (b"\x1A\x45\xDF\xA3", "Matroska or WebM video"),
        (b"wOFF", "WOFF font"),
        (b"wOF2", "WOFF2 font"),
        (b"BM", "BMP image"),
    ];
    // "MZ" and "BM" are short; demand a NUL or high byte soon after so a
    // text file starting with those letters is not taken for binary.
    SIGNATURES
        .iter()
        .find(|(magic, _)| {
            head.starts_with(magic)
                && (magic.len() > 2
                    || head[magic.len()..]
                        .iter()
                        .take(64)
                        .any(|b| *b == 0 || *b >= 0x80))
        })
        .map(|(_, kind)| *kind)
}

/// UTF-16 text without a BOM has its zeros on one side: the high bytes of
/// ASCII characters.
fn utf16_without_bom(window: &[u8]) -> Option<Encoding> {
    if window.len() < 4 {
        return None;
    }
    let pairs = window.len() / 2;
    let even_zeros = window.iter().step_by(2).filter(|b| **b == 0).count();
    let odd_zeros = window
        .iter()
        .skip(1)
        .step_by(2)
        .filter(|b| **b == 0)
        .count();
    let mostly = |n: usize| n * 10 >= pairs * 4;
    let rarely = |n: usize| n * 20 <= pairs;
    let guess = if mostly(odd_zeros) && rarely(even_zeros) {
        Encoding::Utf16Le
    } else if mostly(even_zeros) && rarely(odd_zeros) {
        Encoding::Utf16Be
    } else {
        return None;
    };
    let text = decode_utf16(&window[..pairs * 2], guess == Encoding::Utf16Le);
    (!control_ratio_too_high(text.as_bytes())).then_some(guess)
}

/// Valid UTF-8, allowing a sequence cut by the end of the window when the
/// window is not the whole file.
fn valid_utf8_prefix(bytes: &[u8], complete: bool) -> bool {
    match std::str::from_utf8(bytes) {
        Ok(_) => true,
        Err(e) => !complete && e.error_len().is_none() && bytes.len() - e.valid_up_to() < 4,
    }
}

/// More than 10% control characters other than whitespace and escape.
fn control_ratio_too_high(bytes: &[u8]) -> bool {
    if bytes.is_empty() {
        return false;
    }
    let controls = bytes
        .iter()
        .filter(|b| **b < 0x20 && !matches!(**b, b'\t' | b'\n' | b'\r' | 0x0C | 0x1B))
        .count();
    controls * 10 > bytes.len()
}

/// A decoded range of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    pub text: String,
    /// The first byte the text covers.
    pub start: u64,
    /// One past the last byte the text covers; the next range starts here.
    pub end: u64,
    /// Characters that could not be decoded and were replaced by U+FFFD.
    pub replaced: usize,
}

/// Decodes `bytes`, which were read from `offset` in a file of
/// `file_size` bytes in `encoding`. The range is trimmed to whole
/// characters: a leading partial character is skipped and a trailing one
/// left for the next range (unless the range ends the file).
pub fn decode_range(bytes: &[u8], offset: u64, file_size: u64, encoding: Encoding) -> Decoded {
    let at_end = offset + bytes.len() as u64 >= file_size;
    // Skip the BOM when the range covers it.
    let bom = encoding.bom_len() as u64;
    let mut lead = if offset < bom {
        (bom - offset).min(bytes.len() as u64) as usize
    } else {
        0
    };
    let unit = encoding.unit();
    if unit == 2 {
        // Keep UTF-16 ranges on code-unit boundaries counted from the BOM.
        let from_text_start = offset + lead as u64 - bom.min(offset + lead as u64);
        if from_text_start % 2 == 1 {
            lead += 1;
        }
    }
    let lead = lead.min(bytes.len());
    let body = &bytes[lead..];
    // (text, bytes skipped at the front, bytes used after them, replaced)
    let (text, skip, used, replaced) = match encoding {
        Encoding::Utf8 | Encoding::Utf8Bom => {
            let skip = if lead == 0 && offset > 0 {
                body.iter()
                    .take(3)
                    .take_while(|b| (**b & 0xC0) == 0x80)
                    .count()
            } else {
                0
            };
            let body = &body[skip..];
            let usable = if at_end {
                body.len()
            } else {
                complete_utf8_len(body)
            };
            let (text, replaced) = lossy_utf8(&body[..usable]);
            (text, skip, usable, replaced)
        }
        Encoding::Utf16Le | Encoding::Utf16Be => {
            let le = encoding == Encoding::Utf16Le;
            let mut usable = body.len() - body.len() % 2;
            // Don't end on the first half of a surrogate pair.
            if !at_end && usable >= 2 {
                let last = if le {
                    u16::from_le_bytes([body[usable - 2], body[usable - 1]])
                } else {
                    u16::from_be_bytes([body[usable - 2], body[usable - 1]])
                };
                if (0xD800..0xDC00).contains(&last) {
                    usable -= 2;
                }
            }
            let text = decode_utf16(&body[..usable], le);
            let replaced = text.chars().filter(|c| *c == '\u{FFFD}').count();
            let used = if at_end { body.len() } else { usable };
            (text, 0, used, replaced)
        }
        Encoding::Windows1252 => (
            body.iter().map(|b| windows_1252(*b)).collect(),
            0,
            body.len(),
            0,
        ),
    };
    Decoded {
        text,
        start: offset + (lead + skip) as u64,
        end: offset + (lead + skip + used) as u64,
        replaced,
    }
}

/// The length of the longest prefix that does not end inside a UTF-8
/// sequence.
fn complete_utf8_len(bytes: &[u8]) -> usize {
    let n = bytes.len();
    for back in 1..=3.min(n) {
        let b = bytes[n - back];
        if b & 0xC0 == 0x80 {
            continue;
        }
        let need = match b {
            0x00..=0x7F => 1,
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => return n,
        };
        return if need > back { n - back } else { n };
    }
    n
}

fn lossy_utf8(bytes: &[u8]) -> (String, usize) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (s.to_string(), 0),
        Err(_) => {
            let s = String::from_utf8_lossy(bytes).into_owned();
            let replaced = s.chars().filter(|c| *c == '\u{FFFD}').count();
            (s, replaced)
        }
    }
}

fn decode_utf16(bytes: &[u8], le: bool) -> String {
    let units = bytes.chunks_exact(2).map(|p| {
        if le {
            u16::from_le_bytes([p[0], p[1]])
        } else {
            u16::from_be_bytes([p[0], p[1]])
        }
    });
    char::decode_utf16(units)
        .map(|r| r.unwrap_or('\u{FFFD}'))
        .collect()
}

/// Windows-1252: Latin-1 with printable characters in 0x80–0x9F.
fn windows_1252(b: u8) -> char {
    const HIGH: [char; 32] = [
        '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8D}', 'Ž',
        '\u{8F}', '\u{90}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9D}',
        'ž', 'Ÿ',
    ];
    match b {
        0x80..=0x9F => HIGH[(b - 0x80) as usize],
        _ => b as char,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection() {
        let utf16le: Vec<u8> = "hello, world\n"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let utf16be: Vec<u8> = "hello, world\n"
            .encode_utf16()
            .flat_map(u16::to_be_bytes)
            .collect();
        let cases: Vec<(&str, Vec<u8>, Sniffed)> = vec![
            (
                "ascii",
                b"a,b\n1,2\n".to_vec(),
                Sniffed::Text(Encoding::Utf8),
            ),
            (
                "utf-8",
                "héllo ✓ 😀".as_bytes().to_vec(),
                Sniffed::Text(Encoding::Utf8),
            ),
            ("empty", vec![], Sniffed::Text(Encoding::Utf8)),
            (
                "utf-8 bom",
                b"\xEF\xBB\xBFx".to_vec(),
                Sniffed::Text(Encoding::Utf8Bom),
            ),
            (
                "utf-16le bom",
                b"\xFF\xFEh\0i\0".to_vec(),
                Sniffed::Text(Encoding::Utf16Le),
            ),
            (
                "utf-16be bom",
                b"\xFE\xFF\0h\0i".to_vec(),
                Sniffed::Text(Encoding::Utf16Be),
            ),
            ("utf-16le bare", utf16le, Sniffed::Text(Encoding::Utf16Le)),
            ("utf-16be bare", utf16be, Sniffed::Text(Encoding::Utf16Be)),
            (
                "latin-1",
                b"caf\xE9 cr\xE8me \x93quoted\x94".to_vec(),
                Sniffed::Text(Encoding::Windows1252),
            ),
            (
                "png",
                b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec(),
                Sniffed::Binary("PNG image"),
            ),
            (
                "pdf",
                b"%PDF-1.7\n".to_vec(),
                Sniffed::Binary("PDF document"),
            ),
            (
                "zip",
                b"PK\x03\x04\x14\0".to_vec(),
                Sniffed::Binary("ZIP archive (or an Office document)"),
            ),
            (
                "nul-laden",
                vec![0, 1, 2, 3, 0, 5, 0, 0, 9, 0, 0, 0],
                Sniffed::Binary("binary data"),
            ),
            (
                "control-laden",
                vec![1, 2, 3, 4, 5, 6, 7, 8, b'a', b'b'],
                Sniffed::Binary("binary data"),
            ),
            (
                "MZ in prose",
                b"MZ is a prefix in this text".to_vec(),
                Sniffed::Text(Encoding::Utf8),
            ),
            (
                "BM in prose",
                b"BMW makes cars".to_vec(),
                Sniffed::Text(Encoding::Utf8),
            ),
        ];
        for (name, bytes, want) in cases {
            assert_eq!(sniff(&bytes, true), want, "{name}");
        }
    }

    #[test]
    fn a_sniffing_window_may_cut_a_character() {
        let bytes = "ab✓".as_bytes();
        let cut = &bytes[..3];
        assert_eq!(sniff(cut, false), Sniffed::Text(Encoding::Utf8));
        assert_eq!(sniff(cut, true), Sniffed::Text(Encoding::Windows1252));
    }

    /// Reads a whole file range by range and checks the pieces join up.
    fn read_in_ranges(file: &[u8], encoding: Encoding, range: usize) -> (String, Vec<(u64, u64)>) {
        let mut offset = 0u64;
        let mut text = String::new();
        let mut spans = Vec::new();
        while offset < file.len() as u64 {
            let end = (offset as usize + range).min(file.len());
            let d = decode_range(
                &file[offset as usize..end],
                offset,
                file.len() as u64,
                encoding,
            );
            assert!(
                d.end > offset || d.end == file.len() as u64,
                "progress at {offset}"
            );
            spans.push((d.start, d.end));
            text.push_str(&d.text);
            offset = d.end;
        }
        (text, spans)
    }

    #[test]
    fn ranges_join_into_the_whole_text() {
        let text = "héllo ✓ wörld 😀 end";
        let cases: Vec<(&str, Vec<u8>, Encoding)> = vec![
            ("utf-8", text.as_bytes().to_vec(), Encoding::Utf8),
            (
                "utf-8 bom",
                [b"\xEF\xBB\xBF".as_slice(), text.as_bytes()].concat(),
                Encoding::Utf8Bom,
            ),
            (
                "utf-16le bom",
                [
                    vec![0xFF, 0xFE],
                    text.encode_utf16().flat_map(u16::to_le_bytes).collect(),
                ]
                .concat(),
                Encoding::Utf16Le,
            ),
            (
                "utf-16be bom",
                [
                    vec![0xFE, 0xFF],
                    text.encode_utf16().flat_map(u16::to_be_bytes).collect(),
                ]
                .concat(),
                Encoding::Utf16Be,
            ),
        ];
        for (name, file, encoding) in cases {
            for range in [1, 2, 3, 4, 5, 7, 64] {
                let (got, _) = read_in_ranges(&file, encoding, range.max(4));
                assert_eq!(got, text, "{name} in ranges of {range}");
            }
        }
    }

    #[test]
    fn a_range_is_trimmed_to_whole_characters() {
        // "a✓b": a=0, ✓=1..4, b=4
        let file = "a✓b".as_bytes();
        let cases = [
            // (offset, len) -> (text, start, end)
            ((0, 2), ("a", 0, 1)),
            ((0, 4), ("a✓", 0, 4)),
            ((2, 3), ("b", 4, 5)),
            ((1, 4), ("✓b", 1, 5)),
        ];
        for ((offset, len), (text, start, end)) in cases {
            let d = decode_range(
                &file[offset..offset + len],
                offset as u64,
                5,
                Encoding::Utf8,
            );
            assert_eq!(
                (d.text.as_str(), d.start, d.end),
                (text, start, end),
                "{offset}+{len}"
            );
        }
    }

    #[test]
    fn windows_1252_and_broken_utf8() {
        let d = decode_range(b"caf\xE9 \x80 \x93", 0, 9, Encoding::Windows1252);
        assert_eq!(d.text, "café € “");
        let d = decode_range(b"ok\xFFok", 0, 5, Encoding::Utf8);
        assert_eq!((d.text.as_str(), d.replaced), ("ok\u{FFFD}ok", 1));
    }
}
