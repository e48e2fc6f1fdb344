//! One server's card on the Servers page: its name, what it is and where,
//! its protocol era and status, the switch, the error in plain words, its
//! instructions, tools, resources and prompts, problems and log, and
//! Reconnect, the relay choice and Remove.

use hearth_core::mcp::model::Tool;
use hearth_core::mcp::servers::ServerSource;
use hearth_core::mcp::skills::{ServerId, skill_id, ui_resource, visible_to_model};
use hearth_core::ui::server_card::{self as card, removal_message, shown_resources, subtitle};
use leptos::prelude::*;

use super::run;
use crate::icons::Icon;
use crate::mcp::{ServerView, Status, use_mcp};
use crate::runtime::use_runtime;
use crate::shared::confirm::ConfirmDialog;

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

/// The server as the card shows it; `None` once it is removed.
type Server = Memo<Option<ServerView>>;

#[component]
pub(super) fn ServerCard(id: ServerId) -> impl IntoView {
    let mcp = use_mcp();
    let server: Server = {
        let (mcp, id) = (mcp.clone(), id.clone());
        Memo::new(move |_| mcp.server(id.as_str()))
    };
    let status = Memo::new(move |_| server.with(|s| s.as_ref().map(|s| s.status.clone())));
    let tools = Memo::new(move |_| {
        server.with(|s| s.as_ref().map(|s| s.tools.clone()).unwrap_or_default())
    });
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let confirming = RwSignal::new(false);
    let remove = {
        let (mcp, id) = (mcp.clone(), id.clone());
        move || {
            let id = id.clone();
            confirming.set(false);
            run(&mcp, error, async move |m| m.remove(&id).await)
        }
    };
    let sid = id.to_string();
    let sid_confirm = sid.clone();
    let (id_tools, id_prompts) = (id.clone(), id.clone());
    let skills_count = Memo::new(move |_| tools.with(|t| card::skills_count(t)));

    view! {
        <article
            class="card server-card"
            data-server=sid
            data-status=move || status.get().map(|s| s.as_str()).unwrap_or("off")
        >
            <ServerHead id=id.clone() server=server status=status error=error/>
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
            <Instructions server=server/>
            <Show when=move || status.get() == Some(Status::Connected)>
                <div class="server-lists">
                    <ToolList id=id_tools.clone() tools=tools skills_count=skills_count/>
                    <ResourceList server=server/>
                    <PromptList id=id_prompts.clone() server=server/>
                </div>
            </Show>
            <ProblemsAndLog server=server/>
            <ServerActions id=id server=server error=error confirming=confirming/>
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

/// The card's head: the server's name, what it is and where, its era,
/// its status (or that it waits for a sign-in) and the On switch.
#[component]
fn ServerHead(
    id: ServerId,
    server: Server,
    status: Memo<Option<Status>>,
    error: RwSignal<Option<String>>,
) -> impl IntoView {
    let mcp = use_mcp();
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
    let enabled = Memo::new(move |_| server.with(|s| s.as_ref().is_some_and(|s| s.entry.enabled)));
    // A connection that waits for the person's sign-in says so.
    let signing = {
        let pending = mcp.sign_ins().pending;
        let id = id.clone();
        Memo::new(move |_| pending.with(|l| l.iter().any(|p| p.server == id)))
    };
    let status_label = move || status.with(|s| card::status_label(s.as_ref(), signing.get()));
    let toggle = {
        let (mcp, id) = (mcp.clone(), id.clone());
        move |on: bool| {
            let id = id.clone();
            run(&mcp, error, async move |m| m.set_enabled(&id, on).await)
        }
    };
    let (sid_title, sid_switch) = (id.to_string(), id.to_string());
    view! {
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
    }
}

/// What the server asks the assistant to keep in mind, when it says.
#[component]
fn Instructions(server: Server) -> impl IntoView {
    let instructions = Memo::new(move |_| {
        server.with(|s| {
            s.as_ref()
                .and_then(|s| s.info.as_ref().and_then(|i| i.instructions.clone()))
        })
    });
    move || {
        instructions.get().map(|text| view! {
            <details class="server-instructions">
                <summary>"Instructions from the server"</summary>
                <p class="muted">"Offered to the assistant whenever one of these tools is loaded."</p>
                <pre>{text}</pre>
            </details>
        })
    }
}

/// The server's tools, each with its badges and whether its skill is on.
#[component]
fn ToolList(id: ServerId, tools: Memo<Vec<Tool>>, skills_count: Memo<usize>) -> impl IntoView {
    let rt = use_runtime();
    let permissions = rt.versions().permissions;
    let skill_state = move |sid: &str| -> Option<bool> {
        permissions.track();
        rt.versions().registry.track();
        let registry = rt.registry();
        let def = registry.get_str(sid)?;
        Some(rt.data().permissions.borrow().is_enabled(def))
    };
    view! {
        <details class="server-tools" open>
            <summary>{move || format!("Tools ({})", tools.with(Vec::len))}</summary>
            <p class="muted">
                {move || format!("{} of them are skills, off until you switch them on in ", skills_count.get())}
                <a href="#/skills">"Skills"</a>
                ", where each also gets its approval setting."
            </p>
            <ul class="server-items" tabindex="0" aria-label="Tools">
                {move || tools.get().into_iter().map(|t| {
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
                }).collect_view()}
            </ul>
        </details>
    }
}

/// The server's resources (the first of them, and how many more) and its
/// resource templates.
#[component]
fn ResourceList(server: Server) -> impl IntoView {
    let resources = Memo::new(move |_| {
        server.with(|s| {
            s.as_ref()
                .map(|s| (s.resources.clone(), s.templates.clone()))
                .unwrap_or_default()
        })
    });
    view! {
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
    }
}

/// The server's prompts, each with the command that puts it in the
/// composer and the arguments it takes.
#[component]
fn PromptList(id: ServerId, server: Server) -> impl IntoView {
    let prompts = Memo::new(move |_| {
        server.with(|s| s.as_ref().map(|s| s.prompts.clone()).unwrap_or_default())
    });
    view! {
        <details class="server-prompts">
            <summary>{move || format!("Prompts ({})", prompts.with(Vec::len))}</summary>
            <p class="muted">"Type their command in the composer to put the prompt's text there."</p>
            <ul class="server-items" tabindex="0" aria-label="Prompts">
                {move || prompts.get().into_iter().map(|p| {
                    let command = hearth_core::ui::mcp_composer::command_name(&id, &p.name);
                    let args = p.arguments.iter().map(|a| a.name.clone()).collect::<Vec<_>>().join(", ");
                    view! {
                        <li class="server-item" data-prompt=p.name.clone()>
                            <code>"/"{command}</code>
                            {(!args.is_empty()).then(|| view! { <span class="tag">{args}</span> })}
                            <span class="muted item-text">{p.description.clone().unwrap_or_default()}</span>
                        </li>
                    }
                }).collect_view()}
            </ul>
        </details>
    }
}

/// What went wrong in what the server offered, and its log.
#[component]
fn ProblemsAndLog(server: Server) -> impl IntoView {
    let problems = Memo::new(move |_| {
        server.with(|s| s.as_ref().map(|s| s.problems.clone()).unwrap_or_default())
    });
    let log =
        Memo::new(move |_| server.with(|s| s.as_ref().map(|s| s.log.clone()).unwrap_or_default()));
    view! {
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
    }
}

/// Reconnect, connecting a remote server through Hearth's relay, and
/// Remove (which asks first).
#[component]
fn ServerActions(
    id: ServerId,
    server: Server,
    error: RwSignal<Option<String>>,
    confirming: RwSignal<bool>,
) -> impl IntoView {
    let mcp = use_mcp();
    let enabled = Memo::new(move |_| server.with(|s| s.as_ref().is_some_and(|s| s.entry.enabled)));
    let relay = Memo::new(move |_| server.with(|s| s.as_ref().is_some_and(|s| s.entry.relay)));
    let remote = Memo::new(move |_| {
        server.with(|s| {
            s.as_ref()
                .is_some_and(|s| matches!(s.entry.source, ServerSource::Remote { .. }))
        })
    });
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
    view! {
        <footer class="server-actions">
            <button class="small" on:click=reconnect disabled=move || !enabled.get()>"Reconnect"</button>
            <Show when=move || remote.get()>
                <label class="check small">
                    <input
                        type="checkbox"
                        aria-label=format!("Connect {} through Hearth", id)
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
    }
}
