//! An in-memory, id-keyed collection of records — notes, tasks, memories —
//! whose every change is returned as data so the caller can persist it in
//! one transaction, or roll it back if the write fails; and what the three
//! skills over such collections share, so they cannot drift apart: reading
//! their arguments, finding a record, deleting several at once, putting
//! records back (their undo) and cleaning tags.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::skill::SkillId;
use crate::skill::call::{SkillError, UndoAction};

/// What a change needs from the outside world: the time, a fresh id for
/// anything created, and today's local date.
#[derive(Clone, Debug, PartialEq)]
pub struct Stamp {
    pub now_ms: f64,
    pub new_id: String,
    pub today: (i64, u32, u32),
}

pub use crate::stores::Record;

/// What a collection-backed skill's action returns: its output, and the
/// changes to store before they are applied.
pub type Changed<T> =
    Result<(crate::skill::call::SkillOutput, Vec<Change<T>>), crate::skill::call::SkillError>;

/// One change to persist.
#[derive(Clone, Debug, PartialEq)]
pub enum Change<T> {
    Put(T),
    Delete(String),
}

/// Something that holds records and takes changes once they are stored.
pub trait Store<T: Record> {
    fn apply_changes(&mut self, changes: &[Change<T>]);
}

impl<T: Record> Store<T> for Collection<T> {
    fn apply_changes(&mut self, changes: &[Change<T>]) {
        self.apply(changes);
    }
}

/// Records in insertion order, with O(1) lookup by id.
#[derive(Clone, Debug)]
pub struct Collection<T> {
    items: Vec<T>,
    index: HashMap<String, usize>,
}

impl<T> Default for Collection<T> {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<T: Record> Collection<T> {
    pub fn new(items: impl IntoIterator<Item = T>) -> Self {
        let mut c = Self::default();
        for item in items {
            c.put(item);
        }
        c
    }

    pub fn get(&self, id: &str) -> Option<&T> {
        self.index.get(id).map(|&i| &self.items[i])
    }

    pub fn contains(&self, id: &str) -> bool {
        self.index.contains_key(id)
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Inserts or replaces by id; returns the previous version.
    pub fn put(&mut self, item: T) -> Option<T> {
        match self.index.get(item.id()) {
            Some(&i) => Some(std::mem::replace(&mut self.items[i], item)),
            None => {
                self.index.insert(item.id().to_string(), self.items.len());
                self.items.push(item);
                None
            }
        }
    }

    pub fn remove(&mut self, id: &str) -> Option<T> {
        let i = self.index.remove(id)?;
        let removed = self.items.remove(i);
        for slot in self.index.values_mut() {
            if *slot > i {
                *slot -= 1;
            }
        }
        Some(removed)
    }

    /// Applies changes made elsewhere (e.g. a restore from backup).
    pub fn apply(&mut self, changes: &[Change<T>]) {
        for change in changes {
            match change {
                Change::Put(item) => {
                    self.put(item.clone());
                }
                Change::Delete(id) => {
                    self.remove(id);
                }
            }
        }
    }
}

/// Puts back the state a [`snapshot`] recorded, undoing the changes applied
/// since — used when persisting those changes failed.
pub fn undo_changes<T: Record>(collection: &mut Collection<T>, before: Vec<(String, Option<T>)>) {
    for (id, previous) in before {
        match previous {
            Some(item) => {
                collection.put(item);
            }
            None => {
                collection.remove(&id);
            }
        }
    }
}

/// The state before `changes`, for [`undo_changes`].
pub fn snapshot<T: Record>(
    collection: &Collection<T>,
    changes: &[Change<T>],
) -> Vec<(String, Option<T>)> {
    changes
        .iter()
        .map(|c| {
            let id = match c {
                Change::Put(item) => item.id().to_string(),
                Change::Delete(id) => id.clone(),
            };
            let previous = collection.get(&id).cloned();
            (id, previous)
        })
        .collect()
}

// ------------------------------------------------ the skills' shared steps

/// Looks records up by id: a [`Collection`], or a type that wraps one.
pub trait Records<T> {
    fn record(&self, id: &str) -> Option<&T>;
}

impl<T: Record> Records<T> for Collection<T> {
    fn record(&self, id: &str) -> Option<&T> {
        self.get(id)
    }
}

/// How a skill names its records in messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind {
    /// "note"
    pub one: &'static str,
    /// "notes"
    pub many: &'static str,
    /// How to find an id: "list or search notes to find it".
    pub find_hint: &'static str,
    /// The action that removes records: "delete", or "forget".
    pub remove: &'static str,
    /// The field that lists records to put back: "notes".
    pub restore_field: &'static str,
}

impl Kind {
    /// "1 note", "3 notes".
    pub fn count(&self, n: usize) -> String {
        crate::util::display::count(n, self.one, self.many)
    }
}

/// A record by id, or a message that says how to find one.
pub fn find<'a, T>(
    records: &'a impl Records<T>,
    id: &str,
    kind: &Kind,
) -> Result<&'a T, SkillError> {
    records.record(id).ok_or_else(|| {
        SkillError::new(format!(
            "there is no {} with id '{id}'; {}",
            kind.one, kind.find_hint
        ))
    })
}

/// Parses a call's arguments into a skill's action, with messages that name
/// the missing or wrong field.
pub fn parse<A: DeserializeOwned>(arguments: &Value) -> Result<A, SkillError> {
    serde_json::from_value(arguments.clone())
        .map_err(|e| SkillError::new(explain_serde(&e.to_string())))
}

/// Turns serde's wording into ours: "missing field `title`" → "'title' is required".
pub fn explain_serde(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("missing field `")
        && let Some(field) = rest.split('`').next()
    {
        return format!("'{field}' is required for this action");
    }
    if let Some(rest) = message.strip_prefix("unknown field `")
        && let Some(field) = rest.split('`').next()
    {
        return format!("'{field}' does not apply to this action");
    }
    format!("invalid arguments: {message}")
}

/// Tags as stored: trimmed, without a leading `#`, each once whatever its
/// case, empty ones dropped.
pub fn clean_tags(tags: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in tags {
        let t = t.trim().trim_start_matches('#').trim();
        if !t.is_empty() && !out.iter().any(|o| o.eq_ignore_ascii_case(t)) {
            out.push(t.to_string());
        }
    }
    out
}

/// The ids a removal names, each once, in the order given: `id` first,
/// then `ids`. Naming a record twice removes it once.
pub fn removal_ids(id: Option<String>, ids: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    id.into_iter()
        .chain(ids)
        .filter(|i| seen.insert(i.clone()))
        .collect()
}

/// How many distinct records a call's arguments remove, as the permission
/// layer counts them (a call that removes several asks every time):
/// `id` and `ids`, when the action is `kind.remove`.
pub fn removal_count(arguments: &Value, kind: &Kind) -> usize {
    if arguments.get("action").and_then(Value::as_str) != Some(kind.remove) {
        return 0;
    }
    let id = arguments
        .get("id")
        .and_then(Value::as_str)
        .map(str::to_string);
    let ids = arguments
        .get("ids")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect()
        })
        .unwrap_or_default();
    removal_ids(id, ids).len()
}

/// Removes the records `id` and `ids` name, each once: the records as they
/// were (for the result and the undo) and the changes to store. Fails,
/// changing nothing, when none is named or one does not exist.
pub fn remove_many<T: Record>(
    records: &impl Records<T>,
    id: Option<String>,
    ids: Vec<String>,
    kind: &Kind,
) -> Result<(Vec<T>, Vec<Change<T>>), SkillError> {
    let all = removal_ids(id, ids);
    if all.is_empty() {
        return Err(SkillError::new(format!(
            "say which {} to {} with 'id' or 'ids'",
            kind.one, kind.remove
        )));
    }
    let gone: Vec<T> = all
        .iter()
        .map(|id| find(records, id, kind).cloned())
        .collect::<Result<_, _>>()?;
    let changes = gone
        .iter()
        .map(|r| Change::Delete(r.id().to_string()))
        .collect();
    Ok((gone, changes))
}

/// The undo that puts `records` back exactly as they were, through the
/// skill's own `restore` action.
pub fn restore_undo<T: Serialize>(
    label: &str,
    skill: SkillId,
    kind: &Kind,
    records: Vec<T>,
) -> UndoAction {
    let mut arguments = json!({"action": "restore"});
    arguments[kind.restore_field] = json!(records);
    UndoAction {
        label: label.to_string(),
        skill_id: skill,
        arguments,
        seal: None,
    }
}

/// Puts records back (a `restore` action): each id once (the last copy
/// given wins), in the order first given. Returns the ids and the changes.
pub fn restore<T: Record>(records: Vec<T>) -> Result<(Vec<String>, Vec<Change<T>>), SkillError> {
    if records.is_empty() {
        return Err(SkillError::new("nothing to restore"));
    }
    let mut order: Vec<String> = Vec::new();
    let mut latest: HashMap<String, T> = HashMap::new();
    for r in records {
        let id = r.id().to_string();
        if latest.insert(id.clone(), r).is_none() {
            order.push(id);
        }
    }
    let changes = order
        .iter()
        .filter_map(|id| latest.remove(id))
        .map(Change::Put)
        .collect();
    Ok((order, changes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    struct Item {
        id: String,
        v: u32,
    }
    impl Record for Item {
        fn id(&self) -> &str {
            &self.id
        }
    }
    fn item(id: &str, v: u32) -> Item {
        Item { id: id.into(), v }
    }
    fn ids(c: &Collection<Item>) -> Vec<(String, u32)> {
        c.iter().map(|i| (i.id.clone(), i.v)).collect()
    }

    #[test]
    fn put_get_remove_keep_order() {
        let mut c = Collection::new([item("a", 1), item("b", 2), item("c", 3)]);
        assert_eq!(c.put(item("b", 20)), Some(item("b", 2)));
        assert_eq!(c.remove("a"), Some(item("a", 1)));
        assert_eq!(c.get("c"), Some(&item("c", 3)));
        assert_eq!(ids(&c), [("b".into(), 20), ("c".into(), 3)]);
        assert_eq!(c.remove("zz"), None);
    }

    #[test]
    fn snapshot_and_undo_restore_exactly() {
        let mut c = Collection::new([item("a", 1), item("b", 2)]);
        let changes = vec![
            Change::Put(item("a", 9)),
            Change::Delete("b".into()),
            Change::Put(item("n", 5)),
        ];
        let before = snapshot(&c, &changes);
        c.apply(&changes);
        assert_eq!(ids(&c), [("a".into(), 9), ("n".into(), 5)]);
        undo_changes(&mut c, before);
        let mut got = ids(&c);
        got.sort();
        assert_eq!(got, [("a".into(), 1), ("b".into(), 2)]);
    }
}
