//! Pictures for the model: pasted, dropped or picked in the composer,
//! prepared in the tab (drawn again at a bounded size, which leaves the
//! file's metadata behind), shown as thumbnails that can be taken off, and
//! sent with the next message. The preparing code is the `pictures`
//! chunk, fetched with the first picture.

use futures::future::LocalBoxFuture;
use hearth_core::assistant::providers::images::{self, ImagePart};
use hearth_core::assistant::providers::{ProviderConfig, Vision};
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::File;

use crate::icons::Icon;
use crate::shared::picture::Picture;

/// A PNG larger than this after drawing is sent as JPEG instead.
const MAX_PNG_BYTES: u32 = 2 * 1024 * 1024;

/// The pictures waiting for the next message; provided by the chat view.
#[derive(Clone, Copy)]
pub struct Pictures {
    items: RwSignal<Vec<ImagePart>>,
    /// Pictures still being prepared.
    preparing: RwSignal<usize>,
    message: RwSignal<Option<String>>,
    /// The provider in use: whether pictures have anywhere to go, and
    /// whether its model sees them.
    provider: RwSignal<Option<ProviderConfig>>,
}

impl Pictures {
    pub fn new(provider: RwSignal<Option<ProviderConfig>>) -> Self {
        Pictures {
            items: RwSignal::new(Vec::new()),
            preparing: RwSignal::new(0),
            message: RwSignal::new(None),
            provider,
        }
    }

    /// Whether pictures are attached (untracked).
    pub fn any(&self) -> bool {
        self.items.with_untracked(|i| !i.is_empty())
    }

    /// Whether a dropped or pasted picture is for the model: only when one
    /// is set up; otherwise it goes to code, like any file.
    pub fn wanted(&self) -> bool {
        self.provider.with_untracked(Option::is_some)
    }

    /// Takes the pictures for a message being sent.
    pub fn take(&self) -> Vec<ImagePart> {
        self.message.set(None);
        self.items.try_update(std::mem::take).unwrap_or_default()
    }

    /// Puts back the pictures of a message that was not sent.
    pub fn put_back(&self, pictures: Vec<ImagePart>) {
        if pictures.is_empty() {
            return;
        }
        let _ = self.items.try_update(|items| {
            let mut back = pictures;
            back.append(items);
            *items = back;
        });
    }

    /// Prepares `files` as pictures, each checked first against the
    /// limits; one that cannot be attached says why and the rest go on.
    pub fn add(self, files: Vec<File>) {
        let mut refused = Vec::new();
        for file in files {
            let already = self.items.with_untracked(Vec::len) + self.preparing.get_untracked();
            let name = file.name();
            if let Some(why) = images::refusal(&name, &file.type_(), file.size() as u64, already) {
                refused.push(why);
                continue;
            }
            self.preparing.update(|n| *n += 1);
            spawn_local(async move {
                let prepared = crate::split::enter(prepare_in_chunk(file), || {
                    crate::split::not_loaded("pictures")
                })
                .await;
                let _ = self.preparing.try_update(|n| *n = n.saturating_sub(1));
                match prepared {
                    Ok(part) => {
                        let _ = self.items.try_update(|items| items.push(part));
                    }
                    Err(e) => {
                        let _ = self.message.try_set(Some(e));
                    }
                }
            });
        }
        self.message
            .set((!refused.is_empty()).then(|| refused.join(" ")));
    }

    /// The person's own words for what picture `index` shows.
    fn describe(self, index: usize, text: String) {
        self.items.update(|items| {
            if let Some(item) = items.get_mut(index) {
                item.alt = text;
            }
        });
    }

    fn remove(self, index: usize) {
        self.items.update(|items| {
            if index < items.len() {
                items.remove(index);
            }
        });
        self.message.set(None);
    }

    /// The files of a paste, when it carries pictures for the model.
    pub fn from_paste(&self, ev: &web_sys::ClipboardEvent) -> Option<Vec<File>> {
        if !self.wanted() {
            return None;
        }
        let list = ev.clipboard_data()?.files()?;
        let files: Vec<File> = (0..list.length())
            .filter_map(|i| list.get(i))
            .filter(|f| f.type_().starts_with("image/"))
            .collect();
        (!files.is_empty()).then_some(files)
    }
}

pub fn use_pictures() -> Pictures {
    expect_context::<Pictures>()
}

#[wasm_bindgen(module = "/src/views/chat/pictures.js")]
extern "C" {
    #[wasm_bindgen(js_name = decodePicture)]
    fn decode_picture(file: &File) -> js_sys::Promise;
    #[wasm_bindgen(js_name = encodePicture)]
    fn encode_picture(
        bitmap: &JsValue,
        width: u32,
        height: u32,
        png: bool,
        max_png: u32,
    ) -> js_sys::Promise;
}

crate::split::split_point!(
    pictures,
    fn prepare_in_chunk(file: File) -> LocalBoxFuture<'static, Result<ImagePart, String>> {
        Box::pin(prepare(file))
    }
);

fn number(value: &JsValue, key: &str) -> u32 {
    js_sys::Reflect::get(value, &JsValue::from_str(key))
        .ok()
        .and_then(|v| v.as_f64())
        .unwrap_or(0.0) as u32
}

fn text(value: &JsValue, key: &str) -> String {
    js_sys::Reflect::get(value, &JsValue::from_str(key))
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default()
}

/// Decodes `file` and draws it again, at most [`images::MAX_EDGE`] on its
/// longest side: screenshots and GIFs as PNG, photos as JPEG.
async fn prepare(file: File) -> Result<ImagePart, String> {
    let name = file.name();
    let unreadable =
        |_| format!("{name} could not be read as a picture; it may be damaged or of another kind.");
    let bitmap = JsFuture::from(decode_picture(&file))
        .await
        .map_err(unreadable)?;
    let (width, height) = images::fitted(number(&bitmap, "width"), number(&bitmap, "height"));
    let png = matches!(file.type_().as_str(), "image/png" | "image/gif");
    let encoded = JsFuture::from(encode_picture(&bitmap, width, height, png, MAX_PNG_BYTES))
        .await
        .map_err(|e| {
            let why = e
                .dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
                .unwrap_or_default();
            format!("{name} could not be prepared: {why}")
        })?;
    let alt = if name.trim().is_empty() {
        "Pasted picture".to_string()
    } else {
        name
    };
    Ok(ImagePart {
        media_type: text(&encoded, "type"),
        data: text(&encoded, "data"),
        alt,
        width,
        height,
    })
}

/// The pictures waiting above the composer: thumbnails to take off, the
/// ones still being prepared, and a word when the model cannot see them.
#[component]
pub fn PictureTray() -> impl IntoView {
    let pictures = use_pictures();
    let items = pictures.items;
    let shown = move || {
        !items.with(Vec::is_empty)
            || pictures.preparing.get() > 0
            || pictures.message.with(Option::is_some)
    };
    // Said before sending, not after a failed request.
    let cannot_see = move || {
        if items.with(Vec::is_empty) {
            return None;
        }
        pictures
            .provider
            .with(|p| match p.as_ref().map(ProviderConfig::vision) {
                Some(Vision::Sees) | None => None,
                Some(Vision::Blind(why) | Vision::Unknown(why)) => Some(why),
            })
    };
    view! {
        <Show when=shown>
            <div class="picture-tray" data-testid="picture-tray">
                <ul class="picture-list" aria-label="Pictures for the next message">
                    {move || items.get().into_iter().enumerate().map(|(i, part)| {
                        let alt = part.alt.clone();
                        view! {
                            <li class="picture-item">
                                <Picture
                                    part=part
                                    class="picture-thumb"
                                    describe=Callback::new(move |text: String| {
                                        // After the event that gave the words: the
                                        // change redraws the tray, which must not
                                        // happen under the input's own handlers.
                                        set_timeout(move || pictures.describe(i, text), std::time::Duration::ZERO);
                                    })
                                />
                                <button
                                    type="button"
                                    class="icon-button picture-remove"
                                    aria-label=format!("Remove {alt}")
                                    title=format!("Remove {alt}")
                                    on:click=move |_| pictures.remove(i)
                                >
                                    <Icon name="x"/>
                                </button>
                            </li>
                        }
                    }).collect_view()}
                    <Show when=move || pictures.preparing.get() != 0>
                        <li class="picture-item picture-preparing muted" role="status">"Preparing…"</li>
                    </Show>
                </ul>
                {move || cannot_see().map(|why| view! { <p class="hint picture-warning" role="status">{why}</p> })}
                <Show when=move || pictures.message.with(Option::is_some)>
                    <p class="inline-error" role="alert">{move || pictures.message.get().unwrap_or_default()}</p>
                </Show>
            </div>
        </Show>
    }
}

/// The button that picks pictures from files.
#[component]
pub fn PictureButton() -> impl IntoView {
    let pictures = use_pictures();
    let input = NodeRef::<leptos::html::Input>::new();
    view! {
        <Show when=move || pictures.provider.with(Option::is_some)>
            <button
                type="button"
                class="icon-button attach-button"
                aria-label="Add pictures"
                title="Add pictures for the model to see"
                on:click=move |_| {
                    if let Some(el) = input.get() {
                        el.click();
                    }
                }
            >
                <Icon name="image"/>
            </button>
        </Show>
        <input
            node_ref=input
            type="file"
            class="visually-hidden"
            tabindex="-1"
            aria-hidden="true"
            accept=images::ACCEPTED_TYPES.join(",")
            multiple
            data-testid="picture-input"
            on:change=move |ev| {
                let Some(el) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else {
                    return;
                };
                if let Some(list) = el.files() {
                    let files: Vec<File> = (0..list.length()).filter_map(|i| list.get(i)).collect();
                    pictures.add(files);
                }
                // The same file can be picked again after it was taken off.
                el.set_value("");
            }
        />
    }
}
