//! Choosing what to grant: the File System Access pickers where the browser
//! has them (Chromium), `<input type=file>` (with `webkitdirectory` for
//! folders) everywhere else. Must be called from a click.

use std::cell::RefCell;
use std::rc::Rc;

use futures::channel::oneshot;
use hearth_core::builtin::code::grant::GrantKind;
use js_sys::{Array, Reflect};
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    DirectoryPickerOptions, File, FileSystemHandle, FileSystemPermissionMode, HtmlInputElement,
    OpenFilePickerOptions,
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
    web_sys::window()
        .map(|w| Reflect::has(&w, &"showDirectoryPicker".into()).unwrap_or(false))
        .unwrap_or(false)
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
    let window = web_sys::window().ok_or_else(|| FilesError::Browser("no window".into()))?;
    let chosen = match what {
        Pick::Folder => {
            let options = DirectoryPickerOptions::new();
            options.set_mode(FileSystemPermissionMode::Read);
            let promise = window
                .show_directory_picker_with_options(&options)
                .map_err(|e| FilesError::Browser(js_message(&e)))?;
            JsFuture::from(promise)
                .await
                .map(|h| vec![wasm_bindgen::JsValue::from(h)])
        }
        Pick::Files => {
            let options = OpenFilePickerOptions::new();
            options.set_multiple(true);
            let promise = window
                .show_open_file_picker_with_options(&options)
                .map_err(|e| FilesError::Browser(js_message(&e)))?;
            JsFuture::from(promise).await.map(|list| {
                Array::from(&wasm_bindgen::JsValue::from(list))
                    .iter()
                    .collect()
            })
        }
    };
    let handles = match chosen {
        Ok(h) => h,
        Err(e) if js_error_name(&e) == "AbortError" => return Ok(Picked::default()),
        Err(e) => return Err(FilesError::Browser(js_message(&e))),
    };
    let mut picked = Picked::default();
    for handle in handles {
        picked
            .granted
            .push(grants::add_handle(db, handle.unchecked_into::<FileSystemHandle>()).await?);
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
                let relative = Reflect::get(&file, &"webkitRelativePath".into())
                    .ok()
                    .and_then(|v| v.as_string())
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| file.name());
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
    let list = input.files();
    let mut files = Vec::new();
    if let Some(list) = list {
        for i in 0..list.length() {
            if let Some(f) = list.get(i) {
                files.push(f);
            }
        }
    }
    Ok(files)
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
