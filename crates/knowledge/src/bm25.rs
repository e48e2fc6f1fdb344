//! BM25 over passages: the word half of hybrid search. Each passage is one
//! document, its heading path counted with its text; scores use the usual
//! k1 = 1.2 and b = 0.75.

use std::collections::HashMap;

use crate::text::terms;

const K1: f32 = 1.2;
const B: f32 = 0.75;

/// An inverted index of passages' terms.
#[derive(Clone, Debug, Default)]
pub struct Bm25 {
    /// Each term's passages, with how often it occurs in each.
    postings: HashMap<String, Vec<(u32, u32)>>,
    /// Each passage's length in terms.
    lengths: Vec<u32>,
    average: f32,
}

impl Bm25 {
    /// Indexes `docs`; a passage's number is its place in the iterator.
    pub fn new<'a>(docs: impl IntoIterator<Item = &'a str>) -> Bm25 {
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut lengths = Vec::new();
        for (n, doc) in docs.into_iter().enumerate() {
            let words = terms(doc);
            lengths.push(words.len() as u32);
            let mut counts: HashMap<String, u32> = HashMap::new();
            for w in words {
                *counts.entry(w).or_default() += 1;
            }
            for (w, tf) in counts {
                postings.entry(w).or_default().push((n as u32, tf));
            }
        }
        let total: u64 = lengths.iter().map(|&l| u64::from(l)).sum();
        let average = if lengths.is_empty() {
            0.0
        } else {
            total as f32 / lengths.len() as f32
        };
        Bm25 {
            postings,
            lengths,
            average,
        }
    }

    /// The passages that share a term with `query`, best first, at most
    /// `depth` of them, as (passage number, score); ties keep passage order.
    pub fn search(&self, query: &str, depth: usize) -> Vec<(usize, f32)> {
        let n = self.lengths.len() as f32;
        let mut query_terms = terms(query);
        query_terms.sort();
        query_terms.dedup();
        let mut scores: HashMap<u32, f32> = HashMap::new();
        for term in &query_terms {
            let Some(list) = self.postings.get(term) else {
                continue;
            };
            let df = list.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in list {
                let tf = tf as f32;
                let len = self.lengths[doc as usize] as f32;
                let norm = K1 * (1.0 - B + B * len / self.average.max(1.0));
                *scores.entry(doc).or_default() += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        let mut ranked: Vec<(usize, f32)> = scores
            .into_iter()
            .map(|(doc, s)| (doc as usize, s))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(depth);
        ranked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rarer_and_more_frequent_terms_rank_higher() {
        let docs = [
            "the cat sat on the mat",
            "notice periods: one month's notice for tenants",
            "a dog and a cat",
            "nothing relevant here",
        ];
        let index = Bm25::new(docs);
        let hits = index.search("notice period for cats", 10);
        let order: Vec<usize> = hits.iter().map(|h| h.0).collect();
        // "cat" weighs more in the shorter passage.
        assert_eq!(order, [1, 2, 0]);
        assert!(hits[0].1 > hits[1].1);
        assert_eq!(index.search("zebra", 10), []);
        assert_eq!(index.search("cat", 1).len(), 1);
    }

    #[test]
    fn an_empty_index_finds_nothing() {
        assert_eq!(Bm25::new([]).search("anything", 5), []);
    }
}
