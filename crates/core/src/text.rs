//! Word-level text matching shared by notes search and memory recall:
//! lowercase, split on anything not alphanumeric, fold a plural `s`.

/// The words of `text`, normalised.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(normalise)
        .collect()
}

fn normalise(word: &str) -> String {
    let lower = word.to_lowercase();
    // "notes" and "note", "tasks" and "task" match; "is" and "bus" are kept.
    if lower.chars().count() > 3 && lower.ends_with('s') && !lower.ends_with("ss") {
        lower[..lower.len() - 1].to_string()
    } else {
        lower
    }
}

/// How many times each query word occurs in `field_words`, counting a
/// field word that starts with the query word (so "gro" finds "groceries").
pub fn hits(query: &[String], field_words: &[String]) -> Vec<u32> {
    query
        .iter()
        .map(|q| {
            field_words
                .iter()
                .filter(|w| *w == q || (q.chars().count() >= 3 && w.starts_with(q.as_str())))
                .count() as u32
        })
        .collect()
}

/// A short excerpt of `text` around the first query word, cut at word
/// boundaries, for results.
pub fn snippet(text: &str, query: &[String], max_chars: usize) -> String {
    let lower = text.to_lowercase();
    // Lowercasing can change byte lengths; only trust positions that are
    // character boundaries in the original.
    let start = query
        .iter()
        .filter_map(|q| lower.find(q.as_str()))
        .filter(|&i| text.is_char_boundary(i))
        .min()
        .unwrap_or(0);
    let mut from = start.saturating_sub(max_chars / 3);
    while from > 0 && !text.is_char_boundary(from) {
        from -= 1;
    }
    if from > 0 {
        // Start at the beginning of a word.
        from = text[..from].rfind(char::is_whitespace).map_or(0, |w| w + 1);
        // Never let the lead-in push the match out of the window.
        if text[from..start].chars().count() > max_chars / 2 {
            from = start;
        }
    }
    let rest = &text[from..];
    let mut window: String = rest.chars().take(max_chars).collect();
    let cut = window.len() < rest.len();
    if cut
        && let Some(w) = window.rfind(char::is_whitespace)
        && w > 0
    {
        window.truncate(w);
    }
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    out.push_str(&window.split_whitespace().collect::<Vec<_>>().join(" "));
    if cut {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_normalised() {
        assert_eq!(
            words("Buy MILK, eggs & 2 Notes!"),
            ["buy", "milk", "egg", "2", "note"]
        );
        assert_eq!(words("class is bus"), ["class", "is", "bus"]);
        assert_eq!(words("Café naïve ÉCOLE"), ["café", "naïve", "école"]);
        assert_eq!(words("  "), Vec::<String>::new());
    }

    #[test]
    fn prefixes_of_three_or_more_letters_hit() {
        let field = words("groceries for the week, groceries again");
        assert_eq!(hits(&words("gro week xyz"), &field), [2, 1, 0]);
        assert_eq!(hits(&words("gr"), &field), [0]);
    }

    #[test]
    fn snippets_centre_on_the_match() {
        let text = "The quick brown fox jumps over the lazy dog and keeps running far away";
        assert_eq!(snippet(text, &words("lazy"), 20), "…over the lazy dog…");
        assert_eq!(snippet("short", &words("x"), 20), "short");
        assert_eq!(snippet("ééé ééé lazy", &words("lazy"), 6), "…lazy");
    }
}
