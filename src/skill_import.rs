//! Importing Agent Skills packages from what the browser hands over: a
//! picked or dropped folder (File System Access handles, or a folder
//! input's files), .zip/.skill archives; each batch is scanned, stored and
//! reported. Exporting a package as a .zip download. The Agent Skills
//! panel calls these and only renders what they report.

use hearth_core::agent_skills::Problem;
use hearth_core::agent_skills::archive::write_package_zip;
use hearth_core::agent_skills::package::SkillPackage;
use leptos::ev::DragEvent;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::agent_skills::{
    ImportReport, PackageOrigin, blob_bytes, common_root, files_from_handle, files_from_list,
    import_problem, is_archive, scan_archive, scan_folder, store_outcome,
};
use crate::runtime::Runtime;

/// What was dropped: folder handles still to be resolved, and files.
pub struct Dropped {
    handles: Vec<js_sys::Promise>,
    files: Vec<web_sys::File>,
}

impl Dropped {
    /// Whether the drop held nothing to import.
    pub fn is_empty(&self) -> bool {
        self.handles.is_empty() && self.files.is_empty()
    }
}

/// A batch of files to import, and where it came from.
pub enum Incoming {
    Folder(Vec<hearth_core::agent_skills::scan::SourceFile>),
    Archive { name: String, bytes: Vec<u8> },
    Failed(Problem),
}

/// Loads and stores every incoming batch, puts the registry in step with
/// the packages, and reports what each batch gave.
pub async fn import(rt: &Runtime, batches: Vec<Incoming>) -> ImportReport {
    let skills = rt.agent_skills();
    let db = rt.db();
    let mut total = ImportReport::default();
    for batch in batches {
        let now = js_sys::Date::now();
        let stored = match batch {
            Incoming::Failed(p) => {
                total.rejected.push(p);
                continue;
            }
            Incoming::Folder(files) => {
                let root = common_root(&files).unwrap_or_default();
                let outcome = scan_folder(files, None);
                store_outcome(
                    &skills,
                    &db,
                    outcome,
                    |_| PackageOrigin::Folder { name: root.clone() },
                    now,
                )
                .await
            }
            Incoming::Archive { name, bytes } => {
                let outcome = scan_archive(&bytes, &name);
                store_outcome(
                    &skills,
                    &db,
                    outcome,
                    |_| PackageOrigin::Archive { name: name.clone() },
                    now,
                )
                .await
            }
        };
        match stored {
            Ok(r) => {
                total.imported.extend(r.imported);
                total.rejected.extend(r.rejected);
            }
            Err(e) => total
                .rejected
                .push(import_problem("", format!("nothing was stored: {e}"))),
        }
    }
    if total.is_empty() {
        total.rejected.push(import_problem(
            "",
            "no SKILL.md was found in what was given",
        ));
    }
    rt.sync_agent_skills();
    total
}

/// What a file input gave: one folder (`folder`, the folder input) or
/// archives, one batch each.
pub async fn from_input(list: Vec<web_sys::File>, folder: bool) -> Vec<Incoming> {
    if folder {
        return match files_from_list(list).await {
            Ok(files) => vec![Incoming::Folder(files)],
            Err(e) => vec![Incoming::Failed(import_problem("", e.to_string()))],
        };
    }
    let mut out = Vec::new();
    for file in list {
        out.push(archive_from_file(&file).await);
    }
    out
}

async fn archive_from_file(file: &web_sys::File) -> Incoming {
    let name = file.name();
    if !is_archive(&name) {
        return Incoming::Failed(import_problem(
            &name,
            "not a skill archive: give a .zip or .skill file, or a folder",
        ));
    }
    match blob_bytes(file).await {
        Ok(bytes) => Incoming::Archive { name, bytes },
        Err(e) => Incoming::Failed(import_problem(&name, format!("cannot read it: {e}"))),
    }
}

/// Reads what was dropped: folders through their File System Access
/// handles (Chromium), archives as files.
pub async fn from_drop(dropped: Dropped) -> Vec<Incoming> {
    let Dropped { handles, files } = dropped;
    let mut out = Vec::new();
    for promise in handles {
        let Ok(handle) = JsFuture::from(promise).await else {
            continue;
        };
        let kind = js_sys::Reflect::get(&handle, &"kind".into())
            .ok()
            .and_then(|k| k.as_string())
            .unwrap_or_default();
        if kind == "directory" {
            out.push(match files_from_handle(&handle).await {
                Ok(files) => Incoming::Folder(files),
                Err(e) => Incoming::Failed(import_problem("", e.to_string())),
            });
        }
    }
    for file in files {
        out.push(archive_from_file(&file).await);
    }
    out
}

/// Splits a drop into folder handles (as promises, asked for before any
/// await, while the drop's data is still readable) and plain files.
pub fn take_drop(ev: &DragEvent) -> Dropped {
    let mut handles = Vec::new();
    let mut files = Vec::new();
    let Some(dt) = ev.data_transfer() else {
        return Dropped { handles, files };
    };
    let items = dt.items();
    for i in 0..items.length() {
        let Some(item) = items.get(i) else { continue };
        if item.kind() != "file" {
            continue;
        }
        let entry_is_dir = js_sys::Reflect::get(&item, &"webkitGetAsEntry".into())
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
            .and_then(|f| f.call0(&item).ok())
            .and_then(|e| js_sys::Reflect::get(&e, &"isDirectory".into()).ok())
            .and_then(|d| d.as_bool())
            .unwrap_or(false);
        if entry_is_dir {
            let promise = js_sys::Reflect::get(&item, &"getAsFileSystemHandle".into())
                .ok()
                .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
                .and_then(|f| f.call0(&item).ok())
                .and_then(|p| p.dyn_into::<js_sys::Promise>().ok());
            if let Some(p) = promise {
                handles.push(p);
            }
        } else if let Ok(Some(file)) = item.get_as_file() {
            files.push(file);
        }
    }
    Dropped { handles, files }
}

/// The folder behind a picked directory handle, as one batch.
pub async fn from_directory(handle: &wasm_bindgen::JsValue) -> Vec<Incoming> {
    match files_from_handle(handle).await {
        Ok(files) => vec![Incoming::Folder(files)],
        Err(e) => vec![Incoming::Failed(import_problem("", e.to_string()))],
    }
}

/// Offers `package` to the person as a .zip download.
pub fn export_zip(package: &SkillPackage) -> Result<(), String> {
    let bytes = write_package_zip(package).map_err(|e| e.to_string())?;
    crate::platform::download_bytes(
        &format!("{}.zip", package.name()),
        "application/zip",
        &bytes,
    )
}
