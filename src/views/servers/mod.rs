//! Servers: the MCP servers Hearth is connected to. Add one by URL (with a
//! token or headers, directly or through Hearth's relay), switch stdio
//! servers from `hearth serve`'s local file on, and see for each its
//! status, protocol era, tools, resources, prompts, instructions and any
//! error in plain words. Tools are switched on and given an approval
//! setting in Skills, like every skill.

use hearth_core::mcp::hosted::StdioListing;
use hearth_core::mcp::model::Tool;
use hearth_core::mcp::servers::{NewServer, ServerSource};
use hearth_core::mcp::skills::{ServerId, skill_id, ui_resource, visible_to_model};
use hearth_core::ui::server_card::{self as card, removal_message, shown_resources, subtitle};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::icons::Icon;
use crate::mcp::{Mcp, ServerView, Status, use_mcp};
use crate::runtime::use_runtime;
use crate::shared::confirm::ConfirmDialog;

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

fn tool_badges(tool: &Tool) -> Vec<&'static str> {
    let mut out = Vec::new();
    if !visible_to_model(tool) {
        out.push("app only");
    } else if ui_resource(tool).is_some() {
        out.push("has an app");
    }
    if tool.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true) {
        out.push("read-only");
    }
    if tool.annotations.as_ref().and_then(|a| a.destructive_hint) == Some(true) {
        out.push("destructive");
    }
    out
}

fn run(
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

#[component]
fn ServerCard(id: ServerId) -> impl IntoView {
    let mcp = use_mcp();
    let rt = use_runtime();
    let server: Memo<Option<ServerView>> = {
        let (mcp, id) = (mcp.clone(), id.clone());
        Memo::new(move |_| mcp.server(id.as_str()))
    };
    let status = Memo::new(move |_| server.with(|s| s.as_ref().map(|s| s.status.clone())));
    let head = Memo::new(move |_| {
        server.with(|s| {
            s.as_ref().map(|s| {
                let implementation = s.info.as_ref().and_then(|i| i.implementation.clone());
                (
                    s.entry.clone(),
                    implementation,
                    s.info.as_ref().map(|i| i.era),
                )
            })
        })
    });
    let instructions = Memo::new(move |_| {
        server.with(|s| {
            s.as_ref()
                .and_then(|s| s.info.as_ref().and_then(|i| i.instructions.clone()))
        })
    });
    let tools = Memo::new(move |_| {
        server.with(|s| s.as_ref().map(|s| s.tools.clone()).unwrap_or_default())
    });
    let resources = Memo::new(move |_| {
        server.with(|s| {
            s.as_ref()
                .map(|s| (s.resources.clone(), s.templates.clone()))
                .unwrap_or_default()
        })
    });
    let prompts = Memo::new(move |_| {
        server.with(|s| s.as_ref().map(|s| s.prompts.clone()).unwrap_or_default())
    });
    let problems = Memo::new(move |_| {
        server.with(|s| s.as_ref().map(|s| s.problems.clone()).unwrap_or_default())
    });
    let log =
        Memo::new(move |_| server.with(|s| s.as_ref().map(|s| s.log.clone()).unwrap_or_default()));
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let confirming = RwSignal::new(false);
    let enabled = Memo::new(move |_| server.with(|s| s.as_ref().is_some_and(|s| s.entry.enabled)));
    let relay = Memo::new(move |_| server.with(|s| s.as_ref().is_some_and(|s| s.entry.relay)));
    let remote = Memo::new(move |_| {
        server.with(|s| {
            s.as_ref()
                .is_some_and(|s| matches!(s.entry.source, ServerSource::Remote { .. }))
        })
    });
    // A connection that waits for the person's sign-in says so.
    let signing = {
        let pending = mcp.sign_ins().pending;
        let id = id.clone();
        Memo::new(move |_| pending.with(|l| l.iter().any(|p| p.server == id)))
    };
    let status_label = move || status.with(|s| card::status_label(s.as_ref(), signing.get()));
    let permissions = rt.versions().permissions;
    let skill_state = {
        let rt = rt.clone();
        move |sid: &str| -> Option<bool> {
            permissions.track();
            rt.versions().registry.track();
            let registry = rt.registry();
            let def = registry.get_str(sid)?;
            Some(rt.data().permissions.borrow().is_enabled(def))
        }
    };

    let toggle = {
        let (mcp, id) = (mcp.clone(), id.clone());
        move |on: bool| {
            let id = id.clone();
            run(&mcp, error, async move |m| m.set_enabled(&id, on).await)
        }
    };
    let reconnect = {
        let (mcp, id) = (mcp.clone(), id.clone());
        move |_| {
            let id = id.clone();
            error.set(None);
            run(&mcp, error, async move |m| {
                m.connect(id).await;
                Ok(())
            })
        }
    };
    let set_relay = {
        let (mcp, id) = (mcp.clone(), id.clone());
        move |on: bool| {
            let id = id.clone();
            run(&mcp, error, async move |m| m.set_relay(&id, on).await)
        }
    };
    let remove = {
        let (mcp, id) = (mcp.clone(), id.clone());
        move || {
            let id = id.clone();
            confirming.set(false);
            run(&mcp, error, async move |m| m.remove(&id).await)
        }
    };
    let sid = id.to_string();
    let (sid_attr, sid_title, sid_switch, sid_confirm) =
        (sid.clone(), sid.clone(), sid.clone(), sid.clone());
    let (id_tools, id_prompts, id_relay) = (id.clone(), id.clone(), id.clone());
    let skills_count = Memo::new(move |_| tools.with(|t| card::skills_count(t)));

    view! {
        <article
            class="card server-card"
            data-server=sid_attr
            data-status=move || status.get().map(|s| s.as_str()).unwrap_or("off")
        >
            <header class="server-head">
                <span class="card-icon"><Icon name="server"/></span>
                <div class="server-title">
                    <h2>{sid_title}</h2>
                    {move || head.get().map(|(entry, implementation, era)| {
                        let (what, place) = subtitle(&entry.source, implementation.as_ref());
                        view! {
                            <p class="muted server-sub">
                                {(!what.is_empty()).then(|| view! { <span class="server-impl">{what}</span>" · " })}
                                <span class="server-url">{place}</span>
                            </p>
                            {era.map(|e| view! { <p class="server-era muted">{e.label()}</p> })}
                        }
                    })}
                </div>
                <span class=move || format!("status server-status status-{}", status.get().map(|s| s.as_str()).unwrap_or("off"))>
                    {status_label}
                </span>
                <label class="switch">
                    <input
                        type="checkbox"
                        role="switch"
                        aria-label=format!("Use {sid_switch}")
                        prop:checked=move || enabled.get()
                        on:change=move |ev| toggle(event_target_checked(&ev))
                    />
                    <span>"On"</span>
                </label>
            </header>
            {move || match status.get() {
                Some(Status::Failed(message)) => Some(view! {
                    <div class="server-error" role="alert">
                        <p>{message}</p>
                    </div>
                }),
                _ => None,
            }}
            <Show when=move || error.get().is_some()>
                <p class="inline-error" role="alert">{move || error.get().unwrap_or_default()}</p>
            </Show>
            {move || instructions.get().map(|text| view! {
                <details class="server-instructions">
                    <summary>"Instructions from the server"</summary>
                    <p class="muted">"Offered to the assistant whenever one of these tools is loaded."</p>
                    <pre>{text}</pre>
                </details>
            })}
            <Show when=move || status.get() == Some(Status::Connected)>
                <div class="server-lists">
                    <details class="server-tools" open>
                        <summary>{move || format!("Tools ({})", tools.with(Vec::len))}</summary>
                        <p class="muted">
                            {move || format!("{} of them are skills, off until you switch them on in ", skills_count.get())}
                            <a href="#/skills">"Skills"</a>
                            ", where each also gets its approval setting."
                        </p>
                        <ul class="server-items" tabindex="0" aria-label="Tools">
                            {
                                let id = id_tools.clone();
                                let skill_state = skill_state.clone();
                                move || tools.get().into_iter().map(|t| {
                                    let badges = tool_badges(&t);
                                    let sid = skill_id(&id, &t.name).to_string();
                                    let state = skill_state.clone();
                                    let on = move || state(&sid);
                                    view! {
                                        <li class="server-item" data-tool=t.name.clone()>
                                            <code>{t.name.clone()}</code>
                                            {badges.into_iter().map(|b| view! { <span class="tag">{b}</span> }).collect_view()}
                                            {move || on().map(|on| view! {
                                                <span class=if on { "tag tag-on" } else { "tag" }>{if on { "on" } else { "off" }}</span>
                                            })}
                                            <span class="muted item-text">{t.description.clone().unwrap_or_default()}</span>
                                        </li>
                                    }
                                }).collect_view()
                            }
                        </ul>
                    </details>
                    <details class="server-resources">
                        <summary>{move || resources.with(|(r, t)| format!("Resources ({})", r.len() + t.len()))}</summary>
                        <p class="muted">"Attach them to a message with the paperclip in the composer."</p>
                        <ul class="server-items" tabindex="0" aria-label="Resources">
                            {move || {
                                let (list, templates) = resources.get();
                                let (shown, more) = shown_resources(&list);
                                view! {
                                    {shown.iter().map(|r| view! {
                                        <li class="server-item" data-uri=r.uri.clone()>
                                            <span>{r.title.clone().unwrap_or(r.name.clone())}</span>
                                            <code class="muted">{r.uri.clone()}</code>
                                            {r.mime_type.clone().map(|m| view! { <span class="tag">{m}</span> })}
                                        </li>
                                    }).collect_view()}
                                    {(more > 0).then(|| view! { <li class="muted">{format!("and {more} more")}</li> })}
                                    {templates.into_iter().map(|t| view! {
                                        <li class="server-item">
                                            <span>{t.title.clone().unwrap_or(t.name.clone())}</span>
                                            <code class="muted">{t.uri_template.clone()}</code>
                                            <span class="tag">"template"</span>
                                        </li>
                                    }).collect_view()}
                                }
                            }}
                        </ul>
                    </details>
                    <details class="server-prompts">
                        <summary>{move || format!("Prompts ({})", prompts.with(Vec::len))}</summary>
                        <p class="muted">"Type their command in the composer to put the prompt's text there."</p>
                        <ul class="server-items" tabindex="0" aria-label="Prompts">
                            {
                                let id = id_prompts.clone();
                                move || prompts.get().into_iter().map(|p| {
                                    let command = hearth_core::ui::mcp_composer::command_name(&id, &p.name);
                                    let args = p.arguments.iter().map(|a| a.name.clone()).collect::<Vec<_>>().join(", ");
                                    view! {
                                        <li class="server-item" data-prompt=p.name.clone()>
                                            <code>"/"{command}</code>
                                            {(!args.is_empty()).then(|| view! { <span class="tag">{args}</span> })}
                                            <span class="muted item-text">{p.description.clone().unwrap_or_default()}</span>
                                        </li>
                                    }
                                }).collect_view()
                            }
                        </ul>
                    </details>
                </div>
            </Show>
            {move || {
                let list = problems.get();
                (!list.is_empty()).then(|| view! {
                    <ul class="server-problems">
                        {list.into_iter().map(|p| view! { <li>{p}</li> }).collect_view()}
                    </ul>
                })
            }}
            {move || {
                let lines = log.get();
                (!lines.is_empty()).then(|| view! {
                    <details class="server-log">
                        <summary>{format!("Server log ({})", lines.len())}</summary>
                        <pre>{lines.join("\n")}</pre>
                    </details>
                })
            }}
            <footer class="server-actions">
                <button class="small" on:click=reconnect disabled=move || !enabled.get()>"Reconnect"</button>
                <Show when=move || remote.get()>
                    <label class="check small">
                        <input
                            type="checkbox"
                            aria-label=format!("Connect {} through Hearth", id_relay)
                            prop:checked=move || relay.get()
                            on:change={
                                let set_relay = set_relay.clone();
                                move |ev| set_relay(event_target_checked(&ev))
                            }
                        />
                        <span>"Connect through Hearth"</span>
                    </label>
                </Show>
                <span class="spacer"></span>
                <button class="small danger" on:click=move |_| confirming.set(true)>"Remove…"</button>
            </footer>
            <Show when=move || confirming.get()>
                <ConfirmDialog
                    title=format!("Remove {sid_confirm}?")
                    message=removal_message(&sid_confirm, skills_count.get_untracked())
                    confirm_label="Remove server".to_string()
                    on_confirm={
                        let remove = remove.clone();
                        move || remove()
                    }
                    on_cancel=move || confirming.set(false)
                />
            </Show>
        </article>
    }
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
