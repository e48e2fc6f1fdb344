//! An in-memory, id-keyed collection of records — notes, tasks, memories —
//! whose every change is returned as data so the caller can persist it in
//! one transaction, or roll it back if the write fails.

use std::collections::HashMap;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// What a change needs from the outside world: the time, a fresh id for
/// anything created, and today's local date.
#[derive(Clone, Debug, PartialEq)]
pub struct Stamp {
    pub now_ms: f64,
    pub new_id: String,
    pub today: (i64, u32, u32),
}

/// A stored record with a stable string id.
pub trait Record: Clone + Serialize + DeserializeOwned {
    fn id(&self) -> &str;
}

/// What a collection-backed skill's action returns: its output, and the
/// changes to store before they are applied.
pub type Changed<T> = Result<(crate::call::SkillOutput, Vec<Change<T>>), crate::call::SkillError>;

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
