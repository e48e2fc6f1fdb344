//! HTML to readable Markdown, for `web_fetch`: title, headings, paragraphs,
//! lists, links, code, quotes and tables; scripts, styles, navigation,
//! forms' controls and hidden elements dropped.
//!
//! It is a small forgiving tokenizer plus a converter that keeps a stack of
//! open elements, written for untrusted input: linear time, no recursion,
//! bounded nesting, and slicing only at ASCII positions, so no input can
//! make it panic. It is not a full HTML5 tree builder; it does what a reader
//! needs. When the page marks its main content (`<main>` or
//! `role="main"`), only that is converted, unless it is nearly empty.

use std::borrow::Cow;
use std::collections::HashSet;

use hearth_core::web::Link;
use url::Url;

/// What a page converts to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Converted {
    pub title: Option<String>,
    pub markdown: String,
    pub links: Vec<Link>,
}

/// The most links listed beside the Markdown.
pub const MAX_LINKS: usize = 300;
/// Deeper nesting than this is flattened.
const MAX_DEPTH: usize = 512;
/// A main region with less text than this is ignored in favour of the page.
const MIN_MAIN_CHARS: usize = 80;

/// Converts `html`, fetched from `base`, to Markdown.
pub fn to_markdown(html: &str, base: &Url) -> Converted {
    let tokens: Vec<Token<'_>> = Tokenizer::new(html).collect();
    let head = read_head(&tokens, base);
    let has_main = tokens.iter().any(|t| match t {
        Token::Start { name, attrs, .. } => name == "main" || attr(attrs, "role") == Some("main"),
        Token::Text(_) | Token::Raw(_) | Token::End { .. } => false,
    });
    let mut converted = Converter::new(&head.base, has_main).run(&tokens);
    if has_main && visible_chars(&converted.0) < MIN_MAIN_CHARS {
        converted = Converter::new(&head.base, false).run(&tokens);
    }
    Converted {
        title: head.title,
        markdown: converted.0,
        links: converted.1,
    }
}

/// The text of an HTML fragment (a search snippet with `<strong>` in it):
/// tags dropped, entities decoded, whitespace collapsed.
pub fn text_from_fragment(html: &str) -> String {
    let mut out = String::new();
    let mut skip = 0usize;
    for token in Tokenizer::new(html) {
        match token {
            Token::Text(t) if skip == 0 => out.push_str(&decode_entities(t)),
            Token::Raw(_) | Token::Text(_) => {}
            Token::Start { name, .. } if is_raw_text(&name) => skip += 1,
            Token::End { name } if is_raw_text(&name) => skip = skip.saturating_sub(1),
            Token::Start { name, .. } | Token::End { name } if is_inline(&name) => {}
            Token::Start { .. } | Token::End { .. } => out.push(' '),
        }
    }
    collapse_whitespace(&out)
}

/// Elements that do not break a line of text.
fn is_inline(name: &str) -> bool {
    matches!(
        name,
        "a" | "abbr"
            | "b"
            | "bdi"
            | "bdo"
            | "cite"
            | "code"
            | "data"
            | "dfn"
            | "em"
            | "i"
            | "kbd"
            | "mark"
            | "q"
            | "s"
            | "samp"
            | "small"
            | "span"
            | "strong"
            | "sub"
            | "sup"
            | "time"
            | "u"
            | "var"
    )
}

fn visible_chars(markdown: &str) -> usize {
    markdown.chars().filter(|c| c.is_alphanumeric()).count()
}

fn collapse_whitespace(s: &str) -> String {
    s.split(is_space)
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_space(c: char) -> bool {
    c.is_whitespace() || c == '\u{a0}'
}

// ---------------------------------------------------------------------------
// Tokenizer

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token<'a> {
    /// Text, entities still encoded.
    Text(&'a str),
    /// The body of a raw-text element (script, style, title, textarea…).
    Raw(&'a str),
    Start {
        /// Lower case; borrowed from the input when it already was.
        name: Cow<'a, str>,
        attrs: Vec<Attr<'a>>,
        self_closing: bool,
    },
    End {
        name: Cow<'a, str>,
    },
}

/// An attribute: lower-case name, decoded value.
type Attr<'a> = (Cow<'a, str>, Cow<'a, str>);

/// `s` in lower case, without copying when it already is.
fn lower(s: &str) -> Cow<'_, str> {
    if s.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(s.to_ascii_lowercase())
    } else {
        Cow::Borrowed(s)
    }
}

/// Elements whose content is not markup.
fn is_raw_text(name: &str) -> bool {
    matches!(
        name,
        "script"
            | "style"
            | "title"
            | "textarea"
            | "xmp"
            | "iframe"
            | "noembed"
            | "noframes"
            | "noscript"
            | "plaintext"
    )
}

struct Tokenizer<'a> {
    src: &'a str,
    pos: usize,
    /// Inside a raw-text element: the name whose end tag ends it.
    raw_until: Option<Cow<'a, str>>,
}

impl<'a> Tokenizer<'a> {
    fn new(src: &'a str) -> Self {
        Self {
            src,
            pos: 0,
            raw_until: None,
        }
    }

    fn bytes(&self) -> &'a [u8] {
        self.src.as_bytes()
    }

    /// The position of the next `needle` (ASCII) at or after `from`.
    fn find_at(&self, from: usize, needle: &str) -> Option<usize> {
        let hay = self.src.get(from..)?;
        // One-byte needles take the memchr path; a &str needle would set up
        // a two-way searcher on every call.
        let found = match needle.as_bytes() {
            [b] => hay.find(char::from(*b)),
            _ => hay.find(needle),
        };
        found.map(|i| from + i)
    }

    /// The end of a raw-text body: the next `</name` followed by a space,
    /// `/` or `>`, in any case.
    fn find_raw_end(&self, name: &str) -> usize {
        let b = self.bytes();
        let mut i = self.pos;
        while let Some(lt) = self.find_at(i, "</") {
            let start = lt + 2;
            let end = start + name.len();
            if end <= b.len()
                && b[start..end].eq_ignore_ascii_case(name.as_bytes())
                && (end == b.len()
                    || matches!(b[end], b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>'))
            {
                return lt;
            }
            i = start;
        }
        b.len()
    }

    fn read_name(&mut self) -> Cow<'a, str> {
        let b = self.bytes();
        let start = self.pos;
        while self.pos < b.len()
            && !matches!(
                b[self.pos],
                b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>'
            )
        {
            self.pos += 1;
        }
        // Stops at ASCII bytes only, so the slice is on char boundaries.
        lower(&self.src[start..self.pos])
    }

    fn skip_spaces(&mut self) {
        let b = self.bytes();
        while self.pos < b.len() && matches!(b[self.pos], b' ' | b'\t' | b'\n' | b'\r' | b'\x0c') {
            self.pos += 1;
        }
    }

    fn skip_past(&mut self, needle: &str) {
        self.pos = match self.find_at(self.pos, needle) {
            Some(i) => i + needle.len(),
            None => self.src.len(),
        };
    }

    fn start_tag(&mut self) -> Token<'a> {
        let b = self.bytes();
        let name = self.read_name();
        let mut attrs = Vec::new();
        let mut self_closing = false;
        loop {
            self.skip_spaces();
            if self.pos >= b.len() {
                break;
            }
            match b[self.pos] {
                b'>' => {
                    self.pos += 1;
                    break;
                }
                b'/' => {
                    self.pos += 1;
                    self_closing = self.pos < b.len() && b[self.pos] == b'>';
                    continue;
                }
                _ => {}
            }
            // An attribute name: at least one byte, then up to a delimiter.
            let start = self.pos;
            self.pos += 1;
            while self.pos < b.len()
                && !matches!(
                    b[self.pos],
                    b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>' | b'='
                )
            {
                self.pos += 1;
            }
            // The first byte may start a multi-byte character.
            while !self.src.is_char_boundary(self.pos) {
                self.pos += 1;
            }
            let attr_name = lower(&self.src[start..self.pos]);
            self.skip_spaces();
            let mut value = Cow::Borrowed("");
            if self.pos < b.len() && b[self.pos] == b'=' {
                self.pos += 1;
                self.skip_spaces();
                if self.pos < b.len() && (b[self.pos] == b'"' || b[self.pos] == b'\'') {
                    let quote = if b[self.pos] == b'"' { "\"" } else { "'" };
                    let vstart = self.pos + 1;
                    let vend = self.find_at(vstart, quote).unwrap_or(b.len());
                    value = decode_attribute(&self.src[vstart..vend]);
                    self.pos = (vend + 1).min(b.len());
                } else {
                    let vstart = self.pos;
                    while self.pos < b.len()
                        && !matches!(b[self.pos], b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'>')
                    {
                        self.pos += 1;
                    }
                    value = decode_attribute(&self.src[vstart..self.pos]);
                }
            }
            if attrs.len() < 64 {
                attrs.push((attr_name, value));
            }
        }
        if is_raw_text(&name) {
            self.raw_until = Some(name.clone());
        }
        Token::Start {
            name,
            attrs,
            self_closing,
        }
    }
}

impl<'a> Iterator for Tokenizer<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        loop {
            let b = self.bytes();
            if self.pos >= b.len() {
                return None;
            }
            if let Some(name) = self.raw_until.take() {
                let end = if name == "plaintext" {
                    b.len()
                } else {
                    self.find_raw_end(&name)
                };
                let body = &self.src[self.pos..end];
                self.pos = end;
                if !body.is_empty() {
                    return Some(Token::Raw(body));
                }
                continue;
            }
            if b[self.pos] != b'<' {
                let end = self.find_at(self.pos, "<").unwrap_or(b.len());
                let text = &self.src[self.pos..end];
                self.pos = end;
                return Some(Token::Text(text));
            }
            let rest = &b[self.pos..];
            if rest.starts_with(b"<!--") {
                self.pos += 4;
                self.skip_past("-->");
                continue;
            }
            if rest.starts_with(b"<!") || rest.starts_with(b"<?") {
                self.skip_past(">");
                continue;
            }
            if rest.starts_with(b"</") {
                if rest.len() > 2 && rest[2].is_ascii_alphabetic() {
                    self.pos += 2;
                    let name = self.read_name();
                    self.skip_past(">");
                    return Some(Token::End { name });
                }
                // `</>` and `</3` are dropped, like a browser does.
                self.skip_past(">");
                continue;
            }
            if rest.len() > 1 && rest[1].is_ascii_alphabetic() {
                self.pos += 1;
                return Some(self.start_tag());
            }
            // A lone '<' is text.
            let text = &self.src[self.pos..self.pos + 1];
            self.pos += 1;
            return Some(Token::Text(text));
        }
    }
}

fn attr<'t>(attrs: &'t [Attr<'_>], name: &str) -> Option<&'t str> {
    attrs
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_ref())
}

// ---------------------------------------------------------------------------
// Entities

/// Decodes character references in text: numeric ones, and the named ones
/// pages commonly use. Unknown names are left as written.
pub fn decode_entities(s: &str) -> Cow<'_, str> {
    decode(s, true)
}

/// The same in an attribute value, where legacy references without `;`
/// are not decoded (`?a=1&copy=2` stays a query string).
fn decode_attribute(s: &str) -> Cow<'_, str> {
    decode(s, false)
}

fn decode(s: &str, legacy: bool) -> Cow<'_, str> {
    if !s.contains('&') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        match decode_one(rest, legacy, &mut out) {
            Some(len) => rest = &rest[len..],
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Decodes the reference at the start of `s` into `out`; returns its length
/// in bytes, or `None` when `s` does not start with one.
fn decode_one(s: &str, legacy: bool, out: &mut String) -> Option<usize> {
    let b = s.as_bytes();
    if b.len() > 2 && b[1] == b'#' {
        let (digits_start, radix) = if b[2] == b'x' || b[2] == b'X' {
            (3, 16)
        } else {
            (2, 10)
        };
        let mut end = digits_start;
        while end < b.len() && end - digits_start < 8 && (b[end] as char).is_digit(radix) {
            end += 1;
        }
        if end == digits_start {
            return None;
        }
        let n = u32::from_str_radix(&s[digits_start..end], radix).ok()?;
        let len = if end < b.len() && b[end] == b';' {
            end + 1
        } else {
            end
        };
        out.push(match n {
            0 => '\u{fffd}',
            0x80..=0x9f => windows_1252_c1(n),
            _ => char::from_u32(n).unwrap_or('\u{fffd}'),
        });
        return Some(len);
    }
    let name_end = b[1..]
        .iter()
        .position(|c| !c.is_ascii_alphanumeric())
        .map(|p| p + 1)
        .unwrap_or(b.len());
    let name = &s[1..name_end];
    let with_semicolon = name_end < b.len() && b[name_end] == b';';
    let value = named_entity(name)?;
    if with_semicolon {
        out.push_str(value);
        Some(name_end + 1)
    } else if legacy && matches!(name, "amp" | "lt" | "gt" | "quot" | "nbsp" | "copy" | "reg") {
        // Legacy references that browsers accept without ';' in text.
        out.push_str(value);
        Some(name_end)
    } else {
        None
    }
}

/// Numeric references in 0x80–0x9F mean windows-1252, as browsers read them.
fn windows_1252_c1(n: u32) -> char {
    const TABLE: [char; 32] = [
        '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8d}', 'Ž',
        '\u{8f}', '\u{90}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9d}',
        'ž', 'Ÿ',
    ];
    TABLE[(n - 0x80) as usize]
}

fn named_entity(name: &str) -> Option<&'static str> {
    Some(match name {
        "amp" | "AMP" => "&",
        "lt" | "LT" => "<",
        "gt" | "GT" => ">",
        "quot" | "QUOT" => "\"",
        "apos" => "'",
        "nbsp" => "\u{a0}",
        "ensp" => "\u{2002}",
        "emsp" => "\u{2003}",
        "thinsp" => "\u{2009}",
        "zwnj" => "\u{200c}",
        "zwj" => "\u{200d}",
        "shy" => "\u{ad}",
        "copy" => "©",
        "reg" => "®",
        "trade" => "™",
        "mdash" => "—",
        "ndash" => "–",
        "hellip" => "…",
        "laquo" => "«",
        "raquo" => "»",
        "lsaquo" => "‹",
        "rsaquo" => "›",
        "lsquo" => "‘",
        "rsquo" => "’",
        "sbquo" => "‚",
        "ldquo" => "“",
        "rdquo" => "”",
        "bdquo" => "„",
        "bull" => "•",
        "middot" => "·",
        "para" => "¶",
        "sect" => "§",
        "deg" => "°",
        "plusmn" => "±",
        "times" => "×",
        "divide" => "÷",
        "minus" => "−",
        "frac12" => "½",
        "frac14" => "¼",
        "frac34" => "¾",
        "sup1" => "¹",
        "sup2" => "²",
        "sup3" => "³",
        "micro" => "µ",
        "euro" => "€",
        "pound" => "£",
        "yen" => "¥",
        "cent" => "¢",
        "curren" => "¤",
        "iexcl" => "¡",
        "iquest" => "¿",
        "dagger" => "†",
        "Dagger" => "‡",
        "permil" => "‰",
        "prime" => "′",
        "Prime" => "″",
        "larr" => "←",
        "rarr" => "→",
        "uarr" => "↑",
        "darr" => "↓",
        "harr" => "↔",
        "rArr" => "⇒",
        "lArr" => "⇐",
        "hArr" => "⇔",
        "le" => "≤",
        "ge" => "≥",
        "ne" => "≠",
        "asymp" => "≈",
        "equiv" => "≡",
        "infin" => "∞",
        "sum" => "∑",
        "prod" => "∏",
        "radic" => "√",
        "part" => "∂",
        "nabla" => "∇",
        "isin" => "∈",
        "notin" => "∉",
        "cap" => "∩",
        "cup" => "∪",
        "and" => "∧",
        "or" => "∨",
        "not" => "¬",
        "forall" => "∀",
        "exist" => "∃",
        "empty" => "∅",
        "alpha" => "α",
        "beta" => "β",
        "gamma" => "γ",
        "delta" => "δ",
        "epsilon" => "ε",
        "lambda" => "λ",
        "mu" => "μ",
        "pi" => "π",
        "sigma" => "σ",
        "tau" => "τ",
        "phi" => "φ",
        "omega" => "ω",
        "Delta" => "Δ",
        "Sigma" => "Σ",
        "Omega" => "Ω",
        "aacute" => "á",
        "eacute" => "é",
        "iacute" => "í",
        "oacute" => "ó",
        "uacute" => "ú",
        "agrave" => "à",
        "egrave" => "è",
        "ograve" => "ò",
        "acirc" => "â",
        "ecirc" => "ê",
        "ocirc" => "ô",
        "auml" => "ä",
        "euml" => "ë",
        "iuml" => "ï",
        "ouml" => "ö",
        "uuml" => "ü",
        "Auml" => "Ä",
        "Ouml" => "Ö",
        "Uuml" => "Ü",
        "szlig" => "ß",
        "ccedil" => "ç",
        "Ccedil" => "Ç",
        "ntilde" => "ñ",
        "Ntilde" => "Ñ",
        "aring" => "å",
        "Aring" => "Å",
        "aelig" => "æ",
        "oslash" => "ø",
        "Oslash" => "Ø",
        "Eacute" => "É",
        _ => return None,
    })
}

// ---------------------------------------------------------------------------
// The head: title and base URL

struct Head {
    title: Option<String>,
    base: Url,
}

fn read_head(tokens: &[Token<'_>], url: &Url) -> Head {
    let mut title: Option<String> = None;
    let mut og_title: Option<String> = None;
    let mut base: Option<Url> = None;
    let mut in_title = false;
    let mut in_svg = 0usize;
    for t in tokens {
        match t {
            Token::Start { name, attrs, .. } => match name.as_ref() {
                "svg" => in_svg += 1,
                "title" if in_svg == 0 && title.is_none() => in_title = true,
                "base" if base.is_none() => {
                    base = attr(attrs, "href")
                        .and_then(|h| url.join(h.trim()).ok())
                        .filter(|u| matches!(u.scheme(), "http" | "https"));
                }
                "meta" if og_title.is_none() && attr(attrs, "property") == Some("og:title") => {
                    og_title = attr(attrs, "content")
                        .map(collapse_whitespace)
                        .filter(|s| !s.is_empty());
                }
                _ => {}
            },
            Token::End { name } => match name.as_ref() {
                "svg" => in_svg = in_svg.saturating_sub(1),
                "title" => in_title = false,
                _ => {}
            },
            Token::Raw(text) if in_title => {
                let t = collapse_whitespace(&decode_entities(text));
                if !t.is_empty() {
                    title = Some(t);
                }
                in_title = false;
            }
            Token::Raw(_) | Token::Text(_) => {}
        }
    }
    Head {
        title: title.or(og_title),
        base: base.unwrap_or_else(|| url.clone()),
    }
}

// ---------------------------------------------------------------------------
// The converter

/// Elements whose whole subtree is left out.
fn is_skipped(name: &str) -> bool {
    matches!(
        name,
        "script"
            | "style"
            | "noscript"
            | "template"
            | "svg"
            | "math"
            | "iframe"
            | "object"
            | "embed"
            | "canvas"
            | "select"
            | "button"
            | "textarea"
            | "nav"
            | "aside"
            | "footer"
            | "dialog"
            | "audio"
            | "video"
            | "map"
            | "title"
            | "xmp"
            | "noembed"
            | "noframes"
            | "plaintext"
    )
}

fn is_void(name: &str) -> bool {
    matches!(
        name,
        "area"
            | "base"
            | "br"
            | "col"
            | "embed"
            | "hr"
            | "img"
            | "input"
            | "link"
            | "meta"
            | "param"
            | "source"
            | "track"
            | "wbr"
    )
}

fn is_hidden(attrs: &[Attr<'_>]) -> bool {
    if attrs.iter().any(|(n, _)| n == "hidden") {
        return true;
    }
    if attr(attrs, "aria-hidden").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return true;
    }
    attr(attrs, "style").is_some_and(|s| {
        let compact: String = s
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase();
        compact.contains("display:none") || compact.contains("visibility:hidden")
    })
}

/// What closing an element must undo.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Effect {
    None,
    /// A skipped subtree.
    Skip,
    /// The main region (when only it is converted).
    Main,
    Block(u8),
    Heading,
    Quote,
    List,
    Item,
    Pre,
    Capture,
    Table,
    Row,
    Cell,
}

struct Open<'t> {
    name: &'t str,
    effect: Effect,
}

#[derive(Clone, Debug)]
enum CaptureKind {
    Link(Option<String>),
    Code,
    Strong,
    Emphasis,
}

struct Capture {
    kind: CaptureKind,
    text: String,
}

struct ListState {
    ordered: bool,
    next: u64,
}

struct TableState {
    rows: usize,
    cells_in_row: usize,
}

struct Converter<'u, 't> {
    base: &'u Url,
    only_main: bool,
    main_depth: usize,
    stack: Vec<Open<'t>>,
    skip_depth: usize,
    out: String,
    at_line_start: bool,
    want_newlines: u8,
    want_space: bool,
    marker: Option<(String, bool)>,
    quote_depth: usize,
    lists: Vec<ListState>,
    tables: Vec<TableState>,
    inline_only: usize,
    cell_depth: usize,
    captures: Vec<Capture>,
    pre: Option<(String, String)>,
    pre_depth: usize,
    links: Vec<Link>,
    seen_links: HashSet<String>,
}

impl<'u, 't> Converter<'u, 't> {
    fn new(base: &'u Url, only_main: bool) -> Self {
        Self {
            base,
            only_main,
            main_depth: 0,
            stack: Vec::new(),
            skip_depth: 0,
            out: String::new(),
            at_line_start: true,
            want_newlines: 0,
            want_space: false,
            marker: None,
            quote_depth: 0,
            lists: Vec::new(),
            tables: Vec::new(),
            inline_only: 0,
            cell_depth: 0,
            captures: Vec::new(),
            pre: None,
            pre_depth: 0,
            links: Vec::new(),
            seen_links: HashSet::new(),
        }
    }

    fn run(mut self, tokens: &'t [Token<'_>]) -> (String, Vec<Link>) {
        for t in tokens {
            match t {
                Token::Start {
                    name,
                    attrs,
                    self_closing,
                } => self.start(name, attrs, *self_closing),
                Token::End { name } => self.end(name),
                Token::Text(text) => {
                    if self.emitting() {
                        self.text(&decode_entities(text));
                    }
                }
                Token::Raw(_) => {}
            }
        }
        while let Some(open) = self.stack.pop() {
            self.close(open.effect);
        }
        (tidy(&self.out), self.links)
    }

    fn emitting(&self) -> bool {
        self.skip_depth == 0 && (!self.only_main || self.main_depth > 0)
    }

    fn start(&mut self, name: &'t str, attrs: &[Attr<'_>], self_closing: bool) {
        if self.skip_depth > 0 {
            if !is_void(name) && !self_closing_foreign(name, self_closing) {
                self.push(name, Effect::None);
            }
            return;
        }
        self.auto_close(name);
        if (is_skipped(name) || is_hidden(attrs)) && !is_void(name) {
            if !self_closing_foreign(name, self_closing) {
                self.skip_depth += 1;
                self.push(name, Effect::Skip);
            }
            return;
        }
        let is_main = name == "main" || attr(attrs, "role") == Some("main");
        if self.only_main && is_main {
            self.main_depth += 1;
            self.push(name, Effect::Main);
            return;
        }
        if !self.emitting() {
            if !is_void(name) {
                self.push(name, Effect::None);
            }
            return;
        }
        match name {
            "br" => {
                if let Some((_, code)) = self.pre.as_mut() {
                    code.push('\n');
                } else {
                    self.block_break(1);
                }
            }
            "hr" => {
                self.block_break(2);
                self.inline("---");
                self.block_break(2);
            }
            "img" => {
                if let Some(alt) = attr(attrs, "alt").map(collapse_whitespace)
                    && !alt.is_empty()
                {
                    self.text(&format!(" [image: {alt}] "));
                }
            }
            "input" | "meta" | "link" | "base" | "wbr" | "col" | "area" | "param" | "source"
            | "track" | "embed" => {}
            "p" => {
                self.block_break(2);
                self.push(name, Effect::Block(2));
            }
            "div" | "section" | "article" | "main" | "header" | "figure" | "figcaption"
            | "address" | "details" | "summary" | "dl" | "dt" | "dd" | "form" | "fieldset"
            | "legend" | "center" | "caption" | "hgroup" | "body" | "html" | "label" => {
                self.block_break(1);
                self.push(name, Effect::Block(1));
            }
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                self.block_break(2);
                let level = usize::from(name.as_bytes()[1] - b'0');
                if self.inline_only == 0 {
                    self.marker = Some((format!("{} ", "#".repeat(level)), false));
                }
                self.inline_only += 1;
                self.push(name, Effect::Heading);
            }
            "blockquote" => {
                self.block_break(2);
                self.quote_depth += 1;
                self.push(name, Effect::Quote);
            }
            "ul" | "ol" | "menu" => {
                self.block_break(if self.lists.is_empty() { 2 } else { 1 });
                let start = attr(attrs, "start")
                    .and_then(|s| s.trim().parse::<u64>().ok())
                    .unwrap_or(1);
                self.lists.push(ListState {
                    ordered: name == "ol",
                    next: start,
                });
                self.push(name, Effect::List);
            }
            "li" => {
                self.block_break(1);
                let marker = match self.lists.last_mut() {
                    Some(list) if list.ordered => {
                        let m = format!("{}. ", list.next);
                        list.next += 1;
                        m
                    }
                    Some(_) | None => "- ".to_string(),
                };
                if self.inline_only == 0 {
                    self.marker = Some((marker, true));
                }
                self.push(name, Effect::Item);
            }
            "pre" => {
                self.pre_depth += 1;
                if self.pre.is_none() {
                    let lang = attr(attrs, "class")
                        .and_then(language_of)
                        .unwrap_or_default();
                    self.pre = Some((lang, String::new()));
                }
                self.push(name, Effect::Pre);
            }
            "code" | "kbd" | "samp" | "tt" if self.pre.is_some() => {
                if let Some((lang, code)) = self.pre.as_mut()
                    && lang.is_empty()
                    && code.is_empty()
                    && let Some(l) = attr(attrs, "class").and_then(language_of)
                {
                    *lang = l;
                }
                self.push(name, Effect::None);
            }
            "code" | "kbd" | "samp" | "tt" => self.capture(name, CaptureKind::Code),
            "a" => {
                let href = attr(attrs, "href").and_then(|h| self.resolve_link(h));
                self.capture(name, CaptureKind::Link(href));
            }
            "strong" | "b" => self.capture(name, CaptureKind::Strong),
            "em" | "i" => self.capture(name, CaptureKind::Emphasis),
            "table" => {
                self.block_break(2);
                self.tables.push(TableState {
                    rows: 0,
                    cells_in_row: 0,
                });
                self.push(name, Effect::Table);
            }
            "tr" if !self.tables.is_empty() => {
                self.block_break(1);
                if let Some(t) = self.tables.last_mut() {
                    t.cells_in_row = 0;
                }
                self.push(name, Effect::Row);
            }
            "td" | "th" if !self.tables.is_empty() => {
                let first = self.tables.last().is_some_and(|t| t.cells_in_row == 0);
                if let Some(t) = self.tables.last_mut() {
                    t.cells_in_row += 1;
                }
                if !first {
                    self.want_space = true;
                }
                self.inline("|");
                self.want_space = true;
                self.cell_depth += 1;
                self.inline_only += 1;
                self.push(name, Effect::Cell);
            }
            _ => {
                if !is_void(name) && !self_closing_foreign(name, self_closing) {
                    self.push(name, Effect::None);
                }
            }
        }
    }

    /// Browsers close an open `p`, `li`, cell or row when a sibling starts.
    fn auto_close(&mut self, name: &str) {
        let (closes, boundary): (&[&str], &[&str]) = match name {
            "p" => (
                &["p"],
                &[
                    "div",
                    "section",
                    "article",
                    "main",
                    "li",
                    "td",
                    "th",
                    "blockquote",
                    "body",
                ],
            ),
            "li" => (&["li"], &["ul", "ol", "menu"]),
            "dt" | "dd" => (&["dt", "dd"], &["dl"]),
            "tr" => (&["tr", "td", "th"], &["table"]),
            "td" | "th" => (&["td", "th"], &["tr", "table"]),
            _ => return,
        };
        let found = self
            .stack
            .iter()
            .rposition(|o| closes.contains(&o.name) || boundary.contains(&o.name));
        if let Some(i) = found
            && closes.contains(&self.stack[i].name)
        {
            self.pop_to(i);
        }
    }

    fn push(&mut self, name: &'t str, effect: Effect) {
        if self.stack.len() >= MAX_DEPTH {
            // Too deep: stop tracking, and undo what opening did.
            self.close(effect);
            return;
        }
        self.stack.push(Open { name, effect });
    }

    fn end(&mut self, name: &str) {
        if let Some(i) = self.stack.iter().rposition(|o| o.name == name) {
            // Don't let a stray end tag inside a skipped subtree close
            // elements outside it.
            let crosses_skip = self.stack[i + 1..].iter().any(|o| o.effect == Effect::Skip);
            if crosses_skip && self.stack[i].effect != Effect::Skip {
                return;
            }
            self.pop_to(i);
        } else if name == "p" && self.emitting() {
            // `</p>` without `<p>` is an empty paragraph.
            self.block_break(2);
        }
    }

    fn pop_to(&mut self, i: usize) {
        while self.stack.len() > i {
            if let Some(open) = self.stack.pop() {
                self.close(open.effect);
            }
        }
    }

    fn close(&mut self, effect: Effect) {
        match effect {
            Effect::None => {}
            Effect::Skip => self.skip_depth = self.skip_depth.saturating_sub(1),
            Effect::Main => self.main_depth = self.main_depth.saturating_sub(1),
            Effect::Block(n) => self.block_break(n),
            Effect::Heading => {
                self.inline_only = self.inline_only.saturating_sub(1);
                self.block_break(2);
            }
            Effect::Quote => {
                self.block_break(2);
                self.quote_depth = self.quote_depth.saturating_sub(1);
            }
            Effect::List => {
                self.lists.pop();
                self.block_break(if self.lists.is_empty() { 2 } else { 1 });
            }
            Effect::Item => self.block_break(1),
            Effect::Pre => {
                self.pre_depth = self.pre_depth.saturating_sub(1);
                if self.pre_depth == 0
                    && let Some((lang, code)) = self.pre.take()
                {
                    self.code_block(&lang, &code);
                }
            }
            Effect::Capture => self.end_capture(),
            Effect::Table => {
                self.tables.pop();
                self.block_break(2);
            }
            Effect::Row => {
                let cells = self.tables.last().map(|t| t.cells_in_row).unwrap_or(0);
                if cells > 0 {
                    self.want_space = true;
                    self.inline("|");
                    let first_row = self.tables.last().is_some_and(|t| t.rows == 0);
                    if first_row {
                        self.block_break(1);
                        self.inline(&format!("|{}", " --- |".repeat(cells)));
                    }
                    if let Some(t) = self.tables.last_mut() {
                        t.rows += 1;
                    }
                }
                self.block_break(1);
            }
            Effect::Cell => {
                self.cell_depth = self.cell_depth.saturating_sub(1);
                self.inline_only = self.inline_only.saturating_sub(1);
            }
        }
    }

    fn capture(&mut self, name: &'t str, kind: CaptureKind) {
        if self.pre.is_some() {
            self.push(name, Effect::None);
            return;
        }
        self.captures.push(Capture {
            kind,
            text: String::new(),
        });
        self.inline_only += 1;
        self.push(name, Effect::Capture);
    }

    fn end_capture(&mut self) {
        self.inline_only = self.inline_only.saturating_sub(1);
        let Some(c) = self.captures.pop() else {
            return;
        };
        let lead = c.text.starts_with(' ');
        let trail = c.text.ends_with(' ');
        let inner = c.text.trim();
        let rendered = match c.kind {
            CaptureKind::Link(href) => {
                if let Some(url) = href {
                    let text = if inner.is_empty() {
                        url.clone()
                    } else {
                        inner.to_string()
                    };
                    if url.starts_with("http")
                        && self.links.len() < MAX_LINKS
                        && self.seen_links.insert(url.clone())
                    {
                        self.links.push(Link {
                            text: plain_link_text(&text),
                            url: url.clone(),
                        });
                    }
                    if inner.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "[{}]({})",
                            inner.replace(['[', ']'], ""),
                            url.replace(' ', "%20").replace(')', "%29")
                        )
                    }
                } else {
                    inner.to_string()
                }
            }
            CaptureKind::Code if !inner.is_empty() => {
                let fence = "`".repeat(longest_run(inner, '`') + 1);
                let pad = if inner.starts_with('`') || inner.ends_with('`') {
                    " "
                } else {
                    ""
                };
                format!("{fence}{pad}{inner}{pad}{fence}")
            }
            CaptureKind::Strong if !inner.is_empty() => format!("**{inner}**"),
            CaptureKind::Emphasis if !inner.is_empty() => format!("*{inner}*"),
            CaptureKind::Code | CaptureKind::Strong | CaptureKind::Emphasis => String::new(),
        };
        if lead {
            self.want_space = true;
        }
        if !rendered.is_empty() {
            self.inline(&rendered);
        }
        if trail {
            self.want_space = true;
        }
    }

    fn resolve_link(&self, href: &str) -> Option<String> {
        let href = href.trim();
        if href.is_empty() || href.starts_with('#') {
            return None;
        }
        let url = self.base.join(href).ok()?;
        match url.scheme() {
            "http" | "https" | "mailto" => Some(url.to_string()),
            _ => None,
        }
    }

    // -- writing --------------------------------------------------------

    fn text(&mut self, text: &str) {
        if let Some((_, code)) = self.pre.as_mut() {
            if code.is_empty() {
                // A newline right after <pre> is not content.
                code.push_str(text.strip_prefix('\n').unwrap_or(text));
            } else {
                code.push_str(text);
            }
            return;
        }
        if text.is_empty() {
            return;
        }
        if text.starts_with(is_space) {
            self.want_space = true;
        }
        let mut first = true;
        for word in text.split(is_space).filter(|w| !w.is_empty()) {
            if !first {
                self.want_space = true;
            }
            if self.cell_depth > 0 && word.contains('|') {
                self.inline(&word.replace('|', "\\|"));
            } else {
                self.inline(word);
            }
            first = false;
        }
        if text.ends_with(is_space) {
            self.want_space = true;
        }
    }

    /// Writes already-formatted inline content.
    fn inline(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        if let Some(c) = self.captures.last_mut() {
            // A leading space is kept: closing the capture turns it into a
            // space before the rendered markup.
            if self.want_space && !c.text.ends_with(' ') {
                c.text.push(' ');
            }
            self.want_space = false;
            c.text.push_str(s);
            return;
        }
        if self.want_newlines > 0 {
            if !self.out.is_empty() {
                self.out.push('\n');
                for _ in 1..self.want_newlines {
                    // A blank line inside a quote keeps the quote going.
                    self.out.push_str(&">".repeat(self.quote_depth.min(8)));
                    self.out.push('\n');
                }
                self.at_line_start = true;
            }
            self.want_newlines = 0;
            self.want_space = false;
        }
        if self.at_line_start {
            self.write_prefix();
            self.at_line_start = false;
        } else if self.want_space && !self.out.ends_with(' ') {
            self.out.push(' ');
        }
        self.want_space = false;
        self.out.push_str(s);
    }

    fn block_break(&mut self, n: u8) {
        if self.inline_only > 0 || !self.captures.is_empty() {
            self.want_space = true;
            return;
        }
        if !self.out.is_empty() {
            self.want_newlines = self.want_newlines.max(n);
        }
        self.want_space = false;
    }

    /// Writes the start of a line: quote markers, list indentation and
    /// any pending list or heading marker.
    fn write_prefix(&mut self) {
        for _ in 0..self.quote_depth.min(8) {
            self.out.push_str("> ");
        }
        let depth = self.lists.len().min(8);
        let indent = match &self.marker {
            Some((_, true)) => depth.saturating_sub(1),
            Some((_, false)) | None => depth,
        };
        for _ in 0..indent {
            self.out.push_str("  ");
        }
        if let Some((marker, _)) = self.marker.take() {
            self.out.push_str(&marker);
        }
    }

    fn code_block(&mut self, lang: &str, code: &str) {
        let code = code.trim_end_matches(['\n', ' ', '\t']);
        if code.trim().is_empty() {
            return;
        }
        if self.inline_only > 0 || !self.captures.is_empty() {
            self.text(code);
            return;
        }
        self.block_break(2);
        let fence = "`".repeat(longest_run(code, '`').max(2) + 1);
        let mut lines = vec![format!("{fence}{lang}")];
        lines.extend(code.lines().map(str::to_string));
        lines.push(fence);
        for (i, line) in lines.iter().enumerate() {
            if i > 0 {
                self.out.push('\n');
                self.at_line_start = true;
            }
            if line.is_empty() {
                // Keep the line, without trailing prefix spaces.
                self.want_newlines = 0;
                if self.at_line_start {
                    self.write_prefix();
                    let kept = self.out.trim_end_matches(' ').len();
                    self.out.truncate(kept);
                    self.at_line_start = false;
                }
            } else {
                self.want_space = false;
                self.inline(line);
            }
        }
        self.block_break(2);
    }
}

/// `<svg/>`-style self-closing tags only mean "empty" on foreign elements;
/// on HTML elements the slash is ignored, as browsers do.
fn self_closing_foreign(name: &str, self_closing: bool) -> bool {
    self_closing
        && matches!(
            name,
            "svg" | "math" | "path" | "circle" | "rect" | "use" | "line" | "polygon" | "g"
        )
}

fn language_of(class: &str) -> Option<String> {
    class.split_whitespace().find_map(|c| {
        let lang = c
            .strip_prefix("language-")
            .or_else(|| c.strip_prefix("lang-"))?;
        let ok = !lang.is_empty()
            && lang.len() <= 32
            && lang.bytes().all(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'+' | b'#' | b'.')
            });
        ok.then(|| lang.to_string())
    })
}

fn longest_run(s: &str, c: char) -> usize {
    let mut best = 0;
    let mut run = 0;
    for ch in s.chars() {
        if ch == c {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

/// Link text without the Markdown of nested captures.
fn plain_link_text(s: &str) -> String {
    collapse_whitespace(&s.replace(['*', '`'], ""))
}

/// Trailing spaces removed, at most one blank line in a row, trimmed.
fn tidy(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut blank_run = 0;
    for line in s.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_matches('\n').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(html: &str) -> String {
        to_markdown(
            html,
            &Url::parse("https://example.com/dir/page.html").unwrap(),
        )
        .markdown
    }

    #[test]
    fn blocks_and_inline_table() {
        let cases: Vec<(&str, &str)> = vec![
            ("<p>Hello   <b>world</b>!</p>", "Hello **world**!"),
            (
                "<h1>Title</h1><p>One</p><p>Two</p>",
                "# Title\n\nOne\n\nTwo",
            ),
            ("<h3>A <i>b</i></h3>text", "### A *b*\n\ntext"),
            ("<ul><li>a<li>b</ul>", "- a\n- b"),
            ("<ol start=3><li>x</li><li>y</li></ol>", "3. x\n4. y"),
            (
                "<ul><li>a<ul><li>a1</li></ul></li><li>b</li></ul>",
                "- a\n  - a1\n- b",
            ),
            (
                "<blockquote><p>q1</p><p>q2</p></blockquote>after",
                "> q1\n>\n> q2\n\nafter",
            ),
            ("<p>x<br>y</p>", "x\ny"),
            ("<p>a</p><hr><p>b</p>", "a\n\n---\n\nb"),
            (
                "<pre><code class=\"language-rust\">fn main() {\n    1 &lt; 2\n}</code></pre>",
                "```rust\nfn main() {\n    1 < 2\n}\n```",
            ),
            ("<p>use <code>a`b</code> now</p>", "use ``a`b`` now"),
            (
                "<a href=\"/x?q=1\">Go <b>there</b></a>",
                "[Go **there**](https://example.com/x?q=1)",
            ),
            ("<a href=\"javascript:alert(1)\">js</a>", "js"),
            ("<a href=\"#top\">Top</a>", "Top"),
            (
                "<table><tr><th>h1</th><th>h2</th></tr><tr><td>a|b</td><td>c</td></tr></table>",
                "| h1 | h2 |\n| --- | --- |\n| a\\|b | c |",
            ),
            ("<img alt=\"A cat\" src=x.png>", "[image: A cat]"),
            (
                "x &amp; y &lt;z&gt; &eacute; &#233; &#xE9; &bogus; &amp",
                "x & y <z> é é é &bogus; &",
            ),
            ("a&nbsp;&nbsp;b", "a b"),
            ("<p>5 < 6 and 7 > 3</p>", "5 < 6 and 7 > 3"),
            ("&#128512; &#0; &#x110000; &#150;", "😀 \u{fffd} \u{fffd} –"),
        ];
        for (html, expected) in cases {
            assert_eq!(md(html), expected, "{html}");
        }
    }

    #[test]
    fn scripts_styles_chrome_and_hidden_parts_are_dropped() {
        let html = r#"<!doctype html><html><head><title>T</title>
            <style>p { color: red }</style><script>var x = "<p>not text</p>";</script></head>
            <body><nav><a href="/home">Home</a></nav>
            <p>Visible</p><div hidden>secret</div><span aria-hidden="true">icon</span>
            <p style="display: none">ghost</p>
            <script>document.write("</scr" + "ipt>")</script>
            <noscript>enable js</noscript><svg><text>chart</text></svg>
            <form><label>Name</label><input name=q><button>Go</button></form>
            <footer>© 2026</footer><!-- a comment <p>no</p> --></body></html>"#;
        assert_eq!(md(html), "Visible\n\nName");
    }

    #[test]
    fn main_region_wins_unless_nearly_empty() {
        let text = "Long enough article text that clearly carries the content of this page for its readers, \
                    with a second sentence so the main region is plainly the page's substance.";
        let html = format!(
            "<div>Site banner</div><main><h1>Article</h1><p>{text}</p></main><div>Sidebar</div>"
        );
        assert_eq!(md(&html), format!("# Article\n\n{text}"));
        let thin = "<div>Real content lives here, outside main.</div><main><p>tiny</p></main>";
        assert_eq!(md(thin), "Real content lives here, outside main.\n\ntiny");
    }

    #[test]
    fn title_base_and_links() {
        let html = r#"<html><head><title> My &amp; Page </title><base href="https://cdn.example.org/docs/"></head>
            <body><a href="a.html">A</a> <a href="a.html">A again</a> <a href="mailto:x@y.z">mail</a>
            <a href="https://other.example/"><img alt=""></a></body></html>"#;
        let c = to_markdown(html, &Url::parse("https://example.com/").unwrap());
        assert_eq!(c.title.as_deref(), Some("My & Page"));
        assert_eq!(
            c.links,
            vec![
                Link {
                    text: "A".into(),
                    url: "https://cdn.example.org/docs/a.html".into()
                },
                Link {
                    text: "https://other.example/".into(),
                    url: "https://other.example/".into()
                },
            ]
        );
        assert_eq!(
            c.markdown,
            "[A](https://cdn.example.org/docs/a.html) [A again](https://cdn.example.org/docs/a.html) [mail](mailto:x@y.z)"
        );
        let og = to_markdown(
            r#"<meta property="og:title" content="From OG"><p>x</p>"#,
            &Url::parse("https://e.com/").unwrap(),
        );
        assert_eq!(og.title.as_deref(), Some("From OG"));
    }

    #[test]
    fn fragments_become_plain_text() {
        assert_eq!(
            text_from_fragment("The <strong>hearth</strong> is&nbsp;warm &amp; <em>old</em>"),
            "The hearth is warm & old"
        );
        assert_eq!(text_from_fragment("a<script>x</script>b"), "ab");
        assert_eq!(
            text_from_fragment("one<br>two<p>three</p>"),
            "one two three"
        );
    }

    /// A deterministic generator, so the fuzz test below is reproducible.
    struct XorShift(u64);
    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    #[test]
    fn arbitrary_input_never_panics() {
        let pieces = [
            "<",
            ">",
            "</",
            "<!--",
            "-->",
            "<!",
            "<p",
            "<a href=",
            "\"",
            "'",
            "=",
            "&",
            "&#",
            "&#x",
            ";",
            "amp",
            "é",
            "😀",
            "<script>",
            "</script",
            "<pre>",
            "</pre>",
            "<li>",
            "<ul>",
            "</ul>",
            "<table>",
            "<td>",
            "<tr>",
            "</td>",
            "<code>",
            "`",
            "<blockquote>",
            "\n",
            " ",
            "x",
            "/",
            "<main>",
            "</main>",
            "<h2>",
            "<b>",
            "</b>",
            "<title>",
            "<nav>",
            "</nav>",
            "<br/>",
            "<svg/>",
            "<textarea>",
            "</a>",
            "<a href=/x>",
            "\u{a0}",
            "|",
            "[",
            "]",
            "<plaintext>",
        ];
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..3000 {
            let n = (rng.next() % 60) as usize;
            let mut s = String::new();
            for _ in 0..n {
                s.push_str(pieces[(rng.next() % pieces.len() as u64) as usize]);
            }
            let c = to_markdown(&s, &Url::parse("https://example.com/").unwrap());
            assert!(!c.markdown.contains("\n\n\n"), "{s:?} -> {:?}", c.markdown);
            let _ = text_from_fragment(&s);
        }
    }

    #[test]
    fn deep_nesting_is_bounded_and_linear() {
        let html = "<div><blockquote><ul><li>".repeat(5000) + "deep";
        let out = md(&html);
        assert!(
            out.ends_with("deep"),
            "{}",
            &out[out.len().saturating_sub(80)..]
        );
        assert!(out.len() < 100_000);
        let many_scripts = "<script>a</script>".repeat(20_000) + "<p>end</p>";
        assert_eq!(md(&many_scripts), "end");
    }
}
