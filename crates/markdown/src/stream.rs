//! A reply rendered block by block while it streams, so each new piece of
//! text costs the same however long the reply already is.
//!
//! Appending text can only change a reply's last top-level block (a
//! paragraph may turn into a heading, a list may gain an item, a code block
//! may close) or add blocks after it; every block before the last is
//! settled, once the line that begins the block after it is whole.
//! [`StreamRender`] keeps the settled blocks' HTML and parses only
//! what follows them: the open block and the new text. The page appends
//! settled blocks once and re-renders only the open one, so a selection in
//! the settled part survives the next piece of text.
//!
//! A whole-document pass can differ from the block-by-block one where
//! Markdown reaches across blocks (a link definition written after its use,
//! footnote numbers); [`StreamRender::finish`] tells the page when the
//! finished reply must be rendered whole instead.

use std::ops::Range;

use pulldown_cmark::{Event, Parser};

use super::{Enhance, Pending, Rendered, options, to_chat_html_with};

/// One settled block: its HTML and what it still waits for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Block {
    /// Where the block's source is, in the reply.
    source: Range<usize>,
    rendered: Rendered,
}

/// What changed in the page's copy of a reply.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamUpdate {
    /// The reply was replaced rather than extended (an edit, a new try):
    /// the page drops what it shows and starts again from block 0.
    pub reset: bool,
    /// Blocks settled by this text, by index, to append in order.
    pub settled: Range<usize>,
    /// Whether the open block's HTML changed.
    pub open_changed: bool,
}

/// A streaming reply's rendering, kept between pieces of text.
#[derive(Debug, Default)]
pub struct StreamRender {
    /// The reply's source up to the end of the last settled block, kept to
    /// notice a reply that was replaced rather than extended.
    settled_source: String,
    blocks: Vec<Block>,
    open: Rendered,
}

impl StreamRender {
    pub fn new() -> Self {
        Self::default()
    }

    /// Brings the rendering up to `source`, the whole reply so far.
    pub fn update(&mut self, source: &str, enhance: &dyn Enhance) -> StreamUpdate {
        let reset = !self.extends(source);
        if reset {
            *self = Self::new();
        }
        let from = self.settled_source.len();
        let first_new = self.blocks.len();
        let tail = &source[from..];
        // Blocks are told apart on whole lines only: a line still being
        // written can read as something else once it is whole (`|` is no
        // table row yet, `-` may become a rule), and must not settle the
        // block before it.
        let whole_lines = tail.rfind('\n').map_or(0, |i| i + 1);
        let starts = block_starts(&tail[..whole_lines]);
        // Every block but the last is settled: it runs from where the one
        // before it ended (blank lines and definitions included) to where
        // the next one starts.
        let mut at = 0;
        for next in starts.iter().skip(1) {
            let range = from + at..from + next;
            let rendered = to_chat_html_with(&source[range.clone()], enhance);
            self.blocks.push(Block {
                source: range,
                rendered,
            });
            at = *next;
        }
        self.settled_source.push_str(&tail[..at]);
        let open = to_chat_html_with(&tail[at..], enhance);
        let open_changed = open != self.open;
        self.open = open;
        StreamUpdate {
            reset,
            settled: first_new..self.blocks.len(),
            open_changed,
        }
    }

    /// Whether `source` still begins with the settled part. Checked on the
    /// settled part's opening bytes and its last block only, so the check
    /// costs the same however long the reply is; a reply replaced rather
    /// than extended (an edit, a new try) differs in one or the other.
    fn extends(&self, source: &str) -> bool {
        let settled = &self.settled_source;
        let Some(candidate) = source.get(..settled.len()) else {
            return false;
        };
        let head = settled.len().min(64);
        let last = self.blocks.last().map_or(0..0, |b| b.source.clone());
        candidate.as_bytes()[..head] == settled.as_bytes()[..head]
            && candidate.as_bytes()[last.clone()] == settled.as_bytes()[last]
    }

    /// Renders again the settled blocks that were waiting for highlighting
    /// or math, and the open one; returns the settled blocks that changed.
    pub fn enhance(&mut self, enhance: &dyn Enhance) -> Vec<usize> {
        let mut changed = Vec::new();
        for (i, block) in self.blocks.iter_mut().enumerate() {
            if block.rendered.pending.is_empty() {
                continue;
            }
            let again = to_chat_html_with(&self.settled_source[block.source.clone()], enhance);
            if again != block.rendered {
                block.rendered = again;
                changed.push(i);
            }
        }
        changed
    }

    /// Re-renders the open block (after [`Self::enhance`], say).
    pub fn refresh_open(&mut self, source: &str, enhance: &dyn Enhance) -> bool {
        let from = self.settled_source.len().min(source.len());
        let open = to_chat_html_with(&source[from..], enhance);
        let changed = open != self.open;
        self.open = open;
        changed
    }

    /// A settled block's HTML.
    pub fn block(&self, index: usize) -> &str {
        self.blocks
            .get(index)
            .map_or("", |b| b.rendered.html.as_str())
    }

    pub fn block_count(&self) -> usize {
        self.blocks.len()
    }

    /// The open block's HTML.
    pub fn open(&self) -> &str {
        &self.open.html
    }

    /// What a settled block still waits for.
    pub fn block_pending(&self, index: usize) -> &[Pending] {
        self.blocks
            .get(index)
            .map_or(&[][..], |b| b.rendered.pending.as_slice())
    }

    /// What the open block still waits for.
    pub fn open_pending(&self) -> &[Pending] {
        &self.open.pending
    }

    /// Everything the settled and the open blocks still wait for.
    pub fn pending(&self) -> Vec<Pending> {
        let mut all: Vec<Pending> = self
            .blocks
            .iter()
            .flat_map(|b| b.rendered.pending.iter().cloned())
            .chain(self.open.pending.iter().cloned())
            .collect();
        all.dedup();
        all
    }

    /// The HTML as the page shows it: settled blocks then the open one.
    pub fn html(&self) -> String {
        let mut out: String = self
            .blocks
            .iter()
            .map(|b| b.rendered.html.as_str())
            .collect();
        out.push_str(&self.open.html);
        out
    }

    /// Once the reply is complete: its whole-document rendering when that
    /// differs from what the blocks show, `None` when the page can keep
    /// what it has.
    pub fn finish(&mut self, source: &str, enhance: &dyn Enhance) -> Option<Rendered> {
        self.update(source, enhance);
        let whole = to_chat_html_with(source, enhance);
        (whole.html != self.html()).then_some(whole)
    }
}

/// Where each top-level block of `source` starts, in order: the start of
/// the line it begins on, since the parser may place it after the
/// indentation that makes it what it is (an indented code block).
fn block_starts(source: &str) -> Vec<usize> {
    let line_start = |at: usize| source[..at].rfind('\n').map_or(0, |i| i + 1);
    let mut starts = Vec::new();
    let mut depth = 0usize;
    for (event, range) in Parser::new_ext(source, options(true)).into_offset_iter() {
        match event {
            Event::Start(_) => {
                if depth == 0 {
                    starts.push(line_start(range.start));
                }
                depth += 1;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            // A thematic break, or anything else standing alone at the top.
            _ if depth == 0 => starts.push(line_start(range.start)),
            _ => {}
        }
    }
    starts.dedup();
    starts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MathState, Plain, SafeHtml, to_chat_html};

    /// Streams `reply` in pieces of `step` bytes (on char boundaries) and
    /// returns the renderer and the page as the updates built it.
    fn stream(reply: &str, step: usize) -> (StreamRender, Vec<String>, String) {
        let mut r = StreamRender::new();
        let mut page: Vec<String> = Vec::new();
        let mut open = String::new();
        let mut end = 0;
        while end < reply.len() {
            end = (end + step).min(reply.len());
            while !reply.is_char_boundary(end) {
                end += 1;
            }
            let u = r.update(&reply[..end], &Plain);
            if u.reset {
                page.clear();
            }
            for i in u.settled {
                page.push(r.block(i).to_string());
            }
            if u.open_changed {
                open = r.open().to_string();
            }
        }
        (r, page, open)
    }

    const REPLY: &str = "# Plan\n\nFirst a paragraph with *emphasis* and a [link](https://example.org).\n\n\
        - one\n- two\n\n  still two\n- three\n\n\
        ```rust\nfn main() {\n\n    println!(\"hi\");\n}\n```\n\n\
        | a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\n\
        A formula $x^2$ inline.\n\nSetext heading\n===\n\n---\n\n> quoted\n> more\n\nThe end.\n";

    #[test]
    fn streamed_in_any_pieces_the_page_shows_what_a_whole_render_shows() {
        let whole = to_chat_html(REPLY);
        for step in [1, 2, 3, 7, 16, 64, REPLY.len()] {
            let (mut r, page, open) = stream(REPLY, step);
            assert_eq!(page.concat() + &open, whole, "pieces of {step}");
            assert_eq!(r.html(), whole);
            assert_eq!(r.finish(REPLY, &Plain), None, "pieces of {step}");
        }
    }

    #[test]
    fn replies_of_every_shape_stream_to_their_whole_render() {
        let replies = [
            "Para\n| a | b |\n|---|---|\n| 1 | 2 |\nafter\n",
            "1. one\n2. two\n\n   indented\n\n3. three\n\nText\n\n10. ten\n",
            "- a\n  - b\n    - c\n\n  back\n- d\n",
            "<div>\nraw\n</div>\n\n<!-- c -->\n\nplain\n",
            "Title\n-----\n\nText\n***\n- x\n\n~~~\ntilde `x`\n~~~~\n\n    indented code\n\nend",
            "$$\nx^2\n$$\n\nand $y$ and \\$5\n\n> q\n>\n> - l\n> ```\n> c\n> ```\n",
            "Unicode: żółw 🐢 ok\n\n```\nnever closed\n\nstill code",
        ];
        for reply in replies {
            let whole = to_chat_html(reply);
            for step in [1, 2, 5, 13] {
                let (mut r, page, open) = stream(reply, step);
                assert_eq!(
                    page.concat() + &open,
                    whole,
                    "{reply:?} in pieces of {step}"
                );
                assert_eq!(r.finish(reply, &Plain), None, "{reply:?}");
            }
        }
    }

    #[test]
    fn shuffled_fragments_stream_to_their_whole_render() {
        // Fragments that meet each other in every order: each pair is a
        // chance for a block to read differently split than whole.
        const PARTS: [&str; 16] = [
            "Plain text",
            "# Heading",
            "Setext\n===",
            "- item\n- item",
            "1. one\n2. two",
            "> quote\nlazy",
            "```js\nlet x = 1;\n```",
            "    code",
            "| h | i |\n|---|---|\n| 1 | 2 |",
            "***",
            "$$\na+b\n$$",
            "  - nested\n    more",
            "<b>raw</b>",
            "a `code` *b* [l](http://x.y)",
            "~~~\nunclosed",
            "---",
        ];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..300 {
            let mut reply = String::new();
            for _ in 0..(2 + next(5)) {
                reply.push_str(PARTS[next(PARTS.len())]);
                reply.push_str(["\n", "\n\n", "\n\n\n"][next(3)]);
            }
            let whole = to_chat_html(&reply);
            let step = 1 + next(6);
            let (mut r, page, open) = stream(&reply, step);
            assert_eq!(
                page.concat() + &open,
                whole,
                "{reply:?} in pieces of {step}"
            );
            assert_eq!(r.finish(&reply, &Plain), None, "{reply:?}");
        }
    }

    #[test]
    fn only_the_last_block_stays_open() {
        let (r, page, open) = stream(REPLY, 5);
        assert_eq!(page.len(), r.block_count());
        assert!(r.block_count() >= 9, "{}", r.block_count());
        assert_eq!(open, "<p>The end.</p>\n");
        // An unclosed fence keeps everything after it in the open block.
        let mut r = StreamRender::new();
        r.update("Intro\n\n```\ncode\n\nmore code\n", &Plain);
        assert_eq!(r.block_count(), 1);
        assert!(r.open().contains("more code"));
    }

    #[test]
    fn settled_blocks_are_parsed_once() {
        // After a long settled part, an update parses only the open block:
        // what is kept as settled source never shrinks and the settled
        // blocks keep their HTML.
        let mut r = StreamRender::new();
        let long: String = (0..500).map(|i| format!("Paragraph {i}.\n\n")).collect();
        r.update(&long, &Plain);
        let settled = r.block_count();
        assert_eq!(settled, 499);
        let first = r.block(0).to_string();
        let u = r.update(&(long.clone() + "More"), &Plain);
        assert_eq!(u.settled, 499..499, "More's line is not whole yet");
        assert!(u.open_changed);
        assert_eq!(r.block(0), first);
        let u = r.update(&(long + "More\n\nNext\n"), &Plain);
        assert_eq!(u.settled, 499..501);
    }

    #[test]
    fn a_replaced_reply_starts_again() {
        let mut r = StreamRender::new();
        r.update("First try.\n\nSecond paragraph\n", &Plain);
        assert_eq!(r.block_count(), 1);
        let u = r.update("Another", &Plain);
        assert!(u.reset);
        assert_eq!(r.block_count(), 0);
        assert_eq!(r.open(), "<p>Another</p>\n");
    }

    #[test]
    fn a_link_defined_after_its_use_is_rendered_whole_at_the_end() {
        let reply = "See [the docs][d].\n\nMore.\n\n[d]: https://example.org\n";
        let (mut r, _, _) = stream(reply, 4);
        let whole = r.finish(reply, &Plain).expect("the whole render differs");
        assert!(whole.html.contains("href=\"https://example.org\""));
        // Footnotes, wherever their definition stands, likewise.
        for reply in [
            "Text[^n].\n\n[^n]: The note\n",
            "[^n]: The note\n\n    still the note\n\nText[^n].\n",
        ] {
            let (mut r, _, _) = stream(reply, 4);
            let whole = r.finish(reply, &Plain).expect("the whole render differs");
            assert_eq!(whole.html, to_chat_html(reply));
        }
    }

    #[test]
    fn hostile_markup_stays_text_in_every_block() {
        let reply =
            "<script>alert(1)</script>\n\n[x](javascript:alert(1))\n\n<img src=x onerror=alert(1)>";
        let (r, page, open) = stream(reply, 3);
        let shown = page.concat() + &open;
        assert_eq!(shown, r.html());
        assert!(!shown.contains("<script"), "{shown}");
        assert!(!shown.contains("<img"), "{shown}");
        assert!(!shown.contains("javascript:"), "{shown}");
    }

    /// Highlights every Rust block once `ready` is set.
    struct Later {
        ready: bool,
    }

    impl Enhance for Later {
        fn code(&self, language: &str, code: &str) -> Option<SafeHtml> {
            if !self.ready || language != "rust" {
                return None;
            }
            crate::safe::highlighted(code, &format!("<span class=\"hljs-keyword\">{code}</span>"))
        }
        fn math(&self, _: &str, _: bool) -> MathState {
            MathState::NotYet
        }
    }

    #[test]
    fn blocks_waiting_for_highlighting_render_again_when_it_arrives() {
        let reply = "Text.\n\n```rust\nfn main() {}\n```\n\nAfter.\n\nOpen";
        let mut r = StreamRender::new();
        r.update(reply, &Later { ready: false });
        assert!(!r.pending().is_empty());
        let before: Vec<String> = (0..r.block_count())
            .map(|i| r.block(i).to_string())
            .collect();
        let changed = r.enhance(&Later { ready: true });
        assert_eq!(changed, vec![1], "only the code block changes");
        assert!(r.block(1).contains("data-highlighted"));
        assert_eq!(r.block(0), before[0]);
        assert!(r.pending().is_empty());
    }
}
