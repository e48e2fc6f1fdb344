//! Text placed in HTML: the one escape the Markdown renderer and the
//! pages `hearth serve` writes itself (the OAuth consent answers) share.

/// `s` as HTML text or attribute value: the five characters that could
/// end either are written as references.
pub fn escape_into(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

/// [`escape_into`] a new string.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    escape_into(s, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_five_characters_that_end_text_or_an_attribute_become_references() {
        assert_eq!(
            escape(r#"<a href="x" title='y'>Tom & Jerry</a>"#),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;Tom &amp; Jerry&lt;/a&gt;"
        );
        assert_eq!(escape("plain words, ünïcode"), "plain words, ünïcode");
    }
}
