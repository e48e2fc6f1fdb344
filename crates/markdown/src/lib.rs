//! Markdown to HTML that is safe to put in the page: raw HTML in the source
//! is shown as text, links keep only http(s) and mailto targets, and images
//! become links (loading a remote image would leak that the note was read).
//!
//! Chat replies also carry highlighted code and math. Both come from a
//! highlighter and a LaTeX-to-MathML converter the app loads on demand, so
//! rendering takes an [`Enhance`] that answers what is ready, and says what
//! is not yet ([`Pending`]): a block shows plain until its highlighting
//! arrives, a formula shows its source until (or unless) it converts. Only
//! closed code blocks are highlighted, so the block a stream is still
//! writing stays plain. What the converters return passes
//! [`safe`]'s checks before it is ever markup.

pub mod safe;
mod stream;

use hearth_base::html::escape;
use pulldown_cmark::{CodeBlockKind, CowStr, Event, LinkType, Options, Parser, Tag, TagEnd, html};

pub use safe::SafeHtml;
pub use stream::{StreamRender, StreamUpdate};

fn safe_url(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    lower.starts_with("http://")
        || lower.starts_with("https://")
        || lower.starts_with("mailto:")
        || lower.starts_with('#')
}

/// Renders `source` to HTML with no way for it to run script or load
/// anything by itself.
pub fn to_safe_html(source: &str) -> String {
    render(source, None).html
}

/// Like [`to_safe_html`], for chat replies, with nothing highlighted yet:
/// see [`to_chat_html_with`].
pub fn to_chat_html(source: &str) -> String {
    to_chat_html_with(source, &Plain).html
}

/// Highlighted code and converted math, as far as they are ready.
pub trait Enhance {
    /// `code` highlighted as `language`, once it is.
    fn code(&self, language: &str, code: &str) -> Option<SafeHtml>;
    /// `tex` as MathML, once converted; the converter's refusal is
    /// [`MathState::Failed`].
    fn math(&self, tex: &str, display: bool) -> MathState;
}

/// Where a formula's conversion stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MathState {
    NotYet,
    Ready(SafeHtml),
    /// The source is not LaTeX the converter reads; it stays shown as is.
    Failed,
}

/// Nothing is ever ready: code stays plain and math shows its source.
pub struct Plain;

impl Enhance for Plain {
    fn code(&self, _: &str, _: &str) -> Option<SafeHtml> {
        None
    }
    fn math(&self, _: &str, _: bool) -> MathState {
        MathState::NotYet
    }
}

/// Something the page could enhance, not ready in this rendering.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Pending {
    Code { language: String, code: String },
    Math { tex: String, display: bool },
}

/// A chat reply's HTML and what it still waits for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rendered {
    pub html: String,
    pub pending: Vec<Pending>,
}

/// Renders a chat reply: each code block is wrapped in
/// `<div class="code-block">` with a header naming its language and a
/// `button.copy-code` the app answers with one delegated click handler;
/// a closed block in a named language is highlighted when `enhance` has
/// it; `$…$` and `$$…$$` are MathML when `enhance` has them, else their
/// source in a `span.math` (`data-state="pending"` or `"failed"`).
pub fn to_chat_html_with(source: &str, enhance: &dyn Enhance) -> Rendered {
    render(source, Some(enhance))
}

fn fence_language(kind: &CodeBlockKind<'_>) -> String {
    match kind {
        CodeBlockKind::Fenced(info) => info.split_whitespace().next().unwrap_or("").to_string(),
        CodeBlockKind::Indented => String::new(),
    }
}

fn code_head(lang: &str) -> String {
    format!(
        "<div class=\"code-block\"><div class=\"code-head\"><span class=\"code-lang\">{}</span><button type=\"button\" class=\"copy-code\" aria-label=\"Copy code\">Copy</button></div>",
        escape(lang)
    )
}

/// Whether the fenced block written as `block` (its source, fences
/// included, perhaps behind list indentation or `>` quote markers) has its
/// closing fence: until it does, a stream is still writing it.
fn fence_closed(block: &str) -> bool {
    let strip = |line: &str| {
        line.trim_start_matches(|c: char| c == '>' || c.is_whitespace())
            .trim_end()
            .to_string()
    };
    let mut lines = block.trim_end_matches(['\n', '\r']).lines();
    let Some(first) = lines.next().map(strip) else {
        return false;
    };
    let Some(fence) = first.chars().next().filter(|c| *c == '`' || *c == '~') else {
        return true;
    };
    let opening = first.chars().take_while(|c| *c == fence).count();
    match lines.last().map(strip) {
        Some(last) => last.len() >= opening && last.chars().all(|c| c == fence),
        None => false,
    }
}

/// A code block being collected until its end.
struct OpenBlock {
    language: String,
    closed: bool,
    code: String,
}

/// The Markdown extensions rendering reads; chat replies add math.
fn options(chat: bool) -> Options {
    let mut options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    if chat {
        options |= Options::ENABLE_MATH;
    }
    options
}

fn render(source: &str, chat: Option<&dyn Enhance>) -> Rendered {
    let options = options(chat.is_some());
    let mut pending = Vec::new();
    let mut open: Option<OpenBlock> = None;
    let mut events: Vec<Event<'_>> = Vec::new();
    for (event, range) in Parser::new_ext(source, options).into_offset_iter() {
        let event = defuse(event);
        let Some(enhance) = chat else {
            events.push(event);
            continue;
        };
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let language = fence_language(&kind);
                let closed = match kind {
                    CodeBlockKind::Fenced(_) => fence_closed(&source[range]),
                    CodeBlockKind::Indented => true,
                };
                events.push(Event::Html(code_head(&language).into()));
                open = Some(OpenBlock {
                    language,
                    closed,
                    code: String::new(),
                });
            }
            Event::Text(text) if open.is_some() => {
                if let Some(block) = open.as_mut() {
                    block.code.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some(block) = open.take() {
                    events.push(Event::Html(code_block(block, enhance, &mut pending).into()));
                }
            }
            Event::InlineMath(tex) => events.push(Event::InlineHtml(
                math(&tex, false, enhance, &mut pending).into(),
            )),
            Event::DisplayMath(tex) => events.push(Event::InlineHtml(
                math(&tex, true, enhance, &mut pending).into(),
            )),
            other => events.push(other),
        }
    }
    let mut out = String::new();
    html::push_html(&mut out, events.into_iter());
    // Links open outside the app and tell the target nothing about it.
    let html = out.replace(
        "<a href=\"",
        "<a rel=\"noopener noreferrer nofollow\" target=\"_blank\" href=\"",
    );
    pending.dedup();
    Rendered { html, pending }
}

/// The source's own markup made harmless: raw HTML becomes text, links
/// and images keep only safe targets, images become links.
fn defuse(event: Event<'_>) -> Event<'_> {
    match event {
        // Raw HTML, block or inline, is shown as the text it is.
        Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: if safe_url(&dest_url) {
                dest_url
            } else {
                CowStr::from("")
            },
            title,
            id,
        }),
        Event::Start(Tag::Image {
            dest_url,
            title,
            id,
            ..
        }) => Event::Start(Tag::Link {
            link_type: LinkType::Inline,
            dest_url: if safe_url(&dest_url) {
                dest_url
            } else {
                CowStr::from("")
            },
            title,
            id,
        }),
        Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
        other => other,
    }
}

/// A code block's `<pre>` (inside the `div.code-block` its head opened),
/// highlighted when it is closed, names a language and `enhance` has it.
fn code_block(block: OpenBlock, enhance: &dyn Enhance, pending: &mut Vec<Pending>) -> String {
    let class = if block.language.is_empty() {
        String::new()
    } else {
        format!(" class=\"language-{}\"", escape(&block.language))
    };
    let wants_highlight = block.closed && !block.language.is_empty();
    let body = match wants_highlight.then(|| enhance.code(&block.language, &block.code)) {
        Some(Some(highlighted)) => {
            return format!(
                "<pre><code{class} data-highlighted=\"yes\">{}</code></pre>\n</div>\n",
                highlighted.as_str()
            );
        }
        Some(None) => {
            pending.push(Pending::Code {
                language: block.language.clone(),
                code: block.code.clone(),
            });
            escape(&block.code)
        }
        None => escape(&block.code),
    };
    format!("<pre><code{class}>{body}</code></pre>\n</div>\n")
}

/// A formula as MathML when ready, else its source (`$…$` / `$$…$$`).
fn math(tex: &str, display: bool, enhance: &dyn Enhance, pending: &mut Vec<Pending>) -> String {
    let kind = if display { "display" } else { "inline" };
    let state = enhance.math(tex, display);
    let state_attr = match state {
        MathState::Ready(mathml) => {
            return format!(
                "<span class=\"math math-{kind}\" data-state=\"ready\">{}</span>",
                mathml.as_str()
            );
        }
        MathState::NotYet => {
            pending.push(Pending::Math {
                tex: tex.to_string(),
                display,
            });
            "pending"
        }
        MathState::Failed => "failed",
    };
    let fence = if display { "$$" } else { "$" };
    let title = if state_attr == "failed" {
        " title=\"This formula could not be rendered; its source is shown\""
    } else {
        ""
    };
    format!(
        "<span class=\"math math-{kind}\" data-state=\"{state_attr}\"{title}><code>{fence}{}{fence}</code></span>",
        escape(tex)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn markdown_renders() {
        assert_eq!(
            to_safe_html("# Hi\n\n*a* **b** `c`"),
            "<h1>Hi</h1>\n<p><em>a</em> <strong>b</strong> <code>c</code></p>\n"
        );
        assert_eq!(
            to_safe_html("- [x] done"),
            "<ul>\n<li><input disabled=\"\" type=\"checkbox\" checked=\"\"/>\ndone</li>\n</ul>\n"
        );
        // Notes keep dollars as text.
        assert_eq!(to_safe_html("$5 and $6"), "<p>$5 and $6</p>\n");
    }

    #[test]
    fn hostile_input_is_defused() {
        let cases = [
            (
                "<script>alert(1)</script>",
                "&lt;script&gt;alert(1)&lt;/script&gt;",
            ),
            (
                "hi <img src=x onerror=alert(1)>",
                "<p>hi &lt;img src=x onerror=alert(1)&gt;</p>",
            ),
            (
                "[click](javascript:alert(1))",
                "<p><a rel=\"noopener noreferrer nofollow\" target=\"_blank\" href=\"\">click</a></p>",
            ),
            (
                "[x](JaVaScRiPt:alert(1))",
                "<p><a rel=\"noopener noreferrer nofollow\" target=\"_blank\" href=\"\">x</a></p>",
            ),
            (
                "[x](data:text/html,<b>)",
                "<p><a rel=\"noopener noreferrer nofollow\" target=\"_blank\" href=\"\">x</a></p>",
            ),
            (
                "![pixel](https://tracker.example/p.gif)",
                "<p><a rel=\"noopener noreferrer nofollow\" target=\"_blank\" href=\"https://tracker.example/p.gif\">pixel</a></p>",
            ),
            (
                "<a href=\"javascript:x\">y</a>",
                "<p>&lt;a href=\"javascript:x\"&gt;y&lt;/a&gt;</p>",
            ),
            (
                "[ok](https://example.com \"t\")",
                "<p><a rel=\"noopener noreferrer nofollow\" target=\"_blank\" href=\"https://example.com\" title=\"t\">ok</a></p>",
            ),
        ];
        for (md, want) in cases {
            assert_eq!(to_safe_html(md).trim_end(), want, "{md}");
            // Chat replies defuse the same way.
            assert_eq!(to_chat_html(md).trim_end(), want, "{md}");
        }
    }

    const HEAD: &str =
        "<div class=\"code-block\"><div class=\"code-head\"><span class=\"code-lang\">";
    const COPY: &str = "</span><button type=\"button\" class=\"copy-code\" aria-label=\"Copy code\">Copy</button></div>";

    #[test]
    fn chat_code_blocks_get_a_copy_button() {
        let cases = [
            (
                "```rust\nfn main() {}\n```",
                format!(
                    "{HEAD}rust{COPY}<pre><code class=\"language-rust\">fn main() {{}}\n</code></pre>\n</div>"
                ),
            ),
            (
                "    indented <b>",
                format!("{HEAD}{COPY}<pre><code>indented &lt;b&gt;</code></pre>\n</div>"),
            ),
            // A hostile info string stays text, in the label and the class.
            (
                "```\"><script>x</script>\n</code></pre><img src=x onerror=alert(1)>\n```",
                format!(
                    "{HEAD}&quot;&gt;&lt;script&gt;x&lt;/script&gt;{COPY}<pre><code class=\"language-&quot;&gt;&lt;script&gt;x&lt;/script&gt;\">&lt;/code&gt;&lt;/pre&gt;&lt;img src=x onerror=alert(1)&gt;\n</code></pre>\n</div>"
                ),
            ),
            ("plain `code`", "<p>plain <code>code</code></p>".to_string()),
        ];
        for (md, want) in cases {
            assert_eq!(to_chat_html(md).trim_end(), want, "{md}");
        }
        // Notes keep the plain rendering.
        assert_eq!(
            to_safe_html("```\nx\n```").trim_end(),
            "<pre><code>x\n</code></pre>"
        );
    }

    /// An enhancer answering from fixed tables, as the app's cache does.
    #[derive(Default)]
    struct Ready {
        code: HashMap<(String, String), SafeHtml>,
        math: HashMap<(String, bool), MathState>,
    }

    impl Enhance for Ready {
        fn code(&self, language: &str, code: &str) -> Option<SafeHtml> {
            self.code
                .get(&(language.to_string(), code.to_string()))
                .cloned()
        }
        fn math(&self, tex: &str, display: bool) -> MathState {
            self.math
                .get(&(tex.to_string(), display))
                .cloned()
                .unwrap_or(MathState::NotYet)
        }
    }

    #[test]
    fn closed_blocks_are_highlighted_in_each_language_the_open_one_stays_plain() {
        // What highlight.js answers for these blocks.
        let highlighted = [
            (
                "rust",
                "fn main() {}\n",
                "<span class=\"hljs-keyword\">fn</span> <span class=\"hljs-title function_\">main</span>() {}\n",
            ),
            (
                "python",
                "def f(x):\n    return x < 1\n",
                "<span class=\"hljs-keyword\">def</span> <span class=\"hljs-title function_\">f</span>(<span class=\"hljs-params\">x</span>):\n    <span class=\"hljs-keyword\">return</span> x &lt; <span class=\"hljs-number\">1</span>\n",
            ),
            (
                "js",
                "const s = '<b>';\n",
                "<span class=\"hljs-keyword\">const</span> s = <span class=\"hljs-string\">&#x27;&lt;b&gt;&#x27;</span>;\n",
            ),
            (
                "sql",
                "SELECT 1;\n",
                "<span class=\"hljs-keyword\">SELECT</span> <span class=\"hljs-number\">1</span>;\n",
            ),
        ];
        let mut ready = Ready::default();
        for (lang, code, html) in highlighted {
            let safe = safe::highlighted(code, html).unwrap();
            ready.code.insert((lang.into(), code.into()), safe);
        }
        for (lang, code, html) in highlighted {
            let md = format!("```{lang}\n{code}```\n");
            let out = to_chat_html_with(&md, &ready);
            // The check writes quotes its own way; the rest is as given.
            let html = html.replace("&#x27;", "&#39;");
            assert_eq!(
                out.html.trim_end(),
                format!(
                    "{HEAD}{lang}{COPY}<pre><code class=\"language-{lang}\" data-highlighted=\"yes\">{html}</code></pre>\n</div>"
                ),
                "{lang}"
            );
            assert_eq!(out.pending, vec![], "{lang}");
        }
        // Not ready yet: plain, and asked for.
        let out = to_chat_html_with("```go\nfunc f() {}\n```", &ready);
        assert!(
            out.html
                .contains("<code class=\"language-go\">func f() {}\n</code>")
        );
        assert_eq!(
            out.pending,
            vec![Pending::Code {
                language: "go".into(),
                code: "func f() {}\n".into()
            }]
        );
        // Still being streamed (no closing fence): plain and not asked for,
        // even when the highlighter has the text so far.
        let streaming = "Here:\n\n```rust\nfn main() {}\n";
        let out = to_chat_html_with(streaming, &ready);
        assert!(
            out.html
                .contains("<code class=\"language-rust\">fn main() {}\n</code>")
        );
        assert_eq!(out.pending, vec![]);
        // No language named: never highlighted.
        let out = to_chat_html_with("```\nplain\n```", &ready);
        assert_eq!(out.pending, vec![]);
    }

    #[test]
    fn fences_are_closed_only_by_a_matching_fence() {
        let cases = [
            ("```rust\nx\n```", true),
            ("```rust\nx\n```\n", true),
            ("````\nx\n```", false),
            ("````\nx\n`````", true),
            ("~~~\nx\n~~~", true),
            ("~~~\nx\n```", false),
            ("```\nx", false),
            ("```", false),
            ("> ```py\n> x\n> ```", true),
            ("  ```\n  x\n  ```", true),
        ];
        for (block, closed) in cases {
            assert_eq!(fence_closed(block), closed, "{block:?}");
        }
    }

    #[test]
    fn math_is_mathml_when_converted_and_its_source_otherwise() {
        let mut ready = Ready::default();
        let inline = safe::mathml("<math><msup><mi>x</mi><mn>2</mn></msup></math>").unwrap();
        let display =
            safe::mathml("<math display=\"block\"><mfrac><mn>1</mn><mi>n</mi></mfrac></math>")
                .unwrap();
        ready
            .math
            .insert(("x^2".into(), false), MathState::Ready(inline));
        ready
            .math
            .insert(("\\frac{1}{n}".into(), true), MathState::Ready(display));
        ready
            .math
            .insert(("\\frac{1}".into(), false), MathState::Failed);
        let out = to_chat_html_with(
            "Square $x^2$, then\n\n$$\\frac{1}{n}$$\n\nbroken $\\frac{1}$ and $y<z$.",
            &ready,
        );
        assert_eq!(
            out.html,
            "<p>Square <span class=\"math math-inline\" data-state=\"ready\"><math><msup><mi>x</mi><mn>2</mn></msup></math></span>, then</p>\n\
             <p><span class=\"math math-display\" data-state=\"ready\"><math display=\"block\"><mfrac><mn>1</mn><mi>n</mi></mfrac></math></span></p>\n\
             <p>broken <span class=\"math math-inline\" data-state=\"failed\" title=\"This formula could not be rendered; its source is shown\"><code>$\\frac{1}$</code></span> \
             and <span class=\"math math-inline\" data-state=\"pending\"><code>$y&lt;z$</code></span>.</p>\n"
        );
        assert_eq!(
            out.pending,
            vec![Pending::Math {
                tex: "y<z".into(),
                display: false
            }]
        );
        // A formula cannot smuggle markup in: its source is text.
        let out = to_chat_html("$<img src=x onerror=alert(1)>$");
        assert_eq!(
            out.trim_end(),
            "<p><span class=\"math math-inline\" data-state=\"pending\"><code>$&lt;img src=x onerror=alert(1)&gt;$</code></span></p>"
        );
    }
}
