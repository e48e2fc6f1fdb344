//! The memory skill: what Hearth remembers about the person. Remember a
//! fact with tags, recall by a query (ranked matches with scores), forget.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::builtin::collection::{
    self, Change, Changed, Collection, Kind, Record, Stamp, clean_tags,
};
use crate::builtin::words;
use crate::skill::call::{SkillError, SkillOutput, UndoAction};
use crate::skill::command_forms::{CommandForm, TextShape};
use crate::skill::form::ActionForm;
use crate::skill::permission::CallFacts;
use crate::skill::{Category, SkillDefinition, SkillId, Tier};

pub const MAX_TEXT: usize = 4_000;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    pub id: String,
    pub text: String,
    #[serde(default)]
    pub tags: Vec<String>,
    pub created_ms: f64,
    pub updated_ms: f64,
}

impl Record for Memory {
    fn id(&self) -> &str {
        &self.id
    }
}

pub type Memories = Collection<Memory>;

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum MemoryAction {
    Remember {
        text: String,
        #[serde(default)]
        tags: Vec<String>,
    },
    Recall {
        query: String,
        limit: Option<usize>,
    },
    /// One memory by id (how an agent reads `hearth://memory/<id>`).
    Read {
        id: String,
    },
    Update {
        id: String,
        text: Option<String>,
        tags: Option<Vec<String>>,
    },
    Forget {
        id: Option<String>,
        #[serde(default)]
        ids: Vec<String>,
    },
    List {
        limit: Option<usize>,
    },
    Restore {
        memories: Vec<Memory>,
    },
}

pub fn definition() -> SkillDefinition {
    SkillDefinition::new(
        SkillId::new("memory").unwrap_or_else(|e| panic!("{e}")),
        "Memory",
        Tier::Core,
        Category::Productivity,
    )
    .with_icon("memory")
    .with_description(
        "Remember facts and preferences about the user across conversations (things to keep in mind), recall the ones relevant to a question, and forget them on request.",
    )
    .with_tags(["memory", "remember", "recall", "preferences", "facts", "personal"])
    .with_examples([
        "Remember that I'm vegetarian",
        "What do you know about my work schedule?",
        "Forget my old address",
        "Recall my preferences for travel",
    ])
    .with_commands(commands())
    .with_actions([
        ActionForm::new("remember", "Remember something", &["text", "tags"], &["text"]),
        ActionForm::new("recall", "Recall", &["query", "limit"], &["query"]),
        ActionForm::new("list", "List memories", &["limit"], &[]),
        ActionForm::new("update", "Change a memory", &["id", "text", "tags"], &["id"]),
        ActionForm::new("forget", "Forget a memory", &["id"], &["id"]),
    ])
    .with_input_schema(json!({
        "type": "object",
        "properties": {
            "action": {"enum": ["remember", "recall", "read", "update", "forget", "list", "restore"]},
            "text": {"type": "string", "maxLength": MAX_TEXT, "description": "The fact to remember"},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 60}, "maxItems": 20},
            "query": {"type": "string", "maxLength": 1000, "description": "What to recall"},
            "id": {"type": "string", "maxLength": 200},
            "ids": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 1000},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            "memories": {"type": "array", "maxItems": 1000, "items": {"type": "object"}}
        },
        "required": ["action"],
        "additionalProperties": false
    }))
    .with_output_schema(json!({"type": "object"}))
}

/// How memory is typed: `/remember <fact>`, `/recall <words>`, and
/// `/memory` to list.
fn commands() -> Vec<CommandForm> {
    let remember = || TextShape::Tagged {
        param: "text".into(),
        tags: "tags".into(),
    };
    vec![
        CommandForm::new(
            "remember",
            remember(),
            "Remember a fact or preference; #words tag it",
        )
        .fixed(json!({"action": "remember"}))
        .examples([
            "/remember I prefer metric units",
            "/remember I'm vegetarian #food",
        ])
        .leads([
            "remember that",
            "remember",
            "don't forget that",
            "do not forget that",
            "keep in mind that",
            "keep in mind",
            "memorize that",
            "memorize",
            "for the record",
        ]),
        CommandForm::new(
            "recall",
            TextShape::Whole {
                param: "query".into(),
            },
            "Recall what Hearth remembers about something",
        )
        .fixed(json!({"action": "recall"}))
        .examples(["/recall units"])
        .leads([
            "what do you remember about",
            "what do you know about",
            "do you remember",
            "recall",
        ]),
        CommandForm::new("memory", TextShape::Nothing, "List what Hearth remembers")
            .fixed(json!({"action": "list"}))
            .examples(["/memory"]),
        CommandForm::new("memory", remember(), "Remember a fact")
            .fixed(json!({"action": "remember"}))
            .examples(["/memory Works Monday to Thursday"]),
    ]
}

pub fn assess(arguments: &Value) -> CallFacts {
    let n = collection::removal_count(arguments, &KIND);
    CallFacts {
        bulk_destructive: (n > 1).then(|| format!("forget {n} memories")),
    }
}

pub fn parse(arguments: &Value) -> Result<MemoryAction, SkillError> {
    collection::parse(arguments)
}

/// How the memory skill names its records.
pub const KIND: Kind = Kind {
    one: "memory",
    many: "memories",
    find_hint: "recall or list memories to find it",
    remove: "forget",
    restore_field: "memories",
};

/// A recalled memory and how well it matched.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recalled {
    pub id: String,
    pub text: String,
    pub tags: Vec<String>,
    /// 0 to 1: the share of the query's weight this memory matched.
    pub score: f64,
}

/// Ranks memories against `query` with BM25 over text and tags, then
/// normalises scores to 0–1 by the best a memory could reach.
pub fn recall(memories: &Memories, query: &str, limit: usize) -> Vec<Recalled> {
    let q = words::words(query);
    if q.is_empty() || memories.is_empty() {
        return Vec::new();
    }
    let docs: Vec<Vec<String>> = memories
        .iter()
        .map(|m| words::words(&format!("{} {}", m.text, m.tags.join(" "))))
        .collect();
    let n = docs.len() as f64;
    let avg_len = docs.iter().map(Vec::len).sum::<usize>() as f64 / n;
    let idf: Vec<f64> = q
        .iter()
        .map(|w| {
            let df = docs
                .iter()
                .filter(|d| {
                    d.iter()
                        .any(|x| x == w || (w.chars().count() >= 3 && x.starts_with(w.as_str())))
                })
                .count() as f64;
            ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
        })
        .collect();
    let (k1, b) = (1.2, 0.75);
    let best: f64 = idf.iter().sum::<f64>() * (k1 + 1.0);
    let mut out: Vec<Recalled> = memories
        .iter()
        .zip(&docs)
        .filter_map(|(m, doc)| {
            let tf = words::hits(&q, doc);
            let len_norm = 1.0 - b + b * doc.len() as f64 / avg_len.max(1.0);
            let score: f64 = tf
                .iter()
                .zip(&idf)
                .map(|(&f, idf)| {
                    let f = f64::from(f);
                    idf * f * (k1 + 1.0) / (f + k1 * len_norm)
                })
                .sum();
            (score > 0.0).then(|| Recalled {
                id: m.id.clone(),
                text: m.text.clone(),
                tags: m.tags.clone(),
                score: ((score / best).min(1.0) * 1000.0).round() / 1000.0,
            })
        })
        .collect();
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.text.cmp(&b.text))
    });
    out.truncate(limit);
    out
}

fn find<'a>(memories: &'a Memories, id: &str) -> Result<&'a Memory, SkillError> {
    collection::find(memories, id, &KIND)
}

fn fact(t: &str) -> Result<String, SkillError> {
    let t = t.trim();
    if t.is_empty() {
        Err(SkillError::new(
            "there is nothing to remember: 'text' is empty",
        ))
    } else {
        Ok(t.to_string())
    }
}

fn restore_undo(label: &str, memories: Vec<Memory>) -> UndoAction {
    collection::restore_undo(label, definition().id, &KIND, memories)
}

pub fn run(memories: &Memories, action: MemoryAction, stamp: &Stamp) -> Changed<Memory> {
    match action {
        MemoryAction::Remember { text, tags } => {
            let text = fact(&text)?;
            if let Some(same) = memories.iter().find(|m| m.text.eq_ignore_ascii_case(&text)) {
                return Ok((
                    SkillOutput::text_and_json(
                        format!("Already remembered: {}", same.text),
                        json!({"memory": same}),
                    ),
                    Vec::new(),
                ));
            }
            let memory = Memory {
                id: stamp.new_id.clone(),
                text,
                tags: clean_tags(&tags),
                created_ms: stamp.now_ms,
                updated_ms: stamp.now_ms,
            };
            let undo = UndoAction::new(
                "Undo: forget this",
                definition().id,
                json!({"action": "forget", "id": memory.id}),
            );
            let out = SkillOutput::text_and_json(
                format!("Remembered: {}", memory.text),
                json!({"memory": memory}),
            )
            .with_undo(undo);
            Ok((out, vec![Change::Put(memory)]))
        }
        MemoryAction::Recall { query, limit } => {
            let found = recall(memories, &query, limit.unwrap_or(5).min(50));
            let text = if found.is_empty() {
                format!("Nothing remembered about \"{query}\".")
            } else {
                let lines: Vec<String> = found
                    .iter()
                    .map(|r| format!("{} ({:.0}% match)", r.text, r.score * 100.0))
                    .collect();
                lines.join("\n")
            };
            Ok((
                SkillOutput::text_and_json(text, json!({"matches": found})),
                Vec::new(),
            ))
        }
        MemoryAction::Read { id } => {
            let memory = find(memories, &id)?;
            Ok((
                SkillOutput::text_and_json(memory.text.clone(), json!({"memory": memory})),
                Vec::new(),
            ))
        }
        MemoryAction::Update { id, text, tags } => {
            let before = find(memories, &id)?.clone();
            if text.is_none() && tags.is_none() {
                return Err(SkillError::new("nothing to update: give text or tags"));
            }
            let mut m = before.clone();
            if let Some(t) = text {
                m.text = fact(&t)?;
            }
            if let Some(t) = tags {
                m.tags = clean_tags(&t);
            }
            m.updated_ms = stamp.now_ms;
            let out =
                SkillOutput::text_and_json(format!("Updated: {}", m.text), json!({"memory": m}))
                    .with_undo(restore_undo(
                        "Undo: restore the previous version",
                        vec![before],
                    ));
            Ok((out, vec![Change::Put(m)]))
        }
        MemoryAction::Forget { id, ids } => {
            let (gone, changes) = collection::remove_many(memories, id, ids, &KIND)?;
            let text = match gone.as_slice() {
                [one] => format!("Forgot: {}", one.text),
                many => format!("Forgot {} memories.", many.len()),
            };
            let ids: Vec<&str> = gone.iter().map(|m| m.id.as_str()).collect();
            let out = SkillOutput::text_and_json(text, json!({"forgotten": ids}))
                .with_undo(restore_undo("Undo: remember again", gone.clone()));
            Ok((out, changes))
        }
        MemoryAction::List { limit } => {
            let mut all: Vec<&Memory> = memories.iter().collect();
            all.sort_by(|a, b| b.updated_ms.total_cmp(&a.updated_ms));
            let total = all.len();
            all.truncate(limit.unwrap_or(20).min(50));
            let text = if total == 0 {
                "Nothing remembered yet.".to_string()
            } else {
                all.iter()
                    .map(|m| m.text.as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            Ok((
                SkillOutput::text_and_json(text, json!({"total": total, "memories": all})),
                Vec::new(),
            ))
        }
        MemoryAction::Restore { memories: back } => {
            let (ids, changes) = collection::restore(back)?;
            let text = format!("Restored {}.", KIND.count(ids.len()));
            Ok((
                SkillOutput::text_and_json(text, json!({"restored": ids})),
                changes,
            ))
        }
    }
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

    fn remember(m: &mut Memories, id: &str, text: &str, tags: &[&str]) {
        let action = parse(&json!({"action": "remember", "text": text, "tags": tags})).unwrap();
        let (_, changes) = run(m, action, &stamp(id, 1.0)).unwrap();
        m.apply(&changes);
    }

    fn seeded() -> Memories {
        let mut m = Memories::default();
        remember(
            &mut m,
            "veg",
            "The user is vegetarian and avoids fish",
            &["food"],
        );
        remember(
            &mut m,
            "work",
            "Works Monday to Thursday, 9 to 5, from Lyon",
            &["work", "schedule"],
        );
        remember(&mut m, "cat", "Has a cat named Miso", &["pets"]);
        remember(
            &mut m,
            "travel",
            "Prefers trains over planes when travelling in Europe",
            &["travel"],
        );
        m
    }

    #[test]
    fn recall_ranks_with_scores() {
        let m = seeded();
        let got: Vec<(String, f64)> = recall(&m, "what food does the user eat? vegetarian", 5)
            .into_iter()
            .map(|r| (r.id, r.score))
            .collect();
        assert_eq!(got[0].0, "veg");
        assert!(got[0].1 > 0.0 && got[0].1 <= 1.0);
        let ids = |q: &str| -> Vec<String> { recall(&m, q, 5).into_iter().map(|r| r.id).collect() };
        assert_eq!(ids("work schedule"), ["work"]);
        assert_eq!(ids("pets"), ["cat"]);
        assert_eq!(ids("trains"), ["travel"]);
        assert_eq!(ids("quantum chromodynamics"), Vec::<String>::new());
    }

    #[test]
    fn remember_forget_update_with_undo() {
        let mut m = seeded();
        let action =
            parse(&json!({"action": "remember", "text": "the user is VEGETARIAN and avoids fish"}))
                .unwrap();
        let (out, changes) = run(&m, action, &stamp("dup", 2.0)).unwrap();
        assert!(changes.is_empty(), "the same fact is not stored twice");
        assert_eq!(out.structured.unwrap()["memory"]["id"], "veg");

        let action = parse(&json!({"action": "forget", "ids": ["cat", "travel"]})).unwrap();
        let (out, changes) = run(&m, action, &stamp("x", 3.0)).unwrap();
        m.apply(&changes);
        assert_eq!(m.len(), 2);
        let undo = out.undo.unwrap();
        let (_, changes) = run(&m, parse(&undo.arguments).unwrap(), &stamp("x", 4.0)).unwrap();
        m.apply(&changes);
        assert_eq!(m.len(), 4);

        let action =
            parse(&json!({"action": "update", "id": "cat", "text": "Has two cats, Miso and Tofu"}))
                .unwrap();
        let (out, changes) = run(&m, action, &stamp("x", 5.0)).unwrap();
        m.apply(&changes);
        assert_eq!(m.get("cat").unwrap().text, "Has two cats, Miso and Tofu");
        let (_, changes) = run(
            &m,
            parse(&out.undo.unwrap().arguments).unwrap(),
            &stamp("x", 6.0),
        )
        .unwrap();
        m.apply(&changes);
        assert_eq!(m.get("cat").unwrap().text, "Has a cat named Miso");
    }

    #[test]
    fn undoing_a_forget_counts_what_came_back() {
        let mut m = seeded();
        let said = |m: &mut Memories, ids: &[&str]| {
            let action = parse(&json!({"action": "forget", "ids": ids})).unwrap();
            let (out, changes) = run(m, action, &stamp("x", 2.0)).unwrap();
            m.apply(&changes);
            let undo = parse(&out.undo.unwrap().arguments).unwrap();
            let (out, changes) = run(m, undo, &stamp("x", 3.0)).unwrap();
            m.apply(&changes);
            match &out.content[..] {
                [crate::Content::Text { text }, ..] => text.clone(),
                other => panic!("a text part first, got {other:?}"),
            }
        };
        assert_eq!(said(&mut m, &["cat"]), "Restored 1 memory.");
        assert_eq!(said(&mut m, &["cat", "travel"]), "Restored 2 memories.");
        assert_eq!(m.len(), 4);
    }

    #[test]
    fn bad_input() {
        let m = seeded();
        let err = |args: Value| {
            parse(&args)
                .and_then(|a| run(&m, a, &stamp("x", 1.0)).map(|_| ()))
                .unwrap_err()
                .message
        };
        assert_eq!(
            err(json!({"action": "remember", "text": "  "})),
            "there is nothing to remember: 'text' is empty"
        );
        assert_eq!(
            err(json!({"action": "forget"})),
            "say which memory to forget with 'id' or 'ids'"
        );
        assert_eq!(
            err(json!({"action": "forget", "id": "zz"})),
            "there is no memory with id 'zz'; recall or list memories to find it"
        );
        assert_eq!(
            err(json!({"action": "recall"})),
            "'query' is required for this action"
        );
        assert_eq!(
            assess(&json!({"action": "forget", "ids": ["a", "b"]}))
                .bulk_destructive
                .as_deref(),
            Some("forget 2 memories")
        );
    }
}
