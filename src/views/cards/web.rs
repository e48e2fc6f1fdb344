//! The web skills' result cards: fetched pages and search results, with
//! links that open in a new tab. What the cards show comes from
//! `hearth_core::builtin::web` (`fetch_card`, `search_cards`); the model's
//! text is not changed here.

use hearth_core::ToolStatus;
use hearth_core::api::error::ApiErrorCode;
use hearth_core::api::web::{FetchResponse, Link, SearchResponse};
use hearth_core::builtin::web::{
    WEB_FETCH, WEB_SEARCH, fetch_card, is_followable, result_code, search_cards,
};
use hearth_core::skill::activity::ActivityRecord;
use leptos::prelude::*;

use crate::icons::Icon;

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
