//! Walking File System Access handles: one checked name at a time, so a
//! path can only ever go down from a grant's root; a folder's entries,
//! a file's contents, and a whole tree read for an import.

use hearth_core::builtin::code::grant::RelPath;
use js_sys::{ArrayBuffer, AsyncIterator, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    Blob, File, FileSystemDirectoryHandle, FileSystemFileHandle, FileSystemHandle,
    FileSystemHandleKind,
};

use super::{FilesError, js_error_name, js_message};

/// A file or folder handle.
#[derive(Clone, Debug)]
pub enum Node {
    Dir(FileSystemDirectoryHandle),
    File(FileSystemFileHandle),
}

impl Node {
    pub fn from_handle(handle: FileSystemHandle) -> Node {
        match handle.kind() {
            FileSystemHandleKind::Directory => Node::Dir(handle.unchecked_into()),
            _ => Node::File(handle.unchecked_into()),
        }
    }
}

fn read_error(path: &RelPath, e: &JsValue) -> FilesError {
    match js_error_name(e).as_str() {
        "NotFoundError" => FilesError::NotFound(path.to_string()),
        "NotAllowedError" | "SecurityError" => FilesError::NeedsPermission(path.root().to_string()),
        _ => FilesError::Read {
            path: path.to_string(),
            message: js_message(e),
        },
    }
}

/// The child `name` of `dir`, whichever kind it is, or `None`.
async fn child(
    dir: &FileSystemDirectoryHandle,
    name: &str,
    shown: &RelPath,
) -> Result<Option<Node>, FilesError> {
    match JsFuture::from(dir.get_file_handle(name)).await {
        Ok(h) => return Ok(Some(Node::File(h.unchecked_into()))),
        Err(e) => match js_error_name(&e).as_str() {
            "TypeMismatchError" => {}
            "NotFoundError" => return Ok(None),
            _ => return Err(read_error(shown, &e)),
        },
    }
    match JsFuture::from(dir.get_directory_handle(name)).await {
        Ok(h) => Ok(Some(Node::Dir(h.unchecked_into()))),
        Err(e) if js_error_name(&e) == "NotFoundError" => Ok(None),
        Err(e) => Err(read_error(shown, &e)),
    }
}

/// Goes down from `root` by `inner` names. `shown` is the whole path, for
/// messages.
pub async fn resolve(root: Node, inner: &[String], shown: &RelPath) -> Result<Node, FilesError> {
    let mut node = root;
    for name in inner {
        node = match node {
            Node::Dir(dir) => child(&dir, name, shown)
                .await?
                .ok_or_else(|| FilesError::NotFound(shown.to_string()))?,
            Node::File(_) => return Err(FilesError::NotFound(shown.to_string())),
        };
    }
    Ok(node)
}

/// A folder's entries in the order the browser lists them. The error is
/// the browser's.
pub async fn entries(dir: &FileSystemDirectoryHandle) -> Result<Vec<(String, Node)>, JsValue> {
    let iter: AsyncIterator = dir.values();
    let mut out = Vec::new();
    loop {
        let step = JsFuture::from(iter.next()?).await?;
        if Reflect::get(&step, &"done".into())
            .ok()
            .and_then(|v| v.as_bool())
            .unwrap_or(true)
        {
            break;
        }
        let handle: FileSystemHandle = Reflect::get(&step, &"value".into())?.unchecked_into();
        out.push((handle.name(), Node::from_handle(handle)));
    }
    Ok(out)
}

/// A folder's entries, sorted by name.
pub async fn children(
    dir: &FileSystemDirectoryHandle,
    shown: &RelPath,
) -> Result<Vec<(String, Node)>, FilesError> {
    let mut out = entries(dir).await.map_err(|e| read_error(shown, &e))?;
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// The file behind a handle. The error is the browser's.
pub async fn file_of(handle: &FileSystemFileHandle) -> Result<File, JsValue> {
    JsFuture::from(handle.get_file())
        .await
        .map(|f| f.unchecked_into())
}

pub async fn file(handle: &FileSystemFileHandle, shown: &RelPath) -> Result<File, FilesError> {
    file_of(handle).await.map_err(|e| read_error(shown, &e))
}

/// All of a blob's bytes. The error is the browser's.
pub async fn blob_bytes(blob: &Blob) -> Result<Vec<u8>, JsValue> {
    let buffer = JsFuture::from(blob.array_buffer()).await?;
    Ok(Uint8Array::new(&buffer).to_vec())
}

/// Bytes `start..end` of `file`.
pub async fn read(
    file: &File,
    start: u64,
    end: u64,
    shown: &RelPath,
) -> Result<Vec<u8>, FilesError> {
    let blob = file
        .slice_with_f64_and_f64(start as f64, end as f64)
        .map_err(|e| read_error(shown, &e))?;
    blob_bytes(&blob).await.map_err(|e| read_error(shown, &e))
}

/// The whole file as an ArrayBuffer, for handing to code.
pub async fn read_buffer(file: &File, shown: &RelPath) -> Result<ArrayBuffer, FilesError> {
    JsFuture::from(file.array_buffer())
        .await
        .map(|b| b.unchecked_into())
        .map_err(|e| read_error(shown, &e))
}

/// One entry met on a walk.
pub struct Walked {
    pub path: RelPath,
    pub node: Node,
}

/// Everything below `root` (which is at `root_path`), depth first, folders
/// before their contents, at most `max` entries. Names that no path could
/// name (control characters, look-alike slashes…) are skipped: the model
/// could neither see nor ask for them. Returns whether it stopped early.
pub async fn walk(
    root: &Node,
    root_path: &RelPath,
    max: usize,
) -> Result<(Vec<Walked>, bool), FilesError> {
    let mut out = Vec::new();
    let Node::Dir(dir) = root else {
        return Ok((
            vec![Walked {
                path: root_path.clone(),
                node: root.clone(),
            }],
            false,
        ));
    };
    // An explicit stack keeps deep trees off the wasm stack.
    let mut stack: Vec<(FileSystemDirectoryHandle, RelPath)> =
        vec![(dir.clone(), root_path.clone())];
    let mut truncated = false;
    'outer: while let Some((dir, path)) = stack.pop() {
        let mut subdirs = Vec::new();
        for (name, node) in children(&dir, &path).await? {
            let Ok(child_path) = path.join(&name) else {
                continue;
            };
            if out.len() >= max {
                truncated = true;
                break 'outer;
            }
            if let Node::Dir(d) = &node {
                subdirs.push((d.clone(), child_path.clone()));
            }
            out.push(Walked {
                path: child_path,
                node,
            });
        }
        // Reverse so the first folder is walked first.
        stack.extend(subdirs.into_iter().rev());
    }
    Ok((out, truncated))
}

/// A tree read whole for an import: where to stop, and what to leave out.
pub struct TreeLimits<'a> {
    /// Folders deeper than this below the root are not opened.
    pub max_depth: usize,
    /// Folders with these names are not opened at all.
    pub skipped: &'a [&'a str],
    /// Reading stops once more than this many files were read.
    pub max_files: usize,
}

/// Why reading a tree failed: the path being read (a folder, or the file
/// whose bytes would not come) and the browser's error.
pub struct TreeError {
    pub path: String,
    pub error: JsValue,
}

/// Every file below `root`, each with its path from the root's own name
/// (`folder/…`) and its bytes, within `limits`.
pub async fn read_tree(
    root: &FileSystemDirectoryHandle,
    limits: &TreeLimits<'_>,
) -> Result<Vec<(String, Vec<u8>)>, TreeError> {
    let mut out = Vec::new();
    let mut pending: Vec<(FileSystemDirectoryHandle, String, usize)> =
        vec![(root.clone(), root.name(), 0)];
    while let Some((dir, prefix, depth)) = pending.pop() {
        let failed = |error: JsValue| TreeError {
            path: prefix.clone(),
            error,
        };
        for (name, node) in entries(&dir).await.map_err(failed)? {
            let path = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            match node {
                Node::Dir(sub) => {
                    if depth < limits.max_depth && !limits.skipped.contains(&name.as_str()) {
                        pending.push((sub, path, depth + 1));
                    }
                }
                Node::File(handle) => {
                    let file = file_of(&handle).await.map_err(failed)?;
                    let bytes = blob_bytes(&file).await.map_err(|error| TreeError {
                        path: path.clone(),
                        error,
                    })?;
                    out.push((path, bytes));
                    if out.len() > limits.max_files {
                        return Ok(out);
                    }
                }
            }
        }
    }
    Ok(out)
}
