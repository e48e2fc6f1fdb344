//! The embedder: text to vectors. [`Embedder`] is what the index and its
//! callers need; [`MiniLm`] is all-MiniLM-L6-v2 on candle's CPU backend,
//! computed as sentence-transformers computes it: BERT, then the mean of
//! the last hidden states over the attention mask (its
//! `1_Pooling/config.json` asks for mean pooling), then L2 normalisation
//! (its `2_Normalize` module).

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use serde::Deserialize;
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// Why a model could not be loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("{file} is not usable: {reason}")]
    File { file: &'static str, reason: String },
    #[error("the model failed: {0}")]
    Model(String),
    #[error("the tokenizer failed: {0}")]
    Tokenizer(String),
}

/// Turns texts into vectors of one dimension, each of length 1.
pub trait Embedder {
    /// Which model makes the vectors; an index made by another model is
    /// embedded again.
    fn model_id(&self) -> &str;
    /// How many numbers each vector has.
    fn dimension(&self) -> usize;
    /// One vector per text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// The files of a sentence-transformers model, as bytes.
pub struct ModelFiles<'a> {
    /// `model.safetensors`: the weights (taken by value, as candle keeps
    /// the buffer).
    pub safetensors: Vec<u8>,
    /// `config.json`: BERT's shape.
    pub config: &'a [u8],
    /// `tokenizer.json`.
    pub tokenizer: &'a [u8],
    /// `1_Pooling/config.json`.
    pub pooling: &'a [u8],
}

/// The file names of [`ModelFiles`] in a model folder, in field order.
pub const MODEL_FILES: [&str; 4] = [
    "model.safetensors",
    "config.json",
    "tokenizer.json",
    "1_Pooling/config.json",
];

/// The pooling modes sentence-transformers' `Pooling` module reads.
#[derive(Deserialize)]
struct Pooling {
    word_embedding_dimension: usize,
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
}

/// all-MiniLM-L6-v2 (or any BERT sentence-transformers model with mean
/// pooling and normalisation).
pub struct MiniLm {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    dimension: usize,
}

impl MiniLm {
    pub const MODEL_ID: &'static str = "sentence-transformers/all-MiniLM-L6-v2";

    /// The longest input, in tokens: the model's `max_seq_length` in its
    /// `sentence_bert_config.json`. Longer texts are cut, as
    /// sentence-transformers cuts them. (The `tokenizer.json` it ships
    /// says 128 and pads every input to 128; sentence-transformers does
    /// neither, so neither is kept.)
    pub const MAX_TOKENS: usize = 256;

    /// How many texts one forward pass takes.
    const BATCH: usize = 16;

    /// Loads the model from its files.
    pub fn from_bytes(files: ModelFiles<'_>) -> Result<MiniLm, EmbedError> {
        let pooling: Pooling =
            serde_json::from_slice(files.pooling).map_err(|e| EmbedError::File {
                file: "1_Pooling/config.json",
                reason: e.to_string(),
            })?;
        if !pooling.pooling_mode_mean_tokens
            || pooling.pooling_mode_cls_token
            || pooling.pooling_mode_max_tokens
            || pooling.pooling_mode_mean_sqrt_len_tokens
        {
            return Err(EmbedError::File {
                file: "1_Pooling/config.json",
                reason: "only mean pooling is supported".into(),
            });
        }
        let config: Config =
            serde_json::from_slice(files.config).map_err(|e| EmbedError::File {
                file: "config.json",
                reason: e.to_string(),
            })?;
        if config.hidden_size != pooling.word_embedding_dimension {
            return Err(EmbedError::File {
                file: "1_Pooling/config.json",
                reason: format!(
                    "pools {} numbers but the model makes {}",
                    pooling.word_embedding_dimension, config.hidden_size
                ),
            });
        }
        let mut tokenizer =
            Tokenizer::from_bytes(files.tokenizer).map_err(|e| EmbedError::File {
                file: "tokenizer.json",
                reason: e.to_string(),
            })?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: Self::MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        let pad_id = tokenizer.get_padding().map_or(0, |p| p.pad_id);
        let pad_token = tokenizer
            .get_padding()
            .map_or_else(|| "[PAD]".to_string(), |p| p.pad_token.clone());
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            pad_id,
            pad_token,
            ..PaddingParams::default()
        }));
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(files.safetensors, DType::F32, &device)
            .map_err(|e| EmbedError::File {
                file: "model.safetensors",
                reason: e.to_string(),
            })?;
        let model = BertModel::load(vb, &config).map_err(|e| EmbedError::File {
            file: "model.safetensors",
            reason: e.to_string(),
        })?;
        Ok(MiniLm {
            model,
            tokenizer,
            device,
            dimension: config.hidden_size,
        })
    }

    /// How many tokens the model reads of `text`, `[CLS]` and `[SEP]`
    /// included, after cutting at [`Self::MAX_TOKENS`].
    pub fn count_tokens(&self, text: &str) -> Result<usize, EmbedError> {
        self.tokenizer
            .encode(text, true)
            .map(|e| e.get_ids().len())
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))
    }

    /// One forward pass over texts padded to the longest of them.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let model = |e: candle_core::Error| EmbedError::Model(e.to_string());
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        let rows = encodings.len();
        let width = encodings.first().map_or(0, |e| e.get_ids().len());
        let flat = |get: fn(&tokenizers::Encoding) -> &[u32]| -> Vec<u32> {
            encodings.iter().flat_map(|e| get(e).to_vec()).collect()
        };
        let shape = (rows, width);
        let ids = Tensor::from_vec(flat(|e| e.get_ids()), shape, &self.device).map_err(model)?;
        let types =
            Tensor::from_vec(flat(|e| e.get_type_ids()), shape, &self.device).map_err(model)?;
        let mask = Tensor::from_vec(flat(|e| e.get_attention_mask()), shape, &self.device)
            .map_err(model)?;
        let hidden = self
            .model
            .forward(&ids, &types, Some(&mask))
            .map_err(model)?;
        // Mean over the tokens the mask keeps: padding adds nothing.
        let mask = mask
            .to_dtype(DType::F32)
            .map_err(model)?
            .unsqueeze(2)
            .map_err(model)?;
        let summed = hidden
            .broadcast_mul(&mask)
            .map_err(model)?
            .sum(1)
            .map_err(model)?;
        let counts = mask
            .sum(1)
            .map_err(model)?
            .clamp(1e-9, f32::MAX)
            .map_err(model)?;
        let mean = summed.broadcast_div(&counts).map_err(model)?;
        let mut vectors: Vec<Vec<f32>> = mean.to_vec2().map_err(model)?;
        for v in &mut vectors {
            crate::vector::normalize(v);
        }
        Ok(vectors)
    }
}

impl Embedder for MiniLm {
    fn model_id(&self) -> &str {
        Self::MODEL_ID
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    /// Texts of similar length are batched together, so little of each
    /// pass is padding; the vectors come back in the texts' order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for group in order.chunks(Self::BATCH) {
            let batch: Vec<&str> = group.iter().map(|&i| texts[i]).collect();
            for (&i, v) in group.iter().zip(self.embed_batch(&batch)?) {
                out[i] = v;
            }
        }
        Ok(out)
    }
}
