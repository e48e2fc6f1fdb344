//! Text normalisation for discovery: words, stop words, a light English
//! stemmer and a small thesaurus of task vocabulary.
//!
//! Everything here is deterministic and table-tested; the index and the
//! query side both go through the same functions so their terms agree.

use std::collections::HashMap;
use std::sync::OnceLock;

/// Splits `text` into lowercase words.
///
/// Words break at anything that is not a letter or digit, and inside
/// identifiers at camelCase humps (`createIssue` → `create`, `issue`;
/// `HTMLParser` → `html`, `parser`). Letters and digits stay together
/// (`base64`, `mp3`). A few symbols carry meaning in requests and become
/// words: `%` → `percent`, currency signs → `currency`.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = text.chars().collect();
    let flush = |current: &mut String, out: &mut Vec<String>| {
        if !current.is_empty() {
            let w = std::mem::take(current);
            // Single letters carry no meaning ("s" from "what's"); single
            // digits may ("5 miles").
            if w.chars().count() > 1 || w.chars().all(|c| c.is_ascii_digit()) {
                out.push(w);
            }
        }
    };
    for (i, &c) in chars.iter().enumerate() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && !current.is_empty() {
                let prev = chars[i - 1];
                let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
                if prev.is_lowercase() || (prev.is_uppercase() && next_lower) {
                    flush(&mut current, &mut out);
                }
            }
            current.extend(c.to_lowercase());
            continue;
        }
        flush(&mut current, &mut out);
        match c {
            '%' => out.push("percent".into()),
            '$' | '€' | '£' | '¥' | '₹' => out.push("currency".into()),
            _ => {}
        }
    }
    flush(&mut current, &mut out);
    out
}

/// Words that say nothing about which skill is wanted.
const STOP_WORDS: &[&str] = &[
    "a",
    "able",
    "about",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "anything",
    "are",
    "as",
    "at",
    "be",
    "been",
    "being",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doesn",
    "doing",
    "don",
    "each",
    "etc",
    "for",
    "from",
    "get",
    "give",
    "go",
    "got",
    "had",
    "has",
    "have",
    "help",
    "hey",
    "hi",
    "how",
    "i",
    "id",
    "if",
    "im",
    "in",
    "into",
    "is",
    "it",
    "its",
    "ive",
    "just",
    "kind",
    "know",
    "let",
    "lets",
    "like",
    "ll",
    "make",
    "may",
    "me",
    "might",
    "mine",
    "more",
    "must",
    "my",
    "need",
    "needs",
    "of",
    "ok",
    "okay",
    "on",
    "onto",
    "or",
    "our",
    "please",
    "pls",
    "plz",
    "quick",
    "quickly",
    "re",
    "really",
    "should",
    "skill",
    "skills",
    "so",
    "some",
    "somehow",
    "someone",
    "something",
    "sort",
    "than",
    "thank",
    "thanks",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "thing",
    "things",
    "this",
    "those",
    "to",
    "tool",
    "tools",
    "up",
    "us",
    "use",
    "using",
    "ve",
    "very",
    "wanna",
    "want",
    "was",
    "way",
    "we",
    "were",
    "what",
    "whats",
    "when",
    "where",
    "which",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
];

pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

fn is_vowel(b: u8) -> bool {
    matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'y')
}

fn strip(s: &mut String, suffix: &str, min_rest: usize) -> bool {
    if s.len() >= suffix.len() + min_rest && s.ends_with(suffix) {
        let rest = &s[..s.len() - suffix.len()];
        if rest.bytes().any(is_vowel) {
            s.truncate(rest.len());
            return true;
        }
    }
    false
}

/// Drops one of a doubled final consonant ("runn" → "run"), except the
/// doubles English keeps ("call", "pass", "buzz").
fn undouble(s: &mut String) {
    let b = s.as_bytes();
    let n = b.len();
    if n >= 3
        && b[n - 1] == b[n - 2]
        && !is_vowel(b[n - 1])
        && !matches!(b[n - 1], b'l' | b's' | b'z')
    {
        s.pop();
    }
}

/// A light English stemmer: enough to make "notes", "note" and "noting",
/// or "translate" and "translation", meet, without Porter's appetite for
/// turning unrelated words into one. Words with anything but ASCII
/// lowercase letters (digits, other scripts) are left alone.
pub fn stem(word: &str) -> String {
    let mut s = word.to_string();
    if s.len() <= 3 || !s.bytes().all(|b| b.is_ascii_lowercase()) {
        return s;
    }
    // Plurals and third person.
    if s.ends_with("sses") {
        s.truncate(s.len() - 2);
    } else if s.len() > 4 && s.ends_with("ies") {
        s.truncate(s.len() - 3);
        s.push('y');
    } else if s.ends_with('s')
        && !s.ends_with("ss")
        && !s.ends_with("us")
        && !s.ends_with("is")
        && s != "news"
    {
        s.pop();
    }
    // Past and progressive.
    if s.len() > 4 && s.ends_with("ied") {
        s.truncate(s.len() - 3);
        s.push('y');
    } else if strip(&mut s, "ing", 4) || strip(&mut s, "ed", 4) {
        undouble(&mut s);
    }
    // Adverbs, agents and actions.
    let _ = strip(&mut s, "ly", 4) || strip(&mut s, "er", 5);
    if s.len() >= 8 && (s.ends_with("tion") || s.ends_with("sion")) {
        s.truncate(s.len() - 3);
    }
    // A final silent e, so "create" meets "creating".
    if s.len() >= 4 && s.ends_with('e') {
        s.pop();
    }
    s
}

/// Groups of words that ask for the same capability. Query words are
/// expanded with the other members of their groups, at a discount, so a
/// request for a "picture" finds image skills. The groups are general task
/// vocabulary, not tuned to any catalog.
const SYNONYM_GROUPS: &[&[&str]] = &[
    &[
        "calculate",
        "calculator",
        "compute",
        "math",
        "arithmetic",
        "equation",
        "formula",
    ],
    &["percent", "percentage"],
    &["convert", "conversion", "converter", "transform"],
    &["email", "mail", "inbox"],
    &["message", "chat", "dm"],
    &["picture", "image", "photo", "pic", "img", "photograph"],
    &["resize", "scale", "shrink", "enlarge"],
    &["compress", "zip", "archive", "unzip"],
    &["todo", "task", "chore"],
    &["remind", "reminder", "alarm"],
    &["meeting", "appointment", "event"],
    &["calendar", "schedule", "agenda"],
    &["weather", "forecast"],
    &["temperature", "temp"],
    &["translate", "translation", "translator"],
    &["spreadsheet", "sheet", "excel", "xlsx"],
    &["repo", "repository"],
    &["issue", "ticket", "bug"],
    &["delete", "remove", "erase", "trash"],
    &["create", "make", "add", "new"],
    &["find", "search", "lookup", "locate"],
    &["summarize", "summarise", "summary", "tldr", "digest"],
    &["shorten", "shortener", "short"],
    &["website", "site", "webpage", "web", "page"],
    &["download", "fetch", "retrieve", "grab"],
    &["note", "memo", "jot"],
    &["remember", "memory", "recall", "memorize"],
    &["currency", "money", "exchange", "forex"],
    &["price", "cost"],
    &["stock", "ticker", "shares"],
    &["crypto", "bitcoin", "btc", "cryptocurrency"],
    &["timezone", "tz"],
    &["audio", "sound", "voice", "speech"],
    &["transcribe", "transcription", "dictation"],
    &["video", "movie", "clip"],
    &["music", "song", "playlist"],
    &["password", "passphrase", "passcode"],
    &["uuid", "guid"],
    &["hash", "checksum"],
    &["encrypt", "encryption", "cipher"],
    &["code", "program", "script", "snippet"],
    &["run", "execute", "exec", "eval"],
    &["python", "py"],
    &["javascript", "js"],
    &["regex", "regexp"],
    &["database", "db", "sql"],
    &["map", "directions", "route", "navigate"],
    &["location", "place", "address", "geocode"],
    &["news", "headlines"],
    &["wikipedia", "wiki", "encyclopedia"],
    &["dictionary", "define", "definition", "meaning"],
    &["synonym", "thesaurus"],
    &["qr", "qrcode", "barcode"],
    &["contact", "people", "person"],
    &["phone", "sms", "text"],
    &["notify", "notification", "alert"],
    &["deploy", "deployment", "release"],
    &["uptime", "ping", "reachable"],
    &["dns", "domain", "whois"],
    &["color", "colour", "palette"],
    &["diagram", "chart", "graph", "plot", "visualize"],
    &["markdown", "md"],
    &["diff", "compare", "difference"],
    &["format", "prettify", "beautify"],
    &["invoice", "bill", "receipt"],
    &["expense", "spending", "budget"],
    &["recipe", "cook", "cooking"],
    &["flight", "airline", "plane"],
    &["hotel", "booking", "reservation"],
    &["clipboard", "copy", "paste"],
    &["bookmark", "favorite"],
    &["rss", "feed"],
    &["kubernetes", "k8s"],
    &["docker", "container"],
    &["pipeline", "ci", "build"],
    &["distance", "length"],
    &["weight", "mass"],
    &["pdf", "document"],
    &["doc", "document", "docs"],
    &["folder", "directory", "dir"],
    &["file", "files"],
    &["read", "open", "view"],
    &["write", "save", "store"],
    &["list", "show", "display"],
    &["edit", "update", "modify", "change"],
    &["count", "tally"],
    &["random", "shuffle", "dice", "coin"],
    &["sentiment", "mood", "tone"],
    &["grammar", "spelling", "proofread", "spellcheck"],
];

fn synonym_table() -> &'static HashMap<String, Vec<String>> {
    static TABLE: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table: HashMap<String, Vec<String>> = HashMap::new();
        for group in SYNONYM_GROUPS {
            let stems: Vec<String> = group.iter().map(|w| stem(w)).collect();
            for a in &stems {
                let entry = table.entry(a.clone()).or_default();
                for b in &stems {
                    if a != b && !entry.contains(b) {
                        entry.push(b.clone());
                    }
                }
            }
        }
        table
    })
}

/// The stems that share a synonym group with `stem`.
pub fn synonyms(stem: &str) -> &'static [String] {
    synonym_table().get(stem).map(Vec::as_slice).unwrap_or(&[])
}

/// The optimal-string-alignment distance (Levenshtein plus adjacent
/// transpositions), or `None` when it exceeds `max`.
pub fn bounded_distance(a: &[char], b: &[char], max: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let n = b.len();
    let mut prev2: Vec<usize> = vec![0; n + 1];
    let mut prev: Vec<usize> = (0..=n).collect();
    let mut cur: Vec<usize> = vec![0; n + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        let mut row_min = cur[0];
        for j in 1..=n {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(prev2[j - 2] + 1);
            }
            cur[j] = v;
            row_min = row_min.min(v);
        }
        if row_min > max {
            return None;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    let d = prev[n];
    (d <= max).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, STOP_WORDS);
    }

    #[test]
    fn words_split_identifiers_and_keep_meaningful_symbols() {
        let cases: &[(&str, &[&str])] = &[
            (
                "What's 15% of 847?",
                &["what", "15", "percent", "of", "847"],
            ),
            ("createIssue", &["create", "issue"]),
            ("HTMLParser v2", &["html", "parser", "v2"]),
            ("csv_to_json", &["csv", "to", "json"]),
            ("github-create-pr", &["github", "create", "pr"]),
            ("base64 mp3 $20", &["base64", "mp3", "currency", "20"]),
            ("Übersetze DAS", &["übersetze", "das"]),
            ("", &[]),
        ];
        for (input, want) in cases {
            assert_eq!(words(input), *want, "{input}");
        }
    }

    #[test]
    fn stems_meet_across_word_forms() {
        let cases: &[(&str, &str)] = &[
            ("notes", "not"),
            ("note", "not"),
            ("meeting", "meet"),
            ("create", "creat"),
            ("creating", "creat"),
            ("created", "creat"),
            ("translate", "translat"),
            ("translation", "translat"),
            ("images", "imag"),
            ("running", "run"),
            ("logged", "log"),
            ("calling", "call"),
            ("cities", "city"),
            ("copied", "copy"),
            ("addresses", "address"),
            ("boxes", "box"),
            ("converter", "convert"),
            ("string", "string"),
            ("speed", "speed"),
            ("status", "status"),
            ("news", "news"),
            ("weekly", "week"),
            ("timer", "timer"),
            ("compression", "compress"),
            ("mp3", "mp3"),
            ("api", "api"),
        ];
        for (word, want) in cases {
            assert_eq!(stem(word), *want, "{word}");
        }
    }

    #[test]
    fn synonyms_are_symmetric_and_stemmed() {
        assert!(synonyms(&stem("photo")).contains(&stem("image")));
        assert!(synonyms(&stem("image")).contains(&stem("photo")));
        assert_eq!(synonyms("zzz"), &[] as &[String]);
    }

    #[test]
    fn distance_counts_transpositions_as_one() {
        let d = |a: &str, b: &str, max| {
            let a: Vec<char> = a.chars().collect();
            let b: Vec<char> = b.chars().collect();
            bounded_distance(&a, &b, max)
        };
        let cases = [
            (("mail", "mial", 2), Some(1)),
            (("calendar", "calender", 2), Some(1)),
            (("weather", "wether", 2), Some(1)),
            (("translate", "tranlsate", 2), Some(1)),
            (("kitten", "sitting", 2), None),
            (("kitten", "sitting", 3), Some(3)),
            (("same", "same", 0), Some(0)),
        ];
        for ((a, b, max), want) in cases {
            assert_eq!(d(a, b, max), want, "{a} {b}");
        }
    }
}
