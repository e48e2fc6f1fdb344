//! Text normalisation for discovery: words, stop words, a light English
//! stemmer, a small thesaurus of task vocabulary and a general-English
//! lexicon.
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
    let mut out = marks(text);
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
            '+' | '*' | '×' | '÷' | '^' | '=' => {
                // An operator after a number is arithmetic ("23*19+7").
                let after_digit = chars[..i]
                    .iter()
                    .rev()
                    .find(|c| !c.is_whitespace())
                    .is_some_and(|c| c.is_ascii_digit() || *c == ')');
                if after_digit && !out.iter().any(|w| w == "math") {
                    out.push("math".into());
                }
            }
            _ => {}
        }
    }
    flush(&mut current, &mut out);
    out
}

/// Words for things a request contains rather than says: a web address
/// means "url", an email address "email", a dotted IPv4 address "ip" (and
/// with a prefix length, "cidr").
fn marks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let has_digit = text.bytes().any(|b| b.is_ascii_digit());
    let has_at = text.contains('@');
    let has_web = text.contains("://") || text.contains("www.");
    if !(has_digit || has_at || has_web) {
        return out;
    }
    let lower = text.to_lowercase();
    if has_web
        && (lower.contains("http://") || lower.contains("https://") || lower.contains("www."))
    {
        out.push("url".to_string());
    }
    let tokens: Vec<&str> = lower
        .split_whitespace()
        .map(|t| t.trim_matches(|c: char| !c.is_alphanumeric()))
        .collect();
    // "23 times 19", "7 plus 5": arithmetic spelled out.
    let number = |t: &str| !t.is_empty() && t.parse::<f64>().is_ok();
    if has_digit
        && tokens.windows(3).any(|w| {
            number(w[0])
                && matches!(
                    w[1],
                    "plus" | "minus" | "times" | "x" | "divided" | "multiplied" | "over"
                )
                && (number(w[2]) || w[2] == "by")
        })
    {
        out.push("math".to_string());
    }
    for token in tokens {
        if has_at
            && let Some((user, host)) = token.split_once('@')
            && !user.is_empty()
            && host.contains('.')
        {
            out.push("email".to_string());
        }
        if has_digit && token.contains('.') {
            let (addr, prefix) = match token.split_once('/') {
                Some((a, p)) => (a, Some(p)),
                None => (token, None),
            };
            let mut octets = 0;
            let dotted = addr.split('.').all(|o| {
                octets += 1;
                !o.is_empty() && o.len() <= 3 && o.bytes().all(|b| b.is_ascii_digit())
            });
            if dotted && octets == 4 {
                out.push("ip".to_string());
                if prefix.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) {
                    out.push("cidr".to_string());
                }
            }
        }
    }
    out
}

/// Two-part hyphenated words joined ("to-do" → "todo", "e-mail" →
/// "email"), so they meet the same word written solid.
pub fn hyphen_joins(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for piece in text.split(|c: char| !(c.is_alphanumeric() || c == '-')) {
        let parts: Vec<&str> = piece.split('-').collect();
        if parts.len() == 2 && parts.iter().all(|p| !p.is_empty()) {
            out.push(parts.concat().to_lowercase());
        }
    }
    out
}

/// Whether a word is noise for ranking: a stop word or a bare number.
pub fn is_noise(word: &str) -> bool {
    is_stop_word(word) || word.chars().all(|c| c.is_ascii_digit())
}

/// Words that say nothing about which skill is wanted.
#[rustfmt::skip]
const STOP_WORDS: &[&str] = &[
    "a", "able", "about", "all", "also", "am", "an", "and", "any", "anyone", "anything", "are",
    "aren", "as", "at", "be", "been", "being", "but", "by", "can", "could", "did", "didn", "do",
    "does", "doesn", "doing", "don", "each", "else", "etc", "everyone", "everything", "for",
    "from", "get", "give", "go", "gonna", "got", "gotta", "had", "has", "have", "help", "hey",
    "hi", "how", "i", "id", "if", "im", "in", "into", "is", "isn", "it", "its", "ive", "just",
    "kind", "know", "let", "lets", "like", "ll", "look", "make", "many", "may", "me", "might",
    "mine", "more", "much", "must", "my", "need", "needs", "no", "not", "now", "of", "ok",
    "okay", "on", "onto", "or", "our", "please", "pls", "plz", "quick", "quickly", "re",
    "really", "right", "shall", "should", "skill", "skills", "so", "some", "somehow", "someone",
    "something", "sort", "tell", "than", "thank", "thanks", "that", "the", "their", "them",
    "then", "there", "these", "they", "thing", "things", "this", "those", "to", "tool", "tools",
    "up", "us", "use", "using", "ve", "very", "wanna", "want", "wanted", "was", "way", "we",
    "were", "what", "whats", "when", "where", "whether", "which", "who", "whom", "whose", "why",
    "will", "with", "would", "yes", "you", "your",
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
    // Agents and actions.
    strip(&mut s, "er", 5);
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
#[rustfmt::skip]
const SYNONYM_GROUPS: &[&[&str]] = &[
    &["calculate", "calculator", "compute", "math", "arithmetic", "equation", "formula", "calc",
        "plus", "minus", "multiply", "divide", "sqrt", "squared"],
    &["unit", "metric", "imperial", "km", "kilometer", "kilometre", "mile", "meter", "metre",
        "cm", "inch", "foot", "feet", "yard", "kg", "kilogram", "gram", "pound", "lb", "ounce",
        "oz", "liter", "litre", "gallon", "cup", "celsius", "fahrenheit", "kelvin", "mph"],
    &["percent", "percentage"],
    &["convert", "conversion", "converter", "transform"],
    &["email", "mail", "inbox"],
    &["message", "chat", "dm"],
    &["picture", "image", "photo", "pic", "img", "photograph"],
    &["resize", "scale", "shrink", "enlarge", "smaller", "bigger", "larger"],
    &["compress", "zip", "archive", "unzip"],
    &["todo", "task", "chore"],
    &["done", "complete", "finish", "tick", "cross"],
    &["prefer", "preference", "preferred"],
    &["remind", "reminder", "alarm", "wake"],
    &["refund", "reimburse", "chargeback"],
    &["meeting", "appointment", "event"],
    &["calendar", "schedule", "agenda"],
    &["weather", "forecast", "rain", "umbrella", "raincoat", "snow", "sunny", "windy", "storm"],
    &["temperature", "temp", "hot", "cold", "warm", "chilly"],
    &["translate", "translation", "translator"],
    &["spreadsheet", "sheet", "excel", "xlsx", "csv"],
    &["contain", "mention", "include"],
    &["repo", "repository"],
    &["issue", "ticket", "bug"],
    &["delete", "remove", "erase", "trash"],
    &["create", "make", "add", "new"],
    &["find", "search", "lookup", "locate", "google"],
    &["url", "link", "href"],
    &["summarize", "summarise", "summary", "tldr", "digest"],
    &["shorten", "shortener", "short"],
    &["website", "site", "webpage", "web", "page"],
    &["download", "fetch", "retrieve", "grab"],
    &["note", "memo", "jot"],
    &["remember", "memory", "recall", "memorize"],
    &["currency", "money", "exchange", "forex", "dollar", "euro", "yen", "pound", "peso", "rupee",
        "franc"],
    &["language", "lang", "english", "spanish", "french", "german", "italian", "portuguese",
        "chinese", "japanese", "korean", "russian", "arabic", "dutch", "hindi"],
    &["price", "cost"],
    &["stock", "ticker", "shares", "trading", "market", "nasdaq"],
    &["transit", "train", "bus", "subway", "metro", "tram"],
    &["nearby", "near", "around"],
    &["place", "restaurant", "cafe", "coffee", "shop", "store", "pharmacy", "bar", "pub"],
    &["crypto", "bitcoin", "btc", "cryptocurrency"],
    &["timezone", "tz"],
    &["audio", "sound", "voice", "speech", "recording"],
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
    &["pipeline", "ci", "build", "workflow"],
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
    &["meal", "food", "dinner", "lunch", "breakfast", "diet", "nutrition", "eat"],
    &["expense", "spending", "money", "finance"],
    &["seo", "ranking", "rank"],
    &["brainstorm", "brainstorming", "idea", "ideas", "ideate"],
    &["poster", "flyer", "banner"],
    &["glossary", "terminology", "vocabulary"],
    &["comment", "feedback"],
    &["gpu", "cuda"],
    &["ram", "memory"],
    &["independent", "unrelated", "separate"],
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

/// Every word in the thesaurus, so a typo can be corrected to a word no
/// skill uses but whose synonyms some skill does ("apointment" →
/// "appointment" → "event").
pub fn thesaurus_words() -> &'static [Vec<char>] {
    static WORDS: OnceLock<Vec<Vec<char>>> = OnceLock::new();
    WORDS.get_or_init(|| {
        let mut all: Vec<&str> = SYNONYM_GROUPS
            .iter()
            .flat_map(|g| g.iter().copied())
            .collect();
        all.sort_unstable();
        all.dedup();
        all.iter().map(|w| w.chars().collect()).collect()
    })
}

/// The stems that share a synonym group with `stem`.
pub fn synonyms(stem: &str) -> &'static [String] {
    synonym_table().get(stem).map(Vec::as_slice).unwrap_or(&[])
}

/// General-English relatives of common words, from WordNet: each line a
/// word, then the other words of its most frequent senses and the words
/// derived from them. Generated by `cargo xtask lexicon`, which says what
/// is kept and why.
const LEXICON: &str = include_str!("lexicon.txt");

/// The stems of a stem's relatives in general English (see `LEXICON`),
/// without the stem itself.
pub fn lexicon(stem_of_word: &str) -> &'static [String] {
    static TABLE: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table: HashMap<String, Vec<String>> = HashMap::new();
        for line in LEXICON.lines().filter(|l| !l.starts_with('#')) {
            let mut words = line.split_whitespace();
            let Some(head) = words.next() else {
                continue;
            };
            let key = stem(head);
            let entry = table.entry(key.clone()).or_default();
            for w in words {
                let s = stem(w);
                if s != key && !entry.contains(&s) {
                    entry.push(s);
                }
            }
        }
        table.retain(|_, v| !v.is_empty());
        table
    });
    table.get(stem_of_word).map(Vec::as_slice).unwrap_or(&[])
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
            (
                "read https://example.com/a",
                &["url", "read", "https", "example", "com"],
            ),
            (
                "mail bo@example.org",
                &["email", "mail", "bo", "example", "org"],
            ),
            (
                "hosts in 10.0.0.0/22?",
                &["ip", "cidr", "hosts", "in", "10", "0", "0", "0", "22"],
            ),
            ("23*19+7 =", &["23", "math", "19", "7"]),
            ("23 times 19", &["math", "23", "times", "19"]),
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
            ("weekly", "weekly"),
            ("calendly", "calendly"),
            ("calender", "calend"),
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
    fn the_lexicon_relates_common_words_by_stem() {
        assert!(lexicon(&stem("error")).contains(&stem("mistake")));
        assert!(lexicon(&stem("errors")).contains(&stem("mistake")));
        assert!(lexicon(&stem("plan")).contains(&stem("design")));
        // A word is never its own relative, nor is a rare word related.
        for w in ["error", "plan", "test"] {
            assert!(!lexicon(&stem(w)).contains(&stem(w)), "{w}");
        }
        assert_eq!(lexicon(&stem("zzyzx")), &[] as &[String]);
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
