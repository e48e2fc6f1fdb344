//! Documents cut into passages ("chunks") by their structure: a chunk never
//! spans two sections, keeps the path of headings above it, and knows the
//! bytes and lines it came from. Blocks are packed into a chunk up to a
//! token budget; a block larger than the budget is cut into overlapping
//! windows of words, and consecutive chunks of one section overlap by a
//! few words so a sentence cut at the edge is still whole in one of them.

use serde::{Deserialize, Serialize};

use crate::html;
use crate::markdown::{markdown_blocks, paragraph_blocks};
use crate::text::{Block, BlockKind, Lines, estimate_tokens, word_spans};

/// How a file's text is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DocKind {
    /// Headings, paragraphs and fenced code blocks.
    Markdown,
    /// Reduced to text by its block elements; headings kept.
    Html,
    /// Paragraphs between blank lines.
    Text,
    /// Blocks between blank lines.
    Code,
}

/// How large chunks are, in estimated model tokens (see
/// `text::estimate_tokens`, which leans high).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkBudget {
    /// The most a chunk holds, its heading path included.
    pub max_tokens: usize,
    /// How much of the end of one chunk the next one repeats.
    pub overlap_tokens: usize,
}

impl ChunkBudget {
    /// all-MiniLM-L6-v2 reads at most 256 tokens, two of them `[CLS]` and
    /// `[SEP]`; 200 estimated tokens leaves room for the estimate's error,
    /// so a chunk is never cut short by the model. An overlap of 40 keeps a
    /// sentence or two of context across a cut.
    pub const MINILM: ChunkBudget = ChunkBudget {
        max_tokens: 200,
        overlap_tokens: 40,
    };
}

impl Default for ChunkBudget {
    fn default() -> Self {
        ChunkBudget::MINILM
    }
}

/// One passage of a file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// The headings above the passage, outermost first.
    pub heading: Vec<String>,
    /// The passage's text.
    pub text: String,
    /// Its first byte in the file and the byte after its last.
    pub start: usize,
    pub end: usize,
    /// Its first and last line in the file, counted from 1.
    pub first_line: usize,
    pub last_line: usize,
}

impl Chunk {
    /// The heading path as one line: `Trip > Day one`.
    pub fn heading_line(&self) -> String {
        self.heading.join(" > ")
    }

    /// What the model embeds: the heading path, then the text, so a
    /// passage keeps the context its headings give it.
    pub fn embed_text(&self) -> String {
        if self.heading.is_empty() {
            self.text.clone()
        } else {
            format!("{}\n{}", self.heading_line(), self.text)
        }
    }
}

/// Cuts `source` into chunks as a document of `kind`.
pub fn chunk(kind: DocKind, source: &str, budget: ChunkBudget) -> Vec<Chunk> {
    let blocks = match kind {
        DocKind::Markdown => markdown_blocks(source),
        DocKind::Html => html::blocks(source),
        DocKind::Text => paragraph_blocks(source, BlockKind::Paragraph),
        DocKind::Code => paragraph_blocks(source, BlockKind::Code),
    };
    let lines = Lines::new(source);
    let mut out = Vec::new();
    let mut headings: Vec<(u8, String)> = Vec::new();
    let mut section: Vec<Block> = Vec::new();
    for block in blocks {
        match block.kind {
            BlockKind::Heading(level) => {
                pack(
                    &headings,
                    std::mem::take(&mut section),
                    budget,
                    &lines,
                    &mut out,
                );
                while headings.last().is_some_and(|(l, _)| *l >= level) {
                    headings.pop();
                }
                headings.push((level, block.text));
            }
            BlockKind::Paragraph | BlockKind::Code => section.push(block),
        }
    }
    pack(&headings, section, budget, &lines, &mut out);
    out
}

/// A piece of a section: a whole block, or a window of a large one.
struct Piece {
    text: String,
    start: usize,
    end: usize,
    tokens: usize,
    /// A window after the first of its block: it already repeats the end
    /// of the window before it.
    continues: bool,
}

/// Packs one section's blocks into chunks under `headings`.
fn pack(
    headings: &[(u8, String)],
    section: Vec<Block>,
    budget: ChunkBudget,
    lines: &Lines,
    out: &mut Vec<Chunk>,
) {
    if section.is_empty() {
        return;
    }
    let heading: Vec<String> = headings.iter().map(|(_, t)| t.clone()).collect();
    let heading_tokens = estimate_tokens(&heading.join(" > "));
    // A deep or long heading path never leaves a chunk less than half the
    // budget for its text.
    let max = budget
        .max_tokens
        .saturating_sub(heading_tokens)
        .max(budget.max_tokens / 2)
        .max(1);
    let overlap = budget.overlap_tokens.min(max / 2);
    let pieces = section
        .into_iter()
        .flat_map(|b| windows(b, max, overlap))
        .collect::<Vec<_>>();
    let emit = |group: &[Piece], out: &mut Vec<Chunk>| {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            return;
        };
        let text = group
            .iter()
            .map(|p| p.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
        out.push(Chunk {
            heading: heading.clone(),
            text,
            start: first.start,
            end: last.end,
            first_line: lines.line_of(first.start),
            last_line: lines.line_of(last.end.saturating_sub(1).max(first.start)),
        });
    };
    let mut group: Vec<Piece> = Vec::new();
    let mut used = 0;
    for piece in pieces {
        if !group.is_empty() && used + piece.tokens > max {
            emit(&group, out);
            let tail = group
                .last()
                .filter(|_| !piece.continues)
                .and_then(|p| tail(p, overlap));
            group.clear();
            used = 0;
            if let Some(tail) = tail.filter(|t| t.tokens + piece.tokens <= max) {
                used = tail.tokens;
                group.push(tail);
            }
        }
        used += piece.tokens;
        group.push(piece);
    }
    emit(&group, out);
}

/// A block as pieces of at most `max` tokens: itself when it fits,
/// otherwise windows of whole words, each repeating about `overlap` tokens
/// of the one before.
fn windows(block: Block, max: usize, overlap: usize) -> Vec<Piece> {
    let tokens = estimate_tokens(&block.text);
    if tokens <= max {
        return vec![Piece {
            text: block.text,
            start: block.range.start,
            end: block.range.end,
            tokens,
            continues: false,
        }];
    }
    let words = word_spans(&block.text);
    let cost: Vec<usize> = words
        .iter()
        .map(|w| estimate_tokens(&block.text[w.clone()]).max(1))
        .collect();
    let mut out = Vec::new();
    let mut first = 0;
    while first < words.len() {
        // Take words while they fit; always at least one.
        let mut last = first;
        let mut used = cost[first];
        while last + 1 < words.len() && used + cost[last + 1] <= max {
            last += 1;
            used += cost[last];
        }
        let span = words[first].start..words[last].end;
        let (start, end) = if block.verbatim {
            (block.range.start + span.start, block.range.start + span.end)
        } else {
            (block.range.start, block.range.end)
        };
        out.push(Piece {
            text: block.text[span].to_string(),
            start,
            end,
            tokens: used,
            continues: !out.is_empty(),
        });
        if last + 1 == words.len() {
            break;
        }
        // Step back over about `overlap` tokens, but always move forward.
        let mut next = last + 1;
        let mut back = 0;
        while next > first + 1 && back + cost[next - 1] <= overlap {
            next -= 1;
            back += cost[next];
        }
        first = next;
    }
    out
}

/// The last words of a piece, about `overlap` tokens of them, to open the
/// next chunk with; `None` when the overlap is zero.
fn tail(piece: &Piece, overlap: usize) -> Option<Piece> {
    if overlap == 0 {
        return None;
    }
    let words = word_spans(&piece.text);
    let mut first = words.len();
    let mut used = 0;
    while first > 0 {
        let cost = estimate_tokens(&piece.text[words[first - 1].clone()]).max(1);
        if used + cost > overlap {
            break;
        }
        first -= 1;
        used += cost;
    }
    if first == words.len() {
        return None;
    }
    let from = words[first].start;
    // The piece's text is its range's text when the range is exactly as
    // long; otherwise (derived HTML text) the tail keeps the piece's range.
    let start = if piece.end - piece.start == piece.text.len() {
        piece.start + from
    } else {
        piece.start
    };
    Some(Piece {
        text: piece.text[from..].to_string(),
        start,
        end: piece.end,
        tokens: used,
        continues: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(max_tokens: usize, overlap_tokens: usize) -> ChunkBudget {
        ChunkBudget {
            max_tokens,
            overlap_tokens,
        }
    }

    #[test]
    fn markdown_chunks_keep_their_heading_path_and_place() {
        let md = "# Home\n\nIntro words.\n\n## Kitchen\n\nThe tap drips.\n\n### Sink\n\nUse the blue valve.\n\n## Garden\n\nMow on Sundays.\n";
        let chunks = chunk(DocKind::Markdown, md, ChunkBudget::MINILM);
        let got: Vec<(String, &str, usize, usize)> = chunks
            .iter()
            .map(|c| (c.heading_line(), c.text.as_str(), c.first_line, c.last_line))
            .collect();
        assert_eq!(
            got,
            [
                ("Home".to_string(), "Intro words.", 3, 3),
                ("Home > Kitchen".to_string(), "The tap drips.", 7, 7),
                (
                    "Home > Kitchen > Sink".to_string(),
                    "Use the blue valve.",
                    11,
                    11
                ),
                ("Home > Garden".to_string(), "Mow on Sundays.", 15, 15),
            ]
        );
        for c in &chunks {
            assert_eq!(&md[c.start..c.end], c.text);
        }
        assert_eq!(
            chunks[2].embed_text(),
            "Home > Kitchen > Sink\nUse the blue valve."
        );
    }

    #[test]
    fn small_blocks_of_one_section_share_a_chunk() {
        let text = "alpha beta\n\ngamma delta\n\nepsilon\n";
        let chunks = chunk(DocKind::Text, text, budget(50, 5));
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].text, "alpha beta\n\ngamma delta\n\nepsilon");
        assert_eq!((chunks[0].first_line, chunks[0].last_line), (1, 5));
    }

    #[test]
    fn a_long_paragraph_becomes_overlapping_windows_within_budget() {
        let words: Vec<String> = (0..100).map(|i| format!("w{i}")).collect();
        let text = words.join(" ");
        let chunks = chunk(DocKind::Text, &text, budget(20, 5));
        assert!(chunks.len() > 4, "{}", chunks.len());
        for c in &chunks {
            assert!(estimate_tokens(&c.text) <= 20, "{:?}", c.text);
            assert_eq!(&text[c.start..c.end], c.text);
        }
        // Each window starts before the previous one ended, and together
        // they cover every word.
        for pair in chunks.windows(2) {
            assert!(pair[1].start < pair[0].end);
            assert!(pair[1].start > pair[0].start);
        }
        assert_eq!(chunks.last().unwrap().end, text.len());
    }

    #[test]
    fn consecutive_chunks_of_a_section_overlap() {
        let para = |n: usize| {
            (0..12)
                .map(|i| format!("p{n}w{i}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let text = format!("{}\n\n{}\n\n{}\n", para(1), para(2), para(3));
        let chunks = chunk(DocKind::Text, &text, budget(30, 4));
        assert_eq!(chunks.len(), 2, "{chunks:#?}");
        assert!(
            chunks[1].text.starts_with("p2w8 p2w9 p2w10 p2w11\n\np3w0"),
            "{}",
            chunks[1].text
        );
        assert_eq!(&text[chunks[1].start..chunks[1].start + 4], "p2w8");
    }

    #[test]
    fn code_files_are_cut_at_blank_lines() {
        let code = "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n";
        let chunks = chunk(DocKind::Code, code, budget(8, 0));
        let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, ["fn a() {\n    1\n}", "fn b() {\n    2\n}"]);
        assert_eq!((chunks[1].first_line, chunks[1].last_line), (5, 7));
    }

    #[test]
    fn html_chunks_carry_headings() {
        let html = "<h1>Recipes</h1><p>Bread needs flour.</p><h2>Soup</h2><p>Boil water.</p>";
        let chunks = chunk(DocKind::Html, html, ChunkBudget::MINILM);
        let got: Vec<(String, &str)> = chunks
            .iter()
            .map(|c| (c.heading_line(), c.text.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("Recipes".to_string(), "Bread needs flour."),
                ("Recipes > Soup".to_string(), "Boil water.")
            ]
        );
    }

    #[test]
    fn empty_and_heading_only_documents_have_no_chunks() {
        assert!(chunk(DocKind::Markdown, "", ChunkBudget::MINILM).is_empty());
        assert!(
            chunk(
                DocKind::Markdown,
                "# Only\n## Headings\n",
                ChunkBudget::MINILM
            )
            .is_empty()
        );
    }
}
