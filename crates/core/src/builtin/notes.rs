//! The notes skill: create, read, update, delete, list and search notes
//! with Markdown bodies and tags. Every change can be undone.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::builtin::collection::{
    self, Change, Changed, Collection, Kind, Record, Records, Stamp, Store, clean_tags,
};
use crate::builtin::words::{self, TextIndex};
use crate::skill::call::{SkillError, SkillOutput, UndoAction};
use crate::skill::command_forms::{CommandForm, TextShape};
use crate::skill::form::ActionForm;
use crate::skill::permission::CallFacts;
use crate::skill::{Category, SkillDefinition, SkillId, Tier};

pub const MAX_TITLE: usize = 500;
pub const MAX_BODY: usize = 200_000;
pub const MAX_TAGS: usize = 50;
pub const MAX_TAG: usize = 60;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Note {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub body: String,
    #[serde(default)]
    pub tags: Vec<String>,
    pub created_ms: f64,
    pub updated_ms: f64,
}

impl Record for Note {
    fn id(&self) -> &str {
        &self.id
    }
}

/// The notes, with a search index built on the first search and kept in
/// step with every change after that (so opening the app never waits for
/// it).
#[derive(Clone, Debug, Default)]
pub struct Notebook {
    notes: Collection<Note>,
    /// Fields: title, tags, body.
    index: std::cell::OnceCell<TextIndex<3>>,
}

impl Notebook {
    pub fn new(notes: impl IntoIterator<Item = Note>) -> Self {
        Self {
            notes: Collection::new(notes),
            index: std::cell::OnceCell::new(),
        }
    }

    fn index(&self) -> &TextIndex<3> {
        self.index.get_or_init(|| {
            let mut ix = TextIndex::default();
            for n in self.notes.iter() {
                index_note(&mut ix, n);
            }
            ix
        })
    }

    pub fn get(&self, id: &str) -> Option<&Note> {
        self.notes.get(id)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Note> {
        self.notes.iter()
    }

    pub fn len(&self) -> usize {
        self.notes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.notes.is_empty()
    }

    pub fn apply(&mut self, changes: &[Change<Note>]) {
        if let Some(ix) = self.index.get_mut() {
            for c in changes {
                match c {
                    Change::Put(n) => index_note(ix, n),
                    Change::Delete(id) => ix.remove(id),
                }
            }
        }
        self.notes.apply(changes);
    }
}

fn index_note(ix: &mut TextIndex<3>, n: &Note) {
    ix.upsert(&n.id, [&n.title, &n.tags.join(" "), &n.body]);
}

impl Records<Note> for Notebook {
    fn record(&self, id: &str) -> Option<&Note> {
        self.get(id)
    }
}

/// How the notes skill names its records.
pub const KIND: Kind = Kind {
    one: "note",
    many: "notes",
    find_hint: "list or search notes to find it",
    remove: "delete",
    restore_field: "notes",
};

impl Store<Note> for Notebook {
    fn apply_changes(&mut self, changes: &[Change<Note>]) {
        self.apply(changes);
    }
}

/// What the skill can be asked to do.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum NoteAction {
    Create {
        title: String,
        #[serde(default)]
        body: String,
        #[serde(default)]
        tags: Vec<String>,
    },
    Read {
        id: String,
    },
    Update {
        id: String,
        title: Option<String>,
        body: Option<String>,
        tags: Option<Vec<String>>,
    },
    Delete {
        id: Option<String>,
        #[serde(default)]
        ids: Vec<String>,
    },
    List {
        tag: Option<String>,
        limit: Option<usize>,
    },
    Search {
        query: String,
        limit: Option<usize>,
    },
    /// Puts notes back exactly as they were; the undo of delete and update.
    Restore {
        notes: Vec<Note>,
    },
}

pub fn definition() -> SkillDefinition {
    SkillDefinition::new(
        SkillId::new("notes").unwrap_or_else(|e| panic!("{e}")),
        "Notes",
        Tier::Core,
        Category::Productivity,
    )
    .with_icon("note")
    .with_description(
        "Keep notes with Markdown bodies and tags: create, read, update, delete, list and search them.",
    )
    .with_tags([
        "notes", "write down", "jot", "ideas", "remember", "markdown", "journal", "search",
    ])
    .with_examples([
        "Save a note called Groceries: milk, eggs, bread",
        "Find my notes about the trip to Lisbon",
        "Add 'call the plumber' to my todo note",
        "List my notes tagged work",
        "Jot down an idea for the garden",
    ])
    .with_commands(commands())
    .with_actions([
        ActionForm::new("create", "Create a note", &["title", "body", "tags"], &["title"]),
        ActionForm::new("search", "Search notes", &["query", "limit"], &["query"]),
        ActionForm::new("list", "List notes", &["tag", "limit"], &[]),
        ActionForm::new("read", "Read a note", &["id"], &["id"]),
        ActionForm::new("update", "Change a note", &["id", "title", "body", "tags"], &["id"]),
        ActionForm::new("delete", "Delete a note", &["id"], &["id"]),
    ])
    .with_input_schema(json!({
        "type": "object",
        "properties": {
            "action": {
                "enum": ["create", "read", "update", "delete", "list", "search", "restore"],
                "description": "What to do"
            },
            "id": {"type": "string", "maxLength": 200, "description": "The note's id (read, update, delete)"},
            "ids": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 1000, "description": "Several notes to delete"},
            "title": {"type": "string", "maxLength": MAX_TITLE},
            "body": {"type": "string", "maxLength": MAX_BODY, "description": "Markdown"},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": MAX_TAG}, "maxItems": MAX_TAGS},
            "tag": {"type": "string", "maxLength": MAX_TAG, "description": "Only list notes with this tag"},
            "query": {"type": "string", "maxLength": 1000, "description": "Words to search for in titles, bodies and tags"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100},
            "notes": {"type": "array", "maxItems": 1000, "items": {"type": "object"}, "description": "Notes to restore (undo)"}
        },
        "required": ["action"],
        "additionalProperties": false
    }))
    .with_output_schema(json!({"type": "object"}))
}

/// How notes are typed: `/note <title>` creates, `/notes` lists,
/// `/notes search <words>` finds.
fn commands() -> Vec<CommandForm> {
    let create = || TextShape::TitleBody {
        title: "title".into(),
        body: "body".into(),
        tags: "tags".into(),
    };
    vec![
        CommandForm::new(
            "note",
            create(),
            "Create a note: the first line is its title, the next lines its body, #words tag it",
        )
        .fixed(json!({"action": "create"}))
        .examples(["/note Buy milk and eggs", "/note Trip ideas #travel"])
        .leads([
            "make a note",
            "make note",
            "create a note",
            "create note",
            "add a note",
            "new note",
            "save a note",
            "write a note",
            "take a note",
            "write down",
            "jot down",
            "note down",
            "note",
        ]),
        CommandForm::new("notes", TextShape::Nothing, "List your notes, newest first")
            .fixed(json!({"action": "list"}))
            .examples(["/notes"]),
        CommandForm::new(
            "notes",
            TextShape::Whole {
                param: "query".into(),
            },
            "Find notes by words in their title, tags or body",
        )
        .verb("search")
        .fixed(json!({"action": "search"}))
        .examples(["/notes search milk"])
        .leads([
            "find my notes about",
            "find notes about",
            "find my notes on",
            "search my notes for",
            "search notes for",
            "search my notes",
            "search notes",
        ]),
        CommandForm::new("notes", create(), "Create a note")
            .fixed(json!({"action": "create"}))
            .examples(["/notes Call the bank about the card"]),
    ]
}

/// Deleting more than one note at once always asks.
pub fn assess(arguments: &Value) -> CallFacts {
    let n = collection::removal_count(arguments, &KIND);
    CallFacts {
        bulk_destructive: (n > 1).then(|| format!("delete {n} notes")),
    }
}

/// Parses the call's arguments into an action, with messages that name
/// the missing or wrong field.
pub fn parse(arguments: &Value) -> Result<NoteAction, SkillError> {
    collection::parse(arguments)
}

fn clean_title(title: &str) -> Result<String, SkillError> {
    let t = title.trim();
    if t.is_empty() {
        return Err(SkillError::new("a note needs a title"));
    }
    Ok(t.to_string())
}

/// A note as the model sees it in lists: no body, to keep results short.
fn summary(n: &Note) -> Value {
    json!({"id": n.id, "title": n.title, "tags": n.tags, "updated_ms": n.updated_ms})
}

fn restore_undo(label: &str, notes: Vec<Note>) -> UndoAction {
    collection::restore_undo(label, definition().id, &KIND, notes)
}

/// Runs one action. Returns the output and the changes to persist; the
/// caller applies the changes to its notebook only once they are stored.
pub fn run(book: &Notebook, action: NoteAction, stamp: &Stamp) -> Changed<Note> {
    match action {
        NoteAction::Create { title, body, tags } => {
            let note = Note {
                id: stamp.new_id.clone(),
                title: clean_title(&title)?,
                body,
                tags: clean_tags(&tags),
                created_ms: stamp.now_ms,
                updated_ms: stamp.now_ms,
            };
            let text = format!("Created note \"{}\".", note.title);
            let undo = UndoAction::new(
                "Undo: delete this note",
                definition().id,
                json!({"action": "delete", "id": note.id}),
            );
            let out = SkillOutput::text_and_json(text, json!({"note": note})).with_undo(undo);
            Ok((out, vec![Change::Put(note)]))
        }
        NoteAction::Read { id } => {
            let note = find(book, &id)?;
            let text = if note.body.trim().is_empty() {
                note.title.clone()
            } else {
                format!("{}\n\n{}", note.title, note.body)
            };
            Ok((
                SkillOutput::text_and_json(text, json!({"note": note})),
                Vec::new(),
            ))
        }
        NoteAction::Update {
            id,
            title,
            body,
            tags,
        } => {
            let before = find(book, &id)?.clone();
            if title.is_none() && body.is_none() && tags.is_none() {
                return Err(SkillError::new(
                    "nothing to update: give a title, body or tags",
                ));
            }
            let mut note = before.clone();
            if let Some(t) = title {
                note.title = clean_title(&t)?;
            }
            if let Some(b) = body {
                note.body = b;
            }
            if let Some(t) = tags {
                note.tags = clean_tags(&t);
            }
            note.updated_ms = stamp.now_ms;
            let text = format!("Updated note \"{}\".", note.title);
            let out = SkillOutput::text_and_json(text, json!({"note": note})).with_undo(
                restore_undo("Undo: restore the previous version", vec![before]),
            );
            Ok((out, vec![Change::Put(note)]))
        }
        NoteAction::Delete { id, ids } => {
            let (notes, changes) = collection::remove_many(book, id, ids, &KIND)?;
            let text = match notes.as_slice() {
                [one] => format!("Deleted note \"{}\".", one.title),
                many => format!("Deleted {} notes.", many.len()),
            };
            let deleted: Vec<&str> = notes.iter().map(|n| n.id.as_str()).collect();
            let out = SkillOutput::text_and_json(text, json!({"deleted": deleted}))
                .with_undo(restore_undo("Undo: bring them back", notes.clone()));
            Ok((out, changes))
        }
        NoteAction::List { tag, limit } => {
            let mut notes: Vec<&Note> = book
                .iter()
                .filter(|n| {
                    tag.as_ref().is_none_or(|t| {
                        n.tags
                            .iter()
                            .any(|x| x.eq_ignore_ascii_case(t.trim_start_matches('#')))
                    })
                })
                .collect();
            notes.sort_by(|a, b| b.updated_ms.total_cmp(&a.updated_ms));
            let total = notes.len();
            notes.truncate(limit.unwrap_or(20).min(100));
            let text = if total == 0 {
                "No notes yet.".to_string()
            } else {
                let lines: Vec<&str> = notes.iter().map(|n| n.title.as_str()).collect();
                format!("{}:\n{}", KIND.count(total), lines.join("\n"))
            };
            let list: Vec<Value> = notes.iter().map(|n| summary(n)).collect();
            Ok((
                SkillOutput::text_and_json(text, json!({"total": total, "notes": list})),
                Vec::new(),
            ))
        }
        NoteAction::Search { query, limit } => {
            let hits = search(book, &query, limit.unwrap_or(10).min(100));
            let text = if hits.is_empty() {
                format!("No notes match \"{query}\".")
            } else {
                let lines: Vec<String> = hits
                    .iter()
                    .map(|h| {
                        if h.snippet.is_empty() {
                            h.title.clone()
                        } else {
                            format!("{}: {}", h.title, h.snippet)
                        }
                    })
                    .collect();
                let verb = if hits.len() == 1 { "matches" } else { "match" };
                format!(
                    "{} {verb} \"{query}\":\n{}",
                    KIND.count(hits.len()),
                    lines.join("\n")
                )
            };
            Ok((
                SkillOutput::text_and_json(text, json!({"results": hits})),
                Vec::new(),
            ))
        }
        NoteAction::Restore { notes } => {
            let (ids, changes) = collection::restore(notes)?;
            let text = format!("Restored {}.", KIND.count(ids.len()));
            Ok((
                SkillOutput::text_and_json(text, json!({"restored": ids})),
                changes,
            ))
        }
    }
}

fn find<'a>(book: &'a Notebook, id: &str) -> Result<&'a Note, SkillError> {
    collection::find(book, id, &KIND)
}

/// One search result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NoteHit {
    pub id: String,
    pub title: String,
    pub tags: Vec<String>,
    pub score: f64,
    pub snippet: String,
}

/// Ranks notes by how well they match every query word: title matches
/// count most, then tags, then the body. Notes missing a word are dropped.
pub fn search(book: &Notebook, query: &str, limit: usize) -> Vec<NoteHit> {
    let q = words::words(query);
    if q.is_empty() {
        return Vec::new();
    }
    let index = book.index();
    let mut scored: Vec<(f64, u32)> = index
        .matches(&q)
        .into_iter()
        .map(|(slot, per_word)| {
            let score: f64 = per_word
                .iter()
                .map(|[title, tags, body]| {
                    3.0 * f64::from((*title).min(3))
                        + 2.0 * f64::from((*tags).min(3))
                        + f64::from(*body).ln_1p()
                })
                .sum();
            ((score * 1000.0).round() / 1000.0, slot)
        })
        .collect();
    // Only the shown results are looked up, ordered and given snippets.
    let keep = limit.min(scored.len());
    if keep < scored.len() {
        scored.select_nth_unstable_by(keep, |a, b| b.0.total_cmp(&a.0));
        scored.truncate(keep + 1);
    }
    let mut hits: Vec<NoteHit> = scored
        .into_iter()
        .filter_map(|(score, slot)| {
            let n = book.get(index.id(slot)?)?;
            Some(NoteHit {
                id: n.id.clone(),
                title: n.title.clone(),
                tags: n.tags.clone(),
                score,
                snippet: String::new(),
            })
        })
        .collect();
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.title.cmp(&b.title))
    });
    hits.truncate(limit);
    for h in &mut hits {
        if let Some(n) = book.get(&h.id) {
            h.snippet = words::snippet(&n.body, &q, 120);
        }
    }
    hits
}

/// `n` made-up notes for benchmarks, the same on every run: words follow a
/// Zipf-like spread over a 4,000-word vocabulary, plus a few common words
/// ("garden", "budget", "lisbon", "tram", "museum", "meeting", "recipe").
pub fn sample_notes(n: usize) -> Vec<Note> {
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let syllables = [
        "ka", "lo", "mi", "ren", "to", "sa", "vel", "dor", "un", "bri", "te", "qua", "zo", "pel",
        "gan", "ri",
    ];
    let mut vocab: Vec<String> = [
        "garden", "budget", "lisbon", "tram", "museum", "meeting", "notes", "recipe", "the", "and",
        "for", "with",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    while vocab.len() < 4_000 {
        let len = 2 + (next() % 3) as usize;
        vocab.push(
            (0..len)
                .map(|_| syllables[(next() % syllables.len() as u64) as usize])
                .collect(),
        );
    }
    let pick = |r: u64| {
        let u = (r % 1_000_000) as f64 / 1_000_000.0;
        ((vocab.len() as f64).powf(u) as usize).min(vocab.len() - 1)
    };
    (0..n)
        .map(|i| {
            let len = 60 + (next() % 140) as usize;
            let body: Vec<&str> = (0..len).map(|_| vocab[pick(next())].as_str()).collect();
            let title: Vec<&str> = (0..3).map(|_| vocab[pick(next())].as_str()).collect();
            Note {
                id: format!("n{i}"),
                title: title.join(" "),
                body: body.join(" "),
                tags: vec![vocab[pick(next())].clone()],
                created_ms: i as f64,
                updated_ms: i as f64,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(id: &str, now: f64) -> Stamp {
        Stamp {
            now_ms: now,
            new_id: id.into(),
            today: (2026, 11, 21),
        }
    }

    /// Runs `args` against `book`, applies the changes, and returns the
    /// text or error the person would see.
    fn step(
        book: &mut Notebook,
        args: Value,
        s: &Stamp,
    ) -> Result<(String, Option<UndoAction>), String> {
        let action = parse(&args).map_err(|e| e.message)?;
        let (out, changes) = run(book, action, s).map_err(|e| e.message)?;
        book.apply(&changes);
        Ok((
            out.content
                .iter()
                .find_map(|c| match c {
                    crate::Content::Text { text } => Some(text.clone()),
                    _ => None,
                })
                .unwrap_or_default(),
            out.undo,
        ))
    }

    #[test]
    fn every_operation_with_undo() {
        let mut book = Notebook::default();
        let (t, undo_create) = step(&mut book, json!({"action": "create", "title": "  Groceries ", "body": "milk, *eggs*", "tags": ["#Home", "home", " "]}), &stamp("n1", 1.0)).unwrap();
        assert_eq!(t, "Created note \"Groceries\".");
        assert_eq!(book.get("n1").unwrap().tags, ["Home"]);
        step(&mut book, json!({"action": "create", "title": "Lisbon trip", "body": "Book the tram to Belém", "tags": ["travel"]}), &stamp("n2", 2.0)).unwrap();

        assert_eq!(
            step(
                &mut book,
                json!({"action": "read", "id": "n1"}),
                &stamp("x", 3.0)
            )
            .unwrap()
            .0,
            "Groceries\n\nmilk, *eggs*"
        );
        let (t, undo_update) = step(
            &mut book,
            json!({"action": "update", "id": "n1", "body": "milk, eggs, bread"}),
            &stamp("x", 4.0),
        )
        .unwrap();
        assert_eq!(t, "Updated note \"Groceries\".");
        assert_eq!(book.get("n1").unwrap().updated_ms, 4.0);

        assert_eq!(
            step(&mut book, json!({"action": "list"}), &stamp("x", 5.0))
                .unwrap()
                .0,
            "2 notes:\nGroceries\nLisbon trip"
        );
        assert_eq!(
            step(
                &mut book,
                json!({"action": "list", "tag": "#travel"}),
                &stamp("x", 5.0)
            )
            .unwrap()
            .0,
            "1 note:\nLisbon trip"
        );
        assert_eq!(
            step(
                &mut book,
                json!({"action": "search", "query": "bread"}),
                &stamp("x", 5.0)
            )
            .unwrap()
            .0,
            "1 note matches \"bread\":\nGroceries: milk, eggs, bread"
        );

        // Undo the update: the old body is back.
        let undo = undo_update.unwrap();
        step(&mut book, undo.arguments, &stamp("x", 6.0)).unwrap();
        assert_eq!(book.get("n1").unwrap().body, "milk, *eggs*");

        let (t, undo_delete) = step(
            &mut book,
            json!({"action": "delete", "ids": ["n1", "n2"]}),
            &stamp("x", 7.0),
        )
        .unwrap();
        assert_eq!(t, "Deleted 2 notes.");
        assert!(book.is_empty());
        step(&mut book, undo_delete.unwrap().arguments, &stamp("x", 8.0)).unwrap();
        assert_eq!(book.len(), 2);
        assert_eq!(book.get("n2").unwrap().body, "Book the tram to Belém");

        // Undo the create: it is gone again.
        step(&mut book, undo_create.unwrap().arguments, &stamp("x", 9.0)).unwrap();
        assert!(book.get("n1").is_none());
    }

    #[test]
    fn bad_requests_say_what_is_wrong() {
        let mut book = Notebook::new([Note {
            id: "a".into(),
            title: "A".into(),
            body: String::new(),
            tags: vec![],
            created_ms: 0.0,
            updated_ms: 0.0,
        }]);
        let cases = [
            (
                json!({"action": "create"}),
                "'title' is required for this action",
            ),
            (
                json!({"action": "create", "title": "   "}),
                "a note needs a title",
            ),
            (
                json!({"action": "read", "id": "zz"}),
                "there is no note with id 'zz'; list or search notes to find it",
            ),
            (
                json!({"action": "update", "id": "a"}),
                "nothing to update: give a title, body or tags",
            ),
            (
                json!({"action": "delete"}),
                "say which note to delete with 'id' or 'ids'",
            ),
            (
                json!({"action": "delete", "ids": ["a", "ghost"]}),
                "there is no note with id 'ghost'; list or search notes to find it",
            ),
            (
                json!({"action": "read", "id": "a", "title": "x"}),
                "'title' does not apply to this action",
            ),
            (
                json!({"action": "explode"}),
                "invalid arguments: unknown variant `explode`, expected one of `create`, `read`, `update`, `delete`, `list`, `search`, `restore`",
            ),
            (
                json!({"action": "restore", "notes": []}),
                "nothing to restore",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(
                step(&mut book, args.clone(), &stamp("n", 1.0)).map(|x| x.0),
                Err(want.to_string()),
                "{args}"
            );
        }
        assert_eq!(book.len(), 1, "failed calls change nothing");
    }

    #[test]
    fn search_ranks_title_over_tags_over_body() {
        let note = |id: &str, title: &str, tags: &[&str], body: &str| Note {
            id: id.into(),
            title: title.into(),
            body: body.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            created_ms: 0.0,
            updated_ms: 0.0,
        };
        let book = Notebook::new([
            note("body", "Misc", &[], "remember the garden hose"),
            note("title", "Garden plans", &[], "tomatoes"),
            note("tag", "Weekend", &["garden"], "mow"),
            note("none", "Taxes", &[], "receipts"),
        ]);
        let ids: Vec<String> = search(&book, "garden", 10)
            .into_iter()
            .map(|h| h.id)
            .collect();
        assert_eq!(ids, ["title", "tag", "body"]);
        assert!(
            search(&book, "garden taxes", 10).is_empty(),
            "every word must match"
        );
        assert!(search(&book, "  ", 10).is_empty());
    }

    #[test]
    fn bulk_deletes_are_flagged() {
        assert_eq!(
            assess(&json!({"action": "delete", "id": "a"})).bulk_destructive,
            None
        );
        assert_eq!(
            assess(&json!({"action": "delete", "ids": ["a", "b", "c"]}))
                .bulk_destructive
                .as_deref(),
            Some("delete 3 notes")
        );
        assert_eq!(
            assess(&json!({"action": "list", "ids": ["a", "b"]})).bulk_destructive,
            None
        );
    }
}
