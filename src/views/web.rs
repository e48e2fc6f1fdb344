//! The web skills' views: result cards for fetched pages and search
//! results (with links that open in a new tab), the domain lists editor of
//! the Skills panel, the search backend panel of Settings, and the offline
//! indicator. What the cards show comes from `hearth_core::builtin::web`
//! (`fetch_card`, `search_cards`); the model's text is not changed here.

use hearth_core::api::domains::{DomainLists, PatternLineError};
use hearth_core::api::error::ApiErrorCode;
use hearth_core::api::session::{BackendSource, SearchBackendSetting, SearchBackendState};
use hearth_core::api::web::{FetchResponse, Link, SearchResponse};
use hearth_core::builtin::web::{
    WEB_FETCH, WEB_SEARCH, WebFailure, fetch_card, is_followable, result_code, search_cards,
};
use hearth_core::skill::activity::ActivityRecord;
use hearth_core::{SkillDefinition, ToolStatus};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::icons::Icon;
use crate::runtime::use_runtime;
use crate::views::confirm::ConfirmDialog;

// ---------------------------------------------------------------------------
// Result cards

/// The body of a web skill's result card, or `None` for other skills (and
/// for results the card cannot read, which then show as text).
pub fn web_result(record: &ActivityRecord, text: &str) -> Option<AnyView> {
    let r = &record.result;
    match (record.skill_id.as_str(), r.status) {
        (WEB_FETCH, ToolStatus::Completed) => {
            let page: FetchResponse = serde_json::from_value(r.json()?.clone()).ok()?;
            Some(view! { <PageCard page=page/> }.into_any())
        }
        (WEB_SEARCH, ToolStatus::Completed) => {
            let found: SearchResponse = serde_json::from_value(r.json()?.clone()).ok()?;
            Some(view! { <SearchResults found=found/> }.into_any())
        }
        (WEB_SEARCH, ToolStatus::Failed)
            if result_code(r) == Some(ApiErrorCode::NoSearchBackend) =>
        {
            let text = text.to_string();
            Some(
                view! {
                    <div class="web-setup">
                        // Never collapsed: the "how" is the point.
                        <pre class="card-output">{text}</pre>
                        <a class="button-link" href="#/settings" data-action="setup-search">
                            <Icon name="settings"/>" Set up web search in Settings"
                        </a>
                    </div>
                }
                .into_any(),
            )
        }
        _ => None,
    }
}

/// A link that opens in a new tab and tells the page nothing about Hearth;
/// anything but http(s) is shown as text, never made clickable.
#[component]
fn WebLink(
    #[prop(into)] url: String,
    #[prop(into)] text: String,
    #[prop(optional)] class: &'static str,
) -> impl IntoView {
    if is_followable(&url) {
        view! {
            <a class=class href=url.clone() target="_blank" rel="noopener noreferrer" title=url>{text}</a>
        }
        .into_any()
    } else {
        view! { <span class=class>{text}</span> }.into_any()
    }
}

/// How many of a page's links show before "more".
const LINKS_SHOWN: usize = 6;

fn link_text(l: &Link) -> String {
    let t = l.text.trim();
    if t.is_empty() {
        l.url.clone()
    } else {
        t.to_string()
    }
}

#[component]
fn PageCard(page: FetchResponse) -> impl IntoView {
    let card = fetch_card(&page);
    let mut facts = vec![
        page.kind.as_str().to_uppercase(),
        hearth_core::util::display::bytes(page.bytes as f64),
    ];
    if page.redirects > 0 {
        facts.push(format!("redirected from {}", page.requested_url));
    }
    let chars = page.content.chars().count();
    let (shown, more): (Vec<Link>, Vec<Link>) = {
        let mut links = card.links.clone();
        let rest = links.split_off(LINKS_SHOWN.min(links.len()));
        (links, rest)
    };
    let total_links = page.links.len();
    let link_item = |l: Link| {
        let text = link_text(&l);
        view! { <li><WebLink url=l.url text=text/></li> }
    };
    view! {
        <div class="web-card" data-kind=page.kind.as_str()>
            <WebLink url=card.url.clone() text=card.title.clone() class="web-title"/>
            <div class="web-source">
                <Icon name="globe"/>
                <span class="web-host">{card.host.clone()}</span>
                <span class="muted">{facts.join(" · ")}</span>
            </div>
            {(!card.excerpt.is_empty()).then(|| view! { <p class="web-excerpt">{card.excerpt.clone()}</p> })}
            {(!shown.is_empty()).then(|| view! {
                <div class="web-links">
                    <h4>{format!("Links on this page ({total_links})")}</h4>
                    <ul>{shown.into_iter().map(link_item).collect_view()}</ul>
                    {(!more.is_empty()).then(|| view! {
                        <details>
                            <summary>{format!("{} more", more.len())}</summary>
                            <ul>{more.into_iter().map(link_item).collect_view()}</ul>
                        </details>
                    })}
                </div>
            })}
            <details class="web-text">
                <summary>{format!("Page text ({chars} characters)")}</summary>
                <pre>{page.content.clone()}</pre>
            </details>
        </div>
    }
}

#[component]
fn SearchResults(found: SearchResponse) -> impl IntoView {
    let cards = search_cards(&found);
    let hidden = found.filtered;
    let empty = cards.is_empty();
    let query = found.query.clone();
    view! {
        <div class="web-search" data-backend=found.backend.clone()>
            {if empty {
                view! { <p class="muted">{format!("No results for \u{201c}{query}\u{201d}.")}</p> }.into_any()
            } else {
                view! {
                    <ol class="web-results">
                        {cards.into_iter().map(|c| view! {
                            <li class="web-result">
                                <WebLink url=c.url.clone() text=c.title.clone() class="web-title"/>
                                <span class="web-host">{c.host.clone()}</span>
                                {(!c.excerpt.is_empty()).then(|| view! { <p class="web-snippet">{c.excerpt.clone()}</p> })}
                            </li>
                        }).collect_view()}
                    </ol>
                }.into_any()
            }}
            {(hidden > 0).then(|| view! {
                <p class="muted web-hidden">{format!("{hidden} more hidden by web_search's domain lists.")}</p>
            })}
        </div>
    }
}

// ---------------------------------------------------------------------------
// Domain lists (Skills panel)

fn line_errors(errors: &[PatternLineError]) -> Vec<(usize, String)> {
    errors
        .iter()
        .map(|e| (e.line, e.error.to_string()))
        .collect()
}

/// The allowlist and denylist of one web skill, one pattern per line,
/// checked as they are typed and stored when saved.
#[component]
pub fn DomainListsEditor(skill: SkillDefinition) -> impl IntoView {
    let rt = use_runtime();
    let id = skill.id.to_string();
    let version = rt.web().version;
    let saved = {
        let rt = rt.clone();
        let id = id.clone();
        Memo::new(move |_| {
            version.track();
            rt.web().lists(&id)
        })
    };
    let initial = saved.get_untracked();
    let allow = RwSignal::new(initial.allow);
    let deny = RwSignal::new(initial.deny);
    let draft = Memo::new(move |_| DomainLists {
        allow: allow.get(),
        deny: deny.get(),
    });
    let errors = Memo::new(move |_| draft.get().policy().err().unwrap_or_default());
    let dirty = Memo::new(move |_| draft.get() != saved.get());
    let status: RwSignal<Option<(bool, String)>> = RwSignal::new(None);
    let summary = Memo::new(move |_| match saved.get().policy() {
        Ok(p) if p.is_empty() => "any domain".to_string(),
        Ok(p) => {
            let mut parts = Vec::new();
            if !p.allow.is_empty() {
                parts.push(format!("{} allowed", p.allow.len()));
            }
            if !p.deny.is_empty() {
                parts.push(format!("{} denied", p.deny.len()));
            }
            parts.join(" · ")
        }
        Err(_) => "needs fixing".to_string(),
    });
    let save = {
        let id = id.clone();
        move || {
            if !errors.get_untracked().is_empty() {
                return;
            }
            let web = rt.web();
            let id = id.clone();
            let lists = draft.get_untracked();
            spawn_local(async move {
                match web.save_lists(&id, lists).await {
                    Ok(()) => status.set(Some((
                        true,
                        "Saved. The next call uses these lists.".into(),
                    ))),
                    Err(e) => status.set(Some((false, format!("Not saved: {e}")))),
                }
            });
        }
    };
    let name = skill.name.clone();
    let list = move |which: &'static str,
                     label: &'static str,
                     help: &'static str,
                     value: RwSignal<String>| {
        let field_id = format!("{id}-{which}");
        let errors_id = format!("{field_id}-errors");
        let these = move || {
            let e = errors.get();
            line_errors(if which == "allow" { &e.allow } else { &e.deny })
        };
        let invalid = move || (!these().is_empty()).to_string();
        view! {
            <div class="domain-list">
                <label for=field_id.clone()>
                    <strong>{label}</strong>
                    <span class="muted">{help}</span>
                </label>
                <textarea
                    id=field_id.clone()
                    class="domain-input"
                    rows="4"
                    spellcheck="false"
                    autocomplete="off"
                    placeholder=if which == "allow" { "docs.rs\n*.wikipedia.org" } else { "ads.example.com\n=tracker.example" }
                    aria-label=format!("{label} for {name}")
                    aria-invalid=invalid
                    aria-describedby=errors_id.clone()
                    prop:value=move || value.get()
                    on:input=move |ev| {
                        value.set(event_target_value(&ev));
                        status.set(None);
                    }
                ></textarea>
                {move || {
                    let forms = hearth_core::api::domains::ascii_forms(&value.get());
                    (!forms.is_empty()).then(|| view! {
                        <ul class="ascii-forms muted" role="list" aria-label="Compared as">
                            {forms.into_iter().map(|(typed, ascii)| view! {
                                <li>{typed}" is compared as "<code>{ascii}</code></li>
                            }).collect_view()}
                        </ul>
                    })
                }}
                <ul class="line-errors" id=errors_id role="list">
                    {move || these().into_iter().map(|(line, message)| view! {
                        <li class="error"><span class="line-no">{format!("Line {line}")}</span>" "{message}</li>
                    }).collect_view()}
                </ul>
            </div>
        }
    };
    let save_click = save.clone();
    view! {
        <details class="domain-lists" data-skill=skill.id.to_string()>
            <summary>
                "Domain lists"
                <span class="chip">{move || summary.get()}</span>
            </summary>
            <p class="muted domain-help">
                "One per line. "<code>"example.com"</code>" covers its subdomains, "
                <code>"*.example.com"</code>" only the subdomains, "<code>"=example.com"</code>
                " only that host. International names may be typed as they read. Lines starting with "<code>"#"</code>" are comments. The denylist wins; with an allowlist, nothing else is reached."
            </p>
            <div class="domain-grid">
                {list("allow", "Allowlist", "Only these (empty: any domain)", allow)}
                {list("deny", "Denylist", "Never these", deny)}
            </div>
            <div class="domain-actions">
                <button
                    class="primary small"
                    disabled=move || !dirty.get() || !errors.get().is_empty()
                    on:click=move |_| save_click()
                >"Save lists"</button>
                <button
                    class="small"
                    disabled=move || !dirty.get()
                    on:click=move |_| {
                        let s = saved.get_untracked();
                        allow.set(s.allow);
                        deny.set(s.deny);
                        status.set(None);
                    }
                >"Revert"</button>
                {move || match status.get() {
                    Some((true, m)) => view! { <span class="saved" role="status">{m}</span> }.into_any(),
                    Some((false, m)) => view! { <span class="error" role="alert">{m}</span> }.into_any(),
                    None => {
                        let count = errors.get();
                        let n = count.allow.len() + count.deny.len();
                        (n > 0)
                            .then(|| view! { <span class="error">{format!("{n} line{} to fix before saving", if n == 1 { "" } else { "s" })}</span> })
                            .into_any()
                    }
                }}
            </div>
        </details>
    }
}

// ---------------------------------------------------------------------------
// Search backend (Settings)

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BackendChoice {
    Searxng,
    Brave,
}

/// Which search backend `web_search` uses, chosen here (kept by the proxy)
/// or taken from the config file.
#[component]
pub fn SearchBackendPanel() -> impl IntoView {
    let rt = use_runtime();
    let state: RwSignal<Option<Result<SearchBackendState, String>>> = RwSignal::new(None);
    let choice = RwSignal::new(BackendChoice::Searxng);
    let url = RwSignal::new(String::new());
    let key = RwSignal::new(String::new());
    let busy = RwSignal::new(false);
    let message: RwSignal<Option<(bool, String)>> = RwSignal::new(None);
    let confirming = RwSignal::new(false);

    let failure = |f: WebFailure| f.message("web_search");
    {
        let web = rt.web();
        spawn_local(async move {
            let got = web.client.search_backend().await.map_err(failure);
            if let Ok(s) = &got {
                if s.backend.as_deref() == Some("brave") {
                    choice.set(BackendChoice::Brave);
                } else if let Some(u) = &s.url {
                    url.set(u.clone());
                }
            }
            state.set(Some(got));
        });
    }
    let save = {
        let rt = rt.clone();
        move || {
            let setting = match choice.get_untracked() {
                BackendChoice::Searxng => SearchBackendSetting::Searxng {
                    url: url.get_untracked().trim().to_string(),
                },
                BackendChoice::Brave => SearchBackendSetting::Brave {
                    api_key: key.get_untracked().trim().to_string(),
                },
            };
            let empty = match &setting {
                SearchBackendSetting::Searxng { url } => url.is_empty(),
                SearchBackendSetting::Brave { api_key } => api_key.is_empty(),
            };
            if empty {
                message.set(Some((
                    false,
                    match choice.get_untracked() {
                        BackendChoice::Searxng => {
                            "Enter the address of your SearXNG, e.g. http://127.0.0.1:8888".into()
                        }
                        BackendChoice::Brave => "Enter your Brave Search API key.".into(),
                    },
                )));
                return;
            }
            let web = rt.web();
            busy.set(true);
            spawn_local(async move {
                match web.client.set_search_backend(&setting).await {
                    Ok(s) => {
                        key.set(String::new());
                        message.set(Some((
                            true,
                            "Saved. web_search uses it from now on.".into(),
                        )));
                        state.set(Some(Ok(s)));
                    }
                    Err(f) => message.set(Some((false, format!("Not saved: {}", failure(f))))),
                }
                busy.set(false);
            });
        }
    };
    let clear = {
        let rt = rt.clone();
        move || {
            let web = rt.web();
            confirming.set(false);
            spawn_local(async move {
                match web.client.clear_search_backend().await {
                    Ok(s) => {
                        message.set(Some((true, "Removed.".into())));
                        state.set(Some(Ok(s)));
                    }
                    Err(f) => message.set(Some((false, format!("Not removed: {}", failure(f))))),
                }
            });
        }
    };
    let chosen_here = move || {
        matches!(
            state.get(),
            Some(Ok(SearchBackendState {
                source: Some(BackendSource::Settings),
                ..
            }))
        )
    };
    let from_file = move || {
        matches!(
            state.get(),
            Some(Ok(SearchBackendState {
                source: Some(BackendSource::ConfigFile),
                ..
            }))
        )
    };
    let save_submit = save.clone();
    view! {
        <section class="panel search-backend" aria-labelledby="search-backend-title">
            <h2 id="search-backend-title">"Web search"</h2>
            <p class="muted">"web_search asks a search engine through Hearth's local proxy: a SearXNG instance with its JSON format on, or Brave Search with your API key. The key stays with the proxy on this machine and is never shown again."</p>
            <p class="backend-status" data-testid="search-backend-status" aria-live="polite"
                class:unset=move || !matches!(state.get(), Some(Ok(SearchBackendState { configured: true, .. })))>
                {move || match state.get() {
                    None => "Checking…".to_string(),
                    Some(Ok(s)) => s.summary(),
                    Some(Err(m)) => m,
                }}
            </p>
            <Show when=from_file>
                <p class="muted">"It is set in hearth's config file; a backend chosen here takes its place."</p>
            </Show>
            <form class="backend-form" on:submit=move |ev: leptos::ev::SubmitEvent| {
                ev.prevent_default();
                save_submit();
            }>
                <label class="field">
                    <span class="muted">"Backend"</span>
                    <select
                        aria-label="Search backend"
                        prop:value=move || match choice.get() { BackendChoice::Searxng => "searxng", BackendChoice::Brave => "brave" }
                        on:change=move |ev| {
                            choice.set(if event_target_value(&ev) == "brave" { BackendChoice::Brave } else { BackendChoice::Searxng });
                            message.set(None);
                        }
                    >
                        <option value="searxng">"SearXNG"</option>
                        <option value="brave">"Brave Search"</option>
                    </select>
                </label>
                {move || match choice.get() {
                    BackendChoice::Searxng => view! {
                        <label class="field grow">
                            <span class="muted">"SearXNG address"</span>
                            <input type="url" aria-label="SearXNG address" placeholder="https://searx.example.org"
                                prop:value=move || url.get()
                                on:input=move |ev| url.set(event_target_value(&ev))/>
                        </label>
                    }.into_any(),
                    BackendChoice::Brave => view! {
                        <label class="field grow">
                            <span class="muted">"Brave Search API key"</span>
                            <input type="password" autocomplete="off" aria-label="Brave Search API key"
                                placeholder=move || if matches!(state.get(), Some(Ok(SearchBackendState { api_key_set: true, .. }))) { "A key is set; enter a new one to replace it" } else { "Your subscription token" }
                                prop:value=move || key.get()
                                on:input=move |ev| key.set(event_target_value(&ev))/>
                        </label>
                    }.into_any(),
                }}
                <button type="submit" class="primary" disabled=move || busy.get()>"Use this backend"</button>
            </form>
            <p class="muted hint">
                "A SearXNG on this machine or your network must also be allowed when hearth starts, e.g. "
                <code>"hearth serve --allow-private-fetch 127.0.0.1:8888"</code>"."
            </p>
            <div class="backend-actions">
                <Show when=chosen_here>
                    <button class="danger-outline small" on:click=move |_| confirming.set(true)>"Remove this backend…"</button>
                </Show>
                {move || message.get().map(|(ok, m)| if ok {
                    view! { <span class="saved" role="status">{m}</span> }.into_any()
                } else {
                    view! { <span class="error" role="alert">{m}</span> }.into_any()
                })}
            </div>
            <Show when=move || confirming.get()>
                <ConfirmDialog
                    title="Remove the search backend?".to_string()
                    message="web_search stops working until you choose another (or the config file names one). A Brave key would have to be entered again.".to_string()
                    confirm_label="Remove".to_string()
                    on_confirm={
                        let clear = clear.clone();
                        move || clear()
                    }
                    on_cancel=move || confirming.set(false)
                />
            </Show>
        </section>
    }
}

// ---------------------------------------------------------------------------
// Online status

/// A quiet note in the shell while the device is offline.
#[component]
pub fn OfflineIndicator() -> impl IntoView {
    let online = crate::online::online();
    view! {
        <Show when=move || !online.get()>
            <div class="offline-indicator" role="status" title="No network connection. Everything local works; web skills wait until you are back online.">
                <Icon name="offline"/>
                <span>"Offline"</span>
            </div>
        </Show>
    }
}

/// The Skills panel's note on the network tier while offline.
#[component]
pub fn OfflineNote() -> impl IntoView {
    let online = crate::online::online();
    view! {
        <Show when=move || !online.get()>
            <p class="offline-note" role="status">
                <Icon name="offline"/>
                " You are offline. Network skills cannot reach the web until you reconnect; if they are called, they say so."
            </p>
        </Show>
    }
}
