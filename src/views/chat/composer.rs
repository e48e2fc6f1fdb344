//! The composer: a view of core's [`composer::Composer`], which decides
//! what a line means (keys, Enter, queued messages, the lines typed
//! before); the component renders it and [`carry_out`] does the effects it
//! asks for (runs, messages, forms, prompt fetches, stops), reporting back.

use hearth_core::assistant::agent::{Conversation, ToolCallRecord};
use hearth_core::discovery::{Discovery, IndexedSkill, discover};
use hearth_core::ui::composer;
use hearth_core::ui::mcp_composer::{Attachment, PromptCommand};
use hearth_core::{CallOrigin, SkillDefinition, SkillId};
use leptos::ev::KeyboardEvent;
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::Value;

use crate::assistant::{Assistant, use_assistant};
use crate::icons::Icon;
use crate::mcp::{Mcp, use_mcp};
use crate::runtime::{Runtime, use_runtime};
use crate::views::chat::attachments::{AttachButton, AttachmentList, Attachments, use_attachments};
use crate::views::chat::pictures::{PictureButton, PictureTray, Pictures, use_pictures};
use crate::views::chat::resources::{AttachmentChips, ResourcePicker};
use crate::views::chat::skill_form::SkillFormDialog;

use super::focus_composer;

/// Free text in the command bar: the enabled skills discovery finds.
fn discovered(rt: &Runtime, text: &str) -> Option<Discovery> {
    let text = text.trim();
    if text.is_empty() || text.starts_with('/') {
        return None;
    }
    let permissions = rt.data().permissions.borrow().clone();
    let enabled = move |s: &IndexedSkill| permissions.is_indexed_enabled(s);
    let index = rt.services().index.borrow();
    let mut found = discover(&index, text, None, &enabled);
    hearth_core::ui::command::lead_first(&rt.registry(), text, &mut found.skills);
    // Packages are used by name here: say which ones fit.
    if found.skills.is_empty() && !found.packages.is_empty() {
        let names: Vec<String> = found
            .packages
            .iter()
            .map(|p| format!("/{}", p.name))
            .collect();
        found.message = format!("Skill packages that fit: {}", names.join(", "));
    }
    Some(found)
}

/// Runs a skill the person chose, in the open conversation, through the
/// call path; the conversation keeps the line and the result as a message
/// of its own (its card joins the timeline then), and `done` runs at the
/// end.
fn run_skill(
    a: Assistant,
    skill: SkillDefinition,
    args: Value,
    line: String,
    from_form: bool,
    done: impl FnOnce() + 'static,
) {
    let rt = a.runtime().clone();
    let conv = a.commit_current(&line);
    spawn_local(async move {
        let (call, result) = rt
            .invoke_in(skill.id.clone(), args, CallOrigin::User, conv.clone())
            .await;
        if let Some(id) = conv {
            a.record_command(&id, &line, ToolCallRecord::ran(&call, result), from_form);
        }
        done();
    });
}

/// The names of the installed Agent Skills packages, for `/name`.
fn package_names(rt: &Runtime) -> Vec<String> {
    rt.agent_skills()
        .library()
        .iter()
        .map(|p| p.name().to_string())
        .collect()
}

/// What the composer's parts share: core's composer, the signals it reads
/// and the services its effects use.
#[derive(Clone)]
struct Parts {
    rt: Runtime,
    a: Assistant,
    mcp: Mcp,
    files: Attachments,
    pictures: Pictures,
    state: RwSignal<composer::Composer>,
    /// The line as typed.
    text: Memo<String>,
    /// The skill form open, with what it starts with.
    form: RwSignal<Option<(SkillDefinition, Value)>>,
    /// Server resources attached to the next message.
    attachments: RwSignal<Vec<Attachment>>,
    /// Prompts of connected MCP servers: `/server:prompt` commands.
    prompts: Memo<Vec<PromptCommand>>,
    found: Memo<Option<Discovery>>,
    conversation: Memo<Option<Conversation>>,
    has_model: Signal<bool>,
    replying: Signal<bool>,
    progress: RwSignal<Option<String>>,
}

impl Parts {
    fn new(conversation: Memo<Option<Conversation>>, has_model: Signal<bool>) -> Self {
        let (rt, a, mcp) = (use_runtime(), use_assistant(), use_mcp());
        let state = RwSignal::new(composer::Composer::new());
        let text = Memo::new(move |_| state.with(|c| c.text.clone()));
        let prompts = {
            let mcp = mcp.clone();
            Memo::new(move |_| mcp.prompt_commands())
        };
        let found = {
            let rt = rt.clone();
            let permissions = rt.versions().permissions;
            Memo::new(move |_| {
                permissions.track();
                if has_model.get() {
                    return None;
                }
                discovered(&rt, &text.get())
            })
        };
        let replying = {
            let a = a.clone();
            Signal::derive(move || {
                conversation.with(|c| {
                    c.as_ref()
                        .is_some_and(|c| a.running.with(|r| r.contains(&c.id)))
                })
            })
        };
        Parts {
            progress: mcp.progress(),
            files: use_attachments(),
            pictures: use_pictures(),
            form: RwSignal::new(None),
            attachments: RwSignal::new(Vec::new()),
            rt,
            a,
            mcp,
            state,
            text,
            prompts,
            found,
            conversation,
            has_model,
            replying,
        }
    }

    /// Runs `f` on core's composer with the context it reads.
    fn with_cx<T: Default>(
        &self,
        f: impl FnOnce(&mut composer::Composer, &composer::Context) -> T,
    ) -> T {
        let registry = self.rt.registry();
        let prompts = self.prompts.get_untracked();
        let packages = package_names(&self.rt);
        let found = self.found.get_untracked();
        let cx = composer::Context {
            registry: &registry,
            prompts: &prompts,
            packages: &packages,
            has_model: self.has_model.get_untracked(),
            replying: self.replying.get_untracked(),
            found: found.as_ref(),
            pictures: self.pictures.any(),
        };
        self.state.try_update(|c| f(c, &cx)).unwrap_or_default()
    }

    /// As [`Self::with_cx`], with the attached resources handed to core's
    /// composer first and taken back after (a message sent takes them).
    fn with_attachments<T: Default>(
        &self,
        f: impl FnOnce(&mut composer::Composer, &composer::Context) -> T,
    ) -> T {
        let attached = self.attachments.get_untracked();
        self.state.update(|c| c.attachments = attached);
        let out = self.with_cx(f);
        self.attachments
            .set(self.state.with_untracked(|c| c.attachments.clone()));
        out
    }

    fn submit(&self) {
        let fx = self.with_attachments(|c, cx| c.submit(cx));
        carry_out(self, fx);
    }

    fn conversation_id(&self) -> Option<String> {
        self.conversation
            .with_untracked(|c| c.as_ref().map(|c| c.id.clone()))
    }
}

/// Carries out what core's composer asked for; results report back to it.
fn carry_out(p: &Parts, effects: Vec<composer::Effect>) {
    let state = p.state;
    for effect in effects {
        match effect {
            composer::Effect::Run {
                ticket,
                skill,
                arguments,
                line,
                from_form,
            } => {
                let Some(def) = p.rt.registry().get(&skill).cloned() else {
                    state.update(|c| {
                        c.finished(ticket);
                        c.error = Some(format!("/{skill} is no longer installed."));
                    });
                    continue;
                };
                // Attached files go to the next code run, and only to it.
                let (arguments, handed) = p.files.hand_to(def.id.as_str(), arguments);
                if handed {
                    p.files.spent();
                }
                p.progress.set(None);
                run_skill(p.a.clone(), def, arguments, line, from_form, move || {
                    let _ = state.try_update(|c| c.finished(ticket));
                });
            }
            composer::Effect::Send { message } => {
                // The pictures in the tray go with the message; one that is
                // not sent gets them back.
                let pictures = p.pictures;
                let images = pictures.take();
                let first_line = match (message.trim().is_empty(), images.first()) {
                    (true, Some(picture)) => picture.alt.clone(),
                    _ => message.clone(),
                };
                let Some(id) = p.a.commit_current(&first_line) else {
                    let e = "There is no conversation to send to.".to_string();
                    pictures.put_back(images);
                    state.update(|c| c.send_failed(message, e));
                    continue;
                };
                let a = p.a.clone();
                spawn_local(async move {
                    if let Err(e) = a.send(&id, &message, images.clone()).await {
                        pictures.put_back(images);
                        let _ = state.try_update(|c| c.send_failed(message, e.to_string()));
                    }
                });
            }
            composer::Effect::OpenForm { skill, prefill } => {
                let def = p.rt.registry().get(&skill).cloned();
                p.form.set(def.map(|d| (d, prefill)));
            }
            composer::Effect::FetchPrompt {
                ticket,
                command,
                input,
            } => {
                let mcp = p.mcp.clone();
                spawn_local(async move {
                    let what = format!("The prompt {} of {}", command.title, command.server);
                    match mcp.run_prompt(&command, &input).await {
                        Ok(prompt) => {
                            let _ = state.try_update(|c| c.prompt_ready(ticket, prompt, what));
                        }
                        Err(e) => {
                            let _ = state.try_update(|c| c.prompt_failed(ticket, e));
                        }
                    }
                });
            }
            composer::Effect::Stop => {
                if let Some(id) = p.conversation_id() {
                    p.a.stop(&id);
                }
            }
        }
    }
}

/// What the composer follows outside itself: the progress line ends with
/// the work under way; the open conversation's lines are its history; a
/// reply's end sends the oldest queued message, and another conversation
/// brings them all back; an example from the empty chat runs as typed.
fn follow(p: &Parts, example: RwSignal<Option<String>>) {
    let (state, replying, conversation, progress) =
        (p.state, p.replying, p.conversation, p.progress);
    Effect::new(move |_| {
        let idle = state.with(|c| c.running.is_empty());
        if idle && !replying.get() {
            progress.set(None);
        }
    });
    Effect::new(move |before: Option<Option<String>>| {
        let id = conversation.with(|c| c.as_ref().map(|c| c.id.clone()));
        if before.as_ref() != Some(&id) {
            let lines = conversation
                .with_untracked(|c| c.as_ref().map(composer::lines_typed).unwrap_or_default());
            state.update(|c| c.set_history(lines));
        }
        id
    });
    let ended = p.clone();
    Effect::new(move |before: Option<(Option<String>, bool)>| {
        let id = conversation.with(|c| c.as_ref().map(|c| c.id.clone()));
        let now = replying.get();
        if let Some((was_id, was)) = before {
            if was_id != id {
                state.update(|c| c.left_conversation());
            } else if was && !now {
                let fx = state.try_update(|c| c.reply_ended()).unwrap_or_default();
                carry_out(&ended, fx);
            }
        }
        (id, now)
    });
    let run = p.clone();
    Effect::new(move |_| {
        if let Some(line) = example.get() {
            example.set(None);
            state.update(|c| c.input(line));
            run.submit();
            focus_composer();
        }
    });
}

/// The composer.
#[component]
pub(super) fn Composer(
    conversation: Memo<Option<Conversation>>,
    has_model: Signal<bool>,
    /// An example line to run, from the empty chat.
    example: RwSignal<Option<String>>,
) -> impl IntoView {
    let p = Parts::new(conversation, has_model);
    follow(&p, example);
    let (state, text, form) = (p.state, p.text, p.form);
    let picking = RwSignal::new(false);
    // A code run of this conversation under way: Stop, or Esc in the
    // composer, ends it (a reply's Stop ends its runs too).
    let code_running = {
        let running = p.rt.sandbox().running();
        Signal::derive(move || {
            let id = conversation.with(|c| c.as_ref().map(|c| c.id.clone()));
            running.with(|r| r.iter().any(|x| x.conversation == id))
        })
    };
    let stop_code = {
        let p = p.clone();
        Callback::new(move |_: ()| {
            p.rt.sandbox().stop_in(p.conversation_id().as_deref());
        })
    };
    let stop_reply = {
        let p = p.clone();
        Callback::new(move |_: ()| {
            if let Some(id) = p.conversation_id() {
                p.a.stop(&id);
            }
        })
    };
    let on_keydown = {
        let p = p.clone();
        move |ev: KeyboardEvent| {
            let Some(key) = composer::Key::from_name(&ev.key(), ev.shift_key()) else {
                return;
            };
            let handled = p.with_attachments(|c, cx| c.key(key, cx));
            let stops = composer::key_stops_code(
                key,
                &handled,
                code_running.get_untracked(),
                p.replying.get_untracked(),
            );
            if handled.prevent_default || stops {
                ev.prevent_default();
            }
            if stops {
                stop_code.run(());
            }
            carry_out(&p, handled.effects);
        }
    };
    let pick_found = {
        let p = p.clone();
        Callback::new(move |id: SkillId| {
            let fx = p.with_cx(|c, cx| c.pick_found(&id, cx));
            carry_out(&p, fx);
        })
    };
    let on_form_run = {
        let p = p.clone();
        Callback::new(move |args: Value| {
            if let Some((skill, _)) = form.get_untracked() {
                form.set(None);
                let effect =
                    state.try_update(|c| c.form_ran(skill.id.clone(), args, skill.name.clone()));
                carry_out(&p, effect.into_iter().collect());
            }
        })
    };
    let on_form_close = Callback::new(move |_| {
        form.set(None);
        state.update(|c| c.form_closed());
    });
    let (replying, attachments, mcp) = (p.replying, p.attachments, p.mcp.clone());

    view! {
        <form class="composer" on:submit={
            let p = p.clone();
            move |ev: leptos::ev::SubmitEvent| {
                ev.prevent_default();
                p.submit();
            }
        }>
            <CommandSuggestions p=p.clone()/>
            <FoundSkills p=p.clone() pick=pick_found/>
            <CommandHelp state=state/>
            <AttachmentList/>
            <PictureTray/>
            <AttachmentChips attachments=attachments/>
            <div class="composer-row">
                <AttachButton/>
                <PictureButton/>
                <Show when=move || !mcp.resources().is_empty()>
                    <button
                        type="button"
                        class="icon-button attach-button"
                        aria-label="Attach a resource"
                        title="Attach a resource from an MCP server"
                        on:click=move |_| picking.set(true)
                    ><Icon name="server"/></button>
                </Show>
                <textarea
                    class="composer-input"
                    rows="1"
                    placeholder=move || if has_model.get() {
                        "Message the assistant — or / to run a skill"
                    } else {
                        "Type / to run a skill, e.g. /note Buy milk — or /help"
                    }
                    aria-label="Message or command"
                    prop:value=move || text.get()
                    on:input=move |ev| {
                        state.update(|c| c.input(event_target_value(&ev)));
                    }
                    on:keydown=on_keydown
                    on:paste={
                        let pictures = p.pictures;
                        move |ev: leptos::ev::ClipboardEvent| {
                            // Pasted pictures join the tray; pasted text
                            // is typed as usual.
                            if let Some(files) = pictures.from_paste(&ev) {
                                ev.prevent_default();
                                pictures.add(files);
                            }
                        }
                    }
                ></textarea>
                <ComposerButtons replying=replying has_model=has_model code_running=code_running stop_code=stop_code stop_reply=stop_reply/>
            </div>
            <ComposerNotes state=state replying=replying progress=p.progress/>
            <ComposerHint has_model=has_model/>
        </form>
        // Outside the form: the picker's buttons must not submit it.
        <Show when=move || picking.get()>
            <ResourcePicker
                on_pick=Callback::new(move |a| attachments.update(|l| l.push(a)))
                on_close=Callback::new(move |_| picking.set(false))
            />
        </Show>
        {move || form.get().map(|(skill, prefill)| view! {
            <SkillFormDialog skill=skill prefill=prefill on_run=on_form_run on_close=on_form_close/>
        })}
    }
}

/// The skills and server prompts a `/` line may complete to.
#[component]
fn CommandSuggestions(p: Parts) -> impl IntoView {
    let (state, text, prompts, rt) = (p.state, p.text, p.prompts, p.rt);
    let registry_version = rt.versions().registry;
    let matches = Memo::new(move |_| {
        registry_version.track();
        if !text.with(|line| line.starts_with('/')) {
            return Vec::new();
        }
        let registry = rt.registry();
        let prompts = prompts.get();
        let cx = composer::Context {
            registry: &registry,
            prompts: &prompts,
            packages: &[],
            has_model: false,
            replying: false,
            found: None,
            pictures: false,
        };
        state.with_untracked(|c| c.suggestions(&cx))
    });
    let selected = Memo::new(move |_| state.with(|c| c.selected));
    view! {
        <Show when=move || !matches.with(Vec::is_empty)>
            <ul class="suggestions" role="listbox" aria-label="Skills">
                {move || {
                    matches
                        .get()
                        .into_iter()
                        .enumerate()
                        .map(|(i, s)| {
                            let pick = s.word.clone();
                            view! {
                                <li
                                    role="option"
                                    aria-selected=move || (selected.get() == i).to_string()
                                    class:selected=move || selected.get() == i
                                    on:mousedown=move |ev| {
                                        ev.prevent_default();
                                        state.update(|c| c.complete(&pick));
                                    }
                                >
                                    <Icon name=s.icon.clone()/>
                                    <code>"/"{s.word.clone()}</code>
                                    <span class="muted">{s.label.clone()}</span>
                                </li>
                            }
                        })
                        .collect_view()
                }}
            </ul>
        </Show>
    }
}

/// Without a model: the skills discovery found for the free text, each
/// opening its form.
#[component]
fn FoundSkills(p: Parts, pick: Callback<SkillId>) -> impl IntoView {
    let (state, found, rt) = (p.state, p.found, p.rt);
    let selected = Memo::new(move |_| state.with(|c| c.selected));
    move || {
        found.get().map(|d| {
            if d.skills.is_empty() {
                view! {
                    <div class="suggestions discovered" role="status">
                        <p class="muted no-match">{d.message.clone()}</p>
                    </div>
                }
                .into_any()
            } else {
                view! {
                    <ul class="suggestions discovered" role="listbox" aria-label="Matching skills">
                        <li class="suggestions-title muted" role="presentation">"Skills for this — Enter opens a form"</li>
                        {d.skills.into_iter().enumerate().map(|(i, s)| {
                            let id = s.id.clone();
                            let icon = rt.registry().get(&s.id).map(|x| x.icon.clone()).unwrap_or_default();
                            view! {
                                <li
                                    role="option"
                                    data-skill=id.to_string()
                                    aria-selected=move || (selected.get() == i).to_string()
                                    class:selected=move || selected.get() == i
                                    on:mousedown=move |ev| {
                                        ev.prevent_default();
                                        pick.run(id.clone());
                                    }
                                >
                                    <Icon name=icon/>
                                    <span class="found-name">{s.name.clone()}</span>
                                    <span class="muted found-description">{s.description.clone()}</span>
                                </li>
                            }
                        }).collect_view()}
                    </ul>
                }
                .into_any()
            }
        })
    }
}

/// `/help`: the commands, with examples to try.
#[component]
fn CommandHelp(state: RwSignal<composer::Composer>) -> impl IntoView {
    let help = Memo::new(move |_| state.with(|c| c.help.clone()));
    move || {
        help.get().map(|h| {
            view! {
                // Closing the help (its button, or Esc inside it) hands
                // focus back to the composer rather than to the page.
                <section class="command-help" aria-label=h.title.clone()
                    on:keydown=move |ev: KeyboardEvent| {
                        if ev.key() == "Escape" {
                            ev.prevent_default();
                            state.update(|c| c.help = None);
                            focus_composer();
                        }
                    }
                >
                    <header class="command-help-head">
                        <h2>{h.title.clone()}</h2>
                        <button type="button" class="icon-button" aria-label="Close help"
                            on:click=move |_| {
                                state.update(|c| c.help = None);
                                focus_composer();
                            }
                        ><Icon name="x"/></button>
                    </header>
                    <dl>
                        {h.entries.into_iter().map(|e| view! {
                            <dt><code>{e.usage.clone()}</code></dt>
                            <dd>
                                <span>{e.summary.clone()}</span>
                                {e.examples.into_iter().map(|x| {
                                    let line = x.clone();
                                    view! {
                                        <span class="help-example">
                                            <code>{x}</code>
                                            <button type="button"
                                                title="Put this line in the composer"
                                                on:click=move |_| {
                                                    state.update(|c| c.input(line.clone()));
                                                    focus_composer();
                                                }
                                            >"Try"</button>
                                        </span>
                                    }
                                }).collect_view()}
                            </dd>
                        }).collect_view()}
                    </dl>
                </section>
            }
        })
    }
}

/// Send or Run (and Stop for a code run), or, while a reply comes, Queue
/// and Stop.
#[component]
fn ComposerButtons(
    replying: Signal<bool>,
    has_model: Signal<bool>,
    code_running: Signal<bool>,
    stop_code: Callback<()>,
    stop_reply: Callback<()>,
) -> impl IntoView {
    view! {
        <Show
            when=move || replying.get()
            fallback=move || view! {
                <button type="submit" class="primary">
                    {move || if has_model.get() { "Send" } else { "Run" }}
                </button>
                <Show when=move || code_running.get()>
                    <button type="button" class="stop" title="Stop the run (Esc)" on:click=move |_| stop_code.run(())>
                        <Icon name="stop"/>" Stop"
                    </button>
                </Show>
            }
        >
            <button type="submit" class="primary" title="Queued until the reply ends">"Queue"</button>
            <button type="button" class="stop" on:click=move |_| stop_reply.run(()) title="Stop (Esc)"><Icon name="stop"/>" Stop"</button>
        </Show>
    }
}

/// The composer's error, notice, status and progress lines.
#[component]
fn ComposerNotes(
    state: RwSignal<composer::Composer>,
    replying: Signal<bool>,
    progress: RwSignal<Option<String>>,
) -> impl IntoView {
    let error = Memo::new(move |_| state.with(|c| c.error.clone()));
    let notice = Memo::new(move |_| state.with(|c| c.notice.clone()));
    let status = Memo::new(move |_| state.with(|c| c.status()));
    let working = Memo::new(move |_| !state.with(|c| c.running.is_empty()));
    view! {
        <Show when=move || error.get().is_some()>
            <p class="inline-error" role="alert">{move || error.get().unwrap_or_default()}</p>
        </Show>
        <Show when=move || notice.get().is_some()>
            <p class="notice" role="status">{move || notice.get().unwrap_or_default()}</p>
        </Show>
        <Show when=move || status.get().is_some()>
            <p class="muted progress-line composer-status" role="status" data-testid="composer-status">
                {move || status.get().unwrap_or_default()}
            </p>
        </Show>
        <Show when=move || (working.get() || replying.get()) && progress.get().is_some()>
            <p class="muted progress-line" role="status">{move || progress.get().unwrap_or_default()}</p>
        </Show>
    }
}

/// The keys the composer answers, with a model or without.
#[component]
fn ComposerHint(has_model: Signal<bool>) -> impl IntoView {
    view! {
        <p class="hint">
            {move || if has_model.get() {
                view! { <kbd>"Enter"</kbd>" sends · "<kbd>"Shift"</kbd>"+"<kbd>"Enter"</kbd>" new line · "<kbd>"Esc"</kbd>" stops the reply · "<kbd>"/"</kbd>" runs a skill · "<kbd>"/help"</kbd>" lists them" }.into_any()
            } else {
                view! { <kbd>"Enter"</kbd>" runs · "<kbd>"Shift"</kbd>"+"<kbd>"Enter"</kbd>" new line · "<kbd>"Tab"</kbd>" completes · "<kbd>"/help"</kbd>" lists the commands · "<kbd>"Ctrl"</kbd>"+"<kbd>"Shift"</kbd>"+"<kbd>"O"</kbd>" new chat" }.into_any()
            }}
        </p>
    }
}
