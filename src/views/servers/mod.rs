//! Servers: the MCP servers Hearth is connected to. Add one by URL (with a
//! token or headers, directly or through Hearth's relay), switch stdio
//! servers from `hearth serve`'s local file on, and see for each its
//! status, protocol era, tools, resources, prompts, instructions and any
//! error in plain words. Tools are switched on and given an approval
//! setting in Skills, like every skill.

use hearth_core::mcp::hosted::StdioListing;
use hearth_core::mcp::servers::{NewServer, ServerSource};
use hearth_core::mcp::skills::ServerId;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::icons::Icon;
use crate::mcp::{Mcp, use_mcp};

mod card;

use card::ServerCard;

#[component]
pub fn ServersView() -> impl IntoView {
    let mcp = use_mcp();
    let ids = {
        let mcp = mcp.clone();
        Memo::new(move |_| {
            mcp.servers()
                .into_iter()
                .map(|s| s.entry.id)
                .collect::<Vec<ServerId>>()
        })
    };
    let loaded = mcp.loaded();
    view! {
        <section class="page servers" aria-labelledby="servers-title">
            <header class="page-head">
                <h1 id="servers-title">"Servers"</h1>
                <p class="muted">"MCP servers give Hearth more skills. Their tools arrive switched off: turn on the ones you want in Skills, and Hearth asks before each call."</p>
            </header>
            <SignInBanner/>
            <AddServer/>
            <Show when=move || loaded.get() && ids.with(Vec::is_empty)>
                <div class="empty-state servers-empty">
                    <h2>"No servers yet"</h2>
                    <p>"Add a server by its URL above, for example "<code>"http://127.0.0.1:3001/mcp"</code>" for one running on this computer, or switch on one of the stdio servers below."</p>
                </div>
            </Show>
            <div class="server-list">
                <For
                    each=move || ids.get()
                    key=|id| id.clone()
                    children=move |id| view! { <ServerCard id=id/> }
                />
            </div>
            <StdioServers/>
        </section>
    }
}

/// Sign-ins waiting for a click.
#[component]
fn SignInBanner() -> impl IntoView {
    let mcp = use_mcp();
    let center = send_wrapper::SendWrapper::new(mcp.sign_ins());
    let pending = center.pending;
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    view! {
        <Show when=move || !pending.with(Vec::is_empty)>
            <section class="panel sign-ins" aria-label="Sign-ins">
                {
                    let center = center.clone();
                    move || {
                        pending
                            .get()
                            .into_iter()
                            .map(|p| {
                                let (c1, c2) = (center.clone(), center.clone());
                                let key = p.key;
                                view! {
                                    <div class="sign-in" data-server=p.server.to_string()>
                                        <Icon name="shield"/>
                                        <p>
                                            <strong>{p.server.to_string()}</strong>
                                            {if p.opened {
                                                " — finish signing in in the window that opened."
                                            } else {
                                                " asks you to sign in before Hearth can use it."
                                            }}
                                        </p>
                                        <button class="primary" on:click=move |_| {
                                            if let Err(e) = c1.open(key) {
                                                error.set(Some(e));
                                            }
                                        }>{if p.opened { "Open the sign-in again" } else { "Sign in" }}</button>
                                        <button on:click=move |_| c2.cancel(key)>"Cancel"</button>
                                    </div>
                                }
                            })
                            .collect_view()
                    }
                }
                <Show when=move || error.get().is_some()>
                    <p class="inline-error" role="alert">{move || error.get().unwrap_or_default()}</p>
                </Show>
            </section>
        </Show>
    }
}

#[component]
fn AddServer() -> impl IntoView {
    let mcp = use_mcp();
    let url = RwSignal::new(String::new());
    let name = RwSignal::new(String::new());
    let token = RwSignal::new(String::new());
    let headers = RwSignal::new(String::new());
    let relay = RwSignal::new(false);
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let busy = RwSignal::new(false);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if busy.get_untracked() {
            return;
        }
        let form = NewServer {
            url: url.get_untracked(),
            name: name.get_untracked(),
            headers: headers.get_untracked(),
            token: token.get_untracked(),
            relay: relay.get_untracked(),
        };
        busy.set(true);
        let mcp = mcp.clone();
        spawn_local(async move {
            match mcp.add(form).await {
                Ok(_) => {
                    error.set(None);
                    url.set(String::new());
                    name.set(String::new());
                    token.set(String::new());
                    headers.set(String::new());
                    relay.set(false);
                }
                Err(e) => error.set(Some(e)),
            }
            busy.set(false);
        });
    };
    view! {
        <section class="panel add-server" aria-labelledby="add-server-title">
            <h2 id="add-server-title">"Add a server"</h2>
            <form on:submit=submit>
                <div class="add-row">
                    <label class="field grow">
                        <span>"Server URL"</span>
                        <input
                            type="text"
                            inputmode="url"
                            autocomplete="off"
                            spellcheck="false"
                            placeholder="https://mcp.example.com/mcp"
                            aria-label="Server URL"
                            prop:value=move || url.get()
                            on:input=move |ev| { url.set(event_target_value(&ev)); error.set(None); }
                        />
                    </label>
                    <label class="field">
                        <span>"Name (optional)"</span>
                        <input
                            type="text"
                            autocomplete="off"
                            spellcheck="false"
                            placeholder="from the URL"
                            aria-label="Server name"
                            prop:value=move || name.get()
                            on:input=move |ev| name.set(event_target_value(&ev))
                        />
                    </label>
                    <label class="field">
                        <span>"Token (optional)"</span>
                        <input
                            type="password"
                            autocomplete="off"
                            placeholder="bearer token or API key"
                            aria-label="Token"
                            prop:value=move || token.get()
                            on:input=move |ev| token.set(event_target_value(&ev))
                        />
                    </label>
                </div>
                <details class="more-options">
                    <summary>"More options"</summary>
                    <label class="field">
                        <span>"Headers, one "<code>"Name: value"</code>" per line"</span>
                        <textarea
                            rows="2"
                            spellcheck="false"
                            placeholder="X-Api-Key: …"
                            aria-label="Headers"
                            prop:value=move || headers.get()
                            on:input=move |ev| headers.set(event_target_value(&ev))
                        ></textarea>
                    </label>
                    <label class="check">
                        <input
                            type="checkbox"
                            aria-label="Connect through Hearth"
                            prop:checked=move || relay.get()
                            on:change=move |ev| relay.set(event_target_checked(&ev))
                        />
                        <span>
                            "Connect through Hearth — for servers that do not allow browsers (no CORS headers). "
                            <span class="muted">"Needs Hearth opened from hearth serve."</span>
                        </span>
                    </label>
                </details>
                <Show when=move || error.get().is_some()>
                    <p class="inline-error" role="alert">{move || error.get().unwrap_or_default()}</p>
                </Show>
                <div class="form-actions">
                    <button type="submit" class="primary" disabled=move || busy.get()>
                        {move || if busy.get() { "Adding…" } else { "Add server" }}
                    </button>
                </div>
            </form>
        </section>
    }
}

pub(super) fn run(
    mcp: &Mcp,
    error: RwSignal<Option<String>>,
    f: impl AsyncFnOnce(Mcp) -> Result<(), String> + 'static,
) {
    let mcp = mcp.clone();
    spawn_local(async move {
        if let Err(e) = f(mcp).await {
            error.set(Some(e));
        }
    });
}

/// stdio servers from `hearth serve`'s local file.
#[component]
fn StdioServers() -> impl IntoView {
    let mcp = use_mcp();
    let listing = mcp.stdio();
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let in_use = {
        let mcp = mcp.clone();
        Memo::new(move |_| {
            mcp.servers()
                .into_iter()
                .filter(|s| s.entry.source == ServerSource::Stdio)
                .map(|s| s.entry.id)
                .collect::<Vec<ServerId>>()
        })
    };
    let refresh = {
        let mcp = mcp.clone();
        move |_| mcp.refresh_stdio()
    };
    view! {
        <section class="panel stdio-servers" aria-labelledby="stdio-title">
            <div class="tier-head">
                <h2 id="stdio-title">"On this computer"</h2>
                <button class="small" on:click=refresh>"Check again"</button>
            </div>
            {move || match listing.get() {
                None => view! { <p class="muted">"Asking hearth serve…"</p> }.into_any(),
                Some(Err(e)) => view! {
                    <p class="muted stdio-unavailable">{format!("stdio servers are not available: {e}.")}</p>
                }.into_any(),
                Some(Ok(l)) => stdio_listing(l, in_use, error, mcp.clone()).into_any(),
            }}
            <Show when=move || error.get().is_some()>
                <p class="inline-error" role="alert">{move || error.get().unwrap_or_default()}</p>
            </Show>
        </section>
    }
}

fn stdio_listing(
    l: StdioListing,
    in_use: Memo<Vec<ServerId>>,
    error: RwSignal<Option<String>>,
    mcp: Mcp,
) -> impl IntoView {
    let path = l.config_path.clone();
    view! {
        <p class="muted">
            "Programs listed in "<code>{path}</code>" (command, args, env) run through hearth serve. Only that file can add one; the browser cannot."
        </p>
        {l.problem.map(|p| view! { <p class="inline-error" role="alert">{p}</p> })}
        {l.skipped.into_iter().map(|s| view! {
            <p class="muted">{format!("Skipped {}: {}", s.server, s.message)}</p>
        }).collect_view()}
        {if l.servers.is_empty() {
            view! { <p class="empty muted">"No stdio servers are listed there yet."</p> }.into_any()
        } else {
            view! {
                <ul class="stdio-list">
                    {l.servers.into_iter().map(|s| {
                        let name = s.name.clone();
                        let used = {
                            let name = name.clone();
                            move || in_use.with(|u| u.contains(&name))
                        };
                        let used2 = used.clone();
                        let mcp = mcp.clone();
                        let command = std::iter::once(s.command.clone()).chain(s.args.iter().cloned()).collect::<Vec<_>>().join(" ");
                        let state = if s.running {
                            "running".to_string()
                        } else if s.crashes > 0 {
                            format!("stopped after {} crash{}", s.crashes, if s.crashes == 1 { "" } else { "es" })
                        } else {
                            "starts when used".to_string()
                        };
                        let label = format!("Use {}", s.name);
                        let tail = s.stderr_tail.clone();
                        view! {
                            <li class="stdio-server" data-stdio=s.name.to_string()>
                                <div class="stdio-main">
                                    <strong>{s.name.to_string()}</strong>
                                    <code class="muted">{command}</code>
                                    <span class="muted">{state}</span>
                                    {s.last_exit.clone().map(|e| view! { <span class="muted">{format!("last exit: {e}")}</span> })}
                                    {(!tail.is_empty()).then(|| view! {
                                        <details><summary>"stderr"</summary><pre>{tail.join("\n")}</pre></details>
                                    })}
                                </div>
                                <button
                                    class="small"
                                    aria-label=label
                                    disabled=used
                                    on:click=move |_| {
                                        let name = name.clone();
                                        run(&mcp, error, async move |m| m.use_stdio(name).await.map(|_| ()))
                                    }
                                >{move || if used2() { "In use" } else { "Use" }}</button>
                            </li>
                        }
                    }).collect_view()}
                </ul>
            }.into_any()
        }}
    }
}
