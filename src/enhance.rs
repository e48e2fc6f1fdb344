//! Highlighted code and math in chat replies. The highlighter and the
//! LaTeX converter live in `enhance.js`, which loads them on first use; this
//! side keeps what they answered (checked by core's `markdown::safe` first)
//! and bumps a version each time something arrives, so the replies showing
//! it render again. Rendering itself is core's `to_chat_html_with`.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use hearth_markdown::{Enhance, MathState, Pending, SafeHtml, safe};
use leptos::prelude::*;
use send_wrapper::SendWrapper;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, spawn_local};

#[wasm_bindgen(module = "/src/enhance.js")]
extern "C" {
    #[wasm_bindgen(js_name = highlightCode)]
    fn highlight_code_js(language: &str, code: &str) -> js_sys::Promise;
    #[wasm_bindgen(js_name = mathToMathml)]
    fn math_to_mathml_js(tex: &str, display: bool) -> js_sys::Promise;
}

#[derive(Default)]
struct Cache {
    /// `None`: the highlighter has no such language, or could not load.
    code: HashMap<(String, String), Option<SafeHtml>>,
    math: HashMap<(String, bool), MathState>,
    asked: HashSet<Pending>,
}

/// What the highlighter and the converter answered so far. Cheap to clone.
#[derive(Clone)]
pub struct Enhancer {
    cache: SendWrapper<Rc<RefCell<Cache>>>,
    /// Bumped whenever an answer arrives.
    pub version: RwSignal<u64>,
}

impl Enhance for Enhancer {
    fn code(&self, language: &str, code: &str) -> Option<SafeHtml> {
        self.cache
            .borrow()
            .code
            .get(&(language.to_string(), code.to_string()))
            .cloned()
            .flatten()
    }

    fn math(&self, tex: &str, display: bool) -> MathState {
        self.cache
            .borrow()
            .math
            .get(&(tex.to_string(), display))
            .cloned()
            .unwrap_or(MathState::NotYet)
    }
}

async fn answer(promise: js_sys::Promise) -> Option<String> {
    JsFuture::from(promise)
        .await
        .ok()
        .and_then(|v| v.as_string())
}

impl Enhancer {
    pub fn new() -> Self {
        Self {
            cache: SendWrapper::new(Rc::default()),
            version: RwSignal::new(0),
        }
    }

    /// Asks for each of `pending` not asked for before.
    pub fn request(&self, pending: &[Pending]) {
        for item in pending {
            if !self.cache.borrow_mut().asked.insert(item.clone()) {
                continue;
            }
            let this = self.clone();
            let item = item.clone();
            spawn_local(async move {
                match item {
                    Pending::Code { language, code } => {
                        let html = answer(highlight_code_js(&language, &code)).await;
                        let safe = html.and_then(|h| safe::highlighted(&code, &h));
                        this.cache.borrow_mut().code.insert((language, code), safe);
                    }
                    Pending::Math { tex, display } => {
                        let mathml = answer(math_to_mathml_js(&tex, display)).await;
                        let state = match mathml.and_then(|m| safe::mathml(&m)) {
                            Some(safe) => MathState::Ready(safe),
                            None => MathState::Failed,
                        };
                        this.cache.borrow_mut().math.insert((tex, display), state);
                    }
                }
                this.version.update(|v| *v += 1);
            });
        }
    }
}

impl Default for Enhancer {
    fn default() -> Self {
        Self::new()
    }
}

/// The app's one enhancer, provided by `App`.
pub fn use_enhancer() -> Enhancer {
    expect_context::<Enhancer>()
}
