//! Choosing files and folders: the File System Access pickers where the
//! browser has them (Chromium), `<input type=file>` (with
//! `webkitdirectory` for folders) everywhere else. Must be called from a
//! click. Granting what was picked is here too; the other pickers of the
//! app (importing a skill folder, adding a model file) open the browser's
//! pickers through [`open_directory`] and [`open_file`].

use std::cell::RefCell;
use std::rc::Rc;

use futures::channel::oneshot;
use hearth_core::builtin::code::grant::GrantKind;
use js_sys::{Array, Reflect};
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    DirectoryPickerOptions, File, FileList, FileSystemDirectoryHandle, FileSystemFileHandle,
    FileSystemHandle, FileSystemPermissionMode, HtmlInputElement, OpenFilePickerOptions,
};

use super::grants::{self, GrantRecord};
use super::{FilesError, js_error_name, js_message};
use crate::storage::Db;

/// What to pick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    Folder,
    Files,
}

/// What a pick granted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Picked {
    pub granted: Vec<GrantRecord>,
    /// Files left out because no path could name them.
    pub skipped: usize,
}

/// Whether this browser has the File System Access pickers.
pub fn has_pickers() -> bool {
    has_directory_picker()
}

/// Whether this browser has the File System Access directory picker.
pub fn has_directory_picker() -> bool {
    window_has("showDirectoryPicker")
}

/// Whether this browser has the File System Access file picker.
pub fn has_file_picker() -> bool {
    window_has("showOpenFilePicker")
}

fn window_has(function: &str) -> bool {
    web_sys::window()
        .and_then(|w| Reflect::get(&w, &function.into()).ok())
        .is_some_and(|f| f.is_function())
}

/// Opens the directory picker, for reading; `None` when the person
/// cancelled. The error is the browser's.
pub async fn open_directory() -> Result<Option<FileSystemDirectoryHandle>, wasm_bindgen::JsValue> {
    let window = web_sys::window().ok_or_else(|| wasm_bindgen::JsValue::from_str("no window"))?;
    let options = DirectoryPickerOptions::new();
    options.set_mode(FileSystemPermissionMode::Read);
    match JsFuture::from(window.show_directory_picker_with_options(&options)?).await {
        Ok(handle) => Ok(Some(handle.unchecked_into())),
        Err(e) if js_error_name(&e) == "AbortError" => Ok(None),
        Err(e) => Err(e),
    }
}

/// A kind of file the file picker offers, e.g. "GGUF model",
/// `application/octet-stream`, `.gguf`.
pub struct Accept<'a> {
    pub description: &'a str,
    pub mime: &'a str,
    pub extension: &'a str,
}

/// Opens the file picker; no handles when the person cancelled. The error
/// is the browser's.
pub async fn open_files(
    multiple: bool,
    accept: Option<&Accept<'_>>,
) -> Result<Vec<FileSystemFileHandle>, wasm_bindgen::JsValue> {
    let window = web_sys::window().ok_or_else(|| wasm_bindgen::JsValue::from_str("no window"))?;
    let options = OpenFilePickerOptions::new();
    if multiple {
        options.set_multiple(true);
    }
    if let Some(accept) = accept {
        let types = js_sys::Object::new();
        let _ = Reflect::set(
            &types,
            &accept.mime.into(),
            &Array::of1(&accept.extension.into()),
        );
        let kind = js_sys::Object::new();
        let _ = Reflect::set(&kind, &"description".into(), &accept.description.into());
        let _ = Reflect::set(&kind, &"accept".into(), &types);
        let _ = Reflect::set(&options, &"types".into(), &Array::of1(&kind));
    }
    match JsFuture::from(window.show_open_file_picker_with_options(&options)?).await {
        Ok(list) => Ok(Array::from(&list)
            .iter()
            .map(JsCast::unchecked_into)
            .collect()),
        Err(e) if js_error_name(&e) == "AbortError" => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// One file from the file picker; `None` when the person cancelled.
pub async fn open_file(accept: Option<&Accept<'_>>) -> Result<Option<File>, wasm_bindgen::JsValue> {
    let Some(handle) = open_files(false, accept).await?.into_iter().next() else {
        return Ok(None);
    };
    super::fs::file_of(&handle).await.map(Some)
}

/// Copies a live `FileList` (which empties when its input is reset).
pub fn list_files(list: &FileList) -> Vec<File> {
    (0..list.length()).filter_map(|i| list.item(i)).collect()
}

/// A file's path below the folder an `<input webkitdirectory>` picked,
/// that folder first (`picked-folder/sub/file.txt`); its name when the
/// input picked files.
pub fn relative_path(file: &File) -> String {
    Reflect::get(file, &"webkitRelativePath".into())
        .ok()
        .and_then(|v| v.as_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| file.name())
}

/// Lets the person pick a folder or files and grants them. Cancelling
/// grants nothing.
pub async fn pick(db: &Db, what: Pick) -> Result<Picked, FilesError> {
    if has_pickers() {
        with_pickers(db, what).await
    } else {
        with_input(db, what).await
    }
}

async fn with_pickers(db: &Db, what: Pick) -> Result<Picked, FilesError> {
    let chosen: Result<Vec<FileSystemHandle>, _> = match what {
        Pick::Folder => open_directory()
            .await
            .map(|h| h.into_iter().map(Into::into).collect()),
        Pick::Files => open_files(true, None)
            .await
            .map(|list| list.into_iter().map(Into::into).collect()),
    };
    let handles = chosen.map_err(|e| FilesError::Browser(js_message(&e)))?;
    let mut picked = Picked::default();
    for handle in handles {
        picked.granted.push(grants::add_handle(db, handle).await?);
    }
    Ok(picked)
}

/// `<input type=file>`: the files' contents are copied and kept.
async fn with_input(db: &Db, what: Pick) -> Result<Picked, FilesError> {
    let files = choose_with_input(what).await?;
    let mut picked = Picked::default();
    match what {
        Pick::Folder => {
            // webkitRelativePath is "picked-folder/sub/file.txt".
            let mut root: Option<String> = None;
            let mut entries = Vec::new();
            for file in files {
                let relative = relative_path(&file);
                let mut names: Vec<String> = relative.split('/').map(str::to_string).collect();
                let first = names.remove(0);
                if names.is_empty() {
                    names.push(first.clone());
                }
                root.get_or_insert(first);
                entries.push((names, file));
            }
            let Some(root) = root else {
                return Ok(picked);
            };
            let (record, skipped) =
                grants::add_copy(db, &root, GrantKind::Directory, entries).await?;
            picked.granted.push(record);
            picked.skipped = skipped;
        }
        Pick::Files => return grant_files(db, files).await,
    }
    Ok(picked)
}

/// Attaches files in the chat: always through `<input type=file>` and
/// always as copies, since an attachment is what the file held when it was
/// attached. Cancelling attaches nothing.
pub async fn attach(db: &Db) -> Result<Picked, FilesError> {
    grant_files(db, choose_with_input(Pick::Files).await?).await
}

/// Opens a file input and waits for the person's choice (empty when they
/// cancel).
async fn choose_with_input(what: Pick) -> Result<Vec<File>, FilesError> {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or_else(|| FilesError::Browser("no document".into()))?;
    let input: HtmlInputElement = document
        .create_element("input")
        .map_err(|e| FilesError::Browser(js_message(&e)))?
        .unchecked_into();
    input.set_type("file");
    input.set_multiple(true);
    if what == Pick::Folder {
        input
            .set_attribute("webkitdirectory", "")
            .map_err(|e| FilesError::Browser(js_message(&e)))?;
    }
    input.set_attribute("hidden", "").ok();
    input.set_attribute("data-testid", "grant-input").ok();
    let (tx, rx) = oneshot::channel::<bool>();
    let tx = Rc::new(RefCell::new(Some(tx)));
    let done = |chose: bool, tx: &Rc<RefCell<Option<oneshot::Sender<bool>>>>| {
        if let Some(tx) = tx.borrow_mut().take() {
            let _ = tx.send(chose);
        }
    };
    let on_change = {
        let tx = tx.clone();
        Closure::<dyn FnMut()>::new(move || done(true, &tx))
    };
    let on_cancel = {
        let tx = tx.clone();
        Closure::<dyn FnMut()>::new(move || done(false, &tx))
    };
    input
        .add_event_listener_with_callback("change", on_change.as_ref().unchecked_ref())
        .map_err(|e| FilesError::Browser(js_message(&e)))?;
    input
        .add_event_listener_with_callback("cancel", on_cancel.as_ref().unchecked_ref())
        .map_err(|e| FilesError::Browser(js_message(&e)))?;
    if let Some(body) = document.body() {
        let _ = body.append_child(&input);
    }
    input.click();
    let chose = rx.await.unwrap_or(false);
    input.remove();
    drop((on_change, on_cancel));
    if !chose {
        return Ok(Vec::new());
    }
    Ok(input
        .files()
        .map(|list| list_files(&list))
        .unwrap_or_default())
}

/// Grants files the app already has (dropped or attached), as copies,
/// one grant per file.
pub async fn grant_files(db: &Db, files: Vec<File>) -> Result<Picked, FilesError> {
    let mut picked = Picked::default();
    for file in files {
        let name = file.name();
        let (record, skipped) =
            grants::add_copy(db, &name, GrantKind::File, vec![(vec![name.clone()], file)]).await?;
        picked.granted.push(record);
        picked.skipped += skipped;
    }
    Ok(picked)
}
