//! YAML frontmatter read by serde-saphyr into a small tree that remembers
//! where every node came from.
//!
//! The tree keeps scalars as the text the author wrote (`version: 1.0` stays
//! `"1.0"`, not the float `1`), because SKILL.md fields are strings and the
//! reference tool reads them that way. Booleans follow YAML 1.2 only
//! (`true`/`false`), so `yes`, `no`, `y` and `n` stay text. Duplicate keys are
//! passed through so the validator can name both lines.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{DefaultMessageFormatter, DuplicateKeyPolicy, MessageFormatter, Spanned};

/// The largest frontmatter block we hand to the YAML parser. Real
/// frontmatter is a few hundred bytes; this bounds the work on hostile input.
pub(crate) const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// A node and the 1-based line and column (in characters) where it starts,
/// counted within the YAML text it was parsed from.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Node {
    pub value: Value,
    pub line: u32,
    pub column: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    /// `~`, `null` or nothing at all.
    Null,
    /// A scalar: the text after YAML's quoting and folding are applied, plus
    /// what kind of plain scalar it would be in YAML 1.2's core schema.
    Scalar {
        text: String,
        kind: ScalarKind,
    },
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScalarKind {
    /// Quoted, block or plain text that is not a number or boolean.
    Text,
    Bool,
    Number,
}

impl Value {
    /// What a person would call this kind of value, for messages.
    pub fn describe(&self) -> &'static str {
        match self {
            Value::Null => "nothing (null)",
            Value::Scalar {
                kind: ScalarKind::Text,
                ..
            } => "text",
            Value::Scalar {
                kind: ScalarKind::Bool,
                ..
            } => "a boolean",
            Value::Scalar {
                kind: ScalarKind::Number,
                ..
            } => "a number",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }
}

/// Why the YAML could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct YamlError {
    /// 1-based, within the YAML text; `None` when the parser did not say.
    pub line: Option<u32>,
    pub message: String,
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Parses one YAML document. An empty document (or one holding only
/// comments) is `Value::Null`.
pub(crate) fn parse(src: &str) -> Result<Node, YamlError> {
    if src.len() > MAX_FRONTMATTER_BYTES {
        return Err(YamlError {
            line: None,
            message: format!(
                "the frontmatter is {} bytes long; at most {} are read",
                src.len(),
                MAX_FRONTMATTER_BYTES
            ),
        });
    }
    let budget = serde_saphyr::budget! {
        max_depth: 32,
        max_nodes: 20_000,
        max_aliases: 200,
        max_anchors: 200,
        max_documents: 1,
        max_total_scalar_bytes: MAX_FRONTMATTER_BYTES * 4,
        max_recorded_anchor_events: 20_000,
        max_recorded_anchor_bytes: MAX_FRONTMATTER_BYTES * 4,
    };
    let options = serde_saphyr::options! {
        budget: budget,
        strict_booleans: true,
        duplicate_keys: DuplicateKeyPolicy::PassThrough,
        with_snippet: false,
    };
    match serde_saphyr::from_str_with_options::<Spanned<Raw>>(src, options) {
        Ok(raw) => Ok(lower(raw, src)),
        Err(e) => Err(convert_error(&e)),
    }
}

fn convert_error(e: &serde_saphyr::Error) -> YamlError {
    let inner = e.without_snippet();
    let message = DefaultMessageFormatter.format_message(inner);
    // The parser may echo input back; never pass control characters on.
    let message: String = message
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let line = e
        .location()
        .map(|l| l.line())
        .filter(|&l| l > 0)
        .and_then(|l| u32::try_from(l).ok());
    YamlError { line, message }
}

/// What serde hands us, before the raw text of plain scalars is recovered.
enum Raw {
    Null,
    Bool(bool),
    Number,
    Str(String),
    Seq(Vec<Spanned<Raw>>),
    Map(Vec<(Spanned<Raw>, Spanned<Raw>)>),
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_none<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
        Raw::deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Raw, E> {
        Ok(Raw::Bool(v))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Raw, E> {
        Ok(Raw::Number)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Raw, E> {
        Ok(Raw::Number)
    }
    fn visit_i128<E>(self, _: i128) -> Result<Raw, E> {
        Ok(Raw::Number)
    }
    fn visit_u128<E>(self, _: u128) -> Result<Raw, E> {
        Ok(Raw::Number)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Raw, E> {
        Ok(Raw::Number)
    }
    fn visit_str<E>(self, v: &str) -> Result<Raw, E> {
        Ok(Raw::Str(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Raw, E> {
        Ok(Raw::Str(v))
    }
    fn visit_bytes<E>(self, v: &[u8]) -> Result<Raw, E> {
        Ok(Raw::Str(String::from_utf8_lossy(v).into_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Raw::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Raw::Map(entries))
    }
}

fn lower(raw: Spanned<Raw>, src: &str) -> Node {
    let loc = raw.referenced;
    let line = u32::try_from(loc.line()).unwrap_or(u32::MAX);
    let column = u32::try_from(loc.column()).unwrap_or(u32::MAX);
    // The source text of a plain scalar, which is what the author meant
    // when a field wants text but YAML saw a number or a boolean.
    let source_text = || {
        let span = loc.span();
        let start = usize::try_from(span.byte_offset()?).ok()?;
        let len = usize::try_from(span.byte_len()?).ok()?;
        src.get(start..start.checked_add(len)?)
            .map(|s| s.trim().to_string())
    };
    let value = match raw.value {
        Raw::Null => Value::Null,
        Raw::Bool(b) => Value::Scalar {
            text: source_text().unwrap_or_else(|| b.to_string()),
            kind: ScalarKind::Bool,
        },
        Raw::Number => Value::Scalar {
            text: source_text().unwrap_or_default(),
            kind: ScalarKind::Number,
        },
        Raw::Str(text) => Value::Scalar {
            text,
            kind: ScalarKind::Text,
        },
        Raw::Seq(items) => Value::Seq(items.into_iter().map(|i| lower(i, src)).collect()),
        Raw::Map(entries) => Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| (lower(k, src), lower(v, src)))
                .collect(),
        ),
    };
    Node {
        value,
        line,
        column,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Value {
        Value::Scalar {
            text: s.into(),
            kind: ScalarKind::Text,
        }
    }

    /// The top-level mapping as (key, value) pairs with their lines.
    fn entries(src: &str) -> Vec<(String, u32, Value)> {
        let node = parse(src).unwrap();
        let Value::Map(entries) = node.value else {
            panic!("not a map: {node:?}")
        };
        entries
            .into_iter()
            .map(|(k, v)| {
                let Value::Scalar { text, .. } = k.value else {
                    panic!("key not scalar")
                };
                (text, v.line, v.value)
            })
            .collect()
    }

    #[test]
    fn scalars_keep_the_text_the_author_wrote() {
        let src = "version: 1.0\nport: 0755\non: yes\nflag: true\nq: \"a: b\"\nempty:\n";
        assert_eq!(
            entries(src),
            vec![
                (
                    "version".into(),
                    1,
                    Value::Scalar {
                        text: "1.0".into(),
                        kind: ScalarKind::Number
                    }
                ),
                (
                    "port".into(),
                    2,
                    Value::Scalar {
                        text: "0755".into(),
                        kind: ScalarKind::Number
                    }
                ),
                ("on".into(), 3, text("yes")),
                (
                    "flag".into(),
                    4,
                    Value::Scalar {
                        text: "true".into(),
                        kind: ScalarKind::Bool
                    }
                ),
                ("q".into(), 5, text("a: b")),
                ("empty".into(), 6, Value::Null),
            ]
        );
    }

    #[test]
    fn block_scalars_fold_and_keep_lines() {
        let src = "a: >\n  one\n  two\nb: |-\n  x\n  y\nc: |\n  z\n";
        assert_eq!(
            entries(src),
            vec![
                ("a".into(), 2, text("one two\n")),
                ("b".into(), 5, text("x\ny")),
                ("c".into(), 8, text("z\n")),
            ]
        );
    }

    #[test]
    fn duplicate_keys_reach_the_caller() {
        let keys: Vec<String> = entries("name: a\nname: b\n")
            .into_iter()
            .map(|(k, _, _)| k)
            .collect();
        assert_eq!(keys, vec!["name", "name"]);
    }

    #[test]
    fn syntax_errors_say_where() {
        let err = parse("description: Use when: the user asks\n").unwrap_err();
        assert_eq!(err.line, Some(1));
        assert_eq!(
            err.message,
            "mapping values are not allowed in this context"
        );
    }

    #[test]
    fn empty_and_comment_only_documents_are_null() {
        assert_eq!(parse("").unwrap().value, Value::Null);
        assert_eq!(parse("# just a comment\n").unwrap().value, Value::Null);
    }

    #[test]
    fn alias_bombs_and_deep_nesting_stop_with_an_error() {
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 0..12 {
            let prev = if i == 0 {
                "a".to_string()
            } else {
                format!("b{}", i - 1)
            };
            bomb.push_str(&format!(
                "b{i}: &b{i} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
            ));
        }
        assert!(parse(&bomb).is_err());
        let deep = format!("a: {}{}", "[".repeat(200), "]".repeat(200));
        assert!(parse(&deep).is_err());
    }
}
