//! The form for running a skill without a model: one control per field
//! of core's `form::Form` (generated from the skill's input schema:
//! required fields first, then the schema's order; for a skill that lists
//! its actions, a choice of action and only that action's fields), opened
//! on what was typed, with each field checked as it is typed and every
//! field again on Run. When the words typed filled every required field,
//! Run has the focus, so Enter confirms. Running it goes through the call
//! path like any other call, permission layer included.

use hearth_core::SkillDefinition;
use hearth_core::skill::form::{Field, FieldKind, Form, Input, Values, chosen_action};
use leptos::ev::KeyboardEvent;
use leptos::prelude::*;
use serde_json::Value;

use crate::icons::Icon;
use crate::shared::modal::Modal;

fn text_of(values: &Values, name: &str) -> String {
    match values.get(name) {
        Some(Input::Text(t)) => t.clone(),
        Some(Input::Checked(_)) | None => String::new(),
    }
}

/// The form of `action` (or of the whole schema when the skill lists no
/// actions), with the fields `arguments` fill moved up.
fn form_for(skill: &SkillDefinition, action: Option<&str>, arguments: &Value) -> Form {
    let chosen = action.and_then(|v| skill.actions.iter().find(|a| a.value == v));
    match chosen {
        Some(a) => Form::for_action(&skill.input_schema, a),
        None => Form::from_schema(&skill.input_schema),
    }
    .typed_first(arguments)
}

#[component]
pub fn SkillFormDialog(
    skill: SkillDefinition,
    /// Arguments the form opens with, e.g. what was typed in the composer.
    #[prop(optional)]
    prefill: Option<Value>,
    on_run: Callback<Value>,
    on_close: Callback<()>,
) -> impl IntoView {
    let prefill = prefill.unwrap_or_else(|| Value::Object(Default::default()));
    let action: RwSignal<Option<String>> =
        RwSignal::new(chosen_action(&skill.actions, &prefill).map(|a| a.value.clone()));
    let opened = form_for(&skill, action.get_untracked().as_deref(), &prefill);
    let values = RwSignal::new(opened.prefilled(&prefill));
    // Filled by the words typed: only Enter is left to do, so Run takes
    // the focus. Otherwise the first field still needed does.
    let ready = opened.complete(&values.get_untracked());
    let focus = values.with_untracked(|v| {
        opened
            .fields
            .iter()
            .find(|f| f.required && opened.check(&f.name, v).is_some())
            .or(opened.fields.first())
            .map(|f| f.name.clone())
    });
    let form = StoredValue::new(opened);
    // Bumped when another action is chosen, to draw its fields.
    let shape = RwSignal::new(0u32);
    let errors: RwSignal<Vec<hearth_core::skill::form::FieldError>> = RwSignal::new(Vec::new());
    let submit = move || match form.with_value(|f| f.arguments(&values.get_untracked())) {
        Ok(args) => on_run.run(args),
        Err(list) => errors.set(list),
    };
    let choose = {
        let skill = skill.clone();
        move |value: String| {
            let next = form_for(&skill, Some(&value), &Value::Null);
            values.update(|v| next.fill_missing(v));
            form.set_value(next);
            action.set(Some(value));
            errors.set(Vec::new());
            shape.update(|n| *n += 1);
        }
    };
    let title_id = "skill-form-title";
    let actions = skill.actions.clone();
    view! {
        <Modal labelledby=title_id class="skill-form-dialog" on_escape=on_close>
            <form
                class="skill-form"
                novalidate=true
                on:submit=move |ev: leptos::ev::SubmitEvent| {
                    ev.prevent_default();
                    submit();
                }
                on:keydown=move |ev: KeyboardEvent| {
                    // Ctrl+Enter runs from any field, a text area's too.
                    if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
                        ev.prevent_default();
                        submit();
                    }
                }
            >
                <header class="approval-head">
                    <span class="card-icon"><Icon name=skill.icon.clone()/></span>
                    <div>
                        <p class="muted approval-origin">"Run a skill"</p>
                        <h2 id=title_id>{skill.name.clone()}</h2>
                    </div>
                    <span class=format!("tier-badge tier-{}", skill.tier.as_str())>{skill.tier.label()}</span>
                </header>
                <p class="muted">{skill.description.clone()}</p>
                {(!actions.is_empty()).then(|| {
                    let choose = choose.clone();
                    view! {
                        <div class="form-field" data-field="action">
                            <label for="field-action">"What to do"</label>
                            <select id="field-action"
                                prop:value=move || action.get().unwrap_or_default()
                                on:change=move |ev| choose(event_target_value(&ev))>
                                {actions.iter().map(|a| view! {
                                    <option value=a.value.clone()>{a.label.clone()}</option>
                                }).collect_view()}
                            </select>
                        </div>
                    }
                })}
                {move || {
                    shape.track();
                    let fields = form.with_value(|f| f.fields.clone());
                    if fields.is_empty() {
                        return view! { <p class="muted">"This takes no input."</p> }.into_any();
                    }
                    fields
                        .into_iter()
                        .map(|field| {
                            // Only when the form opens; a switch of action
                            // leaves the focus on the choice.
                            let first = !ready && shape.get_untracked() == 0 && focus.as_deref() == Some(field.name.as_str());
                            view! { <FieldControl field=field form=form values=values errors=errors first=first/> }
                        })
                        .collect_view()
                        .into_any()
                }}
                <div class="modal-actions">
                    <button type="button" on:click=move |_| on_close.run(())>"Cancel"</button>
                    <button type="submit" class="primary" data-autofocus=ready.then_some("")>
                        "Run"
                    </button>
                </div>
                <p class="hint muted">
                    {if ready { "Enter runs it as filled in · " } else { "" }}
                    <kbd>"Ctrl"</kbd>"+"<kbd>"Enter"</kbd>" runs from any field · "<kbd>"Esc"</kbd>" closes"
                </p>
            </form>
        </Modal>
    }
}

#[component]
fn FieldControl(
    field: Field,
    form: StoredValue<Form>,
    values: RwSignal<Values>,
    errors: RwSignal<Vec<hearth_core::skill::form::FieldError>>,
    first: bool,
) -> impl IntoView {
    let name = field.name.clone();
    let input_id = format!("field-{name}");
    let hint_id = format!("hint-{name}");
    let error = {
        let name = name.clone();
        Memo::new(move |_| {
            errors.with(|e| {
                e.iter()
                    .find(|e| e.field == name)
                    .map(|e| e.message.clone())
            })
        })
    };
    // What was typed is checked at once: the field's own problem shows
    // (or goes) as the person types, not only on Run.
    let recheck = {
        let name = name.clone();
        move || {
            let problem = form.with_value(|f| values.with_untracked(|v| f.check(&name, v)));
            errors.update(|e| {
                e.retain(|x| x.field != name);
                e.extend(problem);
            });
        }
    };
    let set_text = {
        let name = name.clone();
        let recheck = recheck.clone();
        move |v: String| {
            values.update(|m| {
                m.insert(name.clone(), Input::Text(v));
            });
            recheck();
        }
    };
    let current = {
        let name = name.clone();
        move || values.with(|v| text_of(v, &name))
    };
    let error_id = format!("error-{name}");
    let has_hint = field.description.is_some();
    let described = {
        let (hint_id, error_id) = (hint_id.clone(), error_id.clone());
        Signal::derive(move || {
            let mut ids = Vec::new();
            if has_hint {
                ids.push(hint_id.clone());
            }
            if error.with(Option::is_some) {
                ids.push(error_id.clone());
            }
            (!ids.is_empty()).then(|| ids.join(" "))
        })
    };
    let invalid = move || error.with(Option::is_some).then_some("true");
    let required = field.required;
    let control = match field.kind.clone() {
        FieldKind::Text {
            multiline: true,
            max_length,
            ..
        } => view! {
            <textarea id=input_id.clone() rows="5" required=required data-autofocus=first.then_some("")
                aria-describedby=described aria-invalid=invalid
                maxlength=max_length.map(|m| m.to_string())
                prop:value=current
                on:input=move |ev| set_text(event_target_value(&ev))></textarea>
        }
        .into_any(),
        FieldKind::Text {
            max_length, format, ..
        } => {
            let kind = match format.as_deref() {
                Some("uri") | Some("url") => "url",
                Some("email") => "email",
                Some("date") => "date",
                _ => "text",
            };
            view! {
                <input id=input_id.clone() type=kind required=required data-autofocus=first.then_some("")
                    aria-describedby=described aria-invalid=invalid
                    maxlength=max_length.map(|m| m.to_string())
                    prop:value=current
                    on:input=move |ev| set_text(event_target_value(&ev))/>
            }
            .into_any()
        }
        FieldKind::Number {
            integer,
            minimum,
            maximum,
        } => view! {
            <input id=input_id.clone() type="number" required=required data-autofocus=first.then_some("")
                aria-describedby=described aria-invalid=invalid
                step=if integer { "1" } else { "any" }
                min=minimum.map(|m| m.to_string())
                max=maximum.map(|m| m.to_string())
                prop:value=current
                on:input=move |ev| set_text(event_target_value(&ev))/>
        }
        .into_any(),
        FieldKind::Boolean => {
            let name = name.clone();
            let checked = {
                let name = name.clone();
                move || values.with(|v| matches!(v.get(&name), Some(Input::Checked(true))))
            };
            view! {
                <input id=input_id.clone() type="checkbox" data-autofocus=first.then_some("")
                    aria-describedby=described aria-invalid=invalid
                    prop:checked=checked
                    on:change=move |ev| {
                        let on = event_target_checked(&ev);
                        values.update(|m| {
                            m.insert(name.clone(), Input::Checked(on));
                        });
                    }/>
            }
            .into_any()
        }
        FieldKind::Choice { options } => view! {
            <select id=input_id.clone() required=required data-autofocus=first.then_some("")
                aria-describedby=described aria-invalid=invalid
                prop:value=current
                on:change=move |ev| set_text(event_target_value(&ev))>
                <option value="">{if required { "Choose…" } else { "—" }}</option>
                {options
                    .into_iter()
                    .enumerate()
                    .map(|(i, o)| view! { <option value=i.to_string()>{o.label}</option> })
                    .collect_view()}
            </select>
        }
        .into_any(),
        FieldKind::List { .. } => view! {
            <textarea id=input_id.clone() rows="3" required=required data-autofocus=first.then_some("")
                aria-describedby=described aria-invalid=invalid
                placeholder="One per line"
                prop:value=current
                on:input=move |ev| set_text(event_target_value(&ev))></textarea>
        }
        .into_any(),
        FieldKind::Json => view! {
            <textarea id=input_id.clone() rows="4" class="mono" required=required data-autofocus=first.then_some("")
                aria-describedby=described aria-invalid=invalid
                placeholder="JSON"
                prop:value=current
                on:input=move |ev| set_text(event_target_value(&ev))></textarea>
        }
        .into_any(),
    };
    let boolean = matches!(field.kind, FieldKind::Boolean);
    view! {
        <div class="form-field" class:checkbox-field=boolean class:invalid=move || error.get().is_some() data-field=name.clone()>
            <label for=input_id>
                {field.label.clone()}
                {field.required.then(|| view! { <span class="required" aria-hidden="true">" *"</span> })}
            </label>
            {control}
            {field.description.clone().map(|d| view! { <p class="field-hint muted" id=hint_id>{d}</p> })}
            <Show when=move || error.get().is_some()>
                <p class="field-error" id=error_id.clone() aria-live="polite">{move || error.get().unwrap_or_default()}</p>
            </Show>
        </div>
    }
}
