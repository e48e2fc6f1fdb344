//! Splitting a SKILL.md into its YAML frontmatter and Markdown body, and
//! the repair the client guide suggests for unquoted values holding colons.

/// A SKILL.md cut at its `---` lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Split<'a> {
    /// The YAML between the delimiters.
    pub yaml: &'a str,
    /// How many lines of the file come before the first YAML line, so a
    /// YAML line number plus this is a file line number.
    pub line_offset: u32,
    /// Blank lines skipped before the opening `---` (lenient mode only).
    pub leading_blank_lines: u32,
    /// Everything after the closing delimiter, trimmed.
    pub body: &'a str,
}

/// Why the frontmatter could not be found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SplitError {
    /// The file does not begin with a `---` line.
    NoOpening,
    /// The opening `---` (on this 1-based line) has no closing partner.
    NotClosed { opened_on: u32 },
}

fn is_delimiter(line: &str) -> bool {
    line.trim_end_matches([' ', '\t', '\r']) == "---"
}

/// Finds the frontmatter. `text` must already have its BOM removed.
/// With `skip_blank_lines`, blank lines before the opening `---` are
/// tolerated (some editors add one); the reference tool refuses them.
pub(crate) fn split(text: &str, skip_blank_lines: bool) -> Result<Split<'_>, SplitError> {
    let mut rest = text;
    let mut line_no: u32 = 0;
    let mut leading_blank_lines = 0;
    // The opening delimiter.
    loop {
        let (line, after) = next_line(rest).ok_or(SplitError::NoOpening)?;
        line_no += 1;
        if is_delimiter(line) {
            rest = after;
            break;
        }
        if skip_blank_lines && line.trim().is_empty() {
            leading_blank_lines += 1;
            rest = after;
            continue;
        }
        return Err(SplitError::NoOpening);
    }
    let opened_on = line_no;
    let yaml_start = text.len() - rest.len();
    // The closing delimiter.
    loop {
        let Some((line, after)) = next_line(rest) else {
            return Err(SplitError::NotClosed { opened_on });
        };
        if is_delimiter(line) {
            let yaml_end = text.len() - rest.len();
            return Ok(Split {
                yaml: &text[yaml_start..yaml_end],
                line_offset: opened_on,
                leading_blank_lines,
                body: after.trim(),
            });
        }
        rest = after;
    }
}

/// The first line of `s` (without its `\n`) and what follows it; `None`
/// once `s` is empty.
fn next_line(s: &str) -> Option<(&str, &str)> {
    if s.is_empty() {
        return None;
    }
    Some(match s.find('\n') {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, ""),
    })
}

/// One value the colon repair quoted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Repair {
    pub key: String,
    /// 1-based line within the YAML text.
    pub line: u32,
}

/// Quotes every plain `key: value` whose value holds `": "` (or ends in a
/// colon), which YAML reads as a nested mapping and rejects. Indented
/// continuation lines of the value are quoted with it. Returns `None` when
/// nothing needed quoting.
pub(crate) fn quote_colon_values(yaml: &str) -> Option<(String, Vec<Repair>)> {
    let lines: Vec<&str> = yaml.split('\n').collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut repairs = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let Some((indent, key, value)) = plain_entry(line) else {
            out.push(line.to_string());
            i += 1;
            continue;
        };
        if !needs_quoting(value) {
            out.push(line.to_string());
            i += 1;
            continue;
        }
        // Continuation lines are indented deeper than the key and are not
        // themselves entries or list items.
        let mut parts = vec![value.trim_end_matches('\r').trim()];
        let mut j = i + 1;
        while j < lines.len() {
            let next = lines[j].trim_end_matches('\r');
            let next_indent = next.len() - next.trim_start().len();
            if next.trim().is_empty() || next_indent <= indent {
                break;
            }
            parts.push(next.trim());
            j += 1;
        }
        let joined = parts.join(" ");
        out.push(format!(
            "{}{}: '{}'",
            &line[..indent],
            key,
            joined.replace('\'', "''")
        ));
        repairs.push(Repair {
            key: key.to_string(),
            line: u32::try_from(i + 1).unwrap_or(u32::MAX),
        });
        // Keep the line count so later line numbers still match the file.
        for _ in i + 1..j {
            out.push(String::new());
        }
        i = j;
    }
    if repairs.is_empty() {
        None
    } else {
        Some((out.join("\n"), repairs))
    }
}

/// `indent`, `key` and the raw value of a `key: value` line with a simple key.
fn plain_entry(line: &str) -> Option<(usize, &str, &str)> {
    let trimmed = line.trim_start_matches(' ');
    let indent = line.len() - trimmed.len();
    let colon = trimmed.find(": ")?;
    let key = &trimmed[..colon];
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
    {
        return None;
    }
    Some((indent, key, &trimmed[colon + 2..]))
}

fn needs_quoting(value: &str) -> bool {
    let v = value.trim_end_matches('\r').trim();
    let Some(first) = v.chars().next() else {
        return false;
    };
    if matches!(
        first,
        '"' | '\'' | '|' | '>' | '[' | '{' | '&' | '*' | '!' | '#' | '%' | '@' | '`'
    ) {
        return false;
    }
    v.contains(": ") || v.ends_with(':') || v.contains(":\t")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (yaml, line offset, blank lines skipped, body)
    type Parts<'a> = (&'a str, u32, u32, &'a str);

    #[test]
    fn split_finds_yaml_body_and_offsets() {
        let cases: Vec<(&str, bool, Result<Parts, SplitError>)> = vec![
            (
                "---\nname: a\n---\n\n# Body\n",
                false,
                Ok(("name: a\n", 1, 0, "# Body")),
            ),
            ("---\n---\n", false, Ok(("", 1, 0, ""))),
            (
                "---  \r\nx: 1\r\n---\r\nbody",
                false,
                Ok(("x: 1\r\n", 1, 0, "body")),
            ),
            ("\n\n---\nx: 1\n---\n", true, Ok(("x: 1\n", 3, 2, ""))),
            ("\n---\nx: 1\n---\n", false, Err(SplitError::NoOpening)),
            ("# Title\n", false, Err(SplitError::NoOpening)),
            ("", false, Err(SplitError::NoOpening)),
            ("----\nx: 1\n---\n", false, Err(SplitError::NoOpening)),
            (
                "---\nx: 1\n",
                false,
                Err(SplitError::NotClosed { opened_on: 1 }),
            ),
            ("---\nx: a---b\n---\n", false, Ok(("x: a---b\n", 1, 0, ""))),
            (
                "---\nx: 1\n---\nbody\n---\nmore\n",
                false,
                Ok(("x: 1\n", 1, 0, "body\n---\nmore")),
            ),
        ];
        for (text, skip, expected) in cases {
            let got =
                split(text, skip).map(|s| (s.yaml, s.line_offset, s.leading_blank_lines, s.body));
            assert_eq!(got, expected, "for {text:?}");
        }
    }

    /// (repaired yaml, [(key, line)])
    type Repaired<'a> = Option<(&'a str, Vec<(&'a str, u32)>)>;

    #[test]
    fn colon_repair_quotes_only_what_needs_it() {
        let cases: Vec<(&str, Repaired)> = vec![
            ("description: plain\n", None),
            ("description: \"already: quoted\"\n", None),
            ("description: >\n  folded: fine\n", None),
            (
                "name: x\ndescription: Use when: the user asks\n",
                Some((
                    "name: x\ndescription: 'Use when: the user asks'\n",
                    vec![("description", 2)],
                )),
            ),
            (
                "description: Note: it's here\n",
                Some((
                    "description: 'Note: it''s here'\n",
                    vec![("description", 1)],
                )),
            ),
            (
                "description: Steps: one\n  two: three\nlicense: MIT\n",
                Some((
                    "description: 'Steps: one two: three'\n\nlicense: MIT\n",
                    vec![("description", 1)],
                )),
            ),
            (
                "metadata:\n  note: see: here\n",
                Some(("metadata:\n  note: 'see: here'\n", vec![("note", 2)])),
            ),
            (
                "ends: with colon:\n",
                Some(("ends: 'with colon:'\n", vec![("ends", 1)])),
            ),
        ];
        for (yaml, expected) in cases {
            let got = quote_colon_values(yaml);
            let expected = expected.map(|(text, repairs)| {
                (
                    text.to_string(),
                    repairs
                        .into_iter()
                        .map(|(key, line)| Repair {
                            key: key.into(),
                            line,
                        })
                        .collect::<Vec<_>>(),
                )
            });
            assert_eq!(got, expected, "for {yaml:?}");
        }
    }
}
