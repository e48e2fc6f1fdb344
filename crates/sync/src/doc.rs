//! A record as an Automerge document, and the record back out of it.
//!
//! The app keeps its records as JSON objects (a note, a task, a memory).
//! With sync on, each record has one document, and the two directions are
//! one function each: [`RecordDoc::update`] brings the document to what
//! the app saved, recording only what changed, and [`RecordDoc::record`]
//! derives the record from the merged document. The record the app stores
//! is always the second one's output, so the two never disagree.
//!
//! How fields merge is the record kind's [`Kind`]:
//! - **text fields** (a note's body) are Automerge text: edits made apart
//!   on two devices both land;
//! - **newest fields** (`updated_ms`) take the largest value, silently:
//!   two devices touching a record at once is not a conflict to show;
//! - **keyed lists** (a conversation's messages) match their items by
//!   `id`: items added on two devices apart are all kept, and one item
//!   written on both is kept once;
//! - every other field keeps both values when two devices set it apart,
//!   and the record reports a [`Conflict`] until the person chooses.
//!
//! A record saved from a copy older than its document (other devices'
//! changes arrived and were not stored into it yet) is recorded against
//! the document as that copy showed it ([`RecordDoc::update_from`]), so
//! saving it never takes back what arrived.
//!
//! Deleting keeps the document and marks it, with the heads the deleting
//! device had seen. A change that device had not seen, made on another
//! device, means someone edited what was deleted: the record then says
//! [`Presence::DeletedWhileEdited`], and the app offers to restore it.

use automerge::transaction::Transactable;
use automerge::{
    ActorId, AutoCommit, ChangeHash, ObjId, ObjType, ROOT, ReadDoc, ScalarValue, Value,
};
use serde_json::{Map, Number, Value as Json};

use crate::SyncError;

/// How one kind of record merges. Field names are the record's top-level
/// keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind {
    /// The prefix of the kind's document ids (`note:<id>`).
    pub name: &'static str,
    /// Strings that merge as text.
    pub text: &'static [&'static str],
    /// Numbers where the largest wins without asking.
    pub newest: &'static [&'static str],
    /// Lists of objects matched by their `id` field rather than by
    /// position: an item added on each of two devices keeps both, an item
    /// removed on one goes, and two items with one id are one item.
    pub keyed: &'static [&'static str],
}

pub const NOTE: Kind = Kind {
    name: "note",
    text: &["body"],
    newest: &["updated_ms"],
    keyed: &[],
};
pub const TASK: Kind = Kind {
    name: "task",
    text: &["notes"],
    newest: &["updated_ms"],
    keyed: &[],
};
pub const MEMORY: Kind = Kind {
    name: "memory",
    text: &["text"],
    newest: &["updated_ms"],
    keyed: &[],
};

/// A conversation with the assistant. Its messages are matched by id, so
/// a conversation continued on two devices apart keeps both sides'
/// messages. `next_seq` numbers message ids and only ever grows, so the
/// largest wins like the update time.
pub const CONVERSATION: Kind = Kind {
    name: "conversation",
    text: &[],
    newest: &["updated_at_ms", "next_seq"],
    keyed: &["messages"],
};

/// The kinds sync knows, by the prefix of their document ids.
pub const KINDS: [Kind; 4] = [NOTE, TASK, MEMORY, CONVERSATION];

/// The kind a document id names (`note:abc` → [`NOTE`]).
pub fn kind_of(doc_id: &str) -> Option<Kind> {
    let (prefix, rest) = doc_id.split_once(':')?;
    if rest.is_empty() {
        return None;
    }
    KINDS.into_iter().find(|k| k.name == prefix)
}

/// The key that marks a deleted record. Keys starting with `$` are the
/// document's own and never part of the record.
const DELETED: &str = "$deleted";
const DELETE_MESSAGE: &str = "hearth:delete";
const RESTORE_MESSAGE: &str = "hearth:restore";

/// Whether a record is there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    Live,
    Deleted,
    /// Deleted on one device while another edited it: offer a restore.
    DeletedWhileEdited,
}

/// A field that two devices set to different values apart.
#[derive(Clone, Debug, PartialEq)]
pub struct Conflict {
    /// The keys from the record's top to the field.
    pub path: Vec<String>,
    /// Every value the field holds; the first is the one the record
    /// shows until the person chooses.
    pub values: Vec<Json>,
}

/// What the app stores for a document: the record, whether it is there,
/// and what is waiting for the person to choose.
#[derive(Clone, Debug, PartialEq)]
pub struct Derived {
    pub record: Json,
    pub presence: Presence,
    pub conflicts: Vec<Conflict>,
}

fn bad(e: impl std::fmt::Display) -> SyncError {
    SyncError::BadDocument(e.to_string())
}

pub struct RecordDoc {
    kind: Kind,
    doc: AutoCommit,
}

impl std::fmt::Debug for RecordDoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RecordDoc({})", self.kind.name)
    }
}

impl RecordDoc {
    /// An empty document, written to by `actor` (the device).
    pub fn new(kind: Kind, actor: &[u8]) -> Self {
        let doc = AutoCommit::new().with_actor(ActorId::from(actor));
        RecordDoc { kind, doc }
    }

    /// A document from its saved bytes.
    pub fn load(kind: Kind, actor: &[u8], bytes: &[u8]) -> Result<Self, SyncError> {
        let doc = AutoCommit::load(bytes)
            .map_err(bad)?
            .with_actor(ActorId::from(actor));
        Ok(RecordDoc { kind, doc })
    }

    #[cfg(test)]
    pub(crate) fn doc_for_tests(&self) -> &AutoCommit {
        &self.doc
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The whole document, compacted.
    pub fn save(&mut self) -> Vec<u8> {
        self.doc.save()
    }

    pub fn heads(&mut self) -> Vec<ChangeHash> {
        self.doc.get_heads()
    }

    /// This device's changes after its first `after` ones, in order: what
    /// it has not uploaded yet.
    pub fn local_changes_after(&mut self, after: u64) -> (Vec<Vec<u8>>, u64) {
        let me = self.doc.get_actor().clone();
        let mut newest = after;
        let mut out = Vec::new();
        for mut change in self.doc.get_changes(&[]) {
            if change.actor_id() == &me && change.seq() > after {
                newest = newest.max(change.seq());
                out.push(change.bytes().into_owned());
            }
        }
        (out, newest)
    }

    /// Applies changes from another device. Changes already present are
    /// ignored, so the same change arriving twice is harmless.
    pub fn apply(&mut self, changes: &[Vec<u8>]) -> Result<(), SyncError> {
        let parsed = changes
            .iter()
            .map(|c| parse_change(c.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        self.apply_parsed(parsed)
    }

    /// Applies changes already parsed with [`parse_change`].
    pub fn apply_parsed(&mut self, changes: Vec<automerge::Change>) -> Result<(), SyncError> {
        self.doc.apply_changes(changes).map_err(bad)
    }

    /// Merges another copy of this document (from a snapshot).
    pub fn merge_saved(&mut self, bytes: &[u8]) -> Result<(), SyncError> {
        self.doc.load_incremental(bytes).map_err(bad).map(|_| ())
    }

    /// Brings the document to `record`, recording only what differs. A
    /// field in conflict whose shown value is unchanged stays in conflict:
    /// saving a record is not choosing.
    pub fn update(&mut self, record: &Json) -> Result<(), SyncError> {
        let Json::Object(map) = record else {
            return Err(bad("a record is a JSON object"));
        };
        reconcile_map(&mut self.doc, &ROOT, map, Some(self.kind))?;
        self.doc.commit();
        Ok(())
    }

    /// Like [`RecordDoc::update`], for a record that shows the document
    /// as it was at `base`: other devices' changes arrived since and are
    /// not in the record yet. The record's differences are recorded
    /// against `base` and then merged, so they are edits made alongside
    /// what arrived, never a removal of it. Returns the heads the record
    /// now shows.
    pub fn update_from(
        &mut self,
        record: &Json,
        base: &[ChangeHash],
    ) -> Result<Vec<ChangeHash>, SyncError> {
        let Json::Object(map) = record else {
            return Err(bad("a record is a JSON object"));
        };
        // A change of this device's own after `base` would share its
        // sequence number with the one made on the fork; the record then
        // already shows everything this device did, so update in place.
        let me = self.doc.get_actor().clone();
        let mine_since = self
            .doc
            .get_changes(base)
            .iter()
            .any(|c| c.actor_id() == &me);
        let fork = match mine_since {
            true => None,
            false => self.doc.fork_at(base).ok(),
        };
        let Some(fork) = fork else {
            self.update(record)?;
            return Ok(self.doc.get_heads());
        };
        let mut fork = fork.with_actor(me);
        reconcile_map(&mut fork, &ROOT, map, Some(self.kind))?;
        fork.commit();
        let heads = fork.get_heads();
        let changes = fork.get_changes(base);
        self.doc.apply_changes(changes).map_err(bad)?;
        Ok(heads)
    }

    /// Marks the record deleted.
    pub fn delete(&mut self) -> Result<(), SyncError> {
        let heads = self.doc.get_heads();
        self.delete_having_seen(&heads)
    }

    /// Marks the record deleted by someone who had seen the document at
    /// `seen`: a change outside it is an edit they never saw, and the
    /// record then offers a restore.
    pub fn delete_having_seen(&mut self, seen: &[ChangeHash]) -> Result<(), SyncError> {
        let seen: Vec<String> = seen.iter().map(|h| h.to_string()).collect();
        self.doc.put(ROOT, DELETED, seen.join(",")).map_err(bad)?;
        self.doc.commit_with(
            automerge::transaction::CommitOptions::default().with_message(DELETE_MESSAGE),
        );
        Ok(())
    }

    /// Brings a deleted record back, with every edit it had.
    pub fn restore(&mut self) -> Result<(), SyncError> {
        if self.doc.get(ROOT, DELETED).map_err(bad)?.is_some() {
            self.doc.delete(ROOT, DELETED).map_err(bad)?;
            self.doc.commit_with(
                automerge::transaction::CommitOptions::default().with_message(RESTORE_MESSAGE),
            );
        }
        Ok(())
    }

    /// Settles a conflict on `path` with `value`.
    pub fn choose(&mut self, path: &[String], value: &Json) -> Result<(), SyncError> {
        let (last, parents) = path.split_last().ok_or_else(|| bad("an empty path"))?;
        let mut obj = ROOT;
        for key in parents {
            // In a keyed list, the path names an item by its id.
            let found = match self.doc.object_type(&obj) {
                Ok(ObjType::List) => match keyed_ids(&self.doc, &obj)?
                    .iter()
                    .position(|k| k.as_deref() == Some(key.as_str()))
                {
                    Some(at) => self.doc.get(&obj, at).map_err(bad)?,
                    None => None,
                },
                _ => self.doc.get(&obj, key.as_str()).map_err(bad)?,
            };
            obj = match found {
                Some((Value::Object(ObjType::Map | ObjType::List), id)) => id,
                _ => return Err(bad(format!("no field {key}"))),
            };
        }
        let top = parents.is_empty().then_some(self.kind);
        put_value(&mut self.doc, &obj, last, value, top)?;
        self.doc.commit();
        Ok(())
    }

    pub fn presence(&mut self) -> Result<Presence, SyncError> {
        let marks = self.doc.get_all(ROOT, DELETED).map_err(bad)?;
        if marks.is_empty() {
            return Ok(Presence::Live);
        }
        // Heads each deleting device had seen; a change outside all of
        // their histories, other than a delete, is an edit they missed.
        let mut seen = Vec::new();
        for (value, _) in marks {
            if let Value::Scalar(s) = value
                && let ScalarValue::Str(list) = s.as_ref()
            {
                for h in list.split(',').filter(|h| !h.is_empty()) {
                    seen.push(h.parse::<ChangeHash>().map_err(bad)?);
                }
            }
        }
        seen.retain(|h| self.doc.get_change_by_hash(h).is_some());
        let missed = self
            .doc
            .get_changes(&seen)
            .iter()
            .any(|c| c.message() != Some(DELETE_MESSAGE));
        Ok(if missed {
            Presence::DeletedWhileEdited
        } else {
            Presence::Deleted
        })
    }

    /// The record, derived from the document.
    pub fn derive(&mut self) -> Result<Derived, SyncError> {
        let mut conflicts = Vec::new();
        let record = hydrate_map(
            &self.doc,
            &ROOT,
            Some(self.kind),
            &mut Vec::new(),
            &mut conflicts,
        )?;
        Ok(Derived {
            record,
            presence: self.presence()?,
            conflicts,
        })
    }
}

/// One Automerge change from its bytes, checked.
pub fn parse_change(bytes: Vec<u8>) -> Result<automerge::Change, SyncError> {
    automerge::Change::from_bytes(bytes).map_err(bad)
}

fn scalar_of(value: &Json) -> Option<ScalarValue> {
    Some(match value {
        Json::Null => ScalarValue::Null,
        Json::Bool(b) => ScalarValue::Boolean(*b),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                ScalarValue::Int(i)
            } else if let Some(u) = n.as_u64() {
                ScalarValue::Uint(u)
            } else {
                ScalarValue::F64(n.as_f64()?)
            }
        }
        Json::String(s) => ScalarValue::Str(s.as_str().into()),
        Json::Array(_) | Json::Object(_) => return None,
    })
}

fn json_of(value: &ScalarValue) -> Json {
    match value {
        ScalarValue::Null => Json::Null,
        ScalarValue::Boolean(b) => Json::Bool(*b),
        ScalarValue::Int(i) | ScalarValue::Timestamp(i) => Json::Number((*i).into()),
        ScalarValue::Uint(u) => Json::Number((*u).into()),
        ScalarValue::F64(f) => Number::from_f64(*f).map_or(Json::Null, Json::Number),
        ScalarValue::Counter(c) => Json::Number(i64::from(c).into()),
        ScalarValue::Str(s) => Json::String(s.to_string()),
        ScalarValue::Bytes(_) | ScalarValue::Unknown { .. } => Json::Null,
    }
}

/// The object at `key`, made (or remade) with type `ty` when it is not
/// one already.
fn object_at(
    doc: &mut AutoCommit,
    obj: &ObjId,
    key: &str,
    ty: ObjType,
) -> Result<(ObjId, bool), SyncError> {
    match doc.get(obj, key).map_err(bad)? {
        Some((Value::Object(t), id)) if t == ty => Ok((id, false)),
        _ => Ok((doc.put_object(obj, key, ty).map_err(bad)?, true)),
    }
}

fn put_value(
    doc: &mut AutoCommit,
    obj: &ObjId,
    key: &str,
    value: &Json,
    top: Option<Kind>,
) -> Result<(), SyncError> {
    let is_text = top.is_some_and(|k| k.text.contains(&key));
    match value {
        Json::String(s) if is_text => {
            let (text, _) = object_at(doc, obj, key, ObjType::Text)?;
            doc.update_text(&text, s).map_err(bad)?;
        }
        Json::Object(map) => {
            let (child, _) = object_at(doc, obj, key, ObjType::Map)?;
            reconcile_map(doc, &child, map, None)?;
        }
        Json::Array(items) => {
            let (child, _) = object_at(doc, obj, key, ObjType::List)?;
            if top.is_some_and(|k| k.keyed.contains(&key)) {
                reconcile_keyed_list(doc, &child, items)?;
            } else {
                reconcile_list(doc, &child, items)?;
            }
        }
        scalar => {
            let new = scalar_of(scalar).ok_or_else(|| bad("not a scalar"))?;
            doc.put(obj, key, new).map_err(bad)?;
        }
    }
    Ok(())
}

fn reconcile_map(
    doc: &mut AutoCommit,
    obj: &ObjId,
    map: &Map<String, Json>,
    top: Option<Kind>,
) -> Result<(), SyncError> {
    let gone: Vec<String> = doc
        .keys(obj)
        .filter(|k| !k.starts_with('$') && !map.contains_key(k))
        .collect();
    for key in gone {
        doc.delete(obj, key.as_str()).map_err(bad)?;
    }
    for (key, value) in map {
        if key.starts_with('$') {
            return Err(bad(format!(
                "field names starting with $ are sync's own: {key}"
            )));
        }
        let is_text = top.is_some_and(|k| k.text.contains(&key.as_str()));
        let same = match (doc.get(obj, key.as_str()).map_err(bad)?, value) {
            (Some((Value::Scalar(old), _)), v) if !is_text => {
                scalar_of(v).is_some_and(|new| same_scalar(old.as_ref(), &new))
            }
            _ => false,
        };
        if !same {
            put_value(doc, obj, key, value, top)?;
        }
    }
    Ok(())
}

/// Equal as the record sees them: JSON does not tell 2 from 2.0.
fn same_scalar(a: &ScalarValue, b: &ScalarValue) -> bool {
    a == b
        || json_of(a) == json_of(b)
        || matches!((json_of(a), json_of(b)), (Json::Number(x), Json::Number(y)) if x.as_f64() == y.as_f64())
}

fn reconcile_list(doc: &mut AutoCommit, list: &ObjId, items: &[Json]) -> Result<(), SyncError> {
    let old = doc.length(list);
    for (i, item) in items.iter().enumerate() {
        if i >= old {
            insert_value(doc, list, i, item)?;
            continue;
        }
        match (doc.get(list, i).map_err(bad)?, item) {
            (Some((Value::Object(ObjType::Map), id)), Json::Object(map)) => {
                reconcile_map(doc, &id, map, None)?;
            }
            (Some((Value::Object(ObjType::List), id)), Json::Array(inner)) => {
                reconcile_list(doc, &id, inner)?;
            }
            (Some((Value::Scalar(old), _)), v)
                if scalar_of(v).is_some_and(|new| same_scalar(old.as_ref(), &new)) => {}
            _ => {
                doc.delete(list, i).map_err(bad)?;
                insert_value(doc, list, i, item)?;
            }
        }
    }
    for i in (items.len()..old).rev() {
        doc.delete(list, i).map_err(bad)?;
    }
    Ok(())
}

/// The `id` of a list's item, when it is an object with a string one.
fn item_id(doc: &AutoCommit, list: &ObjId, at: usize) -> Result<Option<String>, SyncError> {
    let Some((Value::Object(ObjType::Map), item)) = doc.get(list, at).map_err(bad)? else {
        return Ok(None);
    };
    Ok(match doc.get(&item, "id").map_err(bad)? {
        Some((Value::Scalar(s), _)) => match s.as_ref() {
            ScalarValue::Str(id) => Some(id.to_string()),
            _ => None,
        },
        _ => None,
    })
}

/// What each item of a keyed list goes by, in the list's order. Two
/// items with one id are one item when they are equal (the same message
/// written on two devices): the later one is `None`, and the record
/// leaves it out. When they differ (two devices each numbered a new
/// message alike), both are kept, and the later one goes by `<id>~2`
/// (`~3`, ...): every device sees the list in the same order, so every
/// device names them alike. An item without an id goes by a name no
/// record item has.
fn keyed_ids(doc: &AutoCommit, list: &ObjId) -> Result<Vec<Option<String>>, SyncError> {
    let len = doc.length(list);
    let mut out = Vec::with_capacity(len);
    let mut by_id: std::collections::HashMap<String, Vec<usize>> = Default::default();
    for at in 0..len {
        let Some(id) = item_id(doc, list, at)? else {
            out.push(Some(format!("\u{0}{at}")));
            continue;
        };
        let Some(earlier) = by_id.get_mut(&id) else {
            by_id.insert(id.clone(), vec![at]);
            out.push(Some(id));
            continue;
        };
        let this = hydrate_item(doc, list, at)?;
        let mut same = false;
        for &e in earlier.iter() {
            if hydrate_item(doc, list, e)? == this {
                same = true;
                break;
            }
        }
        if same {
            out.push(None);
        } else {
            earlier.push(at);
            out.push(Some(format!("{id}~{}", earlier.len())));
        }
    }
    Ok(out)
}

fn hydrate_item(doc: &AutoCommit, list: &ObjId, at: usize) -> Result<Json, SyncError> {
    match doc.get(list, at).map_err(bad)? {
        Some((v, id)) => hydrate_value(doc, &v, &id, &mut Vec::new(), &mut Vec::new()),
        None => Ok(Json::Null),
    }
}

/// Brings a keyed list to `items` by id: the longest run of ids the list
/// and the record share in the same order stays (each item reconciled
/// field by field), the list's other items are removed and the record's
/// other items inserted where the record has them. A list appended to on
/// two devices apart thus gets two sets of inserts, and Automerge keeps
/// both. Records whose items lack ids are reconciled by position.
fn reconcile_keyed_list(
    doc: &mut AutoCommit,
    list: &ObjId,
    items: &[Json],
) -> Result<(), SyncError> {
    let new: Option<Vec<&str>> = items
        .iter()
        .map(|i| i.get("id").and_then(Json::as_str))
        .collect();
    let Some(new) = new else {
        return reconcile_list(doc, list, items);
    };
    let old = keyed_ids(doc, list)?;
    let same = |i: usize, j: usize| old[i].as_deref() == Some(new[j]);
    // The shared prefix needs no table; most saves only append.
    let mut start = 0;
    while start < old.len() && start < new.len() && same(start, start) {
        start += 1;
    }
    let (n, m) = (old.len() - start, new.len() - start);
    // Longest common subsequence of the rest, by the usual table.
    let w = m + 1;
    let mut table = vec![0u32; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            table[i * w + j] = if same(start + i, start + j) {
                table[(i + 1) * w + j + 1] + 1
            } else {
                table[(i + 1) * w + j].max(table[i * w + j + 1])
            };
        }
    }
    let mut kept_old = vec![false; old.len()];
    let mut kept_new = vec![false; new.len()];
    for k in 0..start {
        kept_old[k] = true;
        kept_new[k] = true;
    }
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if same(start + i, start + j) {
            kept_old[start + i] = true;
            kept_new[start + j] = true;
            i += 1;
            j += 1;
        } else if table[(i + 1) * w + j] >= table[i * w + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    for at in (0..old.len()).rev() {
        if !kept_old[at] {
            doc.delete(list, at).map_err(bad)?;
        }
    }
    // What is left of the list is the kept items, in the record's order.
    for (at, item) in items.iter().enumerate() {
        if !kept_new[at] {
            insert_value(doc, list, at, item)?;
            continue;
        }
        match (doc.get(list, at).map_err(bad)?, item) {
            (Some((Value::Object(ObjType::Map), obj)), Json::Object(map)) => {
                reconcile_map(doc, &obj, map, None)?;
            }
            _ => return Err(bad("a keyed list's item is not an object")),
        }
    }
    Ok(())
}

/// A keyed list as the record shows it (see [`keyed_ids`]).
fn hydrate_keyed_list(
    doc: &AutoCommit,
    list: &ObjId,
    path: &mut Vec<String>,
    conflicts: &mut Vec<Conflict>,
) -> Result<Json, SyncError> {
    let ids = keyed_ids(doc, list)?;
    let mut out = Vec::with_capacity(ids.len());
    for (at, shown) in ids.into_iter().enumerate() {
        let Some(shown) = shown else { continue };
        let Some((v, child)) = doc.get(list, at).map_err(bad)? else {
            continue;
        };
        // A field set apart inside an item is named by the item's id.
        path.push(shown.clone());
        let item = hydrate_value(doc, &v, &child, path, conflicts);
        path.pop();
        let mut item = item?;
        if let Some(map) = item.as_object_mut()
            && map
                .get("id")
                .and_then(Json::as_str)
                .is_some_and(|id| id != shown)
        {
            map.insert("id".into(), Json::String(shown));
        }
        out.push(item);
    }
    Ok(Json::Array(out))
}

fn insert_value(
    doc: &mut AutoCommit,
    list: &ObjId,
    at: usize,
    item: &Json,
) -> Result<(), SyncError> {
    match item {
        Json::Object(map) => {
            let id = doc.insert_object(list, at, ObjType::Map).map_err(bad)?;
            reconcile_map(doc, &id, map, None)
        }
        Json::Array(inner) => {
            let id = doc.insert_object(list, at, ObjType::List).map_err(bad)?;
            reconcile_list(doc, &id, inner)
        }
        scalar => {
            let v = scalar_of(scalar).ok_or_else(|| bad("not a scalar"))?;
            doc.insert(list, at, v).map_err(bad)
        }
    }
}

fn hydrate_value(
    doc: &AutoCommit,
    value: &Value<'_>,
    id: &ObjId,
    path: &mut Vec<String>,
    conflicts: &mut Vec<Conflict>,
) -> Result<Json, SyncError> {
    Ok(match value {
        Value::Scalar(s) => json_of(s.as_ref()),
        Value::Object(ObjType::Map | ObjType::Table) => {
            hydrate_map(doc, id, None, path, conflicts)?
        }
        Value::Object(ObjType::List) => {
            let mut out = Vec::new();
            for i in 0..doc.length(id) {
                if let Some((v, child)) = doc.get(id, i).map_err(bad)? {
                    out.push(hydrate_value(doc, &v, &child, path, conflicts)?);
                }
            }
            Json::Array(out)
        }
        Value::Object(ObjType::Text) => Json::String(doc.text(id).map_err(bad)?),
    })
}

fn hydrate_map(
    doc: &AutoCommit,
    obj: &ObjId,
    top: Option<Kind>,
    path: &mut Vec<String>,
    conflicts: &mut Vec<Conflict>,
) -> Result<Json, SyncError> {
    let mut out = Map::new();
    let keys: Vec<String> = doc.keys(obj).filter(|k| !k.starts_with('$')).collect();
    for key in keys {
        let all = doc.get_all(obj, key.as_str()).map_err(bad)?;
        path.push(key.clone());
        let newest = top.is_some_and(|k| k.newest.contains(&key.as_str()));
        let keyed = top.is_some_and(|k| k.keyed.contains(&key.as_str()));
        let mut values = Vec::with_capacity(all.len());
        for (v, id) in all.iter().rev() {
            values.push(match v {
                Value::Object(ObjType::List) if keyed => {
                    hydrate_keyed_list(doc, id, path, conflicts)?
                }
                _ => hydrate_value(doc, v, id, path, conflicts)?,
            });
        }
        let shown = if newest {
            values
                .iter()
                .max_by(|a, b| {
                    let (a, b) = (
                        a.as_f64().unwrap_or(f64::MIN),
                        b.as_f64().unwrap_or(f64::MIN),
                    );
                    a.total_cmp(&b)
                })
                .cloned()
        } else {
            if values.len() > 1 && values.iter().any(|v| v != &values[0]) {
                conflicts.push(Conflict {
                    path: path.clone(),
                    values: values.clone(),
                });
            }
            values.first().cloned()
        };
        path.pop();
        out.insert(key, shown.unwrap_or(Json::Null));
    }
    Ok(Json::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const A: [u8; 16] = [0xa; 16];
    const B: [u8; 16] = [0xb; 16];

    /// Two devices holding the same note, as after a first sync.
    fn pair(note: Json) -> (RecordDoc, RecordDoc) {
        let mut a = RecordDoc::new(NOTE, &A);
        a.update(&note).unwrap();
        let saved = a.save();
        let b = RecordDoc::load(NOTE, &B, &saved).unwrap();
        (a, b)
    }

    /// Each device takes the other's changes.
    fn exchange(a: &mut RecordDoc, b: &mut RecordDoc) {
        let (from_a, _) = a.local_changes_after(0);
        let (from_b, _) = b.local_changes_after(0);
        a.apply(&from_b).unwrap();
        b.apply(&from_a).unwrap();
    }

    fn note(title: &str, body: &str, updated: f64) -> Json {
        json!({"id": "n1", "title": title, "body": body, "tags": ["home"], "created_ms": 1.0e12, "updated_ms": updated})
    }

    #[test]
    fn a_record_round_trips_unchanged() {
        let n = json!({"id": "n1", "title": "Groceries", "body": "milk\neggs", "tags": ["home", "weekly"],
            "created_ms": 1.7e12, "updated_ms": 1.7e12, "due": null, "nested": {"a": [1, 2.5, true]}});
        let mut d = RecordDoc::new(NOTE, &A);
        d.update(&n).unwrap();
        let out = d.derive().unwrap();
        assert_eq!(out.record, n);
        assert_eq!(out.presence, Presence::Live);
        assert!(out.conflicts.is_empty());
        let mut again = RecordDoc::load(NOTE, &B, &d.save()).unwrap();
        assert_eq!(again.derive().unwrap().record, n);
    }

    #[test]
    fn saving_the_same_record_records_no_change() {
        let n = note("T", "body", 1.0);
        let mut d = RecordDoc::new(NOTE, &A);
        d.update(&n).unwrap();
        let heads = d.heads();
        d.update(&n).unwrap();
        assert_eq!(d.heads(), heads);
    }

    #[test]
    fn text_edited_on_two_devices_keeps_both_edits() {
        let (mut a, mut b) = pair(note("T", "The quick fox.", 1.0));
        a.update(&note("T", "The quick brown fox.", 2.0)).unwrap();
        b.update(&note("T", "The quick fox jumps.", 3.0)).unwrap();
        exchange(&mut a, &mut b);
        let (da, db) = (a.derive().unwrap(), b.derive().unwrap());
        assert_eq!(da, db, "both devices converge");
        assert_eq!(da.record["body"], "The quick brown fox jumps.");
        assert_eq!(da.record["updated_ms"], 3.0, "the newest time wins");
        assert!(da.conflicts.is_empty(), "{:?}", da.conflicts);
    }

    #[test]
    fn one_field_set_apart_keeps_both_values_until_chosen() {
        let (mut a, mut b) = pair(note("Plan", "", 1.0));
        a.update(&note("Plan A", "", 2.0)).unwrap();
        b.update(&note("Plan B", "", 2.0)).unwrap();
        exchange(&mut a, &mut b);
        let da = a.derive().unwrap();
        assert_eq!(da, b.derive().unwrap());
        assert_eq!(da.conflicts.len(), 1);
        let c = &da.conflicts[0];
        assert_eq!(c.path, vec!["title".to_string()]);
        let mut values: Vec<&str> = c.values.iter().map(|v| v.as_str().unwrap()).collect();
        values.sort();
        assert_eq!(values, ["Plan A", "Plan B"]);
        assert_eq!(
            da.record["title"], c.values[0],
            "the record shows the first value"
        );

        // Saving the record as shown is not a choice: the conflict stays.
        let shown = da.record.clone();
        a.update(&shown).unwrap();
        assert_eq!(a.derive().unwrap().conflicts.len(), 1);

        a.choose(&["title".into()], &json!("Plan B")).unwrap();
        exchange(&mut a, &mut b);
        for d in [&mut a, &mut b] {
            let out = d.derive().unwrap();
            assert!(out.conflicts.is_empty());
            assert_eq!(out.record["title"], "Plan B");
        }
    }

    #[test]
    fn different_fields_set_apart_both_land() {
        let mut a = RecordDoc::new(TASK, &A);
        let task = json!({"id": "t1", "title": "Call", "status": "open", "updated_ms": 1.0});
        a.update(&task).unwrap();
        let mut b = RecordDoc::load(TASK, &B, &a.save()).unwrap();
        a.update(&json!({"id": "t1", "title": "Call", "status": "done", "updated_ms": 2.0}))
            .unwrap();
        b.update(
            &json!({"id": "t1", "title": "Call the bank", "status": "open", "updated_ms": 3.0}),
        )
        .unwrap();
        exchange(&mut a, &mut b);
        let out = a.derive().unwrap();
        assert_eq!(out, b.derive().unwrap());
        assert_eq!(out.record["status"], "done");
        assert_eq!(out.record["title"], "Call the bank");
        assert!(out.conflicts.is_empty());
    }

    #[test]
    fn a_delete_against_an_edit_offers_restore_with_the_edit() {
        let (mut a, mut b) = pair(note("T", "draft", 1.0));
        a.delete().unwrap();
        b.update(&note("T", "draft, and more", 2.0)).unwrap();
        exchange(&mut a, &mut b);
        assert_eq!(a.presence().unwrap(), Presence::DeletedWhileEdited);
        assert_eq!(b.presence().unwrap(), Presence::DeletedWhileEdited);
        b.restore().unwrap();
        exchange(&mut a, &mut b);
        let out = a.derive().unwrap();
        assert_eq!(out.presence, Presence::Live);
        assert_eq!(out.record["body"], "draft, and more");
    }

    #[test]
    fn a_delete_nobody_edited_against_is_just_a_delete() {
        let (mut a, mut b) = pair(note("T", "x", 1.0));
        a.delete().unwrap();
        exchange(&mut a, &mut b);
        assert_eq!(b.presence().unwrap(), Presence::Deleted);
        // Both deleting at once is still just a delete.
        let (mut a, mut b) = pair(note("T", "x", 1.0));
        a.delete().unwrap();
        b.delete().unwrap();
        exchange(&mut a, &mut b);
        assert_eq!(a.presence().unwrap(), Presence::Deleted);
    }

    #[test]
    fn lists_take_appends_from_both_devices() {
        let (mut a, mut b) = pair(note("T", "", 1.0));
        let mut na = note("T", "", 1.0);
        na["tags"] = json!(["home", "urgent"]);
        let mut nb = note("T", "", 1.0);
        nb["tags"] = json!(["home", "later"]);
        a.update(&na).unwrap();
        b.update(&nb).unwrap();
        exchange(&mut a, &mut b);
        let tags = a.derive().unwrap().record["tags"].clone();
        let mut tags: Vec<String> = serde_json::from_value(tags).unwrap();
        tags.sort();
        assert_eq!(tags, ["home", "later", "urgent"]);
    }

    #[test]
    fn a_message_changed_on_two_devices_is_a_choice_named_by_its_id() {
        let conversation = |content: &str| {
            json!({"id": "c", "title": "T", "updated_at_ms": 1.0, "next_seq": 1,
                "messages": [{"id": "c-m1", "role": "user", "content": content}]})
        };
        let mut a = RecordDoc::new(CONVERSATION, &A);
        a.update(&conversation("draft")).unwrap();
        let mut b = RecordDoc::load(CONVERSATION, &B, &a.save()).unwrap();
        a.update(&conversation("from A")).unwrap();
        b.update(&conversation("from B")).unwrap();
        exchange(&mut a, &mut b);
        let out = a.derive().unwrap();
        assert_eq!(out, b.derive().unwrap());
        assert_eq!(out.conflicts.len(), 1, "{:?}", out.conflicts);
        let path = out.conflicts[0].path.clone();
        assert_eq!(path, ["messages", "c-m1", "content"]);
        a.choose(&path, &json!("from B")).unwrap();
        exchange(&mut a, &mut b);
        for d in [&mut a, &mut b] {
            let out = d.derive().unwrap();
            assert!(out.conflicts.is_empty());
            assert_eq!(out.record, conversation("from B"));
        }
    }

    #[test]
    fn sync_keys_cannot_be_written_by_a_record() {
        let mut d = RecordDoc::new(NOTE, &A);
        let err = d.update(&json!({"id": "n", "$deleted": "x"})).unwrap_err();
        assert!(matches!(err, SyncError::BadDocument(_)));
        assert!(d.update(&json!(["not", "an", "object"])).is_err());
    }

    #[test]
    fn garbage_bytes_are_refused_not_loaded() {
        assert!(RecordDoc::load(NOTE, &A, b"not automerge").is_err());
        let mut d = RecordDoc::new(NOTE, &A);
        assert!(d.apply(&[b"junk".to_vec()]).is_err());
    }

    #[test]
    fn kinds_come_from_document_ids() {
        assert_eq!(kind_of("note:1"), Some(NOTE));
        assert_eq!(kind_of("task:x"), Some(TASK));
        assert_eq!(kind_of("conversation:c1"), Some(CONVERSATION));
        assert_eq!(kind_of("note:"), None);
        assert_eq!(kind_of("secret:1"), None);
        assert_eq!(kind_of("note"), None);
    }
}
