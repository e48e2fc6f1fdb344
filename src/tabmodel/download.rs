//! Downloading a model from a URL into the models folder: streamed to the
//! file as it arrives, with progress; the header is read from the first
//! bytes (a page or an error document is refused before it fills the
//! disk); the space the browser allows is checked once the size is known,
//! before a byte is written; and a download that stops early keeps
//! nothing.

use hearth_core::assistant::gguf::{self, GgufError, GgufInfo};
use hearth_core::util::display;
use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, ReadableStreamDefaultReader, RequestInit, Response};

use super::store::{self, StoreError, Writer};
use crate::files::{js_error_name, js_message};

/// Headers longer than this are refused while downloading too.
const MAX_HEADER: usize = 64 * 1024 * 1024;

/// Why a download failed; nothing was kept in any case.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DownloadError {
    #[error("Enter a link that starts with https:// or http://.")]
    BadUrl,
    #[error(
        "Hearth could not download from {host}. Either the host does not let other sites download its files (CORS), or it cannot be reached. Open the link yourself to download the file, then add it with “Add a model file”."
    )]
    Unreachable { host: String, detail: String },
    #[error("{host} answered {status} instead of the file. Check the link.")]
    Status { host: String, status: u16 },
    #[error("The download stopped after {got} of {want}; nothing was kept. Try again.")]
    Cut { got: String, want: String },
    #[error("The download was cancelled; nothing was kept.")]
    Cancelled,
    #[error("{0}")]
    Store(#[from] StoreError),
}

fn host(url: &str) -> String {
    url.split_once("://")
        .map(|(_, r)| r)
        .unwrap_or(url)
        .split(['/', '?', '#'])
        .next()
        .unwrap_or("")
        .to_string()
}

/// Stops reading a body. On a stream that already failed the promise
/// rejects, which is expected, so it is awaited rather than left unhandled.
fn cancel(reader: &ReadableStreamDefaultReader) {
    let done = JsFuture::from(reader.cancel());
    wasm_bindgen_futures::spawn_local(async move {
        let _ = done.await;
    });
}

/// A downloaded file's size and header.
pub struct Downloaded {
    pub size: u64,
    pub info: GgufInfo,
}

/// Downloads `url` into `writer`. `progress(received, total)` is told as
/// bytes arrive (`total` is 0 when the host does not say).
pub async fn download(
    url: &str,
    writer: &Writer,
    signal: &AbortSignal,
    progress: impl Fn(f64, f64),
) -> Result<Downloaded, DownloadError> {
    let lower = url.trim().to_ascii_lowercase();
    if !(lower.starts_with("https://") || lower.starts_with("http://")) {
        return Err(DownloadError::BadUrl);
    }
    let host = host(url.trim());
    let window = web_sys::window().ok_or(DownloadError::BadUrl)?;
    let init = RequestInit::new();
    init.set_mode(web_sys::RequestMode::Cors);
    init.set_credentials(web_sys::RequestCredentials::Omit);
    init.set_referrer_policy(web_sys::ReferrerPolicy::NoReferrer);
    init.set_signal(Some(signal));
    let response: Response =
        match JsFuture::from(window.fetch_with_str_and_init(url.trim(), &init)).await {
            Ok(r) => r.unchecked_into(),
            Err(_) if signal.aborted() => return Err(DownloadError::Cancelled),
            Err(e) => {
                return Err(DownloadError::Unreachable {
                    host,
                    detail: js_message(&e),
                });
            }
        };
    if !response.ok() {
        return Err(DownloadError::Status {
            host,
            status: response.status(),
        });
    }
    let total = response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(total) = total {
        store::check_space(total).await?;
    }
    let Some(body) = response.body() else {
        return Err(DownloadError::Cut {
            got: "0 B".into(),
            want: total.map_or("the whole file".into(), |t| display::bytes(t as f64)),
        });
    };
    let reader: ReadableStreamDefaultReader = body
        .get_reader()
        .dyn_into()
        .map_err(|_| DownloadError::Store(StoreError::Read("cannot read the download".into())))?;
    let mut received: u64 = 0;
    let mut prefix: Vec<u8> = Vec::new();
    let mut info: Option<GgufInfo> = None;
    let shown_total = total.unwrap_or(0) as f64;
    let cut = |got: u64| DownloadError::Cut {
        got: display::bytes(got as f64),
        want: total.map_or("the whole file".into(), |t| display::bytes(t as f64)),
    };
    loop {
        let step = match JsFuture::from(reader.read()).await {
            Ok(step) => step,
            Err(e) => {
                cancel(&reader);
                if signal.aborted() || js_error_name(&e) == "AbortError" {
                    return Err(DownloadError::Cancelled);
                }
                return Err(cut(received));
            }
        };
        let done = Reflect::get(&step, &"done".into())
            .ok()
            .and_then(|v| v.as_bool())
            .unwrap_or(true);
        if done {
            break;
        }
        let chunk: Uint8Array = Reflect::get(&step, &"value".into())
            .map_err(|_| cut(received))?
            .unchecked_into();
        if info.is_none() {
            prefix.extend(chunk.to_vec());
            // The whole file's length is what the host said, or at least
            // what has arrived so far and a little more.
            let file_len = total.unwrap_or(u64::MAX);
            match gguf::read_header(&prefix, file_len) {
                Ok(i) => {
                    info = Some(i);
                    prefix = Vec::new();
                }
                Err(GgufError::Truncated { .. }) if prefix.len() < MAX_HEADER => {}
                Err(GgufError::Truncated { .. }) => {
                    cancel(&reader);
                    return Err(
                        StoreError::NotAModel(store::not_a_model(&GgufError::Malformed(
                            "its header is longer than 64 MB".into(),
                        )))
                        .into(),
                    );
                }
                Err(e) => {
                    cancel(&reader);
                    return Err(StoreError::NotAModel(store::not_a_model(&e)).into());
                }
            }
        }
        writer.write_bytes(&chunk).await.inspect_err(|_| {
            cancel(&reader);
        })?;
        received += chunk.length() as u64;
        if total.is_some_and(|t| received > t) {
            cancel(&reader);
            return Err(cut(received));
        }
        progress(received as f64, shown_total);
    }
    if total.is_some_and(|t| received != t) {
        return Err(cut(received));
    }
    let info = match info {
        Some(i) => i,
        // The file ended inside its header: read it once more, whole.
        None => gguf::read_header(&prefix, received)
            .map_err(|e| StoreError::NotAModel(store::not_a_model(&e)))?,
    };
    Ok(Downloaded {
        size: received,
        info,
    })
}
