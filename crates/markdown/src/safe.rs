//! The checks between the converters the app loads (a syntax highlighter,
//! a LaTeX-to-MathML converter) and the page: their answers are read as a
//! strict, small markup language, compared against an allow-list, and
//! written out again by us. Anything outside it (another element, an event
//! handler, a link, CSS that could load something, an entity we do not
//! know, text that is not the code that was asked for) refuses the whole
//! answer, and the block or formula stays as its plain source.

use hearth_base::html::escape_into;

/// Markup that passed these checks; only this module makes one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SafeHtml(String);

impl SafeHtml {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Highlighted code, as highlight.js writes it: `code`'s text in nested
/// `<span class="…">`, nothing else. `None` unless the text is exactly
/// `code` and every tag is such a span.
pub fn highlighted(code: &str, html: &str) -> Option<SafeHtml> {
    let mut out = String::with_capacity(html.len());
    let mut text = String::with_capacity(code.len());
    let mut depth = 0usize;
    for token in tokens(html)? {
        match token {
            Token::Open {
                name: "span",
                attrs,
                self_closing: false,
            } => {
                let [(attr, class)] = attrs.as_slice() else {
                    return None;
                };
                if *attr != "class" || !is_class_list(class) {
                    return None;
                }
                depth += 1;
                out.push_str("<span class=\"");
                out.push_str(class);
                out.push_str("\">");
            }
            Token::Close("span") if depth > 0 => {
                depth -= 1;
                out.push_str("</span>");
            }
            Token::Text(t) => {
                text.push_str(&t);
                escape_into(&t, &mut out);
            }
            Token::Open { .. } | Token::Close(_) => return None,
        }
    }
    (depth == 0 && text == code).then_some(SafeHtml(out))
}

/// MathML elements a formula may use (MathML Core and the few more
/// converters write); `annotation-xml` (which may hold HTML) and
/// `maction` (which may act) are not among them.
const MATH_ELEMENTS: [&str; 31] = [
    "math",
    "semantics",
    "annotation",
    "mrow",
    "mi",
    "mn",
    "mo",
    "ms",
    "mtext",
    "mspace",
    "msqrt",
    "mroot",
    "mfrac",
    "msub",
    "msup",
    "msubsup",
    "munder",
    "mover",
    "munderover",
    "mmultiscripts",
    "mprescripts",
    "none",
    "mtable",
    "mtr",
    "mtd",
    "mlabeledtr",
    "mpadded",
    "mphantom",
    "mstyle",
    "menclose",
    "merror",
];

/// Presentation attributes kept; every other attribute is dropped.
const MATH_ATTRIBUTES: [&str; 39] = [
    "display",
    "displaystyle",
    "scriptlevel",
    "mathvariant",
    "mathcolor",
    "mathbackground",
    "mathsize",
    "dir",
    "fence",
    "form",
    "separator",
    "stretchy",
    "symmetric",
    "largeop",
    "movablelimits",
    "accent",
    "accentunder",
    "lspace",
    "rspace",
    "minsize",
    "maxsize",
    "width",
    "height",
    "depth",
    "voffset",
    "linethickness",
    "columnalign",
    "rowalign",
    "columnspan",
    "rowspan",
    "columnlines",
    "rowlines",
    "columnspacing",
    "rowspacing",
    "frame",
    "framespacing",
    "notation",
    "encoding",
    "class",
];

/// A formula as MathML: one `<math>` element of allowed elements, with
/// allowed attributes (and `style` only when it is plain layout). `None`
/// when anything else is in it.
pub fn mathml(html: &str) -> Option<SafeHtml> {
    let tokens = tokens(html)?;
    let mut out = String::with_capacity(html.len());
    let mut open: Vec<&str> = Vec::new();
    let mut finished = false;
    for token in &tokens {
        if finished {
            return None;
        }
        match token {
            Token::Open {
                name,
                attrs,
                self_closing,
            } => {
                if !MATH_ELEMENTS.contains(name) || (open.is_empty() != (*name == "math")) {
                    return None;
                }
                out.push('<');
                out.push_str(name);
                for (attr, value) in attrs {
                    let keep = MATH_ATTRIBUTES.contains(attr)
                        || (*attr == "style" && is_layout_style(value));
                    if keep {
                        out.push(' ');
                        out.push_str(attr);
                        out.push_str("=\"");
                        escape_into(value, &mut out);
                        out.push('"');
                    }
                }
                out.push('>');
                if *self_closing {
                    out.push_str("</");
                    out.push_str(name);
                    out.push('>');
                    finished = open.is_empty();
                } else {
                    open.push(name);
                }
            }
            Token::Close(name) => {
                if open.pop() != Some(*name) {
                    return None;
                }
                out.push_str("</");
                out.push_str(name);
                out.push('>');
                finished = open.is_empty();
            }
            Token::Text(t) => {
                if open.is_empty() {
                    return None;
                }
                escape_into(t, &mut out);
            }
        }
    }
    (finished && open.is_empty()).then_some(SafeHtml(out))
}

fn is_class_list(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 200
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b' '))
}

/// CSS that only lays out: no functions but `calc`, no `url`, no escapes,
/// no at-rules or comments.
fn is_layout_style(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    s.len() <= 300
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(b, b' ' | b'#' | b'%' | b'.' | b',' | b':' | b';' | b'-')
        })
        && !lower.contains("url")
        && !lower.contains("expression")
}

#[derive(Debug, PartialEq, Eq)]
enum Token<'a> {
    Open {
        name: &'a str,
        /// Names as written, values decoded.
        attrs: Vec<(&'a str, String)>,
        self_closing: bool,
    },
    Close(&'a str),
    /// Decoded.
    Text(String),
}

/// Reads the strict subset of markup converters write: lower-case tag
/// names, double-quoted attribute values, a handful of entities. `None` on
/// anything else (comments, other quoting, unknown entities, a stray `<`).
fn tokens(html: &str) -> Option<Vec<Token<'_>>> {
    let mut out = Vec::new();
    let mut rest = html;
    let mut text = String::new();
    while let Some(c) = rest.chars().next() {
        match c {
            '<' => {
                if !text.is_empty() {
                    out.push(Token::Text(std::mem::take(&mut text)));
                }
                let (token, after) = tag(rest)?;
                out.push(token);
                rest = after;
            }
            '&' => {
                let (decoded, after) = entity(rest)?;
                text.push(decoded);
                rest = after;
            }
            c => {
                text.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    if !text.is_empty() {
        out.push(Token::Text(text));
    }
    Some(out)
}

fn name_len(s: &str, extra: &[u8]) -> usize {
    s.bytes()
        .take_while(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || extra.contains(b))
        .count()
}

/// One tag at the start of `s` (which starts with `<`).
fn tag(s: &str) -> Option<(Token<'_>, &str)> {
    if let Some(rest) = s.strip_prefix("</") {
        let n = name_len(rest, b"-");
        let after = rest[n..].trim_start().strip_prefix('>')?;
        return (n > 0).then_some((Token::Close(&rest[..n]), after));
    }
    let rest = &s[1..];
    let n = name_len(rest, b"-");
    if n == 0 {
        return None;
    }
    let name = &rest[..n];
    let mut rest = &rest[n..];
    let mut attrs = Vec::new();
    loop {
        let trimmed = rest.trim_start_matches([' ', '\n', '\t']);
        if let Some(after) = trimmed.strip_prefix("/>") {
            return Some((
                Token::Open {
                    name,
                    attrs,
                    self_closing: true,
                },
                after,
            ));
        }
        if let Some(after) = trimmed.strip_prefix('>') {
            return Some((
                Token::Open {
                    name,
                    attrs,
                    self_closing: false,
                },
                after,
            ));
        }
        if trimmed.len() == rest.len() {
            // Attributes are separated by whitespace.
            return None;
        }
        let n = name_len(trimmed, b"-:");
        if n == 0 {
            return None;
        }
        let attr = &trimmed[..n];
        let value_start = trimmed[n..].strip_prefix("=\"")?;
        let end = value_start.find('"')?;
        let raw = &value_start[..end];
        if raw.contains('<') {
            return None;
        }
        let mut value = String::with_capacity(raw.len());
        let mut v = raw;
        while let Some(c) = v.chars().next() {
            if c == '&' {
                let (decoded, after) = entity(v)?;
                value.push(decoded);
                v = after;
            } else {
                value.push(c);
                v = &v[c.len_utf8()..];
            }
        }
        attrs.push((attr, value));
        rest = &value_start[end + 1..];
    }
}

/// One entity at the start of `s` (which starts with `&`): the five XML
/// ones, `&nbsp;`, and numeric references to characters that are not
/// controls.
fn entity(s: &str) -> Option<(char, &str)> {
    let end = s.char_indices().take(12).find(|(_, c)| *c == ';')?.0;
    let body = &s[1..end];
    let after = &s[end + 1..];
    let c = match body {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => '\u{a0}',
        _ => {
            let n = if let Some(hex) = body.strip_prefix("#x").or_else(|| body.strip_prefix("#X")) {
                u32::from_str_radix(hex, 16).ok()?
            } else {
                body.strip_prefix('#')?.parse().ok()?
            };
            char::from_u32(n).filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))?
        }
    };
    Some((c, after))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlighter_output_is_rewritten_or_refused() {
        let ok = [
            ("x", "x", "x"),
            (
                "a < b && 'c'",
                "a &lt; b &amp;&amp; <span class=\"hljs-string\">&#x27;c&#x27;</span>",
                "a &lt; b &amp;&amp; <span class=\"hljs-string\">&#39;c&#39;</span>",
            ),
            (
                "fn f",
                "<span class=\"hljs-keyword\">fn</span> <span class=\"hljs-title function_\">f</span>",
                "<span class=\"hljs-keyword\">fn</span> <span class=\"hljs-title function_\">f</span>",
            ),
            (
                "<b>",
                "<span class=\"a\"><span class=\"b\">&lt;b&gt;</span></span>",
                "<span class=\"a\"><span class=\"b\">&lt;b&gt;</span></span>",
            ),
        ];
        for (code, html, want) in ok {
            assert_eq!(
                highlighted(code, html).map(|s| s.0),
                Some(want.to_string()),
                "{html}"
            );
        }
        let refused = [
            // Text that is not the code.
            ("x", "y"),
            ("x", "x<span class=\"a\">y</span>"),
            // Other elements and attributes: the attacks a highlighter
            // tricked by the code could write.
            ("x", "<img src=x onerror=alert(1)>x"),
            ("x", "<span class=\"a\" onclick=\"alert(1)\">x</span>"),
            ("x", "<span style=\"background:url(//e)\">x</span>"),
            ("x", "<span class=\"a\"><b>x</b></span>"),
            ("x", "<span class='a'>x</span>"),
            ("x", "<span class=\"a\">x"),
            ("x", "x</span>"),
            ("x", "<span class=\"a&quot;onclick=&quot;x\">x</span>"),
            ("<", "<"),
            ("&x;", "&x;"),
            ("x", "<!-- -->x"),
            ("x", "<script>x</script>"),
        ];
        for (code, html) in refused {
            assert_eq!(highlighted(code, html), None, "{html}");
        }
    }

    #[test]
    fn mathml_is_allow_listed() {
        let ok = [
            (
                "<math><msup><mi>x</mi><mn class=\"tml-sml-pad\">2</mn></msup></math>",
                "<math><msup><mi>x</mi><mn class=\"tml-sml-pad\">2</mn></msup></math>",
            ),
            (
                "<math display=\"block\" class=\"tml-display\" style=\"display:block math;\"><mfrac><mn>1</mn><mi>n</mi></mfrac></math>",
                "<math display=\"block\" class=\"tml-display\" style=\"display:block math;\"><mfrac><mn>1</mn><mi>n</mi></mfrac></math>",
            ),
            (
                "<math><mi>a</mi><mo>&lt;</mo><mspace width=\"1em\"/><mtd style=\"padding-left:0em;padding-right:5.9776pt;\">b</mtd></math>",
                "<math><mi>a</mi><mo>&lt;</mo><mspace width=\"1em\"></mspace><mtd style=\"padding-left:0em;padding-right:5.9776pt;\">b</mtd></math>",
            ),
            // Unknown attributes go; the formula stays.
            (
                "<math><mi href=\"javascript:alert(1)\" onclick=\"x\" xlink:href=\"y\">x</mi></math>",
                "<math><mi>x</mi></math>",
            ),
            // CSS that could load something goes.
            (
                "<math><mi style=\"background:url(https://e/x)\">x</mi></math>",
                "<math><mi>x</mi></math>",
            ),
            (
                "<math><semantics><mi>x</mi><annotation encoding=\"application/x-tex\">x &amp; y</annotation></semantics></math>",
                "<math><semantics><mi>x</mi><annotation encoding=\"application/x-tex\">x &amp; y</annotation></semantics></math>",
            ),
        ];
        for (html, want) in ok {
            assert_eq!(mathml(html).map(|s| s.0), Some(want.to_string()), "{html}");
        }
        let refused = [
            "x",
            "<mi>x</mi>",
            "<math><mi>x</mi></math><script>alert(1)</script>",
            "<math><mi>x</mi></math>trailing",
            "<math><annotation-xml encoding=\"text/html\"><img src=x onerror=alert(1)></annotation-xml></math>",
            "<math><maction actiontype=\"statusline\"><mi>x</mi></maction></math>",
            "<math><mi>x</mo></math>",
            "<math><mi>x</mi>",
            "<math><math></math></math>",
            "<math><foreignobject><div>x</div></foreignobject></math>",
            "<math><mi title='x'>x</mi></math>",
            "<math><mi>&bogus;</mi></math>",
        ];
        for html in refused {
            assert_eq!(mathml(html), None, "{html}");
        }
    }
}
