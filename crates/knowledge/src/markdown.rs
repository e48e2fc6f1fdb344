//! Markdown, plain text and code cut into blocks: headings (ATX and
//! setext), fenced code blocks kept whole, and paragraphs between blank
//! lines. Every block is the source's own text at its range.

use crate::text::{Block, BlockKind};

/// One line of the source: its text without the line break, and where it
/// starts and ends.
struct Line<'a> {
    text: &'a str,
    start: usize,
    end: usize,
}

fn lines(source: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    for piece in source.split_inclusive('\n') {
        let text = piece.trim_end_matches(['\n', '\r']);
        out.push(Line {
            text,
            start,
            end: start + text.len(),
        });
        start += piece.len();
    }
    out
}

fn block(source: &str, kind: BlockKind, start: usize, end: usize) -> Block {
    Block {
        kind,
        text: source[start..end].to_string(),
        range: start..end,
        verbatim: true,
    }
}

/// The blocks of a Markdown document. A YAML front matter block at the
/// very start is left out: it is metadata, not prose.
pub(crate) fn markdown_blocks(source: &str) -> Vec<Block> {
    let lines = lines(source);
    let mut blocks = Vec::new();
    let mut i = front_matter_end(&lines);
    // The open paragraph: the index of its first and last line.
    let mut para: Option<(usize, usize)> = None;
    let flush = |para: &mut Option<(usize, usize)>, blocks: &mut Vec<Block>| {
        if let Some((first, last)) = para.take() {
            blocks.push(block(
                source,
                BlockKind::Paragraph,
                lines[first].start,
                lines[last].end,
            ));
        }
    };
    while i < lines.len() {
        let line = &lines[i];
        let trimmed = line.text.trim_start();
        let indent = line.text.len() - trimmed.len();
        if trimmed.is_empty() {
            flush(&mut para, &mut blocks);
            i += 1;
            continue;
        }
        if indent < 4
            && let Some(fence) = fence(trimmed)
        {
            flush(&mut para, &mut blocks);
            let close = (i + 1..lines.len()).find(|&j| closes(lines[j].text.trim(), fence));
            let last = close.unwrap_or(lines.len() - 1);
            blocks.push(block(source, BlockKind::Code, line.start, lines[last].end));
            i = last + 1;
            continue;
        }
        if indent < 4
            && let Some((level, title)) = atx_heading(trimmed)
        {
            flush(&mut para, &mut blocks);
            let offset =
                line.start + indent + (trimmed.len() - trimmed.trim_start_matches('#').len());
            let start = offset
                + (source[offset..line.end].len() - source[offset..line.end].trim_start().len());
            blocks.push(Block {
                kind: BlockKind::Heading(level),
                text: title.to_string(),
                range: start..start + title.len(),
                verbatim: true,
            });
            i += 1;
            continue;
        }
        if let Some((first, last)) = para
            && first == last
            && indent < 4
            && let Some(level) = setext_underline(trimmed)
        {
            let text = lines[first].text.trim();
            let start = lines[first].start
                + (lines[first].text.len() - lines[first].text.trim_start().len());
            blocks.push(Block {
                kind: BlockKind::Heading(level),
                text: text.to_string(),
                range: start..start + text.len(),
                verbatim: true,
            });
            para = None;
            i += 1;
            continue;
        }
        para = Some(match para {
            Some((first, _)) => (first, i),
            None => (i, i),
        });
        i += 1;
    }
    flush(&mut para, &mut blocks);
    blocks
}

/// The first line after a front matter block (`---` … `---` at the start),
/// or 0 when there is none.
fn front_matter_end(lines: &[Line<'_>]) -> usize {
    if lines.first().is_none_or(|l| l.text.trim_end() != "---") {
        return 0;
    }
    lines
        .iter()
        .skip(1)
        .position(|l| matches!(l.text.trim_end(), "---" | "..."))
        .map_or(0, |p| p + 2)
}

/// The fence a line opens: its character and length.
fn fence(trimmed: &str) -> Option<(char, usize)> {
    let c = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = trimmed.chars().take_while(|x| *x == c).count();
    (len >= 3 && !(c == '`' && trimmed[len..].contains('`'))).then_some((c, len))
}

fn closes(trimmed: &str, (c, len): (char, usize)) -> bool {
    let run = trimmed.chars().take_while(|x| *x == c).count();
    run >= len && trimmed.chars().skip(run).all(char::is_whitespace)
}

/// An ATX heading's level and text, without closing `#`s.
fn atx_heading(trimmed: &str) -> Option<(u8, &str)> {
    let level = trimmed.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &trimmed[level..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let text = rest.trim();
    let text = match text.trim_end_matches('#') {
        t if t.is_empty() || t.ends_with([' ', '\t']) => t.trim_end(),
        _ => text,
    };
    Some((level as u8, text))
}

fn setext_underline(trimmed: &str) -> Option<u8> {
    let t = trimmed.trim_end();
    if t.len() >= 2 && t.chars().all(|c| c == '=') {
        Some(1)
    } else if t.len() >= 2 && t.chars().all(|c| c == '-') {
        Some(2)
    } else {
        None
    }
}

/// The paragraphs of plain text, between blank lines.
pub(crate) fn paragraph_blocks(source: &str, kind: BlockKind) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, usize)> = None;
    for line in lines(source) {
        if line.text.trim().is_empty() {
            if let Some((start, end)) = open.take() {
                blocks.push(block(source, kind, start, end));
            }
        } else {
            open = Some((open.map_or(line.start, |(s, _)| s), line.end));
        }
    }
    if let Some((start, end)) = open {
        blocks.push(block(source, kind, start, end));
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(blocks: &[Block]) -> Vec<(BlockKind, &str)> {
        blocks.iter().map(|b| (b.kind, b.text.as_str())).collect()
    }

    #[test]
    fn markdown_keeps_headings_paragraphs_and_whole_code_blocks() {
        let md = "---\ntitle: x\n---\n# Moving house #\n\nBook the van\nearly.\n\n```sh\n# not a heading\n\nrm -rf boxes\n```\nSetext\n------\n- a list\n- of things\n";
        let blocks = markdown_blocks(md);
        assert_eq!(
            shape(&blocks),
            [
                (BlockKind::Heading(1), "Moving house"),
                (BlockKind::Paragraph, "Book the van\nearly."),
                (
                    BlockKind::Code,
                    "```sh\n# not a heading\n\nrm -rf boxes\n```"
                ),
                (BlockKind::Heading(2), "Setext"),
                (BlockKind::Paragraph, "- a list\n- of things"),
            ]
        );
        for b in &blocks {
            assert_eq!(&md[b.range.clone()], b.text);
        }
    }

    #[test]
    fn an_unclosed_fence_runs_to_the_end_and_hashes_need_a_space() {
        let md = "#hashtag\n\n~~~\ncode\n";
        assert_eq!(
            shape(&markdown_blocks(md)),
            [
                (BlockKind::Paragraph, "#hashtag"),
                (BlockKind::Code, "~~~\ncode"),
            ]
        );
    }

    #[test]
    fn plain_text_is_paragraphs() {
        let text = "one\ntwo\r\n\r\n\nthree\n";
        assert_eq!(
            shape(&paragraph_blocks(text, BlockKind::Paragraph)),
            [
                (BlockKind::Paragraph, "one\ntwo"),
                (BlockKind::Paragraph, "three")
            ]
        );
    }
}
