//! The consent dialog for an agent signing in through OAuth: `hearth
//! serve` relays each request on the channel, and the person allows or
//! denies it here, in the tab, which alone holds the app's key to answer
//! (`hearth_core::agents::consent`). It names the client, where the
//! answer goes and which skills it will see; Allow connects the agent as
//! Settings → Agents does, Deny sends the client `access_denied`.

use std::rc::Rc;

use hearth_core::agents::consent::ConsentRequest;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::shared::modal::Modal;

/// The consents waiting in this tab, first asked first.
#[derive(Clone, Copy)]
pub struct Consents {
    queue: RwSignal<Vec<ConsentRequest>>,
}

impl Consents {
    /// Shows the dialog whenever a consent waits, from now on; the
    /// person's answer goes to `answer`.
    pub fn mount(answer: AnswerFn) -> Consents {
        let consents = Consents {
            queue: RwSignal::new(Vec::new()),
        };
        let host = web_sys::window().and_then(|w| w.document()).and_then(|d| {
            let el = d.create_element("div").ok()?;
            el.set_id("agent-consent-root");
            d.body()?.append_child(&el).ok()?;
            el.dyn_into::<web_sys::HtmlElement>().ok()
        });
        if let Some(host) = host {
            let handle = leptos::mount::mount_to(host, move || {
                view! { <ConsentDialog queue=consents.queue answer=answer.clone()/> }
            });
            handle.forget();
        }
        consents
    }

    /// A client asks to connect.
    pub fn ask(&self, request: ConsentRequest) {
        self.queue.update(|q| {
            if !q.iter().any(|r| r.consent == request.consent) {
                q.push(request);
            }
        });
    }
}

/// Takes the person's answer to a consent: allowed or not, and the
/// skills the agent will see.
pub type AnswerFn = Rc<dyn Fn(ConsentRequest, bool, Vec<String>)>;

/// Sends the person's answer; an answer the server no longer waits for
/// (it expired, the server restarted) is reported in the console only,
/// since the agent's page says what to do next.
#[component]
fn ConsentDialog(queue: RwSignal<Vec<ConsentRequest>>, answer: AnswerFn) -> impl IntoView {
    let answer = StoredValue::new_local(answer);
    move || {
        let request = queue.with(|q| q.first().cloned())?;
        let chosen = RwSignal::new(request.shared.clone());
        let finish = {
            let request = request.clone();
            move |allow: bool| {
                queue.update(|q| q.retain(|r| r.consent != request.consent));
                answer.with_value(|a| a(request.clone(), allow, chosen.get_untracked()));
            }
        };
        let deny = finish.clone();
        let deny_on_escape = finish.clone();
        let allow = finish;
        let skills = request
            .shared
            .iter()
            .map(|skill| {
                let skill = skill.clone();
                let id = format!("consent-skill-{skill}");
                let label_for = id.clone();
                let toggled = skill.clone();
                view! {
                    <li>
                        <label for=label_for>
                            <input
                                type="checkbox"
                                id=id
                                prop:checked={
                                    let skill = skill.clone();
                                    move || chosen.with(|c| c.contains(&skill))
                                }
                                on:change=move |_| chosen.update(|c| {
                                    if let Some(at) = c.iter().position(|s| *s == toggled) {
                                        c.remove(at);
                                    } else {
                                        c.push(toggled.clone());
                                    }
                                })
                            />
                            " "{skill.clone()}
                        </label>
                    </li>
                }
            })
            .collect_view();
        Some(view! {
            <Modal
                labelledby="consent-title"
                class="agent-consent"
                dismissable=false
                on_escape=Callback::new(move |_| deny_on_escape(false))
            >
                <h2 id="consent-title">{format!("{} wants to connect to Hearth", request.client_name)}</h2>
                <p>
                    "After you allow it, it can see the skills below and ask to use them; calls that change something still ask you first. "
                    "Your answer goes back to "<strong>{request.redirect_host.clone()}</strong>"."
                </p>
                <fieldset>
                    <legend>"Skills it will see"</legend>
                    <ul class="consent-skills">{skills}</ul>
                </fieldset>
                <p class="hint">"You can change this, or revoke it, in Settings → Agents."</p>
                <div class="modal-actions">
                    <button data-autofocus on:click=move |_| deny(false)>"Deny"</button>
                    <button class="primary" on:click=move |_| allow(true)>"Allow"</button>
                </div>
            </Modal>
        })
    }
}
