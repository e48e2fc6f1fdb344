//! The grants store: what the person granted, kept across reloads.
//!
//! A grant's record lives in IndexedDB. A live grant keeps its File System
//! Access handle in the same record (IndexedDB stores handles natively);
//! the browser then asks the person again after a reload, and until they
//! allow it the grant reads as [`Access::Prompt`]. A copied grant keeps its
//! files in the origin private file system under `grants/<id>/`, which
//! survives reloads and needs no permission.

use futures::StreamExt;
use hearth_core::builtin::code::grant::{GrantInfo, GrantKind, GrantSource, RelPath, unique_name};
use js_sys::Reflect;
use serde::{Deserialize, Serialize};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    File, FileSystemDirectoryHandle, FileSystemFileHandle, FileSystemGetDirectoryOptions,
    FileSystemGetFileOptions, FileSystemHandle, FileSystemHandlePermissionDescriptor,
    FileSystemPermissionMode, FileSystemRemoveOptions, FileSystemWritableFileStream,
};

use super::fs::{self, Node};
use super::{FilesError, js_error_name, js_message};
use crate::platform::new_id;
use crate::storage::Db;
use hearth_core::stores::GRANTS;

/// Where copied grants live in the origin private file system.
const COPIES_DIR: &str = "grants";
/// How many entries a grant's summary counts before it says "at least".
const COUNT_LIMIT: usize = 5000;

/// A grant as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GrantRecord {
    pub id: String,
    /// The name the model uses for the grant's root; unique.
    pub name: String,
    pub kind: GrantKind,
    pub source: GrantSource,
    pub created_at_ms: f64,
    /// Files and bytes when granted (at most [`COUNT_LIMIT`] counted).
    #[serde(default)]
    pub files: u64,
    #[serde(default)]
    pub bytes: u64,
    #[serde(default)]
    pub counted_all: bool,
}

/// A grant and, for live grants, its handle.
#[derive(Clone, Debug)]
pub struct Grant {
    pub record: GrantRecord,
    pub handle: Option<FileSystemHandle>,
}

impl Grant {
    pub fn info(&self) -> GrantInfo {
        GrantInfo {
            id: self.record.id.clone(),
            name: self.record.name.clone(),
            kind: self.record.kind,
        }
    }
}

/// Whether the browser lets Hearth read a grant now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Granted,
    /// The browser will ask the person (after a click).
    Prompt,
    Denied,
}

fn storage(e: impl std::fmt::Display) -> FilesError {
    FilesError::Storage(e.to_string())
}

/// Every grant, oldest first.
pub async fn list(db: &Db) -> Result<Vec<Grant>, FilesError> {
    let values = db.all_values(GRANTS).await.map_err(storage)?;
    let mut grants = Vec::with_capacity(values.len());
    for value in values {
        let handle = Reflect::get(&value, &"handle".into())
            .ok()
            .filter(|h| !h.is_undefined() && !h.is_null())
            .map(|h| h.unchecked_into::<FileSystemHandle>());
        match serde_wasm_bindgen::from_value::<GrantRecord>(value.clone()) {
            Ok(record) => grants.push(Grant { record, handle }),
            Err(e) => db.set_aside(GRANTS, &value, &e.to_string()).await,
        }
    }
    grants.sort_by(|a, b| a.record.created_at_ms.total_cmp(&b.record.created_at_ms));
    Ok(grants)
}

async fn save(
    db: &Db,
    record: &GrantRecord,
    handle: Option<&FileSystemHandle>,
) -> Result<(), FilesError> {
    let value = record
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(storage)?;
    if let Some(h) = handle {
        Reflect::set(&value, &"handle".into(), h).map_err(|e| storage(js_message(&e)))?;
    }
    db.put_value(GRANTS, &value).await.map_err(storage)
}

async fn taken_names(db: &Db) -> Result<Vec<String>, FilesError> {
    Ok(list(db).await?.into_iter().map(|g| g.record.name).collect())
}

/// Files and bytes below `node`, counting at most [`COUNT_LIMIT`] entries.
async fn summary(node: &Node, name: &str) -> Result<(u64, u64, bool), FilesError> {
    let root = RelPath::parse(name)?;
    let (entries, truncated) = fs::walk(node, &root, COUNT_LIMIT).await?;
    let (mut files, mut bytes) = (0u64, 0u64);
    for entry in entries {
        if let Node::File(h) = &entry.node {
            files += 1;
            bytes += fs::file(h, &entry.path).await?.size() as u64;
        }
    }
    Ok((files, bytes, !truncated))
}

/// Adds a grant for a handle the person picked.
pub async fn add_handle(db: &Db, handle: FileSystemHandle) -> Result<GrantRecord, FilesError> {
    let taken = taken_names(db).await?;
    let taken: Vec<&str> = taken.iter().map(String::as_str).collect();
    let name = unique_name(&handle.name(), &taken);
    let node = Node::from_handle(handle.clone());
    let kind = match node {
        Node::Dir(_) => GrantKind::Directory,
        Node::File(_) => GrantKind::File,
    };
    let (files, bytes, counted_all) = summary(&node, &name).await?;
    let record = GrantRecord {
        id: new_id(),
        name,
        kind,
        source: GrantSource::Handle,
        created_at_ms: js_sys::Date::now(),
        files,
        bytes,
        counted_all,
    };
    save(db, &record, Some(&handle)).await?;
    Ok(record)
}

async fn private_root() -> Result<FileSystemDirectoryHandle, FilesError> {
    let storage = web_sys::window()
        .ok_or_else(|| FilesError::NoCopies("no window".into()))?
        .navigator()
        .storage();
    JsFuture::from(storage.get_directory())
        .await
        .map(|d| d.unchecked_into())
        .map_err(|e| FilesError::NoCopies(js_message(&e)))
}

async fn subdir(
    parent: &FileSystemDirectoryHandle,
    name: &str,
    create: bool,
) -> Result<FileSystemDirectoryHandle, JsValue> {
    let options = FileSystemGetDirectoryOptions::new();
    options.set_create(create);
    JsFuture::from(parent.get_directory_handle_with_options(name, &options))
        .await
        .map(|d| d.unchecked_into())
}

/// The folder holding a copied grant's files.
async fn copy_dir(id: &str, create: bool) -> Result<FileSystemDirectoryHandle, FilesError> {
    let root = private_root().await?;
    let copies = subdir(&root, COPIES_DIR, create)
        .await
        .map_err(|e| FilesError::NoCopies(js_message(&e)))?;
    subdir(&copies, id, create)
        .await
        .map_err(|e| match js_error_name(&e).as_str() {
            "NotFoundError" => FilesError::NotFound(format!("the stored copy of grant {id}")),
            _ => FilesError::NoCopies(js_message(&e)),
        })
}

async fn write_file(
    dir: &FileSystemDirectoryHandle,
    inner: &[String],
    file: &File,
) -> Result<(), JsValue> {
    let mut here = dir.clone();
    for name in &inner[..inner.len() - 1] {
        here = subdir(&here, name, true).await?;
    }
    let options = FileSystemGetFileOptions::new();
    options.set_create(true);
    let handle: FileSystemFileHandle =
        JsFuture::from(here.get_file_handle_with_options(&inner[inner.len() - 1], &options))
            .await?
            .unchecked_into();
    let stream: FileSystemWritableFileStream = JsFuture::from(handle.create_writable())
        .await?
        .unchecked_into();
    JsFuture::from(stream.write_with_blob(file)?).await?;
    JsFuture::from(stream.close()).await?;
    Ok(())
}

/// Adds a grant by copying `files` (each with its names below the grant's
/// root; a file grant has exactly one, named by its own name) into the
/// private file system. Names that no path could name are left out and
/// counted in the second value returned.
pub async fn add_copy(
    db: &Db,
    wanted_name: &str,
    kind: GrantKind,
    files: Vec<(Vec<String>, File)>,
) -> Result<(GrantRecord, usize), FilesError> {
    let taken = taken_names(db).await?;
    let taken: Vec<&str> = taken.iter().map(String::as_str).collect();
    let name = unique_name(wanted_name, &taken);
    let id = new_id();
    let dir = copy_dir(&id, true).await?;
    let total = files.len();
    let usable: Vec<(Vec<String>, File)> = files
        .into_iter()
        .filter(|(inner, _)| !inner.is_empty() && RelPath::from_segments(inner).is_ok())
        .collect();
    let skipped = total - usable.len();
    let count = usable.len() as u64;
    let bytes: u64 = usable.iter().map(|(_, f)| f.size() as u64).sum();
    // Several writes in flight: each is a handful of asynchronous calls.
    let written: Vec<Result<(), JsValue>> = futures::stream::iter(usable)
        .map(|(inner, file)| {
            let dir = dir.clone();
            async move { write_file(&dir, &inner, &file).await }
        })
        .buffer_unordered(4)
        .collect()
        .await;
    if let Some(Err(e)) = written.into_iter().find(Result::is_err) {
        let _ = remove_copy(&id).await;
        let message = js_message(&e);
        return Err(if message.contains("Quota") {
            FilesError::TooLarge("the browser's storage is full, so the copy was not kept".into())
        } else {
            FilesError::NoCopies(message)
        });
    }
    let record = GrantRecord {
        id,
        name,
        kind,
        source: GrantSource::Copy,
        created_at_ms: js_sys::Date::now(),
        files: count,
        bytes,
        counted_all: true,
    };
    save(db, &record, None).await?;
    Ok((record, skipped))
}

async fn remove_copy(id: &str) -> Result<(), FilesError> {
    let root = private_root().await?;
    let copies = match subdir(&root, COPIES_DIR, false).await {
        Ok(d) => d,
        Err(_) => return Ok(()),
    };
    let options = FileSystemRemoveOptions::new();
    options.set_recursive(true);
    match JsFuture::from(copies.remove_entry_with_options(id, &options)).await {
        Ok(_) => Ok(()),
        Err(e) if js_error_name(&e) == "NotFoundError" => Ok(()),
        Err(e) => Err(FilesError::Browser(js_message(&e))),
    }
}

/// Forgets a grant; a copy's files are deleted.
pub async fn revoke(db: &Db, id: &str) -> Result<(), FilesError> {
    let grants = list(db).await?;
    if let Some(grant) = grants.iter().find(|g| g.record.id == id) {
        match grant.record.source {
            GrantSource::Copy => remove_copy(id).await?,
            GrantSource::Handle => {}
        }
    }
    db.delete(GRANTS, id).await.map_err(storage)
}

fn read_descriptor() -> FileSystemHandlePermissionDescriptor {
    let d = FileSystemHandlePermissionDescriptor::new();
    d.set_mode(FileSystemPermissionMode::Read);
    d
}

fn access_of(state: &str) -> Access {
    match state {
        "granted" => Access::Granted,
        "denied" => Access::Denied,
        _ => Access::Prompt,
    }
}

/// Whether the browser lets Hearth read `grant` now, without asking.
pub async fn access(grant: &Grant) -> Access {
    match (&grant.record.source, &grant.handle) {
        (GrantSource::Copy, _) => Access::Granted,
        (GrantSource::Handle, None) => Access::Denied,
        (GrantSource::Handle, Some(h)) => {
            match JsFuture::from(h.query_permission_with_descriptor(&read_descriptor())).await {
                Ok(state) => access_of(&state.as_string().unwrap_or_default()),
                Err(_) => Access::Denied,
            }
        }
    }
}

/// Asks the person to let Hearth read `grant` again; must run inside a
/// click.
pub async fn request_access(grant: &Grant) -> Access {
    match (&grant.record.source, &grant.handle) {
        (GrantSource::Copy, _) => Access::Granted,
        (GrantSource::Handle, None) => Access::Denied,
        (GrantSource::Handle, Some(h)) => {
            match JsFuture::from(h.request_permission_with_descriptor(&read_descriptor())).await {
                Ok(state) => access_of(&state.as_string().unwrap_or_default()),
                Err(_) => Access::Denied,
            }
        }
    }
}

/// The handle at a grant's root, once the browser allows reading it.
pub async fn root(grant: &Grant) -> Result<Node, FilesError> {
    match grant.record.source {
        GrantSource::Handle => {
            let handle = grant
                .handle
                .clone()
                .ok_or_else(|| FilesError::Denied(grant.record.name.clone()))?;
            match access(grant).await {
                Access::Granted => Ok(Node::from_handle(handle)),
                Access::Prompt => Err(FilesError::NeedsPermission(grant.record.name.clone())),
                Access::Denied => Err(FilesError::Denied(grant.record.name.clone())),
            }
        }
        GrantSource::Copy => {
            let dir = copy_dir(&grant.record.id, false).await?;
            match grant.record.kind {
                GrantKind::Directory => Ok(Node::Dir(dir)),
                GrantKind::File => {
                    let shown = RelPath::parse(&grant.record.name)?;
                    fs::children(&dir, &shown)
                        .await?
                        .into_iter()
                        .find_map(|(_, node)| match node {
                            Node::File(f) => Some(Node::File(f)),
                            Node::Dir(_) => None,
                        })
                        .ok_or_else(|| FilesError::NotFound(grant.record.name.clone()))
                }
            }
        }
    }
}
