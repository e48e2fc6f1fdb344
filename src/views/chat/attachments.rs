//! Attaching files in the chat: the person picks files with the paperclip
//! or drops them on the chat; each is granted as a copy (so it is listed in
//! Settings → Files and readable by name) and handed to the next code run
//! under /mnt/data. Pictures dropped while a model is set up go to it
//! instead (`pictures.rs`).

use hearth_core::builtin::code::with_attached_files;
use leptos::ev::DragEvent;
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::Value;
use wasm_bindgen::JsCast;
use web_sys::File;

use std::rc::Rc;

use hearth_core::assistant::providers::images::ACCEPTED_TYPES;

use super::pictures::Pictures;
use crate::files::picker::Picked;
use crate::files::{Files, FilesError};
use crate::icons::Icon;

/// A file waiting for the next code run.
#[derive(Clone, Debug, PartialEq)]
pub struct Attached {
    pub grant_id: String,
    pub name: String,
    pub bytes: u64,
}

/// The chat's attachments; provided by the chat view, used by its
/// composer.
#[derive(Clone, Copy)]
pub struct Attachments {
    items: RwSignal<Vec<Attached>>,
    busy: RwSignal<bool>,
    message: RwSignal<Option<String>>,
    dragging: RwSignal<bool>,
    /// Where attached files are granted.
    files: StoredValue<Rc<Files>, LocalStorage>,
}

impl Attachments {
    /// No attachments yet; attached files are granted through `files`.
    pub fn new(files: Rc<Files>) -> Self {
        Attachments {
            items: RwSignal::new(Vec::new()),
            busy: RwSignal::new(false),
            message: RwSignal::new(None),
            dragging: RwSignal::new(false),
            files: StoredValue::new_local(files),
        }
    }

    /// `arguments` with the attached files added when `skill_id` is a code
    /// run, and whether they were (then the attachments are spent).
    pub fn hand_to(&self, skill_id: &str, arguments: Value) -> (Value, bool) {
        let names: Vec<String> = self
            .items
            .with_untracked(|items| items.iter().map(|a| a.name.clone()).collect());
        match with_attached_files(skill_id, &arguments, &names) {
            Some(with_files) => (with_files, true),
            None => (arguments, false),
        }
    }

    /// Forgets the attachments once a run has taken them; their grants stay.
    pub fn spent(&self) {
        self.items.set(Vec::new());
        self.message.set(None);
    }

    fn settle(&self, outcome: Result<Picked, FilesError>) {
        match outcome {
            Ok(picked) => {
                let mut note = None;
                if picked.skipped > 0 {
                    note = Some(format!(
                        "{} with names Hearth cannot use safely {} left out.",
                        hearth_core::util::display::count(picked.skipped, "file", "files"),
                        if picked.skipped == 1 { "was" } else { "were" }
                    ));
                }
                self.items.update(|items| {
                    items.extend(picked.granted.into_iter().map(|g| Attached {
                        grant_id: g.id,
                        name: g.name,
                        bytes: g.bytes,
                    }))
                });
                self.message.set(note);
            }
            Err(e) => self.message.set(Some(format!("Nothing was attached: {e}"))),
        }
        self.busy.set(false);
    }

    fn pick(self) {
        if self.busy.get_untracked() {
            return;
        }
        self.busy.set(true);
        self.message.set(None);
        let files = self.files.get_value();
        spawn_local(async move { self.settle(files.attach().await) });
    }

    fn add(self, files: Vec<File>) {
        if files.is_empty() || self.busy.get_untracked() {
            return;
        }
        self.busy.set(true);
        self.message.set(None);
        let service = self.files.get_value();
        spawn_local(async move { self.settle(service.grant_files(files).await) });
    }

    /// Takes an attachment back before any run used it: its copy is
    /// deleted, since nothing has seen it.
    fn remove(self, attached: Attached) {
        self.items
            .update(|items| items.retain(|a| a.grant_id != attached.grant_id));
        let files = self.files.get_value();
        spawn_local(async move {
            if let Err(e) = files.revoke(&attached.grant_id).await {
                self.message.set(Some(format!(
                    "{} was taken off, but its copy could not be deleted: {e}. Revoke it in Settings → Files.",
                    attached.name
                )));
            }
        });
    }

    /// Drag-and-drop handlers for the area that takes dropped files.
    pub fn on_drag_over(self) -> impl Fn(DragEvent) + Copy + 'static {
        let dragging = self.dragging;
        move |ev: DragEvent| {
            if carries_files(&ev) {
                ev.prevent_default();
                dragging.set(true);
            }
        }
    }

    pub fn on_drag_leave(self) -> impl Fn(DragEvent) + Copy + 'static {
        let dragging = self.dragging;
        move |ev: DragEvent| {
            // Moving onto a child fires dragleave on the area too.
            let inside = match (ev.current_target(), ev.related_target()) {
                (Some(area), Some(to)) => area
                    .dyn_ref::<web_sys::Node>()
                    .is_some_and(|area| area.contains(to.dyn_ref::<web_sys::Node>())),
                _ => false,
            };
            if !inside {
                dragging.set(false);
            }
        }
    }

    /// Dropped files: pictures go to the model when one is set up,
    /// everything else to the next code run.
    pub fn on_drop(self, pictures: Pictures) -> impl Fn(DragEvent) + Copy + 'static {
        let this = self;
        move |ev: DragEvent| {
            this.dragging.set(false);
            let Some(list) = ev.data_transfer().and_then(|d| d.files()) else {
                return;
            };
            ev.prevent_default();
            let files: Vec<File> = (0..list.length()).filter_map(|i| list.get(i)).collect();
            let (images, others): (Vec<File>, Vec<File>) = files
                .into_iter()
                .partition(|f| pictures.wanted() && ACCEPTED_TYPES.contains(&f.type_().as_str()));
            if !images.is_empty() {
                pictures.add(images);
            }
            this.add(others);
        }
    }

    pub fn dragging(self) -> bool {
        self.dragging.get()
    }
}

fn carries_files(ev: &DragEvent) -> bool {
    ev.data_transfer()
        .map(|d| {
            d.types()
                .iter()
                .any(|t| t.as_string().as_deref() == Some("Files"))
        })
        .unwrap_or(false)
}

pub fn use_attachments() -> Attachments {
    expect_context::<Attachments>()
}

/// The paperclip button beside the composer.
#[component]
pub fn AttachButton() -> impl IntoView {
    let attachments = use_attachments();
    view! {
        <button
            type="button"
            class="icon-button attach-button"
            aria-label="Attach files"
            title="Attach files for code to read"
            disabled=move || attachments.busy.get()
            on:click=move |_| attachments.pick()
        >
            <Icon name="paperclip"/>
        </button>
    }
}

/// The files waiting for the next code run, above the composer.
#[component]
pub fn AttachmentList() -> impl IntoView {
    let attachments = use_attachments();
    let items = attachments.items;
    view! {
        <Show when=move || !items.with(Vec::is_empty) || attachments.busy.get() || attachments.message.with(Option::is_some)>
            <div class="attachments" data-testid="attachments">
                <ul class="attachment-list" aria-label="Attached files">
                    {move || items.get().into_iter().map(|a| {
                        let name = a.name.clone();
                        let size = hearth_core::util::display::bytes(a.bytes as f64);
                        view! {
                            <li class="attachment" data-attachment=name.clone()>
                                <Icon name="file"/>
                                <span class="attachment-name">{name.clone()}</span>
                                <span class="muted">{size}</span>
                                <button
                                    type="button"
                                    class="icon-button"
                                    aria-label=format!("Remove {name}")
                                    on:click=move |_| attachments.remove(a.clone())
                                >
                                    <Icon name="x"/>
                                </button>
                            </li>
                        }
                    }).collect_view()}
                    <Show when=move || attachments.busy.get()>
                        <li class="attachment muted" role="status">"Attaching…"</li>
                    </Show>
                </ul>
                <Show when=move || !items.with(Vec::is_empty)>
                    <p class="hint">{move || {
                        let first = items.with(|i| i.first().map(|a| a.name.clone()).unwrap_or_default());
                        format!(
                            "Goes to the next code run under /mnt/data (e.g. /mnt/data/{first}); readable by name until revoked in Settings → Files."
                        )
                    }}</p>
                </Show>
                <Show when=move || attachments.message.with(Option::is_some)>
                    <p class="inline-error" role="alert">{move || attachments.message.get().unwrap_or_default()}</p>
                </Show>
            </div>
        </Show>
    }
}
