//! Artifacts pinned to notes. A pin is one version of an artifact written
//! into a note's body as a fenced block whose info string names it:
//!
//! ````text
//! ```artifact chart Sales by quarter
//! {"type":"bar", ...}
//! ```
//! ````
//!
//! Being the note's own text, a pin syncs, backs up, restores and is
//! searched exactly as the note is, and it outlives the conversation the
//! artifact came from. The notes view lists a note's pins and opens each
//! in the artifact panel; in any other Markdown reader it is a code block.

use std::ops::Range;

use super::artifacts::{Artifact, ArtifactKind, ArtifactVersion, validate};
use super::notes::MAX_BODY;

/// The info string's first word, which marks a fenced block as a pin.
pub const PIN_WORD: &str = "artifact";

/// One pinned artifact found in a note's body.
#[derive(Clone, Debug, PartialEq)]
pub struct Pin {
    pub kind: ArtifactKind,
    pub title: String,
    pub source: String,
    /// Where the block sits in the body, in bytes, from its opening fence
    /// to the end of its closing fence's line.
    pub span: Range<usize>,
}

impl Pin {
    /// The pin as an artifact of one version, for the panel; `id` names it
    /// (the note's id and the pin's place), never a stored artifact.
    pub fn as_artifact(&self, id: String) -> Artifact {
        Artifact {
            id,
            conversation_id: String::new(),
            title: self.title.clone(),
            kind: self.kind,
            versions: vec![ArtifactVersion {
                source: self.source.clone(),
                created_ms: 0.0,
            }],
            created_ms: 0.0,
            updated_ms: 0.0,
        }
    }
}

/// The title as an info string can carry it: one line, no backticks.
fn clean_title(title: &str) -> String {
    let flat: String = title
        .chars()
        .map(|c| if c.is_control() || c == '`' { ' ' } else { c })
        .collect();
    let words: Vec<&str> = flat.split_whitespace().collect();
    if words.is_empty() {
        "Artifact".into()
    } else {
        words.join(" ")
    }
}

/// The fenced block for one version. The fence is longer than any run of
/// backticks in the source, so no line of the source can close it.
pub fn pin_block(kind: ArtifactKind, title: &str, source: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in source.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    // One newline always follows the source, and reading takes exactly
    // one away, so a source keeps its own last newline or lack of one.
    format!(
        "{fence}{PIN_WORD} {} {}\n{source}\n{fence}\n",
        kind.name(),
        clean_title(title)
    )
}

/// `body` with the version pinned at its end, or why it cannot be: a note
/// holds at most [`MAX_BODY`] characters.
pub fn pin_into(
    body: &str,
    kind: ArtifactKind,
    title: &str,
    source: &str,
) -> Result<String, String> {
    let block = pin_block(kind, title, source);
    let kept = body.trim_end();
    let joined = if kept.is_empty() {
        block
    } else {
        format!("{kept}\n\n{block}")
    };
    let chars = joined.chars().count();
    if chars > MAX_BODY {
        return Err(format!(
            "this version does not fit in the note: it would hold {} KB of text, and a note holds at most {} KB",
            chars.div_ceil(1000),
            MAX_BODY / 1000
        ));
    }
    Ok(joined)
}

/// A fence line: its character, its length and the rest of the line.
fn fence_of(line: &str) -> Option<(char, usize, &str)> {
    let c = line.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = line.chars().take_while(|x| *x == c).count();
    (n >= 3).then(|| (c, n, &line[n..]))
}

/// Every pin in `body`, in order. Fenced blocks of any other kind are
/// skipped whole, so a pin written inside a code block stays code; a pin
/// whose kind is unknown, whose source its kind refuses, or whose fence
/// never closes is not a pin and reads as the text it is.
pub fn pins_in(body: &str) -> Vec<Pin> {
    let mut pins = Vec::new();
    let mut lines = Vec::new();
    let mut at = 0;
    for line in body.split_inclusive('\n') {
        lines.push((at, line));
        at += line.len();
    }
    let mut i = 0;
    while i < lines.len() {
        let (start, line) = lines[i];
        let Some((c, n, info)) = fence_of(line.trim_end_matches(['\n', '\r'])) else {
            i += 1;
            continue;
        };
        let closes = |l: &str| {
            let l = l.trim_end();
            l.len() >= n && l.chars().all(|x| x == c)
        };
        let Some(end) = (i + 1..lines.len()).find(|&j| closes(lines[j].1)) else {
            // An open fence runs to the end: nothing after it is a pin.
            break;
        };
        if let Some(pin) = read_pin(c, info, &lines[i + 1..end]) {
            let (last_at, last) = lines[end];
            pins.push(Pin {
                span: start..last_at + last.len(),
                ..pin
            });
        }
        i = end + 1;
    }
    pins
}

/// The pin a fenced block holds, if it is one.
fn read_pin(c: char, info: &str, inside: &[(usize, &str)]) -> Option<Pin> {
    if c != '`' {
        return None;
    }
    let mut words = info.trim().splitn(3, ' ');
    if words.next()? != PIN_WORD {
        return None;
    }
    let named = words.next()?;
    let kind = ArtifactKind::ALL.into_iter().find(|k| k.name() == named)?;
    let title = clean_title(words.next().unwrap_or(""));
    let mut source: String = inside.iter().map(|(_, l)| *l).collect();
    if source.ends_with('\n') {
        source.pop();
        if source.ends_with('\r') {
            source.pop();
        }
    }
    validate(kind, &source).ok()?;
    Some(Pin {
        kind,
        title,
        source,
        span: 0..0,
    })
}

/// `body` without the pin at `span`, and without the blank lines that
/// set it apart.
pub fn unpin(body: &str, span: Range<usize>) -> String {
    let before = body[..span.start].trim_end();
    let after = body[span.end..].trim_start_matches(['\n', '\r']);
    match (before.is_empty(), after.is_empty()) {
        (true, _) => after.to_string(),
        (false, true) => format!("{before}\n"),
        (false, false) => format!("{before}\n\n{after}"),
    }
}

/// `body` with every pin taken out: what the note's text reads as, for
/// rendering beside its list of pins and for the notes list's snippet.
pub fn without_pins(body: &str) -> String {
    let mut out = body.to_string();
    for pin in pins_in(body).into_iter().rev() {
        out = unpin(&out, pin.span);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHART: &str =
        r#"{"type":"bar","data":{"labels":["a"],"datasets":[{"label":"n","data":[1]}]}}"#;

    #[test]
    fn a_pinned_version_reads_back_as_it_was() {
        for source in [
            "<h1>Sales</h1>",
            "<h1>Sales</h1>\n",
            "<p>two</p>\n\n\n<p>blank lines</p>\n\n",
            "<pre>```\nfenced inside\n```</pre>",
            "<p>````` five and ``` three</p>",
        ] {
            let body = pin_into("", ArtifactKind::Html, "Sales", source).unwrap();
            let pins = pins_in(&body);
            assert_eq!(pins.len(), 1, "{body}");
            assert_eq!(pins[0].source, source);
            assert_eq!(pins[0].title, "Sales");
            assert_eq!(pins[0].kind, ArtifactKind::Html);
            assert_eq!(&body[pins[0].span.clone()], body.as_str());
        }
    }

    #[test]
    fn pins_add_to_the_end_of_a_note_and_keep_its_text() {
        let one = pin_into(
            "Notes on the quarter.\n\n",
            ArtifactKind::Chart,
            "By quarter",
            CHART,
        )
        .unwrap();
        assert!(one.starts_with("Notes on the quarter.\n\n```artifact chart By quarter\n"));
        let two = pin_into(&one, ArtifactKind::Markdown, "Summary", "# Up\n").unwrap();
        let pins = pins_in(&two);
        assert_eq!(
            pins.iter()
                .map(|p| (p.kind, p.title.as_str()))
                .collect::<Vec<_>>(),
            [
                (ArtifactKind::Chart, "By quarter"),
                (ArtifactKind::Markdown, "Summary")
            ]
        );
        assert_eq!(without_pins(&two), "Notes on the quarter.\n");
        // Taking out the first keeps the second whole, and the text.
        let left = unpin(&two, pins[0].span.clone());
        assert_eq!(pins_in(&left).len(), 1);
        assert_eq!(pins_in(&left)[0].title, "Summary");
        assert!(left.starts_with("Notes on the quarter.\n\n```artifact markdown Summary\n"));
        assert_eq!(
            unpin(&left, pins_in(&left)[0].span.clone()),
            "Notes on the quarter.\n"
        );
    }

    #[test]
    fn titles_are_one_clean_line() {
        let body = pin_into(
            "",
            ArtifactKind::Svg,
            " A `tricky`\ntitle\t ",
            "<svg></svg>",
        )
        .unwrap();
        assert_eq!(pins_in(&body)[0].title, "A tricky title");
        let body = pin_into("", ArtifactKind::Svg, " \n ", "<svg></svg>").unwrap();
        assert_eq!(pins_in(&body)[0].title, "Artifact");
    }

    #[test]
    fn other_blocks_and_broken_pins_are_text() {
        // A pin written inside another code block is that block's text.
        let quoted = format!(
            "~~~\n{}~~~\n",
            pin_block(ArtifactKind::Html, "Q", "<p>q</p>")
        );
        assert!(pins_in(&quoted).is_empty());
        let quoted = format!(
            "````md\n{}````\n",
            pin_block(ArtifactKind::Html, "Q", "<p>q</p>")
        );
        assert!(pins_in(&quoted).is_empty());
        // Unknown kind, refused source, tilde fence, never closed.
        assert!(pins_in("```artifact video Clip\nx\n```\n").is_empty());
        assert!(pins_in("```artifact svg Bad\n<p>not svg</p>\n```\n").is_empty());
        assert!(pins_in("```artifact chart Bad\nnot json\n```\n").is_empty());
        assert!(pins_in("~~~artifact html T\n<p>x</p>\n~~~\n").is_empty());
        assert!(pins_in("```artifact html T\n<p>x</p>\n").is_empty());
        assert!(pins_in("```rust\nfn main() {}\n```\n").is_empty());
        // The text around a broken one is untouched.
        let body = "intro\n```artifact video Clip\nx\n```\n";
        assert_eq!(without_pins(body), body);
    }

    #[test]
    fn a_version_too_large_for_a_note_is_refused_with_the_sizes() {
        let big = format!("<p>{}</p>", "x".repeat(MAX_BODY));
        let e = pin_into("", ArtifactKind::Html, "Big", &big).unwrap_err();
        assert!(e.contains("does not fit in the note"), "{e}");
        assert!(e.contains("at most 200 KB"), "{e}");
        // Near the limit, the note's own text counts too.
        let half = format!("<p>{}</p>", "x".repeat(MAX_BODY / 2));
        let one = pin_into("", ArtifactKind::Html, "Half", &half).unwrap();
        assert!(pin_into(&one, ArtifactKind::Html, "Half", &half).is_err());
    }

    #[test]
    fn windows_line_ends_read_too() {
        let body = "text\r\n\r\n```artifact markdown Doc\r\n# Hi\r\n```\r\n";
        let pins = pins_in(body);
        assert_eq!(pins.len(), 1);
        assert_eq!(pins[0].source, "# Hi");
        assert_eq!(without_pins(body), "text\n");
    }

    #[test]
    fn as_an_artifact_it_has_one_version() {
        let body = pin_into("", ArtifactKind::Chart, "C", CHART).unwrap();
        let a = pins_in(&body)[0].as_artifact("note-1#0".into());
        assert_eq!(a.versions.len(), 1);
        assert_eq!(a.latest(), CHART);
        assert_eq!(a.file_name(), "c.json");
    }
}
