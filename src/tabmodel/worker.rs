//! The app's side of `public/tabmodel/worker.js`: one Worker, started on
//! first use, that runs the model with Hearth's build of llama.cpp.
//! Requests are numbered; each gets a channel of the worker's messages for
//! it.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use js_sys::{Object, Reflect};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;
use wasm_bindgen::{JsValue, UnwrapThrowExt};
use web_sys::{MessageEvent, Worker};

/// Where the app serves the worker.
pub const WORKER_URL: &str = "/tabmodel/worker.js";

/// What the worker says about one request.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// `phase` is "runtime" (the engine's bytes), "model" (the GGUF
    /// file's bytes), "threads" (measuring thread counts, in steps) or
    /// "prompt" (the prompt's tokens read so far).
    Progress {
        phase: String,
        loaded: f64,
        total: f64,
    },
    Loaded {
        model: String,
        ms: f64,
        threads: u32,
        context: u64,
    },
    /// One line of the reply: a chunk, or an error object.
    Line(String),
    /// The request is over.
    Done,
}

/// What to load and how.
#[derive(Clone, Debug, PartialEq)]
pub struct Load {
    pub model: String,
    pub context: u64,
    /// `None`: the worker measures which count is fastest here.
    pub threads: Option<u32>,
}

type Senders = Rc<RefCell<HashMap<u64, UnboundedSender<Event>>>>;

struct Running {
    worker: Worker,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::ErrorEvent)>,
}

/// The worker, started on first use.
#[derive(Default)]
pub struct TabWorker {
    running: RefCell<Option<Running>>,
    senders: Senders,
    next: Cell<u64>,
}

fn field(data: &JsValue, key: &str) -> JsValue {
    Reflect::get(data, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

fn error_line(kind: &str, message: &str) -> String {
    serde_json::json!({"error": {"type": kind, "message": message}}).to_string()
}

impl TabWorker {
    fn worker(&self) -> Result<Worker, String> {
        if let Some(r) = self.running.borrow().as_ref() {
            return Ok(r.worker.clone());
        }
        // A classic worker: the engine's Emscripten script loads with
        // importScripts, as its own threads load it.
        let worker = Worker::new(WORKER_URL)
            .map_err(|e| format!("the model's worker could not start: {e:?}"))?;
        let senders = self.senders.clone();
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            let data = e.data();
            let Some(id) = field(&data, "id").as_f64().map(|n| n as u64) else {
                return;
            };
            let kind = field(&data, "type").as_string().unwrap_or_default();
            let event = match kind.as_str() {
                "progress" => Event::Progress {
                    phase: field(&data, "phase").as_string().unwrap_or_default(),
                    loaded: field(&data, "loaded").as_f64().unwrap_or(0.0),
                    total: field(&data, "total").as_f64().unwrap_or(0.0),
                },
                "loaded" => Event::Loaded {
                    model: field(&data, "model").as_string().unwrap_or_default(),
                    ms: field(&data, "ms").as_f64().unwrap_or(0.0),
                    threads: field(&data, "threads").as_f64().unwrap_or(1.0) as u32,
                    context: field(&data, "context").as_f64().unwrap_or(0.0) as u64,
                },
                "line" => Event::Line(field(&data, "line").as_string().unwrap_or_default()),
                "done" | "unloaded" => Event::Done,
                _ => return,
            };
            let done = event == Event::Done;
            let mut senders = senders.borrow_mut();
            if let Some(tx) = senders.get(&id) {
                let _ = tx.unbounded_send(event);
            }
            if done {
                senders.remove(&id);
            }
        });
        let senders = self.senders.clone();
        let on_error =
            Closure::<dyn FnMut(web_sys::ErrorEvent)>::new(move |e: web_sys::ErrorEvent| {
                // The worker failed to start or crashed: every open request
                // ends with an error the chat can show.
                e.prevent_default();
                let message = e.message();
                for (_, tx) in senders.borrow_mut().drain() {
                    let _ = tx.unbounded_send(Event::Line(error_line(
                        "load_error",
                        &format!("the model's worker failed: {message}"),
                    )));
                    let _ = tx.unbounded_send(Event::Done);
                }
            });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        *self.running.borrow_mut() = Some(Running {
            worker: worker.clone(),
            _on_message: on_message,
            _on_error: on_error,
        });
        Ok(worker)
    }

    fn send(&self, message: &Object) -> Result<(), String> {
        let worker = self.worker()?;
        worker.post_message(message).map_err(|e| format!("{e:?}"))
    }

    fn request(
        &self,
        kind: &str,
        load: &Load,
        body: Option<&str>,
    ) -> (u64, UnboundedReceiver<Event>) {
        let id = self.next.get() + 1;
        self.next.set(id);
        let (tx, rx) = unbounded();
        self.senders.borrow_mut().insert(id, tx.clone());
        let message = Object::new();
        let set = |k: &str, v: JsValue| {
            Reflect::set(&message, &k.into(), &v).unwrap_throw();
        };
        set("type", kind.into());
        set("id", JsValue::from_f64(id as f64));
        set("model", load.model.as_str().into());
        set("context", JsValue::from_f64(load.context as f64));
        if let Some(t) = load.threads {
            set("threads", JsValue::from_f64(f64::from(t)));
        }
        if let Some(body) = body {
            match js_sys::JSON::parse(body) {
                Ok(v) => set("body", v),
                Err(_) => {
                    let _ = tx.unbounded_send(Event::Line(error_line(
                        "inference_error",
                        "the request was not JSON",
                    )));
                    let _ = tx.unbounded_send(Event::Done);
                    return (id, rx);
                }
            }
        }
        if let Err(e) = self.send(&message) {
            self.senders.borrow_mut().remove(&id);
            let _ = tx.unbounded_send(Event::Line(error_line("load_error", &e)));
            let _ = tx.unbounded_send(Event::Done);
        }
        (id, rx)
    }

    /// Runs an OpenAI-style chat body, loading the model first if needed.
    pub fn chat(&self, load: &Load, body: &str) -> (u64, UnboundedReceiver<Event>) {
        self.request("chat", load, Some(body))
    }

    /// Loads a model without asking it anything.
    pub fn load(&self, load: &Load) -> (u64, UnboundedReceiver<Event>) {
        self.request("load", load, None)
    }

    /// Interrupts request `id` at the next token.
    pub fn stop(&self, id: u64) {
        let message = Object::new();
        let _ = Reflect::set(&message, &"type".into(), &"stop".into());
        let _ = Reflect::set(&message, &"id".into(), &JsValue::from_f64(id as f64));
        if self.running.borrow().is_some() {
            let _ = self.send(&message);
        }
    }

    /// Frees the loaded model (before its file is deleted); resolves when
    /// the worker has let go of it.
    pub async fn unload(&self) {
        if self.running.borrow().is_none() {
            return;
        }
        let (_, mut rx) = self.request(
            "unload",
            &Load {
                model: String::new(),
                context: 0,
                threads: None,
            },
            None,
        );
        use futures::StreamExt;
        while let Some(e) = rx.next().await {
            if e == Event::Done {
                break;
            }
        }
    }
}
