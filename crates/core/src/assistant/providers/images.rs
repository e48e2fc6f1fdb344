//! Images the person shows the model: what an attached picture is once the
//! tab has prepared it, the limits on what may be attached, and whether a
//! model can see pictures at all.
//!
//! The tab decodes every picture and draws it again at a bounded size
//! before it is stored or sent. Drawing re-encodes the pixels only, so
//! metadata the file carried (EXIF, with the place a photo was taken) never
//! reaches the conversation, a backup or a provider.

use serde::{Deserialize, Serialize};

use crate::skill::call::Content;

/// The picture types the composer takes. A GIF is shown by its first frame.
pub const ACCEPTED_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/webp", "image/gif"];

/// The largest file the composer decodes: a 12-megapixel photo is well
/// under it.
pub const MAX_INPUT_BYTES: u64 = 25 * 1024 * 1024;

/// Pictures per message. The providers take more, but each costs the
/// model's context far more than text does.
pub const MAX_IMAGES: usize = 4;

/// The longest edge kept, in pixels: the size above which Anthropic scales
/// a picture down itself and OpenAI's detailed mode gains nothing, so a
/// larger one would only cost bytes.
pub const MAX_EDGE: u32 = 1568;

/// An attached picture as it is stored with its message and sent: its
/// pixels re-encoded by the tab, as base64.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImagePart {
    /// `image/png` or `image/jpeg`, as the tab encoded it.
    pub media_type: String,
    /// The encoded picture, base64.
    pub data: String,
    /// What the picture shows, for people who cannot see it: the person's
    /// words, or the file's name.
    pub alt: String,
    pub width: u32,
    pub height: u32,
}

/// The picture's bytes stay out of logs and test failures.
impl std::fmt::Debug for ImagePart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImagePart")
            .field("media_type", &self.media_type)
            .field(
                "data",
                &format_args!("<{} base64 characters>", self.data.len()),
            )
            .field("alt", &self.alt)
            .field("width", &self.width)
            .field("height", &self.height)
            .finish()
    }
}

impl ImagePart {
    /// The picture as a `data:` URL, for an `<img>` and for OpenAI's
    /// `image_url` part.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }

    /// Its size once decoded from base64.
    pub fn byte_len(&self) -> usize {
        let padding = self.data.bytes().rev().take_while(|b| *b == b'=').count();
        (self.data.len() / 4 * 3).saturating_sub(padding)
    }

    /// A file name to download it as: the alt text when it reads like a
    /// file name, with the extension of what it now is.
    pub fn file_name(&self) -> String {
        let ext = match self.media_type.as_str() {
            "image/jpeg" => "jpg",
            "image/webp" => "webp",
            "image/gif" => "gif",
            _ => "png",
        };
        // The last part of a path, without its extension.
        let base = self.alt.rsplit(['/', '\\']).next().unwrap_or_default();
        let stem = match base.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() && ext.len() <= 5 => stem,
            _ => base,
        };
        let stem: String = stem
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let stem = stem.trim_matches('-');
        let stem = if stem.is_empty() { "image" } else { stem };
        format!("{stem}.{ext}")
    }

    /// What the model is told in its place when it cannot see pictures.
    pub fn stand_in(&self) -> String {
        format!("[a picture the person attached: {}]", self.alt)
    }

    /// Roughly what the picture costs a model's context: Anthropic's
    /// published rule (width × height / 750), which OpenAI's tiling rule
    /// comes close to at these sizes.
    pub fn estimated_tokens(&self) -> usize {
        if self.width == 0 || self.height == 0 {
            // A skill's picture comes without its size: count it as a
            // large one, so the context is never underestimated.
            return UNSIZED_TOKENS;
        }
        ((u64::from(self.width) * u64::from(self.height)) / 750).max(85) as usize
    }

    /// The pictures in a skill's result, for a model that sees them: an
    /// MCP tool's `image` content and pictures code saved, at most
    /// [`MAX_IMAGES`], each too large for a provider left out. `skill`
    /// names where they came from.
    pub fn from_result(skill: &str, content: &[Content]) -> Vec<ImagePart> {
        let found: Vec<(String, &str, &str)> = content
            .iter()
            .filter_map(|c| match c {
                Content::Image { mime_type, data } => Some((
                    format!("a picture from {skill}"),
                    mime_type.as_str(),
                    data.as_str(),
                )),
                Content::Artifact {
                    name,
                    mime_type,
                    data,
                } => Some((name.clone(), mime_type.as_str(), data.as_str())),
                _ => None,
            })
            .filter(|(_, mime, data)| {
                ACCEPTED_TYPES.contains(mime) && data.len() <= MAX_SENT_BASE64
            })
            .take(MAX_IMAGES)
            .collect();
        found
            .into_iter()
            .map(|(alt, mime, data)| ImagePart {
                media_type: mime.to_string(),
                data: data.to_string(),
                alt,
                width: 0,
                height: 0,
            })
            .collect()
    }
}

/// A message's text with a line in words for each picture, for a model
/// that cannot be shown them.
pub fn described(text: &str, images: &[ImagePart]) -> String {
    let mut out = text.to_string();
    for image in images {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&image.stand_in());
    }
    out
}

/// What a picture without a known size is counted as in the context.
const UNSIZED_TOKENS: usize = 1_600;

/// The largest picture sent back to a model, as base64: Anthropic's limit
/// is 5 MB a picture.
const MAX_SENT_BASE64: usize = 5 * 1024 * 1024 / 3 * 4;

/// Why a file cannot be attached, in words for the person; `None` when it
/// can. `mime` is what the browser says the file is.
pub fn refusal(name: &str, mime: &str, bytes: u64, already: usize) -> Option<String> {
    if already >= MAX_IMAGES {
        return Some(format!(
            "A message can carry {MAX_IMAGES} pictures; remove one to add {name}."
        ));
    }
    if !ACCEPTED_TYPES.contains(&mime) {
        let what = if mime.is_empty() {
            "of a type the browser did not name"
        } else {
            mime
        };
        return Some(format!(
            "{name} is not a picture Hearth can attach ({what}). PNG, JPEG, WebP and GIF work."
        ));
    }
    if bytes > MAX_INPUT_BYTES {
        return Some(format!(
            "{name} is {} MB; pictures up to {} MB can be attached.",
            bytes.div_ceil(1024 * 1024),
            MAX_INPUT_BYTES / (1024 * 1024)
        ));
    }
    None
}

/// The size a `width` × `height` picture is drawn at: the same shape, its
/// longest edge at most [`MAX_EDGE`], never enlarged.
pub fn fitted(width: u32, height: u32) -> (u32, u32) {
    let longest = width.max(height);
    if longest <= MAX_EDGE || longest == 0 {
        return (width.max(1), height.max(1));
    }
    let scale = f64::from(MAX_EDGE) / f64::from(longest);
    let w = (f64::from(width) * scale).round().max(1.0) as u32;
    let h = (f64::from(height) * scale).round().max(1.0) as u32;
    (w.min(MAX_EDGE), h.min(MAX_EDGE))
}

/// Whether a model can be shown pictures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Vision {
    /// It takes image parts.
    Sees,
    /// It cannot, for the reason given.
    Blind(String),
    /// Hearth cannot tell; the reason says how the person can.
    Unknown(String),
}

impl Vision {
    pub fn sees(&self) -> bool {
        matches!(self, Vision::Sees)
    }

    /// Why a message with pictures is not sent; `None` when it can be.
    pub fn refusal(&self) -> Option<&str> {
        match self {
            Vision::Sees => None,
            Vision::Blind(why) | Vision::Unknown(why) => Some(why),
        }
    }
}

/// Parts of model names that only models which see pictures carry, as
/// their publishers name them (OpenAI's, Google's and Anthropic's through
/// OpenAI-compatible routers, and the open vision models Ollama, LM Studio
/// and llama.cpp serve).
const SEEING_NAMES: [&str; 24] = [
    "gpt-4o",
    "gpt-4.1",
    "gpt-4-turbo",
    "gpt-4-vision",
    "gpt-5",
    "chatgpt-4o",
    "claude",
    "gemini",
    "gemma3",
    "gemma-3",
    "llava",
    "bakllava",
    "vision",
    "-vl",
    "vl-",
    "qwen2.5vl",
    "qwen3-vl",
    "pixtral",
    "minicpm-v",
    "moondream",
    "llama4",
    "llama-4",
    "mistral-small3.1",
    "mistral-small-3.1",
];

/// Whether a model named `model` sees pictures, judged by its name, when
/// the person has not said.
pub fn sees_by_name(model: &str) -> bool {
    let name = model.to_ascii_lowercase();
    // A router's name carries the publisher first: "openai/gpt-4o".
    let name = name.rsplit('/').next().unwrap_or(&name);
    // OpenAI's reasoning models are short names that other words contain,
    // so they match whole, or with a release date after them; o3-mini,
    // which reads text only, is not among them.
    let reasoning = ["o1", "o3", "o3-pro", "o4-mini"]
        .iter()
        .any(|o| name == *o || name.starts_with(&format!("{o}-20")));
    reasoning || SEEING_NAMES.iter().any(|part| name.contains(part))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(alt: &str, media_type: &str) -> ImagePart {
        ImagePart {
            media_type: media_type.into(),
            data: "iVBORw0KGgo=".into(),
            alt: alt.into(),
            width: 800,
            height: 600,
        }
    }

    #[test]
    fn fitting_keeps_the_shape_and_never_enlarges() {
        assert_eq!(fitted(4000, 3000), (1568, 1176));
        assert_eq!(fitted(3000, 4000), (1176, 1568));
        assert_eq!(fitted(800, 600), (800, 600));
        assert_eq!(fitted(1568, 10), (1568, 10));
        assert_eq!(fitted(20000, 1), (1568, 1));
        assert_eq!(fitted(0, 0), (1, 1));
    }

    #[test]
    fn refusals_name_the_file_and_the_limit() {
        assert_eq!(refusal("a.png", "image/png", 1000, 0), None);
        assert_eq!(refusal("a.gif", "image/gif", 1000, 3), None);
        let many = refusal("e.png", "image/png", 1000, 4).unwrap();
        assert!(
            many.contains("4 pictures") && many.contains("e.png"),
            "{many}"
        );
        let kind = refusal("notes.pdf", "application/pdf", 1000, 0).unwrap();
        assert!(
            kind.contains("notes.pdf") && kind.contains("application/pdf"),
            "{kind}"
        );
        let unnamed = refusal("x", "", 10, 0).unwrap();
        assert!(unnamed.contains("did not name"), "{unnamed}");
        let big = refusal("huge.jpg", "image/jpeg", 30 * 1024 * 1024, 0).unwrap();
        assert!(big.contains("30 MB") && big.contains("25 MB"), "{big}");
    }

    #[test]
    fn a_part_reads_as_a_data_url_and_downloads_under_its_name() {
        let p = part("Screenshot 2026-11-29 at 10.04.png", "image/png");
        assert_eq!(p.data_url(), "data:image/png;base64,iVBORw0KGgo=");
        assert_eq!(p.file_name(), "Screenshot-2026-11-29-at-10-04.png");
        assert_eq!(
            part("holiday.HEIC", "image/jpeg").file_name(),
            "holiday.jpg"
        );
        assert_eq!(part("", "image/jpeg").file_name(), "image.jpg");
        assert_eq!(
            part("C:\\photos\\..\\x.png", "image/png").file_name(),
            "x.png"
        );
        assert_eq!(
            part("../../etc/passwd", "image/png").file_name(),
            "passwd.png"
        );
        assert_eq!(p.byte_len(), 8);
        assert!(
            !format!("{p:?}").contains("iVBOR"),
            "the bytes stay out of Debug"
        );
    }

    #[test]
    fn a_blind_model_reads_each_picture_as_a_line() {
        let pics = [
            part("cat.png", "image/png"),
            part("receipt.jpg", "image/jpeg"),
        ];
        assert_eq!(
            described("What is this?", &pics),
            "What is this?\n[a picture the person attached: cat.png]\n[a picture the person attached: receipt.jpg]"
        );
        assert_eq!(
            described("", &pics[..1]),
            "[a picture the person attached: cat.png]"
        );
        assert_eq!(described("plain", &[]), "plain");
    }

    #[test]
    fn a_results_pictures_are_its_images_and_saved_pictures() {
        let content = vec![
            Content::Text {
                text: "done".into(),
            },
            Content::Image {
                mime_type: "image/png".into(),
                data: "AAAA".into(),
            },
            Content::Artifact {
                name: "chart.png".into(),
                mime_type: "image/png".into(),
                data: "BBBB".into(),
            },
            Content::Artifact {
                name: "data.csv".into(),
                mime_type: "text/csv".into(),
                data: "CCCC".into(),
            },
            Content::Image {
                mime_type: "image/svg+xml".into(),
                data: "DDDD".into(),
            },
        ];
        let found = ImagePart::from_result("plot", &content);
        let alts: Vec<&str> = found.iter().map(|p| p.alt.as_str()).collect();
        assert_eq!(alts, ["a picture from plot", "chart.png"]);
        assert_eq!(found[1].data, "BBBB");
        // At most four, and none larger than a provider takes.
        let many = vec![
            Content::Image {
                mime_type: "image/png".into(),
                data: "AAAA".into()
            };
            9
        ];
        assert_eq!(ImagePart::from_result("x", &many).len(), MAX_IMAGES);
        let huge = vec![Content::Image {
            mime_type: "image/png".into(),
            data: "A".repeat(MAX_SENT_BASE64 + 4),
        }];
        assert!(ImagePart::from_result("x", &huge).is_empty());
        // Without a size, a picture is counted as a large one.
        assert_eq!(found[0].estimated_tokens(), UNSIZED_TOKENS);
    }

    #[test]
    fn a_picture_costs_tokens_by_its_area() {
        assert_eq!(part("a", "image/png").estimated_tokens(), 640);
        let tiny = ImagePart {
            width: 10,
            height: 10,
            ..part("a", "image/png")
        };
        assert_eq!(tiny.estimated_tokens(), 85);
    }

    #[test]
    fn seeing_models_are_known_by_name() {
        for model in [
            "gpt-4o",
            "gpt-4o-mini",
            "openai/gpt-4.1",
            "gpt-5",
            "o3",
            "o4-mini",
            "o4-mini-2025-04-16",
            "claude-sonnet-4-5",
            "anthropic/claude-3.5-sonnet",
            "google/gemini-2.5-flash",
            "gemma3:4b",
            "llava:7b",
            "llama3.2-vision:11b",
            "qwen2.5vl:7b",
            "Qwen/Qwen2.5-VL-7B-Instruct",
            "minicpm-v",
            "moondream",
            "pixtral-12b",
        ] {
            assert!(sees_by_name(model), "{model}");
        }
        for model in [
            "llama3.1:8b",
            "qwen2.5:7b",
            "gpt-3.5-turbo",
            "mistral",
            "smollm2-135m",
            "phi3",
            "deepseek-r1:7b",
            "o3-mini",
            "o3-like-model-from-someone",
            "solo3",
        ] {
            assert!(!sees_by_name(model), "{model}");
        }
    }
}
