//! The knowledge index: every file's passages with their vectors, keyed by
//! the file's path and content hash, so that only what changed is embedded
//! again. It is plain serde data the caller stores where it likes (a
//! folder for the CLI), and it ranks passages for a question by BM25 and
//! by cosine, fused by reciprocal rank.

use std::cell::OnceCell;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::bm25::Bm25;
use crate::chunk::{Chunk, ChunkBudget};
use crate::fuse::{RRF_K, reciprocal_rank};
use crate::vector::top_k;

/// The version of the stored form; an index in another is rebuilt.
pub const FORMAT: u32 = 1;

/// How far down each ranking fusion looks: a passage below this in both
/// lists is not found.
pub const RANK_DEPTH: usize = 100;

/// Why an index could not be read or changed.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum IndexError {
    #[error("the index is not readable: {0}")]
    Corrupt(String),
    #[error("{chunks} chunks but {vectors} vectors for {path}")]
    Mismatch {
        path: String,
        chunks: usize,
        vectors: usize,
    },
    #[error("a vector of {got} numbers for {path}; the index holds {want}")]
    Dimension {
        path: String,
        got: usize,
        want: usize,
    },
}

/// The passages of every indexed file, with their vectors.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KnowledgeIndex {
    format: u32,
    /// The model that made the vectors.
    model: String,
    dimension: usize,
    /// The budget the passages were cut with.
    budget: ChunkBudget,
    files: BTreeMap<String, IndexedFile>,
    /// The word index over every passage, built on the first search after
    /// a change.
    #[serde(skip)]
    words: OnceCell<Bm25>,
}

/// One file's passages, and the hash of the content they came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndexedFile {
    pub hash: String,
    pub chunks: Vec<IndexedChunk>,
}

/// A passage and its vector.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndexedChunk {
    #[serde(flatten)]
    pub chunk: Chunk,
    #[serde(with = "packed")]
    pub vector: Vec<f32>,
}

/// What bringing the index up to date with a folder takes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// New files, and files whose content changed: chunk and embed these.
    pub embed: Vec<String>,
    /// Files indexed with the same content: nothing to do.
    pub keep: Vec<String>,
    /// Indexed files no longer there: remove these.
    pub drop: Vec<String>,
}

/// One ranked passage.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit<'a> {
    pub path: &'a str,
    pub chunk: &'a Chunk,
    /// The fused score: Σ 1 / (60 + rank) over the two rankings.
    pub score: f32,
    /// Its place (from 1) in the word ranking, if there.
    pub word_rank: Option<usize>,
    /// Its place (from 1) in the meaning ranking, if there.
    pub meaning_rank: Option<usize>,
    /// Its cosine similarity with the question, when one was given.
    pub cosine: Option<f32>,
}

impl KnowledgeIndex {
    /// An empty index for vectors of `dimension` numbers from `model`,
    /// with passages cut by `budget`.
    pub fn new(model: &str, dimension: usize, budget: ChunkBudget) -> KnowledgeIndex {
        KnowledgeIndex {
            format: FORMAT,
            model: model.to_string(),
            dimension,
            budget,
            files: BTreeMap::new(),
            words: OnceCell::new(),
        }
    }

    /// Reads a stored index.
    pub fn from_json(bytes: &[u8]) -> Result<KnowledgeIndex, IndexError> {
        serde_json::from_slice(bytes).map_err(|e| IndexError::Corrupt(e.to_string()))
    }

    /// The stored form.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Whether this index was made the way `model` and `budget` would make
    /// it now; when not, every file must be embedded again.
    pub fn made_by(&self, model: &str, dimension: usize, budget: ChunkBudget) -> bool {
        self.format == FORMAT
            && self.model == model
            && self.dimension == dimension
            && self.budget == budget
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    pub fn budget(&self) -> ChunkBudget {
        self.budget
    }

    /// What to embed, keep and drop so the index matches `current`, the
    /// folder's readable files as (path, content hash).
    pub fn plan<'a>(&self, current: impl IntoIterator<Item = (&'a str, &'a str)>) -> Plan {
        let mut plan = Plan::default();
        let mut present = std::collections::BTreeSet::new();
        for (path, hash) in current {
            present.insert(path);
            match self.files.get(path) {
                Some(file) if file.hash == hash => plan.keep.push(path.to_string()),
                _ => plan.embed.push(path.to_string()),
            }
        }
        plan.drop = self
            .files
            .keys()
            .filter(|p| !present.contains(p.as_str()))
            .cloned()
            .collect();
        plan
    }

    /// Puts a file's passages and their vectors (one per passage, in
    /// order) in place of what the index held for it.
    pub fn insert(
        &mut self,
        path: &str,
        hash: &str,
        chunks: Vec<Chunk>,
        vectors: Vec<Vec<f32>>,
    ) -> Result<(), IndexError> {
        if chunks.len() != vectors.len() {
            return Err(IndexError::Mismatch {
                path: path.to_string(),
                chunks: chunks.len(),
                vectors: vectors.len(),
            });
        }
        if let Some(v) = vectors.iter().find(|v| v.len() != self.dimension) {
            return Err(IndexError::Dimension {
                path: path.to_string(),
                got: v.len(),
                want: self.dimension,
            });
        }
        let chunks = chunks
            .into_iter()
            .zip(vectors)
            .map(|(chunk, vector)| IndexedChunk { chunk, vector })
            .collect();
        self.files.insert(
            path.to_string(),
            IndexedFile {
                hash: hash.to_string(),
                chunks,
            },
        );
        self.words = OnceCell::new();
        Ok(())
    }

    /// Removes a file's passages; whether it was indexed.
    pub fn remove(&mut self, path: &str) -> bool {
        let removed = self.files.remove(path).is_some();
        if removed {
            self.words = OnceCell::new();
        }
        removed
    }

    /// The indexed files, by path.
    pub fn files(&self) -> impl Iterator<Item = (&str, &IndexedFile)> {
        self.files.iter().map(|(p, f)| (p.as_str(), f))
    }

    /// How many passages the index holds.
    pub fn chunk_count(&self) -> usize {
        self.files.values().map(|f| f.chunks.len()).sum()
    }

    fn passages(&self) -> impl Iterator<Item = (&str, &IndexedChunk)> {
        self.files
            .iter()
            .flat_map(|(p, f)| f.chunks.iter().map(move |c| (p.as_str(), c)))
    }

    /// The `limit` passages that best answer `query`: BM25 over the words
    /// and, when `query_vector` is given, cosine over the vectors, fused
    /// by reciprocal rank. Without a vector the ranking is BM25's alone.
    pub fn search(&self, query: &str, query_vector: Option<&[f32]>, limit: usize) -> Vec<Hit<'_>> {
        let passages: Vec<(&str, &IndexedChunk)> = self.passages().collect();
        let depth = limit.max(RANK_DEPTH);
        let words = self.words.get_or_init(|| {
            Bm25::new(
                passages
                    .iter()
                    .map(|(_, c)| c.chunk.embed_text())
                    .collect::<Vec<_>>()
                    .iter()
                    .map(String::as_str),
            )
        });
        let by_words: Vec<usize> = words
            .search(query, depth)
            .into_iter()
            .map(|h| h.0)
            .collect();
        let by_meaning: Vec<(usize, f32)> = match query_vector {
            Some(q) => top_k(q, passages.iter().map(|(_, c)| c.vector.as_slice()), depth),
            None => Vec::new(),
        };
        let meaning_ids: Vec<usize> = by_meaning.iter().map(|h| h.0).collect();
        let fused = reciprocal_rank(&[&by_words, &meaning_ids], RRF_K);
        fused
            .into_iter()
            .take(limit)
            .map(|(i, score)| {
                let (path, c) = passages[i];
                Hit {
                    path,
                    chunk: &c.chunk,
                    score,
                    word_rank: by_words.iter().position(|&w| w == i).map(|p| p + 1),
                    meaning_rank: meaning_ids.iter().position(|&m| m == i).map(|p| p + 1),
                    cosine: query_vector.map(|q| crate::vector::dot(q, &c.vector)),
                }
            })
            .collect()
    }
}

/// Vectors stored as base64 of their little-endian f32 bytes: exact, and
/// about a third of the size of decimal text.
mod packed {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(v: &[f32], s: S) -> Result<S::Ok, S::Error> {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        s.serialize_str(&STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f32>, D::Error> {
        let text = String::deserialize(d)?;
        let bytes = STANDARD.decode(text).map_err(D::Error::custom)?;
        if bytes.len() % 4 != 0 {
            return Err(D::Error::custom("a vector's bytes are not whole f32s"));
        }
        Ok(bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::{DocKind, chunk};

    fn budget() -> ChunkBudget {
        ChunkBudget::MINILM
    }

    /// A stand-in for a model: one axis per topic word.
    fn vector(text: &str) -> Vec<f32> {
        let t = text.to_lowercase();
        let mut v: Vec<f32> = ["garden", "money", "travel"]
            .iter()
            .map(|w| if t.contains(w) { 1.0 } else { 0.0 })
            .collect();
        v.push(0.1);
        crate::vector::normalize(&mut v);
        v
    }

    fn add(index: &mut KnowledgeIndex, path: &str, text: &str) {
        let chunks = chunk(DocKind::Markdown, text, budget());
        let vectors = chunks.iter().map(|c| vector(&c.embed_text())).collect();
        index
            .insert(path, &crate::content_hash(text.as_bytes()), chunks, vectors)
            .unwrap();
    }

    #[test]
    fn the_plan_embeds_new_and_changed_files_keeps_the_rest_and_drops_the_gone() {
        let mut index = KnowledgeIndex::new("m", 4, budget());
        add(&mut index, "a.md", "# A\n\none");
        add(&mut index, "b.md", "# B\n\ntwo");
        add(&mut index, "c.md", "# C\n\nthree");
        let a = crate::content_hash(b"# A\n\none");
        let plan = index.plan([("a.md", a.as_str()), ("b.md", "changed"), ("d.md", "new")]);
        assert_eq!(
            plan,
            Plan {
                embed: vec!["b.md".into(), "d.md".into()],
                keep: vec!["a.md".into()],
                drop: vec!["c.md".into()],
            }
        );
        assert!(index.remove("c.md"));
        assert!(!index.remove("c.md"));
        assert_eq!(index.chunk_count(), 2);
    }

    #[test]
    fn hybrid_search_finds_by_meaning_what_words_miss() {
        let mut index = KnowledgeIndex::new("m", 4, budget());
        add(
            &mut index,
            "garden.md",
            "# Garden\n\nWater the tomatoes daily.",
        );
        add(
            &mut index,
            "money.md",
            "# Money\n\nPay the rent on the first.",
        );
        add(
            &mut index,
            "trip.md",
            "# Travel\n\nThe train leaves at nine.",
        );
        // No word of the question is in the garden note.
        let q = "when should plants get watered";
        let words_only = index.search(q, None, 3);
        assert!(words_only.is_empty());
        let qv = vector("garden");
        let hits = index.search(q, Some(&qv), 3);
        assert_eq!(hits[0].path, "garden.md");
        assert_eq!(hits[0].chunk.heading_line(), "Garden");
        assert_eq!(hits[0].meaning_rank, Some(1));
        assert!(hits[0].cosine.unwrap() > 0.9);
        // Words alone still rank when they match.
        let hits = index.search("rent", None, 3);
        assert_eq!(hits.len(), 1);
        assert_eq!((hits[0].path, hits[0].word_rank), ("money.md", Some(1)));
    }

    #[test]
    fn a_change_is_seen_by_the_next_search() {
        let mut index = KnowledgeIndex::new("m", 4, budget());
        add(&mut index, "a.md", "# A\n\napples");
        assert_eq!(index.search("apples", None, 5).len(), 1);
        add(&mut index, "a.md", "# A\n\npears");
        assert_eq!(index.search("apples", None, 5).len(), 0);
        index.remove("a.md");
        assert_eq!(index.search("pears", None, 5).len(), 0);
    }

    #[test]
    fn the_stored_form_round_trips_exactly() {
        let mut index = KnowledgeIndex::new("m", 4, budget());
        add(
            &mut index,
            "trip.md",
            "# Travel\n\nThe train leaves at nine.",
        );
        let back = KnowledgeIndex::from_json(&index.to_json()).unwrap();
        assert_eq!(back.files, index.files);
        assert!(back.made_by("m", 4, budget()));
        assert!(!back.made_by("other", 4, budget()));
        assert!(matches!(
            KnowledgeIndex::from_json(b"{"),
            Err(IndexError::Corrupt(_))
        ));
    }

    #[test]
    fn vectors_must_match_passages_and_dimension() {
        let mut index = KnowledgeIndex::new("m", 4, budget());
        let chunks = chunk(
            DocKind::Text,
            "one\n\ntwo",
            ChunkBudget {
                max_tokens: 1,
                overlap_tokens: 0,
            },
        );
        assert_eq!(chunks.len(), 2);
        assert!(matches!(
            index.insert("x", "h", chunks.clone(), vec![vec![0.0; 4]]),
            Err(IndexError::Mismatch { .. })
        ));
        assert!(matches!(
            index.insert("x", "h", chunks, vec![vec![0.0; 3], vec![0.0; 3]]),
            Err(IndexError::Dimension { .. })
        ));
    }
}
