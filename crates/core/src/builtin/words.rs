//! Word-level text matching shared by notes search and memory recall:
//! lowercase, split on anything not alphanumeric, fold a plural `s`; and an
//! inverted index so searching thousands of notes stays fast.

use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

/// A fast, non-cryptographic hasher for the index's own keys (words and
/// slot numbers it made itself), in the style of rustc's FxHash.
#[derive(Clone, Copy, Debug, Default)]
pub struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let v = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0.rotate_left(5) ^ u64::from(n)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

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

/// An inverted index over documents with `F` weighted fields, kept up to
/// date one document at a time. Lookups find every indexed word equal to a
/// query word or, for query words of three letters or more, starting with
/// it — so "gro" finds "groceries" — without scanning the documents.
#[derive(Clone, Debug, Default)]
pub struct TextIndex<const F: usize> {
    /// word → (document slot → occurrences per field)
    postings: FxMap<String, FxMap<u32, [u32; F]>>,
    /// The same words in order, for prefix lookups.
    vocabulary: BTreeSet<String>,
    /// document id → slot, and slot → (id, its words) for removal
    slots: FxMap<String, u32>,
    docs: Vec<Option<(String, Vec<String>)>>,
    free: Vec<u32>,
}

impl<const F: usize> TextIndex<F> {
    /// Indexes `doc` with its fields' text, replacing an earlier version.
    pub fn upsert(&mut self, doc: &str, fields: [&str; F]) {
        self.remove(doc);
        let mut counts: FxMap<String, [u32; F]> = FxMap::default();
        for (f, text) in fields.iter().enumerate() {
            for w in words(text) {
                counts.entry(w).or_insert([0; F])[f] += 1;
            }
        }
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.docs.push(None);
                (self.docs.len() - 1) as u32
            }
        };
        let mut list = Vec::with_capacity(counts.len());
        for (w, c) in counts {
            match self.postings.get_mut(&w) {
                Some(p) => {
                    p.insert(slot, c);
                }
                None => {
                    self.vocabulary.insert(w.clone());
                    let mut p = FxMap::default();
                    p.insert(slot, c);
                    self.postings.insert(w.clone(), p);
                }
            }
            list.push(w);
        }
        self.slots.insert(doc.to_string(), slot);
        self.docs[slot as usize] = Some((doc.to_string(), list));
    }

    pub fn remove(&mut self, doc: &str) {
        let Some(slot) = self.slots.remove(doc) else {
            return;
        };
        if let Some((_, list)) = self.docs[slot as usize].take() {
            for w in list {
                if let Some(p) = self.postings.get_mut(&w) {
                    p.remove(&slot);
                    if p.is_empty() {
                        self.postings.remove(&w);
                        self.vocabulary.remove(&w);
                    }
                }
            }
        }
        self.free.push(slot);
    }

    /// The id of the document in `slot`.
    pub fn id(&self, slot: u32) -> Option<&str> {
        self.docs
            .get(slot as usize)?
            .as_ref()
            .map(|(id, _)| id.as_str())
    }

    /// For every document matching all `query` words (by slot; see
    /// [`TextIndex::id`]), its occurrences per query word per field.
    pub fn matches(&self, query: &[String]) -> HashMap<u32, Vec<[u32; F]>> {
        let mut acc: Option<HashMap<u32, Vec<[u32; F]>>> = None;
        for (qi, q) in query.iter().enumerate() {
            let mut found: FxMap<u32, [u32; F]> = FxMap::default();
            let prefix = q.chars().count() >= 3;
            for word in self.vocabulary.range(q.clone()..) {
                if word != q && !(prefix && word.starts_with(q.as_str())) {
                    break;
                }
                let Some(docs) = self.postings.get(word) else {
                    continue;
                };
                for (slot, counts) in docs {
                    // Only documents still in the running need counting.
                    if acc.as_ref().is_some_and(|a| !a.contains_key(slot)) {
                        continue;
                    }
                    let e = found.entry(*slot).or_insert([0; F]);
                    for f in 0..F {
                        e[f] += counts[f];
                    }
                }
            }
            acc = Some(match acc {
                None => found
                    .into_iter()
                    .map(|(slot, c)| {
                        let mut v = vec![[0; F]; query.len()];
                        v[qi] = c;
                        (slot, v)
                    })
                    .collect(),
                Some(mut a) => {
                    a.retain(|slot, v| match found.get(slot) {
                        Some(c) => {
                            v[qi] = *c;
                            true
                        }
                        None => false,
                    });
                    a
                }
            });
            if acc.as_ref().is_some_and(HashMap::is_empty) {
                break;
            }
        }
        acc.unwrap_or_default()
    }
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
    fn the_index_finds_whole_and_prefix_words_in_every_field() {
        let mut ix: TextIndex<2> = TextIndex::default();
        ix.upsert("a", ["Groceries list", "milk eggs"]);
        ix.upsert("b", ["Garden", "groceries for the garden"]);
        let by_id =
            |ix: &TextIndex<2>, q: &str| -> std::collections::BTreeMap<String, Vec<[u32; 2]>> {
                ix.matches(&words(q))
                    .into_iter()
                    .map(|(s, v)| (ix.id(s).unwrap().to_string(), v))
                    .collect()
            };
        let m = by_id(&ix, "gro");
        assert_eq!(m.get("a"), Some(&vec![[1, 0]]));
        assert_eq!(m.get("b"), Some(&vec![[0, 1]]));
        let m = by_id(&ix, "garden groceries");
        assert_eq!(m.keys().collect::<Vec<_>>(), ["b"]);
        assert_eq!(m["b"], vec![[1, 1], [0, 1]]);
        assert!(
            ix.matches(&words("gr")).is_empty(),
            "two letters only match whole words"
        );
        let found = |ix: &TextIndex<2>, q: &str| -> Vec<String> {
            ix.matches(&words(q))
                .keys()
                .map(|s| ix.id(*s).unwrap().to_string())
                .collect()
        };
        ix.upsert("a", ["Hardware", "nails"]);
        assert_eq!(found(&ix, "groceries"), ["b"]);
        ix.remove("b");
        assert!(found(&ix, "groceries").is_empty());
        assert_eq!(ix.postings.len(), 2, "no empty postings are left behind");
        assert_eq!(ix.vocabulary.len(), 2);
        ix.upsert("c", ["Groceries again", ""]);
        assert_eq!(found(&ix, "groceries"), ["c"]);
        assert_eq!(ix.docs.len(), 2, "freed slots are reused");
    }

    #[test]
    fn snippets_centre_on_the_match() {
        let text = "The quick brown fox jumps over the lazy dog and keeps running far away";
        assert_eq!(snippet(text, &words("lazy"), 20), "…over the lazy dog…");
        assert_eq!(snippet("short", &words("x"), 20), "short");
        assert_eq!(snippet("ééé ééé lazy", &words("lazy"), 6), "…lazy");
    }
}
