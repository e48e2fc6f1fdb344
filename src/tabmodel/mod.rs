//! The model in this tab: GGUF files kept in the origin private file
//! system (`store`, `download`), and the Worker that runs them with
//! Hearth's own build of llama.cpp (`worker`; the engine's C++ is in
//! `llama/`). The assistant routes in-tab requests here; the provider
//! settings list, add and delete models here.
//!
//! Models are never part of a backup: they live outside IndexedDB, are
//! large, and can be added again from their file or link.

pub mod download;
pub mod store;
pub mod worker;

use std::cell::RefCell;
use std::rc::Rc;

use hearth_core::assistant::agent::ModelLimits;
use hearth_core::assistant::providers::ProviderConfig;
use hearth_core::assistant::providers::in_tab::StoredModel;
use leptos::prelude::*;
use leptos::task::spawn_local;
use send_wrapper::SendWrapper;
use web_sys::{AbortController, File};

use crate::platform::new_id;
use store::{StoreError, Writer};
pub use worker::{Event, Load, TabWorker};

/// A model being added.
#[derive(Clone, Debug, PartialEq)]
pub struct Adding {
    pub name: String,
    pub download: bool,
    pub loaded: f64,
    /// 0 when unknown (a host that does not say the size).
    pub total: f64,
}

/// Where the runtime stands.
#[derive(Clone, Debug, PartialEq)]
pub enum Runtime {
    /// Nothing loaded.
    Idle,
    /// Fetching the engine ("runtime"), reading the model file ("model")
    /// or measuring which thread count is fastest ("threads").
    Loading {
        model: String,
        phase: String,
        loaded: f64,
        total: f64,
    },
    Ready {
        model: String,
        threads: u32,
        context: u64,
        load_ms: f64,
    },
}

/// How far the model has read the prompt of the turn it is answering.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    pub model: String,
    pub tokens: f64,
    pub total: f64,
}

/// What [`TabModels`] holds: the stored models, the one loaded and how
/// it is doing, behind one shared handle.
pub struct TabModelsState {
    /// The stored models, oldest first.
    pub models: RwSignal<Vec<StoredModel>>,
    /// The list has been read once.
    pub listed: RwSignal<bool>,
    pub list_error: RwSignal<Option<String>>,
    pub adding: RwSignal<Option<Adding>>,
    pub runtime: RwSignal<Runtime>,
    /// Set while the model reads a prompt, before its answer starts.
    pub reading: RwSignal<Option<Reading>>,
    /// The person asked, from the empty chat, to run a model in this tab:
    /// the provider settings open on "In this tab".
    pub wanted: RwSignal<bool>,
    pub worker: TabWorker,
    /// Ids of files being written, never cleaned up as leftovers.
    writing: RefCell<Vec<String>>,
    download: RefCell<Option<AbortController>>,
}

/// The handle views and the assistant share.
#[derive(Clone)]
pub struct TabModels(SendWrapper<Rc<TabModelsState>>);

impl std::ops::Deref for TabModels {
    type Target = TabModelsState;
    fn deref(&self) -> &TabModelsState {
        &self.0
    }
}

impl TabModels {
    /// Creates the service and reads the list in the background (deleting
    /// leftovers of copies or downloads cut short).
    pub fn new() -> TabModels {
        let t = TabModels(SendWrapper::new(Rc::new(TabModelsState {
            models: RwSignal::new(Vec::new()),
            listed: RwSignal::new(false),
            list_error: RwSignal::new(None),
            adding: RwSignal::new(None),
            runtime: RwSignal::new(Runtime::Idle),
            reading: RwSignal::new(None),
            wanted: RwSignal::new(false),
            worker: TabWorker::default(),
            writing: RefCell::new(Vec::new()),
            download: RefCell::new(None),
        })));
        let this = t.clone();
        spawn_local(async move { this.refresh(true).await });
        t
    }

    /// Reads the list again.
    pub async fn refresh(&self, clean_up: bool) {
        let writing = self.writing.borrow().clone();
        match store::list(clean_up, &writing).await {
            Ok(list) => {
                self.models.set(list);
                self.list_error.set(None);
            }
            Err(e) => self.list_error.set(Some(e.to_string())),
        }
        self.listed.set(true);
    }

    /// The stored model `id`, without subscribing.
    pub fn model(&self, id: &str) -> Option<StoredModel> {
        self.models
            .with_untracked(|l| l.iter().find(|m| m.id == id).cloned())
    }

    /// What the loop may send to `config`'s model in this tab. A model
    /// that is not stored gets no tools; its request fails with a clear
    /// error from the worker.
    pub fn limits(&self, config: &ProviderConfig) -> ModelLimits {
        match self.model(&config.model) {
            Some(m) => m.limits(config),
            None => ModelLimits {
                context_window: None,
                max_output: None,
                tools: false,
            },
        }
    }

    /// What to load for `config`, if its model is stored.
    pub fn load_for(&self, config: &ProviderConfig) -> Option<Load> {
        let m = self.model(&config.model)?;
        Some(Load {
            context: m.context(config),
            model: m.id,
            threads: None,
        })
    }

    /// Follows the worker's load and prompt progress for the status the
    /// chat shows.
    pub fn observe(&self, model: &str, event: &Event) {
        match event {
            Event::Progress {
                phase,
                loaded,
                total,
            } if phase == "prompt" => self.reading.set(Some(Reading {
                model: model.to_string(),
                tokens: *loaded,
                total: *total,
            })),
            Event::Progress {
                phase,
                loaded,
                total,
            } => self.runtime.set(Runtime::Loading {
                model: model.to_string(),
                phase: phase.clone(),
                loaded: *loaded,
                total: *total,
            }),
            Event::Loaded {
                model,
                ms,
                threads,
                context,
            } => self.runtime.set(Runtime::Ready {
                model: model.clone(),
                threads: *threads,
                context: *context,
                load_ms: *ms,
            }),
            Event::Line(_) | Event::Done => {
                if self.reading.with_untracked(Option::is_some) {
                    self.reading.set(None);
                }
                // A load that failed leaves nothing loaded.
                if matches!(self.runtime.get_untracked(), Runtime::Loading { .. }) {
                    self.runtime.set(Runtime::Idle);
                }
            }
        }
    }

    fn begin(&self, id: &str, name: &str, download: bool, total: f64) {
        self.writing.borrow_mut().push(id.to_string());
        self.adding.set(Some(Adding {
            name: name.to_string(),
            download,
            loaded: 0.0,
            total,
        }));
    }

    fn end(&self, id: &str) {
        self.writing.borrow_mut().retain(|w| w != id);
        self.adding.set(None);
        *self.download.borrow_mut() = None;
    }

    fn progress(&self) -> impl Fn(f64, f64) + use<> {
        let adding = self.adding;
        move |loaded, total| {
            adding.update(|a| {
                if let Some(a) = a {
                    a.loaded = loaded;
                    a.total = total;
                }
            })
        }
    }

    /// Adds a picked or dropped GGUF file: its header first (a file that
    /// is no model is refused before anything is stored), then the space,
    /// then the copy.
    pub async fn add_file(&self, file: File) -> Result<StoredModel, String> {
        if self.adding.with_untracked(Option::is_some) {
            return Err("Another model is being added; wait for it to finish.".into());
        }
        let name = file.name();
        let info = store::read_header(&file).await.map_err(|e| e.to_string())?;
        let size = file.size() as u64;
        store::check_space(size).await.map_err(|e| e.to_string())?;
        let id = new_id();
        self.begin(&id, &name, false, size as f64);
        let result = async {
            let writer = Writer::create(&id).await?;
            if let Err(e) = store::copy_file(&writer, &file, self.progress()).await {
                writer.discard().await;
                return Err(e);
            }
            let model = StoredModel {
                id: id.clone(),
                file_name: name.clone(),
                size,
                added_at_ms: js_sys::Date::now(),
                source_url: None,
                info,
            };
            writer.finish(&model).await?;
            Ok::<_, StoreError>(model)
        }
        .await;
        self.end(&id);
        self.refresh(false).await;
        result.map_err(|e| e.to_string())
    }

    /// Downloads a GGUF file from `url`, with progress; Cancel stops it.
    pub async fn add_url(&self, url: &str) -> Result<StoredModel, String> {
        if self.adding.with_untracked(Option::is_some) {
            return Err("Another model is being added; wait for it to finish.".into());
        }
        let controller = AbortController::new().map_err(|e| format!("{e:?}"))?;
        let signal = controller.signal();
        *self.download.borrow_mut() = Some(controller);
        let url = url.trim().to_string();
        let name = url
            .split(['?', '#'])
            .next()
            .and_then(|u| u.rsplit('/').next())
            .filter(|n| !n.is_empty())
            .unwrap_or("model.gguf")
            .to_string();
        let id = new_id();
        self.begin(&id, &name, true, 0.0);
        let result = async {
            let writer = Writer::create(&id).await?;
            match download::download(&url, &writer, &signal, self.progress()).await {
                Ok(got) => {
                    let model = StoredModel {
                        id: id.clone(),
                        file_name: name.clone(),
                        size: got.size,
                        added_at_ms: js_sys::Date::now(),
                        source_url: Some(url.clone()),
                        info: got.info,
                    };
                    writer.finish(&model).await?;
                    Ok(model)
                }
                Err(e) => {
                    writer.discard().await;
                    Err(e)
                }
            }
        }
        .await
        .map_err(|e: download::DownloadError| e.to_string());
        self.end(&id);
        self.refresh(false).await;
        result
    }

    /// Stops the download in progress; it keeps nothing.
    pub fn cancel_download(&self) {
        if let Some(c) = self.download.borrow().as_ref() {
            c.abort();
        }
    }

    /// Deletes a model: the worker lets go of it first if it is loaded.
    pub async fn delete(&self, id: &str) -> Result<(), String> {
        let loaded = match self.runtime.get_untracked() {
            Runtime::Ready { model, .. } | Runtime::Loading { model, .. } => model == id,
            Runtime::Idle => false,
        };
        if loaded {
            self.worker.unload().await;
            self.runtime.set(Runtime::Idle);
        }
        let result = store::delete(id).await.map_err(|e| e.to_string());
        self.refresh(false).await;
        result
    }
}

impl Default for TabModels {
    fn default() -> Self {
        Self::new()
    }
}
