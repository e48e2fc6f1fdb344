//! Model files in the origin private file system: `models/<id>.gguf`, and
//! beside it `models/<id>.json` (core's `StoredModel`), written only once
//! the whole file is in place. The list is read from the JSON files, so a
//! file still being written, or left half-written by a closed tab, is
//! never listed as usable; such leftovers are deleted when the list is
//! first read.
//!
//! Adding a model reads its GGUF header first (core's `gguf`), so a file
//! that is not a model is refused before anything is stored, and checks
//! the space the browser allows before writing a byte.

use hearth_core::assistant::gguf::{self, GgufError, HeaderReadError};
use hearth_core::assistant::providers::in_tab::{NoSpace, StoredModel, space_check};
use js_sys::Uint8Array;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    Blob, File, FileSystemDirectoryHandle, FileSystemFileHandle, FileSystemGetDirectoryOptions,
    FileSystemGetFileOptions, FileSystemWritableFileStream,
};

use crate::files::fs::{blob_bytes, entries, file_of};
use crate::files::{js_error_name, js_message};

/// The folder of the private file system that holds the models.
pub const MODELS_DIR: &str = "models";
/// Headers longer than this are refused (real ones are a few MB: the
/// tokenizer's vocabulary is part of them).
const MAX_HEADER: u64 = 64 * 1024 * 1024;
/// How much of a file is copied per write, so progress can be shown.
const COPY_SLICE: f64 = 8.0 * 1024.0 * 1024.0;

/// Why a model could not be added, listed or deleted.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StoreError {
    #[error("{0}")]
    NotAModel(String),
    #[error("{0}")]
    NoSpace(#[from] NoSpace),
    #[error("The browser ran out of storage while saving the model; nothing was kept.")]
    QuotaExceeded,
    #[error("This browser cannot store files for Hearth here (no private file system): {0}")]
    NoStorage(String),
    #[error("Could not save the model: {0}. Nothing was kept.")]
    Write(String),
    #[error("Could not read the model list: {0}")]
    Read(String),
}

fn storage_error(what: &str, e: &JsValue) -> StoreError {
    match js_error_name(e).as_str() {
        "QuotaExceededError" => StoreError::QuotaExceeded,
        _ => StoreError::Write(format!("{what}: {}", js_message(e))),
    }
}

async fn dir(create: bool) -> Result<Option<FileSystemDirectoryHandle>, StoreError> {
    let storage = web_sys::window()
        .ok_or_else(|| StoreError::NoStorage("no window".into()))?
        .navigator()
        .storage();
    let root: FileSystemDirectoryHandle = JsFuture::from(storage.get_directory())
        .await
        .map_err(|e| StoreError::NoStorage(js_message(&e)))?
        .unchecked_into();
    let options = FileSystemGetDirectoryOptions::new();
    options.set_create(create);
    match JsFuture::from(root.get_directory_handle_with_options(MODELS_DIR, &options)).await {
        Ok(d) => Ok(Some(d.unchecked_into())),
        Err(e) if js_error_name(&e) == "NotFoundError" => Ok(None),
        Err(e) => Err(StoreError::NoStorage(js_message(&e))),
    }
}

async fn file_handle(
    dir: &FileSystemDirectoryHandle,
    name: &str,
    create: bool,
) -> Result<Option<FileSystemFileHandle>, JsValue> {
    let options = FileSystemGetFileOptions::new();
    options.set_create(create);
    match JsFuture::from(dir.get_file_handle_with_options(name, &options)).await {
        Ok(h) => Ok(Some(h.unchecked_into())),
        Err(e) if js_error_name(&e) == "NotFoundError" => Ok(None),
        Err(e) => Err(e),
    }
}

async fn remove(dir: &FileSystemDirectoryHandle, name: &str) -> Result<(), JsValue> {
    match JsFuture::from(dir.remove_entry(name)).await {
        Ok(_) => Ok(()),
        Err(e) if js_error_name(&e) == "NotFoundError" => Ok(()),
        Err(e) => Err(e),
    }
}

/// The stored models, oldest first. With `clean_up`, files without a
/// complete record beside them (a download or copy cut short) are
/// deleted, except those named in `writing`.
pub async fn list(clean_up: bool, writing: &[String]) -> Result<Vec<StoredModel>, StoreError> {
    let Some(dir) = dir(false).await? else {
        return Ok(Vec::new());
    };
    let names: Vec<String> = entries(&dir)
        .await
        .map_err(|e| StoreError::Read(js_message(&e)))?
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    let mut models = Vec::new();
    for name in &names {
        let Some(id) = name.strip_suffix(".json") else {
            continue;
        };
        let record = async {
            let handle = file_handle(&dir, name, false).await.ok()??;
            let text = JsFuture::from(file_of(&handle).await.ok()?.text())
                .await
                .ok()?
                .as_string()?;
            let model: StoredModel = serde_json::from_str(&text).ok()?;
            let gguf = file_handle(&dir, &format!("{id}.gguf"), false)
                .await
                .ok()??;
            let size = file_of(&gguf).await.ok()?.size() as u64;
            (model.id == id && size == model.size).then_some(model)
        }
        .await;
        match record {
            Some(model) => models.push(model),
            // A record without its whole file is no model.
            None if clean_up && !writing.iter().any(|w| w == id) => {
                let _ = remove(&dir, name).await;
            }
            None => {}
        }
    }
    if clean_up {
        for name in &names {
            let Some(id) = name.strip_suffix(".gguf") else {
                continue;
            };
            let listed = models.iter().any(|m| m.id == id);
            if !listed && !writing.iter().any(|w| w == id) {
                let _ = remove(&dir, name).await;
            }
        }
    }
    models.sort_by(|a, b| a.added_at_ms.total_cmp(&b.added_at_ms));
    Ok(models)
}

/// The header of a file the person picked, or why it is no model.
pub async fn read_header(file: &Blob) -> Result<gguf::GgufInfo, StoreError> {
    let len = file.size() as u64;
    let info = gguf::read_header_from(len, 4 * 1024 * 1024, MAX_HEADER, |n| {
        let file = file.clone();
        async move {
            let slice = file
                .slice_with_f64_and_f64(0.0, n as f64)
                .map_err(|e| js_message(&e))?;
            blob_bytes(&slice).await.map_err(|e| js_message(&e))
        }
    })
    .await;
    info.map_err(|e| match e {
        HeaderReadError::Read(e) => StoreError::Read(e),
        HeaderReadError::Header(e) => StoreError::NotAModel(not_a_model(&e)),
    })
}

pub fn not_a_model(e: &GgufError) -> String {
    format!("This file is not a model Hearth can run: {e}.")
}

/// The space the browser still allows, checked for `need` bytes.
pub async fn check_space(need: u64) -> Result<(), StoreError> {
    let estimate = crate::platform::storage_estimate()
        .await
        .map_err(StoreError::Read)?;
    space_check(need, estimate.usage, estimate.quota)?;
    Ok(())
}

/// A model file being written: `<id>.gguf` through a writable stream that
/// the browser commits only on `close`.
pub struct Writer {
    dir: FileSystemDirectoryHandle,
    id: String,
    stream: FileSystemWritableFileStream,
}

impl Writer {
    pub async fn create(id: &str) -> Result<Writer, StoreError> {
        let dir = dir(true)
            .await?
            .ok_or_else(|| StoreError::NoStorage("the models folder".into()))?;
        let handle = file_handle(&dir, &format!("{id}.gguf"), true)
            .await
            .map_err(|e| storage_error("creating the file", &e))?
            .ok_or_else(|| StoreError::Write("the file vanished".into()))?;
        let stream: FileSystemWritableFileStream = JsFuture::from(handle.create_writable())
            .await
            .map_err(|e| storage_error("opening the file", &e))?
            .unchecked_into();
        Ok(Writer {
            dir,
            id: id.to_string(),
            stream,
        })
    }

    pub async fn write_blob(&self, blob: &Blob) -> Result<(), StoreError> {
        let p = self
            .stream
            .write_with_blob(blob)
            .map_err(|e| storage_error("writing", &e))?;
        JsFuture::from(p)
            .await
            .map(|_| ())
            .map_err(|e| storage_error("writing", &e))
    }

    pub async fn write_bytes(&self, bytes: &Uint8Array) -> Result<(), StoreError> {
        let p = self
            .stream
            .write_with_js_u8_array(bytes)
            .map_err(|e| storage_error("writing", &e))?;
        JsFuture::from(p)
            .await
            .map(|_| ())
            .map_err(|e| storage_error("writing", &e))
    }

    /// Commits the file, then its record: from here on it is listed.
    pub async fn finish(self, model: &StoredModel) -> Result<(), StoreError> {
        if let Err(e) = JsFuture::from(self.stream.close()).await {
            let e = storage_error("saving", &e);
            let _ = remove(&self.dir, &format!("{}.gguf", self.id)).await;
            return Err(e);
        }
        let text = serde_json::to_string(model).map_err(|e| StoreError::Write(e.to_string()))?;
        let written = async {
            let handle = file_handle(&self.dir, &format!("{}.json", self.id), true)
                .await?
                .ok_or_else(|| JsValue::from_str("the record vanished"))?;
            let stream: FileSystemWritableFileStream = JsFuture::from(handle.create_writable())
                .await?
                .unchecked_into();
            JsFuture::from(stream.write_with_str(&text)?).await?;
            JsFuture::from(stream.close()).await?;
            Ok::<(), JsValue>(())
        }
        .await;
        if let Err(e) = written {
            let _ = remove(&self.dir, &format!("{}.json", self.id)).await;
            let _ = remove(&self.dir, &format!("{}.gguf", self.id)).await;
            return Err(storage_error("saving its record", &e));
        }
        Ok(())
    }

    /// Throws away what was written; nothing is kept.
    pub async fn discard(self) {
        let _ = JsFuture::from(self.stream.abort()).await;
        let _ = remove(&self.dir, &format!("{}.gguf", self.id)).await;
    }
}

/// Copies a picked or dropped file into `writer`; `progress(copied,
/// total)` is told as it goes. On failure the caller discards the writer.
pub async fn copy_file(
    writer: &Writer,
    file: &File,
    progress: impl Fn(f64, f64),
) -> Result<(), StoreError> {
    let size = file.size();
    let mut at = 0.0;
    while at < size {
        let end = (at + COPY_SLICE).min(size);
        let slice = file
            .slice_with_f64_and_f64(at, end)
            .map_err(|e| StoreError::Read(js_message(&e)))?;
        writer.write_blob(&slice).await?;
        at = end;
        progress(at, size);
    }
    Ok(())
}

/// Deletes a model's file and record.
pub async fn delete(id: &str) -> Result<(), StoreError> {
    let Some(dir) = dir(false).await? else {
        return Ok(());
    };
    // The record first: without it the file is no longer listed even if
    // deleting the file itself fails (it is then cleaned up later).
    remove(&dir, &format!("{id}.json"))
        .await
        .map_err(|e| StoreError::Write(js_message(&e)))?;
    remove(&dir, &format!("{id}.gguf"))
        .await
        .map_err(|e| StoreError::Write(js_message(&e)))
}
