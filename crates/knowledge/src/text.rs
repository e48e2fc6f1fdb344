//! Text as the other modules see it: the blocks a document is reduced to,
//! the words BM25 counts, and how many model tokens a text is likely to
//! take.

use std::ops::Range;

/// What a block of a document is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlockKind {
    /// A heading of this level (1 is the top).
    Heading(u8),
    /// A paragraph, list or other running text.
    Paragraph,
    /// A code block, or a block of a code file.
    Code,
}

/// One structural block of a document, before chunking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Block {
    pub kind: BlockKind,
    pub text: String,
    /// Where the block is in the source, in bytes.
    pub range: Range<usize>,
    /// Whether `text` is exactly the source at `range` (Markdown, text and
    /// code are; HTML's text is derived), so a part of the text maps back
    /// to a part of the range.
    pub verbatim: bool,
}

/// English words too common to tell passages apart.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "has", "have",
    "how", "i", "in", "is", "it", "its", "me", "my", "of", "on", "or", "so", "that", "the", "this",
    "to", "was", "we", "what", "when", "where", "which", "who", "why", "will", "with", "you",
    "your",
];

/// The search terms of `text`: runs of letters and digits, lowercased,
/// with common function words dropped and a light plural fold, so that
/// "files" finds "file".
pub(crate) fn terms(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .map(|w| fold(&w))
        .collect()
}

/// A conservative English plural fold: "policies" → "policy",
/// "classes" → "class", "files" → "file"; short words and "-ss" stay.
fn fold(word: &str) -> String {
    if word.len() > 4
        && let Some(stem) = word.strip_suffix("ies")
    {
        return format!("{stem}y");
    }
    if word.len() > 4 && word.ends_with("sses") {
        return word[..word.len() - 2].to_string();
    }
    if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") && !word.ends_with("us") {
        return word[..word.len() - 1].to_string();
    }
    word.to_string()
}

/// The whitespace-separated words of `text`, as byte ranges into it.
pub(crate) fn word_spans(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                spans.push(s..i);
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push(s..text.len());
    }
    spans
}

/// An upper-leaning estimate of how many BERT WordPiece tokens `text`
/// becomes. BERT's pre-tokenizer splits on whitespace and on every
/// punctuation character, and WordPiece splits long or rare words into
/// pieces: one token per punctuation character, one per short run of
/// letters or digits plus one per further 8 characters, and one per
/// CJK-range character (BERT splits those one by one).
pub(crate) fn estimate_tokens(text: &str) -> usize {
    let mut tokens = 0;
    let mut run = 0usize;
    let end_run = |run: &mut usize, tokens: &mut usize| {
        if *run > 0 {
            *tokens += 1 + (*run - 1) / 8;
            *run = 0;
        }
    };
    for c in text.chars() {
        if c.is_alphanumeric() && c.len_utf8() < 3 {
            run += 1;
        } else {
            end_run(&mut run, &mut tokens);
            if !c.is_whitespace() {
                tokens += 1;
            }
        }
    }
    end_run(&mut run, &mut tokens);
    tokens
}

/// Line numbers (from 1) of byte offsets in one text.
pub(crate) struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    pub fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines { starts }
    }

    /// The line the byte at `offset` is on.
    pub fn line_of(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_drop_function_words_and_fold_plurals() {
        assert_eq!(
            terms("What are the notice-periods of THE policies, classes and files?"),
            ["notice", "period", "policy", "class", "file"]
        );
    }

    #[test]
    fn word_spans_are_byte_ranges() {
        let text = "  héllo  world\n";
        let spans = word_spans(text);
        let words: Vec<&str> = spans.iter().map(|r| &text[r.clone()]).collect();
        assert_eq!(words, ["héllo", "world"]);
    }

    #[test]
    fn estimates_count_punctuation_and_long_words() {
        assert_eq!(estimate_tokens("hello world"), 2);
        assert_eq!(estimate_tokens("fn main() {}"), 6);
        assert_eq!(estimate_tokens("internationalisation"), 3);
        assert_eq!(estimate_tokens("日本"), 2);
    }

    #[test]
    fn lines_count_from_one() {
        let lines = Lines::new("a\nbc\n\nd");
        assert_eq!(
            [0, 1, 2, 4, 5, 6].map(|o| lines.line_of(o)),
            [1, 1, 2, 2, 3, 4]
        );
    }
}
