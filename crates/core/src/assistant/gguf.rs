//! GGUF headers: the facts Hearth lists about a model file (name,
//! architecture, quantisation, context length, whether its chat template
//! knows tools), read from the file's first bytes without the tensors.
//!
//! A GGUF file opens with the magic `GGUF`, a version (2 and 3 are read;
//! version 1 used 32-bit lengths and is long gone), the tensor count, the
//! key–value count, then the key–value pairs: a string key, a type tag and
//! a value. All numbers are little-endian. The pairs can be megabytes long
//! (the tokenizer's vocabulary is an array among them), so the caller
//! reads a prefix and, when [`GgufError::Truncated`] says so, a longer one.
//!
//! Nothing here trusts a length in the file: every string, array and count
//! is checked against the bytes actually present before it is used, so a
//! hostile file yields an error, never a huge allocation or a panic.

use serde::{Deserialize, Serialize};

/// The facts Hearth keeps about a model file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GgufInfo {
    pub version: u32,
    pub tensor_count: u64,
    /// `general.architecture`, e.g. "llama", "qwen2".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub architecture: Option<String>,
    /// `general.name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `general.size_label`, e.g. "135M".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_label: Option<String>,
    /// `general.file_type`: llama.cpp's number for the quantisation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_type: Option<u32>,
    /// `<architecture>.context_length`: the longest context it was trained for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_length: Option<u64>,
    /// Whether `tokenizer.chat_template` renders tool definitions and
    /// tool calls (see [`template_knows_tools`]).
    #[serde(default)]
    pub template_tools: bool,
    /// Whether the file has a chat template at all.
    #[serde(default)]
    pub has_chat_template: bool,
    /// Bytes from the start of the file to the end of the key–value pairs.
    pub header_len: u64,
}

impl GgufInfo {
    /// The quantisation's usual name ("Q4_1", "Q4_K_M", "F16"), when the
    /// file says and the number is one llama.cpp defines.
    pub fn quantisation(&self) -> Option<&'static str> {
        self.file_type.and_then(quantisation_name)
    }
}

/// Why a header could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GgufError {
    #[error("this is not a GGUF model file (it does not start with \"GGUF\")")]
    NotGguf,
    #[error("GGUF version {0} is not supported; versions 2 and 3 are")]
    UnsupportedVersion(u32),
    /// The header goes on past the bytes given; read at least `need`
    /// bytes (capped at the file's length) and try again.
    #[error("the header goes on past the first {have} bytes")]
    Truncated { have: u64, need: u64 },
    #[error("the GGUF header is damaged: {0}")]
    Malformed(String),
}

/// The most key–value pairs a real header has is in the low hundreds.
const MAX_PAIRS: u64 = 100_000;
/// Keys are short identifiers.
const MAX_KEY: u64 = 64 * 1024;
/// Nested arrays deeper than this are not GGUF as anyone writes it.
const MAX_DEPTH: u32 = 4;

/// The value types of GGUF's key–value pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    F32,
    Bool,
    String,
    Array,
    U64,
    I64,
    F64,
}

impl Kind {
    fn from_tag(tag: u32) -> Option<Kind> {
        Some(match tag {
            0 => Kind::U8,
            1 => Kind::I8,
            2 => Kind::U16,
            3 => Kind::I16,
            4 => Kind::U32,
            5 => Kind::I32,
            6 => Kind::F32,
            7 => Kind::Bool,
            8 => Kind::String,
            9 => Kind::Array,
            10 => Kind::U64,
            11 => Kind::I64,
            12 => Kind::F64,
            _ => return None,
        })
    }

    /// The size of a fixed-size value; `None` for strings and arrays.
    fn width(self) -> Option<u64> {
        match self {
            Kind::U8 | Kind::I8 | Kind::Bool => Some(1),
            Kind::U16 | Kind::I16 => Some(2),
            Kind::U32 | Kind::I32 | Kind::F32 => Some(4),
            Kind::U64 | Kind::I64 | Kind::F64 => Some(8),
            Kind::String | Kind::Array => None,
        }
    }
}

/// A value Hearth wants to keep; everything else is skipped.
enum Value {
    Int(i128),
    Text(String),
    Other,
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    file_len: u64,
}

impl Reader<'_> {
    /// Fails with `Truncated` (or, when the whole file is here, `Malformed`)
    /// unless `n` more bytes are present.
    fn need(&self, n: u64) -> Result<(), GgufError> {
        let end = (self.at as u64).saturating_add(n);
        if end <= self.bytes.len() as u64 {
            return Ok(());
        }
        if end > self.file_len || self.bytes.len() as u64 >= self.file_len {
            return Err(GgufError::Malformed(format!(
                "a value at byte {} runs past the end of the file",
                self.at
            )));
        }
        // Ask for twice what is needed now, so a long header is read in a
        // few rounds rather than many.
        let need = end
            .saturating_mul(2)
            .max(self.bytes.len() as u64 * 2)
            .min(self.file_len);
        Err(GgufError::Truncated {
            have: self.bytes.len() as u64,
            need,
        })
    }

    fn take(&mut self, n: u64) -> Result<&[u8], GgufError> {
        self.need(n)?;
        let start = self.at;
        self.at += n as usize;
        Ok(&self.bytes[start..self.at])
    }

    fn u32(&mut self) -> Result<u32, GgufError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, GgufError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// A length-prefixed UTF-8 string; invalid UTF-8 is replaced, not refused.
    fn string(&mut self, max: u64) -> Result<String, GgufError> {
        let len = self.u64()?;
        if len > max {
            return Err(GgufError::Malformed(format!(
                "a string at byte {} claims {len} bytes",
                self.at
            )));
        }
        let b = self.take(len)?;
        Ok(String::from_utf8_lossy(b).into_owned())
    }

    fn skip_string(&mut self) -> Result<(), GgufError> {
        let len = self.u64()?;
        self.take(len).map(|_| ())
    }

    fn value(&mut self, kind: Kind, keep: bool, depth: u32) -> Result<Value, GgufError> {
        if let Some(w) = kind.width() {
            let b = self.take(w)?;
            if !keep {
                return Ok(Value::Other);
            }
            let n: i128 = match kind {
                Kind::U8 | Kind::Bool => i128::from(b[0]),
                Kind::I8 => i128::from(b[0] as i8),
                Kind::U16 => i128::from(u16::from_le_bytes([b[0], b[1]])),
                Kind::I16 => i128::from(i16::from_le_bytes([b[0], b[1]])),
                Kind::U32 => i128::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                Kind::I32 => i128::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                Kind::U64 | Kind::I64 => {
                    let mut a = [0u8; 8];
                    a.copy_from_slice(b);
                    if kind == Kind::U64 {
                        i128::from(u64::from_le_bytes(a))
                    } else {
                        i128::from(i64::from_le_bytes(a))
                    }
                }
                Kind::F32 | Kind::F64 | Kind::String | Kind::Array => return Ok(Value::Other),
            };
            return Ok(Value::Int(n));
        }
        match kind {
            Kind::String if keep => Ok(Value::Text(self.string(self.file_len)?)),
            Kind::String => self.skip_string().map(|()| Value::Other),
            _ => {
                if depth >= MAX_DEPTH {
                    return Err(GgufError::Malformed("arrays nested too deeply".into()));
                }
                let tag = self.u32()?;
                let inner = Kind::from_tag(tag).ok_or_else(|| {
                    GgufError::Malformed(format!("an array holds unknown type {tag}"))
                })?;
                let count = self.u64()?;
                match inner.width() {
                    // A fixed-size array is skipped in one step.
                    Some(w) => {
                        let total = count.checked_mul(w).ok_or_else(|| {
                            GgufError::Malformed(format!("an array claims {count} items"))
                        })?;
                        self.take(total)?;
                    }
                    None => {
                        // Every item takes at least 8 bytes (a length or
                        // a header), so a count the file cannot hold is
                        // refused before the loop.
                        if count.saturating_mul(8) > self.file_len {
                            return Err(GgufError::Malformed(format!(
                                "an array claims {count} items"
                            )));
                        }
                        for _ in 0..count {
                            self.value(inner, false, depth + 1)?;
                        }
                    }
                }
                Ok(Value::Other)
            }
        }
    }
}

/// Reads the header from `bytes`, the first bytes of a file `file_len`
/// bytes long.
pub fn read_header(bytes: &[u8], file_len: u64) -> Result<GgufInfo, GgufError> {
    let file_len = file_len.max(bytes.len() as u64);
    let mut r = Reader {
        bytes,
        at: 0,
        file_len,
    };
    if file_len < 4 || (bytes.len() >= 4 && &bytes[..4] != b"GGUF") {
        return Err(GgufError::NotGguf);
    }
    r.take(4)?;
    let version = r.u32()?;
    if !(2..=3).contains(&version) {
        return Err(GgufError::UnsupportedVersion(version));
    }
    let tensor_count = r.u64()?;
    let pairs = r.u64()?;
    if pairs > MAX_PAIRS {
        return Err(GgufError::Malformed(format!(
            "it claims {pairs} key-value pairs"
        )));
    }
    let mut info = GgufInfo {
        version,
        tensor_count,
        architecture: None,
        name: None,
        size_label: None,
        file_type: None,
        context_length: None,
        template_tools: false,
        has_chat_template: false,
        header_len: 0,
    };
    // Context lengths are keyed by architecture, which may come later.
    let mut context_lengths: Vec<(String, u64)> = Vec::new();
    for _ in 0..pairs {
        let key = r.string(MAX_KEY)?;
        let tag = r.u32()?;
        let kind = Kind::from_tag(tag)
            .ok_or_else(|| GgufError::Malformed(format!("key '{key}' has unknown type {tag}")))?;
        let keep = matches!(
            key.as_str(),
            "general.architecture"
                | "general.name"
                | "general.size_label"
                | "general.file_type"
                | "tokenizer.chat_template"
        ) || key.ends_with(".context_length");
        match (key.as_str(), r.value(kind, keep, 0)?) {
            ("general.architecture", Value::Text(s)) => info.architecture = Some(s),
            ("general.name", Value::Text(s)) => info.name = Some(s),
            ("general.size_label", Value::Text(s)) => info.size_label = Some(s),
            ("general.file_type", Value::Int(n)) => info.file_type = u32::try_from(n).ok(),
            ("tokenizer.chat_template", Value::Text(s)) => {
                info.has_chat_template = true;
                info.template_tools = template_knows_tools(&s);
            }
            (k, Value::Int(n)) if k.ends_with(".context_length") => {
                if let (Some(arch), Ok(n)) = (k.strip_suffix(".context_length"), u64::try_from(n)) {
                    context_lengths.push((arch.to_string(), n));
                }
            }
            _ => {}
        }
    }
    info.header_len = r.at as u64;
    info.context_length = info.architecture.as_ref().and_then(|arch| {
        context_lengths
            .iter()
            .find(|(a, _)| a == arch)
            .map(|(_, n)| *n)
    });
    Ok(info)
}

/// Whether a Jinja chat template renders the tools it is given and the
/// tool calls in the history: it reads a `tools` variable and writes out
/// `tool_calls` (or a tool-call marker). Templates without both make
/// llama.cpp ignore the tools, so Hearth offers none to such a model.
pub fn template_knows_tools(template: &str) -> bool {
    let reads_tools = contains_word(template, "tools");
    let writes_calls = template.contains("tool_calls")
        || template.contains("tool_call")
        || template.contains("<|python_tag|>");
    reads_tools && writes_calls
}

/// `needle` as a whole identifier (so `tools` does not match `toolset`).
fn contains_word(haystack: &str, needle: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    haystack.match_indices(needle).any(|(i, _)| {
        let before = haystack[..i].chars().next_back();
        let after = haystack[i + needle.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// llama.cpp's quantisation names by `general.file_type`.
pub fn quantisation_name(file_type: u32) -> Option<&'static str> {
    Some(match file_type {
        0 => "F32",
        1 => "F16",
        2 => "Q4_0",
        3 => "Q4_1",
        7 => "Q8_0",
        8 => "Q5_0",
        9 => "Q5_1",
        10 => "Q2_K",
        11 => "Q3_K_S",
        12 => "Q3_K_M",
        13 => "Q3_K_L",
        14 => "Q4_K_S",
        15 => "Q4_K_M",
        16 => "Q5_K_S",
        17 => "Q5_K_M",
        18 => "Q6_K",
        19 => "IQ2_XXS",
        20 => "IQ2_XS",
        21 => "Q2_K_S",
        22 => "IQ3_XS",
        23 => "IQ3_XXS",
        24 => "IQ1_S",
        25 => "IQ4_NL",
        26 => "IQ3_S",
        27 => "IQ3_M",
        28 => "IQ2_S",
        29 => "IQ2_M",
        30 => "IQ4_XS",
        31 => "IQ1_M",
        32 => "BF16",
        36 => "TQ1_0",
        37 => "TQ2_0",
        38 => "MXFP4_MOE",
        _ => return None,
    })
}

/// Reads a header from a source of byte ranges (a file on disk, a `File`
/// in the browser), asking for longer prefixes while the header goes on,
/// up to `max_prefix` bytes.
pub async fn read_header_from<F, Fut, E>(
    file_len: u64,
    first: u64,
    max_prefix: u64,
    mut read_prefix: F,
) -> Result<GgufInfo, HeaderReadError<E>>
where
    F: FnMut(u64) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<u8>, E>>,
{
    let mut want = first.min(file_len).max(4.min(file_len));
    loop {
        let bytes = read_prefix(want).await.map_err(HeaderReadError::Read)?;
        match read_header(&bytes, file_len) {
            Err(GgufError::Truncated { need, .. }) if need <= max_prefix && need > want => {
                want = need;
            }
            Err(GgufError::Truncated { .. }) => {
                return Err(HeaderReadError::Header(GgufError::Malformed(format!(
                    "its header is longer than {} MB",
                    max_prefix / (1024 * 1024)
                ))));
            }
            other => return other.map_err(HeaderReadError::Header),
        }
    }
}

/// A header that could not be read: the bytes, or what they said.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeaderReadError<E> {
    #[error("{0}")]
    Read(E),
    #[error("{0}")]
    Header(GgufError),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes GGUF headers for the tests.
    struct Gguf(Vec<u8>);

    impl Gguf {
        fn new(version: u32, tensors: u64, pairs: u64) -> Gguf {
            let mut b = b"GGUF".to_vec();
            b.extend(version.to_le_bytes());
            b.extend(tensors.to_le_bytes());
            b.extend(pairs.to_le_bytes());
            Gguf(b)
        }
        fn str_raw(&mut self, s: &str) -> &mut Self {
            self.0.extend((s.len() as u64).to_le_bytes());
            self.0.extend(s.as_bytes());
            self
        }
        fn key(&mut self, k: &str, tag: u32) -> &mut Self {
            self.str_raw(k);
            self.0.extend(tag.to_le_bytes());
            self
        }
        fn string(&mut self, k: &str, v: &str) -> &mut Self {
            self.key(k, 8).str_raw(v)
        }
        fn u32(&mut self, k: &str, v: u32) -> &mut Self {
            self.key(k, 4);
            self.0.extend(v.to_le_bytes());
            self
        }
        fn u64(&mut self, k: &str, v: u64) -> &mut Self {
            self.key(k, 10);
            self.0.extend(v.to_le_bytes());
            self
        }
        fn string_array(&mut self, k: &str, items: &[&str]) -> &mut Self {
            self.key(k, 9);
            self.0.extend(8u32.to_le_bytes());
            self.0.extend((items.len() as u64).to_le_bytes());
            for i in items {
                self.str_raw(i);
            }
            self
        }
        fn f32_array(&mut self, k: &str, n: u64) -> &mut Self {
            self.key(k, 9);
            self.0.extend(6u32.to_le_bytes());
            self.0.extend(n.to_le_bytes());
            for _ in 0..n {
                self.0.extend(1.5f32.to_le_bytes());
            }
            self
        }
        fn bytes(&self) -> Vec<u8> {
            self.0.clone()
        }
    }

    const TOOL_TEMPLATE: &str = "{% if tools %}{% for t in tools %}{{ t | tojson }}{% endfor %}{% endif %}{% for m in messages %}{% if m.tool_calls %}<tool_call>{{ m.tool_calls[0].function.name }}</tool_call>{% endif %}{% endfor %}";
    const PLAIN_TEMPLATE: &str = "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n{% endfor %}";

    fn model(template: &str) -> Vec<u8> {
        Gguf::new(3, 272, 8)
            .string("general.architecture", "llama")
            .string("general.name", "Tiny Test")
            .string("general.size_label", "135M")
            .u32("llama.context_length", 8192)
            .u32("general.file_type", 3)
            .string_array("tokenizer.ggml.tokens", &["<s>", "a", "b"])
            .f32_array("tokenizer.ggml.scores", 3)
            .string("tokenizer.chat_template", template)
            .bytes()
    }

    #[test]
    fn reads_what_the_model_list_shows() {
        let bytes = model(TOOL_TEMPLATE);
        let info = read_header(&bytes, bytes.len() as u64 + 1_000_000).unwrap();
        assert_eq!(
            info,
            GgufInfo {
                version: 3,
                tensor_count: 272,
                architecture: Some("llama".into()),
                name: Some("Tiny Test".into()),
                size_label: Some("135M".into()),
                file_type: Some(3),
                context_length: Some(8192),
                template_tools: true,
                has_chat_template: true,
                header_len: bytes.len() as u64,
            }
        );
        assert_eq!(info.quantisation(), Some("Q4_1"));
        let plain = model(PLAIN_TEMPLATE);
        let info = read_header(&plain, plain.len() as u64).unwrap();
        assert!(!info.template_tools);
        assert!(info.has_chat_template);
    }

    #[test]
    fn the_context_length_is_the_architectures_own() {
        let bytes = Gguf::new(3, 0, 3)
            .u64("bert.context_length", 512)
            .u64("qwen2.context_length", 32768)
            .string("general.architecture", "qwen2")
            .bytes();
        let info = read_header(&bytes, bytes.len() as u64).unwrap();
        assert_eq!(info.context_length, Some(32768));
        assert_eq!(info.quantisation(), None);
    }

    #[test]
    fn a_short_prefix_asks_for_more_and_then_reads() {
        let bytes = model(TOOL_TEMPLATE);
        let file_len = bytes.len() as u64 + 50_000;
        let mut have = 16usize;
        let mut rounds = 0;
        let info = loop {
            rounds += 1;
            match read_header(&bytes[..have.min(bytes.len())], file_len) {
                Err(GgufError::Truncated { have: h, need }) => {
                    assert_eq!(h, have as u64);
                    assert!(need > h, "need {need} <= have {h}");
                    have = need as usize;
                }
                other => break other.unwrap(),
            }
        };
        assert_eq!(info.name.as_deref(), Some("Tiny Test"));
        assert!(rounds <= 8, "{rounds} rounds");
    }

    #[test]
    fn reading_through_a_source_grows_the_prefix() {
        let bytes = model(PLAIN_TEMPLATE);
        let len = bytes.len() as u64;
        let mut asked = Vec::new();
        let info = futures::executor::block_on(read_header_from(len, 8, 1 << 20, |n| {
            asked.push(n);
            let b = bytes[..n as usize].to_vec();
            async move { Ok::<_, String>(b) }
        }))
        .unwrap();
        assert_eq!(info.architecture.as_deref(), Some("llama"));
        assert!(asked.len() > 1 && asked.windows(2).all(|w| w[0] < w[1]));
        let capped = futures::executor::block_on(read_header_from(len, 8, 16, |n| {
            let b = bytes[..n as usize].to_vec();
            async move { Ok::<_, String>(b) }
        }));
        assert!(matches!(
            capped,
            Err(HeaderReadError::Header(GgufError::Malformed(_)))
        ));
    }

    #[test]
    fn bad_files_get_clear_errors() {
        let cases: Vec<(Vec<u8>, GgufError)> = vec![
            (b"PK\x03\x04rest of a zip".to_vec(), GgufError::NotGguf),
            (b"GG".to_vec(), GgufError::NotGguf),
            (Gguf::new(1, 0, 0).bytes(), GgufError::UnsupportedVersion(1)),
            (
                Gguf::new(3, 0, u64::MAX).bytes(),
                GgufError::Malformed(format!("it claims {} key-value pairs", u64::MAX)),
            ),
        ];
        for (bytes, want) in cases {
            assert_eq!(read_header(&bytes, bytes.len() as u64), Err(want));
        }
    }

    #[test]
    fn lengths_in_the_file_are_never_trusted() {
        // A string claiming far more bytes than the file has.
        let mut b = Gguf::new(3, 0, 1).bytes();
        b.extend(5u64.to_le_bytes());
        b.extend(b"general.name".iter().take(5));
        b.extend(8u32.to_le_bytes());
        b.extend(u64::MAX.to_le_bytes());
        assert!(matches!(
            read_header(&b, b.len() as u64),
            Err(GgufError::Malformed(_))
        ));
        // An array of strings claiming 2^60 items.
        let mut b = Gguf::new(3, 0, 1).bytes();
        b.extend(3u64.to_le_bytes());
        b.extend(b"big");
        b.extend(9u32.to_le_bytes());
        b.extend(8u32.to_le_bytes());
        b.extend((1u64 << 60).to_le_bytes());
        assert!(matches!(
            read_header(&b, b.len() as u64),
            Err(GgufError::Malformed(_))
        ));
        // An array of u64 whose byte size overflows.
        let mut b = Gguf::new(3, 0, 1).bytes();
        b.extend(3u64.to_le_bytes());
        b.extend(b"big");
        b.extend(9u32.to_le_bytes());
        b.extend(10u32.to_le_bytes());
        b.extend(u64::MAX.to_le_bytes());
        assert!(matches!(
            read_header(&b, b.len() as u64),
            Err(GgufError::Malformed(_))
        ));
        // Arrays of arrays of arrays...
        let mut b = Gguf::new(3, 0, 1).bytes();
        b.extend(4u64.to_le_bytes());
        b.extend(b"deep");
        b.extend(9u32.to_le_bytes());
        for _ in 0..6 {
            b.extend(9u32.to_le_bytes());
            b.extend(1u64.to_le_bytes());
        }
        assert!(matches!(
            read_header(&b, b.len() as u64 + 1000),
            Err(GgufError::Malformed(_)) | Err(GgufError::Truncated { .. })
        ));
        // An unknown type tag.
        let mut b = Gguf::new(3, 0, 1).bytes();
        b.extend(1u64.to_le_bytes());
        b.extend(b"k");
        b.extend(99u32.to_le_bytes());
        assert_eq!(
            read_header(&b, b.len() as u64),
            Err(GgufError::Malformed("key 'k' has unknown type 99".into()))
        );
    }

    #[test]
    fn every_cut_of_a_header_is_an_error_or_a_request_for_more() {
        let bytes = model(TOOL_TEMPLATE);
        for cut in 0..bytes.len() {
            // The whole file is only `cut` bytes: damaged, never a panic.
            match read_header(&bytes[..cut], cut as u64) {
                Err(GgufError::NotGguf | GgufError::Malformed(_)) => {}
                other => panic!("cut {cut}: {other:?}"),
            }
            // The file goes on: asks for more.
            if cut >= 4 {
                match read_header(&bytes[..cut], bytes.len() as u64) {
                    Err(GgufError::Truncated { need, .. }) => assert!(need > cut as u64),
                    other => panic!("cut {cut}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn tool_templates_are_told_apart() {
        let cases = [
            (TOOL_TEMPLATE, true),
            (PLAIN_TEMPLATE, false),
            // Mentions tool calls but never reads the tools it is given.
            (
                "{% for m in messages %}{{ m.tool_calls }}{% endfor %}",
                false,
            ),
            // Reads a different variable.
            ("{% if toolset %}<tool_call>{% endif %}", false),
            (
                "{%- if tools is not none %}{{ tools | tojson }}{% endif %}<|python_tag|>",
                true,
            ),
        ];
        for (t, want) in cases {
            assert_eq!(template_knows_tools(t), want, "{t}");
        }
    }

    #[test]
    fn quantisation_names() {
        let cases = [
            (0, Some("F32")),
            (1, Some("F16")),
            (2, Some("Q4_0")),
            (3, Some("Q4_1")),
            (7, Some("Q8_0")),
            (15, Some("Q4_K_M")),
            (18, Some("Q6_K")),
            (30, Some("IQ4_XS")),
            (32, Some("BF16")),
            (4, None),
            (1024, None),
        ];
        for (n, want) in cases {
            assert_eq!(quantisation_name(n), want, "{n}");
        }
    }
}
