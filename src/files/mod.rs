//! Files the person granted: choosing them, keeping the grants across
//! reloads, and reading them for the file skills and for code.
//!
//! A grant is either a live File System Access handle (Chromium's pickers;
//! the browser asks again after a reload) or, where the pickers do not
//! exist, a copy taken through `<input type=file>` and kept in the origin's
//! private file system (OPFS). Both are read through the same directory and
//! file handles. Every path the model gives is checked by hearth-core's
//! grant rules first, then walked one name at a time, so nothing outside a
//! grant can be reached or named.

pub mod fs;
pub mod grants;
pub mod picker;
pub mod skills;

use std::cell::RefCell;
use std::rc::Rc;

use hearth_core::code::grant::{PathError, ResolveError};

use crate::storage::Db;

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FilesError {
    #[error(transparent)]
    Path(#[from] PathError),
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    #[error(
        "Hearth needs your permission again to read '{0}' (browsers ask after a reload). Open Settings → Files and choose “Allow again”, then retry."
    )]
    NeedsPermission(String),
    #[error("reading '{0}' was refused in the browser; grant it again in Settings → Files")]
    Denied(String),
    #[error("'{0}' does not exist (it may have been moved or deleted since it was granted)")]
    NotFound(String),
    #[error("'{0}' is a folder; use list_files to see what it holds")]
    IsDirectory(String),
    #[error("'{0}' is a file, not a folder")]
    NotDirectory(String),
    #[error("{0}")]
    TooLarge(String),
    #[error("{0}")]
    Binary(String),
    #[error("{0}")]
    Invalid(String),
    #[error("the browser could not read '{path}': {message}")]
    Read { path: String, message: String },
    #[error("the browser database: {0}")]
    Storage(String),
    #[error("this browser cannot keep copies of files: {0}")]
    NoCopies(String),
    #[error("the browser refused: {0}")]
    Browser(String),
}

impl FilesError {
    /// Whether the person must act (allow access again) before a retry
    /// can work.
    pub fn needs_person(&self) -> bool {
        matches!(self, FilesError::NeedsPermission(_))
    }
}

/// A browser error as text.
pub(crate) fn js_message(e: &wasm_bindgen::JsValue) -> String {
    use wasm_bindgen::JsCast;
    if let Some(err) = e.dyn_ref::<js_sys::Error>() {
        return format!(
            "{}: {}",
            String::from(err.name()),
            String::from(err.message())
        );
    }
    if let Some(err) = e.dyn_ref::<web_sys::DomException>() {
        return format!("{}: {}", err.name(), err.message());
    }
    e.as_string().unwrap_or_else(|| format!("{e:?}"))
}

/// The DOMException name of a browser error, e.g. `NotFoundError`.
pub(crate) fn js_error_name(e: &wasm_bindgen::JsValue) -> String {
    use wasm_bindgen::JsCast;
    if let Some(err) = e.dyn_ref::<web_sys::DomException>() {
        return err.name();
    }
    if let Some(err) = e.dyn_ref::<js_sys::Error>() {
        return String::from(err.name());
    }
    String::new()
}

thread_local! {
    static DB: RefCell<Option<Rc<Db>>> = const { RefCell::new(None) };
}

/// Gives the file skills the app's database; called once at start-up.
pub fn install(db: Rc<Db>) {
    DB.with(|slot| *slot.borrow_mut() = Some(db));
}

pub(crate) fn db() -> Result<Rc<Db>, FilesError> {
    DB.with(|slot| slot.borrow().clone())
        .ok_or_else(|| FilesError::Storage("the file skills were not given the database".into()))
}
