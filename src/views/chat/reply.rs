//! A reply's text on the page. While the model writes, core's
//! `StreamRender` settles it block by block: a settled block is added to
//! the page once and never touched again, and only the open block is
//! rendered again, at most once per animation frame. So each piece of text
//! costs the same at the end of a long reply as at its start, and a
//! selection in the settled part survives the next piece. A finished reply
//! is rendered whole when that reads differently (a link defined after
//! its use); a reply read back from storage is rendered whole at once.

use std::cell::RefCell;
use std::rc::Rc;

use hearth_core::assistant::agent::{Message, MessageStatus};
use hearth_markdown::{Pending, StreamRender, to_chat_html_with};
use leptos::html;
use leptos::prelude::*;
use send_wrapper::SendWrapper;

use crate::enhance::{Enhancer, use_enhancer};

/// How the text is on the page now.
#[derive(Default)]
enum Shown {
    #[default]
    Nothing,
    /// Settled blocks, each in its own `div.md-block`, then the open one.
    Blocks {
        render: StreamRender,
        blocks: Vec<web_sys::Element>,
        open: web_sys::Element,
        /// The enhancer's version these blocks were rendered with.
        version: u64,
    },
    /// One rendering of the whole text, and what it was.
    Whole { html: String },
}

struct Painter {
    shown: Shown,
    /// A frame is booked; later changes ride along with it.
    booked: bool,
}

/// The text of `message` as chat Markdown, kept up to date cheaply.
#[component]
pub fn ReplyText(message: Memo<Option<Message>>) -> impl IntoView {
    let enhancer = use_enhancer();
    let node = NodeRef::<html::Div>::new();
    let painter = SendWrapper::new(Rc::new(RefCell::new(Painter {
        shown: Shown::Nothing,
        booked: false,
    })));
    Effect::new({
        let enhancer = enhancer.clone();
        move |_| {
            message.track();
            enhancer.version.track();
            let Some(root) = node.get() else {
                return;
            };
            // Streamed text arrives faster than frames: paint once per frame.
            let streaming = message.with_untracked(|m| {
                m.as_ref()
                    .is_some_and(|m| m.status == MessageStatus::Streaming)
            });
            if !streaming {
                paint(&painter, &root, message, &enhancer);
                return;
            }
            if std::mem::replace(&mut painter.borrow_mut().booked, true) {
                return;
            }
            let painter = painter.clone();
            let enhancer = enhancer.clone();
            request_animation_frame(move || {
                painter.borrow_mut().booked = false;
                // The reply may have left the page before the frame came
                // (a retry replaced it, the conversation closed): then its
                // signals are gone and there is nothing to paint.
                let gone = message.try_with_untracked(|_| ()).is_none()
                    || enhancer.version.try_get_untracked().is_none();
                if gone {
                    return;
                }
                paint(&painter, &root, message, &enhancer);
            });
        }
    });
    view! { <div class="markdown message-text" node_ref=node></div> }
}

fn paint(
    painter: &Rc<RefCell<Painter>>,
    root: &web_sys::HtmlDivElement,
    message: Memo<Option<Message>>,
    enhancer: &Enhancer,
) {
    let mut painter = painter.borrow_mut();
    let version = enhancer.version.get_untracked();
    message.with_untracked(|m| {
        let Some(m) = m else {
            return;
        };
        // No text (a reply that only calls tools): nothing on the page, so
        // the empty text takes no room.
        if m.content.is_empty() {
            if !matches!(painter.shown, Shown::Nothing) {
                root.set_inner_html("");
                painter.shown = Shown::Nothing;
            }
            return;
        }
        let streaming = m.status == MessageStatus::Streaming;
        // A reply that is already written shows whole, unless it streamed
        // here and its blocks already read as the whole does.
        if !streaming && !matches!(painter.shown, Shown::Blocks { .. }) {
            let whole = to_chat_html_with(&m.content, enhancer);
            enhancer.request(&whole.pending);
            if !matches!(&painter.shown, Shown::Whole { html } if *html == whole.html) {
                root.set_inner_html(&whole.html);
                painter.shown = Shown::Whole { html: whole.html };
            }
            return;
        }
        if !matches!(painter.shown, Shown::Blocks { .. }) {
            root.set_inner_html("");
            let Some(open) = block_element(root, "md-block md-open") else {
                return;
            };
            let _ = root.append_child(&open);
            painter.shown = Shown::Blocks {
                render: StreamRender::new(),
                blocks: Vec::new(),
                open,
                version,
            };
        }
        let Shown::Blocks {
            render,
            blocks,
            open,
            version: rendered_with,
        } = &mut painter.shown
        else {
            return;
        };
        let update = render.update(&m.content, enhancer);
        // Only what this text added can wait for something new.
        let mut pending: Vec<Pending> = update
            .settled
            .clone()
            .flat_map(|i| render.block_pending(i).iter().cloned())
            .collect();
        if update.reset {
            for block in blocks.drain(..) {
                block.remove();
            }
        }
        for i in update.settled {
            let Some(block) = block_element(root, "md-block") else {
                return;
            };
            block.set_inner_html(render.block(i));
            let _ = root.insert_before(&block, Some(open));
            blocks.push(block);
        }
        let mut open_changed = update.open_changed;
        if *rendered_with != version {
            *rendered_with = version;
            for i in render.enhance(enhancer) {
                if let Some(block) = blocks.get(i) {
                    block.set_inner_html(render.block(i));
                }
            }
            open_changed |= render.refresh_open(&m.content, enhancer);
        }
        if open_changed {
            open.set_inner_html(render.open());
        }
        pending.extend(render.open_pending().iter().cloned());
        enhancer.request(&pending);
        if !streaming && let Some(whole) = render.finish(&m.content, enhancer) {
            // The whole reads differently from its blocks: show it whole.
            root.set_inner_html(&whole.html);
            enhancer.request(&whole.pending);
            painter.shown = Shown::Whole { html: whole.html };
        }
    });
}

/// A `div` for one block; `display: contents` in the styles, so blocks sit
/// in the text's flow as if they were its direct children.
fn block_element(root: &web_sys::HtmlDivElement, class: &str) -> Option<web_sys::Element> {
    let block = root.owner_document()?.create_element("div").ok()?;
    block.set_class_name(class);
    Some(block)
}
