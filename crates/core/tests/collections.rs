//! The three skills over collections — notes, tasks, memory — share their
//! removal and undo (`collection.rs`); these cases hold all three to it.

use hearth_core::builtin::collection::{Change, Changed, Record, Stamp, Store};
use hearth_core::builtin::{memory, notes, tasks};
use hearth_core::{Content, SkillOutput};
use serde_json::{Value, json};

fn text_of(out: &SkillOutput) -> String {
    out.content
        .iter()
        .find_map(|c| match c {
            Content::Text { text } => Some(text.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

fn stamp(id: &str) -> Stamp {
    Stamp {
        now_ms: 1.0,
        new_id: id.into(),
        today: (2030, 1, 1),
    }
}

/// Runs one call on `store` and applies its changes, as the app does once
/// they are stored: the text, the structured output and the undo's
/// arguments.
fn step<T: Record, S: Store<T>>(
    store: &mut S,
    run: impl Fn(&S, &Value, &Stamp) -> Changed<T>,
    args: Value,
    id: &str,
) -> (String, Value, Option<Value>, usize) {
    let (out, changes) = run(store, &args, &stamp(id)).unwrap();
    let n = changes.len();
    store.apply_changes(&changes);
    let text = text_of(&out);
    (
        text,
        out.structured.clone().unwrap_or(Value::Null),
        out.undo.map(|u| u.arguments),
        n,
    )
}

#[test]
fn naming_a_record_twice_in_one_removal_removes_it_once_and_undo_brings_back_exactly_what_went() {
    // notes
    let mut book = notes::Notebook::default();
    let run = |b: &notes::Notebook, a: &Value, s: &Stamp| notes::run(b, notes::parse(a)?, s);
    for (id, title) in [("a", "A"), ("b", "B")] {
        step(
            &mut book,
            run,
            json!({"action": "create", "title": title}),
            id,
        );
    }
    let removal = json!({"action": "delete", "id": "a", "ids": ["b", "a", "b"]});
    assert_eq!(
        notes::assess(&removal).bulk_destructive.as_deref(),
        Some("delete 2 notes")
    );
    let (text, out, undo, changes) = step(&mut book, run, removal, "x");
    assert_eq!(
        (text.as_str(), out, changes, book.len()),
        ("Deleted 2 notes.", json!({"deleted": ["a", "b"]}), 2, 0)
    );
    let (text, out, _, changes) = step(&mut book, run, undo.unwrap(), "x");
    assert_eq!(
        (text.as_str(), out, changes, book.len()),
        ("Restored 2 notes.", json!({"restored": ["a", "b"]}), 2, 2)
    );

    // tasks
    let mut list = tasks::TaskList::default();
    let run = |l: &tasks::TaskList, a: &Value, s: &Stamp| tasks::run(l, tasks::parse(a)?, s);
    for (id, title) in [("a", "A"), ("b", "B")] {
        step(
            &mut list,
            run,
            json!({"action": "create", "title": title}),
            id,
        );
    }
    let removal = json!({"action": "delete", "id": "a", "ids": ["b", "a"]});
    assert_eq!(
        tasks::assess(&removal).bulk_destructive.as_deref(),
        Some("delete 2 tasks")
    );
    let (text, out, undo, changes) = step(&mut list, run, removal, "x");
    assert_eq!(
        (text.as_str(), out, changes, list.len()),
        ("Deleted 2 tasks.", json!({"deleted": ["a", "b"]}), 2, 0)
    );
    let (text, out, _, changes) = step(&mut list, run, undo.unwrap(), "x");
    assert_eq!(
        (text.as_str(), out, changes, list.len()),
        ("Restored 2 tasks.", json!({"restored": ["a", "b"]}), 2, 2)
    );

    // memory
    let mut memories = memory::Memories::default();
    let run = |m: &memory::Memories, a: &Value, s: &Stamp| memory::run(m, memory::parse(a)?, s);
    for (id, text) in [("a", "Likes trains"), ("b", "Lives in Porto")] {
        step(
            &mut memories,
            run,
            json!({"action": "remember", "text": text}),
            id,
        );
    }
    let removal = json!({"action": "forget", "id": "a", "ids": ["b", "a"]});
    assert_eq!(
        memory::assess(&removal).bulk_destructive.as_deref(),
        Some("forget 2 memories")
    );
    let (text, out, undo, changes) = step(&mut memories, run, removal, "x");
    assert_eq!(
        (text.as_str(), out, changes, memories.len()),
        ("Forgot 2 memories.", json!({"forgotten": ["a", "b"]}), 2, 0)
    );
    let (text, out, _, changes) = step(&mut memories, run, undo.unwrap(), "x");
    assert_eq!(
        (text.as_str(), out, changes, memories.len()),
        (
            "Restored 2 memories.",
            json!({"restored": ["a", "b"]}),
            2,
            2
        )
    );
}

#[test]
fn one_id_named_twice_is_one_record_and_does_not_ask_as_a_bulk_removal() {
    let args = json!({"action": "delete", "id": "a", "ids": ["a"]});
    assert_eq!(notes::assess(&args).bulk_destructive, None);
    assert_eq!(tasks::assess(&args).bulk_destructive, None);
    let forget = json!({"action": "forget", "id": "a", "ids": ["a"]});
    assert_eq!(memory::assess(&forget).bulk_destructive, None);
}

#[test]
fn a_restore_naming_a_record_twice_puts_it_back_once() {
    let book = notes::Notebook::default();
    let note =
        |title: &str| json!({"id": "a", "title": title, "created_ms": 1.0, "updated_ms": 1.0});
    let args = json!({"action": "restore", "notes": [note("first"), note("second")]});
    let (out, changes) = notes::run(&book, notes::parse(&args).unwrap(), &stamp("x")).unwrap();
    assert_eq!(text_of(&out), "Restored 1 note.");
    match changes.as_slice() {
        [Change::Put(n)] => assert_eq!(n.title, "second"),
        other => panic!("{other:?}"),
    }
}
