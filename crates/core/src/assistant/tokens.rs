//! A cheap token estimate for the context meter, with no vocabulary in
//! the bundle. Text is split the way BPE pre-tokenizers split it (words
//! with their leading space, digit groups of three, punctuation runs,
//! whitespace), and each piece is costed by its length and script. The
//! `tokens` bench measures the error against o200k_base.

use crate::assistant::providers::{ChatRequest, WireMessage};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Letter,
    Digit,
    Space,
    Newline,
    Other,
}

fn class(c: char) -> Class {
    if c == '\n' || c == '\r' {
        Class::Newline
    } else if c.is_whitespace() {
        Class::Space
    } else if c.is_alphabetic() {
        Class::Letter
    } else if c.is_numeric() {
        Class::Digit
    } else {
        Class::Other
    }
}

/// Tokens for a run of letters.
fn word_tokens(word: &[char]) -> usize {
    let n = word.len();
    if word.iter().all(char::is_ascii) {
        // English words up to a dozen letters are almost always one token;
        // longer ones split into pieces of about eight letters.
        if n <= 12 { 1 } else { 1 + (n - 12).div_ceil(8) }
    } else if word.iter().all(|c| (*c as u32) < 0x2E80) {
        // Accented Latin, Greek, Cyrillic: shorter pieces.
        n.div_ceil(3).max(1)
    } else {
        // CJK and other scripts: roughly a token per character or two.
        (n * 3).div_ceil(4).max(1)
    }
}

/// Estimates the tokens of `text` under a modern BPE vocabulary.
pub fn estimate_tokens(text: &str) -> usize {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match class(c) {
            Class::Letter => {
                // A word is capitals then lower case, as BPE pre-tokenizers
                // split it: "minLength" is two pieces.
                let start = i;
                i += 1;
                while i < chars.len()
                    && class(chars[i]) == Class::Letter
                    && !(chars[i].is_uppercase() && chars[i - 1].is_lowercase())
                {
                    i += 1;
                }
                tokens += word_tokens(&chars[start..i]);
            }
            Class::Digit => {
                let start = i;
                while i < chars.len() && class(chars[i]) == Class::Digit {
                    i += 1;
                }
                tokens += (i - start).div_ceil(3);
            }
            Class::Newline => {
                while i < chars.len() && matches!(class(chars[i]), Class::Newline | Class::Space) {
                    i += 1;
                }
                tokens += 1;
            }
            Class::Space => {
                let start = i;
                while i < chars.len() && class(chars[i]) == Class::Space {
                    i += 1;
                }
                // A single space joins the next word or symbol; indentation
                // is a token of its own.
                let next_joins = chars
                    .get(i)
                    .is_some_and(|n| matches!(class(*n), Class::Letter | Class::Other));
                if !(i - start == 1 && next_joins) {
                    tokens += 1;
                }
            }
            Class::Other => {
                let start = i;
                while i < chars.len() && class(chars[i]) == Class::Other {
                    i += 1;
                }
                let run = &chars[start..i];
                // One symbol right before a word merges into it ("_schema",
                // ".g"); longer runs of ASCII punctuation ("\":{\"") are
                // about a token per four characters.
                let before_word = chars.get(i).is_some_and(|n| class(*n) == Class::Letter);
                let n = run.len();
                let ascii = run.iter().all(char::is_ascii);
                let cost = if ascii { n.div_ceil(4) } else { n };
                tokens += if before_word && n == 1 { 0 } else { cost };
            }
        }
    }
    tokens
}

/// Tokens each message costs beyond its text (role markers, separators).
pub const PER_MESSAGE: usize = 4;

/// The estimated size of a request's context, for the meter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ContextEstimate {
    pub system: usize,
    /// The part of `system` that sections added by other parts of the app
    /// cost (the Agent Skills catalog or its one line, MCP instructions).
    pub added: usize,
    pub tools: usize,
    /// How many tools the request offers.
    pub tool_count: usize,
    pub history: usize,
}

impl ContextEstimate {
    pub fn total(&self) -> usize {
        self.system + self.tools + self.history
    }
}

/// Estimates what `request` puts in the model's context.
pub fn estimate_request(request: &ChatRequest) -> ContextEstimate {
    let system = if request.system.is_empty() {
        0
    } else {
        estimate_tokens(&request.system) + PER_MESSAGE
    };
    let tools = request
        .tools
        .iter()
        .map(|t| {
            let schema = t.input_schema.to_string();
            estimate_tokens(&t.name)
                + estimate_tokens(&t.description)
                + estimate_tokens(&schema)
                + 8
        })
        .sum();
    let history = request
        .messages
        .iter()
        .map(|m| match m {
            WireMessage::User { text, images } => {
                estimate_tokens(text)
                    + PER_MESSAGE
                    + images.iter().map(|i| i.estimated_tokens()).sum::<usize>()
            }
            WireMessage::Assistant { text, tool_calls } => {
                estimate_tokens(text)
                    + PER_MESSAGE
                    + tool_calls
                        .iter()
                        .map(|c| {
                            estimate_tokens(&c.name) + estimate_tokens(&c.arguments.to_string()) + 6
                        })
                        .sum::<usize>()
            }
            WireMessage::ToolResults { results } => results
                .iter()
                .map(|r| {
                    estimate_tokens(&r.content)
                        + PER_MESSAGE
                        + 4
                        + r.images.iter().map(|i| i.estimated_tokens()).sum::<usize>()
                })
                .sum(),
        })
        .sum();
    ContextEstimate {
        system,
        added: 0,
        tools,
        tool_count: request.tools.len(),
        history,
    }
}

/// Estimates a request whose system prompt ends with `additions`, so the
/// meter can say what those sections cost.
pub fn estimate_turn(request: &ChatRequest, additions: &[String]) -> ContextEstimate {
    let mut estimate = estimate_request(request);
    estimate.added = additions
        .iter()
        .map(|a| a.trim())
        .filter(|a| !a.is_empty())
        .map(estimate_tokens)
        .sum();
    estimate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_follow_the_shape_of_text() {
        let cases = [
            ("", 0),
            ("hello", 1),
            ("hello world", 2),
            ("internationalization", 2),
            ("minLength", 2),
            ("12345678", 3),
            ("{\"type\":\"object\"}", 5),
            ("日本語のテキスト", 6),
            ("line one\n\nline two", 5),
        ];
        for (text, want) in cases {
            assert_eq!(estimate_tokens(text), want, "{text:?}");
        }
    }

    #[test]
    fn requests_add_up_by_part() {
        let request = ChatRequest {
            system: "Be brief.".into(),
            messages: vec![WireMessage::user("hi there")],
            tools: vec![],
        };
        let e = estimate_request(&request);
        assert_eq!(
            e,
            ContextEstimate {
                system: 3 + PER_MESSAGE,
                added: 0,
                tools: 0,
                tool_count: 0,
                history: 2 + PER_MESSAGE
            }
        );
        assert_eq!(e.total(), 13);
        let with_section = ChatRequest {
            system: "Be brief.\n\nSkill packages are installed.".into(),
            ..request
        };
        let e = estimate_turn(&with_section, &["Skill packages are installed.".into()]);
        assert_eq!(e.added, 5);
        assert_eq!(e.system, 3 + 1 + 5 + PER_MESSAGE);
    }
}
