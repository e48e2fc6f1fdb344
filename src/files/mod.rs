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

use std::rc::Rc;

use hearth_core::builtin::code::grant::{PathError, ResolveError};

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

/// The files service: the person's grants on the app's database, and what
/// the file skills and code runs read through them. One is made at
/// start-up, next to the other services.
pub struct Files {
    db: Rc<Db>,
}

impl Files {
    pub fn new(db: Rc<Db>) -> Files {
        Files { db }
    }

    /// Every grant, oldest first.
    pub async fn grants(&self) -> Result<Vec<grants::Grant>, FilesError> {
        grants::list(&self.db).await
    }

    /// Forgets a grant; a copy's files are deleted.
    pub async fn revoke(&self, id: &str) -> Result<(), FilesError> {
        grants::revoke(&self.db, id).await
    }

    /// Adds a grant by copying `files` into the private file system (see
    /// [`grants::add_copy`]).
    pub async fn add_copy(
        &self,
        wanted_name: &str,
        kind: hearth_core::builtin::code::grant::GrantKind,
        files: Vec<(Vec<String>, web_sys::File)>,
    ) -> Result<(grants::GrantRecord, usize), FilesError> {
        grants::add_copy(&self.db, wanted_name, kind, files).await
    }

    /// Lets the person pick a folder or files and grants them; must be
    /// called from a click.
    pub async fn pick(&self, what: picker::Pick) -> Result<picker::Picked, FilesError> {
        picker::pick(&self.db, what).await
    }

    /// Attaches files in the chat, as copies.
    pub async fn attach(&self) -> Result<picker::Picked, FilesError> {
        picker::attach(&self.db).await
    }

    /// Grants files the app already has (dropped or attached), as copies.
    pub async fn grant_files(
        &self,
        files: Vec<web_sys::File>,
    ) -> Result<picker::Picked, FilesError> {
        picker::grant_files(&self.db, files).await
    }

    /// The granted files a code run is handed (see
    /// [`skills::files_for_run`]).
    pub async fn files_for_run(
        &self,
        paths: &[String],
    ) -> Result<Vec<skills::RunFile>, FilesError> {
        skills::files_for_run(&self.db, paths).await
    }

    /// The source of the file skills over these grants.
    pub fn skills(&self) -> skills::FileSkills {
        skills::FileSkills::new(self.db.clone())
    }
}
