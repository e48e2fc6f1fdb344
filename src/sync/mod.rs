//! Sync across devices, as the rest of the app sees it: whether it is on,
//! its status, and the background rounds. The work itself (Automerge, the
//! vault, the bucket) is in `engine.rs`, a chunk fetched only once sync is
//! on, so this half stays small and in the first load.
//!
//! Rounds run while the tab is open: soon after notes, tasks, memories or
//! conversations change, when the tab comes back into view or the network returns, and
//! every 30 seconds. A failed round waits longer each time (up to five
//! minutes) before the timer tries again; a change or a click on Sync now
//! still tries at once. Rounds never overlap, and none blocks typing: the
//! records are read in one pass, and the network waits are awaits.

mod engine;

use std::cell::Cell;
use std::rc::Rc;

use futures::future::LocalBoxFuture;
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

use crate::assistant::Assistant;
use crate::runtime::Runtime;
use crate::split::{LoadError, not_loaded};

/// Local storage's note that sync is on here: read at start, before any of
/// sync's code is fetched, so a device without sync never fetches it.
const ON_KEY: &str = "hearth.sync.on";
const EVERY_MS: u32 = 30_000;
const LONGEST_WAIT_MS: u32 = 300_000;
/// Changes made in a burst (typing a note) go up in one round.
const SETTLE_MS: u32 = 1_500;
const TICK_MS: u32 = 500;

/// What Settings asks for to set sync up.
#[derive(Clone, Debug, Default)]
pub struct Form {
    pub endpoint: String,
    pub region: String,
    pub bucket: String,
    pub access_key_id: String,
    pub secret_access_key: String,
    pub device_name: String,
    pub passphrase: String,
    /// A recovery key, typed instead of the passphrase.
    pub recovery: String,
}

/// Sync set up on this device.
#[derive(Clone, Debug)]
pub struct Connected {
    /// Shown once, when this device made the vault.
    pub recovery_key: Option<String>,
    pub devices: usize,
}

/// A device of the vault, as Settings lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceRow {
    pub name: String,
    pub added_ms: f64,
    pub this_device: bool,
}

/// A record waiting for the person.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attention {
    /// The document id (`note:<id>`).
    pub doc: String,
    pub title: String,
    /// Deleted on one device while another edited it.
    pub deleted_while_edited: bool,
    pub conflicts: Vec<ConflictRow>,
}

/// A field two devices set apart, with every value it holds (as JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConflictRow {
    pub field: Vec<String>,
    pub values: Vec<String>,
}

/// The person's answer for a record that waits.
#[derive(Clone, Debug, PartialEq)]
pub enum Resolve {
    /// Keep the record that was deleted elsewhere.
    Keep,
    /// Let the delete stand.
    Delete,
    /// Keep this value (JSON) of the field.
    Choose { field: Vec<String>, value: String },
}

/// Where this device syncs.
#[derive(Clone, Debug, PartialEq)]
pub struct Setup {
    pub endpoint: String,
    pub bucket: String,
    pub device_name: String,
    pub devices: Vec<DeviceRow>,
    pub last_ok_ms: Option<f64>,
    pub attention: Vec<Attention>,
}

/// What a round did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    pub error: Option<String>,
    /// The store did not answer.
    pub offline: bool,
    /// Records changed here and not in the bucket yet.
    pub waiting: usize,
    pub pushed: usize,
    pub pulled: usize,
    pub changed: usize,
    /// Objects or records refused, with why.
    pub refused: Vec<String>,
    pub last_ok_ms: Option<f64>,
    pub devices: Vec<DeviceRow>,
    pub attention: Vec<Attention>,
}

impl Outcome {
    fn failed(error: String, waiting: usize) -> Self {
        Outcome {
            error: Some(error),
            waiting,
            ..Outcome::default()
        }
    }
}

/// Sync's state, for the status shown in the sidebar and in Settings.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    Off,
    Syncing,
    Synced {
        at_ms: f64,
    },
    /// Changes wait for the store (offline, or it failed).
    Waiting {
        count: usize,
        why: String,
    },
    Failed(String),
}

impl Status {
    /// The sidebar's words.
    pub fn short(&self) -> String {
        match self {
            Status::Off => String::new(),
            Status::Syncing => "Syncing…".into(),
            Status::Synced { .. } => "Synced".into(),
            Status::Waiting { count: 0, .. } => "Sync paused".into(),
            Status::Waiting { count: 1, .. } => "1 change waiting".into(),
            Status::Waiting { count, .. } => format!("{count} changes waiting"),
            Status::Failed(_) => "Sync failed".into(),
        }
    }
}

struct Inner {
    rt: Runtime,
    /// Holds the conversations, which sync reads and updates like the
    /// runtime's records.
    assistant: Assistant,
    status: RwSignal<Status>,
    /// The last round's refusals and what it did, for Settings.
    last: RwSignal<Option<Outcome>>,
    /// Rounds finished since the tab opened.
    rounds: RwSignal<u64>,
    running: Cell<bool>,
    started: Cell<bool>,
    /// When a wake asked for the next round (`Date.now()`), if one did.
    woken_at: Rc<Cell<Option<f64>>>,
}

/// The app's sync service, in context.
#[derive(Clone)]
pub struct Sync(send_wrapper::SendWrapper<Rc<Inner>>);

pub fn use_sync() -> Sync {
    expect_context::<Sync>()
}

fn local_storage() -> Option<web_sys::Storage> {
    web_sys::window().and_then(|w| w.local_storage().ok().flatten())
}

fn is_on() -> bool {
    local_storage()
        .and_then(|s| s.get_item(ON_KEY).ok().flatten())
        .is_some_and(|v| v == "1")
}

fn set_on(on: bool) {
    if let Some(s) = local_storage() {
        let _ = if on {
            s.set_item(ON_KEY, "1")
        } else {
            s.remove_item(ON_KEY)
        };
    }
}

impl Sync {
    /// The service; its rounds start at once where sync is on.
    pub fn start(rt: Runtime, assistant: Assistant) -> Sync {
        let sync = Sync(send_wrapper::SendWrapper::new(Rc::new(Inner {
            rt,
            assistant,
            status: RwSignal::new(Status::Off),
            last: RwSignal::new(None),
            rounds: RwSignal::new(0),
            running: Cell::new(false),
            started: Cell::new(false),
            woken_at: Rc::new(Cell::new(None)),
        })));
        sync.listen();
        if is_on() {
            sync.run_loop();
        }
        sync
    }

    /// Wakes the loop when synced data changes, the tab is shown again or
    /// the network returns. Set up once, at start, inside the app's
    /// reactive owner; while sync is off nothing reads the wakes.
    fn listen(&self) {
        let inner = &self.0;
        // Every change to synced data asks for a round.
        let versions = inner.rt.versions();
        let conversations = inner.assistant.conversations;
        let woken = inner.woken_at.clone();
        Effect::new(move |first: Option<()>| {
            versions.notes.track();
            versions.tasks.track();
            versions.memories.track();
            conversations.track();
            if first.is_some() {
                wake_at(&woken);
            }
        });
        if let Some(w) = web_sys::window() {
            for event in ["online", "focus"] {
                let woken = inner.woken_at.clone();
                let cb = Closure::<dyn Fn()>::new(move || wake_at(&woken));
                let _ = w.add_event_listener_with_callback(event, cb.as_ref().unchecked_ref());
                cb.forget();
            }
        }
    }

    pub fn status(&self) -> RwSignal<Status> {
        self.0.status
    }

    pub fn last(&self) -> RwSignal<Option<Outcome>> {
        self.0.last
    }

    pub fn rounds(&self) -> RwSignal<u64> {
        self.0.rounds
    }

    /// A round now; when one is running, another right after it.
    pub async fn sync_now(&self) {
        if self.round().await.is_none() {
            self.wake();
        }
    }

    pub fn is_on(&self) -> bool {
        is_on()
    }

    /// Asks for a round soon.
    pub fn wake(&self) {
        wake_at(&self.0.woken_at);
    }

    /// Sets sync up with the form's store and vault, then runs a first
    /// round.
    pub async fn connect(&self, form: Form) -> Result<Connected, String> {
        let connected = match connect_in_chunk(form).await {
            Ok(running) => running.await?,
            Err(LoadError) => return Err(not_loaded("sync")),
        };
        set_on(true);
        self.run_loop();
        self.wake();
        Ok(connected)
    }

    /// Turns sync off here; the records stay.
    pub async fn turn_off(&self) -> Result<(), String> {
        // No round starts from here on, and the one running (which holds
        // sync's database) ends first.
        set_on(false);
        while self.0.running.get() {
            gloo_timers::future::TimeoutFuture::new(100).await;
        }
        let off = match off_in_chunk().await {
            Ok(running) => running.await,
            Err(LoadError) => Err(not_loaded("sync")),
        };
        if let Err(e) = off {
            set_on(true);
            self.run_loop();
            return Err(e);
        }
        self.0.status.set(Status::Off);
        self.0.last.set(None);
        Ok(())
    }

    /// Answers a record that waits, then sends the answer in a round.
    pub async fn resolve(&self, doc: String, how: Resolve) -> Result<(), String> {
        match resolve_in_chunk(self.0.rt.clone(), self.0.assistant.clone(), doc, how).await {
            Ok(running) => running.await?,
            Err(LoadError) => return Err(not_loaded("sync")),
        }
        self.wake();
        Ok(())
    }

    pub async fn setup(&self) -> Option<Setup> {
        if !is_on() {
            return None;
        }
        setup_in_chunk().await.ok()?.await
    }

    /// One round now, unless one is running.
    pub async fn round(&self) -> Option<Outcome> {
        let inner = &self.0;
        if inner.running.replace(true) {
            return None;
        }
        inner.status.set(Status::Syncing);
        let outcome = match round_in_chunk(inner.rt.clone(), inner.assistant.clone()).await {
            Ok(running) => running.await,
            Err(LoadError) => Outcome::failed(not_loaded("sync"), 0),
        };
        inner.running.set(false);
        if !is_on() {
            inner.status.set(Status::Off);
            return Some(outcome);
        }
        inner.status.set(match (&outcome.error, outcome.offline) {
            (None, _) => Status::Synced {
                at_ms: outcome.last_ok_ms.unwrap_or_else(js_sys::Date::now),
            },
            (Some(why), true) => Status::Waiting {
                count: outcome.waiting,
                why: why.clone(),
            },
            (Some(why), false) => Status::Failed(why.clone()),
        });
        inner.last.set(Some(outcome.clone()));
        inner.rounds.update(|n| *n += 1);
        Some(outcome)
    }

    /// The background rounds: on a wake, after the data changes, when the
    /// tab is shown or the network returns, and on the timer.
    fn run_loop(&self) {
        let inner = &self.0;
        if inner.started.replace(true) {
            return;
        }
        let sync = self.clone();
        spawn_local(async move {
            let mut wait = f64::from(EVERY_MS);
            // Wakes from while sync was off are stale.
            sync.0.woken_at.set(None);
            loop {
                if !is_on() {
                    sync.0.started.set(false);
                    return;
                }
                if let Some(outcome) = sync.round().await {
                    wait = if outcome.error.is_none() {
                        f64::from(EVERY_MS)
                    } else {
                        (wait * 2.0).min(f64::from(LONGEST_WAIT_MS))
                    };
                }
                // A tick each half second: the next round is due when the timer
                // has run out, or a wake has settled.
                let since = js_sys::Date::now();
                loop {
                    gloo_timers::future::TimeoutFuture::new(TICK_MS).await;
                    let now = js_sys::Date::now();
                    let woke = sync
                        .0
                        .woken_at
                        .get()
                        .is_some_and(|at| now - at >= f64::from(SETTLE_MS));
                    if woke || now - since >= wait || !is_on() {
                        break;
                    }
                }
                sync.0.woken_at.set(None);
            }
        });
    }
}

/// Asks for a round once changes settle; a later wake in a burst moves the
/// moment on.
fn wake_at(woken: &Cell<Option<f64>>) {
    woken.set(Some(js_sys::Date::now()));
}

// The engine's entry points: the `sync` chunk, fetched the first time
// one of them runs.
crate::split::split_point!(
    sync,
    fn connect_in_chunk(form: Form) -> LocalBoxFuture<'static, Result<Connected, String>> {
        Box::pin(engine::connect(form))
    }
);

crate::split::split_point!(
    sync,
    fn round_in_chunk(rt: Runtime, assistant: Assistant) -> LocalBoxFuture<'static, Outcome> {
        Box::pin(engine::round(rt, assistant))
    }
);

crate::split::split_point!(
    sync,
    fn resolve_in_chunk(
        rt: Runtime,
        assistant: Assistant,
        doc: String,
        how: Resolve,
    ) -> LocalBoxFuture<'static, Result<(), String>> {
        Box::pin(engine::resolve(rt, assistant, doc, how))
    }
);

crate::split::split_point!(
    sync,
    fn off_in_chunk() -> LocalBoxFuture<'static, Result<(), String>> {
        Box::pin(engine::turn_off())
    }
);

crate::split::split_point!(
    sync,
    fn setup_in_chunk() -> LocalBoxFuture<'static, Option<Setup>> {
        Box::pin(engine::describe_setup())
    }
);

/// The sidebar's line: nothing while sync is off, else its state, linked
/// to Settings.
#[component]
pub fn SyncIndicator() -> impl IntoView {
    let sync = use_sync();
    let status = sync.status();
    view! {
        <Show when=move || status.get() != Status::Off>
            <a class="sync-status" href="#/settings" data-testid="sync-status"
                class:failed=move || matches!(status.get(), Status::Failed(_))
                title=move || match status.get() {
                    Status::Failed(why) | Status::Waiting { why, .. } => why,
                    _ => String::new(),
                }>
                {move || status.get().short()}
            </a>
        </Show>
    }
}
