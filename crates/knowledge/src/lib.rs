//! Knowledge: search over a person's own files, by words and by meaning.
//!
//! The caller hands in file contents (this crate reads no files, starts no
//! threads and reads no clock, so the same code can run in the tab):
//! [`source`] tells which files can be read as text and why not;
//! [`chunk`] cuts a file into passages by its structure, each with its
//! heading path and its place in the file; [`index`] keeps the passages
//! and their vectors incrementally, keyed by content hash, and ranks them
//! for a question with BM25 ([`bm25`]) and cosine similarity ([`vector`])
//! fused by reciprocal rank ([`fuse`]); [`embed`] is the model that turns
//! text into vectors, all-MiniLM-L6-v2 on candle.

pub mod bm25;
pub mod chunk;
pub mod embed;
pub mod fuse;
mod html;
pub mod index;
mod markdown;
pub mod source;
mod text;
pub mod vector;

pub use chunk::{Chunk, ChunkBudget, DocKind};
pub use embed::{EmbedError, Embedder, MODEL_FILES, MiniLm, ModelFiles};
pub use index::{Hit, KnowledgeIndex, Plan};
pub use source::{Unreadable, content_hash};
