//! HTML reduced to text by its block structure: headings stay headings,
//! `<pre>` stays code, every other block element ends a paragraph, and
//! scripts, styles and comments are dropped. A small scanner rather than a
//! full HTML5 parser: search needs the words and where blocks break, not
//! a tree.

use crate::text::{Block, BlockKind};

/// Elements whose content is never text a person reads.
const SKIPPED: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "math", "iframe", "object", "canvas",
];

/// Elements that end the paragraph before them and start a new one.
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "br",
    "caption",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "header",
    "hr",
    "html",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "section",
    "summary",
    "table",
    "td",
    "th",
    "tr",
    "ul",
];

/// The blocks of an HTML document. The page's `<title>` becomes its top
/// heading when it has no `<h1>` of its own.
pub(crate) fn blocks(html: &str) -> Vec<Block> {
    let mut scan = Scanner::default();
    let bytes = html.as_bytes();
    let mut i = 0;
    while i < html.len() {
        let Some(lt) = html[i..].find('<').map(|p| p + i) else {
            scan.text(&html[i..], i);
            break;
        };
        scan.text(&html[i..lt], i);
        let rest = &html[lt..];
        if rest.starts_with("<!--") {
            i = rest.find("-->").map_or(html.len(), |p| lt + p + 3);
            continue;
        }
        if rest.starts_with("<!") || rest.starts_with("<?") {
            i = rest.find('>').map_or(html.len(), |p| lt + p + 1);
            continue;
        }
        let closing = bytes.get(lt + 1) == Some(&b'/');
        let name_start = lt + 1 + usize::from(closing);
        let name_len = html[name_start..]
            .bytes()
            .take_while(u8::is_ascii_alphanumeric)
            .count();
        if name_len == 0 {
            // A lone `<` in text.
            scan.text("<", lt);
            i = lt + 1;
            continue;
        }
        let name = html[name_start..name_start + name_len].to_ascii_lowercase();
        let tag_end = tag_end(html, name_start + name_len);
        if !closing && (SKIPPED.contains(&name.as_str()) || name == "title") {
            let close = find_ci(html, tag_end, &format!("</{name}"));
            let content_end = close.unwrap_or(html.len());
            if name == "title" && scan.title.is_none() {
                let text = collapse(&decode_entities(&html[tag_end..content_end]));
                if !text.is_empty() {
                    scan.title = Some((text, tag_end..content_end));
                }
            }
            i = close.map_or(html.len(), |c| tag_end_or(html, c + 2, html.len()));
            continue;
        }
        scan.tag(&name, closing);
        i = tag_end;
    }
    scan.flush();
    let mut blocks = scan.blocks;
    let has_h1 = blocks.iter().any(|b| b.kind == BlockKind::Heading(1));
    if !has_h1 && let Some((title, range)) = scan.title {
        blocks.insert(
            0,
            Block {
                kind: BlockKind::Heading(1),
                text: title,
                range,
                verbatim: false,
            },
        );
    }
    blocks
}

#[derive(Default)]
struct Scanner {
    blocks: Vec<Block>,
    buffer: String,
    start: Option<usize>,
    end: usize,
    heading: Option<u8>,
    pre: bool,
    title: Option<(String, std::ops::Range<usize>)>,
}

impl Scanner {
    /// Text between tags, at byte `at` of the source.
    fn text(&mut self, raw: &str, at: usize) {
        if raw.is_empty() {
            return;
        }
        let decoded = decode_entities(raw);
        if self.pre {
            self.buffer.push_str(&decoded);
        } else {
            for (n, word) in decoded.split_whitespace().enumerate() {
                let space_before = n > 0 || decoded.starts_with(char::is_whitespace);
                if space_before && !self.buffer.is_empty() && !self.buffer.ends_with(' ') {
                    self.buffer.push(' ');
                }
                self.buffer.push_str(word);
            }
            if decoded.ends_with(char::is_whitespace) && !self.buffer.is_empty() {
                self.buffer.push(' ');
            }
        }
        if !decoded.trim().is_empty() {
            if self.start.is_none() {
                self.start = Some(at + (raw.len() - raw.trim_start().len()));
            }
            self.end = at + raw.trim_end().len();
        }
    }

    fn tag(&mut self, name: &str, closing: bool) {
        let level = heading_level(name);
        if let Some(level) = level {
            self.flush();
            self.heading = (!closing).then_some(level);
            if !closing {
                self.start = None;
            }
            return;
        }
        if name == "pre" {
            self.flush();
            self.pre = !closing;
            return;
        }
        if BLOCKS.contains(&name) {
            if self.heading.is_some() {
                self.buffer.push(' ');
            } else if self.pre {
                // A stray block tag inside `<pre>` keeps the code whole.
            } else {
                self.flush();
            }
        }
    }

    /// Ends the block being collected, if it holds any text.
    fn flush(&mut self) {
        let text = if self.pre {
            self.buffer.trim_matches('\n').to_string()
        } else {
            self.buffer.trim().to_string()
        };
        self.buffer.clear();
        let Some(start) = self.start.take() else {
            return;
        };
        if text.trim().is_empty() {
            return;
        }
        let kind = match (self.heading, self.pre) {
            (Some(level), _) => BlockKind::Heading(level),
            (None, true) => BlockKind::Code,
            (None, false) => BlockKind::Paragraph,
        };
        self.blocks.push(Block {
            kind,
            text,
            range: start..self.end.max(start),
            verbatim: false,
        });
    }
}

fn heading_level(name: &str) -> Option<u8> {
    match name {
        "h1" => Some(1),
        "h2" => Some(2),
        "h3" => Some(3),
        "h4" => Some(4),
        "h5" => Some(5),
        "h6" => Some(6),
        _ => None,
    }
}

/// The byte after the `>` that ends the tag whose attributes start at
/// `from`, skipping quoted attribute values.
fn tag_end(html: &str, from: usize) -> usize {
    tag_end_or(html, from, html.len())
}

fn tag_end_or(html: &str, from: usize, missing: usize) -> usize {
    let mut quote = None;
    for (i, b) in html.as_bytes()[from.min(html.len())..].iter().enumerate() {
        match (quote, b) {
            (None, b'"' | b'\'') => quote = Some(*b),
            (Some(q), _) if q == *b => quote = None,
            (None, b'>') => return from + i + 1,
            _ => {}
        }
    }
    missing
}

/// The first place at or after `from` where `needle` (ASCII, lowercase)
/// occurs, ignoring ASCII case.
fn find_ci(html: &str, from: usize, needle: &str) -> Option<usize> {
    let hay = html.as_bytes();
    let needle = needle.as_bytes();
    (from..hay.len().saturating_sub(needle.len() - 1))
        .find(|&i| hay[i..i + needle.len()].eq_ignore_ascii_case(needle))
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Character references: the numeric ones and the named ones common in
/// prose; an unknown name stays as written.
fn decode_entities(raw: &str) -> String {
    if !raw.contains('&') {
        return raw.to_string();
    }
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest[1..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '#'))
            .map(|p| p + 1);
        let decoded = end
            .filter(|&e| rest[e..].starts_with(';'))
            .and_then(|e| entity(&rest[1..e]).map(|c| (c, e + 1)));
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn entity(name: &str) -> Option<char> {
    if let Some(num) = name.strip_prefix('#') {
        let code = match num.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => num.parse().ok()?,
        };
        return char::from_u32(code);
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "ndash" => '–',
        "mdash" => '—',
        "hellip" => '…',
        "lsquo" => '‘',
        "rsquo" => '’',
        "ldquo" => '“',
        "rdquo" => '”',
        "copy" => '©',
        "eacute" => 'é',
        "para" => '¶',
        "sect" => '§',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(html: &str) -> Vec<(BlockKind, String)> {
        blocks(html).into_iter().map(|b| (b.kind, b.text)).collect()
    }

    #[test]
    fn headings_paragraphs_and_code_survive_and_scripts_do_not() {
        let html = r#"<!doctype html><html><head><title>Ignored</title>
            <style>p { color: red }</style><script>var x = "<p>";</script></head>
            <body><h1 class="t">Garden &amp; Shed</h1><!-- a comment -->
            <p>Water the <b>tomatoes</b>
               every morning.</p><div>Compost<br>weekly</div>
            <pre>let x = 1;
  x + 1</pre><h2>Tools</h2><ul><li>Spade</li><li>Rake &#8212; steel</li></ul></body></html>"#;
        assert_eq!(
            shape(html),
            [
                (BlockKind::Heading(1), "Garden & Shed".to_string()),
                (
                    BlockKind::Paragraph,
                    "Water the tomatoes every morning.".to_string()
                ),
                (BlockKind::Paragraph, "Compost".to_string()),
                (BlockKind::Paragraph, "weekly".to_string()),
                (BlockKind::Code, "let x = 1;\n  x + 1".to_string()),
                (BlockKind::Heading(2), "Tools".to_string()),
                (BlockKind::Paragraph, "Spade".to_string()),
                (BlockKind::Paragraph, "Rake — steel".to_string()),
            ]
        );
    }

    #[test]
    fn the_title_stands_in_for_a_missing_h1() {
        let html = "<title>Trip  notes</title><h2>Day one</h2><p>Rain.</p>";
        assert_eq!(
            shape(html),
            [
                (BlockKind::Heading(1), "Trip notes".to_string()),
                (BlockKind::Heading(2), "Day one".to_string()),
                (BlockKind::Paragraph, "Rain.".to_string()),
            ]
        );
    }

    #[test]
    fn ranges_point_at_the_source_text() {
        let html = "<p>  Hello <i>there</i> </p>";
        let b = &blocks(html)[0];
        assert_eq!(&html[b.range.clone()], "Hello <i>there");
    }

    #[test]
    fn broken_markup_does_not_panic() {
        for html in [
            "<",
            "<p",
            "a < b",
            "<script>never closed",
            "&#xZZ; &bogus; &",
            "<title>",
        ] {
            let _ = blocks(html);
        }
        assert_eq!(
            shape("a < b &bogus; &#x41;"),
            [(BlockKind::Paragraph, "a < b &bogus; A".to_string())]
        );
    }
}
