//! The installable app's page half: registers the service worker
//! (`public/sw.js`), tells the app when a new version waits ("Reload to
//! update") or when another tab moved to one, answers the worker's
//! questions (which build this tab runs), and reports what is cached for
//! offline use, the Python runtime included.
//!
//! Nothing updates behind the person's back: a waiting version activates
//! only through [`Pwa::apply_update`].

use std::cell::Cell;
use std::rc::Rc;

use futures::channel::oneshot;
use leptos::prelude::*;
use serde::Deserialize;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{MessageEvent, ServiceWorker, ServiceWorkerContainer, ServiceWorkerRegistration};

/// The token `cargo xtask precache` replaces with the build id.
const DEV_BUILD: &str = "hearth-build-dev";
/// How often an open tab asks whether a new version is out.
const UPDATE_CHECK_MS: u32 = 30 * 60 * 1000;

/// Whether a new version is waiting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    None,
    /// Installed and waiting: "Reload to update".
    Ready,
    /// Another tab switched to a newer version; this one still runs the old.
    ElsewhereActive,
}

/// How ready the app is to run offline.
#[derive(Clone, Debug, PartialEq)]
pub enum Offline {
    /// This browser has no service workers (or this is not a secure page).
    Unsupported,
    /// A development build: `cargo xtask precache` did not run.
    DevBuild,
    Checking,
    Installing {
        done: u32,
        total: u32,
    },
    Ready {
        files: u32,
    },
    Failed(String),
}

/// The Python runtime's offline copy.
#[derive(Clone, Debug, PartialEq)]
pub enum PythonCache {
    Unknown,
    /// This build has no Python runtime.
    NotInBuild,
    Missing {
        total_bytes: f64,
    },
    Downloading {
        loaded: f64,
        total: f64,
    },
    Ready {
        bytes: f64,
    },
    Failed {
        message: String,
        total_bytes: f64,
    },
}

/// The offline state, shared through context.
#[derive(Clone, Copy)]
pub struct Pwa {
    pub update: RwSignal<Update>,
    pub offline: RwSignal<Offline>,
    pub python: RwSignal<PythonCache>,
}

#[derive(Clone, Debug, Default, Deserialize)]
struct CacheCounts {
    #[serde(default)]
    cached: u32,
    #[serde(default)]
    total: u32,
    #[serde(default)]
    bytes: f64,
    #[serde(default)]
    total_bytes: f64,
    #[serde(default)]
    downloading: bool,
}

/// What the worker says about its caches.
#[derive(Clone, Debug, Default, Deserialize)]
struct WorkerStatus {
    #[serde(default)]
    build: Option<String>,
    #[serde(default)]
    shell: CacheCounts,
    #[serde(default)]
    python: CacheCounts,
    #[serde(default)]
    error: Option<String>,
}

/// This page's build id, from `<meta name="hearth-build">`.
pub fn build_id() -> String {
    web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector("meta[name=hearth-build]").ok().flatten())
        .and_then(|m| m.get_attribute("content"))
        .unwrap_or_else(|| DEV_BUILD.to_string())
}

fn container() -> Option<ServiceWorkerContainer> {
    let navigator = web_sys::window()?.navigator();
    let has = js_sys::Reflect::has(&navigator, &"serviceWorker".into()).unwrap_or(false);
    has.then(|| navigator.service_worker())
}

/// Whether Hearth's service worker controls this page, so the page's
/// same-origin requests (and navigations of frames it makes without a
/// sandbox attribute) go through it.
pub fn controls_this_page() -> bool {
    container().is_some_and(|c| c.controller().is_some())
}

fn get(v: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(v, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

fn num(v: &JsValue, key: &str) -> f64 {
    get(v, key).as_f64().unwrap_or(0.0)
}

thread_local! {
    /// Set when this tab asked for the update, so it reloads on the switch.
    static RELOADING: Cell<bool> = const { Cell::new(false) };
}

impl Pwa {
    fn new() -> Self {
        Self {
            update: RwSignal::new(Update::None),
            offline: RwSignal::new(Offline::Checking),
            python: RwSignal::new(PythonCache::Unknown),
        }
    }

    /// Activates the waiting version and reloads this tab into it.
    pub fn apply_update(&self) {
        let Some(c) = container() else { return };
        RELOADING.with(|r| r.set(true));
        wasm_bindgen_futures::spawn_local(async move {
            let Ok(reg) = ready(&c).await else {
                reload();
                return;
            };
            let reg: ServiceWorkerRegistration = reg.unchecked_into();
            match reg.waiting() {
                Some(waiting) => {
                    let msg = js_sys::Object::new();
                    let _ = js_sys::Reflect::set(&msg, &"type".into(), &"skip-waiting".into());
                    let _ = waiting.post_message(&msg);
                    // `controllerchange` reloads this tab.
                }
                // Already active (another tab moved first): just reload.
                None => reload(),
            }
        });
    }

    /// Asks the worker to fetch the Python runtime now.
    pub fn cache_python(&self) {
        let this = *self;
        wasm_bindgen_futures::spawn_local(async move {
            if let Some(s) = ask("cache-python").await {
                this.apply_status(&s);
            }
        });
    }

    /// Asks the worker what it has cached.
    pub fn refresh(&self) {
        let this = *self;
        wasm_bindgen_futures::spawn_local(async move {
            if let Some(s) = ask("status").await {
                this.apply_status(&s);
            }
        });
    }

    fn apply_status(&self, s: &WorkerStatus) {
        if let Some(e) = &s.error {
            self.offline.set(Offline::Failed(e.clone()));
            return;
        }
        if s.build.is_none() {
            return;
        }
        if s.shell.total > 0 && s.shell.cached == s.shell.total {
            self.offline.set(Offline::Ready {
                files: s.shell.total,
            });
        } else if s.shell.total > 0 {
            self.offline.set(Offline::Installing {
                done: s.shell.cached,
                total: s.shell.total,
            });
        }
        let p = &s.python;
        let next = if p.total == 0 {
            PythonCache::NotInBuild
        } else if p.cached == p.total {
            PythonCache::Ready {
                bytes: p.total_bytes,
            }
        } else if p.downloading {
            PythonCache::Downloading {
                loaded: p.bytes,
                total: p.total_bytes,
            }
        } else {
            match self.python.get_untracked() {
                PythonCache::Failed { message, .. } => PythonCache::Failed {
                    message,
                    total_bytes: p.total_bytes,
                },
                _ => PythonCache::Missing {
                    total_bytes: p.total_bytes,
                },
            }
        };
        self.python.set(next);
    }

    fn on_message(&self, ev: &MessageEvent) {
        let data = ev.data();
        match get(&data, "type").as_string().as_deref() {
            Some("which-build") => {
                let ports = ev.ports();
                if let Ok(port) = ports.get(0).dyn_into::<web_sys::MessagePort>() {
                    let reply = js_sys::Object::new();
                    let _ = js_sys::Reflect::set(&reply, &"build".into(), &build_id().into());
                    let _ = port.post_message(&reply);
                }
            }
            Some("install-progress") => {
                let (done, total) = (num(&data, "done") as u32, num(&data, "total") as u32);
                let ready = matches!(self.offline.get_untracked(), Offline::Ready { .. });
                if !ready {
                    self.offline.set(if done >= total {
                        Offline::Ready { files: total }
                    } else {
                        Offline::Installing { done, total }
                    });
                }
            }
            Some("python-progress") => {
                let (loaded, total) = (num(&data, "loaded"), num(&data, "total"));
                let error = get(&data, "error").as_string();
                let done = get(&data, "done").as_bool().unwrap_or(false);
                self.python.set(match (error, done) {
                    (Some(message), _) => PythonCache::Failed {
                        message,
                        total_bytes: total,
                    },
                    (None, true) => PythonCache::Ready { bytes: total },
                    (None, false) => PythonCache::Downloading { loaded, total },
                });
            }
            _ => {}
        }
    }
}

/// The registration once a worker is active.
async fn ready(c: &ServiceWorkerContainer) -> Result<JsValue, JsValue> {
    JsFuture::from(c.ready()?).await
}

fn reload() {
    if let Some(w) = web_sys::window() {
        let _ = w.location().reload();
    }
}

/// Sends `kind` to the active worker and waits (up to 10 s) for its answer.
async fn ask(kind: &str) -> Option<WorkerStatus> {
    let c = container()?;
    let reg: ServiceWorkerRegistration = ready(&c).await.ok()?.unchecked_into();
    let worker: ServiceWorker = reg.active()?;
    let channel = web_sys::MessageChannel::new().ok()?;
    let (tx, rx) = oneshot::channel::<JsValue>();
    let tx = Rc::new(Cell::new(Some(tx)));
    let on_reply = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        if let Some(tx) = tx.take() {
            let _ = tx.send(ev.data());
        }
    });
    channel
        .port1()
        .set_onmessage(Some(on_reply.as_ref().unchecked_ref()));
    let msg = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&msg, &"type".into(), &kind.into());
    worker
        .post_message_with_transferable(&msg, &js_sys::Array::of1(&channel.port2()))
        .ok()?;
    let timeout = gloo_timers::future::TimeoutFuture::new(10_000);
    let reply = futures::future::select(rx, timeout).await;
    drop(on_reply);
    match reply {
        futures::future::Either::Left((Ok(v), _)) => serde_wasm_bindgen::from_value(v).ok(),
        _ => None,
    }
}

fn listen(target: &web_sys::EventTarget, event: &str, f: impl FnMut(web_sys::Event) + 'static) {
    let f = Closure::<dyn FnMut(web_sys::Event)>::new(f);
    let _ = target.add_event_listener_with_callback(event, f.as_ref().unchecked_ref());
    f.forget();
}

/// Watches an installing worker; a worker that finishes installing while
/// this tab is controlled is a waiting update.
fn watch_installing(pwa: Pwa, c: &ServiceWorkerContainer, reg: &ServiceWorkerRegistration) {
    let Some(worker) = reg.installing() else {
        return;
    };
    let c = c.clone();
    let w = worker.clone();
    listen(&worker, "statechange", move |_| {
        if w.state() == web_sys::ServiceWorkerState::Installed && c.controller().is_some() {
            pwa.update.set(Update::Ready);
        }
    });
}

/// Registers the service worker and wires its events into signals.
pub fn start() -> Pwa {
    let pwa = Pwa::new();
    let Some(c) = container() else {
        pwa.offline.set(Offline::Unsupported);
        return pwa;
    };
    if build_id() == DEV_BUILD {
        // A development build serves itself; a worker left from a real build
        // would keep answering with that build's files.
        pwa.offline.set(Offline::DevBuild);
        wasm_bindgen_futures::spawn_local(async move {
            if let Ok(reg) = JsFuture::from(c.get_registration()).await
                && let Ok(reg) = reg.dyn_into::<ServiceWorkerRegistration>()
                && let Ok(p) = reg.unregister()
            {
                let _ = JsFuture::from(p).await;
            }
        });
        return pwa;
    }

    {
        let c2 = c.clone();
        listen(&c, "message", move |ev| {
            if let Ok(ev) = ev.dyn_into::<MessageEvent>() {
                pwa.on_message(&ev);
            }
            let _ = &c2;
        });
    }
    let had_controller = c.controller().is_some();
    listen(&c, "controllerchange", move |_| {
        if RELOADING.with(|r| r.get()) {
            reload();
        } else if had_controller {
            pwa.update.set(Update::ElsewhereActive);
        } else {
            // The first install just took control of this tab.
            pwa.refresh();
        }
    });
    // Deliver the worker's messages now (not only after the page loads).
    if let Ok(start) = js_sys::Reflect::get(&c, &"startMessages".into())
        && let Ok(f) = start.dyn_into::<js_sys::Function>()
    {
        let _ = f.call0(&c);
    }

    wasm_bindgen_futures::spawn_local(async move {
        let options = web_sys::RegistrationOptions::new();
        options.set_scope("/");
        options.set_update_via_cache(web_sys::ServiceWorkerUpdateViaCache::None);
        let reg = match JsFuture::from(c.register_with_options("/sw.js", &options)).await {
            Ok(r) => match r.dyn_into::<ServiceWorkerRegistration>() {
                Ok(reg) => reg,
                // Something stood in for the browser's own register() (an
                // extension, an automation tool) and registered nothing.
                Err(_) => {
                    pwa.offline.set(Offline::Failed(
                        "the browser registered no service worker".into(),
                    ));
                    return;
                }
            },
            Err(e) => {
                let text = e
                    .dyn_ref::<js_sys::Error>()
                    .map(|x| String::from(x.message()))
                    .unwrap_or_else(|| format!("{e:?}"));
                pwa.offline.set(Offline::Failed(text));
                return;
            }
        };
        if reg.waiting().is_some() && c.controller().is_some() {
            pwa.update.set(Update::Ready);
        }
        watch_installing(pwa, &c, &reg);
        {
            let (c, r) = (c.clone(), reg.clone());
            listen(&reg, "updatefound", move |_| watch_installing(pwa, &c, &r));
        }
        // Check for a new version now and then, and when the tab comes back.
        {
            let r = reg.clone();
            gloo_timers::callback::Interval::new(UPDATE_CHECK_MS, move || {
                let _ = r.update();
            })
            .forget();
        }
        if let Some(w) = web_sys::window() {
            let r = reg.clone();
            listen(&w, "online", move |_| {
                let _ = r.update();
            });
            if let Some(d) = w.document() {
                let r = reg.clone();
                let d2 = d.clone();
                listen(&d, "visibilitychange", move |_| {
                    if d2.visibility_state() == web_sys::VisibilityState::Visible {
                        let _ = r.update();
                    }
                });
            }
        }
        // Once a worker is active: say hello (it tidies old caches) and
        // learn what is cached. The Python runtime is not fetched here: it
        // is large, so it is cached on first use or on "Download now".
        if ready(&c).await.is_ok() {
            if let Some(active) = reg.active() {
                let hello = js_sys::Object::new();
                let _ = js_sys::Reflect::set(&hello, &"type".into(), &"hello".into());
                let _ = active.post_message(&hello);
            }
            if let Some(s) = ask("status").await {
                pwa.apply_status(&s);
            }
        }
    });
    pwa
}

pub fn use_pwa() -> Pwa {
    expect_context::<Pwa>()
}
