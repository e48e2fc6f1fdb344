//! Property tests of the Markdown renderer and the checks on what the
//! highlighter and the math converter hand back: whatever text a model, a
//! note or a converter produces, rendering never panics, and the HTML
//! never carries a way to run script or load anything by itself.
//!
//! `cargo xtask test` runs a fixed number of cases (`PROPTEST_CASES`);
//! `cargo xtask fuzz` runs many more, in release.

use hearth_markdown::{
    Enhance, MathState, SafeHtml, StreamRender, safe, to_chat_html_with, to_safe_html,
};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Markdown made of what tries to get past the renderer, and noise.
fn markdown() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            prop::sample::select(vec![
                "<script>alert(1)</script>",
                "<img src=x onerror=alert(1)>",
                "<iframe src=//x>",
                "[a](javascript:alert(1))",
                "[a](JaVaScRiPt:x)",
                "[a]( javascript:x)",
                "[a](data:text/html,x)",
                "![i](https://t.example/p.gif)",
                "<a href=x>y</a>",
                "```html\n<script>x</script>\n```\n",
                "```\n",
                "$x^2$",
                "$$\\int$$",
                "$",
                "\n",
                "\n\n",
                "> ",
                "- ",
                "1. ",
                "# ",
                "|a|b|\n|-|-|\n",
                "**",
                "_",
                "`",
                "<",
                ">",
                "&",
                "&lt;",
                "\"",
                "'",
                "[x]: javascript:y\n[z][x]",
                "<svg onload=x>",
                "<style>*{}</style>",
                "<!-- c -->",
                "\u{0}",
                "\u{202e}",
                "é漢🙂",
                "<https://a.example>",
                "<javascript:x>",
                "www.example.com",
                "http://a.example/\"onmouseover=x",
            ])
            .prop_map(str::to_string),
            ".{0,12}",
        ],
        0..32,
    )
    .prop_map(|parts| parts.concat())
}

/// What the renderer may never emit, however the source is written: no
/// element that runs or loads something, no event handler, no script or
/// data URL. Text is escaped, so every `<` in the output opens a tag; only
/// tags are checked (a reply may well talk about `onerror`).
fn assert_inert(html: &str) -> Result<(), TestCaseError> {
    let lower = html.to_ascii_lowercase();
    for (at, _) in lower.match_indices('<') {
        let tag = lower[at + 1..].split('>').next().unwrap_or("");
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        prop_assert!(
            !matches!(
                name.as_str(),
                "script"
                    | "iframe"
                    | "img"
                    | "svg"
                    | "style"
                    | "object"
                    | "embed"
                    | "form"
                    | "meta"
                    | "link"
                    | "base"
                    | "frame"
                    | "video"
                    | "audio"
                    | "source"
            ),
            "<{tag}> in {html}"
        );
        for (attribute, value) in attributes(tag) {
            prop_assert!(
                !attribute.starts_with("on") && attribute != "srcdoc" && attribute != "style",
                "<{tag}> in {html}"
            );
            let value = value.trim_start();
            for url in ["javascript:", "data:", "vbscript:"] {
                prop_assert!(!value.starts_with(url), "<{tag}> in {html}");
            }
        }
    }
    Ok(())
}

/// The attributes of a tag's text (its name first), names and values,
/// quotes honoured.
fn attributes(tag: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut chars = tag.chars().peekable();
    while chars.peek().is_some_and(|c| !c.is_whitespace()) {
        chars.next();
    }
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace() || *c == '/') {
            chars.next();
        }
        let mut name = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() || c == '=' {
                break;
            }
            name.push(c);
            chars.next();
        }
        if name.is_empty() {
            return out;
        }
        let mut value = String::new();
        if chars.peek() == Some(&'=') {
            chars.next();
            match chars.peek().copied() {
                Some(q @ ('"' | '\'')) => {
                    chars.next();
                    for c in chars.by_ref() {
                        if c == q {
                            break;
                        }
                        value.push(c);
                    }
                }
                _ => {
                    while let Some(&c) = chars.peek() {
                        if c.is_whitespace() {
                            break;
                        }
                        value.push(c);
                        chars.next();
                    }
                }
            }
        }
        out.push((name, value));
    }
}

/// Highlights and converts with whatever text it is told, as a broken or
/// hostile converter might: only what passes `safe`'s checks is used.
struct Hostile(String);

impl Enhance for Hostile {
    fn code(&self, _language: &str, code: &str) -> Option<SafeHtml> {
        safe::highlighted(code, &self.0)
    }
    fn math(&self, _tex: &str, _display: bool) -> MathState {
        match safe::mathml(&self.0) {
            Some(m) => MathState::Ready(m),
            None => MathState::Failed,
        }
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn rendered_markdown_is_inert(source in markdown()) {
        assert_inert(&to_safe_html(&source))?;
        assert_inert(&to_chat_html_with(&source, &hearth_markdown::Plain).html)?;
    }

    #[test]
    fn converters_cannot_smuggle_markup_in(
        source in markdown(),
        answer in prop_oneof![
            prop::sample::select(vec![
                "<span class=\"hljs-keyword\">x</span>", "<math><mi>x</mi></math>",
                "<span onclick=x>y</span>", "<script>x</script>", "<math><mtext><img src=x></mtext></math>",
                "<span class=\"x\" style=\"background:url(//a)\">", "</span></span>",
            ]).prop_map(str::to_string),
            ".{0,40}",
        ],
    ) {
        let rendered = to_chat_html_with(&source, &Hostile(answer));
        assert_inert(&rendered.html)?;
    }

    #[test]
    fn a_streamed_reply_renders_as_it_grows(source in markdown(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 1..6)) {
        let mut stream = StreamRender::new();
        let chars: Vec<char> = source.chars().collect();
        let mut at: Vec<usize> = cuts.iter().map(|c| c.index(chars.len() + 1)).collect();
        at.sort_unstable();
        at.push(chars.len());
        for end in at {
            let prefix: String = chars[..end].iter().collect();
            let _ = stream.update(&prefix, &hearth_markdown::Plain);
            for i in 0..stream.block_count() {
                assert_inert(stream.block(i))?;
            }
            assert_inert(stream.open())?;
        }
    }
}
