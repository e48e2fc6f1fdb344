//! Fetching the Python runtime for the sandbox, with progress.
//!
//! The sandbox has no network, so the app fetches Pyodide's files from its
//! own origin (`/pyodide/`, copied there from npm at build time) and hands
//! the bytes over. Fetching from the app keeps them within reach of the
//! app's HTTP cache, and later of a service worker, which cannot see the
//! sandbox's own requests.

use std::cell::Cell;
use std::rc::Rc;

use futures::future::try_join_all;
use hearth_core::builtin::code::PYTHON_RUNTIME_FILES;
use js_sys::{ArrayBuffer, Reflect, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStreamDefaultReader, Response};

use super::SandboxError;

/// Where the app serves the runtime.
pub const RUNTIME_PATH: &str = "/pyodide/";

fn failed(what: &str, e: wasm_bindgen::JsValue) -> SandboxError {
    SandboxError::Python(format!("{what}: {e:?}"))
}

/// Fetches every runtime file; `progress(loaded, total)` is called as bytes
/// arrive (total is known once every response has started).
pub async fn fetch_runtime(
    progress: impl Fn(f64, f64) + 'static,
) -> Result<Vec<(String, ArrayBuffer)>, SandboxError> {
    let loaded = Rc::new(Cell::new(0.0));
    let total = Rc::new(Cell::new(0.0));
    let started = Rc::new(Cell::new(0usize));
    let progress: Rc<dyn Fn(f64, f64)> = Rc::new(progress);
    let fetches = PYTHON_RUNTIME_FILES.iter().map(|name| {
        let (loaded, total, started, progress) =
            (loaded.clone(), total.clone(), started.clone(), progress.clone());
        async move {
            let window = web_sys::window().ok_or_else(|| SandboxError::Python("no window".into()))?;
            let url = format!("{RUNTIME_PATH}{name}");
            let response: Response = JsFuture::from(window.fetch_with_str(&url))
                .await
                .map_err(|e| failed(&format!("cannot fetch {url}"), e))?
                .unchecked_into();
            if !response.ok() {
                return Err(SandboxError::Python(format!(
                    "{url} answered {}: the Python runtime is not in this build (build with `cargo xtask build`)",
                    response.status()
                )));
            }
            let length = response
                .headers()
                .get("content-length")
                .ok()
                .flatten()
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0);
            total.set(total.get() + length);
            started.set(started.get() + 1);
            let body = response
                .body()
                .ok_or_else(|| SandboxError::Python(format!("{url} has no body")))?;
            let reader: ReadableStreamDefaultReader = body
                .get_reader()
                .unchecked_into();
            let mut chunks: Vec<Uint8Array> = Vec::new();
            let mut size = 0u32;
            loop {
                let step = JsFuture::from(reader.read())
                    .await
                    .map_err(|e| failed(&format!("reading {url}"), e))?;
                let done = Reflect::get(&step, &"done".into())
                    .ok()
                    .and_then(|v| v.as_bool())
                    .unwrap_or(true);
                if done {
                    break;
                }
                let chunk: Uint8Array = Reflect::get(&step, &"value".into())
                    .map_err(|e| failed("reading a chunk", e))?
                    .unchecked_into();
                size += chunk.length();
                loaded.set(loaded.get() + chunk.length() as f64);
                if started.get() == PYTHON_RUNTIME_FILES.len() {
                    progress(loaded.get(), total.get());
                }
                chunks.push(chunk);
            }
            let whole = Uint8Array::new_with_length(size);
            let mut at = 0u32;
            for chunk in chunks {
                whole.set(&chunk, at);
                at += chunk.length();
            }
            Ok::<_, SandboxError>((name.to_string(), whole.buffer()))
        }
    });
    let files = try_join_all(fetches).await?;
    progress(loaded.get(), total.get().max(loaded.get()));
    Ok(files)
}
