//! What MCP servers add to a composer, as pieces any composer can use:
//! a resource picker that reads
//! the chosen resource into an [`Attachment`], shown as removable chips.
//! The text they become is core's (`hearth_core::ui::mcp_composer`).

use hearth_core::mcp::model::Resource;
use hearth_core::mcp::skills::ServerId;
use hearth_core::ui::mcp_composer::Attachment;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::icons::Icon;
use crate::mcp::use_mcp;
use crate::shared::modal::Modal;

/// Picks a server resource and reads it into an attachment.
#[component]
pub fn ResourcePicker(on_pick: Callback<Attachment>, on_close: Callback<()>) -> impl IntoView {
    let mcp = use_mcp();
    let filter = RwSignal::new(String::new());
    let busy: RwSignal<Option<String>> = RwSignal::new(None);
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let all = {
        let mcp = mcp.clone();
        Memo::new(move |_| mcp.resources())
    };
    let shown = Memo::new(move |_| {
        let f = filter.get().to_lowercase();
        all.get()
            .into_iter()
            .filter(|(s, r)| {
                f.is_empty()
                    || r.name.to_lowercase().contains(&f)
                    || r.uri.to_lowercase().contains(&f)
                    || s.as_str().contains(&f)
                    || r.title
                        .as_deref()
                        .is_some_and(|t| t.to_lowercase().contains(&f))
            })
            .take(200)
            .collect::<Vec<(ServerId, Resource)>>()
    });
    let pick = move |server: ServerId, resource: Resource| {
        if busy.get_untracked().is_some() {
            return;
        }
        busy.set(Some(resource.uri.clone()));
        error.set(None);
        let mcp = mcp.clone();
        spawn_local(async move {
            match mcp.attach(&server, &resource).await {
                Ok(a) => {
                    busy.set(None);
                    on_pick.run(a);
                    on_close.run(());
                }
                Err(e) => {
                    busy.set(None);
                    error.set(Some(format!("{} could not be read: {e}", resource.uri)));
                }
            }
        });
    };
    view! {
        <Modal labelledby="picker-title" class="resource-picker" on_escape=on_close>
            <h2 id="picker-title">"Attach a resource"</h2>
            <p class="muted">"Resources your connected MCP servers offer. The one you pick is read now and goes with your next message."</p>
            <input
                type="search"
                class="picker-filter"
                placeholder="Filter by name or URI"
                aria-label="Filter resources"
                data-autofocus
                prop:value=move || filter.get()
                on:input=move |ev| filter.set(event_target_value(&ev))
            />
            <Show when=move || error.get().is_some()>
                <p class="inline-error" role="alert">{move || error.get().unwrap_or_default()}</p>
            </Show>
            {move || {
                let list = shown.get();
                if all.with(Vec::is_empty) {
                    return view! {
                        <p class="empty muted">"No connected server offers resources. Connect one in Servers."</p>
                    }.into_any();
                }
                if list.is_empty() {
                    return view! { <p class="empty muted">"Nothing matches."</p> }.into_any();
                }
                view! {
                    <ul class="picker-list" aria-label="Resources">
                        {list.into_iter().map(|(server, r)| {
                            let label = r.title.clone().unwrap_or_else(|| r.name.clone());
                            let uri = r.uri.clone();
                            let mime = r.mime_type.clone().unwrap_or_default();
                            let loading_uri = uri.clone();
                            let pick = pick.clone();
                            let (s2, r2) = (server.clone(), r.clone());
                            view! {
                                <li>
                                    <button class="picker-item" on:click=move |_| pick(s2.clone(), r2.clone())>
                                        <Icon name="file"/>
                                        <span class="picker-name">{label}</span>
                                        <code class="muted">{uri}</code>
                                        <span class="muted">{format!("{server} {mime}")}</span>
                                        {move || (busy.get().as_deref() == Some(loading_uri.as_str())).then(|| view! { <span class="muted">"Reading…"</span> })}
                                    </button>
                                </li>
                            }
                        }).collect_view()}
                    </ul>
                }.into_any()
            }}
            <div class="modal-actions">
                <button on:click=move |_| on_close.run(())>"Close"</button>
            </div>
        </Modal>
    }
}

/// The attachments of the message being written.
#[component]
pub fn AttachmentChips(attachments: RwSignal<Vec<Attachment>>) -> impl IntoView {
    view! {
        <Show when=move || !attachments.with(Vec::is_empty)>
            <ul class="attachments" aria-label="Attachments">
                {move || attachments.get().into_iter().enumerate().map(|(i, a)| {
                    let size = a.size_label();
                    view! {
                        <li class="attachment" title=a.uri.clone() data-uri=a.uri.clone()>
                            <Icon name="file"/>
                            <span class="attachment-name">{a.name.clone()}</span>
                            <span class="muted">{format!("{} · {size}", a.server)}</span>
                            {a.truncated.then(|| view! { <span class="muted">" (cut)"</span> })}
                            <button
                                class="icon-button"
                                aria-label=format!("Remove {}", a.name)
                                on:click=move |_| attachments.update(|l| { if i < l.len() { l.remove(i); } })
                            >"×"</button>
                        </li>
                    }
                }).collect_view()}
            </ul>
        </Show>
    }
}
